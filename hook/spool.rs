//! The spool: per-session, append-only JSONL queues of work from the hook to
//! the daemon.
//!
//! The hook owns the spool (it only appends); the daemon owns everything in
//! the session directory. That split is what lets the hook answer without
//! waiting for the session lock. Files, under `$ROLLGRAPH_HOME/spool/`:
//!
//! - `<session>.jsonl`: one [`JobLine`] per line, appended under an advisory
//!   lock on the file itself (held for one `write`). Bounded at
//!   [`SPOOL_MAX_BYTES`]: past it the hook refuses new jobs with a log line
//!   (the transcript still has the turns; a later reconcile recovers them).
//! - `<session>.off`: how far the daemon has processed (a byte offset). The
//!   daemon truncates the spool to zero once it has caught up.
//! - `<session>.inject.json`: what the hook injected into the session (full
//!   blocks and updates) and a SessionStart waiting for the first prompt.
//!   Hooks read, change and rewrite it holding `<session>.inject.lock`
//!   ([`lock_inject`]), so two hook processes of one session (a SessionStart
//!   and a prompt the host ran at once, two quick prompts) never both send
//!   the full block or lose each other's update.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use rollgraph_engine::gate::GateDecision;
use rollgraph_engine::store::{Home, valid_session_id};
use serde::{Deserialize, Serialize};

/// A spool file larger than this refuses new jobs.
pub const SPOOL_MAX_BYTES: u64 = 4 << 20;

/// Longest prompt or reply text kept in one job (characters).
pub const MAX_TEXT_CHARS: usize = 16_000;

/// How long the hook waits for the spool lock before giving up.
const LOCK_BUDGET: Duration = Duration::from_millis(50);

/// Most jobs the daemon takes from one spool in one batch.
pub const BATCH_MAX: usize = 256;

/// One unit of work for the daemon.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// SessionStart: make sure the session exists; unless `compact`, recover
    /// unfinished sessions and seed from the warm graph.
    Start {
        /// startup | resume | clear | compact.
        source: String,
        /// Tokens the hook injected from the last render.
        #[serde(default)]
        injected_tokens: usize,
    },
    /// UserPromptSubmit: a new turn for the gate (and maybe a probe).
    Turn {
        /// The prompt, redacted.
        prompt: String,
        /// An inline gate decision (old spools; the hook no longer runs the
        /// gate: the daemon's decides).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gate: Option<GateDecision>,
        /// Tokens the hook injected from the last render.
        #[serde(default)]
        injected_tokens: usize,
    },
    /// Stop: the assistant's reply to the current turn, redacted.
    Reply {
        /// The reply text.
        text: String,
    },
    /// PreCompact / SessionEnd: reconcile the hot graph into the warm one.
    Reconcile {
        /// `compaction` or `session_end`.
        reason: String,
    },
    /// PostCompact: the host compacted the conversation.
    Compacted,
    /// An expansion that could not be applied directly (the session was
    /// busy): the daemon resolves the handle and raises its nodes.
    Expand {
        /// The handle or node id.
        handle: String,
    },
}

/// A job with its envelope, as one spool line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobLine {
    /// The session.
    pub session: String,
    /// The host (`claude`, `codex`).
    #[serde(default)]
    pub host: String,
    /// The project directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The host's transcript file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// When the hook saw it.
    pub ts: DateTime<Utc>,
    /// The work.
    #[serde(flatten)]
    pub job: Job,
}

/// The spool directory.
pub fn dir(home: &Home) -> PathBuf {
    home.root().join("spool")
}

fn file(home: &Home, session: &str, ext: &str) -> Result<PathBuf> {
    if !valid_session_id(session) {
        bail!("invalid session id {session:?}");
    }
    Ok(dir(home).join(format!("{session}.{ext}")))
}

/// Path of a session's spool.
pub fn spool_path(home: &Home, session: &str) -> Result<PathBuf> {
    file(home, session, "jsonl")
}

/// Path of the hook's own record of what a session was injected.
pub fn inject_path(home: &Home, session: &str) -> Result<PathBuf> {
    file(home, session, "inject.json")
}

