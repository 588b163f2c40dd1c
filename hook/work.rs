//! What the daemon does with spooled jobs: the slow half of every hook.
//!
//! [`drain`] takes each session's spool in order and replays its jobs into
//! the [`Session`]: a turn is observed by the (authoritative) gate with the
//! previous reply — from the Stop hook, or read from the tail of the
//! transcript — and, when the gate fires, a probe cycle runs (probe, patch,
//! decay, re-render, `render.json` for the next injection). SessionStart,
//! PreCompact and SessionEnd hand the session to the lifecycle
//! (recovery, seeding, reconciliation), which opens and closes the session
//! itself. Every job is committed (its spool offset recorded) once done; a
//! job that fails is logged and skipped, never retried forever.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rollgraph_engine::Config;
use rollgraph_engine::lifecycle::{self, ReconcileReason};
use rollgraph_engine::probe::Probe;
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use rollgraph_engine::transcript::{self, Turn};

use crate::expand;
use crate::ipc::Request;
use crate::query;
use crate::spool::{self, Job, JobLine};

/// Bytes read from the end of a transcript to find the previous reply.
const TRANSCRIPT_TAIL: u64 = 256 * 1024;

/// The probe the config asks for: the LLM probe (with the heuristic one as
/// its fallback) when `llm.base_url` is set, else the heuristic probe. It
/// runs on a blocking thread; the LLM probe owns its own small runtime.
pub fn make_probe(config: &Config, home: &Home) -> Box<dyn Probe + Send> {
    rollgraph_engine::llm::probe_from_config(config, home)
}

/// The job a drain is working on: (session, job id, since when).
pub type Current = std::sync::Arc<std::sync::Mutex<Option<(String, String, std::time::Instant)>>>;

/// Processes the spooled jobs of every session but those in `skip` (a
/// session whose job is stuck past its deadline in another drain),
/// publishing the job in progress in `current`.
pub fn drain_with(
    home: &Home,
    config: &Config,
    skip: &std::collections::BTreeSet<String>,
    current: Option<&Current>,
) -> usize {
    let mut total = 0;
    for session in spool::sessions(home) {
        if skip.contains(&session) {
            continue;
        }
        let mut moved = false;
        loop {
            let batch = match spool::take(home, &session, spool::BATCH_MAX) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!("spool of {session}: {e:#}");
                    break;
                }
            };
            for s in &batch.skipped {
                tracing::warn!("spool of {session}: {s}");
            }
            if batch.jobs.is_empty() {
                if batch.end > batch.start {
                    moved = true;
                    if let Err(e) = spool::commit(home, &session, batch.end) {
                        tracing::warn!("spool of {session}: {e:#}");
                    }
                }
                break;
            }
            moved = true;
            let n = batch.jobs.len();
            match process(home, config, &session, batch, current) {
                Ok(done) => total += done,
                Err(e) => {
                    // The session is busy (an expansion holds it): retry later,
                    // and that retry is not an attempt that failed.
                    spool::end_job(home, &session);
                    tracing::warn!("session {session}: {e:#}; will retry");
                    break;
                }
            }
            if n < spool::BATCH_MAX {
                break;
            }
        }
        if moved && let Err(e) = spool::compact(home, &session) {
            tracing::warn!("compacting the spool of {session}: {e:#}");
        }
    }
    total
}

