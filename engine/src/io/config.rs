//! The TOML configuration: every tunable constant, with documented defaults.
//!
//! Loaded from `$ROLLGRAPH_CONFIG`, else `$ROLLGRAPH_HOME/config.toml`; a
//! missing file means all defaults. Every section and field is optional.
//! `rollgraph config` prints the effective configuration; the commented
//! defaults live in `config.example.toml` (checked by a test).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The whole configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The per-turn gate.
    pub gate: GateConfig,
    /// The probes.
    pub probe: ProbeConfig,
    /// Distance-from-focus decay.
    pub decay: DecayConfig,
    /// The level-of-detail renderer.
    pub render: RenderConfig,
    /// The hot session store.
    pub store: StoreConfig,
    /// An OpenAI-compatible LLM endpoint (the probe is heuristic without one).
    pub llm: LlmConfig,
    /// Local embeddings.
    pub embed: EmbedConfig,
    /// Hot → warm reconciliation.
    pub reconcile: ReconcileConfig,
    /// Flat memory files: seeding and graduation.
    pub flat: FlatConfig,
    /// What the hook injects: full blocks or updates.
    pub inject: InjectConfig,
    /// The episode logs: what was said, kept for retrieval.
    pub episodes: EpisodesConfig,
}

/// Episode log constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EpisodesConfig {
    /// Keep the turns' prose at all.
    pub enabled: bool,
    /// Longest text kept per turn and speaker, in characters.
    pub max_chars: usize,
    /// A session's log size (bytes) before its oldest lines go.
    pub session_max_bytes: u64,
    /// A warm store's log size (bytes) before its oldest lines go.
    pub warm_max_bytes: u64,
}

impl Default for EpisodesConfig {
    fn default() -> Self {
        EpisodesConfig {
            enabled: true,
            max_chars: 4_000,
            session_max_bytes: 8 << 20,
            warm_max_bytes: 32 << 20,
        }
    }
}

/// Injection constants.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InjectConfig {
    /// `delta`: the full block at session start and after compaction, else
    /// only what changed; `full`: the full block on every prompt.
    pub mode: crate::inject::InjectMode,
}

/// Gate constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GateConfig {
    /// Quiet turns after which the next turn fires a probe anyway (the 9th with 8).
    pub dead_mans_switch: u32,
    /// How many recent turns make up the "recent window" for domain shifts.
    pub domain_window: usize,
    /// Shortest name (in characters) that counts as a new entity.
    pub min_entity_len: usize,
    /// Most new names reported per decision.
    pub max_reported_entities: usize,
    /// Soft triggers (new entity, domain shift, a record, an inferred signal)
    /// wait until this many quiet turns have passed since the last probe;
    /// what they saw is kept and fires then. Decisions and corrections wait
    /// for none.
    pub soft_quiet_turns: u32,
    /// Signal points new names need to fire (a person a cue vouches for is
    /// `person_points`, another name 2, a file or identifier 1).
    pub new_entity_points: u32,
    /// Least score the dominant domain needs (and lead over the runner-up) to count as a shift.
    pub domain_min_score: u32,
    /// Signal points of a new person a cue vouches for (a role, a title,
    /// "X says"); at 3 such a person is news on their own.
    pub person_points: u32,
    /// Triggers fire on the turn after they are seen, so one probe reads
    /// that turn and the next (a probe within one turn of what it should
    /// catch); off, they fire at once (soft ones when eligible).
    pub next_turn: bool,
    /// A date ("due the 3rd", "lands wednesday") is a soft memory trigger.
    pub dates: bool,
    /// A quantity ("250 mb", "at most 40") is a soft memory trigger.
    pub quantities: bool,
    /// A choice the gate cannot see whole ("sure, go for it" to a reply with no
    /// stated proposal, "keep X", "X it is") is a soft decision trigger.
    pub soft_choices: bool,
    /// Inferred signals that fire only with company: other evidence on the
    /// same turn or the next.
    pub weak: Vec<Inferred>,
}