/// How long a hook waits for another hook process of the same session to
/// be done with the inject state. That holder only reads a render, prints
/// and writes two small files; past this it is stuck, and the waiter goes on
/// without injecting (see `hook::handle`).
pub const INJECT_LOCK_WAIT: Duration = Duration::from_millis(150);

/// An exclusive hold on a session's inject state: an advisory lock
/// (`flock`) on `<session>.inject.lock`, released when dropped or when the
/// process dies.
#[derive(Debug)]
pub struct InjectLock {
    file: File,
    path: PathBuf,
}

impl InjectLock {
    /// Removes the lock file while still holding it (a session that never
    /// had a prompt leaves nothing behind). A waiter that then gets the
    /// removed file's lock sees it is no longer at the path and starts over.
    pub fn remove(self) {
        let _ = fs::remove_file(&self.path);
        drop(self.file);
    }
}

fn same_file(f: &File, path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Takes the lock on a session's inject state, waiting at most `budget` for
/// another hook process holding it.
pub fn lock_inject(home: &Home, session: &str, budget: Duration) -> Result<InjectLock> {
    let path = file(home, session, "inject.lock")?;
    let start = Instant::now();
    loop {
        let open = || {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&path)
        };
        let f = match open() {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                create_dir(home)?;
                open().with_context(|| format!("opening {}", path.display()))?
            }
            Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
        };
        let left = budget.saturating_sub(start.elapsed());
        lock_within(&f, left).with_context(|| {
            format!("another hook of session {session} holds its inject state (waited {budget:?})")
        })?;
        // Removed (or replaced) while we waited: that lock guards nothing.
        if same_file(&f, &path) {
            return Ok(InjectLock { file: f, path });
        }
        if start.elapsed() >= budget {
            bail!("the inject lock of session {session} kept changing (waited {budget:?})");
        }
    }
}

fn offset_path(home: &Home, session: &str) -> Result<PathBuf> {
    file(home, session, "off")
}

/// Creates the spool directory, readable by this user only (it holds
/// redacted prompts).
pub fn create_dir(home: &Home) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let d = dir(home);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)
        .with_context(|| format!("creating {}", d.display()))
}

/// Cuts a text to [`MAX_TEXT_CHARS`] characters.
pub fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

fn lock_within(f: &File, budget: Duration) -> Result<()> {
    let start = Instant::now();
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) if start.elapsed() < budget => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(fs::TryLockError::WouldBlock) => bail!("spool is locked (waited {budget:?})"),
            Err(fs::TryLockError::Error(e)) => return Err(e).context("locking the spool"),
        }
    }
}

/// Appends a job to its session's spool. Refuses (with an error the caller
/// logs) when the spool is over [`SPOOL_MAX_BYTES`].
pub fn append(home: &Home, line: &JobLine) -> Result<()> {
    let path = spool_path(home, &line.session)?;
    let mut bytes = serde_json::to_vec(line).context("serialising a job")?;
    bytes.push(b'\n');
    let mut f = match OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .mode(0o600)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_dir(home)?;
            OpenOptions::new()
                .create(true)
                .read(true)
                .append(true)
                .mode(0o600)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))?
        }
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    lock_within(&f, LOCK_BUDGET)?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len + bytes.len() as u64 > SPOOL_MAX_BYTES {
        bail!(
            "spool {} is full ({len} bytes): job dropped",
            path.display()
        );
    }
    if len > 0 {
        // A writer killed mid-line leaves a torn tail: end it first so this
        // job starts on its own line (the daemon skips the torn one).
        let mut last = [0u8; 1];
        if f.seek(SeekFrom::Start(len - 1)).is_ok()
            && f.read_exact(&mut last).is_ok()
            && last[0] != b'\n'
        {
            bytes.insert(0, b'\n');
        }
    }
    f.write_all(&bytes)
        .with_context(|| format!("appending to {}", path.display()))?;
    Ok(())
}

/// Sessions with a spool file.
pub fn sessions(home: &Home) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir(home))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".jsonl"))
                .map(str::to_owned)
        })
        .filter(|s| valid_session_id(s))
        .collect();
    v.sort();
    v
}

