//! The LLM side of rollgraph: any OpenAI-compatible chat-completions endpoint.
//!
//! [`LlmClient`] talks to the endpoint through `async-openai` on a private
//! current-thread tokio runtime, so every public call is synchronous: the
//! daemon runs probes inside `spawn_blocking`, the reconciler and `rollgraph
//! doctor` are plain threads. It owns the timeouts, bounded retries (429,
//! 5xx, timeouts and connection failures; never another 4xx) with
//! exponential backoff and seeded jitter, and the structured-output ladder:
//! `json_schema`, then `json_object`, then plain text with the first JSON
//! value cut out of the prose.
//!
//! On top of it: [`LlmProbe`] (the probe of the design; its reply is
//! validated against the patch schema and the engine's patch rules before it
//! is returned), [`FallbackProbe`] (heuristic output when the LLM fails, and
//! a circuit breaker), [`probe_from_config`] (what the CLI and daemon call),
//! and two small helpers for the reconciler: [`LlmClient::adjudicate_pair`]
//! and [`LlmClient::draft_graduation`]. Every call is recorded in
//! [`LlmStatus`] (`llm-status.json` in the state home) for `rollgraph doctor`.
//!
//! Nothing here runs on the hook's critical path.

mod probe;
pub mod prompt;

use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::{ApiError, ApiErrorResponse, OpenAIError};
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequest, ResponseFormat,
    ResponseFormatJsonSchema,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::{self, Rng};
use crate::config::LlmConfig;
use crate::graph::Node;
use crate::probe::Usage;
use crate::redact::redact_owned;
use crate::store::{Home, StoreError, read_json, write_json};

pub use probe::{FallbackProbe, LlmProbe, probe_from_config};
pub use prompt::Prompts;

/// Env var whose value is the API key; it wins over `llm.api_key_env`.
pub const API_KEY_ENV: &str = "ROLLGRAPH_LLM_API_KEY";

/// The status file in the state home.
pub const STATUS_FILE: &str = "llm-status.json";

/// Most recent calls kept in [`LlmStatus::recent`].
pub const RECENT_CALLS: usize = 64;

/// First retry delay; doubled per attempt, capped at [`RETRY_MAX_DELAY`].
const RETRY_BASE_DELAY: Duration = Duration::from_millis(250);
/// Longest wait between two attempts.
const RETRY_MAX_DELAY: Duration = Duration::from_secs(4);
/// Characters of an error body kept in messages.
const ERROR_BODY_CHARS: usize = 300;

/// Why an LLM call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The `[llm]` settings cannot work (no base URL, a malformed key …).
    #[error("llm config: {0}")]
    Config(String),
    /// The endpoint answered with an HTTP error status.
    #[error("HTTP {status}: {message}")]
    Http {
        /// The status code.
        status: u16,
        /// The (redacted, shortened) error body.
        message: String,
    },
    /// No answer within `timeout_ms`.
    #[error("timed out after {0} ms")]
    Timeout(u64),
    /// The connection failed.
    #[error("network: {0}")]
    Network(String),
    /// The endpoint answered 200 with something that is not a usable completion.
    #[error("bad reply: {0}")]
    Reply(String),
}

impl LlmError {
    /// Whether another attempt may succeed: 429, 5xx, timeouts, network.
    pub fn retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || (500..=599).contains(status),
            LlmError::Timeout(_) | LlmError::Network(_) => true,
            LlmError::Config(_) | LlmError::Reply(_) => false,
        }
    }

    /// The HTTP status, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A failed call, with what it cost.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error} (after {attempts} attempt(s), {latency_ms} ms)")]
pub struct LlmFailure {
    /// The last error.
    pub error: LlmError,
    /// HTTP attempts made.
    pub attempts: u32,
    /// Wall time of the whole call, retries included.
    pub latency_ms: u64,
}

/// How the reply's structure is requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatMode {
    /// `response_format: {"type": "json_schema", …}`.
    JsonSchema,
    /// `response_format: {"type": "json_object"}`.
    JsonObject,
    /// No `response_format`; the JSON is cut out of the text.
    Text,
}

