//! `rollgraph bench`: measures the engine's real code paths.
//!
//! - probe rate: the example transcript replayed through the gate and the
//!   heuristic probe (target 10–15 probes per 60 turns);
//! - render: time and tokens on an N-node graph (target < 1 ms, 500–800);
//! - apply + decay per probe cycle on the same graph, in memory and through
//!   the journaled session (fsync included);
//! - query on the same graph with episode turns: in memory (index + ask),
//!   from the session's files with nothing kept (the CLI without a daemon)
//!   and with the index kept (the daemon, the MCP server), and both again
//!   with the embedding model loaded when it is provisioned.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use rollgraph_engine::config::Config;
use rollgraph_engine::probe::{HeuristicProbe, Probe, ProbeInput};
use rollgraph_engine::render::{RenderContext, render};
use rollgraph_engine::session::{Session, rules};
use rollgraph_engine::store::Home;
use rollgraph_engine::{clock, decay, patch, search, synth, transcript};

use crate::common::{out, out_json};

/// Arguments of `rollgraph bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Nodes in the synthetic graph.
    #[arg(long, default_value_t = 1000)]
    pub nodes: usize,
    /// Timed iterations per measurement.
    #[arg(long, default_value_t = 200)]
    pub iterations: usize,
    /// The transcript for the probe-rate measurement.
    #[arg(long, default_value = "examples/session.jsonl")]
    pub transcript: PathBuf,
    /// Episode turns beside the graph for the query measurement.
    #[arg(long, default_value_t = 5000)]
    pub episode_turns: u32,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Timing summary in microseconds.
#[derive(Debug, Serialize)]
pub struct Timing {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Mean.
    pub mean_us: f64,
}

fn timing(mut samples: Vec<f64>) -> Timing {
    samples.sort_by(f64::total_cmp);
    let q = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    let mean = samples.iter().sum::<f64>() / samples.len().max(1) as f64;
    let r = |x: f64| (x * 10.0).round() / 10.0;
    Timing {
        p50_us: r(q(0.5)),
        p99_us: r(q(0.99)),
        mean_us: r(mean),
    }
}

/// What `bench --json` prints.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// Turns in the transcript.
    pub turns: u64,
    /// Probes the gate fired.
    pub probes: u64,
    /// Probes per 60 turns.
    pub probes_per_60_turns: f64,
    /// Nodes in the synthetic graph.
    pub nodes: usize,
    /// Edges in the synthetic graph.
    pub edges: usize,
    /// Render time.
    pub render: Timing,
    /// Render size.
    pub render_tokens: usize,
    /// Heuristic probe time (one turn) on the graph.
    pub probe: Timing,
    /// Validate + apply + decay in memory.
    pub apply_decay: Timing,
    /// The whole journaled cycle (validate, fsynced journal append, apply, decay, render, state files).
    pub session_cycle: Timing,
    /// Episode turns searched beside the graph.
    pub episode_turns: u32,
    /// `memory_query` without the embedding model, in memory: index build, ranking and packing to 800 tokens.
    pub query: Timing,
    /// Of which building the index over the nodes and turns.
    pub query_index: Timing,
    /// The same from the session's files with nothing kept (`rollgraph query` without a daemon):
    /// open the session (snapshot, lock), read its episode log, index, ask, count the query.
    pub query_cold: Timing,
    /// The same in a process that kept the index (the daemon, the MCP server) while the files
    /// are unchanged: lock, check the files' stamps, ask, count the query.
    pub query_warm: Timing,
    /// `query_cold` with the embedding model loaded (absent when it is not provisioned).
    pub query_model_cold: Option<Timing>,
    /// `query_warm` with the embedding model loaded (absent when it is not provisioned).
    pub query_model_warm: Option<Timing>,
    /// Bytes of a session's episode log per 1,000 turns (as written).
    pub episode_bytes_per_1000_turns: u64,
}

