//! The `rollgraph` binary: CLI, host hooks, daemon and MCP server.
//!
//! `main` is glue: parse, dispatch, report. All logic lives in the
//! `rollgraph-engine` crate; modules here only do process plumbing.

mod bench;
mod cli;
mod common;
mod doctor;
mod inspect;
mod reconcile;
mod replay;
mod review;
mod seed;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    common::init_logging();
    let result = match cli.command {
        cli::Command::Replay(a) => replay::run(a),
        cli::Command::Render(a) => inspect::render(a),
        cli::Command::Show(a) => inspect::show(a),
        cli::Command::Stats(a) => inspect::stats(a),
        cli::Command::Config(a) => inspect::config(a),
        cli::Command::Bench(a) => bench::run(a),
        cli::Command::Reconcile(a) => reconcile::run(a),
        cli::Command::Seed(a) => seed::run(a),
        cli::Command::Review(a) => review::run(a),
        cli::Command::Doctor(a) => doctor::run(a),
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