impl FormatMode {
    fn from_u8(v: u8) -> FormatMode {
        match v {
            0 => FormatMode::JsonSchema,
            1 => FormatMode::JsonObject,
            _ => FormatMode::Text,
        }
    }

    fn as_u8(self) -> u8 {
        match self {
            FormatMode::JsonSchema => 0,
            FormatMode::JsonObject => 1,
            FormatMode::Text => 2,
        }
    }

    fn lower(self) -> Option<FormatMode> {
        match self {
            FormatMode::JsonSchema => Some(FormatMode::JsonObject),
            FormatMode::JsonObject => Some(FormatMode::Text),
            FormatMode::Text => None,
        }
    }
}

/// One chat request.
#[derive(Clone, Debug, Default)]
pub struct ChatRequest {
    /// The system message (may be empty).
    pub system: String,
    /// The user message.
    pub user: String,
    /// A JSON Schema (name, schema) the reply must follow; `None` for free text.
    pub schema: Option<(String, Value)>,
    /// Completion token limit (else `llm.max_tokens`).
    pub max_tokens: Option<u32>,
    /// Retries (else `llm.max_retries`).
    pub max_retries: Option<u32>,
}

/// A successful call.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The assistant's text (may be empty).
    pub content: String,
    /// Why generation stopped (`stop`, `length` …), as the server said.
    pub finish_reason: Option<String>,
    /// Token usage, when the server reported it.
    pub usage: Option<Usage>,
    /// Wall time, retries included.
    pub latency_ms: u64,
    /// HTTP attempts made.
    pub attempts: u32,
    /// The structured-output mode that got through.
    pub format: FormatMode,
}

/// The reconciler's question about two nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Both name the same thing: merge them.
    Same,
    /// One replaces or denies the other: keep both, link them.
    Contradicts,
    /// Different things.
    Unrelated,
}

/// The lenient shape of a chat completion: servers differ in what else they send.
#[derive(Debug, Default, Deserialize)]
struct RawReply {
    #[serde(default)]
    choices: Vec<RawChoice>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Debug, Default, Deserialize)]
struct RawChoice {
    #[serde(default)]
    message: Option<RawMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RawMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RawUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

type HttpFuture = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

/// The HTTP layer under `async-openai`: plain reqwest, no built-in retries
/// (ours are bounded and jittered), and every non-2xx answer turned into an
/// error that keeps its status code, whatever the body looks like
/// (llama.cpp's numeric `code` would otherwise hide the status).
#[derive(Clone)]
struct Transport {
    http: reqwest::Client,
}

impl tower::Service<HttpRequestFactory> for Transport {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = HttpFuture;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), OpenAIError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> HttpFuture {
        let http = self.http.clone();
        Box::pin(async move {
            let request = request.build().await?;
            let response = http.execute(request).await.map_err(OpenAIError::Reqwest)?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let body = response.text().await.unwrap_or_default();
            Err(OpenAIError::ApiError(ApiErrorResponse {
                status_code: status,
                api_error: ApiError {
                    message: error_message(&body),
                    ..ApiError::default()
                },
            }))
        })
    }
}

/// The useful part of an error body, redacted and shortened.
fn error_message(body: &str) -> String {
    let msg = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.trim().to_owned());
    shorten(&redact_owned(&msg), ERROR_BODY_CHARS)
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

fn classify(e: OpenAIError, timeout_ms: u64) -> LlmError {
    match e {
        OpenAIError::ApiError(r) => LlmError::Http {
            status: r.status_code.as_u16(),
            message: shorten(&redact_owned(&r.api_error.message), ERROR_BODY_CHARS),
        },
        OpenAIError::Reqwest(e) if e.is_timeout() => LlmError::Timeout(timeout_ms),
        OpenAIError::Reqwest(e) if e.is_decode() || e.is_body() => {
            LlmError::Reply(redact_owned(&e.to_string()))
        }
        OpenAIError::Reqwest(e) => {
            LlmError::Network(shorten(&redact_owned(&error_chain(&e)), ERROR_BODY_CHARS))
        }
        OpenAIError::JSONDeserialize(e, _) => {
            LlmError::Reply(format!("not a chat completion: {e}"))
        }
        other => LlmError::Network(shorten(&redact_owned(&other.to_string()), ERROR_BODY_CHARS)),
    }
}

