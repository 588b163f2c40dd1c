//! `rollgraph render`, `show`, `stats` and `config`: read-only views of the
//! stored state. They never rename, truncate or rewrite a file: a damaged
//! session is recovered in memory ([`SessionView`]) and the damage reported
//! on stderr (and in `stats --json`); repairs are for writers and
//! `rollgraph doctor --repair`.

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;

use rollgraph_engine::clock;
use rollgraph_engine::graph::{Domain, NodeKind};
use rollgraph_engine::session::{RepairRecord, SessionState, SessionView, repair_records};
use rollgraph_engine::stats::Stats;
use rollgraph_engine::store::read_json;

use crate::common::{home_and_config, out, out_json, pick_session};

/// Arguments of `rollgraph render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The session (default: the most recent, preferring this directory's).
    #[arg(long)]
    pub session: Option<String>,
    /// Print `{tokens, text, focus, near, handles}` as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `rollgraph show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The session (default: the most recent, preferring this directory's).
    #[arg(long)]
    pub session: Option<String>,
    /// Only this domain (relationship, project, technical, personal).
    #[arg(long)]
    pub domain: Option<String>,
    /// Print the graph document as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `rollgraph stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `rollgraph config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the built-in defaults instead of the effective configuration.
    #[arg(long)]
    pub default: bool,
    /// Print JSON instead of TOML.
    #[arg(long)]
    pub json: bool,
}

/// Loads a session read-only and warns on stderr about any damage found.
fn view(
    home: &rollgraph_engine::store::Home,
    id: &str,
    config: rollgraph_engine::Config,
) -> Result<SessionView> {
    let v = SessionView::load(home, id, config)?;
    warn_damage(id, &v.load);
    Ok(v)
}

/// One warning on stderr for a damaged session (read-only: nothing repaired).
pub fn warn_damage(id: &str, load: &rollgraph_engine::store::LoadReport) {
    if load.damaged() {
        eprintln!(
            "warning: session {id} is damaged{}: {} (recovered in memory; nothing was changed on disk; `rollgraph doctor --repair` repairs it)",
            if load.lost { " and lost data" } else { "" },
            load.damage.join("; ")
        );
    }
}

/// `rollgraph render`.
pub fn render(args: RenderArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let id = pick_session(&home, args.session.as_deref())?;
    let session = view(&home, &id, config)?;
    let r = session.render(clock::now());
    if args.json {
        return out_json(&r);
    }
    if r.text.is_empty() {
        return out(&format!("session {id} has nothing to render yet"));
    }
    out(&format!("{}\n\n({} tokens)", r.text, r.tokens))
}

/// `rollgraph show`.
pub fn show(args: ShowArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let id = pick_session(&home, args.session.as_deref())?;
    let domain = match &args.domain {
        Some(d) => match Domain::parse(d) {
            Some(d) => Some(d),
            None => bail!("unknown domain {d:?}: use relationship, project, technical or personal"),
        },
        None => None,
    };
    let session = view(&home, &id, config)?;
    let g = &session.graph;
    if args.json {
        let mut doc = g.to_doc();
        if let Some(d) = domain {
            doc.nodes.retain(|_, n| n.domain == d);
            let keep = doc.nodes.clone();
            doc.edges.retain(|_, e| {
                keep.contains_key(e.source.as_str()) || keep.contains_key(e.target.as_str())
            });
        }
        return out_json(&doc);
    }
    let mut nodes = g.nodes();
    nodes.retain(|n| domain.is_none_or(|d| n.domain == d));
    nodes.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
    let mut s = format!(
        "session {id}: {} nodes, {} edges\n\n",
        g.node_count(),
        g.edge_count()
    );
    s.push_str(&format!(
        "{:>5}  {:<12} {:<11} {}\n",
        "w", "domain", "kind", "label — detail"
    ));
    for n in &nodes {
        let mut line = format!(
            "{:>5.2}  {:<12} {:<11} {}",
            n.weight,
            n.domain.as_str(),
            n.kind.as_str(),
            n.label
        );
        if let Some(newer) = g.superseded_by(&n.id) {
            line.push_str(&format!("  [superseded by {}]", newer.label));
        }
        if n.anchor {
            line.push_str("  [anchor]");
        }
        if let Some(d) = &n.detail {
            let d: String = d.chars().take(90).collect();
            line.push_str(&format!(" — {d}"));
        }
        s.push_str(&line);
        s.push('\n');
    }
    let decisions = nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Decision)
        .count();
    s.push_str(&format!("\n{decisions} decisions; edges by kind:"));
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for e in g.edges() {
        *kinds.entry(e.kind.as_str()).or_default() += 1;
    }
    for (k, v) in kinds {
        s.push_str(&format!(" {k} {v};"));
    }
    out(&s)
}

#[derive(Serialize)]
struct StatsOut {
    sessions: Vec<SessionStats>,
    overall: Signals,
    embeddings: String,
}

