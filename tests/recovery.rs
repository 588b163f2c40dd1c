//! Damaged hot state: read-only commands (`show`, `render`, `stats`,
//! `query`, `expand`) recover in memory, warn, and change nothing on disk;
//! writers (`doctor --repair`, the daemon, replay) repair, quarantine what
//! they drop, and report it (stderr, `repairs.jsonl`, `doctor`,
//! `stats --json`). Plus: everything under the state home is private.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{TestEnv, example, stderr, stdout, walk};

fn ok(o: &std::process::Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", stderr(o));
    stdout(o)
}

/// A replayed session with the given snapshot interval.
fn replayed(env: &TestEnv, session: &str, snapshot_every: u32) -> PathBuf {
    std::fs::create_dir_all(env.state()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        env.state().join("config.toml"),
        format!("[store]\nsnapshot_every = {snapshot_every}\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ex = example().display().to_string();
    ok(
        &env.run(&["replay", &ex, "--session", session, "--json"]),
        "replay",
    );
    env.state().join("sessions").join(session)
}

/// A replayed session turned into one that never snapshotted (as if it
/// crashed before its first snapshot): every entry is in `journal.jsonl`.
fn journal_only(env: &TestEnv, session: &str) -> PathBuf {
    let dir = replayed(env, session, 1000);
    std::fs::remove_file(dir.join("snapshot.json")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(dir.join("journal.prev.jsonl"), dir.join("journal.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walk(dir)
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap_or_default();
            (p, b)
        })
        .collect()
}

fn node_ids(env: &TestEnv, session: &str) -> (Vec<String>, String) {
    let o = env.run(&["show", "--json", "--session", session]);
    let out = ok(&o, "show");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let mut ids: Vec<String> = doc["nodes"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    ids.sort();
    (ids, stderr(&o))
}

/// Runs every read-only command; asserts none changed a byte of the session.
fn read_only_commands_change_nothing(env: &TestEnv, session: &str, dir: &Path) -> String {
    let before = files(dir);
    let mut err = String::new();
    for args in [
        vec!["show", "--session", session],
        vec!["show", "--json", "--session", session],
        vec!["render", "--session", session],
        vec!["stats", "--json"],
        vec!["stats", "--session", session],
        vec!["query", "Bento", "--session", session],
    ] {
        let o = env.run(&args);
        ok(&o, &format!("{args:?}"));
        err.push_str(&stderr(&o));
    }
    let after = files(dir);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "a read-only command created, renamed or removed a file"
    );
    for (p, b) in &before {
        assert!(
            after.get(p) == Some(b),
            "a read-only command rewrote {}",
            p.display()
        );
    }
    err
}

#[test]
fn hot_sessions_keep_a_previous_snapshot() {
    let env = TestEnv::new();
    let dir = replayed(&env, "prev", 4);
    for f in ["snapshot.json", "snapshot.prev.json", "journal.prev.jsonl"] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
}

#[test]
fn a_damaged_snapshot_is_rebuilt_from_the_previous_one_and_the_journals() {
    let env = TestEnv::new();
    let dir = replayed(&env, "snap", 4);
    let (baseline, err) = node_ids(&env, "snap");
    assert!(baseline.len() > 50, "{} nodes", baseline.len());
    assert!(!err.contains("damaged"), "{err}");
    // Truncate the snapshot to half its size.
    let snap = dir.join("snapshot.json");
    let bytes = std::fs::read(&snap).unwrap_or_default();
    std::fs::write(&snap, &bytes[..bytes.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
    let err = read_only_commands_change_nothing(&env, "snap", &dir);
    assert!(
        err.contains("damaged") && err.contains("snapshot.json"),
        "no warning: {err}"
    );
    let (ids, _) = node_ids(&env, "snap");
    assert_eq!(ids, baseline, "the rebuilt graph differs");
    // stats --json reports the damage per session.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&env.run(&["stats", "--json"]), "stats")).unwrap_or_default();
    let row = &stats["sessions"][0];
    assert!(!row["damage"].as_array().is_none_or(Vec::is_empty), "{row}");
    assert_eq!(row["lost"], false);
    // doctor reports it without repairing…
    let o = env.run(&["doctor", "--offline", "--no-embed"]);
    let out = ok(&o, "doctor");
    assert!(out.contains("1 damaged"), "{out}");
    assert_eq!(
        std::fs::read(&snap).unwrap_or_default().len(),
        bytes.len() / 2
    );
    // …and repairs it with --repair: the bad snapshot is kept aside.
    let out = ok(
        &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
        "doctor --repair",
    );
    assert!(out.contains("repaired: session snap"), "{out}");
    let aside: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("snapshot.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        std::fs::read(&aside[0]).unwrap_or_default(),
        &bytes[..bytes.len() / 2]
    );
    let (ids, err) = node_ids(&env, "snap");
    assert_eq!(ids, baseline);
    assert!(
        !err.contains("damaged"),
        "still damaged after repair: {err}"
    );
    // The repair is on record for doctor and stats.
    assert!(dir.join("repairs.jsonl").exists());
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&env.run(&["stats", "--json"]), "stats")).unwrap_or_default();
    assert_eq!(
        stats["sessions"][0]["repairs"].as_array().map(Vec::len),
        Some(1)
    );
    let out = ok(&env.run(&["doctor", "--offline", "--no-embed"]), "doctor");
    assert!(
        out.contains("0 damaged") && out.contains("1 repairs recorded"),
        "{out}"
    );
}

#[test]
fn a_flipped_byte_in_the_journal_loses_only_its_entry_and_only_a_writer_repairs() {
    let env = TestEnv::new();
    let dir = journal_only(&env, "flip");
    let (baseline, err) = node_ids(&env, "flip");
    assert!(baseline.len() > 50 && !err.contains("damaged"), "{err}");
    let journal = dir.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 10, "{} journal lines", lines.len());
    // Flip one byte in the second-to-last entry.
    let n = lines.len() - 2;
    let mut damaged: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let pos = damaged[n].len() / 2;
    let mut b = damaged[n].clone().into_bytes();
    b[pos] = if b[pos] == b'x' { b'y' } else { b'x' };
    damaged[n] = String::from_utf8_lossy(&b).into_owned();
    let damaged_text = damaged.join("\n") + "\n";
    std::fs::write(&journal, &damaged_text).unwrap_or_else(|e| panic!("{e}"));
    let err = read_only_commands_change_nothing(&env, "flip", &dir);
    assert!(err.contains("fails its checksum"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap_or_default(),
        damaged_text,
        "a read-only command changed the journal"
    );
    // The writer repairs: the bad line is quarantined, the last entry kept.
    let out = ok(
        &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
        "doctor --repair",
    );
    assert!(out.contains("repaired: session flip"), "{out}");
    let q: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".quarantine-"))
        .collect();
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(
        std::fs::read_to_string(&q[0])
            .unwrap_or_default()
            .trim_end(),
        damaged[n]
    );
    let kept = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        kept.contains(lines[lines.len() - 1]),
        "the entry after the bad one was dropped"
    );
    let records = std::fs::read_to_string(dir.join("repairs.jsonl")).unwrap_or_default();
    assert!(records.contains("lost"), "{records}");
}

