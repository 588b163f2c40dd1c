//! Warm graph across sessions: multi-session scenario, crash recovery (a
//! killed process), transcript catch-up, concurrent reconcilers, seeding and
//! a corrupt warm store.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::repo;
use chrono::{DateTime, Duration, Utc};
use rollgraph_engine::graph::{Domain, Node, NodeId, NodeKind, Provenance};
use rollgraph_engine::lifecycle::{self, ReconcileReason};
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::session::Session;
use rollgraph_engine::store::{Home, StoreError};
use rollgraph_engine::transcript::Turn;
use rollgraph_engine::warm::{self, WarmStore};
use rollgraph_engine::{Config, Graph};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn day(d: i64) -> DateTime<Utc> {
    ok(DateTime::parse_from_rfc3339("2026-11-02T09:00:00Z")).with_timezone(&Utc) + Duration::days(d)
}

/// A fresh state home and project directory in a temp dir.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = ok(tempfile::tempdir());
        ok(std::fs::create_dir_all(dir.path().join("ledgerline")));
        Env { dir }
    }

    fn home(&self) -> Home {
        Home::at(self.dir.path().join("home"))
    }

    fn project(&self) -> String {
        self.dir.path().join("ledgerline").display().to_string()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn cmd(&self, now: DateTime<Utc>) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rollgraph"));
        c.env_clear()
            .env("ROLLGRAPH_HOME", self.home().root())
            .env("HOME", self.dir.path())
            .env("ROLLGRAPH_NOW", now.to_rfc3339())
            // Hermetic: no embedding model, so matching is lexical everywhere.
            .env("ROLLGRAPH_CACHE", self.dir.path().join("cache"))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(self.dir.path());
        c
    }

    fn run(&self, now: DateTime<Utc>, args: &[&str]) -> Output {
        ok(self.cmd(now).args(args).output())
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Feeds turns through a session as the hook and daemon would.
fn drive(s: &mut Session, turns: &[(&str, &str)], start: DateTime<Utc>) {
    let mut probe = HeuristicProbe::new(s.config.probe.clone());
    let first = s.state.turn;
    for (i, (user, reply)) in turns.iter().enumerate() {
        let now = start + Duration::minutes(3 * i as i64);
        let index = first + i as u32 + 1;
        let decision = s.observe(Turn {
            index,
            user: (*user).to_owned(),
            assistant: String::new(),
            files: Vec::new(),
            timestamp: Some(now),
        });
        if decision.fire {
            ok(s.cycle(&mut probe, now));
        }
        s.record_reply(reply, &[]);
        ok(s.save_state());
    }
}

const S1: &[(&str, &str)] = &[
    (
        "Morning! I'm starting the dunning reminder emails for Ledgerline today. The code lives in src/billing/dunning.rs.",
        "Got it, I'll start from src/billing/dunning.rs.",
    ),
    (
        "For transactional email, let's go with Resend.",
        "OK, Resend it is; I'll add a ResendSender.",
    ),
    (
        "Priya Raman is the backend lead and reviews all my PRs.",
        "Noted, I'll keep PRs small for Priya.",
    ),
    (
        "Write the EmailSender trait in src/email/mod.rs.",
        "Done: EmailSender with a single send method.",
    ),
    (
        "Now add the ResendSender implementation.",
        "ResendSender implemented behind EmailSender.",
    ),
];

const S2: &[(&str, &str)] = &[
    (
        "Back on the dunning emails for Ledgerline.",
        "Picking up where we left off: EmailSender and ResendSender.",
    ),
    (
        "Update on email: we decided to use Bento instead of Resend — switch the email module over.",
        "Switching the email module to a BentoSender.",
    ),
    (
        "Priya wants every migration to be reversible.",
        "Understood, every migration gets a down file.",
    ),
    (
        "Add the BentoSender tests in tests/email.rs.",
        "Added tests for BentoSender.",
    ),
];

const S3: &[(&str, &str)] = &[
    (
        "Let's wire the BentoSender into send_due_reminders in src/jobs/reminders.rs.",
        "Wired BentoSender into send_due_reminders.",
    ),
    (
        "Marco Bellini owns the email templates, ask him about the copy.",
        "Will do, I'll ping Marco Bellini.",
    ),
];

fn decision_with<'g>(g: &'g Graph, word: &str, not: &str) -> Option<&'g Node> {
    g.nodes()
        .into_iter()
        .find(|n| n.kind == NodeKind::Decision && n.label.contains(word) && !n.label.contains(not))
}

