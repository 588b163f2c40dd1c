//! The one retrieval path: what `memory_query` and `rollgraph query`
//! answer with (`memory_expand` packs to the same budget).
//!
//! A question is matched against the graph's nodes **and** what was said
//! (episode passages) in one BM25 index, so the two kinds of hit score on
//! one scale: a node's document is its label (counted twice), aliases,
//! detail and evidence sentences; a passage is a sentence or two of one
//! turn. When the embedding model is loaded, nodes close in meaning gain a
//! bounded bonus by their reciprocal rank. Matched nodes pull in their neighbours one
//! or two hops away at a decayed score. A date the question names ("on May
//! 2nd", "2026-11-03") favours what was said that day. Weight and recency
//! only break ties: they never lift a less relevant hit over a more
//! relevant one. Of a `supersedes` pair the newer side ranks first, unless
//! the question asks about the past ("what did we use before …").
//!
//! The answer carries, per hit, its label, kind, domain, detail, a few
//! evidence sentences with turn and date, and why it surfaced, and is packed
//! to a token budget (cl100k, the renderer's tokenizer) greedily by value
//! per token; what did not fit is counted in the first line and, where
//! the hits leave room, named with ids to go deeper. It is never over the
//! budget.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Datelike, NaiveDate, Utc};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::episodes::{Episode, Speaker};
use crate::extract::lexicon::WordList;
use crate::graph::{Domain, EdgeKind, Graph, Node, NodeId, NodeKind};
use crate::render::count_tokens;
use crate::text::tokenize;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// Reciprocal-rank constant of the meaning bonus.
const RRF_K: f64 = 60.0;
/// What being the node closest in meaning adds to a relevance (of the best
/// lexical match's 1).
const MEANING_WEIGHT: f64 = 0.15;
/// Smallest and largest budgets accepted (others are clamped, with a note).
pub const MIN_BUDGET: usize = 60;
/// See [`MIN_BUDGET`].
pub const MAX_BUDGET: usize = 20_000;
/// The default budget of the MCP tools and the CLI.
pub const DEFAULT_BUDGET: usize = 800;

static KIND_CUES: LazyLock<Vec<(NodeKind, String)>> = LazyLock::new(|| {
    WordList::parse(include_str!("data/kind_cues.txt"))
        .iter()
        .filter_map(|l| {
            let (kind, phrase) = l.split_once(':')?;
            let kind =
                serde_json::from_value(serde_json::Value::String(kind.trim().into())).ok()?;
            Some((kind, format!(" {} ", phrase.trim())))
        })
        .collect()
});

/// The node kinds a question asks for (from its wording).
fn kinds_asked(text: &str) -> Vec<NodeKind> {
    let padded = padded_words(text);
    let mut out: Vec<NodeKind> = Vec::new();
    for (k, phrase) in KIND_CUES.iter() {
        if padded.contains(phrase.as_str()) && !out.contains(k) {
            out.push(*k);
        }
    }
    out
}

/// A question's words, lowercase, one space between and around them, so a
/// cue phrase matches as `" {cue} "`.
fn padded_words(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!(" {} ", words.join(" "))
}

/// How much a file or identifier node's match counts.
const POINTER_FACTOR: f64 = 0.3;

/// The relevance (of the best match's 1) of a node in force of the kind a
/// question asks for that its words do not match, and how many of each
/// kind stand in so: a question in other words than what was said ("when
/// do the movers come?" of "the van is booked for the 3rd") still finds
/// the dates, choices or commands the memory holds.
const KIND_FILL: f64 = 0.4;
const KIND_FILL_NODES: usize = 4;

/// The share of a matched turn's relevance that the next turn gets when
/// the matched turn's reply ends on a question (the next turn answers it).
const FOLLOW_FACTOR: f64 = 0.9;

static WHY_CUES: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/why_cues.txt")));

/// Whether a question asks for a reason.
fn asks_why(text: &str) -> bool {
    let padded = padded_words(text);
    WHY_CUES.iter().any(|c| padded.contains(&format!(" {c} ")))
}

/// How much of a matched decision's or fact's relevance the turns it came
/// from get when the question asks why.
const REASON_FACTOR: f64 = 1.0;

static PAST_CUES: LazyLock<WordList> =
    LazyLock::new(|| WordList::parse(include_str!("data/past_cues.txt")));

/// What a query searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The session's graph and what was said in it.
    Session,
    /// The project's warm graph and episodes, with the global graph.
    Project,
    /// The session, then the project and the global store.
    #[default]
    SessionProject,
    /// The session and every warm store.
    All,
}

impl Scope {
    /// Whether the session itself is searched.
    pub fn session(self) -> bool {
        self != Scope::Project
    }

    /// Whether the project's (and the global) store is searched.
    pub fn project(self) -> bool {
        matches!(self, Scope::Project | Scope::SessionProject)
    }

    /// The name used on command lines and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Session => "session",
            Scope::Project => "project",
            Scope::SessionProject => "session-project",
            Scope::All => "all",
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Scope, String> {
        match s
            .trim()
            .to_lowercase()
            .replace(['_', '+', ' '], "-")
            .as_str()
        {
            "session" => Ok(Scope::Session),
            "project" => Ok(Scope::Project),
            "session-project" | "" => Ok(Scope::SessionProject),
            "all" => Ok(Scope::All),
            other => Err(format!(
                "unknown scope {other:?} (want session, project, session-project or all)"
            )),
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A graph to search and where it comes from (`session`, `project`,
/// `global`, or a store key).
pub struct GraphSource<'a> {
    /// Where the graph comes from, shown with each hit.
    pub name: String,
    /// The graph.
    pub graph: &'a Graph,
}

/// What a search looks through.
#[derive(Default)]
pub struct Sources<'a> {
    /// Graphs, the session's first (a node found in an earlier graph hides
    /// its copy in a later one: the same id said in the same turn).
    pub graphs: Vec<GraphSource<'a>>,
    /// What was said, any order.
    pub episodes: Vec<Episode>,
}

/// Knobs of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    /// Token budget of the whole answer (clamped to
    /// [`MIN_BUDGET`]..=[`MAX_BUDGET`]).
    pub budget: usize,
    /// Most hits listed (within the budget).
    pub limit: usize,
    /// Edge hops followed from a matched node (0 = none).
    pub hops: u32,
    /// Evidence sentences shown per node.
    pub evidence_per_hit: usize,
    /// The clock (recency tie-breaks).
    pub now: DateTime<Utc>,
    /// Notes the caller found while reading the sources (damage), shown
    /// with the answer and counted in its budget.
    pub notes: Vec<String>,
}

impl SearchOptions {
    /// Defaults at a given time.
    pub fn at(now: DateTime<Utc>) -> SearchOptions {
        SearchOptions {
            budget: DEFAULT_BUDGET,
            limit: 20,
            hops: 2,
            evidence_per_hit: 2,
            now,
            notes: Vec::new(),
        }
    }
}

/// Something said, as shown with a hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Said {
    /// The session.
    pub session: String,
    /// The turn.
    pub turn: u32,
    /// `user` or `assistant`.
    pub speaker: String,
    /// The day it was said (`YYYY-MM-DD`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The words.
    pub text: String,
}

/// One hit of an answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// `node` or `said`.
    pub kind: String,
    /// The node's id (nodes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<NodeId>,
    /// The shortest leading part of the node's id (whole words of it) that
    /// no other node's id in the graphs searched starts with: what the text shows,
    /// and what `memory_expand` accepts in place of the id (nodes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// The node's label, or who said it when.
    pub label: String,
    /// The node's kind (nodes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_kind: Option<NodeKind>,
    /// The node's domain (nodes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<Domain>,
    /// Which graph or log it came from.
    pub source: String,
    /// The node's detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What was said: a node's evidence, or the passage itself.
    pub evidence: Vec<Said>,
    /// Why it surfaced.
    pub why: Vec<String>,
    /// Relevance (1 = the best hit).
    pub score: f64,
}

/// A search's answer, packed to its budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The question.
    pub query: String,
    /// The budget applied (after clamping).
    pub budget: usize,
    /// Tokens of [`Answer::text`].
    pub tokens: usize,
    /// The hits that fit, best first.
    pub hits: Vec<Hit>,
    /// Relevant hits that did not fit: `label (id)` or `turn N`.
    pub more: Vec<String>,
    /// Notes (a clamped budget, damage found while loading).
    pub notes: Vec<String>,
    /// The answer as text for a model or a person.
    pub text: String,
}

/// A document of the shared index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Doc {
    /// (graph index, node index in that graph's order).
    Node(usize, usize),
    /// A passage index (in the index only).
    Passage(usize),
    /// A turn: its passages summed (a candidate only).
    Turn(usize),
}

/// One turn: what each side said, in order (user first, as said).
struct TurnGroup {
    session: String,
    turn: u32,
    at: DateTime<Utc>,
    /// Indices into the index's episodes.
    said: Vec<usize>,
}

/// Most tokens one turn's excerpt takes, by the turn's rank among the
/// turns shown: the best matched turn is shown nearly whole (its answer is
/// often a sentence that shares no word with the question), the rest as
/// excerpts.
const EXCERPT_TOKENS: [usize; 3] = [600, 400, 300];

/// What a turn hit shows: its matching passages, best first, each with the
/// one after it (an answer follows its question), and the other side's
/// opening when only one side matched, in the order said, within
/// `cap` tokens (see [`EXCERPT_TOKENS`]). Runs of kept passages of one speaker are joined,
/// gaps marked "…". Passages a node hit already quotes are left out.
/// `passages` are the turn's, in the order said.
fn excerpt(
    passages: &[Passage],
    prel: &HashMap<usize, f64>,
    quoted: &HashSet<String>,
    cap: usize,
) -> Vec<(&'static str, String)> {
    let speaker = |pi: usize| passages[pi].speaker;
    let mut matched: Vec<usize> = (0..passages.len())
        .filter(|p| prel.contains_key(p))
        .collect();
    matched.sort_by(|a, b| prel[b].total_cmp(&prel[a]).then_with(|| a.cmp(b)));
    if !matched.is_empty() && matched.iter().all(|&m| quoted.contains(&passages[m].text)) {
        // A node hit already shows what matched here.
        return Vec::new();
    }
    let mut want: Vec<usize> = Vec::new();
    // A turn that fits is kept whole.
    let whole: usize = passages.iter().map(|p| p.text.len().div_ceil(4)).sum();
    if whole <= cap {
        want.extend(0..passages.len());
    }
    for &m in &matched {
        want.push(m);
        if m + 1 < passages.len() {
            want.push(m + 1);
        }
    }
    for side in [Speaker::User, Speaker::Assistant] {
        if !matched.iter().any(|&m| speaker(m) == side) {
            let opening = if side == Speaker::Assistant { 2 } else { 1 };
            want.extend(
                (0..passages.len())
                    .filter(|&p| speaker(p) == side)
                    .take(opening),
            );
        }
    }
    let mut kept: Vec<usize> = Vec::new();
    let mut used = 0;
    for p in want {
        if kept.contains(&p) || quoted.contains(&passages[p].text) {
            continue;
        }
        let text = &passages[p].text;
        // A soft cap: an estimate (about four bytes a token) is enough here;
        // the answer as a whole is counted exactly when it is packed.
        let c = text.len().div_ceil(4);
        if used + c > cap {
            if kept.is_empty() {
                kept.push(p);
                used = cap;
            }
            continue;
        }
        kept.push(p);
        used += c;
    }
    kept.sort_unstable();
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut last: Option<usize> = None;
    for p in kept {
        let at = p;
        let sp = speaker(p).as_str();
        let mut text = passages[p].text.clone();
        if text.chars().count() > 600 {
            text = crate::episodes::cap(&text, 600);
        }
        match out.last_mut() {
            Some((s, t)) if *s == sp => {
                t.push_str(if last.is_some_and(|l| l + 1 == at) {
                    " "
                } else {
                    " … "
                });
                t.push_str(&text);
            }
            _ => out.push((sp, text)),
        }
        last = Some(at);
    }
    out
}

