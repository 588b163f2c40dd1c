//! Session lifecycle: what the hook and the daemon call at session start,
//! compaction, checkpoints and session end.
//!
//! [`session_start`] recovers crashed sessions of the project (a hot journal
//! never reconciled), seeds flat-memory files from the config, and starts the
//! new hot graph from the warm graph's most relevant nodes so the first
//! injection already knows where the work stood. [`reconcile_session`] merges
//! one hot session into its project's warm store and the global store.
//! Every function opens and closes the sessions and stores it needs, so the
//! caller must not hold them open. No network and no model load happen here
//! unless the caller passes an LLM [`Adjudicator`] or [`Drafter`], or an
//! embedding [`Similar`], in the [`Tools`] of the `_with` variants.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::episodes;
use crate::graduate::{self, Drafter, TemplateDrafter};
use crate::graph::{Domain, EdgeKind, Graph, Node, NodeId};
pub use crate::reconcile::ReconcileReport;
use crate::reconcile::{
    self, Adjudicator, Lexical, MergeContext, OfflineAdjudicator, Similar, effective_weight,
};
use crate::session::{Session, SessionError, SessionState};
use crate::stats::Stats;
use crate::store::{FileLock, Home, StoreError, read_json};
use crate::warm::{self, GLOBAL_KEY, WarmEntry, WarmStore};

/// How long session start waits for a warm store another process is writing.
pub const SEED_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why a reconciliation ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReconcileReason {
    /// The host is compacting the conversation.
    Compaction,
    /// The session ended.
    SessionEnd,
    /// Enough unreconciled probes accumulated.
    Checkpoint,
    /// A crashed session found at the next session start.
    Crash,
    /// A transcript replayed for a session that left no journal.
    Transcript,
}

impl ReconcileReason {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReconcileReason::Compaction => "compaction",
            ReconcileReason::SessionEnd => "session_end",
            ReconcileReason::Checkpoint => "checkpoint",
            ReconcileReason::Crash => "crash",
            ReconcileReason::Transcript => "transcript",
        }
    }
}

/// What session start did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StartReport {
    /// Crashed sessions reconciled.
    pub recovered: Vec<String>,
    /// Nodes the new hot graph was seeded with from the warm graph(s).
    pub seeded_nodes: usize,
    /// Anchors created from flat-memory files listed in the config.
    pub seeded_anchors: usize,
    /// Things worth telling the user (a restored store, an unreadable file).
    pub warnings: Vec<String>,
}

/// Why a lifecycle step failed.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// A store (session or warm) failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A session operation failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A session has no state to reconcile.
    #[error("session {0} does not exist")]
    NoSession(String),
}

/// The replaceable parts of a reconciliation: similarity, adjudication of
/// ambiguous pairs and drafting of graduation texts.
pub struct Tools<'a> {
    /// Near-duplicate similarity.
    pub similar: &'a mut dyn Similar,
    /// Decides ambiguous pairs.
    pub adjudicator: &'a mut dyn Adjudicator,
    /// Drafts graduation texts.
    pub drafter: &'a mut dyn Drafter,
}

/// Runs `f` with the offline tools: lexical similarity, the offline
/// adjudicator and the template drafter.
pub fn with_offline_tools<T>(f: impl FnOnce(&mut Tools<'_>) -> T) -> T {
    let (mut sim, mut adj, mut draft) = (Lexical, OfflineAdjudicator, TemplateDrafter);
    let mut tools = Tools {
        similar: &mut sim,
        adjudicator: &mut adj,
        drafter: &mut draft,
    };
    f(&mut tools)
}

/// Whether a checkpoint reconciliation is due.
pub fn checkpoint_due(session: &Session, config: &Config) -> bool {
    session.state.unreconciled >= config.reconcile.checkpoint_every.max(1)
}

/// The merge constants from the config.
pub fn merge_context<'a>(
    config: &Config,
    session: &'a str,
    now: DateTime<Utc>,
) -> MergeContext<'a> {
    MergeContext {
        session,
        now,
        duplicate_threshold: config.embed.duplicate_threshold,
        ambiguous_threshold: config
            .reconcile
            .ambiguous_threshold
            .min(config.embed.duplicate_threshold),
        reinforce: config.reconcile.reinforce,
        half_life_days: config.reconcile.warm_half_life_days,
        anchor_floor: config.decay.anchor_floor,
    }
}

