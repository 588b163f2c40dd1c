//! `rollgraph hook <host>`: the hot path, run by the host before every prompt.
//!
//! **The rule of this module: initialise nothing that is not needed.** No
//! tokio runtime, no tracing subscriber, no tokenizer, no embedder, no
//! config parse (except to size the log on the error path), no graph load.
//! On UserPromptSubmit it reads stdin (bounded), parses the host's wire JSON
//! into a domain [`Event`], prints the last finished render
//! (`sessions/<id>/render.json`), runs the gate inline over the redacted
//! prompt and the session's known names (`terms.txt`), appends a job to the
//! session's spool and pokes the daemon (starting it when it is not there).
//! The probe, patch, decay and re-render happen in the daemon, so turn N's
//! probe shows up in turn N+1's injection at the latest.
//!
//! Wire types mirror exactly what a host sends; valid JSON that is not an
//! event we model is `Ok(None)`, not an error. Whatever happens — bad input,
//! an unwritable state home, a dead daemon, a panic — the hook prints
//! nothing it should not, logs one line to `rollgraph.log` and exits 0.
//! `ROLLGRAPH_DISABLE=1` or a `.rollgraph-off` file in the project root turns
//! it off.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use rollgraph_engine::gate::{self, GateDecision, GateInput, GateState, SortedNames};
use rollgraph_engine::session::StoredRender;
use rollgraph_engine::store::{Home, valid_session_id};
use rollgraph_engine::{clock, redact};
use serde::{Deserialize, Serialize};

use crate::hooklog::{self, LogLimits};
use crate::ipc;
use crate::spool::{self, Job, JobLine};

/// Most bytes read from stdin; a larger payload is refused.
pub const MAX_STDIN: u64 = 1 << 20;

/// Longest previous reply the inline gate keeps (characters).
const GATE_REPLY_CHARS: usize = 4_000;

/// Answer one host hook event.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The host that runs the hook.
    #[arg(value_enum)]
    pub host: Host,
}

/// `rollgraph hook <host>` exactly, read without clap; anything else
/// (flags, help, an unknown host) goes through the full parser.
pub fn fast_args() -> Option<HookArgs> {
    let mut args = std::env::args_os().skip(1);
    let (Some(cmd), Some(host), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if cmd != "hook" {
        return None;
    }
    let host = match host.to_str()? {
        "claude" => Host::Claude,
        "codex" => Host::Codex,
        _ => return None,
    };
    Some(HookArgs { host })
}

/// Hosts whose hook protocol we speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI (same payloads as Claude Code).
    Codex,
}

impl Host {
    fn as_str(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
        }
    }
}

/// The wire payload shared by Claude Code and Codex: every field we read,
/// all optional, unknown fields ignored.
#[derive(Debug, Default, Deserialize)]
struct Wire {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    source: Option<String>,
    prompt: Option<String>,
    reason: Option<String>,
    last_assistant_message: Option<String>,
}

/// A hook event we model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A session started, resumed, was cleared or was compacted.
    SessionStart {
        /// startup | resume | clear | compact (| fork).
        source: String,
    },
    /// The user submitted a prompt.
    Prompt {
        /// The prompt as typed (not yet redacted).
        prompt: String,
    },
    /// The host is about to compact.
    PreCompact,
    /// The host compacted.
    PostCompact,
    /// The session ended.
    SessionEnd {
        /// Why.
        reason: String,
    },
    /// The assistant finished a reply.
    Stop {
        /// The reply's text, when the host sends it.
        reply: Option<String>,
    },
}

/// An event with the fields every event carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The host's session id (checked to be a safe directory name).
    pub session: String,
    /// The project directory.
    pub cwd: Option<String>,
    /// The host's transcript file.
    pub transcript: Option<String>,
    /// What happened.
    pub event: Event,
}

/// Parses a hook payload. `Ok(None)` for valid JSON that is not an event we
/// model; an error for input that is not a payload at all.
pub fn parse(_host: Host, bytes: &[u8]) -> Result<Option<Envelope>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        bail!("empty hook payload");
    }
    let wire: Wire = serde_json::from_slice(bytes)
        .context("hook payload is not valid JSON of the expected shape")?;
    let Some(name) = wire.hook_event_name.as_deref() else {
        return Ok(None);
    };
    let event = match name {
        "SessionStart" => Event::SessionStart {
            source: wire.source.clone().unwrap_or_else(|| "startup".into()),
        },
        "UserPromptSubmit" => Event::Prompt {
            prompt: wire.prompt.clone().unwrap_or_default(),
        },
        "PreCompact" => Event::PreCompact,
        "PostCompact" => Event::PostCompact,
        "SessionEnd" => Event::SessionEnd {
            reason: wire.reason.clone().unwrap_or_else(|| "other".into()),
        },
        "Stop" => Event::Stop {
            reply: wire.last_assistant_message.clone(),
        },
        _ => return Ok(None),
    };
    let Some(session) = wire.session_id else {
        bail!("{name} payload has no session_id");
    };
    if !valid_session_id(&session) {
        bail!(
            "{name} payload has an unusable session_id {:?}",
            session.chars().take(80).collect::<String>()
        );
    }
    Ok(Some(Envelope {
        session,
        cwd: wire.cwd.filter(|c| !c.is_empty()),
        transcript: wire.transcript_path.filter(|t| !t.is_empty()),
        event,
    }))
}