/// Applies a batch of one session's jobs, committing each as it is done. A
/// job whose daemon was killed or hung on it [`spool::MAX_ATTEMPTS`] times
/// is set aside with its reason instead of being tried again.
fn process(
    home: &Home,
    config: &Config,
    session_id: &str,
    batch: spool::Batch,
    current: Option<&Current>,
) -> Result<usize> {
    let mut open: Option<Session> = None;
    let mut done = 0;
    for (line, offset) in batch.jobs {
        let id = job_id(&line);
        let attempts = spool::begin_job(home, session_id, &id).unwrap_or(1);
        if attempts > spool::MAX_ATTEMPTS {
            let reason = format!(
                "the daemon stopped {} times while running this {} job (killed, or stuck past its deadline); set aside",
                attempts - 1,
                kind(&line.job)
            );
            tracing::error!("session {session_id}: job {id}: {reason}");
            if let Err(e) = spool::set_aside(home, session_id, &line, &reason) {
                tracing::warn!("session {session_id}: {e:#}");
            }
            spool::commit(home, session_id, offset)?;
            spool::end_job(home, session_id);
            continue;
        }
        if let Some(c) = current
            && let Ok(mut g) = c.lock()
        {
            *g = Some((session_id.to_owned(), id.clone(), std::time::Instant::now()));
        }
        // Startup, resume and clear may all begin a new session id (seed it,
        // recover crashed ones); compact continues the same session.
        let lifecycle = matches!(&line.job, Job::Reconcile { .. })
            || matches!(&line.job, Job::Start { source, .. } if source != "compact");
        if lifecycle {
            // The lifecycle opens and closes the session itself.
            drop(open.take());
            if let Err(e) = lifecycle_job(home, config, &line) {
                tracing::warn!("session {session_id}: {e:#}");
            }
        }
        if !lifecycle || matches!(line.job, Job::Start { .. }) {
            if open.is_none() {
                open = Some(open_session(home, config, session_id)?);
            }
            if let Some(s) = open.as_mut()
                && !s.state.mark_job(&id)
            {
                // Applied before a restart that came before its commit.
                tracing::info!(
                    "session {session_id}: {} job {id} was already applied; skipped",
                    kind(&line.job)
                );
            } else if let Some(s) = open.as_mut()
                && let Err(e) = apply(s, config, home, &line)
            {
                tracing::warn!(
                    "session {session_id}: {} job failed: {e:#}",
                    kind(&line.job)
                );
            }
            if open
                .as_ref()
                .is_some_and(|s| lifecycle::checkpoint_due(s, config))
            {
                drop(open.take());
                if let Err(e) = reconcile(
                    home,
                    config,
                    session_id,
                    ReconcileReason::Checkpoint,
                    line.ts,
                ) {
                    tracing::warn!("session {session_id}: checkpoint: {e:#}");
                }
            }
        }
        spool::commit(home, session_id, offset)?;
        spool::end_job(home, session_id);
        if let Some(c) = current
            && let Ok(mut g) = c.lock()
        {
            *g = None;
        }
        done += 1;
    }
    Ok(done)
}

fn open_session(home: &Home, config: &Config, id: &str) -> Result<Session> {
    let s = Session::open_with_timeout(home, id, config.clone(), Duration::from_secs(2))?;
    if s.load.damaged() {
        tracing::warn!("session {id}: {}", s.load.summary());
    }
    Ok(s)
}

/// A stable id for a spooled job: FNV-1a over its JSON (session, time to
/// the nanosecond, content), the same in every daemon that reads it.
pub fn job_id(line: &JobLine) -> String {
    let bytes = serde_json::to_vec(line).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn kind(job: &Job) -> &'static str {
    match job {
        Job::Start { .. } => "start",
        Job::Turn { .. } => "turn",
        Job::Reply { .. } => "reply",
        Job::Reconcile { .. } => "reconcile",
        Job::Compacted => "compacted",
        Job::Expand { .. } => "expand",
    }
}

/// SessionStart (all but compact), PreCompact and SessionEnd: recovery, seeding and
/// reconciliation, done by the lifecycle with the session closed.
fn lifecycle_job(home: &Home, config: &Config, line: &JobLine) -> Result<()> {
    match &line.job {
        Job::Start { .. } => {
            let r = lifecycle::session_start(
                home,
                config,
                &line.session,
                line.cwd.as_deref(),
                line.ts,
            )?;
            tracing::info!(
                "session {} started: {} crashed session(s) recovered, {} node(s) seeded, {} anchor(s)",
                line.session,
                r.recovered.len(),
                r.seeded_nodes,
                r.seeded_anchors
            );
            for w in r.warnings {
                tracing::warn!("session {}: {w}", line.session);
            }
        }
        Job::Reconcile { reason } => {
            let reason = match reason.as_str() {
                "session_end" => ReconcileReason::SessionEnd,
                _ => ReconcileReason::Compaction,
            };
            reconcile(home, config, &line.session, reason, line.ts)?;
        }
        _ => {}
    }
    Ok(())
}

fn reconcile(
    home: &Home,
    config: &Config,
    session: &str,
    reason: ReconcileReason,
    now: DateTime<Utc>,
) -> Result<()> {
    let r = lifecycle::reconcile_session(home, config, session, reason, now)?;
    tracing::info!(
        "session {session}: reconciled ({}) into {}: {} added, {} merged, {} aliased, {} edges added",
        reason.as_str(),
        r.stores.join(", "),
        r.added,
        r.merged,
        r.aliased,
        r.edges_added
    );
    for w in r.warnings {
        tracing::warn!("session {session}: {w}");
    }
    Ok(())
}

