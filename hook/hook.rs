//! `rollgraph hook <host>` (and the slim `rollgraph-hook <host>`): the hot
//! path, run by the host before every prompt.
//!
//! **The rule of this module: initialise nothing that is not needed.** No
//! tokio runtime, no tracing subscriber, no tokenizer, no embedder, no graph
//! load, no gate: the daemon's gate decides, so the hook does not guess.
//! It reads stdin (at most [`MAX_STDIN`] bytes, waiting at most
//! [`STDIN_WAIT`] for the writer), parses the host's payload leniently into
//! a domain [`Event`] (a field the event does not use is ignored whatever
//! its type), and for SessionStart and prompts picks the best block there
//! is — the session's own render, else the project's warm render, else the
//! global one, all plain files — and lets [`inject::plan`] decide between
//! the full block, an update of what changed, or nothing. Then it appends a
//! job to the session's spool and pokes the daemon (starting it when it is
//! not there). The probe, patch, decay and re-render happen in the daemon.
//!
//! The per-session record of what was injected is read, changed and
//! rewritten under a lock (`spool::lock_inject`), so hooks the host runs at
//! once for one session (a SessionStart beside the first prompt, two quick
//! prompts) send one block, not two, and lose no update; a hook that cannot
//! get the lock within [`spool::INJECT_LOCK_WAIT`] injects nothing and
//! still queues its job.
//!
//! A session the daemon has never heard of stays unknown until its first
//! prompt: its SessionStart injects from the warm render and notes the start
//! for that prompt, and a SessionEnd, compaction or Stop for it (`claude mcp
//! list` fires SessionEnd for sessions that never existed) starts no daemon
//! and writes nothing.
//!
//! Whatever happens — bad input, an unwritable state home, a dead daemon, a
//! panic — the hook prints nothing it should not, logs one line to
//! `rollgraph.log` and exits 0. `ROLLGRAPH_DISABLE=1` or a `.rollgraph-off`
//! file in the project root turns it off.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rollgraph_engine::inject::{self, InjectMode, Injected, Moment, Planned};
use rollgraph_engine::session::StoredRender;
use rollgraph_engine::store::{Home, valid_session_id};
use rollgraph_engine::{clock, redact, warm};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooklog::{self, LogLimits};
use crate::ipc;
use crate::spool::{self, Job, JobLine};

/// Most bytes read from stdin; a larger payload is refused.
pub const MAX_STDIN: u64 = 1 << 20;

/// How long the hook waits for stdin to reach its end.
pub const STDIN_WAIT: Duration = Duration::from_millis(100);

/// Hosts whose hook protocol we speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI (Claude Code's payloads and output).
    Codex,
    /// Gemini CLI (BeforeAgent / AfterAgent / PreCompress; plain-text context).
    Gemini,
}

impl Host {
    /// The name on the command line and in spool lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }
    }

    /// The host a command-line word names.
    pub fn parse(s: &str) -> Option<Host> {
        match s {
            "claude" => Some(Host::Claude),
            "codex" => Some(Host::Codex),
            "gemini" => Some(Host::Gemini),
            _ => None,
        }
    }

    /// Most characters one injection may have: Claude Code moves
    /// additionalContext over 10,000 characters to a file (the model sees a
    /// 2,000-character preview); Codex spills hook text over ~2,500 tokens.
    /// Both with margin; Gemini CLI publishes no cap, so Claude's is used.
    pub fn max_chars(self) -> usize {
        match self {
            Host::Claude | Host::Gemini => 9_000,
            // ~2,500 tokens: at the worst case of ~3 characters per token
            // for this text, 6,000 characters stay near 2,000 tokens.
            Host::Codex => 6_000,
        }
    }
}

/// `<prog> hook <host>` or `rollgraph-hook <host>`, read without clap.
pub fn fast_host(args: &[std::ffi::OsString]) -> Option<Host> {
    match args {
        [cmd, host] if cmd == "hook" => Host::parse(host.to_str()?),
        [host] => Host::parse(host.to_str()?),
        _ => None,
    }
}

