//! Property tests of patch application: random valid patches keep the graph
//! consistent; random invalid ones are rejected and change nothing.

use chrono::DateTime;
use proptest::prelude::*;
use rollgraph_engine::graph::{Graph, GraphDoc};
use rollgraph_engine::patch::{self, PatchRules};
use rollgraph_engine::synth;
use serde_json::{Value, json};

fn base() -> Graph {
    let now = DateTime::from_timestamp(1_793_600_000, 0).unwrap_or_default();
    synth::graph(40, 3, now)
}

fn ids(g: &Graph) -> Vec<String> {
    g.nodes().iter().map(|n| n.id.to_string()).collect()
}

/// Every invariant a graph document must hold.
fn consistent(g: &Graph) -> Result<(), String> {
    let doc: GraphDoc = g.to_doc();
    let rebuilt = Graph::from_doc(doc.clone()).map_err(|e| e.to_string())?;
    if rebuilt.to_doc() != doc {
        return Err("round trip changed the document".into());
    }
    for n in doc.nodes.values() {
        if !(0.0..=1.0).contains(&n.weight) {
            return Err(format!("{} weight {}", n.id, n.weight));
        }
        if n.anchor && n.weight < 0.2 {
            return Err(format!("anchor {} under its floor", n.id));
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum ValidOp {
    Weight(usize, f64),
    AddNode(String, usize, f64),
    AddEdge(usize, usize, usize, f64),
    Detail(usize, String),
    Alias(usize, String),
}

fn valid_op() -> impl Strategy<Value = ValidOp> {
    prop_oneof![
        (0usize..100, 0.2f64..=1.0).prop_map(|(i, w)| ValidOp::Weight(i, w)),
        ("[a-z]{3,10}( [a-z]{2,8}){0,2}", 0usize..4, 0.0f64..=1.0)
            .prop_map(|(l, d, w)| ValidOp::AddNode(l, d, w)),
        (0usize..100, 0usize..100, 0usize..8, 0.0f64..=1.0)
            .prop_map(|(a, b, k, w)| ValidOp::AddEdge(a, b, k, w)),
        (0usize..100, "[A-Za-z ,.]{0,80}").prop_map(|(i, d)| ValidOp::Detail(i, d)),
        (0usize..100, "[A-Za-z]{1,20}").prop_map(|(i, a)| ValidOp::Alias(i, a)),
    ]
}

const DOMAINS: [&str; 4] = ["relationship", "project", "technical", "personal"];
const KINDS: [&str; 8] = [
    "relates_to",
    "contradicts",
    "part_of",
    "depends_on",
    "uses",
    "owns",
    "corrects",
    "supersedes",
];

fn to_json(g: &Graph, ops: &[ValidOp]) -> Vec<Value> {
    let ids = ids(g);
    let mut added: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for op in ops {
        let all: Vec<&String> = ids.iter().chain(added.iter()).collect();
        match op {
            ValidOp::Weight(i, w) => {
                let id = all[i % all.len()];
                out.push(
                    json!({"op": "replace", "path": format!("/nodes/{id}/weight"), "value": w}),
                );
            }
            ValidOp::AddNode(label, d, w) => {
                let id = format!("p-{}", label.replace(' ', "-"));
                if all.iter().any(|x| **x == id) {
                    continue;
                }
                out.push(json!({"op": "add", "path": format!("/nodes/{id}"), "value": {
                    "id": id, "label": label, "domain": DOMAINS[*d], "weight": w, "last_activated": "2026-11-02T09:00:00Z"
                }}));
                added.push(id);
            }
            ValidOp::AddEdge(a, b, k, w) => {
                let (s, t) = (all[a % all.len()], all[b % all.len()]);
                if s == t {
                    continue;
                }
                let kind = KINDS[*k];
                out.push(
                    json!({"op": "add", "path": format!("/edges/{s}|{kind}|{t}"), "value": {
                        "source": s, "target": t, "kind": kind, "weight": w
                    }}),
                );
            }
            ValidOp::Detail(i, d) => {
                let id = all[i % all.len()];
                out.push(json!({"op": "add", "path": format!("/nodes/{id}/detail"), "value": d}));
            }
            ValidOp::Alias(i, a) => {
                let id = all[i % all.len()];
                out.push(
                    json!({"op": "add", "path": format!("/nodes/{id}/aliases"), "value": [a]}),
                );
            }
        }
    }
    out
}

#[derive(Debug, Clone)]
enum BadOp {
    WeightOutOfRange(usize, f64),
    DanglingEdge(usize),
    UnknownDomain(usize),
    BadId(String),
    RemoveAnchor,
    RemoveMissing,
    RootReplace,
    ChangeId(usize),
    FailedTest(usize),
    LoopEdge(usize),
    RemoveSupersedes,
}

fn bad_op() -> impl Strategy<Value = BadOp> {
    prop_oneof![
        (
            0usize..100,
            prop_oneof![1.0001f64..100.0, -100.0f64..-0.0001]
        )
            .prop_map(|(i, w)| BadOp::WeightOutOfRange(i, w)),
        (0usize..100).prop_map(BadOp::DanglingEdge),
        (0usize..100).prop_map(BadOp::UnknownDomain),
        "[A-Z _]{1,12}".prop_map(BadOp::BadId),
        Just(BadOp::RemoveAnchor),
        Just(BadOp::RemoveMissing),
        Just(BadOp::RootReplace),
        (0usize..100).prop_map(BadOp::ChangeId),
        (0usize..100).prop_map(BadOp::FailedTest),
        (0usize..100).prop_map(BadOp::LoopEdge),
        Just(BadOp::RemoveSupersedes),
    ]
}

fn bad_json(g: &Graph, op: &BadOp) -> Value {
    let ids = ids(g);
    let pick = |i: &usize| ids[i % ids.len()].clone();
    match op {
        BadOp::WeightOutOfRange(i, w) => {
            json!({"op": "replace", "path": format!("/nodes/{}/weight", pick(i)), "value": w})
        }
        BadOp::DanglingEdge(i) => {
            let s = pick(i);
            json!({"op": "add", "path": format!("/edges/{s}|uses|ghost-node"), "value": {"source": s, "target": "ghost-node", "kind": "uses", "weight": 0.5}})
        }
        BadOp::UnknownDomain(i) => {
            json!({"op": "replace", "path": format!("/nodes/{}/domain", pick(i)), "value": "astrology"})
        }
        BadOp::BadId(id) => {
            json!({"op": "add", "path": format!("/nodes/{}", id.replace(' ', "_")), "value": {
            "id": id, "label": "x", "domain": "project", "weight": 0.5, "last_activated": "2026-11-02T09:00:00Z"}})
        }
        BadOp::RemoveAnchor => {
            let anchor = g
                .nodes()
                .iter()
                .find(|n| n.anchor)
                .map(|n| n.id.to_string())
                .unwrap_or_else(|| "nope".into());
            json!({"op": "remove", "path": format!("/nodes/{anchor}")})
        }
        BadOp::RemoveMissing => json!({"op": "remove", "path": "/nodes/definitely-not-here"}),
        BadOp::RootReplace => json!({"op": "replace", "path": "/nodes", "value": {}}),
        BadOp::ChangeId(i) => {
            json!({"op": "replace", "path": format!("/nodes/{}/id", pick(i)), "value": "renamed-node"})
        }
        BadOp::FailedTest(i) => {
            json!({"op": "test", "path": format!("/nodes/{}/label", pick(i)), "value": "not the label"})
        }
        BadOp::LoopEdge(i) => {
            let s = pick(i);
            json!({"op": "add", "path": format!("/edges/{s}|relates_to|{s}"), "value": {"source": s, "target": s, "kind": "relates_to", "weight": 0.5}})
        }
        BadOp::RemoveSupersedes => {
            let key = g
                .edges()
                .iter()
                .find(|e| e.kind.as_str() == "supersedes")
                .map(|e| e.key())
                .unwrap_or_default();
            json!({"op": "remove", "path": format!("/edges/{key}")})
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn valid_patches_keep_the_graph_consistent(ops in proptest::collection::vec(valid_op(), 1..24)) {
        let mut g = base();
        let json_ops = to_json(&g, &ops);
        let parsed = patch::parse_ops(&Value::Array(json_ops.clone()));
        prop_assert!(parsed.is_ok(), "schema refused a valid patch: {:?} {:?}", parsed.err(), json_ops);
        let parsed = parsed.unwrap_or_default();
        let r = patch::apply(&mut g, &parsed, &PatchRules::default());
        prop_assert!(r.is_ok(), "rejected a valid patch: {:?}\n{:?}", r.err(), json_ops);
        prop_assert!(consistent(&g).is_ok(), "{:?}", consistent(&g).err());
    }

    #[test]
    fn invalid_patches_change_nothing(
        prefix in proptest::collection::vec(valid_op(), 0..8),
        bad in bad_op(),
        at in 0usize..8,
    ) {
        let mut g = base();
        let before = g.to_doc();
        let mut ops = to_json(&g, &prefix);
        let at = at.min(ops.len());
        ops.insert(at, bad_json(&g, &bad));
        let result = patch::parse_ops(&Value::Array(ops.clone())).and_then(|p| patch::apply(&mut g, &p, &PatchRules::default()));
        prop_assert!(result.is_err(), "accepted {:?}: {:?}", bad, ops);
        prop_assert_eq!(g.to_doc(), before);
    }
}