/// A signal the gate infers from the shape of a turn rather than from a cue
/// that settles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inferred {
    /// The turn leans to another domain than the recent ones.
    DomainShift,
    /// A date: "due the 3rd", "lands wednesday".
    Date,
    /// A number with a unit, a limit or a value being set: "250 mb", "at most 40".
    Quantity,
    /// An acceptance of the reply where no proposal was found in it ("sure,
    /// go for it", "The second one, fine.").
    Acceptance,
    /// A choice told by its shape: "keep X", "X stays", "X it is", an answer
    /// in the reply's own words.
    Choice,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            dead_mans_switch: 8,
            domain_window: 3,
            min_entity_len: 3,
            max_reported_entities: 8,
            soft_quiet_turns: 1,
            new_entity_points: 3,
            domain_min_score: 5,
            person_points: 3,
            next_turn: true,
            dates: true,
            quantities: true,
            soft_choices: true,
            weak: vec![
                Inferred::DomainShift,
                Inferred::Quantity,
                Inferred::Acceptance,
                Inferred::Choice,
            ],
        }
    }
}

/// Probe constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProbeConfig {
    /// Characters of conversation a probe sees at most (newest kept).
    pub max_input_chars: usize,
    /// Weight of a newly found entity.
    pub new_weight: f64,
    /// Weight of a new decision.
    pub decision_weight: f64,
    /// Weight of a new correction.
    pub correction_weight: f64,
    /// Weight of a new preference.
    pub preference_weight: f64,
    /// How much a mention raises an existing node: w += boost × (1 − w).
    pub mention_boost: f64,
    /// Most operations a single probe may emit.
    pub max_ops: usize,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            max_input_chars: 12_000,
            new_weight: 0.5,
            decision_weight: 0.85,
            correction_weight: 0.9,
            preference_weight: 0.75,
            mention_boost: 0.25,
            max_ops: 400,
        }
    }
}

/// The least `decay.max_nodes` accepted: a smaller graph cannot hold a session.
pub const MIN_MAX_NODES: usize = 50;

/// Decay constants (§4 of the design).
///
/// `new = w × (1 − rate × distance_factor × (1 − shield × recency)) × time_factor`
/// where `distance_factor = min(d, max_distance) / max_distance` (1 for
/// disconnected nodes), `recency = 2^(−age / recency_half_life_hours)` and
/// `time_factor = 1 − time_erosion × (1 − recency)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecayConfig {
    /// Fraction of weight a far node loses per cycle.
    pub rate: f64,
    /// Hops at which the distance factor reaches 1.
    pub max_distance: u32,
    /// Half-life, in hours, of the recency that shields nodes from decay.
    pub recency_half_life_hours: f64,
    /// How much full recency shields a node from distance decay (0..1).
    pub recency_shield: f64,
    /// Fraction of weight a node loses per cycle once it is old.
    pub time_erosion: f64,
    /// Anchors never fall below this.
    pub anchor_floor: f64,
    /// Raise applied to focus nodes the patch did not touch: w += boost × (1 − w).
    pub activation_boost: f64,
    /// Decisions, corrections, preferences, rules, how-tos and facts in force
    /// decay this much slower (rate × factor).
    pub durable_factor: f64,
    /// People and projects decay this much slower (rate × factor).
    pub entity_factor: f64,
    /// When the graph goes over `max_nodes`, every non-anchor node under this
    /// weight (outside supersedes chains) is pruned, not just enough to get
    /// back under the limit, so the graph sheds its dust at once and keeps
    /// headroom; stronger nodes are pruned only while still over the limit.
    pub prune_below: f64,
    /// Most nodes a hot graph keeps.
    pub max_nodes: usize,
}

impl Default for DecayConfig {
    fn default() -> Self {
        DecayConfig {
            rate: 0.12,
            max_distance: 4,
            recency_half_life_hours: 1.0,
            recency_shield: 0.6,
            time_erosion: 0.04,
            anchor_floor: 0.2,
            activation_boost: 0.2,
            durable_factor: 0.3,
            entity_factor: 0.6,
            prune_below: 0.05,
            max_nodes: 5_000,
        }
    }
}

