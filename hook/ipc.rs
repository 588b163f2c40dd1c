//! The daemon's socket protocol, shared by the daemon and its clients (the
//! hook, `expand`, `query`, the MCP server): where the socket, lock and pid
//! files live, the [`Request`] / [`Response`] lines, and how a client pokes,
//! starts or asks the daemon without ever blocking on a hung one.
//!
//! The hook starts the daemon on demand: [`poke_or_start`] connects without
//! blocking, sends `work` and waits briefly for the daemon's `ok`; when
//! nobody listens, or the daemon behind the socket is dying (a killed
//! daemon's listener stays open until its last thread has exited, so the
//! connection and the write succeed but no answer ever comes), it spawns
//! `rollgraph daemon` with stdin, stdout and stderr on /dev/null and does
//! not wait.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use rollgraph_engine::store::Home;
use serde::{Deserialize, Serialize};

/// The daemon's socket.
pub fn socket_path(home: &Home) -> PathBuf {
    home.root().join("daemon.sock")
}

/// The single-instance lock.
pub fn lock_path(home: &Home) -> PathBuf {
    home.root().join("daemon.lock")
}

/// The running daemon's process id (written while it holds the lock).
pub fn pid_path(home: &Home) -> PathBuf {
    home.root().join("daemon.pid")
}

/// A request on the socket (besides the plain-text `work`, `ping`, `shutdown`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Expand a handle in a session (raises its nodes, counts an expansion).
    Expand {
        /// The session.
        session: String,
        /// The handle or node id.
        handle: String,
        /// Token budget of the answer.
        #[serde(default = "default_budget")]
        budget: usize,
    },
    /// Query a session's memory.
    Query {
        /// The session.
        session: String,
        /// The query text.
        text: String,
        /// Most hits.
        limit: usize,
        /// Token budget of the answer.
        #[serde(default = "default_budget")]
        budget: usize,
        /// What to search.
        #[serde(default)]
        scope: rollgraph_engine::search::Scope,
    },
}

fn default_budget() -> usize {
    rollgraph_engine::search::DEFAULT_BUDGET
}

/// The answer to a [`Request`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Response {
    /// Whether it worked.
    pub ok: bool,
    /// The result (an expansion or a query result) when it worked.
    #[serde(default)]
    pub result: serde_json::Value,
    /// What went wrong otherwise.
    #[serde(default)]
    pub error: Option<String>,
}

/// Connects to the daemon's socket without ever blocking: a listener whose
/// backlog is full (a hung daemon) gives `WouldBlock`, not a wait.
fn connect_nonblocking(path: &Path) -> std::io::Result<UnixStream> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    let addr = SocketAddrUnix::new(path)?;
    rustix::net::connect(&fd, &addr)?;
    Ok(UnixStream::from(fd))
}

/// Outcome of a poke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poke {
    /// A daemon answered the poke: it will look at the spools.
    Sent,
    /// A live daemon is there but did not answer in time (hung or swamped):
    /// leave it; it rescans the spools when it recovers.
    Busy,
    /// Nobody will take the work: no listener, or one that closed the
    /// connection without answering, or a recorded daemon that is dead or
    /// exiting (a zombie) whatever its socket still does.
    Absent,
}

/// How long a poke waits for the daemon's `ok`. A live daemon answers from
/// its async accept loop (jobs run on other threads) in well under a
/// millisecond; the wait only runs out when a daemon is there and does not
/// answer, and then the recorded pid decides between busy and dead.
pub const POKE_ANSWER_WAIT: Duration = Duration::from_millis(100);

/// Whether the daemon named in `daemon.pid` is a live process (not gone,
/// not a zombie). A killed daemon's main thread turns zombie at once, while
/// the process may still hold its socket until its other threads are done.
pub fn recorded_daemon_alive(home: &Home) -> bool {
    let Some(pid) = std::fs::read_to_string(pid_path(home))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
    else {
        return false;
    };
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        // No /proc (not Linux): assume it lives.
        Err(_) => !Path::new("/proc/self").exists(),
    }
}

/// What came back on a connection after a request line.
enum Answer {
    /// This line.
    Line(String),
    /// The peer closed or reset the connection without a line: nobody
    /// will handle the request (a dying daemon's backlog).
    Closed,
    /// Nothing within the wait.
    Silent,
}

/// Sends `line` on a connected socket and reads one answer line within `wait`.
fn exchange(s: UnixStream, line: &str, wait: Duration) -> Answer {
    use std::io::ErrorKind;
    let start = std::time::Instant::now();
    if s.set_nonblocking(false).is_err() || s.set_write_timeout(Some(wait)).is_err() {
        return Answer::Silent;
    }
    let mut msg = line.as_bytes().to_vec();
    msg.push(b'\n');
    if let Err(e) = (&s).write_all(&msg) {
        return match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => Answer::Silent,
            _ => Answer::Closed,
        };
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 256];
    loop {
        let left = wait.saturating_sub(start.elapsed());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return Answer::Silent;
        }
        match (&s).read(&mut chunk) {
            Ok(0) => return Answer::Closed,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if let Some(i) = buf.iter().position(|&b| b == b'\n') {
                    return Answer::Line(String::from_utf8_lossy(&buf[..i]).trim().to_owned());
                }
                if buf.len() > 4096 {
                    return Answer::Closed;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Answer::Silent;
            }
            Err(_) => return Answer::Closed,
        }
    }
}

