//! `rollgraph eval DIR`: the quality benchmark over a labelled corpus.
//!
//! Every `NAME.jsonl` with a `NAME.labels.json` beside it (the format is in
//! `tests/fixtures/corpus/README.md`) is replayed through the real pipeline
//! (gate → probe → patch → decay → render) in a private state directory, and
//! the final injection and graph are scored against the labels:
//!
//! - **recall**: share of `must_show` terms in the final injection;
//! - **superseded**: share of changed decisions shown as "new (was: old)";
//! - **stale**: superseded choices shown as in force (must be 0);
//! - **people**: share of labelled people held as `person` nodes;
//! - **false people**: share of `person` nodes that are no labelled person
//!   (a company, a street or a tool typed as a person), where the labels
//!   name people at all;
//! - **junk**: share of entity-like nodes whose label is junk (a labelled
//!   trap, a month, weekday, title or interjection, a bare number);
//! - **probes/60** and **gate recall**: a probe within one turn of each
//!   labelled memorable turn;
//! - **answers**: share of questions whose answer terms all appear in the
//!   injection.
//!
//! And retrieval, per question, at the same token budget (800 cl100k tokens
//! by default, `--budget`): the context `memory_query` returns against two
//! baselines built here, **recency** (the newest turns that fit) and
//! **BM25** over the raw turns (the same tokenizer and BM25 as the search,
//! greedily packed in rank order, the last turn cut to the room left). Each
//! reports answer-in-context (every answer term present) and answer-word
//! recall (the share of answer terms present).
//!
//! The same comparison is then run **pooled**: every transcript's memory
//! searched as one (`query --scope all` over many projects), against BM25
//! over every transcript's raw turns, so each question's answer must be
//! found among everyone's turns. One session's turns mostly fit a budget
//! of 800 tokens, and BM25 over them finds nearly every answer; the pooled
//! rows are where a memory has to earn its keep. (The corpus and the
//! MemoryBank chats are pooled apart; the embedding model is left out of
//! the pooled rows.)
//!
//! Nothing here is timed; it measures what the memory knows.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use rollgraph_engine::extract::lexicon;
use rollgraph_engine::graph::{Graph, NodeKind, normalize_name};
use rollgraph_engine::plain;
use rollgraph_engine::probe::Probe;
use rollgraph_engine::render::count_tokens;
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use rollgraph_engine::transcript::Transcript;
use rollgraph_engine::{Config, episodes, search};

use crate::common::{home_and_config, out, out_json};

/// Arguments of `rollgraph eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The corpus folder (`NAME.jsonl` + `NAME.labels.json` pairs).
    pub dir: PathBuf,
    /// Also score the MemoryBank chats in this folder (`memory_bank_en.json`),
    /// with the question labels of `--memorybank-labels`.
    #[arg(long)]
    pub memorybank: Option<PathBuf>,
    /// The MemoryBank question labels.
    #[arg(long, default_value = "tests/fixtures/memorybank/labels.jsonl")]
    pub memorybank_labels: PathBuf,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Use the configured probe (the LLM when one is set up) instead of the embedded heuristic one.
    #[arg(long)]
    pub configured_probe: bool,
    /// Token budget of the retrieval comparison (query, BM25, recency).
    #[arg(long, default_value_t = rollgraph_engine::search::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Print each transcript's final injection and what it missed.
    #[arg(long, short)]
    pub verbose: bool,
    /// With --verbose: also print the query's context (and BM25's) for each
    /// question the query missed.
    #[arg(long, requires = "verbose")]
    pub contexts: bool,
    /// Rank with the embedding model too (when provisioned), a bonus by
    /// reciprocal rank as the MCP server and `rollgraph query` give it; the
    /// query column is then "query+embed".
    #[arg(long)]
    pub embed: bool,
}

/// The labels of one transcript.
#[derive(Debug, Default, Deserialize)]
pub struct Labels {
    /// One line about the session (shown with --verbose).
    #[serde(default)]
    pub description: String,
    /// Terms the final injection must show.
    #[serde(default)]
    pub must_show: Vec<String>,
    /// Changed decisions.
    #[serde(default)]
    pub superseded: Vec<Superseded>,
    /// People named.
    #[serde(default)]
    pub people: Vec<Person>,
    /// Questions and answers.
    #[serde(default)]
    pub questions: Vec<Question>,
    /// Turns that carry something to remember.
    #[serde(default)]
    pub memorable_turns: Vec<u32>,
    /// Words that must never become entities.
    #[serde(default)]
    pub not_entities: Vec<String>,
}