/// Renderer constants (§7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderConfig {
    /// Use at least this many tokens when the graph has that much to say.
    pub min_tokens: usize,
    /// Never more than this many tokens.
    pub max_tokens: usize,
    /// Most nodes shown in full in the focus layer.
    pub focus_max: usize,
    /// Hops from the focus that count as "near".
    pub near_distance: u32,
    /// Nodes below this weight are left out of the proactive render.
    pub min_weight: f64,
    /// Most edges listed per focus node.
    pub edges_per_node: usize,
}

impl Default for RenderConfig {
    fn default() -> Self {
        RenderConfig {
            min_tokens: 500,
            max_tokens: 800,
            focus_max: 8,
            near_distance: 2,
            min_weight: 0.08,
            edges_per_node: 1,
        }
    }
}

/// Hot store constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Journal entries between snapshots.
    pub snapshot_every: u32,
    /// Log file size (bytes) before it is rotated.
    pub log_max_bytes: u64,
    /// Rotated log files kept.
    pub log_keep: u32,
    /// Set-aside copies of damaged bytes (`*.quarantine-<time>`,
    /// `*.corrupt-<time>`) kept per session or warm store directory; the
    /// oldest go first. The copy a repair has just made is always kept.
    pub quarantine_keep: u32,
    /// Total bytes of set-aside copies kept per directory (oldest out first).
    pub quarantine_max_bytes: u64,
}

impl StoreConfig {
    /// The retention of set-aside copies.
    pub fn aside_limits(&self) -> crate::store::AsideLimits {
        crate::store::AsideLimits {
            keep: self.quarantine_keep as usize,
            max_bytes: self.quarantine_max_bytes,
        }
    }
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            snapshot_every: 16,
            log_max_bytes: 1 << 20,
            log_keep: 3,
            quarantine_keep: crate::store::AsideLimits::DEFAULT.keep as u32,
            quarantine_max_bytes: crate::store::AsideLimits::DEFAULT.max_bytes,
        }
    }
}

/// LLM endpoint settings. The LLM probe is active when `base_url` is set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Base URL of an OpenAI-compatible API (`http://localhost:8080/v1`). Env: `ROLLGRAPH_LLM_BASE_URL`.
    pub base_url: Option<String>,
    /// Model name. Env: `ROLLGRAPH_LLM_MODEL`.
    pub model: String,
    /// Name of the env var holding the API key (`ROLLGRAPH_LLM_API_KEY` always wins).
    pub api_key_env: String,
    /// Request timeout in milliseconds.
    pub timeout_ms: u64,
    /// Completion token limit.
    pub max_tokens: u32,
    /// Sampling temperature.
    pub temperature: f32,
    /// Retries on 429/5xx/timeouts.
    pub max_retries: u32,
    /// Consecutive failures that open the circuit breaker.
    pub breaker_threshold: u32,
    /// Seconds the breaker stays open before the endpoint is tried again.
    pub breaker_cooldown_s: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: None,
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_ms: 20_000,
            max_tokens: 1_200,
            temperature: 0.0,
            max_retries: 2,
            breaker_threshold: 3,
            breaker_cooldown_s: 300,
        }
    }
}

/// Embedding settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// Use the local model when it is provisioned.
    pub enabled: bool,
    /// Similarity above which a new node in the same domain is a near-duplicate.
    pub duplicate_threshold: f32,
    /// Similarity a node needs to join the focus proactively (strict).
    pub proactive_threshold: f32,
    /// Similarity a node needs to surface in an explicit query (looser).
    pub explicit_threshold: f32,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            enabled: true,
            duplicate_threshold: 0.88,
            proactive_threshold: 0.6,
            explicit_threshold: 0.35,
        }
    }
}

