//! The command line: one variant per subcommand, each defined in its module.

use clap::{Parser, Subcommand};

use crate::{daemon, expand, hook, install, mcp, query};

/// A rolling, in-session memory graph for coding agents.
#[derive(Debug, Parser)]
#[command(name = "rollgraph", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Answer one host hook event (reads the event JSON on stdin; always exits 0).
    Hook(hook::HookArgs),
    /// Run the background worker (started on demand by the hook).
    Daemon(daemon::DaemonArgs),
    /// Serve `memory_expand` and `memory_query` over MCP (stdio).
    Mcp(mcp::McpArgs),
    /// Expand a collapsed part of the render (a handle like `technical/sqlx` or a node id).
    Expand(expand::ExpandArgs),
    /// Search the session's graph and say why each item surfaced.
    Query(query::QueryArgs),
    /// Install the hooks into a host's settings (for people who don't use plugins).
    Install(install::InstallArgs),
    /// Remove what `install` added.
    Uninstall(install::InstallArgs),
}
