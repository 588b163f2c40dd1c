//! `rollgraph reconcile`: merge hot sessions into the warm graph now.
//!
//! Without flags it reconciles the most recent session (or `--session`);
//! `--crashed` reconciles every session that never ended and was never
//! reconciled; `--transcript FILE` is the post-session catcher: it replays
//! the transcript's turns the session never saw (all of them when it left no
//! journal) through gate → probe, and reconciles the session. The transcript
//! may be any host's: a Claude Code transcript, a Codex CLI rollout, a Gemini
//! CLI session file (or the plain `{ts, user, assistant}` lines), told apart
//! by their lines or named with `--format`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;

use rollgraph_engine::clock;
use rollgraph_engine::embed::{self, EmbedPaths};
use rollgraph_engine::graduate::{Drafter, LlmDrafter, TemplateDrafter};
use rollgraph_engine::hosts;
use rollgraph_engine::lifecycle::{self, ReconcileReason, ReconcileReport, Tools};
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::reconcile::{
    Adjudicator, EmbedSimilar, Lexical, LlmAdjudicator, OfflineAdjudicator, Similar,
};
use rollgraph_engine::session::{Origin, Session};
use rollgraph_engine::transcript::{self, Event, Transcript};

use crate::common::{home_and_config, out, out_json, pick_session};

/// Arguments of `rollgraph reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The session to reconcile (default: the most recent, preferring this directory's).
    #[arg(long)]
    pub session: Option<String>,
    /// Replay this transcript's unseen turns into the session first (all of them without a journal): Claude Code, Codex rollout or Gemini CLI session.
    #[arg(long)]
    pub transcript: Option<PathBuf>,
    /// The transcript's format (default: told from its lines).
    #[arg(long, value_enum, default_value_t = TranscriptFormat::Auto, requires = "transcript")]
    pub format: TranscriptFormat,
    /// The project directory of a replayed transcript (default: the transcript's own cwd).
    #[arg(long, requires = "transcript")]
    pub project: Option<PathBuf>,
    /// Reconcile every crashed session (never ended, never reconciled, not in use).
    #[arg(long, conflicts_with_all = ["session", "transcript"])]
    pub crashed: bool,
    /// Keep ambiguous pairs apart and draft graduations from the template, even with an LLM configured.
    #[arg(long)]
    pub offline: bool,
    /// Match near-duplicates by letters only, even when the embedding model is provisioned.
    #[arg(long)]
    pub lexical: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Which host wrote a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TranscriptFormat {
    /// Told from the file's lines.
    Auto,
    /// A Claude Code transcript (`~/.claude/projects/…/<session>.jsonl`).
    Claude,
    /// A Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`).
    Codex,
    /// A Gemini CLI session (`~/.gemini/tmp/<project>/chats/session-*.jsonl`).
    Gemini,
    /// Plain `{ts, user, assistant}` lines (the development corpus).
    Plain,
}

impl TranscriptFormat {
    /// Reads `path` in this format; returns the transcript and the format it was read as.
    pub fn read(self, path: &std::path::Path) -> Result<(Transcript, &'static str)> {
        let text = transcript::read_text(path)?;
        Ok(match self {
            TranscriptFormat::Auto => {
                let f = hosts::sniff(&text);
                (hosts::parse_as(&text, f), f.as_str())
            }
            TranscriptFormat::Claude => (transcript::parse_claude(&text), "claude"),
            TranscriptFormat::Codex => (hosts::parse_codex(&text), "codex"),
            TranscriptFormat::Gemini => (hosts::parse_gemini(&text), "gemini"),
            TranscriptFormat::Plain => (rollgraph_engine::plain::parse_plain(&text), "plain"),
        })
    }
}

/// One reconciled session in the output.
#[derive(Debug, Serialize)]
struct Done {
    session: String,
    reason: ReconcileReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    replayed_turns: Option<usize>,
    /// The format the transcript was read as.
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript_format: Option<&'static str>,
    #[serde(flatten)]
    report: ReconcileReport,
}

