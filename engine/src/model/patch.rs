//! Validating and applying a probe's RFC 6902 patch, atomically.
//!
//! A patch is checked three times: against `schemas/patch.schema.json`, op by
//! op (only `add`, `remove`, `replace`, `test` under `/nodes/` and
//! `/edges/`), and finally by rebuilding the patched document into a
//! [`Graph`] and comparing it to the old one (ids stable, weights in range,
//! no dangling edges, history kept, anchors above their floor). Only when all
//! of that passes does the live graph change; otherwise it is untouched and
//! the [`PatchError`] says why.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use json_patch::PatchOperation;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::graph::{Edge, EdgeKind, Graph, GraphDoc, GraphError, Node, NodeId};

/// The patch JSON Schema, compiled in.
pub const PATCH_SCHEMA: &str = include_str!("../../../schemas/patch.schema.json");
/// The graph document JSON Schema, compiled in.
pub const GRAPH_SCHEMA: &str = include_str!("../../../schemas/graph.schema.json");

static PATCH_VALIDATOR: LazyLock<Option<jsonschema::Validator>> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(PATCH_SCHEMA).ok()?;
    jsonschema::validator_for(&schema).ok()
});

/// A probe's output: an id (so it is never applied twice) and its operations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbePatch {
    /// Unique per probe run; the journal refuses a second application.
    pub probe_id: String,
    /// The RFC 6902 operations.
    pub ops: Vec<PatchOperation>,
}

/// Limits a patch must respect.
#[derive(Clone, Debug)]
pub struct PatchRules {
    /// Most operations in one patch.
    pub max_ops: usize,
    /// Most nodes the graph may hold after the patch.
    pub max_nodes: usize,
    /// Weight below which an anchor may never be set.
    pub anchor_floor: f64,
}

impl Default for PatchRules {
    fn default() -> Self {
        PatchRules {
            max_ops: 400,
            max_nodes: 20_000,
            anchor_floor: 0.2,
        }
    }
}

/// Why a patch was rejected. The graph is unchanged in every case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PatchError {
    /// The patch does not match `schemas/patch.schema.json`.
    #[error("patch does not match the schema: {0}")]
    Schema(String),
    /// Too many operations.
    #[error("patch has {got} operations, more than the limit of {max}")]
    TooManyOps {
        /// Operations in the patch.
        got: usize,
        /// The limit.
        max: usize,
    },
    /// An operation kind we never accept (`move`, `copy`).
    #[error("operation {index}: `{op}` is not allowed (only add, remove, replace, test)")]
    ForbiddenOp {
        /// Position in the patch.
        index: usize,
        /// The op name.
        op: String,
    },
    /// A path outside `/nodes/<id>` and `/edges/<key>`.
    #[error("operation {index}: path {path:?} is outside /nodes/<id> and /edges/<key>")]
    ForbiddenPath {
        /// Position in the patch.
        index: usize,
        /// The offending path.
        path: String,
    },
    /// The operations themselves failed (missing path, failed test …).
    #[error("patch does not apply: {0}")]
    Apply(String),
    /// The patched document no longer parses as a graph document.
    #[error("patched document is malformed: {0}")]
    Malformed(String),
    /// The patched document breaks a graph invariant.
    #[error("patched graph is invalid: {0}")]
    Invalid(#[from] GraphError),
    /// The patch would erase history (a node or edge of a supersedes chain).
    #[error("patch would erase history: {0}")]
    ErasesHistory(String),
    /// The patch would push an anchor below its floor, or remove it.
    #[error("patch would push anchor {id} below its floor ({weight})")]
    AnchorBelowFloor {
        /// The anchor id.
        id: String,
        /// The weight it would get (NaN when removed).
        weight: f64,
    },
    /// The graph would grow past its node limit.
    #[error("patch would grow the graph to {got} nodes, more than the limit of {max}")]
    TooManyNodes {
        /// Nodes after the patch.
        got: usize,
        /// The limit.
        max: usize,
    },
}

