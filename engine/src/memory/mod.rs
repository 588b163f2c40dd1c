//! The warm tier and flat memory, both ways.
//!
//! [`warm`] holds the persistent per-project and global graphs;
//! [`reconcile`] merges a session's hot graph into them; [`lifecycle`] runs
//! that on session start, compaction, checkpoints and session end (with crash
//! recovery); [`seed`] turns flat memory files into anchors and
//! [`graduate`] drafts durable knowledge back into them through a human
//! review queue; [`episodes`] keeps what was actually said, per session and
//! per warm store, bounded. This stage runs in the daemon and the CLI, never inline in a
//! hook: it takes file locks and may ask the LLM to adjudicate.

pub mod episodes;
pub mod graduate;
pub mod lifecycle;
pub mod reconcile;
pub mod seed;
pub mod warm;
