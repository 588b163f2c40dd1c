//! Read-only loading of stored graphs, for commands that only look
//! (`rollgraph view`, `rollgraph export`).
//!
//! Unlike [`crate::session::Session::open`] and
//! [`crate::warm::WarmStore::open`], nothing here creates a directory, takes
//! a lock file, renames a damaged snapshot or truncates a torn journal: it
//! reads the snapshot and the journal lines after it, checks each line's
//! checksum, stops at the first bad one and says so in
//! [`Peeked::problems`]. A writer running at the same time may leave a torn
//! last line; it is skipped and reported, never cut off.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::config::Config;
use crate::graph::Graph;
use crate::session::{SessionState, apply_entry, rules};
use crate::store::{Entry, Home, Snapshot, StoreError, read_json};
use crate::warm::{self, WarmEntry, WarmMeta, WarmSnapshot, WarmStore};

/// A graph read without touching its files.
#[derive(Debug, Default)]
pub struct Peeked {
    /// The graph as it stands: snapshot plus the journal after it.
    pub graph: Graph,
    /// Journal sequence of the snapshot the graph started from (0 = none).
    pub snapshot_seq: u64,
    /// Damage found (torn or corrupt journal lines, entries that failed to
    /// apply), described; nothing was repaired.
    pub problems: Vec<String>,
}

/// A hot session read without its lock.
#[derive(Debug, Default)]
pub struct PeekedSession {
    /// The graph and what loading found.
    pub peeked: Peeked,
    /// `state.json` (default when missing).
    pub state: SessionState,
    /// The graph of the snapshot alone, before the journal entries.
    pub snapshot: Graph,
    /// The journal entries after the snapshot, in order.
    pub entries: Vec<(u64, Entry)>,
}

/// A warm store read without its lock.
#[derive(Debug, Default)]
pub struct PeekedWarm {
    /// The graph and what loading found.
    pub peeked: Peeked,
    /// The store's bookkeeping.
    pub meta: WarmMeta,
}

/// Reads the valid, checksummed entries of a journal after `after_seq`,
/// stopping at the first torn or corrupt line (reported, not removed).
pub fn journal<T: DeserializeOwned>(
    path: &Path,
    after_seq: u64,
    problems: &mut Vec<String>,
) -> Result<Vec<(u64, T)>, StoreError> {
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(StoreError::Io {
                action: "open",
                path: path.to_owned(),
                error,
            });
        }
    };
    let mut out = Vec::new();
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut lineno = 0usize;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|error| StoreError::Io {
                action: "read",
                path: path.to_owned(),
                error,
            })?;
        if n == 0 {
            break;
        }
        lineno += 1;
        let parsed = if buf.last() == Some(&b'\n') {
            parse_line::<T>(&buf[..n - 1])
        } else {
            None
        };
        match parsed {
            Some((seq, entry)) => {
                if seq > after_seq {
                    out.push((seq, entry));
                }
            }
            None => {
                problems.push(format!(
                    "{} line {lineno} is torn or corrupt; it and what follows were not read (nothing was changed)",
                    path.display()
                ));
                break;
            }
        }
    }
    Ok(out)
}

/// One journal line: `{"seq":N,"crc":C,"entry":{…}}`, the checksum over the
/// entry exactly as written.
fn parse_line<T: DeserializeOwned>(bytes: &[u8]) -> Option<(u64, T)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let seq = v.get("seq")?.as_u64()?;
    let crc = v.get("crc")?.as_u64()?;
    let start = text.find("\"entry\":")? + "\"entry\":".len();
    let body = text.get(start..text.len().checked_sub(1)?)?;
    if u64::from(crc32fast::hash(body.as_bytes())) != crc {
        return None;
    }
    let entry: T = serde_json::from_value(v.get("entry")?.clone()).ok()?;
    Some((seq, entry))
}