/// What an applied patch changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ApplyReport {
    /// Nodes the patch added.
    pub added_nodes: Vec<NodeId>,
    /// Nodes the patch changed (fields replaced or added).
    pub changed_nodes: Vec<NodeId>,
    /// Nodes the patch removed.
    pub removed_nodes: Vec<NodeId>,
    /// Edges the patch added or changed.
    pub edges: Vec<String>,
}

impl ApplyReport {
    /// Every node the patch touched and that stands after it: the cycle's
    /// focus. Read from the report alone (validated edge keys name their
    /// ends), so it is known before the patch is committed.
    pub fn touched(&self) -> Vec<NodeId> {
        let mut set: BTreeSet<NodeId> = BTreeSet::new();
        set.extend(self.added_nodes.iter().cloned());
        set.extend(self.changed_nodes.iter().cloned());
        for key in &self.edges {
            let mut parts = key.splitn(3, '|');
            let (Some(s), Some(kind), Some(t)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            set.extend(NodeId::parse(s));
            // Adding a part to a whole does not put the whole in focus.
            if kind != EdgeKind::PartOf.as_str() {
                set.extend(NodeId::parse(t));
            }
        }
        set.into_iter()
            .filter(|id| !self.removed_nodes.contains(id))
            .collect()
    }
}

fn op_name(op: &PatchOperation) -> &'static str {
    match op {
        PatchOperation::Add(_) => "add",
        PatchOperation::Remove(_) => "remove",
        PatchOperation::Replace(_) => "replace",
        PatchOperation::Move(_) => "move",
        PatchOperation::Copy(_) => "copy",
        PatchOperation::Test(_) => "test",
    }
}

/// Splits `/nodes/<id>/...` into its section and (decoded) key.
fn section_and_key(path: &str) -> Option<(&'static str, String)> {
    let rest = path.strip_prefix('/')?;
    let mut parts = rest.splitn(3, '/');
    let section = match parts.next()? {
        "nodes" => "nodes",
        "edges" => "edges",
        _ => return None,
    };
    let key = parts.next()?.replace("~1", "/").replace("~0", "~");
    (!key.is_empty()).then_some((section, key))
}

/// Checks a raw JSON value (as a probe returned it) against the patch schema.
pub fn check_schema(value: &Value) -> Result<(), PatchError> {
    let Some(validator) = PATCH_VALIDATOR.as_ref() else {
        return Err(PatchError::Schema(
            "the compiled-in patch schema failed to load".into(),
        ));
    };
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(3)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(PatchError::Schema(errors.join("; ")))
    }
}

/// Parses and schema-checks a probe's JSON output (`{"ops": [...]}` or a
/// bare array of operations).
pub fn parse_ops(value: &Value) -> Result<Vec<PatchOperation>, PatchError> {
    let wrapped;
    let value = if value.is_array() {
        wrapped = serde_json::json!({ "ops": value });
        &wrapped
    } else {
        value
    };
    check_schema(value)?;
    let ops = value
        .get("ops")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    serde_json::from_value(ops).map_err(|e| PatchError::Schema(e.to_string()))
}

/// Validates `ops` against `graph` and, if everything holds, applies them.
/// On error the graph is exactly as it was.
pub fn apply(
    graph: &mut Graph,
    ops: &[PatchOperation],
    rules: &PatchRules,
) -> Result<ApplyReport, PatchError> {
    let prepared = prepare(graph, ops, rules)?;
    Ok(commit(graph, prepared))
}

/// Validates `ops` and returns the graph they would produce, leaving `graph`
/// untouched (clones the graph: use [`prepare`] + [`commit`] on hot paths).
pub fn dry_run(
    graph: &Graph,
    ops: &[PatchOperation],
    rules: &PatchRules,
) -> Result<(Graph, ApplyReport), PatchError> {
    let prepared = prepare(graph, ops, rules)?;
    let mut g = graph.clone();
    let report = commit(&mut g, prepared);
    Ok((g, report))
}

/// A validated patch: the final state of every node and edge it addresses.
/// [`commit`] cannot fail on it for the graph it was prepared against.
#[derive(Clone, Debug)]
pub struct Prepared {
    nodes: Vec<(String, Option<Node>)>,
    edges: Vec<(String, Option<Edge>)>,
    report: ApplyReport,
}

