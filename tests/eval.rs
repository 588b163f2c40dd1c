//! `rollgraph eval` scores a labelled corpus through the real pipeline.

use crate::common::{TestEnv, stderr, stdout};

const SESSION: &str = r#"{"ts":"2026-10-05T09:00:00Z","user":"Let's go with Zephyrq for the task queue.","assistant":"Zephyrq it is."}
{"ts":"2026-10-05T09:05:00Z","user":"Quorra Vance is our SRE, deploys go through her.","assistant":"Noted."}
{"ts":"2026-10-05T09:10:00Z","user":"Wow. See you Monday.","assistant":"See you."}
{"ts":"2026-10-05T09:15:00Z","compact":true}
{"ts":"2026-10-05T09:20:00Z","user":"Ok scrap the Zephyrq idea, Brokk is enough for the task queue.","assistant":"Switching to Brokk."}
{"ts":"2026-10-05T09:25:00Z","user":"Also, never force-push to main.","assistant":"Understood."}
"#;

const LABELS: &str = r#"{
  "description": "tiny",
  "must_show": ["Brokk", "force-push"],
  "superseded": [{"new": "Brokk", "old": "Zephyrq", "turn": 4}],
  "people": [{"name": "Quorra Vance", "role": "SRE"}],
  "questions": [{"q": "which queue now?", "answer": ["Brokk"]}, {"q": "unlabelled", "answer": ["no such words"]}],
  "memorable_turns": [1, 2, 4, 5],
  "not_entities": ["Monday", "Wow"]
}"#;

/// A corpus folder holding the one labelled session above.
fn tiny_corpus(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.home().join("corpus");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("tiny.jsonl"), SESSION).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("tiny.labels.json"), LABELS).unwrap_or_else(|e| panic!("{e}"));
    dir
}

#[test]
fn a_labelled_session_is_scored_from_its_final_injection() {
    let env = TestEnv::new();
    let dir = tiny_corpus(&env);
    // A transcript without labels is not part of the corpus.
    std::fs::write(dir.join("other.jsonl"), SESSION).unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["eval", &dir.display().to_string(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    let rows = v.as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        rows.len(),
        3,
        "one transcript, the overall row and the pooled one: {v}"
    );
    let t = &rows[0];
    assert_eq!(t["name"], "tiny");
    assert_eq!(t["turns"], 5);
    assert_eq!(t["superseded"], serde_json::json!([1, 1]), "{t}");
    assert_eq!(t["stale"], 0, "{t}");
    assert_eq!(t["people"], serde_json::json!([1, 1]), "{t}");
    assert_eq!(t["junk"][0], 0, "{t}");
    assert_eq!(t["recall"], serde_json::json!([2, 2]), "{t}");
    // One answer is in the injection, the other cannot be.
    assert_eq!(t["answers"], serde_json::json!([1, 2]), "{t}");
    // Pooled: every transcript's questions asked of all their memories.
    let p = &rows[2];
    assert_eq!(p["name"], "pooled corpus", "{p}");
    assert_eq!(p["query_hits"], serde_json::json!([1, 2]), "{p}");
    assert_eq!(p["bm25_hits"][1], 2, "{p}");
}

#[test]
fn pooled_retrieval_asks_each_question_of_every_transcript_at_once() {
    let env = TestEnv::new();
    let dir = tiny_corpus(&env);
    // A second session whose answers differ: pooled, its turns compete
    // with the first one's for the same budget.
    let other = SESSION
        .replace("Brokk", "Skerry")
        .replace("Zephyrq", "Mirelle");
    std::fs::write(dir.join("twin.jsonl"), other).unwrap_or_else(|e| panic!("{e}"));
    let labels = LABELS
        .replace("Brokk", "Skerry")
        .replace("Zephyrq", "Mirelle");
    std::fs::write(dir.join("twin.labels.json"), labels).unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["eval", &dir.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let row = text
        .lines()
        .find(|l| l.starts_with("pooled corpus"))
        .unwrap_or_else(|| panic!("no pooled row: {text}"));
    // Four questions in all, two of them answerable, and both answers
    // found among the two sessions' turns.
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells.get(2), Some(&"4"), "{row}");
    assert_eq!(cells.get(3), Some(&"50%"), "{row}");
}

#[test]
fn an_empty_or_missing_corpus_is_a_clear_error() {
    let env = TestEnv::new();
    let o = env.run(&["eval", &env.home().join("nope").display().to_string()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nope"), "{}", stderr(&o));
    let empty = env.home().join("empty");
    std::fs::create_dir_all(&empty).unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["eval", &empty.display().to_string()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no labelled transcripts"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn eval_embed_ranks_with_the_model_or_says_it_is_missing() {
    let env = TestEnv::new();
    let dir = tiny_corpus(&env);
    let paths = rollgraph_engine::embed::EmbedPaths::discover();
    let present = paths.model_dir.is_dir() && paths.ort_dylib.is_file();
    let required = std::env::var("ROLLGRAPH_REQUIRE_MODEL").is_ok_and(|v| v == "1");
    assert!(
        present || !required,
        "ROLLGRAPH_REQUIRE_MODEL=1 but {paths:?}"
    );
    let o = env
        .cmd()
        .args(["eval", &dir.display().to_string(), "--json", "--embed"])
        .env("ROLLGRAPH_MODEL_DIR", &paths.model_dir)
        .env("ROLLGRAPH_ORT_DYLIB", &paths.ort_dylib)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    if present {
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}"));
        // The model joins the ranking; the answerable question is answered.
        assert_eq!(v[0]["query_hits"], serde_json::json!([1, 2]), "{v}");
    } else {
        assert!(!o.status.success());
        assert!(stderr(&o).contains("not provisioned"), "{}", stderr(&o));
    }
}
