//! Crash-safe files: the state home, the hot session journal and snapshots.
//!
//! A session directory holds `snapshot.json` (the graph at journal sequence
//! N, written to a temp file, fsynced and renamed) and `journal.jsonl` (one
//! checksummed entry per line, fsynced before it counts as acknowledged).
//! Loading is snapshot + replay of the entries after N. A line that fails
//! its checksum (a torn last line after a kill mid-write, or outside damage)
//! is skipped and reported, and reading resyncs on the next record boundary,
//! so the valid entries after it are kept. Reading never changes a file:
//! [`scan_journal`] recovers in memory; only a writer ([`Journal::open`])
//! repairs, by copying the bad bytes aside to a quarantine file and
//! rewriting the journal with the valid lines.
//!
//! Everything created here is private: directories 0700, files 0600,
//! whatever the process umask.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use json_patch::PatchOperation;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::config::DecayConfig;
use crate::graph::{GraphDoc, NodeId};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file operation failed.
    #[error("{action} {path}: {error}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A file exists but is not what it should be.
    #[error("{path} is corrupt: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A session id that would escape the state directory.
    #[error("invalid session id {0:?}: use letters, digits, '-' and '_' (at most 128)")]
    BadSessionId(String),
    /// Another process holds the lock.
    #[error("{0} is locked by another rollgraph process")]
    Locked(PathBuf),
    /// The state is damaged and this (non-repairing) open leaves it alone.
    #[error("{path} is damaged ({reason}); a writer repairs it (run `rollgraph doctor --repair`)")]
    NeedsRepair {
        /// The session or store directory.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

pub(crate) fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |error| StoreError::Io {
        action,
        path: path.to_owned(),
        error,
    }
}

/// The state home: `$ROLLGRAPH_HOME`, else `$XDG_DATA_HOME/rollgraph`, else
/// `~/.local/share/rollgraph`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
    aside: AsideLimits,
}

impl Home {
    /// A home at an explicit path.
    pub fn at(root: impl Into<PathBuf>) -> Home {
        Home {
            root: root.into(),
            aside: AsideLimits::DEFAULT,
        }
    }

    /// The same home with the configured retention of set-aside copies
    /// (`store.quarantine_keep`, `store.quarantine_max_bytes`), which its
    /// writers apply after a repair.
    pub fn with_aside_limits(mut self, limits: AsideLimits) -> Home {
        self.aside = limits;
        self
    }

    /// The retention of set-aside copies in force.
    pub fn aside_limits(&self) -> AsideLimits {
        self.aside
    }

    /// The home from the environment.
    pub fn from_env() -> Home {
        if let Some(h) = std::env::var_os("ROLLGRAPH_HOME").filter(|v| !v.is_empty()) {
            return Home::at(h);
        }
        if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            return Home::at(PathBuf::from(x).join("rollgraph"));
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        Home::at(home.join(".local/share/rollgraph"))
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a session's files live.
    pub fn session_dir(&self, id: &str) -> Result<PathBuf, StoreError> {
        if !valid_session_id(id) {
            return Err(StoreError::BadSessionId(id.to_owned()));
        }
        Ok(self.root.join("sessions").join(id))
    }

    /// All session ids with a directory.
    pub fn sessions(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.root.join("sessions"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|s| valid_session_id(s))
            .collect();
        v.sort();
        v
    }

    /// The log file.
    pub fn log_path(&self) -> PathBuf {
        self.root.join("rollgraph.log")
    }
}

/// Session ids become directory names: keep them to a safe alphabet.
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && !id.contains("..")
}

/// Creates a directory (and its missing parents) readable by this user only
/// (0700, whatever the umask). Existing directories are left as they are.
pub fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_private_dir(parent)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(io("restrict permissions of", dir))?;
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(io("create directory", dir)(e)),
    }
}

/// Creates (truncating) a file readable by this user only (0600).
pub fn create_private_file(path: &Path) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.set_permissions(fs::Permissions::from_mode(0o600))?;
    Ok(f)
}

/// Opens a file for appending, creating it 0600 if it does not exist.
pub fn open_private_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

/// Writes a file atomically: temp file, fsync, rename, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let result = (|| {
        let mut f = create_private_file(&tmp).map_err(io("create", &tmp))?;
        f.write_all(bytes).map_err(io("write", &tmp))?;
        f.sync_all().map_err(io("sync", &tmp))?;
        fs::rename(&tmp, path).map_err(io("rename into place", path))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes a value as pretty JSON, atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Corrupt {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    write_atomic(path, &bytes)
}

