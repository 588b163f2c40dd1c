//! `rollgraph query TEXT`: search the memory — the session's graph and what
//! was said in it, the project's warm graph and episodes — and answer with
//! what was said, within a token budget.
//!
//! Like `expand`, it goes through the daemon when one listens (the daemon
//! may hold the session and the embedding model), else reads the files
//! directly. The answer comes from [`rollgraph_engine::search`], the one
//! retrieval path the MCP tool shares. Each query is counted in the
//! session's stats.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, Utc};
use rollgraph_engine::episodes::{self, Episode};
use rollgraph_engine::graph::Graph;
use rollgraph_engine::search::{
    self, Answer, Corpus, GraphSource, Scope, SearchIndex, SearchOptions, Sources,
};
use rollgraph_engine::session::{Session, SessionView};
use rollgraph_engine::store::{Home, StoreError};
use rollgraph_engine::warm::{self, GLOBAL_KEY, WarmStore};
use rollgraph_engine::{Config, clock};
use serde::{Deserialize, Serialize};

use crate::common;
use crate::ipc::{self, Request};

/// Search the memory.
#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    /// What to look for (a question, names, topics).
    #[arg(required = true, num_args = 1..)]
    pub text: Vec<String>,
    /// The session (default: the latest one in this directory, else the latest).
    #[arg(long)]
    pub session: Option<String>,
    /// Most results.
    #[arg(long, default_value_t = 12)]
    pub limit: usize,
    /// Token budget of the answer (cl100k tokens; clamped to 60..=20000).
    #[arg(long, default_value_t = search::DEFAULT_BUDGET)]
    pub budget: usize,
    /// What to search: session, project, session-project, all.
    #[arg(long, default_value = "session-project")]
    pub scope: Scope,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A question and how to answer it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    /// The question.
    pub text: String,
    /// Most hits.
    pub limit: usize,
    /// Token budget.
    pub budget: usize,
    /// What to search.
    pub scope: Scope,
}

/// A query's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The session searched.
    pub session: String,
    /// What was searched.
    pub scope: Scope,
    /// The answer, packed to its budget.
    #[serde(flatten)]
    pub answer: Answer,
}

impl QueryResult {
    /// The answer as text for a person or a model.
    pub fn to_text(&self) -> String {
        self.answer.text.clone()
    }
}

/// What a query reads besides the session's graph.
struct Read {
    /// The warm graphs the scope names (empty ones left out), named.
    warm: Vec<(String, Graph)>,
    /// Everything said that the scope searches: the session's, then the
    /// warm stores'.
    episodes: Vec<Episode>,
    /// Damage found while reading, shown with the answer.
    notes: Vec<String>,
}

/// The warm stores a scope searches (the global one last).
fn warm_keys(home: &Home, scope: Scope, cwd: Option<&str>) -> Vec<String> {
    match scope {
        Scope::Session => Vec::new(),
        Scope::Project | Scope::SessionProject => {
            vec![warm::key_for_cwd(cwd), GLOBAL_KEY.to_owned()]
        }
        Scope::All => {
            let mut k = WarmStore::keys(home);
            k.sort_by_key(|k| k == GLOBAL_KEY);
            k
        }
    }
}

/// Reads what `ask.scope` searches besides the session's graph: the
/// session's episodes, the warm stores' graphs and episodes, without a
/// lock on the warm stores and without repairing anything.
fn read(home: &Home, session_dir: &Path, cwd: Option<&str>, scope: Scope) -> Result<Read> {
    let mut notes = Vec::new();
    let mut episodes = Vec::new();
    if scope.session() {
        let read = episodes::read(&session_dir.join(episodes::FILE))?;
        if !read.damage.is_empty() {
            notes.push(format!("session episodes: {}", read.damage.join("; ")));
        }
        episodes = read.episodes.into_iter().map(|(_, e)| e).collect();
    }
    let mut warm = Vec::new();
    for key in warm_keys(home, scope, cwd) {
        let (g, damage) = warm::read_graph(home, &key)?;
        for d in damage {
            notes.push(format!("warm store {key}: {d}"));
        }
        let name = if key == GLOBAL_KEY {
            "global".to_owned()
        } else if scope == Scope::All {
            format!("project {key}")
        } else {
            "project".to_owned()
        };
        if !g.is_empty() {
            warm.push((name, g));
        }
        let read = episodes::read(&WarmStore::dir_of(home, &key)?.join(episodes::FILE))?;
        if !read.damage.is_empty() {
            notes.push(format!("episodes of {key}: {}", read.damage.join("; ")));
        }
        episodes.extend(read.episodes.into_iter().map(|(_, e)| e));
    }
    Ok(Read {
        warm,
        episodes,
        notes,
    })
}

