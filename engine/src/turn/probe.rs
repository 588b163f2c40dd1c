//! Probes turn the turns since the last probe into a patch for the graph.
//!
//! [`Probe`] is the one trait; [`HeuristicProbe`] is the embedded default:
//! deterministic extraction of people, projects, libraries, files,
//! identifiers, decisions (with `supersedes` history), corrections,
//! preferences and relations, emitting the same RFC 6902 patch an LLM probe
//! would. It needs no network and no model.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, NaiveDate, Utc};
use json_patch::PatchOperation;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::ProbeConfig;
use crate::extract::{self, Mention};
use crate::graph::{
    Domain, Edge, EdgeKind, Graph, Node, NodeId, NodeKind, edge_key, normalize_name,
};
use crate::patch::ProbePatch;
use crate::transcript::Turn;

/// How many turns back a decision can be that "instead" or "that" refers
/// to without naming it (see `Plan::latest_decision_except`).
const UNNAMED_REFERENCE_TURNS: u32 = 3;

/// How common (Zipf) a word is that "back to" a conversation's subject
/// names rather than a choice: "back to physics", "back to work".
const RETURN_SUBJECT_ZIPF: f32 = 4.2;

/// A topic word at least this frequent (Zipf scale) names no topic alone.
const TOPIC_WORD_ZIPF: f32 = 5.5;

/// A word at least this frequent (Zipf scale) is no proper noun by its
/// capital letter alone.
const PROPER_NOUN_ZIPF: f32 = 5.0;

/// How many turns back "actually keep X" reaches for the change it
/// turns down (see `Plan::kept_against`).
const KEEP_WINDOW_TURNS: u32 = 15;

/// Everything a probe sees.
#[derive(Clone, Debug)]
pub struct ProbeInput<'a> {
    /// Session id (for provenance).
    pub session: &'a str,
    /// Unique id of this probe run.
    pub probe_id: String,
    /// The turns since the last probe, already redacted.
    pub turns: &'a [Turn],
    /// The hot graph as it is now.
    pub graph: &'a Graph,
    /// The clock.
    pub now: DateTime<Utc>,
    /// The project directory, stripped from absolute paths.
    pub root: Option<&'a str>,
    /// The prompt the first turn's reply answers, when that turn holds only
    /// the reply (its prompt was probed before the reply came). Context
    /// only: nothing is extracted from it again.
    pub asked: Option<&'a str>,
}

/// Token usage of an LLM call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

/// What a probe returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOutput {
    /// The patch to validate and apply.
    pub patch: ProbePatch,
    /// Existing nodes the turns mentioned (part of the focus even if unpatched).
    pub mentioned: Vec<NodeId>,
    /// Which probe made it (`heuristic`, `llm`).
    pub source: String,
    /// LLM usage, when an LLM was called.
    pub usage: Option<Usage>,
}

/// Why a probe produced nothing.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The endpoint failed (network, HTTP status, timeout).
    #[error("probe endpoint failed: {0}")]
    Endpoint(String),
    /// The reply was not a usable patch.
    #[error("probe reply unusable: {0}")]
    Reply(String),
}

/// A probe implementation.
pub trait Probe {
    /// A short name (`heuristic`, `llm`).
    fn name(&self) -> &str;
    /// Runs the probe.
    fn probe(&mut self, input: &ProbeInput<'_>) -> Result<ProbeOutput, ProbeError>;
}

/// The embedded, deterministic, offline probe.
#[derive(Clone, Debug, Default)]
pub struct HeuristicProbe {
    cfg: ProbeConfig,
}

impl HeuristicProbe {
    /// A heuristic probe with these constants.
    pub fn new(cfg: ProbeConfig) -> HeuristicProbe {
        // The word-frequency list is the probe's, never the hook's: load it
        // here (once per process), not where the gate could pay for it.
        extract::lexicon::init_frequencies();
        HeuristicProbe { cfg }
    }
}

impl Probe for HeuristicProbe {
    fn name(&self) -> &str {
        "heuristic"
    }

    fn probe(&mut self, input: &ProbeInput<'_>) -> Result<ProbeOutput, ProbeError> {
        // The cue lists spell apostrophes plainly: "let’s" reads as
        // "let's", a typed "dont" as "don't".
        let replies: Vec<String> = input
            .turns
            .iter()
            .map(|t| extract::normalize_typing(&t.assistant, false))
            .collect();
        // "talked to pellam" beside a reply that writes "Pellam": the user's
        // lowercase word is the name the reply capitalises.
        let cased = proper_nouns_of(replies.iter().map(String::as_str));
        let typed: Vec<Turn> = input
            .turns
            .iter()
            .zip(replies)
            .map(|(t, assistant)| Turn {
                user: recase(&extract::normalize_typing(&t.user, true), &cased),
                assistant,
                ..t.clone()
            })
            .collect();
        let asked = input.asked.map(|a| extract::normalize_typing(a, true));
        let input = &ProbeInput {
            turns: &typed,
            asked: asked.as_deref(),
            ..input.clone()
        };
        let mut plan = Plan::new(input, &self.cfg);
        plan.project_root();
        let mut previous_reply: &str = "";
        let mut asked: &str = input.asked.unwrap_or("");
        for turn in input.turns {
            plan.turn = turn.index;
            plan.day = turn.timestamp.unwrap_or(input.now).date_naive();
            plan.turn_reply = turn.assistant.clone();
            plan.turn_text = turn.user.clone();
            plan.last_drop = None;
            plan.prev_sentence.clear();
            plan.turn_said.clear();
            plan.prev_reply = previous_reply.to_owned();
            plan.prev_reply_facts = std::cell::OnceCell::new();
            plan.turn_reply_facts = std::cell::OnceCell::new();
            let user_sentences = extract::sentences(&turn.user);
            // "yes, do that": the proposal in the reply just before becomes
            // the user's decision.
            let accepted = if turn.user.trim().is_empty() {
                None
            } else if extract::is_acceptance(&turn.user) {
                // "yes please, let's use X": a user who states the choice
                // accepts nothing more than a proposal stated outright.
                let states_own = user_sentences
                    .iter()
                    .any(|s| extract::decision(s, input.root).is_some());
                if states_own {
                    extract::stated_proposal(previous_reply, input.root)
                } else {
                    extract::accepted_proposal(previous_reply, input.root)
                }
            } else if extract::is_go_ahead(&turn.user) {
                extract::stated_proposal(previous_reply, input.root)
            } else {
                None
            };
            if let Some(d) = accepted {
                // What the proposal names is what "do that" is about.
                plan.turn_text = format!("{previous_reply}\n{}", turn.user);
                plan.decision(&d);
                plan.turn_text = turn.user.clone();
            }
            // A terse answer to the question just asked ("parser: x
            // derive", an option of those offered) is a choice too.
            let terse = extract::terse_choice(&turn.user);
            if let Some(first) = terse.as_ref().or(user_sentences.first())
                && extract::decision(first, input.root).is_none()
                && let Some(d) = extract::answer_choice(first, previous_reply, input.root)
            {
                plan.decision(&d);
            } else if let Some(first) = user_sentences.first()
                // The cheap pick first: most sentences pick no option.
                && let Some((d, others)) = extract::picked_option(first, previous_reply, input.root)
                && extract::decision(first, input.root).is_none()
            {
                // "option b": the option of the list just offered, against
                // the one of that list in force, if any.
                plan.option_decision(d, &others);
            }
            for s in &user_sentences {
                plan.sentence(s, true);
            }
            // "house rules. 1) … 2) …": each listed item is a rule.
            for r in extract::listed_rules(&user_sentences) {
                plan.record(&r, &[]);
            }
            // A pasted env file: each line a setting ("PORT=8080").
            for r in extract::fenced_settings(&turn.user) {
                plan.record(&r, &[]);
            }
            for s in extract::sentences(&turn.assistant) {
                plan.sentence(&s, false);
                // "`tool ship --prod` uploads the bundle": how to ship.
                if let Some(r) = extract::described_procedure(&s) {
                    plan.record(&r, &[]);
                }
            }
            // A reply that comes after its prompt was probed names what
            // the prompt's bare values are of, as it does in one turn.
            if turn.user.trim().is_empty() && !turn.assistant.trim().is_empty() {
                for s in extract::sentences(asked) {
                    if extract::fact(&s).is_none()
                        && extract::event(&s).is_none()
                        && extract::decision(&s, input.root).is_none()
                    {
                        plan.record_named_by_reply(&s, &[]);
                    }
                }
            }
            // "what's the command for X?": the reply's command is how to X
            // (the question may have come with the last probe's turn).
            if !turn.user.trim().is_empty() {
                asked = &turn.user;
            }
            if let Some(r) = extract::answered_procedure(asked, &turn.assistant) {
                plan.record(&r, &[]);
            }
            for f in &turn.files {
                let label = strip_root(f, input.root);
                let m = Mention {
                    label,
                    kind: NodeKind::File,
                    domain: Domain::Technical,
                    role: None,
                    strong: false,
                };
                plan.mention(&m, None, false);
            }
            if !turn.assistant.trim().is_empty() {
                previous_reply = &turn.assistant;
            }
        }
        let (ops, mentioned) = plan.finish();
        Ok(ProbeOutput {
            patch: ProbePatch {
                probe_id: input.probe_id.clone(),
                ops,
            },
            mentioned,
            source: "heuristic".into(),
            usage: None,
        })
    }
}

/// Words a text always writes capitalised inside a sentence (never in
/// lowercase there, not at a sentence start, not in code) and that are not
/// common English (Zipf < 5) nor closed-class: its proper nouns, keyed by
/// their lowercase form ("pellam" → "Pellam").
fn proper_nouns_of<'t>(texts: impl Iterator<Item = &'t str>) -> HashMap<String, String> {
    let mut capital: HashMap<String, String> = HashMap::new();
    let mut lower: HashSet<String> = HashSet::new();
    let mut in_runs: HashSet<String> = HashSet::new();
    for text in texts {
        for s in extract::sentences(text) {
            let prose: String = s.split('`').step_by(2).collect::<Vec<_>>().join(" ");
            let mut opens = true;
            let mut prev_capital: Option<String> = None;
            for raw in prose.split_whitespace() {
                let starts = opens;
                opens = raw.ends_with([':', '.', '!', '?', ';']) || matches!(raw, "-" | "*" | "•");
                let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
                let w = w.strip_suffix("'s").unwrap_or(w);
                // "Quorra Mesh", "Vell Forms": a word of a run of capitals
                // names with the others, as a product or firm often does;
                // only a lone capital is taken.
                let capital_now = w.starts_with(char::is_uppercase);
                if capital_now && let Some(p) = &prev_capital {
                    in_runs.insert(p.clone());
                    in_runs.insert(w.to_lowercase());
                }
                // A capital that opens the sentence is the sentence's.
                prev_capital =
                    (capital_now && !starts && !raw.ends_with([',', ':', ';', '.', ')']))
                        .then(|| w.to_lowercase());
                if w.chars().count() < 3
                    || !w.chars().all(char::is_alphabetic)
                    || raw.contains(['/', '_', '=', '@', '<', '>', '[', '{'])
                {
                    continue;
                }
                let mut cs = w.chars();
                let first = cs.next().is_some_and(char::is_uppercase);
                let rest_lower = cs.all(char::is_lowercase);
                if !first {
                    lower.insert(w.to_lowercase());
                } else if rest_lower && !starts {
                    capital.insert(w.to_lowercase(), w.to_owned());
                }
            }
        }
    }
    capital.retain(|l, _| {
        !lower.contains(l)
            && !in_runs.contains(l)
            && !extract::lexicon::is_closed_class(l)
            && !extract::lexicon::is_common(l, PROPER_NOUN_ZIPF)
    });
    capital
}

/// `text` with each word written all in lowercase that `cased` knows
/// written as `cased` spells it. Code spans and tokens that are not plain
/// words (paths, file names, addresses, identifiers) are left as written;
/// so is every other word.
fn recase(text: &str, cased: &HashMap<String, String>) -> String {
    if cased.is_empty() {
        return text.to_owned();
    }
    extract::map_prose_tokens(text, |piece| {
        // Inside its punctuation, a word is letters, apostrophes and
        // hyphens; "x.rs", "v2", "a/b" are code.
        let core = piece.trim_matches(|c: char| !c.is_alphanumeric());
        if !core
            .chars()
            .all(|c| c.is_alphabetic() || matches!(c, '\'' | '-'))
        {
            return None;
        }
        let mut out = String::with_capacity(piece.len());
        let mut word = String::new();
        for c in piece.chars().chain(std::iter::once(' ')) {
            if c.is_alphabetic() {
                word.push(c);
                continue;
            }
            match cased.get(word.as_str()) {
                Some(w) if word.chars().all(char::is_lowercase) => out.push_str(w),
                _ => out.push_str(&word),
            }
            word.clear();
            out.push(c);
        }
        out.pop();
        Some(out)
    })
}

/// The version a decision's label gives its choice: its first number
/// ("Use X 4.0 for the upgrade" → "4.0", "Use v3 of the schema" → "3").
fn version_of(label: &str) -> Option<String> {
    label.split_whitespace().find_map(|w| {
        let w = w.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '(' | ')' | '`' | '"'));
        let w = w.trim_end_matches('.');
        let n = w.strip_prefix(['v', 'V']).unwrap_or(w);
        (n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .then(|| n.to_owned())
    })
}

fn strip_root(path: &str, root: Option<&str>) -> String {
    if let Some(r) = root
        && let Some(rest) = path.strip_prefix(r.trim_end_matches('/'))
    {
        return rest.trim_start_matches('/').to_owned();
    }
    path.to_owned()
}

/// Whether two of a node's evidence sentences put its name after a word
/// that a person's name does not take (`thing_markers.txt`: "at X", "the
/// X"), not before a possessive ("at X's flat").
fn named_as_thing(n: &Node) -> bool {
    let name = n.label.to_lowercase();
    let marked = |text: &str| {
        let lower = text.to_lowercase();
        lower.match_indices(&name).any(|(at, _)| {
            let after = &lower[at + name.len()..];
            let whole = after.chars().next().is_none_or(|c| !c.is_alphanumeric())
                && lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_whitespace);
            let possessive = after.starts_with("'s") || after.starts_with("\u{2019}s");
            whole
                && !possessive
                && lower[..at]
                    .split_whitespace()
                    .next_back()
                    .is_some_and(|w| extract::lexicon::THING_MARKERS.contains(w))
        })
    };
    n.evidence.iter().filter(|e| marked(&e.text)).count() >= 2
}

fn clean_detail(s: &str) -> String {
    let s = s.replace("**", "");
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 160 {
        return one_line;
    }
    let cut: String = one_line.chars().take(157).collect();
    format!("{}…", cut.trim_end())
}

/// The probe's working state: the nodes and edges it wants, before ops.
struct Plan<'a> {
    input: &'a ProbeInput<'a>,
    cfg: &'a ProbeConfig,
    names: HashMap<String, NodeId>,
    /// Nodes to add or update, keyed by id.
    nodes: BTreeMap<NodeId, Node>,
    /// Ids that exist in the graph already.
    existing: BTreeSet<NodeId>,
    /// Edges to add or strengthen.
    edges: BTreeMap<String, Edge>,
    /// Existing nodes mentioned.
    mentioned: BTreeSet<NodeId>,
    /// The project node the session runs in.
    project: Option<NodeId>,
    /// The turn being read (for evidence).
    turn: u32,
    /// The user's words in that turn (an old choice named anywhere in them).
    turn_text: String,
    /// A choice dropped earlier in this turn without a replacement yet.
    last_drop: Option<NodeId>,
    /// The user's previous sentence in this turn ("Ask X. He's the DBA").
    prev_sentence: String,
    /// The user's sentences of the turn being read, so far.
    turn_said: Vec<String>,
    /// The reply the user's turn answers ("the budget is 90 KB" before
    /// "make it 60 KB").
    prev_reply: String,
    /// How the probe's turns write their words inside sentences.
    usage: WordUse,
    /// The day the turn being read was said (a day of the month said
    /// alone is resolved against it).
    day: NaiveDate,
    /// How the session writes dates, for the days it resolves: read once,
    /// when the first such day is met.
    date_style: std::cell::OnceCell<extract::DateStyle>,
    /// The reply of the turn being read.
    turn_reply: String,
    /// The facts `prev_reply` and `turn_reply` state, each with its
    /// sentence: parsed once a turn, when a sentence first asks.
    prev_reply_facts: std::cell::OnceCell<Vec<(extract::Record, String)>>,
    turn_reply_facts: std::cell::OnceCell<Vec<(extract::Record, String)>>,
}