/// An error and its sources on one line (reqwest hides "connection refused" in a source).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

/// The API key: `ROLLGRAPH_LLM_API_KEY`, else the env var named by
/// `api_key_env`; `None` for local endpoints that need none.
pub fn api_key(cfg: &LlmConfig) -> Option<String> {
    let from = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    from(API_KEY_ENV).or_else(|| {
        (!cfg.api_key_env.trim().is_empty())
            .then(|| from(cfg.api_key_env.trim()))
            .flatten()
    })
}

/// A synchronous client for one OpenAI-compatible endpoint.
pub struct LlmClient {
    cfg: LlmConfig,
    base_url: String,
    client: Client<OpenAIConfig>,
    rt: tokio::runtime::Runtime,
    format: AtomicU8,
    rng: Mutex<Rng>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("base_url", &self.base_url)
            .field("model", &self.cfg.model)
            .field("format", &self.format_mode())
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// A client for `cfg`; fails when no base URL is set or the key cannot be
    /// sent as a header. Makes no request.
    pub fn new(cfg: &LlmConfig) -> Result<LlmClient, LlmError> {
        let base = cfg
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| {
                LlmError::Config("no base_url set (llm.base_url or ROLLGRAPH_LLM_BASE_URL)".into())
            })?;
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base_url {:?} must start with http:// or https://",
                redact_owned(base)
            )));
        }
        let base_url = base.trim_end_matches('/').to_owned();
        let key = api_key(cfg).unwrap_or_default();
        // async-openai builds the Authorization header with `unwrap`: refuse
        // anything that is not a token of visible single-byte characters up front.
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(LlmError::Config(
                "the API key contains spaces or control characters".into(),
            ));
        }
        let config = OpenAIConfig::new()
            .with_api_base(base_url.clone())
            .with_api_key(key)
            .with_org_id("")
            .with_project_id("");
        let timeout = Duration::from_millis(cfg.timeout_ms.max(1));
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .build()
            .map_err(|e| LlmError::Config(format!("http client: {e}")))?;
        let client = Client::with_config(config).with_http_service(Transport { http });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| LlmError::Config(format!("tokio runtime: {e}")))?;
        Ok(LlmClient {
            cfg: cfg.clone(),
            base_url,
            client,
            rt,
            format: AtomicU8::new(FormatMode::JsonSchema.as_u8()),
            rng: Mutex::new(Rng::new(clock::seed())),
        })
    }

    /// The endpoint's base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The model name.
    pub fn model(&self) -> &str {
        &self.cfg.model
    }

    /// The settings in force.
    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// The structured-output mode the next schema request starts with
    /// (lowered for good once the server refused a higher one).
    pub fn format_mode(&self) -> FormatMode {
        FormatMode::from_u8(self.format.load(Ordering::Relaxed))
    }

    /// Sends one chat request, with retries and the structured-output
    /// ladder. Blocks; call it from a plain or blocking thread.
    pub fn chat(&self, req: &ChatRequest) -> Result<Reply, LlmFailure> {
        self.block_on(self.chat_async(req))
    }

    /// Runs `fut` on the private runtime. From inside another runtime's
    /// context `block_on` would panic, so there it hops to a scoped thread.
    fn block_on<F: Future + Send>(&self, fut: F) -> F::Output
    where
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.rt.block_on(fut);
        }
        std::thread::scope(|s| match s.spawn(|| self.rt.block_on(fut)).join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        })
    }

    async fn chat_async(&self, req: &ChatRequest) -> Result<Reply, LlmFailure> {
        let started = Instant::now();
        let max_retries = req.max_retries.unwrap_or(self.cfg.max_retries);
        let mut format = if req.schema.is_some() {
            self.format_mode()
        } else {
            FormatMode::Text
        };
        let mut attempts = 0u32;
        let mut retries = 0u32;
        loop {
            attempts += 1;
            let result = self.send(req, format).await;
            let error = match result {
                Ok(raw) => {
                    if req.schema.is_some() && format != self.format_mode() {
                        // The lower mode worked where the higher one was refused: remember it.
                        self.format.store(format.as_u8(), Ordering::Relaxed);
                        tracing::info!(
                            "llm: {} does not take the higher response_format; using {format:?}",
                            self.base_url
                        );
                    }
                    return reply_of(raw, format, attempts, started).map_err(|error| LlmFailure {
                        error,
                        attempts,
                        latency_ms: ms(started),
                    });
                }
                Err(e) => e,
            };
            // A server that refuses the requested response_format answers 400/422:
            // step down the ladder at once (not counted as a retry).
            if matches!(error.status(), Some(400 | 422))
                && req.schema.is_some()
                && let Some(lower) = format.lower()
            {
                tracing::info!("llm: {error}; retrying with response_format {lower:?}");
                format = lower;
                continue;
            }
            if !error.retryable() || retries >= max_retries {
                return Err(LlmFailure {
                    error,
                    attempts,
                    latency_ms: ms(started),
                });
            }
            let delay = self.backoff(retries);
            tracing::info!(
                "llm: {error}; retry {} of {max_retries} in {} ms",
                retries + 1,
                delay.as_millis()
            );
            retries += 1;
            tokio::time::sleep(delay).await;
        }
    }

    /// Exponential backoff with jitter in [50%, 100%] of the step.
    fn backoff(&self, retry: u32) -> Duration {
        let step = RETRY_BASE_DELAY
            .saturating_mul(1u32 << retry.min(8))
            .min(RETRY_MAX_DELAY);
        let jitter = match self.rng.lock() {
            Ok(mut r) => r.next_f64(),
            Err(_) => 0.5,
        };
        step.mul_f64(0.5 + 0.5 * jitter)
    }

    async fn send(&self, req: &ChatRequest, format: FormatMode) -> Result<RawReply, LlmError> {
        let request = self.build_request(req, format)?;
        let timeout_ms = self.cfg.timeout_ms.max(1);
        // reqwest's timeout covers connect + body; this guard covers the rest.
        let guard = Duration::from_millis(timeout_ms) + Duration::from_millis(500);
        let chat = self.client.chat();
        let call = chat.create_byot::<_, RawReply>(request);
        match tokio::time::timeout(guard, call).await {
            Err(_) => Err(LlmError::Timeout(timeout_ms)),
            Ok(Err(e)) => Err(classify(e, timeout_ms)),
            Ok(Ok(raw)) => Ok(raw),
        }
    }

    #[allow(deprecated)] // `max_tokens`: what Ollama, llama.cpp and vLLM all read.
    fn build_request(
        &self,
        req: &ChatRequest,
        format: FormatMode,
    ) -> Result<CreateChatCompletionRequest, LlmError> {
        let mut messages: Vec<ChatCompletionRequestMessage> = Vec::new();
        // Secrets never leave: everything sent is redacted once more here.
        if !req.system.trim().is_empty() {
            messages.push(
                ChatCompletionRequestSystemMessage::from(redact_owned(&req.system).as_str()).into(),
            );
        }
        messages
            .push(ChatCompletionRequestUserMessage::from(redact_owned(&req.user).as_str()).into());
        let response_format = match (&req.schema, format) {
            (None, _) | (_, FormatMode::Text) => None,
            (Some(_), FormatMode::JsonObject) => Some(ResponseFormat::JsonObject),
            (Some((name, schema)), FormatMode::JsonSchema) => Some(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: None,
                    name: name.clone(),
                    schema: schema.clone(),
                    strict: None,
                },
            }),
        };
        Ok(CreateChatCompletionRequest {
            model: self.cfg.model.clone(),
            messages,
            max_tokens: Some(req.max_tokens.unwrap_or(self.cfg.max_tokens)),
            temperature: Some(self.cfg.temperature),
            response_format,
            stream: Some(false),
            ..CreateChatCompletionRequest::default()
        })
    }

    /// One short request without retries: does the endpoint answer, and how fast?
    /// For `rollgraph doctor`, never for the hook.
    pub fn ping(&self) -> Result<Reply, LlmFailure> {
        self.chat(&ChatRequest {
            system: String::new(),
            user: "Reply with the single word: ok".into(),
            schema: None,
            max_tokens: Some(8),
            max_retries: Some(0),
        })
    }

    /// Asks whether two nodes are the same thing, contradict each other, or
    /// are unrelated (the reconciler's ambiguous pairs).
    pub fn adjudicate_pair(
        &self,
        prompts: &Prompts,
        a: &Node,
        b: &Node,
    ) -> Result<Verdict, LlmFailure> {
        let schema = serde_json::json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["verdict"],
            "properties": {
                "verdict": {"type": "string", "enum": ["same", "contradicts", "unrelated"]},
                "reason": {"type": "string", "maxLength": 200}
            }
        });
        let (da, db) = (prompt::describe_node(a), prompt::describe_node(b));
        let (system, user) = prompt::fill(&prompts.reconcile, &[("a", &da), ("b", &db)]);
        let reply = self.chat(&ChatRequest {
            system,
            user,
            schema: Some(("rollgraph_verdict".into(), schema)),
            max_tokens: Some(120),
            max_retries: None,
        })?;
        parse_verdict(&reply.content).ok_or_else(|| LlmFailure {
            error: LlmError::Reply(format!("no verdict in {:?}", shorten(&reply.content, 120))),
            attempts: reply.attempts,
            latency_ms: reply.latency_ms,
        })
    }

    /// Drafts the one-line flat-memory text for a graduating node (redacted,
    /// at most 400 characters).
    pub fn draft_graduation(&self, prompts: &Prompts, node: &Node) -> Result<String, LlmFailure> {
        let (system, user) =
            prompt::fill(&prompts.graduate, &[("node", &prompt::describe_node(node))]);
        let reply = self.chat(&ChatRequest {
            system,
            user,
            schema: None,
            max_tokens: Some(120),
            max_retries: None,
        })?;
        let line = reply
            .content
            .lines()
            .map(|l| l.trim().trim_start_matches(['-', '*', '#', ' ']).trim())
            .find(|l| !l.is_empty())
            .unwrap_or_default();
        if line.is_empty() {
            return Err(LlmFailure {
                error: LlmError::Reply("empty draft".into()),
                attempts: reply.attempts,
                latency_ms: reply.latency_ms,
            });
        }
        Ok(shorten(&redact_owned(line), 400))
    }
}

