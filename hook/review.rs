//! `rollgraph review`: the graduation and archive review queue.
//!
//! Nothing reaches a flat memory file without `approve`; an approved text
//! carries a marker so it is never appended twice.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use rollgraph_engine::clock;
use rollgraph_engine::graduate::{self, ReviewItem, ReviewKind, ReviewQueue, ReviewStatus};

use crate::common::{home_and_config, out, out_json};

/// Arguments of `rollgraph review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

/// Review actions.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// List pending items (with --all, decided ones too).
    List {
        /// Include approved and rejected items.
        #[arg(long)]
        all: bool,
    },
    /// Show one item in full.
    Show {
        /// The item id.
        id: String,
    },
    /// Approve an item: append its text to the flat file (graduation) or retire the anchor (archive).
    Approve {
        /// The item id.
        id: String,
        /// The flat file to append to (default: flat.graduate_to from the config).
        #[arg(long)]
        to: Option<PathBuf>,
    },
    /// Replace a pending item's text.
    Edit {
        /// The item id.
        id: String,
        /// The new text (it may start with "- ").
        #[arg(long, allow_hyphen_values = true)]
        text: String,
    },
    /// Reject an item; it is never queued again.
    Reject {
        /// The item id.
        id: String,
    },
}

fn summary_line(i: &ReviewItem) -> String {
    format!(
        "{:<13} {:<9} {:<9} {:>8} {:>6.2}  {}",
        i.id,
        i.kind.as_str(),
        i.status.as_str(),
        i.sessions,
        i.weight,
        i.label
    )
}

fn details(i: &ReviewItem, target: Option<&std::path::Path>) -> String {
    let mut s = format!("{}  {}  {}\n", i.id, i.kind.as_str(), i.status.as_str());
    s.push_str(&format!(
        "node:     {} ({}) in store {}",
        i.node,
        i.domain.as_str(),
        i.store
    ));
    if let Some(r) = &i.root {
        s.push_str(&format!(" ({r})"));
    }
    s.push('\n');
    s.push_str(&format!("why:      {}\n", i.reason));
    s.push_str(&format!(
        "flagged:  {}\n",
        i.created.format("%Y-%m-%d %H:%M UTC")
    ));
    s.push_str(&format!(
        "text:     {}{}\n",
        i.text,
        if i.edited { "  (edited)" } else { "" }
    ));
    s.push_str(&format!("drafted:  {}\n", i.drafted_by));
    match (i.status, i.kind) {
        (ReviewStatus::Pending, ReviewKind::Graduate) => match target {
            Some(t) => s.push_str(&format!("target:   {}\n", t.display())),
            None => s.push_str("target:   (none: set flat.graduate_to or pass --to)\n"),
        },
        (ReviewStatus::Pending, ReviewKind::Archive) => s.push_str(
            "approve:  retires the anchor (it may then fade); the flat file is left as it is\n",
        ),
        (_, _) => {
            if let Some(d) = i.decided {
                s.push_str(&format!("decided:  {}\n", d.format("%Y-%m-%d %H:%M UTC")));
            }
            if let Some(w) = &i.written_to {
                s.push_str(&format!("written:  {}\n", w.display()));
            }
        }
    }
    s
}

/// Runs `rollgraph review`.
pub fn run(args: ReviewArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let queue = ReviewQueue::new(&home);
    let now = clock::now();
    match args.action {
        Action::List { all } => {
            let (items, warnings) = queue.list();
            for w in &warnings {
                eprintln!("warning: {w}");
            }
            let shown: Vec<&ReviewItem> = items
                .iter()
                .filter(|i| all || i.status == ReviewStatus::Pending)
                .collect();
            if args.json {
                return out_json(&shown);
            }
            if shown.is_empty() {
                return out(if all {
                    "the review queue is empty"
                } else {
                    "nothing to review"
                });
            }
            let mut s = format!(
                "{:<13} {:<9} {:<9} {:>8} {:>6}  {}\n",
                "id", "kind", "status", "sessions", "weight", "label"
            );
            for i in &shown {
                s.push_str(&summary_line(i));
                s.push('\n');
            }
            let pending = items
                .iter()
                .filter(|i| i.status == ReviewStatus::Pending)
                .count();
            if pending == 0 {
                s.push_str("\nnothing pending");
            } else {
                s.push_str(&format!(
                    "\n{pending} pending: `rollgraph review show ID`, then approve, edit or reject"
                ));
            }
            out(&s)
        }
        Action::Show { id } => {
            let item = queue.get(&id)?;
            if args.json {
                return out_json(&item);
            }
            out(details(&item, graduate::target_for(&item, &config).as_deref()).trim_end())
        }
        Action::Approve { id, to } => {
            let item = queue.get(&id)?;
            let target = to.or_else(|| graduate::target_for(&item, &config));
            if item.kind == ReviewKind::Graduate && target.is_none() {
                bail!(
                    "no flat memory file to graduate into: set flat.graduate_to in the config or pass --to FILE"
                );
            }
            let item = queue.approve(&home, &id, target.as_deref(), now)?;
            if args.json {
                return out_json(&item);
            }
            match (&item.kind, &item.written_to) {
                (ReviewKind::Graduate, Some(p)) => out(&format!(
                    "approved {}: appended to {}",
                    item.id,
                    p.display()
                )),
                _ => out(&format!(
                    "approved {}: anchor {} retired",
                    item.id, item.node
                )),
            }
        }
        Action::Edit { id, text } => {
            let item = queue.edit(&id, &text)?;
            if args.json {
                return out_json(&item);
            }
            out(&format!("edited {}: {}", item.id, item.text))
        }
        Action::Reject { id } => {
            let item = queue.reject(&id, now)?;
            if args.json {
                return out_json(&item);
            }
            out(&format!(
                "rejected {}: it will not be queued again",
                item.id
            ))
        }
    }
}