/// The graphs a search looks through: the session's first, when searched.
fn graph_sources<'a>(
    session: Option<&'a Graph>,
    warm: &'a [(String, Graph)],
) -> Vec<GraphSource<'a>> {
    let mut graphs = Vec::new();
    if let Some(graph) = session {
        graphs.push(GraphSource {
            name: "session".into(),
            graph,
        });
    }
    for (name, g) in warm {
        graphs.push(GraphSource {
            name: name.clone(),
            graph: g,
        });
    }
    graphs
}

/// Asks an index: the session's nodes close in meaning are added when
/// the session is searched and the model is loaded.
fn ask_index(
    config: &Config,
    index: &SearchIndex<'_>,
    session: Option<&Graph>,
    ask: &Ask,
    now: DateTime<Utc>,
    notes: Vec<String>,
) -> Answer {
    let close = match session {
        Some(graph) if config.embed.enabled => common::with_semantic(config, |sem| {
            sem.map(|sem| {
                search::close_nodes(sem, graph, &ask.text, config.embed.explicit_threshold)
            })
            .unwrap_or_default()
        }),
        _ => Vec::new(),
    };
    let mut opts = SearchOptions::at(now);
    opts.budget = ask.budget;
    opts.limit = ask.limit.clamp(1, 50);
    opts.notes = notes;
    index.search(&ask.text, &opts, Some(&close))
}

/// An answer and what a long-lived process may keep of how it was found.
struct Answered {
    answer: Answer,
    /// The warm graphs read.
    warm: Vec<(String, Graph)>,
    /// Damage found while reading.
    notes: Vec<String>,
    /// The index built.
    corpus: Arc<Corpus>,
}

/// Answers `ask` over a session graph, its episodes and the warm stores.
/// [`answer`] from a read-only view of `session`: nothing kept, nothing counted.
fn view_answer(
    home: &Home,
    config: &Config,
    session: &str,
    v: &SessionView,
    ask: &Ask,
    now: DateTime<Utc>,
) -> Result<Answered> {
    let dir = home.session_dir(session)?;
    answer(
        home,
        config,
        &v.graph,
        &dir,
        v.state.cwd.as_deref(),
        ask,
        now,
    )
}

fn answer(
    home: &Home,
    config: &Config,
    graph: &Graph,
    session_dir: &Path,
    cwd: Option<&str>,
    ask: &Ask,
    now: DateTime<Utc>,
) -> Result<Answered> {
    let Read {
        warm,
        episodes,
        notes,
    } = read(home, session_dir, cwd, ask.scope)?;
    let session = ask.scope.session().then_some(graph);
    let index = SearchIndex::build(Sources {
        graphs: graph_sources(session, &warm),
        episodes,
    });
    let answer = ask_index(config, &index, session, ask, now, notes.clone());
    let corpus = index.corpus();
    drop(index);
    Ok(Answered {
        answer,
        warm,
        notes,
        corpus,
    })
}

