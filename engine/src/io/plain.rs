//! The plain conversation format (one JSON object a turn) and the reader that
//! takes either it or a Claude Code transcript.
//!
//! ```json
//! {"ts": "2026-10-05T09:00:00Z", "user": "the prompt", "assistant": "the reply"}
//! {"ts": "2026-10-05T09:40:00Z", "compact": true}
//! ```
//!
//! Optional per line: `files` (paths the turn touched) and `cwd` (the
//! project directory; the first one given is the session's).
//!
//! It is what the development corpus (`tests/fixtures/corpus/`) and converted
//! outside chats are written in. A file is one format or the other, decided
//! by its first JSON line: a line with a `user` string and no `type` is plain.
//! Text is redacted as it is read, as with Claude Code transcripts.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::redact::redact_owned;
use crate::transcript::{Event, Transcript, TranscriptError, Turn, parse_claude};

/// Whether a line looks like the plain format.
fn is_plain_line(v: &Value) -> bool {
    v.get("type").is_none()
        && (v.get("user").is_some_and(Value::is_string)
            || v.get("compact").and_then(Value::as_bool) == Some(true))
}

/// Parses text in the plain format. Broken lines are warnings.
pub fn parse_plain(text: &str) -> Transcript {
    let mut t = Transcript::default();
    let mut index = 0u32;
    for item in crate::transcript::json_lines(text) {
        let (lineno, v) = match item {
            Ok(x) => x,
            Err(w) => {
                t.warnings.push(w);
                continue;
            }
        };
        let ts: Option<DateTime<Utc>> = v
            .get("ts")
            .and_then(Value::as_str)
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|d| d.with_timezone(&Utc));
        if t.cwd.is_none()
            && let Some(cwd) = v.get("cwd").and_then(Value::as_str)
        {
            t.cwd = Some(cwd.to_owned());
        }
        if v.get("compact").and_then(Value::as_bool) == Some(true) {
            t.events.push(Event::Compaction { timestamp: ts });
            continue;
        }
        let Some(user) = v.get("user").and_then(Value::as_str) else {
            t.warnings.push(format!(
                "line {}: neither a turn nor a compaction",
                lineno + 1
            ));
            continue;
        };
        index += 1;
        let files = v
            .get("files")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        t.events.push(Event::Turn(Turn {
            index,
            user: redact_owned(user),
            assistant: redact_owned(v.get("assistant").and_then(Value::as_str).unwrap_or("")),
            files,
            timestamp: ts,
        }));
    }
    t
}

/// Parses a conversation in either format.
pub fn parse_any(text: &str) -> Transcript {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .and_then(|l| serde_json::from_str::<Value>(l).ok());
    match first {
        Some(v) if is_plain_line(&v) => parse_plain(text),
        _ => parse_claude(text),
    }
}

/// Reads a conversation file in either format (a regular file only, bounded,
/// as [`crate::transcript::read_text`] reads it).
pub fn read_any(path: &Path) -> Result<Transcript, TranscriptError> {
    Ok(parse_any(&crate::transcript::read_text(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_become_turns_and_compactions() {
        let text = concat!(
            "{\"ts\":\"2026-10-05T09:00:00Z\",\"user\":\"hi\",\"assistant\":\"hello\"}\n",
            "{\"ts\":\"2026-10-05T09:10:00Z\",\"compact\":true}\n",
            "not json\n",
            "{\"ts\":\"2026-10-05T09:20:00Z\",\"user\":\"key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789\",\"assistant\":\"\"}\n",
        );
        let t = parse_any(text);
        assert_eq!(t.events.len(), 3);
        assert!(matches!(t.events[1], Event::Compaction { .. }));
        let turns: Vec<&Turn> = t.turns().collect();
        assert_eq!(turns[1].index, 2);
        assert!(
            !turns[1].user.contains("abcdefghijklmnop"),
            "{}",
            turns[1].user
        );
        assert_eq!(t.warnings.len(), 1);
    }

    #[test]
    fn claude_lines_go_to_the_claude_reader() {
        let line = r#"{"type":"user","sessionId":"s1","message":{"role":"user","content":"hello there"},"timestamp":"2026-11-02T09:02:37Z"}"#;
        let t = parse_any(line);
        assert_eq!(t.session_id.as_deref(), Some("s1"));
        assert_eq!(t.turns().count(), 1);
    }
}