/// Runs `rollgraph reconcile`.
pub fn run(args: ReconcileArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let now = clock::now();
    let mut done = Vec::new();
    // Off the hook path, so the embedding model may load (about a second).
    let (mut embedder, notice) = if config.embed.enabled && !args.lexical {
        embed::load_optional(&EmbedPaths::discover())
    } else {
        (None, None)
    };
    if let Some(n) = notice {
        tracing::info!("near-duplicates by letters only: {n}");
    }
    let mut lexical = Lexical;
    let mut embedded;
    let similar: &mut dyn Similar = match embedder.as_mut() {
        Some(e) => {
            embedded = EmbedSimilar::new(e);
            &mut embedded
        }
        None => &mut lexical,
    };
    // The LLM (when configured) decides ambiguous pairs and drafts graduations.
    let (mut offline_adj, mut template) = (OfflineAdjudicator, TemplateDrafter);
    let mut llm_adj = (!args.offline)
        .then(|| LlmAdjudicator::from_config(&config, &home))
        .flatten();
    let mut llm_draft = (!args.offline)
        .then(|| LlmDrafter::from_config(&config, &home))
        .flatten();
    let adjudicator: &mut dyn Adjudicator = match llm_adj.as_mut() {
        Some(a) => a,
        None => &mut offline_adj,
    };
    let drafter: &mut dyn Drafter = match llm_draft.as_mut() {
        Some(d) => d,
        None => &mut template,
    };
    let mut tools = Tools {
        similar,
        adjudicator,
        drafter,
    };
    let mut reconcile = |id: &str, reason| {
        lifecycle::reconcile_session_with(&home, &config, id, reason, now, &mut tools)
    };
    if args.crashed {
        for id in lifecycle::crashed_sessions(&home, None, "") {
            let report = reconcile(&id, ReconcileReason::Crash)?;
            done.push(Done {
                session: id,
                reason: ReconcileReason::Crash,
                replayed_turns: None,
                transcript_format: None,
                report,
            });
        }
    } else if let Some(path) = &args.transcript {
        let (t, format) = args.format.read(path)?;
        let turns = t.turns().count();
        for w in &t.warnings {
            eprintln!("warning: {}: {w}", path.display());
        }
        if turns == 0 {
            bail!(
                "{} has no turns read as a {format} transcript ({} lines skipped, {} broken): is it another host's? (--format claude|codex|gemini|plain) Nothing was written.",
                path.display(),
                t.skipped,
                t.warnings.len()
            );
        }
        let id = args
            .session
            .clone()
            .or_else(|| t.session_id.clone())
            .or_else(|| path.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
            .context("no session id in the transcript: pass --session")?;
        let mut replayed = None;
        {
            let mut session = Session::open(&home, &id, config.clone())?;
            // Replay only what the session's journal has not seen: all of it
            // for a session that left no journal, the tail for one that died.
            let seen = session.state.turn;
            let mut rest = t.clone();
            let mut past = false;
            rest.events.retain(|e| {
                past |= matches!(e, Event::Turn(x) if x.index > seen);
                past
            });
            let n = rest.turns().count();
            if n > 0 {
                if session.state.probe_seq == 0 && session.graph.is_empty() {
                    session.state.origin = Origin::Replay;
                }
                if let Some(p) = &args.project {
                    session.state.cwd = Some(p.display().to_string());
                } else if session.state.cwd.is_none() {
                    session.state.cwd.clone_from(&t.cwd);
                }
                session.state.transcript = Some(path.display().to_string());
                let mut probe = HeuristicProbe::new(config.probe.clone());
                crate::replay::drive(&mut session, &rest, &mut probe, false, false)?;
                // Turns the gate held back (deferred soft triggers) are read
                // before the session is merged: a dead session gets no later probe.
                if !session.state.pending.is_empty() {
                    let now = rest.ended_at();
                    if let Err(e) = session.cycle(&mut probe, now) {
                        eprintln!("session {id}: final probe: {e}");
                    }
                    session.snapshot()?;
                    session.save_state()?;
                }
                replayed = Some(n);
            } else {
                eprintln!(
                    "session {id} already saw all {turns} turns of the transcript; reconciling its journal"
                );
            }
        }
        let report = reconcile(&id, ReconcileReason::Transcript)?;
        done.push(Done {
            session: id,
            reason: ReconcileReason::Transcript,
            replayed_turns: replayed,
            transcript_format: Some(format),
            report,
        });
    } else {
        let id = pick_session(&home, args.session.as_deref())?;
        let report = reconcile(&id, ReconcileReason::Checkpoint)?;
        done.push(Done {
            session: id,
            reason: ReconcileReason::Checkpoint,
            replayed_turns: None,
            transcript_format: None,
            report,
        });
    }
    if let Some(f) = llm_adj.as_ref().and_then(|a| a.failure.as_deref()) {
        eprintln!(
            "warning: LLM adjudication failed ({f}); ambiguous pairs after it were kept apart offline"
        );
    }
    if args.json {
        return out_json(&done);
    }
    if done.is_empty() {
        return out("no crashed sessions to reconcile");
    }
    let mut s = String::new();
    for d in &done {
        let r = &d.report;
        if let Some(n) = d.replayed_turns {
            let from = d
                .transcript_format
                .map(|f| format!(" (a {f} transcript)"))
                .unwrap_or_default();
            s.push_str(&format!(
                "replayed {n} turns into session {}{from}\n",
                d.session
            ));
        }
        s.push_str(&format!(
            "reconciled {} ({}) into {}: {} merged, {} aliased, {} added, {} updated; {} ambiguous ({} kept apart as related); {} new edges ({} supersedes); {} graduations and {} archive reviews queued\n",
            d.session,
            d.reason.as_str(),
            r.stores.join(" + "),
            r.merged,
            r.aliased,
            r.added,
            r.updated,
            r.ambiguous,
            r.related,
            r.edges_added,
            r.superseded,
            r.graduations_flagged,
            r.archive_flagged
        ));
        for w in &r.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
    }
    out(s.trim_end())
}