/// The JSON a host reads to add context.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HookSpecificOutput<'a> {
    hook_event_name: &'a str,
    additional_context: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Output<'a> {
    hook_specific_output: HookSpecificOutput<'a>,
}

/// The output for an injection: `{"hookSpecificOutput":{…}}`.
pub fn injection_json(event_name: &str, text: &str) -> String {
    serde_json::to_string(&Output {
        hook_specific_output: HookSpecificOutput {
            hook_event_name: event_name,
            additional_context: text,
        },
    })
    .unwrap_or_default()
}

/// The hook's own memory for the inline gate, kept beside the spool.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct HookGate {
    state: GateState,
    last_reply: String,
}

/// Runs the hook. Never fails and never panics out: errors become a log line.
pub fn run(args: HookArgs) {
    std::panic::set_hook(Box::new(|info| {
        log_error(&format!("hook panicked: {info}"));
    }));
    // The panic hook has logged it; nothing else to do but exit 0.
    if let Ok(Err(e)) = std::panic::catch_unwind(|| handle(args.host)) {
        log_error(&format!("{e:#}"));
    }
}

/// Logs one line to the state home's log, sized by the config. Silent when
/// even that fails.
pub fn log_error(message: &str) {
    let home = Home::from_env();
    let limits = rollgraph_engine::Config::load_default(home.root())
        .map(|c| LogLimits::from_config(&c))
        .unwrap_or_default();
    hooklog::append(&home.log_path(), limits, "hook", clock::now(), message);
}

fn disabled_by_env() -> bool {
    std::env::var("ROLLGRAPH_DISABLE")
        .map(|v| {
            let v = v.trim().to_ascii_lowercase();
            !(v.is_empty() || v == "0" || v == "false" || v == "no" || v == "off")
        })
        .unwrap_or(false)
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(8 * 1024);
    std::io::stdin()
        .lock()
        .take(MAX_STDIN + 1)
        .read_to_end(&mut buf)
        .context("reading stdin")?;
    if buf.len() as u64 > MAX_STDIN {
        bail!("hook payload over {MAX_STDIN} bytes: ignored");
    }
    Ok(buf)
}

fn handle(host: Host) -> Result<()> {
    let input = read_stdin()?;
    if disabled_by_env() {
        return Ok(());
    }
    let Some(env) = parse(host, &input)? else {
        return Ok(());
    };
    if let Some(cwd) = &env.cwd
        && Path::new(cwd).join(".rollgraph-off").exists()
    {
        return Ok(());
    }
    let home = Home::from_env();
    let now = clock::now();
    let mut errors: Vec<String> = Vec::new();
    let job = match &env.event {
        Event::SessionStart { source } => {
            let injected_tokens = inject(&home, &env.session, "SessionStart").unwrap_or_else(|e| {
                errors.push(format!("{e:#}"));
                0
            });
            Some(Job::Start {
                source: source.clone(),
                injected_tokens,
            })
        }
        Event::Prompt { prompt } => {
            let injected_tokens =
                inject(&home, &env.session, "UserPromptSubmit").unwrap_or_else(|e| {
                    errors.push(format!("{e:#}"));
                    0
                });
            // Redact before cutting: a cut could split a secret past recognition.
            let prompt = spool::bounded(&redact::redact_owned(prompt));
            let gate = match inline_gate(&home, &env.session, &prompt) {
                Ok(d) => Some(d),
                Err(e) => {
                    errors.push(format!("inline gate: {e:#}"));
                    None
                }
            };
            Some(Job::Turn {
                prompt,
                gate,
                injected_tokens,
            })
        }
        Event::PreCompact => Some(Job::Reconcile {
            reason: "compaction".into(),
        }),
        Event::PostCompact => Some(Job::Compacted),
        Event::SessionEnd { .. } => Some(Job::Reconcile {
            reason: "session_end".into(),
        }),
        Event::Stop { reply } => match reply.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => {
                let text = spool::bounded(&redact::redact_owned(r));
                if let Err(e) = remember_reply(&home, &env.session, &text) {
                    errors.push(format!("gate state: {e:#}"));
                }
                Some(Job::Reply { text })
            }
            None => None,
        },
    };
    if let Some(job) = job {
        let line = JobLine {
            session: env.session.clone(),
            host: host.as_str().to_owned(),
            cwd: env.cwd.clone(),
            transcript_path: env.transcript.clone(),
            ts: now,
            job,
        };
        match spool::append(&home, &line) {
            Ok(()) => ipc::poke_or_start(&home, &mut errors),
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        bail!("{}", errors.join("; "))
    }
}

