//! A lenient reader of Claude Code transcripts (JSONL).
//!
//! It turns the line soup into typed turns: one typed user prompt plus the
//! assistant text that answered it (blocks split across lines are merged by
//! `message.id`), and the files its tools touched. It skips our own
//! injections (`hook_additional_context` attachments), sidechains, meta lines
//! and unknown line types; a compact boundary or compact summary becomes a
//! [`Event::Compaction`]. A broken line is a warning, never fatal. Every
//! text is redacted as it is read.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::redact::redact_owned;

/// One turn: a typed prompt and the reply to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// 1-based index among the session's typed prompts.
    pub index: u32,
    /// The user's prompt, redacted.
    pub user: String,
    /// The assistant's text reply (all text blocks), redacted.
    pub assistant: String,
    /// Files the assistant's tools read or wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// When the prompt was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<DateTime<Utc>>,
}

/// Something that happened in a transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A turn.
    Turn(Turn),
    /// The host compacted the conversation here.
    Compaction {
        /// When.
        timestamp: Option<DateTime<Utc>>,
    },
}

/// A parsed transcript.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The session id found in the lines.
    pub session_id: Option<String>,
    /// The working directory found in the lines.
    pub cwd: Option<String>,
    /// Turns and compactions in order.
    pub events: Vec<Event>,
    /// Lines skipped as broken, with line numbers.
    pub warnings: Vec<String>,
    /// Lines skipped on purpose (ours, sidechains, unknown types).
    pub skipped: usize,
}

impl Transcript {
    /// When the last turn was sent, else now: the clock a replay of this
    /// transcript ends at.
    pub fn ended_at(&self) -> DateTime<Utc> {
        self.turns()
            .last()
            .and_then(|t| t.timestamp)
            .unwrap_or_else(crate::clock::now)
    }

    /// The turns only.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> {
        self.events.iter().filter_map(|e| match e {
            Event::Turn(t) => Some(t),
            Event::Compaction { .. } => None,
        })
    }
}

/// Why a transcript could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file could not be opened or read.
    #[error("cannot read transcript {path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
}

/// Largest transcript read whole (replay, reconcile); larger ones are refused.
pub const MAX_TRANSCRIPT_BYTES: u64 = 512 << 20;

#[cfg(any(target_os = "linux", target_os = "android"))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const O_NONBLOCK: i32 = 0x0004;

/// Opens a file to read as a transcript without ever blocking: it is opened
/// non-blocking (a FIFO with no writer or a device answers at once instead
/// of hanging the reader) and refused unless it is a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        let what = if m.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{what}: only regular files are read as transcripts"),
        ));
    }
    Ok(f)
}

/// Reads a Claude Code transcript file (a regular file of at most
/// [`MAX_TRANSCRIPT_BYTES`]).
pub fn read_claude(path: &Path) -> Result<Transcript, TranscriptError> {
    Ok(parse_claude(&read_text(path)?))
}

/// Reads a conversation file's text: only a regular file, opened without
/// blocking, at most [`MAX_TRANSCRIPT_BYTES`]; bad UTF-8 is replaced.
pub fn read_text(path: &Path) -> Result<String, TranscriptError> {
    use std::io::Read;
    let err = |error| TranscriptError::Io {
        path: path.display().to_string(),
        error,
    };
    let f = open_regular(path).map_err(err)?;
    let len = f.metadata().map(|m| m.len()).map_err(err)?;
    if len > MAX_TRANSCRIPT_BYTES {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{len} bytes is over the {MAX_TRANSCRIPT_BYTES}-byte limit"),
        )));
    }
    let mut bytes = Vec::new();
    f.take(MAX_TRANSCRIPT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(err)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn timestamp(v: &Value) -> Option<DateTime<Utc>> {
    v.get("timestamp")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&Utc))
}

/// Text of a typed user prompt, or `None` when the line is not one.
fn typed_prompt(v: &Value) -> Option<String> {
    if v.get("isMeta").and_then(Value::as_bool) == Some(true)
        || v.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
        || v.get("toolUseResult").is_some()
    {
        return None;
    }
    let content = v.get("message")?.get("content")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            if blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            {
                return None;
            }
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => return None,
    };
    let t = text.trim();
    if t.is_empty()
        || t.starts_with("<command-name>")
        || t.starts_with("<local-command-stdout>")
        || t.starts_with("<command-message>")
        || t.starts_with("Caveat:")
        || t.starts_with("[Request interrupted")
    {
        return None;
    }
    Some(strip_system_reminders(t))
}

