//! The local embedding model in the pipeline: near-duplicate merge, and the
//! lexical fallback when the model is absent. Needs the model provisioned by
//! scripts/provision.sh; skipped with a note otherwise, failed when
//! ROLLGRAPH_REQUIRE_MODEL=1 (as scripts/test.sh sets).

use chrono::DateTime;
use rollgraph_engine::config::Config;
use rollgraph_engine::embed::{EmbedPaths, load_optional};
use rollgraph_engine::graph::{Domain, Node, NodeId, NodeKind};
use rollgraph_engine::semantic::{Semantic, VectorIndex};
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use serde_json::json;

use crate::common::{TestEnv, example, stderr};

fn semantic() -> Option<Semantic> {
    let (embedder, notice) = load_optional(&EmbedPaths::discover());
    if embedder.is_none() {
        let required = std::env::var("ROLLGRAPH_REQUIRE_MODEL").is_ok_and(|v| v == "1");
        assert!(!required, "ROLLGRAPH_REQUIRE_MODEL=1 but {notice:?}");
        eprintln!("skipping: {notice:?}");
    }
    embedder.map(|embedder| Semantic {
        embedder,
        index: VectorIndex::new(),
    })
}

fn node(label: &str, kind: NodeKind, domain: Domain) -> Node {
    let now = DateTime::from_timestamp(1_793_600_000, 0).unwrap_or_default();
    let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
    let mut n = Node::new(id, label, domain, 0.7, now);
    n.kind = kind;
    n
}

fn add(n: &Node) -> json_patch::PatchOperation {
    serde_json::from_value(json!({"op": "add", "path": format!("/nodes/{}", n.id), "value": n}))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_restated_preference_merges_into_the_old_one_but_files_never_do() {
    let Some(sem) = semantic() else { return };
    let env = TestEnv::new();
    let home = Home::at(env.state());
    let mut s = Session::open(&home, "sem", Config::default()).unwrap_or_else(|e| panic!("{e}"));
    s.semantic = Some(sem);
    let now = DateTime::from_timestamp(1_793_600_100, 0).unwrap_or_default();
    let old_pref = node(
        "Keep explanations short, I skim",
        NodeKind::Preference,
        Domain::Personal,
    );
    let old_file = node("src/email/mod.rs", NodeKind::File, Domain::Technical);
    s.apply_probe(
        "p1",
        "test",
        vec![add(&old_pref), add(&old_file)],
        &[],
        None,
        now,
    )
    .unwrap_or_else(|e| panic!("{e}"));

    let new_pref = node(
        "Keep your explanations brief, I only skim them",
        NodeKind::Preference,
        Domain::Personal,
    );
    let new_file = node("src/email/sender.rs", NodeKind::File, Domain::Technical);
    let out = s
        .apply_probe(
            "p2",
            "test",
            vec![add(&new_pref), add(&new_file)],
            &[],
            None,
            now,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.merged,
        vec![(new_pref.id.to_string(), old_pref.id.to_string())],
        "{out:?}"
    );
    let kept = s
        .graph
        .node(&old_pref.id)
        .cloned()
        .unwrap_or_else(|| panic!("old preference gone"));
    assert!(kept.aliases.contains(&new_pref.label), "{kept:?}");
    assert!(!s.graph.contains(&new_pref.id));
    assert!(
        s.graph.contains(&new_file.id),
        "a different file must stay its own node"
    );

    // Unrelated statements stay apart.
    let other = node(
        "I am off on Friday afternoons",
        NodeKind::Preference,
        Domain::Personal,
    );
    let out = s
        .apply_probe("p3", "test", vec![add(&other)], &[], None, now)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.merged.is_empty(), "{out:?}");
    assert!(s.graph.contains(&other.id));
}

#[test]
fn without_the_model_replay_runs_lexically_and_says_so_once() {
    let env = TestEnv::new();
    let o = env
        .cmd()
        .env("ROLLGRAPH_CACHE", env.dir.path().join("no-cache"))
        .args(["replay", &example().display().to_string(), "--json"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("matching lexically").count(), 1, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    assert!(v["render"]["tokens"].as_u64().unwrap_or(0) >= 500);
}