/// How prose writes its words inside sentences (not at a sentence start,
/// not in code): the stems written in lowercase, and the words written
/// capitalised. A word capitalised only where every word is ("Bookings:
/// …") and written in lowercase elsewhere is an ordinary noun there.
#[derive(Default)]
struct WordUse {
    lower: HashSet<String>,
    capital: HashSet<String>,
}

impl WordUse {
    fn of(turns: &[Turn]) -> WordUse {
        let mut u = WordUse::default();
        for t in turns {
            for text in [&t.user, &t.assistant] {
                for s in extract::sentences(text) {
                    u.read(&s);
                }
            }
        }
        u
    }

    fn read(&mut self, sentence: &str) {
        // Code spans are not prose.
        let prose: String = sentence.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut opens = true;
        for raw in prose.split_whitespace() {
            let starts = opens;
            opens = raw.ends_with([':', '.', '!', '?', ';']) || matches!(raw, "-" | "*" | "•");
            let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
            if starts
                || w.chars().count() < 3
                || !w.chars().all(|c| c.is_alphabetic() || c == '-')
                // A word glued to code or a path is not prose.
                || raw.contains(['/', '_', '=', '@', '<', '>', '[', '{'])
            {
                continue;
            }
            let mut cs = w.chars();
            let first = cs.next().is_some_and(char::is_uppercase);
            let rest_lower = cs.all(|c| !c.is_uppercase());
            if !first && rest_lower {
                self.lower.insert(extract::stem(w));
            } else if first && rest_lower {
                self.capital.insert(w.to_lowercase());
            }
        }
    }

    /// Whether `label`, a capitalised word, is an ordinary noun here.
    fn ordinary(&self, label: &str) -> bool {
        let mut cs = label.chars();
        cs.next().is_some_and(char::is_uppercase)
            && cs.all(|c| c.is_lowercase() || c == '-')
            && !self.capital.contains(&label.to_lowercase())
            && self.lower.contains(&extract::stem(label))
    }
}

