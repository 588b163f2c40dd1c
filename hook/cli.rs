//! The command line: one subcommand per module.

use clap::{Parser, Subcommand};

use crate::{
    bench, daemon, doctor, eval, expand, export, hook, inspect, install, mcp, query, reconcile,
    replay, review, seed, view,
};

/// rollgraph: a rolling, in-session memory graph for coding agents.
#[derive(Debug, Parser)]
#[command(name = "rollgraph", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a Claude Code transcript through the pipeline, turn by turn, as the hook would.
    Replay(replay::ReplayArgs),
    /// Render a stored session's injection now.
    Render(inspect::RenderArgs),
    /// Show a stored session's graph.
    Show(inspect::ShowArgs),
    /// The validation signals: probe rate, injection size, expansions.
    Stats(inspect::StatsArgs),
    /// Print the effective configuration.
    Config(inspect::ConfigArgs),
    /// Score the memory on a labelled corpus (recall, supersession, people, junk, gate, answers).
    Eval(eval::EvalArgs),
    /// Measure the engine: probe rate, render and apply+decay timings.
    Bench(bench::BenchArgs),
    /// Answer one host hook event (reads the event JSON on stdin; always exits 0).
    Hook(HookArgs),
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
    /// Merge hot sessions into the warm graph now (crashed ones, or a transcript's).
    Reconcile(reconcile::ReconcileArgs),
    /// Seed a warm graph with anchors from a flat memory file.
    Seed(seed::SeedArgs),
    /// Review graduations into flat memory and archive flags.
    Review(review::ReviewArgs),
    /// Write one self-contained HTML page to look at the memory: graph, timeline, injection.
    View(view::ViewArgs),
    /// Export the stored graph as Graphviz DOT, JSON or GraphML.
    Export(export::ExportArgs),
    /// Check the setup: active probe, LLM endpoint (one live request), breaker, last error, embeddings.
    Doctor(doctor::DoctorArgs),
}

/// Answer one host hook event.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The host that runs the hook.
    #[arg(value_enum)]
    pub host: HookHost,
}

/// Hosts whose hook protocol we speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HookHost {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI (same payloads as Claude Code).
    Codex,
    /// Gemini CLI (BeforeAgent, AfterAgent, PreCompress; plain-text context).
    Gemini,
}

impl From<HookHost> for hook::Host {
    fn from(h: HookHost) -> hook::Host {
        match h {
            HookHost::Claude => hook::Host::Claude,
            HookHost::Codex => hook::Host::Codex,
            HookHost::Gemini => hook::Host::Gemini,
        }
    }
}
