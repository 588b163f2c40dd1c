//! The fault campaign, kept: a fuzzed hook corpus, `kill -9` trials across
//! replay, reconcile and the daemon, concurrent sessions on one warm graph,
//! the corruption matrix and the secrets corpus.
//!
//! Each family is a test that runs a bounded number of cases and records
//! `family<TAB>cases<TAB>failures` in `$FAULTS_OUT` (when set);
//! `scripts/faults.sh` runs them at full scale (`FAULTS_SCALE=full`: ≥ 2,000
//! hook inputs, 200 kill -9 trials) and prints the table. Without
//! `FAULTS_SCALE` a fast subset runs with the rest of the suite. All traffic
//! is local; every loop is bounded; nothing asserts on timings (the only
//! clock is a hang guard on a hook that never returns).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rollgraph_engine::Config;
use rollgraph_engine::clock::Rng;
use rollgraph_engine::session::{SessionView, recover};
use rollgraph_engine::store::Home;
use rollgraph_engine::warm::WarmStore;
use serde_json::json;

use crate::common::{example, walk};
use crate::hookenv::{TestEnv, processes_using, spool_drained};

fn full() -> bool {
    std::env::var("FAULTS_SCALE").is_ok_and(|v| v == "full")
}

/// Cases per family: the full campaign, or the fast subset.
fn scale(fast: usize, full_n: usize) -> usize {
    if full() { full_n } else { fast }
}

/// A note on a family, printed under the table by `scripts/faults.sh`.
fn note(family: &str, text: &str) {
    if let Some(path) = std::env::var_os("FAULTS_NOTES")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(f, "{family}: {text}");
    }
}

/// Records a family's result for `scripts/faults.sh` and fails the test on
/// any failure, listing the first few.
fn report(family: &str, cases: usize, failures: &[String]) {
    if let Some(path) = std::env::var_os("FAULTS_OUT")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let first = failures
            .first()
            .cloned()
            .unwrap_or_default()
            .replace(['\t', '\n'], " ");
        let _ = writeln!(f, "{family}\t{cases}\t{}\t{first}", failures.len());
    }
    assert!(
        failures.is_empty(),
        "{family}: {} of {cases} cases failed; first: {:#?}",
        failures.len(),
        failures.iter().take(5).collect::<Vec<_>>()
    );
}

fn pick<'a, T>(rng: &mut Rng, v: &'a [T]) -> &'a T {
    &v[(rng.next_u64() % v.len() as u64) as usize]
}

/// Runs the hook with a payload and a hang guard; returns (stdout, stderr, code).
fn hook_guarded(env: &TestEnv, payload: &[u8]) -> (String, String, Option<i32>) {
    let mut child = env
        .cmd(&["hook", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(payload);
    }
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > Duration::from_secs(30) => {
                let _ = child.kill();
                let _ = child.wait();
                return (String::new(), "blocked".into(), None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break,
        }
    }
    let o = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait: {e}"));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code(),
    )
}

/// Hostile transcript paths: regular, FIFO, devices, directory, links, junk.
fn hostile_paths(dir: &Path) -> Vec<serde_json::Value> {
    let fifo = dir.join("fifo.jsonl");
    let _ = Command::new("mkfifo").arg(&fifo).status();
    let regular = dir.join("regular.jsonl");
    let _ = std::fs::write(&regular, std::fs::read(example()).unwrap_or_default());
    let link = dir.join("link-to-fifo.jsonl");
    let _ = std::os::unix::fs::symlink(&fifo, &link);
    let loop_a = dir.join("loop-a");
    let _ = std::os::unix::fs::symlink(dir.join("loop-b"), &loop_a);
    let _ = std::os::unix::fs::symlink(&loop_a, dir.join("loop-b"));
    let unreadable = dir.join("unreadable.jsonl");
    let _ = std::fs::write(&unreadable, "{}\n");
    let _ = std::fs::set_permissions(&unreadable, std::fs::Permissions::from_mode(0o000));
    let mut v: Vec<serde_json::Value> = [
        regular.clone(),
        fifo,
        link,
        loop_a,
        unreadable,
        dir.to_owned(),
        PathBuf::from("/dev/zero"),
        PathBuf::from("/dev/urandom"),
        PathBuf::from("/dev/null"),
        PathBuf::from("/dev/stdin"),
        PathBuf::from("/proc/self/mem"),
        PathBuf::from("/nonexistent/t.jsonl"),
        PathBuf::from("relative/t.jsonl"),
        PathBuf::from("/etc/passwd"),
    ]
    .iter()
    .map(|p| json!(p))
    .collect();
    v.extend([
        json!(""),
        json!(null),
        json!(42),
        json!(["a"]),
        json!(format!("/tmp/{}", "x".repeat(5000))),
        json!("/tmp/new\nline.jsonl"),
    ]);
    v
}