fn ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn reply_of(
    raw: RawReply,
    format: FormatMode,
    attempts: u32,
    started: Instant,
) -> Result<Reply, LlmError> {
    let usage = raw.usage.map(|u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
    });
    let Some(choice) = raw.choices.into_iter().next() else {
        return Err(LlmError::Reply("the completion has no choices".into()));
    };
    Ok(Reply {
        content: choice.message.and_then(|m| m.content).unwrap_or_default(),
        finish_reason: choice.finish_reason,
        usage,
        latency_ms: ms(started),
        attempts,
        format,
    })
}

/// The verdict in a reply: its JSON `verdict` field, else the first verdict word.
fn parse_verdict(text: &str) -> Option<Verdict> {
    if let Some(v) = extract_json(text)
        && let Some(s) = v.get("verdict").and_then(Value::as_str)
    {
        return serde_json::from_value(Value::String(s.trim().to_lowercase())).ok();
    }
    let lower = text.to_lowercase();
    [
        ("contradict", Verdict::Contradicts),
        ("unrelated", Verdict::Unrelated),
        ("same", Verdict::Same),
    ]
    .into_iter()
    .filter_map(|(w, v)| lower.find(w).map(|i| (i, v)))
    .min_by_key(|(i, _)| *i)
    .map(|(_, v)| v)
}