#[test]
fn three_sessions_a_changed_decision_and_a_crash() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let cwd = env.project();

    // Session 1: the first decision.
    let r = ok(lifecycle::session_start(
        &home,
        &cfg,
        "s1",
        Some(&cwd),
        day(0),
    ));
    assert_eq!((r.recovered.len(), r.seeded_nodes), (0, 0));
    {
        let mut s = ok(Session::open(&home, "s1", cfg.clone()));
        drive(&mut s, S1, day(0));
    }
    let r1 = ok(lifecycle::reconcile_session(
        &home,
        &cfg,
        "s1",
        ReconcileReason::SessionEnd,
        day(0) + Duration::hours(1),
    ));
    assert!(r1.added > 0, "{r1:?}");

    // Session 2 starts from the warm graph and changes the decision.
    let r = ok(lifecycle::session_start(
        &home,
        &cfg,
        "s2",
        Some(&cwd),
        day(1),
    ));
    assert!(r.seeded_nodes > 0, "session 2 was not seeded: {r:?}");
    {
        let s = ok(Session::open(&home, "s2", cfg.clone()));
        assert!(
            decision_with(&s.graph, "Resend", "Bento").is_some(),
            "the old decision was not seeded"
        );
    }
    {
        let mut s = ok(Session::open(&home, "s2", cfg.clone()));
        drive(&mut s, S2, day(1));
    }
    ok(lifecycle::reconcile_session(
        &home,
        &cfg,
        "s2",
        ReconcileReason::SessionEnd,
        day(1) + Duration::hours(1),
    ));

    // Session 3 dies mid-way: probes applied, never reconciled, never ended.
    ok(lifecycle::session_start(
        &home,
        &cfg,
        "s3",
        Some(&cwd),
        day(2),
    ));
    let s3_nodes: Vec<NodeId> = {
        let mut s = ok(Session::open(&home, "s3", cfg.clone()));
        drive(&mut s, S3, day(2));
        assert!(s.state.unreconciled > 0 && !s.state.ended);
        s.graph.nodes().iter().map(|n| n.id.clone()).collect()
    };

    // Session 4: recovers session 3 and starts from where the work stood.
    let r = ok(lifecycle::session_start(
        &home,
        &cfg,
        "s4",
        Some(&cwd),
        day(3),
    ));
    assert_eq!(r.recovered, vec!["s3".to_owned()], "{r:?}");
    let state3 = ok(Session::open(&home, "s3", cfg.clone())).state;
    assert_eq!(state3.unreconciled, 0);

    let warm = ok(lifecycle::warm_graph(&home, Path::new(&cwd)));
    for id in &s3_nodes {
        assert!(
            warm.contains(id),
            "node {id} of the crashed session is not in the warm graph"
        );
    }
    let old = decision_with(&warm, "Resend", "Bento").cloned();
    let old = old.unwrap_or_else(|| panic!("no Resend decision in the warm graph"));
    let new = warm.superseded_by(&old.id).cloned();
    let new =
        new.unwrap_or_else(|| panic!("the Resend decision is not superseded in the warm graph"));
    assert!(new.label.contains("Bento"), "superseded by {}", new.label);
    assert_eq!(
        lifecycle::current_of(&warm, &old.id).map(|n| n.id.clone()),
        Some(new.id.clone())
    );

    // The first injection of session 4 names the current decision and the old one.
    let render = ok(rollgraph_engine::session::read_render(&ok(
        home.session_dir("s4")
    )));
    let text = render.map(|r| r.text).unwrap_or_default();
    assert!(
        text.lines()
            .any(|l| l.contains(&new.label) && l.contains(&old.label)),
        "no line shows the current decision with what it superseded:\n{text}"
    );

    // A second start recovers nothing and does not re-seed a started session.
    let again = ok(lifecycle::session_start(
        &home,
        &cfg,
        "s4",
        Some(&cwd),
        day(3),
    ));
    assert!(again.recovered.is_empty());
    assert_eq!(again.seeded_nodes, 0);
}

