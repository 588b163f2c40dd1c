//! The daemon with real hook calls: a whole session, single instance, idle exit.

use crate::common::walk;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use rollgraph_engine::transcript;
use serde_json::json;

use crate::hookenv::{TestEnv, alive, processes_using, wait_until};

const SESSION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/session.jsonl");

fn context(stdout: &str) -> String {
    serde_json::from_str::<serde_json::Value>(stdout)
        .ok()
        .and_then(|v| {
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_default()
}

fn state(env: &TestEnv, session: &str) -> serde_json::Value {
    serde_json::from_slice(
        &std::fs::read(env.state.join(format!("sessions/{session}/state.json")))
            .unwrap_or_default(),
    )
    .unwrap_or_default()
}

#[test]
fn a_whole_session_probe_results_arrive_in_later_injections() {
    let env = TestEnv::new();
    let t =
        transcript::read_claude(std::path::Path::new(SESSION)).unwrap_or_else(|e| panic!("{e}"));
    let turns: Vec<_> = t.turns().take(12).cloned().collect();
    let sid = "7c1e4b2a-9d3f-4a61-b8e0-5f2c9a1d3e47";
    let payload = |event: &str, extra: serde_json::Value| {
        let mut v = json!({"session_id": sid, "transcript_path": SESSION, "cwd": env.project, "hook_event_name": event});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        serde_json::to_vec(&v).unwrap_or_default()
    };
    let (out, code) = env.hook(&payload("SessionStart", json!({"source": "startup"})));
    assert_eq!(
        (out.as_str(), code),
        ("", 0),
        "a new session has nothing to inject yet"
    );
    let mut injections = Vec::new();
    for turn in &turns {
        let (out, code) = env.hook(&payload("UserPromptSubmit", json!({"prompt": turn.user})));
        assert_eq!(code, 0);
        injections.push(context(&out));
        env.wait_for_daemon();
        let (out, code) = env.hook(&payload(
            "Stop",
            json!({"last_assistant_message": turn.assistant}),
        ));
        assert_eq!((out.as_str(), code), ("", 0));
        env.wait_for_daemon();
    }
    // Turn 1 came before any probe; the gate fires on the turn after what it
    // saw (new entity: Ledgerline), so turn 2's probe is in turn 3's injection.
    assert!(injections[0].is_empty(), "{}", injections[0]);
    assert!(!turns[0].user.is_empty() && turns[0].user.contains("Ledgerline"));
    assert!(
        injections[2].contains("Ledgerline"),
        "turn 3 injection:\n{}",
        injections[2]
    );
    // Turn 6 decides on Resend; a later injection shows it.
    assert!(turns[5].user.contains("Resend"));
    assert!(
        !injections[..6].iter().any(|i| i.contains("Resend")),
        "Resend appeared before it was mentioned"
    );
    assert!(
        injections[6..].iter().any(|i| i.contains("Resend")),
        "Resend never reached an injection"
    );

    let st = state(&env, sid);
    assert_eq!(st["turn"], 12, "{st}");
    assert_eq!(st["stats"]["turns"], 12);
    let probes = st["stats"]["probes"].as_u64().unwrap_or(0);
    assert!(
        (2..12).contains(&probes),
        "the gate should fire on some turns, not all: {probes}"
    );
    // Delta mode: the full block once, then an update only when something
    // changed, so fewer injections than prompts.
    let injected = st["stats"]["injections"].as_u64().unwrap_or(0);
    assert!((2..12).contains(&injected), "{st}");
    assert_eq!(
        injected as usize,
        injections.iter().filter(|i| !i.is_empty()).count(),
        "{st}"
    );

    // Compaction: nothing printed before, the render restored after.
    assert_eq!(
        env.hook(&payload("PreCompact", json!({"trigger": "auto"}))),
        (String::new(), 0)
    );
    let (out, code) = env.hook(&payload("SessionStart", json!({"source": "compact"})));
    assert_eq!(code, 0);
    assert!(context(&out).starts_with("<rolling-memory"), "{out}");
    assert_eq!(
        env.hook(&payload("PostCompact", json!({"trigger": "auto"}))),
        (String::new(), 0)
    );
    assert_eq!(
        env.hook(&payload(
            "SessionEnd",
            json!({"reason": "prompt_input_exit"})
        )),
        (String::new(), 0)
    );
    env.wait_for_daemon();
    let st = state(&env, sid);
    assert_eq!(st["stats"]["compactions"], 1, "{st}");
    assert_eq!(st["ended"], true, "{st}");

    // Nothing the user pasted as a secret reached the state home.
    let secret = "re_8sJk2LmQ9xVbN4pT7wZc1";
    for dir in ["sessions", "spool"] {
        for e in walk(&env.state.join(dir)) {
            let text = String::from_utf8_lossy(&std::fs::read(&e).unwrap_or_default()).into_owned();
            assert!(!text.contains(secret), "the key reached {}", e.display());
        }
    }

    // The next session in this project starts from the warm graph: its very
    // first prompt already knows where the work stood.
    let next = |event: &str, extra: serde_json::Value| {
        let mut v = json!({"session_id": "next-session", "transcript_path": null, "cwd": env.project, "hook_event_name": event});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        serde_json::to_vec(&v).unwrap_or_default()
    };
    // Its SessionStart injects the project's ready render at once (no
    // daemon round trip), and the first prompt does not repeat it.
    let (out, code) = env.hook(&next("SessionStart", json!({"source": "startup"})));
    assert_eq!(code, 0);
    assert!(
        context(&out).contains("Ledgerline"),
        "the new session's first call had no block from the warm graph:\n{out}"
    );
    let (out, code) = env.hook(&next(
        "UserPromptSubmit",
        json!({"prompt": "where were we?"}),
    ));
    assert_eq!(code, 0);
    assert!(
        !context(&out).starts_with("<rolling-memory "),
        "the block was sent twice in the first turn:\n{out}"
    );
    env.wait_for_daemon();
    // The daemon seeded the session from the warm graph.
    assert!(
        std::fs::read_to_string(env.state.join("sessions/next-session/render.json"))
            .unwrap_or_default()
            .contains("Ledgerline"),
        "the new session was not seeded from the warm graph"
    );

    // The daemon idles out (2 s in tests) and leaves no process behind.
    wait_until("the daemon to exit", || {
        !env.socket().exists() && !env.state.join("daemon.pid").exists()
    });
    wait_until("no process left", || processes_using(&env.state).is_empty());
}

#[test]
fn only_one_daemon_runs_and_its_socket_is_user_only() {
    let env = TestEnv::new();
    let start = || {
        env.cmd(&["daemon", "--idle-timeout", "2"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut a = start();
    wait_until("the first daemon's socket", || env.socket().exists());
    let pid: u32 = std::fs::read_to_string(env.state.join("daemon.pid"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    assert_eq!(pid, a.id());
    let mode = std::fs::metadata(env.socket())
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o777);
    assert_eq!(mode & 0o077, 0, "socket mode {mode:o}");
    assert_eq!(env.daemon_say("ping").as_deref(), Some("pong"));
    // A second one sees the lock and leaves at once, while the first runs on.
    let mut b = start();
    let status = b.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    assert!(alive(a.id()), "the first daemon died");
    assert_eq!(env.daemon_say("ping").as_deref(), Some("pong"));
    // Idle timeout: it exits by itself and cleans up.
    let status = a.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    assert!(!env.socket().exists());
    assert!(processes_using(&env.state).is_empty());
}

#[test]
fn expand_and_query_go_through_a_running_daemon() {
    let env = TestEnv::new();
    env.seed_session(
        "s1",
        &[
            "Let's go with Resend for transactional email.",
            "Priya Raman reviews the dunning retries.",
        ],
    );
    let mut d = env
        .cmd(&["daemon", "--idle-timeout", "30"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    wait_until("the daemon's socket", || env.socket().exists());
    let out = env.run(&["query", "who", "reviews", "retries"], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text.contains("Priya Raman") && text.contains("why: a person was asked for"),
        "{text}"
    );
    let out = env.run(&["expand", "priya-raman"], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("**Priya Raman**"), "{text}");
    assert_eq!(env.daemon_say("shutdown").as_deref(), Some("bye"));
    assert!(d.wait().map(|s| s.success()).unwrap_or(false));
    let st = state(&env, "s1");
    assert_eq!(st["stats"]["expansions"], 1, "{st}");
    assert_eq!(st["stats"]["queries"], 1, "{st}");
}

#[test]
fn a_new_daemon_waits_for_the_lock_of_one_that_does_not_answer() {
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
    // A daemon that is exiting after a kill: alive as far as its pid goes,
    // still holding the lock and its listener, answering nothing.
    let lock = rollgraph_engine::store::FileLock::try_acquire(&env.state.join("daemon.lock"))
        .unwrap_or_else(|e| panic!("{e}"));
    let listener =
        std::os::unix::net::UnixListener::bind(env.socket()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        env.state.join("daemon.pid"),
        format!("{}\n", std::process::id()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Work spooled meanwhile: its poke finds a live pid that does not
    // answer, so the hook leaves it (busy) and starts nothing.
    let payload = env.payload(
        "dying",
        "UserPromptSubmit",
        json!({"prompt": "Let's go with Bento for email."}),
    );
    assert_eq!(env.hook(&payload).1, 0);
    assert!(!crate::hookenv::spool_drained(&env.state));
    let mut daemon = env
        .cmd(&["daemon", "--idle-timeout", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let log = || std::fs::read_to_string(env.state.join("rollgraph.log")).unwrap_or_default();
    wait_until("the new daemon to decide about the lock", || {
        let l = log();
        l.contains("does not answer") || l.contains("another daemon holds the lock")
    });
    assert!(
        log().contains("waiting up to"),
        "the new daemon left while the holder was only dying: {}",
        log()
    );
    // The dying daemon is gone: its lock and listener close.
    drop(listener);
    drop(lock);
    env.wait_for_daemon();
    assert_eq!(
        state(&env, "dying")["stats"]["turns"],
        1,
        "{}",
        state(&env, "dying")
    );
    let _ = env.daemon_say("shutdown");
    let _ = daemon.wait();
}
