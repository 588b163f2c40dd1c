//! A hot session: the per-turn pipeline over one session's crash-safe state.
//!
//! [`Session::observe`] runs the gate on a turn and queues it;
//! [`Session::cycle`] runs a probe over the queued turns, validates and
//! journals its patch, applies it, decays around the focus, re-renders and
//! writes the render the hook injects. Replay, the daemon and tests all
//! drive this same type, so "the hook does X" and "replay does X" are one
//! code path.
//!
//! Files in the session directory: `snapshot.json` and `snapshot.prev.json`,
//! `journal.jsonl` and `journal.prev.jsonl` (the entries after each
//! snapshot), `state.json` (gate state, queued turns, counters, and the
//! sequence of the last journal entry written, so a lost trailing entry is
//! seen),
//! `render.json` (the last finished render), `terms.txt` (known names, for
//! the inline gate), `repairs.jsonl` (damage found and repaired) and `lock`.
//! Read-only commands use [`SessionView`], which recovers in memory and
//! never changes a file; repairs are a writer's act ([`Session::open_with`]).

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use json_patch::PatchOperation;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::decay::{self, DecayReport};
use crate::episodes::{self, Episode, Speaker};
use crate::gate::{self, GateDecision, GateInput, GateState};
use crate::graph::{Graph, GraphDoc, NodeId};
use crate::patch::{self, ApplyReport, PatchError, PatchRules};
use crate::probe::{Probe, ProbeInput, Usage};
use crate::render::{self, Render, RenderContext};
use crate::semantic::Semantic;
use crate::stats::Stats;
use crate::store::{
    Entry, FileLock, Home, Journal, LoadReport, Snapshot, StoreError, read_json, scan_journal,
    write_atomic, write_json,
};
use crate::transcript::Turn;

/// Most turns kept queued for the next probe (oldest dropped).
pub const MAX_PENDING: usize = 16;

/// Who created a session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A live host session through the hook.
    #[default]
    Hook,
    /// `rollgraph replay`.
    Replay,
}

/// The session's small mutable state, rewritten atomically after each change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// The session id.
    pub session: String,
    /// Who created it.
    pub origin: Origin,
    /// Last turn index observed.
    pub turn: u32,
    /// The gate's memory.
    pub gate: GateState,
    /// Turns since the last probe (redacted), waiting for it.
    pub pending: VecDeque<Turn>,
    /// The assistant's last reply, for the next turn's gate.
    pub last_reply: String,
    /// The newest prompt (redacted).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub last_prompt: String,
    /// The prompt a reply queued on its own answers: that prompt was probed
    /// before its reply came, and the next probe reads the reply with it
    /// ("how do I deploy?" and the command the reply gives).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reply_to: String,
    /// When the newest prompt was sent: the time of a reply that arrives
    /// after its prompt was probed (replays run long after the fact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_prompt_at: Option<DateTime<Utc>>,
    /// The focus of the last cycle.
    pub last_focus: Vec<NodeId>,
    /// The project directory.
    pub cwd: Option<String>,
    /// The host's transcript file.
    pub transcript: Option<String>,
    /// Probes run (also numbers probe ids).
    pub probe_seq: u64,
    /// Probes applied since the last reconciliation.
    pub unreconciled: u32,
    /// Whether the session ended cleanly (SessionEnd seen).
    pub ended: bool,
    /// Counters.
    pub stats: Stats,
    /// Probes counted in `stats` whose journal entries were lost to damage
    /// (recorded by the repair that found the loss, so it is reported once).
    #[serde(skip_serializing_if = "is_zero")]
    pub lost_probes: u64,
    /// The sequence of the last journal entry written when this state was
    /// saved (`state.json` is rewritten after every append, whatever the
    /// entry's kind). Snapshot and journals that end before it have lost
    /// acknowledged trailing entries; loading reports it. 0 in a state
    /// written before this was recorded (nothing to compare).
    #[serde(skip_serializing_if = "is_zero")]
    pub journal_seq: u64,
    /// Journal entries found lost to damage, in all (recorded by the repair
    /// that found the loss, so it is reported once).
    #[serde(skip_serializing_if = "is_zero")]
    pub lost_entries: u64,
    /// Ids of the spool jobs applied most recently (bounded): a job the
    /// daemon re-reads after being killed before committing its spool
    /// offset is recognised and not counted twice.
    #[serde(skip_serializing_if = "VecDeque::is_empty")]
    pub done_jobs: VecDeque<String>,
    /// The last episode-log sequence a reconcile copied to the warm store.
    #[serde(skip_serializing_if = "is_zero")]
    pub episodes_reconciled: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Most job ids remembered in [`SessionState::done_jobs`].
pub const DONE_JOBS_MEMORY: usize = 256;

impl SessionState {
    /// Records a job id as applied; `false` when it already was (skip it).
    pub fn mark_job(&mut self, id: &str) -> bool {
        if self.done_jobs.iter().any(|j| j == id) {
            return false;
        }
        self.done_jobs.push_back(id.to_owned());
        while self.done_jobs.len() > DONE_JOBS_MEMORY {
            self.done_jobs.pop_front();
        }
        true
    }
}

