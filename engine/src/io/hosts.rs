//! Lenient readers of the other hosts' transcripts, into the same
//! [`Transcript`] the Claude Code reader makes (for crash recovery and the
//! daemon's look at the previous reply).
//!
//! - **Codex CLI rollout** (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`):
//!   `{"timestamp","type","payload"}` lines. `session_meta` gives the
//!   session id and cwd; `event_msg` `user_message` is a typed prompt
//!   (falling back to `response_item` user messages when a file has no
//!   `event_msg` lines); `response_item` assistant messages (`output_text`
//!   blocks) are the reply; `function_call` arguments naming a path are the
//!   files touched; `compacted` is a compaction. Developer messages (where
//!   hook context lands), reasoning and unknown types are skipped.
//! - **Gemini CLI session** (`~/.gemini/tmp/<project>/chats/session-*.jsonl`):
//!   a metadata line (`sessionId`, `projectHash`, `startTime`), then records
//!   `{id, timestamp, type: user|gemini|info|error|warning, content,
//!   toolCalls?}`. A record with an `id` already seen replaces the earlier
//!   one; `{"$set": …}` updates metadata, and `{"$set": {"messages": […]}}`
//!   replaces every record (Gemini CLI 0.61 writes its `<session_context>`
//!   preamble that way); `{"$rewindTo": id}` drops that record and everything
//!   after it (everything, when the id is unknown). Hook context Gemini adds
//!   to a prompt (`<hook_context>…</hook_context>`, before the typed text in
//!   0.61) is removed; user records that are only the CLI's own (empty,
//!   `/command`, `?`, `<session_context>`) are skipped, as Gemini skips them.
//!   The older whole-file form (`session-*.json`, one object with
//!   `messages`) is read too.
//!
//! Every text is redacted as it is read; a broken line is a warning.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::redact::redact_owned;
use crate::transcript::{Event, Transcript, TranscriptError, Turn};

/// Which host wrote a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Claude Code.
    Claude,
    /// Codex CLI rollout.
    Codex,
    /// Gemini CLI session.
    Gemini,
}

impl Format {
    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
        }
    }
}

/// Guesses the format from the first JSON object line.
pub fn sniff(text: &str) -> Format {
    if gemini_whole_file(text).is_some() {
        return Format::Gemini;
    }
    for line in text.lines().take(20) {
        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        if v.get("payload").is_some() && v.get("type").and_then(Value::as_str).is_some() {
            return Format::Codex;
        }
        if v.get("projectHash").is_some()
            || (v.get("sessionId").is_some() && v.get("startTime").is_some())
            || matches!(
                v.get("type").and_then(Value::as_str),
                Some("gemini") | Some("info")
            )
            || (v.get("type").and_then(Value::as_str) == Some("user")
                && v.get("content").is_some()
                && v.get("message").is_none())
        {
            return Format::Gemini;
        }
        if v.is_object() {
            return Format::Claude;
        }
    }
    Format::Claude
}

/// Parses a transcript of any host we know (and the corpus's plain format).
pub fn parse_any(text: &str) -> Transcript {
    match sniff(text) {
        // Claude Code's lines or the plain `{ts, user, assistant}` ones.
        Format::Claude => crate::plain::parse_any(text),
        Format::Codex => parse_codex(text),
        Format::Gemini => parse_gemini(text),
    }
}

/// Parses a transcript in a given host's format (Claude's reader also
/// takes the plain `{ts, user, assistant}` lines).
pub fn parse_as(text: &str, format: Format) -> Transcript {
    match format {
        Format::Claude => crate::plain::parse_any(text),
        Format::Codex => parse_codex(text),
        Format::Gemini => parse_gemini(text),
    }
}

/// Reads a transcript file of any host we know (a regular file only,
/// bounded, as [`crate::transcript::read_text`] reads it).
pub fn read_any(path: &Path) -> Result<Transcript, TranscriptError> {
    Ok(parse_any(&crate::transcript::read_text(path)?))
}

