//! Which session `expand`, `query` and the MCP server talk about.
//!
//! `--session ID` when given; else the most recently updated session whose
//! project directory is the current directory; else the most recent one.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Result, bail};
use rollgraph_engine::session::SessionState;
use rollgraph_engine::store::{Home, read_json, valid_session_id};

/// A session on disk, for choosing.
#[derive(Clone, Debug)]
struct Candidate {
    id: String,
    cwd: Option<String>,
    updated: SystemTime,
}

fn updated(dir: &Path) -> SystemTime {
    ["render.json", "state.json", "journal.jsonl"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).and_then(|m| m.modified()).ok())
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn same_dir(a: &str, b: &Path) -> bool {
    let a = PathBuf::from(a);
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Resolves the session to address.
pub fn resolve(home: &Home, explicit: Option<&str>) -> Result<String> {
    if let Some(id) = explicit {
        if !valid_session_id(id) {
            bail!("invalid session id {id:?}");
        }
        if !home.session_dir(id)?.is_dir() {
            bail!("no session {id} in {}", home.root().display());
        }
        return Ok(id.to_owned());
    }
    let mut all: Vec<Candidate> = home
        .sessions()
        .into_iter()
        .filter_map(|id| {
            let dir = home.session_dir(&id).ok()?;
            let state: Option<SessionState> = read_json(&dir.join("state.json")).ok().flatten();
            Some(Candidate {
                cwd: state.and_then(|s| s.cwd),
                updated: updated(&dir),
                id,
            })
        })
        .collect();
    if all.is_empty() {
        bail!("no sessions yet in {} (the hook creates one on the first prompt)", home.root().display());
    }
    all.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
    if let Ok(here) = std::env::current_dir() {
        if let Some(c) = all.iter().find(|c| c.cwd.as_deref().is_some_and(|d| same_dir(d, &here))) {
            return Ok(c.id.clone());
        }
    }
    Ok(all[0].id.clone())
}