/// Whether a node belongs in the global store too.
pub fn is_global(n: &Node) -> bool {
    matches!(n.domain, Domain::Personal | Domain::Relationship)
}

/// SessionStart: reconcile crashed sessions of this project (state.json
/// `ended == false`, `unreconciled > 0`, session lock free, not
/// `session_id`), seed the new hot session from the warm graph(s) (and flat
/// seed files from config) unless it already has nodes, write its render.
pub fn session_start(
    home: &Home,
    config: &Config,
    session_id: &str,
    cwd: Option<&str>,
    now: DateTime<Utc>,
) -> Result<StartReport, LifecycleError> {
    with_offline_tools(|tools| session_start_with(home, config, session_id, cwd, now, tools))
}

/// [`session_start`] with explicit similarity, adjudication and drafting.
pub fn session_start_with(
    home: &Home,
    config: &Config,
    session_id: &str,
    cwd: Option<&str>,
    now: DateTime<Utc>,
    tools: &mut Tools<'_>,
) -> Result<StartReport, LifecycleError> {
    home.session_dir(session_id)?;
    let mut report = StartReport::default();
    let key = warm::key_for_cwd(cwd);
    for id in crashed_sessions(home, Some(&key), session_id) {
        match reconcile_session_with(home, config, &id, ReconcileReason::Crash, now, tools) {
            Ok(r) => {
                report.warnings.extend(r.warnings);
                report.recovered.push(id);
            }
            Err(e) => report
                .warnings
                .push(format!("could not recover session {id}: {e}")),
        }
    }
    let (seeded, warnings) = crate::seed::seed_configured(home, config, cwd, now);
    report.seeded_anchors = seeded.iter().map(|r| r.added).sum();
    report.warnings.extend(warnings);
    report
        .warnings
        .extend(seeded.into_iter().flat_map(|r| r.warnings));
    let mut session = Session::open(home, session_id, config.clone())?;
    if session.state.cwd.is_none() {
        session.state.cwd = cwd.filter(|c| !c.trim().is_empty()).map(str::to_owned);
    }
    if session.graph.is_empty() {
        let (graph, focus, warnings) = warm_seed(home, config, &key, now)?;
        report.warnings.extend(warnings);
        report.seeded_nodes = graph.node_count();
        if !graph.is_empty() {
            session.state.last_focus = focus;
            session.reset(graph.to_doc(), now)?;
        }
    }
    session.write_render(now)?;
    session.save_state()?;
    Ok(report)
}

/// Sessions that crashed: never ended, holding unreconciled probes, not
/// locked by a live process; only those of the store `key` when given.
pub fn crashed_sessions(home: &Home, key: Option<&str>, except: &str) -> Vec<String> {
    let mut out = Vec::new();
    for id in home.sessions() {
        if id == except {
            continue;
        }
        let Ok(dir) = home.session_dir(&id) else {
            continue;
        };
        let state: SessionState = match read_json(&dir.join("state.json")) {
            Ok(Some(s)) => s,
            _ => continue,
        };
        if state.ended || state.unreconciled == 0 {
            continue;
        }
        if key.is_some_and(|k| warm::key_for_cwd(state.cwd.as_deref()) != k) {
            continue;
        }
        // A live process holds the session lock: not ours to touch.
        match FileLock::try_acquire(&dir.join("lock")) {
            Ok(lock) => drop(lock),
            Err(_) => continue,
        }
        out.push(id);
    }
    out
}

