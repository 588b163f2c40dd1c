//! Distance-from-focus decay with a time floor and anchor floors (§4).
//!
//! After each probe cycle the focus is the set of nodes the cycle touched
//! plus the nodes the turn mentioned. Focus nodes are activated; every other
//! node decays by how far it is from the focus, shielded by how recently it
//! was activated. Anchors never fall below the floor. The step is a pure
//! function of the graph, the focus, the clock and the config, so replaying
//! the journal reproduces it exactly.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::DecayConfig;
use crate::graph::{Graph, NodeId, NodeKind};

/// What a decay step did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecayReport {
    /// Nodes activated (the focus).
    pub activated: usize,
    /// Nodes whose weight went down.
    pub decayed: usize,
    /// Anchors held at their floor.
    pub floored: usize,
    /// Nodes pruned because the graph was over its size limit.
    pub pruned: Vec<NodeId>,
}

/// The multiplier a node at `distance` hops (None = disconnected/far) with
/// `age_hours` since activation gets.
pub fn factor(cfg: &DecayConfig, distance: Option<u32>, age_hours: f64) -> f64 {
    factor_scaled(cfg, distance, age_hours, 1.0)
}

/// [`factor`] with the rate (and time erosion) scaled by `resistance` (1 = none).
pub fn factor_scaled(
    cfg: &DecayConfig,
    distance: Option<u32>,
    age_hours: f64,
    resistance: f64,
) -> f64 {
    let max_d = cfg.max_distance.max(1) as f64;
    let distance_factor = match distance {
        Some(d) => (d as f64 / max_d).min(1.0),
        None => 1.0,
    };
    let age = age_hours.max(0.0);
    let recency = if cfg.recency_half_life_hours > 0.0 {
        (-(age / cfg.recency_half_life_hours) * std::f64::consts::LN_2).exp()
    } else {
        0.0
    };
    let shield = 1.0 - cfg.recency_shield.clamp(0.0, 1.0) * recency;
    let r = resistance.clamp(0.0, 1.0);
    let time_factor = 1.0 - cfg.time_erosion.clamp(0.0, 1.0) * r * (1.0 - recency);
    ((1.0 - cfg.rate.clamp(0.0, 1.0) * r * distance_factor * shield) * time_factor).clamp(0.0, 1.0)
}

/// Activates `focus` and decays every other node. Deterministic.
pub fn step(
    graph: &mut Graph,
    focus: &[NodeId],
    now: DateTime<Utc>,
    cfg: &DecayConfig,
) -> DecayReport {
    let mut report = DecayReport::default();
    let distances = graph.distances(focus, cfg.max_distance);
    // Durable kinds resist decay while in force; a superseded decision is history and fades normally.
    let superseded: std::collections::HashSet<NodeId> = graph
        .edges_unordered()
        .filter(|e| e.kind == crate::graph::EdgeKind::Supersedes)
        .map(|e| e.target.clone())
        .collect();
    for node in graph.nodes_mut() {
        let d = distances.get(&node.id).copied();
        if d == Some(0) {
            node.weight =
                (node.weight + cfg.activation_boost * (1.0 - node.weight)).clamp(0.0, 1.0);
            node.last_activated = now.max(node.last_activated);
            report.activated += 1;
            continue;
        }
        let age_hours = (now - node.last_activated).num_milliseconds() as f64 / 3_600_000.0;
        let resistance = match node.kind {
            _ if superseded.contains(&node.id) => 1.0,
            // Rules, how-tos and facts hold until changed, like decisions.
            NodeKind::Decision
            | NodeKind::Correction
            | NodeKind::Preference
            | NodeKind::Restriction
            | NodeKind::Procedure
            | NodeKind::Fact => cfg.durable_factor,
            NodeKind::Person | NodeKind::Project => cfg.entity_factor,
            _ => 1.0,
        };
        let mut w = node.weight * factor_scaled(cfg, d, age_hours, resistance);
        if node.anchor && w < cfg.anchor_floor {
            w = cfg.anchor_floor.max(0.0);
            report.floored += 1;
        }
        if w < node.weight {
            report.decayed += 1;
        }
        node.weight = w.clamp(0.0, 1.0);
    }
    report.pruned = prune(graph, cfg);
    report
}

