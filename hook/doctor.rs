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
    /// Repair what the state check finds: damaged sessions and warm stores
    /// (bad lines quarantined, snapshots rebuilt) and files or directories
    /// readable by others (set to 0600 / 0700).
    #[arg(long)]
    pub repair: bool,
}

/// The state directory's health.
#[derive(Debug, Default, Serialize)]
pub struct StateCheck {
    /// Sessions read.
    pub sessions: usize,
    /// Sessions found damaged (read-only check), with what is wrong.
    pub damaged: Vec<SessionDamage>,
    /// Repairs made by this run (`--repair`).
    pub repaired: Vec<String>,
    /// Repairs writers made earlier, recorded in the sessions' `repairs.jsonl`.
    pub past_repairs: Vec<PastRepair>,
    /// Paths under the home that others can read, write or enter.
    pub wide_permissions: Vec<String>,
    /// Paths whose permissions this run narrowed (`--repair`).
    pub permissions_fixed: usize,
    /// Daemon jobs set aside after failing twice (`spool/<session>.failed`).
    pub set_aside_jobs: Vec<String>,
    /// Set-aside copies of damaged bytes (`*.quarantine-*`, `*.corrupt-*`)
    /// under the sessions and warm stores, after this run.
    pub quarantine_files: usize,
    /// Their bytes in all.
    pub quarantine_bytes: u64,
    /// Directories holding more copies than `store.quarantine_keep` /
    /// `store.quarantine_max_bytes` allow (`--repair` removes the oldest).
    pub quarantine_over_limit: Vec<String>,
}

/// A damaged session.
#[derive(Debug, Serialize)]
pub struct SessionDamage {
    /// The session.
    pub session: String,
    /// What is wrong.
    pub damage: Vec<String>,
    /// Whether acknowledged data is lost (not just rebuilt).
    pub lost: bool,
}

/// A repair recorded by a writer.
#[derive(Debug, Serialize)]
pub struct PastRepair {
    /// The session.
    pub session: String,
    /// The record.
    #[serde(flatten)]
    pub record: rollgraph_engine::session::RepairRecord,
}

