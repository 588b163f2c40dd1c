//! The rollgraph engine: a rolling, in-session memory graph for coding agents.
//!
//! The crate is laid out by pipeline stage, one folder each:
//!
//! - [`model`]: the graph document ([`graph::Graph`]) and its RFC 6902
//!   [`patch`]es: the ground floor, no files, no processes.
//! - [`extract`]: text analysis shared by the gate and the heuristic probe.
//! - [`turn`]: the per-turn pipeline: [`gate`] (should a probe run?), the
//!   offline [`probe::HeuristicProbe`], [`decay`], the level-of-detail
//!   [`render`] and [`session::Session`], which drives it over the hot store.
//! - [`llm`]: the LLM probe and the reconciler's questions on any
//!   OpenAI-compatible endpoint.
//! - [`retrieval`]: the one [`search`], the local [`embed`]ding model and the
//!   [`semantic`] layer; never on the hook path.
//! - [`memory`]: the [`warm`] tier, the [`reconcile`]r, the session
//!   [`lifecycle`], flat memory [`seed`]ing and [`graduate`]-ion.
//! - [`io`]: crash-safe [`store`] files, host [`transcript`]s, [`redact`]ion,
//!   [`config`] and the injectable [`clock`].
//!
//! Every module is also re-exported at the crate root (`rollgraph_engine::graph`,
//! `rollgraph_engine::session` …), so callers name a module, not its room.
//! Nothing in this crate does process plumbing (hooks, daemon, MCP): that
//! lives in the `rollgraph` binary.

#![deny(missing_docs)]

pub mod extract;
pub mod io;
pub mod llm;
pub mod memory;
pub mod model;
pub mod retrieval;
pub mod turn;

#[cfg(any(test, feature = "synth"))]
pub mod synth;

pub use io::{clock, config, hosts, peek, plain, redact, store, transcript};
pub use memory::{episodes, graduate, lifecycle, reconcile, seed, warm};
pub use model::{graph, patch};
pub use retrieval::{embed, search, semantic, text};
pub use turn::{decay, gate, inject, probe, render, session, stats};

pub use config::Config;
pub use graph::{Domain, Edge, EdgeKind, Graph, GraphDoc, Node, NodeId, NodeKind};