/// Reads a hot session: `snapshot.json`, the journal after it, `state.json`.
/// Fails when the session directory does not exist or the snapshot is not
/// valid JSON (a damaged snapshot is reported, never moved aside).
pub fn session(home: &Home, id: &str, config: &Config) -> Result<PeekedSession, StoreError> {
    let dir = home.session_dir(id)?;
    if !dir.is_dir() {
        return Err(StoreError::Io {
            action: "read session",
            path: dir,
            error: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    }
    let mut problems = Vec::new();
    // The state first: it is saved after each journal append, so the journal
    // read below holds at least the entries it records.
    let state: SessionState = match read_json(&dir.join("state.json")) {
        Ok(s) => s.unwrap_or_default(),
        Err(e) => {
            problems.push(e.to_string());
            SessionState::default()
        }
    };
    let snapshot: Snapshot = read_json(&dir.join("snapshot.json"))?.unwrap_or_default();
    let mut graph = Graph::from_doc(snapshot.doc).map_err(|e| StoreError::Corrupt {
        path: dir.join("snapshot.json"),
        reason: format!("invalid graph: {e}"),
    })?;
    let entries: Vec<(u64, Entry)> =
        journal(&dir.join("journal.jsonl"), snapshot.seq, &mut problems)?;
    let base = graph.clone();
    let rules = rules(config);
    for (seq, e) in &entries {
        if let Err(err) = apply_entry(&mut graph, e, id, &rules) {
            problems.push(format!("journal entry {seq} did not apply: {err}"));
        }
    }
    let last = entries
        .last()
        .map_or(snapshot.seq, |e| e.0.max(snapshot.seq));
    if state.journal_seq > last {
        problems.push(format!(
            "state.json records journal entry {} as written but snapshot.json and journal.jsonl end at {last}: entries {}..={} are missing",
            state.journal_seq,
            last + 1,
            state.journal_seq
        ));
    }
    let mut state = state;
    state.session = id.to_owned();
    Ok(PeekedSession {
        peeked: Peeked {
            graph,
            snapshot_seq: snapshot.seq,
            problems,
        },
        state,
        snapshot: base,
        entries,
    })
}

/// Reads a warm store (`global`, `unscoped` or a project key): the snapshot
/// (the previous one when the current is missing or damaged) and both
/// journals after it. A store that was never written reads as empty.
pub fn warm(home: &Home, key: &str) -> Result<PeekedWarm, StoreError> {
    let dir = WarmStore::dir_of(home, key)?;
    let mut problems = Vec::new();
    // head.json first: it is rewritten after each journal append.
    let head = match read_json::<warm::WarmHead>(&dir.join("head.json")) {
        Ok(h) => h.unwrap_or_default(),
        Err(e) => {
            problems.push(e.to_string());
            warm::WarmHead::default()
        }
    };
    let mut base: Option<WarmSnapshot> = None;
    for name in ["snapshot.json", "snapshot.prev.json"] {
        match read_json::<WarmSnapshot>(&dir.join(name)) {
            Ok(Some(s)) => {
                base = Some(s);
                break;
            }
            Ok(None) => {}
            Err(e) => problems.push(e.to_string()),
        }
    }
    let WarmSnapshot { seq, doc, mut meta } = base.unwrap_or_default();
    let mut graph = Graph::from_doc(doc).map_err(|e| StoreError::Corrupt {
        path: dir.join("snapshot.json"),
        reason: format!("invalid graph: {e}"),
    })?;
    let mut entries: Vec<(u64, WarmEntry)> =
        journal(&dir.join("journal.prev.jsonl"), seq, &mut problems)?;
    entries.extend(journal::<WarmEntry>(
        &dir.join("journal.jsonl"),
        seq,
        &mut problems,
    )?);
    entries.sort_by_key(|(s, _)| *s);
    entries.dedup_by_key(|(s, _)| *s);
    for (s, e) in &entries {
        if let Err(why) = warm::apply_entry(&mut graph, &mut meta, e) {
            problems.push(format!("warm journal entry {s} partly failed: {why}"));
        }
    }
    let last = entries.last().map_or(seq, |e| e.0.max(seq));
    if head.seq > last {
        problems.push(format!(
            "head.json records warm journal entry {} as written but the snapshot and journals end at {last}: entries {}..={} are missing",
            head.seq,
            last + 1,
            head.seq
        ));
    }
    Ok(PeekedWarm {
        peeked: Peeked {
            graph,
            snapshot_seq: seq,
            problems,
        },
        meta,
    })
}