#[test]
fn a_journal_of_garbage_is_quarantined_not_emptied() {
    let env = TestEnv::new();
    let dir = journal_only(&env, "garbage");
    let journal = dir.join("journal.jsonl");
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&journal, &garbage).unwrap_or_else(|e| panic!("{e}"));
    let _ = read_only_commands_change_nothing(&env, "garbage", &dir);
    assert_eq!(std::fs::read(&journal).unwrap_or_default(), garbage);
    ok(
        &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
        "doctor --repair",
    );
    let q: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".quarantine-"))
        .collect();
    assert_eq!(q.len(), 1);
    assert_eq!(std::fs::read(&q[0]).unwrap_or_default(), garbage);
    // Lost entries are reported as lost, not silently dropped.
    let records = std::fs::read_to_string(dir.join("repairs.jsonl")).unwrap_or_default();
    assert!(records.contains("\"lost\":true"), "{records}");
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0)
}

#[test]
fn state_is_private_whatever_the_umask_and_doctor_narrows_it() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.state()).unwrap_or_else(|e| panic!("{e}"));
    let ex = example().display().to_string();
    let bin = env!("CARGO_BIN_EXE_rollgraph");
    for args in [
        format!("umask 000; exec '{bin}' replay '{ex}' --session perm --json"),
        format!("umask 000; exec '{bin}' reconcile --session perm --json"),
    ] {
        let o = std::process::Command::new("/bin/sh")
            .args(["-c", &args])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", env.home())
            .env("ROLLGRAPH_HOME", env.state())
            .env("ROLLGRAPH_NOW", "2026-11-02T12:30:00Z")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        ok(&o, &args);
    }
    let mut checked = 0;
    let mut stack = vec![env.state()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        if m.is_dir() {
            // The state home itself was made by the test.
            if p != env.state() {
                assert_eq!(mode(&p), 0o700, "{}", p.display());
            }
            for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(e.path());
            }
        } else if m.is_file() {
            assert_eq!(mode(&p) & 0o077, 0, "{} is {:o}", p.display(), mode(&p));
            checked += 1;
        }
    }
    assert!(checked > 5, "{checked} files");
    // A file opened up by hand is reported, then narrowed.
    let snap = env.state().join("sessions/perm/snapshot.json");
    std::fs::set_permissions(&snap, std::fs::Permissions::from_mode(0o644))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = ok(&env.run(&["doctor", "--offline", "--no-embed"]), "doctor");
    assert!(
        out.contains("readable by others") && out.contains("snapshot.json"),
        "{out}"
    );
    let out = ok(
        &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
        "doctor --repair",
    );
    assert!(out.contains("narrowed"), "{out}");
    assert_eq!(mode(&snap), 0o600);
}