/// Tells the daemon there is work and waits (at most [`POKE_ANSWER_WAIT`])
/// for it to say it took it. A connection that is accepted by the kernel is
/// not enough: a daemon killed a moment ago keeps its listener open until
/// its last thread exits, takes the bytes into its backlog and never reads
/// them. Only the daemon's answer, or a live recorded daemon that is too
/// busy to answer, counts as someone having the work.
pub fn poke(home: &Home) -> Poke {
    match connect_nonblocking(&socket_path(home)) {
        Ok(s) => match exchange(s, "work", POKE_ANSWER_WAIT) {
            Answer::Line(a) if a == "ok" => Poke::Sent,
            Answer::Line(_) | Answer::Closed => Poke::Absent,
            Answer::Silent if recorded_daemon_alive(home) => Poke::Busy,
            Answer::Silent => Poke::Absent,
        },
        // A full backlog: a daemon that accepts nothing, alive or dying.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            if recorded_daemon_alive(home) {
                Poke::Busy
            } else {
                Poke::Absent
            }
        }
        Err(_) => Poke::Absent,
    }
}

/// Whether a daemon answers `ping` on the socket within `wait` (a dying or
/// hung one never does).
pub fn answers_ping(home: &Home, wait: Duration) -> bool {
    match connect_nonblocking(&socket_path(home)) {
        Ok(s) => matches!(exchange(s, "ping", wait), Answer::Line(a) if a == "pong"),
        Err(_) => false,
    }
}

/// Pokes the daemon, starting one when nobody will take the work (none
/// listens, or the one there is dying). Problems go to `errors`.
pub fn poke_or_start(home: &Home, errors: &mut Vec<String>) {
    if poke(home) != Poke::Absent {
        return;
    }
    if let Err(e) = start(home) {
        errors.push(format!("starting the daemon: {e:#}"));
    }
}

/// Spawns `rollgraph daemon`, detached, without waiting for it. The daemon
/// itself checks the lock, so a race of two hooks starts one daemon.
pub fn start(home: &Home) -> Result<()> {
    let exe = daemon_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("daemon");
    // Tests (and impatient users) shorten the idle timeout through the env.
    if let Some(secs) = std::env::var("ROLLGRAPH_DAEMON_IDLE_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        cmd.arg("--idle-timeout").arg(secs.to_string());
    }
    cmd.env("ROLLGRAPH_HOME", home.root())
        // The daemon may hold the embedding model: have glibc hand freed
        // memory back instead of letting the process creep past 200 MB.
        .env("MALLOC_TRIM_THRESHOLD_", "1048576")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Don't pin the user's directory (an unmountable disk, a deleted repo).
    cmd.current_dir("/");
    // Not waited for on purpose: the hook exits at once, the daemon is
    // reparented, and it detaches itself (setsid) as its first act.
    #[allow(clippy::zombie_processes)]
    let _child = cmd.spawn().context("spawning `rollgraph daemon`")?;
    Ok(())
}

/// The full `rollgraph` binary, which runs the daemon: this binary when it
/// is that one; from the slim `rollgraph-hook`, `$ROLLGRAPH_BIN`, else the
/// `rollgraph` beside it, else the first `rollgraph` on `PATH`.
pub fn daemon_exe() -> Result<PathBuf> {
    let me = std::env::current_exe().context("locating this binary")?;
    let is_full = me
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| !n.starts_with("rollgraph-hook"));
    if is_full {
        return Ok(me);
    }
    if let Some(b) = std::env::var_os("ROLLGRAPH_BIN").filter(|b| !b.is_empty()) {
        return Ok(PathBuf::from(b));
    }
    let beside = me.with_file_name("rollgraph");
    if beside.is_file() {
        return Ok(beside);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("rollgraph"))
        .find(|p| p.is_file())
        .context("no `rollgraph` binary beside rollgraph-hook or on PATH to run the daemon")
}

/// Sends one request line and reads one answer line, within `timeout`.
pub fn request_line(home: &Home, line: &str, timeout: Duration) -> Result<String> {
    let path = socket_path(home);
    let s =
        connect_nonblocking(&path).with_context(|| format!("connecting to {}", path.display()))?;
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let mut w = &s;
    w.write_all(line.as_bytes())?;
    w.write_all(b"\n")?;
    let mut buf = Vec::new();
    BufReader::new(&s)
        .take(16 << 20)
        .read_until(b'\n', &mut buf)?;
    Ok(String::from_utf8_lossy(&buf).trim_end().to_owned())
}

/// Why a request to the daemon failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The daemon could not be reached or did not answer in time.
    #[error("daemon unreachable: {0}")]
    Unreachable(String),
    /// The daemon answered that the request failed.
    #[error("{0}")]
    Failed(String),
}

/// Whether something accepts connections on the socket right now.
pub fn reachable(home: &Home) -> bool {
    connect_nonblocking(&socket_path(home)).is_ok()
}

/// Sends a JSON request to the daemon.
pub fn request(
    home: &Home,
    req: &Request,
    timeout: Duration,
) -> Result<serde_json::Value, RequestError> {
    let line = serde_json::to_string(req).map_err(|e| RequestError::Failed(e.to_string()))?;
    let answer = request_line(home, &line, timeout)
        .map_err(|e| RequestError::Unreachable(format!("{e:#}")))?;
    let r: Response = serde_json::from_str(&answer)
        .map_err(|e| RequestError::Unreachable(format!("daemon answered {answer:?}: {e}")))?;
    if r.ok {
        Ok(r.result)
    } else {
        Err(RequestError::Failed(
            r.error.unwrap_or_else(|| "daemon request failed".into()),
        ))
    }
}
