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

use crate::graph::{EdgeKind, Graph, GraphDoc, GraphError, NodeId};

/// The patch JSON Schema, compiled in.
pub const PATCH_SCHEMA: &str = include_str!("../../schemas/patch.schema.json");
/// The graph document JSON Schema, compiled in.
pub const GRAPH_SCHEMA: &str = include_str!("../../schemas/graph.schema.json");

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
    /// Every node the patch touched and that still exists: the cycle's focus.
    pub fn touched(&self, graph: &Graph) -> Vec<NodeId> {
        let mut set: BTreeSet<NodeId> = BTreeSet::new();
        set.extend(self.added_nodes.iter().cloned());
        set.extend(self.changed_nodes.iter().cloned());
        for key in &self.edges {
            if let Some(e) = graph.edge(key) {
                set.insert(e.source.clone());
                // Adding a part to a whole does not put the whole in focus.
                if e.kind != EdgeKind::PartOf {
                    set.insert(e.target.clone());
                }
            }
        }
        set.into_iter().filter(|id| graph.contains(id)).collect()
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
        return Err(PatchError::Schema("the compiled-in patch schema failed to load".into()));
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
    let ops = value.get("ops").cloned().unwrap_or(Value::Array(Vec::new()));
    serde_json::from_value(ops).map_err(|e| PatchError::Schema(e.to_string()))
}

/// Validates `ops` against `graph` and, if everything holds, applies them.
/// On error the graph is exactly as it was.
pub fn apply(graph: &mut Graph, ops: &[PatchOperation], rules: &PatchRules) -> Result<ApplyReport, PatchError> {
    let (new_graph, report) = dry_run(graph, ops, rules)?;
    *graph = new_graph;
    Ok(report)
}

/// Validates `ops` and returns the graph they would produce, leaving `graph`
/// untouched.
pub fn dry_run(graph: &Graph, ops: &[PatchOperation], rules: &PatchRules) -> Result<(Graph, ApplyReport), PatchError> {
    if ops.len() > rules.max_ops {
        return Err(PatchError::TooManyOps {
            got: ops.len(),
            max: rules.max_ops,
        });
    }
    let mut touched_nodes: BTreeSet<String> = BTreeSet::new();
    let mut touched_edges: BTreeSet<String> = BTreeSet::new();
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
                touched_nodes.insert(key);
            }
            Some((_, key)) => {
                touched_edges.insert(key);
            }
            None => return Err(PatchError::ForbiddenPath { index, path }),
        }
    }

    let old_doc = graph.to_doc();
    let mut value = serde_json::to_value(&old_doc).map_err(|e| PatchError::Malformed(e.to_string()))?;
    json_patch::patch(&mut value, ops).map_err(|e| PatchError::Apply(e.to_string()))?;
    let new_doc: GraphDoc = serde_json::from_value(value).map_err(|e| PatchError::Malformed(e.to_string()))?;
    if new_doc.nodes.len() > rules.max_nodes {
        return Err(PatchError::TooManyNodes {
            got: new_doc.nodes.len(),
            max: rules.max_nodes,
        });
    }
    check_history(&old_doc, &new_doc, rules)?;
    let report = report_changes(&old_doc, &new_doc, &touched_nodes, &touched_edges);
    let new_graph = Graph::from_doc(new_doc)?;
    Ok((new_graph, report))
}