struct Passage {
    /// Who said it.
    speaker: Speaker,
    text: String,
}

/// Splits a turn's text into passages: sentences, short ones joined to
/// their neighbour, long ones kept whole.
///
/// One pass over the text: a passage is a slice of it (trimmed, line breaks
/// as spaces), its words counted as it grows.
fn passages_of(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let piece = |from: usize, to: usize| {
        let t = text[from..to].trim();
        if t.contains('\n') {
            t.replace('\n', " ")
        } else {
            t.to_owned()
        }
    };
    let bytes = text.as_bytes();
    // The passage being gathered starts at `start` and holds `words` words.
    let mut start = 0;
    let mut words = 0usize;
    let mut in_word = false;
    let mut i = 0;
    while i < bytes.len() {
        // Stops, line breaks and single-byte spaces are single bytes; other
        // characters are decoded only to ask whether they are spaces.
        let (c, len) = match bytes[i] {
            b if b.is_ascii() => (char::from(b), 1),
            _ => text[i..]
                .chars()
                .next()
                .map_or((' ', 1), |c| (c, c.len_utf8())),
        };
        let next = i + len;
        if c == '\n' {
            in_word = false;
            if words >= 6 {
                out.push(piece(start, i));
                start = next;
                words = 0;
            }
            i = next;
            continue;
        }
        if c.is_whitespace() {
            in_word = false;
        } else if !in_word {
            in_word = true;
            words += 1;
        }
        let end = matches!(c, '.' | '!' | '?')
            && words >= 6
            && text[next..].chars().next().is_none_or(char::is_whitespace);
        if end {
            out.push(piece(start, next));
            start = next;
            words = 0;
            in_word = false;
        }
        i = next;
    }
    let rest = piece(start, text.len());
    if words < 4
        && let Some(last) = out.last_mut()
    {
        last.push(' ');
        last.push_str(&rest);
    } else if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// Dates a question names: ISO dates, and "May 2nd" / "2 May" forms (the
/// year is taken from what was said, so it matches any year).
fn named_dates(text: &str) -> Vec<(Option<i32>, u32, u32)> {
    let mut out = Vec::new();
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    for w in &words {
        if let Ok(d) = NaiveDate::parse_from_str(w, "%Y-%m-%d") {
            out.push((Some(d.year()), d.month(), d.day()));
        }
    }
    let day_of = |w: &str| -> Option<u32> {
        let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
        let rest = &w[digits.len()..];
        if digits.is_empty() || !(rest.is_empty() || ["st", "nd", "rd", "th"].contains(&rest)) {
            return None;
        }
        digits.parse().ok().filter(|d| (1..=31).contains(d))
    };
    for (i, w) in words.iter().enumerate() {
        let Some(m) = crate::extract::month_number(w) else {
            continue;
        };
        let day = words
            .get(i + 1)
            .and_then(|n| day_of(n))
            .or_else(|| i.checked_sub(1).and_then(|p| day_of(&words[p])));
        if let Some(d) = day {
            out.push((None, m, d));
        }
    }
    out
}

/// Whether the question asks about the past.
fn asks_about_past(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| PAST_CUES.contains(&w.to_lowercase()))
}

/// The words of a text as [`tokenize`] splits it (letters, digits and
/// apostrophes; everything else separates), before lowercasing: single-byte characters are
/// classified by byte, other characters decoded.
fn raw_words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let mut start = None;
        while i < bytes.len() {
            let (word, len) = match bytes[i] {
                b if b.is_ascii() => (b.is_ascii_alphanumeric() || b == b'\'', 1),
                _ => text[i..]
                    .chars()
                    .next()
                    .map_or((false, 1), |c| (c.is_alphanumeric(), c.len_utf8())),
            };
            match (word, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let w = &text[s..i];
                    i += len;
                    return Some(w);
                }
                _ => {}
            }
            i += len;
        }
        start.map(|s| &text[s..])
    })
}

struct Index {
    docs: Vec<Doc>,
    /// Weighted length of each document.
    lens: Vec<f64>,
    /// Stem → term id.
    terms: FxHashMap<String, u32>,
    /// Raw word → its term (None: a function word or too short): each
    /// distinct word is lowercased and stemmed once.
    words: FxHashMap<String, Option<u32>>,
    /// Per term: the documents holding it, with the weighted frequency.
    postings: Vec<Vec<(u32, f64)>>,
    /// Per term: where it sits in the document being added (0: not in it).
    slot: Vec<u32>,
    /// Average length of node documents and of turn documents (kept apart:
    /// a turn is many times longer than a node, and one average would
    /// punish every turn for it).
    avg_len: (f64, f64),
}

impl Index {
    fn new() -> Index {
        Index {
            docs: Vec::new(),
            lens: Vec::new(),
            terms: FxHashMap::default(),
            words: FxHashMap::default(),
            postings: Vec::new(),
            slot: Vec::new(),
            avg_len: (1.0, 1.0),
        }
    }

    /// The term of one raw word, as [`tokenize`] would give it.
    fn term(&mut self, raw: &str) -> Option<u32> {
        if let Some(t) = self.words.get(raw) {
            return *t;
        }
        let t = tokenize(raw).into_iter().next().map(|stem| {
            let next = self.terms.len() as u32;
            let id = *self.terms.entry(stem).or_insert(next);
            if id as usize == self.postings.len() {
                self.postings.push(Vec::new());
                self.slot.push(0);
            }
            id
        });
        self.words.insert(raw.to_owned(), t);
        t
    }

    /// Adds a document made of weighted fields (their words counted as if
    /// the fields were one text).
    fn add<'t>(&mut self, doc: Doc, fields: impl IntoIterator<Item = (&'t str, f64)>) {
        let mut tf: Vec<(u32, f64)> = Vec::new();
        let mut len = 0.0;
        for (text, w) in fields {
            for raw in raw_words(text) {
                let Some(t) = self.term(raw) else { continue };
                match self.slot[t as usize] {
                    0 => {
                        tf.push((t, w));
                        self.slot[t as usize] = tf.len() as u32;
                    }
                    at => tf[at as usize - 1].1 += w,
                }
                len += w;
            }
        }
        for &(t, _) in &tf {
            self.slot[t as usize] = 0;
        }
        if tf.is_empty() {
            return;
        }
        let d = self.docs.len() as u32;
        for (t, f) in tf {
            self.postings[t as usize].push((d, f));
        }
        self.docs.push(doc);
        self.lens.push(len);
    }

    fn finish(&mut self) {
        let avg = |node: bool| {
            let lens: Vec<f64> = self
                .docs
                .iter()
                .zip(&self.lens)
                .filter(|(d, _)| matches!(d, Doc::Node(..)) == node)
                .map(|(_, l)| *l)
                .collect();
            (lens.iter().sum::<f64>() / lens.len().max(1) as f64).max(1.0)
        };
        self.avg_len = (avg(true), avg(false));
        // The raw words' terms stay: a question's words are found in a
        // shown passage or evidence sentence without stemming it again.
        self.slot = Vec::new();
    }

    /// Which of the question's stems `q` (with their terms `q_terms`) the
    /// words of `text` hold, as [`tokenize`] would find them.
    fn holds(&self, text: &str, q: &[String], q_terms: &[Option<u32>]) -> Vec<bool> {
        let mut has = vec![false; q.len()];
        for raw in raw_words(text) {
            match self.words.get(raw) {
                Some(Some(t)) => {
                    for (h, qt) in has.iter_mut().zip(q_terms) {
                        *h |= *qt == Some(*t);
                    }
                }
                Some(None) => {}
                // A word the index never saw (text from outside it).
                None => {
                    for stem in tokenize(raw) {
                        for (h, qs) in has.iter_mut().zip(q) {
                            *h |= *qs == stem;
                        }
                    }
                }
            }
        }
        has
    }

    /// Inverse document frequency of a stem (0 for an unknown one).
    fn idf(&self, stem: &str) -> f64 {
        let Some(&t) = self.terms.get(stem) else {
            return 0.0;
        };
        let n = self.docs.len() as f64;
        let df = self.postings[t as usize].len() as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25 of every doc matching a query term, with the terms it matched.
    /// The terms matched are a bit mask over `q` (its first 64 words).
    fn score(&self, q: &[String]) -> Vec<(Doc, f64, u64)> {
        // Per document: its score so far and the terms it matched.
        let mut acc: Vec<(f64, u64)> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        for (qi, stem) in q.iter().enumerate().take(64) {
            let Some(&t) = self.terms.get(stem) else {
                continue;
            };
            if acc.is_empty() {
                acc = vec![(0.0, 0); self.docs.len()];
            }
            let idf = self.idf(stem);
            for &(d, f) in &self.postings[t as usize] {
                let avg = if matches!(self.docs[d as usize], Doc::Node(..)) {
                    self.avg_len.0
                } else {
                    self.avg_len.1
                };
                let len = self.lens[d as usize];
                let e = &mut acc[d as usize];
                if e.1 == 0 {
                    touched.push(d);
                }
                e.0 += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg));
                e.1 |= 1 << qi;
            }
        }
        let mut out: Vec<(Doc, f64, u64)> = touched
            .into_iter()
            .map(|d| (self.docs[d as usize], acc[d as usize].0, acc[d as usize].1))
            .filter(|(_, s, _)| *s > 0.0)
            .collect();
        out.sort_by_key(|a| a.0);
        out
    }
}

/// A candidate before packing.
struct Cand {
    doc: Doc,
    rel: f64,
    why: Vec<String>,
}

/// What a [`SearchIndex`] holds apart from the graphs themselves: the
/// words of every node and of everything said, and the turns. It owns all
/// of it, so a long-lived process can keep it beside the graphs it was
/// built from and ask again without indexing again
/// ([`SearchIndex::with_corpus`]).
pub struct Corpus {
    /// Per graph: the ids of its nodes indexed, in document order (a node
    /// id an earlier graph holds is indexed there only).
    ids: Vec<Vec<NodeId>>,
    /// (session, turn) → its group.
    group_of: FxHashMap<String, FxHashMap<u32, usize>>,
    /// What was said, once each, in the order said.
    episodes: Vec<Episode>,
    groups: Vec<TurnGroup>,
    index: Index,
}

impl Corpus {
    /// The day a turn was said, when it is in the index.
    fn day_of(&self, session: &str, turn: u32) -> Option<NaiveDate> {
        let gi = *self.group_of.get(session)?.get(&turn)?;
        Some(self.groups[gi].at.date_naive())
    }
}

/// The nodes and what was said, indexed once for any number of questions
/// (the daemon, the MCP server and benchmarks keep one; a one-shot query
/// builds it and asks once).
pub struct SearchIndex<'a> {
    graphs: Vec<GraphSource<'a>>,
    nodes: Vec<Vec<&'a Node>>,
    /// (graph, node id) → the node's position in `nodes`.
    pos_of: FxHashMap<(usize, &'a NodeId), usize>,
    corpus: Arc<Corpus>,
}

