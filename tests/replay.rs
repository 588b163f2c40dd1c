//! The example session replayed through the whole offline pipeline.

use crate::common::walk;
use crate::common::{TestEnv, example, example_prefix, stderr, stdout};
use crate::snap;

fn replay_json(env: &TestEnv, path: &std::path::Path) -> serde_json::Value {
    let o = env.run(&["replay", &path.display().to_string(), "--json"]);
    assert!(o.status.success(), "replay failed: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)))
}

#[test]
fn full_replay_reports_what_the_issue_asks_for() {
    let env = TestEnv::new();
    let v = replay_json(&env, &example());
    for key in ["turns", "probes", "triggers", "nodes", "edges", "render"] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["turns"], 66);
    let probes = v["probes"].as_u64().unwrap_or(0);
    let per_60 = probes as f64 * 60.0 / 66.0;
    assert!(
        (10.0..=15.0).contains(&per_60),
        "probe rate {per_60:.1} per 60 turns ({probes} probes)"
    );
    for t in [
        "new_entity",
        "domain_shift",
        "decision",
        "correction",
        "dead_mans_switch",
    ] {
        assert!(
            v["triggers"][t].as_u64().unwrap_or(0) >= 1,
            "trigger {t} never fired: {}",
            v["triggers"]
        );
    }
    let tokens = v["render"]["tokens"].as_u64().unwrap_or(0);
    assert!((500..=800).contains(&tokens), "render is {tokens} tokens");
    let text = v["render"]["text"].as_str().unwrap_or("");
    // The changed decisions show their history; corrections, preferences and people survive.
    assert!(
        text.contains("Use Bento instead of Resend (was: Use Resend"),
        "{text}"
    );
    assert!(
        text.contains("Use apalis instead of tokio-cron-scheduler (was:"),
        "{text}"
    );
    assert!(text.contains("cents, not dollars"), "{text}");
    assert!(text.contains("small commits"), "{text}");
    assert!(text.contains("Priya Raman"), "{text}");
    assert!(v["injections"]["max_tokens"].as_u64().unwrap_or(999) <= 800);
}

#[test]
fn skipped_lines_and_secrets_never_reach_the_graph() {
    let env = TestEnv::new();
    let v = replay_json(&env, &example());
    assert!(v["nodes"].as_u64().unwrap_or(0) > 50);
    let o = env.run(&["show", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = stdout(&o);
    // Names that occur only in our own injections, sidechains, meta or summary lines.
    for never in [
        "Zanzibar",
        "Q3-OKR",
        "Halcyon",
        "Ingrid",
        "Nightjar",
        "Sidechain-Only",
        "Meta-Only",
        "Summary-Only",
        "snapshot_only_shim",
        "Progress-Only",
    ] {
        assert!(!doc.contains(never), "{never} leaked into the graph");
    }
    // Pasted keys never reach disk.
    let mut all = String::new();
    for entry in walk(&env.state()) {
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(entry).unwrap_or_default(),
        ));
    }
    for secret in [
        "re_8sJk2LmQ9xVbN4pT7wZc1",
        "sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu",
        "8sJk2LmQ9",
        "51Hx9aBcDe",
    ] {
        assert!(
            !all.contains(secret),
            "secret {secret} written to the state dir"
        );
    }
}

#[test]
fn renders_at_several_points_of_the_session() {
    let env = TestEnv::new();
    for turns in [12usize, 32, 45, 66] {
        let path = example_prefix(env.dir.path(), turns);
        let v = replay_json(&env, &path);
        let text = v["render"]["text"].as_str().unwrap_or("").to_owned();
        let tokens = v["render"]["tokens"].as_u64().unwrap_or(0);
        assert!(tokens <= 800, "turn {turns}: {tokens} tokens");
        snap!(
            format!("render_after_turn_{turns}"),
            format!("tokens: {tokens}\n\n{text}")
        );
    }
}

#[test]
fn replay_is_deterministic_and_replaces_its_own_earlier_run() {
    let env = TestEnv::new();
    let a = replay_json(&env, &example());
    let b = replay_json(&env, &example());
    assert_eq!(a["render"], b["render"]);
    assert_eq!(a["nodes"], b["nodes"]);
    assert_eq!(a["probes"], b["probes"]);
}

#[test]
fn human_output_and_inspection_commands() {
    let env = TestEnv::new();
    let o = env.run(&["replay", &example().display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Replayed 66 turns"), "{out}");
    assert!(out.contains("<rolling-memory"), "{out}");
    let o = env.run(&["show"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Priya Raman"));
    let o = env.run(&["render", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("render --json is not JSON ({e}): {}", stdout(&o)));
    let tokens = r["tokens"]
        .as_u64()
        .unwrap_or_else(|| panic!("no token count: {r}"));
    assert!((1..=800).contains(&tokens), "{tokens}");
    let o = env.run(&["stats", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("stats --json is not JSON ({e}): {}", stdout(&o)));
    assert_eq!(s["overall"]["turns"], 66);
    assert!(s["overall"]["probes_per_turn"].as_f64().unwrap_or(0.0) > 0.1);
    let o = env.run(&["config"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("dead_mans_switch = 8"));
}
