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
    /// Soft triggers (new entity, domain shift) wait until this many quiet
    /// turns have passed since the last probe; their names are kept and fire
    /// then. Decisions and corrections always fire at once.
    pub soft_quiet_turns: u32,
    /// Signal points new names need to fire (a person, project or product is 2, a file or identifier 1).
    pub new_entity_points: u32,
    /// Least score the dominant domain needs (and lead over the runner-up) to count as a shift.
    pub domain_min_score: u32,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            dead_mans_switch: 8,
            domain_window: 3,
            min_entity_len: 3,
            max_reported_entities: 8,
            soft_quiet_turns: 2,
            new_entity_points: 2,
            domain_min_score: 5,
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
    /// Decisions, corrections and preferences in force decay this much slower (rate × factor).
    pub durable_factor: f64,
    /// People and projects decay this much slower (rate × factor).
    pub entity_factor: f64,
    /// Non-anchor nodes under this weight are pruned when the graph is over `max_nodes`.
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
            edges_per_node: 3,
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
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            snapshot_every: 16,
            log_max_bytes: 1 << 20,
            log_keep: 3,
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
}

impl Config {
    /// Parses a TOML string.
    pub fn from_toml(text: &str, path: &Path) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })
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
    fn unknown_keys_are_a_clear_error() {
        let err = Config::from_toml("[decay]\nrat = 0.5\n", Path::new("c.toml"));
        let msg = err.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("rat"), "{msg}");
    }
}
