//! The validation signals (§10): probe rate, injection size, expansions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gate::GateDecision;
use crate::probe::Usage;

/// Counters kept per session (and summed for `rollgraph stats`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    /// Turns observed.
    pub turns: u64,
    /// Probes run.
    pub probes: u64,
    /// How often each trigger fired.
    pub triggers: BTreeMap<String, u64>,
    /// Probes by source (`heuristic`, `llm`).
    pub probe_sources: BTreeMap<String, u64>,
    /// Patches rejected.
    pub rejected: u64,
    /// The last rejection's reason.
    pub last_rejection: Option<String>,
    /// LLM calls made.
    pub llm_calls: u64,
    /// LLM prompt tokens spent.
    pub llm_prompt_tokens: u64,
    /// LLM completion tokens spent.
    pub llm_completion_tokens: u64,
    /// Injections made (renders handed to the host).
    pub injections: u64,
    /// Tokens injected in total.
    pub injected_tokens: u64,
    /// Largest injection.
    pub max_injected_tokens: u64,
    /// Smallest non-empty injection.
    pub min_injected_tokens: u64,
    /// Expansion requests (the model asking for collapsed detail).
    pub expansions: u64,
    /// Explicit queries.
    pub queries: u64,
    /// Compactions seen.
    pub compactions: u64,
}

impl Stats {
    /// Records a gate decision.
    pub fn gate(&mut self, d: &GateDecision) {
        self.turns += 1;
        for t in &d.triggers {
            *self.triggers.entry(t.as_str().to_owned()).or_default() += 1;
        }
    }

    /// Records a probe run.
    pub fn probe(&mut self, source: &str, usage: Option<Usage>) {
        self.probes += 1;
        *self.probe_sources.entry(source.to_owned()).or_default() += 1;
        if let Some(u) = usage {
            self.llm_calls += 1;
            self.llm_prompt_tokens += u.prompt_tokens;
            self.llm_completion_tokens += u.completion_tokens;
        }
    }

    /// Records an injection of `tokens` tokens.
    pub fn injection(&mut self, tokens: usize) {
        if tokens == 0 {
            return;
        }
        let t = tokens as u64;
        self.injections += 1;
        self.injected_tokens += t;
        self.max_injected_tokens = self.max_injected_tokens.max(t);
        self.min_injected_tokens = if self.min_injected_tokens == 0 {
            t
        } else {
            self.min_injected_tokens.min(t)
        };
    }

    /// Probes per turn.
    pub fn probe_rate(&self) -> f64 {
        if self.turns == 0 {
            0.0
        } else {
            self.probes as f64 / self.turns as f64
        }
    }

    /// Mean injection size in tokens.
    pub fn mean_injection(&self) -> f64 {
        if self.injections == 0 {
            0.0
        } else {
            self.injected_tokens as f64 / self.injections as f64
        }
    }

    /// Adds another session's counters to these.
    pub fn add(&mut self, o: &Stats) {
        self.turns += o.turns;
        self.probes += o.probes;
        for (k, v) in &o.triggers {
            *self.triggers.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.probe_sources {
            *self.probe_sources.entry(k.clone()).or_default() += v;
        }
        self.rejected += o.rejected;
        if o.last_rejection.is_some() {
            self.last_rejection.clone_from(&o.last_rejection);
        }
        self.llm_calls += o.llm_calls;
        self.llm_prompt_tokens += o.llm_prompt_tokens;
        self.llm_completion_tokens += o.llm_completion_tokens;
        self.injections += o.injections;
        self.injected_tokens += o.injected_tokens;
        self.max_injected_tokens = self.max_injected_tokens.max(o.max_injected_tokens);
        if o.min_injected_tokens > 0 {
            self.min_injected_tokens = if self.min_injected_tokens == 0 {
                o.min_injected_tokens
            } else {
                self.min_injected_tokens.min(o.min_injected_tokens)
            };
        }
        self.expansions += o.expansions;
        self.queries += o.queries;
        self.compactions += o.compactions;
    }
}
