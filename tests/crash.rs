//! kill -9 a replay at random moments, then reload: the state always loads,
//! and every probe the session counted is in the journal or the snapshot.

use std::time::Duration;

use rollgraph_engine::clock::Rng;
use rollgraph_engine::session::SessionState;
use rollgraph_engine::store::{Entry, Journal, Snapshot, read_json};

use crate::common::{TestEnv, example, stderr, stdout};

const SESSION: &str = "crash-test";

fn acknowledged_probes(dir: &std::path::Path) -> usize {
    let snap: Snapshot = read_json(&dir.join("snapshot.json"))
        .ok()
        .flatten()
        .unwrap_or_default();
    let (_, entries, _) = Journal::open::<Entry>(&dir.join("journal.jsonl"), snap.seq)
        .unwrap_or_else(|e| panic!("journal: {e}"));
    let mut ids: std::collections::BTreeSet<String> = snap.applied.into_iter().collect();
    for (_, e) in entries {
        if let Entry::Cycle { probe_id, .. } = e {
            ids.insert(probe_id);
        }
    }
    ids.len()
}

#[test]
fn killed_replays_reload_without_losing_acknowledged_probes() {
    let mut rng = Rng::new(20261102);
    let env = TestEnv::new();
    let dir = env.state().join("sessions").join(SESSION);
    let mut killed_mid_run = 0;
    for round in 0..8 {
        let mut child = env
            .cmd()
            .args([
                "replay",
                &example().display().to_string(),
                "--session",
                SESSION,
                "--json",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        std::thread::sleep(Duration::from_millis(20 + rng.next_u64() % 400));
        let finished = child.try_wait().ok().flatten().is_some();
        let _ = child.kill();
        let _ = child.wait();
        if !finished {
            killed_mid_run += 1;
        }
        if !dir.exists() {
            continue;
        }
        // The state loads: `show` opens snapshot + journal and replays it.
        let o = env.run(&["show", "--json", "--session", SESSION]);
        assert!(
            o.status.success(),
            "round {round}: state failed to load: {}",
            stderr(&o)
        );
        let doc: serde_json::Value =
            serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(doc["nodes"].is_object());
        // state.json is written after the journal append: whatever it counts was acknowledged.
        if let Ok(Some(state)) = read_json::<SessionState>(&dir.join("state.json")) {
            let acked = acknowledged_probes(&dir);
            assert!(
                acked as u64 >= state.stats.probes,
                "round {round}: state counts {} probes but only {acked} are in the journal/snapshot",
                state.stats.probes
            );
        }
    }
    assert!(
        killed_mid_run > 0,
        "no replay was killed mid-run; the test proves nothing"
    );
    // After all that, a clean replay still works and reaches the same end state as a fresh one.
    let o = env.run(&[
        "replay",
        &example().display().to_string(),
        "--session",
        SESSION,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
