//! `rollgraph expand HANDLE`: show a collapsed part of the render in full.
//!
//! Asking is a signal: the expanded nodes are raised (a journaled touch) and
//! the expansion is counted in the session's stats. The session may be held
//! by the daemon, so the request goes through the daemon when one listens,
//! else the session is opened directly with a short lock timeout; if both
//! fail the expansion is spooled, so the raise is never lost.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, Utc};
use rollgraph_engine::graph::NodeId;
use rollgraph_engine::render;
use rollgraph_engine::session::{Session, SessionView, read_render};
use rollgraph_engine::store::{Home, StoreError};
use rollgraph_engine::{Config, clock};
use serde::{Deserialize, Serialize};

use crate::common;
use crate::ipc::{self, Request};
use crate::spool::{self, Job, JobLine};

/// Expand a collapsed part of the render.
#[derive(Debug, clap::Args)]
pub struct ExpandArgs {
    /// A handle from the render (`technical/sqlx`, `personal/other`) or a node id.
    pub handle: String,
    /// The session (default: the latest one in this directory, else the latest).
    #[arg(long)]
    pub session: Option<String>,
    /// Token budget of the answer (cl100k tokens; clamped to 60..=20000).
    #[arg(long, default_value_t = rollgraph_engine::search::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// An expansion's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expansion {
    /// The session.
    pub session: String,
    /// The handle asked for.
    pub handle: String,
    /// The nodes shown, strongest first (within the budget).
    pub ids: Vec<NodeId>,
    /// Members of the handle that did not fit: `label (id)`, to expand next.
    #[serde(default)]
    pub more: Vec<String>,
    /// The token budget applied.
    #[serde(default)]
    pub budget: usize,
    /// The nodes in full.
    pub text: String,
}

/// How long a direct expansion waits for the session lock.
const LOCK_WAIT: Duration = Duration::from_millis(1_500);

/// What describing a handle gives: the nodes shown, the text, and the
/// members that did not fit the budget.
struct Described {
    ids: Vec<NodeId>,
    text: String,
    more: Vec<String>,
    budget: usize,
}

/// Describes the nodes behind `handle` in a graph, without changing
/// anything: strongest first while they fit `budget` tokens, then the rest
/// by name and id ("N more: …") to expand next.
fn describe_handle(
    graph: &rollgraph_engine::graph::Graph,
    dir: &std::path::Path,
    config: &Config,
    handle: &str,
    now: DateTime<Utc>,
    budget: usize,
) -> Result<Described> {
    use rollgraph_engine::render::count_tokens;
    use rollgraph_engine::search::{MAX_BUDGET, MIN_BUDGET};
    let Some(ids) = render::expand_handle(graph, handle) else {
        let known = read_render(dir)
            .ok()
            .flatten()
            .map(|r| r.handles)
            .unwrap_or_default();
        return Err(if known.is_empty() {
            anyhow!("unknown handle {handle:?}")
        } else {
            anyhow!(
                "unknown handle {handle:?}; the current render offers: {}",
                known.join(", ")
            )
        });
    };
    let clamped = budget.clamp(MIN_BUDGET, MAX_BUDGET);
    let edges = config.render.edges_per_node.max(6);
    let head = format!(
        "{handle} ({} node{}):\n",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" }
    );
    let mut note = String::new();
    if clamped != budget {
        note = format!("note: budget {budget} clamped to {clamped}\n");
    }
    // Room kept for the "more" line.
    let reserve = 60;
    let mut text = head.clone();
    let mut used = count_tokens(&head) + count_tokens(&note);
    let mut shown = Vec::new();
    let mut rest = Vec::new();
    for id in &ids {
        let Some(n) = graph.node(id) else { continue };
        let mut d = render::describe(graph, n, now, edges);
        d.push('\n');
        let c = count_tokens(&d);
        if rest.is_empty() && used + c + reserve <= clamped {
            text.push_str(&d);
            used += c;
            shown.push(id.clone());
        } else {
            rest.push(format!("{} ({})", n.label, n.id.as_str()));
        }
    }
    if shown.is_empty() && !rest.is_empty() {
        // The strongest node alone is over the budget: as much of it as fits.
        if let Some(n) = ids.first().and_then(|id| graph.node(id)) {
            let d = render::describe(graph, n, now, edges);
            let cut = "(cut to the budget: raise it for the rest)\n";
            let room = clamped.saturating_sub(used + reserve + count_tokens(cut));
            let mut part = String::new();
            for line in d.lines() {
                if count_tokens(&format!("{part}{line}\n")) <= room {
                    part.push_str(line);
                    part.push('\n');
                    continue;
                }
                // The line that does not fit, cut by words.
                let mut cut_line = String::new();
                for w in line.split_whitespace() {
                    let next = format!("{cut_line}{w} ");
                    if count_tokens(&format!("{part}{next}…\n")) > room {
                        break;
                    }
                    cut_line = next;
                }
                if !cut_line.is_empty() {
                    part.push_str(cut_line.trim_end());
                    part.push_str(" …\n");
                }
                break;
            }
            if !part.is_empty() {
                used += count_tokens(&part) + count_tokens(cut);
                text.push_str(&part);
                text.push_str(cut);
                shown.push(n.id.clone());
                rest.remove(0);
            }
        }
    }
    if !rest.is_empty() {
        let line = |k: usize| {
            format!(
                "{} more (expand an id to go deeper): {}{}\n",
                rest.len(),
                rest[..k].join(", "),
                if k < rest.len() { ", …" } else { "" }
            )
        };
        let fits = |k: usize| used + count_tokens(&line(k)) <= clamped;
        let k = rollgraph_engine::search::most_that_fit(rest.len(), fits);
        if fits(k) {
            text.push_str(&line(k));
        }
    }
    text.push_str(&note);
    Ok(Described {
        ids: shown,
        text,
        more: rest,
        budget: clamped,
    })
}

