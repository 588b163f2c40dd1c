//! `rollgraph hook claude` as a process: every event, every bad input.

use crate::common::walk;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Stdio;

use crate::hookenv::{TestEnv, spool_drained, wait_until};
use crate::snap;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/events");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(FIXTURES).join(format!("{name}.json")))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// An environment whose `fixture-session` already has a render.
fn seeded() -> TestEnv {
    let env = TestEnv::new();
    env.seed_session(
        "fixture-session",
        &[
            "Let's go with Resend for transactional email in the Ledgerline dunning work.",
            "Priya Raman reviews the billing code; the retry schedule lives in src/billing/dunning.rs.",
        ],
    );
    env
}

/// `[inject] mode = "full"`: every prompt gets the whole block.
fn full_mode(env: &TestEnv) {
    std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(env.state.join("config.toml"), "[inject]\nmode = \"full\"\n")
        .unwrap_or_else(|e| panic!("{e}"));
}

fn shown(stdout: &str, code: i32) -> String {
    format!("exit: {code}\nstdout:\n{stdout}")
}

/// The session's stored files, to prove bad input changed nothing.
fn session_files(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    let dir = env.state.join("sessions/fixture-session");
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_event_answers_as_the_protocol_says() {
    for (name, prints) in [
        ("session_start_startup", true),
        ("session_start_resume", true),
        ("session_start_compact", true),
        ("user_prompt_submit", true),
        ("codex_user_prompt_submit", true),
        ("missing_transcript", true),
        ("pre_compact", false),
        ("post_compact", false),
        ("session_end", false),
        ("stop", false),
    ] {
        let env = seeded();
        let (stdout, code) = env.hook(&fixture(name));
        assert_eq!(code, 0, "{name}");
        assert_eq!(!stdout.is_empty(), prints, "{name}: {stdout}");
        if prints {
            let v: serde_json::Value =
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{name}: {e}: {stdout}"));
            let ctx = v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap_or_default();
            assert!(ctx.starts_with("<rolling-memory"), "{name}: {ctx}");
        }
        // Every modelled event leaves a job for the daemon.
        assert!(
            env.state.join("spool/fixture-session.jsonl").exists(),
            "{name}: nothing spooled"
        );
        let stdout = stdout.replace(&env.dir.path().display().to_string(), "[TMP]");
        snap!(format!("hook_{name}"), shown(&stdout, code));
    }
}

#[test]
fn bad_input_is_silent_exits_zero_and_loses_nothing() {
    let env = seeded();
    let before = session_files(&env);
    let oversized = {
        let mut v =
            br#"{"session_id":"fixture-session","hook_event_name":"UserPromptSubmit","prompt":""#
                .to_vec();
        v.extend(std::iter::repeat_n(b'a', 1_100_000));
        v.extend(br#""}"#);
        v
    };
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("empty", fixture("empty"), true),
        ("malformed", fixture("malformed"), true),
        ("truncated", fixture("truncated"), true),
        ("no_session_id", fixture("no_session_id"), true),
        ("bad_session_id", fixture("bad_session_id"), true),
        ("wrong_type", fixture("wrong_type"), true),
        ("oversized", oversized, true),
        ("unknown_event", fixture("unknown_event"), false),
    ];
    for (name, payload, logged) in cases {
        let log_before = env.log().lines().count();
        let (stdout, code) = env.hook(&payload);
        assert_eq!((stdout.as_str(), code), ("", 0), "{name}");
        let log_after = env.log().lines().count();
        assert_eq!(
            log_after > log_before,
            logged,
            "{name}: log:\n{}",
            env.log()
        );
        assert_eq!(
            session_files(&env),
            before,
            "{name} changed the session's files"
        );
    }
    assert!(
        !env.state.join("spool/fixture-session.jsonl").exists(),
        "bad input spooled a job"
    );
    assert!(env.log().contains("empty hook payload"), "{}", env.log());
}

#[test]
fn a_bad_host_argument_still_exits_zero() {
    let env = seeded();
    let out = env.run(&["hook", "opencode"], &fixture("user_prompt_submit"));
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert!(env.log().contains("bad hook command line"), "{}", env.log());
}

#[test]
fn an_unwritable_state_home_is_silent() {
    let env = seeded();
    // A path under a regular file can't be created, even by root.
    let file = env.dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap_or_else(|e| panic!("{e}"));
    let mut env2 = TestEnv::new();
    env2.vars.push((
        "ROLLGRAPH_HOME".into(),
        file.join("sub").display().to_string(),
    ));
    for name in [
        "user_prompt_submit",
        "session_start_startup",
        "stop",
        "session_end",
    ] {
        let (stdout, code) = env2.hook(&fixture(name));
        assert_eq!((stdout.as_str(), code), ("", 0), "{name}");
    }
}

#[test]
fn a_dead_daemons_socket_is_replaced_and_the_work_done() {
    let env = seeded();
    std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
    // A socket file nobody listens on: a daemon that died.
    drop(UnixListener::bind(env.socket()).unwrap_or_else(|e| panic!("{e}")));
    let (stdout, code) = env.hook(&fixture("user_prompt_submit"));
    assert_eq!(code, 0);
    assert!(stdout.contains("additionalContext"), "{stdout}");
    env.wait_for_daemon();
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(env.state.join("sessions/fixture-session/state.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(state["turn"], 3, "the spooled turn was processed: {state}");
}

#[test]
fn a_poke_to_a_dying_daemon_starts_a_new_one() {
    let env = seeded();
    std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
    // A daemon killed a moment ago: its main thread is a zombie while the
    // process still holds its listener open (another thread not yet
    // exited), so a connection and a write succeed but nobody ever reads.
    let mut child = std::process::Command::new("true")
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let zombie = child.id();
    crate::hookenv::wait_until("the child to turn zombie", || {
        std::fs::read_to_string(format!("/proc/{zombie}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    });
    std::fs::write(env.state.join("daemon.pid"), format!("{zombie}\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    let _dying = UnixListener::bind(env.socket()).unwrap_or_else(|e| panic!("{e}"));
    let (stdout, code) = env.hook(&fixture("user_prompt_submit"));
    assert_eq!(code, 0);
    assert!(stdout.contains("additionalContext"), "{stdout}");
    // The poke went unanswered and the recorded daemon is dead: the hook
    // started a new one, which does the work.
    env.wait_for_daemon();
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(env.state.join("sessions/fixture-session/state.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(state["turn"], 3, "the spooled turn was processed: {state}");
    let _ = child.wait();
}

#[test]
fn a_hung_daemon_does_not_block_the_hook() {
    let env = seeded();
    full_mode(&env);
    // A live daemon (this process stands in for it: its pid, its lock) that
    // listens, never accepts, never answers.
    let _hung = UnixListener::bind(env.socket()).unwrap_or_else(|e| panic!("{e}"));
    let _lock = rollgraph_engine::store::FileLock::try_acquire(&env.state.join("daemon.lock"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        env.state.join("daemon.pid"),
        format!("{}\n", std::process::id()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..3 {
        let (stdout, code) = env.hook(&fixture("user_prompt_submit"));
        assert_eq!(code, 0);
        assert!(stdout.contains("additionalContext"), "{stdout}");
    }
    let spool =
        std::fs::read_to_string(env.state.join("spool/fixture-session.jsonl")).unwrap_or_default();
    assert_eq!(
        spool.lines().count(),
        3,
        "every turn waits in the spool: {spool}"
    );
    assert!(!spool_drained(&env.state));
}

#[test]
fn two_hooks_at_once_both_answer_and_both_turns_are_kept() {
    let env = seeded();
    full_mode(&env);
    let spawn = |prompt: &str| {
        let payload = env.payload(
            "fixture-session",
            "UserPromptSubmit",
            serde_json::json!({"prompt": prompt}),
        );
        let mut c = env
            .cmd(&["hook", "claude"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(mut i) = c.stdin.take() {
            use std::io::Write;
            let _ = i.write_all(&payload);
        }
        c
    };
    let a = spawn("first prompt about Bento");
    let b = spawn("second prompt about Postmark");
    for c in [a, b] {
        let out = c.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&out.stdout).contains("additionalContext"));
    }
    env.wait_for_daemon();
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(env.state.join("sessions/fixture-session/state.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(state["turn"], 4, "both turns reached the session: {state}");
}

#[test]
fn it_can_be_turned_off_per_session_and_per_project() {
    let mut env = seeded();
    env.vars.push(("ROLLGRAPH_DISABLE".into(), "1".into()));
    let payload = env.payload(
        "fixture-session",
        "UserPromptSubmit",
        serde_json::json!({"prompt": "hello"}),
    );
    assert_eq!(env.hook(&payload), (String::new(), 0));
    env.vars.clear();
    std::fs::write(env.project.join(".rollgraph-off"), b"").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(env.hook(&payload), (String::new(), 0));
    assert!(!env.state.join("spool/fixture-session.jsonl").exists());
    std::fs::remove_file(env.project.join(".rollgraph-off")).unwrap_or_else(|e| panic!("{e}"));
    let (stdout, _) = env.hook(&payload);
    assert!(stdout.contains("additionalContext"));
}

#[test]
fn secrets_are_redacted_before_they_are_spooled() {
    let env = seeded();
    let secret = "re_8sJk2LmQ9xVbN4pT7wZc1";
    let p = env.payload(
        "fixture-session",
        "UserPromptSubmit",
        serde_json::json!({"prompt": format!("RESEND_API_KEY={secret} wire it up")}),
    );
    assert_eq!(env.hook(&p).1, 0);
    let s = env.payload("fixture-session", "Stop", serde_json::json!({"last_assistant_message": format!("Set RESEND_API_KEY={secret} in .env")}));
    assert_eq!(env.hook(&s), (String::new(), 0));
    wait_until("both jobs spooled or processed", || {
        std::fs::read_to_string(env.state.join("spool/fixture-session.jsonl")).is_ok()
    });
    env.wait_for_daemon();
    for entry in walk(&env.state) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "secret reached {}",
            entry.display()
        );
    }
}

#[test]
fn a_secret_at_the_length_cut_is_redacted_whole() {
    let env = seeded();
    // The prompt is cut to 16,000 characters; the key straddles the cut.
    let prompt = format!("{}token re_8sJk2LmQ9xVbN4pT7wZc1 more", "a ".repeat(7_990));
    let p = env.payload(
        "fixture-session",
        "UserPromptSubmit",
        serde_json::json!({"prompt": prompt}),
    );
    assert_eq!(env.hook(&p).1, 0);
    let spool =
        std::fs::read_to_string(env.state.join("spool/fixture-session.jsonl")).unwrap_or_default();
    assert!(spool.contains("[REDACTED"), "the key was not redacted");
    assert!(
        !spool.contains("re_8sJk2L"),
        "part of the key reached the spool"
    );
}
