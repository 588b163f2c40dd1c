//! The gate: a cheap per-turn heuristic that decides whether a probe runs.
//!
//! Four triggers (new named entity, domain shift, decision language,
//! correction language) and a dead man's switch. Every decision carries the
//! triggers that fired or the reason it stayed quiet, so the probe rate is
//! measurable. The gate reads no files and allocates no regex: it runs inline
//! on the hook's critical path.

use std::collections::{HashSet, VecDeque};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::config::{GateConfig, Inferred};
use crate::extract;
use crate::extract::lexicon::{self, WordList};
use crate::graph::{Domain, NodeKind, normalize_name};

/// Why the gate fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A name, path or identifier that is not yet a node label or alias.
    NewEntity,
    /// The turn's dominant domain differs from the recent window's.
    DomainShift,
    /// "let's go with", "we decided", "switch to" …
    Decision,
    /// "actually", "no,", "that's wrong" …
    Correction,
    /// A fact, rule, procedure or next step: "the timeout is 3 s",
    /// "never force-push to main", "blocked on …".
    Memory,
    /// Too many quiet turns in a row.
    DeadMansSwitch,
}

impl Trigger {
    /// All triggers in a fixed order.
    pub const ALL: [Trigger; 6] = [
        Trigger::NewEntity,
        Trigger::DomainShift,
        Trigger::Decision,
        Trigger::Correction,
        Trigger::Memory,
        Trigger::DeadMansSwitch,
    ];

    /// The snake_case name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::NewEntity => "new_entity",
            Trigger::DomainShift => "domain_shift",
            Trigger::Decision => "decision",
            Trigger::Correction => "correction",
            Trigger::Memory => "memory",
            Trigger::DeadMansSwitch => "dead_mans_switch",
        }
    }
}

/// What the gate sees of one turn.
#[derive(Clone, Debug, Default)]
pub struct GateInput<'a> {
    /// The user's prompt (already redacted).
    pub prompt: &'a str,
    /// The assistant's previous reply (already redacted), if any.
    pub previous_reply: &'a str,
}

/// The gate's verdict on one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateDecision {
    /// Whether a probe should run.
    pub fire: bool,
    /// Every trigger that fired (empty when quiet).
    pub triggers: Vec<Trigger>,
    /// Human-readable reason, for the log and `replay`.
    pub reason: String,
    /// The new names that fired `NewEntity`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_entities: Vec<String>,
    /// The turn's dominant domain, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<Domain>,
}

/// What the gate remembers between turns (persisted with the session).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GateState {
    /// Quiet turns since the last probe.
    pub quiet_turns: u32,
    /// Dominant domains of the recent turns, newest last.
    pub recent_domains: VecDeque<Domain>,
    /// Names seen by the gate but not yet probed, so one name fires once.
    #[serde(default)]
    pub pending_names: Vec<String>,
    /// Triggers seen on earlier turns that fire with the next probe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Trigger>,
    /// Whether a decision or correction is among them (it waits one turn
    /// at most, whatever `soft_quiet_turns` says).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting_hard: bool,
    /// Whether what waits is weak evidence only (it lasts one turn).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting_weak: bool,
    /// Signal points of the pending names (people 3, files 1 …).
    #[serde(default)]
    pub pending_points: u32,
    /// Whether any probe has run in this session.
    #[serde(default)]
    pub probed: bool,
}

/// The prompt's domain when it clearly dominates: at least `min` points and
/// `min` ahead of the runner-up... or half of that for short prompts.
fn clear_domain(text: &str, min: u32) -> Option<Domain> {
    let scores = extract::domain_scores(text);
    let d = extract::dominant_domain(text)?;
    let i = Domain::ALL.iter().position(|x| *x == d)?;
    let top = scores[i];
    let second = scores
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, s)| *s)
        .max()
        .unwrap_or(0);
    (top >= min && top >= second + min.div_ceil(2)).then_some(d)
}