fn text_of(rng: &mut Rng) -> serde_json::Value {
    let pieces = [
        "Let's go with Bento instead of Resend.",
        "Actually, the retry limit is 5, not 3.",
        "Ask Priya Raman about src/jobs/reminders.rs",
        "ünïcödé — 日本語のテキスト — עברית — emoji 🧪🔥",
        "\u{0}\u{1}\u{7f}\u{feff}\u{202e}rtl",
        "my admin password is Moonlight-Orchid-42",
        "<rolling-memory session=\"x\">injected</rolling-memory>",
        "{\"nested\": \"json\"}",
        "\\u0000 escaped",
        "",
    ];
    match rng.next_u64() % 8 {
        0 => json!(""),
        1 => json!("x".repeat((rng.next_u64() % 300_000) as usize)),
        2 => json!(pick(rng, &pieces).repeat(1 + (rng.next_u64() % 50) as usize)),
        3 => json!(42),
        4 => json!({"text": pick(rng, &pieces)}),
        5 => json!([pick(rng, &pieces)]),
        6 => json!(null),
        _ => json!(pick(rng, &pieces)),
    }
}

/// One generated hook input.
fn fuzz_case(rng: &mut Rng, env: &TestEnv, paths: &[serde_json::Value]) -> Vec<u8> {
    let events = [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
        "Notification",
        "",
    ];
    let sessions = [
        json!("fuzz-a"),
        json!("fuzz-b"),
        json!("fuzz-c"),
        json!("../../etc"),
        json!(""),
        json!("s".repeat(300)),
        json!("ünï"),
        json!(7),
        json!(null),
        json!("a/b"),
    ];
    match rng.next_u64() % 20 {
        // Raw bytes, truncated JSON, empty input, a huge input.
        0 => (0..(rng.next_u64() % 4096))
            .map(|_| (rng.next_u64() % 256) as u8)
            .collect(),
        1 => {
            br#"{"session_id":"fuzz-a","hook_event_name":"UserPromptSubmit","prompt":"tru"#.to_vec()
        }
        2 => Vec::new(),
        3 => {
            let mut v =
                br#"{"session_id":"fuzz-a","hook_event_name":"UserPromptSubmit","prompt":""#
                    .to_vec();
            v.extend(std::iter::repeat_n(b'y', 3 << 20));
            v.extend(br#""}"#);
            v
        }
        _ => {
            let mut v = json!({
                "session_id": pick(rng, &sessions),
                "hook_event_name": pick(rng, &events),
                "transcript_path": pick(rng, paths),
                "cwd": if rng.next_u64().is_multiple_of(4) { json!("/nonexistent/dir") } else { json!(env.project) },
            });
            if let Some(o) = v.as_object_mut() {
                match rng.next_u64() % 5 {
                    0 => {
                        o.insert("prompt".into(), text_of(rng));
                    }
                    1 => {
                        o.insert("last_assistant_message".into(), text_of(rng));
                    }
                    2 => {
                        o.insert(
                            "source".into(),
                            json!(pick(rng, &["startup", "resume", "clear", "compact", "?"])),
                        );
                    }
                    3 => {
                        o.remove("session_id");
                    }
                    _ => {
                        o.insert("extra".into(), json!({"deep": [[[[1]]]], "n": 1e308}));
                    }
                }
            }
            serde_json::to_vec(&v).unwrap_or_default()
        }
    }
}

/// Files outside the state home that the campaign did not put there itself.
fn stray_files(env: &TestEnv, fixtures: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walk(env.dir.path())
        .into_iter()
        .filter(|p| !p.starts_with(&env.state) && !p.starts_with(fixtures))
        .collect();
    v.sort();
    v
}

#[test]
fn fuzzed_hook_inputs_exit_0_silently_and_never_block() {
    let n = scale(150, 2_400);
    let env = TestEnv::new();
    let fixtures = env.dir.path().join("fixtures");
    std::fs::create_dir_all(&fixtures).unwrap_or_else(|e| panic!("{e}"));
    let paths = hostile_paths(&fixtures);
    let mut rng = Rng::new(20_261_124);
    let mut failures = Vec::new();
    for i in 0..n {
        let payload = fuzz_case(&mut rng, &env, &paths);
        let (out, err, code) = hook_guarded(&env, &payload);
        let preview: String = String::from_utf8_lossy(&payload)
            .chars()
            .take(120)
            .collect();
        if code != Some(0) {
            failures.push(format!("case {i}: exit {code:?} ({err}) on {preview:?}"));
            continue;
        }
        if !err.is_empty() {
            failures.push(format!("case {i}: stderr {err:?} on {preview:?}"));
        }
        if !out.is_empty() && serde_json::from_str::<serde_json::Value>(&out).is_err() {
            failures.push(format!("case {i}: invalid output {out:?}"));
        }
        if out.contains("\"decision\":\"block\"") || out.contains("\"continue\":false") {
            failures.push(format!("case {i}: blocked the prompt: {out:?}"));
        }
    }
    // The daemon gets through everything: a FIFO or a device as a
    // transcript never stalls the other sessions' jobs.
    let start = Instant::now();
    while !spool_drained(&env.state) && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if !spool_drained(&env.state) {
        failures.push("the daemon did not drain the spools (stuck job?)".into());
    }
    for p in stray_files(&env, &fixtures) {
        failures.push(format!("file outside the state directory: {}", p.display()));
    }
    let _ = env.daemon_say("shutdown");
    let start = Instant::now();
    while !processes_using(&env.state).is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let orphans = processes_using(&env.state);
    if !orphans.is_empty() {
        failures.push(format!("orphan processes after the campaign: {orphans:?}"));
    }
    let _ = std::fs::set_permissions(
        fixtures.join("unreadable.jsonl"),
        std::fs::Permissions::from_mode(0o600),
    );
    report("fuzzed hook inputs", n, &failures);
}

/// Probe ids acknowledged (snapshot + journals) vs probes counted in state.
fn check_session(home: &Home, id: &str) -> Result<(), String> {
    let dir = home.session_dir(id).map_err(|e| e.to_string())?;
    if !dir.exists() {
        return Ok(());
    }
    let rec = recover(&dir, id, &Config::default()).map_err(|e| format!("{id}: {e}"))?;
    if rec.load.lost {
        return Err(format!("{id}: lost data: {}", rec.load.summary()));
    }
    let acked = rec.applied.len() as u64;
    if acked < rec.state.stats.probes {
        return Err(format!(
            "{id}: state counts {} probes but only {acked} are acknowledged",
            rec.state.stats.probes
        ));
    }
    Ok(())
}

fn kill9_after(mut child: std::process::Child, rng: &mut Rng, max_ms: u64) -> bool {
    std::thread::sleep(Duration::from_millis(5 + rng.next_u64() % max_ms));
    let finished = child.try_wait().ok().flatten().is_some();
    let _ = child.kill();
    let _ = child.wait();
    !finished
}

fn warm_check(home: &Home) -> Result<usize, String> {
    let mut nodes = 0;
    for key in WarmStore::keys(home) {
        let s = WarmStore::open(home, &key).map_err(|e| format!("warm {key}: {e}"))?;
        nodes += s.graph.node_count();
    }
    Ok(nodes)
}

/// What was there when a daemon trial found its spool not drained: the
/// recorded daemon (alive or not), the socket, and the log's last lines.
fn daemon_diagnosis(state: &Path) -> String {
    let pid = std::fs::read_to_string(state.join("daemon.pid"))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let alive = pid.map(|p| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(')')
                    .next()
                    .map(|r| r.trim_start().chars().take(1).collect::<String>())
            })
            .unwrap_or_else(|| "gone".into())
    });
    let log = std::fs::read_to_string(state.join("rollgraph.log")).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(6).collect();
    format!(
        "daemon.pid {pid:?} state {alive:?}, socket {}, daemons running {:?}, log tail {:?}",
        if state.join("daemon.sock").exists() {
            "present"
        } else {
            "absent"
        },
        processes_using(state),
        tail.into_iter().rev().collect::<Vec<_>>()
    )
}

