//! Retrieval: explicit queries and the optional embedding layer.
//!
//! [`query`] answers a question over a graph; [`embed`] loads the local
//! embedding model (provisioned by `scripts/provision.sh`); [`semantic`] uses
//! it for near-duplicate merges, semantic focus and rank fusion. This stage is
//! never on the hook path: it may load a model, and only the daemon, the MCP
//! server and the CLI call it.

pub mod embed;
pub mod query;
pub mod semantic;