/// Whether two nodes of one id in different graphs are one thing: a
/// session's node and its copy in the project's graph share a turn they
/// were said in (or one of them does not say where it came from, as a
/// seeded anchor). The same id said only in another project's turns is
/// another thing: "tamsin" the harbour pilot of one is not "tamsin" the
/// orchard tenant of another, and `--scope all` shows both.
fn one_thing(a: &Node, b: &Node) -> bool {
    a.evidence.is_empty()
        || b.evidence.is_empty()
        || a.evidence.iter().any(|e| {
            b.evidence
                .iter()
                .any(|f| e.turn == f.turn && e.session == f.session)
        })
}

/// Where each node sits, per graph.
fn positions<'a>(nodes: &[Vec<&'a Node>]) -> FxHashMap<(usize, &'a NodeId), usize> {
    let mut pos_of = FxHashMap::default();
    pos_of.reserve(nodes.iter().map(Vec::len).sum());
    for (gi, ns) in nodes.iter().enumerate() {
        for (ni, n) in ns.iter().enumerate() {
            pos_of.insert((gi, &n.id), ni);
        }
    }
    pos_of
}

impl<'a> SearchIndex<'a> {
    /// Indexes the sources: each node once (the first graph holding it
    /// wins), each thing said once.
    pub fn build(sources: Sources<'a>) -> SearchIndex<'a> {
        // The nodes, each thing once: a node hides a later graph's node of
        // the same id that is the same thing (the first graph holding it
        // wins).
        let mut seen_ids: FxHashMap<&NodeId, Vec<&Node>> = FxHashMap::default();
        let mut nodes: Vec<Vec<&Node>> = Vec::new();
        for g in &sources.graphs {
            let mut v = Vec::with_capacity(g.graph.node_count());
            for n in g.graph.nodes() {
                let seen = seen_ids.entry(&n.id).or_default();
                if !seen.iter().any(|m| one_thing(m, n)) {
                    seen.push(n);
                    v.push(n);
                }
            }
            nodes.push(v);
        }
        // Episodes once each, in the order said.
        let mut episodes = sources.episodes;
        episodes.sort_by(|a, b| (a.at, &a.session, a.turn).cmp(&(b.at, &b.session, b.turn)));
        let keep: Vec<bool> = {
            let mut once: FxHashSet<(&str, u32, Speaker, &str)> = FxHashSet::default();
            once.reserve(episodes.len());
            episodes
                .iter()
                .map(|e| once.insert((e.session.as_str(), e.turn, e.speaker, e.text.as_str())))
                .collect()
        };
        let mut keep = keep.into_iter();
        episodes.retain(|_| keep.next().unwrap_or(false));

        let mut index = Index::new();
        for (gi, ns) in nodes.iter().enumerate() {
            for (ni, n) in ns.iter().enumerate() {
                let fields = std::iter::once((n.label.as_str(), 2.0))
                    .chain(n.aliases.iter().map(|a| (a.as_str(), 1.0)))
                    .chain(std::iter::once((n.detail.as_deref().unwrap_or(""), 1.0)))
                    .chain(n.evidence.iter().map(|e| (e.text.as_str(), 0.5)));
                index.add(Doc::Node(gi, ni), fields);
            }
        }
        // What was said is indexed by turn (both speakers together, as a
        // reader would take it); a turn is split into passages for its
        // excerpt when it is shown.
        let mut groups: Vec<TurnGroup> = Vec::new();
        let mut group_of: FxHashMap<String, FxHashMap<u32, usize>> = FxHashMap::default();
        for (ei, e) in episodes.iter().enumerate() {
            let turns = match group_of.get_mut(e.session.as_str()) {
                Some(t) => t,
                None => group_of.entry(e.session.clone()).or_default(),
            };
            let gi = *turns.entry(e.turn).or_insert_with(|| {
                groups.push(TurnGroup {
                    session: e.session.clone(),
                    turn: e.turn,
                    at: e.at,
                    said: Vec::new(),
                });
                groups.len() - 1
            });
            groups[gi].said.push(ei);
        }
        for (gi, g) in groups.iter().enumerate() {
            // The words of its passages are the words of what was said.
            let fields = g.said.iter().map(|&e| (episodes[e].text.as_str(), 1.0));
            index.add(Doc::Turn(gi), fields);
        }
        index.finish();
        let ids = nodes
            .iter()
            .map(|ns| ns.iter().map(|n| n.id.clone()).collect())
            .collect();
        SearchIndex {
            graphs: sources.graphs,
            pos_of: positions(&nodes),
            nodes,
            corpus: Arc::new(Corpus {
                ids,
                group_of,
                episodes,
                groups,
                index,
            }),
        }
    }

    /// What this index holds apart from the graphs, to keep beside them.
    pub fn corpus(&self) -> Arc<Corpus> {
        Arc::clone(&self.corpus)
    }

    /// An index over `graphs` from a corpus built earlier from the same
    /// graphs, in the same order, unchanged since: nothing is indexed again.
    /// The caller vouches that the graphs did not change (a long-lived
    /// process keys what it keeps on what would change them); `None` when
    /// they visibly did not come from this corpus (a node it indexed is
    /// gone, or the graphs are not as many).
    pub fn with_corpus(
        graphs: Vec<GraphSource<'a>>,
        corpus: Arc<Corpus>,
    ) -> Option<SearchIndex<'a>> {
        if graphs.len() != corpus.ids.len() {
            return None;
        }
        let nodes = graphs
            .iter()
            .zip(&corpus.ids)
            .map(|(g, ids)| ids.iter().map(|id| g.graph.node(id)).collect())
            .collect::<Option<Vec<Vec<&Node>>>>()?;
        Some(SearchIndex {
            graphs,
            pos_of: positions(&nodes),
            nodes,
            corpus,
        })
    }

    /// Answers `text`, packed to `opts.budget`. `close` is an optional
    /// ranking of nodes by meaning (`(graph index, node id)`, best first,
    /// from the embedding model), added as a bonus by reciprocal rank.
    pub fn search(
        &self,
        text: &str,
        opts: &SearchOptions,
        close: Option<&[(usize, NodeId)]>,
    ) -> Answer {
        let mut notes = opts.notes.clone();
        let budget = opts.budget.clamp(MIN_BUDGET, MAX_BUDGET);
        if budget != opts.budget {
            notes.push(format!(
                "budget {} clamped to {budget} (allowed {MIN_BUDGET}..={MAX_BUDGET})",
                opts.budget
            ));
        }
        let mut q = stems(text);
        // Stems are shown as the words the question used.
        let mut surface: HashMap<String, String> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .flat_map(|w| tokenize(w).into_iter().map(move |t| (t, w.to_lowercase())))
            .collect();
        // "learning rate" is often written "lr": the initials of two
        // neighbouring words of the question count as a word where what
        // was said uses them as one, and never spells one of the two out.
        // (Where both words were said, initials are mostly something else:
        // "garden tools" is no "gt", a build target; measured with every
        // transcript pooled, answers at 800 tokens 510 → 516.)
        for pair in tokenize(text).windows(2) {
            let initials: String = pair.iter().filter_map(|w| w.chars().next()).collect();
            let spelled_out = pair.iter().all(|w| self.corpus.index.terms.contains_key(w));
            // A file extension ("md" for "model due") is no abbreviation.
            if !spelled_out
                && initials.chars().all(char::is_alphabetic)
                && !crate::extract::lexicon::FILE_EXTS.contains(&initials)
                && self.corpus.index.terms.contains_key(&initials)
                && !q.contains(&initials)
            {
                let words: Vec<&str> = pair
                    .iter()
                    .map(|w| surface.get(w).map_or(w.as_str(), String::as_str))
                    .collect();
                let shown = format!("{initials} ({})", words.join(" "));
                surface.insert(initials.clone(), shown);
                q.push(initials);
            }
        }

        let sources = &self.graphs;
        let nodes = &self.nodes;
        let pos_of = &self.pos_of;
        let corpus = &*self.corpus;
        let groups = &corpus.groups;
        let index = &corpus.index;
        let scored = if q.is_empty() {
            Vec::new()
        } else {
            index.score(&q)
        };
        let q_terms: Vec<Option<u32>> = q.iter().map(|t| index.terms.get(t).copied()).collect();
        let mut lexical: Vec<(Doc, f64, u64)> = scored;
        lexical.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

        // A date the question names: what was said that day ranks as if it
        // matched, and matching passages that day rise.
        let dates = named_dates(text);
        let on_day = |d: NaiveDate| {
            dates.iter().any(|(y, m, day)| {
                y.is_none_or(|y| y == d.year()) && *m == d.month() && *day == d.day()
            })
        };

        let top = lexical.first().map_or(0.0, |l| l.1);
        let mut rel: BTreeMap<Doc, (f64, Vec<String>)> = BTreeMap::new();
        // Which words matched is put in words only for the hits shown.
        let mut matched_of: HashMap<Doc, u64> = HashMap::with_capacity(lexical.len());
        for (doc, s, mask) in &lexical {
            rel.insert(*doc, (s / top, Vec::new()));
            matched_of.insert(*doc, *mask);
        }
        let matched_why = |doc: Doc| -> Vec<String> {
            let Some(&mask) = matched_of.get(&doc) else {
                return Vec::new();
            };
            let words: Vec<&str> = q
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < 64 && mask & (1 << i) != 0)
                .map(|(_, m)| surface.get(m).map_or(m.as_str(), String::as_str))
                .collect();
            vec![format!("matched {}", words.join(", "))]
        };
        // Meaning: a node close in meaning gains a bounded share of the best
        // lexical match by its rank among the close ones (reciprocal rank:
        // the closest gains MEANING_WEIGHT, the 60th half of it). Added, not
        // fused into one order: a rank fusion lifts every weak lexical
        // match to a rank-based floor and flattens the lexical order
        // (measured: answers at 200 tokens 378 → 367, at 800 567 → 557;
        // with this bonus 389 and 562). Where no word matched, meaning is
        // all there is: the closest node then counts as a best match.
        if let Some(close) = close.filter(|c| !c.is_empty()) {
            let weight = if lexical.is_empty() {
                1.0
            } else {
                MEANING_WEIGHT
            };
            for (r, (gi, id)) in close.iter().enumerate() {
                let Some(&ni) = pos_of.get(&(*gi, id)) else {
                    continue;
                };
                let e = rel.entry(Doc::Node(*gi, ni)).or_insert((0.0, Vec::new()));
                e.0 += weight * (RRF_K + 1.0) / (RRF_K + r as f64 + 1.0);
                e.1.push("close in meaning".into());
            }
        }

        // A file or identifier node is a pointer: its name matching the
        // question says little about whether it holds the answer.
        for (doc, (s, _)) in rel.iter_mut() {
            if let Doc::Node(gi, ni) = *doc
                && matches!(nodes[gi][ni].kind, NodeKind::File | NodeKind::Identifier)
            {
                *s *= POINTER_FACTOR;
            }
        }

        // Nodes of the kind the question asks for rank higher.
        let asked = kinds_asked(text);
        if !asked.is_empty() {
            for (doc, (s, why)) in rel.iter_mut() {
                if let Doc::Node(gi, ni) = *doc
                    && asked.contains(&nodes[gi][ni].kind)
                {
                    *s *= 1.6;
                    why.push(format!("a {} was asked for", nodes[gi][ni].kind.as_str()));
                }
            }
        }

