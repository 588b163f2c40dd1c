//! Crash-safe files: the state home, the hot session journal and snapshots.
//!
//! A session directory holds `snapshot.json` (the graph at journal sequence
//! N, written to a temp file, fsynced and renamed) and `journal.jsonl` (one
//! checksummed entry per line, fsynced before it counts as acknowledged).
//! Loading is snapshot + replay of the entries after N; a torn last line
//! (a kill mid-write) fails its checksum, is reported and cut off, so a
//! `kill -9` at any moment loses no acknowledged entry and never leaves a
//! file that fails to load.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
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
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
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
}

impl Home {
    /// A home at an explicit path.
    pub fn at(root: impl Into<PathBuf>) -> Home {
        Home { root: root.into() }
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

/// Writes a file atomically: temp file, fsync, rename, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io("create directory", dir))?;
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let result = (|| {
        let mut f = File::create(&tmp).map_err(io("create", &tmp))?;
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

/// What loading found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Sequence of the snapshot used (0 = none).
    pub snapshot_seq: u64,
    /// Journal entries replayed.
    pub replayed: usize,
    /// A torn or corrupt tail that was cut off, described.
    pub truncated: Option<String>,
}

/// What opening a journal gives: the journal, the entries after the
/// requested sequence, and a description of any torn tail that was cut off.
pub type Opened<T> = (Journal, Vec<(u64, T)>, Option<String>);

/// An append-only, checksummed journal of entries.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// Sequence number of the last entry written or read.
    pub seq: u64,
}

impl Journal {
    /// Opens (creating) a journal, reading every valid entry after `after_seq`.
    /// A torn tail is cut off so later appends follow the last good line.
    pub fn open<T: DeserializeOwned + Serialize>(
        path: &Path,
        after_seq: u64,
    ) -> Result<Opened<T>, StoreError> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io("create directory", dir))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io("open", path))?;
        let mut entries = Vec::new();
        let mut good_len: u64 = 0;
        let mut last_seq = after_seq;
        let mut truncated = None;
        {
            let mut reader = BufReader::new(&file);
            let mut buf = Vec::new();
            let mut lineno = 0usize;
            loop {
                buf.clear();
                let n = reader
                    .read_until(b'\n', &mut buf)
                    .map_err(io("read", path))?;
                if n == 0 {
                    break;
                }
                lineno += 1;
                let complete = buf.last() == Some(&b'\n');
                let parsed = if complete {
                    parse_line::<T>(&buf[..n - 1])
                } else {
                    None
                };
                match parsed {
                    Some((seq, entry)) => {
                        good_len += n as u64;
                        if seq > last_seq {
                            last_seq = seq;
                            entries.push((seq, entry));
                        }
                    }
                    None => {
                        truncated = Some(format!(
                            "journal line {lineno} is torn or corrupt ({} bytes); it and anything after it were cut off",
                            n
                        ));
                        break;
                    }
                }
            }
        }
        if truncated.is_some() {
            file.set_len(good_len)
                .map_err(io("truncate torn tail of", path))?;
            file.seek(SeekFrom::End(0)).map_err(io("seek", path))?;
            file.sync_all().map_err(io("sync", path))?;
        }
        Ok((
            Journal {
                path: path.to_owned(),
                file,
                seq: last_seq,
            },
            entries,
            truncated,
        ))
    }

    /// Appends an entry and fsyncs it; returns its sequence number. Once this
    /// returns the entry is acknowledged: it survives a crash.
    pub fn append<T: Serialize>(&mut self, entry: &T) -> Result<u64, StoreError> {
        let seq = self.seq + 1;
        let body = serde_json::to_string(entry).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        let crc = crc32fast::hash(body.as_bytes());
        let line = format!("{{\"seq\":{seq},\"crc\":{crc},\"entry\":{body}}}\n");
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

fn parse_line<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Option<(u64, T)> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let seq = v.get("seq")?.as_u64()?;
    let crc = v.get("crc")?.as_u64()?;
    let entry = v.get("entry")?;
    // The checksum covers the entry exactly as written: recompute it from the
    // raw bytes between `"entry":` and the final `}`.
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.find("\"entry\":")? + "\"entry\":".len();
    let body = text.get(start..text.len().checked_sub(1)?)?;
    if u64::from(crc32fast::hash(body.as_bytes())) != crc {
        return None;
    }
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
            fs::create_dir_all(dir).map_err(io("create directory", dir))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
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

    #[test]
    fn journal_survives_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        {
            let (mut j, e, _) = Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
            assert!(e.is_empty());
            for i in 0..3 {
                j.append(&format!("entry {i}"))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        // Simulate a kill mid-write.
        let mut f = OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{e}"));
        f.write_all(b"{\"seq\":4,\"crc\":1,\"entry\":\"par")
            .unwrap_or_else(|e| panic!("{e}"));
        drop(f);
        let (mut j, entries, truncated) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 3);
        assert!(truncated.is_some());
        j.append(&"entry 3".to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        let (_, entries, truncated) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 4);
        assert!(truncated.is_none());
        assert_eq!(entries[3], (4, "entry 3".to_string()));
    }

    #[test]
    fn a_flipped_byte_fails_the_checksum() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        let (mut j, _, _) = Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        j.append(&"hello".to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        j.append(&"world".to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        drop(j);
        let text = fs::read_to_string(&path)
            .unwrap_or_default()
            .replace("world", "wOrld");
        fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        let (_, entries, truncated) =
            Journal::open::<String>(&path, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 1);
        assert!(truncated.is_some());
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