/// Applies one job to an open session.
fn apply(s: &mut Session, config: &Config, home: &Home, line: &JobLine) -> Result<()> {
    if line.cwd.is_some() {
        s.state.cwd.clone_from(&line.cwd);
    }
    if line.transcript_path.is_some() {
        s.state.transcript.clone_from(&line.transcript_path);
    }
    let now = line.ts;
    match &line.job {
        Job::Start {
            injected_tokens, ..
        } => {
            s.state.ended = false;
            s.state.stats.injection(*injected_tokens);
            if !s.path("render.json").exists() && !s.graph.is_empty() {
                s.write_render(now)?;
            }
            s.save_state()?;
        }
        Job::Turn {
            prompt,
            gate,
            injected_tokens,
        } => {
            s.state.stats.injection(*injected_tokens);
            if let Some(path) = line.transcript_path.as_deref() {
                match previous_reply(Path::new(path), prompt) {
                    Ok(Some(t))
                        if !t.assistant.is_empty()
                            && !same_reply(&t.assistant, &s.state.last_reply) =>
                    {
                        s.record_reply(&t.assistant, &t.files);
                    }
                    Ok(_) => {}
                    Err(e) => tracing::debug!("session {}: transcript: {e:#}", s.id()),
                }
            }
            let turn = Turn {
                index: s.state.turn + 1,
                user: prompt.clone(),
                assistant: String::new(),
                files: Vec::new(),
                timestamp: Some(now),
            };
            let decision = s.observe(turn);
            if let Some(h) = gate
                && h.fire != decision.fire
            {
                tracing::debug!(
                    "session {}: inline gate said {} ({}), daemon {} ({})",
                    s.id(),
                    h.fire,
                    h.reason,
                    decision.fire,
                    decision.reason
                );
            }
            if decision.fire {
                let mut probe = make_probe(config, home);
                let cycled =
                    crate::common::lend_semantic(config, s, |s| s.cycle(probe.as_mut(), now));
                match cycled {
                    Ok(o) => tracing::info!(
                        "session {} turn {}: {} ({}) → {} ops{}, render {} tokens",
                        s.id(),
                        s.state.turn,
                        o.probe_id,
                        decision.reason,
                        o.ops,
                        o.rejected
                            .map(|r| format!(" (rejected: {r})"))
                            .unwrap_or_default(),
                        o.render_tokens
                    ),
                    Err(e) => tracing::warn!("session {}: probe failed: {e}", s.id()),
                }
            }
            s.save_state()?;
        }
        Job::Reply { text } => {
            if !same_reply(text, &s.state.last_reply) {
                s.record_reply(text, &[]);
            }
            s.save_state()?;
        }
        Job::Compacted => {
            s.state.stats.compactions += 1;
            s.save_state()?;
        }
        Job::Expand { handle } => {
            expand::expand_session(s, handle, now, rollgraph_engine::search::DEFAULT_BUDGET)?;
        }
        Job::Reconcile { .. } => {}
    }
    Ok(())
}

/// Whether two replies are the same text (the Stop hook's message and the
/// transcript's merged blocks differ in whitespace, or one holds the other).
fn same_reply(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    !a.is_empty() && !b.is_empty() && (a == b || a.contains(b) || b.contains(a))
}

/// The turn before `prompt` in the tail of a transcript (redacted by the
/// transcript reader), or the newest turn when `prompt` is not there yet.
pub fn previous_reply(path: &Path, prompt: &str) -> Result<Option<Turn>> {
    let mut f =
        transcript::open_regular(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TRANSCRIPT_TAIL);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.take(TRANSCRIPT_TAIL).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    // Start at a line boundary when the tail cut a line.
    let text = if start > 0 {
        text.split_once('\n').map(|(_, r)| r).unwrap_or("")
    } else {
        &text
    };
    // Claude Code, Codex or Gemini CLI, by its first lines.
    let t = rollgraph_engine::hosts::parse_any(text);
    let turns: Vec<&Turn> = t.turns().collect();
    let p = prompt.trim();
    let found = turns.iter().rposition(|t| t.user.trim() == p);
    Ok(match found {
        Some(0) => None,
        Some(i) => Some(turns[i - 1].clone()),
        None => turns.last().map(|t| (*t).clone()),
    })
}

/// Serves a socket request (expand / query) inside the daemon.
pub fn serve_request(home: &Home, config: &Config, req: Request) -> Result<serde_json::Value> {
    let now = rollgraph_engine::clock::now();
    match req {
        Request::Expand {
            session,
            handle,
            budget,
        } => {
            let e = expand::expand_direct(
                home,
                config,
                &session,
                &handle,
                now,
                Duration::from_secs(3),
                true,
                budget,
            )?;
            Ok(serde_json::to_value(e)?)
        }
        Request::Query {
            session,
            text,
            limit,
            budget,
            scope,
        } => {
            let ask = query::Ask {
                text,
                limit,
                budget,
                scope,
            };
            let q = query::query_direct(
                home,
                config,
                &session,
                &ask,
                now,
                Duration::from_secs(3),
                true,
            )?;
            Ok(serde_json::to_value(q)?)
        }
    }
}