/// Builds the seed graph for a new session: the most relevant warm nodes of
/// the project and global stores (current decisions with what they
/// superseded), the edges among them, and the focus to render around.
pub fn warm_seed(
    home: &Home,
    config: &Config,
    key: &str,
    now: DateTime<Utc>,
) -> Result<(Graph, Vec<NodeId>, Vec<String>), LifecycleError> {
    let mut warnings = Vec::new();
    let mut union = Graph::new();
    let keys: Vec<&str> = if key == GLOBAL_KEY {
        vec![GLOBAL_KEY]
    } else {
        vec![GLOBAL_KEY, key]
    };
    for k in keys {
        if !WarmStore::dir_of(home, k)?.join("snapshot.json").exists()
            && !WarmStore::dir_of(home, k)?.join("journal.jsonl").exists()
        {
            continue;
        }
        // Session start must not hang on a busy store: seed without it.
        let store = match WarmStore::open_with_timeout(home, k, SEED_LOCK_TIMEOUT) {
            Ok(s) => s,
            Err(StoreError::Locked(p)) => {
                warnings.push(format!(
                    "warm store {} is busy; this session starts without it",
                    p.display()
                ));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        warnings.extend(
            store
                .load
                .restored
                .iter()
                .map(|r| format!("warm store {k}: {r}")),
        );
        // The project store wins over the global one for the same id.
        for n in store.graph.nodes_unordered() {
            union.upsert_node(n.clone());
        }
        for e in store.graph.edges() {
            let _ = union.upsert_edge(e.clone());
        }
    }
    let rc = &config.reconcile;
    let floor = config.decay.anchor_floor;
    let mut ranked: Vec<(f64, &Node)> = union
        .nodes_unordered()
        .map(|n| {
            let mut w = effective_weight(n, now, rc.warm_half_life_days, floor);
            // Prefer the current decision: a superseded node ranks low.
            if union.superseded_by(&n.id).is_some() {
                w *= 0.25;
            }
            (w, n)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    let mut keep: BTreeSet<NodeId> = BTreeSet::new();
    for (_, n) in ranked.iter().take(rc.seed_nodes) {
        keep.insert(n.id.clone());
    }
    // Bring what a kept decision superseded, so the render can say so.
    let extra: Vec<NodeId> = keep
        .iter()
        .flat_map(|id| union.supersedes(id).into_iter().map(|n| n.id.clone()))
        .collect();
    keep.extend(extra);
    let weights: std::collections::HashMap<NodeId, f64> =
        ranked.iter().map(|(w, n)| (n.id.clone(), *w)).collect();
    let mut seed = Graph::new();
    for id in &keep {
        if let Some(n) = union.node(id) {
            let mut n = n.clone();
            // A superseded node comes along for the record, weighted low so
            // the render prefers the current decision.
            let w = weights.get(id).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            n.weight = if n.anchor { w.max(floor) } else { w };
            seed.upsert_node(n);
        }
    }
    for e in union.edges() {
        if keep.contains(&e.source) && keep.contains(&e.target) {
            let _ = seed.upsert_edge(e.clone());
        }
    }
    let mut focus: Vec<(f64, NodeId)> = keep
        .iter()
        .filter(|id| union.superseded_by(id).is_none())
        .map(|id| (weights.get(id).copied().unwrap_or(0.0), id.clone()))
        .collect();
    focus.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let focus: Vec<NodeId> = focus
        .into_iter()
        .take(config.render.focus_max.max(1))
        .map(|(_, id)| id)
        .collect();
    Ok((seed, focus, warnings))
}

/// Merge one hot session into its warm store(s) now; marks it reconciled
/// (`state.unreconciled = 0`; `ended = true` for SessionEnd).
pub fn reconcile_session(
    home: &Home,
    config: &Config,
    session_id: &str,
    reason: ReconcileReason,
    now: DateTime<Utc>,
) -> Result<ReconcileReport, LifecycleError> {
    with_offline_tools(|tools| reconcile_session_with(home, config, session_id, reason, now, tools))
}

/// [`reconcile_session`] with explicit similarity, adjudication and drafting.
pub fn reconcile_session_with(
    home: &Home,
    config: &Config,
    session_id: &str,
    reason: ReconcileReason,
    now: DateTime<Utc>,
    tools: &mut Tools<'_>,
) -> Result<ReconcileReport, LifecycleError> {
    let dir = home.session_dir(session_id)?;
    if !dir.exists() {
        return Err(LifecycleError::NoSession(session_id.to_owned()));
    }
    let mut session = Session::open(home, session_id, config.clone())?;
    let mut report = merge_graph(
        home,
        config,
        &session.graph,
        session_id,
        session.state.cwd.as_deref(),
        now,
        tools,
    )?;
    if session.load.damaged() {
        report
            .warnings
            .push(format!("session {session_id}: {}", session.load.summary()));
    }
    match merge_episodes(home, config, &mut session) {
        Ok(n) => report.episodes = n,
        Err(e) => report
            .warnings
            .push(format!("session {session_id}: episodes: {e}")),
    }
    session.state.unreconciled = 0;
    if reason == ReconcileReason::SessionEnd {
        session.state.ended = true;
    }
    session.save_state()?;
    tracing::info!(
        "reconciled session {session_id} ({}): {} merged, {} aliased, {} added",
        reason.as_str(),
        report.merged,
        report.aliased,
        report.added
    );
    Ok(report)
}

/// Copies the session's episodes that its warm store has not seen yet into
/// the store's bounded episode log (under the store's lock) and records how
/// far it got. Returns how many lines were copied.
pub fn merge_episodes(
    home: &Home,
    config: &Config,
    session: &mut Session,
) -> Result<usize, LifecycleError> {
    let read = episodes::read(&session.path(episodes::FILE))?;
    let after = session.state.episodes_reconciled;
    let new: Vec<episodes::Episode> = read
        .episodes
        .iter()
        .filter(|(seq, _)| *seq > after)
        .map(|(_, e)| e.clone())
        .collect();
    let Some(last) = read.episodes.last().map(|(s, _)| *s) else {
        return Ok(0);
    };
    if new.is_empty() {
        return Ok(0);
    }
    let key = warm::key_for_cwd(session.state.cwd.as_deref());
    let dir = WarmStore::dir_of(home, &key)?;
    crate::store::create_private_dir(&dir)?;
    let _lock = FileLock::acquire(&dir.join("lock"), warm::LOCK_TIMEOUT)?;
    episodes::append(
        &dir.join(episodes::FILE),
        &new,
        config.episodes.warm_max_bytes,
    )?;
    session.state.episodes_reconciled = last;
    Ok(new.len())
}

/// Merges a hot graph into the project store of `cwd` (all of it) and the
/// global store (its personal and relationship part), then flags what is
/// ready to graduate or to be archived.
pub fn merge_graph(
    home: &Home,
    config: &Config,
    hot: &Graph,
    session_id: &str,
    cwd: Option<&str>,
    now: DateTime<Utc>,
    tools: &mut Tools<'_>,
) -> Result<ReconcileReport, LifecycleError> {
    let mut total = ReconcileReport::default();
    let key = warm::key_for_cwd(cwd);
    let global_part = reconcile::subgraph(hot, is_global);
    let parts: Vec<(&str, &Graph)> = if global_part.is_empty() {
        vec![(key.as_str(), hot)]
    } else {
        vec![(key.as_str(), hot), (GLOBAL_KEY, &global_part)]
    };
    for (k, graph) in parts {
        let mut store = WarmStore::open(home, k)?;
        total.warnings.extend(
            store
                .load
                .restored
                .iter()
                .map(|r| format!("warm store {k}: {r}")),
        );
        let ctx = merge_context(config, session_id, now);
        let (mut entry, mut report) = reconcile::reconcile(
            graph,
            &store.graph,
            &store.meta,
            &ctx,
            &mut *tools.similar,
            &mut *tools.adjudicator,
        );
        if k != GLOBAL_KEY && store.meta.root.is_none() {
            entry.root = cwd.map(str::to_owned);
        }
        store.commit(entry)?;
        match graduate::flag(home, &store, config, now, &mut *tools.drafter) {
            Ok((g, a)) => {
                report.graduations_flagged += g;
                report.archive_flagged += a;
            }
            Err(e) => report.warnings.push(format!("review queue: {e}")),
        }
        report.stores.push(k.to_owned());
        total.add(&report);
    }
    // Ready renders for the next session's first injection (no daemon round trip).
    for k in [key.as_str(), GLOBAL_KEY] {
        if let Err(e) = write_warm_render(home, config, k, now) {
            total.warnings.push(format!("warm render of {k}: {e}"));
        }
    }
    Ok(total)
}

/// The file a store's ready render lives in: what the hook injects at the
/// start of a session that has no render of its own yet.
pub fn warm_render_path(home: &Home, key: &str) -> Result<std::path::PathBuf, StoreError> {
    Ok(WarmStore::dir_of(home, key)?.join("render.json"))
}

/// Renders the seed a new session of `key` would start from (the project's
/// warm graph with the global one; the global one alone for
/// [`GLOBAL_KEY`]) and writes it to [`warm_render_path`]. An empty graph
/// removes a stale render.
pub fn write_warm_render(
    home: &Home,
    config: &Config,
    key: &str,
    now: DateTime<Utc>,
) -> Result<(), LifecycleError> {
    let path = warm_render_path(home, key)?;
    let (graph, focus, _) = warm_seed(home, config, key, now)?;
    if graph.is_empty() {
        let _ = std::fs::remove_file(&path);
        return Ok(());
    }
    let label = if key == GLOBAL_KEY {
        "global"
    } else {
        "project"
    };
    let r = crate::render::render(
        &graph,
        &focus,
        &crate::render::RenderContext {
            session: label,
            turn: 0,
            now,
        },
        &config.render,
    );
    let stored =
        crate::session::StoredRender::of(&graph, &r, label, 0, now, config.render.min_weight);
    crate::store::write_json(&path, &stored)?;
    Ok(())
}

/// Journals an arbitrary change into a store (seeding uses this).
pub fn commit(home: &Home, key: &str, entry: WarmEntry) -> Result<(), LifecycleError> {
    let mut store = WarmStore::open(home, key)?;
    store.commit(entry)?;
    Ok(())
}

/// The validation counters of every session, and their sum.
pub fn all_stats(home: &Home) -> (Vec<(String, Stats)>, Stats) {
    let mut per = Vec::new();
    let mut total = Stats::default();
    for id in home.sessions() {
        let Ok(dir) = home.session_dir(&id) else {
            continue;
        };
        if let Ok(Some(state)) = read_json::<SessionState>(&dir.join("state.json")) {
            total.add(&state.stats);
            per.push((id, state.stats));
        }
    }
    (per, total)
}

/// The warm graph of a project store merged with the global one (read under
/// their locks), for inspection.
pub fn warm_graph(home: &Home, cwd: &Path) -> Result<Graph, LifecycleError> {
    let key = warm::project_key(cwd);
    let mut g = Graph::new();
    for k in [GLOBAL_KEY, key.as_str()] {
        let store = WarmStore::open(home, k)?;
        for n in store.graph.nodes_unordered() {
            g.upsert_node(n.clone());
        }
        for e in store.graph.edges() {
            let _ = g.upsert_edge(e.clone());
        }
    }
    Ok(g)
}

/// The current decision in a graph for a node: follows `supersedes` edges to
/// the newest node that replaced it.
pub fn current_of<'g>(g: &'g Graph, id: &NodeId) -> Option<&'g Node> {
    let mut cur = g.node(id)?;
    let mut seen = BTreeSet::new();
    while let Some(next) = g.superseded_by(&cur.id) {
        if !seen.insert(next.id.clone()) {
            break;
        }
        cur = next;
    }
    Some(cur)
}

/// Whether a graph has a `supersedes` edge from `new` to `old`.
pub fn has_supersedes(g: &Graph, new: &NodeId, old: &NodeId) -> bool {
    g.edges_of(new)
        .iter()
        .any(|e| e.kind == EdgeKind::Supersedes && &e.source == new && &e.target == old)
}
