//! The hook for each host: output validated against the hosts' output
//! shapes, warm start in one call, one block per turn on resume, sessions
//! that never had a prompt, Gemini CLI's events, Codex's MCP hint, the slim
//! binary and a stdin that never closes.

use std::io::Write;
use std::process::{Command, Stdio};

use rollgraph_engine::Config;
use rollgraph_engine::lifecycle::{self, ReconcileReason};
use serde_json::{Value, json};

use crate::common::walk;
use crate::hookenv::{NOW, TestEnv, processes_using, spool_drained, wait_until};

/// Claude Code's and Codex's output schema for SessionStart and
/// UserPromptSubmit context (Codex's built-in schemas forbid other keys).
fn output_schema(event: &str) -> Value {
    json!({
        "type": "object",
        "required": ["hookSpecificOutput"],
        "additionalProperties": false,
        "properties": {
            "hookSpecificOutput": {
                "type": "object",
                "required": ["hookEventName", "additionalContext"],
                "additionalProperties": false,
                "properties": {
                    "hookEventName": {"const": event},
                    "additionalContext": {"type": "string", "minLength": 1}
                }
            }
        }
    })
}

/// Validates one hook answer against a host's output shape and returns its context.
fn validated(stdout: &str, event: &str, max_chars: usize) -> String {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let validator =
        jsonschema::validator_for(&output_schema(event)).unwrap_or_else(|e| panic!("schema: {e}"));
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{event}: {errors:?}\n{stdout}");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(ctx.chars().count() <= max_chars, "{event}: over the cap");
    ctx
}

