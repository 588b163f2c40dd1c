//! Everything that touches the outside world's bytes: files, transcripts,
//! configuration, secrets and time.
//!
//! [`store`] keeps crash-safe journals and snapshots under the state
//! directory; [`transcript`] reads Claude Code transcripts and [`hosts`] Codex's and
//! Gemini CLI's; [`redact`] removes
//! secrets before anything is stored or sent; [`config`] loads the TOML
//! settings; [`clock`] makes time injectable (`ROLLGRAPH_NOW`). No pipeline
//! logic lives here.

pub mod clock;
pub mod config;
pub mod hosts;
pub mod peek;
pub mod plain;
pub mod redact;
pub mod store;
pub mod transcript;