impl<'a> Plan<'a> {
    fn new(input: &'a ProbeInput<'a>, cfg: &'a ProbeConfig) -> Plan<'a> {
        Plan {
            input,
            cfg,
            names: input.graph.name_index(),
            nodes: BTreeMap::new(),
            existing: BTreeSet::new(),
            edges: BTreeMap::new(),
            mentioned: BTreeSet::new(),
            project: None,
            turn: 0,
            turn_text: String::new(),
            last_drop: None,
            prev_sentence: String::new(),
            turn_said: Vec::new(),
            prev_reply: String::new(),
            usage: WordUse::of(input.turns),
            day: input.now.date_naive(),
            date_style: std::cell::OnceCell::new(),
            turn_reply: String::new(),
            prev_reply_facts: std::cell::OnceCell::new(),
            turn_reply_facts: std::cell::OnceCell::new(),
        }
    }

    /// How the session writes dates: in the turns read, else in the facts
    /// the memory holds; month first when neither says.
    fn date_style(input: &ProbeInput) -> extract::DateStyle {
        let turns = input
            .turns
            .iter()
            .flat_map(|t| [t.user.as_str(), t.assistant.as_str()]);
        extract::date_style(turns)
            .or_else(|| {
                let facts = input
                    .graph
                    .nodes_unordered()
                    .filter(|n| n.kind == NodeKind::Fact);
                extract::date_style(facts.map(|n| n.label.as_str()))
            })
            .unwrap_or(extract::DateStyle::MonthDay)
    }

    /// `r` with a value that is a day of the month alone ("the 20th")
    /// written as the date it is, by the day the turn was said; `None`
    /// when there is nothing to resolve.
    ///
    /// The month is, first, `month` (that of the value this one replaces,
    /// if any); else the month the turn writes beside the same day ("until
    /// the 23rd of April"); else that of the fact in force on the same
    /// subject; else the one month the facts in force write beside the
    /// same day; else the nearest.
    fn dated(&self, r: &extract::Record, month: Option<u32>) -> Option<extract::Record> {
        let subject = r.subject.as_deref()?;
        if !r.label.contains(": ") {
            return None;
        }
        let day = extract::lone_day(r.value())?;
        let style = *self.date_style.get_or_init(|| Self::date_style(self.input));
        let resolve = |month| extract::resolve_day(r.value(), self.day, style, month);
        let nearest = resolve(None)?;
        let month = month
            .or_else(|| extract::month_beside(&self.turn_text, day))
            .or_else(|| extract::month_beside(&self.turn_reply, day))
            .or_else(|| {
                self.facts_held()
                    .filter(|(s, _)| s.eq_ignore_ascii_case(subject))
                    .find_map(|(_, v)| extract::month_named(v))
            })
            // "before the 23rd" when the memory holds "the 23rd of April".
            .or_else(|| {
                let mut months = self
                    .facts_held()
                    .filter_map(|(_, v)| extract::month_beside(v, day));
                let first = months.next()?;
                months.all(|m| m == first).then_some(first)
            });
        let value = match month {
            Some(_) => resolve(month).unwrap_or(nearest),
            None => nearest,
        };
        Some(extract::Record {
            kind: r.kind,
            ..extract::Record::fact(subject, &value, &r.sentence)
        })
    }

    /// The project the session runs in (the root directory's name).
    fn project_root(&mut self) {
        let Some(root) = self.input.root else { return };
        let Some(base) = std::path::Path::new(root)
            .file_name()
            .and_then(|b| b.to_str())
        else {
            return;
        };
        let label = cap_words(base);
        let m = Mention {
            label,
            kind: NodeKind::Project,
            domain: Domain::Project,
            role: None,
            strong: true,
        };
        let id = self.resolve(&m.label, m.kind);
        let exists = id
            .as_ref()
            .is_some_and(|i| self.input.graph.contains(i) || self.nodes.contains_key(i));
        if exists {
            self.project = id;
        } else {
            self.project = self.upsert(&m, Some(&format!("The project in {root}")), 0.0, true);
        }
    }

    /// Finds the id of an existing (or planned) node answering to `label`.
    fn resolve(&self, label: &str, kind: NodeKind) -> Option<NodeId> {
        let norm = normalize_name(label);
        if let Some(id) = self.names.get(&norm) {
            return Some(id.clone());
        }
        // A bare file name resolves to the one known path that ends with it.
        if kind == NodeKind::File && !label.contains('/') {
            let suffix = format!("/{norm}");
            if let Some(id) = self.unique_name(|k, _| k.ends_with(&suffix)) {
                return Some(id);
            }
        }
        // A person's first name resolves to the person.
        if kind == NodeKind::Person || (kind == NodeKind::Entity && !norm.contains(' ')) {
            let prefix = format!("{norm} ");
            let person = |id: &NodeId| {
                self.node_ref(id)
                    .is_some_and(|n| n.kind == NodeKind::Person)
            };
            if let Some(id) = self.unique_name(|k, id| k.starts_with(&prefix) && person(id)) {
                return Some(id);
            }
        }
        let prefix = match kind {
            NodeKind::Decision => "decision ",
            NodeKind::Correction => "correction ",
            NodeKind::Preference => "pref ",
            NodeKind::Fact => "fact ",
            NodeKind::Restriction => "rule ",
            NodeKind::Procedure => "howto ",
            NodeKind::Intention => "next ",
            _ => "",
        };
        NodeId::slug(&format!("{prefix}{label}"))
    }

    /// The one node whose names satisfy `pred`; `None` when none or several do.
    fn unique_name(&self, pred: impl Fn(&str, &NodeId) -> bool) -> Option<NodeId> {
        let mut hits: Vec<&NodeId> = self
            .names
            .iter()
            .filter(|(k, id)| pred(k, id))
            .map(|(_, id)| id)
            .collect();
        hits.sort();
        hits.dedup();
        (hits.len() == 1).then(|| hits[0].clone())
    }

    fn node_ref(&self, id: &NodeId) -> Option<&Node> {
        self.nodes.get(id).or_else(|| self.input.graph.node(id))
    }

    /// Adds or strengthens a node; returns its id.
    fn upsert(
        &mut self,
        m: &Mention,
        detail: Option<&str>,
        weight: f64,
        from_user: bool,
    ) -> Option<NodeId> {
        let id = self.resolve(&m.label, m.kind)?;
        let now = self.input.now;
        // The user naming something counts more than the assistant doing so.
        let boost = if from_user {
            self.cfg.mention_boost
        } else {
            self.cfg.mention_boost * 0.3
        };
        let speaker = if from_user { "user" } else { "assistant" };
        let (session, turn) = (self.input.session, self.turn);
        // Evidence is what was said in a turn, not a detail we made up.
        let sentence = detail.filter(|_| turn > 0).map(str::to_owned);
        let detail = detail.map(|d| {
            if from_user {
                d.to_owned()
            } else {
                first_clause(d)
            }
        });
        let detail = detail.as_deref();
        // A mention worth keeping as the node's detail: the user's own words
        // with some substance, newest first.
        let informative =
            |d: &str| from_user && d.split_whitespace().count() >= 5 && d.chars().count() <= 300;
        let refreshable = |k: NodeKind| {
            matches!(
                k,
                NodeKind::Entity | NodeKind::Project | NodeKind::File | NodeKind::Identifier
            )
        };
        // A known node's detail follows its latest informative mention, and
        // the sentence joins its evidence.
        let follow = |n: &mut Node| {
            match detail {
                Some(d) if n.detail.is_none() => n.detail = Some(clean_detail(d)),
                Some(d) if refreshable(n.kind) && informative(d) => {
                    n.detail = Some(clean_detail(d));
                }
                _ => {}
            }
            if let Some(sn) = &sentence {
                n.note_evidence(session, turn, speaker, &clean_detail(sn));
            }
        };
        // A name first seen as a thing and later said to be a person (given
        // a role, or doing what people do: "X rang again", "X decides") is
        // a person.
        let promote = |n: &mut Node| {
            if m.kind == NodeKind::Person && n.kind == NodeKind::Entity && !named_as_thing(n) {
                n.kind = NodeKind::Person;
                n.domain = Domain::Relationship;
                if let Some(role) = &m.role {
                    n.detail = Some(clean_detail(&format!(
                        "{role}. {}",
                        n.detail.as_deref().unwrap_or("")
                    )));
                }
            }
        };
        // "the pool at X … book the X": a name used as places, businesses
        // and products are, in two sentences, is no person's, whatever verb
        // once followed it ("X emailed back").
        let demote = |n: &mut Node| {
            if n.kind == NodeKind::Person && m.role.is_none() && named_as_thing(n) {
                n.kind = NodeKind::Entity;
                n.domain = Domain::Technical;
            }
        };
        if let Some(planned) = self.nodes.get_mut(&id) {
            planned.weight = (planned.weight + boost * 0.5 * (1.0 - planned.weight)).min(1.0);
            follow(planned);
            promote(planned);
            demote(planned);
            return Some(id);
        }
        if let Some(existing) = self.input.graph.node(&id) {
            let mut n = existing.clone();
            promote(&mut n);
            n.weight = (n.weight + boost * (1.0 - n.weight)).clamp(0.0, 1.0);
            n.last_activated = now.max(n.last_activated);
            follow(&mut n);
            demote(&mut n);
            if let Some(role) = &m.role
                && n.detail
                    .as_deref()
                    .is_none_or(|d| !d.contains(role.as_str()))
            {
                n.detail = Some(clean_detail(&format!(
                    "{role}. {}",
                    n.detail.as_deref().unwrap_or("")
                )));
            }
            if normalize_name(&n.label) != normalize_name(&m.label)
                && !n
                    .aliases
                    .iter()
                    .any(|a| normalize_name(a) == normalize_name(&m.label))
                && n.aliases.len() < 8
                && !matches!(
                    m.kind,
                    NodeKind::Decision | NodeKind::Fact | NodeKind::Procedure
                )
            {
                n.aliases.push(m.label.clone());
            }
            self.existing.insert(id.clone());
            self.mentioned.insert(id.clone());
            self.nodes.insert(id.clone(), n);
            return Some(id);
        }
        if !from_user && !m.strong {
            // The assistant naming a file in passing adds it faintly.
            if m.kind != NodeKind::File {
                return None;
            }
        }
        let base = if weight > 0.0 {
            weight
        } else {
            match m.kind {
                NodeKind::Person => self.cfg.new_weight + 0.15,
                NodeKind::Project => self.cfg.new_weight + 0.1,
                _ if from_user => self.cfg.new_weight + 0.05,
                _ => self.cfg.new_weight - 0.25,
            }
        };
        let mut n = Node::new(id.clone(), &m.label, m.domain, base.clamp(0.05, 1.0), now);
        n.kind = m.kind;
        n.detail = match (&m.role, detail) {
            (Some(role), Some(d)) => Some(clean_detail(&format!("{role}. {d}"))),
            (Some(role), None) => Some(clean_detail(role)),
            (None, d) => d.map(clean_detail),
        };
        if m.kind == NodeKind::Person
            && let Some(first) = m.label.split_whitespace().next()
            && first != m.label
        {
            n.aliases.push(first.to_owned());
        }
        if let Some(sn) = &sentence {
            n.note_evidence(session, turn, speaker, &clean_detail(sn));
        }
        for name in n.names().collect::<Vec<_>>() {
            self.names.entry(name).or_insert_with(|| id.clone());
        }
        self.nodes.insert(id.clone(), n);
        Some(id)
    }

    fn mention(&mut self, m: &Mention, sentence: Option<&str>, from_user: bool) -> Option<NodeId> {
        self.upsert(m, sentence, 0.0, from_user)
    }

    fn edge(&mut self, source: &NodeId, kind: EdgeKind, target: &NodeId, weight: f64) {
        if source == target {
            return;
        }
        let key = edge_key(source, kind, target);
        let base = self
            .edges
            .get(&key)
            .map(|e| e.weight)
            .or_else(|| self.input.graph.edge(&key).map(|e| e.weight));
        let w = match base {
            Some(b) => (b + 0.15 * (1.0 - b)).max(weight).min(1.0),
            None => weight,
        };
        self.edges.insert(
            key,
            Edge {
                source: source.clone(),
                target: target.clone(),
                kind,
                weight: w,
            },
        );
    }

    /// Names the session already knows (people above all) written in
    /// lowercase or without the signals that found them first.
    fn known_names(&self, s: &str) -> Vec<Mention> {
        let mut out = Vec::new();
        for raw in s.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\'')) {
            let w = raw.trim_matches('\'');
            if w.chars().count() < 2 || w.chars().next().is_some_and(char::is_uppercase) {
                continue;
            }
            let norm = normalize_name(w);
            if extract::lexicon::is_closed_class(&norm) {
                continue;
            }
            if let Some(id) = self.names.get(&norm)
                && let Some(n) = self.node_ref(id)
                && n.kind == NodeKind::Person
            {
                out.push(Mention {
                    label: n.label.clone(),
                    kind: NodeKind::Person,
                    domain: Domain::Relationship,
                    role: None,
                    strong: true,
                });
            }
        }
        out
    }

    fn sentence(&mut self, s: &str, from_user: bool) {
        let mut ms = extract::mentions(s, self.input.root);
        // "Extensions go through X. He's the DBA": the one name the
        // sentence before ended with is the person the pronoun gives a role.
        if from_user && let Some(role) = extract::pronoun_role(s) {
            let before: Vec<Mention> = extract::mentions(&self.prev_sentence, self.input.root)
                .into_iter()
                .filter(|m| matches!(m.kind, NodeKind::Entity | NodeKind::Person))
                .filter(|m| !m.label.contains(' ') || m.kind == NodeKind::Person)
                .collect();
            if let [m] = before.as_slice() {
                ms.push(Mention {
                    label: m.label.clone(),
                    kind: NodeKind::Person,
                    domain: Domain::Relationship,
                    role: Some(role),
                    strong: true,
                });
            }
        }
        // The user's sentence before this one, for a pronoun choice below.
        let prior = if from_user {
            std::mem::replace(&mut self.prev_sentence, s.to_owned())
        } else {
            String::new()
        };
        let earlier: Vec<String> = if from_user {
            let e = self.turn_said.clone();
            self.turn_said.push(s.to_owned());
            e
        } else {
            Vec::new()
        };
        for k in self.known_names(s) {
            if !ms
                .iter()
                .any(|m| normalize_name(&m.label) == normalize_name(&k.label))
            {
                ms.push(k);
            }
        }
        let mut ids: Vec<(NodeId, NodeKind)> = Vec::new();
        for m in &ms {
            let accept = from_user
                || m.strong
                || self
                    .resolve(&m.label, m.kind)
                    .is_some_and(|id| self.input.graph.contains(&id));
            if !accept {
                continue;
            }
            // A capitalised word the turns otherwise write in lowercase is
            // no name ("Bookings: …" beside "the bookings table").
            if m.kind == NodeKind::Entity
                && self.usage.ordinary(&m.label)
                && !self.resolve(&m.label, m.kind).is_some_and(|id| {
                    self.input.graph.contains(&id) || self.nodes.contains_key(&id)
                })
            {
                continue;
            }
            // The assistant does not introduce people or projects.
            if !from_user
                && matches!(m.kind, NodeKind::Person | NodeKind::Project)
                && !self.resolve(&m.label, m.kind).is_some_and(|id| {
                    self.input.graph.contains(&id) || self.nodes.contains_key(&id)
                })
            {
                continue;
            }
            if let Some(id) = self.mention(m, Some(s), from_user) {
                let kind = self.node_ref(&id).map(|n| n.kind).unwrap_or(m.kind);
                if !ids.iter().any(|(i, _)| *i == id) {
                    ids.push((id, kind));
                }
            }
        }

        // Files belong to the project.
        if let Some(p) = self.project.clone() {
            for (id, kind) in &ids {
                if *kind == NodeKind::File
                    && self
                        .input
                        .graph
                        .edge(&edge_key(id, EdgeKind::PartOf, &p))
                        .is_none()
                {
                    self.edge(id, EdgeKind::PartOf, &p, 0.4);
                }
            }
        }

        // "raised the limit from 12/min to 40/min", said by either side:
        // the new value with the old as its history.
        // "the ceiling is 15 min not 8": the value denied is the history, where the
        // memory holds no value of that subject to update instead.
        let denied = || {
            extract::denied_value(s).filter(|(new, _)| {
                let held = new.subject.as_deref().is_some_and(|subject| {
                    self.in_force_about(NodeKind::Fact, &normalize_name(subject))
                        .iter()
                        .filter_map(|id| self.node_ref(id))
                        .any(|n| label_measures_like(&n.label, new.value()))
                });
                !held && self.related_fact(new).is_none()
            })
        };
        if let Some((new, old)) = extract::value_change(s).or_else(denied) {
            self.value_change(&new, &old, &ids);
        }

        if from_user {
            let d = extract::decision(s, self.input.root)
                // "ok X sounds good", "X for now": an option the reply
                // before named, picked.
                .or_else(|| extract::endorsed_choice(s, &self.prev_reply, self.input.root))
                .or_else(|| {
                    // "recharts is out. visx for all charts": after a drop, a
                    // verbless sentence naming a thing is the replacement.
                    self.last_drop.as_ref()?;
                    let s = extract::strip_sufficiency(s);
                    // "so Y for the logs", "so it's Y then": what leads
                    // the clause is not the thing.
                    let s = extract::strip_clause_lead(s);
                    // "sorry for the churn", "Let's return to …", "we'll
                    // keep …": a reaction, or a clause opened by its own
                    // subject (a stop word), is no naming of a thing; a
                    // thing names itself first (a determiner may lead it).
                    let s = extract::strip_interjections(s);
                    let opener = s
                        .split_whitespace()
                        .next()?
                        .trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase()
                        .replace('\u{2019}', "'");
                    if extract::lexicon::is_stop(&opener)
                        && !extract::lexicon::DETERMINERS.contains(&opener)
                    {
                        return None;
                    }
                    extract::decision(&format!("let's use {s}"), self.input.root)
                        .filter(|d| d.chosen.is_some())
                })
                .or_else(|| {
                    // "Harrowby quoted £540. we're going with them": a choice
                    // of a pronoun stands for the thing the sentence before
                    // named (read as one sentence, as within one).
                    let pronoun = s
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| extract::lexicon::OBJECT_PRONOUNS.contains(&w.to_lowercase()));
                    if prior.is_empty() || !pronoun {
                        return None;
                    }
                    let joined = format!("{}, {s}", prior.trim_end_matches(['.', '!', ';']));
                    extract::decision(&joined, self.input.root)
                        .filter(|d| {
                            d.chosen.is_some()
                                && extract::decision(&prior, self.input.root)
                                    .is_none_or(|p| p.label != d.label)
                        })
                        .or_else(|| {
                            // Else the thing the nearest of the turn's
                            // sentences before names first ("good news: X
                            // dropped by. £610 all in. we're going with
                            // them").
                            let thing = earlier.iter().rev().take(3).find_map(|before| {
                                extract::mentions(before, self.input.root)
                                    .into_iter()
                                    .find(|m| m.kind == NodeKind::Entity)
                            })?;
                            let named = replace_pronoun(s, &thing.label)?;
                            extract::decision(&named, self.input.root)
                                .filter(|d| d.chosen.as_deref() == Some(thing.label.as_str()))
                                .map(|d| extract::Decision {
                                    sentence: s.to_owned(),
                                    ..d
                                })
                        })
                });
            // "'X' is too close to Y, it'd confuse them. So we're going back
            // to Z": a choice in force that a sentence before it in the
            // turn opens with is what the return leaves.
            let d = d.map(|mut d| {
                if d.replaced.is_none()
                    && d.moves == extract::DecisionMove::Return
                    && let Some(chosen) = d.chosen.clone()
                    && let Some(old) = self.choice_opening_before(s)
                    && normalize_name(&old) != normalize_name(&chosen)
                {
                    d.replaced = Some(old);
                }
                d
            });
            // A new choice stands for what the sentence corrects.
            let decided = d
                .as_ref()
                .is_some_and(|d| d.moves == extract::DecisionMove::Choose && d.chosen.is_some());
            // What the decision chose, to hold a version it names once.
            let chose = d.as_ref().map(|d| d.label.clone()).unwrap_or_default();
            if let Some(d) = d {
                self.decision(&d);
            }
            // "it's on Quokka 6.1.7": versions of named things, each its own
            // fact; a version the sentence's decision names is that decision,
            // and it supersedes the version held before ("Use Quokka 7.1"
            // after "Quokka 6.1.7").
            // (A decision that made no node, "keep X" with nothing to keep
            // it against, leaves the version a fact.)
            let decided_node = (!chose.is_empty())
                .then(|| self.resolve(&chose, NodeKind::Decision))
                .flatten()
                .filter(|id| self.node_ref(id).is_some());
            let said_versions = extract::versions(s);
            let chose = chose.to_lowercase();
            let (chosen, versions): (Vec<extract::Record>, Vec<extract::Record>) = said_versions
                .iter()
                .cloned()
                .partition(|v| decided_node.is_some() && chose.contains(&v.label.to_lowercase()));
            if let Some(did) = decided_node {
                for v in &chosen {
                    let Some(subject) = v.subject.as_deref() else {
                        continue;
                    };
                    for old in self.in_force_about(NodeKind::Fact, subject) {
                        self.supersede(&did, &old);
                    }
                }
            }
            let fact = extract::fact(s).filter(|f| {
                // "back to Quokka 5.3 in this release" is no "release: 5.3".
                let v = f.value().to_lowercase();
                !said_versions.iter().any(|r| {
                    extract::fact_parts(&r.label).is_some_and(|(_, rv)| v == rv.to_lowercase())
                })
            });
            // "peaked at 41.2%, not 47%": a value said beside an old one of
            // a fact in force is that fact's new value, whatever the
            // sentence calls it.
            let fact = self.fact_by_echo(s, fact.as_ref()).or(fact);
            // The same value under another name is the same fact.
            let event =
                extract::event(s).filter(|e| fact.as_ref().is_none_or(|f| f.value() != e.value()));
            let evented = event.is_some();
            let records = [
                fact.clone(),
                event,
                extract::restriction(s),
                extract::procedure(s),
                extract::intention(s),
            ];
            for r in records.into_iter().flatten().chain(versions) {
                self.record(&r, &ids);
            }
            // "hall rental £480, catering £900": each value the sentence
            // links to a subject of its own.
            for r in extract::later_facts(s) {
                if fact.as_ref().is_none_or(|f| f.subject != r.subject) {
                    self.record(&r, &ids);
                }
            }
            // "pool cleaning on <day>s": what happens on a day of the week.
            for r in extract::schedule_facts(s) {
                if fact.as_ref().is_none_or(|f| f.subject != r.subject) {
                    self.record(&r, &ids);
                }
            }
            // "ok so 12 per node": a number with the unit of exactly one fact
            // in force, and no subject of its own, updates that fact.
            let mut said = fact.clone();
            // A value beside a new choice is the choice's ("we'll do a
            // flat rate instead, €80 a seat"), not an update of the one fact
            // in force that happens to share its unit.
            let countered = if fact.is_none() && !decided {
                self.counter_to_reply(s)
            } else {
                None
            };
            if let Some((new, old)) = countered {
                self.value_change(&new, &old, &ids);
                said = Some(new);
            } else if fact.is_none()
                && !decided
                && let Some(r) = self
                    .fact_by_unit(s)
                    .or_else(|| self.fact_by_pronoun(s))
                    .or_else(|| self.day_by_pronoun(s))
            {
                self.record(&r, &ids);
                said = Some(r);
            } else if fact.is_none() && !decided {
                said = self.pronoun_fact(s, &ids).or(said);
            }
            // "monday oct 5, 8am at the depot." answered by
            // "Handover: Monday Oct 5, 8am": the reply names what the
            // value is of.
            if said.is_none()
                && !evented
                && !decided
                && let Some(r) = self.record_named_by_reply(s, &ids)
            {
                said = Some(r);
            }
            // "make it 60 KB" after a reply that said "the budget is 90 KB":
            // the reply's value is the history.
            self.changed_from_reply(s, said.as_ref(), &ids);
            // A corrected number is a fact with history, a corrected choice
            // ("we use X, not Y") a decision; anything else the user
            // corrects is a correction.
            if fact.is_none()
                && !decided
                && let Some(c) = extract::correction(s)
            {
                let m = Mention {
                    label: c.label.clone(),
                    kind: NodeKind::Correction,
                    domain: dominant_of(&ids, self),
                    role: None,
                    strong: true,
                };
                if let Some(cid) =
                    self.upsert(&m, Some(&c.sentence), self.cfg.correction_weight, true)
                {
                    for (id, kind) in &ids {
                        match kind {
                            NodeKind::Person => self.edge(&cid, EdgeKind::RelatesTo, id, 0.5),
                            NodeKind::Entity
                            | NodeKind::Project
                            | NodeKind::File
                            | NodeKind::Identifier => self.edge(&cid, EdgeKind::Corrects, id, 0.8),
                            _ => {}
                        }
                    }
                }
            }
            if let Some(p) = extract::preference(s) {
                let m = Mention {
                    label: p.label.clone(),
                    kind: NodeKind::Preference,
                    domain: Domain::Personal,
                    role: None,
                    strong: true,
                };
                self.upsert(&m, Some(&p.sentence), self.cfg.preference_weight, true);
            }
        }

        if !from_user {
            self.reply_update(s, &ids);
        }
        self.relations(s, &ids);
        self.stated_history(s);
    }

    /// "Bumped the cap to 12 per run", "The sync window is now 40
    /// minutes": a reply that says it changed a value the memory holds is
    /// that value's new one. A reply's other values are not recorded: it
    /// offers, explains and gives examples; only what it says it changed
    /// of what the user set is taken. Not a question, a condition or a
    /// tentative modal ("I could raise it to 30").
    fn reply_update(&mut self, s: &str, ids: &[(NodeId, NodeKind)]) {
        if s.trim_end().ends_with('?') || !(extract::says_change(s) || extract::says_update(s)) {
            return;
        }
        let lower = s.to_lowercase();
        let hedged = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .any(|w| {
                extract::lexicon::CONDITIONALS.contains(w)
                    || extract::lexicon::TENTATIVE_MODALS.contains(w)
                    // "I'd", "we'd": "would" contracted.
                    || w.ends_with("'d")
            });
        if hedged {
            return;
        }
        let Some(f) = extract::fact(s) else {
            return;
        };
        // The value is what the subject is, or was changed to, now ("is now
        // 40 minutes", "bumped the cap to 12"), not a day something is done
        // before or goes in on.
        let first = f
            .value()
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_lowercase();
        let lws = extract::bare_words(s);
        let stated = lws.iter().enumerate().any(|(i, w)| {
            *w == first
                && lws[i.saturating_sub(3)..i].iter().any(|p| {
                    p == "to"
                        || extract::lexicon::UPDATE_ADVERBS.contains(p.as_str())
                        || (extract::lexicon::COPULAS.contains(p.as_str()) && !p.ends_with("n't"))
                })
        });
        if !stated {
            return;
        }
        // Of the same measure as the value held: a time does not replace a
        // day, nor a count a price.
        let Some(unit) = extract::value_unit(f.value()) else {
            return;
        };
        // One value of that measure in the sentence: a reply that sets a
        // value against others ("the cutoff is now two hours after
        // the 01:00 start, so 03:00") is read by the user's words, not here.
        let of_unit =
            |v: &str| extract::value_unit(v).is_some_and(|u| extract::same_dimension(&u, &unit));
        let tokens = s
            .split_whitespace()
            .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()) && of_unit(t))
            .count();
        if extract::measures(s)
            .iter()
            .filter(|v| of_unit(v))
            .count()
            .max(tokens)
            > 1
        {
            return;
        }
        // Another value, not the same one written another way ("30 s",
        // "30 seconds"; "Saturday 24th", "the 24th").
        let other = |v: &str| match (extract::date_of(v), extract::date_of(f.value())) {
            (Some(a), Some(b)) => a.0 != b.0 || (a.1.is_some() && b.1.is_some() && a.1 != b.1),
            _ => extract::value_number(v) != extract::value_number(f.value()),
        };
        let replaces = |p: &Self, id: &NodeId| {
            p.node_ref(id)
                .and_then(|n| extract::fact_parts(&n.label))
                .is_some_and(|(_, v)| of_unit(v) && other(v))
        };
        let held = f.subject.as_deref().is_some_and(|subject| {
            self.in_force_about(NodeKind::Fact, &normalize_name(subject))
                .iter()
                .any(|id| replaces(self, id))
        });
        let related = || {
            self.related_fact(&f)
                .is_some_and(|(id, _, _)| replaces(self, &id))
        };
        if held || related() {
            self.record(&f, ids);
        }
    }

    /// "backbone: quillnet_b2 (was plumenet18)", said by either side: the
    /// decision or fact in force that holds X gets Y as its history, when
    /// it has none naming Y yet.
    fn stated_history(&mut self, s: &str) {
        let squash = |t: &str| -> String {
            t.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        };
        for (new, old) in extract::stated_history(s) {
            let last = new.split_whitespace().last().unwrap_or("").to_owned();
            let (new_s, last_s, old_s) = (squash(&new), squash(&last), squash(&old));
            if last_s.is_empty() || old_s.is_empty() || old_s == last_s {
                continue;
            }
            let holder = [NodeKind::Decision, NodeKind::Fact]
                .into_iter()
                .find_map(|kind| {
                    let mut fits = self.current_of_kind(kind).into_iter().filter(|id| {
                        self.node_ref(id).is_some_and(|n| {
                            let shown = match kind {
                                NodeKind::Fact => n.label.split_once(": ").map_or("", |(_, v)| v),
                                _ => n.label.as_str(),
                            };
                            let shown = squash(shown);
                            if kind == NodeKind::Fact {
                                shown == last_s || shown == new_s
                            } else {
                                shown.contains(&last_s)
                            }
                        })
                    });
                    let one = fits.next()?;
                    fits.next().is_none().then_some((one, kind))
                });
            let Some((id, kind)) = holder else { continue };
            // Its history already names the old one.
            if self
                .history_of(&id)
                .iter()
                .any(|o| squash(&o.label).contains(&old_s))
            {
                continue;
            }
            let Some(n) = self.node_ref(&id) else {
                continue;
            };
            let label = match kind {
                NodeKind::Fact => match n.label.split_once(": ") {
                    Some((subject, _)) => format!("{subject}: {old}"),
                    None => continue,
                },
                _ => format!("Use {old}"),
            };
            let domain = n.domain;
            if let Some(o) = self.faint(kind, label, domain, Some(s), false)
                && o != id
                && !self.is_superseded(&o)
            {
                self.supersede(&id, &o);
            }
        }
    }

    /// The subject of a fact or procedure label ("request timeout" of
    /// "request timeout: 3 s").
    fn subject_of(label: &str) -> Option<String> {
        label
            .split_once(": ")
            .map(|(a, _)| normalize_name(a))
            .filter(|a| !a.is_empty())
    }

    /// The records of `kind` in force whose subject (normalised) is `subject`.
    fn in_force_about(&self, kind: NodeKind, subject: &str) -> Vec<NodeId> {
        self.current_of_kind(kind)
            .into_iter()
            .filter(|id| {
                self.node_ref(id)
                    .and_then(|n| match kind {
                        // A version ("Quokka 7.1") or setting ("MAX=8") too.
                        NodeKind::Fact => extract::fact_parts(&n.label)
                            .map(|(s, _)| normalize_name(s))
                            .filter(|s| !s.is_empty()),
                        _ => Self::subject_of(&n.label),
                    })
                    .is_some_and(|s| s == subject)
            })
            .collect()
    }

    /// Adds a fact, restriction, procedure or intention; a fact or procedure
    /// whose subject already holds another value supersedes it.
    fn record(&mut self, r: &extract::Record, ids: &[(NodeId, NodeKind)]) {
        let dated = self.dated(r, None);
        let r = dated.as_ref().unwrap_or(r);
        // "ttl of 6 minutes" after "cache ttl: 12 minutes": the same fact
        // under fewer words takes the fuller subject.
        // A version or setting is its name's alone: no other subject holds it.
        let related = if r.label.contains(": ") {
            self.related_fact(r)
        } else {
            None
        };
        let renamed;
        let r = match &related {
            Some((_, subject, true)) => {
                renamed = extract::Record::fact(subject, r.value(), &r.sentence);
                &renamed
            }
            _ => r,
        };
        let domain = match r.kind {
            NodeKind::Procedure => Domain::Technical,
            NodeKind::Intention | NodeKind::Fact => dominant_of(ids, self),
            _ => dominant_of(ids, self),
        };
        let m = Mention {
            label: r.label.clone(),
            kind: r.kind,
            domain,
            role: None,
            strong: true,
        };
        // The same command under another task name is that procedure again.
        let cmd = r.value();
        if r.kind == NodeKind::Procedure
            && !cmd.is_empty()
            && self.current_of_kind(NodeKind::Procedure).iter().any(|id| {
                self.node_ref(id).is_some_and(|n| {
                    n.label != r.label && n.label.split_once(": ").is_some_and(|(_, c)| c == cmd)
                })
            })
        {
            return;
        }
        let existed = self
            .resolve(&r.label, r.kind)
            .is_some_and(|id| self.input.graph.contains(&id) || self.nodes.contains_key(&id));
        let Some(rid) = self.upsert(&m, Some(&r.sentence), self.cfg.decision_weight, true) else {
            return;
        };
        for (id, kind) in ids {
            if matches!(
                kind,
                NodeKind::Entity
                    | NodeKind::Project
                    | NodeKind::File
                    | NodeKind::Identifier
                    | NodeKind::Person
            ) {
                self.edge(&rid, EdgeKind::RelatesTo, id, 0.5);
            }
        }
        if existed || !matches!(r.kind, NodeKind::Fact | NodeKind::Procedure) {
            return;
        }
        if let Some((old, _, _)) = related {
            self.supersede(&rid, &old);
            return;
        }
        let Some(subject) = r.subject.as_deref().map(normalize_name) else {
            return;
        };
        // A value of another measure on the same subject is another fact
        // ("launch: 12 May", then "keep the old site up 30 days after
        // launch"), not its new value.
        let old: Vec<NodeId> = self
            .in_force_about(r.kind, &subject)
            .into_iter()
            .filter(|id| *id != rid)
            .filter(|id| {
                r.kind != NodeKind::Fact
                    || self
                        .node_ref(id)
                        .is_none_or(|n| label_measures_like(&n.label, r.value()))
            })
            .collect();
        for o in old {
            self.supersede(&rid, &o);
        }
    }

    /// The one fact in force that `r` restates under a shorter subject: its
    /// words within the old subject's ("ttl" after "cache ttl", "retries"
    /// after "retry limit"), the values of one dimension ("2 MB", "500 KB")
    /// or the unit one of the subject's words. With the old subject, and
    /// whether it is the fuller. None where a fact has `r`'s own subject or
    /// more than one fits.
    fn related_fact(&self, r: &extract::Record) -> Option<(NodeId, String, bool)> {
        if r.kind != NodeKind::Fact {
            return None;
        }
        let subject = normalize_name(r.subject.as_deref()?);
        // Every word counts: "read timeout" and "write timeout" differ. A
        // setting's name is its words ("inference_timeout_s" is "inference
        // timeout", its unit suffix aside).
        let stems = |s: &str| -> Vec<String> {
            let mut ws: Vec<&str> = s.split([' ', '_']).filter(|w| !w.is_empty()).collect();
            if s.contains('_')
                && ws.len() > 1
                && ws
                    .last()
                    .is_some_and(|u| extract::lexicon::UNIT_WORDS.contains(u))
            {
                ws.pop();
            }
            ws.into_iter()
                .filter(|w| !extract::lexicon::is_stop(w))
                .map(extract::stem)
                .collect()
        };
        let words = stems(&subject);
        let value = r.value();
        let unit = extract::value_unit(value);
        if words.is_empty() {
            return None;
        }
        // The sentence's words, for a day said to move (below); only a date
        // needs them.
        let dated = unit.as_deref() == Some("date");
        let said_stems = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty() && !extract::lexicon::is_stop(&w.to_lowercase()))
                .map(extract::stem)
                .collect()
        };
        let said: Vec<String> = if dated {
            said_stems(&r.sentence)
        } else {
            Vec::new()
        };
        // The days the turn says ("the 9th is off for us, so the party
        // moved to the 16th"): a day said to move leaves the one it
        // replaced.
        let new_day = extract::date_of(value);
        let days: Vec<(u32, Option<u32>)> = if dated {
            extract::days_said(&self.turn_text)
        } else {
            Vec::new()
        };
        let unit_in = |u: &Option<String>, ws: &[String]| {
            u.as_deref()
                .is_some_and(|u| u.split_whitespace().any(|w| ws.contains(&extract::stem(w))))
        };
        let mut fits = Vec::new();
        for id in self.current_of_kind(NodeKind::Fact) {
            let Some(n) = self.node_ref(&id) else {
                continue;
            };
            let Some((os, ov)) = n.label.split_once(": ") else {
                continue;
            };
            let os = normalize_name(os);
            if os == subject {
                return None;
            }
            let ow = stems(&os);
            let within = |a: &[String], b: &[String]| a.iter().all(|w| b.contains(w));
            // A shorter name comes back to a fuller one; a longer one
            // ("hollow deposit" after "deposit") is often another thing.
            // A day said to move is the day of the event the sentence
            // names ("the review slipped, it's the 28th now").
            let shorter = within(&words, &ow);
            let changes = extract::says_change(&r.sentence) || extract::says_update(&r.sentence);
            // Or the old day was said of what this sentence names ("beta
            // moved to the 24th" after "beta goes to the testers on the
            // 20th", held as "testers: the 20th").
            let said_of = || {
                let old_said: Vec<String> = n
                    .detail
                    .iter()
                    .map(String::as_str)
                    .chain(n.evidence.iter().map(|e| e.text.as_str()))
                    .flat_map(said_stems)
                    .collect();
                within(&words, &old_said)
            };
            // Or the turn names the old day beside the new one (a day it
            // states itself is no old one).
            let day_named = || {
                let Some((d, m)) = extract::date_of(ov) else {
                    return false;
                };
                if n.evidence
                    .iter()
                    .any(|e| e.session == self.input.session && e.turn == self.turn)
                {
                    return false;
                }
                let same = |(d2, m2): (u32, Option<u32>)| {
                    d2 == d && (m2.is_none() || m.is_none() || m2 == m)
                };
                new_day.is_some_and(|nd| !same(nd)) && days.iter().any(|x| same(*x))
            };
            let moved_day = dated
                && changes
                && (ow.iter().any(|w| said.contains(w)) || said_of() || day_named());
            // A fuller name of the same head said with a change ("the trip
            // budget goes up to …" after "budget: …") is that fact.
            let fuller = changes && within(&ow, &words) && ow.last() == words.last();
            if ow.is_empty() || !(shorter || moved_day || fuller) {
                continue;
            }
            let ou = extract::value_unit(ov);
            // A noun a number counts ("8,000 words") may go unsaid the
            // next time ("make it 9,000").
            let same_unit = match (&ou, &unit) {
                (Some(a), Some(b)) => extract::same_dimension(a, b),
                (None, None) => true,
                (Some(u), None) | (None, Some(u)) => counted_noun(u),
            } || (ou.is_none() && unit_in(&unit, &ow))
                || (unit.is_none() && unit_in(&ou, &words));
            if same_unit && ov.to_lowercase() != value.to_lowercase() {
                fits.push((id, os, !shorter || ow.len() > words.len()));
            }
        }
        (fits.len() == 1).then(|| fits.remove(0))
    }

    /// A value changed from `old` to `new` on one subject: `old` is kept
    /// (added faintly when it was never recorded) and `new` supersedes it.
    fn value_change(
        &mut self,
        new: &extract::Record,
        old: &extract::Record,
        ids: &[(NodeId, NodeKind)],
    ) {
        let dated_old = self.dated(old, None);
        let old = dated_old.as_ref().unwrap_or(old);
        let dated_new = self.dated(new, extract::month_named(old.value()));
        let new = dated_new.as_ref().unwrap_or(new);
        let known = |p: &Self, r: &extract::Record| {
            p.resolve(&r.label, NodeKind::Fact)
                .is_some_and(|id| p.input.graph.contains(&id) || p.nodes.contains_key(&id))
        };
        // Known already: only a value with no history yet takes the old
        // one as its history ("5 seats, not 7" after "5 seats").
        if known(self, new)
            && self
                .resolve(&new.label, NodeKind::Fact)
                .is_none_or(|id| !self.history_of(&id).is_empty() || known(self, old))
        {
            return;
        }
        let old_id = if known(self, old) {
            self.resolve(&old.label, NodeKind::Fact)
        } else {
            let domain = dominant_of(ids, self);
            self.faint(NodeKind::Fact, old.label.clone(), domain, None, true)
        };
        self.record(new, ids);
        if let (Some(o), Some(n)) = (old_id, self.resolve(&new.label, NodeKind::Fact)) {
            self.supersede(&n, &o);
        }
    }

    /// A value the user changes that the reply just before stated: "make it
    /// 60 KB" or "the budget should be 60 KB then" after "The image
    /// budget is 90 KB." The reply's fact (same subject, or the one fact
    /// of that unit it states) is added faintly as the new value's history.
    /// Only where the sentence says a change and the new value has none.
    fn changed_from_reply(
        &mut self,
        s: &str,
        said: Option<&extract::Record>,
        ids: &[(NodeId, NodeKind)],
    ) {
        if self.prev_reply.trim().is_empty()
            || s.trim_end().ends_with('?')
            || !(extract::says_change(s) || extract::says_update(s))
        {
            return;
        }
        // Borrowed: what is kept below is cloned.
        let reply_facts = self
            .prev_reply_facts
            .get_or_init(|| stated(&self.prev_reply, extract::fact));
        let (new, old) = match said {
            Some(r) => {
                let subject = r.subject.as_deref().map(normalize_name).unwrap_or_default();
                let unit = extract::value_unit(r.value());
                let mut fits = reply_facts.iter().map(|(o, _)| o).filter(|o| {
                    o.subject.as_deref().map(normalize_name).as_deref() == Some(subject.as_str())
                        && extract::value_unit(o.value()) == unit
                        && o.value().to_lowercase() != r.value().to_lowercase()
                });
                let Some(o) = fits.next() else { return };
                if fits.next().is_some() {
                    return;
                }
                (r.clone(), o.clone())
            }
            None => {
                // A bare value: the one fact of its unit the reply states.
                let Some(v) = extract::measures(s).into_iter().next() else {
                    return;
                };
                let unit = extract::value_unit(&v);
                let mut fits = reply_facts
                    .iter()
                    .map(|(o, _)| o)
                    .filter(|o| unit.is_some() && extract::value_unit(o.value()) == unit);
                let Some(o) = fits.next() else { return };
                if fits.next().is_some() || o.value().to_lowercase() == v.to_lowercase() {
                    return;
                }
                let Some(subject) = o.subject.as_deref() else {
                    return;
                };
                (extract::Record::fact(subject, &v, s), o.clone())
            }
        };
        // The new value already has a history: nothing to add.
        let has_history = self
            .resolve(&new.label, NodeKind::Fact)
            .is_some_and(|id| !self.history_of(&id).is_empty());
        if has_history {
            return;
        }
        let Some(new_id) = self
            .resolve(&new.label, NodeKind::Fact)
            .filter(|id| self.input.graph.contains(id) || self.nodes.contains_key(id))
        else {
            // Not recorded yet: recorded now, with the old value.
            self.value_change(&new, &old, ids);
            return;
        };
        let domain = dominant_of(ids, self);
        if let Some(o) = self.faint(
            NodeKind::Fact,
            old.label.clone(),
            domain,
            Some(&old.sentence),
            false,
        ) && o != new_id
            && !self.is_superseded(&o)
        {
            self.supersede(&new_id, &o);
        }
    }

    /// "70% is far more than we get … call it 45%." after a reply that stated
    /// "Seat uptake: 70% of members …": a short sentence with one value and
    /// no subject, in a turn that names the number of exactly one fact of
    /// that unit the reply before stated, is that fact's new value. The new
    /// record and the reply's, as its history.
    fn counter_to_reply(&self, s: &str) -> Option<(extract::Record, extract::Record)> {
        if self.prev_reply.trim().is_empty() || s.trim_end().ends_with('?') {
            return None;
        }
        let [value] = extract::measures(s).try_into().ok()?;
        let unit = extract::value_unit(&value).filter(|u| u != "date")?;
        let number = extract::value_number(&value)?;
        let words = s.split_whitespace().count();
        if words > value.split_whitespace().count() + 3 {
            return None;
        }
        let mut fits = self
            .prev_reply_facts
            .get_or_init(|| stated(&self.prev_reply, extract::fact))
            .iter()
            .map(|(o, _)| o)
            .filter(|o| {
                o.subject.is_some()
                    && extract::value_unit(o.value())
                        .is_some_and(|u| extract::same_dimension(&u, &unit))
                    && extract::value_number(o.value())
                        .is_some_and(|n| n != number && extract::names_number(&self.turn_text, &n))
            });
        let old = fits.next()?;
        if fits.any(|o| o.subject != old.subject) {
            return None;
        }
        let new = extract::Record::fact(old.subject.as_deref()?, &value, s);
        Some((new, old.clone()))
    }

    /// [`Self::named_by_reply`], recorded: the new value, with the reply's
    /// denied one as its history.
    fn record_named_by_reply(
        &mut self,
        s: &str,
        ids: &[(NodeId, NodeKind)],
    ) -> Option<extract::Record> {
        let (r, old) = self.named_by_reply(s)?;
        match &old {
            Some(o) => self.value_change(&r, o, ids),
            None => self.record(&r, ids),
        }
        Some(r)
    }

    /// A value the user says with no subject, that this turn's reply
    /// states as a fact of a subject ("monday oct 5, 8am." → reply
    /// "Handover: Monday Oct 5, 8am at the depot."): that fact, said
    /// by the user. The same day, or the same number in one dimension;
    /// exactly one reply subject, whose facts in force (if any) measure
    /// alike. With the value the reply sentence sets it against ("5
    /// seats, not 7"), if any.
    fn named_by_reply(&self, s: &str) -> Option<(extract::Record, Option<extract::Record>)> {
        if self.turn_reply.trim().is_empty() || s.trim_end().ends_with('?') {
            return None;
        }
        if !extract::later_facts(s).is_empty() {
            return None;
        }
        let said = extract::measures(s);
        let same = |a: &str, b: &str| -> bool {
            match (extract::value_unit(a), extract::value_unit(b)) {
                (Some(ua), Some(ub)) if ua == "date" || ub == "date" => {
                    ua == ub
                        && extract::date_of(a).is_some()
                        && extract::date_of(a) == extract::date_of(b)
                }
                (Some(ua), Some(ub)) => {
                    extract::same_dimension(&ua, &ub)
                        && extract::value_number(a) == extract::value_number(b)
                }
                _ => false,
            }
        };
        // A value a fact in force already holds is that fact's.
        let held = self
            .facts_held()
            .any(|(_, v)| said.iter().any(|x| same(x, v)));
        if held {
            return None;
        }
        let facts = self
            .turn_reply_facts
            .get_or_init(|| stated(&self.turn_reply, extract::fact));
        // "the dentist pushed me to <day> nov 6": a day said to move is of
        // what the reply dates ("check-up <day> Nov 6 at …"), an event too.
        let moved_day = extract::says_change(s)
            && said
                .iter()
                .any(|v| extract::value_unit(v).as_deref() == Some("date"));
        let events = if moved_day {
            stated(&self.turn_reply, extract::event)
        } else {
            Vec::new()
        };
        let mut fits = facts
            .iter()
            .chain(&events)
            .filter(|(r, _)| r.subject.is_some() && said.iter().any(|v| same(v, r.value())));
        let (found, rs) = fits.next()?;
        if fits.any(|(r, _)| r.subject != found.subject) {
            return None;
        }
        let subject = found.subject.as_deref()?;
        let unlike = self
            .in_force_about(NodeKind::Fact, &normalize_name(subject))
            .iter()
            .filter_map(|id| self.node_ref(id))
            .any(|n| !label_measures_like(&n.label, found.value()));
        if unlike {
            return None;
        }
        let new = extract::Record::fact(subject, found.value(), s);
        let old = extract::value_change(rs)
            .or_else(|| extract::denied_value(rs))
            .filter(|(n, _)| n.subject == found.subject && n.value() == found.value())
            .map(|(_, o)| o);
        Some((new, old))
    }

    /// An old choice or value kept as the history of a new one, never
    /// recorded in force: a node at half a decision's weight.
    fn faint(
        &mut self,
        kind: NodeKind,
        label: String,
        domain: Domain,
        sentence: Option<&str>,
        from_user: bool,
    ) -> Option<NodeId> {
        let m = Mention {
            label,
            kind,
            domain,
            role: None,
            strong: true,
        };
        self.upsert(&m, sentence, self.cfg.decision_weight * 0.5, from_user)
    }

    /// The one fact in force measured in `unit`, as (subject, value,
    /// lowercase): the only one, or, of several, the only one said in this
    /// turn or the one before ("a 20 seconds retry delay is too short" …
    /// "bump it to 45 seconds").
    fn fact_in(&self, unit: &str) -> Option<(String, String)> {
        let held: Vec<&Node> = self
            .current_of_kind(NodeKind::Fact)
            .into_iter()
            .filter_map(|id| self.node_ref(&id))
            .filter(|n| {
                n.label
                    .split_once(": ")
                    .is_some_and(|(_, v)| extract::value_unit(v).as_deref() == Some(unit))
            })
            .collect();
        let recent = |n: &&&Node| {
            n.evidence.iter().any(|e| {
                e.session == self.input.session && e.turn + 1 >= self.turn && e.turn <= self.turn
            })
        };
        let mut pick: Vec<&&Node> = match held.len() {
            1 => held.iter().collect(),
            _ => held.iter().filter(recent).collect(),
        };
        // Several said in this turn ("boot time is 20 seconds; with 45
        // seconds of warmup the readings drift, so 90 seconds then"): the
        // one said last.
        if pick.len() > 1 {
            let said_at = |n: &Node| {
                self.turn_said.iter().rposition(|t| {
                    n.evidence.iter().any(|e| {
                        e.session == self.input.session
                            && e.turn == self.turn
                            && e.text.trim() == t.trim()
                    })
                })
            };
            let mut at: Vec<(usize, &&Node)> = pick
                .iter()
                .filter_map(|n| said_at(n).map(|p| (p, *n)))
                .collect();
            at.sort_by_key(|(p, _)| std::cmp::Reverse(*p));
            if let [(first, n), rest @ ..] = at.as_slice()
                && rest.first().is_none_or(|(p, _)| p < first)
            {
                pick = vec![*n];
            }
        }
        let [n] = pick.as_slice() else {
            return None;
        };
        let (subject, value) = n.label.split_once(": ")?;
        Some((subject.to_owned(), value.to_lowercase()))
    }

    /// The facts in force, as the subject and the value their labels say
    /// ("request timeout", "3 s").
    fn facts_held(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.current_of_kind(NodeKind::Fact)
            .into_iter()
            .filter_map(|id| self.node_ref(&id)?.label.split_once(": "))
    }

    /// "79 not 49", said with no unit and no subject of its own: the one
    /// fact in force whose value's number is the denied one takes the new
    /// number in its place ("shipping: €49" → "shipping: €79").
    fn number_by_echo(&self, s: &str, fact: Option<&extract::Record>) -> Option<extract::Record> {
        if fact.is_some() {
            return None;
        }
        let (new, old) = extract::denied_number(s)?;
        let mut fits = self.facts_held().filter(|(_, v)| {
            extract::value_unit(v).is_none_or(|u| u != "date")
                && extract::value_number(v).as_deref() == Some(old.as_str())
        });
        let (subject, value) = fits.next()?;
        if fits.next().is_some() {
            return None;
        }
        let value = value.replacen(&old, &new, 1);
        Some(extract::Record::fact(subject, &value, s))
    }

    /// The fact in force whose value's number the sentence names again
    /// beside a new value of the same unit, as that new value for its
    /// subject. Only where exactly one fact in force fits.
    fn fact_by_echo(&self, s: &str, fact: Option<&extract::Record>) -> Option<extract::Record> {
        let said = extract::measures(s);
        if said.is_empty() {
            return self.number_by_echo(s, fact);
        }
        let lower = s.to_lowercase();
        let changes = extract::says_change(s);
        let denied = extract::denied_measure(s);
        let mut fits = self.facts_held().filter_map(|(subject, old)| {
            let unit = extract::value_unit(old)?;
            let num = extract::value_number(old)?;
            // A day is named again in full ("not the 3rd of March any
            // more"); any other value by its number.
            let old_lower = old.to_lowercase();
            // A day denied by its number alone ("May 9 not the 2nd")
            // names it too.
            let named = if unit == "date" {
                lower.contains(&old_lower) || extract::denies_day(s, &num)
            } else {
                extract::names_number(s, &num)
            };
            if !named {
                return None;
            }
            // The new value: the fact the sentence states, else the one
            // it sets against the old ("£4,200, not £3,000"), else the
            // first other value of that unit.
            let set_against = denied
                .as_ref()
                .filter(|(_, d)| extract::value_number(d).as_deref() == Some(num.as_str()))
                .map(|(v, _)| v.clone());
            let new = fact
                .map(|f| f.value().to_owned())
                .into_iter()
                .chain(set_against)
                .chain(said.iter().cloned())
                .find(|v| {
                    extract::value_unit(v).as_deref() == Some(unit.as_str())
                        && extract::value_number(v).is_some_and(|x| x != num)
                })?;
            // "the overlap is 3 May to 12 May": a range names two
            // values of one thing, unless the sentence says a change.
            let (a, b) = (new.to_lowercase(), old_lower);
            let ranged = extract::lexicon::RANGE_JOINERS.iter().any(|j| {
                lower.contains(&format!("{a} {j} {b}")) || lower.contains(&format!("{b} {j} {a}"))
            });
            if ranged && !changes {
                return None;
            }
            Some((subject.to_owned(), new, num))
        });
        let (subject, value, old) = fits.next()?;
        if fits.next().is_some() {
            return None;
        }
        // "our request is £400, and X trimmed £50 off": the value the
        // sentence states as its own fact is said again, not replaced.
        let own = fact.and_then(|f| extract::value_number(f.value()));
        if own.is_some_and(|n| n == old) {
            return None;
        }
        Some(extract::Record::fact(&subject, &value, s))
    }

    /// The fact a subjectless quantity updates: the one fact in force whose
    /// value has the same unit, as a new value for its subject.
    fn fact_by_unit(&self, s: &str) -> Option<extract::Record> {
        let (value, unit) = match extract::bare_quantity(s) {
            Some((value, unit)) => (value, unit),
            // "my knee hurts, drop to 3 a week": a changed value anywhere.
            // "chipping in 5k, so it's €17,500 now": the first value whose
            // unit one fact in force has, and that no noun after it claims
            // ("a 7am start" is the start's).
            None if extract::says_change(s) || extract::says_update(s) => {
                extract::free_measures(s).into_iter().find_map(|v| {
                    let u = extract::value_unit(&v).filter(|u| u != "date")?;
                    self.fact_in(&u).is_some().then_some((v, u))
                })?
            }
            None => return None,
        };
        let unit = extract::value_unit(&value).unwrap_or(unit);
        let (subject, old) = self.fact_in(&unit)?;
        if old == value.to_lowercase() {
            return None;
        }
        Some(extract::Record::fact(&subject, &value, s))
    }

    /// "he's $30 per lesson", "it's 9kg not 7": a value said of a pronoun.
    /// With a denied value, the one fact in force of that unit whose
    /// number it is takes the new value; otherwise the value is a fact of
    /// the quantity its unit measures ("price", "weight"), the denied value
    /// its history. Recorded here; the record said is returned.
    fn pronoun_fact(&mut self, s: &str, ids: &[(NodeId, NodeKind)]) -> Option<extract::Record> {
        let count = extract::count_value(s);
        let counted = count.is_some();
        let (value, denied) = match count.or_else(|| extract::pronoun_value(s)) {
            Some((value, denied)) => (value, denied),
            None => extract::denied_measure(s).map(|(v, d)| (v, Some(d)))?,
        };
        let unit = extract::value_unit(&value)?;
        if let Some(old) = &denied {
            let number = extract::value_number(old);
            let fits: Vec<String> = self
                .facts_held()
                .filter(|(_, held)| {
                    extract::value_unit(held).is_some_and(|u| extract::same_dimension(&u, &unit))
                        && extract::value_number(held) == number
                })
                .map(|(subject, _)| subject.to_owned())
                .collect();
            if let [subject] = fits.as_slice() {
                let r = extract::Record::fact(subject, &value, s);
                self.record(&r, ids);
                return Some(r);
            }
        }
        // "hmm no, it's 11 crates": a count of what one fact in force
        // counts is that fact's new value.
        if counted
            && let Some((subject, old)) = self.fact_in(&unit)
            && old != value.to_lowercase()
        {
            let r = extract::Record::fact(&subject, &value, s);
            self.record(&r, ids);
            return Some(r);
        }
        // "we need 4 replicas, not 2", "9 volunteers so far": a count set
        // against another, or stated alone, names what it counts
        // ("replicas"), where no quantity measures it.
        let counted_noun = || {
            let noun = unit.split_whitespace().next()?;
            ((denied.is_some() || counted)
                && noun.len() > 2
                && noun.chars().all(char::is_alphabetic)
                && !extract::lexicon::is_closed_class(noun))
            .then_some(noun)
        };
        let quantity = match extract::quantity_of(&value) {
            Some(q) => q.to_owned(),
            None => counted_noun()?.to_owned(),
        };
        let quantity = quantity.as_str();
        let new = extract::Record::fact(quantity, &value, s);
        match denied {
            Some(old) => self.value_change(&new, &extract::Record::fact(quantity, &old, s), ids),
            None => self.record(&new, ids),
        }
        Some(new)
    }

    /// "make it 128", "bump that to 5": a change to a pronoun with one bare
    /// number is a new value of the fact talked about last, when that
    /// fact's value is a count or a number in words ("20 seconds" → "35
    /// seconds").
    fn fact_by_pronoun(&self, s: &str) -> Option<extract::Record> {
        if s.trim().ends_with('?') || !extract::says_change(s) {
            return None;
        }
        let lower = s.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '\'')))
            .map(|w| w.trim_matches('.'))
            .filter(|w| !w.is_empty())
            .collect();
        if !words
            .iter()
            .any(|w| extract::lexicon::OBJECT_PRONOUNS.contains(w))
        {
            return None;
        }
        let mut numbers = words
            .iter()
            .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()));
        let n = *numbers.next()?;
        if numbers.next().is_some()
            || !n.chars().all(|c| c.is_ascii_digit() || c == '.')
            || !extract::measures(s).is_empty()
        {
            return None;
        }
        let last = self.fact_activated_last(|_| true)?;
        let (subject, old) = last.label.split_once(": ")?;
        let unit = match extract::value_unit(old) {
            None => String::new(),
            Some(u) if u.chars().all(|c| c.is_alphabetic() || c == ' ') && u != "date" => {
                format!(" {}", old.split_once(' ')?.1)
            }
            Some(_) => return None,
        };
        let value = format!("{n}{unit}");
        (value.to_lowercase() != old.to_lowercase())
            .then(|| extract::Record::fact(subject, &value, s))
    }

    /// "the clinic phoned, it's now wednesday 11th at 10:45", "we shifted
    /// it to Sunday 28 June": a day said of "it" with a change is the new
    /// day of the dated fact talked about last; a tie names none.
    fn day_by_pronoun(&self, s: &str) -> Option<extract::Record> {
        let day = extract::pronoun_day(s)?;
        let last = self.fact_activated_last(|n| {
            n.label
                .split_once(": ")
                .and_then(|(_, v)| extract::value_unit(v))
                .is_some_and(|u| u == "date")
        })?;
        let (subject, old) = last.label.split_once(": ")?;
        (!old.eq_ignore_ascii_case(&day)).then(|| extract::Record::fact(subject, &day, s))
    }

    /// Of the facts in force that `keep` accepts, the one activated last;
    /// a tie names none.
    fn fact_activated_last(&self, keep: impl Fn(&Node) -> bool) -> Option<&Node> {
        let mut facts: Vec<&Node> = self
            .current_of_kind(NodeKind::Fact)
            .into_iter()
            .filter_map(|id| self.node_ref(&id))
            .filter(|n| keep(n))
            .collect();
        facts.sort_by_key(|b| std::cmp::Reverse(b.last_activated));
        let last = facts.first()?;
        let tie = facts
            .get(1)
            .is_some_and(|b| b.last_activated == last.last_activated);
        (!tie).then_some(*last)
    }

    fn relations(&mut self, s: &str, ids: &[(NodeId, NodeKind)]) {
        let lower = s.to_lowercase();
        let people: Vec<&NodeId> = ids
            .iter()
            .filter(|(_, k)| *k == NodeKind::Person)
            .map(|(i, _)| i)
            .collect();
        let things: Vec<&NodeId> = ids
            .iter()
            .filter(|(_, k)| {
                !matches!(
                    k,
                    NodeKind::Person
                        | NodeKind::Correction
                        | NodeKind::Preference
                        | NodeKind::Decision
                )
            })
            .map(|(i, _)| i)
            .collect();
        let owns = extract::lexicon::OWNERSHIP_CUES
            .iter()
            .any(|c| has_word(&lower, c));
        if owns {
            for p in &people {
                for t in &things {
                    self.edge(p, EdgeKind::Owns, t, 0.6);
                }
            }
        }
        if extract::lexicon::DEPENDENCY_CUES
            .iter()
            .any(|c| lower.contains(c))
            && things.len() >= 2
        {
            let (a, b) = (things[0].clone(), things[1].clone());
            self.edge(&a, EdgeKind::DependsOn, &b, 0.6);
        }
        // Co-mention: link neighbours in order of appearance, at most three pairs.
        let all: Vec<&NodeId> = ids
            .iter()
            .filter(|(_, k)| {
                !matches!(
                    k,
                    NodeKind::Correction | NodeKind::Preference | NodeKind::Decision
                )
            })
            .map(|(i, _)| i)
            .collect();
        for w in all.windows(2).take(3) {
            let (a, b) = if w[0] < w[1] {
                (w[0], w[1])
            } else {
                (w[1], w[0])
            };
            let key_exists = self.edges.contains_key(&edge_key(a, EdgeKind::Owns, b))
                || self.edges.contains_key(&edge_key(b, EdgeKind::Owns, a));
            if !key_exists {
                let (a, b) = (a.clone(), b.clone());
                self.edge(&a, EdgeKind::RelatesTo, &b, 0.3);
            }
        }
    }

    /// Marks `old` as superseded by `new` (and fades it).
    fn supersede(&mut self, new: &NodeId, old: &NodeId) {
        if new == old {
            return;
        }
        self.edge(new, EdgeKind::Supersedes, old, 1.0);
        if let Some(n) = self.node_ref(old).cloned() {
            let mut n = n;
            n.weight = (n.weight * 0.6).max(0.1);
            if self.input.graph.contains(old) {
                self.existing.insert(old.clone());
            }
            self.nodes.insert(old.clone(), n);
        }
    }

    /// Ids of every node of `kind`, in the graph or planned, in id order.
    fn ids_of_kind(&self, kind: NodeKind) -> BTreeSet<NodeId> {
        self.input
            .graph
            .nodes_unordered()
            .chain(self.nodes.values())
            .filter(|n| n.kind == kind)
            .map(|n| n.id.clone())
            .collect()
    }

    /// Nodes of `kind` not yet superseded (graph and plan).
    fn current_of_kind(&self, kind: NodeKind) -> Vec<NodeId> {
        self.ids_of_kind(kind)
            .into_iter()
            .filter(|id| !self.is_superseded(id))
            .collect()
    }

    fn is_superseded(&self, id: &NodeId) -> bool {
        self.input.graph.superseded_by(id).is_some()
            || self
                .edges
                .values()
                .any(|e| e.kind == EdgeKind::Supersedes && &e.target == id)
    }

    /// What a node replaces, in the graph or in this plan.
    fn history_of(&self, id: &NodeId) -> Vec<&Node> {
        let mut out = self.input.graph.supersedes(id);
        out.extend(
            self.edges
                .values()
                .filter(|e| e.kind == EdgeKind::Supersedes && &e.source == id)
                .filter_map(|e| self.node_ref(&e.target)),
        );
        out
    }

    /// Whether decision `id` names its choice at a version other than
    /// `version` (both known).
    fn other_version(&self, id: &NodeId, version: Option<&str>) -> bool {
        version.is_some_and(|v| {
            self.node_ref(id)
                .and_then(|n| version_of(&n.label))
                .is_some_and(|o| o != v)
        })
    }

    /// Every decision (in force or not) whose choice answers to `name`.
    fn decisions_choosing(&self, name: &str) -> Vec<NodeId> {
        if name == extract::PREVIOUS_CHOICE {
            return self.previous_choice(None).into_iter().collect();
        }
        let norm = normalize_name(name);
        let target = self.resolve(name, NodeKind::Entity);
        let mut v: BTreeSet<NodeId> = BTreeSet::new();
        for id in self.ids_of_kind(NodeKind::Decision) {
            let choice = self.choice_of(&id);
            let by_edge = choice.is_some() && choice == target;
            // "daily" and "daily partitions" are the same choice.
            let close = |x: &str| {
                x == norm
                    || x.starts_with(&format!("{norm} "))
                    || norm.starts_with(&format!("{x} "))
            };
            let by_label = choice
                .as_ref()
                .and_then(|c| self.node_ref(c))
                .is_some_and(|c| c.names().any(|x| close(&x)));
            if by_edge || by_label {
                v.insert(id);
            }
        }
        v.into_iter().collect()
    }

    /// The choice in force that the nearest earlier sentence of this turn's
    /// prompt, before `s`, opens with.
    fn choice_opening_before(&self, s: &str) -> Option<String> {
        let said = extract::sentences(&self.turn_text);
        let at = said.iter().position(|x| x == s)?;
        said[..at]
            .iter()
            .rev()
            .find_map(|before| self.choice_opening(before))
    }

    /// The choice of a decision in force that `sentence` opens with, as its
    /// subject ("'X' is too close to …", "X keeps timing out."): its label.
    fn choice_opening(&self, sentence: &str) -> Option<String> {
        // Quotes left out of both: "'X' is too close" opens with X.
        let unquoted = |t: &str| {
            t.replace(
                ['\'', '"', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}'],
                "",
            )
            .to_lowercase()
        };
        let opening = unquoted(sentence.trim_start_matches(|c: char| !c.is_alphanumeric()));
        self.current_of_kind(NodeKind::Decision)
            .into_iter()
            .filter_map(|id| self.choice_of(&id).and_then(|c| self.node_ref(&c)))
            .map(|c| c.label.clone())
            .filter(|label| {
                let l = unquoted(label);
                l.chars().count() >= 3
                    && opening
                        .strip_prefix(&l)
                        .is_some_and(|rest| rest.starts_with(' '))
            })
            .max_by_key(|l| l.len())
    }

    /// The decisions a drop or an "instead of `name`" replaces: those
    /// choosing `name`, else those choosing it in other words.
    fn decisions_replaced(&self, name: &str) -> Vec<NodeId> {
        let v = self.decisions_choosing(name);
        if !v.is_empty() || name == extract::PREVIOUS_CHOICE {
            return v;
        }
        self.decisions_loosely_choosing(name).into_iter().collect()
    }

    /// Decisions in force whose choice is `name` in other words: the same
    /// word stems ("queues" and "the queue-based approach", "x" and
    /// "ingress-x"), or a choice named in its decision's own words
    /// right next to `name` ("A B": dropping A drops it).
    fn decisions_loosely_choosing(&self, name: &str) -> BTreeSet<NodeId> {
        let want = name_stems(name);
        let mut v = BTreeSet::new();
        if want.is_empty() {
            return v;
        }
        let norm = normalize_name(name);
        for id in self.current_of_kind(NodeKind::Decision) {
            let Some(c) = self.choice_of(&id).and_then(|c| self.node_ref(&c)) else {
                continue;
            };
            let have = name_stems(&c.label);
            let subset = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
                !a.is_empty() && a.iter().all(|w| b.contains(w))
            };
            let by_stems = subset(&want, &have) || subset(&have, &want);
            let choice = normalize_name(&c.label);
            let by_compound = self.node_ref(&id).is_some_and(|d| {
                d.evidence.iter().any(|e| {
                    let t = normalize_name(&e.text);
                    has_word(&t, &format!("{norm} {choice}"))
                        || has_word(&t, &format!("{choice} {norm}"))
                })
            });
            if by_stems || by_compound {
                v.insert(id);
            }
        }
        v
    }

    /// The decision in force that "that" or "instead" refers to: the one
    /// whose choice or topic the user's words in this turn name, else the
    /// one made or touched last. `except` is the decision being made.
    fn previous_choice(&self, except: Option<&NodeId>) -> Option<NodeId> {
        self.previous_choice_named(except)
            .or_else(|| self.latest_decision_except(except))
    }

    /// The decision in force whose choice or topic the user's words in this
    /// turn name (the newest of them), if any.
    fn previous_choice_named(&self, except: Option<&NodeId>) -> Option<NodeId> {
        // "X's lines double-log" is about what X does, not X as the thing
        // to replace.
        let unowned = without_owners(&self.turn_text);
        let said = extract::content_words(&unowned);
        let said_names = name_stems(&unowned);
        let named = self.live_choices(except).filter(|id| {
            let choice = self
                .choice_of(id)
                .and_then(|c| self.node_ref(&c))
                .is_some_and(|c| {
                    c.names()
                            .any(|x| x.len() >= 3 && find_word(&unowned, &x))
                            // "x adds 400 KB" names the choice "x derive".
                            || name_stems(&c.label).iter().any(|w| {
                                w.len() >= 3
                                    && said_names.contains(w)
                                    && !extract::lexicon::is_common(w, 4.5)
                            })
                });
            // A topic word as common as "free" or "new" names no topic.
            choice
                || self
                    .topic_of(id)
                    .iter()
                    .any(|w| said.contains(w) && !extract::lexicon::is_common(w, TOPIC_WORD_ZIPF))
        });
        self.newest(named)
    }

    /// "X can't deliver before nine, so that's out" … "back to Y then":
    /// the choice in force (other than `except`) whose chosen thing the
    /// user named in the turn before, when exactly one was.
    fn choice_talked_of_before(&self, except: &NodeId) -> Option<NodeId> {
        let session = self.input.session;
        let before = self.turn.checked_sub(1)?;
        let named: Vec<NodeId> = self
            .live_choices(Some(except))
            .filter(|id| {
                self.choice_of(id)
                    .and_then(|c| self.node_ref(&c))
                    .is_some_and(|c| {
                        c.evidence.iter().any(|e| {
                            e.session == session && e.turn == before && e.speaker == "user"
                        })
                    })
            })
            .collect();
        match named.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// "actually keep X", where no decision chose X: the change it
    /// turns down is the newest choice in force, made within
    /// [`KEEP_WINDOW_TURNS`] turns, that replaced nothing, chose something
    /// else, and said a change once the session had named X ("… the
    /// archive is 3 GB as X … we'll move the archives to Y" … "actually keep
    /// X"). Its choice's label.
    fn kept_against(&self, chosen: &str) -> Option<String> {
        let y = self.turned_down(chosen, false)?;
        let c = self.choice_of(&y)?;
        self.node_ref(&c).map(|n| n.label.clone())
    }

    /// The decision [`Self::kept_against`] finds. With `chosen_before` (X
    /// is a choice in force, kept again), a choice made a turn away from a
    /// sentence naming X counts even when it said no change ("try Y for
    /// now"); otherwise only a change does.
    fn turned_down(&self, chosen: &str, chosen_before: bool) -> Option<NodeId> {
        let session = self.input.session;
        let word = chosen.to_lowercase();
        // Whether a sentence of turns `from..=to`, on any node, names the
        // kept thing.
        let named_in = |from: u32, to: u32| {
            self.input
                .graph
                .nodes_unordered()
                .chain(self.nodes.values())
                .any(|n| {
                    n.evidence.iter().any(|e| {
                        e.session == session
                            && (from..=to).contains(&e.turn)
                            && find_word(&e.text, &word)
                    })
                })
        };
        let recent = self.live_choices(None).filter(|id| {
            let other = self
                .choice_of(id)
                .and_then(|c| self.node_ref(&c))
                .is_some_and(|c| {
                    c.names()
                        .all(|x| normalize_name(&x) != normalize_name(chosen))
                });
            other
                && self.history_of(id).is_empty()
                && self.node_ref(id).is_some_and(|n| {
                    // A change ("move … to Y") made once the kept thing
                    // was named; for a choice kept again, also one made
                    // right beside talk of it ("X is too slow" …
                    // "try Y then").
                    n.evidence.first().is_some_and(|e| {
                        (extract::says_change(&e.text) && named_in(0, e.turn + 1))
                            || (chosen_before && named_in(e.turn.saturating_sub(1), e.turn + 1))
                    }) && n.evidence.iter().all(|e| {
                        e.session == session
                            && e.turn < self.turn
                            && e.turn + KEEP_WINDOW_TURNS >= self.turn
                    })
                })
        });
        self.newest(recent)
    }

    /// A drop decision in force made in this turn or the one before.
    fn recent_drop(&self) -> Option<NodeId> {
        let recent = self
            .current_of_kind(NodeKind::Decision)
            .into_iter()
            .filter(|id| {
                self.node_ref(id).is_some_and(|n| {
                    n.label.starts_with("Drop ")
                        && n.evidence
                            .iter()
                            .any(|e| e.session == self.input.session && e.turn + 1 >= self.turn)
                })
            });
        self.newest(recent)
    }

    /// The label of an existing entity that `name` is short for ("x" of
    /// "ingress-x"), when exactly one answers.
    fn known_long_form(&self, name: &str) -> Option<String> {
        let want = name_stems(name);
        if want.is_empty() {
            return None;
        }
        let mut hits: Vec<String> = self
            .input
            .graph
            .nodes_unordered()
            .chain(self.nodes.values())
            .filter(|n| matches!(n.kind, NodeKind::Entity | NodeKind::Identifier))
            .filter(|n| {
                let have = name_stems(&n.label);
                have.len() > want.len() && want.iter().all(|w| have.contains(w))
            })
            .map(|n| n.label.clone())
            .collect();
        hits.sort();
        hits.dedup();
        (hits.len() == 1).then(|| hits.remove(0))
    }

    /// The decision in force (other than `except`) made or mentioned last,
    /// within [`UNNAMED_REFERENCE_TURNS`] turns: "we'll do Y instead" with
    /// nothing named refers to a choice still in the conversation, not to
    /// one from far back about something else.
    fn latest_decision_except(&self, except: Option<&NodeId>) -> Option<NodeId> {
        let recent = self.live_choices(except).filter(|id| {
            self.node_ref(id).is_some_and(|n| {
                n.evidence.iter().any(|e| {
                    e.session == self.input.session && e.turn + UNNAMED_REFERENCE_TURNS >= self.turn
                })
            })
        });
        self.newest(recent)
    }

    /// The decision in force, not a drop, that this turn made: the newest
    /// first said in this turn of this session.
    fn decision_made_this_turn(&self) -> Option<NodeId> {
        let made = self.live_choices(None).filter(|id| {
            self.node_ref(id).is_some_and(|n| {
                n.evidence
                    .iter()
                    .filter(|e| e.session == self.input.session)
                    .map(|e| e.turn)
                    .min()
                    == Some(self.turn)
            })
        });
        self.newest(made)
    }

    /// Decisions in force that make a choice (not drops), other than `except`.
    fn live_choices<'s>(&'s self, except: Option<&'s NodeId>) -> impl Iterator<Item = NodeId> + 's {
        self.current_of_kind(NodeKind::Decision)
            .into_iter()
            .filter(move |id| Some(id) != except)
            .filter(|id| {
                self.node_ref(id)
                    .is_some_and(|n| !n.label.starts_with("Drop "))
            })
    }

    /// The one made or touched last (ties: the smaller id).
    fn newest(&self, ids: impl Iterator<Item = NodeId>) -> Option<NodeId> {
        ids.max_by(|a, b| {
            let la = self.node_ref(a).map(|n| n.last_activated);
            let lb = self.node_ref(b).map(|n| n.last_activated);
            la.cmp(&lb).then_with(|| b.cmp(a))
        })
    }

    /// Whether two decisions are about the same thing: their topics share a
    /// word, or one's choice is named in the other's topic.
    fn same_topic(&self, topic: &[String], old: &NodeId) -> bool {
        if topic.is_empty() {
            return false;
        }
        let old_topic = self.topic_of(old);
        topic.iter().any(|w| old_topic.contains(w))
    }

    /// A choice of one option of a list, replacing the choice in force of
    /// another option of that list, if one is.
    fn option_decision(&mut self, mut d: extract::Decision, others: &[String]) {
        if d.replaced.is_none() {
            d.replaced = others
                .iter()
                .find(|o| {
                    self.decisions_choosing(o)
                        .iter()
                        .any(|id| !self.is_superseded(id))
                })
                .cloned();
        }
        self.decision(&d);
    }

    fn decision(&mut self, d: &extract::Decision) {
        use extract::DecisionMove;
        // A switch that names nothing it replaces: the choice the turn talks
        // about, when it talks about one; else nothing.
        if d.replaced.as_deref() == Some(extract::PREVIOUS_NAMED) {
            let marker = format!(" instead of {}", extract::PREVIOUS_NAMED);
            // "I'm switching to tea, by the way": an aside replaces
            // nothing it does not name.
            if extract::is_aside(&d.sentence) {
                let d = extract::Decision {
                    label: d.label.replace(&marker, ""),
                    replaced: None,
                    ..d.clone()
                };
                return self.decision(&d);
            }
            let named = self
                .previous_choice_named(None)
                .and_then(|id| self.choice_of(&id))
                .and_then(|c| self.node_ref(&c).map(|n| n.label.clone()));
            // "X isn't worth it." then "set up Y instead": instead of what
            // was just dropped (this turn or the one before).
            if named.is_none()
                && let Some(drop) = self.recent_drop()
            {
                let d = extract::Decision {
                    label: d.label.replace(&marker, ""),
                    replaced: None,
                    ..d.clone()
                };
                self.last_drop = Some(drop);
                return self.decision(&d);
            }
            let d = extract::Decision {
                label: match &named {
                    Some(n) => d.label.replace(&marker, &format!(" instead of {n}")),
                    None => d.label.replace(&marker, ""),
                },
                replaced: named,
                ..d.clone()
            };
            return self.decision(&d);
        }
        // Dropping a choice: supersede the decision that made it, if any.
        if d.moves == DecisionMove::Drop {
            let Some(dropped) = d.replaced.as_deref() else {
                return;
            };
            // "Y for the exports. The previous one is dead.": the choice this
            // turn made replaces the one in force before it.
            if dropped == extract::EARLIER_CHOICE {
                if let Some(new) = self.decision_made_this_turn()
                    && let Some(old) = self.newest(self.live_choices(Some(&new)))
                    && self.choice_of(&old) != self.choice_of(&new)
                {
                    self.supersede(&new, &old);
                }
                return;
            }
            let mut targets: Vec<NodeId> = self
                .decisions_replaced(dropped)
                .into_iter()
                .filter(|id| !self.is_superseded(id))
                .collect();
            if targets.is_empty() {
                // Dropped before we recorded it as chosen: keep it as the
                // history the drop (and the choice that follows) supersedes.
                if dropped == extract::PREVIOUS_CHOICE || dropped.split_whitespace().count() > 4 {
                    return;
                }
                let dropped = self
                    .known_long_form(dropped)
                    .unwrap_or_else(|| dropped.to_owned());
                let label = format!("Use {dropped}");
                match self.faint(NodeKind::Decision, label, Domain::Project, None, true) {
                    Some(h) => targets.push(h),
                    None => return,
                }
            }
            // "forget it": the drop names what it dropped (its choice, else
            // the decision's own words), never the placeholder.
            let label = if d.label.contains(extract::PREVIOUS_CHOICE) {
                let name = self
                    .choice_of(&targets[0])
                    .and_then(|c| self.node_ref(&c))
                    .or_else(|| self.node_ref(&targets[0]))
                    .map(|n| n.label.trim_start_matches("Use ").to_owned())
                    .unwrap_or_default();
                d.label.replace(extract::PREVIOUS_CHOICE, &name)
            } else {
                d.label.clone()
            };
            let m = Mention {
                label,
                kind: NodeKind::Decision,
                domain: self
                    .node_ref(&targets[0])
                    .map(|n| n.domain)
                    .unwrap_or(Domain::Project),
                role: None,
                strong: true,
            };
            if let Some(did) = self.upsert(&m, Some(&d.sentence), self.cfg.decision_weight, true) {
                for t in targets {
                    self.supersede(&did, &t);
                }
                self.last_drop = Some(did);
            }
            return;
        }
        let Some(mut chosen_name) = d.chosen.clone() else {
            return;
        };
        // "go back to what we had": the choice made before the one in
        // force. When none is on record, what we had was never heard, but
        // the change in force is turned down: the newest choice that said
        // a change within KEEP_WINDOW_TURNS turns is dropped.
        if chosen_name == extract::EARLIER_CHOICE {
            let Some(label) = self.earlier_choice() else {
                let session = self.input.session;
                let changes = self.live_choices(None).filter(|id| {
                    self.node_ref(id).is_some_and(|n| {
                        n.evidence.iter().any(|e| {
                            e.session == session
                                && e.turn < self.turn
                                && e.turn + KEEP_WINDOW_TURNS >= self.turn
                                && extract::says_change(&e.text)
                        })
                    })
                });
                let Some(name) = self
                    .newest(changes)
                    .and_then(|id| self.choice_of(&id))
                    .and_then(|c| self.node_ref(&c).map(|n| n.label.clone()))
                else {
                    return;
                };
                let drop = extract::Decision {
                    label: format!("Drop {name}"),
                    chosen: None,
                    replaced: Some(name),
                    moves: DecisionMove::Drop,
                    ..d.clone()
                };
                return self.decision(&drop);
            };
            let mut r = d.clone();
            r.label = format!("Use {label}");
            r.topic = extract::content_words(&label);
            r.chosen = Some(label);
            return self.decision(&r);
        }
        // "back to the first venue": the thing of that kind the session
        // named first.
        let resolved;
        let d = match self.ordinal_referent(&chosen_name) {
            Some(label) => {
                let mut r = d.clone();
                r.label = r
                    .label
                    .replace(&format!("the {chosen_name}"), &label)
                    .replace(&chosen_name, &label);
                chosen_name = label.clone();
                r.chosen = Some(label);
                resolved = r;
                &resolved
            }
            None => d,
        };
        // Going back to (or keeping) an earlier choice.
        let mut topic = d.topic.clone();
        let earlier = self.decisions_choosing(&chosen_name);
        // The same thing at another version ("X 3.1" after "X 4.0") is
        // another choice, not the same one again.
        let version = version_of(&d.label);
        // The same choice again (a restatement, an accepted proposal of what
        // is already decided) strengthens the decision in force.
        let live_same: Vec<NodeId> = earlier
            .iter()
            .filter(|id| !self.is_superseded(id) && !self.other_version(id, version.as_deref()))
            .cloned()
            .collect();
        let replaces_live = d.replaced.as_deref().is_some_and(|r| {
            self.decisions_replaced(r)
                .iter()
                .any(|id| !self.is_superseded(id) && !live_same.contains(id))
        });
        // Already in force (a restatement, an accepted proposal of what is
        // decided, "actually keep X"): the mention strengthens it.
        let restated = match d.moves {
            DecisionMove::Choose => !replaces_live,
            DecisionMove::Return => true,
            DecisionMove::Drop => false,
        };
        if restated && !live_same.is_empty() {
            if let Some(drop) = self.last_drop.take() {
                self.supersede(&live_same[0], &drop);
            }
            // "try Y then" … "actually keep X": Y, in force beside
            // X, is turned down.
            if d.moves == DecisionMove::Return
                && let Some(y) = self.turned_down(&chosen_name, true)
            {
                self.supersede(&live_same[0], &y);
            }
            // "go back to X … and drop Y": Y, in force, is out.
            if extract::lexicon::CONTRAST_CUES
                .iter()
                .any(|c| find_word(&d.sentence, c))
            {
                let named: Vec<NodeId> = self
                    .current_of_kind(NodeKind::Decision)
                    .into_iter()
                    .filter(|n| !live_same.contains(n))
                    .filter(|n| {
                        self.choice_of(n)
                            .and_then(|c| self.node_ref(&c))
                            .is_some_and(|c| {
                                c.names()
                                    .any(|x| x.len() >= 3 && find_word(&d.sentence, &x))
                            })
                    })
                    .collect();
                for n in named {
                    self.supersede(&live_same[0], &n);
                }
            }
            for id in &live_same {
                if let Some(n) = self.node_ref(id) {
                    let m = Mention {
                        label: n.label.clone(),
                        kind: NodeKind::Decision,
                        domain: n.domain,
                        role: None,
                        strong: true,
                    };
                    self.upsert(&m, Some(&d.sentence), self.cfg.decision_weight, true);
                }
            }
            // "go back to X, the way we had it": the choice taken up again
            // is shown in the words that took it up (the old ones stay an
            // alias).
            if d.moves == DecisionMove::Return
                && let [id] = live_same.as_slice()
                && d.replaced.is_none()
                && d.label.split_whitespace().count() >= 3
                && let Some(n) = self.nodes.get_mut(id)
                && normalize_name(&n.label) != normalize_name(&d.label)
            {
                let old = std::mem::replace(&mut n.label, d.label.clone());
                if !n.aliases.contains(&old) && n.aliases.len() < 8 {
                    n.aliases.push(old);
                }
                self.names.insert(normalize_name(&d.label), id.clone());
            }
            return;
        }
        if d.moves == DecisionMove::Return {
            // "Back to geometry now.": a return to a common word never
            // chosen, with nothing dropped or named against it, returns to
            // a subject of the talk, not to a choice.
            let plain_word = !chosen_name.contains(' ')
                && chosen_name.chars().all(char::is_alphabetic)
                && extract::lexicon::is_common(&chosen_name, RETURN_SUBJECT_ZIPF);
            if earlier.is_empty()
                && plain_word
                && !find_word(&d.sentence, "keep")
                && d.replaced.is_none()
                && !d.label.contains(" for ")
                && self.last_drop.is_none()
                && self.recent_drop().is_none()
            {
                return;
            }
            // "keep X" with no earlier X is not a decision at all.
            // "Keep X for schema" names its topic: a choice all the same.
            if earlier.is_empty() && find_word(&d.sentence, "keep") && !d.label.contains(" for ") {
                // "we'll move the archives to Y" … "actually keep X":
                // X, named before, stays against the change.
                if let Some(old) = self.kept_against(&chosen_name) {
                    let r = extract::Decision {
                        label: format!("Use {chosen_name} instead of {old}"),
                        replaced: Some(old),
                        moves: DecisionMove::Choose,
                        ..d.clone()
                    };
                    return self.decision(&r);
                }
                return;
            }
            for id in &earlier {
                for w in self.topic_of(id) {
                    if !topic.contains(&w) {
                        topic.push(w);
                    }
                }
            }
        }
        let chosen_id = {
            let m = extract::mentions(&chosen_name, self.input.root)
                .into_iter()
                .next()
                .unwrap_or(Mention {
                    label: chosen_name.clone(),
                    kind: NodeKind::Entity,
                    domain: Domain::Technical,
                    role: None,
                    strong: true,
                });
            self.mention(&m, Some(&d.sentence), true)
        };
        let domain = chosen_id
            .as_ref()
            .and_then(|id| self.node_ref(id))
            .map(|n| {
                if n.domain == Domain::Technical {
                    Domain::Technical
                } else {
                    Domain::Project
                }
            })
            .unwrap_or(Domain::Project);
        // A decision taken up again is a new node: the old one keeps its
        // place in the history.
        let mut label = d.label.clone();
        // "instead", "scrap that": the earlier choice, found before this
        // decision exists (else it would find itself).
        // After a drop in this turn ("drop X; use Y instead"), "instead"
        // means instead of what was dropped.
        let previous = d
            .replaced
            .as_deref()
            .filter(|r| *r == extract::PREVIOUS_CHOICE)
            .and_then(|_| match &self.last_drop {
                Some(drop) => self
                    .node_ref(drop)
                    .map(|n| self.input.graph.supersedes(&n.id))
                    .and_then(|v| v.first().map(|n| n.id.clone()))
                    .or_else(|| {
                        self.edges
                            .values()
                            .find(|e| e.kind == EdgeKind::Supersedes && &e.source == drop)
                            .map(|e| e.target.clone())
                    }),
                None => self.previous_choice(None),
            });
        if let Some(prev) = d
            .replaced
            .as_deref()
            .filter(|r| *r == extract::PREVIOUS_CHOICE)
        {
            let named = previous
                .as_ref()
                .and_then(|id| self.choice_of(id))
                .and_then(|c| self.node_ref(&c).map(|n| n.label.clone()));
            label = match named {
                Some(n) => label.replace(prev, &n),
                None => label.replace(&format!(" instead of {prev}"), ""),
            };
        }
        let plain_id = self.resolve(&label, NodeKind::Decision);
        if plain_id.as_ref().is_some_and(|id| self.is_superseded(id)) {
            label = format!("{label} (again, turn {})", self.turn);
        }
        let m = Mention {
            label: label.clone(),
            kind: NodeKind::Decision,
            domain,
            role: None,
            strong: true,
        };
        let existed = self
            .resolve(&label, NodeKind::Decision)
            .is_some_and(|id| self.input.graph.contains(&id) || self.nodes.contains_key(&id));
        let Some(did) = self.upsert(&m, Some(&d.sentence), self.cfg.decision_weight, true) else {
            return;
        };
        if let Some(c) = &chosen_id {
            self.edge(&did, EdgeKind::Uses, c, 0.9);
        }
        if existed {
            if let Some(drop) = self.last_drop.take() {
                self.supersede(&did, &drop);
            }
            return;
        }
        // What does this decision supersede? What it names as replaced, a
        // decision on the same topic, and for a return, whatever replaced
        // the earlier choice.
        let mut replaced: Vec<NodeId> = match d.replaced.as_deref() {
            // The drop (superseded below) already stands for it.
            Some(extract::PREVIOUS_CHOICE) if self.last_drop.is_some() => Vec::new(),
            Some(extract::PREVIOUS_CHOICE) => previous.into_iter().collect(),
            Some(r) => self.decisions_replaced(r),
            None => Vec::new(),
        };
        // "forget X, Y it is": the sentence that names X beside Y is this
        // decision's own evidence, not an earlier choice of X.
        replaced.retain(|id| *id != did);
        // The user names what this replaces but it was never recorded as a
        // decision (said before the session, or in words we missed): keep
        // it as the history the new choice supersedes.
        if replaced.is_empty()
            && let Some(r) = d.replaced.as_deref()
            && r != extract::PREVIOUS_CHOICE
            && r.split_whitespace().count() <= 4
        {
            let r = self.known_long_form(r).unwrap_or_else(|| r.to_owned());
            if let Some(hid) =
                self.faint(NodeKind::Decision, format!("Use {r}"), domain, None, true)
            {
                replaced.push(hid);
            }
        }
        let mut old: Vec<NodeId> = Vec::new();
        // The names of what this decision chooses, for the options an
        // earlier one passed over.
        let chosen_names: Vec<String> = chosen_id
            .as_ref()
            .and_then(|c| self.node_ref(c))
            .map(|c| c.names().filter(|x| x.len() >= 3).collect())
            .unwrap_or_default();
        for n in self.current_of_kind(NodeKind::Decision) {
            if n == did {
                continue;
            }
            let old_choice = self.choice_of(&n);
            let by_version = earlier.contains(&n) && self.other_version(&n, version.as_deref());
            if old_choice.is_some() && old_choice == chosen_id && !by_version {
                continue;
            }
            let by_replaced = replaced.contains(&n) || by_version;
            // The sentence names the old choice while making the new one:
            // "the hourly run is overkill, put it back to daily".
            let said = if self.turn_text.is_empty() {
                d.sentence.clone()
            } else {
                self.turn_text.clone()
            };
            let contrast = d.moves == DecisionMove::Return
                || extract::lexicon::CONTRAST_CUES
                    .iter()
                    .any(|c| find_word(&said, c));
            // A sentence that names what it replaces ("rather than by hand")
            // replaces that, not every choice it happens to mention.
            let names_other = d
                .replaced
                .as_deref()
                .is_some_and(|r| r != extract::PREVIOUS_CHOICE && r != extract::PREVIOUS_NAMED);
            let by_naming = contrast
                && !names_other
                && old_choice
                    .as_ref()
                    .and_then(|c| self.node_ref(c))
                    .is_some_and(|c| {
                        c.names()
                            .any(|x| x.len() >= 3 && find_word(&d.sentence, &x))
                    });
            let by_topic = self.same_topic(&topic, &n);
            // "Use X (over Y, Z)" and now Y: an option passed over is taken.
            let by_passed_over = self
                .node_ref(&n)
                .and_then(|o| o.label.split_once(extract::PASSED_OVER))
                .is_some_and(|(_, others)| chosen_names.iter().any(|x| find_word(others, x)));
            let by_return = d.moves == DecisionMove::Return
                && earlier.iter().any(|e| {
                    self.input.graph.superseded_by(e).is_some_and(|s| s.id == n)
                        || self.edges.values().any(|x| {
                            x.kind == EdgeKind::Supersedes && &x.target == e && x.source == n
                        })
                });
            if by_replaced || by_topic || by_return || by_naming || by_passed_over {
                old.push(n);
            }
        }
        // A drop earlier in this turn is what this choice replaces; "go back
        // to X" with nothing else to go on replaces the choice in force that
        // the turn talks about.
        if let Some(drop) = self.last_drop.take() {
            old.push(drop);
        } else if old.is_empty()
            && d.moves == DecisionMove::Return
            && !find_word(&d.sentence, "keep")
            && let Some(p) = self
                .previous_choice_named(Some(&did))
                .or_else(|| self.choice_talked_of_before(&did))
            && self.choice_of(&p) != chosen_id
        {
            old.push(p);
        } else if old.is_empty()
            && d.moves == DecisionMove::Choose
            && d.replaced.is_none()
            && let Some(p) =
                self.choice_named_elsewhere(&did, &d.sentence, &topic, chosen_id.as_ref())
        {
            // "X takes a minute to start … We go with Y": the turn
            // talks about the choice in force, then makes another.
            old.push(p);
        }
        for o in old {
            self.supersede(&did, &o);
        }
    }

    /// What the newest replaced decision chose (not a drop): the choice
    /// before the one in force.
    fn earlier_choice(&self) -> Option<String> {
        let replaced = self
            .ids_of_kind(NodeKind::Decision)
            .into_iter()
            .filter(|id| self.is_superseded(id))
            .filter(|id| {
                self.node_ref(id)
                    .is_some_and(|n| !n.label.starts_with("Drop "))
            });
        let id = self.newest(replaced)?;
        self.choice_of(&id)
            .and_then(|c| self.node_ref(&c).map(|n| n.label.clone()))
    }

    /// The label of the thing an ordinal phrase names ("first venue": the
    /// first thing named with "venue" in its label, by the turn it was first
    /// seen in this session; "last venue": the latest). `None` unless the
    /// phrase is an ordinal and a head noun, and such things exist.
    fn ordinal_referent(&self, phrase: &str) -> Option<String> {
        let lower = phrase.to_lowercase();
        let mut words = lower.split_whitespace();
        let ordinal = words.next()?;
        let head = words.next()?;
        if words.next().is_some() || head.chars().count() < 3 {
            return None;
        }
        let pos = extract::lexicon::ORDINALS
            .iter()
            .position(|o| o == ordinal)?;
        let last = pos + 1 == extract::lexicon::ORDINALS.iter().count();
        let session = self.input.session;
        let mut found: Vec<(u32, String)> = Vec::new();
        let mut seen: BTreeSet<NodeId> = BTreeSet::new();
        let nodes = self
            .nodes
            .values()
            .chain(self.input.graph.nodes_unordered());
        for n in nodes {
            if !seen.insert(n.id.clone())
                || !matches!(
                    n.kind,
                    NodeKind::Entity | NodeKind::Project | NodeKind::Person
                )
                || !n
                    .label
                    .split_whitespace()
                    .any(|w| extract::stem(w) == extract::stem(head))
            {
                continue;
            }
            let first = n
                .provenance
                .iter()
                .filter(|p| p.session == session)
                .map(|p| p.first_turn)
                .chain(
                    n.evidence
                        .iter()
                        .filter(|e| e.session == session)
                        .map(|e| e.turn),
                )
                .min()
                .unwrap_or(self.turn);
            found.push((first, n.label.clone()));
        }
        found.sort();
        if last {
            found.pop().map(|(_, l)| l)
        } else {
            found.into_iter().nth(pos).map(|(_, l)| l)
        }
    }

    /// The decision in force whose choice the turn names outside `sentence`
    /// (the one making the new choice), when that decision was not itself
    /// restated in this turn, its choice is the same kind of thing as
    /// `chosen`, and the two topics, where both are known, share a word.
    fn choice_named_elsewhere(
        &self,
        did: &NodeId,
        sentence: &str,
        topic: &[String],
        chosen: Option<&NodeId>,
    ) -> Option<NodeId> {
        let chosen_node = self.node_ref(chosen?)?;
        let chosen_kind = chosen_node.kind;
        let mut rest = without_owners(&self.turn_text.replace(sentence, " "));
        // "X keeps timing out, go with Y": the clause before the one that
        // names the new choice talks about the old one.
        let lower = sentence.to_lowercase();
        if let Some(at) = lower.find(&chosen_node.label.to_lowercase())
            && let Some(cut) = lower[..at].rfind([',', ';', '—'])
        {
            rest.push(' ');
            rest.push_str(&lower[..cut]);
        }
        // A choice of several words is named by its first when that word is
        // rare ("the Zorvex pump" by "Zorvex").
        let names_of = |c: &Node| -> Vec<String> {
            let mut v: Vec<String> = c.names().collect();
            if let Some((first, _)) = c.label.split_once(' ')
                && first.chars().count() >= 3
                && !extract::lexicon::is_common(first, 3.5)
            {
                v.push(normalize_name(first));
            }
            v
        };
        let named = self.live_choices(Some(did)).filter(|id| {
            let Some(n) = self.node_ref(id) else {
                return false;
            };
            if n.evidence
                .iter()
                .any(|e| e.session == self.input.session && e.turn == self.turn)
            {
                return false;
            }
            let old_topic = self.topic_of(id);
            if !topic.is_empty()
                && !old_topic.is_empty()
                && !topic.iter().any(|w| old_topic.contains(w))
            {
                return false;
            }
            self.choice_of(id)
                .filter(|c| Some(c) != chosen)
                .and_then(|c| self.node_ref(&c))
                .is_some_and(|c| {
                    c.kind == chosen_kind
                        && names_of(c)
                            .iter()
                            .any(|x| x.len() >= 3 && find_word(&rest, x))
                })
        });
        self.newest(named)
    }

    fn choice_of(&self, decision: &NodeId) -> Option<NodeId> {
        let from_plan = self
            .edges
            .values()
            .find(|e| e.kind == EdgeKind::Uses && &e.source == decision)
            .map(|e| e.target.clone());
        from_plan.or_else(|| {
            self.input
                .graph
                .edges_of(decision)
                .into_iter()
                .find(|e| e.kind == EdgeKind::Uses && &e.source == decision)
                .map(|e| e.target.clone())
        })
    }

    fn topic_of(&self, decision: &NodeId) -> Vec<String> {
        let Some(n) = self.node_ref(decision) else {
            return Vec::new();
        };
        // The options passed over are not what it decides.
        let label = n
            .label
            .split(extract::PASSED_OVER)
            .next()
            .unwrap_or(&n.label);
        let mut words = extract::content_words(label);
        if let Some(c) = self
            .choice_of(decision)
            .and_then(|c| self.node_ref(&c).map(|n| n.label.clone()))
        {
            // The choice's head word is what is being decided ("weekly
            // partitions" decides partitions), as in extract::decision.
            let mut cw = extract::content_words(&c);
            if c.split_whitespace().count() >= 2 {
                let head = c
                    .split_whitespace()
                    .last()
                    .map(extract::stem)
                    .unwrap_or_default();
                cw.retain(|w| *w != head);
            }
            words.retain(|w| !cw.contains(w));
        }
        words
    }

    fn finish(self) -> (Vec<PatchOperation>, Vec<NodeId>) {
        let mut ops: Vec<Value> = Vec::new();
        let ts = |t: DateTime<Utc>| json!(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        for (id, n) in &self.nodes {
            let path = format!("/nodes/{id}");
            if self.existing.contains(id) {
                let Some(old) = self.input.graph.node(id) else {
                    continue;
                };
                if (old.weight - n.weight).abs() > 1e-12 {
                    ops.push(json!({"op": "replace", "path": format!("{path}/weight"), "value": round4(n.weight)}));
                }
                if old.last_activated != n.last_activated {
                    ops.push(json!({"op": "replace", "path": format!("{path}/last_activated"), "value": ts(n.last_activated)}));
                }
                if old.detail != n.detail
                    && let Some(d) = &n.detail
                {
                    ops.push(json!({"op": "add", "path": format!("{path}/detail"), "value": d}));
                }
                if old.evidence != n.evidence {
                    ops.push(
                        json!({"op": "add", "path": format!("{path}/evidence"), "value": n.evidence}),
                    );
                }
                if old.label != n.label {
                    ops.push(
                        json!({"op": "add", "path": format!("{path}/label"), "value": n.label}),
                    );
                }
                if old.aliases != n.aliases {
                    ops.push(
                        json!({"op": "add", "path": format!("{path}/aliases"), "value": n.aliases}),
                    );
                }
                // A thing that turned out to be a person.
                if old.kind != n.kind {
                    ops.push(json!({"op": "add", "path": format!("{path}/kind"), "value": n.kind}));
                }
                if old.domain != n.domain {
                    ops.push(
                        json!({"op": "add", "path": format!("{path}/domain"), "value": n.domain}),
                    );
                }
            } else {
                let mut n = n.clone();
                n.weight = round4(n.weight);
                let mut v = serde_json::to_value(&n).unwrap_or(Value::Null);
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("last_activated".into(), ts(n.last_activated));
                }
                ops.push(json!({"op": "add", "path": path, "value": v}));
            }
        }
        for (key, e) in &self.edges {
            if self
                .input
                .graph
                .edge(key)
                .is_some_and(|old| (old.weight - e.weight).abs() < 1e-12)
            {
                continue;
            }
            let mut e = e.clone();
            e.weight = round4(e.weight);
            ops.push(json!({"op": "add", "path": format!("/edges/{key}"), "value": e}));
        }
        ops.truncate(self.cfg.max_ops);
        let ops = ops
            .into_iter()
            .filter_map(|v| serde_json::from_value::<PatchOperation>(v).ok())
            .collect();
        (ops, self.mentioned.into_iter().collect())
    }
}