/// A batch of jobs taken from a spool.
#[derive(Debug, Default)]
pub struct Batch {
    /// The jobs with the offset just past each.
    pub jobs: Vec<(JobLine, u64)>,
    /// Lines that were not valid jobs (skipped), described.
    pub skipped: Vec<String>,
    /// Offset the batch started at.
    pub start: u64,
    /// Offset after the whole batch (including skipped lines).
    pub end: u64,
}

/// Reads up to `max` unprocessed jobs of a session (daemon side).
pub fn take(home: &Home, session: &str, max: usize) -> Result<Batch> {
    let path = spool_path(home, session)?;
    let mut f = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Batch::default()),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    lock_within(&f, Duration::from_secs(2))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut start = read_offset(home, session);
    if start > len {
        // The spool was truncated after the offset was written.
        start = 0;
    }
    let mut batch = Batch {
        start,
        end: start,
        ..Batch::default()
    };
    if start == len {
        return Ok(batch);
    }
    f.seek(SeekFrom::Start(start))
        .context("seeking the spool")?;
    let mut data = Vec::new();
    Read::by_ref(&mut f)
        .take(SPOOL_MAX_BYTES * 2)
        .read_to_end(&mut data)
        .context("reading the spool")?;
    // Writers hold the lock for a whole line, so under the lock an
    // unterminated tail can only be a torn write: skip it too.
    let mut pos = 0usize;
    while pos < data.len() && batch.jobs.len() < max {
        let end = data[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| pos + i + 1)
            .unwrap_or(data.len());
        let raw = &data[pos..end];
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        let offset = start + end as u64;
        if !text.iter().all(u8::is_ascii_whitespace) {
            match serde_json::from_slice::<JobLine>(text) {
                Ok(j) if j.session == session => batch.jobs.push((j, offset)),
                Ok(j) => batch.skipped.push(format!(
                    "job for session {} in the spool of {session}",
                    j.session
                )),
                Err(e) => batch.skipped.push(format!(
                    "unreadable spool line at byte {}: {e}",
                    start + pos as u64
                )),
            }
        }
        batch.end = offset;
        pos = end;
    }
    Ok(batch)
}