/// Reconciliation and graduation settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReconcileConfig {
    /// Unreconciled probes after which a checkpoint reconciliation runs.
    pub checkpoint_every: u32,
    /// Warm nodes seeded into a new session's hot graph.
    pub seed_nodes: usize,
    /// Graduation: minimum weight sustained across sessions.
    pub graduate_min_weight: f64,
    /// Graduation: minimum number of sessions that saw the node.
    pub graduate_min_sessions: usize,
    /// Graduation: days without being superseded or contradicted.
    pub graduate_stable_days: i64,
    /// Reverse flagging: days an anchor sits at its floor before archive review.
    pub archive_after_days: i64,
    /// Similarity (lexical trigrams, or embeddings when provisioned) at or
    /// above which, below `embed.duplicate_threshold`, a same-domain pair is
    /// ambiguous and goes to the adjudicator (offline: kept apart, `relates_to`).
    pub ambiguous_threshold: f32,
    /// Half-life, in days, of a warm node's weight since it was last active.
    pub warm_half_life_days: f64,
    /// Raise when a new session brings back a known node: w += reinforce × (1 − w).
    pub reinforce: f64,
}

impl Default for ReconcileConfig {
    fn default() -> Self {
        ReconcileConfig {
            checkpoint_every: 6,
            seed_nodes: 40,
            graduate_min_weight: 0.6,
            graduate_min_sessions: 3,
            graduate_stable_days: 3,
            archive_after_days: 42,
            ambiguous_threshold: 0.7,
            warm_half_life_days: 21.0,
            reinforce: 0.1,
        }
    }
}

/// Flat memory files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlatConfig {
    /// Files seeded as anchors at session start (MEMORY.md, CLAUDE.md …).
    pub seed_files: Vec<PathBuf>,
    /// File approved graduations are appended to.
    pub graduate_to: Option<PathBuf>,
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read config {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not valid TOML for this schema.
    #[error("invalid config {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
    /// Values parse but make no sense (out of range, NaN, min above max).
    #[error("invalid config: {}", problems.iter().map(|p| format!("{}:{p}", path.display())).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// One `key: what is wrong` per problem.
        problems: Vec<String>,
    },
}

/// Collects out-of-range values as `section.key = value: must be …`.
struct Check(Vec<String>);

impl Check {
    fn unit(&mut self, key: &str, v: f64) {
        if !(0.0..=1.0).contains(&v) {
            self.0.push(format!("{key} = {v}: must be between 0 and 1"));
        }
    }
    fn range(&mut self, key: &str, v: f64, lo: f64, hi: f64) {
        if !(lo..=hi).contains(&v) {
            self.0
                .push(format!("{key} = {v}: must be between {lo} and {hi}"));
        }
    }
    fn positive(&mut self, key: &str, v: f64) {
        if !(v > 0.0 && v.is_finite()) {
            self.0
                .push(format!("{key} = {v}: must be a positive number"));
        }
    }
    fn at_least(&mut self, key: &str, v: u64, min: u64) {
        if v < min {
            self.0.push(format!("{key} = {v}: must be at least {min}"));
        }
    }
    fn non_negative(&mut self, key: &str, v: i64) {
        if v < 0 {
            self.0.push(format!("{key} = {v}: must not be negative"));
        }
    }
}

impl Config {
    /// Parses a TOML string and checks every value for sense.
    pub fn from_toml(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let c: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let problems = c.problems();
        if problems.is_empty() {
            Ok(c)
        } else {
            Err(ConfigError::Invalid {
                path: path.to_owned(),
                problems,
            })
        }
    }