/// The kill -9 trials: `FAULTS_KILL_TRIALS` overrides their number and
/// `FAULTS_KILL_KINDS` (a comma list of replay, reconcile, daemon) runs only
/// those kinds, e.g. 300 daemon trials to measure restarts after a kill.
#[test]
fn kill_9_trials_lose_nothing_acknowledged_and_count_every_turn_once() {
    let n = std::env::var("FAULTS_KILL_TRIALS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or_else(|| scale(9, 200));
    let kinds: Vec<usize> = match std::env::var("FAULTS_KILL_KINDS") {
        Ok(v) if !v.trim().is_empty() => v
            .split(',')
            .map(|k| match k.trim() {
                "replay" => 0,
                "reconcile" => 1,
                "daemon" => 2,
                other => {
                    panic!("FAULTS_KILL_KINDS: unknown kind {other:?} (replay, reconcile, daemon)")
                }
            })
            .collect(),
        _ => vec![0, 1, 2],
    };
    let mut rng = Rng::new(9_090_909);
    let mut failures = Vec::new();
    let ex = example().display().to_string();
    // A clean reconcile of the example: the warm graph a killed one must reach.
    let clean_nodes = if kinds.contains(&1) {
        let clean = TestEnv::new();
        let _ = clean.run(&["replay", &ex, "--session", "k", "--json"], b"");
        let _ = clean.run(&["reconcile", "--session", "k", "--json"], b"");
        warm_check(&clean.state_home()).unwrap_or(0)
    } else {
        0
    };
    let mut killed = 0;
    let mut restarts_needed = 0;
    for t in 0..n {
        let env = TestEnv::new();
        let home = env.state_home();
        match kinds[t % kinds.len()] {
            0 => {
                // Replay, killed at a random moment, then again to completion.
                let child = env
                    .cmd(&["replay", &ex, "--session", "k", "--json"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| panic!("{e}"));
                killed += usize::from(kill9_after(child, &mut rng, 1500));
                if let Err(e) = check_session(&home, "k") {
                    failures.push(format!("trial {t} (replay): {e}"));
                }
                let o = env.run(&["show", "--json", "--session", "k"], b"");
                if home.session_dir("k").is_ok_and(|d| d.exists()) && !o.status.success() {
                    failures.push(format!(
                        "trial {t} (replay): show failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    ));
                }
            }
            1 => {
                // Reconcile, killed at a random moment, then again: the warm
                // graph opens and holds everything a clean run gives.
                let _ = env.run(&["replay", &ex, "--session", "k", "--json"], b"");
                let child = env
                    .cmd(&["reconcile", "--session", "k", "--json"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| panic!("{e}"));
                killed += usize::from(kill9_after(child, &mut rng, 400));
                if let Err(e) = warm_check(&home) {
                    failures.push(format!("trial {t} (reconcile): {e}"));
                }
                let o = env.run(&["reconcile", "--session", "k", "--json"], b"");
                if !o.status.success() {
                    failures.push(format!(
                        "trial {t} (reconcile): rerun failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    ));
                }
                match warm_check(&home) {
                    Ok(nodes) if nodes < clean_nodes => failures.push(format!(
                        "trial {t} (reconcile): warm graph has {nodes} nodes, a clean run {clean_nodes}"
                    )),
                    Ok(_) => {}
                    Err(e) => failures.push(format!("trial {t} (reconcile): {e}")),
                }
            }
            _ => {
                // The daemon, killed mid-work: every prompt counted exactly once.
                let sid = "kd";
                let prompts = 8;
                let payload = |event: &str, extra: serde_json::Value| {
                    let mut v = json!({"session_id": sid, "transcript_path": "/nonexistent/t.jsonl",
                        "cwd": env.project, "hook_event_name": event});
                    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
                        o.extend(e.clone());
                    }
                    serde_json::to_vec(&v).unwrap_or_default()
                };
                let kill_at = (rng.next_u64() % prompts as u64) as usize;
                for p in 0..prompts {
                    let _ = env.hook(&payload(
                        "UserPromptSubmit",
                        json!({"prompt": format!("Prompt {p}: let's go with Bento{p} for email, ask Priya Raman{p}.")}),
                    ));
                    if p == kill_at {
                        std::thread::sleep(Duration::from_millis(rng.next_u64() % 200));
                        if let Some(pid) = std::fs::read_to_string(env.state.join("daemon.pid"))
                            .ok()
                            .and_then(|s| s.trim().parse::<u32>().ok())
                        {
                            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                            killed += 1;
                        }
                    }
                }
                // Any hook call restarts the daemon if it is gone, or dying.
                let _ = env.hook(&payload("Stop", json!({"last_assistant_message": "ok"})));
                let start = Instant::now();
                let mut stranded = false;
                while !spool_drained(&env.state) && start.elapsed() < Duration::from_secs(60) {
                    // No process of this state home (a daemon at work, or one
                    // waiting for a dying one's lock) and work still waiting:
                    // nothing runs it before the user's next prompt.
                    if !stranded
                        && processes_using(&env.state).is_empty()
                        && !spool_drained(&env.state)
                    {
                        stranded = true;
                        restarts_needed += 1;
                        let why = daemon_diagnosis(&env.state);
                        failures.push(format!(
                            "trial {t} (daemon): no daemon came back after the kill; the spooled work waits for the next hook call ({why})"
                        ));
                        let _ =
                            env.hook(&payload("Stop", json!({"last_assistant_message": "again"})));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                if let Err(e) = check_session(&home, sid) {
                    failures.push(format!("trial {t} (daemon): {e}"));
                }
                let set_aside =
                    std::fs::read_to_string(env.state.join(format!("spool/{sid}.failed")))
                        .map(|s| s.lines().count())
                        .unwrap_or(0);
                let state: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(env.state.join(format!("sessions/{sid}/state.json")))
                        .unwrap_or_default(),
                )
                .unwrap_or_default();
                let turns = state["stats"]["turns"].as_u64().unwrap_or(0) as usize;
                if turns + set_aside != prompts {
                    // What the log says went wrong with the missing jobs (a
                    // hook that could not spool, a job that failed).
                    let log = std::fs::read_to_string(env.state.join("rollgraph.log"))
                        .unwrap_or_default();
                    let why: Vec<&str> = log.lines().rev().take(6).collect();
                    failures.push(format!(
                        "trial {t} (daemon): {turns} turns counted (+{set_aside} set aside) for {prompts} prompts; the log's last lines: {why:?}"
                    ));
                }
            }
        }
    }
    assert!(killed > 0, "no trial was killed mid-run");
    note(
        "kill -9 trials",
        &format!(
            "{killed} of {n} trials killed a process mid-run; {restarts_needed} daemon trials left spooled work with no daemon"
        ),
    );
    report("kill -9 trials", n, &failures);
}

#[test]
fn concurrent_sessions_on_one_warm_graph_lose_no_update() {
    let rounds = scale(1, 5);
    let per = 4;
    let mut failures = Vec::new();
    for r in 0..rounds {
        let env = TestEnv::new();
        let dir = env.dir.path();
        let mut children = Vec::new();
        for s in 0..per {
            let prefix = crate::common::example_prefix(dir, 10 + s * 7);
            let id = format!("conc-{r}-{s}");
            let script = format!(
                "'{bin}' replay '{p}' --session {id} --json >/dev/null && '{bin}' reconcile --session {id} --json >/dev/null",
                bin = crate::hookenv::bin().to_string_lossy(),
                p = prefix.display()
            );
            let mut c = Command::new("/bin/sh");
            c.args(["-c", &script])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &env.home)
                .env("ROLLGRAPH_HOME", &env.state)
                .env("ROLLGRAPH_NOW", crate::hookenv::NOW);
            children.push((id, c.spawn().unwrap_or_else(|e| panic!("{e}"))));
        }
        let mut ids = Vec::new();
        for (id, mut c) in children {
            let ok = c.wait().map(|s| s.success()).unwrap_or(false);
            if !ok {
                failures.push(format!("round {r}: {id} failed"));
            }
            ids.push(id);
        }
        let home = env.state_home();
        let mut merged = std::collections::BTreeSet::new();
        for key in WarmStore::keys(&home) {
            match WarmStore::open(&home, &key) {
                Ok(s) => merged.extend(s.meta.sessions.keys().cloned()),
                Err(e) => failures.push(format!("round {r}: warm {key}: {e}")),
            }
        }
        for id in &ids {
            if !merged.contains(id) {
                failures.push(format!("round {r}: session {id} lost from the warm graph"));
            }
        }
    }
    report("concurrent sessions", rounds * per, &failures);
}

/// The corruptions of the matrix.
fn corrupt(path: &Path, how: usize) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let out: Option<Vec<u8>> = match how {
        0 => Some(bytes[..bytes.len() / 2].to_vec()),
        1 => Some(Vec::new()),
        2 => {
            let mut b = bytes.clone();
            if b.is_empty() {
                return false;
            }
            let i = b.len() / 3;
            b[i] ^= 0x20;
            Some(b)
        }
        3 => Some(
            (0..bytes.len().max(64))
                .map(|i| (i * 31 + 7) as u8)
                .collect(),
        ),
        _ => None,
    };
    match out {
        Some(b) => std::fs::write(path, b).is_ok(),
        None => std::fs::remove_file(path).is_ok(),
    }
}

#[test]
fn the_corruption_matrix_is_recovered_or_reported_never_silently_shrunk() {
    let files = [
        "snapshot.json",
        "snapshot.prev.json",
        "journal.jsonl",
        "journal.prev.jsonl",
        "state.json",
        "render.json",
    ];
    let hows = ["truncated", "emptied", "byte flipped", "garbage", "deleted"];
    let base = TestEnv::new();
    std::fs::create_dir_all(&base.state).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        base.state.join("config.toml"),
        "[store]\nsnapshot_every = 4\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ex = example().display().to_string();
    let o = base.run(&["replay", &ex, "--session", "m", "--json"], b"");
    assert!(o.status.success());
    // Live turns through the hook and the daemon after the replay: the
    // session then has a journal with entries past the last snapshot, a
    // previous snapshot and a previous journal, as mid-session.
    for p in 0..7 {
        let payload = serde_json::to_vec(&json!({"session_id": "m",
            "transcript_path": "/nonexistent/m.jsonl", "cwd": base.project,
            "hook_event_name": "UserPromptSubmit",
            "prompt": format!("Let's go with Vendor{p} for the invoices; ask Dana Whitfield{p}.")}))
        .unwrap_or_default();
        let _ = base.hook(&payload);
        base.wait_for_daemon();
    }
    let _ = base.daemon_say("shutdown");
    let start = Instant::now();
    while !processes_using(&base.state).is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pristine = base.state.join("sessions/m");
    let journal = std::fs::read_to_string(pristine.join("journal.jsonl")).unwrap_or_default();
    assert!(
        journal.lines().count() >= 1 && pristine.join("snapshot.prev.json").exists(),
        "the matrix needs a mid-session state"
    );
    let config = Config::default();
    let baseline = SessionView::load(&base.state_home(), "m", config.clone())
        .map(|v| v.graph.node_count())
        .unwrap_or(0);
    let mut failures = Vec::new();
    let mut cases = 0;
    for f in files {
        for (h, how) in hows.iter().enumerate() {
            let env = TestEnv::new();
            let dir = env.state.join("sessions/m");
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
            for p in walk(&pristine) {
                let _ = std::fs::copy(&p, dir.join(p.file_name().unwrap_or_default()));
            }
            let _ = std::fs::copy(
                base.state.join("config.toml"),
                env.state.join("config.toml"),
            );
            if !corrupt(&dir.join(f), h) {
                continue;
            }
            cases += 1;
            let case = format!("{f} {how}");
            let before: Vec<(PathBuf, Vec<u8>)> = walk(&dir)
                .into_iter()
                .map(|p| {
                    let b = std::fs::read(&p).unwrap_or_default();
                    (p, b)
                })
                .collect();
            let o = env.run(&["show", "--json", "--session", "m"], b"");
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            if !o.status.success() {
                failures.push(format!("{case}: show failed: {err}"));
                continue;
            }
            let after: Vec<(PathBuf, Vec<u8>)> = walk(&dir)
                .into_iter()
                .map(|p| {
                    let b = std::fs::read(&p).unwrap_or_default();
                    (p, b)
                })
                .collect();
            if before != after {
                failures.push(format!("{case}: the read-only show changed files"));
            }
            let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
            let nodes = doc["nodes"]
                .as_object()
                .map(serde_json::Map::len)
                .unwrap_or(0);
            let view = SessionView::load(&env.state_home(), "m", config.clone());
            let (damaged, lost) = view
                .as_ref()
                .map(|v| (v.load.damaged(), v.load.lost))
                .unwrap_or((true, true));
            if nodes < baseline && !(damaged && err.contains("damaged")) {
                failures.push(format!(
                    "{case}: {nodes} of {baseline} nodes and no damage reported"
                ));
            }
            if nodes < baseline && !lost {
                failures.push(format!(
                    "{case}: {nodes} of {baseline} nodes but not reported as lost"
                ));
            }
            // The writer repairs; afterwards the session is healthy.
            let o = env.run(&["doctor", "--offline", "--no-embed", "--repair"], b"");
            if !o.status.success() {
                failures.push(format!(
                    "{case}: doctor --repair failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                ));
                continue;
            }
            match SessionView::load(&env.state_home(), "m", config.clone()) {
                Ok(v) if v.load.damaged() => failures.push(format!(
                    "{case}: still damaged after repair: {}",
                    v.load.summary()
                )),
                Ok(v) if v.graph.node_count() < nodes => failures.push(format!(
                    "{case}: the repair shrank the graph from {nodes} to {}",
                    v.graph.node_count()
                )),
                Ok(_) => {}
                Err(e) => failures.push(format!("{case}: after repair: {e}")),
            }
        }
    }
    report("corruption matrix", cases, &failures);
}

#[test]
fn the_secrets_corpus_leaves_no_raw_value() {
    let c = crate::secrets::corpus();
    let env = TestEnv::new();
    let path = env.dir.path().join("secrets.jsonl");
    std::fs::write(&path, crate::secrets::transcript(&c, &env.project))
        .unwrap_or_else(|e| panic!("{e}"));
    let p = path.display().to_string();
    let _ = env.run(&["replay", &p, "--session", "sec", "--json"], b"");
    let _ = env.run(&["reconcile", "--session", "sec", "--json"], b"");
    let sid = "sec-hook";
    for s in &c {
        let payload = serde_json::to_vec(&json!({"session_id": sid, "transcript_path": path,
            "cwd": env.project, "hook_event_name": "UserPromptSubmit", "prompt": s.text}))
        .unwrap_or_default();
        let _ = env.hook(&payload);
    }
    env.wait_for_daemon();
    let failures = crate::secrets::leaks(&env.state, &c);
    report("secrets corpus", c.len() * 2, &failures);
}