fn ts(v: &Value) -> Option<DateTime<Utc>> {
    v.get("timestamp")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&Utc))
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Text blocks of a Codex message of the given block type.
fn blocks_text(content: Option<&Value>, kind: &str) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| str_of(b, "type") == Some(kind))
            .filter_map(|b| str_of(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn push_turn(t: &mut Transcript, current: &mut Option<Turn>) {
    if let Some(turn) = current.take() {
        t.events.push(Event::Turn(turn));
    }
}

fn add_reply(turn: &mut Turn, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if !turn.assistant.is_empty() {
        turn.assistant.push('\n');
    }
    turn.assistant.push_str(&redact_owned(text));
}

fn add_file(turn: &mut Turn, path: &str) {
    let p = path.trim();
    if !p.is_empty() && p.len() < 4096 && !turn.files.iter().any(|f| f == p) {
        turn.files.push(p.to_owned());
    }
}

/// Paths named in a tool call's arguments.
fn arg_paths(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["file_path", "absolute_path", "path", "filePath"] {
        if let Some(p) = str_of(args, key) {
            out.push(p.to_owned());
        }
    }
    out
}

/// Parses a Codex CLI rollout.
pub fn parse_codex(text: &str) -> Transcript {
    let mut t = Transcript::default();
    let has_events = text.lines().any(|l| l.contains("\"user_message\""));
    let mut current: Option<Turn> = None;
    let mut index = 0u32;
    for item in crate::transcript::json_lines(text) {
        let (_, v) = match item {
            Ok(x) => x,
            Err(w) => {
                t.warnings.push(w);
                continue;
            }
        };
        let p = v.get("payload").cloned().unwrap_or(Value::Null);
        let mut prompt: Option<String> = None;
        match str_of(&v, "type").unwrap_or("") {
            "session_meta" => {
                if t.session_id.is_none() {
                    t.session_id = str_of(&p, "id").map(str::to_owned);
                }
                if t.cwd.is_none() {
                    t.cwd = str_of(&p, "cwd").map(str::to_owned);
                }
            }
            "compacted" => {
                push_turn(&mut t, &mut current);
                t.events.push(Event::Compaction { timestamp: ts(&v) });
            }
            "event_msg" if str_of(&p, "type") == Some("user_message") => {
                prompt = str_of(&p, "message").map(str::to_owned);
            }
            "response_item" => match (str_of(&p, "type"), str_of(&p, "role")) {
                (Some("message"), Some("user")) if !has_events => {
                    let text = blocks_text(p.get("content"), "input_text");
                    // Environment and instruction blocks Codex sends as user text.
                    if !text.trim_start().starts_with('<') {
                        prompt = Some(text);
                    }
                }
                (Some("message"), Some("assistant")) => match current.as_mut() {
                    Some(turn) => add_reply(turn, &blocks_text(p.get("content"), "output_text")),
                    None => t.skipped += 1,
                },
                (Some("function_call"), _) => {
                    if let Some(turn) = current.as_mut() {
                        let args: Value = str_of(&p, "arguments")
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or(Value::Null);
                        for f in arg_paths(&args) {
                            add_file(turn, &f);
                        }
                    }
                }
                _ => t.skipped += 1,
            },
            _ => t.skipped += 1,
        }
        if let Some(text) = prompt
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
        {
            push_turn(&mut t, &mut current);
            index += 1;
            current = Some(Turn {
                index,
                user: redact_owned(&text),
                assistant: String::new(),
                files: Vec::new(),
                timestamp: ts(&v),
            });
        }
    }
    push_turn(&mut t, &mut current);
    t
}

/// Text of a Gemini record's `content` (a string or parts with `text`).
fn gemini_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.as_str().or_else(|| str_of(p, "text")))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Object(_)) => content
            .and_then(|c| str_of(c, "text"))
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

/// A prompt without the hook context Gemini CLI added to it: every
/// `<hook_context>…</hook_context>` span (also HTML-escaped), wherever it
/// is; an unclosed one runs to the end. Gemini 0.61 puts SessionStart's and
/// BeforeAgent's context before the typed text, in the transcript and in the
/// `prompt` its later hooks receive: left in, rollgraph would read its own
/// block back as something the user said.
pub fn without_hook_context(text: &str) -> String {
    const TAGS: [(&str, &str); 2] = [
        ("<hook_context>", "</hook_context>"),
        ("&lt;hook_context&gt;", "&lt;/hook_context&gt;"),
    ];
    if !text.contains("hook_context") {
        return text.trim().to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = TAGS
            .iter()
            .filter_map(|(open, close)| rest.find(open).map(|i| (i, *open, *close)))
            .min_by_key(|(i, _, _)| *i);
        let Some((i, open, close)) = next else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..i]);
        let after = &rest[i + open.len()..];
        match after.find(close) {
            Some(j) => rest = &after[j + close.len()..],
            None => break,
        }
    }
    out.trim().to_owned()
}

