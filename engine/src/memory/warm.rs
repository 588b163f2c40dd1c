//! The warm store: the persistent graph a project keeps across sessions.
//!
//! One store per project, in `$ROLLGRAPH_HOME/warm/<key>/` where the key is
//! the first 16 hex digits of the SHA-256 of the canonical project root (so a
//! toolchain upgrade or a new rollgraph version never moves it), plus the
//! `global` store for personal and relationship knowledge.
//!
//! Files: `snapshot.json` and `snapshot.prev.json` (the graph and the store's
//! bookkeeping at a journal sequence), `journal.jsonl` and
//! `journal.prev.jsonl` (checksummed [`WarmEntry`] lines after each snapshot),
//! `head.json` (the sequence of the last entry written, rewritten after each
//! append, so a journal that lost its last entries is seen) and `lock`. Every reader and writer holds the `lock` (an OS file lock, so a
//! dead process never keeps it) and reloads under it, so concurrent sessions
//! never lose each other's updates. A snapshot rotates the current pair to
//! `.prev` before writing the new one: a damaged `snapshot.json` is restored
//! from the previous snapshot plus both journals, losing nothing, and the
//! damage is reported in [`WarmLoad::restored`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::graph::{Edge, Graph, GraphDoc, Node, NodeId};
use crate::store::{FileLock, Home, Journal, StoreError, read_json, write_atomic};

/// The key of the global store (personal and relationship knowledge).
pub const GLOBAL_KEY: &str = "global";

/// The key used for sessions whose project directory is unknown.
pub const UNSCOPED_KEY: &str = "unscoped";

/// How long a writer waits for the warm store's lock by default.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Journal entries between warm snapshots.
pub const SNAPSHOT_EVERY: u64 = 8;

/// The store key of a project root: 16 hex digits of the SHA-256 of its
/// canonical path (the raw path when it does not exist).
pub fn project_key(root: &Path) -> String {
    let canon = fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    let digest = Sha256::digest(canon.to_string_lossy().as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The store key for a session's working directory (`unscoped` without one).
pub fn key_for_cwd(cwd: Option<&str>) -> String {
    match cwd.filter(|c| !c.trim().is_empty()) {
        Some(c) => project_key(Path::new(c)),
        None => UNSCOPED_KEY.to_owned(),
    }
}

/// Whether a store key is acceptable as a directory name.
pub fn valid_key(key: &str) -> bool {
    key == GLOBAL_KEY
        || key == UNSCOPED_KEY
        || (key.len() == 16
            && key
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
}

/// The store's bookkeeping beside the graph.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmMeta {
    /// The project root this store belongs to (informational).
    pub root: Option<String>,
    /// When each node first entered the warm graph.
    pub first_seen: BTreeMap<NodeId, DateTime<Utc>>,
    /// When each node was last superseded or contradicted (stability clock).
    pub disputed: BTreeMap<NodeId, DateTime<Utc>>,
    /// Content hashes of seeded flat-memory items → the anchor they became.
    pub seeded: BTreeMap<String, NodeId>,
    /// Sessions merged into this store, with when they were last merged.
    pub sessions: BTreeMap<String, DateTime<Utc>>,
}

/// A change to a warm store: new full values, replayed deterministically.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmEntry {
    /// What made the change (`reconcile:<session>`, `seed:<file>`).
    pub cause: String,
    /// When.
    pub now: Option<DateTime<Utc>>,
    /// Nodes inserted or replaced.
    pub nodes: Vec<Node>,
    /// Edges inserted or replaced (after the nodes).
    pub edges: Vec<Edge>,
    /// First-seen times to record (only where none exists).
    pub first_seen: Vec<(NodeId, DateTime<Utc>)>,
    /// Dispute times to record (newest wins).
    pub disputed: Vec<(NodeId, DateTime<Utc>)>,
    /// Seeded content hashes.
    pub seeded: Vec<(String, NodeId)>,
    /// Sessions merged.
    pub sessions: Vec<(String, DateTime<Utc>)>,
    /// The project root, when known.
    pub root: Option<String>,
}

impl WarmEntry {
    /// Whether the entry changes nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.edges.is_empty()
            && self.first_seen.is_empty()
            && self.disputed.is_empty()
            && self.seeded.is_empty()
            && self.sessions.is_empty()
            && self.root.is_none()
    }
}

