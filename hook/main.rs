//! The `rollgraph` binary: command-line glue over the engine.
//!
//! `main` parses the command line and dispatches to one module per command.
//! `rollgraph hook` is special: it is on the user's critical path, so it is
//! dispatched before anything else is initialised (no tracing subscriber, no
//! tokio runtime, no config parse) and it always exits 0, even when the
//! command line itself is wrong.

mod cli;
mod daemon;
mod expand;
mod hook;
mod hooklog;
mod install;
mod mcp;
mod query;
mod spool;
mod target;
mod work;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // A hook must never fail the host's prompt, not even on a bad
            // command line: log, print nothing, exit 0.
            if std::env::args().nth(1).as_deref() == Some("hook") {
                hook::log_error(&format!("bad hook command line: {}", e.kind()));
                return ExitCode::SUCCESS;
            }
            e.exit();
        }
    };
    match cli.command {
        Command::Hook(args) => {
            hook::run(args);
            ExitCode::SUCCESS
        }
        other => {
            init_tracing(&other);
            match dispatch(other) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    if is_broken_pipe(&e) {
                        return ExitCode::SUCCESS;
                    }
                    eprintln!("rollgraph: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Hook(_) => Ok(()),
        Command::Daemon(args) => daemon::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Expand(args) => expand::run(args),
        Command::Query(args) => query::run(args),
        Command::Install(args) => install::run_install(args),
        Command::Uninstall(args) => install::run_uninstall(args),
    }
}

/// Logs go to stderr, except for the daemon (its own log file, set up by
/// the daemon once it has detached) and the MCP server (stderr only, never
/// stdout: stdout is the protocol).
fn init_tracing(command: &Command) {
    if matches!(command, Command::Daemon(_)) {
        return;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("ROLLGRAPH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