/// Whether a fact label's value measures what `value` does: one dimension,
/// two counted nouns, or a unit missing on either side.
fn label_measures_like(label: &str, value: &str) -> bool {
    let Some((_, v)) = label.split_once(": ") else {
        return true;
    };
    match (extract::value_unit(v), extract::value_unit(value)) {
        (Some(a), Some(b)) => {
            extract::same_dimension(&a, &b) || (counted_noun(&a) && counted_noun(&b))
        }
        _ => true,
    }
}

/// Whether a value's unit is a noun its number counts ("8,000 words",
/// "5 people"), not a unit of measure.
fn counted_noun(unit: &str) -> bool {
    unit.chars().all(char::is_alphabetic) && !extract::lexicon::UNIT_WORDS.contains(unit)
}

/// `s` with its first pronoun for a thing ("them", "it", "that" …,
/// `thing_pronouns.txt`) written as `name`; `None` when it has none.
fn replace_pronoun(s: &str, name: &str) -> Option<String> {
    let mut at = 0;
    for w in s.split_inclusive(|c: char| !c.is_alphanumeric()) {
        let word = w.trim_end_matches(|c: char| !c.is_alphanumeric());
        if extract::lexicon::THING_PRONOUNS.contains(&word.to_lowercase()) {
            return Some(format!("{}{name}{}", &s[..at], &s[at + word.len()..]));
        }
        at += w.len();
    }
    None
}

