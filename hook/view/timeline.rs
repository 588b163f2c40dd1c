//! The timeline behind the page's turn slider.
//!
//! A hot session's journal is emptied at every snapshot (and a replay ends
//! with one), and the gate's decisions are not stored, so the history is
//! rebuilt one of two ways:
//!
//! 1. **From the transcript** the session recorded: the same pipeline
//!    (gate, heuristic probe, decay, render) re-runs turn by turn in a
//!    scratch state directory that is deleted afterwards, with the session's
//!    configuration and clock, exactly as `rollgraph replay` drives it. The
//!    result is compared with the stored graph and the page says whether it
//!    matches (an LLM-probed session, a seeded start or later expansions
//!    make it differ).
//! 2. **From the journal** when there is no readable transcript: the
//!    entries after the last snapshot, one frame each (no gate reasons: the
//!    journal records only the cycles that ran).
//!
//! Either way the last frame is the stored state itself, with the injection
//! `rollgraph render` prints.

use anyhow::Result;
use chrono::{DateTime, Utc};

use rollgraph_engine::Config;
use rollgraph_engine::graph::Graph;
use rollgraph_engine::peek::PeekedSession;
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::render::{self, RenderContext};
use rollgraph_engine::session::{Origin, Session, apply_entry, read_render, rules};
use rollgraph_engine::store::{Entry, Home};
use rollgraph_engine::transcript::{self, Event};

use super::data::{Builder, FrameInfo, GateOut, ProbeOut};

/// How the timeline was made.
pub struct Made {
    /// One line for the page.
    pub note: String,
    /// Whether a re-derived timeline ends at the stored graph.
    pub matches: Option<bool>,
}

/// Records the frames of a session's history into `b` (not the final "now"
/// frame). Returns how they were made.
pub fn session_frames(
    b: &mut Builder,
    s: &PeekedSession,
    stored: &Graph,
    config: &Config,
) -> Result<Made> {
    let id = s.state.session.clone();
    if let Some(path) = s.state.transcript.as_deref() {
        let path = std::path::Path::new(path);
        // Only a regular file: a FIFO or device would block the viewer.
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            let made = from_journal(b, s, config);
            return Ok(Made {
                note: format!(
                    "the transcript {} is not a readable regular file; {}",
                    path.display(),
                    made.note
                ),
                matches: None,
            });
        }
        match transcript::read_claude(path) {
            Ok(t) if t.turns().next().is_some() => {
                return from_transcript(b, &id, s, &t, stored, config, path);
            }
            Ok(_) => {}
            Err(e) => {
                let made = from_journal(b, s, config);
                return Ok(Made {
                    note: format!("{e}; {}", made.note),
                    matches: None,
                });
            }
        }
    }
    Ok(from_journal(b, s, config))
}