/// The last finished render, as the hook reads it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredRender {
    /// Session id.
    pub session: String,
    /// The turn it follows.
    pub turn: u32,
    /// When it was made.
    pub updated: Option<DateTime<Utc>>,
    /// Its token count.
    pub tokens: usize,
    /// The text.
    pub text: String,
    /// Expansion handles it shows.
    #[serde(default)]
    pub handles: Vec<String>,
    /// What it says, item by item, for update blocks ([`crate::inject`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<crate::inject::Item>,
    /// The labels of its focus, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus_labels: Vec<String>,
}

impl StoredRender {
    /// A render as the hook reads it, with its items.
    pub fn of(
        g: &Graph,
        r: &Render,
        session: &str,
        turn: u32,
        now: DateTime<Utc>,
        min_weight: f64,
    ) -> StoredRender {
        StoredRender {
            session: session.to_owned(),
            turn,
            updated: Some(now),
            tokens: r.tokens,
            text: r.text.clone(),
            handles: r.handles.clone(),
            items: crate::inject::items(g, r, min_weight),
            focus_labels: crate::inject::focus_labels(g, r),
        }
    }
}

/// What one probe cycle did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleOutcome {
    /// The probe id.
    pub probe_id: String,
    /// Which probe ran.
    pub source: String,
    /// Operations applied (0 when rejected).
    pub ops: usize,
    /// Why the patch was rejected, if it was.
    pub rejected: Option<String>,
    /// What the patch changed.
    pub applied: ApplyReport,
    /// What decay did.
    pub decay: DecayReport,
    /// The new render's size.
    pub render_tokens: usize,
    /// Proposed new nodes folded into existing near-duplicates: (proposed, existing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<(String, String)>,
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The probe failed and produced nothing.
    #[error("probe failed: {0}")]
    Probe(String),
}

/// An open hot session. Holds the session lock while alive.
pub struct Session {
    /// The state home.
    pub home: Home,
    /// The session directory.
    pub dir: PathBuf,
    /// Configuration in force.
    pub config: Config,
    /// The hot graph.
    pub graph: Graph,
    /// The small mutable state.
    pub state: SessionState,
    /// What loading found (snapshot, replayed entries, torn tail).
    pub load: LoadReport,
    /// The local embedding model and node vectors, when this process has them.
    pub semantic: Option<Semantic>,
    journal: Journal,
    applied: VecDeque<String>,
    since_snapshot: u32,
    _lock: FileLock,
}

/// Applies a journal entry to a graph: the one deterministic step shared by
/// the live path and replay. `ops` must already be valid for `graph`.
pub fn apply_entry(
    graph: &mut Graph,
    entry: &Entry,
    session: &str,
    rules: &PatchRules,
) -> Result<(ApplyReport, DecayReport), PatchError> {
    match entry {
        Entry::Cycle {
            ops,
            focus,
            now,
            decay: dcfg,
            turn,
            ..
        } => {
            let report = if ops.is_empty() {
                ApplyReport::default()
            } else {
                patch::apply(graph, ops, rules)?
            };
            let d = finish_cycle(graph, &report, focus, *now, *turn, session, dcfg);
            Ok((report, d))
        }
        Entry::Touch { ids, now, boost } => {
            for id in ids {
                if let Some(n) = graph.node_mut(id) {
                    n.weight = (n.weight + boost * (1.0 - n.weight)).clamp(0.0, 1.0);
                    n.last_activated = (*now).max(n.last_activated);
                }
            }
            Ok((ApplyReport::default(), DecayReport::default()))
        }
        Entry::Reset { doc } => {
            *graph = Graph::from_doc(doc.clone())?;
            Ok((ApplyReport::default(), DecayReport::default()))
        }
    }
}

/// After a cycle's patch: note provenance on what it touched, then decay
/// around the focus. Shared by the live path and journal replay.
fn finish_cycle(
    graph: &mut Graph,
    report: &ApplyReport,
    focus: &[NodeId],
    now: DateTime<Utc>,
    turn: u32,
    session: &str,
    dcfg: &crate::config::DecayConfig,
) -> DecayReport {
    for id in report.touched() {
        if let Some(n) = graph.node_mut(&id) {
            n.note_provenance(session, turn);
        }
    }
    decay::step(graph, focus, now, dcfg)
}

/// A hot session's state recovered from its files without changing them.
pub struct Recovered {
    /// The graph.
    pub graph: Graph,
    /// The small mutable state.
    pub state: SessionState,
    /// Probe ids applied (bounded).
    pub applied: VecDeque<String>,
    /// The last journal sequence seen (snapshot or entry).
    pub seq: u64,
    /// Entries replayed on top of the snapshot.
    pub since_snapshot: u32,
    /// What loading found.
    pub load: LoadReport,
    snapshot_bad: bool,
    state_bad: bool,
    missing_probes: u64,
    missing_entries: u64,
}

/// One recorded repair, a line of `repairs.jsonl` in the session directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepairRecord {
    /// When (wall clock).
    pub at: Option<DateTime<Utc>>,
    /// What was wrong.
    pub damage: Vec<String>,
    /// What was done.
    pub repairs: Vec<String>,
    /// Whether something acknowledged could not be rebuilt.
    pub lost: bool,
}

/// Most repair records kept per session.
const MAX_REPAIR_RECORDS: usize = 50;