/// History and anchors: what a patch may never do, whatever the schema says.
fn check_history(old: &GraphDoc, new: &GraphDoc, rules: &PatchRules) -> Result<(), PatchError> {
    for (key, edge) in &old.edges {
        if edge.kind == EdgeKind::Supersedes && !new.edges.contains_key(key) {
            return Err(PatchError::ErasesHistory(format!(
                "supersedes edge {key} may not be removed"
            )));
        }
    }
    for (id, node) in &old.nodes {
        match new.nodes.get(id) {
            None if node.anchor => {
                return Err(PatchError::AnchorBelowFloor {
                    id: id.clone(),
                    weight: f64::NAN,
                });
            }
            None => {
                let in_chain = old.edges.values().any(|e| {
                    e.kind == EdgeKind::Supersedes && (e.source.as_str() == id || e.target.as_str() == id)
                });
                if in_chain {
                    return Err(PatchError::ErasesHistory(format!(
                        "node {id} is part of a supersedes chain and must stay"
                    )));
                }
            }
            Some(n) if n.id.as_str() != id => {
                return Err(PatchError::Invalid(GraphError::BadNodeKey {
                    key: id.clone(),
                    id: n.id.to_string(),
                }));
            }
            Some(_) => {}
        }
    }
    for (id, node) in &new.nodes {
        let was_anchor = old.nodes.get(id).is_some_and(|n| n.anchor);
        if (node.anchor || was_anchor) && node.weight < rules.anchor_floor {
            return Err(PatchError::AnchorBelowFloor {
                id: id.clone(),
                weight: node.weight,
            });
        }
        if was_anchor && !node.anchor {
            return Err(PatchError::AnchorBelowFloor {
                id: id.clone(),
                weight: node.weight,
            });
        }
    }
    Ok(())
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
        for (label, anchor) in [("Resend", false), ("Bento", false), ("Small commits", true)] {
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
            {"op": "replace", "path": "/nodes/bento/weight", "value": 0.9},
            {"op": "add", "path": "/edges/bento|supersedes|resend", "value": {"source": "bento", "target": "resend", "kind": "supersedes", "weight": 1.0}}
        ]}));
        let r = apply(&mut g, &p, &PatchRules::default()).unwrap_or_default();
        assert_eq!(r.changed_nodes.len(), 1);
        assert_eq!(r.edges, vec!["bento|supersedes|resend".to_string()]);
        assert_eq!(g.edge_count(), 1);
    }

    #[test]
    fn invalid_patches_change_nothing() {
        let cases = vec![
            json!({"ops": [{"op": "replace", "path": "/nodes/bento/weight", "value": 1.5}]}),
            json!({"ops": [{"op": "replace", "path": "/version", "value": 2}]}),
            json!({"ops": [{"op": "add", "path": "/edges/bento|uses|ghost", "value": {"source": "bento", "target": "ghost", "kind": "uses", "weight": 0.5}}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/bento/domain", "value": "astrology"}]}),
            json!({"ops": [{"op": "remove", "path": "/nodes/small-commits"}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/small-commits/weight", "value": 0.1}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/bento/id", "value": "other"}]}),
            json!({"ops": [{"op": "test", "path": "/nodes/bento/weight", "value": 0.7}]}),
            json!({"ops": [{"op": "replace", "path": "/nodes/bento/weight", "value": 0.9}, {"op": "remove", "path": "/nodes/nope"}]}),
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
    fn move_and_copy_are_refused() {
        let raw: Vec<PatchOperation> = serde_json::from_value(json!([
            {"op": "copy", "from": "/nodes/bento", "path": "/nodes/bento2"}
        ]))
        .unwrap_or_default();
        let mut g = base();
        assert!(matches!(apply(&mut g, &raw, &PatchRules::default()), Err(PatchError::ForbiddenOp { .. })));
    }

    #[test]
    fn supersedes_history_is_kept() {
        let mut g = base();
        let p = ops(json!([
            {"op": "add", "path": "/edges/bento|supersedes|resend", "value": {"source": "bento", "target": "resend", "kind": "supersedes", "weight": 1.0}}
        ]));
        assert!(apply(&mut g, &p, &PatchRules::default()).is_ok());
        let remove_old = ops(json!([
            {"op": "remove", "path": "/edges/bento|supersedes|resend"},
            {"op": "remove", "path": "/nodes/resend"}
        ]));
        assert!(matches!(
            apply(&mut g, &remove_old, &PatchRules::default()),
            Err(PatchError::ErasesHistory(_))
        ));
        assert!(g.contains(&NodeId::slug("resend").unwrap_or_else(|| unreachable!())));
    }
}
