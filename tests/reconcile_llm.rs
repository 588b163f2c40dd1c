//! The reconciler's LLM parts against a scripted chat-completions server:
//! ambiguous pairs adjudicated (same → alias, contradicts → supersedes),
//! graduation drafts written by the LLM, and a failing endpoint falling back
//! to the offline rule and the template.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use chrono::{DateTime, Duration, Utc};
use rollgraph_engine::Config;
use rollgraph_engine::graduate::{LlmDrafter, ReviewQueue, TemplateDrafter};
use rollgraph_engine::graph::{Domain, EdgeKind, Graph, Node, NodeId, NodeKind, Provenance};
use rollgraph_engine::lifecycle::{self, ReconcileReason, Tools};
use rollgraph_engine::reconcile::{Lexical, LlmAdjudicator};
use rollgraph_engine::session::Session;
use rollgraph_engine::store::Home;
use serde_json::{Value, json};

type Script = Arc<Mutex<VecDeque<(u16, String)>>>;

async fn completions(
    State(script): State<Script>,
    Json(_body): Json<Value>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let next = script.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    match next {
        Some((200, content)) => Json(json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        }))
        .into_response(),
        Some((code, body)) => (axum::http::StatusCode::from_u16(code).unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR), body).into_response(),
        None => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response(),
    }
}

struct Server {
    url: String,
    rt: Option<tokio::runtime::Runtime>,
}

