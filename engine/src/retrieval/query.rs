//! Explicit retrieval: what `memory_query` / `rollgraph query` return.
//!
//! Two steps, kept apart so embeddings can be fused in later:
//! [`lexical_scores`] is a small BM25 over each node's label (counted
//! twice), aliases and detail; [`query`] turns those seeds into ranked
//! [`QueryHit`]s — following edges one or two hops with a decayed score,
//! favouring heavy and recently active nodes, preferring the newer side of a
//! `supersedes` pair — and says for every hit *why* it surfaced: which words
//! matched, through which edge, how recent it is.
//!
//! This is the explicit (looser) retrieval mode; the proactive render has
//! its own, stricter selection.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::graph::{Domain, EdgeKind, Graph, Node, NodeId};

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;

/// Knobs of an explicit query.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryOptions {
    /// Most hits returned.
    pub limit: usize,
    /// Edge hops followed from a lexical match (0 = none).
    pub hops: u32,
    /// Score kept per hop (times the edge's weight).
    pub hop_decay: f64,
    /// Hits scoring under this fraction of the best hit are dropped (the
    /// explicit threshold: looser than the proactive render's).
    pub min_score: f64,
    /// Half-life, in hours, of the recency bonus.
    pub recency_half_life_hours: f64,
    /// How much full recency adds to a score (fraction).
    pub recency_bonus: f64,
    /// The clock.
    pub now: DateTime<Utc>,
}

impl QueryOptions {
    /// Defaults at a given time.
    pub fn at(now: DateTime<Utc>) -> QueryOptions {
        QueryOptions {
            limit: 8,
            hops: 2,
            hop_decay: 0.5,
            min_score: 0.12,
            recency_half_life_hours: 6.0,
            recency_bonus: 0.25,
            now,
        }
    }
}

/// One result of a query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryHit {
    /// The node.
    pub id: NodeId,
    /// Its label.
    pub label: String,
    /// Its domain.
    pub domain: Domain,
    /// The score (higher is better; 1.0 ≈ the best lexical match).
    pub score: f64,
    /// Why it surfaced: matched words, the edge it was reached through, how
    /// recent it is.
    pub why: Vec<String>,
}

/// A node's lexical match.
#[derive(Clone, Debug, PartialEq)]
pub struct LexicalScore {
    /// The node.
    pub id: NodeId,
    /// The BM25 score (unnormalised).
    pub score: f64,
    /// Query words that matched, with the field they matched in.
    pub matched: Vec<(String, &'static str)>,
}

/// Splits text into lowercase word stems (letters and digits; very short
/// words and common stop words dropped).
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()))
        .filter(|w| w.chars().count() >= 2 && !STOP.contains(&w.as_str()))
        .collect()
}

const STOP: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "what", "which", "who", "how", "why", "are",
    "was", "were", "is", "it", "its", "of", "to", "in", "on", "at", "by", "an", "or", "be", "do",
    "did", "we", "us", "our", "you", "your", "me", "my", "about", "from", "into", "any", "all",
    "there", "their", "them", "they", "when", "where", "use", "used",
];

/// A crude English stemmer: enough that "retries" finds "retry" and
/// "webhooks" finds "webhook".
fn stem(w: &str) -> String {
    let n = w.chars().count();
    if n > 4 {
        if let Some(s) = w.strip_suffix("ies") {
            return format!("{s}y");
        }
        for suf in ["ing", "ed", "es"] {
            if let Some(s) = w.strip_suffix(suf)
                && s.chars().count() >= 3
            {
                return s.to_owned();
            }
        }
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") {
        return w[..w.len() - 1].to_owned();
    }
    w.to_owned()
}

