//! The integration test binary: every module runs the real `rollgraph`
//! binary or the engine's public API in a hermetic environment.

/// Shared helpers: a hermetic environment per test, the snapshot macro.
mod common;
/// A hermetic environment for hook, daemon, MCP and install tests (project dir, daemon helpers).
mod hookenv;

/// Bad input on the CLI: broken transcripts, missing files, unwritable state.
mod bad_input;
/// A replay killed at random points reloads with every acknowledged probe.
mod crash;
/// The daemon: a whole session of hook calls, single instance, idle exit.
mod daemon;
/// `rollgraph eval`: a labelled corpus scored through the real pipeline.
mod eval;
/// The embedded probe's text analysis and supersession, table by table.
mod extract;
/// The fault campaign (fast subset here; `scripts/faults.sh` runs it in full).
mod faults;
/// `rollgraph hook claude`: every event and every bad input, as a process.
mod hook;
/// Each host's hook: output shapes, warm start, resume, Gemini, Codex, the slim binary.
mod hosts;
/// Update blocks, and tokens injected in full mode against delta mode.
mod inject;
/// `rollgraph install claude|codex|gemini` / `uninstall` on a temp HOME.
mod install;
/// The LLM probe against a scripted chat-completions server.
mod llm;
/// `rollgraph mcp` over stdio: initialize, tools/list, tools/call.
mod mcp;
/// Random valid patches keep the graph consistent; random invalid ones change nothing.
mod props;
/// The reconciler's LLM adjudication and graduation drafts against a scripted server.
mod reconcile_llm;
/// Damaged state: read-only commands change nothing, writers repair and report.
mod recovery;
/// Replay of the example session: renders snapshotted at several points, the probe rate.
mod replay;
/// `rollgraph query` / `expand`: episodes, scopes, budgets, damaged logs.
mod retrieval;
/// Graduation review queue: flag, list, show, edit, approve once, reject, archive.
mod review;
/// The secrets corpus through the hook, the daemon and replay: no raw value anywhere.
mod secrets;
/// The local embedding model: near-duplicate merge, the lexical fallback.
mod semantic;
/// A job stuck in the daemon: other sessions go on, SIGTERM still ends it.
mod stuck;
/// `rollgraph view` and `export`: the page's data, escaping, odd and huge graphs, read-only.
mod view;
/// Warm graph: multi-session scenario, crash recovery, concurrency, seeding, corrupt stores.
mod warm;