        // The nodes in force of an asked kind stand in, low, where the
        // question's words miss them ("when do the movers come?" is asked of
        // a date said in other words).
        // One pass over the nodes gathers those of every asked kind.
        let mut stand_ins: Vec<Vec<(usize, usize)>> = vec![Vec::new(); asked.len()];
        for (gi, ns) in nodes.iter().enumerate() {
            for (ni, n) in ns.iter().enumerate() {
                if let Some(ki) = asked.iter().position(|k| *k == n.kind)
                    && !rel.contains_key(&Doc::Node(gi, ni))
                    && sources[gi].graph.superseded_by(&n.id).is_none()
                {
                    stand_ins[ki].push((gi, ni));
                }
            }
        }
        for (k, mut of_kind) in asked.iter().zip(stand_ins) {
            of_kind.sort_by(|a, b| {
                nodes[b.0][b.1]
                    .weight
                    .total_cmp(&nodes[a.0][a.1].weight)
                    .then_with(|| a.cmp(b))
            });
            for (gi, ni) in of_kind.into_iter().take(KIND_FILL_NODES) {
                let why = format!("a {} in force (the question asks for one)", k.as_str());
                rel.insert(Doc::Node(gi, ni), (KIND_FILL, vec![why]));
            }
        }

        // Neighbours of the best matched nodes, at a decayed score.
        let seeds = best_nodes(&rel, 8, |_| true);
        for (doc, s) in seeds {
            let Doc::Node(gi, ni) = doc else { continue };
            let graph = sources[gi].graph;
            let seed = nodes[gi][ni];
            let mut frontier = vec![(seed.id.clone(), s)];
            for hop in 1..=opts.hops {
                let mut next = Vec::new();
                for (id, sc) in &frontier {
                    for e in graph.edges_of(id) {
                        let (other, dir) = if &e.source == id {
                            (&e.target, "→")
                        } else {
                            (&e.source, "←")
                        };
                        let ns = sc * 0.5 * e.weight.clamp(0.0, 1.0);
                        let Some(&oi) = pos_of.get(&(gi, other)) else {
                            continue;
                        };
                        if ns <= 0.05 || other == &seed.id {
                            continue;
                        }
                        let d = Doc::Node(gi, oi);
                        let entry = rel.entry(d).or_insert((0.0, Vec::new()));
                        if ns > entry.0 {
                            let via = if hop == 1 {
                                format!("{} {dir} {}", e.kind.as_str(), seed.label)
                            } else {
                                format!("{hop} hops from {}", seed.label)
                            };
                            if entry.0 == 0.0 {
                                entry.1 = vec![via];
                            } else if !entry.1.contains(&via) {
                                entry.1.push(via);
                            }
                            entry.0 = ns;
                            next.push((other.clone(), ns));
                        }
                    }
                }
                frontier = next;
            }
        }

        // Of a supersedes pair, the newer side first (the older one when the
        // question asks about the past), and the pair stays together.
        let past = asks_about_past(text);
        let mut extra: Vec<(Doc, f64, String)> = Vec::new();
        for (doc, (s, why)) in rel.iter_mut() {
            let Doc::Node(gi, ni) = *doc else { continue };
            let n = nodes[gi][ni];
            let graph = sources[gi].graph;
            if let Some(newer) = graph.superseded_by(&n.id) {
                why.push(format!("superseded by {}", newer.label));
                if let Some(&oi) = pos_of.get(&(gi, &newer.id)) {
                    let (older_s, newer_s) = if past {
                        (*s, *s * 0.95)
                    } else {
                        (*s * 0.9, *s)
                    };
                    *s = older_s;
                    extra.push((Doc::Node(gi, oi), newer_s, format!("replaced {}", n.label)));
                }
            }
        }
        for (d, s, why) in extra {
            let e = rel.entry(d).or_insert((0.0, Vec::new()));
            if s > e.0 {
                e.0 = s;
            }
            if !e.1.contains(&why) {
                e.1.push(why);
            }
        }

        // "Why did we drop X?": the reason was said where X was decided, so
        // the turns the best matched decisions and facts came from rank
        // just below them.
        if asks_why(text) {
            let turn_of: HashMap<(&str, u32), usize> = groups
                .iter()
                .enumerate()
                .map(|(gi, g)| ((g.session.as_str(), g.turn), gi))
                .collect();
            let best = best_nodes(&rel, 5, |(gi, ni)| {
                matches!(
                    nodes[gi][ni].kind,
                    NodeKind::Decision | NodeKind::Fact | NodeKind::Correction
                )
            });
            for (d, s) in best.into_iter().filter(|(_, s)| *s > 0.0) {
                let Doc::Node(gi, ni) = d else { continue };
                let n = nodes[gi][ni];
                for e in &n.evidence {
                    let Some(&ti) = turn_of.get(&(e.session.as_str(), e.turn)) else {
                        continue;
                    };
                    let entry = rel.entry(Doc::Turn(ti)).or_insert((0.0, Vec::new()));
                    if s * REASON_FACTOR > entry.0 {
                        entry.0 = s * REASON_FACTOR;
                        entry.1.push(format!("where {} was said", n.label));
                    }
                }
            }
        }

        // A matched turn whose reply ends on a question is answered by the
        // next turn: that turn follows it, a little below.
        let follow: Vec<(usize, f64, u32)> = {
            let mut turns: Vec<(usize, f64)> = rel
                .iter()
                .filter_map(|(d, (s, _))| match d {
                    Doc::Turn(gi) => Some((*gi, *s)),
                    _ => None,
                })
                .collect();
            turns.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            turns.truncate(8);
            turns
                .into_iter()
                .filter_map(|(gi, s)| {
                    let g = &groups[gi];
                    let asks = g.said.iter().rev().find_map(|&e| {
                        let e = &corpus.episodes[e];
                        (e.speaker == Speaker::Assistant).then(|| e.text.trim_end().ends_with('?'))
                    })?;
                    if !asks {
                        return None;
                    }
                    let next = *corpus.group_of.get(&g.session)?.get(&(g.turn + 1))?;
                    Some((next, s * FOLLOW_FACTOR, g.turn))
                })
                .collect()
        };
        for (gi, s, from) in follow {
            let e = rel.entry(Doc::Turn(gi)).or_insert((0.0, Vec::new()));
            if s > e.0 {
                e.0 = s;
                e.1.push(format!("answers the question of turn {from}"));
            }
        }

        // A day the question names lifts every turn of that day.
        if !dates.is_empty() {
            for (gi, g) in groups.iter().enumerate() {
                let d = g.at.date_naive();
                if on_day(d) {
                    let e = rel.entry(Doc::Turn(gi)).or_insert((0.0, Vec::new()));
                    e.0 += 0.5;
                    e.1.push(format!("said on {d}"));
                }
            }
        }

        // Rank: relevance first; weight and recency only break ties.
        let mut cands: Vec<Cand> = rel
            .into_iter()
            .filter(|(_, (s, _))| *s > 0.0)
            .map(|(doc, (rel, why))| Cand { doc, rel, why })
            .collect();
        // Only the best few hundred can reach the answer: keep those before
        // the full sort (a common word can match every turn).
        const KEEP: usize = 400;
        if cands.len() > KEEP {
            cands.select_nth_unstable_by(KEEP, |a, b| b.rel.total_cmp(&a.rel));
            cands.truncate(KEEP);
        }
        let tie = |c: &Cand| -> f64 {
            match c.doc {
                Doc::Node(gi, ni) => {
                    let n = nodes[gi][ni];
                    let age_h =
                        ((opts.now - n.last_activated).num_seconds().max(0) as f64) / 3_600.0;
                    n.weight + (-age_h / 24.0).exp2()
                }
                Doc::Turn(gi) => {
                    let age_h = ((opts.now - groups[gi].at).num_seconds().max(0) as f64) / 3_600.0;
                    (-age_h / 24.0).exp2()
                }
                Doc::Passage(_) => 0.0,
            }
        };
        cands.sort_by(|a, b| {
            let ra = (a.rel * 1e4).round();
            let rb = (b.rel * 1e4).round();
            rb.total_cmp(&ra)
                .then_with(|| tie(b).total_cmp(&tie(a)))
                .then_with(|| a.doc.cmp(&b.doc))
        });

        // Build hits: nodes with their best evidence; passages grouped by turn
        // and speaker, skipping what a shown node already quotes.
        let date_str = |session: &str, turn: u32| {
            corpus
                .day_of(session, turn)
                .map(|d| d.format("%Y-%m-%d").to_string())
        };
        let mut hits: Vec<Hit> = Vec::new();
        let mut quoted: HashSet<String> = HashSet::new();
        let mut turns_shown = 0usize;
        let best = cands.first().map_or(1.0, |c| c.rel).max(1e-9);
        for c in &cands {
            if hits.len() >= opts.limit.max(1) * 3 {
                break;
            }
            if c.rel < best * 0.08 {
                break;
            }
            let score = (c.rel / best * 1_000.0).round() / 1_000.0;
            match c.doc {
                Doc::Node(gi, ni) => {
                    let n = nodes[gi][ni];
                    let mut ev: Vec<(f64, &crate::graph::Evidence)> = n
                        .evidence
                        .iter()
                        .map(|e| {
                            let has = index.holds(&e.text, &q, &q_terms);
                            let s = has.iter().filter(|h| **h).count() as f64;
                            (s, e)
                        })
                        .collect();
                    ev.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.turn.cmp(&a.1.turn)));
                    // Evidence another hit already quotes is not repeated.
                    let fresh: Vec<&crate::graph::Evidence> = ev
                        .into_iter()
                        .map(|(_, e)| e)
                        .filter(|e| !quoted.contains(&e.text))
                        .take(opts.evidence_per_hit)
                        .collect();
                    let evidence: Vec<Said> = fresh
                        .into_iter()
                        .map(|e| {
                            quoted.insert(e.text.clone());
                            Said {
                                session: e.session.clone(),
                                turn: e.turn,
                                speaker: e.speaker.clone(),
                                date: date_str(&e.session, e.turn),
                                text: e.text.clone(),
                            }
                        })
                        .collect();
                    let mut why = matched_why(c.doc);
                    why.extend(c.why.iter().cloned());
                    if n.kind == NodeKind::Decision
                        && sources[gi]
                            .graph
                            .edges_of(&n.id)
                            .iter()
                            .any(|e| e.kind == EdgeKind::Supersedes && e.source == n.id)
                    {
                        why.push("current decision".into());
                    }
                    hits.push(Hit {
                        kind: "node".into(),
                        id: Some(n.id.clone()),
                        // Unique among every searched graph's ids: a
                        // project node's handle never starts a session
                        // node's id, which expand would find instead.
                        handle: Some(short_id(n.id.as_str(), nodes.iter().flatten().copied())),
                        label: n.label.clone(),
                        node_kind: Some(n.kind),
                        domain: Some(n.domain),
                        source: sources[gi].name.clone(),
                        detail: n.detail.clone(),
                        evidence,
                        why,
                        score,
                    });
                }
                Doc::Turn(gi) => {
                    let g = &groups[gi];
                    let passages: Vec<Passage> = g
                        .said
                        .iter()
                        .flat_map(|&ei| {
                            let e = &corpus.episodes[ei];
                            passages_of(&e.text).into_iter().map(|text| Passage {
                                speaker: e.speaker,
                                text,
                            })
                        })
                        .collect();
                    // Each passage's share of the question (the idf of the
                    // words it holds) picks the turn's excerpt.
                    let mut prel: HashMap<usize, f64> = HashMap::new();
                    for (pi, p) in passages.iter().enumerate() {
                        let has = index.holds(&p.text, &q, &q_terms);
                        let s: f64 = q
                            .iter()
                            .zip(&has)
                            .filter(|(_, h)| **h)
                            .map(|(t, _)| index.idf(t))
                            .sum();
                        if s > 0.0 {
                            prel.insert(pi, s);
                        }
                    }
                    // No one turn takes more than half the answer: at a
                    // small budget its best passages are chosen here, not
                    // its opening kept by a cut from the end.
                    let cap =
                        EXCERPT_TOKENS[turns_shown.min(EXCERPT_TOKENS.len() - 1)].min(budget / 2);
                    let parts = excerpt(&passages, &prel, &quoted, cap);
                    if parts.is_empty() {
                        continue;
                    }
                    turns_shown += 1;
                    let date = Some(g.at.date_naive().format("%Y-%m-%d").to_string());
                    let evidence: Vec<Said> = parts
                        .into_iter()
                        .map(|(speaker, text)| Said {
                            session: g.session.clone(),
                            turn: g.turn,
                            speaker: speaker.into(),
                            date: date.clone(),
                            text,
                        })
                        .collect();
                    hits.push(Hit {
                        kind: "said".into(),
                        id: None,
                        handle: None,
                        label: format!("turn {}", g.turn),
                        node_kind: None,
                        domain: None,
                        source: g.session.clone(),
                        detail: None,
                        evidence,
                        why: [matched_why(c.doc), c.why.clone()].concat(),
                        score,
                    });
                }
                Doc::Passage(_) => {}
            }
        }
        pack(text, budget, hits, notes, opts.limit.max(1))
    }
}

