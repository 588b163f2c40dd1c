//! The secrets corpus (`tests/fixtures/secrets/corpus.jsonl`, one line per
//! kind of credential) through the real binary: as user prompts and as
//! assistant replies, through `rollgraph hook claude` and its daemon, and
//! through `rollgraph replay`; then `show`, `render`, `stats`, `query`,
//! `reconcile`. No raw value (nor a 12-character piece of its middle) may
//! be in any file under the state directory, the log included, nor in any
//! output the host or the user sees.

use std::path::Path;

use serde_json::json;

use crate::common::walk;
use crate::hookenv::TestEnv;

/// One corpus line.
pub struct Secret {
    pub kind: String,
    pub text: String,
    pub secret: String,
}

/// The corpus.
pub fn corpus() -> Vec<Secret> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secrets/corpus.jsonl"),
    )
    .unwrap_or_else(|e| panic!("corpus: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("corpus line {l}: {e}"));
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            Secret {
                kind: s("kind"),
                text: s("text"),
                secret: s("secret"),
            }
        })
        .collect()
}

/// The needles for a secret: the whole value and, for long ones, a
/// 12-character piece of its middle (a partial leak is a leak).
fn needles(s: &Secret) -> Vec<String> {
    let mut v = vec![s.secret.clone()];
    let chars: Vec<char> = s.secret.chars().collect();
    if chars.len() >= 20 {
        let mid = chars.len() / 2 - 6;
        v.push(chars[mid..mid + 12].iter().collect());
    }
    v
}

/// Whether `text` holds `needle`. A secret of digits only (a PIN) counts
/// where it stands as its own word in text, not inside a longer number, a
/// hex digest or a JSON number value (a token count may happen to be 4821,
/// a prompt's digest may happen to hold it).
fn holds_secret(text: &str, needle: &str) -> bool {
    if !needle.chars().all(|c| c.is_ascii_digit()) {
        return text.contains(needle);
    }
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        // Inside a longer number or a hex digest ("…e4821f…") it is another word.
        let digitish = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.');
        // `"key": 4821` or `[1, 4821]`, not `"pin: 4821"` inside a string.
        let head = text[..at].trim_end();
        let tail = text[at + needle.len()..].trim_start();
        let mut back = head.chars().rev();
        let json_number = match back.next() {
            Some(':') => back.next() == Some('"'),
            Some(',' | '[') => tail.starts_with([',', ']', '}']),
            _ => false,
        };
        !digitish(before) && !digitish(after) && !json_number
    })
}