/// Paths under `root` (not following links, bounded) whose mode lets others in.
pub fn wide_permissions(root: &std::path::Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![(root.to_owned(), 0usize)];
    let mut seen = 0usize;
    while let Some((p, depth)) = stack.pop() {
        seen += 1;
        if seen > 200_000 {
            break;
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_symlink() {
            continue;
        }
        let mode = m.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            out.push((p.clone(), mode));
        }
        if m.is_dir() && depth < 8 {
            for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// Checks (and with `repair`, repairs) the state directory.
pub fn check_state(
    home: &rollgraph_engine::store::Home,
    config: &rollgraph_engine::Config,
    repair: bool,
) -> StateCheck {
    use rollgraph_engine::session::{Session, SessionView, repair_records};
    use std::os::unix::fs::PermissionsExt;
    let mut c = StateCheck::default();
    for id in home.sessions() {
        c.sessions += 1;
        let Ok(dir) = home.session_dir(&id) else {
            continue;
        };
        match SessionView::load(home, &id, config.clone()) {
            Ok(v) if v.load.damaged() => c.damaged.push(SessionDamage {
                session: id.clone(),
                damage: v.load.damage.clone(),
                lost: v.load.lost,
            }),
            Ok(_) => {}
            Err(e) => c.damaged.push(SessionDamage {
                session: id.clone(),
                damage: vec![e.to_string()],
                lost: true,
            }),
        }
        if repair && c.damaged.last().is_some_and(|d| d.session == id) {
            match Session::open(home, &id, config.clone()) {
                Ok(s) => c
                    .repaired
                    .push(format!("session {id}: {}", s.load.summary())),
                Err(e) => c.repaired.push(format!("session {id}: NOT repaired: {e}")),
            }
        }
        for record in repair_records(&dir) {
            c.past_repairs.push(PastRepair {
                session: id.clone(),
                record,
            });
        }
    }
    for session in crate::spool::sessions(home)
        .into_iter()
        .chain(home.sessions())
    {
        for j in crate::spool::set_aside_jobs(home, &session) {
            let line = format!(
                "session {session}: {} job of {}: {}",
                j["kind"].as_str().unwrap_or("?"),
                j["ts"].as_str().unwrap_or("?"),
                j["reason"].as_str().unwrap_or("?")
            );
            if !c.set_aside_jobs.contains(&line) {
                c.set_aside_jobs.push(line);
            }
        }
    }
    if repair {
        // Warm stores repair themselves on a writer's open.
        for key in rollgraph_engine::warm::WarmStore::keys(home) {
            match rollgraph_engine::warm::WarmStore::open(home, &key) {
                Ok(s) if !s.load.restored.is_empty() => c
                    .repaired
                    .push(format!("warm store {key}: {}", s.load.restored.join("; "))),
                Ok(_) => {}
                Err(e) => c
                    .repaired
                    .push(format!("warm store {key}: NOT repaired: {e}")),
            }
        }
    }
    // Set-aside copies, bounded per directory: reported, and with --repair
    // the oldest beyond the limits removed (the newest is always kept).
    let limits = config.store.aside_limits();
    let mut dirs: Vec<std::path::PathBuf> = home
        .sessions()
        .iter()
        .filter_map(|id| home.session_dir(id).ok())
        .collect();
    dirs.extend(
        rollgraph_engine::warm::WarmStore::keys(home)
            .iter()
            .filter_map(|k| rollgraph_engine::warm::WarmStore::dir_of(home, k).ok()),
    );
    for dir in dirs {
        if repair {
            match rollgraph_engine::store::prune_aside(&dir, &limits, &[]) {
                Ok(removed) => {
                    if let Some(r) = rollgraph_engine::store::pruned_summary(&removed, &limits) {
                        c.repaired.push(format!("{}: {r}", dir.display()));
                    }
                }
                Err(e) => c
                    .repaired
                    .push(format!("{}: NOT pruned: {e}", dir.display())),
            }
        }
        let copies = rollgraph_engine::store::aside_copies(&dir);
        let bytes: u64 = copies.iter().map(|c| c.1).sum();
        c.quarantine_files += copies.len();
        c.quarantine_bytes += bytes;
        if copies.len() > 1 && (copies.len() > limits.keep || bytes > limits.max_bytes) {
            c.quarantine_over_limit.push(format!(
                "{} ({} files, {bytes} bytes)",
                dir.display(),
                copies.len()
            ));
        }
    }
    for (p, mode) in wide_permissions(home.root()) {
        if repair {
            let narrow = if p.is_dir() { 0o700 } else { mode & 0o700 };
            if std::fs::set_permissions(&p, std::fs::Permissions::from_mode(narrow)).is_ok() {
                c.permissions_fixed += 1;
                continue;
            }
        }
        c.wide_permissions
            .push(format!("{} ({:o})", p.display(), mode));
    }
    c
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
    /// The state directory: damage, repairs, permissions.
    pub state: StateCheck,
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
        state: check_state(&home, &config, args.repair),
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
    s.push_str(&format!("embeddings: {}\n", r.embeddings));
    let st = &r.state;
    s.push_str(&format!(
        "state:      {} sessions, {} damaged, {} repaired now, {} repairs recorded earlier\n",
        st.sessions,
        st.damaged.len(),
        st.repaired.len(),
        st.past_repairs.len()
    ));
    for d in &st.damaged {
        s.push_str(&format!(
            "  damaged:  session {}{}: {}\n",
            d.session,
            if d.lost { " (data lost)" } else { "" },
            d.damage.join("; ")
        ));
    }
    for line in &st.repaired {
        s.push_str(&format!("  repaired: {line}\n"));
    }
    if !st.damaged.is_empty() && st.repaired.is_empty() {
        s.push_str("  run `rollgraph doctor --repair` to repair (bad bytes are kept in quarantine files)\n");
    }
    for j in &st.set_aside_jobs {
        s.push_str(&format!("  set aside: {j}\n"));
    }
    if st.quarantine_files > 0 {
        s.push_str(&format!(
            "quarantine: {} set-aside copies, {} bytes\n",
            st.quarantine_files, st.quarantine_bytes
        ));
    }
    for d in &st.quarantine_over_limit {
        s.push_str(&format!(
            "  over the retention limit (`rollgraph doctor --repair` removes the oldest): {d}\n"
        ));
    }
    if st.permissions_fixed > 0 {
        s.push_str(&format!(
            "permissions: narrowed {} paths to this user only\n",
            st.permissions_fixed
        ));
    }
    if st.wide_permissions.is_empty() {
        s.push_str("permissions: private (0700 / 0600)");
    } else {
        s.push_str(&format!(
            "permissions: {} paths readable by others (`rollgraph doctor --repair` narrows them): {}",
            st.wide_permissions.len(),
            st.wide_permissions
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    s
}