/// Opens the session (waiting up to `wait`) and answers. With `repair`
/// (the daemon, a writer) a damaged session is repaired on opening; without
/// it (the CLI) a damaged session is queried as recovered in memory and left
/// exactly as it is (the query is then not counted).
///
/// A long-lived process (the daemon, the MCP server: see [`keep_indexes`])
/// keeps the index it built with the graphs it was built from, and answers
/// the next question from them while none of the files they were read from
/// has changed (see [`kept`]).
pub fn query_direct(
    home: &Home,
    config: &Config,
    session: &str,
    ask: &Ask,
    now: DateTime<Utc>,
    wait: Duration,
    repair: bool,
) -> Result<QueryResult> {
    if let Some(answer) = kept::answer(home, config, session, ask, now, wait)? {
        return Ok(QueryResult {
            session: session.to_owned(),
            scope: ask.scope,
            answer,
        });
    }
    // Stamped before anything is read: a change while reading shows as a
    // changed stamp next time.
    let session_files = kept::keeping()
        .then(|| home.session_dir(session).map(|d| kept::session_stamps(&d)))
        .transpose()?;
    let answer = match Session::open_with(home, session, config.clone(), wait, repair) {
        Ok(mut s) => {
            let cwd = s.state.cwd.clone();
            let warm_files = session_files
                .as_ref()
                .map(|_| kept::warm_stamps(home, ask.scope, cwd.as_deref()));
            let dir = s.dir.clone();
            let a = answer(home, config, &s.graph, &dir, cwd.as_deref(), ask, now)?;
            s.state.stats.queries += 1;
            s.save_state()?;
            if let (Some(session_files), Some(warm_files)) = (session_files, warm_files)
                && !s.load.damaged()
            {
                let graph = std::mem::take(&mut s.graph);
                kept::keep(
                    kept::Key::new(home, config, &s.state, ask.scope, session_files, warm_files),
                    ask.scope.session().then_some(graph),
                    a.warm,
                    a.notes,
                    a.corpus,
                );
            }
            a.answer
        }
        Err(StoreError::NeedsRepair { .. }) => {
            let v = SessionView::load(home, session, config.clone())?;
            crate::inspect::warn_damage(session, &v.load);
            view_answer(home, config, session, &v, ask, now)?.answer
        }
        Err(e) => return Err(e.into()),
    };
    Ok(QueryResult {
        session: session.to_owned(),
        scope: ask.scope,
        answer,
    })
}

