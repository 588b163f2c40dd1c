//! `cargo bench --bench hook`: the slim `rollgraph-hook claude` on
//! UserPromptSubmit (and, for comparison, `rollgraph hook claude` from the
//! full binary), timed as a whole process, against a do-nothing Rust binary
//! timed the same way.
//!
//! Setup: a 5,000-node synthetic session on disk (snapshot, render.json,
//! terms.txt, state.json), written through the real `Session`. A stand-in
//! daemon (a socket that reads each poke and answers `ok`, as the daemon
//! does) listens, so the measured path includes the poke and its answer but not the daemon's probe work competing
//! for the CPU. Each run spawns the process, writes the payload to its
//! stdin, and waits for it to exit. Also measured in-process: the first
//! redaction (which compiles the regexes), later redactions, and one
//! `gate::decide` against the 5,000 nodes' names (the daemon's gate; the
//! hook no longer runs one).
//!
//! Besides wall time it reports each process's CPU time (user + system,
//! from `getrusage(RUSAGE_CHILDREN)`), which on a loaded machine shows how
//! much of the wall time is waiting for a CPU rather than work.
//!
//! Options (environment): `HOOK_BENCH_RUNS` (default 300), `HOOK_BENCH_NODES`
//! (default 5000), `HOOK_BENCH_KEEP=1` keeps the temp directory (with the
//! session and `payload.json`) for profiling.

// A benchmark's job is to print its table.
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rollgraph_engine::gate::{self, GateInput, GateState};
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use rollgraph_engine::{Config, clock, redact, synth};

const PROMPT: &str = "Switch the dunning retry schedule to use Bento instead of Resend, and ask Priya Raman to review src/billing/dunning.rs before Friday.";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

/// CPU time (user + system) of all reaped children so far.
#[allow(unsafe_code)]
fn children_cpu() -> Duration {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage only writes the struct we pass; it is zero-initialised
    // and read only after the call succeeds.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    // SAFETY: initialised by the successful call above (and zeroed before).
    let ru = unsafe { ru.assume_init() };
    let tv =
        |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1_000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Spawns `cmd` `runs` times with `stdin`, returning sorted wall and CPU times.
fn time_process(
    mut make: impl FnMut() -> Command,
    stdin: &[u8],
    runs: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut times = Vec::with_capacity(runs);
    let mut cpu = Vec::with_capacity(runs);
    for i in 0..runs + 10 {
        let cpu0 = children_cpu();
        let start = Instant::now();
        let mut child = match make()
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("spawn failed: {e}");
                std::process::exit(1);
            }
        };
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(stdin);
        }
        let _ = child.wait();
        let wall = start.elapsed();
        // The first ten warm the page cache.
        if i >= 10 {
            times.push(wall);
            cpu.push(children_cpu().saturating_sub(cpu0));
        }
    }
    times.sort();
    cpu.sort();
    (times, cpu)
}