/// A changed decision.
#[derive(Debug, Deserialize)]
pub struct Superseded {
    /// The choice in force.
    pub new: String,
    /// The choice it replaced.
    pub old: String,
}

/// A labelled person.
#[derive(Debug, Deserialize)]
pub struct Person {
    /// How the person is first named.
    pub name: String,
}

/// A labelled question.
#[derive(Debug, Deserialize, Clone)]
pub struct Question {
    /// The question.
    pub q: String,
    /// Terms the answer must contain (`a|b`: either).
    pub answer: Vec<String>,
}

/// Scores of one transcript (or the sum of all).
#[derive(Debug, Default, Serialize, Clone)]
pub struct Score {
    /// Transcript name.
    pub name: String,
    /// Turns replayed.
    pub turns: u32,
    /// Probes run.
    pub probes: u32,
    /// must_show terms found / labelled.
    pub recall: (u32, u32),
    /// Changed decisions shown as "new (was: old)" / labelled.
    pub superseded: (u32, u32),
    /// Superseded choices shown in force.
    pub stale: u32,
    /// People held as person nodes / labelled.
    pub people: (u32, u32),
    /// Person nodes that are no labelled person / person nodes.
    pub false_people: (u32, u32),
    /// Junk entity nodes / entity nodes.
    pub junk: (u32, u32),
    /// Memorable turns with a probe within one turn / labelled.
    pub gate: (u32, u32),
    /// Questions answered by the injection / labelled.
    pub answers: (u32, u32),
    /// Retrieval at the budget: questions whose answer is all in the
    /// context of `query`, of BM25 over raw turns, of the newest turns.
    pub query_hits: (u32, u32),
    /// See [`Score::query_hits`].
    pub bm25_hits: (u32, u32),
    /// See [`Score::query_hits`].
    pub recent_hits: (u32, u32),
    /// Answer terms found in each context / asked.
    pub query_words: (u32, u32),
    /// See [`Score::query_words`].
    pub bm25_words: (u32, u32),
    /// See [`Score::query_words`].
    pub recent_words: (u32, u32),
    /// Tokens of the query contexts (their sum).
    pub query_tokens: u64,
    /// What was missed, for --verbose.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missed: Vec<String>,
}

impl Score {
    fn add(&mut self, o: &Score) {
        self.turns += o.turns;
        self.probes += o.probes;
        let add = |a: &mut (u32, u32), b: (u32, u32)| {
            a.0 += b.0;
            a.1 += b.1;
        };
        add(&mut self.recall, o.recall);
        add(&mut self.superseded, o.superseded);
        self.stale += o.stale;
        add(&mut self.people, o.people);
        add(&mut self.false_people, o.false_people);
        add(&mut self.junk, o.junk);
        add(&mut self.gate, o.gate);
        add(&mut self.answers, o.answers);
        add(&mut self.query_hits, o.query_hits);
        add(&mut self.bm25_hits, o.bm25_hits);
        add(&mut self.recent_hits, o.recent_hits);
        add(&mut self.query_words, o.query_words);
        add(&mut self.bm25_words, o.bm25_words);
        add(&mut self.recent_words, o.recent_words);
        self.query_tokens += o.query_tokens;
    }
}

/// Whether `text` holds `term` (`a|b`: either), case-insensitively, and
/// whether or not a space parts a number from its unit ("100 KB" is
/// "100kb").
pub fn holds(text: &str, term: &str) -> bool {
    let t = unit_spacing(&text.to_lowercase());
    term.split('|')
        .map(|a| unit_spacing(&a.trim().to_lowercase()))
        .any(|a| !a.is_empty() && t.contains(&a))
}

/// `s` without the spaces between a digit and the letter after it.
fn unit_spacing(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c.is_ascii_digit() {
            while chars.peek() == Some(&' ') {
                let mut ahead = chars.clone();
                ahead.next();
                if ahead.peek().is_some_and(|n| n.is_alphabetic()) {
                    chars.next();
                } else {
                    break;
                }
            }
        }
    }
    out
}

/// The lines of the render's sections whose titles hold one of `sections`.
fn section_lines<'r>(render: &'r str, sections: &[&str]) -> Vec<&'r str> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in render.lines() {
        if line.starts_with("## ") {
            let l = line.to_lowercase();
            inside = sections.iter().any(|s| l.contains(s));
            continue;
        }
        if inside && line.starts_with("- ") {
            out.push(line);
        }
    }
    out
}

