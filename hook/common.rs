//! Helpers shared by the subcommands: logging, output, session lookup.

use std::io::Write;

use anyhow::{Context, Result, bail};
use rollgraph_engine::Config;
use rollgraph_engine::session::SessionState;
use rollgraph_engine::store::{Home, read_json};

/// Logs to stderr, filtered by `ROLLGRAPH_LOG` (default: warnings).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ROLLGRAPH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}

/// Whether an error is a closed stdout (`rollgraph show | head`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes to stdout, turning a closed pipe into an error `main` treats as success.
pub fn out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        stdout.write_all(b"\n")?;
    }
    stdout.flush()?;
    Ok(())
}

/// Prints a value as pretty JSON.
pub fn out_json<T: serde::Serialize>(value: &T) -> Result<()> {
    out(&serde_json::to_string_pretty(value)?)
}

/// The state home and the config in effect.
pub fn home_and_config() -> Result<(Home, Config)> {
    let home = Home::from_env();
    let config = Config::load_default(home.root()).context("loading the configuration")?;
    let home = home.with_aside_limits(config.store.aside_limits());
    Ok((home, config))
}

/// The session to act on: `--session`, else the most recently updated one
/// (preferring sessions whose project is the current directory).
pub fn pick_session(home: &Home, explicit: Option<&str>) -> Result<String> {
    if let Some(id) = explicit {
        let dir = home.session_dir(id)?;
        if !dir.exists() {
            bail!("no session {id:?} under {}", home.root().display());
        }
        return Ok(id.to_owned());
    }
    let cwd = std::env::current_dir()
        .ok()
        .map(|p| p.display().to_string());
    let mut best: Option<(bool, std::time::SystemTime, String)> = None;
    for id in home.sessions() {
        let Ok(dir) = home.session_dir(&id) else {
            continue;
        };
        let state_path = dir.join("state.json");
        let mtime = std::fs::metadata(&state_path)
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let here = read_json::<SessionState>(&state_path)
            .ok()
            .flatten()
            .and_then(|s| s.cwd)
            .is_some_and(|c| Some(c) == cwd);
        let key = (here, mtime, id.clone());
        if best.as_ref().is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
            best = Some(key);
        }
    }
    best.map(|b| b.2).with_context(|| {
        format!(
            "no sessions under {} (run `rollgraph replay` or use the hook first)",
            home.root().display()
        )
    })
}

/// Loads the local embedding model for a long-lived command, if enabled and
/// provisioned; otherwise prints the one-line notice and runs lexically.
pub fn load_semantic(config: &Config) -> Option<rollgraph_engine::semantic::Semantic> {
    if !config.embed.enabled {
        return None;
    }
    let (embedder, notice) =
        rollgraph_engine::embed::load_optional(&rollgraph_engine::embed::EmbedPaths::discover());
    if let Some(n) = notice {
        eprintln!("note: {n}");
    }
    embedder.map(|embedder| rollgraph_engine::semantic::Semantic {
        embedder,
        index: rollgraph_engine::semantic::VectorIndex::new(),
    })
}

static SEMANTIC: std::sync::OnceLock<
    std::sync::Mutex<Option<rollgraph_engine::semantic::Semantic>>,
> = std::sync::OnceLock::new();

/// Runs `f` with this process's embedding model, loaded on first use and
/// kept for the life of the process (daemon, MCP server, CLI query). Never
/// called on the hook's critical path.
pub fn with_semantic<R>(
    config: &Config,
    f: impl FnOnce(Option<&mut rollgraph_engine::semantic::Semantic>) -> R,
) -> R {
    f(model_slot(config).as_mut())
}

/// The process's model slot, loading the model on first use.
fn model_slot(
    config: &Config,
) -> std::sync::MutexGuard<'static, Option<rollgraph_engine::semantic::Semantic>> {
    let cell = SEMANTIC.get_or_init(|| std::sync::Mutex::new(load_semantic(config)));
    cell.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Lends the process's model to a session for one operation, then takes it back.
pub fn lend_semantic<R>(
    config: &Config,
    session: &mut rollgraph_engine::session::Session,
    f: impl FnOnce(&mut rollgraph_engine::session::Session) -> R,
) -> R {
    if !config.embed.enabled {
        return f(session);
    }
    let mut guard = model_slot(config);
    session.semantic = guard.take();
    let r = f(session);
    *guard = session.semantic.take();
    r
}