#[test]
fn reconciling_twice_changes_nothing() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let cwd = env.project();
    ok(lifecycle::session_start(
        &home,
        &cfg,
        "s1",
        Some(&cwd),
        day(0),
    ));
    {
        let mut s = ok(Session::open(&home, "s1", cfg.clone()));
        drive(&mut s, S1, day(0));
    }
    ok(lifecycle::reconcile_session(
        &home,
        &cfg,
        "s1",
        ReconcileReason::Checkpoint,
        day(0),
    ));
    let before = ok(lifecycle::warm_graph(&home, Path::new(&cwd))).to_doc();
    let r = ok(lifecycle::reconcile_session(
        &home,
        &cfg,
        "s1",
        ReconcileReason::Compaction,
        day(0),
    ));
    assert_eq!(
        (r.added, r.updated, r.edges_added, r.edges_updated),
        (0, 0, 0, 0),
        "{r:?}"
    );
    assert_eq!(
        ok(lifecycle::warm_graph(&home, Path::new(&cwd))).to_doc(),
        before
    );
}

#[test]
fn checkpoint_is_due_after_n_probes() {
    let env = Env::new();
    let home = env.home();
    let mut cfg = Config::default();
    cfg.reconcile.checkpoint_every = 2;
    let mut s = ok(Session::open(&home, "s1", cfg.clone()));
    assert!(!lifecycle::checkpoint_due(&s, &cfg));
    s.state.unreconciled = 2;
    assert!(lifecycle::checkpoint_due(&s, &cfg));
}

/// A child `rollgraph replay` killed mid-way is recovered at the next start.
#[test]
fn killed_replay_is_recovered_at_next_start() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let transcript = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/session.jsonl");
    let mut child = ok(env
        .cmd(day(0))
        .args(["replay", transcript, "--session", "crashy"])
        .spawn());
    let state = ok(home.session_dir("crashy")).join("state.json");
    // Kill it once a few probes are acknowledged (or let it finish: a replay
    // never reconciles, so either way it is a crashed session).
    loop {
        let probes = std::fs::read(&state)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v.get("probe_seq").and_then(serde_json::Value::as_u64))
            .unwrap_or(0);
        if probes >= 3 || ok(child.try_wait()).is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    let (nodes, cwd) = {
        let s = ok(Session::open(&home, "crashy", cfg.clone()));
        assert!(s.state.unreconciled > 0);
        (
            s.graph
                .nodes()
                .iter()
                .map(|n| n.id.clone())
                .collect::<Vec<_>>(),
            s.state.cwd.clone(),
        )
    };
    assert!(!nodes.is_empty());
    let cwd = cwd.unwrap_or_else(|| panic!("the replay recorded no cwd"));
    let r = ok(lifecycle::session_start(
        &home,
        &cfg,
        "next",
        Some(&cwd),
        day(30),
    ));
    assert_eq!(r.recovered, vec!["crashy".to_owned()]);
    assert!(r.seeded_nodes > 0);
    let warm = ok(lifecycle::warm_graph(&home, Path::new(&cwd)));
    let missing: Vec<&NodeId> = nodes.iter().filter(|id| !warm.contains(id)).collect();
    assert!(missing.is_empty(), "lost in recovery: {missing:?}");
}

fn claude_line(
    kind: &str,
    session: &str,
    cwd: &str,
    ts: DateTime<Utc>,
    i: usize,
    text: &str,
) -> String {
    let message = if kind == "user" {
        serde_json::json!({"role": "user", "content": text})
    } else {
        serde_json::json!({"id": format!("msg_{i}"), "role": "assistant", "content": [{"type": "text", "text": text}]})
    };
    serde_json::json!({
        "type": kind, "sessionId": session, "cwd": cwd, "uuid": format!("u-{kind}-{i}"),
        "timestamp": ts.to_rfc3339(), "isSidechain": false, "message": message,
    })
    .to_string()
}