impl Server {
    fn start(answers: Vec<(u16, &str)>) -> Server {
        let script: Script = Arc::new(Mutex::new(
            answers
                .into_iter()
                .map(|(c, s)| (c, s.to_owned()))
                .collect(),
        ));
        let rt = ok(tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build());
        let listener = ok(rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")));
        let addr = ok(listener.local_addr());
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state(script);
        rt.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Server {
            url: format!("http://{addr}/v1"),
            rt: Some(rt),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn day(d: i64) -> DateTime<Utc> {
    ok(DateTime::parse_from_rfc3339("2026-11-02T09:00:00Z")).with_timezone(&Utc) + Duration::days(d)
}

fn config(url: &str) -> Config {
    let mut c = Config::default();
    c.llm.base_url = Some(url.to_owned());
    c.llm.model = "scripted".into();
    c.llm.api_key_env = "ROLLGRAPH_TEST_NO_SUCH_KEY".into();
    c.llm.timeout_ms = 2_000;
    c.llm.max_retries = 0;
    c
}

fn node(label: &str, kind: NodeKind, session: &str, now: DateTime<Utc>) -> Node {
    let mut n = Node::new(
        ok(NodeId::slug(label).ok_or("id")),
        label,
        Domain::Project,
        0.8,
        now,
    );
    n.kind = kind;
    n.provenance.push(Provenance {
        session: session.into(),
        first_turn: 1,
        last_turn: 1,
        mentions: 1,
    });
    n
}

fn hot(home: &Home, id: &str, nodes: Vec<Node>, now: DateTime<Utc>) {
    let mut g = Graph::new();
    for n in nodes {
        g.upsert_node(n);
    }
    let mut s = ok(Session::open(home, id, Config::default()));
    s.state.cwd = Some("/nonexistent/rollgraph-tests/llm".into());
    ok(s.reset(g.to_doc(), now));
    ok(s.save_state());
}

fn reconcile(
    home: &Home,
    cfg: &Config,
    id: &str,
    now: DateTime<Utc>,
) -> (lifecycle::ReconcileReport, u32, Option<String>) {
    let mut adj =
        LlmAdjudicator::from_config(cfg, home).unwrap_or_else(|| panic!("no LLM adjudicator"));
    let mut draft = TemplateDrafter;
    let mut sim = Lexical;
    let r = ok(lifecycle::reconcile_session_with(
        home,
        cfg,
        id,
        ReconcileReason::SessionEnd,
        now,
        &mut Tools {
            similar: &mut sim,
            adjudicator: &mut adj,
            drafter: &mut draft,
        },
    ));
    (r, adj.calls, adj.failure)
}

#[test]
fn ambiguous_pairs_go_to_the_llm_and_a_dead_endpoint_falls_back() {
    let dir = ok(tempfile::tempdir());
    let home = Home::at(dir.path());
    let server = Server::start(vec![
        (
            200,
            r#"{"verdict": "same", "reason": "a new version of the same dashboard"}"#,
        ),
        (
            200,
            r#"{"verdict": "contradicts", "reason": "the new plan replaces the old"}"#,
        ),
        (500, "down"),
    ]);
    let cfg = config(&server.url);
    hot(
        &home,
        "w1",
        vec![
            node("billing dashboard", NodeKind::Entity, "w1", day(0)),
            node("ship dunning on friday", NodeKind::Decision, "w1", day(0)),
        ],
        day(0),
    );
    let (r, calls, failure) = reconcile(&home, &cfg, "w1", day(0));
    assert_eq!((r.added, calls, failure), (2, 0, None), "{r:?}");

    hot(
        &home,
        "w2",
        vec![
            node("billing dashboards v2", NodeKind::Entity, "w2", day(1)),
            node(
                "ship dunning on fridays 9am",
                NodeKind::Decision,
                "w2",
                day(1),
            ),
        ],
        day(1),
    );
    let (r, calls, failure) = reconcile(&home, &cfg, "w2", day(1));
    assert_eq!((r.ambiguous, calls, failure), (2, 2, None), "{r:?}");
    let warm = ok(lifecycle::warm_graph(
        &home,
        std::path::Path::new("/nonexistent/rollgraph-tests/llm"),
    ));
    // "same": the new label became an alias of the known node.
    let dash = warm
        .find_by_name("billing dashboards v2")
        .map(|n| n.id.to_string());
    assert_eq!(dash.as_deref(), Some("billing-dashboard"));
    // "contradicts" between decisions, the newer one wins: supersedes.
    let old = ok(NodeId::slug("ship dunning on friday").ok_or("id"));
    assert_eq!(
        warm.superseded_by(&old).map(|n| n.label.as_str()),
        Some("ship dunning on fridays 9am")
    );

    // The endpoint fails: the pair is kept apart with relates_to, the run goes on.
    hot(
        &home,
        "w3",
        vec![node(
            "billing dashboard v3 beta",
            NodeKind::Entity,
            "w3",
            day(2),
        )],
        day(2),
    );
    let (r, calls, failure) = reconcile(&home, &cfg, "w3", day(2));
    assert_eq!((r.ambiguous, r.related, calls), (1, 1, 1), "{r:?}");
    assert!(failure.is_some());
    let warm = ok(lifecycle::warm_graph(
        &home,
        std::path::Path::new("/nonexistent/rollgraph-tests/llm"),
    ));
    let v3 = ok(NodeId::slug("billing dashboard v3 beta").ok_or("id"));
    assert!(
        warm.edges_of(&v3)
            .iter()
            .any(|e| e.kind == EdgeKind::RelatesTo)
    );
}

#[test]
fn graduation_drafts_come_from_the_llm_or_the_template() {
    let dir = ok(tempfile::tempdir());
    let home = Home::at(dir.path());
    // The project store is flagged first (the demo), then the global one (Priya).
    let server = Server::start(vec![
        (200, "The demo is on the 15th of November."),
        (500, "down"),
    ]);
    let cfg = config(&server.url);
    let mut draft = ok(LlmDrafter::from_config(&cfg, &home).ok_or("no LLM drafter"));
    let mut sim = Lexical;
    let mut adj = rollgraph_engine::reconcile::OfflineAdjudicator;
    for (k, d) in [(1, 0), (2, 1), (3, 2), (4, 6)] {
        let id = format!("d{k}");
        let mut priya = node("Priya Raman", NodeKind::Person, &id, day(d));
        priya.domain = Domain::Relationship;
        let mut demo = node("demo on the 15th", NodeKind::Fact, &id, day(d));
        demo.domain = Domain::Project;
        hot(&home, &id, vec![priya, demo], day(d));
        ok(lifecycle::reconcile_session_with(
            &home,
            &cfg,
            &id,
            ReconcileReason::SessionEnd,
            day(d),
            &mut Tools {
                similar: &mut sim,
                adjudicator: &mut adj,
                drafter: &mut draft,
            },
        ));
    }
    let (items, _) = ReviewQueue::new(&home).list();
    let by = |label: &str| {
        items
            .iter()
            .find(|i| i.label == label)
            .map(|i| (i.text.clone(), i.drafted_by.clone()))
    };
    assert_eq!(
        by("demo on the 15th"),
        Some((
            "- The demo is on the 15th of November.".into(),
            "llm".into()
        )),
        "{items:?}"
    );
    // The second call failed: the template drafted it.
    assert_eq!(
        by("Priya Raman"),
        Some(("- Priya Raman.".into(), "template".into())),
        "{items:?}"
    );
}