/// A decision line with its "(was: …)" history cut off.
fn in_force_part(line: &str) -> &str {
    line.find("(was:").map(|p| &line[..p]).unwrap_or(line)
}

/// The history part of a decision line.
fn history_part(line: &str) -> &str {
    line.find("(was:").map(|p| &line[p..]).unwrap_or("")
}

/// Why a changed decision was not shown as "new (was: old)": the graph
/// never held the new side, held it without the old one superseded by it,
/// or held the pair and the render left it out.
fn pair_diagnosis(graph: &Graph, new: &str, old: &str) -> String {
    let holders: Vec<&rollgraph_engine::graph::Node> = graph
        .nodes_unordered()
        .filter(|n| holds(&n.label, new))
        .collect();
    let Some(first) = holders.first() else {
        return "no node label holds the new side".into();
    };
    // The old side may be further down the chain (A → B → C).
    let paired = holders.iter().find(|n| {
        let mut at = graph.supersedes(&n.id);
        let mut seen = vec![n.id.clone()];
        while let Some(o) = at.pop() {
            if holds(&o.label, old) {
                return true;
            }
            if !seen.contains(&o.id) {
                seen.push(o.id.clone());
                at.extend(graph.supersedes(&o.id));
            }
        }
        false
    });
    match paired {
        Some(n) => format!(
            "the pair is held, the render left it out: {} {:?}",
            n.kind.as_str(),
            n.label
        ),
        None if graph.nodes_unordered().any(|n| holds(&n.label, old)) => format!(
            "both sides held, no supersedes edge: {} {:?}",
            first.kind.as_str(),
            first.label
        ),
        None => format!(
            "the new side held, the old never was: {} {:?}",
            first.kind.as_str(),
            first.label
        ),
    }
}

/// Scores a finished replay against its labels.
pub fn score(
    name: &str,
    labels: &Labels,
    render: &str,
    graph: &Graph,
    turns: u32,
    fired: &[u32],
) -> Score {
    let mut s = Score {
        name: name.to_owned(),
        turns,
        probes: fired.len() as u32,
        ..Score::default()
    };
    for term in &labels.must_show {
        s.recall.1 += 1;
        if holds(render, term) {
            s.recall.0 += 1;
        } else {
            // Known but not shown (the render chose), or never extracted?
            let known = graph
                .nodes_unordered()
                .filter(|n| holds(&n.label, term))
                .map(|n| format!("{} {:?}", n.kind.as_str(), n.label))
                .next();
            s.missed.push(match known {
                Some(k) => {
                    format!("must_show: {term} (a node holds it, the render left it out: {k})")
                }
                None => format!("must_show: {term} (no node label holds it)"),
            });
        }
    }
    // A changed plan may be held as a fact with history ("move: July 24
    // (was: move: July 17)"): it counts as shown. Only decision lines can
    // show an old choice in force; a fact may name it ("X: £6,200").
    let lines = section_lines(render, &["decision"]);
    let changed = section_lines(render, &["decision", "facts"]);
    for p in &labels.superseded {
        s.superseded.1 += 1;
        let shown = changed
            .iter()
            .any(|l| holds(in_force_part(l), &p.new) && holds(history_part(l), &p.old));
        if shown {
            s.superseded.0 += 1;
        } else {
            s.missed.push(format!(
                "superseded: {} (was: {}) ({})",
                p.new,
                p.old,
                pair_diagnosis(graph, &p.new, &p.old)
            ));
        }
        // "Drop X" says X is out, not in force.
        let stale = lines
            .iter()
            .filter(|l| !l.starts_with("- Drop "))
            .filter(|l| holds(in_force_part(l), &p.old) && !holds(in_force_part(l), &p.new))
            .count() as u32;
        if stale > 0 {
            s.missed.push(format!("stale in force: {}", p.old));
        }
        s.stale += stale;
    }
    for person in &labels.people {
        s.people.1 += 1;
        // "Dr Imelda Fairweather" (or "Dr. …") is Imelda Fairweather: a
        // title before a name is no part of it.
        let want = normalize_name(&person.name);
        let want = want
            .split(' ')
            .skip_while(|w| rollgraph_engine::extract::lexicon::is_title(w))
            .collect::<Vec<_>>()
            .join(" ");
        let first = want.split(' ').next().unwrap_or("").to_owned();
        let held = graph.nodes_unordered().any(|n| {
            n.kind == NodeKind::Person
                && n.names().any(|nm| {
                    nm == want || nm == first || nm.split(' ').next() == Some(first.as_str())
                })
        });
        if held {
            s.people.0 += 1;
        } else {
            s.missed.push(format!("person: {}", person.name));
        }
    }
    // Person nodes that are no one the labels name: a word of a node's name
    // (a title aside) is a word of a labelled name, or the node is false.
    if !labels.people.is_empty() {
        let words_of = |name: &str| -> Vec<String> {
            normalize_name(name)
                .split(' ')
                .filter(|w| !w.is_empty() && !lexicon::TITLES.contains(w))
                .map(str::to_owned)
                .collect()
        };
        let labelled: Vec<String> = labels
            .people
            .iter()
            .flat_map(|p| words_of(&p.name))
            .collect();
        for n in graph
            .nodes_unordered()
            .filter(|n| n.kind == NodeKind::Person)
        {
            s.false_people.1 += 1;
            if !n
                .names()
                .any(|nm| words_of(&nm).iter().any(|w| labelled.contains(w)))
            {
                s.false_people.0 += 1;
                s.missed.push(format!("unlabelled person: {}", n.label));
            }
        }
    }
    let traps: Vec<String> = labels
        .not_entities
        .iter()
        .map(|t| normalize_name(t))
        .collect();
    for n in graph.nodes_unordered() {
        if !matches!(
            n.kind,
            NodeKind::Entity | NodeKind::Person | NodeKind::Project
        ) {
            continue;
        }
        s.junk.1 += 1;
        let label = normalize_name(&n.label);
        // A labelled person named like a month ("Jun") is no junk.
        let person = n.kind == NodeKind::Person
            && labels
                .people
                .iter()
                .any(|p| normalize_name(&p.name) == label);
        let junk = traps.contains(&label)
            || (lexicon::is_closed_class(&label) && !person)
            || label.chars().count() < 2
            || label.chars().all(|c| c.is_ascii_digit() || c == ' ');
        if junk {
            s.junk.0 += 1;
            s.missed.push(format!("junk node: {}", n.label));
        }
    }
    for m in &labels.memorable_turns {
        s.gate.1 += 1;
        if fired.iter().any(|f| *f == *m || *f == m + 1) {
            s.gate.0 += 1;
        } else {
            s.missed
                .push(format!("gate: no probe at turn {m} or {}", m + 1));
        }
    }
    for q in &labels.questions {
        s.answers.1 += 1;
        if !q.answer.is_empty() && q.answer.iter().all(|a| holds(render, a)) {
            s.answers.0 += 1;
        } else {
            s.missed
                .push(format!("question: {} ({})", q.q, q.answer.join(", ")));
        }
    }
    s
}

