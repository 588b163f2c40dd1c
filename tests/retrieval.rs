//! `rollgraph query` / `rollgraph expand` answer with what was said, within
//! a token budget: episodes, scopes, budgets, bad questions, damaged logs.

use serde_json::Value;

use crate::common::{TestEnv, example, stderr, stdout};

fn ok(env: &TestEnv, args: &[&str]) -> String {
    let o = env.run(args);
    assert!(o.status.success(), "rollgraph {args:?}: {}", stderr(&o));
    stdout(&o)
}

fn json(env: &TestEnv, args: &[&str]) -> Value {
    let out = ok(env, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}: {out}"))
}

fn replayed() -> TestEnv {
    let env = TestEnv::new();
    ok(&env, &["replay", &example().display().to_string()]);
    env
}

/// The replayed session's directory.
fn session_dir(env: &TestEnv) -> std::path::PathBuf {
    std::fs::read_dir(env.state().join("sessions"))
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .next()
        .unwrap_or_else(|| panic!("no session"))
        .path()
}

fn tokens(text: &str) -> usize {
    rollgraph_engine::render::count_tokens(text)
}

#[test]
fn query_and_expand_on_the_example() {
    let env = replayed();
    let q = ok(
        &env,
        &[
            "query",
            "which email provider did we pick?",
            "--scope",
            "session",
        ],
    );
    crate::snap!("query_email_provider", q);
    let e = ok(&env, &["expand", "technical/other", "--budget", "300"]);
    crate::snap!("expand_technical_other_300", e);
    // The text names a node by a short handle that expands like its id;
    // the JSON keeps the id and every reason, the words matched among them.
    assert!(q.contains("[technical, id decision-use-bento]"), "{q}");
    let e = ok(&env, &["expand", "decision-use-bento", "--json"]);
    assert!(
        e.contains("\"decision-use-bento-instead-of-resend\""),
        "{e}"
    );
    let j = json(
        &env,
        &["query", "which email provider did we pick?", "--json"],
    );
    let top = &j["hits"][0];
    assert_eq!(top["id"], "decision-use-bento-instead-of-resend", "{j}");
    assert_eq!(top["handle"], "decision-use-bento", "{j}");
    assert!(
        top["why"].as_array().is_some_and(|w| w
            .iter()
            .any(|w| w.as_str() == Some("matched email, provider"))),
        "{j}"
    );
}