/// Reads a JSON file; `Ok(None)` when it does not exist.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                path: path.to_owned(),
                reason: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path)(e)),
    }
}

/// One journal entry: a deterministic change to the hot graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// A probe cycle: apply `ops`, record provenance, decay around `focus`.
    Cycle {
        /// The probe's id (a probe is never applied twice).
        probe_id: String,
        /// The turn the probe covered up to.
        turn: u32,
        /// The cycle's clock.
        now: DateTime<Utc>,
        /// The validated operations (empty when the patch was rejected).
        ops: Vec<PatchOperation>,
        /// The focus the decay centred on.
        focus: Vec<NodeId>,
        /// The decay constants in force.
        decay: DecayConfig,
    },
    /// Nodes raised by an expansion or query (w += boost × (1 − w)).
    Touch {
        /// The nodes.
        ids: Vec<NodeId>,
        /// The clock.
        now: DateTime<Utc>,
        /// The raise.
        boost: f64,
    },
    /// The whole graph replaced (seeding from the warm graph, a merge).
    Reset {
        /// The new graph.
        doc: GraphDoc,
    },
}

/// The graph at a journal position, plus the probe ids already applied.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Journal sequence number the snapshot includes.
    pub seq: u64,
    /// The graph.
    pub doc: GraphDoc,
    /// Recent probe ids applied (bounded), so a retried probe is refused.
    #[serde(default)]
    pub applied: Vec<String>,
}

/// Most probe ids remembered for de-duplication.
pub const APPLIED_MEMORY: usize = 4096;

/// What loading a hot session found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Sequence of the snapshot used (0 = none).
    pub snapshot_seq: u64,
    /// Which snapshot the graph was rebuilt from (`snapshot.json`,
    /// `snapshot.prev.json`, or none).
    #[serde(default)]
    pub snapshot_source: Option<String>,
    /// Journal entries replayed.
    pub replayed: usize,
    /// Damage found, in words: a bad snapshot, journal lines that failed
    /// their checksum, entries lost or that failed to replay. Empty when the
    /// state is healthy.
    #[serde(default)]
    pub damage: Vec<String>,
    /// Whether something was irrecoverably lost (as opposed to rebuilt).
    #[serde(default)]
    pub lost: bool,
    /// What this writer did to repair it (quarantine copies, rewrites).
    #[serde(default)]
    pub repairs: Vec<String>,
}

impl LoadReport {
    /// Whether loading found anything wrong.
    pub fn damaged(&self) -> bool {
        !self.damage.is_empty()
    }

    /// The damage and repairs in one line, for logs and warnings.
    pub fn summary(&self) -> String {
        let mut parts = self.damage.clone();
        parts.extend(self.repairs.iter().cloned());
        parts.join("; ")
    }
}

/// What opening a journal gives: the journal, the entries after the
/// requested sequence, and a description of any damage that was repaired
/// (bad lines copied aside to a quarantine file and dropped from the journal).
pub type Opened<T> = (Journal, Vec<(u64, T)>, Option<String>);

/// What reading a journal found, without changing it.
#[derive(Debug)]
pub struct JournalScan<T> {
    /// Every valid entry, in file order, with its sequence number.
    pub entries: Vec<(u64, T)>,
    /// The valid lines exactly as written (what a repair keeps).
    pub good: Vec<u8>,
    /// The bytes that failed (torn or corrupt lines): what a repair quarantines.
    pub bad: Vec<u8>,
    /// What was wrong, in words (one item per bad stretch).
    pub damage: Vec<String>,
}

impl<T> Default for JournalScan<T> {
    fn default() -> Self {
        JournalScan {
            entries: Vec::new(),
            good: Vec::new(),
            bad: Vec::new(),
            damage: Vec::new(),
        }
    }
}

/// One journal record as written: the entry's JSON with its sequence number
/// and a CRC-32 of exactly those bytes, on a line of its own.
pub fn frame_record(seq: u64, body: &str) -> String {
    let crc = crc32fast::hash(body.as_bytes());
    format!("{{\"seq\":{seq},\"crc\":{crc},\"entry\":{body}}}\n")
}

