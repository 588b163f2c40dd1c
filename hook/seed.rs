//! `rollgraph seed`: turn a flat memory file into anchor nodes of a warm graph.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use rollgraph_engine::clock;
use rollgraph_engine::seed;
use rollgraph_engine::warm::{self, GLOBAL_KEY};

use crate::common::{home_and_config, out, out_json};

/// Arguments of `rollgraph seed`.
#[derive(Debug, Args)]
pub struct SeedArgs {
    /// The flat memory file (MEMORY.md, CLAUDE.md); `FILE#Heading` seeds one section.
    pub file: PathBuf,
    /// The project whose warm graph gets the anchors (default: the current directory).
    #[arg(long, conflicts_with = "global")]
    pub project: Option<PathBuf>,
    /// Seed the global store (personal and relationship knowledge) instead.
    #[arg(long)]
    pub global: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `rollgraph seed`.
pub fn run(args: SeedArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let key = if args.global {
        GLOBAL_KEY.to_owned()
    } else {
        let dir = match args.project {
            Some(p) => p,
            None => std::env::current_dir().context("reading the current directory")?,
        };
        warm::project_key(&dir)
    };
    let report = seed::seed_file(&home, &config, &args.file, &key, clock::now())?;
    if args.json {
        return out_json(&report);
    }
    let mut s = format!(
        "seeded {}: {} items, {} new anchors ({} rules at high weight), {} graduated lines linked to their nodes, {} already seeded — store {}",
        report.file,
        report.items,
        report.added,
        report.rules,
        report.linked,
        report.already,
        report.store
    );
    for w in &report.warnings {
        s.push_str(&format!("\nwarning: {w}"));
    }
    out(&s)
}