/// User text that is the CLI's own, not a prompt (as Gemini CLI itself
/// tells them apart when it resumes a session).
fn gemini_ignored(text: &str) -> bool {
    text.is_empty()
        || text.starts_with('/')
        || text.starts_with('?')
        || text.starts_with("<session_context>")
}

/// The older whole-file session (`session-*.json`): one JSON object with
/// `sessionId` and a `messages` array.
fn gemini_whole_file(text: &str) -> Option<Value> {
    let t = text.trim_start();
    if !t.starts_with('{') || !t.contains("\"messages\"") {
        return None;
    }
    // A JSON-lines file's first line alone is not the whole text.
    if t.lines()
        .nth(1)
        .is_some_and(|l| l.trim_start().starts_with('{'))
    {
        return None;
    }
    let v: Value = serde_json::from_str(t).ok()?;
    (v.get("sessionId").is_some() && v.get("messages").is_some_and(Value::is_array)).then_some(v)
}

/// Adds a message record, replacing one with the same id where it was.
fn gemini_put(records: &mut Vec<Value>, v: Value) {
    match str_of(&v, "id").and_then(|id| records.iter().position(|r| str_of(r, "id") == Some(id))) {
        Some(i) => records[i] = v,
        None => records.push(v),
    }
}

fn gemini_messages(records: &mut Vec<Value>, messages: Option<&Value>) {
    for m in messages.and_then(Value::as_array).into_iter().flatten() {
        if m.is_object() {
            gemini_put(records, m.clone());
        }
    }
}