/// The nodes of `graph` (graph 0 of a search) close in meaning to `text`
/// by the embedding model, best first, those under `threshold` left out:
/// the `close` ranking [`SearchIndex::search`] adds by reciprocal rank.
pub fn close_nodes(
    sem: &mut crate::semantic::Semantic,
    graph: &Graph,
    text: &str,
    threshold: f32,
) -> Vec<(usize, NodeId)> {
    if let Err(e) = sem.index.sync(graph, &mut sem.embedder, |_| true) {
        tracing::warn!("embedding failed; lexical search only: {e}");
        return Vec::new();
    }
    let Ok(v) = sem.embedder.embed_one(text) else {
        return Vec::new();
    };
    sem.index
        .nearest(graph, &v, 50, |_| true)
        .into_iter()
        .filter(|(_, s)| *s >= threshold)
        .map(|(id, _)| (0, id))
        .collect()
}

/// The `n` node documents of `rel` that `keep` accepts, best first (ties
/// in document order).
fn best_nodes(
    rel: &BTreeMap<Doc, (f64, Vec<String>)>,
    n: usize,
    keep: impl Fn((usize, usize)) -> bool,
) -> Vec<(Doc, f64)> {
    let mut v: Vec<(Doc, f64)> = rel
        .iter()
        .filter(|(d, _)| matches!(d, Doc::Node(gi, ni) if keep((*gi, *ni))))
        .map(|(d, (s, _))| (*d, *s))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

/// Searches `sources` for `text` once (builds a [`SearchIndex`] and asks).
pub fn search(
    sources: Sources<'_>,
    text: &str,
    opts: &SearchOptions,
    close: Option<&[(usize, NodeId)]>,
) -> Answer {
    SearchIndex::build(sources).search(text, opts, close)
}

/// Whether the words of `text` hold those of `part` in a row (case, signs
/// and spacing aside).
fn words_hold(text: &str, part: &str) -> bool {
    let norm = |t: &str| -> String {
        let w: Vec<String> = t
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        format!(" {} ", w.join(" "))
    };
    let p = norm(part);
    !p.trim().is_empty() && norm(text).contains(&p)
}

/// What a node hit is named by in text: its short handle, else its id.
fn hit_handle(h: &Hit) -> &str {
    h.handle
        .as_deref()
        .or(h.id.as_ref().map(NodeId::as_str))
        .unwrap_or("")
}

/// The shortest leading run of `id`'s words (two at least) that no other
/// id of `nodes` starts with as a run of words: a handle that costs a few
/// tokens where the id spells out the node's whole label.
/// [`crate::render::expand_handle`] resolves it back.
pub fn short_id<'n>(id: &str, nodes: impl IntoIterator<Item = &'n Node>) -> String {
    // The most leading words another id shares with this one: one more
    // tells them apart.
    let shared = nodes
        .into_iter()
        .map(|n| n.id.as_str())
        .filter(|o| *o != id)
        .map(|o| {
            id.split('-')
                .zip(o.split('-'))
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0);
    let words = (shared + 1).max(2);
    match id.match_indices('-').nth(words - 1) {
        Some((cut, _)) => id[..cut].to_owned(),
        None => id.to_owned(),
    }
}

/// One hit as text. A turn from `home` (the session most of the turns
/// come from, named once in the header) does not repeat its session.
fn hit_text(i: usize, h: &Hit, home: Option<&str>) -> String {
    let mut s = String::new();
    let date = |x: &Said| x.date.clone().map(|d| format!(", {d}")).unwrap_or_default();
    if h.kind == "node" {
        let kind = h.node_kind.map_or("node", NodeKind::as_str);
        let domain = h.domain.map_or("", Domain::as_str);
        let id = hit_handle(h);
        let detail = h.detail.as_deref().map(str::trim).filter(|d| !d.is_empty());
        // A label the detail spells out is not said twice.
        if detail.is_some_and(|d| words_hold(d, &h.label)) {
            s.push_str(&format!("{i}. {kind} [{domain}, id {id}]"));
        } else {
            s.push_str(&format!("{i}. {kind}: {} [{domain}, id {id}]", h.label));
        }
        // A detail that is the evidence sentence itself is said once, with
        // who said it when.
        let same = |e: &Said| {
            detail.is_some_and(|d| {
                d.trim_end_matches('…').trim() == e.text.trim()
                    || e.text.trim().starts_with(d.trim_end_matches('…').trim())
            })
        };
        if let Some(d) = detail {
            s.push_str(&format!(" — {d}"));
            if let Some(e) = h.evidence.iter().find(|e| same(e)) {
                s.push_str(&format!(" ({}, turn {}{})", e.speaker, e.turn, date(e)));
            }
        }
        s.push('\n');
        for e in h.evidence.iter().filter(|e| !same(e)) {
            s.push_str(&format!(
                "   \"{}\" ({}, turn {}{})\n",
                e.text.trim(),
                e.speaker,
                e.turn,
                date(e)
            ));
        }
    } else {
        let first = &h.evidence[0];
        s.push_str(&format!("{i}. turn {}{}", first.turn, date(first)));
        if home != Some(h.source.as_str()) {
            s.push_str(&format!(" (session {})", h.source));
        }
        s.push(':');
        for e in &h.evidence {
            s.push_str(&format!(" {}: \"{}\"", e.speaker, e.text.trim()));
        }
        s.push('\n');
    }
    // The words a hit matched are there to see: the text names only the
    // reasons that are not (an abbreviation's words, a link, a day, a
    // replaced decision); `why` holds them all.
    let why: Vec<&str> = h
        .why
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with("matched ") || w.contains('('))
        .collect();
    if !why.is_empty() {
        s.push_str(&format!("   why: {}\n", why.join("; ")));
    }
    s
}

/// The answer's first line. The question is not repeated: whoever asked
/// has it, and at a small budget its tokens are better spent on answers
/// (measured: answers at 200 tokens 448 -> 463 over the corpus questions).
/// `n` hits are shown of `all` found.
fn header(n: usize, all: usize, used: usize, budget: usize, home: Option<&str>) -> String {
    let home = home
        .map(|h| format!("; turns are from session {h} unless marked"))
        .unwrap_or_default();
    let of = if all > n {
        format!(" of {all}")
    } else {
        String::new()
    };
    format!(
        "memory: {n}{of} hit{}, {used}/{budget} tokens{home}\n",
        if n == 1 && of.is_empty() { "" } else { "s" }
    )
}