/// When the graph is over `max_nodes`: drops every non-anchor node under
/// `prune_below` outside supersedes chains (the dust goes at once, leaving
/// headroom), then the weakest others while still over the limit.
fn prune(graph: &mut Graph, cfg: &DecayConfig) -> Vec<NodeId> {
    let over = graph.node_count().saturating_sub(cfg.max_nodes);
    if over == 0 {
        return Vec::new();
    }
    let mut candidates: Vec<(f64, NodeId)> = graph
        .nodes_unordered()
        .filter(|n| !n.anchor)
        .map(|n| (n.weight, n.id.clone()))
        .collect();
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let mut removed = Vec::new();
    for (w, id) in candidates {
        if removed.len() >= over && w >= cfg.prune_below {
            break;
        }
        if graph.in_supersedes_chain(&id) {
            continue;
        }
        graph.remove_node(&id);
        removed.push(id);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Domain, Edge, EdgeKind, Node};

    fn t(h: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000 + h * 3600, 0).unwrap_or_default()
    }

    #[test]
    fn factor_grows_with_distance_and_age() {
        let cfg = DecayConfig::default();
        assert!((factor(&cfg, Some(0), 0.0) - 1.0).abs() < 1e-9);
        assert!(factor(&cfg, Some(1), 5.0) > factor(&cfg, Some(3), 5.0));
        assert!(
            factor(&cfg, Some(3), 0.0) > factor(&cfg, Some(3), 10.0),
            "recent nodes resist"
        );
        assert!(factor(&cfg, None, 10.0) <= factor(&cfg, Some(4), 10.0));
    }

    #[test]
    fn anchors_never_fall_below_the_floor() {
        let cfg = DecayConfig::default();
        let mut g = Graph::new();
        let a = NodeId::slug("anchor").unwrap_or_else(|| unreachable!());
        let f = NodeId::slug("focus").unwrap_or_else(|| unreachable!());
        let mut n = Node::new(a.clone(), "anchor", Domain::Personal, 0.25, t(0));
        n.anchor = true;
        g.upsert_node(n);
        g.upsert_node(Node::new(f.clone(), "focus", Domain::Project, 0.5, t(0)));
        for i in 0..200 {
            step(&mut g, std::slice::from_ref(&f), t(i), &cfg);
        }
        let w = g.node(&a).map(|n| n.weight).unwrap_or_default();
        assert!((w - cfg.anchor_floor).abs() < 1e-9, "{w}");
    }

    #[test]
    fn near_nodes_decay_less_than_far_ones() {
        let cfg = DecayConfig::default();
        let mut g = Graph::new();
        let ids: Vec<NodeId> = ["f", "near", "far"]
            .iter()
            .filter_map(|s| NodeId::slug(s))
            .collect();
        for id in &ids {
            g.upsert_node(Node::new(
                id.clone(),
                id.as_str(),
                Domain::Technical,
                0.8,
                t(0),
            ));
        }
        let _ = g.upsert_edge(Edge {
            source: ids[0].clone(),
            target: ids[1].clone(),
            kind: EdgeKind::RelatesTo,
            weight: 0.5,
        });
        step(&mut g, &ids[..1], t(6), &cfg);
        let w = |i: usize| g.node(&ids[i]).map(|n| n.weight).unwrap_or_default();
        assert!(w(0) > 0.8);
        assert!(w(1) > w(2), "near {} far {}", w(1), w(2));
    }

    #[test]
    fn over_the_limit_everything_under_prune_below_goes() {
        let cfg = DecayConfig {
            max_nodes: 4,
            prune_below: 0.05,
            ..DecayConfig::default()
        };
        let mut g = Graph::new();
        for (label, w) in [
            ("e1", 0.01),
            ("e2", 0.02),
            ("e3", 0.03),
            ("s1", 0.5),
            ("s2", 0.9),
        ] {
            let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
            g.upsert_node(Node::new(id, label, Domain::Technical, w, t(0)));
        }
        let pruned = step(&mut g, &[], t(1), &cfg).pruned;
        assert_eq!(pruned.len(), 3, "{pruned:?}");
        assert_eq!(g.node_count(), 2);
        // Under the limit nothing is pruned, however weak.
        let mut g2 = Graph::new();
        let id = NodeId::slug("weak").unwrap_or_else(|| unreachable!());
        g2.upsert_node(Node::new(id, "weak", Domain::Technical, 0.01, t(0)));
        assert!(step(&mut g2, &[], t(1), &cfg).pruned.is_empty());
    }

    #[test]
    fn pruning_keeps_anchors_and_history() {
        let cfg = DecayConfig {
            max_nodes: 2,
            ..DecayConfig::default()
        };
        let mut g = Graph::new();
        for (label, w) in [("a", 0.01), ("b", 0.02), ("c", 0.9), ("d", 0.03)] {
            let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
            g.upsert_node(Node::new(id, label, Domain::Technical, w, t(0)));
        }
        let (a, b) = (
            NodeId::slug("a").unwrap_or_else(|| unreachable!()),
            NodeId::slug("b").unwrap_or_else(|| unreachable!()),
        );
        let _ = g.upsert_edge(Edge {
            source: b,
            target: a,
            kind: EdgeKind::Supersedes,
            weight: 1.0,
        });
        let pruned = step(&mut g, &[], t(1), &cfg).pruned;
        assert_eq!(g.node_count(), 2);
        assert!(
            pruned
                .iter()
                .all(|p| p.as_str() != "a" && p.as_str() != "b"),
            "{pruned:?}"
        );
    }
}
