//! The LLM probe, its heuristic fallback and circuit breaker.
//!
//! [`LlmProbe`] asks the endpoint for patch operations and returns them only
//! when they pass the patch schema and a dry run against the graph (the same
//! rules `Session::apply_probe` enforces), so an invalid reply never gets near
//! the graph. [`FallbackProbe`] answers every cycle: with the LLM's patch when
//! it is usable, else with the heuristic probe's, recording why. After
//! `breaker_threshold` endpoint failures in a row it stops calling the
//! endpoint for `breaker_cooldown_s` (measured on the probe's clock), then
//! tries once more. Invalid replies do not trip the breaker (the endpoint
//! works; the model is weak) but are counted and logged.

use chrono::{DateTime, Utc};

use super::{
    CallRecord, ChatRequest, LlmClient, LlmFailure, LlmStatus, Prompts, Reply, extract_json, prompt,
};
use crate::config::Config;
use crate::patch::{self, PatchRules};
use crate::probe::{HeuristicProbe, Probe, ProbeError, ProbeInput, ProbeOutput, Usage};
use crate::session;
use crate::store::Home;

/// Most operations asked of the model (the schema allows 64).
const MODEL_MAX_OPS: usize = 64;

/// Why an LLM probe produced nothing usable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Miss {
    /// The endpoint failed.
    Endpoint(LlmFailure),
    /// It answered, but not with a valid patch.
    Invalid {
        /// Why it was rejected.
        reason: String,
        /// The call that produced it.
        reply: Reply,
    },
}

/// The probe of the design: an OpenAI-compatible endpoint returning patches.
pub struct LlmProbe {
    client: LlmClient,
    prompts: Prompts,
    rules: PatchRules,
    max_input_chars: usize,
    home: Option<Home>,
    status: LlmStatus,
}

impl std::fmt::Debug for LlmProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmProbe")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl LlmProbe {
    /// A probe over `client`. With a `home`, its status is loaded from and
    /// saved to `llm-status.json` there.
    pub fn new(
        client: LlmClient,
        prompts: Prompts,
        config: &Config,
        home: Option<Home>,
    ) -> LlmProbe {
        let mut status = home
            .as_ref()
            .and_then(|h| LlmStatus::load(h).ok())
            .unwrap_or_default();
        status.endpoint = Some(client.base_url().to_owned());
        status.model = client.model().to_owned();
        LlmProbe {
            client,
            prompts,
            rules: session::rules(config),
            max_input_chars: config.probe.max_input_chars,
            home,
            status,
        }
    }

    /// The client.
    pub fn client(&self) -> &LlmClient {
        &self.client
    }

    /// The recorded status (calls, errors, breaker).
    pub fn status(&self) -> &LlmStatus {
        &self.status
    }

    fn save_status(&self) {
        if let Some(h) = &self.home
            && let Err(e) = self.status.save(h)
        {
            tracing::warn!("llm: cannot write status: {e}");
        }
    }

    /// One LLM round: the validated output, or why there is none.
    pub(crate) fn attempt(&mut self, input: &ProbeInput<'_>) -> Result<(ProbeOutput, Reply), Miss> {
        let mentioned = prompt::mentioned_nodes(input.graph, input.turns);
        let (system, user) =
            prompt::probe_messages(&self.prompts.probe, input, &mentioned, self.max_input_chars);
        let reply = self
            .client
            .chat(&ChatRequest {
                system,
                user,
                schema: Some(("rollgraph_patch".into(), prompt::request_schema())),
                max_tokens: None,
                max_retries: None,
            })
            .map_err(Miss::Endpoint)?;
        match self.validate(input, &reply) {
            Ok(ops) => Ok((
                ProbeOutput {
                    patch: patch::ProbePatch {
                        probe_id: input.probe_id.clone(),
                        ops,
                    },
                    mentioned,
                    source: "llm".into(),
                    usage: reply.usage,
                },
                reply,
            )),
            Err(reason) => Err(Miss::Invalid { reason, reply }),
        }
    }

    /// Schema, then rules (a dry run on the graph): the reason on failure.
    fn validate(
        &self,
        input: &ProbeInput<'_>,
        reply: &Reply,
    ) -> Result<Vec<json_patch::PatchOperation>, String> {
        let truncated = reply.finish_reason.as_deref() == Some("length");
        if reply.content.trim().is_empty() {
            return Err(format!(
                "empty reply (finish_reason {:?})",
                reply.finish_reason.as_deref().unwrap_or("none")
            ));
        }
        let Some(value) = extract_json(&reply.content) else {
            return Err(if truncated {
                "reply truncated at max_tokens: no complete JSON value".into()
            } else {
                "no JSON value in the reply".into()
            });
        };
        let ops = patch::parse_ops(&value).map_err(|e| e.to_string())?;
        if ops.len() > MODEL_MAX_OPS.min(self.rules.max_ops) {
            return Err(format!(
                "{} operations, more than {}",
                ops.len(),
                MODEL_MAX_OPS.min(self.rules.max_ops)
            ));
        }
        patch::dry_run(input.graph, &ops, &self.rules).map_err(|e| e.to_string())?;
        Ok(ops)
    }
}