/// The first clause of an assistant sentence: enough to say what a thing is.
fn first_clause(s: &str) -> String {
    let cut = s
        .char_indices()
        .find(|(i, c)| *i > 30 && matches!(c, ':' | ';' | '—' | '('))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let clause: String = s[..cut].chars().take(110).collect();
    clause.trim().trim_end_matches([',', ':', ';']).to_owned()
}

/// The word stems of a name, split at spaces, hyphens, underscores and
/// dots, without function words: "the queue-based approach" → queue, base,
/// approach.
fn name_stems(name: &str) -> BTreeSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !extract::lexicon::is_stop(w))
        .map(|w| extract::stem(&w))
        .collect()
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn find_word(hay: &str, word: &str) -> bool {
    has_word(&hay.to_lowercase(), word)
}

/// The records `read` finds in a text's sentences (its facts, its
/// events), each with the sentence that states it.
fn stated(text: &str, read: fn(&str) -> Option<extract::Record>) -> Vec<(extract::Record, String)> {
    extract::sentences(text)
        .into_iter()
        .filter_map(|s| Some((read(&s)?, s)))
        .collect()
}

/// `text` without its owners: a word with "'s" before a content word
/// ("X's lines" is about X's lines, not X; "X's out" stays).
fn without_owners(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            let owner = (w.ends_with("'s") || w.ends_with("\u{2019}s"))
                && words.get(i + 1).is_some_and(|n| {
                    let n = n
                        .trim_end_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase();
                    !n.is_empty()
                        && n.chars().all(char::is_alphabetic)
                        && !extract::lexicon::is_stop(&n)
                        && !extract::lexicon::is_closed_class(&n)
                });
            !owner
        })
        .map(|(_, w)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

fn has_word(hay: &str, word: &str) -> bool {
    hay.split(|c: char| !c.is_alphanumeric()).any(|w| w == word)
        || (word.contains(' ') && hay.contains(word))
}

fn cap_words(s: &str) -> String {
    s.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn dominant_of(ids: &[(NodeId, NodeKind)], plan: &Plan<'_>) -> Domain {
    let mut counts: BTreeMap<Domain, usize> = BTreeMap::new();
    for (id, _) in ids {
        if let Some(n) = plan.node_ref(id) {
            *counts.entry(n.domain).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(d, _)| d)
        .unwrap_or(Domain::Technical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::{PatchRules, apply};

    fn now(h: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000 + h * 3600, 0).unwrap_or_default()
    }

    fn turn(user: &str, assistant: &str) -> Turn {
        Turn {
            index: 1,
            user: user.into(),
            assistant: assistant.into(),
            files: vec![],
            timestamp: None,
        }
    }

    fn run(g: &mut Graph, user: &str, h: i64) -> ProbeOutput {
        let turns = [turn(user, "")];
        let input = ProbeInput {
            session: "s1",
            probe_id: format!("p{h}"),
            turns: &turns,
            graph: g,
            now: now(h),
            root: Some("/home/sam/tallybook"),
            asked: None,
        };
        let out = HeuristicProbe::default()
            .probe(&input)
            .unwrap_or_else(|e| panic!("{e}"));
        let patch = out.patch.ops.clone();
        apply(g, &patch, &PatchRules::default()).unwrap_or_else(|e| panic!("{e}: {patch:?}"));
        out
    }

    #[test]
    fn changed_decision_supersedes_the_old_one() {
        let mut g = Graph::new();
        run(&mut g, "Let's go with Mailvane for transactional email.", 0);
        run(
            &mut g,
            "Pricing is bad. Let's switch to Postwick instead of Mailvane.",
            1,
        );
        let old = g
            .find_by_name("Use Mailvane for transactional email")
            .map(|n| n.id.clone());
        let old = old.unwrap_or_else(|| panic!("old decision missing: {:?}", g.nodes()));
        let newer = g.superseded_by(&old).map(|n| n.label.clone());
        assert_eq!(newer.as_deref(), Some("Use Postwick instead of Mailvane"));
    }

    #[test]
    fn a_reply_that_capitalises_a_lowercase_word_names_it() {
        let cased = proper_nouns_of(
            [
                "Good, confirm with Pellam before you announce. We keep Quorra Brimble.",
                "Ask Pellam about the room; the Board meets Monday. The board agrees.",
            ]
            .into_iter(),
        );
        assert_eq!(cased.get("pellam").map(String::as_str), Some("Pellam"));
        // A run of capitals, a word also written in lowercase, a sentence
        // start and a closed-class word are not taken.
        for w in ["quorra", "brimble", "board", "good", "ask", "monday"] {
            assert!(!cased.contains_key(w), "{w}: {cased:?}");
        }
        assert_eq!(
            recase(
                "told pellam, he's fine. see `pellam.rs` and /srv/pellam",
                &cased
            ),
            "told Pellam, he's fine. see `pellam.rs` and /srv/pellam"
        );
        // The probe reads the user's word as the reply writes it.
        let mut g = Graph::new();
        let turns = [turn(
            "greenhall from the depot said the van is booked",
            "Great. Ask Greenhall whether the van has a tail lift.",
        )];
        let input = ProbeInput {
            session: "s1",
            probe_id: "p0".into(),
            turns: &turns,
            graph: &g,
            now: now(0),
            root: None,
            asked: None,
        };
        let out = HeuristicProbe::default()
            .probe(&input)
            .unwrap_or_else(|e| panic!("{e}"));
        apply(&mut g, &out.patch.ops, &PatchRules::default()).unwrap_or_else(|e| panic!("{e}"));
        let person = g
            .nodes()
            .into_iter()
            .find(|n| n.kind == NodeKind::Person && n.label.eq_ignore_ascii_case("greenhall"));
        assert!(person.is_some(), "{:?}", g.nodes());
    }

    #[test]
    fn a_word_written_in_lowercase_elsewhere_is_no_name() {
        // Only the frequency list makes a rare word at a sentence start a
        // name at all.
        if !extract::lexicon::init_frequencies() {
            return;
        }
        let mut g = Graph::new();
        run(
            &mut g,
            "Flumbers: we keep two per shelf. Then the flumbers go to the archive.",
            0,
        );
        assert!(g.find_by_name("Flumbers").is_none(), "{:?}", g.nodes());
        run(&mut g, "Quorbit: we keep two per shelf.", 1);
        assert!(g.find_by_name("Quorbit").is_some(), "{:?}", g.nodes());
        // Capitalised inside a sentence too, it is a name.
        run(
            &mut g,
            "Zentrix: two per shelf. We run zentrix jobs nightly and Zentrix reports.",
            2,
        );
        assert!(g.find_by_name("Zentrix").is_some(), "{:?}", g.nodes());
    }

    #[test]
    fn people_get_first_name_aliases_and_roles() {
        let mut g = Graph::new();
        run(
            &mut g,
            "Ilsa Voss (backend lead) wants migrations to be reversible.",
            0,
        );
        run(&mut g, "Ilsa approved the PR.", 1);
        let p = g
            .find_by_name("Ilsa")
            .cloned()
            .unwrap_or_else(|| panic!("no ilsa: {:?}", g.nodes()));
        assert_eq!(p.kind, NodeKind::Person);
        assert!(p.detail.unwrap_or_default().contains("backend lead"));
        assert_eq!(
            g.nodes()
                .iter()
                .filter(|n| n.kind == NodeKind::Person)
                .count(),
            1
        );
    }

    #[test]
    fn corrections_and_preferences_become_nodes() {
        let mut g = Graph::new();
        run(
            &mut g,
            "Actually, the retry limit is 5, not 3. No, the handler lives in the webhooks module. I prefer small commits with conventional messages.",
            0,
        );
        // A corrected number is a fact (with history when the old value is
        // known); any other correction is a correction.
        assert!(
            g.nodes()
                .iter()
                .any(|n| n.kind == NodeKind::Fact && n.label == "retry limit: 5"),
            "{:?}",
            g.nodes()
        );
        assert!(
            g.nodes().iter().any(|n| n.kind == NodeKind::Correction),
            "{:?}",
            g.nodes()
        );
        assert!(
            g.nodes()
                .iter()
                .any(|n| n.kind == NodeKind::Preference && n.domain == Domain::Personal)
        );
    }

    #[test]
    fn probe_is_deterministic() {
        let mut a = Graph::new();
        let mut b = Graph::new();
        let x = run(
            &mut a,
            "Tobin Corvo owns the invoice email templates in templates/invoice.mjml",
            0,
        );
        let y = run(
            &mut b,
            "Tobin Corvo owns the invoice email templates in templates/invoice.mjml",
            0,
        );
        assert_eq!(x, y);
        assert_eq!(a.to_doc(), b.to_doc());
    }
}
