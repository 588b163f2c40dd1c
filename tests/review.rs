//! Graduation into flat memory end to end: flagged at reconciliation,
//! listed, shown, edited, approved exactly once, rejected; archive review of
//! an anchor at its floor. `review` output is snapshot-tested.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chrono::{DateTime, Duration, Utc};
use rollgraph_engine::graph::{Domain, Edge, EdgeKind, Node, NodeId, NodeKind, Provenance};
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use rollgraph_engine::warm::{self, WarmStore};
use rollgraph_engine::{Config, Graph};

/// A project path that does not exist, so its store key is the same on every machine.
const PROJECT: &str = "/nonexistent/rollgraph-tests/ledgerline";

macro_rules! snap {
    ($name:expr, $value:expr, $tmp:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/hook"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            filters => vec![(regex_escape($tmp).as_str(), "[TMP]")],
        }, { insta::assert_snapshot!($name, $value) })
    };
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn day(d: i64) -> DateTime<Utc> {
    ok(DateTime::parse_from_rfc3339("2026-08-01T09:00:00Z")).with_timezone(&Utc) + Duration::days(d)
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let env = Env {
            dir: ok(tempfile::tempdir()),
        };
        let config = format!("[flat]\ngraduate_to = \"{}\"\n", env.memory().display());
        ok(std::fs::create_dir_all(env.home().root()));
        ok(std::fs::write(
            env.home().root().join("config.toml"),
            config,
        ));
        env
    }

    fn tmp(&self) -> String {
        self.dir.path().display().to_string()
    }

    fn home(&self) -> Home {
        Home::at(self.dir.path().join("home"))
    }

    fn memory(&self) -> PathBuf {
        self.dir.path().join("MEMORY.md")
    }

    fn run(&self, now: DateTime<Utc>, args: &[&str]) -> Output {
        ok(Command::new(env!("CARGO_BIN_EXE_rollgraph"))
            .env_clear()
            .env("ROLLGRAPH_HOME", self.home().root())
            .env("HOME", self.dir.path())
            .env("ROLLGRAPH_NOW", now.to_rfc3339())
            // Hermetic: no embedding model, so matching is lexical everywhere.
            .env("ROLLGRAPH_CACHE", self.dir.path().join("cache"))
            .current_dir(self.dir.path())
            .args(args)
            .output())
    }

    fn ok_out(&self, now: DateTime<Utc>, args: &[&str]) -> String {
        let o = self.run(now, args);
        assert!(
            o.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn err_out(&self, now: DateTime<Utc>, args: &[&str]) -> String {
        let o = self.run(now, args);
        assert!(!o.status.success(), "{args:?} should have failed");
        String::from_utf8_lossy(&o.stderr).into_owned()
    }
}

fn node(
    label: &str,
    domain: Domain,
    kind: NodeKind,
    w: f64,
    session: &str,
    now: DateTime<Utc>,
) -> Node {
    let mut n = Node::new(
        ok(NodeId::slug(label).ok_or("bad label")),
        label,
        domain,
        w,
        now,
    );
    n.kind = kind;
    n.provenance.push(Provenance {
        session: session.to_owned(),
        first_turn: 2,
        last_turn: 9,
        mentions: 3,
    });
    n
}

/// One session that talked about Priya and the email decision.
fn session(env: &Env, id: &str, now: DateTime<Utc>) {
    let mut g = Graph::new();
    let mut priya = node(
        "Priya Raman",
        Domain::Relationship,
        NodeKind::Person,
        0.9,
        id,
        now,
    );
    priya.detail = Some("Backend lead; reviews every PR".into());
    g.upsert_node(priya);
    g.upsert_node(node(
        "Use Bento for email",
        Domain::Technical,
        NodeKind::Decision,
        0.85,
        id,
        now,
    ));
    g.upsert_node(node(
        "Use Resend for email",
        Domain::Technical,
        NodeKind::Decision,
        0.4,
        id,
        now,
    ));
    g.upsert_node(node(
        "flaky test",
        Domain::Technical,
        NodeKind::Entity,
        0.3,
        id,
        now,
    ));
    ok(g.upsert_edge(Edge {
        source: ok(NodeId::slug("Use Bento for email").ok_or("id")),
        target: ok(NodeId::slug("Use Resend for email").ok_or("id")),
        kind: EdgeKind::Supersedes,
        weight: 1.0,
    }));
    let mut s = ok(Session::open(&env.home(), id, Config::default()));
    s.state.cwd = Some(PROJECT.to_owned());
    ok(s.reset(g.to_doc(), now));
    s.state.unreconciled = 1;
    ok(s.save_state());
}

#[test]
fn graduation_end_to_end() {
    let env = Env::new();
    let tmp = env.tmp();
    ok(std::fs::write(
        env.memory(),
        "# Memory\n\n- The demo is on the 15th.\n",
    ));
    let mem = env.memory().display().to_string();
    env.ok_out(day(0), &["seed", &mem, "--project", PROJECT]);

    // Three sessions on three days, each reconciled at its end.
    for (k, d) in [(1, 75), (2, 76), (3, 77)] {
        let id = format!("g{k}");
        session(&env, &id, day(d));
        let out = env.ok_out(day(d), &["reconcile", "--session", &id]);
        assert!(
            out.contains("0 graduations"),
            "flagged before the criteria hold: {out}"
        );
    }
    // The seeded anchor has sat at its floor for six weeks by now.
    snap!(
        "review_list_archive_only",
        env.ok_out(day(77), &["review", "list"]),
        &tmp
    );

    // Three days later the stable ones are flagged at the next reconciliation.
    let out = env.ok_out(day(80), &["reconcile", "--session", "g3"]);
    assert!(
        out.contains("2 graduations and 0 archive reviews queued"),
        "{out}"
    );
    snap!(
        "review_list",
        env.ok_out(day(80), &["review", "list"]),
        &tmp
    );

    let items: serde_json::Value = ok(serde_json::from_str(
        &env.ok_out(day(80), &["review", "list", "--json"]),
    ));
    let id_of = |label: &str| -> String {
        items
            .as_array()
            .and_then(|a| a.iter().find(|i| i["label"] == label))
            .and_then(|i| i["id"].as_str())
            .unwrap_or_else(|| panic!("no item for {label}: {items}"))
            .to_owned()
    };
    let bento = id_of("Use Bento for email");
    let priya = id_of("Priya Raman");
    let demo = id_of("The demo is on the 15th");
    snap!(
        "review_show",
        env.ok_out(day(80), &["review", "show", &bento]),
        &tmp
    );

    // Nothing reaches the flat file before approval.
    assert_eq!(
        ok(std::fs::read_to_string(env.memory())),
        "# Memory\n\n- The demo is on the 15th.\n"
    );

    let text = "- Transactional email goes through Bento (we moved off Resend).";
    snap!(
        "review_edit",
        env.ok_out(day(80), &["review", "edit", &bento, "--text", text]),
        &tmp
    );
    snap!(
        "review_approve",
        env.ok_out(day(81), &["review", "approve", &bento]),
        &tmp
    );
    let written = ok(std::fs::read_to_string(env.memory()));
    assert_eq!(written.matches(text).count(), 1, "{written}");
    assert!(written.contains(&format!("<!-- rollgraph:{bento} -->")));

    // Seeding the file back: the graduated line anchors its own node, no twin.
    let seeded: serde_json::Value = ok(serde_json::from_str(
        &env.ok_out(day(81), &["seed", &mem, "--project", PROJECT, "--json"]),
    ));
    assert_eq!(
        (seeded["linked"].as_u64(), seeded["added"].as_u64()),
        (Some(1), Some(0)),
        "{seeded}"
    );
    {
        let store = ok(WarmStore::open(
            &env.home(),
            &warm::project_key(Path::new(PROJECT)),
        ));
        let bento = store.graph.find_by_name("Use Bento for email").cloned();
        assert!(bento.is_some_and(|n| n.anchor));
        assert!(store.graph.find_by_name(text).is_none());
    }

    // Never twice: a second approve is refused and the file is unchanged.
    snap!(
        "review_approve_again",
        env.err_out(day(81), &["review", "approve", &bento]),
        &tmp
    );
    assert_eq!(ok(std::fs::read_to_string(env.memory())), written);

    snap!(
        "review_reject",
        env.ok_out(day(81), &["review", "reject", &priya]),
        &tmp
    );
    snap!(
        "review_approve_rejected",
        env.err_out(day(81), &["review", "approve", &priya]),
        &tmp
    );
    snap!(
        "review_edit_rejected",
        env.err_out(day(81), &["review", "edit", &priya, "--text", "x"]),
        &tmp
    );
    snap!(
        "review_show_missing",
        env.err_out(day(81), &["review", "show", "g-0000000000"]),
        &tmp
    );

    // Archive: approving retires the anchor; the flat file is left alone.
    snap!(
        "review_approve_archive",
        env.ok_out(day(81), &["review", "approve", &demo]),
        &tmp
    );
    let store = ok(WarmStore::open(
        &env.home(),
        &warm::project_key(Path::new(PROJECT)),
    ));
    let n = store.graph.find_by_name("The demo is on the 15th").cloned();
    assert!(n.is_some_and(|n| !n.anchor));
    drop(store);
    assert_eq!(ok(std::fs::read_to_string(env.memory())), written);

    // Decided items are never queued again.
    let out = env.ok_out(day(82), &["reconcile", "--session", "g3"]);
    assert!(
        out.contains("0 graduations and 0 archive reviews queued"),
        "{out}"
    );
    snap!(
        "review_list_all",
        env.ok_out(day(82), &["review", "list", "--all"]),
        &tmp
    );
}

#[test]
fn approve_without_a_target_is_refused() {
    let env = Env::new();
    ok(std::fs::write(env.home().root().join("config.toml"), ""));
    for (k, d) in [(1, 1), (2, 2), (3, 3)] {
        let id = format!("g{k}");
        session(&env, &id, day(d));
        env.ok_out(day(d), &["reconcile", "--session", &id]);
    }
    env.ok_out(day(7), &["reconcile", "--session", "g3"]);
    let items: serde_json::Value = ok(serde_json::from_str(
        &env.ok_out(day(7), &["review", "list", "--json"]),
    ));
    let id = items[0]["id"].as_str().unwrap_or_default().to_owned();
    assert!(!id.is_empty(), "{items}");
    let err = env.err_out(day(7), &["review", "approve", &id]);
    assert!(err.contains("set flat.graduate_to"), "{err}");
    assert!(!env.memory().exists());
    // --to names the file explicitly.
    let target = env.dir.path().join("NOTES.md");
    env.ok_out(
        day(7),
        &[
            "review",
            "approve",
            &id,
            "--to",
            &target.display().to_string(),
        ],
    );
    assert!(ok(std::fs::read_to_string(&target)).contains(&format!("rollgraph:{id}")));
}
