//! The rollgraph engine: a rolling, in-session memory graph for coding agents.
//!
//! One turn flows through [`gate`] (should a probe run?), a [`probe`] (the
//! offline [`probe::HeuristicProbe`] or an LLM) that returns an RFC 6902
//! [`patch`], atomic application to the [`graph::Graph`], distance-from-focus
//! [`decay`], and the level-of-detail [`render`]. [`session::Session`] drives
//! that pipeline over crash-safe [`store`] files; [`transcript`] reads Claude
//! Code transcripts; [`redact`] keeps secrets out of everything; [`llm`]
//! runs the probe (and the reconciler's questions) on an OpenAI-compatible endpoint;
//! [`query`] answers explicit searches of a graph.
//!
//! Nothing in this crate does process plumbing (hooks, daemon, MCP): that
//! lives in the `rollgraph` binary.

#![deny(missing_docs)]

pub mod clock;
pub mod config;
pub mod decay;
pub mod embed;
pub mod extract;
pub mod gate;
pub mod graduate;
pub mod graph;
pub mod lifecycle;
pub mod llm;
pub mod patch;
pub mod probe;
pub mod query;
pub mod reconcile;
pub mod redact;
pub mod render;
pub mod seed;
pub mod semantic;
pub mod session;
pub mod stats;
pub mod store;
#[cfg(feature = "synth")]
pub mod synth;
pub mod transcript;
pub mod warm;

pub use config::Config;
pub use graph::{Domain, Edge, EdgeKind, Graph, GraphDoc, Node, NodeId, NodeKind};