/// The repairs recorded for a session directory, oldest first.
pub fn repair_records(dir: &Path) -> Vec<RepairRecord> {
    std::fs::read_to_string(dir.join("repairs.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn record_repair(dir: &Path, load: &LoadReport) -> Result<(), StoreError> {
    let mut records = repair_records(dir);
    records.push(RepairRecord {
        at: Some(Utc::now()),
        damage: load.damage.clone(),
        repairs: load.repairs.clone(),
        lost: load.lost,
    });
    let skip = records.len().saturating_sub(MAX_REPAIR_RECORDS);
    let mut text = String::new();
    for r in records.iter().skip(skip) {
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    write_atomic(&dir.join("repairs.jsonl"), text.as_bytes())
}

fn read_snapshot(path: &Path) -> Result<Option<(Snapshot, Graph)>, StoreError> {
    let Some(s) = read_json::<Snapshot>(path)? else {
        return Ok(None);
    };
    let g = Graph::from_doc(s.doc.clone()).map_err(|e| StoreError::Corrupt {
        path: path.to_owned(),
        reason: format!("invalid graph: {e}"),
    })?;
    Ok(Some((s, g)))
}

/// Applies an entry op by op, skipping the ones that no longer apply (after
/// a lost entry, later patches may address nodes it created). Returns how
/// many operations were skipped.
fn apply_entry_lenient(
    graph: &mut Graph,
    entry: &Entry,
    session: &str,
    rules: &PatchRules,
) -> usize {
    if apply_entry(graph, entry, session, rules).is_ok() {
        return 0;
    }
    let Entry::Cycle {
        ops,
        focus,
        now,
        decay: dcfg,
        turn,
        ..
    } = entry
    else {
        return 1;
    };
    let mut skipped = 0;
    let mut report = ApplyReport::default();
    for op in ops {
        match patch::apply(graph, std::slice::from_ref(op), rules) {
            Ok(r) => {
                report.added_nodes.extend(r.added_nodes);
                report.changed_nodes.extend(r.changed_nodes);
                report.removed_nodes.extend(r.removed_nodes);
                report.edges.extend(r.edges);
            }
            Err(_) => skipped += 1,
        }
    }
    let focus: Vec<NodeId> = focus
        .iter()
        .filter(|id| graph.contains(id))
        .cloned()
        .collect();
    finish_cycle(graph, &report, &focus, *now, *turn, session, dcfg);
    skipped
}

/// Recovers a session's graph and state from its files, in memory, never
/// changing a file: the newest readable snapshot (`snapshot.json`, else
/// `snapshot.prev.json`), then every valid journal entry after it from
/// `journal.prev.jsonl` and `journal.jsonl` (a line failing its checksum is
/// skipped, the entries after it kept). Everything wrong is described in
/// [`LoadReport::damage`]; [`LoadReport::lost`] says whether an
/// acknowledged change could not be rebuilt.
pub fn recover(dir: &Path, id: &str, config: &Config) -> Result<Recovered, StoreError> {
    let mut load = LoadReport::default();
    // The state first: it is written after each journal append, so what it
    // records was in the journal before this read of the journal began.
    let state_path = dir.join("state.json");
    let mut state_bad = false;
    let mut state: SessionState = match read_json(&state_path) {
        Ok(s) => s.unwrap_or_default(),
        Err(e) => {
            state_bad = true;
            load.damage.push(format!(
                "{e}; counters and queued turns start afresh (graph kept)"
            ));
            SessionState::default()
        }
    };
    state.session = id.to_owned();
    let snap_path = dir.join("snapshot.json");
    let prev_path = dir.join("snapshot.prev.json");
    let mut snapshot_bad = false;
    let current = match read_snapshot(&snap_path) {
        Ok(s) => s,
        Err(e) => {
            snapshot_bad = true;
            load.damage.push(e.to_string());
            None
        }
    };
    let (snapshot, mut graph, source) = match current {
        Some((s, g)) => (s, g, Some("snapshot.json")),
        None => match read_snapshot(&prev_path) {
            Ok(Some((s, g))) => (s, g, Some("snapshot.prev.json")),
            Ok(None) => (Snapshot::default(), Graph::default(), None),
            Err(e) => {
                if snapshot_bad {
                    load.damage.push(e.to_string());
                }
                (Snapshot::default(), Graph::default(), None)
            }
        },
    };
    if snapshot_bad {
        load.damage.push(match source {
            Some(src) => format!(
                "rebuilt from {src} (journal sequence {}) and the journals",
                snapshot.seq
            ),
            None => "rebuilt from the journals alone (no usable previous snapshot)".into(),
        });
    }
    load.snapshot_seq = snapshot.seq;
    load.snapshot_source = source.map(str::to_owned);
    let mut all: Vec<(u64, Entry)> = Vec::new();
    if source != Some("snapshot.json") {
        let prev = scan_journal::<Entry>(&dir.join("journal.prev.jsonl"))?;
        load.damage.extend(prev.damage);
        all.extend(prev.entries);
    }
    let cur = scan_journal::<Entry>(&dir.join("journal.jsonl"))?;
    load.damage.extend(cur.damage);
    all.extend(cur.entries);
    all.sort_by_key(|e| e.0);
    all.dedup_by_key(|e| e.0);
    let mut applied: VecDeque<String> = snapshot.applied.into_iter().collect();
    let rules = rules(config);
    let mut expected = snapshot.seq + 1;
    let mut seq = snapshot.seq;
    let mut replayed = 0u32;
    let mut after_gap = false;
    for (s, entry) in all.into_iter().filter(|e| e.0 > snapshot.seq) {
        if s > expected && !matches!(entry, Entry::Reset { .. }) {
            load.damage.push(format!(
                "journal entries {expected}..={} are missing: their changes are lost",
                s - 1
            ));
            load.lost = true;
            after_gap = true;
        }
        if let Entry::Cycle { probe_id, .. } = &entry {
            applied.push_back(probe_id.clone());
        }
        if after_gap {
            let skipped = apply_entry_lenient(&mut graph, &entry, id, &rules);
            if skipped > 0 {
                load.damage.push(format!(
                    "journal entry {s}: {skipped} operations no longer apply after the loss"
                ));
            }
        } else if let Err(e) = apply_entry(&mut graph, &entry, id, &rules) {
            load.damage
                .push(format!("journal entry {s} failed to replay: {e}"));
            load.lost = true;
        }
        expected = s + 1;
        seq = s;
        replayed += 1;
    }
    while applied.len() > crate::store::APPLIED_MEMORY {
        applied.pop_front();
    }
    load.replayed = replayed as usize;
    // Every probe the state counts was journaled before it was counted: a
    // count above what the snapshot and journals hold means entries were
    // lost (a journal emptied, truncated or deleted from outside).
    let acked = applied.len() as u64;
    let mut missing_probes = 0;
    if !state_bad && applied.len() < crate::store::APPLIED_MEMORY {
        let counted = state.stats.probes.saturating_sub(state.lost_probes);
        if counted > acked {
            missing_probes = counted - acked;
            load.damage.push(format!(
                "state.json counts {counted} probes but the snapshot and journals hold {acked}: {missing_probes} acknowledged changes are lost"
            ));
            load.lost = true;
        }
    }
    // Every entry, whatever its kind, was journaled before the state that
    // records its sequence was saved: snapshot and journals ending before
    // that sequence lost their last entries (a journal truncated, emptied
    // or rolled back from outside).
    let mut missing_entries = 0;
    if !state_bad && state.journal_seq > seq {
        missing_entries = state.journal_seq - seq;
        load.damage.push(format!(
            "state.json records journal entry {} as written but the snapshot and journals end at {seq}: the last {missing_entries} acknowledged entries ({}..={}) are lost",
            state.journal_seq,
            seq + 1,
            state.journal_seq
        ));
        load.lost = true;
    }
    Ok(Recovered {
        graph,
        state,
        applied,
        seq,
        since_snapshot: replayed,
        load,
        snapshot_bad,
        state_bad,
        missing_probes,
        missing_entries,
    })
}

/// Moves a damaged file aside to `<name>.corrupt-<unix seconds>` (a writer's act).
fn move_aside(path: &Path) -> Result<Option<PathBuf>, StoreError> {
    if !path.exists() {
        return Ok(None);
    }
    let secs = Utc::now().timestamp();
    let mut aside = PathBuf::from(format!("{}.corrupt-{secs}", path.display()));
    let mut n = 1;
    while aside.exists() {
        aside = PathBuf::from(format!("{}.corrupt-{secs}-{n}", path.display()));
        n += 1;
    }
    std::fs::rename(path, &aside).map_err(|error| StoreError::Io {
        action: "move aside",
        path: path.to_owned(),
        error,
    })?;
    Ok(Some(aside))
}

/// A read-only view of a stored session: recovered in memory, nothing on
/// disk changed (no repair, no lock file created, no rename or truncation).
pub struct SessionView {
    /// The session directory.
    pub dir: PathBuf,
    /// Configuration in force.
    pub config: Config,
    /// The graph.
    pub graph: Graph,
    /// The small mutable state.
    pub state: SessionState,
    /// What loading found.
    pub load: LoadReport,
}

impl SessionView {
    /// Loads a session read-only. Waits briefly for a writer to finish; when
    /// one keeps the lock, reads without it (re-reading if that read races
    /// a snapshot rotation).
    pub fn load(home: &Home, id: &str, config: Config) -> Result<SessionView, StoreError> {
        let dir = home.session_dir(id)?;
        let lock = match FileLock::acquire_existing(&dir.join("lock"), Duration::from_millis(500)) {
            Ok(l) => l,
            Err(StoreError::Locked(_)) => None,
            Err(e) => return Err(e),
        };
        let mut rec = recover(&dir, id, &config)?;
        if lock.is_none() {
            for _ in 0..3 {
                if !rec.load.damaged() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
                rec = recover(&dir, id, &config)?;
            }
        }
        drop(lock);
        Ok(SessionView {
            dir,
            config,
            graph: rec.graph,
            state: rec.state,
            load: rec.load,
        })
    }

    /// Renders the graph around the last focus.
    pub fn render(&self, now: DateTime<Utc>) -> Render {
        render_session(&self.graph, &self.state, &self.config, now)
    }
}

/// A session's state held under the session lock, its graph not loaded:
/// for a long-lived process that already holds what it needs of the graph
/// (a query answered from an index it kept) and only counts in the state.
pub struct LockedState {
    /// The state as `state.json` holds it.
    pub state: SessionState,
    path: PathBuf,
    _lock: FileLock,
}

impl LockedState {
    /// Takes the lock of an existing session, waiting up to `timeout`, and
    /// reads its state. `Ok(None)` when there is no such session or its
    /// state is missing or unreadable: open it as a [`Session`] then
    /// (which repairs, or refuses to).
    pub fn open(
        home: &Home,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<LockedState>, StoreError> {
        let dir = home.session_dir(id)?;
        if !dir.is_dir() {
            return Ok(None);
        }
        let lock = FileLock::acquire(&dir.join("lock"), timeout)?;
        let path = dir.join("state.json");
        let Ok(Some(mut state)) = read_json::<SessionState>(&path) else {
            return Ok(None);
        };
        state.session = id.to_owned();
        Ok(Some(LockedState {
            state,
            path,
            _lock: lock,
        }))
    }

    /// Writes the state back (as [`Session::save_state`] does).
    pub fn save(&self) -> Result<(), StoreError> {
        write_json(&self.path, &self.state)
    }
}

/// Renders a session's graph around its last focus.
pub fn render_session(
    graph: &Graph,
    state: &SessionState,
    config: &Config,
    now: DateTime<Utc>,
) -> Render {
    render::render(
        graph,
        &state.last_focus,
        &RenderContext {
            session: &state.session,
            turn: state.turn,
            now,
        },
        &config.render,
    )
}

impl Session {
    /// Opens (or creates) a session for writing, loading snapshot + journal
    /// and repairing any damage (see [`Session::open_with`]). Waits up to
    /// two seconds for the session lock.
    pub fn open(home: &Home, id: &str, config: Config) -> Result<Session, StoreError> {
        Session::open_with_timeout(home, id, config, Duration::from_secs(2))
    }

    /// Like [`Session::open`] with an explicit lock timeout.
    pub fn open_with_timeout(
        home: &Home,
        id: &str,
        config: Config,
        timeout: Duration,
    ) -> Result<Session, StoreError> {
        Session::open_with(home, id, config, timeout, true)
    }

    /// Opens a session for writing. With `repair`, damage found on loading is
    /// repaired at once and reported (log, `repairs.jsonl`, [`Session::load`]):
    /// a bad snapshot is moved aside to `snapshot.json.corrupt-<time>`, bad
    /// journal lines are copied to a quarantine file and dropped, and a
    /// fresh snapshot of the recovered graph is written. Without `repair`, a
    /// damaged session is refused with [`StoreError::NeedsRepair`] and left
    /// exactly as it was.
    pub fn open_with(
        home: &Home,
        id: &str,
        config: Config,
        timeout: Duration,
        repair: bool,
    ) -> Result<Session, StoreError> {
        let dir = home.session_dir(id)?;
        crate::store::create_private_dir(&dir)?;
        let lock = FileLock::acquire(&dir.join("lock"), timeout)?;
        let rec = recover(&dir, id, &config)?;
        let Recovered {
            graph,
            mut state,
            applied,
            seq,
            since_snapshot,
            mut load,
            snapshot_bad,
            state_bad,
            missing_probes,
            missing_entries,
        } = rec;
        let damaged = load.damaged();
        if damaged && !repair {
            return Err(StoreError::NeedsRepair {
                path: dir,
                reason: load.summary(),
            });
        }
        let aside_before = if damaged {
            crate::store::aside_copies(&dir)
        } else {
            Vec::new()
        };
        if damaged {
            if missing_probes > 0 {
                state.lost_probes += missing_probes;
                load.repairs.push(format!(
                    "{missing_probes} lost probes recorded in state.json (lost_probes)"
                ));
            }
            if missing_entries > 0 {
                state.lost_entries += missing_entries;
                load.repairs.push(format!(
                    "{missing_entries} lost journal entries recorded in state.json (lost_entries); the journal continues from entry {}",
                    seq + 1
                ));
            }
            if snapshot_bad && let Some(aside) = move_aside(&dir.join("snapshot.json"))? {
                load.repairs.push(format!(
                    "damaged snapshot moved aside to {}",
                    aside.display()
                ));
            }
            if state_bad && let Some(aside) = move_aside(&dir.join("state.json"))? {
                load.repairs
                    .push(format!("damaged state moved aside to {}", aside.display()));
            }
            for name in ["journal.prev.jsonl", "journal.jsonl"] {
                if let Some(r) = crate::store::repair_journal::<Entry>(&dir.join(name))? {
                    load.repairs.push(r);
                }
            }
        }
        let (mut journal, _, _) = Journal::open::<Entry>(&dir.join("journal.jsonl"), seq)?;
        journal.seq = journal.seq.max(seq);
        // After a repair the state records where the journal now ends; a
        // state saved before its last entry was written (a crash between
        // the two) catches up, so that entry's loss would be seen too.
        let behind = state.journal_seq < journal.seq;
        state.journal_seq = journal.seq;
        let mut session = Session {
            home: home.clone(),
            dir,
            config,
            graph,
            state,
            load,
            semantic: None,
            journal,
            applied,
            since_snapshot,
            _lock: lock,
        };
        if damaged {
            // A fresh snapshot of what was recovered, without rotation: the
            // previous snapshot and journals stay a valid chain.
            session.write_snapshot_file()?;
            session.load.repairs.push(format!(
                "fresh snapshot written at journal sequence {}",
                session.journal.seq
            ));
            if state_bad || missing_probes > 0 || missing_entries > 0 || behind {
                session.save_state()?;
            }
            // Bounded set-aside copies: the oldest go, never the ones just made.
            let limits = session.config.store.aside_limits();
            let made = crate::store::new_aside_copies(&session.dir, &aside_before);
            let removed = crate::store::prune_aside(&session.dir, &limits, &made)?;
            if let Some(r) = crate::store::pruned_summary(&removed, &limits) {
                session.load.repairs.push(r);
            }
            record_repair(&session.dir, &session.load)?;
            tracing::warn!("session {id} repaired: {}", session.load.summary());
        } else if behind {
            session.save_state()?;
        }
        Ok(session)
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.state.session
    }

    /// Path of a file in the session directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Runs the gate on a new turn and queues it for the next probe.
    /// `turn.user` must already be redacted.
    pub fn observe(&mut self, turn: Turn) -> GateDecision {
        let known = gate::known_set(
            self.graph
                .nodes_unordered()
                .flat_map(|n| std::iter::once(n.label.clone()).chain(n.aliases.iter().cloned())),
        );
        let decision = gate::decide(
            &mut self.state.gate,
            &GateInput {
                prompt: &turn.user,
                previous_reply: &self.state.last_reply,
            },
            &known,
            &self.config.gate,
        );
        self.state.stats.gate(&decision);
        self.state.turn = self.state.turn.max(turn.index);
        let at = turn.timestamp.unwrap_or_else(crate::clock::now);
        self.state.last_prompt_at = Some(at);
        self.state.last_prompt = turn.user.clone();
        self.keep_episode(turn.index, Speaker::User, &turn.user, at);
        self.state.pending.push_back(turn);
        while self.state.pending.len() > MAX_PENDING {
            self.state.pending.pop_front();
        }
        decision
    }

    /// Records the assistant's reply to the newest queued turn.
    pub fn record_reply(&mut self, reply: &str, files: &[String]) {
        if self.state.pending.is_empty() && (!reply.trim().is_empty() || !files.is_empty()) {
            // The turn's prompt was already probed: queue the reply on its own
            // so the next probe still sees it, with the prompt it answers.
            self.state.reply_to = self.state.last_prompt.clone();
            self.state.pending.push_back(Turn {
                index: self.state.turn,
                timestamp: self.state.last_prompt_at,
                ..Turn::default()
            });
        }
        if let Some(t) = self.state.pending.back_mut() {
            if !t.assistant.is_empty() {
                t.assistant.push('\n');
            }
            t.assistant.push_str(reply);
            for f in files {
                if !t.files.contains(f) {
                    t.files.push(f.clone());
                }
            }
        }
        self.state.last_reply = reply.to_owned();
        let at = self
            .state
            .pending
            .back()
            .and_then(|t| t.timestamp)
            .unwrap_or_else(crate::clock::now);
        self.keep_episode(self.state.turn, Speaker::Assistant, reply, at);
    }

    /// Appends what was said to the session's episode log (already
    /// redacted). A failure is logged, never fatal: the graph and the host's
    /// transcript still hold the turn.
    fn keep_episode(&self, turn: u32, speaker: Speaker, text: &str, at: DateTime<Utc>) {
        let e = &self.config.episodes;
        if !e.enabled || text.trim().is_empty() {
            return;
        }
        let ep = Episode {
            session: self.id().to_owned(),
            turn,
            speaker,
            at,
            text: episodes::cap(text, e.max_chars),
        };
        if let Err(err) = episodes::append(&self.path(episodes::FILE), &[ep], e.session_max_bytes) {
            tracing::warn!("session {}: episode log: {err}", self.id());
        }
    }

    /// Runs `probe` over the queued turns and applies its patch. A rejected
    /// patch changes nothing in the graph (the decay still runs) and is
    /// counted with its reason.
    pub fn cycle(
        &mut self,
        probe: &mut dyn Probe,
        now: DateTime<Utc>,
    ) -> Result<CycleOutcome, SessionError> {
        self.state.probe_seq += 1;
        let probe_id = format!(
            "{}-{}-{}",
            self.state.session, self.state.turn, self.state.probe_seq
        );
        let turns: Vec<Turn> = self.state.pending.iter().cloned().collect();
        let turns = trim_input(turns, self.config.probe.max_input_chars);
        // Nodes close in meaning to what the user said join the focus.
        let mut semantic_hits: Vec<NodeId> = Vec::new();
        if self.config.embed.enabled
            && let Some(sem) = self.semantic.as_mut()
        {
            let text: String = turns
                .iter()
                .map(|t| t.user.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            if !text.trim().is_empty() {
                semantic_hits = crate::semantic::semantic_focus(
                    &self.graph,
                    sem,
                    &text,
                    self.config.embed.proactive_threshold,
                    3,
                )
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            }
        }
        let input = ProbeInput {
            session: &self.state.session,
            probe_id: probe_id.clone(),
            turns: &turns,
            graph: &self.graph,
            now,
            root: self.state.cwd.as_deref(),
            asked: (turns.first().is_some_and(|t| t.user.trim().is_empty())
                && !self.state.reply_to.is_empty())
            .then_some(self.state.reply_to.as_str()),
        };
        let out = match probe.probe(&input) {
            Ok(o) => o,
            Err(e) => {
                self.state.stats.rejected += 1;
                self.state.stats.last_rejection = Some(e.to_string());
                self.save_state()?;
                return Err(SessionError::Probe(e.to_string()));
            }
        };
        let mut mentioned = out.mentioned;
        mentioned.extend(semantic_hits);
        let outcome = self.apply_probe(
            &probe_id,
            &out.source,
            out.patch.ops,
            &mentioned,
            out.usage,
            now,
        )?;
        Ok(outcome)
    }

    /// Validates, journals and applies a probe's operations (from any probe,
    /// including one run outside this process). Idempotent per `probe_id`.
    pub fn apply_probe(
        &mut self,
        probe_id: &str,
        source: &str,
        ops: Vec<PatchOperation>,
        mentioned: &[NodeId],
        usage: Option<Usage>,
        now: DateTime<Utc>,
    ) -> Result<CycleOutcome, SessionError> {
        let mut outcome = CycleOutcome {
            probe_id: probe_id.to_owned(),
            source: source.to_owned(),
            ..CycleOutcome::default()
        };
        if self.applied.iter().any(|p| p == probe_id) {
            outcome.rejected = Some(format!("probe {probe_id} was already applied"));
            return Ok(outcome);
        }
        self.state.stats.probe(source, usage);
        let rules = rules(&self.config);
        // A new node that means the same as an existing one becomes that node.
        let ops = match (self.config.embed.enabled, self.semantic.as_mut()) {
            (true, Some(sem)) => {
                let (ops, merges) = crate::semantic::merge_near_duplicates(
                    ops,
                    &self.graph,
                    sem,
                    self.config.embed.duplicate_threshold,
                );
                outcome.merged = merges
                    .iter()
                    .map(|m| (m.proposed.to_string(), m.into.to_string()))
                    .collect();
                ops
            }
            _ => ops,
        };
        let (ops, prepared) = match patch::prepare(&self.graph, &ops, &rules) {
            Ok(p) => (ops, Some(p)),
            Err(e) => {
                tracing::warn!(
                    "session {}: probe {probe_id} rejected: {e}",
                    self.state.session
                );
                self.state.stats.rejected += 1;
                self.state.stats.last_rejection = Some(e.to_string());
                outcome.rejected = Some(e.to_string());
                (Vec::new(), None)
            }
        };
        let report = prepared
            .as_ref()
            .map(|p| p.report().clone())
            .unwrap_or_default();
        // The focus: what the patch touches (as it will stand) plus what the turns mentioned.
        let mut focus: BTreeSet<NodeId> = report.touched().into_iter().collect();
        focus.extend(
            mentioned
                .iter()
                .filter(|id| !report.removed_nodes.contains(id) && self.graph.contains(id))
                .cloned(),
        );
        let focus: Vec<NodeId> = focus.into_iter().collect();
        let entry = Entry::Cycle {
            probe_id: probe_id.to_owned(),
            turn: self.state.turn,
            now,
            ops,
            focus: focus.clone(),
            decay: self.config.decay.clone(),
        };
        self.state.journal_seq = self.journal.append(&entry)?;
        self.applied.push_back(probe_id.to_owned());
        while self.applied.len() > crate::store::APPLIED_MEMORY {
            self.applied.pop_front();
        }
        // The journal has it: now the in-memory graph follows.
        if let Some(p) = prepared {
            patch::commit(&mut self.graph, p);
        }
        outcome.decay = finish_cycle(
            &mut self.graph,
            &report,
            &focus,
            now,
            self.state.turn,
            &self.state.session,
            &self.config.decay,
        );
        outcome.ops = entry_ops(&entry);
        outcome.applied = report;
        self.state.pending.clear();
        self.state.reply_to.clear();
        self.state.last_focus = focus;
        self.state.unreconciled += 1;
        self.since_snapshot += 1;
        let r = self.write_render(now)?;
        outcome.render_tokens = r.tokens;
        self.maybe_snapshot()?;
        self.save_state()?;
        Ok(outcome)
    }

    /// Raises nodes the model asked about (expansion / query), journaled.
    pub fn touch(
        &mut self,
        ids: &[NodeId],
        boost: f64,
        now: DateTime<Utc>,
    ) -> Result<(), SessionError> {
        let ids: Vec<NodeId> = ids
            .iter()
            .filter(|id| self.graph.contains(id))
            .cloned()
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let entry = Entry::Touch { ids, now, boost };
        self.state.journal_seq = self.journal.append(&entry)?;
        let rules = rules(&self.config);
        let _ = apply_entry(&mut self.graph, &entry, &self.state.session.clone(), &rules);
        self.since_snapshot += 1;
        self.write_render(now)?;
        self.maybe_snapshot()?;
        self.save_state()?;
        Ok(())
    }

    /// Replaces the whole graph (seeding, merges), journaled.
    pub fn reset(&mut self, doc: GraphDoc, now: DateTime<Utc>) -> Result<(), SessionError> {
        let entry = Entry::Reset { doc };
        let rules = rules(&self.config);
        let mut g = self.graph.clone();
        apply_entry(&mut g, &entry, &self.state.session.clone(), &rules)
            .map_err(|e| SessionError::Probe(e.to_string()))?;
        self.state.journal_seq = self.journal.append(&entry)?;
        self.graph = g;
        self.since_snapshot += 1;
        self.write_render(now)?;
        self.snapshot()?;
        self.save_state()?;
        Ok(())
    }

    /// Renders the graph around the last focus.
    pub fn render(&self, now: DateTime<Utc>) -> Render {
        render_session(&self.graph, &self.state, &self.config, now)
    }

    /// Renders and writes `render.json` and `terms.txt` for the hook.
    pub fn write_render(&mut self, now: DateTime<Utc>) -> Result<Render, StoreError> {
        let r = self.render(now);
        let stored = StoredRender::of(
            &self.graph,
            &r,
            &self.state.session,
            self.state.turn,
            now,
            self.config.render.min_weight,
        );
        write_json(&self.path("render.json"), &stored)?;
        let mut terms: Vec<String> = self
            .graph
            .nodes_unordered()
            .flat_map(|n| n.names().collect::<Vec<_>>())
            .collect();
        terms.sort();
        terms.dedup();
        let mut text = terms.join("\n");
        text.push('\n');
        write_atomic(&self.path("terms.txt"), text.as_bytes())?;
        Ok(r)
    }

    /// Writes `state.json`.
    pub fn save_state(&self) -> Result<(), StoreError> {
        write_json(&self.path("state.json"), &self.state)
    }

    fn maybe_snapshot(&mut self) -> Result<(), StoreError> {
        if self.since_snapshot >= self.config.store.snapshot_every.max(1) {
            self.snapshot()?;
        }
        Ok(())
    }

    /// Writes a snapshot covering the journal, keeping the previous one.
    ///
    /// Rotation, crash-safe at every step: `snapshot.json` becomes
    /// `snapshot.prev.json`, the new snapshot is written, then
    /// `journal.jsonl` becomes `journal.prev.jsonl` and a new journal starts.
    /// A damaged `snapshot.json` is then rebuilt from the previous snapshot
    /// plus both journals without loss.
    pub fn snapshot(&mut self) -> Result<(), StoreError> {
        let rename = |from: &Path, to: &Path| {
            std::fs::rename(from, to).map_err(|error| StoreError::Io {
                action: "rotate",
                path: from.to_owned(),
                error,
            })
        };
        let snap_path = self.path("snapshot.json");
        if snap_path.exists() {
            rename(&snap_path, &self.path("snapshot.prev.json"))?;
        }
        self.write_snapshot_file()?;
        let journal_path = self.path("journal.jsonl");
        let seq = self.journal.seq;
        if journal_path.exists() {
            rename(&journal_path, &self.path("journal.prev.jsonl"))?;
        }
        let (mut j, _, _) = Journal::open::<Entry>(&journal_path, seq)?;
        j.seq = j.seq.max(seq);
        self.journal = j;
        self.since_snapshot = 0;
        Ok(())
    }

    fn write_snapshot_file(&mut self) -> Result<(), StoreError> {
        let snap = Snapshot {
            seq: self.journal.seq,
            doc: self.graph.to_doc(),
            applied: self.applied.iter().cloned().collect(),
        };
        write_json(&self.path("snapshot.json"), &snap)
    }

    /// Whether a probe id has been applied.
    pub fn was_applied(&self, probe_id: &str) -> bool {
        self.applied.iter().any(|p| p == probe_id)
    }
}

fn entry_ops(e: &Entry) -> usize {
    match e {
        Entry::Cycle { ops, .. } => ops.len(),
        _ => 0,
    }
}

/// Patch limits from the config.
pub fn rules(config: &Config) -> PatchRules {
    PatchRules {
        max_ops: config.probe.max_ops,
        max_nodes: config.decay.max_nodes.saturating_mul(4).max(1_000),
        anchor_floor: config.decay.anchor_floor,
    }
}

/// Keeps the newest turns within `max_chars` of text.
fn trim_input(turns: Vec<Turn>, max_chars: usize) -> Vec<Turn> {
    let mut total = 0usize;
    let mut keep: Vec<Turn> = Vec::new();
    for mut t in turns.into_iter().rev() {
        let len = t.user.len() + t.assistant.len();
        if total + len > max_chars {
            if keep.is_empty() {
                // Always keep the newest turn, cut to size.
                let cut = |s: &str, n: usize| -> String { s.chars().take(n).collect() };
                t.user = cut(&t.user, max_chars / 2);
                t.assistant = cut(&t.assistant, max_chars / 2);
                keep.push(t);
            }
            break;
        }
        total += len;
        keep.push(t);
    }
    keep.reverse();
    keep
}

/// Reads the last finished render of a session without taking its lock.
pub fn read_render(dir: &Path) -> Result<Option<StoredRender>, StoreError> {
    read_json(&dir.join("render.json"))
}
