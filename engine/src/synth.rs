//! Synthetic graphs for benchmarks and load tests: realistic labels,
//! details, domains, kinds and edges (hubs, supersedes chains), generated
//! deterministically from a seed.

use chrono::{DateTime, Duration, Utc};

use crate::clock::Rng;
use crate::graph::{Domain, Edge, EdgeKind, Graph, Node, NodeId, NodeKind};

const WORDS: &[&str] = &[
    "invoice",
    "billing",
    "dunning",
    "retry",
    "webhook",
    "stripe",
    "email",
    "template",
    "migration",
    "schema",
    "postgres",
    "queue",
    "worker",
    "scheduler",
    "report",
    "export",
    "pdf",
    "tax",
    "currency",
    "ledger",
    "customer",
    "account",
    "session",
    "auth",
    "token",
    "cache",
    "index",
    "search",
    "metrics",
    "alert",
    "deploy",
    "release",
    "pipeline",
    "config",
    "feature",
    "flag",
    "audit",
    "refund",
    "payout",
    "subscription",
];
const PEOPLE: &[&str] = &[
    "Person Alpha",
    "Person Bravo",
    "Person Charlie",
    "Person Delta",
    "Person Echo",
    "Person Foxtrot",
    "Person Golf",
    "Person Hotel",
    "Person India",
    "Person Juliet",
];

/// A graph of `n` nodes, deterministic for a given `seed` and `now`.
pub fn graph(n: usize, seed: u64, now: DateTime<Utc>) -> Graph {
    let mut rng = Rng::new(seed);
    let mut g = Graph::new();
    let mut ids: Vec<NodeId> = Vec::with_capacity(n);
    let pick = |rng: &mut Rng, list: &[&'static str]| list[(rng.next_u64() as usize) % list.len()];
    for i in 0..n {
        let r = rng.next_f64();
        let (label, domain, kind) = if r < 0.08 {
            (
                format!("{} {}", pick(&mut rng, PEOPLE), i),
                Domain::Relationship,
                NodeKind::Person,
            )
        } else if r < 0.2 {
            (
                format!(
                    "{} {} feature {i}",
                    pick(&mut rng, WORDS),
                    pick(&mut rng, WORDS)
                ),
                Domain::Project,
                NodeKind::Project,
            )
        } else if r < 0.3 {
            (
                format!(
                    "Use {} for {} {i}",
                    pick(&mut rng, WORDS),
                    pick(&mut rng, WORDS)
                ),
                Domain::Technical,
                NodeKind::Decision,
            )
        } else if r < 0.36 {
            (
                format!(
                    "I prefer {} before {} {i}",
                    pick(&mut rng, WORDS),
                    pick(&mut rng, WORDS)
                ),
                Domain::Personal,
                NodeKind::Preference,
            )
        } else if r < 0.6 {
            (
                format!(
                    "src/{}/{}_{i}.rs",
                    pick(&mut rng, WORDS),
                    pick(&mut rng, WORDS)
                ),
                Domain::Technical,
                NodeKind::File,
            )
        } else {
            (
                format!("{}_{}_{i}", pick(&mut rng, WORDS), pick(&mut rng, WORDS)),
                Domain::Technical,
                NodeKind::Identifier,
            )
        };
        let Some(id) = NodeId::slug(&label) else {
            continue;
        };
        let age = Duration::minutes((rng.next_u64() % (60 * 24 * 7)) as i64);
        let mut node = Node::new(
            id.clone(),
            &label,
            domain,
            (0.05 + rng.next_f64() * 0.9).min(1.0),
            now - age,
        );
        node.kind = kind;
        node.detail = Some(format!(
            "Came up while working on the {} {} path; {} depends on it.",
            pick(&mut rng, WORDS),
            pick(&mut rng, WORDS),
            pick(&mut rng, WORDS)
        ));
        node.anchor = rng.next_f64() < 0.02;
        if node.anchor {
            node.weight = node.weight.max(0.2);
        }
        g.upsert_node(node);
        ids.push(id);
    }
    // Preferential attachment: early nodes become hubs.
    for i in 1..ids.len() {
        let links = 1 + (rng.next_u64() % 2) as usize;
        for _ in 0..links {
            let j = ((rng.next_f64().powi(2)) * i as f64) as usize;
            let kind = match rng.next_u64() % 10 {
                0 => EdgeKind::DependsOn,
                1 => EdgeKind::PartOf,
                2 => EdgeKind::Uses,
                3 => EdgeKind::Owns,
                _ => EdgeKind::RelatesTo,
            };
            let _ = g.upsert_edge(Edge {
                source: ids[i].clone(),
                target: ids[j].clone(),
                kind,
                weight: 0.2 + rng.next_f64() * 0.7,
            });
        }
    }
    // Some decisions supersede older ones.
    let decisions: Vec<NodeId> = g
        .nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Decision)
        .map(|n| n.id.clone())
        .collect();
    for pair in decisions.chunks(4) {
        if pair.len() >= 2 {
            let _ = g.upsert_edge(Edge {
                source: pair[1].clone(),
                target: pair[0].clone(),
                kind: EdgeKind::Supersedes,
                weight: 1.0,
            });
        }
    }
    g
}

/// `turns` synthetic turns of session `session` as episodes (a prompt of
/// 10–30 words and a reply of 30–80, from the same vocabulary as
/// [`graph`]), one minute apart ending at `now`; deterministic for `seed`.
pub fn episodes(
    session: &str,
    turns: u32,
    seed: u64,
    now: DateTime<Utc>,
) -> Vec<crate::episodes::Episode> {
    use crate::episodes::{Episode, Speaker};
    let mut rng = Rng::new(seed);
    let sentence = |rng: &mut Rng, words: usize| {
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[(rng.next_u64() as usize) % WORDS.len()]);
            if i % 12 == 11 {
                s.push('.');
            }
        }
        s.push('.');
        s
    };
    let mut out = Vec::with_capacity(turns as usize * 2);
    for t in 1..=turns {
        let at = now - Duration::minutes(i64::from(turns - t));
        let u = 10 + (rng.next_u64() % 21) as usize;
        let a = 30 + (rng.next_u64() % 51) as usize;
        for (speaker, n) in [(Speaker::User, u), (Speaker::Assistant, a)] {
            let text = sentence(&mut rng, n);
            out.push(Episode {
                session: session.to_owned(),
                turn: t,
                speaker,
                at,
                text,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_graph_is_valid_and_deterministic() {
        let now = DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default();
        let a = graph(500, 7, now);
        let b = graph(500, 7, now);
        assert_eq!(a.to_doc(), b.to_doc());
        assert!(a.node_count() >= 490);
        assert!(Graph::from_doc(a.to_doc()).is_ok());
    }
}