/// Replays one transcript into a fresh state directory and scores it.
fn run_one(
    path: &Path,
    labels: &Labels,
    config: &Config,
    configured: bool,
    ask: &Ask,
    sem: &mut Option<rollgraph_engine::semantic::Semantic>,
) -> Result<(Score, Pooled)> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("session")
        .to_owned();
    let t = plain::read_any(path)?;
    run_transcript(&name, &t, labels, config, configured, ask, sem)
}

/// MemoryBank's chats as plain transcripts, one per user, with the labelled
/// questions as labels (answers only: the data labels nothing else).
fn memorybank(dir: &Path, labels_path: &Path) -> Result<Vec<(String, Transcript, Labels)>> {
    let data = dir.join("memory_bank_en.json");
    let text =
        std::fs::read_to_string(&data).with_context(|| format!("reading {}", data.display()))?;
    let all: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", data.display()))?;
    let ltext = std::fs::read_to_string(labels_path)
        .with_context(|| format!("reading {}", labels_path.display()))?;
    let mut questions: Vec<(String, Question)> = Vec::new();
    for (i, line) in ltext
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}", labels_path.display(), i + 1))?;
        let user = v["user"].as_str().unwrap_or("").trim().to_owned();
        let q: Question = serde_json::from_value(v)
            .with_context(|| format!("{}:{}", labels_path.display(), i + 1))?;
        if !q.answer.is_empty() {
            questions.push((user, q));
        }
    }
    let mut out = Vec::new();
    let Some(users) = all.as_object() else {
        bail!("{}: not an object of users", data.display());
    };
    for (key, u) in users {
        let name = key.trim().to_owned();
        let mut lines = String::new();
        let Some(history) = u["history"].as_object() else {
            continue;
        };
        let mut days: Vec<&String> = history.keys().collect();
        days.sort();
        for day in days {
            for (k, turn) in history[day].as_array().into_iter().flatten().enumerate() {
                let ts = format!("{day}T{:02}:{:02}:00Z", 9 + k / 60, k % 60);
                let line = serde_json::json!({
                    "ts": ts,
                    "user": turn["query"].as_str().unwrap_or(""),
                    "assistant": turn["response"].as_str().unwrap_or(""),
                });
                lines.push_str(&line.to_string());
                lines.push('\n');
            }
        }
        let labels = Labels {
            questions: questions
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, q)| Question {
                    q: q.q.clone(),
                    answer: q.answer.clone(),
                })
                .collect(),
            ..Labels::default()
        };
        out.push((
            format!("mb-{}", name.to_lowercase().replace(' ', "-")),
            plain::parse_plain(&lines),
            labels,
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// One transcript as the pooled comparison keeps it.
struct Pooled {
    name: String,
    graph: Graph,
    episodes: Vec<episodes::Episode>,
    /// The raw turns as the baselines see them, with when each was said.
    turns: Vec<(Option<chrono::DateTime<chrono::Utc>>, String)>,
    questions: Vec<Question>,
    now: chrono::DateTime<chrono::Utc>,
}

fn run_transcript(
    name: &str,
    t: &Transcript,
    labels: &Labels,
    config: &Config,
    configured: bool,
    ask: &Ask,
    sem: &mut Option<rollgraph_engine::semantic::Semantic>,
) -> Result<(Score, Pooled)> {
    let name = name.to_owned();
    let tmp = tempfile::tempdir().context("creating a scratch state directory")?;
    let home = Home::at(tmp.path());
    let mut config = config.clone();
    config.embed.enabled = false;
    let mut session = Session::open(&home, &name, config.clone())?;
    session.state.cwd = t.cwd.clone();
    let mut probe: Box<dyn Probe> = if configured {
        rollgraph_engine::llm::probe_from_config(&config, &home)
    } else {
        Box::new(rollgraph_engine::probe::HeuristicProbe::new(
            config.probe.clone(),
        ))
    };
    let fired = crate::replay::drive(&mut session, t, probe.as_mut(), false, false)?;
    let now = t.ended_at();
    // The turns the gate held back at the end are read as the session's end
    // would read them (as `reconcile --transcript` does).
    if !session.state.pending.is_empty() {
        session.cycle(probe.as_mut(), now)?;
    }
    let render = session.render(now).text;
    let turns = t.turns().count() as u32;
    let mut s = score(&name, labels, &render, &session.graph, turns, &fired);
    // What was said, read once: for this session's questions and the
    // pooled ones.
    let said: Vec<episodes::Episode> = episodes::read(&session.path(episodes::FILE))?
        .episodes
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    retrieval(&mut s, &session, said.clone(), t, labels, ask, sem);
    s.missed.push(format!("--- final injection ---\n{render}"));
    let pool = Pooled {
        name,
        episodes: said,
        graph: session.graph,
        turns: t.turns().map(|x| (x.timestamp, turn_text(x))).collect(),
        questions: labels.questions.clone(),
        now,
    };
    Ok((s, pool))
}

/// Every transcript's memory searched as one against BM25 (and recency)
/// over all their raw turns, at the same budget (see the module's text).
fn pooled(name: &str, pools: &[Pooled], ask: &Ask) -> Score {
    let mut s = Score {
        name: name.into(),
        ..Score::default()
    };
    let Some(now) = pools.iter().map(|p| p.now).max() else {
        return s;
    };
    let idx = search::SearchIndex::build(search::Sources {
        graphs: pools
            .iter()
            .map(|p| search::GraphSource {
                name: p.name.clone(),
                graph: &p.graph,
            })
            .collect(),
        episodes: pools
            .iter()
            .flat_map(|p| p.episodes.iter().cloned())
            .collect(),
    });
    let turns: Vec<&(Option<chrono::DateTime<chrono::Utc>>, String)> =
        pools.iter().flat_map(|p| &p.turns).collect();
    let docs: Vec<String> = turns.iter().map(|t| t.1.clone()).collect();
    let mut by_time: Vec<usize> = (0..docs.len()).collect();
    by_time.sort_by_key(|&i| std::cmp::Reverse(turns[i].0));
    let base = Baselines::new(&docs, by_time.into_iter(), ask.budget);
    let mut opts = search::SearchOptions::at(now);
    opts.budget = ask.budget;
    for p in pools {
        for q in &p.questions {
            let a = idx.search(&q.q, &opts, None);
            compare(&mut s, q, &a, &base, ask, Some(&p.name));
        }
    }
    s
}

/// The two baselines over raw turns, built once for many questions: BM25
/// over `docs` and the newest of them packed to the budget.
struct Baselines<'d> {
    docs: &'d [String],
    bm: search::DocIndex,
    recent: String,
}

impl<'d> Baselines<'d> {
    /// `newest`: the documents' positions, newest first.
    fn new(docs: &'d [String], newest: impl Iterator<Item = usize>, budget: usize) -> Self {
        let newest: Vec<&str> = newest.map(|i| docs[i].as_str()).collect();
        Baselines {
            docs,
            bm: search::DocIndex::new(docs),
            recent: pack_in_order(&newest, budget),
        }
    }
}

/// Scores one question's three contexts at the ask's budget: the query's
/// answer `a`, BM25's documents packed in rank order, and the newest
/// turns. What the query missed is kept for --verbose, named with its
/// transcript `from` when pooled.
fn compare(
    s: &mut Score,
    q: &Question,
    a: &search::Answer,
    base: &Baselines<'_>,
    ask: &Ask,
    from: Option<&str>,
) {
    s.query_tokens += a.tokens as u64;
    tally(&mut s.query_hits, &mut s.query_words, &a.text, &q.answer);
    let ranked: Vec<&str> = base
        .bm
        .rank(&q.q)
        .into_iter()
        .map(|(i, _)| base.docs[i].as_str())
        .collect();
    let bm25 = pack_in_order(&ranked, ask.budget);
    tally(&mut s.bm25_hits, &mut s.bm25_words, &bm25, &q.answer);
    tally(
        &mut s.recent_hits,
        &mut s.recent_words,
        &base.recent,
        &q.answer,
    );
    let all = |c: &str| q.answer.iter().all(|x| holds(c, x));
    if !all(&a.text) {
        s.missed.push(format!(
            "query missed{}: {} ({}){}",
            from.map(|f| format!(" ({f})")).unwrap_or_default(),
            q.q,
            q.answer.join(", "),
            if all(&bm25) { " — BM25 had it" } else { "" }
        ));
        if ask.contexts {
            s.missed.push(format!(
                "--- query context ---\n{}\n--- BM25 context ---\n{bm25}\n---",
                a.text
            ));
        }
    }
}

/// One turn as a baseline sees it.
fn turn_text(t: &rollgraph_engine::transcript::Turn) -> String {
    let date = t
        .timestamp
        .map(|d| format!(", {}", d.format("%Y-%m-%d")))
        .unwrap_or_default();
    format!(
        "turn {}{date}\nuser: {}\nassistant: {}\n",
        t.index,
        t.user.trim(),
        t.assistant.trim()
    )
}

/// Packs documents, in the given order, into `budget` tokens: whole while
/// they fit, then the next one cut (by words) to the room left.
pub fn pack_in_order(docs: &[&str], budget: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for d in docs {
        let c = count_tokens(d);
        if used + c <= budget {
            out.push_str(d);
            used += c;
            continue;
        }
        let room = budget - used;
        if room >= 20 {
            let words: Vec<&str> = d.split_whitespace().collect();
            let n =
                search::most_that_fit(words.len(), |k| count_tokens(&words[..k].join(" ")) < room);
            out.push_str(&words[..n].join(" "));
        }
        break;
    }
    out
}

fn tally(hits: &mut (u32, u32), words: &mut (u32, u32), context: &str, answer: &[String]) {
    hits.1 += 1;
    let found = answer.iter().filter(|a| holds(context, a)).count() as u32;
    words.0 += found;
    words.1 += answer.len() as u32;
    if !answer.is_empty() && found == answer.len() as u32 {
        hits.0 += 1;
    }
}

/// How the retrieval comparison asks.
struct Ask {
    /// Token budget of every context.
    budget: usize,
    /// Keep the contexts of what the query missed, for --verbose.
    contexts: bool,
    /// Least similarity of a node the model ranks (`embed.explicit_threshold`).
    threshold: f32,
}

/// The retrieval comparison: `query` against BM25 over raw turns and the
/// newest turns, at one budget, for every labelled question.
fn retrieval(
    s: &mut Score,
    session: &Session,
    said: Vec<episodes::Episode>,
    t: &Transcript,
    labels: &Labels,
    ask: &Ask,
    sem: &mut Option<rollgraph_engine::semantic::Semantic>,
) {
    if labels.questions.is_empty() {
        return;
    }
    let now = t.ended_at();
    let src = search::Sources {
        graphs: vec![search::GraphSource {
            name: "session".into(),
            graph: &session.graph,
        }],
        episodes: said,
    };
    let idx = search::SearchIndex::build(src);
    let turns: Vec<String> = t.turns().map(turn_text).collect();
    let base = Baselines::new(&turns, (0..turns.len()).rev(), ask.budget);
    let mut opts = search::SearchOptions::at(now);
    opts.budget = ask.budget;
    // Each transcript's nodes are embedded afresh (ids repeat across them).
    if let Some(sem) = sem.as_mut() {
        sem.index = rollgraph_engine::semantic::VectorIndex::new();
    }
    for q in &labels.questions {
        let close = sem
            .as_mut()
            .map(|sem| search::close_nodes(sem, &session.graph, &q.q, ask.threshold));
        let a = idx.search(&q.q, &opts, close.as_deref());
        compare(s, q, &a, &base, ask, None);
    }
}

/// The corpus: every `NAME.jsonl` with labels beside it, sorted by name.
pub fn corpus(dir: &Path) -> Result<Vec<(PathBuf, Labels)>> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let lp = p.with_extension("labels.json");
        if !lp.exists() {
            continue;
        }
        let text =
            std::fs::read_to_string(&lp).with_context(|| format!("reading {}", lp.display()))?;
        let labels: Labels =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", lp.display()))?;
        out.push((p, labels));
    }
    Ok(out)
}