/// Runs a foreground daemon until it has drained the spools and idled out.
fn run_daemon_once(env: &TestEnv) {
    let o = env.run(&["daemon", "--foreground", "--idle-timeout", "1"]);
    assert!(o.status.success(), "daemon: {}", stderr(&o));
}

#[test]
fn a_job_read_again_after_a_restart_is_not_counted_twice() {
    let env = TestEnv::new();
    let spool = env.state().join("spool");
    std::fs::create_dir_all(&spool).unwrap_or_else(|e| panic!("{e}"));
    let line = |i: u32| {
        serde_json::json!({"session": "twice", "host": "claude", "cwd": null,
            "transcript_path": null, "ts": format!("2026-11-02T12:00:0{i}.123456789Z"),
            "kind": "turn", "prompt": format!("Prompt {i}: let's go with Bento for email"),
            "injected_tokens": 0})
        .to_string()
            + "\n"
    };
    let jobs = format!("{}{}", line(1), line(2));
    std::fs::write(spool.join("twice.jsonl"), &jobs).unwrap_or_else(|e| panic!("{e}"));
    run_daemon_once(&env);
    let turns = || {
        let v: serde_json::Value = serde_json::from_slice(
            &std::fs::read(env.state().join("sessions/twice/state.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        v["stats"]["turns"].as_u64().unwrap_or(0)
    };
    assert_eq!(turns(), 2);
    // As if the daemon had been killed after applying both jobs but before
    // committing its spool offset: the same jobs are read again, plus a new one.
    let again = format!("{jobs}{}", line(3));
    std::fs::write(spool.join("twice.jsonl"), &again).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(spool.join("twice.off"), "0").unwrap_or_else(|e| panic!("{e}"));
    run_daemon_once(&env);
    assert_eq!(
        turns(),
        3,
        "a job applied before the restart was counted again"
    );
}

#[test]
fn a_job_the_daemon_died_on_twice_is_set_aside_with_its_reason() {
    let env = TestEnv::new();
    let spool = env.state().join("spool");
    std::fs::create_dir_all(&spool).unwrap_or_else(|e| panic!("{e}"));
    let job = serde_json::json!({"session": "stuck", "host": "claude", "cwd": null,
        "transcript_path": null, "ts": "2026-11-02T12:00:00Z",
        "kind": "turn", "prompt": "let's go with Bento", "injected_tokens": 0});
    let respool = || {
        std::fs::write(spool.join("stuck.jsonl"), format!("{job}\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(spool.join("stuck.off"), "0").unwrap_or_else(|e| panic!("{e}"));
    };
    respool();
    run_daemon_once(&env);
    assert!(
        !spool.join("stuck.inflight").exists(),
        "a finished job left its in-flight marker"
    );
    // The same job again: the daemon skips it and logs its id.
    respool();
    let o = env
        .cmd()
        .args(["daemon", "--foreground", "--idle-timeout", "1"])
        .env("ROLLGRAPH_LOG", "info")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = stderr(&o);
    let id = err
        .split("job ")
        .filter_map(|rest| rest.split_whitespace().next())
        .find(|w| w.len() == 16 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| panic!("no job id in the daemon's log: {err}"))
        .to_owned();
    // Two earlier daemons started it and died: its marker says 2 attempts.
    respool();
    std::fs::write(spool.join("stuck.inflight"), format!("{id} 2"))
        .unwrap_or_else(|e| panic!("{e}"));
    run_daemon_once(&env);
    let failed = std::fs::read_to_string(spool.join("stuck.failed")).unwrap_or_default();
    assert!(
        failed.contains("set aside") && failed.contains("Bento"),
        "{failed:?}"
    );
    let out = stdout(&env.run(&["doctor", "--offline", "--no-embed"]));
    assert!(out.contains("set aside: session stuck"), "{out}");
}

/// Drops the last line of a file (an acknowledged entry lost from outside:
/// a journal rolled back or truncated on a record boundary, so no torn line
/// gives it away).
fn drop_last_line(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines: Vec<&str> = text.lines().collect();
    let last = lines.pop().unwrap_or_default().to_owned();
    let kept: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, kept).unwrap_or_else(|e| panic!("{e}"));
    last
}

/// The session's state.json, parsed.
fn state_json(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap_or_default())
        .unwrap_or_default()
}

/// A lost trailing entry that is not a probe (so the probe count cannot
/// tell) is seen read-only, reported as lost, repaired by a writer and on
/// record; the next write neither re-reports it nor leaves a gap.
fn lost_trailing_entry_is_reported(env: &TestEnv, session: &str, dir: &Path, kind: &str) {
    let err = read_only_commands_change_nothing(env, session, dir);
    assert!(
        err.contains("damaged") && err.contains("are lost"),
        "the lost {kind} entry went unreported: {err}"
    );
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&env.run(&["stats", "--json"]), "stats")).unwrap_or_default();
    let row = &stats["sessions"][0];
    assert_eq!(row["lost"], true, "{row}");
    let out = ok(&env.run(&["doctor", "--offline", "--no-embed"]), "doctor");
    assert!(out.contains("1 damaged"), "{out}");
    let out = ok(
        &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
        "doctor --repair",
    );
    assert!(
        out.contains(&format!("repaired: session {session}")),
        "{out}"
    );
    let records = std::fs::read_to_string(dir.join("repairs.jsonl")).unwrap_or_default();
    assert!(
        records.contains("\"lost\":true") && records.contains("lost journal entries"),
        "{records}"
    );
    assert_eq!(state_json(dir)["lost_entries"], 1, "{}", state_json(dir));
    let (_, err) = node_ids(env, session);
    assert!(
        !err.contains("damaged"),
        "still damaged after repair: {err}"
    );
}

#[test]
fn a_lost_trailing_touch_entry_is_reported_and_repaired() {
    use rollgraph_engine::session::Session;
    use rollgraph_engine::store::Home;
    let env = TestEnv::new();
    let dir = replayed(&env, "touch", 1000);
    let home = Home::at(env.state());
    let now = rollgraph_engine::clock::parse_time("2026-11-02T12:30:00Z").unwrap_or_default();
    let before = state_json(&dir)["journal_seq"].as_u64().unwrap_or(0);
    assert!(before > 0, "state.json records no journal sequence");
    {
        let mut s = Session::open(&home, "touch", rollgraph_engine::Config::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<_> = s
            .graph
            .nodes_unordered()
            .take(2)
            .map(|n| n.id.clone())
            .collect();
        s.touch(&ids, 0.5, now).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(state_json(&dir)["journal_seq"].as_u64(), Some(before + 1));
    let probes = state_json(&dir)["stats"]["probes"].clone();
    let lost = drop_last_line(&dir.join("journal.jsonl"));
    assert!(lost.contains("\"touch\""), "{lost}");
    lost_trailing_entry_is_reported(&env, "touch", &dir, "touch");
    // The probe count did not change: only the journal sequence could tell.
    assert_eq!(state_json(&dir)["stats"]["probes"], probes);
    // The journal continues from the repaired end: the next entry reuses
    // the lost one's sequence and nothing is reported again.
    {
        let mut s = Session::open(&home, "touch", rollgraph_engine::Config::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.load.damaged(), "{}", s.load.summary());
        let ids: Vec<_> = s
            .graph
            .nodes_unordered()
            .take(1)
            .map(|n| n.id.clone())
            .collect();
        s.touch(&ids, 0.5, now).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(state_json(&dir)["journal_seq"].as_u64(), Some(before + 1));
    let (_, err) = node_ids(&env, "touch");
    assert!(!err.contains("damaged"), "{err}");
}

#[test]
fn a_lost_trailing_reset_entry_is_reported_and_repaired() {
    use rollgraph_engine::session::Session;
    use rollgraph_engine::store::Home;
    let env = TestEnv::new();
    let dir = replayed(&env, "reset", 1000);
    let home = Home::at(env.state());
    let now = rollgraph_engine::clock::parse_time("2026-11-02T12:30:00Z").unwrap_or_default();
    {
        let mut s = Session::open(&home, "reset", rollgraph_engine::Config::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut doc = s.graph.to_doc();
        let keep: Vec<String> = doc.nodes.keys().take(3).cloned().collect();
        doc.nodes.retain(|k, _| keep.contains(k));
        doc.edges.clear();
        s.reset(doc, now).unwrap_or_else(|e| panic!("{e}"));
    }
    // A reset snapshots at once: lose that snapshot and the reset's line at
    // the end of the (rotated) previous journal, and the older snapshot
    // plus the journals rebuild a graph from before the reset.
    std::fs::remove_file(dir.join("snapshot.json")).unwrap_or_else(|e| panic!("{e}"));
    let lost = drop_last_line(&dir.join("journal.prev.jsonl"));
    assert!(lost.contains("\"reset\""), "{lost}");
    lost_trailing_entry_is_reported(&env, "reset", &dir, "reset");
}

fn aside_copies(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walk(dir)
        .into_iter()
        .filter(|p| {
            let n = p.to_string_lossy();
            n.contains(".quarantine-") || n.contains(".corrupt-")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn quarantine_copies_are_bounded_oldest_out() {
    let env = TestEnv::new();
    let dir = journal_only(&env, "bounded");
    std::fs::write(
        env.state().join("config.toml"),
        "[store]\nsnapshot_every = 1000\nquarantine_keep = 3\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let journal = dir.join("journal.jsonl");
    // Five separate damages, each repaired by a writer: five quarantine
    // copies made, at most three kept, the newest among them.
    for i in 0..5 {
        let mut text = std::fs::read(&journal).unwrap_or_default();
        text.extend(format!("damaged line {i}\n").as_bytes());
        std::fs::write(&journal, text).unwrap_or_else(|e| panic!("{e}"));
        ok(
            &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
            "doctor --repair",
        );
        assert!(aside_copies(&dir).len() <= 3, "{:?}", aside_copies(&dir));
    }
    let kept: Vec<String> = aside_copies(&dir)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert!(
        kept.iter().any(|k| k.contains("damaged line 4")),
        "{kept:?}"
    );
    assert!(
        !kept.iter().any(|k| k.contains("damaged line 0")),
        "{kept:?}"
    );
    let records = std::fs::read_to_string(dir.join("repairs.jsonl")).unwrap_or_default();
    assert!(
        records.contains("older set-aside copies removed"),
        "{records}"
    );
    // Copies beyond the limit (left by an older version, or a lowered
    // limit): read-only commands leave them, doctor reports them, and
    // doctor --repair removes the oldest.
    for i in 0..4 {
        std::fs::write(dir.join(format!("snapshot.json.corrupt-{i}")), b"{")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let before = files(&dir);
    for args in [
        vec!["show", "--json", "--session", "bounded"],
        vec!["render", "--session", "bounded"],
        vec!["stats", "--json"],
    ] {
        ok(&env.run(&args), &format!("{args:?}"));
    }
    assert!(
        files(&dir) == before,
        "a read-only command changed the session"
    );
    assert_eq!(aside_copies(&dir).len(), 7);
    let out = ok(&env.run(&["doctor", "--offline", "--no-embed"]), "doctor");
    assert!(out.contains("over the retention limit"), "{out}");
    assert_eq!(
        aside_copies(&dir).len(),
        7,
        "a read-only doctor removed copies"
    );
    let out = ok(
        &env.run(&["doctor", "--offline", "--no-embed", "--repair"]),
        "doctor --repair",
    );
    assert!(out.contains("older set-aside copies removed"), "{out}");
    assert_eq!(aside_copies(&dir).len(), 3, "{:?}", aside_copies(&dir));
    let out = ok(&env.run(&["doctor", "--offline", "--no-embed"]), "doctor");
    assert!(!out.contains("over the retention limit"), "{out}");
    // A limit that makes no sense is refused with its file and key.
    std::fs::write(
        env.state().join("config.toml"),
        "[store]\nquarantine_keep = 0\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = env.run(&["stats", "--json"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("config.toml:store.quarantine_keep = 0"),
        "{}",
        stderr(&o)
    );
}