/// The first JSON object or array in `text`: the whole text when it is JSON,
/// else the first `{` or `[` from which a complete value parses (prose and
/// code fences around it are ignored). A value cut off by the end of the text
/// gives `None`, never one of its inner fragments.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(t)
        && (v.is_object() || v.is_array())
    {
        return Some(v);
    }
    for (i, c) in t.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&t[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => return Some(v),
            // Cut off mid-value: whatever parses further on is a fragment of it.
            Some(Err(e)) if e.is_eof() => return None,
            _ => {}
        }
    }
    None
}

/// One recorded LLM call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallRecord {
    /// When it finished.
    pub at: Option<DateTime<Utc>>,
    /// What it was for (`probe`).
    pub purpose: String,
    /// `valid` (usable reply), `invalid_reply` (rejected, fallback used),
    /// `endpoint_error` (fallback used) or `skipped` (breaker open).
    pub outcome: String,
    /// Wall time, retries included.
    pub latency_ms: u64,
    /// HTTP attempts.
    pub attempts: u32,
    /// Token usage.
    pub usage: Option<Usage>,
    /// The structured-output mode used.
    pub format: Option<FormatMode>,
    /// Operations in the reply, when it was valid.
    pub ops: usize,
    /// Why it failed or was rejected.
    pub error: Option<String>,
}