    /// Every value out of its range, as `section.key = value: must be …`
    /// (empty when the configuration makes sense).
    pub fn problems(&self) -> Vec<String> {
        let mut c = Check(Vec::new());
        let g = &self.gate;
        c.at_least("gate.dead_mans_switch", u64::from(g.dead_mans_switch), 1);
        c.at_least("gate.domain_window", g.domain_window as u64, 1);
        c.at_least("gate.min_entity_len", g.min_entity_len as u64, 1);
        c.at_least(
            "gate.max_reported_entities",
            g.max_reported_entities as u64,
            1,
        );
        c.at_least("gate.new_entity_points", u64::from(g.new_entity_points), 1);
        let p = &self.probe;
        c.at_least("probe.max_input_chars", p.max_input_chars as u64, 200);
        c.unit("probe.new_weight", p.new_weight);
        c.unit("probe.decision_weight", p.decision_weight);
        c.unit("probe.correction_weight", p.correction_weight);
        c.unit("probe.preference_weight", p.preference_weight);
        c.unit("probe.mention_boost", p.mention_boost);
        c.at_least("probe.max_ops", p.max_ops as u64, 1);
        let d = &self.decay;
        c.unit("decay.rate", d.rate);
        c.at_least("decay.max_distance", u64::from(d.max_distance), 1);
        c.positive("decay.recency_half_life_hours", d.recency_half_life_hours);
        c.unit("decay.recency_shield", d.recency_shield);
        c.unit("decay.time_erosion", d.time_erosion);
        c.unit("decay.anchor_floor", d.anchor_floor);
        c.unit("decay.activation_boost", d.activation_boost);
        c.unit("decay.durable_factor", d.durable_factor);
        c.unit("decay.entity_factor", d.entity_factor);
        c.unit("decay.prune_below", d.prune_below);
        c.at_least("decay.max_nodes", d.max_nodes as u64, MIN_MAX_NODES as u64);
        let r = &self.render;
        c.at_least("render.max_tokens", r.max_tokens as u64, 100);
        if r.min_tokens > r.max_tokens {
            c.0.push(format!(
                "render.min_tokens = {}: must not exceed render.max_tokens ({})",
                r.min_tokens, r.max_tokens
            ));
        }
        c.at_least("render.focus_max", r.focus_max as u64, 1);
        c.unit("render.min_weight", r.min_weight);
        let e = &self.episodes;
        c.at_least("episodes.max_chars", e.max_chars as u64, 100);
        c.at_least("episodes.session_max_bytes", e.session_max_bytes, 64 * 1024);
        c.at_least("episodes.warm_max_bytes", e.warm_max_bytes, 64 * 1024);
        c.at_least(
            "store.snapshot_every",
            u64::from(self.store.snapshot_every),
            1,
        );
        c.at_least("store.log_max_bytes", self.store.log_max_bytes, 1024);
        c.at_least(
            "store.quarantine_keep",
            u64::from(self.store.quarantine_keep),
            1,
        );
        c.at_least(
            "store.quarantine_max_bytes",
            self.store.quarantine_max_bytes,
            1024,
        );
        let l = &self.llm;
        c.at_least("llm.timeout_ms", l.timeout_ms, 1);
        c.at_least("llm.max_tokens", u64::from(l.max_tokens), 1);
        c.range("llm.temperature", f64::from(l.temperature), 0.0, 2.0);
        c.at_least("llm.breaker_threshold", u64::from(l.breaker_threshold), 1);
        let e = &self.embed;
        c.range(
            "embed.duplicate_threshold",
            f64::from(e.duplicate_threshold),
            -1.0,
            1.0,
        );
        c.range(
            "embed.proactive_threshold",
            f64::from(e.proactive_threshold),
            -1.0,
            1.0,
        );
        c.range(
            "embed.explicit_threshold",
            f64::from(e.explicit_threshold),
            -1.0,
            1.0,
        );
        let k = &self.reconcile;
        c.at_least(
            "reconcile.checkpoint_every",
            u64::from(k.checkpoint_every),
            1,
        );
        c.unit("reconcile.graduate_min_weight", k.graduate_min_weight);
        c.at_least(
            "reconcile.graduate_min_sessions",
            k.graduate_min_sessions as u64,
            1,
        );
        c.non_negative("reconcile.graduate_stable_days", k.graduate_stable_days);
        c.non_negative("reconcile.archive_after_days", k.archive_after_days);
        c.range(
            "reconcile.ambiguous_threshold",
            f64::from(k.ambiguous_threshold),
            -1.0,
            1.0,
        );
        c.positive("reconcile.warm_half_life_days", k.warm_half_life_days);
        c.unit("reconcile.reinforce", k.reinforce);
        c.0
    }

