//! Episodes: what was actually said, kept so memory can always fall back to
//! the conversation itself.
//!
//! Every session appends its turns' prose (the user's prompt and the
//! assistant's text reply, never tool payloads), already redacted, to
//! `sessions/<id>/episodes.jsonl`; a reconcile copies the lines a warm store
//! has not seen yet to `warm/<key>/episodes.jsonl`. Both logs use the
//! journal's checksummed framing (`{"seq":…,"crc":…,"entry":…}`), so a torn
//! or garbled line is skipped and reported while the lines after it are
//! kept. Appends are not fsynced one by one: a killed process loses nothing
//! it wrote, and a power cut can cost at most the newest lines, which the
//! host's transcript still holds.
//!
//! Both logs are bounded ([`crate::config::EpisodesConfig`]): when one grows
//! past its limit it is rewritten keeping the newest lines that fit three
//! quarters of it (oldest first out), damaged lines copied aside to a
//! quarantine file first. Readers never change a log.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store::{
    StoreError, frame_record, open_private_append, parse_line, quarantine, scan_journal,
    write_atomic,
};

/// The log's file name, in a session's and in a warm store's directory.
pub const FILE: &str = "episodes.jsonl";

/// Who said it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The person at the keyboard.
    User,
    /// The coding agent.
    Assistant,
}

impl Speaker {
    /// `user` or `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
        }
    }
}

/// One thing said in one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The session it was said in.
    pub session: String,
    /// The turn (1-based, the session's prompt count).
    pub turn: u32,
    /// Who said it.
    pub speaker: Speaker,
    /// When.
    pub at: DateTime<Utc>,
    /// What was said (redacted, capped).
    pub text: String,
}

/// A log read without changing it.
#[derive(Debug, Default)]
pub struct EpisodeRead {
    /// Every valid line, oldest first, with its sequence number.
    pub episodes: Vec<(u64, Episode)>,
    /// What was wrong, in words (empty when the log is healthy).
    pub damage: Vec<String>,
}

/// Reads a log (a missing one reads as empty). Damaged lines are skipped
/// and described; reading resyncs on the next record.
pub fn read(path: &Path) -> Result<EpisodeRead, StoreError> {
    let scan = scan_journal::<Episode>(path)?;
    Ok(EpisodeRead {
        episodes: scan.entries,
        damage: scan.damage,
    })
}

/// Cuts `text` to at most `max_chars` characters on a word boundary when one
/// is near, marking the cut.
pub fn cap(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let end = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(i, _)| i);
    let cut = &text[..end];
    let cut = match cut.rfind(char::is_whitespace) {
        Some(i) if i > end * 3 / 4 => &cut[..i],
        _ => cut,
    };
    format!("{} …", cut.trim_end())
}

/// The sequence number of a log's last complete record (0 for an empty or
/// missing log), read from its tail.
pub fn last_seq(path: &Path) -> Result<u64, StoreError> {
    Ok(tail(path)?.0)
}

/// A log's last complete record's sequence number and whether its last
/// line is torn (no newline: a killed writer), from one read of its tail.
fn tail(path: &Path) -> Result<(u64, bool), StoreError> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, false)),
        Err(e) => return Err(io_err("open", path, e)),
    };
    let len = f.metadata().map_err(|e| io_err("stat", path, e))?.len();
    // Records are capped, so the last whole one starts within this window;
    // when the tail is damaged the whole log is scanned.
    let window = 64 * 1024u64;
    let from = len.saturating_sub(window);
    f.seek(SeekFrom::Start(from))
        .map_err(|e| io_err("seek", path, e))?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail)
        .map_err(|e| io_err("read", path, e))?;
    let torn = tail.last().is_some_and(|&b| b != b'\n');
    for line in tail.split(|&b| b == b'\n').rev() {
        if let Some(seq) = seq_of(line) {
            return Ok((seq, torn));
        }
    }
    let seq = read(path)?.episodes.last().map_or(0, |(s, _)| *s);
    Ok((seq, torn))
}

fn seq_of(line: &[u8]) -> Option<u64> {
    parse_line::<serde::de::IgnoredAny>(line).map(|(seq, _)| seq)
}

fn io_err(action: &'static str, path: &Path, e: std::io::Error) -> StoreError {
    crate::store::io(action, path)(e)
}

/// Appends episodes to the log at `path` (created 0600), then trims it to
/// `max_bytes` when it grew past that. Returns the last sequence written.
pub fn append(path: &Path, episodes: &[Episode], max_bytes: u64) -> Result<u64, StoreError> {
    let (mut seq, torn) = tail(path)?;
    if episodes.is_empty() {
        return Ok(seq);
    }
    if let Some(dir) = path.parent() {
        crate::store::create_private_dir(dir)?;
    }
    let mut out = String::new();
    // A torn last line (a killed writer) gets its own line, so the new
    // records start clean; readers report and skip it.
    if torn {
        out.push('\n');
    }
    for e in episodes {
        seq += 1;
        let body = serde_json::to_string(e).map_err(|err| StoreError::Corrupt {
            path: path.to_owned(),
            reason: err.to_string(),
        })?;
        out.push_str(&frame_record(seq, &body));
    }
    let mut f = open_private_append(path).map_err(|e| io_err("open", path, e))?;
    f.write_all(out.as_bytes())
        .map_err(|e| io_err("append to", path, e))?;
    let len = f.metadata().map_err(|e| io_err("stat", path, e))?.len();
    drop(f);
    if len > max_bytes {
        trim(path, max_bytes)?;
    }
    Ok(seq)
}