fn from_transcript(
    b: &mut Builder,
    id: &str,
    s: &PeekedSession,
    t: &transcript::Transcript,
    stored: &Graph,
    config: &Config,
    path: &std::path::Path,
) -> Result<Made> {
    let scratch = tempfile::tempdir()?;
    let home = Home::at(scratch.path());
    let mut session = Session::open(&home, id, config.clone())?;
    session.state.origin = Origin::Replay;
    session.state.cwd.clone_from(&s.state.cwd);
    session.state.transcript = Some(path.display().to_string());
    // The same probe and model a replay uses, minus the network: an LLM
    // probe is never called from a viewer.
    session.semantic = if config.embed.enabled {
        crate::common::load_semantic(config)
    } else {
        None
    };
    let mut probe = HeuristicProbe::new(config.probe.clone());
    let llm_probes: u64 = s
        .state
        .stats
        .probe_sources
        .iter()
        .filter(|(k, _)| k.as_str() != "heuristic")
        .map(|(_, v)| v)
        .sum();
    b.frame(
        FrameInfo {
            title: "start".into(),
            ..FrameInfo::default()
        },
        Some(&session.graph),
        &session.graph,
        &[],
        None,
    );
    let mut pending_events: Vec<String> = Vec::new();
    for event in &t.events {
        match event {
            Event::Compaction { .. } => {
                pending_events.push("compaction: the injection is given again in full".into());
            }
            Event::Turn(turn) => {
                let now: DateTime<Utc> =
                    turn.timestamp.unwrap_or_else(rollgraph_engine::clock::now);
                let mut prompt_only = turn.clone();
                prompt_only.assistant.clear();
                prompt_only.files.clear();
                let decision = session.observe(prompt_only);
                let gate = GateOut {
                    fire: decision.fire,
                    triggers: decision
                        .triggers
                        .iter()
                        .map(|t| t.as_str().to_owned())
                        .collect(),
                    reason: decision.reason.clone(),
                    names: decision.new_entities.clone(),
                };
                let mut probe_out = None;
                let mut changed = false;
                if decision.fire {
                    changed = true;
                    probe_out = Some(match session.cycle(&mut probe, now) {
                        Ok(o) => ProbeOut {
                            ops: o.ops,
                            rejected: o.rejected,
                            merged: o.merged,
                        },
                        Err(e) => ProbeOut {
                            ops: 0,
                            rejected: Some(e.to_string()),
                            merged: Vec::new(),
                        },
                    });
                }
                session.record_reply(&turn.assistant, &turn.files);
                let render = read_render(&session.dir)?;
                let focus = session.state.last_focus.clone();
                b.frame(
                    FrameInfo {
                        title: format!("turn {}", turn.index),
                        turn: turn.index,
                        time: turn.timestamp,
                        gate: Some(gate),
                        probe: probe_out,
                        events: std::mem::take(&mut pending_events),
                    },
                    changed.then_some(&session.graph),
                    &session.graph,
                    &focus,
                    render.as_ref().map(|r| (r.text.as_str(), r.tokens)),
                );
            }
        }
    }
    let ours = session.graph.to_doc();
    let theirs = stored.to_doc();
    let matches = ours == theirs;
    let mut note = format!(
        "re-derived from the transcript {} ({} turns) with the heuristic probe; ",
        path.display(),
        t.turns().count()
    );
    if matches {
        note.push_str("it ends at exactly the stored graph");
    } else {
        let differ = theirs
            .nodes
            .iter()
            .filter(|(k, n)| ours.nodes.get(*k) != Some(*n))
            .count()
            + ours
                .nodes
                .keys()
                .filter(|k| !theirs.nodes.contains_key(*k))
                .count();
        note.push_str(&format!(
            "it differs from the stored graph in {differ} nodes, so weights before the last position are approximate"
        ));
        if llm_probes > 0 {
            note.push_str(&format!(
                " ({llm_probes} of the session's probes were not heuristic)"
            ));
        }
    }
    drop(session);
    drop(scratch);
    Ok(Made {
        note,
        matches: Some(matches),
    })
}

fn from_journal(b: &mut Builder, s: &PeekedSession, config: &Config) -> Made {
    let id = s.state.session.as_str();
    // The journal's entries follow the snapshot: start from it.
    let mut g = s.snapshot.clone();
    b.frame(
        FrameInfo {
            title: if s.peeked.snapshot_seq > 0 {
                format!("snapshot (journal seq {})", s.peeked.snapshot_seq)
            } else {
                "start".into()
            },
            ..FrameInfo::default()
        },
        Some(&g),
        &g,
        &[],
        None,
    );
    let rules = rules(config);
    for (seq, e) in &s.entries {
        let (title, turn, now, focus, probe, events) = match e {
            Entry::Cycle {
                turn,
                now,
                focus,
                ops,
                ..
            } => (
                format!("turn {turn}"),
                *turn,
                *now,
                focus.clone(),
                Some(ProbeOut {
                    ops: ops.len(),
                    rejected: None,
                    merged: Vec::new(),
                }),
                Vec::new(),
            ),
            Entry::Touch { ids, now, .. } => (
                format!("expansion (seq {seq})"),
                s.state.turn,
                *now,
                Vec::new(),
                None,
                vec![format!(
                    "{} nodes raised by an expansion or query",
                    ids.len()
                )],
            ),
            Entry::Reset { doc } => (
                format!("reset (seq {seq})"),
                0,
                rollgraph_engine::clock::now(),
                Vec::new(),
                None,
                vec![format!(
                    "graph replaced ({} nodes: seeded from the warm graph or merged)",
                    doc.nodes.len()
                )],
            ),
        };
        if let Err(err) = apply_entry(&mut g, e, id, &rules) {
            tracing::warn!("journal entry {seq}: {err}");
        }
        let r = render::render(
            &g,
            &focus,
            &RenderContext {
                session: id,
                turn,
                now,
            },
            &config.render,
        );
        b.frame(
            FrameInfo {
                title,
                turn,
                time: Some(now),
                gate: None,
                probe,
                events,
            },
            Some(&g),
            &g,
            &focus,
            Some((r.text.as_str(), r.tokens)),
        );
    }
    let note = match (s.peeked.snapshot_seq, s.entries.len()) {
        (_, 0) => "no transcript to re-derive the history from and no journal entries after the last snapshot: only the stored state".to_owned(),
        (0, n) => format!("from the journal ({n} entries; the gate's reasons are not journaled)"),
        (seq, n) => format!(
            "from the journal after the snapshot at seq {seq} ({n} entries; earlier history was folded into the snapshot, the gate's reasons are not journaled)"
        ),
    };
    Made {
        note,
        matches: None,
    }
}
