//! Retrieval: explicit queries and the optional embedding layer.
//!
//! [`search`] is the one retrieval path (nodes and what was said, packed to
//! a token budget) behind `memory_query` and `rollgraph query`; [`text`] holds its stemmed words; [`embed`] loads the local
//! embedding model (provisioned by `scripts/provision.sh`); [`semantic`] uses
//! it for near-duplicate merges, semantic focus and rank fusion. This stage is
//! never on the hook path: it may load a model, and only the daemon, the MCP
//! server and the CLI call it.

pub mod embed;
pub mod search;
pub mod semantic;
pub mod text;
