//! The ground floor: the graph document and the patches that change it.
//!
//! [`graph::Graph`] is the weighted four-domain graph keyed by our own
//! [`graph::NodeId`]s; [`patch`] validates RFC 6902 patches against it and
//! applies them all or nothing. This stage knows no file, no process, no
//! clock of its own and no model: everything above it builds on these types.

pub mod graph;
pub mod patch;
