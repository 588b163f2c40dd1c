//! Integration tests of the rollgraph binary and engine, one module per area.

// Hermetic environment and helpers for running the real binary.
mod common;
// The daemon: a whole session of hook calls, single instance, idle exit.
mod daemon;
// `rollgraph hook claude`: every event and every bad input, as a process.
mod hook;
// `rollgraph install claude` / `uninstall claude` on a temp HOME.
mod install;
// `rollgraph mcp` over stdio: initialize, tools/list, tools/call.
mod mcp;
// Warm graph: multi-session scenario, crash recovery, concurrency, seeding, corrupt stores.
mod warm;