/// The start of every journal record: where reading resyncs after damage.
const RECORD_START: &[u8] = b"{\"seq\":";

/// Reads a journal without changing it: every line that passes its checksum
/// is kept, every line that does not is set aside as damage, and reading
/// resyncs on the next record boundary (the next line, or a record start
/// inside a damaged line), so one bad entry never hides the ones after it.
/// A missing file reads as empty.
pub fn scan_journal<T: DeserializeOwned>(path: &Path) -> Result<JournalScan<T>, StoreError> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes).map_err(io("read", path))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(JournalScan::default()),
        Err(e) => return Err(io("open", path)(e)),
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut scan = JournalScan::default();
    let mut pos = 0usize;
    let mut lineno = 0usize;
    while pos < bytes.len() {
        lineno += 1;
        let (line, complete, next) = match bytes[pos..].iter().position(|&b| b == b'\n') {
            Some(i) => (&bytes[pos..pos + i], true, pos + i + 1),
            None => (&bytes[pos..], false, bytes.len()),
        };
        let whole = &bytes[pos..next];
        pos = next;
        if complete && let Some(e) = parse_line::<T>(line) {
            scan.entries.push(e);
            scan.good.extend_from_slice(whole);
            continue;
        }
        if !complete {
            scan.bad.extend_from_slice(whole);
            scan.damage.push(format!(
                "{name} line {lineno}: a torn last line ({} bytes, an unfinished write)",
                whole.len()
            ));
            continue;
        }
        // Resync inside the damaged line: a lost newline merges two records.
        let mut resynced = None;
        let mut from = 1;
        while from < line.len() {
            let Some(off) = find(&line[from..], RECORD_START) else {
                break;
            };
            let at = from + off;
            if let Some(e) = parse_line::<T>(&line[at..]) {
                resynced = Some((at, e));
                break;
            }
            from = at + 1;
        }
        match resynced {
            Some((at, e)) => {
                scan.bad.extend_from_slice(&line[..at]);
                scan.bad.push(b'\n');
                scan.entries.push(e);
                scan.good.extend_from_slice(&whole[at..]);
                scan.damage.push(format!(
                    "{name} line {lineno}: {at} bytes fail their checksum before a valid record"
                ));
            }
            None => {
                scan.bad.extend_from_slice(whole);
                scan.damage.push(format!(
                    "{name} line {lineno}: fails its checksum ({} bytes)",
                    whole.len()
                ));
            }
        }
    }
    Ok(scan)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Copies bytes aside to `<file>.quarantine-<unix seconds>[-n]` (0600) and
/// returns the path. Nothing is ever deleted without such a copy.
pub fn quarantine(path: &Path, bytes: &[u8]) -> Result<PathBuf, StoreError> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let base = path.as_os_str().to_string_lossy().into_owned();
    for n in 0..1000u32 {
        let q = if n == 0 {
            PathBuf::from(format!("{base}.quarantine-{secs}"))
        } else {
            PathBuf::from(format!("{base}.quarantine-{secs}-{n}"))
        };
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&q)
        {
            Ok(mut f) => {
                f.write_all(bytes).map_err(io("write", &q))?;
                f.sync_all().map_err(io("sync", &q))?;
                return Ok(q);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io("create quarantine copy", &q)(e)),
        }
    }
    Err(StoreError::Corrupt {
        path: path.to_owned(),
        reason: "too many quarantine copies already".into(),
    })
}

/// How many set-aside copies of damaged bytes (`*.quarantine-<time>`,
/// `*.corrupt-<time>`) one directory keeps: at most `keep` files and
/// `max_bytes` in all, the oldest removed first. The newest copy is always
/// kept, whatever its size, so a repair never deletes what it just saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsideLimits {
    /// Most files kept (at least 1).
    pub keep: usize,
    /// Most bytes kept in all.
    pub max_bytes: u64,
}

impl AsideLimits {
    /// The defaults: 16 files, 32 MiB per directory.
    pub const DEFAULT: AsideLimits = AsideLimits {
        keep: 16,
        max_bytes: 32 << 20,
    };
}

impl Default for AsideLimits {
    fn default() -> Self {
        AsideLimits::DEFAULT
    }
}

/// Whether a file name is a set-aside copy of damaged bytes.
pub fn is_aside(name: &str) -> bool {
    name.contains(".quarantine-") || name.contains(".corrupt-")
}

