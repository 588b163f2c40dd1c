//! Bad input gets a clear error or a logged skip, and loses nothing.

use crate::common::{TestEnv, repo, stderr, stdout};

#[test]
fn broken_transcript_lines_are_skipped_with_warnings() {
    let env = TestEnv::new();
    let path = repo().join("tests/fixtures/transcripts/broken.jsonl");
    let o = env.run(&[
        "replay",
        &path.display().to_string(),
        "--json",
        "--session",
        "broken",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap_or_default();
    assert_eq!(v["turns"], 5, "{v}");
    let warnings = v["warnings"].as_array().map(Vec::len).unwrap_or(0);
    assert!(warnings >= 3, "expected warnings for the broken lines: {v}");
    assert!(stderr(&o).contains("warning: line"), "{}", stderr(&o));
}

#[test]
fn missing_transcript_is_a_clear_error() {
    let env = TestEnv::new();
    let o = env.run(&["replay", "/no/such/transcript.jsonl"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("cannot read transcript /no/such/transcript.jsonl"),
        "{err}"
    );
}

#[test]
fn unwritable_state_dir_is_a_clear_error() {
    let env = TestEnv::new();
    // A state home under a regular file cannot be created, even as root.
    let blocker = env.dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap_or_else(|e| panic!("{e}"));
    let o = env
        .cmd()
        .env("ROLLGRAPH_HOME", blocker.join("state"))
        .args(["replay", &crate::common::example().display().to_string()])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("file/state") && err.contains("Not a directory"),
        "{err}"
    );
    assert_eq!(
        err.matches("Not a directory").count(),
        1,
        "cause repeated: {err}"
    );
}

#[test]
fn invalid_config_is_a_clear_error_naming_the_key() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.state()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(env.state().join("config.toml"), "[decay]\nrat = 0.5\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["config"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("rat"), "{}", stderr(&o));
}

#[test]
fn corrupt_journal_tail_and_snapshot_are_survived() {
    let env = TestEnv::new();
    let o = env.run(&[
        "replay",
        &crate::common::example().display().to_string(),
        "--session",
        "s1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = env.state().join("sessions/s1");
    let before: serde_json::Value =
        serde_json::from_str(&stdout(&env.run(&["show", "--json", "--session", "s1"])))
            .unwrap_or_default();
    // A torn write at the end of the journal.
    let mut j = std::fs::read(dir.join("journal.jsonl")).unwrap_or_default();
    j.extend_from_slice(b"{\"seq\":999,\"crc\":1,\"entry\":{\"type\":\"cyc");
    std::fs::write(dir.join("journal.jsonl"), j).unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["show", "--json", "--session", "s1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap_or_default();
    assert_eq!(before, after, "a torn tail changed the graph");
}
