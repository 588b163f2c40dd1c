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

#[test]
fn meaning_finds_what_the_words_miss() {
    use rollgraph_engine::graph::Graph;
    use rollgraph_engine::search::{GraphSource, SearchIndex, SearchOptions, Sources, close_nodes};
    let Some(mut sem) = semantic() else { return };
    let now = DateTime::from_timestamp(1_793_600_000, 0).unwrap_or_default();
    let mut g = Graph::new();
    for (label, detail) in [
        (
            "Bento",
            "Sends our transactional mail; chosen over Resend for price",
        ),
        (
            "Email footer copy",
            "Marco wants the footer text of every email shortened",
        ),
        (
            "Invoice PDF export",
            "Customers download their invoice as a PDF",
        ),
        (
            "Retry limit",
            "A failed reminder is tried at most five times",
        ),
        ("Late fee", "1.5% of the amount due, applied once"),
    ] {
        let mut n = node(label, NodeKind::Fact, Domain::Technical);
        n.detail = Some(detail.into());
        g.upsert_node(n);
    }
    let text = "what is the maximum number of reattempts for an undelivered notice";
    let opts = SearchOptions::at(now);
    let index = SearchIndex::build(Sources {
        graphs: vec![GraphSource {
            name: "session".into(),
            graph: &g,
        }],
        episodes: Vec::new(),
    });
    let lexical = index.search(text, &opts, None);
    assert_ne!(
        lexical
            .hits
            .first()
            .and_then(|h| h.id.as_ref())
            .map(|id| id.as_str()),
        Some("retry-limit"),
        "the fixture should fool the lexical ranking: {}",
        lexical.text
    );
    let close = close_nodes(
        &mut sem,
        &g,
        text,
        Config::default().embed.explicit_threshold,
    );
    let hybrid = index.search(text, &opts, Some(&close));
    let top = hybrid.hits.first().unwrap_or_else(|| panic!("no hits"));
    assert_eq!(
        top.id.as_ref().map(|id| id.as_str()),
        Some("retry-limit"),
        "{}",
        hybrid.text
    );
    assert!(
        top.why.iter().any(|w| w.starts_with("close in meaning")),
        "{:?}",
        top.why
    );
    // Without a model the search is the lexical one.
    assert_eq!(index.search(text, &opts, Some(&[])), lexical);
}

#[test]
fn stats_names_the_missing_model_in_one_line() {
    let env = TestEnv::new();
    let o = env
        .cmd()
        .env("ROLLGRAPH_CACHE", env.dir.path().join("none"))
        .args(["stats"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("embeddings:"))
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].contains("matching lexically") && lines[0].contains("scripts/provision.sh"),
        "{out}"
    );
}