/// Decides whether this turn fires a probe and updates `state`.
///
/// `known` holds every node label and alias, normalised with
/// [`normalize_name`].
pub fn decide<K: KnownNames + ?Sized>(
    state: &mut GateState,
    input: &GateInput<'_>,
    known: &K,
    cfg: &GateConfig,
) -> GateDecision {
    // The cue lists spell apostrophes plainly, as the probe reads them.
    let prompt = extract::normalize_typing(input.prompt, true);
    let reply = extract::normalize_typing(input.previous_reply, false);
    let input = &GateInput {
        prompt: &prompt,
        previous_reply: &reply,
    };
    let mut triggers = Vec::new();
    let mut reasons = Vec::new();
    let sentences = extract::sentences(input.prompt);

    // Until the first probe, two points make a name worth one.
    let bar = if state.probed {
        cfg.new_entity_points
    } else {
        cfg.new_entity_points.min(2)
    };
    let found = new_names(input, known, &state.pending_names, cfg);
    let new_points: u32 = found.iter().map(|(_, p)| p).sum();
    let new_entities: Vec<String> = found.into_iter().map(|(n, _)| n).collect();
    if !new_entities.is_empty() {
        reasons.push(format!(
            "new: {} ({new_points} point{})",
            new_entities.join(", "),
            if new_points == 1 { "" } else { "s" }
        ));
        // One new file or identifier alone waits for company.
        if new_points + state.pending_points >= bar {
            triggers.push(Trigger::NewEntity);
        }
    }

    // The window remembers every turn's leaning; a shift needs a clear lead.
    let domain = extract::dominant_domain(input.prompt);
    let clear = clear_domain(input.prompt, cfg.domain_min_score);
    if let (Some(d), Some(window)) = (clear, window_domain(&state.recent_domains))
        && d != window
        && state.recent_domains.len() >= cfg.domain_window.min(2)
    {
        triggers.push(Trigger::DomainShift);
        reasons.push(format!("domain {window} -> {d}"));
    }
    // Weak evidence (by default a domain shift, a bare quantity, a choice
    // inferred from its shape) fires only with company: other evidence on
    // the same turn or the next.
    let mut strong = triggers.contains(&Trigger::NewEntity);
    let mut inferred = Vec::new();
    if triggers.contains(&Trigger::DomainShift) {
        inferred.push(Inferred::DomainShift);
    }
    // Values with their subject, rules, procedures, next steps, dates and
    // quantities. Only what the graph does not hold yet (a record said
    // again is not news).
    let mut memory = Vec::new();
    if extract::records(input.prompt)
        .iter()
        .any(|r| !known.contains_name(&normalize_name(&r.label)))
    {
        memory.push("fact, rule, procedure or next step");
        strong = true;
    }
    let statements = || sentences.iter().filter(|s| !s.ends_with('?'));
    // The words of each statement, once.
    let words: Vec<Vec<String>> = statements().map(|s| plain_tokens(s)).collect();
    if cfg.dates && words.iter().any(|w| dated(w)) {
        memory.push("a date");
        inferred.push(Inferred::Date);
    }
    if cfg.quantities && words.iter().any(|w| quantity(w)) {
        memory.push("a quantity");
        inferred.push(Inferred::Quantity);
    }
    // "<name> says …", "<name> replied": news relayed from someone the
    // session knows.
    if words.iter().any(|w| relays(w, known)) {
        memory.push("relays what someone said");
        strong = true;
    }
    // "what's the command for the cache?": the reply will hold a procedure.
    if extract::asks_for_command(input.prompt) {
        memory.push("asks for a command");
        strong = true;
    }
    if !memory.is_empty() {
        triggers.push(Trigger::Memory);
        reasons.push(memory.join(", "));
    }

    // Decisions and corrections are hard: they never wait for quiet turns.
    // A choice the gate cannot see whole (an acceptance of something not
    // proposed in so many words, "keep X", "X it is") is soft.
    let mut hard = false;
    if extract::has_decision_language(input.prompt) {
        triggers.push(Trigger::Decision);
        reasons.push("decision language".into());
        hard = true;
    } else if sentences
        .first()
        .is_some_and(|first| extract::answer_choice(first, input.previous_reply, None).is_some())
        || sentences
            .iter()
            .any(|s| extract::endorsed_choice(s, input.previous_reply, None).is_some())
    {
        triggers.push(Trigger::Decision);
        reasons.push("picks an option".into());
        hard = true;
    } else if extract::is_acceptance(input.prompt) {
        if extract::sentences(input.previous_reply)
            .iter()
            .any(|s| extract::proposal(s, None).is_some())
        {
            triggers.push(Trigger::Decision);
            reasons.push("accepts a proposal".into());
            hard = true;
        } else if cfg.soft_choices {
            triggers.push(Trigger::Decision);
            reasons.push("accepts the reply".into());
            inferred.push(Inferred::Acceptance);
        }
    } else if extract::is_go_ahead(input.prompt)
        && extract::stated_proposal(input.previous_reply, None).is_some()
    {
        // "ok, go ahead like that" to "my suggestion: X".
        triggers.push(Trigger::Decision);
        reasons.push("goes ahead with a proposal".into());
        hard = true;
    } else if cfg.soft_choices
        && (words.iter().any(|w| keeps_choice(w))
            || statements().any(|s| extract::decision(s, None).is_some() || settles_choice(s)))
    {
        triggers.push(Trigger::Decision);
        reasons.push("keeps or settles a choice".into());
        inferred.push(Inferred::Choice);
    } else if cfg.soft_choices && sentences.iter().any(|s| accepts_in_passing(s)) {
        triggers.push(Trigger::Decision);
        reasons.push("accepts the reply".into());
        inferred.push(Inferred::Acceptance);
    } else if cfg.soft_choices
        && sentences
            .first()
            .is_some_and(|first| echoes_offer(first, input.previous_reply))
    {
        triggers.push(Trigger::Decision);
        reasons.push("answers with the reply's words".into());
        inferred.push(Inferred::Choice);
    }
    if extract::has_correction_language(input.prompt) {
        triggers.push(Trigger::Correction);
        reasons.push("correction language".into());
        hard = true;
    } else if words.iter().any(|w| denies_value(w)) {
        // "it's £1,540 not £1,450": a value corrected in so many words.
        triggers.push(Trigger::Correction);
        reasons.push("a value corrected".into());
        hard = true;
    }

    // When to fire. Decisions and corrections are hard: at once, or with
    // `next_turn` on the turn after. Other triggers are soft: they wait for
    // `soft_quiet_turns` quiet turns since the last probe and, with
    // `next_turn`, for the turn after they were seen, so one probe reads
    // that turn and the next. Weak evidence waits one turn for company and
    // is dropped without it.
    let any = !triggers.is_empty();
    let weak = inferred.iter().filter(|k| cfg.weak.contains(k)).count();
    let strong = strong || hard || weak >= 2 || weak < inferred.len();
    let eligible = state.quiet_turns >= cfg.soft_quiet_turns || !state.probed;
    let waiting_weak = state.waiting_weak && !state.waiting.is_empty();
    let at_once = if hard {
        !cfg.next_turn
    } else {
        strong && eligible && !cfg.next_turn
    };
    let fire_now = at_once
        || state.waiting_hard
        || (eligible && state.pending_points >= bar)
        || (eligible && !state.waiting.is_empty() && !waiting_weak)
        || (eligible && waiting_weak && any);
    if !fire_now {
        if waiting_weak {
            // Weak evidence lasts one turn.
            state.waiting.clear();
            state.waiting_weak = false;
        }
        state.pending_points += new_points;
        for n in &new_entities {
            let norm = normalize_name(n);
            if !state.pending_names.contains(&norm) && state.pending_names.len() < 64 {
                state.pending_names.push(norm);
            }
        }
        if any {
            state.waiting_weak = !strong && state.waiting.is_empty();
            for t in &triggers {
                if *t != Trigger::NewEntity && !state.waiting.contains(t) {
                    state.waiting.push(*t);
                }
            }
            state.waiting_hard |= hard;
            reasons.push(if !strong {
                "waits a turn for company".into()
            } else if eligible || hard {
                "waits a turn".into()
            } else {
                format!(
                    "deferred: {} quiet turn(s) since the last probe",
                    state.quiet_turns
                )
            });
        }
        triggers.clear();
    } else {
        // What earlier turns left waiting fires now.
        if state.pending_points >= bar && !triggers.contains(&Trigger::NewEntity) {
            triggers.push(Trigger::NewEntity);
            reasons.push(format!("deferred new: {}", state.pending_names.join(", ")));
        }
        for t in std::mem::take(&mut state.waiting) {
            if !triggers.contains(&t) {
                triggers.push(t);
                reasons.push(format!("deferred {}", t.as_str()));
            }
        }
    }
    if triggers.is_empty() && state.quiet_turns >= cfg.dead_mans_switch {
        triggers.push(Trigger::DeadMansSwitch);
        reasons.push(format!("{} quiet turns", state.quiet_turns));
    }

    if let Some(d) = domain {
        state.recent_domains.push_back(d);
        while state.recent_domains.len() > cfg.domain_window.max(1) {
            state.recent_domains.pop_front();
        }
    }

    let fire = !triggers.is_empty();
    if fire {
        state.quiet_turns = 0;
        state.pending_names.clear();
        state.pending_points = 0;
        state.waiting.clear();
        state.waiting_hard = false;
        state.waiting_weak = false;
        state.probed = true;
    } else {
        state.quiet_turns += 1;
        reasons.push(format!("quiet ({} since last probe)", state.quiet_turns));
    }
    GateDecision {
        fire,
        triggers,
        reason: reasons.join("; "),
        new_entities,
        domain,
    }
}