/// The snapshot file's content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmSnapshot {
    /// Journal sequence the snapshot includes.
    pub seq: u64,
    /// The graph.
    pub doc: GraphDoc,
    /// The bookkeeping.
    pub meta: WarmMeta,
}

/// `head.json`: the sequence of the last journal entry written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmHead {
    /// The sequence.
    pub seq: u64,
}

/// What loading a warm store found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmLoad {
    /// Sequence of the snapshot used.
    pub snapshot_seq: u64,
    /// Journal entries replayed.
    pub replayed: usize,
    /// Damage found and repaired, in words (corrupt snapshot restored, torn
    /// journal tail cut off, entries that failed to apply).
    pub restored: Vec<String>,
}

/// An open warm store. Holds the store's lock while alive.
pub struct WarmStore {
    key: String,
    dir: PathBuf,
    /// The warm graph.
    pub graph: Graph,
    /// The bookkeeping.
    pub meta: WarmMeta,
    /// What loading found.
    pub load: WarmLoad,
    journal: Journal,
    since_snapshot: u64,
    _lock: FileLock,
}

fn corrupt(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Applies one entry to a graph and its bookkeeping.
pub fn apply_entry(graph: &mut Graph, meta: &mut WarmMeta, e: &WarmEntry) -> Result<(), String> {
    for n in &e.nodes {
        graph.upsert_node(n.clone());
    }
    let mut failed = Vec::new();
    for edge in &e.edges {
        if let Err(err) = graph.upsert_edge(edge.clone()) {
            failed.push(err.to_string());
        }
    }
    for (id, t) in &e.first_seen {
        meta.first_seen.entry(id.clone()).or_insert(*t);
    }
    for (id, t) in &e.disputed {
        let slot = meta.disputed.entry(id.clone()).or_insert(*t);
        *slot = (*slot).max(*t);
    }
    for (h, id) in &e.seeded {
        meta.seeded.insert(h.clone(), id.clone());
    }
    for (s, t) in &e.sessions {
        meta.sessions.insert(s.clone(), *t);
    }
    if e.root.is_some() {
        meta.root.clone_from(&e.root);
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

impl WarmStore {
    /// The directory of a store.
    pub fn dir_of(home: &Home, key: &str) -> Result<PathBuf, StoreError> {
        if !valid_key(key) {
            return Err(corrupt(
                &home.root().join("warm").join(key),
                "not a valid warm store key",
            ));
        }
        Ok(home.root().join("warm").join(key))
    }

    /// Keys of every warm store in a home.
    pub fn keys(home: &Home) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(home.root().join("warm"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|k| valid_key(k))
            .collect();
        v.sort();
        v
    }

    /// Opens (creating) a store, waiting up to [`LOCK_TIMEOUT`] for its lock.
    pub fn open(home: &Home, key: &str) -> Result<WarmStore, StoreError> {
        WarmStore::open_with_timeout(home, key, LOCK_TIMEOUT)
    }

    /// Opens a store with an explicit lock timeout, loading snapshot and
    /// journals; a damaged snapshot is restored from the previous one and
    /// reported in [`WarmStore::load`].
    pub fn open_with_timeout(
        home: &Home,
        key: &str,
        timeout: Duration,
    ) -> Result<WarmStore, StoreError> {
        let dir = WarmStore::dir_of(home, key)?;
        crate::store::create_private_dir(&dir)?;
        let lock = FileLock::acquire(&dir.join("lock"), timeout)?;
        let aside_before = crate::store::aside_copies(&dir);
        let mut load = WarmLoad::default();
        let head_path = dir.join("head.json");
        // Read first: each entry is journaled before head.json records it.
        let (head, head_err) = match read_json::<WarmHead>(&head_path) {
            Ok(h) => (h.unwrap_or_default(), None),
            Err(e) => (WarmHead::default(), Some(format!("{e}; rewritten"))),
        };
        let head_bad = head_err.is_some();
        let snap_path = dir.join("snapshot.json");
        let prev_path = dir.join("snapshot.prev.json");
        let mut base: Option<Loaded> = None;
        match read_snapshot(&snap_path) {
            Ok(s) => base = s,
            Err(e) => {
                let aside = dir.join(format!("snapshot.json.corrupt-{}", Utc::now().timestamp()));
                let _ = fs::rename(&snap_path, &aside);
                load.restored
                    .push(format!("{e}; moved aside to {}", aside.display()));
            }
        }
        let repaired = !load.restored.is_empty();
        // The previous journal holds the entries between the two snapshots:
        // needed only when the current snapshot is missing or damaged.
        let from_current = base.is_some();
        if base.is_none() {
            match read_snapshot(&prev_path) {
                Ok(Some(s)) => {
                    if repaired {
                        load.restored.push(format!(
                            "restored from {} (journal sequence {})",
                            prev_path.display(),
                            s.seq
                        ));
                    }
                    base = Some(s);
                }
                Ok(None) if repaired => load
                    .restored
                    .push("restored from the journal alone (no previous snapshot)".into()),
                Ok(None) => {}
                Err(e) => load
                    .restored
                    .push(format!("{e}; the previous snapshot is unusable too")),
            }
        }
        let Loaded {
            seq: base_seq,
            mut graph,
            mut meta,
        } = base.unwrap_or_default();
        load.snapshot_seq = base_seq;
        let mut last_seq = base_seq;
        let (prev_entries, prev_torn) = if from_current {
            (Vec::new(), None)
        } else {
            let (_, e, t) = Journal::open::<WarmEntry>(&dir.join("journal.prev.jsonl"), base_seq)?;
            (e, t)
        };
        let (mut journal, entries, torn) =
            Journal::open::<WarmEntry>(&dir.join("journal.jsonl"), base_seq)?;
        for t in [prev_torn, torn].into_iter().flatten() {
            load.restored.push(t);
        }
        for (seq, e) in prev_entries.iter().chain(entries.iter()) {
            if *seq <= last_seq {
                continue;
            }
            last_seq = *seq;
            load.replayed += 1;
            if let Err(why) = apply_entry(&mut graph, &mut meta, e) {
                load.restored.push(format!(
                    "warm journal entry {seq} ({}) partly failed: {why}",
                    e.cause
                ));
            }
        }
        journal.seq = journal.seq.max(last_seq);
        load.restored.extend(head_err);
        // Snapshot and journals that end before head.json lost their last
        // entries.
        if head.seq > journal.seq {
            load.restored.push(format!(
                "head.json records warm journal entry {} as written but the snapshot and journals end at {}: the last {} acknowledged entries are lost; the journal continues from entry {}",
                head.seq,
                journal.seq,
                head.seq - journal.seq,
                journal.seq + 1
            ));
        }
        let head_stale = head_bad || head.seq != journal.seq;
        let repaired = repaired || head.seq > journal.seq;
        let mut store = WarmStore {
            key: key.to_owned(),
            dir,
            graph,
            meta,
            load,
            journal,
            since_snapshot: entries.len() as u64,
            _lock: lock,
        };
        if repaired {
            // Make the store healthy again at once: a fresh snapshot, no rotation
            // (the previous snapshot and journals stay valid as they are).
            store.write_snapshot(false)?;
        }
        if head_stale && (head_bad || head.seq > 0 || store.journal.seq > 0) {
            store.write_head()?;
        }
        if !store.load.restored.is_empty() {
            // Bounded set-aside copies: the oldest go, never the ones just made.
            let limits = home.aside_limits();
            let made = crate::store::new_aside_copies(&store.dir, &aside_before);
            let removed = crate::store::prune_aside(&store.dir, &limits, &made)?;
            if let Some(r) = crate::store::pruned_summary(&removed, &limits) {
                store.load.restored.push(r);
            }
        }
        Ok(store)
    }

    /// The store's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Journals a change (fsynced) and applies it. Snapshots now and then.
    pub fn commit(&mut self, entry: WarmEntry) -> Result<(), StoreError> {
        if entry.is_empty() {
            return Ok(());
        }
        self.journal.append(&entry)?;
        self.write_head()?;
        if let Err(why) = apply_entry(&mut self.graph, &mut self.meta, &entry) {
            tracing::warn!("warm store {}: {why}", self.key);
        }
        self.since_snapshot += 1;
        if self.since_snapshot >= SNAPSHOT_EVERY {
            self.snapshot()?;
        }
        Ok(())
    }

    /// Records the last journal sequence written in `head.json`.
    fn write_head(&self) -> Result<(), StoreError> {
        crate::store::write_json(
            &self.dir.join("head.json"),
            &WarmHead {
                seq: self.journal.seq,
            },
        )
    }

    /// Writes a snapshot covering everything journaled, keeping the previous
    /// snapshot and journal as `.prev`.
    pub fn snapshot(&mut self) -> Result<(), StoreError> {
        self.write_snapshot(true)
    }

    fn write_snapshot(&mut self, rotate: bool) -> Result<(), StoreError> {
        let snap_path = self.dir.join("snapshot.json");
        let journal_path = self.dir.join("journal.jsonl");
        let seq = self.journal.seq;
        if rotate {
            // Crash-safe order: each step leaves prev snapshot + journals complete.
            let rename = |from: &Path, to: &Path| {
                fs::rename(from, to).map_err(|error| StoreError::Io {
                    action: "rotate",
                    path: from.to_owned(),
                    error,
                })
            };
            if snap_path.exists() {
                rename(&snap_path, &self.dir.join("snapshot.prev.json"))?;
            }
            if journal_path.exists() {
                rename(&journal_path, &self.dir.join("journal.prev.jsonl"))?;
            }
        }
        let snap = WarmSnapshot {
            seq,
            doc: self.graph.to_doc(),
            meta: self.meta.clone(),
        };
        // Compact: a 20,000-node graph parses about twice as fast as pretty JSON.
        let bytes = serde_json::to_vec(&snap).map_err(|e| corrupt(&snap_path, e.to_string()))?;
        write_atomic(&snap_path, &bytes)?;
        if rotate {
            let (mut j, _, _) = Journal::open::<WarmEntry>(&journal_path, seq)?;
            j.seq = j.seq.max(seq);
            self.journal = j;
        }
        self.since_snapshot = 0;
        Ok(())
    }
}

/// A store's graph read without a lock and without changing anything (for
/// queries): the snapshot (else the previous one) plus every valid journal
/// entry after it. Damage is described in the second value, never repaired.
/// A store that does not exist reads as an empty graph.
pub fn read_graph(home: &Home, key: &str) -> Result<(Graph, Vec<String>), StoreError> {
    let dir = WarmStore::dir_of(home, key)?;
    let mut damage = Vec::new();
    let base = match read_snapshot(&dir.join("snapshot.json")) {
        Ok(Some(s)) => Some((s, false)),
        other => {
            if let Err(e) = other {
                damage.push(e.to_string());
            }
            match read_snapshot(&dir.join("snapshot.prev.json")) {
                Ok(s) => s.map(|s| (s, true)),
                Err(e) => {
                    damage.push(e.to_string());
                    None
                }
            }
        }
    };
    let (
        Loaded {
            seq,
            mut graph,
            mut meta,
        },
        from_prev,
    ) = base.unwrap_or_default();
    let mut last = seq;
    let mut names = vec!["journal.jsonl"];
    if from_prev {
        names.insert(0, "journal.prev.jsonl");
    }
    for name in names {
        let scan = crate::store::scan_journal::<WarmEntry>(&dir.join(name))?;
        damage.extend(scan.damage);
        for (s, e) in scan.entries {
            if s <= last {
                continue;
            }
            last = s;
            if let Err(why) = apply_entry(&mut graph, &mut meta, &e) {
                damage.push(format!("warm journal entry {s} partly failed: {why}"));
            }
        }
    }
    Ok((graph, damage))
}

/// A snapshot read and validated.
#[derive(Default)]
struct Loaded {
    seq: u64,
    graph: Graph,
    meta: WarmMeta,
}

fn read_snapshot(path: &Path) -> Result<Option<Loaded>, StoreError> {
    let Some(s) = read_json::<WarmSnapshot>(path)? else {
        return Ok(None);
    };
    let graph = Graph::from_doc(s.doc).map_err(|e| corrupt(path, format!("invalid graph: {e}")))?;
    Ok(Some(Loaded {
        seq: s.seq,
        graph,
        meta: s.meta,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Domain;

    fn t0() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    fn node(label: &str) -> Node {
        let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
        Node::new(id, label, Domain::Technical, 0.5, t0())
    }

    fn entry(labels: &[&str]) -> WarmEntry {
        WarmEntry {
            cause: "test".into(),
            nodes: labels.iter().map(|l| node(l)).collect(),
            ..WarmEntry::default()
        }
    }

    #[test]
    fn key_is_stable_and_hex() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let a = project_key(dir.path());
        assert_eq!(a.len(), 16);
        assert!(valid_key(&a));
        assert_eq!(a, project_key(&dir.path().join(".")));
        assert_ne!(a, project_key(Path::new("/does/not/exist")));
        assert!(!valid_key("../etc"));
    }

    #[test]
    fn survives_many_snapshots_and_reopens() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        {
            let mut s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
            for i in 0..(SNAPSHOT_EVERY * 2 + 3) {
                s.commit(entry(&[&format!("node {i}")]))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        let s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.graph.node_count() as u64, SNAPSHOT_EVERY * 2 + 3);
        assert!(s.load.restored.is_empty(), "{:?}", s.load.restored);
    }

    #[test]
    fn corrupt_snapshot_is_restored_without_loss() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let n = SNAPSHOT_EVERY * 2 + 1;
        {
            let mut s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
            for i in 0..n {
                s.commit(entry(&[&format!("node {i}")]))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        let snap = WarmStore::dir_of(&home, GLOBAL_KEY)
            .unwrap_or_default()
            .join("snapshot.json");
        fs::write(&snap, b"{\"seq\": 3, \"doc\": {\"nodes\": {\"Bad Key\"")
            .unwrap_or_else(|e| panic!("{e}"));
        let s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.graph.node_count() as u64, n);
        assert!(
            s.load.restored.iter().any(|r| r.contains("restored from")),
            "{:?}",
            s.load.restored
        );
        drop(s);
        // Healthy again: the next open reports nothing.
        let s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.graph.node_count() as u64, n);
        assert!(s.load.restored.is_empty(), "{:?}", s.load.restored);
    }

    #[test]
    fn a_lost_trailing_entry_is_reported_and_the_store_continues() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        {
            let mut s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
            for i in 0..3 {
                s.commit(entry(&[&format!("node {i}")]))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        let wdir = WarmStore::dir_of(&home, GLOBAL_KEY).unwrap_or_default();
        // The last entry lost on a record boundary: no torn line tells.
        let journal = wdir.join("journal.jsonl");
        let text = fs::read_to_string(&journal).unwrap_or_default();
        let kept: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
        fs::write(&journal, kept).unwrap_or_else(|e| panic!("{e}"));
        let peeked = crate::peek::warm(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            peeked.peeked.problems.iter().any(|p| p.contains("missing")),
            "{:?}",
            peeked.peeked.problems
        );
        let s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.graph.node_count(), 2);
        assert!(
            s.load.restored.iter().any(|r| r.contains("are lost")),
            "{:?}",
            s.load.restored
        );
        drop(s);
        // Repaired: the next open is clean and a new entry follows on.
        let mut s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.load.restored.is_empty(), "{:?}", s.load.restored);
        s.commit(entry(&["node again"]))
            .unwrap_or_else(|e| panic!("{e}"));
        drop(s);
        let s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.load.restored.is_empty(), "{:?}", s.load.restored);
        assert_eq!(s.graph.node_count(), 3);
    }

    #[test]
    fn a_second_opener_waits_for_the_lock() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let s = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        let again = WarmStore::open_with_timeout(&home, GLOBAL_KEY, Duration::from_millis(20));
        assert!(matches!(again, Err(StoreError::Locked(_))));
        drop(s);
        assert!(WarmStore::open_with_timeout(&home, GLOBAL_KEY, Duration::from_millis(20)).is_ok());
    }
}