/// Every (file, kind) where a raw secret is found under `dir`.
pub fn leaks(dir: &Path, corpus: &[Secret]) -> Vec<String> {
    let mut found = Vec::new();
    for f in walk(dir) {
        let bytes = std::fs::read(&f).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        // JSON escapes `/` never, but `\n` inside PEM pieces never matters:
        // needles hold no newline.
        for s in corpus {
            for n in needles(s) {
                if holds_secret(&text, &n) {
                    found.push(format!("{} in {}", s.kind, f.display()));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn a_pin_is_found_in_prose_but_not_in_a_count() {
    assert!(holds_secret("my pin is 4821 ok", "4821"));
    assert!(holds_secret("\"text\":\"pin 4821\"", "4821"));
    assert!(!holds_secret("\"injected_tokens\": 4821,", "4821"));
    assert!(!holds_secret("14821 and 4821.5", "4821"));
    assert!(!holds_secret("\"8806e3274821abe\"", "4821"));
    assert!(holds_secret("key sk-abc", "sk-abc"));
    assert!(holds_secret("\"label\":\"pin: 4821\"", "4821"));
    assert!(!holds_secret("[12, 4821]", "4821"));
}

fn leaks_in(text: &str, corpus: &[Secret]) -> Vec<String> {
    corpus
        .iter()
        .filter(|s| needles(s).iter().any(|n| holds_secret(text, n)))
        .map(|s| s.kind.clone())
        .collect()
}

/// A Claude Code transcript with every corpus text as a user prompt and as
/// the assistant's reply.
pub fn transcript(corpus: &[Secret], cwd: &Path) -> String {
    let mut out = String::new();
    for (i, s) in corpus.iter().enumerate() {
        let ts = format!("2026-11-02T09:{:02}:{:02}.000Z", i / 60, i % 60);
        let user = json!({"type": "user", "cwd": cwd, "sessionId": "secrets",
            "message": {"role": "user", "content": format!("Turn {i}: {}", s.text)},
            "uuid": format!("u{i}"), "timestamp": ts});
        let reply = json!({"type": "assistant", "cwd": cwd, "sessionId": "secrets",
            "message": {"role": "assistant", "content": [{"type": "text",
                "text": format!("Noted. You wrote: {}", s.text)}]},
            "uuid": format!("a{i}"), "timestamp": ts});
        out.push_str(&user.to_string());
        out.push('\n');
        out.push_str(&reply.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn the_corpus_has_at_least_forty_kinds() {
    let c = corpus();
    let kinds: std::collections::BTreeSet<&str> = c.iter().map(|s| s.kind.as_str()).collect();
    assert!(kinds.len() >= 40, "{} kinds", kinds.len());
    for s in &c {
        assert!(
            s.text.contains(&s.secret),
            "{}: secret not in its text",
            s.kind
        );
    }
}

#[test]
fn no_raw_secret_reaches_the_state_directory_through_replay() {
    let env = TestEnv::new();
    let c = corpus();
    let path = env.dir.path().join("secrets.jsonl");
    std::fs::write(&path, transcript(&c, &env.project)).unwrap_or_else(|e| panic!("{e}"));
    let p = path.display().to_string();
    let mut outputs = String::new();
    for args in [
        vec![
            "replay",
            p.as_str(),
            "--session",
            "secrets-replay",
            "--json",
            "-v",
        ],
        vec!["show", "--session", "secrets-replay", "--json"],
        vec!["render", "--session", "secrets-replay"],
        vec!["stats", "--json"],
        vec![
            "query",
            "password",
            "key",
            "token",
            "--session",
            "secrets-replay",
        ],
        vec!["reconcile", "--session", "secrets-replay", "--json"],
    ] {
        let o = env.run(&args, b"");
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        outputs.push_str(&String::from_utf8_lossy(&o.stdout));
        outputs.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    let l = leaks(&env.state, &c);
    assert!(l.is_empty(), "raw secrets under the state dir: {l:#?}");
    let l = leaks_in(&outputs, &c);
    assert!(l.is_empty(), "raw secrets printed: {l:?}");
}

#[test]
fn no_raw_secret_reaches_the_state_directory_through_the_hook() {
    let env = TestEnv::new();
    let c = corpus();
    let sid = "secrets-hook";
    let tpath = env.dir.path().join(format!("{sid}.jsonl"));
    std::fs::write(&tpath, transcript(&c, &env.project)).unwrap_or_else(|e| panic!("{e}"));
    let payload = |event: &str, extra: serde_json::Value| {
        let mut v = json!({"session_id": sid, "transcript_path": tpath, "cwd": env.project,
            "hook_event_name": event});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        serde_json::to_vec(&v).unwrap_or_default()
    };
    let mut seen = String::new();
    let (out, code) = env.hook(&payload("SessionStart", json!({"source": "startup"})));
    assert_eq!(code, 0);
    seen.push_str(&out);
    for (i, s) in c.iter().enumerate() {
        let (out, code) = env.hook(&payload(
            "UserPromptSubmit",
            json!({"prompt": format!("Turn {i}: {}", s.text)}),
        ));
        assert_eq!(code, 0, "{}", s.kind);
        seen.push_str(&out);
        let (out, code) = env.hook(&payload(
            "Stop",
            json!({"stop_hook_active": false,
                "last_assistant_message": format!("Noted. You wrote: {}", s.text)}),
        ));
        assert_eq!(code, 0, "{}", s.kind);
        seen.push_str(&out);
        // A wrongly typed field: its parse error must not quote a secret into the log.
        let (out, code) = env.hook(&payload(
            "UserPromptSubmit",
            json!({"prompt": {"nested": s.text}, "session_id": s.text}),
        ));
        assert_eq!(code, 0, "{}", s.kind);
        seen.push_str(&out);
    }
    env.wait_for_daemon();
    let (out, code) = env.hook(&payload("SessionEnd", json!({"reason": "exit"})));
    assert_eq!(code, 0);
    seen.push_str(&out);
    env.wait_for_daemon();
    let l = leaks(&env.state, &c);
    assert!(l.is_empty(), "raw secrets under the state dir: {l:#?}");
    let l = leaks_in(&seen, &c);
    assert!(l.is_empty(), "raw secrets injected into the host: {l:?}");
    // The hook did real work: the session exists and has a graph.
    assert!(
        env.state
            .join("sessions")
            .join(sid)
            .join("state.json")
            .exists()
    );
}