fn pct(x: (u32, u32)) -> String {
    if x.1 == 0 {
        "—".into()
    } else {
        format!("{:.0}%", 100.0 * x.0 as f64 / x.1 as f64)
    }
}

/// Runs `rollgraph eval`.
pub fn run(args: EvalArgs) -> Result<()> {
    let (_, config) = home_and_config()?;
    let items = corpus(&args.dir)?;
    if items.is_empty() {
        bail!(
            "no labelled transcripts in {} (want NAME.jsonl beside NAME.labels.json)",
            args.dir.display()
        );
    }
    let mut sem = if args.embed {
        let mut c = config.clone();
        c.embed.enabled = true;
        let sem = crate::common::load_semantic(&c);
        if sem.is_none() {
            bail!("--embed: the embedding model is not provisioned (run scripts/provision.sh)");
        }
        sem
    } else {
        None
    };
    let ask = Ask {
        budget: args.budget,
        contexts: args.contexts,
        threshold: config.embed.explicit_threshold,
    };
    let mut scores = Vec::new();
    let mut pools = Vec::new();
    for (path, labels) in &items {
        let (s, pool) = run_one(path, labels, &config, args.configured_probe, &ask, &mut sem)?;
        scores.push(s);
        pools.push(pool);
    }
    let mut pooled_scores = vec![pooled("pooled corpus", &pools, &ask)];
    drop(pools);
    let mut total = Score {
        name: "overall".into(),
        ..Score::default()
    };
    for s in &scores {
        total.add(s);
    }
    if let Some(dir) = &args.memorybank {
        let mut mb_total = Score {
            name: "memorybank".into(),
            ..Score::default()
        };
        let mut mb_pools = Vec::new();
        for (name, t, labels) in memorybank(dir, &args.memorybank_labels)? {
            let (s, pool) = run_transcript(
                &name,
                &t,
                &labels,
                &config,
                args.configured_probe,
                &ask,
                &mut sem,
            )?;
            mb_total.add(&s);
            scores.push(s);
            mb_pools.push(pool);
        }
        scores.push(mb_total);
        pooled_scores.push(pooled("pooled memorybank", &mb_pools, &ask));
    }
    if args.json {
        let mut all = scores.clone();
        for s in &mut all {
            s.missed.clear();
        }
        all.push(total);
        all.extend(pooled_scores.into_iter().map(|mut p| {
            p.missed.clear();
            p
        }));
        return out_json(&all);
    }
    let mut text = format!(
        "{:<24} {:>5} {:>8} {:>7} {:>6} {:>5} {:>6} {:>9} {:>6} {:>6} {:>7}\n",
        "transcript",
        "turns",
        "probes/60",
        "recall",
        "supers",
        "stale",
        "people",
        "false ppl",
        "junk",
        "gate",
        "answers"
    );
    for s in scores.iter().chain(std::iter::once(&total)) {
        text.push_str(&format!(
            "{:<24} {:>5} {:>8.1} {:>7} {:>6} {:>5} {:>6} {:>9} {:>6} {:>6} {:>7}\n",
            s.name,
            s.turns,
            if s.turns > 0 {
                s.probes as f64 * 60.0 / s.turns as f64
            } else {
                0.0
            },
            pct(s.recall),
            pct(s.superseded),
            s.stale,
            pct(s.people),
            pct(s.false_people),
            pct(s.junk),
            pct(s.gate),
            pct(s.answers),
        ));
    }
    text.push_str(&format!(
        "\nretrieval at {} tokens: answer in context (answer words)\n{:<24} {:>9} {:>15} {:>15} {:>15} {:>8}\n",
        args.budget,
        "transcript",
        "questions",
        if args.embed { "query+embed" } else { "query" },
        "bm25 turns",
        "recent turns",
        "q tokens"
    ));
    for s in scores
        .iter()
        .chain(std::iter::once(&total))
        .chain(&pooled_scores)
    {
        if s.query_hits.1 == 0 {
            continue;
        }
        let cell = |h: (u32, u32), w: (u32, u32)| format!("{} ({})", pct(h), pct(w));
        text.push_str(&format!(
            "{:<24} {:>9} {:>15} {:>15} {:>15} {:>8}\n",
            s.name,
            s.query_hits.1,
            cell(s.query_hits, s.query_words),
            cell(s.bm25_hits, s.bm25_words),
            cell(s.recent_hits, s.recent_words),
            s.query_tokens / u64::from(s.query_hits.1.max(1)),
        ));
    }
    if args.verbose {
        for s in scores.iter().chain(&pooled_scores) {
            text.push_str(&format!("\n## {}\n", s.name));
            if let Some((_, l)) = items
                .iter()
                .find(|(p, _)| p.file_stem().and_then(|x| x.to_str()) == Some(s.name.as_str()))
            {
                text.push_str(&format!("{}\n", l.description));
            }
            for m in &s.missed {
                text.push_str(&format!("{m}\n"));
            }
        }
    }
    out(text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_history_is_read_apart_from_the_choice() {
        let render = "## Decisions in force\n- Use arq for the queue (was: Use celery)\n- Use redis\n## Facts, rules and preferences\n- move: July 24 (was: move: July 17) (fact)\n## Near\n- celery\n";
        let lines = section_lines(render, &["decision"]);
        assert_eq!(lines.len(), 2);
        let changed = section_lines(render, &["decision", "facts"]);
        assert_eq!(changed.len(), 3);
        assert!(holds(history_part(changed[2]), "July 17"));
        assert!(holds(in_force_part(lines[0]), "arq"));
        assert!(!holds(in_force_part(lines[0]), "celery"));
        assert!(holds(history_part(lines[0]), "celery"));
        assert!(holds("Timeout 3 s", "3 seconds|3 s"));
        assert!(!holds("Timeout 3 s", "|"));
        // A number and its unit match with or without the space between.
        assert!(holds("threshold: 256kb (was: 100kb)", "100 KB"));
        assert!(holds("doors at 6 pm", "6pm"));
        assert!(!holds("doors at 6 pm", "16pm"));
        assert!(holds("a 3 4 split", "3 4"));
    }

    #[test]
    fn a_title_before_a_labelled_name_is_no_part_of_it() {
        rollgraph_engine::extract::lexicon::init_frequencies();
        let labels: Labels = serde_json::from_str(
            r#"{"people": [{"name": "Dr Wenna Tallis"}, {"name": "Prof Oskar Brannigan"}, {"name": "Mr. Quillon"}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut g = Graph::new();
        let at = rollgraph_engine::clock::parse_time("2026-11-02T10:00:00Z").unwrap_or_default();
        let person = |label: &str| {
            let mut n = rollgraph_engine::graph::Node::new(
                rollgraph_engine::graph::NodeId::slug(label).unwrap_or_else(|| panic!("slug")),
                label,
                rollgraph_engine::graph::Domain::Relationship,
                0.8,
                at,
            );
            n.kind = NodeKind::Person;
            n
        };
        g.upsert_node(person("Wenna Tallis"));
        // A title written with its full stop is a title too.
        g.upsert_node(person("Quillon"));
        let s = score("t", &labels, "", &g, 1, &[]);
        assert_eq!(s.people, (2, 3));
        assert_eq!(s.missed, vec!["person: Prof Oskar Brannigan".to_owned()]);
        assert_eq!(s.false_people, (0, 2));
        // A company typed as a person is counted as a false person.
        g.upsert_node(person("Greyholt Removals"));
        let s = score("t", &labels, "", &g, 1, &[]);
        assert_eq!(s.false_people, (1, 3));
        assert!(
            s.missed
                .contains(&"unlabelled person: Greyholt Removals".to_owned())
        );
    }
}
