//! `rollgraph-hook <host>`: the hook alone, as a small binary.
//!
//! The host runs a hook before every prompt, so its cost is paid on the
//! user's critical path. This binary is built from the same `hook` module as
//! `rollgraph hook <host>` but links nothing else: no command-line parser,
//! no tokio runtime, no model runtime, no LLM client, no MCP server. It
//! starts the daemon by running the full `rollgraph` binary (beside it, or on
//! `PATH`). It always exits 0, whatever its command line.

// The shared modules carry the full binary's helpers too.
#![allow(dead_code)]

#[path = "hook.rs"]
mod hook;
#[path = "hooklog.rs"]
mod hooklog;
#[path = "ipc.rs"]
mod ipc;
#[path = "spool.rs"]
mod spool;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // Everything under ROLLGRAPH_HOME is this user's only, as in `rollgraph`.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    match hook::fast_host(&args) {
        Some(host) => hook::run(host),
        None => hook::log_error(&format!(
            "rollgraph-hook: bad command line {:?} (expected `rollgraph-hook claude|codex|gemini`)",
            args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>()
        )),
    }
    ExitCode::SUCCESS
}