/// Verbs that relay what someone said or did (gate data).
static RELAY_VERBS: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/relay_verbs.txt")));

/// Whether a statement relays news from someone the session knows: a known
/// name (possessive too: "<name>'s emailed") right before a relay verb.
fn relays<K: KnownNames + ?Sized>(words: &[String], known: &K) -> bool {
    words.windows(2).any(|w| {
        let name = w[0].strip_suffix("'s").unwrap_or(&w[0]);
        name.len() >= 2
            && name.chars().all(char::is_alphabetic)
            && !extract::lexicon::is_stop(name)
            && RELAY_VERBS.contains(w[1].as_str())
            && known.contains_name(name)
    })
}

/// Calendar words that date a plan (gate data).
static CALENDAR_DAYS: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/calendar_days.txt")));
/// Words before a number that make it a limit (gate data).
static LIMIT_CUES: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/limit_cues.txt")));
/// Words that keep a choice as it is (gate data).
static KEEP_CUES: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/keep_cues.txt")));
/// Words before a number that make it a value being set (gate data).
static VALUE_LINKS: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/value_links.txt")));
/// Clauses that accept the reply, besides the extractor's cues (gate data).
static ACCEPT_WORDS: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/accept_words.txt")));
/// Sentence endings that settle a choice (gate data).
static CHOICE_ENDINGS: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/choice_endings.txt")));

