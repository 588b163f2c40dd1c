//! The `rollgraph` binary: CLI, host hooks, daemon and MCP server.
//!
//! `main` is glue: parse, dispatch, report. All logic lives in the
//! `rollgraph-engine` crate; modules here only do process plumbing.
//! `rollgraph hook` is special: it is on the user's critical path, so it is
//! dispatched before anything else is initialised (no logging subscriber, no
//! tokio runtime, no config parse) and it always exits 0, even when its
//! command line is wrong.

mod bench;
mod cli;
mod common;
mod daemon;
mod doctor;
mod eval;
mod expand;
mod export;
mod hook;
mod hooklog;
mod inspect;
mod install;
mod ipc;
mod mcp;
mod query;
mod reconcile;
mod replay;
mod review;
mod seed;
mod spool;
mod view;
mod work;

use std::process::ExitCode;

use clap::Parser;

/// Files and directories this process creates are private to the user.
fn private_umask() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

fn main() -> ExitCode {
    // The hook's fast path: `rollgraph hook <host>` skips building the whole
    // command tree (a measurable part of a ~2 ms budget).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "hook")
        && let Some(host) = hook::fast_host(&args)
    {
        private_umask();
        hook::run(host);
        return ExitCode::SUCCESS;
    }
    let cli = match cli::Cli::try_parse() {
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
    // Everything under ROLLGRAPH_HOME is this user's only (0700 / 0600); the
    // engine creates its files with explicit modes too, so this is a second
    // line. Commands that write the user's own files elsewhere (settings,
    // flat memory) keep the user's umask.
    if !matches!(
        cli.command,
        cli::Command::Install(_) | cli::Command::Uninstall(_) | cli::Command::Review(_)
    ) {
        private_umask();
    }
    if let cli::Command::Hook(args) = cli.command {
        hook::run(args.host.into());
        return ExitCode::SUCCESS;
    }
    // The daemon logs to its own file once it has detached.
    if !matches!(cli.command, cli::Command::Daemon(_)) {
        common::init_logging();
    }
    let result = match cli.command {
        cli::Command::Replay(a) => replay::run(a),
        cli::Command::Render(a) => inspect::render(a),
        cli::Command::Show(a) => inspect::show(a),
        cli::Command::Stats(a) => inspect::stats(a),
        cli::Command::Config(a) => inspect::config(a),
        cli::Command::Bench(a) => bench::run(a),
        cli::Command::Eval(a) => eval::run(a),
        cli::Command::Hook(_) => Ok(()),
        cli::Command::Daemon(a) => daemon::run(a),
        cli::Command::Mcp(a) => mcp::run(a),
        cli::Command::Expand(a) => expand::run(a),
        cli::Command::Query(a) => query::run(a),
        cli::Command::Install(a) => install::run_install(a),
        cli::Command::Uninstall(a) => install::run_uninstall(a),
        cli::Command::Reconcile(a) => reconcile::run(a),
        cli::Command::Seed(a) => seed::run(a),
        cli::Command::Review(a) => review::run(a),
        cli::Command::Doctor(a) => doctor::run(a),
        cli::Command::View(a) => view::run(a),
        cli::Command::Export(a) => export::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if common::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rollgraph: {e:#}");
            ExitCode::FAILURE
        }
    }
}