/// Makes this process keep the index of its last queries (for the daemon
/// and the MCP server; a one-shot command keeps nothing).
pub fn keep_indexes() {
    kept::KEEPING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// What a long-lived process keeps of its last queries: per (session,
/// scope), the graphs read, the damage notes and the index built, keyed
/// by the files they came from.
///
/// A file is known by its device, inode, length, and modification and
/// change times: the session's and the warm stores' snapshots and journals
/// are appended to or replaced whole (a new inode), the episode logs are
/// appended to or rewritten whole, so any write changes a stamp. The
/// stamps are taken before the files are read, and what was read is kept
/// only when every file had been left alone for [`SETTLE`] by then: a
/// write in the same clock tick as an earlier one, replacing it with as
/// many bytes, could otherwise leave the stamp as it was. The
/// configuration and the session's directory (its state gives the
/// project) are part of the key too; a kept index is only ever asked
/// with the very graphs it was built from.
pub(crate) mod kept {
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::{Duration, SystemTime};

    use anyhow::Result;
    use chrono::{DateTime, Utc};
    use rollgraph_engine::Config;
    use rollgraph_engine::episodes;
    use rollgraph_engine::graph::Graph;
    use rollgraph_engine::search::{Answer, Corpus, Scope, SearchIndex};
    use rollgraph_engine::session::{LockedState, SessionState};
    use rollgraph_engine::store::Home;
    use rollgraph_engine::warm::WarmStore;

    use super::{Ask, ask_index, graph_sources, warm_keys};

    pub(super) static KEEPING: AtomicBool = AtomicBool::new(false);

    /// How long every file read must have been left alone for what was
    /// read from it to be kept (well above any file system's clock tick).
    pub const SETTLE: Duration = Duration::from_secs(2);

    /// Most (session, scope) indexes kept at once.
    const MOST: usize = 2;

    /// The files a session's graph and episodes are read from.
    const SESSION_FILES: [&str; 5] = [
        "snapshot.json",
        "snapshot.prev.json",
        "journal.jsonl",
        "journal.prev.jsonl",
        episodes::FILE,
    ];

    /// The files a warm store's graph and episodes are read from.
    const WARM_FILES: [&str; 5] = [
        "snapshot.json",
        "snapshot.prev.json",
        "journal.jsonl",
        "journal.prev.jsonl",
        episodes::FILE,
    ];

    pub fn keeping() -> bool {
        KEEPING.load(Ordering::Relaxed)
    }

    /// One file as last seen: `None` when it did not exist.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Stamp {
        dev: u64,
        ino: u64,
        len: u64,
        mtime: (i64, i64),
        ctime: (i64, i64),
    }

    /// Files and their stamps, with when they were taken.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Stamps {
        files: Vec<(PathBuf, Option<Stamp>)>,
        /// Whether every file was left alone for [`SETTLE`] before.
        settled: bool,
    }

    fn stamps(paths: impl IntoIterator<Item = PathBuf>) -> Stamps {
        let now = SystemTime::now();
        let before = now
            .checked_sub(SETTLE)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(i64::MIN, |d| d.as_secs() as i64);
        let mut settled = true;
        let files = paths
            .into_iter()
            .map(|p| {
                let stamp = std::fs::metadata(&p).ok().map(|m| Stamp {
                    dev: m.dev(),
                    ino: m.ino(),
                    len: m.size(),
                    mtime: (m.mtime(), m.mtime_nsec()),
                    ctime: (m.ctime(), m.ctime_nsec()),
                });
                // Whole seconds, rounded against keeping. (The change time
                // is in the stamp, but a data write moves both.)
                if stamp.is_some_and(|s| s.mtime.0 >= before) {
                    settled = false;
                }
                (p, stamp)
            })
            .collect();
        Stamps { files, settled }
    }

    /// The stamps of a session's files.
    pub fn session_stamps(dir: &Path) -> Stamps {
        stamps(SESSION_FILES.iter().map(|f| dir.join(f)))
    }

    /// The stamps of the warm stores a scope reads (their keys included).
    pub fn warm_stamps(home: &Home, scope: Scope, cwd: Option<&str>) -> Stamps {
        let dirs: Vec<PathBuf> = warm_keys(home, scope, cwd)
            .iter()
            .filter_map(|k| WarmStore::dir_of(home, k).ok())
            .collect();
        stamps(
            dirs.iter()
                .flat_map(|d| WARM_FILES.iter().map(move |f| d.join(f))),
        )
    }

    /// What an index was built from.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Key {
        home: PathBuf,
        config: Config,
        session: String,
        scope: Scope,
        /// Where the session's project is (which warm store it reads).
        cwd: Option<String>,
        /// What opening the session checks the journals against: the last
        /// entry written, the probes counted and those counted lost.
        counts: (u64, u64, u64),
        session_files: Stamps,
        warm_files: Stamps,
    }

    impl Key {
        pub fn new(
            home: &Home,
            config: &Config,
            state: &SessionState,
            scope: Scope,
            session_files: Stamps,
            warm_files: Stamps,
        ) -> Key {
            Key {
                home: home.root().to_owned(),
                config: config.clone(),
                session: state.session.clone(),
                scope,
                cwd: state.cwd.clone(),
                counts: (state.journal_seq, state.stats.probes, state.lost_probes),
                session_files,
                warm_files,
            }
        }
    }

    /// An index kept, with what it was built from.
    struct Kept {
        key: Key,
        session: Option<Graph>,
        warm: Vec<(String, Graph)>,
        notes: Vec<String>,
        corpus: Arc<Corpus>,
    }

    static KEPT: Mutex<Vec<Arc<Kept>>> = Mutex::new(Vec::new());

    /// Answers from a kept index, and builds nothing.
    static HITS: AtomicU64 = AtomicU64::new(0);

    /// How many questions were answered from a kept index.
    pub fn hits() -> u64 {
        HITS.load(Ordering::Relaxed)
    }

    /// Forgets every kept index.
    pub fn clear() {
        KEPT.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// Keeps an index built from settled files (the newest first; the
    /// oldest beyond [`MOST`] goes).
    pub fn keep(
        key: Key,
        session: Option<Graph>,
        warm: Vec<(String, Graph)>,
        notes: Vec<String>,
        corpus: Arc<Corpus>,
    ) {
        if !key.session_files.settled || !key.warm_files.settled {
            return;
        }
        let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|k| {
            (&k.key.home, &k.key.session, k.key.scope) != (&key.home, &key.session, key.scope)
        });
        kept.insert(
            0,
            Arc::new(Kept {
                key,
                session,
                warm,
                notes,
                corpus,
            }),
        );
        kept.truncate(MOST);
    }

    /// The answer from a kept index when one was built from files that are
    /// still as they were, the query counted as a fresh one would be;
    /// `None` otherwise (the caller reads the files).
    pub fn answer(
        home: &Home,
        config: &Config,
        session: &str,
        ask: &Ask,
        now: DateTime<Utc>,
        wait: Duration,
    ) -> Result<Option<Answer>> {
        if !keeping() {
            return Ok(None);
        }
        let found = |k: &Key| k.home == home.root() && k.session == session && k.scope == ask.scope;
        let Some(kept) = KEPT
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|k| found(&k.key))
            .cloned()
        else {
            return Ok(None);
        };
        // The session's lock, as a fresh query holds it; its state says
        // where the project is.
        let Some(mut locked) = LockedState::open(home, session, wait)? else {
            return Ok(None);
        };
        let key = Key::new(
            home,
            config,
            &locked.state,
            ask.scope,
            session_stamps(&home.session_dir(session)?),
            warm_stamps(home, ask.scope, locked.state.cwd.as_deref()),
        );
        if key != kept.key {
            return Ok(None);
        }
        let graphs = graph_sources(kept.session.as_ref(), &kept.warm);
        let Some(index) = SearchIndex::with_corpus(graphs, Arc::clone(&kept.corpus)) else {
            return Ok(None);
        };
        let answer = ask_index(
            config,
            &index,
            kept.session.as_ref(),
            ask,
            now,
            kept.notes.clone(),
        );
        locked.state.stats.queries += 1;
        locked.save()?;
        HITS.fetch_add(1, Ordering::Relaxed);
        Ok(Some(answer))
    }
}