/// What `llm-status.json` holds: the LLM's health as the last process saw it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmStatus {
    /// The endpoint.
    pub endpoint: Option<String>,
    /// The model.
    pub model: String,
    /// Calls made.
    pub calls: u64,
    /// Calls whose reply was used.
    pub valid: u64,
    /// Replies rejected as invalid.
    pub invalid: u64,
    /// Calls that failed at the endpoint.
    pub failures: u64,
    /// Probes answered by the heuristic because the breaker was open.
    pub skipped: u64,
    /// Endpoint failures in a row (the breaker opens at `breaker_threshold`).
    pub consecutive_failures: u32,
    /// The breaker is open (LLM skipped) until then.
    pub breaker_open_until: Option<DateTime<Utc>>,
    /// Prompt tokens spent.
    pub prompt_tokens: u64,
    /// Completion tokens spent.
    pub completion_tokens: u64,
    /// The structured-output mode in use.
    pub format: Option<FormatMode>,
    /// The last error (redacted).
    pub last_error: Option<String>,
    /// When it happened.
    pub last_error_at: Option<DateTime<Utc>>,
    /// When a reply was last used.
    pub last_ok_at: Option<DateTime<Utc>>,
    /// The most recent calls, oldest first (at most [`RECENT_CALLS`]).
    pub recent: VecDeque<CallRecord>,
}

impl LlmStatus {
    /// The status file of a home.
    pub fn path(home: &Home) -> PathBuf {
        home.root().join(STATUS_FILE)
    }

    /// Reads the status file; missing means a default status.
    pub fn load(home: &Home) -> Result<LlmStatus, StoreError> {
        Ok(read_json(&LlmStatus::path(home))?.unwrap_or_default())
    }

    /// Writes the status file atomically.
    pub fn save(&self, home: &Home) -> Result<(), StoreError> {
        write_json(&LlmStatus::path(home), self)
    }

    /// Whether the breaker keeps the LLM off at `now`.
    pub fn breaker_open(&self, now: DateTime<Utc>) -> bool {
        self.breaker_open_until.is_some_and(|t| now < t)
    }