/// Runs the benchmark.
pub fn run(args: BenchArgs) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let home = Home::at(tmp.path());
    let config = Config::default();
    let n = args.iterations.max(10);

    // 1. Probe rate on the example transcript.
    let t = rollgraph_engine::plain::read_any(&args.transcript).with_context(|| {
        format!(
            "reading {} (run from the repository root or pass --transcript)",
            args.transcript.display()
        )
    })?;
    let mut session = Session::open(&home, "bench-replay", config.clone())?;
    session.state.cwd = t.cwd.clone();
    let mut probe = HeuristicProbe::new(config.probe.clone());
    crate::replay::drive(&mut session, &t, &mut probe, false, false)?;
    let (turns, probes) = (session.state.stats.turns, session.state.stats.probes);
    drop(session);

    // 2. Render on a synthetic graph.
    let now = clock::parse_time("2026-11-02T12:00:00Z").unwrap_or_else(clock::now);
    let g = synth::graph(args.nodes, 42, now);
    let focus: Vec<_> = g
        .nodes()
        .iter()
        .filter(|n| n.weight > 0.7)
        .take(5)
        .map(|n| n.id.clone())
        .collect();
    let ctx = RenderContext {
        session: "bench",
        turn: 42,
        now,
    };
    let first = render(&g, &focus, &ctx, &config.render);
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Instant::now();
        let r = render(&g, &focus, &ctx, &config.render);
        samples.push(s.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(r);
    }
    let render_t = timing(samples);

    // 3. Probe, then apply + decay, on the same graph with real turns.
    let turns_text: Vec<transcript::Turn> = t.turns().cloned().collect();
    let rules = rules(&config);
    let mut probe_samples = Vec::with_capacity(n);
    let mut apply_samples = Vec::with_capacity(n);
    for i in 0..n {
        let turn = &turns_text[i % turns_text.len()];
        let input = ProbeInput {
            session: "bench",
            probe_id: format!("bench-{i}"),
            turns: std::slice::from_ref(turn),
            graph: &g,
            now,
            root: t.cwd.as_deref(),
            asked: None,
        };
        let s = Instant::now();
        let out_p = probe.probe(&input)?;
        probe_samples.push(s.elapsed().as_secs_f64() * 1e6);
        let s = Instant::now();
        let prepared = patch::prepare(&g, &out_p.patch.ops, &rules)?;
        let focus = prepared.report().added_nodes.clone();
        let validate = s.elapsed().as_secs_f64() * 1e6;
        // Committing and decaying mutate the graph: time them on a copy made outside the clock.
        let mut g2 = g.clone();
        let s = Instant::now();
        patch::commit(&mut g2, prepared);
        decay::step(&mut g2, &focus, now, &config.decay);
        apply_samples.push(validate + s.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(g2);
    }

    // 4. The journaled cycle through a session holding the synthetic graph.
    let mut session = Session::open(&home, "bench-cycle", config.clone())?;
    session.reset(g.to_doc(), now)?;
    let mut cycle_samples = Vec::with_capacity(n.min(100));
    for i in 0..n.min(100) {
        let turn = turns_text[i % turns_text.len()].clone();
        session.observe(turn);
        let s = Instant::now();
        session.cycle(&mut probe, now)?;
        cycle_samples.push(s.elapsed().as_secs_f64() * 1e6);
    }

    // 5. Query: the graph and its episode turns, at the MCP default budget.
    let eps = synth::episodes("bench", args.episode_turns, 43, now);
    let log = tmp.path().join("episodes.jsonl");
    rollgraph_engine::episodes::append(&log, &eps, u64::MAX)?;
    let log_bytes = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let questions = [
        "which invoice billing decision did we make before",
        "who owns the webhook retries",
        "what is the limit for the ledger export",
        "dunning schedule",
    ];
    let asks = n.min(40);
    // 5a. In memory: index the graph and the turns, then ask.
    let mut q_samples = Vec::new();
    let mut build_samples = Vec::new();
    for i in 0..asks {
        let s = Instant::now();
        let sources = search::Sources {
            graphs: vec![search::GraphSource {
                name: "session".into(),
                graph: &g,
            }],
            episodes: eps.clone(),
        };
        let idx = search::SearchIndex::build(sources);
        build_samples.push(s.elapsed().as_secs_f64() * 1e6);
        let a = idx.search(
            questions[i % questions.len()],
            &search::SearchOptions::at(now),
            None,
        );
        q_samples.push(s.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(a);
    }
    // 5b. From the files, as `rollgraph query` and the daemon run it: a
    // session holding the graph (snapshot) and the turns (its episode log).
    let mut s = Session::open(&home, "bench-query", config.clone())?;
    s.reset(g.to_doc(), now)?;
    rollgraph_engine::episodes::append(&s.path(rollgraph_engine::episodes::FILE), &eps, u64::MAX)?;
    drop(s);
    // A daemon keeps an index only from files left alone for a moment.
    std::thread::sleep(crate::query::kept::SETTLE + std::time::Duration::from_millis(200));
    crate::query::keep_indexes();
    let mut lexical = config.clone();
    lexical.embed.enabled = false;
    let ask = |i: usize| crate::query::Ask {
        text: questions[i % questions.len()].to_owned(),
        limit: 12,
        budget: search::DEFAULT_BUDGET,
        scope: search::Scope::SessionProject,
    };
    let files = |config: &Config, kept: bool| -> Result<Vec<f64>> {
        let mut samples = Vec::with_capacity(asks);
        let hits = crate::query::kept::hits();
        for i in 0..asks {
            if !kept {
                crate::query::kept::clear();
            }
            let s = Instant::now();
            let a = crate::query::query_direct(
                &home,
                config,
                "bench-query",
                &ask(i),
                now,
                std::time::Duration::from_secs(5),
                true,
            )?;
            samples.push(s.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(a);
        }
        let answered_kept = crate::query::kept::hits() - hits;
        // Honest labels: the warm runs must all have come from the kept index
        // (but the first, which builds it), the cold ones none.
        let want = if kept { asks as u64 - 1 } else { 0 };
        if answered_kept != want {
            anyhow::bail!(
                "{answered_kept} of {asks} questions came from a kept index (expected {want})"
            );
        }
        if kept {
            samples.remove(0);
        }
        Ok(samples)
    };
    crate::query::kept::clear();
    let cold = files(&lexical, false)?;
    crate::query::kept::clear();
    let warm = files(&lexical, true)?;
    // 5c. With the local embedding model, when it is provisioned: loaded
    // once, the graph's vectors made once (as in the daemon and the MCP
    // server), then each question embedded and its close nodes added.
    let (model_cold, model_warm) =
        if config.embed.enabled && crate::common::with_semantic(&config, |sem| sem.is_some()) {
            crate::query::kept::clear();
            // Loads the model and embeds the graph's nodes, untimed.
            files(&config, true)?;
            crate::query::kept::clear();
            let cold = files(&config, false)?;
            crate::query::kept::clear();
            let warm = files(&config, true)?;
            (Some(timing(cold)), Some(timing(warm)))
        } else {
            (None, None)
        };
    crate::query::kept::clear();

    let report = BenchReport {
        turns,
        probes,
        probes_per_60_turns: if turns > 0 {
            (probes as f64 * 600.0 / turns as f64).round() / 10.0
        } else {
            0.0
        },
        nodes: g.node_count(),
        edges: g.edge_count(),
        render: render_t,
        render_tokens: first.tokens,
        probe: timing(probe_samples),
        apply_decay: timing(apply_samples),
        session_cycle: timing(cycle_samples),
        episode_turns: args.episode_turns,
        query: timing(q_samples),
        query_index: timing(build_samples),
        query_cold: timing(cold),
        query_warm: timing(warm),
        query_model_cold: model_cold,
        query_model_warm: model_warm,
        episode_bytes_per_1000_turns: log_bytes * 1000 / u64::from(args.episode_turns.max(1)),
    };
    if args.json {
        return out_json(&report);
    }
    let row = |name: &str, t: &Timing| {
        format!(
            "{name:<40} p50 {:>9.1} µs   p99 {:>9.1} µs   mean {:>9.1} µs\n",
            t.p50_us, t.p99_us, t.mean_us
        )
    };
    let mut s = format!(
        "probe rate: {} probes over {} turns = {:.1} per 60 turns (target 10–15)\n\
         graph: {} nodes, {} edges; render {} tokens (target 500–800)\n\n",
        report.probes,
        report.turns,
        report.probes_per_60_turns,
        report.nodes,
        report.edges,
        report.render_tokens
    );
    s.push_str(&row("render (target < 1 ms)", &report.render));
    s.push_str(&row("heuristic probe, one turn", &report.probe));
    s.push_str(&row(
        "validate + apply + decay (in memory)",
        &report.apply_decay,
    ));
    s.push_str(&row(
        "journaled session cycle (fsync, render)",
        &report.session_cycle,
    ));
    s.push_str(&format!(
        "\nquery on {} nodes and {} turns (target p50 20 ms, 60 ms with the model):\n",
        report.nodes, report.episode_turns
    ));
    s.push_str(&row("in memory: index + ask", &report.query));
    s.push_str(&row("  of which index build", &report.query_index));
    s.push_str(&row(
        "from files, cold (CLI without daemon)",
        &report.query_cold,
    ));
    s.push_str(&row(
        "from files, kept index (daemon, MCP)",
        &report.query_warm,
    ));
    match (&report.query_model_cold, &report.query_model_warm) {
        (Some(c), Some(w)) => {
            s.push_str(&row("  with the model, cold", c));
            s.push_str(&row("  with the model, kept index", w));
        }
        _ => s.push_str("  (the embedding model is not provisioned: no model timings)\n"),
    }
    s.push_str(&format!(
        "episode log: {} bytes per 1,000 turns\n",
        report.episode_bytes_per_1000_turns
    ));
    out(&s)
}