fn transcript(session: &str, cwd: &str, turns: &[(&str, &str)], start: DateTime<Utc>) -> String {
    let mut out = String::new();
    for (i, (u, a)) in turns.iter().enumerate() {
        let ts = start + Duration::minutes(3 * i as i64);
        out.push_str(&claude_line("user", session, cwd, ts, i, u));
        out.push('\n');
        out.push_str(&claude_line(
            "assistant",
            session,
            cwd,
            ts + Duration::seconds(20),
            i,
            a,
        ));
        out.push('\n');
    }
    out
}

#[test]
fn transcript_catch_up_for_a_session_without_journal() {
    let env = Env::new();
    let cwd = env.project();
    let mut text = transcript("lost-1", &cwd, S1, day(0));
    // Truncated mid-line, as a killed host leaves it.
    text.push_str("{\"type\":\"user\",\"sessionId\":\"lost-1\",\"message\":{\"role\":\"us");
    let file = env.path("lost.jsonl");
    ok(std::fs::write(&file, text));
    let o = env.run(
        day(0),
        &[
            "reconcile",
            "--transcript",
            &file.display().to_string(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 11"),
        "the torn line was not reported: {}",
        stderr(&o)
    );
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert_eq!(v[0]["session"], "lost-1");
    assert_eq!(v[0]["replayed_turns"], 5);
    assert!(v[0]["added"].as_u64().unwrap_or(0) > 0, "{v}");
    let warm = ok(lifecycle::warm_graph(&env.home(), Path::new(&cwd)));
    assert!(decision_with(&warm, "Resend", "Bento").is_some());

    // Again: the session has a journal now; nothing is replayed twice.
    let o = env.run(
        day(0),
        &[
            "reconcile",
            "--transcript",
            &file.display().to_string(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert!(v[0].get("replayed_turns").is_none());
    assert_eq!(v[0]["added"], 0);
}

#[test]
fn transcript_catch_up_replays_only_the_turns_a_dead_session_missed() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let cwd = env.project();
    ok(lifecycle::session_start(
        &home,
        &cfg,
        "partial",
        Some(&cwd),
        day(0),
    ));
    {
        let mut s = ok(Session::open(&home, "partial", cfg.clone()));
        drive(&mut s, &S1[..2], day(0));
        assert_eq!(s.state.turn, 2);
    }
    let file = env.path("partial.jsonl");
    ok(std::fs::write(
        &file,
        transcript("partial", &cwd, S1, day(0)),
    ));
    let o = env.run(
        day(0),
        &[
            "reconcile",
            "--transcript",
            &file.display().to_string(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert_eq!(v[0]["replayed_turns"], 3, "{v}");
    let s = ok(Session::open(&home, "partial", cfg.clone()));
    assert_eq!(s.state.turn, 5);
    assert_eq!(s.state.unreconciled, 0);
    // Priya was named in turn 3, which only the transcript had.
    let warm = ok(lifecycle::warm_graph(&home, Path::new(&cwd)));
    assert!(warm.find_by_name("Priya Raman").is_some());
}

/// Crash recovery from another host's transcript: the session's turns are
/// replayed from it and merged into the project's warm graph.
fn recover_from(fixture: &str, format: Option<&str>, session: &str, expect_format: &str) {
    let env = Env::new();
    let file = repo().join("tests/fixtures/hosts").join(fixture);
    let project = env.project();
    let mut args = vec![
        "reconcile",
        "--transcript",
        file.to_str().unwrap_or_default(),
        "--project",
        &project,
        "--json",
    ];
    if let Some(f) = format {
        args.extend(["--format", f]);
    }
    let o = env.run(day(0), &args);
    assert!(o.status.success(), "{fixture}: {}", stderr(&o));
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert_eq!(v[0]["session"], session, "{v}");
    assert_eq!(v[0]["replayed_turns"], 2, "{fixture}: {v}");
    assert_eq!(v[0]["transcript_format"], expect_format, "{v}");
    let warm = ok(lifecycle::warm_graph(&env.home(), Path::new(&project)));
    // The changed decision, with what it replaced.
    let old = decision_with(&warm, "Use Postwick", "Mailbarn");
    assert!(
        old.is_some_and(|o| warm
            .superseded_by(&o.id)
            .is_some_and(|n| n.label.contains("Mailbarn"))),
        "{fixture}: the changed decision is not in the warm graph"
    );
    assert!(warm.find_by_name("Dana Whitlock").is_some(), "{fixture}");
    // What the hook injected (Gemini keeps it in the prompt's record, Codex
    // as a developer message) is not read back as the user's words.
    assert!(
        !warm
            .nodes()
            .into_iter()
            .any(|n| n.label.contains("memory_expand") || n.label.contains("Rolling memory")),
        "{fixture}: the injected block became nodes"
    );
    // Again: nothing is replayed twice.
    let o = env.run(day(0), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert!(v[0].get("replayed_turns").is_none(), "{v}");
}

#[test]
fn reconcile_recovers_a_codex_rollout() {
    recover_from(
        "codex-rollout.jsonl",
        None,
        "01a20c6b-9f29-7c90-87f5-18faf69ee383",
        "codex",
    );
    recover_from(
        "codex-rollout.jsonl",
        Some("codex"),
        "01a20c6b-9f29-7c90-87f5-18faf69ee383",
        "codex",
    );
}

#[test]
fn reconcile_recovers_a_gemini_session() {
    recover_from(
        "gemini-session.jsonl",
        None,
        "bd86086a-fec3-47eb-8669-8c5d21035c4d",
        "gemini",
    );
    recover_from(
        "gemini-session.jsonl",
        Some("gemini"),
        "bd86086a-fec3-47eb-8669-8c5d21035c4d",
        "gemini",
    );
}

#[test]
fn a_transcript_read_in_the_wrong_format_is_refused_cleanly() {
    let env = Env::new();
    let file = repo().join("tests/fixtures/hosts/codex-rollout.jsonl");
    let o = env.run(
        day(0),
        &[
            "reconcile",
            "--transcript",
            file.to_str().unwrap_or_default(),
            "--format",
            "claude",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("another host"), "{}", stderr(&o));
    assert!(
        env.home().sessions().is_empty(),
        "a session was created from a transcript with no turns"
    );
    // Nothing any reader takes: refused too.
    let junk = env.path("junk.jsonl");
    ok(std::fs::write(&junk, "{\"a\":1}\n{\"b\":2}\n"));
    let o = env.run(
        day(0),
        &[
            "reconcile",
            "--transcript",
            junk.to_str().unwrap_or_default(),
        ],
    );
    assert!(!o.status.success());
    assert!(env.home().sessions().is_empty());
}

/// Prepares a hot session holding `labels` (each seen in this session).
fn hot_session(
    home: &Home,
    cfg: &Config,
    id: &str,
    cwd: &str,
    labels: &[String],
    now: DateTime<Utc>,
) {
    let mut g = Graph::new();
    for l in labels {
        let nid = NodeId::slug(l).unwrap_or_else(|| panic!("bad label {l}"));
        let mut n = Node::new(nid, l, Domain::Project, 0.5, now);
        n.provenance.push(Provenance {
            session: id.to_owned(),
            first_turn: 1,
            last_turn: 1,
            mentions: 1,
        });
        g.upsert_node(n);
    }
    let mut s = ok(Session::open(home, id, cfg.clone()));
    s.state.cwd = Some(cwd.to_owned());
    ok(s.reset(g.to_doc(), now));
    s.state.unreconciled = 1;
    ok(s.save_state());
}

fn labels_for(k: usize) -> Vec<String> {
    let mut v: Vec<String> = (0..40).map(|i| format!("topic {k} item {i}")).collect();
    v.push("shared dunning policy".into());
    v
}

fn check_all_accounted(home: &Home, cwd: &str, n: usize) {
    let store = ok(WarmStore::open(home, &warm::project_key(Path::new(cwd))));
    assert!(store.load.restored.is_empty(), "{:?}", store.load.restored);
    assert_eq!(store.graph.node_count(), n * 40 + 1);
    for k in 0..n {
        for l in labels_for(k) {
            let id = NodeId::slug(&l).unwrap_or_else(|| unreachable!());
            assert!(store.graph.contains(&id), "lost {id}");
        }
    }
    let shared = store
        .graph
        .node(&NodeId::slug("shared dunning policy").unwrap_or_else(|| unreachable!()))
        .cloned();
    let sessions = shared.map(|n| n.provenance.len()).unwrap_or(0);
    assert_eq!(
        sessions, n,
        "a concurrent update to the shared node was lost"
    );
}

#[test]
fn concurrent_processes_lose_nothing() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let cwd = env.project();
    let n = 8;
    for k in 0..n {
        hot_session(&home, &cfg, &format!("p{k}"), &cwd, &labels_for(k), day(0));
    }
    let children: Vec<_> = (0..n)
        .map(|k| {
            ok(env
                .cmd(day(0))
                .args(["reconcile", "--session", &format!("p{k}")])
                .output_spawn())
        })
        .collect();
    for c in children {
        let o = ok(c.wait_with_output());
        assert!(o.status.success(), "{}", stderr(&o));
    }
    check_all_accounted(&home, &cwd, n);
}

#[test]
fn concurrent_threads_lose_nothing() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let cwd = env.project();
    let n = 6;
    for k in 0..n {
        hot_session(&home, &cfg, &format!("t{k}"), &cwd, &labels_for(k), day(0));
    }
    std::thread::scope(|scope| {
        for k in 0..n {
            let (home, cfg) = (home.clone(), cfg.clone());
            scope.spawn(move || {
                ok(lifecycle::reconcile_session(
                    &home,
                    &cfg,
                    &format!("t{k}"),
                    ReconcileReason::Checkpoint,
                    day(0),
                ))
            });
        }
    });
    check_all_accounted(&home, &cwd, n);
}

trait SpawnPiped {
    fn output_spawn(&mut self) -> std::io::Result<std::process::Child>;
}

impl SpawnPiped for Command {
    fn output_spawn(&mut self) -> std::io::Result<std::process::Child> {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
    }
}

/// Not a test on its own: the child process of `a_lock_held_by_a_dead_process_is_released`.
#[test]
#[ignore = "helper run as a child process"]
#[allow(clippy::print_stdout)] // the parent waits for this line
fn hold_warm_lock_helper() {
    let Some(home) = std::env::var_os("ROLLGRAPH_TEST_HOLD_HOME") else {
        return;
    };
    let _store = ok(WarmStore::open(&Home::at(home), warm::GLOBAL_KEY));
    println!("holding");
    std::thread::sleep(std::time::Duration::from_secs(120));
}

#[test]
fn a_lock_held_by_a_dead_process_is_released() {
    let env = Env::new();
    let home = env.home();
    let mut child = ok(Command::new(ok(std::env::current_exe()))
        .args([
            "--exact",
            "warm::hold_warm_lock_helper",
            "--ignored",
            "--nocapture",
        ])
        .env("ROLLGRAPH_TEST_HOLD_HOME", home.root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn());
    // Wait until the child says it holds the lock.
    let out = child.stdout.take().unwrap_or_else(|| unreachable!());
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(out));
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.contains("holding"))),
        "the helper never took the lock"
    );
    let held = WarmStore::open_with_timeout(
        &home,
        warm::GLOBAL_KEY,
        std::time::Duration::from_millis(50),
    );
    assert!(
        matches!(held, Err(StoreError::Locked(_))),
        "the child's lock was not seen"
    );
    ok(child.kill());
    let _ = child.wait();
    // The OS released the dead process's lock: no stale lock file to clean up.
    let store = ok(WarmStore::open_with_timeout(
        &home,
        warm::GLOBAL_KEY,
        std::time::Duration::from_secs(5),
    ));
    assert!(store.load.restored.is_empty());
}

#[test]
fn corrupt_warm_snapshot_is_restored_and_reported() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    let cwd = env.project();
    // Enough reconciliations for two snapshot generations.
    for k in 0..(2 * warm::SNAPSHOT_EVERY as usize + 1) {
        hot_session(
            &home,
            &cfg,
            &format!("c{k}"),
            &cwd,
            &[format!("corrupt topic {k}")],
            day(0),
        );
        ok(lifecycle::reconcile_session(
            &home,
            &cfg,
            &format!("c{k}"),
            ReconcileReason::SessionEnd,
            day(0),
        ));
    }
    let key = warm::project_key(Path::new(&cwd));
    let snap = ok(WarmStore::dir_of(&home, &key)).join("snapshot.json");
    ok(std::fs::write(
        &snap,
        b"{\"seq\": 9, \"doc\": {\"nodes\": {\"x\": {\"garbage",
    ));
    hot_session(
        &home,
        &cfg,
        "after",
        &cwd,
        &["after the damage".to_owned()],
        day(0),
    );
    let o = env.run(day(0), &["reconcile", "--session", "after"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("restored from") && text.contains("snapshot.json"),
        "damage not reported: {text}"
    );
    let store = ok(WarmStore::open(&home, &key));
    assert_eq!(
        store.graph.node_count(),
        2 * warm::SNAPSHOT_EVERY as usize + 2,
        "nodes lost in the restore"
    );
    assert!(
        store.load.restored.is_empty(),
        "still damaged: {:?}",
        store.load.restored
    );
}

#[test]
fn seeding_from_the_cli_is_idempotent() {
    let env = Env::new();
    let file = env.path("MEMORY.md");
    ok(std::fs::write(
        &file,
        "# Memory\n\n- Never push to main directly.\n- Always run cargo nextest, not cargo test.\n- The demo is on the 15th.\n\n```\nnot memory\n```\n",
    ));
    let cwd = env.project();
    let f = file.display().to_string();
    let o = env.run(day(0), &["seed", &f, "--project", &cwd, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert_eq!(
        (
            v["items"].as_u64(),
            v["added"].as_u64(),
            v["rules"].as_u64()
        ),
        (Some(3), Some(3), Some(2))
    );
    let o = env.run(day(1), &["seed", &f, "--project", &cwd, "--json"]);
    let v: serde_json::Value = ok(serde_json::from_str(&stdout(&o)));
    assert_eq!(
        (v["added"].as_u64(), v["already"].as_u64()),
        (Some(0), Some(3))
    );
    let warm = ok(lifecycle::warm_graph(&env.home(), Path::new(&cwd)));
    assert_eq!(warm.node_count(), 3);
    assert!(warm.nodes().iter().all(|n| n.anchor));

    // Seed files from the config are picked up at session start, once.
    let mut cfg = Config::default();
    cfg.flat.seed_files = vec![PathBuf::from("CLAUDE.md#Memory")];
    ok(std::fs::write(
        Path::new(&cwd).join("CLAUDE.md"),
        "# Build\nuse make\n\n## Memory\n- Don't use unwrap in library code\n\n## Other\n- unrelated\n",
    ));
    let r = ok(lifecycle::session_start(
        &env.home(),
        &cfg,
        "s1",
        Some(&cwd),
        day(2),
    ));
    assert_eq!(r.seeded_anchors, 1, "{r:?}");
    assert!(r.seeded_nodes >= 4);
    let r = ok(lifecycle::session_start(
        &env.home(),
        &cfg,
        "s2",
        Some(&cwd),
        day(2),
    ));
    assert_eq!(r.seeded_anchors, 0);

    // A missing file is a clear error, and nothing is written.
    let o = env.run(day(0), &["seed", "/nowhere/MEMORY.md", "--project", &cwd]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot read /nowhere/MEMORY.md"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn stats_sum_over_sessions() {
    let env = Env::new();
    let home = env.home();
    let cfg = Config::default();
    for id in ["a", "b"] {
        let mut s = ok(Session::open(&home, id, cfg.clone()));
        drive(&mut s, S1, day(0));
    }
    let (per, total) = lifecycle::all_stats(&home);
    assert_eq!(per.len(), 2);
    assert_eq!(total.turns, per.iter().map(|(_, s)| s.turns).sum::<u64>());
    assert_eq!(total.turns, 2 * S1.len() as u64);
}
