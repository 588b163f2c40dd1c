//! `rollgraph replay`: drive the pipeline over a transcript exactly as the
//! hook and the daemon would, turn by turn.
//!
//! At each turn the host would inject the last finished render (counted as
//! an injection), the gate runs on the prompt and the previous reply, and a
//! fired gate runs a probe cycle whose render the *next* turn injects.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;

use rollgraph_engine::clock;
use rollgraph_engine::gate::Trigger;
use rollgraph_engine::probe::Probe;
use rollgraph_engine::session::{Origin, Session, SessionState, read_render};
use rollgraph_engine::store::read_json;
use rollgraph_engine::transcript::{Event, Transcript};

use crate::common::{home_and_config, out, out_json};

/// Arguments of `rollgraph replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The Claude Code transcript (JSONL).
    pub transcript: PathBuf,
    /// The session the replay writes (default: the transcript's own session id).
    #[arg(long)]
    pub session: Option<String>,
    /// One JSON object on stdout: turns, probes, triggers, nodes, edges, render.
    #[arg(long)]
    pub json: bool,
    /// Replace a session the live hook created (a replay replaces its own earlier replays).
    #[arg(long)]
    pub force: bool,
    /// Print every gate decision.
    #[arg(long, short)]
    pub verbose: bool,
}

/// What `replay --json` prints.
#[derive(Debug, Serialize)]
pub struct ReplayReport {
    /// The session written.
    pub session: String,
    /// Turns replayed.
    pub turns: u64,
    /// Probes run.
    pub probes: u64,
    /// How often each trigger fired.
    pub triggers: BTreeMap<String, u64>,
    /// Patches rejected.
    pub rejected: u64,
    /// Compactions seen.
    pub compactions: u64,
    /// Nodes in the final graph.
    pub nodes: usize,
    /// Edges in the final graph.
    pub edges: usize,
    /// Broken transcript lines skipped.
    pub warnings: Vec<String>,
    /// Injection sizes across the replay.
    pub injections: InjectionSummary,
    /// The final render.
    pub render: RenderOut,
}

/// Injection sizes.
#[derive(Debug, Serialize)]
pub struct InjectionSummary {
    /// Injections made.
    pub count: u64,
    /// Mean tokens.
    pub mean_tokens: f64,
    /// Largest.
    pub max_tokens: u64,
}

/// A render in the report.
#[derive(Debug, Serialize)]
pub struct RenderOut {
    /// Token count (cl100k_base).
    pub tokens: usize,
    /// The text the hook would inject.
    pub text: String,
}