/// The set-aside copies in a directory, oldest first (by modification time,
/// then name), with their sizes.
pub fn aside_copies(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut v: Vec<(std::time::SystemTime, PathBuf, u64)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_aside))
        .filter_map(|e| {
            let m = e.metadata().ok().filter(fs::Metadata::is_file)?;
            Some((
                m.modified().unwrap_or(std::time::UNIX_EPOCH),
                e.path(),
                m.len(),
            ))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p, n)| (p, n)).collect()
}

/// Removes the oldest set-aside copies in `dir` beyond `limits` (a writer's
/// act, after a repair, or `doctor --repair`). The copies in `protect` (what
/// the repair calling this has just made) are counted but never removed,
/// and the newest copy is always kept. Returns what was removed, with sizes.
pub fn prune_aside(
    dir: &Path,
    limits: &AsideLimits,
    protect: &[PathBuf],
) -> Result<Vec<(PathBuf, u64)>, StoreError> {
    let copies = aside_copies(dir);
    let mut count = copies.len();
    let mut total: u64 = copies.iter().map(|c| c.1).sum();
    let newest = copies.last().map(|c| c.0.clone());
    let mut removed = Vec::new();
    for (path, len) in copies {
        if count <= limits.keep.max(1) && total <= limits.max_bytes {
            break;
        }
        if protect.contains(&path) || Some(&path) == newest.as_ref() {
            continue;
        }
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("remove an old set-aside copy", &path)(e)),
        }
        count -= 1;
        total -= len;
        removed.push((path, len));
    }
    Ok(removed)
}

/// The set-aside copies in `dir` that are not in `before` (what a repair
/// made since `before` was listed).
pub fn new_aside_copies(dir: &Path, before: &[(PathBuf, u64)]) -> Vec<PathBuf> {
    aside_copies(dir)
        .into_iter()
        .map(|c| c.0)
        .filter(|p| !before.iter().any(|b| &b.0 == p))
        .collect()
}