/// Prints the session's last finished render as an injection; returns its
/// token count (0 when there is nothing to inject).
fn inject(home: &Home, session: &str, event_name: &str) -> Result<usize> {
    let dir = home.session_dir(session)?;
    let stored: Option<StoredRender> = match std::fs::read(dir.join("render.json")) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).context("render.json is unreadable")?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).context("reading render.json"),
    };
    let Some(r) = stored.filter(|r| !r.text.trim().is_empty()) else {
        return Ok(0);
    };
    let out = injection_json(event_name, &r.text);
    let mut stdout = std::io::stdout().lock();
    // A host that closed our stdout does not want the context: not an error.
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    Ok(r.tokens)
}

/// Runs the gate on the redacted prompt against the session's known names,
/// with the hook's own gate state.
fn inline_gate(home: &Home, session: &str, prompt: &str) -> Result<GateDecision> {
    let dir = home.session_dir(session)?;
    // terms.txt: the session's known names, normalised and sorted, one a line.
    let terms = match std::fs::read_to_string(dir.join("terms.txt")) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).context("reading terms.txt"),
    };
    let known = SortedNames::from_lines(&terms);
    let mut hg = read_hook_gate(home, session);
    let cfg = rollgraph_engine::config::GateConfig::default();
    let decision = gate::decide(
        &mut hg.state,
        &GateInput {
            prompt,
            previous_reply: &hg.last_reply,
        },
        &known,
        &cfg,
    );
    write_hook_gate(home, session, &hg)?;
    Ok(decision)
}

fn remember_reply(home: &Home, session: &str, reply: &str) -> Result<()> {
    let mut hg = read_hook_gate(home, session);
    hg.last_reply = reply.chars().take(GATE_REPLY_CHARS).collect();
    write_hook_gate(home, session, &hg)
}

fn read_hook_gate(home: &Home, session: &str) -> HookGate {
    spool::gate_path(home, session)
        .ok()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_hook_gate(home: &Home, session: &str, hg: &HookGate) -> Result<()> {
    let path = spool::gate_path(home, session)?;
    spool::create_dir(home)?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(hg)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    if let Err(e) = std::fs::rename(&tmp, &path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("renaming into {}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_to_domain() {
        let p = br#"{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"UserPromptSubmit","permission_mode":"default","prompt":"hi","extra":{"x":1}}"#;
        let env = parse(Host::Claude, p).ok().flatten();
        assert_eq!(
            env,
            Some(Envelope {
                session: "abc".into(),
                cwd: Some("/p".into()),
                transcript: Some("/t.jsonl".into()),
                event: Event::Prompt {
                    prompt: "hi".into()
                },
            })
        );
    }

    #[test]
    fn unknown_events_are_not_errors() {
        let p = br#"{"session_id":"abc","hook_event_name":"Notification","message":"x"}"#;
        assert!(matches!(parse(Host::Claude, p), Ok(None)));
        assert!(matches!(parse(Host::Claude, b"{}"), Ok(None)));
        assert!(parse(Host::Claude, b"[1,2]").is_err());
        assert!(parse(Host::Claude, b"").is_err());
    }

    #[test]
    fn unsafe_session_ids_are_refused() {
        let p = br#"{"session_id":"../../etc","hook_event_name":"Stop"}"#;
        assert!(parse(Host::Claude, p).is_err());
    }

    #[test]
    fn codex_null_transcript_is_fine() {
        let p = br#"{"session_id":"abc","transcript_path":null,"cwd":"/p","hook_event_name":"SessionStart","source":"startup","model":"gpt-5"}"#;
        let env = parse(Host::Codex, p).ok().flatten();
        assert_eq!(
            env.map(|e| (e.transcript, e.event)),
            Some((
                None,
                Event::SessionStart {
                    source: "startup".into()
                }
            ))
        );
    }
}