    /// Adds a call to the counters and the recent list.
    pub fn record(&mut self, call: CallRecord) {
        match call.outcome.as_str() {
            "skipped" => self.skipped += 1,
            outcome => {
                self.calls += 1;
                match outcome {
                    "valid" => {
                        self.valid += 1;
                        self.last_ok_at = call.at;
                    }
                    "invalid_reply" => self.invalid += 1,
                    _ => self.failures += 1,
                }
            }
        }
        if let Some(u) = call.usage {
            self.prompt_tokens += u.prompt_tokens;
            self.completion_tokens += u.completion_tokens;
        }
        if call.format.is_some() {
            self.format = call.format;
        }
        if let Some(e) = &call.error {
            self.last_error = Some(e.clone());
            self.last_error_at = call.at;
        }
        self.recent.push_back(call);
        while self.recent.len() > RECENT_CALLS {
            self.recent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extracts_json_from_prose_and_fences() {
        let cases = [
            (r#"{"ops": []}"#, json!({"ops": []})),
            (
                "Sure! Here you go:\n```json\n{\"ops\": [1]}\n```\nDone.",
                json!({"ops": [1]}),
            ),
            (
                "the set {a, b} then [{\"op\": \"x\"}]",
                json!([{"op": "x"}]),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(extract_json(text), Some(want), "{text}");
        }
        assert_eq!(extract_json(""), None);
        assert_eq!(extract_json("{\"ops\": [{\"op\": \"add\", \"pa"), None);
        assert_eq!(extract_json("no json at all"), None);
        // Truncated: the complete inner op must not pass for the reply.
        assert_eq!(
            extract_json(r#"{"ops": [{"op": "remove", "path": "/nodes/a"}, {"op": "add", "#),
            None
        );
    }

    #[test]
    fn verdicts_parse_from_json_or_words() {
        assert_eq!(parse_verdict(r#"{"verdict": "same"}"#), Some(Verdict::Same));
        assert_eq!(
            parse_verdict("They contradict: the second replaces the first."),
            Some(Verdict::Contradicts)
        );
        assert_eq!(
            parse_verdict("Unrelated, though the same project."),
            Some(Verdict::Unrelated)
        );
        assert_eq!(parse_verdict("hmm"), None);
    }

    #[test]
    fn retry_classes() {
        let http = |status| LlmError::Http {
            status,
            message: String::new(),
        };
        assert!(http(429).retryable());
        assert!(http(503).retryable());
        assert!(!http(401).retryable());
        assert!(!http(400).retryable());
        assert!(LlmError::Timeout(5).retryable());
        assert!(!LlmError::Reply("x".into()).retryable());
    }

    #[test]
    fn bad_config_is_refused_without_a_request() {
        let mut cfg = LlmConfig::default();
        assert!(matches!(LlmClient::new(&cfg), Err(LlmError::Config(_))));
        cfg.base_url = Some("localhost:8080".into());
        assert!(matches!(LlmClient::new(&cfg), Err(LlmError::Config(_))));
        cfg.base_url = Some("http://127.0.0.1:9/v1/".into());
        let c = LlmClient::new(&cfg);
        assert_eq!(
            c.as_ref().map(|c| c.base_url().to_owned()).ok(),
            Some("http://127.0.0.1:9/v1".into())
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let cfg = LlmConfig {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..LlmConfig::default()
        };
        let Ok(c) = LlmClient::new(&cfg) else {
            panic!("client")
        };
        for _ in 0..50 {
            let d0 = c.backoff(0);
            assert!(
                d0 >= RETRY_BASE_DELAY / 2 && d0 <= RETRY_BASE_DELAY,
                "{d0:?}"
            );
            let d2 = c.backoff(2);
            assert!(
                d2 >= RETRY_BASE_DELAY * 2 && d2 <= RETRY_BASE_DELAY * 4,
                "{d2:?}"
            );
            assert!(c.backoff(30) <= RETRY_MAX_DELAY);
        }
    }

    #[test]
    fn status_counts_and_bounds_recent_calls() {
        let mut s = LlmStatus::default();
        for i in 0..(RECENT_CALLS + 5) {
            s.record(CallRecord {
                outcome: if i % 2 == 0 {
                    "valid".into()
                } else {
                    "endpoint_error".into()
                },
                usage: Some(Usage {
                    prompt_tokens: 10,
                    completion_tokens: 1,
                }),
                error: (i % 2 == 1).then(|| format!("e{i}")),
                ..CallRecord::default()
            });
        }
        assert_eq!(s.recent.len(), RECENT_CALLS);
        assert_eq!(s.calls as usize, RECENT_CALLS + 5);
        assert_eq!(s.prompt_tokens as usize, 10 * (RECENT_CALLS + 5));
        assert_eq!(
            s.last_error.as_deref(),
            Some(format!("e{}", RECENT_CALLS + 3).as_str())
        );
    }
}