    /// Loads the config at `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::from_toml(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(error) => Err(ConfigError::Read {
                path: path.to_owned(),
                error,
            }),
        }
    }

    /// The config file in effect: `$ROLLGRAPH_CONFIG`, else `<home>/config.toml`.
    pub fn default_path(home: &Path) -> PathBuf {
        std::env::var_os("ROLLGRAPH_CONFIG")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("config.toml"))
    }

    /// Loads the config in effect and applies environment overrides.
    pub fn load_default(home: &Path) -> Result<Config, ConfigError> {
        let mut c = Config::load(&Config::default_path(home))?;
        c.apply_env();
        Ok(c)
    }

    /// Applies `ROLLGRAPH_LLM_*` environment overrides.
    pub fn apply_env(&mut self) {
        if let Some(v) = env_nonempty("ROLLGRAPH_LLM_BASE_URL") {
            self.llm.base_url = Some(v);
        }
        if let Some(v) = env_nonempty("ROLLGRAPH_LLM_MODEL") {
            self.llm.model = v;
        }
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Resolves a configured path: `~/` against `$HOME`, relative against `cwd`.
pub fn resolve_path(spec: &Path, cwd: Option<&str>) -> PathBuf {
    let s = spec.to_string_lossy();
    if let Some(rest) = s.strip_prefix("~/")
        && let Some(h) = std::env::var_os("HOME")
    {
        return PathBuf::from(h).join(rest);
    }
    if spec.is_relative()
        && let Some(c) = cwd.filter(|c| !c.trim().is_empty())
    {
        return Path::new(c).join(spec);
    }
    spec.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_matches_defaults() {
        let text = include_str!("../../../config.example.toml");
        let parsed = Config::from_toml(text, Path::new("config.example.toml"));
        assert_eq!(
            parsed.ok(),
            Some(Config::default()),
            "config.example.toml drifted from the defaults"
        );
    }

    #[test]
    fn out_of_range_values_are_named_with_file_and_key() {
        let cases = [
            ("[decay]\nmax_nodes = 0\n", "decay.max_nodes"),
            ("[decay]\nrate = -0.5\n", "decay.rate"),
            ("[decay]\nrate = nan\n", "decay.rate"),
            ("[decay]\ntime_erosion = 1.5\n", "decay.time_erosion"),
            ("[render]\nmax_tokens = 0\n", "render.max_tokens"),
            (
                "[render]\nmin_tokens = 900\nmax_tokens = 800\n",
                "render.min_tokens",
            ),
            ("[store]\nsnapshot_every = 0\n", "store.snapshot_every"),
            ("[store]\nquarantine_keep = 0\n", "store.quarantine_keep"),
            (
                "[store]\nquarantine_max_bytes = 10\n",
                "store.quarantine_max_bytes",
            ),
            ("[llm]\ntemperature = -1.0\n", "llm.temperature"),
            (
                "[reconcile]\nwarm_half_life_days = 0.0\n",
                "reconcile.warm_half_life_days",
            ),
            (
                "[decay]\nrecency_half_life_hours = inf\n",
                "decay.recency_half_life_hours",
            ),
        ];
        for (text, key) in cases {
            let err = Config::from_toml(text, Path::new("/x/config.toml"));
            let msg = err.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                msg.contains(&format!("/x/config.toml:{key}")),
                "{text:?} → {msg:?}"
            );
        }
        assert!(Config::default().problems().is_empty());
    }

    #[test]
    fn unknown_keys_are_a_clear_error() {
        let err = Config::from_toml("[decay]\nrat = 0.5\n", Path::new("c.toml"));
        let msg = err.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("rat"), "{msg}");
    }
}