/// The words of a node, by field: the label twice (it matters most).
fn node_fields(n: &Node) -> [(&'static str, Vec<String>); 3] {
    let aliases: Vec<String> = n.aliases.iter().flat_map(|a| tokenize(a)).collect();
    let detail = n.detail.as_deref().map(tokenize).unwrap_or_default();
    [
        ("label", tokenize(&n.label)),
        ("alias", aliases),
        ("detail", detail),
    ]
}

/// BM25 scores of every node that matches at least one query word, best
/// first (ties by id).
pub fn lexical_scores(graph: &Graph, text: &str) -> Vec<LexicalScore> {
    let mut q = tokenize(text);
    q.sort();
    q.dedup();
    if q.is_empty() || graph.is_empty() {
        return Vec::new();
    }
    struct Doc<'a> {
        id: &'a NodeId,
        tf: HashMap<&'a str, (f64, &'static str)>,
        len: f64,
    }
    type Fields = [(&'static str, Vec<String>); 3];
    let fields: Vec<(&Node, Fields)> = graph
        .nodes()
        .into_iter()
        .map(|n| (n, node_fields(n)))
        .collect();
    let docs: Vec<Doc<'_>> = fields
        .iter()
        .map(|(n, fs)| {
            let mut tf: HashMap<&str, (f64, &'static str)> = HashMap::new();
            let mut len = 0.0;
            for (field, words) in fs {
                let w = if *field == "label" { 2.0 } else { 1.0 };
                for t in words {
                    let e = tf.entry(t.as_str()).or_insert((0.0, field));
                    e.0 += w;
                    len += w;
                }
            }
            Doc { id: &n.id, tf, len }
        })
        .collect();
    let n = docs.len() as f64;
    let avg = (docs.iter().map(|d| d.len).sum::<f64>() / n).max(1.0);
    let df: HashMap<&str, f64> = q
        .iter()
        .map(|t| {
            (
                t.as_str(),
                docs.iter()
                    .filter(|d| d.tf.contains_key(t.as_str()))
                    .count() as f64,
            )
        })
        .collect();
    let mut out: Vec<LexicalScore> = Vec::new();
    for d in &docs {
        let mut score = 0.0;
        let mut matched = Vec::new();
        for t in &q {
            let Some(&(f, field)) = d.tf.get(t.as_str()) else {
                continue;
            };
            let df = df.get(t.as_str()).copied().unwrap_or(0.0);
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            score += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * d.len / avg));
            matched.push((t.clone(), field));
        }
        if score > 0.0 {
            out.push(LexicalScore {
                id: d.id.clone(),
                score,
                matched,
            });
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    out
}

fn ago(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    format!("active {}", crate::render::ago(now, then))
}

/// Runs an explicit query: lexical seeds, then 1–`hops` hops along edges,
/// weighted by node weight and recency, with reasons.
pub fn query(graph: &Graph, text: &str, opts: &QueryOptions) -> Vec<QueryHit> {
    let lex = lexical_scores(graph, text);
    let Some(top) = lex.first().map(|l| l.score) else {
        return Vec::new();
    };
    let seeds: Vec<Seed> = lex
        .iter()
        .map(|l| Seed {
            id: l.id.clone(),
            score: l.score / top,
            why: vec![matched_reason(l)],
        })
        .collect();
    expand_seeds(graph, seeds, opts)
}

fn matched_reason(l: &LexicalScore) -> String {
    let words: Vec<String> = l
        .matched
        .iter()
        .map(|(w, f)| format!("\"{w}\" in {f}"))
        .collect();
    format!("matched {}", words.join(", "))
}

/// A node a query starts from, its relevance in 0..=1 and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Seed {
    /// The node.
    pub id: NodeId,
    /// Relevance, 1 for the best seed.
    pub score: f64,
    /// Why it is a seed ("matched …", "close in meaning …").
    pub why: Vec<String>,
}

/// Hybrid explicit query: the lexical ranking and the embedding ranking
/// (nodes whose meaning is within `threshold` of the text) fused by
/// reciprocal rank, then followed along edges like [`query`]. Without a
/// model it is exactly [`query`].
pub fn hybrid_query(
    graph: &Graph,
    text: &str,
    opts: &QueryOptions,
    sem: Option<&mut crate::semantic::Semantic>,
    threshold: f32,
) -> Vec<QueryHit> {
    let Some(sem) = sem else {
        return query(graph, text, opts);
    };
    let lex = lexical_scores(graph, text);
    let mut close: Vec<(NodeId, f32)> = Vec::new();
    match sem.index.sync(graph, &mut sem.embedder, |_| true) {
        Ok(_) => {
            if let Ok(v) = sem.embedder.embed_one(text) {
                close = sem
                    .index
                    .nearest(graph, &v, 50, |_| true)
                    .into_iter()
                    .filter(|(_, s)| *s >= threshold)
                    .collect();
            }
        }
        Err(e) => tracing::warn!("embedding failed; lexical query only: {e}"),
    }
    if close.is_empty() {
        return query(graph, text, opts);
    }
    let fused = crate::semantic::rrf(
        &[
            lex.iter().map(|l| l.id.clone()).collect(),
            close.iter().map(|(id, _)| id.clone()).collect(),
        ],
        60.0,
    );
    let Some(top) = fused.first().map(|(_, s)| *s) else {
        return Vec::new();
    };
    let seeds = fused
        .into_iter()
        .map(|(id, s)| {
            let mut why = Vec::new();
            if let Some(l) = lex.iter().find(|l| l.id == id) {
                why.push(matched_reason(l));
            }
            if let Some((_, sim)) = close.iter().find(|(c, _)| *c == id) {
                why.push(format!("close in meaning ({sim:.2})"));
            }
            Seed {
                id,
                score: s / top,
                why,
            }
        })
        .collect();
    expand_seeds(graph, seeds, opts)
}

/// Turns seeds into ranked hits: follows edges 1–`hops` hops with a decayed
/// score, favours heavy and recent nodes, prefers the newer side of a
/// supersedes pair, and keeps every reason.
pub fn expand_seeds(graph: &Graph, seeds: Vec<Seed>, opts: &QueryOptions) -> Vec<QueryHit> {
    // Raw relevance per node, and the reasons behind it.
    let mut relevance: BTreeMap<NodeId, (f64, Vec<String>)> = BTreeMap::new();
    for sd in &seeds {
        relevance.insert(sd.id.clone(), (sd.score, sd.why.clone()));
    }
    // Follow edges from the seeds; a neighbour keeps its best path.
    for l in &seeds {
        let seed_score = l.score;
        let Some(seed) = graph.node(&l.id) else {
            continue;
        };
        let mut frontier: Vec<(NodeId, f64)> = vec![(l.id.clone(), seed_score)];
        for hop in 1..=opts.hops {
            let mut next = Vec::new();
            for (id, s) in &frontier {
                for e in graph.edges_of(id) {
                    let (other, dir) = if &e.source == id {
                        (&e.target, "→")
                    } else {
                        (&e.source, "←")
                    };
                    let ns = s * opts.hop_decay * e.weight.clamp(0.0, 1.0);
                    if ns <= 0.0 || other == &l.id {
                        continue;
                    }
                    let via = if hop == 1 {
                        format!("via {} {dir} {}", e.kind.as_str(), seed.label)
                    } else {
                        format!(
                            "{hop} hops from {} (last: {} {dir})",
                            seed.label,
                            e.kind.as_str()
                        )
                    };
                    let entry = relevance.entry(other.clone()).or_insert((0.0, Vec::new()));
                    if ns > entry.0 {
                        // A direct match stays the first reason.
                        if entry.0 == 0.0
                            || !entry.1.first().is_some_and(|r| {
                                r.starts_with("matched") || r.starts_with("close in meaning")
                            })
                        {
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
    let mut hits: Vec<QueryHit> = relevance
        .into_iter()
        .filter_map(|(id, (rel, mut why))| {
            let n = graph.node(&id)?;
            let age_h = ((opts.now - n.last_activated).num_seconds().max(0) as f64) / 3_600.0;
            let recency = (-age_h / opts.recency_half_life_hours.max(1e-6)).exp2();
            let mut score =
                rel * (0.6 + 0.4 * n.weight.clamp(0.0, 1.0)) * (1.0 + opts.recency_bonus * recency);
            why.push(ago(opts.now, n.last_activated));
            if let Some(newer) = graph.superseded_by(&id) {
                score *= 0.6;
                why.push(format!("superseded by {}", newer.label));
            }
            if graph
                .edges_of(&id)
                .iter()
                .any(|e| e.kind == EdgeKind::Supersedes && e.source == id)
            {
                why.push("current decision".into());
            }
            Some(QueryHit {
                label: n.label.clone(),
                domain: n.domain,
                id,
                score,
                why,
            })
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    let best = hits.first().map(|h| h.score).unwrap_or(0.0);
    hits.retain(|h| h.score >= best * opts.min_score);
    hits.truncate(opts.limit);
    for h in &mut hits {
        h.score = (h.score * 1_000.0).round() / 1_000.0;
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Edge;

    fn t(s: &str) -> DateTime<Utc> {
        crate::clock::parse_time(s).unwrap_or_default()
    }

    fn node(label: &str, domain: Domain, w: f64, detail: Option<&str>, at: &str) -> Node {
        let mut n = Node::new(
            NodeId::slug(label).unwrap_or_else(|| panic!("slug {label}")),
            label,
            domain,
            w,
            t(at),
        );
        n.detail = detail.map(str::to_owned);
        n
    }

    fn edge(g: &mut Graph, a: &str, kind: EdgeKind, b: &str) {
        let e = Edge {
            source: NodeId::slug(a).unwrap_or_else(|| panic!("{a}")),
            target: NodeId::slug(b).unwrap_or_else(|| panic!("{b}")),
            kind,
            weight: 0.8,
        };
        g.upsert_edge(e).unwrap_or_else(|e| panic!("{e}"));
    }

    fn graph() -> Graph {
        let mut g = Graph::new();
        g.upsert_node(node(
            "Mailvane",
            Domain::Technical,
            0.4,
            Some("transactional email provider"),
            "2026-11-02T08:00:00Z",
        ));
        g.upsert_node(node(
            "Postwick",
            Domain::Technical,
            0.8,
            Some("email provider for dunning mails"),
            "2026-11-02T09:50:00Z",
        ));
        g.upsert_node(node(
            "dunning retries",
            Domain::Project,
            0.7,
            Some("retry schedule 1, 3, 7 days"),
            "2026-11-02T09:40:00Z",
        ));
        g.upsert_node(node(
            "Ilsa Voss",
            Domain::Relationship,
            0.6,
            Some("reviews billing code"),
            "2026-11-01T10:00:00Z",
        ));
        g.upsert_node(node(
            "short answers",
            Domain::Personal,
            0.5,
            None,
            "2026-10-20T10:00:00Z",
        ));
        edge(&mut g, "Postwick", EdgeKind::Supersedes, "Mailvane");
        edge(&mut g, "dunning retries", EdgeKind::Uses, "Postwick");
        edge(&mut g, "Ilsa Voss", EdgeKind::Owns, "dunning retries");
        g
    }

    #[test]
    fn tokenize_stems_and_drops_stop_words() {
        assert_eq!(
            tokenize("What about the Retries of webhooks?"),
            vec!["retry", "webhook"]
        );
    }

    #[test]
    fn lexical_prefers_label_matches() {
        let g = graph();
        let l = lexical_scores(&g, "email provider");
        assert!(l.len() >= 2);
        assert!(
            l.iter()
                .all(|x| x.matched.iter().any(|(_, f)| *f == "detail"))
        );
        let l = lexical_scores(&g, "postwick");
        assert_eq!(l.first().map(|x| x.id.as_str()), Some("postwick"));
        assert_eq!(l[0].matched, vec![("postwick".to_string(), "label")]);
    }

    #[test]
    fn query_says_why_and_follows_edges() {
        let g = graph();
        let hits = query(
            &g,
            "who owns the retries?",
            &QueryOptions::at(t("2026-11-02T10:00:00Z")),
        );
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids.first(), Some(&"dunning-retries"), "{hits:#?}");
        assert!(
            hits[0].why[0].contains("\"retry\" in label"),
            "{:?}",
            hits[0].why
        );
        let ilsa = hits
            .iter()
            .find(|h| h.id.as_str() == "ilsa-voss")
            .unwrap_or_else(|| panic!("{hits:#?}"));
        assert!(
            ilsa.why.iter().any(|w| w.contains("via owns")),
            "{:?}",
            ilsa.why
        );
        assert!(
            ilsa.why.iter().any(|w| w.starts_with("active")),
            "{:?}",
            ilsa.why
        );
    }

    #[test]
    fn newer_decision_outranks_the_superseded_one() {
        let g = graph();
        let hits = query(
            &g,
            "email provider",
            &QueryOptions::at(t("2026-11-02T10:00:00Z")),
        );
        // Both must be found: `None < Some(_)` would pass a missing newer one.
        let pos = |id: &str| {
            hits.iter()
                .position(|h| h.id.as_str() == id)
                .unwrap_or_else(|| panic!("{id} not found: {hits:#?}"))
        };
        assert!(pos("postwick") < pos("mailvane"), "{hits:#?}");
        let mailvane = hits
            .iter()
            .find(|h| h.id.as_str() == "mailvane")
            .unwrap_or_else(|| panic!("{hits:#?}"));
        assert!(
            mailvane.why.iter().any(|w| w == "superseded by Postwick"),
            "{:?}",
            mailvane.why
        );
    }

    #[test]
    fn no_match_means_no_hits() {
        let g = graph();
        assert!(
            query(
                &g,
                "kubernetes",
                &QueryOptions::at(t("2026-11-02T10:00:00Z"))
            )
            .is_empty()
        );
        assert!(query(&g, "", &QueryOptions::at(t("2026-11-02T10:00:00Z"))).is_empty());
    }
}