fn read_offset(home: &Home, session: &str) -> u64 {
    offset_path(home, session)
        .ok()
        .and_then(|p| fs::read_to_string(p).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Records that everything before `offset` is processed.
pub fn commit(home: &Home, session: &str, offset: u64) -> Result<()> {
    let path = offset_path(home, session)?;
    rollgraph_engine::store::write_atomic(&path, offset.to_string().as_bytes())?;
    Ok(())
}

/// Empties a spool the daemon has caught up with (so it never grows without
/// bound); removes it and its offset when nothing new arrived.
pub fn compact(home: &Home, session: &str) -> Result<()> {
    let path = spool_path(home, session)?;
    let f = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    lock_within(&f, Duration::from_secs(2))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if read_offset(home, session) >= len {
        // The offset first: a daemon killed between the two steps leaves
        // jobs already applied to read again (skipped by their ids), never
        // an old offset into a new spool, which would land mid-line past
        // the jobs hooks append after the truncation and lose them.
        commit(home, session, 0)?;
        f.set_len(0).context("truncating the spool")?;
    }
    Ok(())
}

/// Attempts after which a job that never finished is set aside.
pub const MAX_ATTEMPTS: u32 = 2;

/// Marks a job as started (`<session>.inflight`: its id and attempt count)
/// and returns this attempt's number. A job whose marker survives (its
/// daemon was killed or hung) counts one more attempt each time it is read.
pub fn begin_job(home: &Home, session: &str, job_id: &str) -> Result<u32> {
    let path = file(home, session, "inflight")?;
    let previous = fs::read_to_string(&path).unwrap_or_default();
    let attempts = match previous.split_once(' ') {
        Some((id, n)) if id == job_id => n.trim().parse::<u32>().unwrap_or(0),
        _ => 0,
    } + 1;
    rollgraph_engine::store::write_atomic(&path, format!("{job_id} {attempts}").as_bytes())?;
    Ok(attempts)
}

/// Clears the in-flight marker once a job is done (or failed cleanly).
pub fn end_job(home: &Home, session: &str) {
    if let Ok(p) = file(home, session, "inflight") {
        let _ = fs::remove_file(p);
    }
}

/// Most bytes kept in a session's set-aside file.
const FAILED_MAX_BYTES: u64 = 1 << 20;

/// Sets a job aside in `<session>.failed` (JSON lines) with the reason, so it is
/// not retried forever and can be looked at.
pub fn set_aside(home: &Home, session: &str, line: &JobLine, reason: &str) -> Result<()> {
    let path = file(home, session, "failed")?;
    if fs::metadata(&path).map(|m| m.len()).unwrap_or(0) > FAILED_MAX_BYTES {
        bail!("{} is full; job dropped: {reason}", path.display());
    }
    let mut v = serde_json::to_value(line)?;
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "reason".into(),
            serde_json::Value::String(reason.to_owned()),
        );
    }
    let mut bytes = serde_json::to_vec(&v)?;
    bytes.push(b'\n');
    let mut f = rollgraph_engine::store::open_private_append(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(&bytes)?;
    Ok(())
}

/// Jobs set aside for a session, with their reasons.
pub fn set_aside_jobs(home: &Home, session: &str) -> Vec<serde_json::Value> {
    file(home, session, "failed")
        .ok()
        .and_then(|p| fs::read_to_string(p).ok())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Whether a session has unprocessed jobs.
pub fn session_pending(home: &Home, s: &str) -> bool {
    let len = spool_path(home, s)
        .ok()
        .and_then(|p| fs::metadata(p).ok())
        .map(|m| m.len())
        .unwrap_or(0);
    len > read_offset(home, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(session: &str, text: &str) -> JobLine {
        JobLine {
            session: session.into(),
            host: "claude".into(),
            cwd: None,
            transcript_path: None,
            ts: DateTime::from_timestamp(0, 0).unwrap_or_default(),
            job: Job::Reply { text: text.into() },
        }
    }

    #[test]
    fn append_take_commit_compact() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        for i in 0..3 {
            append(&home, &line("s1", &format!("r{i}"))).unwrap_or_else(|e| panic!("{e}"));
        }
        let b = take(&home, "s1", 2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.jobs.len(), 2);
        commit(&home, "s1", b.end).unwrap_or_else(|e| panic!("{e}"));
        let b = take(&home, "s1", 10).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.jobs.len(), 1);
        assert_eq!(b.jobs[0].0.job, Job::Reply { text: "r2".into() });
        commit(&home, "s1", b.end).unwrap_or_else(|e| panic!("{e}"));
        assert!(!session_pending(&home, "s1"));
        compact(&home, "s1").unwrap_or_else(|e| panic!("{e}"));
        let len = fs::metadata(spool_path(&home, "s1").unwrap_or_default())
            .map(|m| m.len())
            .unwrap_or(99);
        assert_eq!(len, 0);
        append(&home, &line("s1", "after")).unwrap_or_else(|e| panic!("{e}"));
        let b = take(&home, "s1", 10).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.jobs.len(), 1);
    }

    #[test]
    fn a_torn_line_is_skipped_and_the_next_job_survives() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        append(&home, &line("s1", "one")).unwrap_or_else(|e| panic!("{e}"));
        let p = spool_path(&home, "s1").unwrap_or_default();
        let mut f = OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap_or_else(|e| panic!("{e}"));
        f.write_all(b"{\"session\":\"s1\",\"ts\":")
            .unwrap_or_else(|e| panic!("{e}"));
        drop(f);
        append(&home, &line("s1", "two")).unwrap_or_else(|e| panic!("{e}"));
        let b = take(&home, "s1", 10).unwrap_or_else(|e| panic!("{e}"));
        let texts: Vec<_> = b.jobs.iter().map(|(j, _)| j.job.clone()).collect();
        assert_eq!(
            texts,
            vec![
                Job::Reply { text: "one".into() },
                Job::Reply { text: "two".into() }
            ]
        );
        assert_eq!(b.skipped.len(), 1);
    }
}
