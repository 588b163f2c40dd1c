//! `rollgraph query TEXT`: search the session's graph, saying why each item
//! surfaced (matched words, the edge it was reached through, how recent).
//!
//! Like `expand`, it goes through the daemon when one listens (the daemon
//! may hold the session), else opens the session directly. Each query is
//! counted in the session's stats.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, Utc};
use rollgraph_engine::query::{self as q, QueryHit, QueryOptions};
use rollgraph_engine::session::{Session, SessionView};
use rollgraph_engine::store::{Home, StoreError};
use rollgraph_engine::{Config, clock};
use serde::{Deserialize, Serialize};

use crate::common;
use crate::ipc::{self, Request};

/// Search the session's graph.
#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    /// What to look for.
    #[arg(required = true, num_args = 1..)]
    pub text: Vec<String>,
    /// The session (default: the latest one in this directory, else the latest).
    #[arg(long)]
    pub session: Option<String>,
    /// Most results.
    #[arg(long, default_value_t = 8)]
    pub limit: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A query's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The session searched.
    pub session: String,
    /// The query text.
    pub text: String,
    /// The hits, best first.
    pub hits: Vec<QueryHit>,
}

impl QueryResult {
    /// The result as text for a person or a model.
    pub fn to_text(&self) -> String {
        if self.hits.is_empty() {
            return format!("nothing in the session's memory matches {:?}", self.text);
        }
        let mut s = format!(
            "{} result{} for {:?}:\n",
            self.hits.len(),
            if self.hits.len() == 1 { "" } else { "s" },
            self.text
        );
        for (i, h) in self.hits.iter().enumerate() {
            s.push_str(&format!(
                "{}. {} [{}, id {}] score {:.2} — {}\n",
                i + 1,
                h.label,
                h.domain.as_str(),
                h.id.as_str(),
                h.score,
                h.why.join("; ")
            ));
        }
        s.push_str("(expand any id for its full detail)\n");
        s
    }
}

/// Opens the session (waiting up to `wait`) and runs the query. With
/// `repair` (the daemon, a writer) a damaged session is repaired on opening;
/// without it (the CLI) a damaged session is queried as recovered in memory
/// and left exactly as it is (the query is then not counted).
#[allow(clippy::too_many_arguments)]
pub fn query_direct(
    home: &Home,
    config: &Config,
    session: &str,
    text: &str,
    limit: usize,
    now: DateTime<Utc>,
    wait: Duration,
    repair: bool,
) -> Result<QueryResult> {
    let mut opts = QueryOptions::at(now);
    opts.limit = limit.clamp(1, 50);
    let threshold = config.embed.explicit_threshold;
    let hits = match Session::open_with(home, session, config.clone(), wait, repair) {
        Ok(mut s) => {
            let hits = common::with_semantic(config, |sem| {
                q::hybrid_query(&s.graph, text, &opts, sem, threshold)
            });
            s.state.stats.queries += 1;
            s.save_state()?;
            hits
        }
        Err(StoreError::NeedsRepair { .. }) => {
            let v = SessionView::load(home, session, config.clone())?;
            crate::inspect::warn_damage(session, &v.load);
            common::with_semantic(config, |sem| {
                q::hybrid_query(&v.graph, text, &opts, sem, threshold)
            })
        }
        Err(e) => return Err(e.into()),
    };
    Ok(QueryResult {
        session: session.to_owned(),
        text: text.to_owned(),
        hits,
    })
}

/// Queries through the daemon when it listens, else directly.
pub fn query(
    home: &Home,
    config: &Config,
    session: &str,
    text: &str,
    limit: usize,
) -> Result<QueryResult> {
    if ipc::reachable(home) {
        let req = Request::Query {
            session: session.to_owned(),
            text: text.to_owned(),
            limit,
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
        text,
        limit,
        clock::now(),
        Duration::from_millis(1_500),
        false,
    )
}

/// `rollgraph query`.
pub fn run(args: QueryArgs) -> Result<()> {
    let (home, config) = common::home_and_config()?;
    let session = common::pick_session(&home, args.session.as_deref())?;
    let text = args.text.join(" ");
    let r = query(&home, &config, &session, &text, args.limit)?;
    let out = if args.json {
        serde_json::to_string_pretty(&r)?
    } else {
        r.to_text().trim_end().to_owned()
    };
    common::out(&out)
}
