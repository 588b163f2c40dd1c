//! A job stuck in the daemon (an LLM endpoint that accepts and never
//! answers) does not stall other sessions' work, and SIGTERM still ends the
//! daemon at once.

use std::time::Duration;

use serde_json::json;

use crate::hookenv::{TestEnv, alive, wait_until};

fn turns(env: &TestEnv, session: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(
        &std::fs::read(env.state.join(format!("sessions/{session}/state.json")))
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    v["stats"]["turns"].as_u64().unwrap_or(0)
}

#[test]
fn a_stuck_job_leaves_other_sessions_working_and_sigterm_ends_the_daemon() {
    // An endpoint that accepts connections and never says a word.
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    listener
        .set_nonblocking(true)
        .unwrap_or_else(|e| panic!("{e}"));
    let holder = std::thread::spawn(move || {
        let mut held = Vec::new();
        while !stop2.load(std::sync::atomic::Ordering::SeqCst) {
            if let Ok((s, _)) = listener.accept() {
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.state).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        env.state.join("config.toml"),
        format!(
            // The gate fires at once, so the first prompt's probe is the stuck job.
            "[gate]\nnext_turn = false\n[llm]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\ntimeout_ms = 600000\nmax_retries = 0\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    env.vars
        .push(("ROLLGRAPH_JOB_DEADLINE_SECS".into(), "1".into()));
    env.vars
        .push(("ROLLGRAPH_DAEMON_IDLE_SECS".into(), "60".into()));
    let prompt = |session: &str, text: &str| {
        env.payload(session, "UserPromptSubmit", json!({"prompt": text}))
    };
    // Session A's first prompt fires the gate: its probe hangs on the endpoint.
    let (_, code) = env.hook(&prompt(
        "stuck-a",
        "Let's go with Bento instead of Resend, and ask Priya Raman to review it.",
    ));
    assert_eq!(code, 0);
    wait_until("session A's job to be in flight", || {
        env.state.join("spool/stuck-a.inflight").exists()
    });
    // Session B's quiet turns still get done.
    for text in ["ok", "thanks"] {
        let (_, code) = env.hook(&prompt("stuck-b", text));
        assert_eq!(code, 0);
    }
    wait_until("session B's turns while A is stuck", || {
        turns(&env, "stuck-b") == 2
    });
    assert_eq!(turns(&env, "stuck-a"), 0, "A's job was not stuck after all");
    // SIGTERM ends the daemon even with a job stuck.
    let pid: u32 = std::fs::read_to_string(env.state.join("daemon.pid"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no daemon pid"));
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    wait_until("the daemon to exit on SIGTERM", || !alive(pid));
    // Its job stays marked in flight: the next daemon counts the attempt.
    assert!(env.state.join("spool/stuck-a.inflight").exists());
    assert!(
        env.log().contains("past its 1s deadline"),
        "the stuck job was not reported: {}",
        env.log()
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = holder.join();
}
