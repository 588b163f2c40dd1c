//! `rollgraph query TEXT`: search the memory — the session's graph and what
//! was said in it, the project's warm graph and episodes — and answer with
//! what was said, within a token budget.
//!
//! Like `expand`, it goes through the daemon when one listens (the daemon
//! may hold the session and the embedding model), else reads the files
//! directly. The answer comes from [`rollgraph_engine::search`], the one
//! retrieval path the MCP tool shares. Each query is counted in the
//! session's stats.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, Utc};
use rollgraph_engine::episodes::{self, Episode};
use rollgraph_engine::graph::Graph;
use rollgraph_engine::search::{self, Answer, GraphSource, Scope, SearchOptions, Sources};
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

/// Named warm graphs and their episodes.
type WarmSources = (Vec<(String, Graph)>, Vec<Episode>);

/// The graphs and episodes of the project (and global) stores a scope
/// names, read without a lock and without repairing anything.
fn warm_sources(
    home: &Home,
    scope: Scope,
    cwd: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<WarmSources> {
    let keys: Vec<String> = match scope {
        Scope::Session => Vec::new(),
        Scope::Project | Scope::SessionProject => {
            vec![warm::key_for_cwd(cwd), GLOBAL_KEY.to_owned()]
        }
        Scope::All => {
            let mut k = WarmStore::keys(home);
            k.sort_by_key(|k| k == GLOBAL_KEY);
            k
        }
    };
    let mut graphs = Vec::new();
    let mut eps = Vec::new();
    for key in keys {
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
            graphs.push((name, g));
        }
        let read = episodes::read(&WarmStore::dir_of(home, &key)?.join(episodes::FILE))?;
        if !read.damage.is_empty() {
            notes.push(format!("episodes of {key}: {}", read.damage.join("; ")));
        }
        eps.extend(read.episodes.into_iter().map(|(_, e)| e));
    }
    Ok((graphs, eps))
}

/// Answers `ask` over a session graph, its episodes and the warm stores.
fn answer(
    home: &Home,
    config: &Config,
    graph: &Graph,
    session_dir: &std::path::Path,
    cwd: Option<&str>,
    ask: &Ask,
    now: DateTime<Utc>,
) -> Result<Answer> {
    let mut notes = Vec::new();
    let mut session_eps = Vec::new();
    if ask.scope.session() {
        let read = episodes::read(&session_dir.join(episodes::FILE))?;
        if !read.damage.is_empty() {
            notes.push(format!("session episodes: {}", read.damage.join("; ")));
        }
        session_eps = read.episodes.into_iter().map(|(_, e)| e).collect();
    }
    let (warm_graphs, warm_eps) = if ask.scope.project() || ask.scope == Scope::All {
        warm_sources(home, ask.scope, cwd, &mut notes)?
    } else {
        (Vec::new(), Vec::new())
    };
    let mut sources = Sources::default();
    if ask.scope.session() {
        sources.graphs.push(GraphSource {
            name: "session".into(),
            graph,
        });
    }
    for (name, g) in &warm_graphs {
        sources.graphs.push(GraphSource {
            name: name.clone(),
            graph: g,
        });
    }
    sources.episodes = session_eps;
    sources.episodes.extend(warm_eps);
    let close = if ask.scope.session() {
        common::with_semantic(config, |sem| {
            sem.map(|sem| {
                search::close_nodes(sem, graph, &ask.text, config.embed.explicit_threshold)
            })
            .unwrap_or_default()
        })
    } else {
        Vec::new()
    };
    let mut opts = SearchOptions::at(now);
    opts.budget = ask.budget;
    opts.limit = ask.limit.clamp(1, 50);
    opts.notes = notes;
    let a = search::search(sources, &ask.text, &opts, Some(&close));
    Ok(a)
}

/// Opens the session (waiting up to `wait`) and answers. With `repair`
/// (the daemon, a writer) a damaged session is repaired on opening; without
/// it (the CLI) a damaged session is queried as recovered in memory and left
/// exactly as it is (the query is then not counted).
pub fn query_direct(
    home: &Home,
    config: &Config,
    session: &str,
    ask: &Ask,
    now: DateTime<Utc>,
    wait: Duration,
    repair: bool,
) -> Result<QueryResult> {
    let answer = match Session::open_with(home, session, config.clone(), wait, repair) {
        Ok(mut s) => {
            let cwd = s.state.cwd.clone();
            let a = answer(
                home,
                config,
                &s.graph,
                &s.dir.clone(),
                cwd.as_deref(),
                ask,
                now,
            )?;
            s.state.stats.queries += 1;
            s.save_state()?;
            a
        }
        Err(StoreError::NeedsRepair { .. }) => {
            let v = SessionView::load(home, session, config.clone())?;
            crate::inspect::warn_damage(session, &v.load);
            let dir = home.session_dir(session)?;
            answer(
                home,
                config,
                &v.graph,
                &dir,
                v.state.cwd.as_deref(),
                ask,
                now,
            )?
        }
        Err(e) => return Err(e.into()),
    };
    Ok(QueryResult {
        session: session.to_owned(),
        scope: ask.scope,
        answer,
    })
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