fn main() {
    let runs = env_usize("HOOK_BENCH_RUNS", 300);
    let nodes = env_usize("HOOK_BENCH_NODES", 5_000);
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("tempdir: {e}");
            std::process::exit(1);
        }
    };
    let state = dir.path().join("state");
    let home = Home::at(&state);
    let now = clock::parse_time("2026-11-02T10:00:00Z").unwrap_or_default();

    // A 5,000-node session on disk, written by the real Session.
    let session = "bench-session";
    {
        let mut s = match Session::open(&home, session, Config::default()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("session: {e}");
                std::process::exit(1);
            }
        };
        s.state.cwd = Some(dir.path().display().to_string());
        let g = synth::graph(nodes, 42, now);
        if let Err(e) = s.reset(g.to_doc(), now) {
            eprintln!("reset: {e}");
            std::process::exit(1);
        }
        let _ = s.save_state();
    }
    let sdir = state.join("sessions").join(session);
    let size = |f: &str| {
        std::fs::metadata(sdir.join(f))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    println!(
        "session on disk: {nodes} nodes; snapshot.json {} KiB, render.json {} KiB, terms.txt {} KiB",
        size("snapshot.json") / 1024,
        size("render.json") / 1024,
        size("terms.txt") / 1024
    );

    // A stand-in daemon: reads each poke and answers it (a poke nobody
    // answers makes the hook start a real daemon).
    let listener = match UnixListener::bind(state.join("daemon.sock")) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("socket: {e}");
            std::process::exit(1);
        }
    };
    std::thread::spawn(move || {
        use std::io::{BufRead, Write};
        for mut c in listener.incoming().flatten() {
            let mut line = String::new();
            if let Ok(r) = c.try_clone() {
                let _ = std::io::BufReader::new(r).read_line(&mut line);
            }
            let _ = c.write_all(b"ok\n");
        }
    });

    let payload = serde_json::json!({
        "session_id": session,
        "transcript_path": dir.path().join("transcript.jsonl"),
        "cwd": dir.path(),
        "hook_event_name": "UserPromptSubmit",
        "permission_mode": "default",
        "prompt": PROMPT,
    })
    .to_string();

    let _ = std::fs::write(dir.path().join("payload.json"), &payload);

    // Check the hook really injects before timing it.
    // A private copy: worktrees sharing a target directory overwrite each
    // other's binary, and the check below must see the one that is timed.
    let bin = dir.path().join("rollgraph");
    let slim = dir.path().join("rollgraph-hook");
    for (from, to) in [
        (env!("CARGO_BIN_EXE_rollgraph"), &bin),
        (env!("CARGO_BIN_EXE_rollgraph-hook"), &slim),
    ] {
        if let Err(e) = std::fs::copy(from, to) {
            eprintln!("copying the binary: {e}");
            std::process::exit(1);
        }
    }
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) / 1024;
    println!(
        "binaries: rollgraph {} KiB, rollgraph-hook {} KiB",
        size(&bin),
        size(&slim)
    );
    // Full mode: every prompt prints the whole block (the heaviest path).
    // Delta mode's steady state (nothing changed: nothing printed) is timed
    // after it.
    let config = state.join("config.toml");
    let _ = std::fs::write(&config, "[inject]\nmode = \"full\"\n");
    let env_of = |c: &mut Command| {
        c.env_clear()
            .env("ROLLGRAPH_HOME", &state)
            .env("HOME", dir.path());
    };
    let hook = || {
        let mut c = Command::new(&slim);
        c.arg("claude");
        env_of(&mut c);
        c
    };
    let full_hook = || {
        let mut c = Command::new(&bin);
        c.args(["hook", "claude"]);
        env_of(&mut c);
        c
    };
    let check = hook()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            if let Some(mut i) = c.stdin.take() {
                let _ = i.write_all(payload.as_bytes());
            }
            c.wait_with_output()
        });
    match check {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("additionalContext") => {}
        other => {
            eprintln!("the hook did not inject: {other:?}");
            std::process::exit(1);
        }
    }

    // A do-nothing Rust binary, built the same way (optimised).
    let noop_src = dir.path().join("noop.rs");
    let noop = dir.path().join("noop");
    let built = std::fs::write(&noop_src, "fn main() {}\n").is_ok()
        && Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .args(["-O", "-o"])
            .arg(&noop)
            .arg(&noop_src)
            .status()
            .is_ok_and(|s| s.success());

    let (hook_times, hook_cpu) = time_process(hook, payload.as_bytes(), runs);
    let (big_times, big_cpu) = time_process(full_hook, payload.as_bytes(), runs);
    let _ = std::fs::write(&config, "[inject]\nmode = \"delta\"\n");
    let (quiet_times, _) = time_process(hook, payload.as_bytes(), runs);
    let (noop_times, noop_cpu) = if built {
        time_process(
            || {
                let mut c = Command::new(&noop);
                c.env_clear();
                c
            },
            payload.as_bytes(),
            runs,
        )
    } else {
        eprintln!("could not build the do-nothing binary with rustc; ratio omitted");
        (Vec::new(), Vec::new())
    };

    // In-process costs of the two things the hook computes.
    let t = Instant::now();
    let first = redact::redact_owned(PROMPT);
    let redact_first = t.elapsed();
    let t = Instant::now();
    for _ in 0..100 {
        let _ = redact::redact_owned(PROMPT);
    }
    let redact_later = t.elapsed() / 100;
    let terms = std::fs::read_to_string(sdir.join("terms.txt")).unwrap_or_default();
    let t = Instant::now();
    let known = gate::SortedNames::from_lines(&terms);
    let known_build = t.elapsed();
    let t = Instant::now();
    let mut decisions = 0;
    for _ in 0..100 {
        let mut st = GateState::default();
        let d = gate::decide(
            &mut st,
            &GateInput {
                prompt: &first,
                previous_reply: "",
            },
            &known,
            &Config::default().gate,
        );
        decisions += usize::from(d.fire);
    }
    let gate_time = t.elapsed() / 100;

    println!();
    println!(
        "| process ({} runs each)                   |    p50 ms |    p99 ms |   mean ms |",
        hook_times.len()
    );
    println!("|------------------------------------------|-----------|-----------|-----------|");
    let row = |name: &str, t: &[Duration]| {
        if t.is_empty() {
            return;
        }
        let mean = t.iter().sum::<Duration>() / t.len() as u32;
        println!(
            "| {name:<40} | {:>9.3} | {:>9.3} | {:>9.3} |",
            ms(percentile(t, 0.5)),
            ms(percentile(t, 0.99)),
            ms(mean)
        );
    };
    row("rollgraph-hook claude (full block)", &hook_times);
    row("rollgraph-hook claude (delta, no change)", &quiet_times);
    row("rollgraph hook claude (full binary)", &big_times);
    row("do-nothing Rust binary", &noop_times);
    row("  CPU time: rollgraph-hook claude", &hook_cpu);
    row("  CPU time: rollgraph hook claude", &big_cpu);
    row("  CPU time: do-nothing Rust binary", &noop_cpu);
    if !noop_times.is_empty() {
        println!(
            "ratio hook / do-nothing (wall): p50 {:.2}×, p99 {:.2}×",
            ms(percentile(&hook_times, 0.5)) / ms(percentile(&noop_times, 0.5)),
            ms(percentile(&hook_times, 0.99)) / ms(percentile(&noop_times, 0.99))
        );
        println!(
            "ratio hook / do-nothing (CPU):  p50 {:.2}×, p99 {:.2}×",
            ms(percentile(&hook_cpu, 0.5)) / ms(percentile(&noop_cpu, 0.5)).max(1e-6),
            ms(percentile(&hook_cpu, 0.99)) / ms(percentile(&noop_cpu, 0.99)).max(1e-6)
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average during the run: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("targets (rollgraph-hook): p50 ≤ 2 ms, p99 ≤ 6 ms, ≤ 2× the do-nothing binary");
    println!();
    println!("in-process, same prompt, {} known names:", known.len());
    println!(
        "  first redaction (compiles the regexes): {:>8.3} ms",
        ms(redact_first)
    );
    println!(
        "  later redactions:                       {:>8.3} ms",
        ms(redact_later)
    );
    println!(
        "  known names from terms.txt (no copies):{:>8.3} ms",
        ms(known_build)
    );
    println!(
        "  gate::decide:                           {:>8.3} ms (fired {decisions}/100)",
        ms(gate_time)
    );
    if std::env::var_os("HOOK_BENCH_KEEP").is_some() {
        println!("kept {}", dir.keep().display());
    }
}
