//! `rollgraph doctor`: which probe is active, whether the LLM endpoint
//! answers (one live request, made here and never on the hook path), the
//! breaker and last error recorded in `llm-status.json`, and whether the
//! embedding model loads.

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::Args;
use serde::Serialize;

use rollgraph_engine::clock;
use rollgraph_engine::embed::{self, EmbedPaths};
use rollgraph_engine::llm::{self, LlmClient, LlmStatus};
use rollgraph_engine::redact::redact_owned;

use crate::common::{home_and_config, out, out_json};

/// Arguments of `rollgraph doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Skip the live request to the LLM endpoint.
    #[arg(long)]
    pub offline: bool,
    /// Skip loading the embedding model.
    #[arg(long)]
    pub no_embed: bool,
}

/// What `doctor --json` prints.
#[derive(Debug, Serialize)]
pub struct DoctorReport {
    /// The state home.
    pub home: String,
    /// `llm` or `heuristic`.
    pub probe: String,
    /// Why that probe.
    pub probe_reason: String,
    /// The endpoint, when set.
    pub endpoint: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// Where the API key comes from (`ROLLGRAPH_LLM_API_KEY`, the `api_key_env` var, or none).
    pub api_key: String,
    /// The live request, when made.
    pub live: Option<LiveCheck>,
    /// The breaker: `closed`, or `open until …`.
    pub breaker: String,
    /// Endpoint failures in a row.
    pub consecutive_failures: u32,
    /// The last recorded error.
    pub last_error: Option<String>,
    /// When it happened.
    pub last_error_at: Option<DateTime<Utc>>,
    /// Calls recorded (valid / invalid / failed / skipped).
    pub calls: CallCounts,
    /// Embedding model status.
    pub embeddings: String,
}

/// The live request.
#[derive(Debug, Serialize)]
pub struct LiveCheck {
    /// Whether the endpoint answered.
    pub ok: bool,
    /// Wall time.
    pub latency_ms: u64,
    /// The error, when it failed.
    pub error: Option<String>,
}

/// Recorded call counts.
#[derive(Debug, Serialize)]
pub struct CallCounts {
    /// Replies used.
    pub valid: u64,
    /// Replies rejected.
    pub invalid: u64,
    /// Endpoint failures.
    pub failed: u64,
    /// Probes the breaker sent to the heuristic.
    pub skipped: u64,
    /// Prompt tokens spent.
    pub prompt_tokens: u64,
    /// Completion tokens spent.
    pub completion_tokens: u64,
}

/// Runs `rollgraph doctor`.
pub fn run(args: DoctorArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let status = LlmStatus::load(&home).unwrap_or_default();
    let now = clock::now();
    let base = config.llm.base_url.clone().filter(|b| !b.trim().is_empty());
    let key_source = if std::env::var(llm::API_KEY_ENV).is_ok_and(|v| !v.trim().is_empty()) {
        llm::API_KEY_ENV.to_owned()
    } else if llm::api_key(&config.llm).is_some() {
        config.llm.api_key_env.clone()
    } else {
        "none".to_owned()
    };
    let (probe, probe_reason, live) = match &base {
        None => (
            "heuristic",
            "no llm.base_url (or ROLLGRAPH_LLM_BASE_URL) set".to_owned(),
            None,
        ),
        Some(_) => match LlmClient::new(&config.llm) {
            Err(e) => (
                "heuristic",
                format!("the LLM settings are unusable: {e}"),
                None,
            ),
            Ok(client) => {
                let live = (!args.offline).then(|| match client.ping() {
                    Ok(r) => LiveCheck {
                        ok: true,
                        latency_ms: r.latency_ms,
                        error: None,
                    },
                    Err(f) => LiveCheck {
                        ok: false,
                        latency_ms: f.latency_ms,
                        error: Some(f.error.to_string()),
                    },
                });
                let reason = if status.breaker_open(now) {
                    "LLM configured, but its breaker is open: the heuristic probe answers until it closes".to_owned()
                } else {
                    "LLM configured; the heuristic probe answers whenever a call fails".to_owned()
                };
                ("llm", reason, live)
            }
        },
    };
    let breaker = match status.breaker_open_until {
        Some(t) if now < t => format!(
            "open until {}",
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        _ => "closed".to_owned(),
    };
    let embeddings = if !config.embed.enabled {
        "disabled in the config".to_owned()
    } else if args.no_embed {
        "not checked (--no-embed)".to_owned()
    } else {
        match embed::load_optional(&EmbedPaths::discover()) {
            (Some(e), _) => format!("ready: {} ({} dimensions)", e.model_id(), e.dim()),
            (None, notice) => notice.unwrap_or_else(|| "unavailable".to_owned()),
        }
    };
    let report = DoctorReport {
        home: home.root().display().to_string(),
        probe: probe.to_owned(),
        probe_reason,
        endpoint: base.map(|b| redact_owned(&b)),
        model: config
            .llm
            .base_url
            .as_ref()
            .map(|_| config.llm.model.clone()),
        api_key: key_source,
        live,
        breaker,
        consecutive_failures: status.consecutive_failures,
        last_error: status.last_error.clone(),
        last_error_at: status.last_error_at,
        calls: CallCounts {
            valid: status.valid,
            invalid: status.invalid,
            failed: status.failures,
            skipped: status.skipped,
            prompt_tokens: status.prompt_tokens,
            completion_tokens: status.completion_tokens,
        },
        embeddings,
    };
    if args.json {
        return out_json(&report);
    }
    out(&text(&report))
}

fn text(r: &DoctorReport) -> String {
    let mut s = format!(
        "home:       {}\nprobe:      {} ({})\n",
        r.home, r.probe, r.probe_reason
    );
    if let Some(e) = &r.endpoint {
        s.push_str(&format!("endpoint:   {e}\n"));
        s.push_str(&format!(
            "model:      {}\n",
            r.model.as_deref().unwrap_or("?")
        ));
        s.push_str(&format!("api key:    {}\n", r.api_key));
        match &r.live {
            Some(l) if l.ok => s.push_str(&format!("live check: answers ({} ms)\n", l.latency_ms)),
            Some(l) => s.push_str(&format!(
                "live check: FAILED after {} ms: {}\n",
                l.latency_ms,
                l.error.as_deref().unwrap_or("?")
            )),
            None => s.push_str("live check: skipped\n"),
        }
    }
    s.push_str(&format!(
        "breaker:    {} ({} failures in a row)\n",
        r.breaker, r.consecutive_failures
    ));
    match (&r.last_error, r.last_error_at) {
        (Some(e), Some(at)) => s.push_str(&format!(
            "last error: {e} ({})\n",
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )),
        (Some(e), None) => s.push_str(&format!("last error: {e}\n")),
        _ => s.push_str("last error: none recorded\n"),
    }
    let c = &r.calls;
    s.push_str(&format!(
        "llm calls:  {} valid, {} invalid, {} failed, {} skipped; tokens {} prompt + {} completion\n",
        c.valid, c.invalid, c.failed, c.skipped, c.prompt_tokens, c.completion_tokens
    ));
    s.push_str(&format!("embeddings: {}", r.embeddings));
    s
}