impl Prepared {
    /// What the patch will change.
    pub fn report(&self) -> &ApplyReport {
        &self.report
    }
}

/// Validates `ops` against `graph` without changing it.
///
/// The operations run against a partial document holding only the nodes and
/// edges they address (patches address by stable keys, so that is exactly
/// what the full document would give them); the result is then checked
/// against the rest of the graph: ids stable, weights in range, edges between
/// existing nodes, no node removed from under its edges, history kept,
/// anchors above their floor. Cost is proportional to the patch, not the graph.
pub fn prepare(
    graph: &Graph,
    ops: &[PatchOperation],
    rules: &PatchRules,
) -> Result<Prepared, PatchError> {
    if ops.len() > rules.max_ops {
        return Err(PatchError::TooManyOps {
            got: ops.len(),
            max: rules.max_ops,
        });
    }
    let mut node_keys: BTreeSet<String> = BTreeSet::new();
    let mut edge_keys: BTreeSet<String> = BTreeSet::new();
    for (index, op) in ops.iter().enumerate() {
        if matches!(op, PatchOperation::Move(_) | PatchOperation::Copy(_)) {
            return Err(PatchError::ForbiddenOp {
                index,
                op: op_name(op).into(),
            });
        }
        let path = op.path().to_string();
        match section_and_key(&path) {
            Some(("nodes", key)) => {
                node_keys.insert(key);
            }
            Some((_, key)) => {
                edge_keys.insert(key);
            }
            None => return Err(PatchError::ForbiddenPath { index, path }),
        }
    }

    let mut old = GraphDoc::default();
    for key in &node_keys {
        if let Some(n) = NodeId::parse(key).and_then(|id| graph.node(&id)) {
            old.nodes.insert(key.clone(), n.clone());
        }
    }
    for key in &edge_keys {
        if let Some(e) = graph.edge(key) {
            old.edges.insert(key.clone(), e.clone());
        }
    }
    let mut value = serde_json::to_value(&old).map_err(|e| PatchError::Malformed(e.to_string()))?;
    json_patch::patch(&mut value, ops).map_err(|e| PatchError::Apply(e.to_string()))?;
    let new: GraphDoc =
        serde_json::from_value(value).map_err(|e| PatchError::Malformed(e.to_string()))?;
    if new.nodes.keys().any(|k| !node_keys.contains(k))
        || new.edges.keys().any(|k| !edge_keys.contains(k))
    {
        // Only reachable through a whole-section op, which the path check forbids.
        return Err(PatchError::Malformed(
            "patch created keys it does not address".into(),
        ));
    }

    // Nodes: validity, stable ids, anchors, history.
    let mut removed: BTreeSet<String> = BTreeSet::new();
    let mut added = 0usize;
    for key in &node_keys {
        match (old.nodes.get(key), new.nodes.get(key)) {
            (Some(before), None) => {
                if before.anchor {
                    return Err(PatchError::AnchorBelowFloor {
                        id: key.clone(),
                        weight: f64::NAN,
                    });
                }
                if graph.in_supersedes_chain(&before.id) {
                    return Err(PatchError::ErasesHistory(format!(
                        "node {key} is part of a supersedes chain and must stay"
                    )));
                }
                removed.insert(key.clone());
            }
            (before, Some(after)) => {
                crate::graph::check_node(key, after)?;
                let was_anchor = before.is_some_and(|n| n.anchor);
                if (after.anchor || was_anchor) && after.weight < rules.anchor_floor {
                    return Err(PatchError::AnchorBelowFloor {
                        id: key.clone(),
                        weight: after.weight,
                    });
                }
                if was_anchor && !after.anchor {
                    return Err(PatchError::AnchorBelowFloor {
                        id: key.clone(),
                        weight: after.weight,
                    });
                }
                if before.is_none() {
                    added += 1;
                }
            }
            (None, None) => {}
        }
    }
    let total = graph.node_count() + added - removed.len();
    if total > rules.max_nodes {
        return Err(PatchError::TooManyNodes {
            got: total,
            max: rules.max_nodes,
        });
    }
    let exists = |id: &NodeId| -> bool {
        let k = id.as_str();
        if node_keys.contains(k) {
            new.nodes.contains_key(k)
        } else {
            graph.contains(id)
        }
    };

    // Edges: history, validity, endpoints.
    for key in &edge_keys {
        match (old.edges.get(key), new.edges.get(key)) {
            (Some(before), None) if before.kind == EdgeKind::Supersedes => {
                return Err(PatchError::ErasesHistory(format!(
                    "supersedes edge {key} may not be removed"
                )));
            }
            (_, Some(e)) => {
                crate::graph::check_edge(key, e)?;
                for end in [&e.source, &e.target] {
                    if !exists(end) {
                        return Err(PatchError::Invalid(GraphError::DanglingEdge {
                            key: key.clone(),
                            missing: end.to_string(),
                        }));
                    }
                }
            }
            _ => {}
        }
    }
    // A removed node may not leave edges behind.
    for key in &removed {
        let Some(id) = NodeId::parse(key) else {
            continue;
        };
        for e in graph.edges_of(&id) {
            let k = e.key();
            let still_there = if edge_keys.contains(&k) {
                new.edges.contains_key(&k)
            } else {
                true
            };
            if still_there {
                return Err(PatchError::Invalid(GraphError::DanglingEdge {
                    key: k,
                    missing: key.clone(),
                }));
            }
        }
    }

    let report = report_changes(&old, &new, &node_keys, &edge_keys);
    let nodes = node_keys
        .iter()
        .map(|k| (k.clone(), new.nodes.get(k).cloned()))
        .collect();
    let edges = edge_keys
        .iter()
        .map(|k| (k.clone(), new.edges.get(k).cloned()))
        .collect();
    Ok(Prepared {
        nodes,
        edges,
        report,
    })
}