/// A hook event we model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A session started, resumed, was cleared, compacted or forked.
    SessionStart {
        /// startup | resume | clear | compact | fork.
        source: String,
    },
    /// The user submitted a prompt (UserPromptSubmit, BeforeAgent).
    Prompt {
        /// The prompt as typed (not yet redacted).
        prompt: String,
    },
    /// The host is about to compact (PreCompact, PreCompress).
    PreCompact,
    /// The host compacted.
    PostCompact,
    /// The session ended.
    SessionEnd {
        /// Why.
        reason: String,
    },
    /// The assistant finished a reply (Stop, AfterAgent).
    Stop {
        /// The reply's text, when the host sends it.
        reply: Option<String>,
    },
}

/// An event with the fields every event carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The event's name as the host sent it.
    pub name: String,
    /// The host's session id (checked to be a safe directory name).
    pub session: String,
    /// The project directory.
    pub cwd: Option<String>,
    /// The host's transcript file.
    pub transcript: Option<String>,
    /// What happened.
    pub event: Event,
}

/// An optional string field: absent, null or of another type is `None`
/// (for fields that only add information).
fn opt_str(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
}

/// A string field the event needs: absent or null is `None`, another type is an error.
fn used_str(m: &Map<String, Value>, key: &str, event: &str) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => bail!(
            "{event} payload: {key} is {}, not a string",
            match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::Array(_) => "an array",
                _ => "an object",
            }
        ),
    }
}

