//! A hermetic environment for the hook, daemon, MCP and install tests.
//!
//! Every test gets a fresh temp directory holding `HOME`, the state home
//! (`ROLLGRAPH_HOME`) and a project directory; the environment is cleared
//! except `PATH`; time and randomness are pinned (`ROLLGRAPH_NOW`,
//! `ROLLGRAPH_SEED`); a daemon started on demand idles out after two seconds
//! and is told to shut down when the environment is dropped.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rollgraph_engine::Config;
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use rollgraph_engine::transcript::Turn;

/// The pinned clock.
pub const NOW: &str = "2026-11-02T10:00:00Z";

/// The real binary. `ROLLGRAPH_TEST_BIN` overrides it: worktrees that share
/// one cargo target directory overwrite each other's `rollgraph`, so a
/// developer can test a private copy of their own build.
pub fn bin() -> std::ffi::OsString {
    std::env::var_os("ROLLGRAPH_TEST_BIN")
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_rollgraph").into())
}

/// A hermetic test environment.
pub struct TestEnv {
    /// The temp directory everything lives in.
    pub dir: tempfile::TempDir,
    /// `HOME`.
    pub home: PathBuf,
    /// `ROLLGRAPH_HOME`.
    pub state: PathBuf,
    /// A project directory (the hosts' `cwd`).
    pub project: PathBuf,
    /// Extra environment variables.
    pub vars: Vec<(String, String)>,
}

impl TestEnv {
    /// A fresh environment.
    pub fn new() -> TestEnv {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let home = dir.path().join("home");
        let state = dir.path().join("state");
        let project = dir.path().join("project");
        for d in [&home, &project] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        TestEnv {
            dir,
            home,
            state,
            project,
            vars: Vec::new(),
        }
    }

    /// The state home as the engine sees it.
    pub fn state_home(&self) -> Home {
        Home::at(&self.state)
    }

    /// A command for the binary with the hermetic environment.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", self.dir.path())
            .env("ROLLGRAPH_HOME", &self.state)
            .env("ROLLGRAPH_NOW", NOW)
            .env("ROLLGRAPH_SEED", "7")
            .env(
                "ROLLGRAPH_WORDS",
                rollgraph_engine::extract::lexicon::frequency_path(),
            )
            .env("ROLLGRAPH_DAEMON_IDLE_SECS", "2")
            .current_dir(&self.project);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// Runs the binary with `stdin`, returning its output.
    pub fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {:?}: {e}", bin()));
        if let Some(mut i) = child.stdin.take() {
            // A hook may exit without reading everything: not an error here.
            let _ = i.write_all(stdin);
        }
        child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("wait: {e}"))
    }

    /// Runs `rollgraph hook claude` on a payload: (stdout, exit code).
    pub fn hook(&self, payload: &[u8]) -> (String, i32) {
        let out = self.run(&["hook", "claude"], payload);
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.code().unwrap_or(-1),
        )
    }

    /// A hook payload for this environment's project.
    pub fn payload(&self, session: &str, event: &str, extra: serde_json::Value) -> Vec<u8> {
        let mut v = serde_json::json!({
            "session_id": session,
            "transcript_path": self.dir.path().join(format!("{session}.jsonl")),
            "cwd": self.project,
            "hook_event_name": event,
        });
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            for (k, x) in e {
                o.insert(k.clone(), x.clone());
            }
        }
        serde_json::to_vec(&v).unwrap_or_default()
    }

    /// The log's text (empty when there is none).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.state.join("rollgraph.log")).unwrap_or_default()
    }

    /// The daemon's socket.
    pub fn socket(&self) -> PathBuf {
        self.state.join("daemon.sock")
    }

    /// Sends one line to the daemon and reads its answer.
    pub fn daemon_say(&self, line: &str) -> Option<String> {
        let mut s = UnixStream::connect(self.socket()).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        s.write_all(format!("{line}\n").as_bytes()).ok()?;
        let mut answer = String::new();
        s.read_to_string(&mut answer).ok()?;
        Some(answer.trim().to_owned())
    }

    /// Waits until the daemon has processed every spooled job.
    pub fn wait_for_daemon(&self) {
        wait_until("the daemon to drain the spools", || {
            spool_drained(&self.state)
        });
    }

    /// Seeds a session with a few turns run through the heuristic probe.
    pub fn seed_session(&self, session: &str, prompts: &[&str]) {
        let mut s = Session::open(&self.state_home(), session, Config::default())
            .unwrap_or_else(|e| panic!("{e}"));
        s.state.cwd = Some(self.project.display().to_string());
        let now = rollgraph_engine::clock::parse_time(NOW).unwrap_or_default();
        // Built first: it loads the word list the gate also reads, so the
        // first seeded session of a test process sees the same gate as the rest.
        let mut probe = HeuristicProbe::new(Config::default().probe);
        for (i, p) in prompts.iter().enumerate() {
            s.observe(Turn {
                index: i as u32 + 1,
                user: (*p).to_owned(),
                ..Turn::default()
            });
            s.cycle(&mut probe, now).unwrap_or_else(|e| panic!("{e}"));
        }
        s.save_state().unwrap_or_else(|e| panic!("{e}"));
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let _ = self.daemon_say("shutdown");
    }
}

/// Whether every spool has been processed up to its end.
pub fn spool_drained(state: &Path) -> bool {
    let spool = state.join("spool");
    let Ok(rd) = std::fs::read_dir(&spool) else {
        return true;
    };
    rd.flatten().all(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(session) = name.strip_suffix(".jsonl") else {
            return true;
        };
        let len = e.metadata().map(|m| m.len()).unwrap_or(0);
        let off: u64 = std::fs::read_to_string(spool.join(format!("{session}.off")))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        len == 0 || off >= len
    })
}

/// Polls `cond` until it holds; a test that waits longer than a minute for
/// something is broken, not slow.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > Duration::from_secs(60) {
            panic!("gave up waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a process is alive (a zombie counts as dead).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Processes (other than zombies) whose environment names this state home.
pub fn processes_using(state: &Path) -> Vec<u32> {
    let needle = format!("ROLLGRAPH_HOME={}", state.display());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()))
        .filter(|&pid| pid != std::process::id())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|&pid| alive(pid))
        .collect()
}