/// Applies a prepared patch. Nodes first, then edges, then removals, so no
/// step can find a missing endpoint.
pub fn commit(graph: &mut Graph, p: Prepared) -> ApplyReport {
    let mut removals = Vec::new();
    for (key, node) in p.nodes {
        match node {
            Some(n) => graph.upsert_node(n),
            None => removals.push(key),
        }
    }
    let mut edge_removals = Vec::new();
    for (key, edge) in p.edges {
        match edge {
            Some(e) => {
                if let Err(err) = graph.upsert_edge(e) {
                    tracing::error!("prepared edge {key} failed to commit: {err}");
                }
            }
            None => edge_removals.push(key),
        }
    }
    for key in edge_removals {
        graph.remove_edge(&key);
    }
    for key in removals {
        if let Some(id) = NodeId::parse(&key) {
            graph.remove_node(&id);
        }
    }
    p.report
}

fn report_changes(
    old: &GraphDoc,
    new: &GraphDoc,
    touched_nodes: &BTreeSet<String>,
    touched_edges: &BTreeSet<String>,
) -> ApplyReport {
    let mut report = ApplyReport::default();
    for key in touched_nodes {
        let id = NodeId::parse(key);
        match (old.nodes.get(key), new.nodes.get(key), id) {
            (None, Some(_), Some(id)) => report.added_nodes.push(id),
            (Some(a), Some(b), Some(id)) if a != b => report.changed_nodes.push(id),
            (Some(_), Some(_), Some(id)) => report.changed_nodes.push(id),
            (Some(_), None, Some(id)) => report.removed_nodes.push(id),
            _ => {}
        }
    }
    report.edges = touched_edges
        .iter()
        .filter(|k| new.edges.contains_key(*k))
        .cloned()
        .collect();
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Domain, Node};
    use chrono::{DateTime, Utc};
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    fn ops(v: Value) -> Vec<PatchOperation> {
        parse_ops(&v).unwrap_or_else(|e| panic!("bad test patch: {e}"))
    }

    fn base() -> Graph {
        let mut g = Graph::new();
        for (label, anchor) in [
            ("Mailvane", false),
            ("Postwick", false),
            ("Small commits", true),
        ] {
            let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
            let mut n = Node::new(id, label, Domain::Technical, 0.5, now());
            n.anchor = anchor;
            g.upsert_node(n);
        }
        g
    }

    #[test]
    fn valid_patch_applies_and_reports() {
        let mut g = base();
        let p = ops(json!({"ops": [
            {"op": "replace", "path": "/nodes/postwick/weight", "value": 0.9},
            {"op": "add", "path": "/edges/postwick|supersedes|mailvane", "value": {"source": "postwick", "target": "mailvane", "kind": "supersedes", "weight": 1.0}}
        ]}));
        let r = apply(&mut g, &p, &PatchRules::default()).unwrap_or_default();
        assert_eq!(r.changed_nodes.len(), 1);
        assert_eq!(r.edges, vec!["postwick|supersedes|mailvane".to_string()]);
        assert_eq!(g.edge_count(), 1);
    }

    #[test]
    fn invalid_patches_change_nothing() {
        let cases = vec![
            json!({"ops": [{"op": "replace", "path": "/nodes/postwick/weight", "value": 1.5}]}),
            json!({"ops": [{"op": "replace", "path": "/version", "value": 2}]}),
            json!({"ops": [{"op": "add", "path": "/edges/postwick|uses|ghost", "value": {"source": "postwick", "target": "ghost", "kind": "uses", "weight": 0.5}}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/postwick/domain", "value": "astrology"}]}),
            json!({"ops": [{"op": "remove", "path": "/nodes/small-commits"}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/small-commits/weight", "value": 0.1}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/postwick/id", "value": "other"}]}),
            json!({"ops": [{"op": "test", "path": "/nodes/postwick/weight", "value": 0.7}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/postwick/weight", "value": 0.9}, {"op": "remove", "path": "/nodes/nope"}]}),
        ];
        for c in cases {
            let mut g = base();
            let before = g.to_doc();
            let result = parse_ops(&c).and_then(|p| apply(&mut g, &p, &PatchRules::default()));
            assert!(result.is_err(), "accepted {c}");
            assert_eq!(g.to_doc(), before, "changed by {c}");
        }
    }

    #[test]
    fn graph_documents_match_the_published_schema() {
        let schema: Value = serde_json::from_str(GRAPH_SCHEMA).unwrap_or_default();
        let validator =
            jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("graph schema: {e}"));
        let g = crate::synth::graph(300, 11, now());
        let doc = serde_json::to_value(g.to_doc()).unwrap_or_default();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .take(3)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let mut bad = doc.clone();
        bad["nodes"]["x-bad"] = json!({"id": "x-bad", "label": "x", "domain": "astrology", "weight": 0.5, "last_activated": "2026-11-02T09:00:00Z"});
        assert!(!validator.is_valid(&bad));
    }

    #[test]
    fn move_and_copy_are_refused() {
        let raw: Vec<PatchOperation> = serde_json::from_value(json!([
            {"op": "copy", "from": "/nodes/postwick", "path": "/nodes/postwick2"}
        ]))
        .unwrap_or_default();
        let mut g = base();
        assert!(matches!(
            apply(&mut g, &raw, &PatchRules::default()),
            Err(PatchError::ForbiddenOp { .. })
        ));
    }

    #[test]
    fn supersedes_history_is_kept() {
        let mut g = base();
        let p = ops(json!([
            {"op": "add", "path": "/edges/postwick|supersedes|mailvane", "value": {"source": "postwick", "target": "mailvane", "kind": "supersedes", "weight": 1.0}}
        ]));
        assert!(apply(&mut g, &p, &PatchRules::default()).is_ok());
        let remove_old = ops(json!([
            {"op": "remove", "path": "/edges/postwick|supersedes|mailvane"},
            {"op": "remove", "path": "/nodes/mailvane"}
        ]));
        assert!(matches!(
            apply(&mut g, &remove_old, &PatchRules::default()),
            Err(PatchError::ErasesHistory(_))
        ));
        assert!(g.contains(&NodeId::slug("mailvane").unwrap_or_else(|| unreachable!())));
    }
}