/// The session most turn hits come from (the first such on a tie), when
/// at least two do: it is named once instead of on every turn.
fn home_session(hits: &[Hit]) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for h in hits.iter().filter(|h| h.kind != "node") {
        match counts.iter_mut().find(|(s, _)| *s == h.source) {
            Some((_, n)) => *n += 1,
            None => counts.push((&h.source, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    (best >= 2)
        .then(|| {
            counts
                .iter()
                .find(|(_, n)| *n == best)
                .map(|(s, _)| (*s).to_owned())
        })
        .flatten()
}

/// Packs hits into the budget: greedy by value per token among the
/// relevant ones, shown in relevance order; what does not fit is named.
fn pack(
    query: &str,
    budget: usize,
    mut hits: Vec<Hit>,
    notes: Vec<String>,
    limit: usize,
) -> Answer {
    if hits.is_empty() {
        let mut text = format!("nothing in memory matches {query:?}\n");
        for n in &notes {
            text.push_str(&format!("note: {n}\n"));
        }
        let text = fit(text, budget);
        return Answer {
            query: query.to_owned(),
            budget,
            tokens: count_tokens(&text),
            hits,
            more: Vec::new(),
            notes,
            text,
        };
    }
    let home = home_session(&hits);
    let home = home.as_deref();
    let texts: Vec<String> = hits.iter().map(|h| hit_text(0, h, home)).collect();
    let costs: Vec<usize> = texts.iter().map(|t| count_tokens(t).max(1)).collect();
    // Room for the header and the notes. The "more" line takes what the
    // hits leave: a reserve for it cost answers at every budget (at 200
    // tokens 437 -> 448 over the corpus questions without one).
    let reserve = count_tokens(&header(99, 999, 9_999, budget, home))
        + notes
            .iter()
            .map(|n| count_tokens(&format!("note: {n}\n")))
            .sum::<usize>();
    let room = budget.saturating_sub(reserve);
    let mut order: Vec<usize> = (0..hits.len()).collect();
    // Value falls steeply with rank, so the best hits win unless they are
    // far longer than the ones behind them.
    order.sort_by(|&a, &b| {
        let va = hits[a].score.powi(RANK_POWER) / costs[a] as f64;
        let vb = hits[b].score.powi(RANK_POWER) / costs[b] as f64;
        vb.total_cmp(&va).then_with(|| a.cmp(&b))
    });
    let mut chosen = vec![false; hits.len()];
    let mut used = 0usize;
    let mut count = 0usize;
    // A node whose sentences a turn shown already says adds nothing but
    // its label: it gives its room back, and the hits behind it fill it.
    let mut dropped = vec![false; hits.len()];
    for _pass in 0..2 {
        for &i in &order {
            if count >= limit {
                break;
            }
            if chosen[i] || dropped[i] {
                continue;
            }
            if used + costs[i] <= room {
                chosen[i] = true;
                used += costs[i];
                count += 1;
            } else if hits[i].kind != "node"
                && let Some(cut) = cut_to(&hits[i], room - used, home)
            {
                used += count_tokens(&hit_text(0, &cut, home));
                hits[i] = cut;
                chosen[i] = true;
                count += 1;
            }
        }
        let turns: Vec<&Hit> = (0..hits.len())
            .filter(|&j| chosen[j] && hits[j].kind != "node")
            .map(|j| &hits[j])
            .collect();
        let said_again: Vec<usize> = (0..hits.len())
            .filter(|&i| chosen[i] && hits[i].kind == "node" && said_by_turns(&hits[i], &turns))
            .collect();
        if said_again.is_empty() {
            break;
        }
        for i in said_again {
            chosen[i] = false;
            dropped[i] = true;
            used -= costs[i];
            count -= 1;
        }
    }
    // Room left over goes to the best turn that did not fit whole, cut to
    // the room (the raw-turn baseline packs the same way): a relevant turn
    // half shown beats budget left unused.
    if count < limit
        && let Some(i) = (0..hits.len()).find(|&i| !chosen[i] && hits[i].kind != "node")
        && let Some(cut) = cut_to(&hits[i], room.saturating_sub(used), home)
    {
        hits[i] = cut;
        chosen[i] = true;
    }
    // The header names the session only when a shown turn leaves it out.
    let home = home.filter(|s| {
        hits.iter()
            .zip(&chosen)
            .any(|(h, c)| *c && h.kind != "node" && h.source == *s)
    });
    let mut kept = Vec::new();
    let mut more = Vec::new();
    for (i, h) in hits.into_iter().enumerate() {
        if chosen[i] {
            kept.push(h);
        } else if h.kind == "node" {
            more.push(format!("{} ({})", h.label, hit_handle(&h)));
        } else {
            more.push(if home == Some(h.source.as_str()) {
                format!("turn {}", h.evidence[0].turn)
            } else {
                format!("turn {} ({})", h.evidence[0].turn, h.source)
            });
        }
    }
    let (shown, found) = (kept.len(), kept.len() + more.len());
    let mut body = String::new();
    for (i, h) in kept.iter().enumerate() {
        body.push_str(&hit_text(i + 1, h, home));
    }
    let mut tail = String::new();
    for n in &notes {
        tail.push_str(&format!("note: {n}\n"));
    }
    // The answer is its header, body, "more" line and notes, each whole
    // lines starting with a word or a digit, so its tokens are the sum of
    // theirs (see `count_lines`): the parts that do not change while the
    // "more" line is fitted are counted once.
    let body_tokens = count_lines(&body);
    let tail_tokens = count_lines(&tail);
    let more_line = |k: usize| {
        if k == 0 {
            String::new()
        } else {
            format!(
                "{} more (expand an id to go deeper): {}{}\n",
                more.len(),
                more[..k].join(", "),
                if k < more.len() { ", …" } else { "" }
            )
        }
    };
    // With `line` as the "more" line: the tokens the header reports (those
    // of the answer with a 0 there) and those of the answer as written.
    let draft_header = count_lines(&header(shown, found, 0, budget, home));
    let counts = |line: &str| {
        let rest = body_tokens + count_lines(line) + tail_tokens;
        let used = draft_header + rest;
        (
            used,
            count_lines(&header(shown, found, used, budget, home)) + rest,
        )
    };
    let k = most_that_fit(more.len(), |k| counts(&more_line(k)).1 <= budget);
    let line = more_line(k);
    let (used, tokens) = counts(&line);
    let text = format!(
        "{}{body}{line}{tail}",
        header(shown, found, used, budget, home)
    );
    let (text, tokens) = if tokens <= budget {
        (text, tokens)
    } else {
        let text = fit(text, budget);
        let tokens = count_tokens(&text);
        (text, tokens)
    };
    Answer {
        query: query.to_owned(),
        budget,
        tokens,
        hits: kept,
        more,
        notes,
        text,
    }
}

/// Whether the turns `shown` say all a node hit says: each of its
/// sentences (and its detail) is in a shown turn of its session, and no
/// reason it surfaced (a replaced choice, a link) is one the turn cannot
/// tell.
fn said_by_turns(node: &Hit, shown: &[&Hit]) -> bool {
    let told = |text: &str| {
        let text = text.trim().trim_end_matches('…').trim();
        !text.is_empty()
            && shown.iter().any(|t| {
                t.evidence.iter().any(|e| {
                    node.evidence
                        .iter()
                        .any(|n| n.session == e.session && n.turn == e.turn)
                        && e.text.contains(text)
                })
            })
    };
    !node.evidence.is_empty()
        && node.why.iter().all(|w| w.starts_with("matched "))
        && node.evidence.iter().all(|e| told(&e.text))
        && node.detail.as_deref().is_none_or(told)
}

/// How steeply a hit's packing value falls with its score (value is
/// score^RANK_POWER per token): the best hits win unless they are far
/// longer than the ones behind them. Measured over the corpus questions
/// (answers at 200 / 400 / 800 tokens): 4 gave 429 / 544 / 622, 6 gives
/// 435 / 545 / 621, 8 and 12 no better.
const RANK_POWER: i32 = 6;

/// Fewest tokens a cut turn is worth showing in.
const LEAST_CUT: usize = 30;

/// A turn hit cut, by words from its end, to fit `room` tokens as
/// [`hit_text`] writes it; `None` when too little of it would fit.
fn cut_to(hit: &Hit, room: usize, home: Option<&str>) -> Option<Hit> {
    if room < LEAST_CUT {
        return None;
    }
    let words: Vec<Vec<&str>> = hit
        .evidence
        .iter()
        .map(|e| e.text.split_whitespace().collect())
        .collect();
    let total: usize = words.iter().map(Vec::len).sum();
    let keep = |k: usize| -> Hit {
        let mut left = k;
        let mut out = hit.clone();
        out.evidence.clear();
        for (e, w) in hit.evidence.iter().zip(&words) {
            if left == 0 {
                break;
            }
            let n = w.len().min(left);
            left -= n;
            let mut e = e.clone();
            e.text = w[..n].join(" ");
            if n < w.len() {
                e.text.push_str(" …");
            }
            out.evidence.push(e);
        }
        out
    };
    let k = most_that_fit(total, |k| {
        k == 0 || count_tokens(&hit_text(0, &keep(k), home)) <= room
    });
    let cut = keep(k);
    (k > 0 && count_tokens(&hit_text(0, &cut, home)) >= LEAST_CUT).then_some(cut)
}

/// Tokens of whole lines of an answer (text ending in a line break), so
/// that the tokens of lines put together are the sum of theirs when the
/// next line starts with neither a space nor a line break — true of every
/// line an answer starts: a header, a numbered hit, a count, a note.
///
/// Why: cl100k cuts text into pieces by a pattern before merging bytes
/// within each piece. A piece holding a line break ends at the last line
/// break of its run of spaces and breaks, or takes in nothing after it
/// but more line breaks, and no piece starts with a line break and goes
/// on into a word, digit or sign; so the cut after such a line is a cut
/// between pieces, and the pieces on either side are those of each text
/// alone. (`\s++$`, which only matches at the very end, gives the same
/// piece there as `\s*[\r\n]` does mid-text.) A test holds this to
/// counting the whole answer.
fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        count_tokens(text)
    }
}

/// The largest `k` in `0..=n` for which `fits(k)` holds, by bisection
/// (`fits` must only turn false as `k` grows); 0 when none does. What a
/// budget has room for: names in a "more" line, words of a cut text.
pub fn most_that_fit(n: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Cuts text to the budget by whole lines (a last resort: packing already
/// keeps answers inside it).
fn fit(text: String, budget: usize) -> String {
    if count_tokens(&text) <= budget {
        return text;
    }
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if count_tokens(&format!("{out}{line}")) > budget {
            break;
        }
        out.push_str(line);
    }
    out
}

/// BM25 over plain documents with the search's tokenizer, indexed once for
/// any number of questions. Benchmarks rank raw turns with it, so a
/// baseline and the search count words the same way.
pub struct DocIndex {
    index: Index,
}

impl DocIndex {
    /// Indexes `docs`; a hit names a document by its position here.
    pub fn new(docs: &[String]) -> DocIndex {
        let mut index = Index::new();
        for (i, d) in docs.iter().enumerate() {
            index.add(Doc::Passage(i), [(d.as_str(), 1.0)]);
        }
        index.finish();
        DocIndex { index }
    }

    /// `(index, score)` of every document matching `query`, best first.
    pub fn rank(&self, query: &str) -> Vec<(usize, f64)> {
        let q = stems(query);
        let mut out: Vec<(usize, f64)> = self
            .index
            .score(&q)
            .into_iter()
            .filter_map(|(d, s, _)| match d {
                Doc::Passage(i) => Some((i, s)),
                Doc::Node(..) | Doc::Turn(_) => None,
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

/// The distinct stems of a text, sorted: what a question is matched by.
pub fn stems(text: &str) -> Vec<String> {
    let mut v = tokenize(text);
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Edge, Evidence};

    fn t(s: &str) -> DateTime<Utc> {
        crate::clock::parse_time(s).unwrap_or_default()
    }

    fn node(label: &str, kind: NodeKind, detail: &str) -> Node {
        let mut n = Node::new(
            NodeId::slug(label).unwrap_or_else(|| panic!("slug {label}")),
            label,
            Domain::Technical,
            0.5,
            t("2026-11-02T10:00:00Z"),
        );
        n.kind = kind;
        if !detail.is_empty() {
            n.detail = Some(detail.into());
        }
        n
    }

    fn ep(turn: u32, speaker: Speaker, at: &str, text: &str) -> Episode {
        Episode {
            session: "s1".into(),
            turn,
            speaker,
            at: t(at),
            text: text.into(),
        }
    }

    fn sample() -> (Graph, Vec<Episode>) {
        let mut g = Graph::new();
        let mut old = node(
            "Use weekly partitions",
            NodeKind::Decision,
            "partition size for events",
        );
        old.evidence.push(Evidence {
            session: "s1".into(),
            turn: 2,
            speaker: "user".into(),
            text: "let's partition the events table weekly".into(),
        });
        let new = node(
            "Use daily partitions",
            NodeKind::Decision,
            "partition size for events",
        );
        let (oid, nid) = (old.id.clone(), new.id.clone());
        g.upsert_node(old);
        g.upsert_node(new);
        g.upsert_edge(Edge {
            source: nid,
            target: oid,
            kind: EdgeKind::Supersedes,
            weight: 0.9,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        g.upsert_node(node(
            "Invoice service",
            NodeKind::Entity,
            "sends invoices monthly",
        ));
        let eps = vec![
            ep(
                1,
                Speaker::User,
                "2026-05-02T09:00:00Z",
                "I went to the museum and saw an exhibition of ancient silk.",
            ),
            ep(
                1,
                Speaker::Assistant,
                "2026-05-02T09:00:10Z",
                "That sounds lovely, silk road art is rich.",
            ),
            ep(
                5,
                Speaker::User,
                "2026-05-04T09:00:00Z",
                "The billing job retries three times before it gives up on a payment.",
            ),
        ];
        (g, eps)
    }

    fn run(q: &str, budget: usize) -> Answer {
        let (g, eps) = sample();
        run_on(&g, eps, q, budget)
    }

    fn run_on(g: &Graph, eps: Vec<Episode>, q: &str, budget: usize) -> Answer {
        run_graphs(&[("session", g)], eps, q, budget)
    }

    /// Searches the named graphs and `eps` at the tests' time.
    fn run_graphs(graphs: &[(&str, &Graph)], eps: Vec<Episode>, q: &str, budget: usize) -> Answer {
        let src = Sources {
            graphs: graphs
                .iter()
                .map(|(name, graph)| GraphSource {
                    name: (*name).into(),
                    graph,
                })
                .collect(),
            episodes: eps,
        };
        let mut o = SearchOptions::at(t("2026-11-02T12:00:00Z"));
        o.budget = budget;
        search(src, q, &o, None)
    }

    #[test]
    fn passages_answer_what_no_node_holds() {
        let a = run("how many times does billing retry?", 800);
        assert_eq!(a.hits[0].kind, "said", "{}", a.text);
        assert!(a.text.contains("three times"), "{}", a.text);
        assert!(a.tokens <= 800);
    }

    #[test]
    fn a_question_in_other_words_still_finds_what_its_kind_holds() {
        let (mut g, eps) = sample();
        g.upsert_node(node("van booking: the 3rd", NodeKind::Fact, ""));
        g.upsert_node(node("budget: 900", NodeKind::Fact, ""));
        // No word of the question is in the fact, but a fact is asked for.
        let a = run_on(&g, eps, "when do the movers come?", 800);
        let shown: Vec<&str> = a.hits.iter().map(|h| h.label.as_str()).collect();
        assert!(shown.contains(&"van booking: the 3rd"), "{}", a.text);
        assert!(
            a.hits
                .iter()
                .all(|h| h.node_kind != Some(NodeKind::Decision))
        );
        // A superseded node never stands in, and nothing stands in where no
        // kind is asked for.
        let a = run("what did we decide about the flowers?", 800);
        assert_eq!(a.hits[0].label, "Use daily partitions", "{}", a.text);
        // The old choice comes only as the history of the new one.
        for h in &a.hits[1..] {
            assert!(h.why.iter().all(|w| !w.contains("in force")), "{}", a.text);
        }
        assert!(run("the flowers", 800).hits.is_empty());
    }

    #[test]
    fn meaning_lifts_a_node_without_reordering_what_the_words_matched() {
        let (g, eps) = sample();
        let src = || Sources {
            graphs: vec![GraphSource {
                name: "session".into(),
                graph: &g,
            }],
            episodes: eps.clone(),
        };
        let o = SearchOptions::at(t("2026-11-02T12:00:00Z"));
        let q = "how are events partitioned?";
        let lexical = search(src(), q, &o, None);
        let invoice = NodeId::parse("invoice-service").unwrap_or_else(|| panic!("id"));
        let close = [(0, invoice.clone())];
        let hybrid = search(src(), q, &o, Some(&close));
        let order = |a: &Answer| -> Vec<String> {
            a.hits
                .iter()
                .filter(|h| h.id.as_ref() != Some(&invoice))
                .map(|h| h.label.clone())
                .collect()
        };
        // The words' order stands; the node close in meaning joins below
        // the best match.
        assert_eq!(order(&hybrid), order(&lexical), "{}", hybrid.text);
        let at = hybrid
            .hits
            .iter()
            .position(|h| h.id.as_ref() == Some(&invoice))
            .unwrap_or_else(|| panic!("not lifted: {}", hybrid.text));
        assert!(at > 0, "{}", hybrid.text);
        assert!(hybrid.hits[at].why.iter().any(|w| w == "close in meaning"));
        // Where no word matches, meaning alone ranks.
        let none = search(src(), "zzyzx quux", &o, Some(&close));
        assert_eq!(none.hits[0].id.as_ref(), Some(&invoice), "{}", none.text);
    }

    #[test]
    fn the_best_turn_is_cut_to_fit_before_lesser_hits_fill_the_room() {
        // The best matched turn is a little over the room: it is shown
        // cut, not passed over for the short, barely matching nodes below it.
        let mut g = Graph::new();
        for label in ["liner", "fish", "plants", "netting"] {
            g.upsert_node(node(
                &format!("Pond {label}"),
                NodeKind::Entity,
                &format!("the pond {label}, bought at the market last spring for the back yard"),
            ));
        }
        // One passage (no sentence ends): only a cut can make it fit.
        let long = format!(
            "The garden pond pump hums at night because its filter clogs, {}",
            "so rinse the filter weekly and the hum stops, ".repeat(20)
        );
        let mut eps = vec![ep(4, Speaker::User, "2026-05-04T10:00:00Z", &long)];
        for t in 5..25 {
            let text = format!("Item {t} of the shopping list is bread and milk.");
            eps.push(ep(t, Speaker::User, "2026-05-04T11:00:00Z", &text));
        }
        let a = run_on(&g, eps, "why does the garden pond pump hum?", 200);
        assert!(a.tokens <= 200, "{}", a.text);
        assert_eq!(a.hits[0].label, "turn 4", "{}", a.text);
        let shown = &a.hits[0].evidence[0].text;
        assert!(shown.ends_with(" …"), "{}", a.text);
        // The turn has the room; the nodes get what it leaves.
        assert!(count_tokens(shown) >= 100, "{}", a.text);
    }

    #[test]
    fn a_node_is_named_by_the_shortest_handle_that_tells_it_apart() {
        let ids = [
            "decision-use-daily-partitions",
            "decision-use-weekly-partitions",
            "decision-drop-zorplet",
            "invoice-service",
            "invoice",
        ];
        let nodes: Vec<Node> = ids
            .iter()
            .map(|id| {
                let mut n = node(id, NodeKind::Entity, "");
                n.id = NodeId::parse(id).unwrap_or_else(|| panic!("{id}"));
                n
            })
            .collect();
        let refs: Vec<&Node> = nodes.iter().collect();
        let short = |id: &str| short_id(id, refs.iter().copied());
        assert_eq!(short("decision-use-daily-partitions"), "decision-use-daily");
        assert_eq!(short("decision-drop-zorplet"), "decision-drop");
        assert_eq!(short("invoice-service"), "invoice-service");
        assert_eq!(short("invoice"), "invoice");
        // Each handle starts its own id and no other, as words.
        for id in ids {
            let h = short(id);
            let starts: Vec<&&str> = ids
                .iter()
                .filter(|o| crate::render::id_has_prefix(o, &h))
                .collect();
            assert!(starts == [&id] || h == id, "{h}: {starts:?}");
        }
    }

    #[test]
    fn a_handle_tells_its_node_apart_from_every_graph_searched() {
        // Expand looks in the session: a project node's handle must not
        // start a session node's id.
        let mut session = Graph::new();
        session.upsert_node(node(
            "Use weekly partitions for logs",
            NodeKind::Decision,
            "",
        ));
        let mut project = Graph::new();
        project.upsert_node(node(
            "Use weekly partitions for events",
            NodeKind::Decision,
            "events are partitioned weekly",
        ));
        let a = run_graphs(
            &[("session", &session), ("project", &project)],
            Vec::new(),
            "events partitioned",
            DEFAULT_BUDGET,
        );
        let hit = a
            .hits
            .iter()
            .find(|h| h.source == "project")
            .unwrap_or_else(|| panic!("{}", a.text));
        assert_eq!(
            hit.handle.as_deref(),
            Some("use-weekly-partitions-for-events"),
            "{}",
            a.text
        );
    }

    #[test]
    fn a_label_the_detail_spells_out_is_written_once() {
        let a = run("how many times does the billing job retry?", 800);
        let h = hit_text(1, &a.hits[0], None);
        assert!(words_hold(
            "We said: Use DAILY partitions, ok?",
            "use daily partitions"
        ));
        assert!(!words_hold("use daily partitionsx", "use daily partitions"));
        assert!(!words_hold("anything", "  "));
        // What matched is in `why`, not repeated in the text.
        assert!(!h.contains("matched "), "{h}");
        assert!(a.hits[0].why.iter().any(|w| w.starts_with("matched ")));
    }

    #[test]
    fn a_node_a_shown_turn_already_says_gives_its_room_back() {
        let (mut g, eps) = sample();
        let said = "The billing job retries three times before it gives up on a payment.";
        let mut n = node("billing job", NodeKind::Entity, said);
        n.evidence.push(Evidence {
            session: "s1".into(),
            turn: 5,
            speaker: "user".into(),
            text: said.into(),
        });
        g.upsert_node(n);
        let a = run_on(&g, eps, "how many times does the billing job retry?", 800);
        assert!(
            a.hits
                .iter()
                .any(|h| h.kind == "said" && h.evidence[0].turn == 5),
            "{}",
            a.text
        );
        assert!(
            a.hits.iter().all(|h| h.label != "billing job"),
            "{}",
            a.text
        );
        assert!(
            a.more.iter().any(|m| m.starts_with("billing job")),
            "{:?}",
            a.more
        );
        // A node whose sentence no shown turn says stays.
        let (mut g, eps) = sample();
        let mut n = node("billing job", NodeKind::Entity, "");
        n.evidence.push(Evidence {
            session: "s1".into(),
            turn: 9,
            speaker: "user".into(),
            text: "the billing job retries on a backoff".into(),
        });
        g.upsert_node(n);
        let a = run_on(&g, eps, "how many times does the billing job retry?", 800);
        assert!(
            a.hits.iter().any(|h| h.label == "billing job"),
            "{}",
            a.text
        );
    }

    #[test]
    fn at_a_small_budget_a_long_turn_shows_the_sentences_that_match() {
        // The matching sentence closes a long turn: cutting the turn from
        // its end to fit 200 tokens would keep only the talk before it.
        let filler = [
            "We drove over early to beat the traffic near the old bridge.",
            "The neighbours had their windows open and music playing all morning.",
            "Most of the boxes from the loft are still stacked in the hallway.",
            "Someone left a ladder leaning against the side gate again today.",
            "The gutter above the kitchen window needs clearing before winter.",
        ];
        let mut text = filler.repeat(3).join(" ");
        text.push_str(" The spare key for the shed hangs behind the boiler cupboard door.");
        let eps = vec![ep(3, Speaker::User, "2026-05-04T10:00:00Z", &text)];
        let a = run_on(&Graph::new(), eps, "where is the spare shed key?", 200);
        assert!(a.tokens <= 200, "{}", a.text);
        assert_eq!(a.hits[0].label, "turn 3", "{}", a.text);
        assert!(
            a.text.contains("behind the boiler cupboard door"),
            "{}",
            a.text
        );
    }

    #[test]
    fn the_header_counts_what_was_left_out_and_does_not_repeat_the_question() {
        let (g, mut eps) = sample();
        for t in 10..40 {
            let text = format!("The billing job note {t}: retries are logged with their invoice.");
            eps.push(ep(t, Speaker::User, "2026-05-04T11:00:00Z", &text));
        }
        let a = run_on(&g, eps, "billing retries", 200);
        assert!(a.tokens <= 200, "{}", a.text);
        let first = a.text.lines().next().unwrap_or_default();
        assert!(first.starts_with("memory: "), "{first}");
        assert!(!first.contains("billing retries"), "{first}");
        let shown = a.hits.len();
        let all = shown + a.more.len();
        assert!(all > shown, "{}", a.text);
        assert!(first.contains(&format!("{shown} of {all} hits")), "{first}");
    }

    #[test]
    fn one_id_in_two_projects_is_two_things_unless_said_in_the_same_turn() {
        let said = |session: &str, turn: u32, text: &str| Evidence {
            session: session.into(),
            turn,
            speaker: "user".into(),
            text: text.into(),
        };
        let person = |detail: &str, ev: Evidence| {
            let mut n = node("Tamsin", NodeKind::Person, detail);
            n.evidence.push(ev);
            n
        };
        let mut session = Graph::new();
        session.upsert_node(person(
            "harbour pilot",
            said("s1", 3, "Tamsin is the harbour pilot this week."),
        ));
        // The project's copy of the session's node: one thing.
        let mut project = Graph::new();
        project.upsert_node(person(
            "harbour pilot",
            said("s1", 3, "Tamsin is the harbour pilot this week."),
        ));
        // Another project's Tamsin: another person.
        let mut other = Graph::new();
        other.upsert_node(person(
            "orchard tenant",
            said("s9", 5, "Tamsin rents the orchard plot by the lane."),
        ));
        let a = run_graphs(
            &[
                ("session", &session),
                ("project", &project),
                ("project other", &other),
            ],
            Vec::new(),
            "who is Tamsin?",
            DEFAULT_BUDGET,
        );
        let found: Vec<&str> = a.hits.iter().map(|h| h.source.as_str()).collect();
        assert_eq!(found, ["session", "project other"], "{}", a.text);
        assert!(a.text.contains("orchard tenant"), "{}", a.text);
    }

    #[test]
    fn a_turn_that_does_not_fit_whole_is_cut_to_the_room_left() {
        let (g, mut eps) = sample();
        // One passage (no sentence ends): only a cut can make it fit.
        let long =
            "the billing retry schedule waits one hour, then six hours, then a day; ".repeat(12);
        eps.push(ep(7, Speaker::Assistant, "2026-05-04T10:00:00Z", &long));
        let a = run_on(&g, eps, "billing retry schedule", 160);
        assert!(a.tokens <= 160, "{}", a.text);
        let cut = a
            .hits
            .iter()
            .find(|h| h.label == "turn 7")
            .unwrap_or_else(|| panic!("turn 7 not shown: {}", a.text));
        assert!(cut.evidence[0].text.ends_with(" …"), "{}", a.text);
        assert!(
            cut.evidence[0]
                .text
                .starts_with("the billing retry schedule waits")
        );
    }

    #[test]
    fn a_named_day_favours_what_was_said_that_day() {
        let a = run("what exhibition did I see on May 2nd?", 800);
        assert!(a.hits[0].evidence[0].text.contains("silk"), "{}", a.text);
        assert!(
            a.hits[0]
                .why
                .iter()
                .any(|w| w.contains("said on 2026-05-02")),
            "{:?}",
            a.hits[0].why
        );
    }

    #[test]
    fn newer_decision_first_unless_the_past_is_asked() {
        let a = run("how are events partitioned?", 800);
        let labels: Vec<&str> = a.hits.iter().map(|h| h.label.as_str()).collect();
        let d = labels.iter().position(|l| *l == "Use daily partitions");
        let w = labels.iter().position(|l| *l == "Use weekly partitions");
        assert!(d.is_some() && w.is_some() && d < w, "{labels:?}");
        let a = run("how were events partitioned before?", 800);
        let labels: Vec<&str> = a.hits.iter().map(|h| h.label.as_str()).collect();
        let d = labels.iter().position(|l| *l == "Use daily partitions");
        let w = labels.iter().position(|l| *l == "Use weekly partitions");
        assert!(d.is_some() && w.is_some() && w < d, "{labels:?}");
    }

    #[test]
    fn a_reply_that_asks_brings_the_turn_that_answers() {
        let (g, mut eps) = sample();
        eps.extend([
            ep(
                7,
                Speaker::User,
                "2026-05-05T09:00:00Z",
                "We spent the weekend walking round the old harbour town.",
            ),
            ep(
                7,
                Speaker::Assistant,
                "2026-05-05T09:00:10Z",
                "A harbour town sounds lovely. Which part did you like best?",
            ),
            ep(
                8,
                Speaker::User,
                "2026-05-05T09:01:00Z",
                "The lighthouse on the cliff, easily.",
            ),
            ep(
                8,
                Speaker::Assistant,
                "2026-05-05T09:01:10Z",
                "Lighthouses make good walks.",
            ),
        ]);
        let ask = |eps: Vec<Episode>| {
            run_on(
                &g,
                eps,
                "what did I like best in the harbour town?",
                DEFAULT_BUDGET,
            )
        };
        let a = ask(eps.clone());
        let next = a.hits.iter().find(|h| h.label == "turn 8");
        assert!(next.is_some(), "{}", a.text);
        assert!(a.text.contains("lighthouse on the cliff"), "{}", a.text);
        assert!(
            next.is_some_and(|h| h.why.iter().any(|w| w.contains("turn 7"))),
            "{}",
            a.text
        );
        // A reply that does not ask brings nothing after it.
        for e in &mut eps {
            if e.turn == 7 && e.speaker == Speaker::Assistant {
                e.text = "A harbour town sounds lovely.".into();
            }
        }
        let a = ask(eps);
        assert!(!a.text.contains("lighthouse"), "{}", a.text);
    }

    #[test]
    fn a_why_question_brings_the_turn_a_matched_decision_came_from() {
        let (g, mut eps) = sample();
        eps.extend([
            ep(
                2,
                Speaker::User,
                "2026-05-03T09:00:00Z",
                "ok, do it that way",
            ),
            ep(
                2,
                Speaker::Assistant,
                "2026-05-03T09:00:10Z",
                "Done: a seven-day chunk fits inside the vacuum window.",
            ),
        ]);
        let ask = |q: &str| run_on(&g, eps.clone(), q, DEFAULT_BUDGET);
        let a = ask("why did we use weekly partitions before?");
        assert!(a.text.contains("vacuum window"), "{}", a.text);
        assert!(
            a.text.contains("where Use weekly partitions was said"),
            "{}",
            a.text
        );
        // Not asked why: the turn has no word of the question.
        let a = ask("did we use weekly partitions before?");
        assert!(!a.text.contains("vacuum window"), "{}", a.text);
    }

    #[test]
    fn initials_of_two_question_words_find_their_abbreviation() {
        let (g, mut eps) = sample();
        eps.push(ep(
            9,
            Speaker::User,
            "2026-05-06T09:00:00Z",
            "bump lr to 7e-5, the loss curve is too noisy",
        ));
        let a = run_on(
            &g,
            eps,
            "what learning rate did we settle on?",
            DEFAULT_BUDGET,
        );
        assert!(a.text.contains("7e-5"), "{}", a.text);
        assert!(a.text.contains("matched lr (learning rate)"), "{}", a.text);
    }

    #[test]
    fn initials_are_no_word_where_both_words_were_said() {
        // "garden tools" were both said: "gt" is something else here.
        let (g, mut eps) = sample();
        eps.push(ep(
            9,
            Speaker::User,
            "2026-05-06T09:00:00Z",
            "the gt build failed again on the runner",
        ));
        eps.push(ep(
            10,
            Speaker::User,
            "2026-05-06T09:05:00Z",
            "the garden shed is full, the tools go in the garage",
        ));
        let a = run_on(&g, eps, "where do the garden tools go?", DEFAULT_BUDGET);
        assert!(a.text.contains("garage"), "{}", a.text);
        assert!(!a.text.contains("gt build"), "{}", a.text);
    }

    #[test]
    fn stems_join_inflections() {
        let a = run("invoice", 800);
        assert_eq!(a.hits[0].label, "Invoice service");
        let a = run("invoices", 800);
        assert_eq!(a.hits[0].label, "Invoice service");
    }

    #[test]
    fn nothing_found_is_said_plainly_and_budgets_are_clamped() {
        let a = run("zeppelin", 800);
        assert!(a.hits.is_empty());
        assert!(a.text.starts_with("nothing in memory matches"));
        let a = run("", 800);
        assert!(a.hits.is_empty());
        let a = run("partitions", 0);
        assert_eq!(a.budget, MIN_BUDGET);
        assert!(a.tokens <= MIN_BUDGET, "{}", a.tokens);
        assert!(a.notes.iter().any(|n| n.contains("clamped")));
        let a = run("partitions", 1_000_000);
        assert_eq!(a.budget, MAX_BUDGET);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever the question and the budget, the answer fits it.
        #[test]
        fn the_answer_never_exceeds_its_budget(
            budget in 0usize..3_000,
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "partition", "events", "weekly", "billing", "retry", "silk",
                    "museum", "May", "2nd", "invoices", "before", "who", "日本", "x",
                ]),
                0..6,
            ),
        ) {
            let a = run(&words.join(" "), budget);
            let applied = budget.clamp(MIN_BUDGET, MAX_BUDGET);
            proptest::prop_assert_eq!(a.budget, applied);
            proptest::prop_assert!(count_tokens(&a.text) <= applied, "{} > {applied}", count_tokens(&a.text));
            proptest::prop_assert_eq!(a.tokens, count_tokens(&a.text));
        }
    }

    #[test]
    fn dates_in_questions() {
        assert_eq!(named_dates("on May 2nd"), vec![(None, 5, 2)]);
        assert_eq!(named_dates("4 june"), vec![(None, 6, 4)]);
        assert_eq!(named_dates("on 2026-11-03 we"), vec![(Some(2026), 11, 3)]);
        assert!(named_dates("may I ask").is_empty());
    }

    /// The splitter as first written (a char buffer, words recounted at
    /// every stop): the one-pass version must split exactly like it.
    fn passages_reference(text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut cur = String::new();
        let flush = |cur: &mut String, out: &mut Vec<String>| {
            let t = cur.trim();
            if !t.is_empty() {
                out.push(t.to_owned());
            }
            cur.clear();
        };
        let chars: Vec<char> = text.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if c == '\n' {
                if cur.split_whitespace().count() >= 6 {
                    flush(&mut cur, &mut out);
                } else if !cur.trim().is_empty() {
                    cur.push(' ');
                }
                continue;
            }
            cur.push(c);
            let end = matches!(c, '.' | '!' | '?')
                && chars.get(i + 1).is_none_or(|n| n.is_whitespace())
                && cur.split_whitespace().count() >= 6;
            if end {
                flush(&mut cur, &mut out);
            }
        }
        if cur.split_whitespace().count() < 4
            && let Some(last) = out.last_mut()
        {
            last.push(' ');
            last.push_str(cur.trim());
            cur.clear();
        }
        flush(&mut cur, &mut out);
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]
        #[test]
        fn passages_split_as_the_reference_does(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "bb", "ccc", "日本", "é", " ", "  ", "\t", "\n", "\n\n", ".", "!", "?",
                    "\u{3000}", "'", "x.", "y!", "z?", "...", " .", ". ", "\r\n",
                ]),
                0..60,
            ),
        ) {
            let text = parts.concat();
            proptest::prop_assert_eq!(passages_of(&text), passages_reference(&text));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]
        #[test]
        fn raw_words_split_as_tokenize_does(text in "[a-zA-Z0-9' .,_/\n\t\u{e9}\u{3000}\u{65e5}\u{2019}-]{0,40}") {
            let want: Vec<&str> = text
                .split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .filter(|w| !w.is_empty())
                .collect();
            proptest::prop_assert_eq!(raw_words(&text).collect::<Vec<_>>(), want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1_000))]
        /// Lines that start with neither a space nor a line break count
        /// as much put together as apart (what packing relies on).
        #[test]
        fn tokens_of_lines_add_up(
            lines in proptest::collection::vec(
                (
                    "[a-zA-Z0-9\"'(…\u{65e5}\u{e9}.,:-]",
                    "[a-zA-Z0-9 \t\r\n\"'().,:;!?/…\u{3000}\u{65e5}\u{e9}\u{1f600}-]{0,40}",
                    proptest::sample::select(vec!["\n", "\n\n", " \n", "\r\n", ".\n", ")\n\n", "\t \n"]),
                ),
                0..8,
            ),
        ) {
            let parts: Vec<String> = lines.iter().map(|(a, b, c)| format!("{a}{b}{c}")).collect();
            let whole = parts.concat();
            let sum: usize = parts.iter().map(|p| count_lines(p)).sum();
            proptest::prop_assert_eq!(count_tokens(&whole), sum, "{:?}", parts);
        }
    }

    #[test]
    fn passages_split_on_sentences() {
        let p = passages_of("One two three four five six. Seven eight nine ten eleven twelve! ok");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[1].ends_with("ok"));
    }
}
