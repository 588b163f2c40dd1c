//! A hermetic environment per test (jj-style): temp HOME and state dir,
//! cleared environment, pinned clock and seed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Snapshot with the top-level `snapshots/hook` folder and an explicit name.
#[macro_export]
macro_rules! snap {
    ($name:expr, $value:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/hook"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, { insta::assert_snapshot!($name, $value) })
    };
}

/// A temp HOME and ROLLGRAPH_HOME, removed on drop.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}")),
        }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The `rollgraph` binary with a cleared, pinned environment.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rollgraph"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("ROLLGRAPH_HOME", self.state())
            .env("ROLLGRAPH_NOW", "2026-11-02T12:30:00Z")
            .env("ROLLGRAPH_SEED", "7")
            // The provisioned word list (scripts/provision-words.sh): tests
            // run the probe as users do, not its fallback.
            .env(
                "ROLLGRAPH_WORDS",
                rollgraph_engine::extract::lexicon::frequency_path(),
            )
            .current_dir(repo());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd()
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("running rollgraph {args:?}: {e}"))
    }
}

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The example transcript.
pub fn example() -> PathBuf {
    repo().join("examples/session.jsonl")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes the first `n` typed turns of the example (and everything between) to a file.
pub fn example_prefix(dir: &Path, turns: usize) -> PathBuf {
    let text = std::fs::read_to_string(example()).unwrap_or_default();
    let mut out = String::new();
    let mut seen = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let typed = v["type"] == "user"
            && v["message"]["content"].is_string()
            && v["isMeta"] != true
            && v["isCompactSummary"] != true
            && v["isSidechain"] != true;
        if typed {
            seen += 1;
            if seen > turns {
                break;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    let path = dir.join(format!("prefix-{turns}.jsonl"));
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{e}"));
    path
}

/// Every regular file under `dir`, recursively.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out
}
