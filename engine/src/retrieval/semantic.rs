//! What the local embedding model adds, always optional: node vectors, the
//! near-duplicate merge of a probe's new nodes, semantic focus, and the
//! fusion of lexical and embedding rankings for explicit queries.
//!
//! Everything here runs in long-lived processes (daemon, MCP server,
//! replay), never on the hook's critical path. Without a model each
//! function degrades to "no semantic signal" and the engine runs lexically.

use std::collections::{BTreeMap, HashMap};

use json_patch::PatchOperation;
use serde_json::{Value, json};

use crate::embed::{Embedder, Vector, similarity};
use crate::graph::{Domain, Graph, Node, NodeId, NodeKind, normalize_name};

/// The text a node is embedded from: what it is called, and what it is about.
pub fn node_text(n: &Node) -> String {
    match n.kind {
        // Names: the label (and aliases) say what they are; details add noise.
        NodeKind::Entity | NodeKind::Project | NodeKind::Person => {
            let mut t = n.label.clone();
            for a in n.aliases.iter().take(4) {
                t.push_str(", ");
                t.push_str(a);
            }
            if let Some(d) = &n.detail {
                t.push_str(". ");
                t.extend(d.chars().take(120));
            }
            t
        }
        _ => n.label.clone(),
    }
}

fn text_key(s: &str) -> u64 {
    // FNV-1a: a cheap, stable fingerprint of the embedded text.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Node vectors of one graph, recomputed only when a node's text changes.
/// Every vector carries the model id; a different model starts over.
#[derive(Debug, Default)]
pub struct VectorIndex {
    model: String,
    entries: HashMap<NodeId, (u64, Vector)>,
}

impl VectorIndex {
    /// An empty index.
    pub fn new() -> VectorIndex {
        VectorIndex::default()
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no vector is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The vector of a node, if computed.
    pub fn get(&self, id: &NodeId) -> Option<&Vector> {
        self.entries.get(id).map(|(_, v)| v)
    }

    /// Embeds the nodes `filter` selects whose text changed (batched), drops
    /// vectors of nodes that are gone. Returns how many were embedded.
    pub fn sync(
        &mut self,
        g: &Graph,
        embedder: &mut Embedder,
        filter: impl Fn(&Node) -> bool,
    ) -> Result<usize, crate::embed::EmbedError> {
        if self.model != embedder.model_id() {
            self.entries.clear();
            self.model = embedder.model_id().to_owned();
        }
        self.entries.retain(|id, _| g.contains(id));
        let mut todo: Vec<(NodeId, u64, String)> = Vec::new();
        for n in g.nodes_unordered().filter(|n| filter(n)) {
            let text = node_text(n);
            let key = text_key(&text);
            if self.entries.get(&n.id).is_none_or(|(k, _)| *k != key) {
                todo.push((n.id.clone(), key, text));
            }
        }
        todo.sort_by(|a, b| a.0.cmp(&b.0));
        let mut done = 0;
        for chunk in todo.chunks(64) {
            let texts: Vec<&str> = chunk.iter().map(|(_, _, t)| t.as_str()).collect();
            let vectors = embedder.embed_lossy(&texts)?;
            for ((id, key, _), v) in chunk.iter().zip(vectors) {
                if let Some(v) = v {
                    self.entries.insert(id.clone(), (*key, v));
                    done += 1;
                }
            }
        }
        Ok(done)
    }

    /// Nodes most similar to `v` among those `filter` accepts, best first.
    pub fn nearest(
        &self,
        g: &Graph,
        v: &Vector,
        limit: usize,
        filter: impl Fn(&Node) -> bool,
    ) -> Vec<(NodeId, f32)> {
        let mut hits: Vec<(NodeId, f32)> = self
            .entries
            .iter()
            .filter(|(id, _)| g.node(id).is_some_and(&filter))
            .filter_map(|(id, (_, w))| similarity(v, w).map(|s| (id.clone(), s)))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        hits.truncate(limit);
        hits
    }
}

/// An embedder and the vectors it made for one graph.
#[derive(Debug)]
pub struct Semantic {
    /// The loaded model.
    pub embedder: Embedder,
    /// Node vectors.
    pub index: VectorIndex,
}

/// Kinds whose near-duplicates merge: names of things and standing
/// statements. Files and identifiers are exact (`mod.rs` ≠ `sender.rs`);
/// decisions, facts and procedures keep their own history (a changed value
/// is a new node that supersedes the old one); people merge by alias, not by
/// meaning.
pub fn mergeable(kind: NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Entity
            | NodeKind::Project
            | NodeKind::Correction
            | NodeKind::Preference
            | NodeKind::Restriction
            | NodeKind::Intention
    )
}

/// A new node folded into an existing one.
#[derive(Clone, Debug, PartialEq)]
pub struct Merge {
    /// The id the probe proposed.
    pub proposed: NodeId,
    /// The existing node it became.
    pub into: NodeId,
    /// Their similarity.
    pub similarity: f32,
}

fn node_add(op: &PatchOperation) -> Option<(String, Node)> {
    let v = serde_json::to_value(op).ok()?;
    if v.get("op")?.as_str()? != "add" {
        return None;
    }
    let path = v.get("path")?.as_str()?;
    let id = path.strip_prefix("/nodes/")?;
    if id.contains('/') {
        return None;
    }
    let node: Node = serde_json::from_value(v.get("value")?.clone()).ok()?;
    Some((id.to_owned(), node))
}

/// Rewrites a probe's operations so that a proposed new node which means the
/// same as an existing node of the same domain (and a mergeable kind) becomes
/// that node: its label joins the aliases, the existing node is raised, and
/// edges to the proposed id point at the existing one.
pub fn merge_near_duplicates(
    ops: Vec<PatchOperation>,
    g: &Graph,
    sem: &mut Semantic,
    threshold: f32,
) -> (Vec<PatchOperation>, Vec<Merge>) {
    let adds: Vec<(String, Node)> = ops
        .iter()
        .filter_map(node_add)
        .filter(|(id, _)| NodeId::parse(id).is_some_and(|i| !g.contains(&i)))
        .collect();
    let candidates: Vec<&(String, Node)> = adds.iter().filter(|(_, n)| mergeable(n.kind)).collect();
    if candidates.is_empty() {
        return (ops, Vec::new());
    }
    if let Err(e) = sem.index.sync(g, &mut sem.embedder, |n| mergeable(n.kind)) {
        tracing::warn!("embedding failed; no near-duplicate merge this cycle: {e}");
        return (ops, Vec::new());
    }
    let texts: Vec<String> = candidates.iter().map(|(_, n)| node_text(n)).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = match sem.embedder.embed_lossy(&refs) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!("embedding failed; no near-duplicate merge this cycle: {e}");
            return (ops, Vec::new());
        }
    };
    let mut merges: Vec<Merge> = Vec::new();
    let mut rename: BTreeMap<String, (NodeId, Node)> = BTreeMap::new();
    for ((id, node), v) in candidates.iter().map(|x| (&x.0, &x.1)).zip(vectors) {
        let Some(v) = v else { continue };
        let domain: Domain = node.domain;
        let kind = node.kind;
        let best = sem
            .index
            .nearest(g, &v, 1, |n| {
                n.domain == domain && mergeable(n.kind) && same_family(n.kind, kind)
            })
            .into_iter()
            .next();
        if let Some((into, s)) = best
            && s >= threshold
            && let (Some(proposed), Some(existing)) = (NodeId::parse(id), g.node(&into))
        {
            merges.push(Merge {
                proposed,
                into: into.clone(),
                similarity: s,
            });
            rename.insert(id.clone(), (into, existing.clone()));
        }
    }
    if merges.is_empty() {
        return (ops, merges);
    }
    let mut out: Vec<Value> = Vec::with_capacity(ops.len());
    let mut raised: BTreeMap<NodeId, Node> = BTreeMap::new();
    for op in &ops {
        let Ok(mut v) = serde_json::to_value(op) else {
            continue;
        };
        let path = v
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(id) = path.strip_prefix("/nodes/") {
            let (head, _) = id.split_once('/').unwrap_or((id, ""));
            if let Some((into, existing)) = rename.get(head) {
                // The proposed node's ops fold into one update of the existing node.
                let proposed = node_add(op).map(|(_, n)| n);
                let entry = raised
                    .entry(into.clone())
                    .or_insert_with(|| existing.clone());
                if let Some(p) = proposed {
                    entry.weight = entry.weight.max(p.weight).min(1.0);
                    entry.last_activated = entry.last_activated.max(p.last_activated);
                    let norm = normalize_name(&p.label);
                    if !entry.names().any(|n| n == norm) && entry.aliases.len() < 8 {
                        entry.aliases.push(p.label.clone());
                    }
                    if entry.detail.is_none() {
                        entry.detail = p.detail.clone();
                    }
                }
                continue;
            }
        }
        if let Some(key) = path.strip_prefix("/edges/") {
            let parts: Vec<&str> = key.splitn(3, '|').collect();
            if parts.len() == 3 && (rename.contains_key(parts[0]) || rename.contains_key(parts[2]))
            {
                let map = |s: &str| {
                    rename
                        .get(s)
                        .map(|(id, _)| id.to_string())
                        .unwrap_or_else(|| s.to_owned())
                };
                let (s, t) = (map(parts[0]), map(parts[2]));
                if s == t {
                    continue;
                }
                let new_key = format!("{s}|{}|{t}", parts[1]);
                v["path"] = json!(format!("/edges/{new_key}"));
                if let Some(val) = v.get_mut("value").and_then(Value::as_object_mut) {
                    val.insert("source".into(), json!(s));
                    val.insert("target".into(), json!(t));
                }
            }
        }
        out.push(v);
    }
    for (id, n) in raised {
        out.push(json!({"op": "add", "path": format!("/nodes/{id}"), "value": n}));
    }
    let ops = out
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    (ops, merges)
}