impl Probe for LlmProbe {
    fn name(&self) -> &str {
        "llm"
    }

    /// The LLM alone: an unusable reply is an error (see [`FallbackProbe`]).
    fn probe(&mut self, input: &ProbeInput<'_>) -> Result<ProbeOutput, ProbeError> {
        let result = self.attempt(input);
        let (record, out) = record_of(input.now, result);
        self.status.record(record);
        self.save_status();
        out
    }
}

fn record_of(
    now: DateTime<Utc>,
    result: Result<(ProbeOutput, Reply), Miss>,
) -> (CallRecord, Result<ProbeOutput, ProbeError>) {
    match result {
        Ok((out, reply)) => (
            CallRecord {
                at: Some(now),
                purpose: "probe".into(),
                outcome: "valid".into(),
                latency_ms: reply.latency_ms,
                attempts: reply.attempts,
                usage: reply.usage,
                format: Some(reply.format),
                ops: out.patch.ops.len(),
                error: None,
            },
            Ok(out),
        ),
        Err(Miss::Invalid { reason, reply }) => (
            CallRecord {
                at: Some(now),
                purpose: "probe".into(),
                outcome: "invalid_reply".into(),
                latency_ms: reply.latency_ms,
                attempts: reply.attempts,
                usage: reply.usage,
                format: Some(reply.format),
                ops: 0,
                error: Some(format!("invalid reply: {reason}")),
            },
            Err(ProbeError::Reply(reason)),
        ),
        Err(Miss::Endpoint(f)) => (
            CallRecord {
                at: Some(now),
                purpose: "probe".into(),
                outcome: "endpoint_error".into(),
                latency_ms: f.latency_ms,
                attempts: f.attempts,
                usage: None,
                format: None,
                ops: 0,
                error: Some(f.to_string()),
            },
            Err(ProbeError::Endpoint(f.to_string())),
        ),
    }
}

/// The LLM probe with the heuristic probe behind it and a circuit breaker.
pub struct FallbackProbe {
    llm: LlmProbe,
    heuristic: HeuristicProbe,
    threshold: u32,
    cooldown: chrono::Duration,
}

impl std::fmt::Debug for FallbackProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FallbackProbe")
            .field("llm", &self.llm)
            .finish_non_exhaustive()
    }
}

impl FallbackProbe {
    /// Wraps `llm`; breaker settings come from `config.llm`.
    pub fn new(llm: LlmProbe, config: &Config) -> FallbackProbe {
        FallbackProbe {
            llm,
            heuristic: HeuristicProbe::new(config.probe.clone()),
            threshold: config.llm.breaker_threshold.max(1),
            cooldown: chrono::Duration::seconds(
                i64::try_from(config.llm.breaker_cooldown_s).unwrap_or(i64::MAX / 1000),
            ),
        }
    }