/// What a trim did.
#[derive(Debug, Default, PartialEq)]
pub struct Trimmed {
    /// Old lines dropped to fit.
    pub dropped: usize,
    /// Where damaged lines were copied aside (if any were found).
    pub quarantined: Option<std::path::PathBuf>,
}

/// Rewrites the log keeping the newest valid lines that fit in three
/// quarters of `max_bytes` (so trims are rare); damaged lines are copied to
/// a quarantine file first. The sequence numbers are kept.
pub fn trim(path: &Path, max_bytes: u64) -> Result<Trimmed, StoreError> {
    let scan = scan_journal::<serde::de::IgnoredAny>(path)?;
    let mut t = Trimmed::default();
    if !scan.bad.is_empty() {
        t.quarantined = Some(quarantine(path, &scan.bad)?);
    }
    let keep_bytes = (max_bytes / 4 * 3) as usize;
    let lines: Vec<&[u8]> = scan
        .good
        .split_inclusive(|&b| b == b'\n')
        .collect::<Vec<_>>();
    let mut size = 0usize;
    let mut first = lines.len();
    while first > 0 && size + lines[first - 1].len() <= keep_bytes {
        first -= 1;
        size += lines[first].len();
    }
    t.dropped = first;
    let kept: Vec<u8> = lines[first..].concat();
    write_atomic(path, &kept)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(turn: u32, speaker: Speaker, text: &str) -> Episode {
        Episode {
            session: "s1".into(),
            turn,
            speaker,
            at: "2026-11-02T10:00:00Z".parse().expect("time"),
            text: text.into(),
        }
    }

    #[test]
    fn append_read_and_resume_the_sequence() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join(FILE);
        assert_eq!(
            append(&p, &[ep(1, Speaker::User, "hello")], 1 << 20).expect("a"),
            1
        );
        assert_eq!(
            append(
                &p,
                &[ep(1, Speaker::Assistant, "hi"), ep(2, Speaker::User, "x")],
                1 << 20
            )
            .expect("b"),
            3
        );
        let r = read(&p).expect("read");
        assert!(r.damage.is_empty());
        let seqs: Vec<u64> = r.episodes.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, vec![1, 2, 3]);
        assert_eq!(r.episodes[1].1.speaker, Speaker::Assistant);
        assert_eq!(last_seq(&p).expect("seq"), 3);
    }

    #[test]
    fn a_torn_tail_is_reported_and_later_lines_are_kept() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join(FILE);
        append(&p, &[ep(1, Speaker::User, "first")], 1 << 20).expect("a");
        let mut f = open_private_append(&p).expect("open");
        f.write_all(b"{\"seq\":2,\"crc\":1,\"entry\":{\"sess")
            .expect("torn");
        drop(f);
        append(&p, &[ep(2, Speaker::User, "second")], 1 << 20).expect("b");
        let r = read(&p).expect("read");
        let texts: Vec<&str> = r.episodes.iter().map(|(_, e)| e.text.as_str()).collect();
        assert_eq!(texts, vec!["first", "second"]);
        assert_eq!(r.damage.len(), 1, "{:?}", r.damage);
    }

    #[test]
    fn the_log_is_bounded_oldest_first_out() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join(FILE);
        for i in 1..=200 {
            append(&p, &[ep(i, Speaker::User, &"word ".repeat(40))], 8 * 1024).expect("a");
        }
        let len = std::fs::metadata(&p).expect("meta").len();
        assert!(len <= 8 * 1024, "{len}");
        let r = read(&p).expect("read");
        assert!(r.damage.is_empty());
        assert_eq!(r.episodes.last().expect("last").1.turn, 200);
        assert!(r.episodes.first().expect("first").1.turn > 150);
        // Sequence numbers survive the trims.
        assert_eq!(last_seq(&p).expect("seq"), 200);
    }

    #[test]
    fn cap_cuts_on_a_word_boundary() {
        let long = "alpha beta gamma delta epsilon ".repeat(20);
        let c = cap(&long, 50);
        assert!(c.chars().count() <= 52, "{c}");
        assert!(c.ends_with(" …"));
        assert_eq!(cap("short", 50), "short");
        // Multi-byte text never splits a character.
        let wide = "é".repeat(100);
        assert!(cap(&wide, 10).starts_with("éééé"));
    }
}
