//! Which graph `view` and `export` read: a hot session, a project's warm
//! graph or the global one. Read-only: nothing under the state directory is
//! created, locked, renamed or rewritten (see `rollgraph_engine::peek`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use rollgraph_engine::Config;
use rollgraph_engine::graph::{Graph, NodeId};
use rollgraph_engine::peek::{self, PeekedSession};
use rollgraph_engine::store::Home;
use rollgraph_engine::warm::{self, GLOBAL_KEY, WarmStore};

use crate::common::pick_session;

/// Which stored graph to read (default: the most recent session, preferring
/// this directory's).
#[derive(Debug, Args, Clone, Default)]
pub struct ScopeArgs {
    /// A hot session by id.
    #[arg(long, conflicts_with_all = ["project", "global"])]
    pub session: Option<String>,
    /// A project's warm graph (default DIR: the current directory).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with = "global")]
    pub project: Option<PathBuf>,
    /// The global warm graph (personal and relationship knowledge).
    #[arg(long)]
    pub global: bool,
}

/// What kind of graph was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A hot session.
    Session,
    /// A project's warm graph.
    Project,
    /// The global warm graph.
    Global,
}

impl Kind {
    /// Lowercase name for output.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Project => "project",
            Kind::Global => "global",
        }
    }
}

/// A stored graph, read.
pub struct Source {
    /// Session, project or global.
    pub kind: Kind,
    /// Session id or warm store key.
    pub id: String,
    /// A human name: the session id, the project directory, "global".
    pub name: String,
    /// The graph as stored now.
    pub graph: Graph,
    /// The focus of the last cycle (sessions only).
    pub focus: Vec<NodeId>,
    /// The session's files, when it is one.
    pub session: Option<PeekedSession>,
    /// Damage found while reading (nothing was repaired).
    pub problems: Vec<String>,
}

/// Reads the graph the arguments name.
pub fn load(home: &Home, config: &Config, scope: &ScopeArgs) -> Result<Source> {
    if scope.global || scope.project.is_some() {
        let (kind, key, name) = if scope.global {
            (Kind::Global, GLOBAL_KEY.to_owned(), "global".to_owned())
        } else {
            let dir = scope.project.clone().unwrap_or_else(|| PathBuf::from("."));
            if !dir.is_dir() {
                bail!("--project {}: not a directory", dir.display());
            }
            let canon = std::fs::canonicalize(&dir)
                .with_context(|| format!("resolving {}", dir.display()))?;
            (
                Kind::Project,
                warm::project_key(&canon),
                canon.display().to_string(),
            )
        };
        let dir = WarmStore::dir_of(home, &key)?;
        if !dir.is_dir() {
            bail!(
                "no warm graph for {name} under {} (key {key}): it is written when a session of it is reconciled, or by `rollgraph seed`",
                home.root().display()
            );
        }
        let w = peek::warm(home, &key)?;
        return Ok(Source {
            kind,
            id: key,
            name,
            graph: w.peeked.graph,
            focus: Vec::new(),
            session: None,
            problems: w.peeked.problems,
        });
    }
    let id = pick_session(home, scope.session.as_deref())?;
    let mut s = peek::session(home, &id, config)?;
    let graph = std::mem::take(&mut s.peeked.graph);
    let problems = std::mem::take(&mut s.peeked.problems);
    let focus = s.state.last_focus.clone();
    Ok(Source {
        kind: Kind::Session,
        name: id.clone(),
        id,
        graph,
        focus,
        session: Some(s),
        problems,
    })
}