/// Parses a hook payload. `Ok(None)` for valid JSON that is not an event we
/// model; an error for input that is not a payload at all, or whose fields
/// the event uses have the wrong type.
pub fn parse(host: Host, bytes: &[u8]) -> Result<Option<Envelope>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        bail!("empty hook payload");
    }
    let m: Map<String, Value> =
        serde_json::from_slice(bytes).context("hook payload is not a JSON object")?;
    let Some(name) = m.get("hook_event_name").and_then(Value::as_str) else {
        return Ok(None);
    };
    let gemini = host == Host::Gemini;
    let event = match name {
        "SessionStart" => Event::SessionStart {
            source: opt_str(&m, "source").unwrap_or_else(|| "startup".into()),
        },
        "UserPromptSubmit" | "BeforeAgent" => {
            let prompt = used_str(&m, "prompt", name)?.unwrap_or_default();
            Event::Prompt {
                // Gemini CLI puts the context hooks added (our own block from
                // SessionStart) before the typed text of the prompt it hands
                // BeforeAgent: queued as is, the daemon would read the block
                // back as something the user said.
                prompt: if gemini {
                    rollgraph_engine::hosts::without_hook_context(&prompt)
                } else {
                    prompt
                },
            }
        }
        // Gemini CLI fires PreCompress (`auto`) before every model call once
        // the history is not empty, before it even checks whether it will
        // compress: it says nothing about a compression, and a reconcile per
        // turn would be waste. A `/compress` (`manual`) still reconciles; the
        // daemon's checkpoints and SessionEnd keep the warm graph current.
        "PreCompress" if gemini && opt_str(&m, "trigger").as_deref() != Some("manual") => {
            return Ok(None);
        }
        "PreCompact" | "PreCompress" => Event::PreCompact,
        "PostCompact" => Event::PostCompact,
        "SessionEnd" => Event::SessionEnd {
            reason: opt_str(&m, "reason").unwrap_or_else(|| "other".into()),
        },
        "Stop" if !gemini => Event::Stop {
            reply: used_str(&m, "last_assistant_message", name)?,
        },
        "AfterAgent" => Event::Stop {
            reply: used_str(&m, "prompt_response", name)?,
        },
        _ => return Ok(None),
    };
    let session = match m.get("session_id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => bail!("{name} payload has no session_id"),
        Some(_) => bail!("{name} payload: session_id is not a string"),
    };
    if !valid_session_id(&session) {
        bail!(
            "{name} payload has an unusable session_id {:?}",
            session.chars().take(80).collect::<String>()
        );
    }
    Ok(Some(Envelope {
        name: name.to_owned(),
        session,
        cwd: opt_str(&m, "cwd"),
        transcript: opt_str(&m, "transcript_path"),
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

/// The hook's own per-session file beside the spool: what was injected,
/// and a SessionStart whose job waits for the session's first prompt.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HookState {
    /// What the session was sent.
    pub inject: Injected,
    /// A deferred SessionStart: its source and the tokens it injected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_start: Option<(String, usize)>,
}

/// Runs the hook. Never fails and never panics out: errors become a log
/// line. Gemini CLI parses stdout as JSON, so it gets `{}` when there is
/// nothing to say.
pub fn run(host: Host) {
    std::panic::set_hook(Box::new(|info| {
        log_error(&format!("hook panicked: {info}"));
    }));
    let printed = match std::panic::catch_unwind(|| handle(host)) {
        Ok(Ok(printed)) => printed,
        Ok(Err(e)) => {
            log_error(&format!("{e:#}"));
            false
        }
        // The panic hook has logged it.
        Err(_) => false,
    };
    if host == Host::Gemini && !printed {
        emit("{}");
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

/// Reads stdin to its end, at most [`MAX_STDIN`] bytes, waiting at most
/// `wait` for the writer. A writer that keeps stdin open past the wait gets
/// its payload used when what arrived is already a whole JSON value.
pub fn read_stdin(wait: Duration) -> Result<Vec<u8>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    let mut buf = Vec::with_capacity(8 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ready = {
            let mut fds = [PollFd::new(&lock, PollFlags::IN)];
            let ts = Timespec {
                tv_sec: left.as_secs() as _,
                tv_nsec: left.subsec_nanos() as _,
            };
            match poll(&mut fds, Some(&ts)) {
                Ok(n) => n > 0,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e).context("waiting for stdin"),
            }
        };
        if !ready {
            if serde_json::from_slice::<serde::de::IgnoredAny>(&buf).is_ok() {
                return Ok(buf);
            }
            bail!(
                "stdin did not end within {} ms ({} bytes read): ignored",
                wait.as_millis(),
                buf.len()
            );
        }
        let n = match lock.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("reading stdin"),
        };
        if n == 0 {
            return Ok(buf);
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() as u64 > MAX_STDIN {
            bail!("hook payload over {MAX_STDIN} bytes: ignored");
        }
    }
}

fn emit(out: &str) {
    let mut stdout = std::io::stdout().lock();
    // A host that closed our stdout does not want the context: not an error.
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
}

/// Handles one event; returns whether it printed anything.
fn handle(host: Host) -> Result<bool> {
    let input = read_stdin(STDIN_WAIT)?;
    if disabled_by_env() {
        return Ok(false);
    }
    let Some(env) = parse(host, &input)? else {
        return Ok(false);
    };
    if let Some(cwd) = &env.cwd
        && Path::new(cwd).join(".rollgraph-off").exists()
    {
        return Ok(false);
    }
    let home = Home::from_env();
    let (mode, mut errors) = match rollgraph_engine::Config::load_default(home.root()) {
        Ok(c) => (c.inject.mode, Vec::new()),
        Err(e) => (InjectMode::default(), vec![format!("config: {e}")]),
    };
    let now = clock::now();
    let state_path = spool::inject_path(&home, &env.session)?;
    // Read, change and rewrite the inject state under its lock: another hook
    // process of this session (the host ran two at once) waits its turn. The
    // other events touch the state only when there is one.
    let injects = matches!(env.event, Event::SessionStart { .. } | Event::Prompt { .. });
    let lock = if injects || state_path.exists() {
        match spool::lock_inject(&home, &env.session, spool::INJECT_LOCK_WAIT) {
            Ok(l) => Some(l),
            Err(e) => {
                // Unsure what the holder sends, this hook injects nothing
                // (never a second block) and still queues its job.
                errors.push(format!("{e:#}; nothing injected"));
                None
            }
        }
    } else {
        None
    };
    let locked = lock.is_some();
    // Read and later rewritten in place, under the lock (see `StateFile`).
    let mut state_file = if locked {
        StateFile::open(&state_path)
    } else {
        StateFile::default()
    };
    let had_state = state_file.exists();
    let mut st: HookState = state_file.read().unwrap_or_default();
    // Whether the daemon has ever seen this session.
    let known = home.session_dir(&env.session)?.exists()
        || spool::spool_path(&home, &env.session)?.exists();
    let mut printed = false;
    let mut save = false;
    let mut jobs: Vec<Job> = Vec::new();
    match &env.event {
        Event::SessionStart { source } => {
            let sent = if locked {
                // The history was cut: the block goes again, whatever was sent.
                if matches!(source.as_str(), "clear" | "compact") {
                    st.inject.needs_full = true;
                }
                inject_now(host, &home, &env, &mut st.inject, Moment::Start, mode).unwrap_or_else(
                    |e| {
                        errors.push(format!("{e:#}"));
                        None
                    },
                )
            } else {
                None
            };
            printed = sent.is_some();
            let tokens = sent.map_or(0, |p| p.tokens());
            save = locked;
            if known || !locked {
                jobs.push(Job::Start {
                    source: source.clone(),
                    injected_tokens: tokens,
                });
            } else {
                st.pending_start = Some((source.clone(), tokens));
            }
        }
        Event::Prompt { prompt } => {
            let sent = if locked {
                inject_now(host, &home, &env, &mut st.inject, Moment::Prompt, mode).unwrap_or_else(
                    |e| {
                        errors.push(format!("{e:#}"));
                        None
                    },
                )
            } else {
                None
            };
            printed = sent.is_some();
            save = locked;
            if let Some((source, injected_tokens)) = st.pending_start.take() {
                jobs.push(Job::Start {
                    source,
                    injected_tokens,
                });
            }
            // Redact before cutting: a cut could split a secret past recognition.
            jobs.push(Job::Turn {
                prompt: spool::bounded(&redact::redact_owned(prompt)),
                gate: None,
                injected_tokens: sent.map_or(0, |p| p.tokens()),
            });
        }
        Event::PreCompact | Event::PostCompact if known => {
            st.inject.needs_full = true;
            save = had_state;
            jobs.push(match env.event {
                Event::PreCompact => Job::Reconcile {
                    reason: "compaction".into(),
                },
                _ => Job::Compacted,
            });
        }
        Event::SessionEnd { .. } if known => jobs.push(Job::Reconcile {
            reason: "session_end".into(),
        }),
        Event::Stop { reply } if known => {
            // The model answered: this turn's blocks are in; a later
            // SessionStart (a resume) may send the block again.
            if had_state && st.inject.turn_open {
                inject::answered(&mut st.inject);
                save = true;
            }
            if let Some(r) = reply.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
                jobs.push(Job::Reply {
                    text: spool::bounded(&redact::redact_owned(r)),
                });
            }
        }
        // A session that never had a prompt: nothing to do, nothing to keep.
        Event::SessionEnd { .. } => {
            if had_state {
                let _ = std::fs::remove_file(&state_path);
            }
        }
        Event::PreCompact | Event::PostCompact | Event::Stop { .. } => {}
    }
    if save && let Err(e) = state_file.write(&home, &state_path, &st) {
        errors.push(format!("{e:#}"));
    }
    let mut spooled = false;
    if !jobs.is_empty() {
        spooled = true;
        for job in jobs {
            let line = JobLine {
                session: env.session.clone(),
                host: host.as_str().to_owned(),
                cwd: env.cwd.clone(),
                transcript_path: env.transcript.clone(),
                ts: now,
                job,
            };
            if let Err(e) = spool::append(&home, &line) {
                errors.push(format!("{e:#}"));
                spooled = false;
                break;
            }
        }
    }
    // Held until the jobs are queued: a SessionStart behind this prompt then
    // sees the session as known and queues its own start.
    match lock {
        Some(l) if !known && matches!(env.event, Event::SessionEnd { .. }) => l.remove(),
        l => drop(l),
    }
    if spooled {
        ipc::poke_or_start(&home, &mut errors);
    }
    if errors.is_empty() {
        Ok(printed)
    } else {
        // What was printed stays printed; the errors are logged.
        log_error(&errors.join("; "));
        Ok(printed)
    }
}

/// The hook's state file, read and rewritten in place while the inject lock
/// is held. No temporary file and rename: the lock already keeps other
/// hooks out, and on ext4 a rename over the old file forces its data out
/// and frees (and, mounted with `discard`, trims) the old inode's blocks —
/// measured at ~0.2 ms CPU and ~0.7 ms wall per prompt, against ~5 µs for
/// writing in place. The new text is padded with spaces to the old length
/// (JSON ignores them), so the file is never truncated and one `pwrite`
/// replaces it whole; a torn write (power loss) reads as no state, which
/// sends the full block once.
#[derive(Default)]
struct StateFile {
    file: Option<std::fs::File>,
    bytes: Vec<u8>,
}

impl StateFile {
    fn open(path: &Path) -> StateFile {
        use std::os::unix::fs::OpenOptionsExt;
        let Ok(mut file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .open(path)
        else {
            return StateFile::default();
        };
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            bytes.clear();
        }
        StateFile {
            file: Some(file),
            bytes,
        }
    }

    fn exists(&self) -> bool {
        self.file.is_some()
    }

    fn read(&self) -> Option<HookState> {
        serde_json::from_slice(&self.bytes).ok()
    }

    fn write(&mut self, home: &Home, path: &Path, st: &HookState) -> Result<()> {
        use std::os::unix::fs::{FileExt, OpenOptionsExt};
        let mut out = serde_json::to_vec(st)?;
        if out.len() < self.bytes.len() {
            out.resize(self.bytes.len(), b' ');
        }
        let file = match self.file.take() {
            Some(f) => f,
            None => {
                spool::create_dir(home)?;
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .open(path)
                    .with_context(|| format!("opening {}", path.display()))?
            }
        };
        file.write_all_at(&out, 0)
            .with_context(|| format!("writing {}", path.display()))?;
        self.file = Some(file);
        self.bytes = out;
        Ok(())
    }
}

/// The best block there is for a session, and where it came from: its own
/// render, else its project's warm render, else the global one. The
/// project's key (a canonical path and a SHA-256) is only worked out when the
/// session has no render of its own, which on a prompt it almost always has.
pub fn best_render(
    home: &Home,
    session: &str,
    cwd: Option<&str>,
) -> Result<Option<(StoredRender, &'static str)>> {
    let candidates: [(&'static str, &dyn Fn() -> Result<PathBuf>); 3] = [
        ("session", &|| {
            Ok(home.session_dir(session)?.join("render.json"))
        }),
        ("project", &|| {
            let key = warm::key_for_cwd(cwd);
            Ok(rollgraph_engine::lifecycle::warm_render_path(home, &key)?)
        }),
        ("global", &|| {
            Ok(rollgraph_engine::lifecycle::warm_render_path(
                home,
                warm::GLOBAL_KEY,
            )?)
        }),
    ];
    for (source, path) in candidates {
        let Ok(path) = path() else { continue };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let r: StoredRender = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is unreadable", path.display()))?;
        if !r.text.trim().is_empty() {
            return Ok(Some((r, source)));
        }
    }
    Ok(None)
}

/// Plans and prints this event's injection; returns what was sent.
fn inject_now(
    host: Host,
    home: &Home,
    env: &Envelope,
    st: &mut Injected,
    moment: Moment,
    mode: InjectMode,
) -> Result<Option<Planned>> {
    let Some((r, _source)) = best_render(home, &env.session, env.cwd.as_deref())? else {
        // Nothing to show still counts as this moment (a prompt, a start).
        let _ = inject::plan(st, &StoredRender::default(), moment, mode);
        return Ok(None);
    };
    // Gemini keeps BeforeAgent context for one turn only: nothing accumulates,
    // so each prompt gets the whole block (never twice in one turn).
    let mode = if host == Host::Gemini {
        InjectMode::Full
    } else {
        mode
    };
    let Some(p) = inject::plan(st, &r, moment, mode) else {
        return Ok(None);
    };
    let text = adapt(host, p.text(), env.cwd.as_deref());
    let event_name = match (host, moment) {
        (_, Moment::Start) => "SessionStart",
        (Host::Gemini, Moment::Prompt) => "BeforeAgent",
        (_, Moment::Prompt) => "UserPromptSubmit",
    };
    emit(&injection_json(event_name, &text));
    Ok(Some(p))
}

/// The sentence of the block that names the MCP tool.
const EXPAND_HINT: &str = " Expand a [handle] with the memory_expand tool.";

/// Fits a block to its host: Gemini gets plain text (it escapes `<` and `>`
/// and wraps context in its own tag), Codex hears of `memory_expand` only
/// where the MCP server is configured, and every host's size cap is kept.
pub fn adapt(host: Host, text: &str, cwd: Option<&str>) -> String {
    let mut t = text.to_owned();
    if host == Host::Codex && !codex_has_mcp(cwd) {
        t = t.replace(EXPAND_HINT, "");
    }
    if host == Host::Gemini {
        t = unwrap_tags(&t);
    }
    cap(&t, host.max_chars())
}

/// `<rolling-memory a="1" b="2">` → `Rolling memory (a 1, b 2):`; the
/// closing tag goes.
fn unwrap_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("</rolling-memory") && l.ends_with('>') {
            continue;
        }
        if let Some(inner) = l
            .strip_prefix('<')
            .and_then(|r| r.strip_suffix('>'))
            .filter(|r| r.starts_with("rolling-memory"))
        {
            let (tag, attrs) = inner.split_once(' ').unwrap_or((inner, ""));
            let title = if tag == "rolling-memory-update" {
                "Rolling memory update"
            } else {
                "Rolling memory"
            };
            let attrs: Vec<String> = attrs
                .split('"')
                .collect::<Vec<_>>()
                .chunks(2)
                .filter_map(|kv| match kv {
                    [k, v] => Some(format!("{} {v}", k.trim().trim_end_matches('='))),
                    _ => None,
                })
                .collect();
            out.push_str(&format!("{title} ({}):\n", attrs.join(", ")));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// Cuts a block to `max` characters at a line end, keeping its closing tag.
pub fn cap(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let closing = text
        .lines()
        .last()
        .filter(|l| l.trim_start().starts_with("</"))
        .unwrap_or("");
    let note = "… (cut to fit the host's limit)\n";
    let room = max.saturating_sub(closing.chars().count() + note.chars().count() + 1);
    let head: String = text.chars().take(room).collect();
    let head = match head.rfind('\n') {
        Some(i) => &head[..=i],
        None => "",
    };
    let mut out = format!("{head}{note}");
    out.push_str(closing);
    out
}

/// Whether Codex has the rollgraph MCP server configured (user config at
/// `$CODEX_HOME` or `~/.codex`, or the project's `.codex/config.toml`).
pub fn codex_has_mcp(cwd: Option<&str>) -> bool {
    let mut files: Vec<PathBuf> = Vec::new();
    match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        Some(h) => files.push(PathBuf::from(h).join("config.toml")),
        None => {
            if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                files.push(PathBuf::from(h).join(".codex/config.toml"));
            }
        }
    }
    if let Some(c) = cwd {
        files.push(Path::new(c).join(".codex/config.toml"));
    }
    files.iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().any(|l| {
                let l = l.trim();
                l.starts_with("[mcp_servers.rollgraph]")
                    || l.starts_with("[mcp_servers.\"rollgraph\"]")
            })
        })
    })
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
                name: "UserPromptSubmit".into(),
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
    fn unused_fields_of_any_type_are_ignored_used_ones_are_checked() {
        let p = br#"{"session_id":"abc","hook_event_name":"UserPromptSubmit","prompt":"hi","reason":5,"source":[1],"last_assistant_message":{"a":1},"cwd":7,"transcript_path":false}"#;
        let env = parse(Host::Claude, p).ok().flatten();
        assert_eq!(
            env.map(|e| (e.cwd, e.event)),
            Some((
                None,
                Event::Prompt {
                    prompt: "hi".into()
                }
            ))
        );
        let p = br#"{"session_id":"abc","hook_event_name":"UserPromptSubmit","prompt":42}"#;
        assert!(parse(Host::Claude, p).is_err());
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
        let p = br#"{"session_id":"abc","transcript_path":null,"cwd":"/p","hook_event_name":"SessionStart","source":"fork","model":"gpt-5"}"#;
        let env = parse(Host::Codex, p).ok().flatten();
        assert_eq!(
            env.map(|e| (e.transcript, e.event)),
            Some((
                None,
                Event::SessionStart {
                    source: "fork".into()
                }
            ))
        );
    }

    #[test]
    fn gemini_events() {
        let p = br#"{"session_id":"g1","hook_event_name":"BeforeAgent","prompt":"hi","timestamp":"2026-01-01T00:00:00Z"}"#;
        assert!(matches!(
            parse(Host::Gemini, p).ok().flatten().map(|e| e.event),
            Some(Event::Prompt { .. })
        ));
        let p = br#"{"session_id":"g1","hook_event_name":"AfterAgent","prompt":"hi","prompt_response":"done","stop_hook_active":false}"#;
        assert_eq!(
            parse(Host::Gemini, p).ok().flatten().map(|e| e.event),
            Some(Event::Stop {
                reply: Some("done".into())
            })
        );
        let p = br#"{"session_id":"g1","hook_event_name":"PreCompress","trigger":"manual"}"#;
        assert_eq!(
            parse(Host::Gemini, p).ok().flatten().map(|e| e.event),
            Some(Event::PreCompact)
        );
        // Fired before every turn, compressing or not: not an event for us.
        let p = br#"{"session_id":"g1","hook_event_name":"PreCompress","trigger":"auto"}"#;
        assert!(matches!(parse(Host::Gemini, p), Ok(None)));
        // The context Gemini put before the typed prompt is not the prompt
        // (payload as gemini-cli 0.61 sends it).
        let p = br#"{"session_id":"g1","hook_event_name":"BeforeAgent","timestamp":"2026-11-24T07:15:52.664Z","prompt":"<hook_context>Rolling memory (session project, turn 0):\n- **Priya Raman** (relationship, person)</hook_context>\n\nWhich email provider did we pick?"}"#;
        assert_eq!(
            parse(Host::Gemini, p).ok().flatten().map(|e| e.event),
            Some(Event::Prompt {
                prompt: "Which email provider did we pick?".into()
            })
        );
    }

    #[test]
    fn gemini_text_has_no_angle_brackets() {
        let t = "<rolling-memory session=\"abc\" turn=\"3\" updated=\"2026-11-02T10:00Z\">\nWhat this session has been about.\n- x\n</rolling-memory>";
        let g = adapt(Host::Gemini, t, None);
        assert!(!g.contains('<') && !g.contains('>'), "{g}");
        assert!(
            g.starts_with("Rolling memory (session abc, turn 3, updated 2026-11-02T10:00Z):"),
            "{g}"
        );
    }

    #[test]
    fn the_state_file_is_rewritten_in_place_and_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let path = dir.path().join("spool/s.inject.json");
        let mut big = HookState::default();
        for i in 0..40 {
            big.inject.seen.insert(format!("item-{i}"), i);
        }
        let mut f = StateFile::open(&path);
        assert!(!f.exists());
        f.write(&home, &path, &big)
            .unwrap_or_else(|e| panic!("{e}"));
        let ino = |p: &Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).map(|m| m.ino()).unwrap_or(0)
        };
        let before = ino(&path);
        // A smaller state later: same file, padded, and it reads back as written.
        let f = StateFile::open(&path);
        assert_eq!(f.read().map(|s| s.inject.seen.len()), Some(40));
        let mut f = f;
        let small = HookState::default();
        f.write(&home, &path, &small)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ino(&path), before, "replaced, not rewritten in place");
        let back = StateFile::open(&path).read();
        assert_eq!(back.map(|s| s.inject), Some(Injected::default()));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
    }

    #[test]
    fn caps_keep_the_closing_tag() {
        let body: String = (0..2_000).map(|i| format!("- line {i}\n")).collect();
        let t = format!("<rolling-memory>\n{body}</rolling-memory>");
        for host in [Host::Claude, Host::Codex, Host::Gemini] {
            let c = adapt(host, &t, None);
            assert!(c.chars().count() <= host.max_chars(), "{host:?}");
            if host != Host::Gemini {
                assert!(c.ends_with("</rolling-memory>"), "{host:?}");
            }
        }
    }
}