/// Queries through the daemon when it listens, else directly.
pub fn query(home: &Home, config: &Config, session: &str, ask: &Ask) -> Result<QueryResult> {
    if ipc::reachable(home) {
        let req = Request::Query {
            session: session.to_owned(),
            text: ask.text.clone(),
            limit: ask.limit,
            budget: ask.budget,
            scope: ask.scope,
        };
        match ipc::request(home, &req, Duration::from_secs(5)) {
            Ok(v) => return serde_json::from_value(v).context("the daemon's query result"),
            Err(ipc::RequestError::Failed(msg)) => return Err(anyhow!(msg)),
            Err(e) => tracing::debug!("daemon: {e}; querying directly"),
        }
    }
    // Packing the answer needs the tokenizer (~0.1 s to load, once per
    // process): load it on another core while the files are read.
    std::thread::spawn(rollgraph_engine::render::load_tokenizer);
    query_direct(
        home,
        config,
        session,
        ask,
        clock::now(),
        Duration::from_millis(1_500),
        false,
    )
}

/// `rollgraph query`.
pub fn run(args: QueryArgs) -> Result<()> {
    let (home, config) = common::home_and_config()?;
    let session = common::pick_session(&home, args.session.as_deref())?;
    let ask = Ask {
        text: args.text.join(" "),
        limit: args.limit,
        budget: args.budget,
        scope: args.scope,
    };
    let r = query(&home, &config, &session, &ask)?;
    let out = if args.json {
        serde_json::to_string_pretty(&r)?
    } else {
        r.to_text().trim_end().to_owned()
    };
    common::out(&out)
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use rollgraph_engine::episodes::Speaker;
    use rollgraph_engine::graph::{Domain, Node, NodeId};

    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        clock::parse_time(s).unwrap_or_default()
    }

    fn said(session: &str, turn: u32, text: &str) -> Episode {
        Episode {
            session: session.into(),
            turn,
            speaker: Speaker::User,
            at: t("2026-11-02T10:00:00Z"),
            text: text.into(),
        }
    }

    fn node(label: &str, detail: &str) -> Node {
        let mut n = Node::new(
            NodeId::slug(label).unwrap_or_else(|| panic!("slug {label}")),
            label,
            Domain::Technical,
            0.5,
            t("2026-11-02T10:00:00Z"),
        );
        n.detail = Some(detail.into());
        n
    }

    /// Sets a file's modification time to an hour before the test began,
    /// as if it had been written then (the same time every call).
    fn age(path: &Path, epoch: SystemTime) {
        let f = std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        f.set_modified(epoch)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    fn age_all(dir: &Path, epoch: SystemTime) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                age_all(&p, epoch);
            } else {
                age(&p, epoch);
            }
        }
    }

    /// The answer read afresh, read-only: nothing kept, nothing counted.
    fn fresh(home: &Home, config: &Config, ask: &Ask, now: DateTime<Utc>) -> Answer {
        let v = SessionView::load(home, "s1", config.clone()).unwrap_or_else(|e| panic!("{e}"));
        view_answer(home, config, "s1", &v, ask, now)
            .unwrap_or_else(|e| panic!("{e}"))
            .answer
    }

    fn queries(home: &Home) -> u64 {
        SessionView::load(home, "s1", Config::default())
            .map(|v| v.state.stats.queries)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A long-lived process answers from the index it kept exactly as it
    /// would from the files, counts the query the same way, and builds
    /// again as soon as the session's graph, its episodes or a warm store
    /// changed, or a file is too fresh to trust its stamp.
    #[test]
    fn a_kept_index_answers_as_the_files_do_until_they_change() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(tmp.path());
        let mut config = Config::default();
        config.embed.enabled = false;
        let now = t("2026-11-02T12:00:00Z");
        let epoch = SystemTime::now() - Duration::from_secs(3_600);
        let cwd = tmp.path().join("project").display().to_string();

        let mut s = Session::open(&home, "s1", config.clone()).unwrap_or_else(|e| panic!("{e}"));
        s.state.cwd = Some(cwd.clone());
        let mut g = Graph::new();
        g.upsert_node(node("Invoice service", "sends invoices monthly"));
        s.reset(g.to_doc(), now).unwrap_or_else(|e| panic!("{e}"));
        let log = s.path(episodes::FILE);
        drop(s);
        let said_here = |e: Episode| {
            episodes::append(&log, &[e], u64::MAX).unwrap_or_else(|e| panic!("{e}"));
        };
        said_here(said(
            "s1",
            1,
            "The billing job retries three times before it gives up.",
        ));
        let warm_log = WarmStore::dir_of(&home, &warm::key_for_cwd(Some(&cwd)))
            .unwrap_or_else(|e| panic!("{e}"))
            .join(episodes::FILE);
        episodes::append(
            &warm_log,
            &[said(
                "s0",
                4,
                "The ledger export stops at ten thousand rows.",
            )],
            u64::MAX,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        age_all(tmp.path(), epoch);

        keep_indexes();
        let ask = |text: &str| Ask {
            text: text.into(),
            limit: 12,
            budget: 800,
            scope: Scope::SessionProject,
        };
        let q = |a: &Ask| {
            query_direct(&home, &config, "s1", a, now, Duration::from_secs(2), true)
                .unwrap_or_else(|e| panic!("{e}"))
                .answer
        };
        let hits = kept::hits;

        // Built and kept, then answered from what was kept.
        let h = hits();
        let first = q(&ask("how often does billing retry?"));
        assert_eq!(hits(), h);
        let again = q(&ask("how often does billing retry?"));
        assert_eq!(
            hits(),
            h + 1,
            "the second question is answered from the kept index"
        );
        assert_eq!(again, first);
        assert_eq!(
            again,
            fresh(&home, &config, &ask("how often does billing retry?"), now)
        );
        assert!(again.text.contains("three times"), "{}", again.text);
        for text in ["invoice", "ledger export rows", "nothing like this"] {
            assert_eq!(
                q(&ask(text)),
                fresh(&home, &config, &ask(text), now),
                "{text}"
            );
        }
        assert_eq!(hits(), h + 4);
        // Each counted, as a fresh query is.
        assert_eq!(queries(&home), 5);

        // What was said in the session grows (same modification time).
        said_here(said("s1", 2, "The zeppelin hangar opens at dawn."));
        age(&log, epoch);
        let h = hits();
        let a = q(&ask("zeppelin hangar"));
        assert_eq!(hits(), h, "a grown episode log is read again");
        assert!(a.text.contains("zeppelin hangar"), "{}", a.text);
        assert_eq!(a, fresh(&home, &config, &ask("zeppelin hangar"), now));
        assert_eq!(q(&ask("zeppelin hangar")), a);
        assert_eq!(hits(), h + 1);

        // The graph changes.
        let mut s = Session::open(&home, "s1", config.clone()).unwrap_or_else(|e| panic!("{e}"));
        g.upsert_node(node("Zeppelin fleet", "three airships for the hangar"));
        s.reset(g.to_doc(), now).unwrap_or_else(|e| panic!("{e}"));
        drop(s);
        age_all(
            &home.session_dir("s1").unwrap_or_else(|e| panic!("{e}")),
            epoch,
        );
        let h = hits();
        let a = q(&ask("zeppelin fleet"));
        assert_eq!(hits(), h, "a changed graph is read again");
        assert!(
            a.hits.iter().any(|x| x.label == "Zeppelin fleet"),
            "{}",
            a.text
        );
        assert_eq!(a, fresh(&home, &config, &ask("zeppelin fleet"), now));

        // The project's warm store changes.
        episodes::append(
            &warm_log,
            &[said("s0", 5, "The marmalade recipe needs bitter oranges.")],
            u64::MAX,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        age(&warm_log, epoch);
        let h = hits();
        let a = q(&ask("marmalade recipe"));
        assert_eq!(hits(), h, "a changed warm store is read again");
        assert!(a.text.contains("bitter oranges"), "{}", a.text);
        assert_eq!(a, fresh(&home, &config, &ask("marmalade recipe"), now));

        // A file written just now is read, and what was read is not kept
        // until the file has settled.
        said_here(said("s1", 3, "A quokka visited the office today."));
        let h = hits();
        let a = q(&ask("quokka"));
        assert!(a.text.contains("quokka"), "{}", a.text);
        assert_eq!(a, fresh(&home, &config, &ask("quokka"), now));
        assert_eq!(q(&ask("quokka")), a);
        assert_eq!(hits(), h, "nothing kept from a file written just now");
        age(&log, epoch);
        assert_eq!(q(&ask("quokka")), a);
        assert_eq!(q(&ask("quokka")), a);
        assert_eq!(hits(), h + 1);

        // A damaged state, asked without repairing: read from the files as
        // a fresh query would, not counted, nothing changed.
        let state = home
            .session_dir("s1")
            .unwrap_or_else(|e| panic!("{e}"))
            .join("state.json");
        std::fs::write(&state, b"{ not json").unwrap_or_else(|e| panic!("{e}"));
        let h = hits();
        let a = query_direct(
            &home,
            &config,
            "s1",
            &ask("quokka"),
            now,
            Duration::from_secs(2),
            false,
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .answer;
        assert_eq!(hits(), h);
        assert_eq!(a, fresh(&home, &config, &ask("quokka"), now));
        assert_eq!(std::fs::read(&state).unwrap_or_default(), b"{ not json");
    }
}
