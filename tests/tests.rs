//! The integration test binary: every module runs the real `rollgraph`
//! binary or the engine's public API in a hermetic environment.

/// Shared helpers: a hermetic environment per test, the snapshot macro.
mod common;

/// Bad input on the CLI: broken transcripts, missing files, unwritable state.
mod bad_input;
/// A replay killed at random points reloads with every acknowledged probe.
mod crash;
/// Random valid patches keep the graph consistent; random invalid ones change nothing.
mod props;
/// Replay of the example session: renders snapshotted at several points, the probe rate.
mod replay;
/// The local embedding model: near-duplicate merge, the lexical fallback.
mod semantic;
