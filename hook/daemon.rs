//! `rollgraph daemon`: the background worker, and the hook's way to reach it.
//!
//! One per user (per state home): a [`FileLock`] on `daemon.lock` makes sure
//! two never run, and only the lock holder may replace a stale socket. It
//! listens on `daemon.sock` (mode 0600, in the state home, never TCP) for
//! one-line requests — `work` (a poke: spools have new jobs), `ping`,
//! `shutdown`, and JSON `expand` / `query` requests from the CLI and the MCP
//! server — and drains the spools session by session, in order, in a
//! blocking task (probes never run on the async threads). It rescans the
//! spools every second even without a poke, so work spooled while no daemon
//! ran (or while the socket was unreachable) is picked up, and it exits
//! after `--idle-timeout` seconds without work or requests, removing its
//! socket.
//!
//! The hook starts it on demand through [`crate::ipc::poke_or_start`]. The
//! daemon then detaches itself before any runtime exists: `setsid` (its own session and process group,
//! no controlling terminal) and closes every inherited descriptor above 2.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rollgraph_engine::store::{FileLock, Home, StoreError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::{Notify, Semaphore};

use crate::hooklog::{LogLimits, LogWriter};
use crate::ipc::{Request, Response, lock_path, pid_path, socket_path};
use crate::{spool, work};

/// Default idle timeout, seconds.
pub const DEFAULT_IDLE_SECS: u64 = 120;

/// Longest request line accepted on the socket.
const MAX_REQUEST: usize = 64 * 1024;

/// Most connections served at once (more wait in the kernel's backlog).
const MAX_CONNECTIONS: usize = 32;

/// How often the spools are rescanned without a poke.
const RESCAN: Duration = Duration::from_secs(1);

/// Run the background worker.
#[derive(Debug, clap::Args)]
pub struct DaemonArgs {
    /// Exit after this many seconds without work or requests.
    #[arg(long, default_value_t = DEFAULT_IDLE_SECS)]
    pub idle_timeout: u64,
    /// Stay attached to the terminal (no setsid, inherited descriptors kept) and log to stderr.
    #[arg(long)]
    pub foreground: bool,
}

/// Closes every descriptor above stderr that this process inherited, so the
/// daemon never holds a pipe or file of whoever started it.
#[allow(unsafe_code)]
fn close_inherited_fds() {
    let fds: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(rd) => rd
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
            .collect(),
        Err(_) => return,
    };
    // The ReadDir above had a descriptor of its own, closed by now: only
    // close what is still open (closing a stale number is an error).
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        if std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_err() {
            continue;
        }
        // SAFETY: this runs first thing in the daemon, before any Rust object
        // owns a descriptor above 2 (no runtime, no files, no lock yet), so
        // nothing else refers to these descriptors, and each one is open.
        unsafe { rustix::io::close(fd) };
    }
}

/// Runs the daemon until it is idle, told to shut down, or signalled.
pub fn run(args: DaemonArgs) -> Result<()> {
    if !args.foreground {
        // Our own session and process group, no controlling terminal.
        let _ = rustix::process::setsid();
        close_inherited_fds();
    }
    // Everything we create (socket, logs, spools) is for this user only.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    // The daemon's gate and probe read the word list; load it before the
    // first job so the first turn's gate sees what later turns see.
    rollgraph_engine::extract::lexicon::init_frequencies();
    // Queries keep their index while the files it came from stay as they were.
    crate::query::keep_indexes();
    let home = Home::from_env();
    let config = rollgraph_engine::Config::load_default(home.root());
    let limits = config
        .as_ref()
        .map(LogLimits::from_config)
        .unwrap_or_default();
    init_log(&home, limits, args.foreground);
    std::panic::set_hook(Box::new(|info| tracing::error!("daemon panicked: {info}")));
    let config = match config {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("{e}; using the defaults");
            rollgraph_engine::Config::default()
        }
    };
    let home = home.with_aside_limits(config.store.aside_limits());
    std::fs::create_dir_all(home.root())
        .with_context(|| format!("creating {}", home.root().display()))?;
    let _lock = match take_lock(&home) {
        Ok(Some(l)) => l,
        Ok(None) => return Ok(()),
        Err(e) => {
            tracing::error!("daemon lock: {e}");
            return Err(e.into());
        }
    };
    let _ = std::fs::write(pid_path(&home), format!("{}\n", std::process::id()));
    let sock = socket_path(&home);
    // We hold the lock: any socket file left is a dead daemon's.
    let listener = bind(&sock);
    tracing::info!("daemon started (idle timeout {}s)", args.idle_timeout);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(4)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let result = rt.block_on(serve(
        home.clone(),
        config,
        listener,
        Duration::from_secs(args.idle_timeout),
    ));
    rt.shutdown_timeout(Duration::from_secs(5));
    // We held the lock the whole time, so the socket and pid files are ours.
    let _ = std::fs::remove_file(&sock);
    let _ = std::fs::remove_file(pid_path(&home));
    tracing::info!("daemon stopped");
    result
}