/// Expands `handle` in an open session: describes its nodes, raises them,
/// counts the expansion.
/// Only what was shown is raised, by the probe's mention boost.
pub fn expand_session(
    s: &mut Session,
    handle: &str,
    now: DateTime<Utc>,
    budget: usize,
) -> Result<Expansion> {
    let d = describe_handle(&s.graph, &s.dir, &s.config, handle, now, budget)?;
    let boost = s.config.probe.mention_boost;
    s.touch(&d.ids, boost, now)?;
    s.state.stats.expansions += 1;
    s.save_state()?;
    Ok(Expansion {
        session: s.id().to_owned(),
        handle: handle.to_owned(),
        ids: d.ids,
        more: d.more,
        budget: d.budget,
        text: d.text,
    })
}

/// Opens the session (waiting up to `wait` for its lock) and expands. With
/// `repair` (the daemon, a writer) a damaged session is repaired on opening;
/// without it (the CLI, a reader) a damaged session is left as it is: the
/// expansion is answered from the state recovered in memory and the raise
/// is queued for a writer.
#[allow(clippy::too_many_arguments)]
pub fn expand_direct(
    home: &Home,
    config: &Config,
    session: &str,
    handle: &str,
    now: DateTime<Utc>,
    wait: Duration,
    repair: bool,
    budget: usize,
) -> Result<Expansion> {
    match Session::open_with(home, session, config.clone(), wait, repair) {
        Ok(mut s) => expand_session(&mut s, handle, now, budget),
        Err(StoreError::NeedsRepair { .. }) => {
            let v = SessionView::load(home, session, config.clone())?;
            crate::inspect::warn_damage(session, &v.load);
            let d = describe_handle(&v.graph, &v.dir, config, handle, now, budget)?;
            queue_expansion(home, session, handle, now)?;
            Ok(Expansion {
                session: session.to_owned(),
                handle: handle.to_owned(),
                ids: d.ids,
                more: d.more,
                budget: d.budget,
                text: d.text,
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Spools an expansion for the daemon (which raises the nodes) and pokes it.
fn queue_expansion(home: &Home, session: &str, handle: &str, now: DateTime<Utc>) -> Result<()> {
    let line = JobLine {
        session: session.to_owned(),
        host: "cli".into(),
        cwd: None,
        transcript_path: None,
        ts: now,
        job: Job::Expand {
            handle: handle.to_owned(),
        },
    };
    spool::append(home, &line)?;
    let mut errors = Vec::new();
    ipc::poke_or_start(home, &mut errors);
    Ok(())
}

/// Expands through the daemon when it listens, else directly; when the
/// session stays busy, spools the expansion and says so.
pub fn expand(
    home: &Home,
    config: &Config,
    session: &str,
    handle: &str,
    budget: usize,
) -> Result<Expansion> {
    let now = clock::now();
    if ipc::reachable(home) {
        let req = Request::Expand {
            session: session.to_owned(),
            handle: handle.to_owned(),
            budget,
        };
        match ipc::request(home, &req, Duration::from_secs(5)) {
            Ok(v) => return serde_json::from_value(v).context("the daemon's expansion"),
            Err(ipc::RequestError::Failed(msg)) => return Err(anyhow!(msg)),
            Err(e) => tracing::debug!("daemon: {e}; expanding directly"),
        }
    }
    match expand_direct(home, config, session, handle, now, LOCK_WAIT, false, budget) {
        Ok(e) => Ok(e),
        Err(e)
            if e.downcast_ref::<StoreError>()
                .is_some_and(|s| matches!(s, StoreError::Locked(_))) =>
        {
            queue_expansion(home, session, handle, now)?;
            Err(anyhow!(
                "session {session} is busy; the expansion of {handle:?} was queued — try again in a moment"
            ))
        }
        Err(e) => Err(e),
    }
}

/// `rollgraph expand`.
pub fn run(args: ExpandArgs) -> Result<()> {
    let (home, config) = common::home_and_config()?;
    let session = common::pick_session(&home, args.session.as_deref())?;
    let e = expand(&home, &config, &session, &args.handle, args.budget)?;
    let out = if args.json {
        serde_json::to_string_pretty(&e)?
    } else {
        e.text.trim_end().to_owned()
    };
    crate::common::out(&out)
}
