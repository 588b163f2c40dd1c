//! Reconciliation benchmark: merge a 2,000-node hot graph into a
//! 20,000-node warm graph without an LLM or embedder (target: under 1 s),
//! and load a 20,000-node warm store from disk.
//!
//! Run: `cargo bench -p rollgraph-engine --bench reconcile`
//! (`-- --quick` for one round instead of the best of five).
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use rollgraph_engine::clock::Rng;
use rollgraph_engine::config::Config;
use rollgraph_engine::graduate::{self, TemplateDrafter};
use rollgraph_engine::graph::{Domain, Edge, EdgeKind, Graph, Node, NodeId, NodeKind, Provenance};
use rollgraph_engine::lifecycle;
use rollgraph_engine::reconcile::{self, Lexical, OfflineAdjudicator};
use rollgraph_engine::store::Home;
use rollgraph_engine::warm::{GLOBAL_KEY, WarmEntry, WarmStore};

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ren", "sa", "tor", "vel", "qu", "an", "bri", "cos", "dun", "el", "fa",
    "gri", "hol", "ix", "jun", "ler", "mon", "nep", "or", "pax", "ry",
];
const KINDS: [NodeKind; 6] = [
    NodeKind::Entity,
    NodeKind::Decision,
    NodeKind::Fact,
    NodeKind::File,
    NodeKind::Identifier,
    NodeKind::Person,
];

fn word(rng: &mut Rng) -> String {
    let n = 2 + (rng.next_u64() % 2) as usize;
    (0..n)
        .map(|_| SYLLABLES[(rng.next_u64() % SYLLABLES.len() as u64) as usize])
        .collect()
}

fn label(rng: &mut Rng) -> String {
    let n = 1 + (rng.next_u64() % 3) as usize;
    let words: Vec<String> = (0..n).map(|_| word(rng)).collect();
    words.join(" ")
}

fn t0() -> DateTime<Utc> {
    DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
}

fn make_node(rng: &mut Rng, label: &str, session: &str) -> Option<Node> {
    let id = NodeId::slug(label)?;
    let mut n = Node::new(
        id,
        label,
        Domain::ALL[(rng.next_u64() % 4) as usize],
        0.2 + 0.8 * rng.next_f64(),
        t0(),
    );
    n.kind = KINDS[(rng.next_u64() % KINDS.len() as u64) as usize];
    n.detail = Some(format!("{label} came up while working on {}", word(rng)));
    n.provenance.push(Provenance {
        session: session.to_owned(),
        first_turn: 1,
        last_turn: 5,
        mentions: 2,
    });
    Some(n)
}

fn random_graph(rng: &mut Rng, nodes: usize, edges: usize, session: &str) -> Graph {
    let mut g = Graph::new();
    let mut names = std::collections::HashSet::new();
    while g.node_count() < nodes {
        let l = label(rng);
        if let Some(n) = make_node(rng, &l, session)
            && !g.contains(&n.id)
            && names.insert(rollgraph_engine::graph::normalize_name(&l))
        {
            g.upsert_node(n);
        }
    }
    add_edges(rng, &mut g, edges);
    g
}

fn add_edges(rng: &mut Rng, g: &mut Graph, edges: usize) {
    let ids: Vec<NodeId> = g.nodes().iter().map(|n| n.id.clone()).collect();
    let mut tries = 0;
    while g.edge_count() < edges && tries < edges * 4 {
        tries += 1;
        let a = &ids[(rng.next_u64() % ids.len() as u64) as usize];
        let b = &ids[(rng.next_u64() % ids.len() as u64) as usize];
        let kind = EdgeKind::ALL[(rng.next_u64() % 8) as usize];
        let _ = g.upsert_edge(Edge {
            source: a.clone(),
            target: b.clone(),
            kind,
            weight: rng.next_f64(),
        });
    }
}

/// A hot graph: 40 % known ids, 15 % variants of known labels (plural,
/// case), 45 % new; its own edges among them.
fn hot_graph(rng: &mut Rng, warm: &Graph, nodes: usize) -> Graph {
    let warm_nodes = warm.nodes();
    let mut g = Graph::new();
    let mut i = 0;
    while g.node_count() < nodes {
        i += 1;
        let pick = warm_nodes[(rng.next_u64() % warm_nodes.len() as u64) as usize];
        let n = match i % 20 {
            0..=7 => {
                let mut n = pick.clone();
                n.weight = rng.next_f64();
                n.provenance = vec![Provenance {
                    session: "hot".into(),
                    first_turn: 1,
                    last_turn: 9,
                    mentions: 3,
                }];
                Some(n)
            }
            8..=10 => {
                let l = format!("{}s", pick.label.to_uppercase());
                make_node(rng, &l, "hot").map(|mut n| {
                    n.domain = pick.domain;
                    n.kind = pick.kind;
                    n
                })
            }
            _ => {
                let l = label(rng);
                make_node(rng, &l, "hot")
            }
        };
        if let Some(n) = n
            && !g.contains(&n.id)
        {
            g.upsert_node(n);
        }
    }
    add_edges(rng, &mut g, nodes * 3 / 2);
    g
}