fn strip_system_reminders(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(start) = rest.find("<system-reminder>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</system-reminder>") {
            Some(end) => rest = &rest[start + end + "</system-reminder>".len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// The JSON objects of a JSON-lines text with their 0-based line numbers;
/// a blank line is passed over, anything else that is not a JSON object is
/// an `Err` with the warning to report ("line N: skipped, …").
pub fn json_lines(text: &str) -> impl Iterator<Item = Result<(usize, Value), String>> + '_ {
    text.lines().enumerate().filter_map(|(lineno, line)| {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        Some(match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => Ok((lineno, v)),
            Ok(_) => Err(format!("line {}: skipped, not a JSON object", lineno + 1)),
            Err(e) => Err(format!("line {}: skipped, not JSON ({e})", lineno + 1)),
        })
    })
}

/// Parses the text of a Claude Code transcript.
pub fn parse_claude(text: &str) -> Transcript {
    let mut t = Transcript::default();
    let mut current: Option<Turn> = None;
    let mut seen_blocks: std::collections::HashSet<(String, String)> =
        std::collections::HashSet::new();
    let mut index = 0u32;
    for item in json_lines(text) {
        let (lineno, v) = match item {
            Ok(x) => x,
            Err(w) => {
                t.warnings.push(w);
                continue;
            }
        };
        if t.session_id.is_none() {
            t.session_id = v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if t.cwd.is_none() {
            t.cwd = v.get("cwd").and_then(Value::as_str).map(str::to_owned);
        }
        if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            t.skipped += 1;
            continue;
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "user" => {
                if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                    if !matches!(t.events.last(), Some(Event::Compaction { .. })) {
                        if let Some(turn) = current.take() {
                            t.events.push(Event::Turn(turn));
                        }
                        t.events.push(Event::Compaction {
                            timestamp: timestamp(&v),
                        });
                    }
                    continue;
                }
                if v.get("message").is_none() {
                    t.warnings.push(format!(
                        "line {}: skipped, user line without a message",
                        lineno + 1
                    ));
                    continue;
                }
                if let Some(prompt) = typed_prompt(&v) {
                    if let Some(turn) = current.take() {
                        t.events.push(Event::Turn(turn));
                    }
                    index += 1;
                    current = Some(Turn {
                        index,
                        user: redact_owned(&prompt),
                        assistant: String::new(),
                        files: Vec::new(),
                        timestamp: timestamp(&v),
                    });
                } else {
                    t.skipped += 1;
                }
            }
            "assistant" => {
                let Some(turn) = current.as_mut() else {
                    t.skipped += 1;
                    continue;
                };
                let msg = v.get("message");
                let id = msg
                    .and_then(|m| m.get("id"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let Some(blocks) = msg.and_then(|m| m.get("content")).and_then(Value::as_array)
                else {
                    if let Some(s) = msg.and_then(|m| m.get("content")).and_then(Value::as_str) {
                        push_text(&mut turn.assistant, s);
                    } else {
                        t.warnings.push(format!(
                            "line {}: skipped, assistant line without content",
                            lineno + 1
                        ));
                    }
                    continue;
                };
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(s) = b.get("text").and_then(Value::as_str) {
                                // The same block can be written twice (streaming rewrites).
                                if seen_blocks.insert((id.clone(), s.to_owned())) {
                                    push_text(&mut turn.assistant, s);
                                }
                            }
                        }
                        Some("tool_use") => {
                            if let Some(input) = b.get("input") {
                                for key in ["file_path", "path", "notebook_path"] {
                                    if let Some(p) = input.get(key).and_then(Value::as_str) {
                                        let p = redact_owned(p);
                                        if !turn.files.contains(&p) && turn.files.len() < 64 {
                                            turn.files.push(p);
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            "system" => {
                if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") {
                    if let Some(turn) = current.take() {
                        t.events.push(Event::Turn(turn));
                    }
                    t.events.push(Event::Compaction {
                        timestamp: timestamp(&v),
                    });
                } else {
                    t.skipped += 1;
                }
            }
            _ => t.skipped += 1,
        }
    }
    if let Some(turn) = current.take() {
        t.events.push(Event::Turn(turn));
    }
    t
}

fn push_text(buf: &mut String, s: &str) {
    let s = redact_owned(s.trim());
    if s.is_empty() {
        return;
    }
    if !buf.is_empty() {
        buf.push('\n');
    }
    buf.push_str(&s);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = r#"{"type":"user","sessionId":"s1","cwd":"/p","message":{"role":"user","content":"Add retry to fetch()"},"uuid":"1","timestamp":"2026-08-20T09:00:00.028Z"}
{"type":"attachment","attachment":{"type":"hook_additional_context","content":["<rolling-memory>Zanzibar</rolling-memory>"]},"uuid":"2"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"hmm"}]},"uuid":"3"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/src/net.rs"}}]},"uuid":"4"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"fn fetch() {}"}]},"toolUseResult":{},"uuid":"5"}
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"Added a retry loop."}]},"uuid":"6"}
this is not json
{"type":"user","isSidechain":true,"message":{"role":"user","content":"sidechain prompt"},"uuid":"7"}
{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":1},"uuid":"8"}
{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary"},"uuid":"9"}
{"type":"quantum","uuid":"10"}
{"type":"user","message":{"role":"user","content":"My key is sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu"},"uuid":"11"}
{"type":"user","message":{"role":"user","content":"trunc"#;

    #[test]
    fn reads_turns_and_skips_what_is_not_ours_to_read() {
        let t = parse_claude(LINES);
        assert_eq!(t.session_id.as_deref(), Some("s1"));
        let turns: Vec<&Turn> = t.turns().collect();
        assert_eq!(turns.len(), 2, "{:?}", t.events);
        assert_eq!(turns[0].user, "Add retry to fetch()");
        assert_eq!(turns[0].assistant, "Added a retry loop.");
        assert_eq!(turns[0].files, vec!["/p/src/net.rs".to_string()]);
        assert!(!format!("{:?}", t.events).contains("Zanzibar"));
        assert!(!format!("{:?}", t.events).contains("sidechain prompt"));
        assert!(turns[1].user.contains("[REDACTED"), "{}", turns[1].user);
        assert_eq!(
            t.events
                .iter()
                .filter(|e| matches!(e, Event::Compaction { .. }))
                .count(),
            1
        );
        assert_eq!(t.warnings.len(), 2, "{:?}", t.warnings);
    }
}