/// How long a new daemon waits for the lock of one that does not answer.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// How long a new daemon waits for the lock holder to answer `ping`.
const PING_WAIT: Duration = Duration::from_millis(500);

/// Takes the single-instance lock; `None` when a live daemon holds it.
///
/// A daemon killed a moment ago may still be dying with the lock (its
/// threads have not all exited, so its lock and even its listener are still
/// open): only a holder that answers `ping` is a daemon at work, and this
/// one leaves at once. Otherwise it waits a little for the lock rather than
/// exit and leave the spooled work to the next hook call.
fn take_lock(home: &Home) -> Result<Option<FileLock>, StoreError> {
    let path = lock_path(home);
    let start = Instant::now();
    let mut waiting = false;
    loop {
        match FileLock::try_acquire(&path) {
            Ok(l) => return Ok(Some(l)),
            Err(StoreError::Locked(_)) => {}
            Err(e) => return Err(e),
        }
        if crate::ipc::recorded_daemon_alive(home) && crate::ipc::answers_ping(home, PING_WAIT) {
            tracing::info!("another daemon holds the lock; exiting");
            return Ok(None);
        }
        if start.elapsed() >= LOCK_WAIT {
            tracing::warn!(
                "the daemon lock is still held after {}s by a daemon that does not answer; exiting",
                LOCK_WAIT.as_secs()
            );
            return Ok(None);
        }
        if !waiting {
            waiting = true;
            tracing::info!(
                "the daemon lock is held by a daemon that does not answer (exiting, or starting); waiting up to {}s for it",
                LOCK_WAIT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Binds the socket (0600, non-blocking), replacing any socket file left
/// there; `None` when that fails (the daemon then works from rescans only:
/// pokes just won't reach it).
fn bind(sock: &std::path::Path) -> Option<std::os::unix::net::UnixListener> {
    let _ = std::fs::remove_file(sock);
    let listener = std::os::unix::net::UnixListener::bind(sock).and_then(|l| {
        let _ = std::fs::set_permissions(sock, std::fs::Permissions::from_mode(0o600));
        l.set_nonblocking(true)?;
        Ok(l)
    });
    match listener {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::error!(
                "cannot listen on {}: {e}; working from rescans only",
                sock.display()
            );
            None
        }
    }
}

/// The accept loop in flight: its task and what tells it to let go of the
/// listener.
struct Accepting {
    task: tokio::task::JoinHandle<()>,
    close: Arc<Notify>,
}

fn accepting(
    listener: Option<std::os::unix::net::UnixListener>,
    shared: &Arc<Shared>,
) -> Option<Accepting> {
    let l = match tokio::net::UnixListener::from_std(listener?) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("registering the socket: {e}; working from rescans only");
            return None;
        }
    };
    let close = Arc::new(Notify::new());
    let task = tokio::spawn(accept_loop(l, shared.clone(), close.clone()));
    Some(Accepting { task, close })
}

fn init_log(home: &Home, limits: LogLimits, foreground: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ROLLGRAPH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    if foreground {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .try_init();
    } else {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .with_writer(LogWriter::new(home.log_path(), limits))
            .try_init();
    }
}

struct Shared {
    home: Home,
    config: rollgraph_engine::Config,
    work: Notify,
    stop: Notify,
    stopping: AtomicBool,
    last_activity: std::sync::Mutex<Instant>,
}

impl Shared {
    fn active(&self) {
        if let Ok(mut t) = self.last_activity.lock() {
            *t = Instant::now();
        }
    }

    fn idle_for(&self) -> Duration {
        self.last_activity
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop.notify_waiters();
        self.work.notify_one();
    }
}

async fn serve(
    home: Home,
    config: rollgraph_engine::Config,
    listener: Option<std::os::unix::net::UnixListener>,
    idle: Duration,
) -> Result<()> {
    let shared = Arc::new(Shared {
        home,
        config,
        work: Notify::new(),
        stop: Notify::new(),
        stopping: AtomicBool::new(false),
        last_activity: std::sync::Mutex::new(Instant::now()),
    });
    let mut accept = accepting(listener, &shared);
    {
        let shared = shared.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            tracing::info!("signal received; stopping");
            shared.shutdown();
        });
    }
    let deadline = job_deadline(&shared.config);
    // Drains in flight: (the job it is on, its task). Normally one; when a
    // job is stuck past its deadline its drain is left behind (a blocked
    // thread cannot be cancelled; the process exit ends it) and another
    // drain serves every other session.
    let mut drains: Vec<(work::Current, tokio::task::JoinHandle<usize>)> = Vec::new();
    let mut reported: std::collections::BTreeSet<String> = Default::default();
    let mut poked = true;
    let mut last_spawn: Option<Instant> = None;
    loop {
        // Reap finished drains.
        let mut i = 0;
        while i < drains.len() {
            if drains[i].1.is_finished() {
                let (_, h) = drains.swap_remove(i);
                match h.await {
                    Ok(n) if n > 0 => shared.active(),
                    Ok(_) => {}
                    Err(e) => tracing::error!("work task failed: {e}"),
                }
            } else {
                i += 1;
            }
        }
        // Sessions whose job is stuck past its deadline.
        let mut stuck: std::collections::BTreeSet<String> = Default::default();
        for (cur, _) in &drains {
            if let Ok(g) = cur.lock()
                && let Some((session, job, since)) = g.as_ref()
                && since.elapsed() >= deadline
            {
                if reported.insert(job.clone()) {
                    tracing::error!(
                        "session {session}: job {job} is past its {}s deadline; other sessions carry on, and it is set aside after {} tries",
                        deadline.as_secs(),
                        spool::MAX_ATTEMPTS
                    );
                }
                stuck.insert(session.clone());
            }
        }
        let healthy = drains.len() - stuck.len().min(drains.len());
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        if healthy == 0
            && drains.len() < 4
            && (poked || last_spawn.is_none_or(|t| t.elapsed() >= RESCAN))
        {
            poked = false;
            last_spawn = Some(Instant::now());
            let s = shared.clone();
            let cur: work::Current = Default::default();
            let c = cur.clone();
            let skip = stuck.clone();
            let h = tokio::task::spawn_blocking(move || {
                work::drain_with(&s.home, &s.config, &skip, Some(&c))
            });
            drains.push((cur, h));
        }
        if shared.idle_for() >= idle && drains.len() == stuck.len() {
            let h = shared.home.clone();
            let skip = stuck.clone();
            let pending = tokio::task::spawn_blocking(move || {
                spool::sessions(&h)
                    .iter()
                    .any(|s| !skip.contains(s) && spool::session_pending(&h, s))
            })
            .await
            .unwrap_or(false);
            // Stop taking pokes before leaving, then look once more: a hook
            // that spooled a job and had its poke answered did so before the
            // listener closed, so its job is seen here. One that comes later
            // finds no listener and starts a new daemon.
            let pending = pending || {
                if let Some(a) = accept.take() {
                    a.close.notify_one();
                    let _ = a.task.await;
                }
                let _ = std::fs::remove_file(socket_path(&shared.home));
                let h = shared.home.clone();
                let skip = stuck.clone();
                tokio::task::spawn_blocking(move || {
                    spool::sessions(&h)
                        .iter()
                        .any(|s| !skip.contains(s) && spool::session_pending(&h, s))
                })
                .await
                .unwrap_or(true)
            };
            if pending && accept.is_none() {
                // Work came in while the listener closed: stay and listen again.
                tracing::info!("work arrived while going idle; staying");
                accept = accepting(bind(&socket_path(&shared.home)), &shared);
                shared.active();
                poked = true;
            }
            if !pending {
                if stuck.is_empty() {
                    tracing::info!("idle for {}s; exiting", idle.as_secs());
                } else {
                    tracing::warn!(
                        "idle for {}s; exiting with stuck jobs in {}",
                        idle.as_secs(),
                        stuck.iter().cloned().collect::<Vec<_>>().join(", ")
                    );
                }
                break;
            }
        }
        let wait = Duration::from_millis(if drains.len() > stuck.len() { 50 } else { 1000 }).min(
            RESCAN.min(
                idle.saturating_sub(shared.idle_for())
                    .max(Duration::from_millis(50)),
            ),
        );
        tokio::select! {
            _ = shared.work.notified() => poked = true,
            _ = shared.stop.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
    if !drains.is_empty() {
        // Give a drain in the middle of a job a moment to finish it; a stuck
        // one is abandoned (the process exit ends its thread, and its job's
        // in-flight marker makes the next daemon count the attempt).
        let grace = Instant::now();
        while grace.elapsed() < Duration::from_secs(2) && drains.iter().any(|d| !d.1.is_finished())
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(())
}

/// How long one job may run before it counts as stuck: a probe's LLM calls
/// with their retries, plus room for reconciliation.
fn job_deadline(config: &rollgraph_engine::Config) -> Duration {
    // Tests shorten it to see a stuck job without waiting a minute.
    if let Some(secs) = std::env::var("ROLLGRAPH_JOB_DEADLINE_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
    {
        return Duration::from_secs(secs);
    }
    let llm = config
        .llm
        .timeout_ms
        .saturating_mul(u64::from(config.llm.max_retries) + 1);
    Duration::from_millis(llm.saturating_add(30_000)).max(Duration::from_secs(60))
}

async fn accept_loop(listener: tokio::net::UnixListener, shared: Arc<Shared>, close: Arc<Notify>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = match slots.clone().acquire_owned().await {
            Ok(p) => p,
            Err(_) => return,
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shared.stop.notified() => return,
            _ = close.notified() => return,
        };
        match accepted {
            Ok((stream, _)) => {
                shared.active();
                let shared = shared.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection(stream, &shared).await {
                        tracing::debug!("connection: {e:#}");
                    }
                    drop(permit);
                });
            }
            Err(e) => {
                tracing::warn!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn connection(stream: tokio::net::UnixStream, shared: &Arc<Shared>) -> Result<()> {
    let (r, mut w) = stream.into_split();
    let mut reader =
        tokio::io::BufReader::new(tokio::io::AsyncReadExt::take(r, MAX_REQUEST as u64));
    let mut line = String::new();
    let n = tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut line)).await??;
    if n == 0 {
        return Ok(());
    }
    let answer = match line.trim() {
        "work" => {
            shared.work.notify_one();
            "ok".to_owned()
        }
        "ping" => "pong".to_owned(),
        "shutdown" => {
            shared.shutdown();
            "bye".to_owned()
        }
        other => {
            let resp = match serde_json::from_str::<Request>(other) {
                Ok(req) => {
                    let s = shared.clone();
                    match tokio::task::spawn_blocking(move || {
                        work::serve_request(&s.home, &s.config, req)
                    })
                    .await
                    {
                        Ok(Ok(v)) => Response {
                            ok: true,
                            result: v,
                            error: None,
                        },
                        Ok(Err(e)) => Response {
                            ok: false,
                            result: serde_json::Value::Null,
                            error: Some(format!("{e:#}")),
                        },
                        Err(e) => Response {
                            ok: false,
                            result: serde_json::Value::Null,
                            error: Some(format!("request task failed: {e}")),
                        },
                    }
                }
                Err(e) => Response {
                    ok: false,
                    result: serde_json::Value::Null,
                    error: Some(format!("unknown request: {e}")),
                },
            };
            shared.active();
            serde_json::to_string(&resp)?
        }
    };
    w.write_all(answer.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.shutdown().await?;
    Ok(())
}