/// Parses a Gemini CLI session file.
pub fn parse_gemini(text: &str) -> Transcript {
    let mut t = Transcript::default();
    // Records in order, a later one with the same id replacing the earlier.
    let mut records: Vec<Value> = Vec::new();
    if let Some(whole) = gemini_whole_file(text) {
        t.session_id = str_of(&whole, "sessionId").map(str::to_owned);
        gemini_messages(&mut records, whole.get("messages"));
    } else {
        for item in crate::transcript::json_lines(text) {
            let (_, v) = match item {
                Ok(x) => x,
                Err(w) => {
                    t.warnings.push(w);
                    continue;
                }
            };
            if let Some(set) = v.get("$set") {
                if let Some(id) = str_of(set, "sessionId") {
                    t.session_id = Some(id.to_owned());
                }
                if set.get("messages").is_some_and(Value::is_array) {
                    records.clear();
                    gemini_messages(&mut records, set.get("messages"));
                }
                continue;
            }
            if let Some(to) = v.get("$rewindTo").and_then(Value::as_str) {
                match records.iter().position(|r| str_of(r, "id") == Some(to)) {
                    Some(i) => records.truncate(i),
                    None => records.clear(),
                }
                continue;
            }
            if str_of(&v, "type").is_none() {
                // The metadata line (which may carry messages).
                if t.session_id.is_none() {
                    t.session_id = str_of(&v, "sessionId").map(str::to_owned);
                }
                gemini_messages(&mut records, v.get("messages"));
                continue;
            }
            gemini_put(&mut records, v);
        }
    }
    let mut current: Option<Turn> = None;
    let mut index = 0u32;
    for r in &records {
        match str_of(r, "type").unwrap_or("") {
            "user" => {
                let text = without_hook_context(&gemini_text(r.get("content")));
                if gemini_ignored(&text) {
                    t.skipped += 1;
                    continue;
                }
                push_turn(&mut t, &mut current);
                index += 1;
                current = Some(Turn {
                    index,
                    user: redact_owned(&text),
                    assistant: String::new(),
                    files: Vec::new(),
                    timestamp: ts(r),
                });
            }
            "gemini" | "model" => {
                let Some(turn) = current.as_mut() else {
                    t.skipped += 1;
                    continue;
                };
                add_reply(turn, &gemini_text(r.get("content")));
                for call in r
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(args) = call.get("args") {
                        for f in arg_paths(args) {
                            add_file(turn, &f);
                        }
                    }
                }
            }
            _ => t.skipped += 1,
        }
    }
    push_turn(&mut t, &mut current);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODEX: &str = r#"{"timestamp":"2026-11-02T09:00:00Z","type":"session_meta","payload":{"id":"0199a1b2-c3d4","cwd":"/home/u/proj","cli_version":"0.60.0"}}
{"timestamp":"2026-11-02T09:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/home/u/proj</cwd>\n</environment_context>"}]}}
{"timestamp":"2026-11-02T09:00:01Z","type":"turn_context","payload":{"cwd":"/home/u/proj","model":"gpt-5-codex"}}
{"timestamp":"2026-11-02T09:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Add retry to fetch() with key sk-abcdefghijklmnopqrstuvwx1234"}]}}
{"timestamp":"2026-11-02T09:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"Add retry to fetch() with key sk-abcdefghijklmnopqrstuvwx1234","images":[]}}
{"timestamp":"2026-11-02T09:00:01Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<rolling-memory>ours</rolling-memory>"}]}}
{"timestamp":"2026-11-02T09:00:02Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2026-11-02T09:00:03Z","type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"path\":\"src/net.rs\"}","call_id":"c1"}}
{"timestamp":"2026-11-02T09:00:04Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}}
{"timestamp":"2026-11-02T09:00:05Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Added exponential backoff."}]}}
not json
{"timestamp":"2026-11-02T09:10:00Z","type":"compacted","payload":{"message":"summary"}}
{"timestamp":"2026-11-02T09:11:00Z","type":"event_msg","payload":{"type":"user_message","message":"Now the tests"}}
{"timestamp":"2026-11-02T09:11:00Z","type":"something_new","payload":{}}
"#;

    #[test]
    fn codex_rollout() {
        assert_eq!(sniff(CODEX), Format::Codex);
        let t = parse_any(CODEX);
        assert_eq!(t.session_id.as_deref(), Some("0199a1b2-c3d4"));
        assert_eq!(t.cwd.as_deref(), Some("/home/u/proj"));
        let turns: Vec<&Turn> = t.turns().collect();
        assert_eq!(turns.len(), 2, "{:?}", t.events);
        assert!(turns[0].user.starts_with("Add retry to fetch()"));
        assert!(!turns[0].user.contains("sk-abcdefghij"), "not redacted");
        assert_eq!(turns[0].assistant, "Added exponential backoff.");
        assert_eq!(turns[0].files, ["src/net.rs"]);
        assert!(!turns[0].assistant.contains("rolling-memory"));
        assert_eq!(turns[1].user, "Now the tests");
        assert!(matches!(t.events[1], Event::Compaction { .. }));
        assert_eq!(t.warnings.len(), 1);
    }

    const GEMINI: &str = r#"{"sessionId":"g-123","projectHash":"abc","startTime":"2026-11-02T09:00:00Z"}
{"id":"m1","timestamp":"2026-11-02T09:00:01Z","type":"user","content":"Use Postwick for email.\n<hook_context>Rolling memory (session x)</hook_context>"}
{"id":"m2","timestamp":"2026-11-02T09:00:02Z","type":"gemini","content":"Working","toolCalls":[{"name":"write_file","args":{"file_path":"src/mail.rs"}}]}
{"id":"m2","timestamp":"2026-11-02T09:00:03Z","type":"gemini","content":"Switched to Postwick.","toolCalls":[{"name":"write_file","args":{"file_path":"src/mail.rs"}}]}
{"id":"m3","timestamp":"2026-11-02T09:00:04Z","type":"info","content":"Compressing"}
{"id":"m4","timestamp":"2026-11-02T09:01:00Z","type":"user","content":"a wrong turn"}
{"id":"m5","timestamp":"2026-11-02T09:01:01Z","type":"gemini","content":"hmm"}
{"$rewindTo":"m4"}
{"id":"m6","timestamp":"2026-11-02T09:02:00Z","type":"user","content":[{"text":"Now the tests"}]}
{"$set":{"lastUpdated":"2026-11-02T09:02:00Z"}}
"#;

    #[test]
    fn gemini_session() {
        assert_eq!(sniff(GEMINI), Format::Gemini);
        let t = parse_any(GEMINI);
        assert_eq!(t.session_id.as_deref(), Some("g-123"));
        let turns: Vec<&Turn> = t.turns().collect();
        assert_eq!(turns.len(), 2, "{:?}", t.events);
        assert_eq!(turns[0].user, "Use Postwick for email.");
        assert_eq!(turns[0].assistant, "Switched to Postwick.");
        assert_eq!(turns[0].files, ["src/mail.rs"]);
        assert_eq!(turns[1].user, "Now the tests");
    }

    #[test]
    fn gemini_hook_context_is_removed_wherever_it_is() {
        assert_eq!(
            without_hook_context(
                "<hook_context>Rolling memory\n- x</hook_context>\n\nNow the tests"
            ),
            "Now the tests"
        );
        assert_eq!(
            without_hook_context("Use Postwick.\n<hook_context>block</hook_context>"),
            "Use Postwick."
        );
        assert_eq!(
            without_hook_context("a &lt;hook_context&gt;b&lt;/hook_context&gt; c"),
            "a  c"
        );
        assert_eq!(without_hook_context("keep <hook_context>unclosed"), "keep");
        assert_eq!(without_hook_context("  plain  "), "plain");
    }

    /// Gemini CLI 0.61: the preamble comes as `$set` of `messages`, a resume
    /// resets and restores them, and SessionStart's block sits before the
    /// typed prompt.
    const GEMINI_061: &str = r#"{"sessionId":"g-2","projectHash":"abc","startTime":"2026-11-02T09:00:00Z","lastUpdated":"2026-11-02T09:00:00Z","kind":"main"}
{"$set":{"messages":[{"id":"pre","timestamp":"2026-11-02T09:00:00Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.</session_context>"}]}]}}
{"id":"u1","timestamp":"2026-11-02T09:00:01Z","type":"user","content":[{"text":"Use Postwick for email."}]}
{"id":"g1","timestamp":"2026-11-02T09:00:02Z","type":"gemini","content":"OK"}
{"sessionId":"g-2","projectHash":"abc","startTime":"2026-11-02T09:05:00Z","lastUpdated":"2026-11-02T09:05:00Z","kind":"main"}
{"$set":{"messages":[{"id":"pre","type":"user","content":[{"text":"<session_context>x</session_context>"}]}]}}
{"$set":{"messages":[{"id":"pre","type":"user","content":[{"text":"<session_context>x</session_context>"}]},{"id":"u1","timestamp":"2026-11-02T09:00:01Z","type":"user","content":[{"text":"Use Postwick for email."}]},{"id":"g1","type":"gemini","content":"OK"}]}}
{"id":"u2","timestamp":"2026-11-02T09:05:01Z","type":"user","content":[{"text":"<hook_context>Rolling memory (session g-2):\n- Postwick</hook_context>\n\nSwitch to Mailbarn."}]}
{"id":"g2","timestamp":"2026-11-02T09:05:02Z","type":"gemini","content":"Done."}
{"id":"u3","type":"user","content":"?"}
"#;

    #[test]
    fn gemini_061_session() {
        assert_eq!(sniff(GEMINI_061), Format::Gemini);
        let t = parse_any(GEMINI_061);
        assert_eq!(t.session_id.as_deref(), Some("g-2"));
        let turns: Vec<(&str, &str)> = t
            .turns()
            .map(|x| (x.user.as_str(), x.assistant.as_str()))
            .collect();
        assert_eq!(
            turns,
            [
                ("Use Postwick for email.", "OK"),
                ("Switch to Mailbarn.", "Done.")
            ]
        );
        // An unknown rewind target empties the session, as in Gemini CLI.
        let t = parse_gemini(&format!("{GEMINI_061}{{\"$rewindTo\":\"nope\"}}\n"));
        assert_eq!(t.turns().count(), 0);
    }

    #[test]
    fn gemini_whole_file_sessions_are_read() {
        let whole = r#"{
  "sessionId": "g-old",
  "projectHash": "abc",
  "startTime": "2026-01-02T09:00:00Z",
  "messages": [
    {"id": "1", "timestamp": "2026-01-02T09:00:01Z", "type": "user", "content": "Use Postwick for email."},
    {"id": "2", "timestamp": "2026-01-02T09:00:02Z", "type": "gemini", "content": "Done."}
  ]
}"#;
        assert_eq!(sniff(whole), Format::Gemini);
        let t = parse_any(whole);
        assert_eq!(t.session_id.as_deref(), Some("g-old"));
        assert_eq!(t.turns().count(), 1);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn claude_is_the_default() {
        let line = r#"{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"},"uuid":"u"}"#;
        assert_eq!(sniff(line), Format::Claude);
        assert_eq!(parse_any(line).turns().count(), 1);
    }
}