/// What [`prune_aside`] removed, in words (`None` when nothing).
pub fn pruned_summary(removed: &[(PathBuf, u64)], limits: &AsideLimits) -> Option<String> {
    if removed.is_empty() {
        return None;
    }
    let bytes: u64 = removed.iter().map(|r| r.1).sum();
    Some(format!(
        "{} older set-aside copies removed ({bytes} bytes; kept: at most {} files, {} bytes): {}",
        removed.len(),
        limits.keep,
        limits.max_bytes,
        removed
            .iter()
            .map(|r| r
                .0
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Repairs a journal in place (a writer's act): quarantines its bad bytes
/// and rewrites it with the valid lines. Returns what was done, or `None`
/// when it was healthy (or absent).
pub fn repair_journal<T: DeserializeOwned>(path: &Path) -> Result<Option<String>, StoreError> {
    let scan = scan_journal::<T>(path)?;
    if scan.bad.is_empty() {
        return Ok(None);
    }
    let q = quarantine(path, &scan.bad)?;
    write_atomic(path, &scan.good)?;
    Ok(Some(format!(
        "{}; {} bad bytes copied to {}, the journal rewritten with its {} valid entries",
        scan.damage.join("; "),
        scan.bad.len(),
        q.display(),
        scan.entries.len()
    )))
}

/// An append-only, checksummed journal of entries.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// Sequence number of the last entry written or read.
    pub seq: u64,
}

impl Journal {
    /// Opens (creating) a journal for writing, reading every valid entry
    /// after `after_seq`. This is a writer's open: damaged lines are copied
    /// aside to a quarantine file and the journal is rewritten with the
    /// valid ones, so later appends follow a clean last line.
    pub fn open<T: DeserializeOwned + Serialize>(
        path: &Path,
        after_seq: u64,
    ) -> Result<Opened<T>, StoreError> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        let repaired = repair_journal::<T>(path)?;
        let scan = scan_journal::<T>(path)?;
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(io("open", path))?;
        let mut last_seq = after_seq;
        let mut entries = Vec::new();
        for (seq, entry) in scan.entries {
            if seq > last_seq {
                last_seq = seq;
                entries.push((seq, entry));
            }
        }
        let mut journal = Journal {
            path: path.to_owned(),
            file,
            seq: last_seq,
        };
        journal
            .file
            .seek(SeekFrom::End(0))
            .map_err(io("seek", path))?;
        Ok((journal, entries, repaired))
    }

    /// Appends an entry and fsyncs it; returns its sequence number. Once this
    /// returns the entry is acknowledged: it survives a crash.
    pub fn append<T: Serialize>(&mut self, entry: &T) -> Result<u64, StoreError> {
        let seq = self.seq + 1;
        let body = serde_json::to_string(entry).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        let line = frame_record(seq, &body);
        self.file
            .write_all(line.as_bytes())
            .map_err(io("append to", &self.path))?;
        self.file.sync_data().map_err(io("sync", &self.path))?;
        self.seq = seq;
        Ok(seq)
    }

    /// Empties the journal (after a snapshot covers it).
    pub fn truncate(&mut self) -> Result<(), StoreError> {
        self.file.set_len(0).map_err(io("truncate", &self.path))?;
        self.file.sync_all().map_err(io("sync", &self.path))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A record as written by [`frame_record`].
#[derive(serde::Deserialize)]
struct Frame<T> {
    seq: u64,
    crc: u64,
    entry: T,
}

/// The entry of the body a record's checksum covers: the raw bytes between
/// `"entry":` and the final `}`.
fn checked_body(bytes: &[u8], crc: u64) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.find("\"entry\":")? + "\"entry\":".len();
    let body = text.get(start..text.len().checked_sub(1)?)?;
    (u64::from(crc32fast::hash(body.as_bytes())) == crc).then_some(body)
}

pub(crate) fn parse_line<T: DeserializeOwned>(bytes: &[u8]) -> Option<(u64, T)> {
    // A record as written (an object, each key once) is parsed once, its
    // entry straight into `T`. Whatever that does not take is read the
    // general way below, which alone decides what else a line holds.
    if bytes.starts_with(RECORD_START)
        && let Ok(f) = serde_json::from_slice::<Frame<T>>(bytes)
        && checked_body(bytes, f.crc).is_some()
    {
        return Some((f.seq, f.entry));
    }
    parse_value_line(bytes)
}

/// [`parse_line`] through a JSON value: what a record not as written
/// (keys reordered or repeated) reads as.
fn parse_value_line<T: DeserializeOwned>(bytes: &[u8]) -> Option<(u64, T)> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let seq = v.get("seq")?.as_u64()?;
    let crc = v.get("crc")?.as_u64()?;
    let entry = v.get("entry")?;
    // The checksum covers the entry exactly as written.
    checked_body(bytes, crc)?;
    let entry: T = serde_json::from_value(entry.clone()).ok()?;
    Some((seq, entry))
}

/// An exclusive advisory lock on a file, released on drop (or process death).
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Takes the lock, failing at once with `Locked` if another process holds it.
    pub fn try_acquire(path: &Path) -> Result<FileLock, StoreError> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .mode(0o600)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io("open lock", path))?;
        match file.try_lock() {
            Ok(()) => Ok(FileLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => Err(StoreError::Locked(path.to_owned())),
            Err(fs::TryLockError::Error(e)) => Err(io("lock", path)(e)),
        }
    }

    /// Takes the lock of an existing lock file without creating anything
    /// (for readers), waiting up to `timeout`. `Ok(None)` when there is no
    /// lock file.
    pub fn acquire_existing(
        path: &Path,
        timeout: std::time::Duration,
    ) -> Result<Option<FileLock>, StoreError> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io("open lock", path)(e)),
        };
        let start = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(FileLock { _file: file })),
                Err(fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= timeout {
                        return Err(StoreError::Locked(path.to_owned()));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(fs::TryLockError::Error(e)) => return Err(io("lock", path)(e)),
            }
        }
    }

    /// Takes the lock, waiting up to `timeout`.
    pub fn acquire(path: &Path, timeout: std::time::Duration) -> Result<FileLock, StoreError> {
        let start = std::time::Instant::now();
        loop {
            match FileLock::try_acquire(path) {
                Err(StoreError::Locked(p)) => {
                    if start.elapsed() >= timeout {
                        return Err(StoreError::Locked(p));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize, path: &Path) {
        let (mut j, _, _) = Journal::open::<String>(path, 0).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..n {
            j.append(&format!("entry {i}"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }

    fn quarantines(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains(".quarantine-"))
            .collect();
        v.sort();
        v
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// A record read the quick way reads as it does through a JSON
        /// value, whatever was done to it: bytes flipped, cut, keys
        /// repeated or reordered, the entry of another type.
        #[test]
        fn records_read_as_through_a_value(
            entry in proptest::collection::btree_map("[a-z]{1,6}", "[ -~é]{0,12}", 0..4),
            seq in 0u64..1_000,
            cut in 0usize..120,
            flip in proptest::option::of((0usize..120, 1u8..255)),
            twist in 0u8..5,
        ) {
            let body = serde_json::to_string(&entry).unwrap_or_default();
            let mut line = frame_record(seq, &body).trim_end().to_owned();
            match twist {
                1 => line = line.replacen("\"crc\":", "\"seq\":7,\"crc\":", 1),
                2 => line = line.replacen("{\"seq\":", "{\"crc\":1,\"seq\":", 1),
                3 => line = line.replacen(",\"entry\":", ",\"x\":[1],\"entry\":", 1),
                4 => line = format!("{{\"seq\":{seq},\"crc\":{},\"entry\":{body}}}", crc32fast::hash(body.as_bytes())),
                _ => {}
            }
            let mut bytes = line.into_bytes();
            if let Some((at, x)) = flip && at < bytes.len() {
                bytes[at] ^= x;
            }
            bytes.truncate(bytes.len().saturating_sub(cut % 3 * cut));
            type Map = std::collections::BTreeMap<String, String>;
            proptest::prop_assert_eq!(parse_line::<Map>(&bytes), parse_value_line::<Map>(&bytes));
            proptest::prop_assert_eq!(parse_line::<String>(&bytes), parse_value_line::<String>(&bytes));
        }
    }

    #[test]
    fn journal_survives_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        lines(3, &path);
        // Simulate a kill mid-write.
        let mut f = OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{e}"));
        f.write_all(b"{\"seq\":4,\"crc\":1,\"entry\":\"par")
            .unwrap_or_else(|e| panic!("{e}"));
        drop(f);
        // Reading alone changes nothing.
        let before = fs::read(&path).unwrap_or_default();
        let scan = scan_journal::<String>(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scan.entries.len(), 3);
        assert_eq!(scan.damage.len(), 1, "{:?}", scan.damage);
        assert_eq!(fs::read(&path).unwrap_or_default(), before);
        assert!(quarantines(dir.path()).is_empty());
        // The writer repairs: the torn bytes are copied aside, appends follow.
        let (mut j, entries, repaired) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 3);
        assert!(repaired.is_some_and(|r| r.contains("quarantine")));
        let q = quarantines(dir.path());
        assert_eq!(q.len(), 1);
        assert_eq!(
            fs::read(&q[0]).unwrap_or_default(),
            b"{\"seq\":4,\"crc\":1,\"entry\":\"par".to_vec()
        );
        j.append(&"entry 3".to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        let (_, entries, repaired) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 4);
        assert!(repaired.is_none());
        assert_eq!(entries[3], (4, "entry 3".to_string()));
    }

    #[test]
    fn a_flipped_byte_loses_only_its_entry() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        lines(19, &path);
        let text = fs::read_to_string(&path)
            .unwrap_or_default()
            .replace("entry 17", "entrY 17");
        fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let scan = scan_journal::<String>(&path).unwrap_or_else(|e| panic!("{e}"));
        let seqs: Vec<u64> = scan.entries.iter().map(|e| e.0).collect();
        assert_eq!(seqs.len(), 18);
        assert!(!seqs.contains(&18) && seqs.contains(&19), "{seqs:?}");
        assert_eq!(fs::read_to_string(&path).unwrap_or_default(), text);
        let (_, entries, repaired) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 18);
        assert_eq!(entries[17], (19, "entry 18".to_string()));
        assert!(repaired.is_some());
        let q = quarantines(dir.path());
        assert_eq!(q.len(), 1);
        assert!(
            fs::read_to_string(&q[0])
                .unwrap_or_default()
                .contains("entrY 17")
        );
    }

    #[test]
    fn a_lost_newline_resyncs_on_the_next_record() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        lines(4, &path);
        let mut text = fs::read(&path).unwrap_or_default();
        // Garble the end of line 2 including its newline.
        let nl: Vec<usize> = text
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i)
            .collect();
        text[nl[1] - 2] = b'#';
        text[nl[1]] = b'#';
        fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let scan = scan_journal::<String>(&path).unwrap_or_else(|e| panic!("{e}"));
        let seqs: Vec<u64> = scan.entries.iter().map(|e| e.0).collect();
        assert_eq!(seqs, vec![1, 3, 4]);
    }

    #[test]
    fn garbage_is_quarantined_not_deleted() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        fs::write(&path, b"not a journal\n\x00\x01garbage").unwrap_or_else(|e| panic!("{e}"));
        let (_, entries, repaired) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert!(entries.is_empty());
        assert!(repaired.is_some());
        let q = quarantines(dir.path());
        assert_eq!(
            fs::read(&q[0]).unwrap_or_default(),
            b"not a journal\n\x00\x01garbage".to_vec()
        );
    }

    #[test]
    fn created_files_are_private_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let nested = dir.path().join("a/b");
        write_atomic(&nested.join("f.json"), b"{}").unwrap_or_else(|e| panic!("{e}"));
        let mode = |p: &Path| {
            fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0)
        };
        assert_eq!(mode(&nested.join("f.json")), 0o600);
        assert_eq!(mode(&nested), 0o700);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        lines(1, &nested.join("j.jsonl"));
        assert_eq!(mode(&nested.join("j.jsonl")), 0o600);
    }

    /// A set-aside copy of `len` bytes modified `age` seconds before `base`.
    fn aside(dir: &Path, name: &str, len: usize, age: u64) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, vec![b'x'; len]).unwrap_or_else(|e| panic!("{e}"));
        let base = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        let f = OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap_or_else(|e| panic!("{e}"));
        f.set_modified(base - std::time::Duration::from_secs(age))
            .unwrap_or_else(|e| panic!("{e}"));
        p
    }

    fn names(v: &[(PathBuf, u64)]) -> Vec<String> {
        v.iter()
            .map(|(p, _)| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect()
    }

    #[test]
    fn set_aside_copies_are_bounded_oldest_out() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        for (i, age) in [50u64, 40, 30, 20, 10].iter().enumerate() {
            aside(d, &format!("journal.jsonl.quarantine-{i}"), 100, *age);
        }
        aside(d, "snapshot.json.corrupt-9", 100, 5);
        fs::write(d.join("journal.jsonl"), b"kept").unwrap_or_else(|e| panic!("{e}"));
        // By count: six copies, keep three; the three oldest go.
        let limits = AsideLimits {
            keep: 3,
            max_bytes: 1 << 20,
        };
        let removed = prune_aside(d, &limits, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            names(&removed),
            [
                "journal.jsonl.quarantine-0",
                "journal.jsonl.quarantine-1",
                "journal.jsonl.quarantine-2"
            ]
        );
        assert_eq!(
            names(&aside_copies(d)),
            [
                "journal.jsonl.quarantine-3",
                "journal.jsonl.quarantine-4",
                "snapshot.json.corrupt-9"
            ]
        );
        assert!(
            d.join("journal.jsonl").exists(),
            "only set-aside copies are pruned"
        );
        // By bytes: 250 bytes allow two of the 100-byte copies.
        let limits = AsideLimits {
            keep: 10,
            max_bytes: 250,
        };
        let removed = prune_aside(d, &limits, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&removed), ["journal.jsonl.quarantine-3"]);
        // The newest copy stays even when it alone is over the limit, and a
        // copy the repair has just made is never removed.
        let big = aside(d, "state.json.corrupt-10", 5000, 1);
        let just_made = d.join("journal.jsonl.quarantine-4");
        let limits = AsideLimits {
            keep: 1,
            max_bytes: 1024,
        };
        let removed = prune_aside(d, &limits, std::slice::from_ref(&just_made))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&removed), ["snapshot.json.corrupt-9"]);
        assert!(big.exists() && just_made.exists());
        assert!(
            pruned_summary(&removed, &limits)
                .is_some_and(|s| s.contains("1 older set-aside copies removed"))
        );
        assert!(pruned_summary(&[], &limits).is_none());
    }

    #[test]
    fn session_ids_cannot_escape() {
        let home = Home::at("/tmp/x");
        assert!(home.session_dir("../etc").is_err());
        assert!(home.session_dir("a/b").is_err());
        assert!(
            home.session_dir("7c1e4b2a-9d3f-4a61-b8e0-5f2c9a1d3e47")
                .is_ok()
        );
    }
}