fn same_family(a: NodeKind, b: NodeKind) -> bool {
    let standing = |k: NodeKind| {
        matches!(
            k,
            NodeKind::Correction
                | NodeKind::Preference
                | NodeKind::Fact
                | NodeKind::Restriction
                | NodeKind::Intention
        )
    };
    standing(a) == standing(b)
}

/// Nodes whose meaning is close to `text` (above the strict, proactive
/// threshold): they join the focus even when no word matched.
pub fn semantic_focus(
    g: &Graph,
    sem: &mut Semantic,
    text: &str,
    threshold: f32,
    limit: usize,
) -> Vec<(NodeId, f32)> {
    if let Err(e) = sem.index.sync(g, &mut sem.embedder, |n| n.weight >= 0.05) {
        tracing::warn!("embedding failed; lexical focus only: {e}");
        return Vec::new();
    }
    let Ok(v) = sem.embedder.embed_one(text) else {
        return Vec::new();
    };
    sem.index
        .nearest(g, &v, limit, |_| true)
        .into_iter()
        .filter(|(_, s)| *s >= threshold)
        .collect()
}

/// Reciprocal rank fusion of several rankings (best first): each item scores
/// Σ 1 / (k + rank). Items missing from a ranking get nothing from it.
pub fn rrf(rankings: &[Vec<NodeId>], k: f64) -> Vec<(NodeId, f64)> {
    let mut scores: BTreeMap<NodeId, f64> = BTreeMap::new();
    for ranking in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            *scores.entry(id.clone()).or_default() += 1.0 / (k + rank as f64 + 1.0);
        }
    }
    let mut v: Vec<(NodeId, f64)> = scores.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> NodeId {
        NodeId::parse(s).unwrap_or_else(|| unreachable!())
    }

    #[test]
    fn rrf_rewards_agreement() {
        let lexical = vec![id("a"), id("b"), id("c")];
        let semantic = vec![id("d"), id("b"), id("c")];
        let fused = rrf(&[lexical, semantic], 60.0);
        assert_eq!(fused[0].0, id("b"));
        assert_eq!(fused.len(), 4);
    }

    #[test]
    fn files_and_decisions_never_merge() {
        assert!(!mergeable(NodeKind::File));
        assert!(!mergeable(NodeKind::Identifier));
        assert!(!mergeable(NodeKind::Decision));
        assert!(mergeable(NodeKind::Preference));
    }
}