fn hook_as(env: &TestEnv, host: &str, payload: &[u8]) -> (String, i32) {
    let out = env.run(&["hook", host], payload);
    (
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// An environment whose project has a warm graph (and its ready render).
fn warm_project() -> TestEnv {
    let env = TestEnv::new();
    env.seed_session(
        "earlier-session",
        &[
            "Let's go with Resend for transactional email in the Ledgerline dunning work.",
            "Priya Raman reviews the billing code; the retry schedule lives in src/billing/dunning.rs.",
        ],
    );
    let now = rollgraph_engine::clock::parse_time(NOW).unwrap_or_default();
    lifecycle::reconcile_session(
        &env.state_home(),
        &Config::default(),
        "earlier-session",
        ReconcileReason::SessionEnd,
        now,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Only the warm store is left: the earlier session's own files go.
    std::fs::remove_dir_all(env.state.join("sessions")).unwrap_or_else(|e| panic!("{e}"));
    env
}

#[test]
fn a_new_session_in_a_warm_project_gets_a_block_in_its_first_call() {
    let env = warm_project();
    let key = rollgraph_engine::warm::project_key(&env.project);
    assert!(
        env.state.join(format!("warm/{key}/render.json")).exists(),
        "reconcile wrote no ready render"
    );
    for (host, source) in [
        ("claude", "startup"),
        ("codex", "startup"),
        ("claude", "clear"),
        ("codex", "fork"),
    ] {
        let sid = format!("new-{host}-{source}");
        let (out, code) = hook_as(
            &env,
            host,
            &env.payload(&sid, "SessionStart", json!({"source": source})),
        );
        assert_eq!(code, 0);
        let ctx = validated(&out, "SessionStart", 9_000);
        assert!(ctx.contains("Resend"), "{host} {source}: {ctx}");
        // No daemon round trip: nothing spooled, no daemon started for a
        // session that has not had a prompt yet.
        assert!(!env.state.join(format!("spool/{sid}.jsonl")).exists());
    }
    assert!(!env.socket().exists(), "SessionStart started the daemon");
}

#[test]
fn resume_injects_one_block_not_two() {
    for mode in ["delta", "full"] {
        for host in ["claude", "codex"] {
            let env = warm_project();
            std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(
                env.state.join("config.toml"),
                format!("[inject]\nmode = \"{mode}\"\n"),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let sid = "resumed";
            let (out, _) = hook_as(
                &env,
                host,
                &env.payload(sid, "SessionStart", json!({"source": "resume"})),
            );
            validated(&out, "SessionStart", 9_000);
            let (out, code) = hook_as(
                &env,
                host,
                &env.payload(sid, "UserPromptSubmit", json!({"prompt": "where were we?"})),
            );
            assert_eq!(
                (out.as_str(), code),
                ("", 0),
                "{mode} {host}: a second block in the same turn"
            );
            // The prompt is spooled, with the start the SessionStart deferred.
            let spool = std::fs::read_to_string(env.state.join(format!("spool/{sid}.jsonl")))
                .unwrap_or_default();
            let kinds: Vec<String> = spool
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|v| v["kind"].as_str().unwrap_or_default().to_owned())
                .collect();
            assert_eq!(kinds, ["start", "turn"], "{mode} {host}");
            env.wait_for_daemon();
            if mode == "full" {
                // The next turn gets the block again in full mode.
                let (out, _) = hook_as(
                    &env,
                    host,
                    &env.payload(sid, "UserPromptSubmit", json!({"prompt": "next"})),
                );
                validated(&out, "UserPromptSubmit", 9_000);
            }
        }
    }
}

#[test]
fn after_compaction_the_full_block_comes_back() {
    let env = warm_project();
    let sid = "compacting";
    let p = |event: &str, extra: Value| env.payload(sid, event, extra);
    let (out, _) = env.hook(&p("SessionStart", json!({"source": "startup"})));
    assert!(!out.is_empty());
    let (out, _) = env.hook(&p("UserPromptSubmit", json!({"prompt": "go on"})));
    assert_eq!(out, "");
    env.wait_for_daemon();
    assert_eq!(env.hook(&p("PreCompact", json!({"trigger": "auto"}))).0, "");
    let (out, _) = env.hook(&p("SessionStart", json!({"source": "compact"})));
    validated(out.trim(), "SessionStart", 9_000);
    let (out, _) = env.hook(&p("UserPromptSubmit", json!({"prompt": "and now?"})));
    assert_eq!(out, "", "the compact block was sent a second time");
    env.wait_for_daemon();
}

#[test]
fn an_event_for_a_session_that_never_had_a_prompt_writes_nothing() {
    let env = TestEnv::new();
    for host in ["claude", "codex", "gemini"] {
        for (event, extra) in [
            ("SessionEnd", json!({"reason": "other"})),
            ("PreCompact", json!({"trigger": "manual"})),
            ("PostCompact", json!({"trigger": "manual"})),
            ("Stop", json!({"last_assistant_message": "hi"})),
            ("PreCompress", json!({"trigger": "auto"})),
            ("AfterAgent", json!({"prompt_response": "hi"})),
        ] {
            let (_, code) = hook_as(&env, host, &env.payload("ghost", event, extra));
            assert_eq!(code, 0);
        }
    }
    assert!(
        walk(&env.state).is_empty(),
        "files written: {:?}",
        walk(&env.state)
    );
    assert!(processes_using(&env.state).is_empty(), "a daemon started");
    // A SessionStart then a SessionEnd with no prompt between leaves nothing either.
    let (_, code) = hook_as(
        &env,
        "claude",
        &env.payload("ghost", "SessionStart", json!({"source": "startup"})),
    );
    assert_eq!(code, 0);
    let (_, code) = hook_as(
        &env,
        "claude",
        &env.payload("ghost", "SessionEnd", json!({"reason": "other"})),
    );
    assert_eq!(code, 0);
    assert!(walk(&env.state).is_empty(), "{:?}", walk(&env.state));
    assert!(processes_using(&env.state).is_empty(), "a daemon started");
}

#[test]
fn gemini_speaks_json_plain_text_and_its_own_event_names() {
    let env = warm_project();
    let sid = "gemini-session";
    let p = |event: &str, extra: Value| {
        let mut v = env.payload(sid, event, extra);
        // Gemini adds a timestamp to every event.
        v = serde_json::to_vec(&{
            let mut o: Value = serde_json::from_slice(&v).unwrap_or_default();
            o["timestamp"] = json!("2026-11-02T10:00:00.000Z");
            o
        })
        .unwrap_or_default();
        v
    };
    let (out, code) = hook_as(
        &env,
        "gemini",
        &p("SessionStart", json!({"source": "startup"})),
    );
    assert_eq!(code, 0);
    let ctx = validated(&out, "SessionStart", 9_000);
    assert!(!ctx.contains('<') && !ctx.contains('>'), "{ctx}");
    assert!(ctx.starts_with("Rolling memory ("), "{ctx}");
    // The first turn already has the block in its history: `{}`. Gemini CLI
    // hands BeforeAgent the prompt with that block before the typed text.
    let prompt = format!("<hook_context>{ctx}</hook_context>\n\nhi");
    let (out, code) = hook_as(&env, "gemini", &p("BeforeAgent", json!({"prompt": prompt})));
    assert_eq!((out.as_str(), code), ("{}", 0));
    env.wait_for_daemon();
    // The daemon got "hi", not our own block back as something the user said.
    let shown = env.run(&["show", "--session", sid, "--json"], b"");
    let graph: Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
    let labels: Vec<String> = graph["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            graph["nodes"]
                .as_object()
                .into_iter()
                .flat_map(|o| o.values()),
        )
        .filter_map(|n| n["label"].as_str().map(str::to_lowercase))
        .collect();
    assert!(!labels.is_empty(), "{graph}");
    for own in ["memory_expand", "rolling memory", "relates_to"] {
        assert!(
            !labels.iter().any(|l| l.contains(own)),
            "the injected block was read back as the user's words ({own}): {labels:?}"
        );
    }
    // BeforeAgent context lasts one turn: the next turn gets the block again.
    let (out, _) = hook_as(&env, "gemini", &p("BeforeAgent", json!({"prompt": "next"})));
    let ctx = validated(&out, "BeforeAgent", 9_000);
    assert!(!ctx.contains('<') && !ctx.contains('>'), "{ctx}");
    // AfterAgent feeds the reply; a /compress (PreCompress `manual`)
    // reconciles; both answer `{}`.
    let (out, _) = hook_as(
        &env,
        "gemini",
        &p(
            "AfterAgent",
            json!({"prompt": "next", "prompt_response": "Done: Bento now.", "stop_hook_active": false}),
        ),
    );
    assert_eq!(out, "{}");
    wait_until("the spool to drain", || spool_drained(&env.state));
    // Gemini fires PreCompress `auto` before every turn, compressing or not:
    // it reconciles nothing.
    let compactions = || env.log().matches(&format!("{sid} (compaction)")).count();
    let (out, _) = hook_as(
        &env,
        "gemini",
        &p("PreCompress", json!({"trigger": "auto"})),
    );
    assert_eq!(out, "{}");
    wait_until("the spool to drain", || spool_drained(&env.state));
    assert_eq!(
        compactions(),
        0,
        "PreCompress auto reconciled: {}",
        env.log()
    );
    let (out, _) = hook_as(
        &env,
        "gemini",
        &p("PreCompress", json!({"trigger": "manual"})),
    );
    assert_eq!(out, "{}");
    wait_until("the spool to drain", || spool_drained(&env.state));
    let hook_errors: Vec<String> = env
        .log()
        .lines()
        .filter(|l| l.contains(" hook["))
        .map(str::to_owned)
        .collect();
    assert!(hook_errors.is_empty(), "hook errors: {hook_errors:?}");
    let st: Value = serde_json::from_slice(
        &std::fs::read(env.state.join(format!("sessions/{sid}/state.json"))).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert!(
        st["last_reply"]
            .as_str()
            .unwrap_or_default()
            .contains("Bento"),
        "{st}"
    );
    assert_eq!(st["unreconciled"], 0, "PreCompress did not reconcile: {st}");
    assert!(compactions() > 0, "{}", env.log());
    // Bad input still answers `{}` and exits 0.
    let (out, code) = hook_as(&env, "gemini", b"{ not json");
    assert_eq!((out.as_str(), code), ("{}", 0));
}

#[test]
fn codex_names_memory_expand_only_where_the_mcp_server_is_configured() {
    let env = warm_project();
    let p = |sid: &str| env.payload(sid, "SessionStart", json!({"source": "startup"}));
    let (out, _) = hook_as(&env, "codex", &p("codex-a"));
    let ctx = validated(&out, "SessionStart", 6_000);
    assert!(!ctx.contains("memory_expand"), "{ctx}");
    let (out, _) = hook_as(&env, "claude", &p("claude-a"));
    assert!(validated(&out, "SessionStart", 9_000).contains("memory_expand"));
    // `rollgraph install codex` registers the server: now the block names it.
    let out = env.run(&["install", "codex"], b"");
    assert!(out.status.success(), "{out:?}");
    let (out, _) = hook_as(&env, "codex", &p("codex-b"));
    assert!(validated(&out, "SessionStart", 6_000).contains("memory_expand"));
}

#[test]
fn the_slim_binary_answers_like_the_full_one() {
    let env = warm_project();
    let slim = env!("CARGO_BIN_EXE_rollgraph-hook");
    let run = |args: &[&str], payload: &[u8]| {
        let base = env.cmd(&[]);
        let mut cmd = Command::new(slim);
        cmd.env_clear();
        for (k, v) in base.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        let mut child = cmd
            .args(args)
            .current_dir(&env.project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(payload);
        }
        child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
    };
    let out = run(
        &["claude"],
        &env.payload("slim", "SessionStart", json!({"source": "startup"})),
    );
    assert!(out.status.success());
    let full = env.run(
        &["hook", "claude"],
        &env.payload("full", "SessionStart", json!({"source": "startup"})),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&full.stdout)
    );
    // It starts the daemon from the full binary beside it.
    let out = run(
        &["claude"],
        &env.payload("slim", "UserPromptSubmit", json!({"prompt": "go"})),
    );
    assert!(out.status.success());
    env.wait_for_daemon();
    assert!(env.state.join("sessions/slim/state.json").exists());
    // A bad command line: silent, exit 0.
    let out = run(&["nonsense"], b"{}");
    assert!(out.status.success() && out.stdout.is_empty());
}

#[test]
fn a_stdin_that_never_closes_does_not_hold_the_hook() {
    let env = warm_project();
    let spawn = || {
        env.cmd(&["hook", "claude"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // A whole payload, stdin left open: it is answered.
    let mut child = spawn();
    let mut stdin = child.stdin.take();
    if let Some(i) = stdin.as_mut() {
        let _ = i.write_all(&env.payload("open", "SessionStart", json!({"source": "startup"})));
        let _ = i.flush();
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    drop(stdin);
    assert!(out.status.success());
    validated(
        String::from_utf8_lossy(&out.stdout).trim(),
        "SessionStart",
        9_000,
    );
    // Half a payload, stdin left open: silent, logged, exit 0.
    let mut child = spawn();
    let mut stdin = child.stdin.take();
    if let Some(i) = stdin.as_mut() {
        let _ = i.write_all(br#"{"session_id":"open2","hook_event_name":"SessionSt"#);
        let _ = i.flush();
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    drop(stdin);
    assert!(out.status.success() && out.stdout.is_empty());
    assert!(env.log().contains("stdin did not end"), "{}", env.log());
}

/// The slim hook with this environment, its daemon replaced by `true`: only
/// the hooks themselves race.
fn slim_hook(env: &TestEnv, host: &str) -> Command {
    let base = env.cmd(&[]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rollgraph-hook"));
    cmd.env_clear();
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.env("ROLLGRAPH_BIN", "true")
        .arg(host)
        .current_dir(&env.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs hook processes at once: all are started before any gets its input.
fn at_once(env: &TestEnv, host: &str, payloads: &[Vec<u8>]) -> Vec<String> {
    let mut children: Vec<_> = payloads
        .iter()
        .map(|_| {
            slim_hook(env, host)
                .spawn()
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    for (c, p) in children.iter_mut().zip(payloads) {
        if let Some(mut i) = c.stdin.take() {
            let _ = i.write_all(p);
        }
    }
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            assert!(out.status.success());
            let s = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            // Gemini's "nothing to say".
            if s == "{}" { String::new() } else { s }
        })
        .collect()
}

fn inject_state(env: &TestEnv, sid: &str) -> Value {
    serde_json::from_slice(
        &std::fs::read(env.state.join(format!("spool/{sid}.inject.json"))).unwrap_or_default(),
    )
    .unwrap_or_default()
}

#[test]
fn a_session_start_and_a_prompt_run_at_once_send_one_block() {
    let env = warm_project();
    for mode in ["delta", "full"] {
        std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            env.state.join("config.toml"),
            format!("[inject]\nmode = \"{mode}\"\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for host in ["claude", "codex", "gemini"] {
            let prompt_event = if host == "gemini" {
                "BeforeAgent"
            } else {
                "UserPromptSubmit"
            };
            for trial in 0..8 {
                let sid = format!("race-{mode}-{host}-{trial}");
                let mut payloads = vec![
                    env.payload(&sid, "SessionStart", json!({"source": "resume"})),
                    env.payload(&sid, prompt_event, json!({"prompt": "where were we?"})),
                ];
                // Either may come first.
                if trial % 2 == 1 {
                    payloads.reverse();
                }
                let outs = at_once(&env, host, &payloads);
                let blocks = outs.iter().filter(|o| !o.is_empty()).count();
                assert_eq!(blocks, 1, "{mode} {host} trial {trial}: {outs:?}");
                let st = inject_state(&env, &sid);
                assert_eq!(st["inject"]["prompts"], 1, "{mode} {host}: {st}");
                // The start and the turn are both queued, whatever the order.
                let spool = std::fs::read_to_string(env.state.join(format!("spool/{sid}.jsonl")))
                    .unwrap_or_default();
                let mut kinds: Vec<String> = spool
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .map(|v| v["kind"].as_str().unwrap_or_default().to_owned())
                    .collect();
                kinds.sort();
                assert_eq!(kinds, ["start", "turn"], "{mode} {host} trial {trial}");
            }
        }
    }
    let hook_errors: Vec<String> = env
        .log()
        .lines()
        .filter(|l| l.contains(" hook["))
        .map(str::to_owned)
        .collect();
    assert!(hook_errors.is_empty(), "hook errors: {hook_errors:?}");
}

#[test]
fn prompts_run_at_once_send_one_full_block_and_lose_no_update() {
    let env = warm_project();
    for host in ["claude", "codex"] {
        let sid = format!("burst-{host}");
        let n = 8;
        let payloads: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                env.payload(
                    &sid,
                    "UserPromptSubmit",
                    json!({"prompt": format!("go on, step {i}")}),
                )
            })
            .collect();
        let outs = at_once(&env, host, &payloads);
        let full = outs
            .iter()
            .filter(|o| o.contains("<rolling-memory ") || o.contains("<rolling-memory>"))
            .count();
        assert_eq!(full, 1, "{host}: {outs:?}");
        // Nothing changed between them: the others send nothing.
        assert_eq!(outs.iter().filter(|o| !o.is_empty()).count(), 1, "{host}");
        // Every hook's update is in the state: none overwrote another's.
        let st = inject_state(&env, &sid);
        assert_eq!(st["inject"]["prompts"], n, "{host}: {st}");
        let spool = std::fs::read_to_string(env.state.join(format!("spool/{sid}.jsonl")))
            .unwrap_or_default();
        assert_eq!(spool.lines().count(), n, "{host}: {spool}");
    }
}

#[test]
fn a_hook_that_cannot_get_the_inject_lock_sends_nothing_and_still_queues_its_turn() {
    let env = warm_project();
    let sid = "held";
    std::fs::create_dir_all(env.state.join("spool")).unwrap_or_else(|e| panic!("{e}"));
    let lock_path = env.state.join(format!("spool/{sid}.inject.lock"));
    let f = std::fs::File::create(&lock_path).unwrap_or_else(|e| panic!("{e}"));
    f.lock().unwrap_or_else(|e| panic!("{e}"));
    let outs = at_once(
        &env,
        "claude",
        &[env.payload(sid, "UserPromptSubmit", json!({"prompt": "still here"}))],
    );
    assert_eq!(outs, [""], "injected without the lock");
    let spool =
        std::fs::read_to_string(env.state.join(format!("spool/{sid}.jsonl"))).unwrap_or_default();
    assert!(spool.contains("still here"), "the turn was lost: {spool}");
    assert!(
        env.log().contains("holds its inject state"),
        "{}",
        env.log()
    );
    drop(f);
    // Released: the next prompt injects the block.
    let outs = at_once(
        &env,
        "claude",
        &[env.payload(sid, "UserPromptSubmit", json!({"prompt": "and now"}))],
    );
    assert!(outs[0].contains("<rolling-memory"), "{outs:?}");
}