/// One line on the local embedding model, from the files alone (no load).
fn embeddings_line(config: &rollgraph_engine::Config) -> String {
    if !config.embed.enabled {
        return "off (embed.enabled = false): matching lexically".into();
    }
    let p = rollgraph_engine::embed::EmbedPaths::discover();
    if !p.ort_dylib.is_file() {
        return format!(
            "off: ONNX Runtime not found at {} (run scripts/provision.sh); matching lexically",
            p.ort_dylib.display()
        );
    }
    if !p.model_dir.join("model.onnx").is_file() {
        return format!(
            "off: model not found in {} (run scripts/provision.sh); matching lexically",
            p.model_dir.display()
        );
    }
    format!("provisioned ({})", p.model_dir.display())
}

#[derive(Serialize)]
struct SessionStats {
    session: String,
    #[serde(flatten)]
    signals: Signals,
    /// Damage found reading the session now (recovered in memory).
    damage: Vec<String>,
    /// Whether that damage lost acknowledged data.
    lost: bool,
    /// Repairs writers made, oldest first.
    repairs: Vec<RepairRecord>,
}

/// The three validation signals of the design (§10), plus their raw counters.
#[derive(Serialize)]
struct Signals {
    turns: u64,
    probes: u64,
    probes_per_turn: f64,
    llm_tokens: u64,
    injections: u64,
    mean_injection_tokens: f64,
    max_injection_tokens: u64,
    budget_fill: f64,
    expansions: u64,
    queries: u64,
    rejected_patches: u64,
    counters: Stats,
}

fn signals(s: &Stats, max_tokens: usize) -> Signals {
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    Signals {
        turns: s.turns,
        probes: s.probes,
        probes_per_turn: round(s.probe_rate()),
        llm_tokens: s.llm_prompt_tokens + s.llm_completion_tokens,
        injections: s.injections,
        mean_injection_tokens: round(s.mean_injection()),
        max_injection_tokens: s.max_injected_tokens,
        budget_fill: round(if max_tokens == 0 {
            0.0
        } else {
            s.mean_injection() / max_tokens as f64
        }),
        expansions: s.expansions,
        queries: s.queries,
        rejected_patches: s.rejected,
        counters: s.clone(),
    }
}

/// `rollgraph stats`.
pub fn stats(args: StatsArgs) -> Result<()> {
    let (home, config) = home_and_config()?;
    let ids = match &args.session {
        Some(id) => vec![pick_session(&home, Some(id))?],
        None => home.sessions(),
    };
    let mut overall = Stats::default();
    let mut rows = Vec::new();
    for id in ids {
        let Ok(dir) = home.session_dir(&id) else {
            continue;
        };
        let (damage, lost) = match SessionView::load(&home, &id, config.clone()) {
            Ok(v) => (v.load.damage, v.load.lost),
            Err(e) => (vec![e.to_string()], true),
        };
        let repairs = repair_records(&dir);
        let state: SessionState = match read_json(&dir.join("state.json")) {
            Ok(Some(s)) => s,
            Ok(None) if damage.is_empty() && repairs.is_empty() => continue,
            Ok(None) => SessionState::default(),
            Err(e) => {
                eprintln!("warning: {e}");
                SessionState::default()
            }
        };
        if !damage.is_empty() {
            eprintln!(
                "warning: session {id} is damaged: {} (`rollgraph doctor --repair` repairs it)",
                damage.join("; ")
            );
        }
        overall.add(&state.stats);
        rows.push(SessionStats {
            session: id,
            signals: signals(&state.stats, config.render.max_tokens),
            damage,
            lost,
            repairs,
        });
    }
    let report = StatsOut {
        sessions: rows,
        overall: signals(&overall, config.render.max_tokens),
        embeddings: embeddings_line(&config),
    };
    if args.json {
        return out_json(&report);
    }
    let mut s = format!(
        "{:<38} {:>6} {:>6} {:>8} {:>9} {:>8} {:>6} {:>8}\n",
        "session", "turns", "probes", "probes/t", "inj.mean", "inj.max", "fill", "expands"
    );
    let line = |name: &str, g: &Signals| {
        format!(
            "{:<38} {:>6} {:>6} {:>8.3} {:>9.1} {:>8} {:>5.0}% {:>8}\n",
            name,
            g.turns,
            g.probes,
            g.probes_per_turn,
            g.mean_injection_tokens,
            g.max_injection_tokens,
            g.budget_fill * 100.0,
            g.expansions
        )
    };
    for r in &report.sessions {
        s.push_str(&line(&r.session, &r.signals));
    }
    s.push_str(&line("overall", &report.overall));
    s.push_str(&format!(
        "LLM tokens spent: {}; patches rejected: {}; queries: {}\nembeddings: {}",
        report.overall.llm_tokens,
        report.overall.rejected_patches,
        report.overall.queries,
        report.embeddings
    ));
    out(&s)
}

/// `rollgraph config`.
pub fn config(args: ConfigArgs) -> Result<()> {
    let cfg = if args.default {
        rollgraph_engine::Config::default()
    } else {
        home_and_config()?.1
    };
    if args.json {
        return out_json(&cfg);
    }
    out(&toml::to_string_pretty(&cfg)?)
}