    /// The recorded status (calls, last error, breaker).
    pub fn status(&self) -> &LlmStatus {
        self.llm.status()
    }

    /// The LLM probe inside.
    pub fn llm(&self) -> &LlmProbe {
        &self.llm
    }

    fn fallback(
        &mut self,
        input: &ProbeInput<'_>,
        usage: Option<Usage>,
    ) -> Result<ProbeOutput, ProbeError> {
        let mut out = self.heuristic.probe(input)?;
        // Tokens the failed call spent still count in the session's stats.
        out.usage = usage;
        Ok(out)
    }
}

impl Probe for FallbackProbe {
    fn name(&self) -> &str {
        "llm"
    }

    fn probe(&mut self, input: &ProbeInput<'_>) -> Result<ProbeOutput, ProbeError> {
        let now = input.now;
        if self.llm.status.breaker_open(now) {
            self.llm.status.record(CallRecord {
                at: Some(now),
                purpose: "probe".into(),
                outcome: "skipped".into(),
                error: None,
                ..CallRecord::default()
            });
            self.llm.save_status();
            return self.fallback(input, None);
        }
        let result = self.llm.attempt(input);
        let endpoint_failed = matches!(result, Err(Miss::Endpoint(_)));
        let usage = match &result {
            Ok((_, r)) | Err(Miss::Invalid { reply: r, .. }) => r.usage,
            Err(Miss::Endpoint(_)) => None,
        };
        let (record, out) = record_of(now, result);
        let status = &mut self.llm.status;
        status.record(record);
        if endpoint_failed {
            status.consecutive_failures = status.consecutive_failures.saturating_add(1);
            if status.consecutive_failures >= self.threshold {
                status.breaker_open_until = now.checked_add_signed(self.cooldown);
                tracing::warn!(
                    "llm: {} endpoint failures in a row; using the heuristic probe until {:?}",
                    status.consecutive_failures,
                    status.breaker_open_until
                );
            }
        } else {
            status.consecutive_failures = 0;
            status.breaker_open_until = None;
        }
        self.llm.save_status();
        match out {
            Ok(o) => Ok(o),
            Err(e) => {
                tracing::warn!(
                    "probe {}: LLM probe failed, heuristic used: {e}",
                    input.probe_id
                );
                self.fallback(input, usage)
            }
        }
    }
}

/// The probe `config` asks for: the heuristic one without `llm.base_url`,
/// else the LLM probe behind [`FallbackProbe`]. A client that cannot be built
/// (bad URL or key) is logged and recorded, and the heuristic probe runs.
pub fn probe_from_config(config: &Config, home: &Home) -> Box<dyn Probe + Send> {
    let heuristic = || Box::new(HeuristicProbe::new(config.probe.clone())) as Box<dyn Probe + Send>;
    if config
        .llm
        .base_url
        .as_deref()
        .is_none_or(|b| b.trim().is_empty())
    {
        return heuristic();
    }
    match LlmClient::new(&config.llm) {
        Ok(client) => {
            let llm = LlmProbe::new(client, Prompts::load(home), config, Some(home.clone()));
            Box::new(FallbackProbe::new(llm, config))
        }
        Err(e) => {
            tracing::warn!("llm: {e}; using the heuristic probe");
            let mut status = LlmStatus::load(home).unwrap_or_default();
            status.endpoint = config
                .llm
                .base_url
                .clone()
                .map(|u| crate::redact::redact_owned(&u));
            status.model = config.llm.model.clone();
            status.last_error = Some(e.to_string());
            status.last_error_at = Some(crate::clock::now());
            if let Err(e) = status.save(home) {
                tracing::warn!("llm: cannot write status: {e}");
            }
            heuristic()
        }
    }
}