/// Runs `rollgraph replay`.
pub fn run(args: ReplayArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let t = rollgraph_engine::plain::read_any(&args.transcript)?;
    let session_id = args
        .session
        .clone()
        .or_else(|| t.session_id.clone())
        .or_else(|| {
            args.transcript
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_owned)
        })
        .context("no session id: pass --session")?;
    let dir = home.session_dir(&session_id)?;
    if dir.exists() {
        let prior: Option<SessionState> = read_json(&dir.join("state.json")).ok().flatten();
        let origin = prior.map(|s| s.origin).unwrap_or(Origin::Replay);
        if origin == Origin::Hook && !args.force {
            bail!(
                "session {session_id} was recorded by the live hook; pass --force to replace it, or --session NEW_ID to replay beside it"
            );
        }
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("removing the earlier replay in {}", dir.display()))?;
    }
    let mut session = Session::open(&home, &session_id, config.clone())?;
    session.state.origin = Origin::Replay;
    session.state.cwd = t.cwd.clone();
    session.state.transcript = Some(args.transcript.display().to_string());

    session.semantic = crate::common::load_semantic(&config);
    let mut probe: Box<dyn Probe> = rollgraph_engine::llm::probe_from_config(&config, &home);
    for w in &t.warnings {
        eprintln!("warning: {w}");
    }
    let progress = !args.json && std::io::stderr().is_terminal() && t.turns().count() > 20;
    drive(&mut session, &t, probe.as_mut(), args.verbose, progress)?;

    let now = t.ended_at();
    let render = read_render(&session.dir)?
        .map(|r| (r.tokens, r.text))
        .unwrap_or_else(|| {
            let r = session.render(now);
            (r.tokens, r.text)
        });
    let stats = &session.state.stats;
    let mut triggers: BTreeMap<String, u64> = Trigger::ALL
        .iter()
        .map(|t| (t.as_str().to_owned(), 0))
        .collect();
    triggers.extend(stats.triggers.clone());
    let report = ReplayReport {
        session: session_id.clone(),
        turns: stats.turns,
        probes: stats.probes,
        triggers,
        rejected: stats.rejected,
        compactions: stats.compactions,
        nodes: session.graph.node_count(),
        edges: session.graph.edge_count(),
        warnings: t.warnings.clone(),
        injections: InjectionSummary {
            count: stats.injections,
            mean_tokens: (stats.mean_injection() * 10.0).round() / 10.0,
            max_tokens: stats.max_injected_tokens,
        },
        render: RenderOut {
            tokens: render.0,
            text: render.1,
        },
    };
    if args.json {
        return out_json(&report);
    }
    let trig: Vec<String> = report
        .triggers
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    out(&format!(
        "Replayed {} turns of {} into session {}\n\
         probes: {} ({:.1} per 60 turns) — triggers: {}\n\
         graph: {} nodes, {} edges; patches rejected: {}; compactions: {}\n\
         injections: {} (mean {:.0} tokens, max {})\n\
         \n\
         Injection before the next prompt ({} tokens):\n\n{}",
        report.turns,
        args.transcript.display(),
        report.session,
        report.probes,
        if report.turns > 0 {
            report.probes as f64 * 60.0 / report.turns as f64
        } else {
            0.0
        },
        trig.join(", "),
        report.nodes,
        report.edges,
        report.rejected,
        report.compactions,
        report.injections.count,
        report.injections.mean_tokens,
        report.injections.max_tokens,
        report.render.tokens,
        report.render.text
    ))
}

/// Feeds a transcript through a session turn by turn, as the hook and the
/// daemon would, and leaves a snapshot behind. Returns the turns whose gate
/// fired a probe.
pub fn drive(
    session: &mut Session,
    t: &Transcript,
    probe: &mut dyn Probe,
    verbose: bool,
    progress: bool,
) -> Result<Vec<u32>> {
    let total = t.turns().count();
    let mut fired = Vec::new();
    for event in &t.events {
        match event {
            Event::Compaction { .. } => {
                session.state.stats.compactions += 1;
                // After a compaction the host fires SessionStart(compact): the render is re-injected.
                if let Some(r) = read_render(&session.dir)? {
                    session.state.stats.injection(r.tokens);
                }
            }
            Event::Turn(turn) => {
                let now = turn.timestamp.unwrap_or_else(clock::now);
                // UserPromptSubmit: the host injects the last finished render.
                if let Some(r) = read_render(&session.dir)? {
                    session.state.stats.injection(r.tokens);
                }
                let mut prompt_only = turn.clone();
                prompt_only.assistant.clear();
                prompt_only.files.clear();
                let decision = session.observe(prompt_only);
                if verbose {
                    let tr: Vec<&str> = decision.triggers.iter().map(|t| t.as_str()).collect();
                    eprintln!(
                        "turn {:>3}: {} {}",
                        turn.index,
                        if decision.fire { "PROBE" } else { "quiet" },
                        if tr.is_empty() {
                            decision.reason.clone()
                        } else {
                            format!("[{}] {}", tr.join(","), decision.reason)
                        }
                    );
                }
                if decision.fire {
                    fired.push(turn.index);
                    match session.cycle(probe, now) {
                        Ok(o) => {
                            if let Some(r) = o.rejected {
                                eprintln!("turn {}: patch rejected: {r}", turn.index);
                            }
                            if verbose {
                                for (proposed, into) in &o.merged {
                                    eprintln!(
                                        "turn {:>3}: merged new {proposed} into {into} (near-duplicate)",
                                        turn.index
                                    );
                                }
                            }
                        }
                        Err(e) => eprintln!("turn {}: {e}", turn.index),
                    }
                }
                session.record_reply(&turn.assistant, &turn.files);
                session.save_state()?;
                if progress {
                    eprint!("\rreplaying turn {}/{}", turn.index, total);
                }
            }
        }
    }
    if progress {
        eprintln!();
    }
    session.snapshot()?;
    session.save_state()?;
    Ok(fired)
}