#[test]
fn every_turn_is_kept_as_an_episode_and_answers_what_no_node_holds() {
    let env = replayed();
    let dir = session_dir(&env);
    let read = rollgraph_engine::episodes::read(&dir.join("episodes.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(read.damage.is_empty(), "{:?}", read.damage);
    assert!(read.episodes.len() > 60, "{}", read.episodes.len());
    let users = read
        .episodes
        .iter()
        .filter(|(_, e)| e.speaker == rollgraph_engine::episodes::Speaker::User)
        .count();
    assert!(users >= 60, "{users}");
    // A reply is dated by its prompt, also when the prompt was probed before
    // the reply came (a replay runs long after the fact).
    let prompt_at: std::collections::HashMap<u32, _> = read
        .episodes
        .iter()
        .filter(|(_, e)| e.speaker == rollgraph_engine::episodes::Speaker::User)
        .map(|(_, e)| (e.turn, e.at))
        .collect();
    for (_, e) in &read.episodes {
        if e.speaker == rollgraph_engine::episodes::Speaker::Assistant
            && let Some(at) = prompt_at.get(&e.turn)
        {
            assert_eq!(e.at, *at, "turn {}", e.turn);
        }
    }
    // The answer comes with who said it, the turn and the day.
    let a = json(&env, &["query", "money helper commit", "--json"]);
    let said = a["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["kind"] == "said")
        .unwrap_or_else(|| panic!("no said hit: {a}"));
    let ev = &said["evidence"][0];
    assert!(ev["turn"].as_u64().is_some_and(|t| t > 0), "{said}");
    assert_eq!(ev["date"], "2026-11-02", "{said}");
    assert!(
        ev["speaker"] == "user" || ev["speaker"] == "assistant",
        "{said}"
    );
}

#[test]
fn answers_never_exceed_their_budget() {
    let env = replayed();
    for (asked, applied) in [
        (0, 60),
        (60, 60),
        (150, 150),
        (800, 800),
        (1_000_000, 20_000),
    ] {
        let b = asked.to_string();
        let a = json(
            &env,
            &[
                "query",
                "email retries dunning billing",
                "--budget",
                &b,
                "--json",
            ],
        );
        assert_eq!(a["budget"], applied, "{a}");
        let text = a["text"].as_str().unwrap_or_default();
        assert!(
            tokens(text) <= applied,
            "{asked}: {} > {applied}",
            tokens(text)
        );
        assert!(
            a["tokens"].as_u64().unwrap_or(u64::MAX) <= applied as u64,
            "{a}"
        );
        if asked != applied {
            assert!(text.contains("clamped"), "{text}");
        }
        let e = json(
            &env,
            &["expand", "technical/other", "--budget", &b, "--json"],
        );
        let text = e["text"].as_str().unwrap_or_default();
        assert!(tokens(text) <= applied, "expand {asked}: {}", tokens(text));
    }
}

#[test]
fn expansion_is_bounded_and_raises_only_what_it_showed() {
    let env = replayed();
    let e = json(
        &env,
        &["expand", "technical/other", "--budget", "400", "--json"],
    );
    let shown = e["ids"].as_array().map_or(0, Vec::len);
    let more = e["more"].as_array().map_or(0, Vec::len);
    assert!(shown >= 1 && more > 10, "shown {shown}, more {more}");
    assert!(
        e["text"]
            .as_str()
            .unwrap_or_default()
            .contains(" more (expand an id"),
        "{e}"
    );
    // Only the shown nodes were touched: the journal's last entry names them.
    let show = json(&env, &["show", "--json"]);
    let nodes = show["nodes"].as_object().cloned().unwrap_or_default();
    let now = "2026-11-02T12:30:00Z";
    let touched = nodes
        .values()
        .filter(|n| n["last_activated"].as_str() == Some(now))
        .count();
    assert_eq!(touched, shown, "touched {touched} of {} nodes", nodes.len());
}

#[test]
fn odd_questions_get_plain_answers() {
    let env = replayed();
    for q in ["", "x", "日本語の質問", "зачем", "zzqxv wubbafrob"] {
        let out = ok(&env, &["query", q]);
        assert!(!out.trim().is_empty(), "{q:?}");
        assert!(tokens(&out) <= 800, "{q:?}");
    }
    let out = ok(&env, &["query", "zzqxv wubbafrob"]);
    assert!(out.starts_with("nothing in memory matches"), "{out}");
    let o = env.run(&["query", "x", "--scope", "everywhere"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("unknown scope"), "{}", stderr(&o));
}

#[test]
fn a_damaged_episode_log_keeps_its_valid_part_and_says_so() {
    let env = replayed();
    let dir = session_dir(&env);
    let log = dir.join("episodes.jsonl");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[3] = lines[3].replacen("turn", "tvrn", 1);
    let damaged = format!(
        "{}\n{{\"seq\":99999,\"crc\":1,\"entry\":{{\"sess",
        lines.join("\n")
    );
    std::fs::write(&log, &damaged).unwrap_or_else(|e| panic!("{e}"));
    let a = json(&env, &["query", "money helper commit", "--json"]);
    let notes = a["notes"].to_string();
    assert!(notes.contains("session episodes"), "{notes}");
    assert!(
        notes.contains("line 4") && notes.contains("torn"),
        "{notes}"
    );
    assert!(a["hits"].as_array().is_some_and(|h| !h.is_empty()), "{a}");
    // A query reads; it never repairs.
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), damaged);
}

#[test]
fn the_project_scope_answers_from_an_earlier_session() {
    let env = replayed();
    let r = json(&env, &["reconcile", "--json"]);
    assert!(r[0]["episodes"].as_u64().is_some_and(|n| n > 60), "{r}");
    // A second session in the same project knows nothing yet itself.
    let cwd = {
        let text = std::fs::read_to_string(example()).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["cwd"].as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let fresh = env.dir.path().join("fresh.jsonl");
    std::fs::write(
        &fresh,
        format!(
            "{}\n",
            serde_json::json!({"ts": "2026-11-03T09:00:00Z", "user": "Morning, where were we?", "assistant": "Let me look.", "cwd": cwd})
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    ok(
        &env,
        &["replay", &fresh.display().to_string(), "--session", "fresh"],
    );
    let only = ok(
        &env,
        &[
            "query",
            "money helper commit",
            "--session",
            "fresh",
            "--scope",
            "session",
        ],
    );
    assert!(only.starts_with("nothing in memory matches"), "{only}");
    let a = json(
        &env,
        &[
            "query",
            "money helper commit",
            "--session",
            "fresh",
            "--scope",
            "project",
            "--json",
        ],
    );
    let hits = a["hits"].as_array().cloned().unwrap_or_default();
    assert!(
        hits.iter()
            .any(|h| h["kind"] == "said" && h["source"] != "fresh"),
        "{a}"
    );
}