fn best(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

fn median(times: &[Duration]) -> Duration {
    let mut v = times.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 1 } else { 5 };
    let mut rng = Rng::new(42);
    let config = Config::default();
    let build = Instant::now();
    let warm = random_graph(&mut rng, 20_000, 30_000, "warm");
    let hot = hot_graph(&mut rng, &warm, 2_000);
    println!(
        "graphs: warm {} nodes / {} edges, hot {} nodes / {} edges (built in {:.1} s)",
        warm.node_count(),
        warm.edge_count(),
        hot.node_count(),
        hot.edge_count(),
        build.elapsed().as_secs_f64()
    );

    // 1. The pure merge, as the reconciler runs it (lexical, offline).
    let meta = Default::default();
    let ctx = lifecycle::merge_context(&config, "hot", t0());
    let mut merge_times = Vec::new();
    let mut last = None;
    for _ in 0..rounds {
        let start = Instant::now();
        let out = reconcile::reconcile(
            &hot,
            &warm,
            &meta,
            &ctx,
            &mut Lexical,
            &mut OfflineAdjudicator,
        );
        merge_times.push(start.elapsed());
        last = Some(out);
    }
    let Some((entry, report)) = last else { return };
    println!(
        "merge result: {} merged by id, {} aliased, {} added, {} ambiguous ({} related), {} edges added, {} nodes changed",
        report.merged,
        report.aliased,
        report.added,
        report.ambiguous,
        report.related,
        report.edges_added,
        entry.nodes.len()
    );

    // 2. On disk: a 20,000-node warm store, loaded, merged into, journaled, flagged.
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            println!("no temp dir: {e}");
            return;
        }
    };
    let home = Home::at(dir.path());
    let setup = (|| -> Result<(), Box<dyn std::error::Error>> {
        let mut store = WarmStore::open(&home, GLOBAL_KEY)?;
        store.commit(WarmEntry {
            cause: "bench".into(),
            nodes: warm.nodes().into_iter().cloned().collect(),
            edges: warm.edges().into_iter().cloned().collect(),
            ..WarmEntry::default()
        })?;
        store.snapshot()?;
        Ok(())
    })();
    if let Err(e) = setup {
        println!("could not write the warm store: {e}");
        return;
    }
    let snap_bytes = std::fs::metadata(dir.path().join("warm/global/snapshot.json"))
        .map(|m| m.len())
        .unwrap_or(0);
    let mut load_times = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        match WarmStore::open(&home, GLOBAL_KEY) {
            Ok(s) => {
                load_times.push(start.elapsed());
                assert_eq!(s.graph.node_count(), 20_000);
            }
            Err(e) => {
                println!("load failed: {e}");
                return;
            }
        }
    }
    let mut full_times = Vec::new();
    let mut flag_times = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let r = (|| -> Result<Duration, Box<dyn std::error::Error>> {
            let mut store = WarmStore::open(&home, GLOBAL_KEY)?;
            let (entry, _) = reconcile::reconcile(
                &hot,
                &store.graph,
                &store.meta,
                &ctx,
                &mut Lexical,
                &mut OfflineAdjudicator,
            );
            store.commit(entry)?;
            let f = Instant::now();
            graduate::flag(&home, &store, &config, t0(), &mut TemplateDrafter)?;
            Ok(f.elapsed())
        })();
        match r {
            Ok(f) => {
                full_times.push(start.elapsed());
                flag_times.push(f);
            }
            Err(e) => {
                println!("reconcile into the store failed: {e}");
                return;
            }
        }
    }

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!();
    println!(
        "{:<58} {:>10} {:>10}",
        "step (2,000 hot → 20,000 warm, no LLM, no embedder)", "best ms", "median ms"
    );
    let row = |name: &str, t: &[Duration]| {
        println!("{:<58} {:>10.1} {:>10.1}", name, ms(best(t)), ms(median(t)))
    };
    row("reconcile (pure merge)", &merge_times);
    row(
        &format!(
            "warm store load, 20,000 nodes ({:.1} MB snapshot)",
            snap_bytes as f64 / 1e6
        ),
        &load_times,
    );
    row(
        "load + reconcile + journal (fsync) + graduation flags",
        &full_times,
    );
    row("  of which graduation/archive flag scan", &flag_times);
    println!("\ntarget: reconcile under 1,000 ms");
}