/// A sentence's words, lowercase, stripped of the punctuation around them;
/// code in backticks is left out (a version in code is not a date).
fn plain_tokens(sentence: &str) -> Vec<String> {
    sentence
        .split_whitespace()
        .filter(|w| !w.contains('`'))
        .map(|w| {
            w.trim_matches(|c: char| {
                !(c.is_alphanumeric() || matches!(c, '$' | '€' | '£' | '%' | '\''))
            })
            .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// A day of the month written as a number: "9".
fn day_number(t: &str) -> bool {
    t.len() <= 2 && t.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
}

/// Whether the words name a date: an ordinal day ("due the 3rd"), a month
/// beside a day ("<month> 9"), a weekday ("lands wednesday") or an ISO date.
fn dated(tokens: &[String]) -> bool {
    tokens.iter().enumerate().any(|(i, t)| {
        let ordinal = ["st", "nd", "rd", "th"]
            .iter()
            .any(|s| t.strip_suffix(s).is_some_and(day_number));
        let iso = t.len() == 10
            && t.bytes().enumerate().all(|(k, b)| match k {
                4 | 7 => b == b'-',
                _ => b.is_ascii_digit(),
            });
        let month_day = lexicon::MONTHS.contains(t)
            && (tokens.get(i + 1).is_some_and(|n| day_number(n))
                || i.checked_sub(1)
                    .and_then(|p| tokens.get(p))
                    .is_some_and(|n| day_number(n)));
        ordinal || iso || month_day || CALENDAR_DAYS.contains(t)
    })
}

/// The unit glued to a number ("10k", "400ms", "5%"), `Some("")` for a
/// bare number, `None` for anything else (a version, a name, a time).
fn number_unit(t: &str) -> Option<&str> {
    let t = t.trim_start_matches(['$', '€', '£', '~']);
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let ok = num.starts_with(|c: char| c.is_ascii_digit())
        && num.matches('.').count() <= 1
        && !num.ends_with([',', '.'])
        && unit.chars().all(|c| c.is_ascii_alphabetic() || c == '%')
        && unit.len() <= 3;
    ok.then_some(unit)
}

/// Whether the words set one number against another: "£1,540 not
/// £1,450", "8 not 10".
fn denies_value(tokens: &[String]) -> bool {
    tokens
        .windows(3)
        .any(|w| w[1] == "not" && number_unit(&w[0]).is_some() && number_unit(&w[2]).is_some())
}

/// Whether the words state a quantity: a number with its unit ("250 mb",
/// "40k users", "12 calls per second", "900/week"), a limit ("at most 40"),
/// a value being set ("the quota is 75", "lower it to 15") or a time of day
/// ("18:45").
fn quantity(tokens: &[String]) -> bool {
    let unit = |u: &str| u == "%" || (u != "x" && u != "per" && lexicon::UNIT_WORDS.contains(u));
    tokens.iter().enumerate().any(|(i, t)| {
        if clock_time(t) {
            return true;
        }
        // "900/week": a number per unit.
        let (t, per) = match t.split_once('/') {
            Some((n, u)) if unit(u) => (n, true),
            _ => (t.as_str(), false),
        };
        let Some(glued) = number_unit(t) else {
            return false;
        };
        if per {
            return true;
        }
        if !glued.is_empty() {
            return unit(glued);
        }
        let next = |k: usize| tokens.get(i + k).map(String::as_str).unwrap_or("");
        let before = |k: usize| {
            i.checked_sub(k)
                .and_then(|p| tokens.get(p))
                .map(String::as_str)
                .unwrap_or("")
        };
        unit(next(1))
            || next(1) == "per"
            || next(2) == "per"
            || LIMIT_CUES.contains(before(1))
            || LIMIT_CUES.contains(&format!("{} {}", before(2), before(1)))
            || VALUE_LINKS.contains(before(1))
    })
}

/// A time of day: "7:15", "18:45".
fn clock_time(t: &str) -> bool {
    t.split_once(':').is_some_and(|(h, m)| {
        (1..=2).contains(&h.len())
            && m.len() == 2
            && h.parse::<u32>().is_ok_and(|h| h < 24)
            && m.parse::<u32>().is_ok_and(|m| m < 60)
    })
}

/// Whether a sentence keeps a choice as it is: "keep X", "X stays".
fn keeps_choice(tokens: &[String]) -> bool {
    (0..tokens.len()).any(|i| {
        KEEP_CUES.contains(&tokens[i])
            || tokens
                .get(i + 1)
                .is_some_and(|n| KEEP_CUES.contains(&format!("{} {n}", tokens[i])))
    })
}

/// Whether a clause of the sentence accepts what was said: "right, so
/// yes, go for it", "Nice, ship it.", "The second one, fine."
fn accepts_in_passing(sentence: &str) -> bool {
    sentence.split([',', ';', ':']).any(|clause| {
        let c = clause
            .trim()
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        !c.is_empty()
            && (ACCEPT_WORDS.contains(&c)
                || lexicon::ACCEPT_CUES.iter().any(|cue| {
                    c == cue
                        || c.strip_prefix(cue).is_some_and(|rest| {
                            rest.starts_with(' ') && rest.split_whitespace().count() <= 3
                        })
                }))
    })
}

/// Whether the prompt opens with a terse answer in the reply's own words
/// ("Workspaces.", "The queue for now, …") after a reply that laid out what
/// it could do. One to three words, all the content words of which the
/// reply used.
fn echoes_offer(first: &str, previous_reply: &str) -> bool {
    if previous_reply.is_empty() || first.ends_with('?') {
        return false;
    }
    let clause = first.split([',', ';', ':']).next().unwrap_or("");
    let words = plain_tokens(clause);
    if words.is_empty() || words.len() > 3 {
        return false;
    }
    let reply = previous_reply.to_lowercase();
    let mut content = words
        .iter()
        .filter(|w| w.chars().count() >= 3 && !lexicon::is_closed_class(w))
        .peekable();
    content.peek().is_some()
        && content.all(|w| {
            // "queues" answers "queue": the reply need only hold the word's start.
            let n = w.chars().count();
            let head: String = w.chars().take(n.saturating_sub(2).max(4)).collect();
            reply.match_indices(&head).any(|(at, _)| {
                !reply[..at]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            })
        })
}

/// Whether a short sentence settles a choice by the ending of its first
/// clause: "X it is", "X it is, weekly" (not "it is what it is").
fn settles_choice(sentence: &str) -> bool {
    let clause = sentence.split([',', ';']).next().unwrap_or("");
    let s = clause
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    s.split_whitespace().count() <= 8
        && CHOICE_ENDINGS.iter().any(|e| {
            // The word before names the choice: "Hexfield it is", not "what it is".
            s.strip_suffix(e).is_some_and(|head| {
                head.ends_with(' ')
                    && head
                        .split_whitespace()
                        .next_back()
                        .is_some_and(|w| !lexicon::is_closed_class(w))
            })
        })
}

/// The majority domain of the window (ties: most recent wins).
fn window_domain(window: &VecDeque<Domain>) -> Option<Domain> {
    let mut counts = [0usize; 4];
    for d in window {
        counts[Domain::ALL.iter().position(|x| x == d).unwrap_or(0)] += 1;
    }
    let max = *counts.iter().max()?;
    if max == 0 {
        return None;
    }
    window
        .iter()
        .rev()
        .find(|d| counts[Domain::ALL.iter().position(|x| x == *d).unwrap_or(0)] == max)
        .copied()
}

/// New names in the turn, each with its weight as a signal: people,
/// projects and named products count 2, files and identifiers 1.
fn new_names<K: KnownNames + ?Sized>(
    input: &GateInput<'_>,
    known: &K,
    pending: &[String],
    cfg: &GateConfig,
) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    let mut consider = |label: &str, points: u32| {
        let norm = normalize_name(label);
        if norm.chars().count() < cfg.min_entity_len
            || known.contains_name(&norm)
            || pending.contains(&norm)
        {
            return;
        }
        // A person known by full name also answers to their first name; a
        // path known in full also answers to its file name.
        let first = format!("{norm} ");
        let base = format!("/{norm}");
        if known.any_starts_or_ends(&first, &base) {
            return;
        }
        if !out.iter().any(|(o, _)| normalize_name(o) == norm) {
            out.push((label.to_owned(), points));
        }
    };
    for s in extract::sentences(input.prompt) {
        for m in extract::mentions(&s, None) {
            let points = match m.kind {
                NodeKind::File | NodeKind::Identifier => 1,
                // A person a cue vouches for (a role, a title, "X says");
                // two capitalised words alone are only a name's shape.
                NodeKind::Person if m.role.is_some() || !m.label.contains(' ') => cfg.person_points,
                _ => 2,
            };
            if m.strong || m.kind == NodeKind::Project {
                consider(&m.label, points);
            }
        }
    }
    // The assistant names many identifiers in passing; only people and
    // projects it introduces count.
    for s in extract::sentences(input.previous_reply) {
        for m in extract::mentions(&s, None) {
            if matches!(m.kind, NodeKind::Person | NodeKind::Project) {
                consider(&m.label, 2);
            }
        }
    }
    out.truncate(cfg.max_reported_entities);
    out
}

/// The names the gate already knows: node labels and aliases, normalised
/// with [`normalize_name`].
pub trait KnownNames {
    /// Whether `name` is known exactly.
    fn contains_name(&self, name: &str) -> bool;
    /// Whether some known name starts with `prefix` or ends with `suffix`.
    fn any_starts_or_ends(&self, prefix: &str, suffix: &str) -> bool;
}

impl<S: std::hash::BuildHasher> KnownNames for HashSet<String, S> {
    fn contains_name(&self, name: &str) -> bool {
        self.contains(name)
    }

    fn any_starts_or_ends(&self, prefix: &str, suffix: &str) -> bool {
        self.iter()
            .any(|k| k.starts_with(prefix) || k.ends_with(suffix))
    }
}

/// Known names borrowed from sorted lines (the session's `terms.txt`):
/// what the hook uses, since it allocates nothing per name.
#[derive(Clone, Debug, Default)]
pub struct SortedNames<'a>(Vec<&'a str>);

impl<'a> SortedNames<'a> {
    /// One normalised name per line; sorted here if the lines are not.
    pub fn from_lines(text: &'a str) -> SortedNames<'a> {
        let mut v: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        if !v.is_sorted() {
            v.sort_unstable();
        }
        v.dedup();
        SortedNames(v)
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl KnownNames for SortedNames<'_> {
    fn contains_name(&self, name: &str) -> bool {
        self.0.binary_search(&name).is_ok()
    }

    fn any_starts_or_ends(&self, prefix: &str, suffix: &str) -> bool {
        let i = self.0.partition_point(|k| *k < prefix);
        self.0.get(i).is_some_and(|k| k.starts_with(prefix))
            || self.0.iter().any(|k| k.ends_with(suffix))
    }
}

/// Builds the `known` set from names (labels and aliases).
pub fn known_set<I, S>(names: I) -> HashSet<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    names
        .into_iter()
        .map(|n| normalize_name(n.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mechanism tests below were written for a two-point bar, two
    /// quiet turns and triggers that fire at once, before dates, quantities
    /// and inferred choices; they pin those so they test the mechanism, not
    /// the tuned defaults (which the `defaults_*` tests cover).
    fn cfg() -> GateConfig {
        GateConfig {
            soft_quiet_turns: 2,
            new_entity_points: 2,
            person_points: 2,
            next_turn: false,
            dates: false,
            quantities: false,
            soft_choices: false,
            weak: Vec::new(),
            ..GateConfig::default()
        }
    }

    fn turn<'a>(prompt: &'a str, previous_reply: &'a str) -> GateInput<'a> {
        GateInput {
            prompt,
            previous_reply,
        }
    }

    #[test]
    fn defaults_wait_for_three_points_and_a_turn() {
        let known = known_set(std::iter::empty::<&str>());
        let d_cfg = GateConfig::default();
        // The first names of a session that never probed need two points;
        // they fire on the next turn, with whatever that turn says.
        let mut st = GateState::default();
        let d = decide(
            &mut st,
            &turn("Ask Quorra Vance about it", ""),
            &known,
            &d_cfg,
        );
        assert!(!d.fire, "{d:?}");
        let d = decide(&mut st, &turn("ok", ""), &known, &d_cfg);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
        // Later, two capitalised words alone (2 points) wait for company ...
        let mut st = GateState {
            probed: true,
            quiet_turns: 5,
            ..GateState::default()
        };
        let d = decide(
            &mut st,
            &turn("Ask Quorra Vance about it", ""),
            &known,
            &d_cfg,
        );
        assert!(!d.fire && !d.reason.contains("waits"), "{d:?}");
        // ... and a file beside them passes the bar, firing the turn after.
        let d = decide(&mut st, &turn("and check src/a.rs", ""), &known, &d_cfg);
        assert!(!d.fire && d.reason.contains("waits a turn"), "{d:?}");
        let d = decide(&mut st, &turn("thanks", ""), &known, &d_cfg);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
        // A person a role vouches for is news on their own.
        let mut st = GateState {
            probed: true,
            quiet_turns: 5,
            ..GateState::default()
        };
        let d = decide(
            &mut st,
            &turn("Brannoc is our new release manager.", ""),
            &known,
            &d_cfg,
        );
        assert!(d.reason.contains("3 points"), "{d:?}");
        let d = decide(&mut st, &turn("ok", ""), &known, &d_cfg);
        assert!(d.triggers.contains(&Trigger::NewEntity), "{d:?}");
    }

    /// Runs prompts through the default gate; returns the turns (1-based)
    /// that fired.
    fn fired_turns(prompts: &[&str]) -> Vec<usize> {
        let known = known_set(std::iter::empty::<&str>());
        let mut st = GateState {
            probed: true,
            quiet_turns: 3,
            ..GateState::default()
        };
        prompts
            .iter()
            .enumerate()
            .filter(|(_, p)| decide(&mut st, &turn(p, ""), &known, &GateConfig::default()).fire)
            .map(|(i, _)| i + 1)
            .collect()
    }

    #[test]
    fn defaults_pair_a_turn_with_the_next() {
        let decision = "We decided to drop the beta flag.";
        let rule = "Never rebase the shared branch, please.";
        let quiet = "ok run it again";
        // A decision waits a turn: the probe reads it with the turn after.
        assert_eq!(fired_turns(&[decision, quiet, quiet]), vec![2]);
        // Two turns in a row with something to keep: one probe for both.
        assert_eq!(fired_turns(&[rule, decision, quiet, quiet]), vec![2]);
        // Three in a row: the third waits for the fourth.
        assert_eq!(
            fired_turns(&[rule, decision, rule, quiet, quiet]),
            vec![2, 4]
        );
    }

    #[test]
    fn weak_evidence_needs_company() {
        let quantity = "It finished in 85 seconds.";
        let rule = "Never rebase the shared branch, please.";
        let quiet = "ok run it again";
        // Alone, a bare quantity is dropped after a turn ...
        assert_eq!(fired_turns(&[quantity, quiet, quiet]), Vec::<usize>::new());
        // ... with other evidence on the next turn it fires there ...
        assert_eq!(fired_turns(&[quantity, rule, quiet]), vec![2]);
        // ... and two kinds of weak evidence on one turn are company enough.
        assert_eq!(
            fired_turns(&["Snapshots 21 days, fine.", quiet, quiet]),
            vec![2]
        );
        // Which inferred signals are weak is configurable.
        let known = known_set(std::iter::empty::<&str>());
        let strong_quantities = GateConfig {
            weak: Vec::new(),
            ..GateConfig::default()
        };
        let mut st = GateState {
            probed: true,
            quiet_turns: 3,
            ..GateState::default()
        };
        decide(&mut st, &turn(quantity, ""), &known, &strong_quantities);
        let d = decide(&mut st, &turn(quiet, ""), &known, &strong_quantities);
        assert_eq!(d.triggers, vec![Trigger::Memory], "{d:?}");
    }

    #[test]
    fn new_signals_table() {
        let offer = "A hosted bucket with versioning is the cheap one; a managed \
                     workspace adds remote runs and history.";
        // (prompt, previous reply, the reason it must or must not give)
        let table: &[(&str, &str, &str, bool)] = &[
            ("The review is due the 3rd.", "", "a date", true),
            ("Marisol says it lands wednesday.", "", "a date", true),
            ("We tag it March 9 if nothing breaks.", "", "a date", true),
            ("Freeze starts 2027-03-02.", "", "a date", true),
            ("Anything open before the 3rd?", "", "a date", false),
            ("Gardening tomorrow, finally.", "", "a date", false),
            ("May I ask something?", "", "a date", false),
            ("Limit the worker to 6 threads.", "", "a quantity", true),
            ("The quota is 75 now.", "", "a quantity", true),
            ("250 mb at most per upload.", "", "a quantity", true),
            ("Batches of at most 40, please.", "", "a quantity", true),
            ("Poll every 45s.", "", "a quantity", true),
            ("Kick it off at 18:45 sharp.", "", "a quantity", true),
            ("That plan is 900/week.", "", "a quantity", true),
            ("My old 2016 tablet died.", "", "a quantity", false),
            ("Pin it to `4.5.6` please.", "", "a quantity", false),
            ("Can it take 12 calls per second?", "", "a quantity", false),
            (
                "found the lease. its £1,540 not £1,450, I swapped the numbers.",
                "",
                "a value corrected",
                true,
            ),
            ("the ratio is 8 not 10 here.", "", "a value corrected", true),
            ("it is not 8, ok?", "", "a value corrected", false),
            (
                "Fine, keep the old parser.",
                "",
                "keeps or settles a choice",
                true,
            ),
            (
                "The old parser stays, restyle the rest.",
                "",
                "keeps or settles a choice",
                true,
            ),
            // Seen whole now: the extractor reads "X it is" as a choice.
            ("Hexfield it is.", "", "decision language", true),
            ("Keep?", "", "keeps or settles a choice", false),
            (
                "It is what it is, I guess we wait.",
                "",
                "keeps or settles a choice",
                false,
            ),
            (
                "ok, go ahead like that.",
                "The bundle is slow. My suggestion: move the charts to Quorrakit sprites.",
                "goes ahead with a proposal",
                true,
            ),
            (
                "ok, go ahead like that.",
                "Quorrakit starts on port 7007.",
                "goes ahead with a proposal",
                false,
            ),
            (
                "What is the command now for the cache?",
                "",
                "asks for a command",
                true,
            ),
            (
                "how do i run it on the server again",
                "",
                "asks for a command",
                true,
            ),
            ("Did the command finish?", "", "asks for a command", false),
            ("Nice, ship it.", "", "accepts the reply", true),
            (
                "Makes sense, so yes, go for it. Then the docs.",
                "",
                "accepts the reply",
                true,
            ),
            ("The second one, fine.", "", "accepts the reply", true),
            (
                "I want to do it myself next week, then review.",
                "",
                "accepts the reply",
                false,
            ),
            ("Bucket.", offer, "answers with the reply's words", true),
            // An option the reply named, endorsed ("X for now"): picked, hard.
            (
                "Workspaces for now, the team knows them.",
                offer,
                "picks an option",
                true,
            ),
            ("Bucket.", "", "answers with the reply's words", false),
            (
                "Lunch time.",
                offer,
                "answers with the reply's words",
                false,
            ),
            (
                "Buckets or workspaces, which is cheaper?",
                offer,
                "answers with the reply's words",
                false,
            ),
        ];
        let known = known_set(std::iter::empty::<&str>());
        for (prompt, reply, reason, want) in table {
            let mut st = GateState {
                probed: true,
                quiet_turns: 3,
                ..GateState::default()
            };
            let d = decide(
                &mut st,
                &turn(prompt, reply),
                &known,
                &GateConfig::default(),
            );
            assert_eq!(d.reason.contains(reason), *want, "{prompt:?}: {}", d.reason);
        }
    }

    #[test]
    fn a_picked_option_is_a_decision() {
        let known = known_set(std::iter::empty::<&str>());
        let reply = "Do you want the hosted bucket or the managed workspace?";
        let mut st = GateState {
            probed: true,
            quiet_turns: 3,
            ..GateState::default()
        };
        let d = decide(&mut st, &turn("Hosted bucket.", reply), &known, &cfg());
        assert_eq!(d.triggers, vec![Trigger::Decision], "{d:?}");
        assert!(d.reason.contains("picks an option"), "{}", d.reason);
    }

    #[test]
    fn a_curly_apostrophe_reads_as_a_plain_one() {
        let quiet = || GateState {
            probed: true,
            quiet_turns: 3,
            ..GateState::default()
        };
        let plain = run(&mut quiet(), "we'll go with the hosted bucket", &[]);
        assert!(plain.triggers.contains(&Trigger::Decision), "{plain:?}");
        let curly = run(&mut quiet(), "we\u{2019}ll go with the hosted bucket", &[]);
        assert_eq!(curly.triggers, plain.triggers, "{curly:?}");
    }

    fn run(state: &mut GateState, prompt: &str, known: &[&str]) -> GateDecision {
        let known = known_set(known.iter().copied());
        decide(
            state,
            &GateInput {
                prompt,
                previous_reply: "",
            },
            &known,
            &cfg(),
        )
    }

    #[test]
    fn each_trigger_table() {
        let table: &[(&str, &[&str], Option<Trigger>)] = &[
            (
                "Can you look at src/billing/invoice.rs and src/billing/money.rs?",
                &[],
                Some(Trigger::NewEntity),
            ),
            (
                "Can you look at src/billing/invoice.rs?",
                &["src/billing/invoice.rs"],
                None,
            ),
            ("Ask Ilsa Voss to review it", &[], Some(Trigger::NewEntity)),
            ("Ask Ilsa to review it", &["Ilsa Voss"], None),
            (
                "Let's go with option two then.",
                &[],
                Some(Trigger::Decision),
            ),
            (
                "We decided to ship it on Monday.",
                &[],
                Some(Trigger::Decision),
            ),
            (
                "Actually, the limit is 5, not 3.",
                &[],
                Some(Trigger::Correction),
            ),
            (
                "No, that's wrong, revert it.",
                &[],
                Some(Trigger::Correction),
            ),
            ("run the tests again please", &[], None),
            // News relayed from someone the session knows.
            (
                "ok so oskar says the export can wait",
                &["oskar"],
                Some(Trigger::Memory),
            ),
            (
                "Brenna's emailed back, all good",
                &["brenna"],
                Some(Trigger::Memory),
            ),
            ("ok so the doc says the export can wait", &["oskar"], None),
            (
                "Never force-push to main, by the way.",
                &[],
                Some(Trigger::Memory),
            ),
        ];
        for (prompt, known, want) in table {
            let mut st = GateState::default();
            let d = run(&mut st, prompt, known);
            match want {
                Some(t) => assert!(d.triggers.contains(t), "{prompt:?}: {d:?}"),
                None => assert!(!d.fire, "{prompt:?} fired: {d:?}"),
            }
        }
    }

    #[test]
    fn domain_shift_fires_on_change() {
        let mut st = GateState::default();
        for _ in 0..3 {
            run(
                &mut st,
                "fix the failing test in the handler and the compile error",
                &[],
            );
        }
        let d = run(
            &mut st,
            "I prefer short answers, I skim everything; my style, my habit: keep it brief",
            &[],
        );
        assert!(d.triggers.contains(&Trigger::DomainShift), "{d:?}");
    }

    #[test]
    fn dead_mans_switch_fires_on_the_ninth_quiet_turn() {
        let mut st = GateState::default();
        for i in 1..=8 {
            let d = run(&mut st, "ok run it again", &[]);
            assert!(!d.fire, "turn {i} fired: {d:?}");
        }
        let d = run(&mut st, "ok run it again", &[]);
        assert_eq!(d.triggers, vec![Trigger::DeadMansSwitch]);
        let d = run(&mut st, "ok run it again", &[]);
        assert!(!d.fire);
    }

    #[test]
    fn soft_triggers_right_after_a_probe_are_deferred_not_lost() {
        let mut st = GateState::default();
        let d = run(&mut st, "We decided to ship on Monday.", &[]);
        assert!(d.fire);
        let d = run(&mut st, "Look at src/billing/invoice.rs with Stripe", &[]);
        assert!(!d.fire, "{d:?}");
        assert!(d.reason.contains("deferred"), "{}", d.reason);
        let d = run(&mut st, "ok", &[]);
        assert!(!d.fire, "{d:?}");
        let d = run(&mut st, "ok", &[]);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
        assert!(d.reason.contains("src/billing/invoice.rs"), "{}", d.reason);
    }

    #[test]
    fn one_new_file_waits_for_company() {
        let mut st = GateState {
            probed: true,
            quiet_turns: 5,
            ..GateState::default()
        };
        let d = run(&mut st, "open src/a.rs", &[]);
        assert!(!d.fire, "{d:?}");
        let d = run(&mut st, "and src/b.rs", &[]);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
    }

    #[test]
    fn quiet_reason_is_recorded() {
        let mut st = GateState::default();
        let d = run(&mut st, "ok", &[]);
        assert!(d.reason.contains("quiet"), "{}", d.reason);
    }

    #[test]
    fn sorted_names_answer_like_the_hash_set() {
        let names = [
            "ilsa voss",
            "src/billing/invoice.rs",
            "mailvane",
            "wren brandt",
            "sqlx",
        ];
        let set = known_set(names);
        let mut lines: Vec<&str> = names.to_vec();
        lines.reverse();
        let text = lines.join("\n");
        let sorted = SortedNames::from_lines(&text);
        assert_eq!(sorted.len(), 5);
        for (name, first, base) in [
            ("ilsa", "ilsa ", "/ilsa"),
            ("invoice.rs", "invoice.rs ", "/invoice.rs"),
            ("mailvane", "mailvane ", "/mailvane"),
            ("postgres", "postgres ", "/postgres"),
            ("wren", "wren ", "/wren"),
        ] {
            assert_eq!(
                sorted.contains_name(name),
                set.contains_name(name),
                "{name}"
            );
            assert_eq!(
                sorted.any_starts_or_ends(first, base),
                set.any_starts_or_ends(first, base),
                "{name}"
            );
        }
        for prompt in [
            "Ask Ilsa to look at invoice.rs",
            "Use Postgres with sqlx",
            "Wren Brandt wants it Friday",
        ] {
            let a = decide(
                &mut GateState::default(),
                &GateInput {
                    prompt,
                    previous_reply: "",
                },
                &set,
                &cfg(),
            );
            let b = decide(
                &mut GateState::default(),
                &GateInput {
                    prompt,
                    previous_reply: "",
                },
                &sorted,
                &cfg(),
            );
            assert_eq!(a, b, "{prompt}");
        }
    }
}
