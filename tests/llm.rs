//! The LLM probe against a scripted chat-completions server (axum on
//! 127.0.0.1:0): every bad reply, status and hang ends in a correctly applied
//! patch or a clean fallback with its reason recorded — never a partial graph.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use chrono::{DateTime, Utc};
use rollgraph_engine::config::Config;
use rollgraph_engine::graph::{Domain, Graph, Node, NodeId};
use rollgraph_engine::llm::{
    FallbackProbe, FormatMode, LlmClient, LlmProbe, LlmStatus, Prompts, Verdict, probe_from_config,
};
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::session::{CycleOutcome, Session};
use rollgraph_engine::store::Home;
use rollgraph_engine::transcript::Turn;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Clone, Debug)]
enum Answer {
    /// 200 with this assistant content and finish reason.
    Content(String, &'static str),
    /// This status with this body.
    Status(u16, String),
    /// Sleep this long, then answer `{"ops": []}`.
    Hang(Duration),
}

#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    /// When the queue is empty.
    fallback: Option<Answer>,
    /// Request bodies received.
    requests: Vec<Value>,
    /// Authorization headers received.
    auth: Vec<String>,
}

type Shared = Arc<Mutex<Script>>;

async fn completions(
    State(script): State<Shared>,
    headers: axum::http::HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let answer = {
        let mut s = script.lock().unwrap_or_else(|p| p.into_inner());
        s.requests.push(body);
        s.auth.push(
            headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned(),
        );
        s.answers
            .pop_front()
            .or_else(|| s.fallback.clone())
            .unwrap_or_else(|| Answer::Status(500, "script exhausted".into()))
    };
    match answer {
        Answer::Content(content, finish) => Json(completion(&content, finish)).into_response(),
        Answer::Status(code, body) => (
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body,
        )
            .into_response(),
        Answer::Hang(d) => {
            tokio::time::sleep(d).await;
            Json(completion(r#"{"ops": []}"#, "stop")).into_response()
        }
    }
}

fn completion(content: &str, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_790_000_000,
        "model": "scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    })
}

/// A scripted server on its own runtime; dropped with the test.
struct TestServer {
    url: String,
    script: Shared,
    rt: Option<tokio::runtime::Runtime>,
}

impl TestServer {
    fn start(answers: Vec<Answer>, fallback: Option<Answer>) -> TestServer {
        let script: Shared = Arc::new(Mutex::new(Script {
            answers: answers.into(),
            fallback,
            ..Script::default()
        }));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state(script.clone());
        rt.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestServer {
            url: format!("http://{addr}/v1"),
            script,
            rt: Some(rt),
        }
    }

    fn requests(&self) -> Vec<Value> {
        self.script
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .requests
            .clone()
    }

    fn push(&self, a: Answer) {
        self.script
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .answers
            .push_back(a);
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

fn ts() -> String {
    now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn id(s: &str) -> NodeId {
    NodeId::parse(s).unwrap_or_else(|| panic!("bad id {s}"))
}

fn config(url: &str) -> Config {
    let mut c = Config::default();
    c.llm.base_url = Some(url.to_owned());
    c.llm.model = "scripted".into();
    c.llm.api_key_env = "ROLLGRAPH_TEST_NO_SUCH_KEY".into();
    c.llm.timeout_ms = 2_000;
    c.llm.max_retries = 2;
    c.llm.breaker_threshold = 3;
    c.llm.breaker_cooldown_s = 60;
    c
}

/// A session seeded with Resend and Bento, with one queued turn.
struct Fixture {
    _dir: tempfile::TempDir,
    home: Home,
    session: Session,
}

fn fixture(cfg: &Config) -> Fixture {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let home = Home::at(dir.path());
    let mut session =
        Session::open(&home, "s1", cfg.clone()).unwrap_or_else(|e| panic!("open: {e}"));
    let mut g = Graph::new();
    for (label, i) in [("Resend", "resend"), ("Bento", "bento")] {
        g.upsert_node(Node::new(id(i), label, Domain::Technical, 0.5, now()));
    }
    session
        .reset(g.to_doc(), now())
        .unwrap_or_else(|e| panic!("reset: {e}"));
    session.observe(Turn {
        index: 1,
        user: "We send receipts with Resend today. Zorbly Qix is unrelated.".into(),
        assistant: "Understood.".into(),
        ..Turn::default()
    });
    Fixture {
        _dir: dir,
        home,
        session,
    }
}

fn llm_probe(cfg: &Config, home: &Home) -> FallbackProbe {
    let client = LlmClient::new(&cfg.llm).unwrap_or_else(|e| panic!("client: {e}"));
    FallbackProbe::new(
        LlmProbe::new(client, Prompts::default(), cfg, Some(home.clone())),
        cfg,
    )
}

/// A valid reply: a new node `postmark` and an edge to `resend`.
fn valid_ops() -> String {
    json!({"ops": [
        {"op": "add", "path": "/nodes/postmark", "value": {"id": "postmark", "label": "Postmark", "domain": "technical", "weight": 0.8, "last_activated": ts(), "kind": "entity"}},
        {"op": "add", "path": "/edges/postmark|supersedes|resend", "value": {"source": "postmark", "target": "resend", "kind": "supersedes", "weight": 0.9}},
        {"op": "replace", "path": "/nodes/resend/weight", "value": 0.7}
    ]})
    .to_string()
}

/// Runs one probe cycle with a fresh LLM probe.
fn cycle(fx: &mut Fixture, cfg: &Config) -> (CycleOutcome, LlmStatus) {
    let mut probe = llm_probe(cfg, &fx.home);
    let out = fx
        .session
        .cycle(&mut probe, now())
        .unwrap_or_else(|e| panic!("cycle: {e}"));
    (out, probe.status().clone())
}

fn assert_llm_applied(fx: &Fixture, out: &CycleOutcome) {
    assert_eq!(out.source, "llm", "{out:?}");
    assert_eq!(out.rejected, None);
    assert_eq!(out.ops, 3);
    assert!(fx.session.graph.contains(&id("postmark")));
    assert!(
        fx.session
            .graph
            .edge("postmark|supersedes|resend")
            .is_some()
    );
}

/// The graph the heuristic probe alone makes from the fixture.
fn heuristic_graph(cfg: &Config) -> rollgraph_engine::GraphDoc {
    let mut fx = fixture(cfg);
    let mut probe = HeuristicProbe::new(cfg.probe.clone());
    fx.session
        .cycle(&mut probe, now())
        .unwrap_or_else(|e| panic!("cycle: {e}"));
    fx.session.graph.to_doc()
}

/// What a failed reply must leave behind: exactly the heuristic's cycle.
fn assert_fell_back(fx: &Fixture, out: &CycleOutcome, status: &LlmStatus, reason: &str) {
    assert_eq!(out.source, "heuristic", "{out:?}");
    assert_eq!(out.rejected, None, "the fallback patch itself must apply");
    assert!(
        !fx.session.graph.contains(&id("postmark")),
        "LLM ops leaked into the graph"
    );
    assert_eq!(
        fx.session.graph.to_doc(),
        heuristic_graph(&fx.session.config),
        "graph differs from the heuristic-only cycle"
    );
    let err = status.last_error.clone().unwrap_or_default();
    assert!(err.contains(reason), "last_error {err:?} lacks {reason:?}");
    let file = LlmStatus::load(&fx.home).unwrap_or_default();
    assert_eq!(
        file.last_error, status.last_error,
        "llm-status.json not written"
    );
}

#[test]
fn valid_json_schema_reply_is_applied() {
    let server = TestServer::start(vec![Answer::Content(valid_ops(), "stop")], None);
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    let (out, status) = cycle(&mut fx, &cfg);
    assert_llm_applied(&fx, &out);
    assert_eq!(
        fx.session.graph.node(&id("resend")).map(|n| n.weight > 0.6),
        Some(true)
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0]["response_format"]["type"], "json_schema");
    assert_eq!(
        reqs[0]["response_format"]["json_schema"]["name"],
        "rollgraph_patch"
    );
    assert_eq!(
        reqs[0]["response_format"]["json_schema"]["schema"]["properties"]["ops"]["maxItems"],
        24
    );
    assert_eq!(reqs[0]["model"], "scripted");
    let prompt = reqs[0]["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(prompt.contains("resend | Resend | technical"), "{prompt}");
    assert!(
        prompt.contains("[turn 1] USER: We send receipts"),
        "{prompt}"
    );
    assert_eq!(status.valid, 1);
    assert_eq!(status.prompt_tokens, 120);
    assert_eq!(fx.session.state.stats.llm_prompt_tokens, 120);
    assert_eq!(fx.session.state.stats.llm_completion_tokens, 30);
    assert_eq!(
        status.recent.back().map(|c| c.outcome.as_str()),
        Some("valid")
    );
}

#[test]
fn prose_around_the_json_is_stripped() {
    let content = format!(
        "Sure! Here is the patch:\n```json\n{}\n```\nLet me know.",
        valid_ops()
    );
    let server = TestServer::start(vec![Answer::Content(content, "stop")], None);
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    let (out, _) = cycle(&mut fx, &cfg);
    assert_llm_applied(&fx, &out);
}

/// Every bad reply: fallback, the reason recorded, nothing of the reply applied.
#[test]
fn bad_replies_fall_back_with_their_reason() {
    let partial = json!({"ops": [
        {"op": "add", "path": "/nodes/postmark", "value": {"id": "postmark", "label": "Postmark", "domain": "technical", "weight": 0.8, "last_activated": ts()}},
        {"op": "add", "path": "/edges/resend|uses|ghost", "value": {"source": "resend", "target": "ghost", "kind": "uses", "weight": 0.5}}
    ]})
    .to_string();
    let truncated: String = valid_ops().chars().take(120).collect();
    let cases: Vec<(&str, Answer, &str)> = vec![
        (
            "invalid json",
            Answer::Content("{ops: [ {op: add".into(), "stop"),
            "no JSON value",
        ),
        (
            "schema-violating op",
            Answer::Content(
                r#"{"ops": [{"op": "move", "from": "/nodes/resend", "path": "/nodes/postmark"}]}"#
                    .into(),
                "stop",
            ),
            "schema",
        ),
        ("unknown node id", Answer::Content(partial, "stop"), "ghost"),
        (
            "weight out of range",
            Answer::Content(
                r#"{"ops": [{"op": "replace", "path": "/nodes/resend/weight", "value": 1.5}]}"#
                    .into(),
                "stop",
            ),
            "schema",
        ),
        (
            "truncated",
            Answer::Content(truncated, "length"),
            "truncated",
        ),
        (
            "empty",
            Answer::Content(String::new(), "stop"),
            "empty reply",
        ),
    ];
    for (name, answer, reason) in cases {
        let server = TestServer::start(vec![answer], None);
        let cfg = config(&server.url);
        let mut fx = fixture(&cfg);
        let (out, status) = cycle(&mut fx, &cfg);
        assert_fell_back(&fx, &out, &status, reason);
        assert_eq!(
            server.requests().len(),
            1,
            "{name}: a bad reply is not retried"
        );
        assert_eq!(status.invalid, 1, "{name}");
        assert_eq!(
            status.consecutive_failures, 0,
            "{name}: bad replies do not trip the breaker"
        );
        // The tokens the rejected reply cost still count.
        assert_eq!(fx.session.state.stats.llm_prompt_tokens, 120, "{name}");
    }
}

#[test]
fn a_429_is_retried_and_applied_exactly_once() {
    let server = TestServer::start(
        vec![
            Answer::Status(
                429,
                r#"{"error": {"message": "slow down", "type": "rate_limit_error"}}"#.into(),
            ),
            Answer::Content(valid_ops(), "stop"),
        ],
        None,
    );
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    let (out, status) = cycle(&mut fx, &cfg);
    assert_llm_applied(&fx, &out);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(status.recent.back().map(|c| c.attempts), Some(2));
    assert_eq!(fx.session.state.stats.probes, 1);
    let prov = fx
        .session
        .graph
        .node(&id("postmark"))
        .map(|n| n.provenance.clone())
        .unwrap_or_default();
    assert_eq!(
        prov.iter().map(|p| p.mentions).sum::<u32>(),
        1,
        "applied once: {prov:?}"
    );
    // Handing the same probe's patch in again changes nothing.
    let again = fx
        .session
        .apply_probe(&out.probe_id, "llm", Vec::new(), &[], None, now())
        .unwrap_or_else(|e| panic!("apply: {e}"));
    assert!(
        again
            .rejected
            .unwrap_or_default()
            .contains("already applied")
    );
}

#[test]
fn repeated_500s_fall_back_after_bounded_retries() {
    let server = TestServer::start(
        Vec::new(),
        Some(Answer::Status(500, "upstream exploded".into())),
    );
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    let (out, status) = cycle(&mut fx, &cfg);
    assert_fell_back(&fx, &out, &status, "HTTP 500: upstream exploded");
    assert_eq!(server.requests().len(), 3, "1 attempt + max_retries 2");
    assert_eq!(status.failures, 1);
    assert_eq!(status.consecutive_failures, 1);
}

#[test]
fn a_hang_past_the_timeout_falls_back() {
    let server = TestServer::start(Vec::new(), Some(Answer::Hang(Duration::from_secs(30))));
    let mut cfg = config(&server.url);
    cfg.llm.timeout_ms = 300;
    cfg.llm.max_retries = 1;
    let mut fx = fixture(&cfg);
    let (out, status) = cycle(&mut fx, &cfg);
    assert_fell_back(&fx, &out, &status, "timed out after 300 ms");
    assert_eq!(server.requests().len(), 2, "a timeout is retried once");
}

#[test]
fn a_wrong_key_is_not_retried() {
    let server = TestServer::start(
        vec![Answer::Status(
            401,
            r#"{"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123", "type": "invalid_request_error", "code": "invalid_api_key"}}"#
                .into(),
        )],
        None,
    );
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    let (out, status) = cycle(&mut fx, &cfg);
    assert_fell_back(&fx, &out, &status, "HTTP 401");
    assert_eq!(server.requests().len(), 1);
    let err = status.last_error.unwrap_or_default();
    assert!(
        !err.contains("abcdefghijklmnop"),
        "a key echoed by the server reached the status: {err}"
    );
}

#[test]
fn json_schema_refused_falls_back_to_json_object_and_stays_there() {
    let server = TestServer::start(
        vec![
            Answer::Status(400, r#"{"error": {"code": 400, "message": "response_format json_schema is not supported"}}"#.into()),
            Answer::Content(valid_ops(), "stop"),
        ],
        None,
    );
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    let mut probe = llm_probe(&cfg, &fx.home);
    let out = fx
        .session
        .cycle(&mut probe, now())
        .unwrap_or_else(|e| panic!("cycle: {e}"));
    assert_llm_applied(&fx, &out);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0]["response_format"]["type"], "json_schema");
    assert_eq!(reqs[1]["response_format"]["type"], "json_object");
    assert_eq!(probe.llm().client().format_mode(), FormatMode::JsonObject);
    // The next probe starts with json_object.
    server.push(Answer::Content(r#"{"ops": []}"#.into(), "stop"));
    fx.session.observe(Turn {
        index: 2,
        user: "ok".into(),
        ..Turn::default()
    });
    let out = fx
        .session
        .cycle(&mut probe, now())
        .unwrap_or_else(|e| panic!("cycle: {e}"));
    assert_eq!(out.source, "llm");
    assert_eq!(
        server.requests()[2]["response_format"]["type"],
        "json_object"
    );
}

#[test]
fn the_breaker_opens_skips_the_endpoint_and_closes_again() {
    let server = TestServer::start(Vec::new(), Some(Answer::Status(503, "down".into())));
    let mut cfg = config(&server.url);
    cfg.llm.max_retries = 0;
    cfg.llm.breaker_threshold = 2;
    cfg.llm.breaker_cooldown_s = 60;
    let mut fx = fixture(&cfg);
    let mut probe = llm_probe(&cfg, &fx.home);
    let mut at = now();
    for turn in 1..=3u32 {
        fx.session.observe(Turn {
            index: turn + 1,
            user: format!("turn {turn}"),
            ..Turn::default()
        });
        let out = fx
            .session
            .cycle(&mut probe, at)
            .unwrap_or_else(|e| panic!("cycle: {e}"));
        assert_eq!(out.source, "heuristic");
        at += chrono::Duration::seconds(1);
    }
    assert_eq!(
        server.requests().len(),
        2,
        "the third probe must not call the endpoint"
    );
    assert_eq!(probe.status().skipped, 1);
    assert!(probe.status().breaker_open(at));
    // The breaker state survives in llm-status.json for doctor.
    assert!(
        LlmStatus::load(&fx.home)
            .unwrap_or_default()
            .breaker_open_until
            .is_some()
    );
    // After the cool-down the endpoint is tried again; it answers now.
    server.push(Answer::Content(r#"{"ops": []}"#.into(), "stop"));
    fx.session.observe(Turn {
        index: 9,
        user: "back?".into(),
        ..Turn::default()
    });
    let later = at + chrono::Duration::seconds(61);
    let out = fx
        .session
        .cycle(&mut probe, later)
        .unwrap_or_else(|e| panic!("cycle: {e}"));
    assert_eq!(out.source, "llm");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(probe.status().consecutive_failures, 0);
    assert!(!probe.status().breaker_open(later));
}

#[test]
fn secrets_in_turns_never_reach_the_endpoint() {
    let server = TestServer::start(vec![Answer::Content(r#"{"ops": []}"#.into(), "stop")], None);
    let cfg = config(&server.url);
    let mut fx = fixture(&cfg);
    // Turns are redacted by the transcript reader; the probe redacts again.
    fx.session.state.pending.push_back(Turn {
        index: 2,
        user: "deploy with STRIPE_KEY=sk_live_abcdefghijklmnop1234 please".into(),
        ..Turn::default()
    });
    let (out, _) = cycle(&mut fx, &cfg);
    assert_eq!(out.source, "llm");
    let body = server.requests()[0].to_string();
    assert!(
        !body.contains("sk_live_abcdefghijklmnop1234"),
        "secret sent: {body}"
    );
    assert!(body.contains("[REDACTED"), "{body}");
}

#[test]
fn the_probe_works_from_inside_a_tokio_runtime() {
    // The daemon calls probes from spawn_blocking; a careless caller might
    // call from async code. Neither may panic.
    let server = TestServer::start(Vec::new(), Some(Answer::Content(valid_ops(), "stop")));
    let cfg = config(&server.url);
    let fx = fixture(&cfg);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let home = fx.home.clone();
    let mut session = fx.session;
    let source = rt.block_on(async move {
        tokio::task::spawn_blocking(move || {
            let mut probe = probe_from_config(&cfg, &home);
            session
                .cycle(probe.as_mut(), now())
                .map(|o| o.source)
                .unwrap_or_default()
        })
        .await
        .unwrap_or_default()
    });
    assert_eq!(source, "llm");
}

#[test]
fn without_a_base_url_the_heuristic_probe_runs() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let probe = probe_from_config(&Config::default(), &Home::at(dir.path()));
    assert_eq!(probe.name(), "heuristic");
    let mut cfg = Config::default();
    cfg.llm.base_url = Some("not a url".into());
    let probe = probe_from_config(&cfg, &Home::at(dir.path()));
    assert_eq!(probe.name(), "heuristic");
    let status = LlmStatus::load(&Home::at(dir.path())).unwrap_or_default();
    assert!(
        status
            .last_error
            .unwrap_or_default()
            .contains("must start with http")
    );
}

#[test]
fn reconciler_helpers_ask_and_parse() {
    let server = TestServer::start(
        vec![
            Answer::Content(
                r#"{"verdict": "contradicts", "reason": "Bento replaced Resend"}"#.into(),
                "stop",
            ),
            Answer::Content("- Send transactional email through Bento.\n".into(), "stop"),
        ],
        None,
    );
    let cfg = config(&server.url);
    let client = LlmClient::new(&cfg.llm).unwrap_or_else(|e| panic!("client: {e}"));
    let a = Node::new(id("resend"), "Resend", Domain::Technical, 0.5, now());
    let b = Node::new(id("bento"), "Bento", Domain::Technical, 0.5, now());
    let prompts = Prompts::default();
    assert_eq!(
        client.adjudicate_pair(&prompts, &a, &b).ok(),
        Some(Verdict::Contradicts)
    );
    assert_eq!(
        client.draft_graduation(&prompts, &b).ok().as_deref(),
        Some("Send transactional email through Bento.")
    );
    let reqs = server.requests();
    assert_eq!(
        reqs[0]["response_format"]["json_schema"]["name"],
        "rollgraph_verdict"
    );
    assert!(reqs[1].get("response_format").is_none());
    assert!(
        reqs[0]["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("label: Resend")
    );
}

fn doctor(home: &std::path::Path, base_url: Option<&str>) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rollgraph"));
    cmd.args(["doctor", "--json", "--no-embed"])
        .env("ROLLGRAPH_HOME", home)
        .env_remove("ROLLGRAPH_CONFIG")
        .env_remove("ROLLGRAPH_LLM_API_KEY")
        .env_remove("ROLLGRAPH_LLM_MODEL")
        .env_remove("ROLLGRAPH_NOW")
        .env_remove("OPENAI_API_KEY");
    match base_url {
        Some(u) => cmd.env("ROLLGRAPH_LLM_BASE_URL", u),
        None => cmd.env_remove("ROLLGRAPH_LLM_BASE_URL"),
    };
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running doctor: {e}"));
    assert!(
        out.status.success(),
        "doctor failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("doctor --json: {e}"))
}

#[test]
fn doctor_reports_probe_endpoint_breaker_and_last_error() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let report = doctor(dir.path(), None);
    assert_eq!(report["probe"], "heuristic");
    assert!(report["live"].is_null());

    let server = TestServer::start(vec![Answer::Content("ok".into(), "stop")], None);
    let status = LlmStatus {
        consecutive_failures: 3,
        breaker_open_until: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
        last_error: Some("HTTP 503: down".into()),
        last_error_at: Some(now()),
        failures: 3,
        ..LlmStatus::default()
    };
    status
        .save(&Home::at(dir.path()))
        .unwrap_or_else(|e| panic!("save: {e}"));
    let report = doctor(dir.path(), Some(&server.url));
    assert_eq!(report["probe"], "llm");
    assert_eq!(report["endpoint"], server.url.as_str());
    assert_eq!(report["model"], "gpt-4o-mini");
    assert_eq!(report["api_key"], "none");
    assert_eq!(report["live"]["ok"], true, "{report}");
    assert!(
        report["breaker"]
            .as_str()
            .unwrap_or_default()
            .starts_with("open until"),
        "{report}"
    );
    assert_eq!(report["last_error"], "HTTP 503: down");
    assert_eq!(report["calls"]["failed"], 3);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "doctor makes exactly one live request");
    assert_eq!(reqs[0]["max_tokens"], 8);

    // An endpoint that refuses: the live check says so, doctor still exits 0.
    let server = TestServer::start(vec![Answer::Status(401, "bad key".into())], None);
    let report = doctor(dir.path(), Some(&server.url));
    assert_eq!(report["live"]["ok"], false);
    assert!(
        report["live"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("401"),
        "{report}"
    );
}
