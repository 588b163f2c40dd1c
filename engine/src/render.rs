//! The level-of-detail renderer (§7): what the hook injects before a prompt.
//!
//! Around the focus it draws three layers — focus nodes in full detail,
//! nearby nodes as labels, distant clusters collapsed to one line with a
//! handle the model can expand — plus the decisions in force, each shown as
//! "new (was old)". It fits 500–800 tokens counted with `tiktoken-rs`: never
//! over the maximum, and at least the minimum when the graph has that much to
//! say (it promotes detail rather than padding). Output is a pure function of
//! the graph, the focus, the clock and the config.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::RenderConfig;
use crate::graph::{Domain, EdgeKind, Graph, Node, NodeId, NodeKind};

/// Most labels in the near layer before the budget fit.
const NEAR_MAX: usize = 36;

/// Counts tokens the way the budget is enforced (cl100k_base).
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len()
}

/// A finished render.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Render {
    /// The text to inject (empty when the graph is empty).
    pub text: String,
    /// Its size in tokens.
    pub tokens: usize,
    /// Nodes shown in full.
    pub focus: Vec<NodeId>,
    /// Nodes shown as labels.
    pub near: Vec<NodeId>,
    /// Collapsed clusters shown, by handle.
    pub handles: Vec<String>,
}

/// Where a render is taken from: a session id, a turn number and the clock.
#[derive(Clone, Debug, Default)]
pub struct RenderContext<'a> {
    /// Session id (shortened in the header).
    pub session: &'a str,
    /// The turn the render follows.
    pub turn: u32,
    /// The clock.
    pub now: DateTime<Utc>,
}

/// A far cluster: the nodes of one domain's connected component.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// `domain/hub-id`, or `domain/other` for the loose singletons.
    pub handle: String,
    /// The domain.
    pub domain: Domain,
    /// Members, strongest first.
    pub members: Vec<NodeId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Collapsed,
    Label,
    Full,
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let cut: String = s.chars().take(n.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

fn ago(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        0..=89 => "just now".into(),
        90..=5_399 => format!("{}m ago", (secs + 30) / 60),
        5_400..=129_599 => format!("{}h ago", (secs + 1_800) / 3_600),
        _ => format!("{}d ago", (secs + 43_200) / 86_400),
    }
}

fn kind_tag(n: &Node) -> String {
    let mut tag = n.kind.as_str().to_owned();
    if n.anchor {
        tag.push_str(", anchor");
    }
    tag
}

/// Label with "(was …)" for decisions that superseded others.
fn label_with_history(g: &Graph, n: &Node) -> String {
    let old = g.supersedes(&n.id);
    if old.is_empty() {
        return n.label.clone();
    }
    let was: Vec<String> = old.iter().map(|o| short(&o.label, 60)).collect();
    format!("{} (was: {})", n.label, was.join("; "))
}

/// Computes the far clusters of a graph: connected components of each
/// domain's own subgraph. Deterministic and independent of the focus, so a
/// handle means the same thing when it is expanded later.
pub fn clusters(g: &Graph, eligible: &BTreeSet<NodeId>) -> Vec<Cluster> {
    let mut parent: HashMap<NodeId, NodeId> = HashMap::new();
    fn find(p: &mut HashMap<NodeId, NodeId>, x: &NodeId) -> NodeId {
        let mut r = x.clone();
        while let Some(n) = p.get(&r) {
            if n == &r {
                break;
            }
            r = n.clone();
        }
        p.insert(x.clone(), r.clone());
        r
    }
    for id in eligible {
        parent.insert(id.clone(), id.clone());
    }
    for e in g.edges() {
        if !(eligible.contains(&e.source) && eligible.contains(&e.target)) {
            continue;
        }
        let (Some(a), Some(b)) = (g.node(&e.source), g.node(&e.target)) else { continue };
        if a.domain != b.domain {
            continue;
        }
        let ra = find(&mut parent, &e.source);
        let rb = find(&mut parent, &e.target);
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            parent.insert(hi, lo);
        }
    }
    let mut groups: BTreeMap<NodeId, Vec<NodeId>> = BTreeMap::new();
    for id in eligible {
        let r = find(&mut parent, id);
        groups.entry(r).or_default().push(id.clone());
    }
    let weight = |id: &NodeId| g.node(id).map(|n| n.weight).unwrap_or(0.0);
    let mut out: Vec<Cluster> = Vec::new();
    let mut loose: BTreeMap<Domain, Vec<NodeId>> = BTreeMap::new();
    for (_, mut members) in groups {
        members.sort_by(|a, b| weight(b).total_cmp(&weight(a)).then_with(|| a.cmp(b)));
        let Some(domain) = members.first().and_then(|m| g.node(m)).map(|n| n.domain) else { continue };
        if members.len() == 1 {
            loose.entry(domain).or_default().extend(members);
            continue;
        }
        out.push(Cluster {
            handle: format!("{}/{}", domain.as_str(), members[0]),
            domain,
            members,
        });
    }
    for (domain, mut members) in loose {
        members.sort_by(|a, b| weight(b).total_cmp(&weight(a)).then_with(|| a.cmp(b)));
        out.push(Cluster {
            handle: format!("{}/other", domain.as_str()),
            domain,
            members,
        });
    }
    out.sort_by(|a, b| {
        let wa: f64 = a.members.iter().map(|m| weight(m)).sum();
        let wb: f64 = b.members.iter().map(|m| weight(m)).sum();
        wb.total_cmp(&wa).then_with(|| a.handle.cmp(&b.handle))
    });
    out
}

/// Resolves an expansion handle (`technical/sqlx`, `personal/other`, or a
/// bare node id) to its members, strongest first.
pub fn expand_handle(g: &Graph, handle: &str) -> Option<Vec<NodeId>> {
    let handle = handle.trim().trim_start_matches('[').trim_end_matches(']');
    if let Some(id) = NodeId::parse(handle) {
        if g.contains(&id) {
            let mut v = vec![id.clone()];
            v.extend(g.edges_of(&id).into_iter().map(|e| if e.source == id { e.target.clone() } else { e.source.clone() }));
            v.dedup();
            return Some(v);
        }
    }
    let (domain, rest) = handle.split_once('/')?;
    let domain = Domain::parse(domain)?;
    let all: BTreeSet<NodeId> = g.nodes().into_iter().filter(|n| n.domain == domain).map(|n| n.id.clone()).collect();
    let cs = clusters(g, &all);
    if rest == "other" {
        // "other" after the fact: singletons of that domain.
        return cs.into_iter().find(|c| c.handle == handle).map(|c| c.members);
    }
    let id = NodeId::parse(rest)?;
    cs.into_iter().find(|c| c.members.contains(&id)).map(|c| c.members)
}

/// One node in full: the multi-line detail a focus or expansion shows.
pub fn describe(g: &Graph, n: &Node, now: DateTime<Utc>, edges_max: usize) -> String {
    let mut s = format!(
        "- **{}** ({}, {}; w {:.2}, {})",
        label_with_history(g, n),
        n.domain.as_str(),
        kind_tag(n),
        n.weight,
        ago(now, n.last_activated)
    );
    if let Some(d) = &n.detail {
        s.push_str(" — ");
        s.push_str(&short(d, 120));
    }
    let mut edges: Vec<(f64, String)> = Vec::new();
    for e in g.edges_of(&n.id) {
        if e.kind == EdgeKind::Supersedes {
            continue;
        }
        let (other_id, arrow) = if e.source == n.id { (&e.target, "→") } else { (&e.source, "←") };
        let Some(other) = g.node(other_id) else { continue };
        if e.kind == EdgeKind::PartOf && other.kind == NodeKind::Project && arrow == "→" {
            continue;
        }
        let score = e.weight * other.weight;
        edges.push((score, format!("{arrow} {} {}", e.kind.as_str(), short(&other.label, 40))));
    }
    edges.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    if let Some(old) = g.superseded_by(&n.id) {
        s.push_str(&format!(" [superseded by: {}]", short(&old.label, 60)));
    }
    if !edges.is_empty() {
        let list: Vec<String> = edges.into_iter().take(edges_max).map(|(_, e)| e).collect();
        s.push_str(&format!(" ({})", list.join("; ")));
    }
    s
}

struct Plan<'a> {
    g: &'a Graph,
    cfg: &'a RenderConfig,
    ctx: &'a RenderContext<'a>,
    levels: BTreeMap<NodeId, Level>,
    score: HashMap<NodeId, f64>,
    focus_order: Vec<NodeId>,
    decisions: Vec<NodeId>,
    standing: Vec<NodeId>,
    far_clusters: Vec<Cluster>,
    cluster_shown: usize,
}

impl Plan<'_> {
    fn nodes_at(&self, level: Level) -> Vec<&Node> {
        let mut v: Vec<&Node> = self
            .levels
            .iter()
            .filter(|(_, l)| **l == level)
            .filter_map(|(id, _)| self.g.node(id))
            .collect();
        let pos: HashMap<&NodeId, usize> = self.focus_order.iter().enumerate().map(|(i, id)| (id, i)).collect();
        v.sort_by(|a, b| {
            let pa = pos.get(&a.id).copied().unwrap_or(usize::MAX);
            let pb = pos.get(&b.id).copied().unwrap_or(usize::MAX);
            pa.cmp(&pb)
                .then_with(|| self.score[&b.id].total_cmp(&self.score[&a.id]))
                .then_with(|| a.id.cmp(&b.id))
        });
        v
    }

    fn text(&self) -> String {
        let now = self.ctx.now;
        let sid: String = self.ctx.session.chars().take(8).collect();
        let mut out = format!(
            "<rolling-memory session=\"{}\" turn=\"{}\" updated=\"{}\">\n",
            sid,
            self.ctx.turn,
            now.format("%Y-%m-%dT%H:%MZ")
        );
        out.push_str("What this session has been about (rollgraph memory; focus first). Expand a [handle] with the memory_expand tool.\n");

        let full = self.nodes_at(Level::Full);
        if !full.is_empty() {
            out.push_str("## Focus\n");
            for n in &full {
                out.push_str(&describe(self.g, n, now, self.cfg.edges_per_node));
                out.push('\n');
            }
        }
        let shown_decisions: Vec<&NodeId> = self
            .decisions
            .iter()
            .filter(|d| self.levels.get(*d) != Some(&Level::Full))
            .collect();
        if !shown_decisions.is_empty() {
            out.push_str("## Decisions in force\n");
            for id in shown_decisions {
                if let Some(n) = self.g.node(id) {
                    out.push_str(&format!("- {}\n", label_with_history(self.g, n)));
                }
            }
        }
        let standing: Vec<&NodeId> = self
            .standing
            .iter()
            .filter(|d| self.levels.get(*d) != Some(&Level::Full))
            .collect();
        if !standing.is_empty() {
            out.push_str("## Corrections and preferences\n");
            for id in standing {
                if let Some(n) = self.g.node(id) {
                    out.push_str(&format!("- {} ({})\n", short(&n.label, 110), n.kind.as_str()));
                }
            }
        }
        let labels = self.nodes_at(Level::Label);
        let labels: Vec<&Node> = labels
            .into_iter()
            .filter(|n| !self.decisions.contains(&n.id) && !self.standing.contains(&n.id))
            .collect();
        if !labels.is_empty() {
            out.push_str("## Near\n");
            let mut by_domain: BTreeMap<Domain, Vec<String>> = BTreeMap::new();
            for n in labels {
                let mut l = short(&n.label, 70);
                if n.kind == NodeKind::Person {
                    if let Some(d) = &n.detail {
                        let role: String = d.split('.').next().unwrap_or("").chars().take(30).collect();
                        if !role.is_empty() && role.split_whitespace().count() <= 4 {
                            l = format!("{l} ({role})");
                        }
                    }
                }
                if let Some(newer) = self.g.superseded_by(&n.id) {
                    l = format!("{l} [superseded by {}]", short(&newer.label, 40));
                }
                by_domain.entry(n.domain).or_default().push(l);
            }
            for (d, ls) in by_domain {
                out.push_str(&format!("- {}: {}\n", d.as_str(), ls.join(" · ")));
            }
        }
        let far: Vec<&Cluster> = self.far_clusters.iter().take(self.cluster_shown).collect();
        if !far.is_empty() {
            out.push_str("## Far (collapsed)\n");
            for c in far {
                let names: Vec<String> = c
                    .members
                    .iter()
                    .take(3)
                    .filter_map(|m| self.g.node(m))
                    .map(|n| short(&n.label, 32))
                    .collect();
                let more = c.members.len().saturating_sub(3);
                let more = if more > 0 { format!(" +{more} more") } else { String::new() };
                out.push_str(&format!("- [{}] {}{}\n", c.handle, names.join(", "), more));
            }
        }
        out.push_str("</rolling-memory>");
        out
    }
}

/// Renders the graph around `focus` within the token budget.
pub fn render(g: &Graph, focus: &[NodeId], ctx: &RenderContext<'_>, cfg: &RenderConfig) -> Render {
    let visible: Vec<&Node> = g.nodes_unordered().filter(|n| n.weight >= cfg.min_weight).collect();
    if visible.is_empty() {
        return Render::default();
    }
    // The focus: the cycle's nodes, else the strongest ones.
    let mut focus: Vec<NodeId> = focus
        .iter()
        .filter(|id| g.node(id).is_some_and(|n| n.weight >= cfg.min_weight))
        .cloned()
        .collect();
    let weight = |id: &NodeId| g.node(id).map(|n| n.weight).unwrap_or(0.0);
    let recency = |id: &NodeId| g.node(id).map(|n| n.last_activated).unwrap_or_default();
    // Current, weighty nodes first; then most recent.
    focus.sort_by(|a, b| {
        let ka = focus_rank(g, a);
        let kb = focus_rank(g, b);
        kb.total_cmp(&ka).then_with(|| recency(b).cmp(&recency(a))).then_with(|| a.cmp(b))
    });
    focus.dedup();
    if focus.is_empty() {
        let mut all: Vec<&Node> = visible.clone();
        all.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
        focus = all.iter().take(3).map(|n| n.id.clone()).collect();
    }
    let distances = g.distances(&focus, cfg.near_distance.max(1) + 2);

    let mut score: HashMap<NodeId, f64> = HashMap::new();
    for n in &visible {
        let d = distances.get(&n.id).copied();
        let proximity = match d {
            Some(d) => 1.0 / (1.0 + d as f64),
            None => 0.15,
        };
        score.insert(n.id.clone(), n.weight * proximity + 0.25 * n.weight);
    }

    let mut levels: BTreeMap<NodeId, Level> = BTreeMap::new();
    for id in focus.iter().take(cfg.focus_max) {
        levels.insert(id.clone(), Level::Full);
    }
    for n in &visible {
        if levels.contains_key(&n.id) {
            continue;
        }
        let d = distances.get(&n.id).copied();
        let near = d.is_some_and(|d| d <= cfg.near_distance) || n.weight >= 0.6;
        levels.insert(n.id.clone(), if near { Level::Label } else { Level::Collapsed });
    }
    // Cap the near layer: the strongest labels stay, the rest collapse.
    let mut near: Vec<NodeId> = levels.iter().filter(|(_, l)| **l == Level::Label).map(|(id, _)| id.clone()).collect();
    near.sort_by(|a, b| score[b].total_cmp(&score[a]).then_with(|| a.cmp(b)));
    for id in near.into_iter().skip(NEAR_MAX) {
        levels.insert(id, Level::Collapsed);
    }
    let mut decisions: Vec<NodeId> = visible
        .iter()
        .filter(|n| n.kind == NodeKind::Decision && g.superseded_by(&n.id).is_none())
        .map(|n| n.id.clone())
        .collect();
    decisions.sort_by(|a, b| recency(b).cmp(&recency(a)).then_with(|| weight(b).total_cmp(&weight(a))).then_with(|| a.cmp(b)));
    decisions.truncate(6);
    // Corrections and preferences stand until superseded: the user said them.
    let mut standing: Vec<NodeId> = visible
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Correction | NodeKind::Preference) && g.superseded_by(&n.id).is_none())
        .map(|n| n.id.clone())
        .collect();
    standing.sort_by(|a, b| weight(b).total_cmp(&weight(a)).then_with(|| recency(b).cmp(&recency(a))).then_with(|| a.cmp(b)));
    standing.truncate(8);

    let mut plan = Plan {
        g,
        cfg,
        ctx,
        levels,
        score,
        focus_order: focus.clone(),
        decisions,
        standing,
        far_clusters: Vec::new(),
        cluster_shown: 0,
    };
    plan.far_clusters = far_clusters(&plan);
    plan.cluster_shown = plan.far_clusters.len().min(8);

    // Fit the budget: shrink while over, grow while under.
    let mut text = plan.text();
    let mut tokens = count_tokens(&text);
    let mut guard = 0;
    while tokens > cfg.max_tokens && guard < 400 {
        guard += 1;
        if !shrink(&mut plan) {
            break;
        }
        text = plan.text();
        tokens = count_tokens(&text);
    }
    if tokens < cfg.min_tokens {
        // Grow in steps, keeping the last text that fits.
        let mut guard = 0;
        while tokens < cfg.min_tokens && guard < 200 {
            guard += 1;
            let saved = (plan.levels.clone(), plan.cluster_shown, plan.far_clusters.clone());
            if !grow(&mut plan) {
                break;
            }
            let t = plan.text();
            let n = count_tokens(&t);
            if n > cfg.max_tokens {
                (plan.levels, plan.cluster_shown, plan.far_clusters) = saved;
                break;
            }
            text = t;
            tokens = n;
        }
    }
    let focus_ids: Vec<NodeId> = plan.nodes_at(Level::Full).iter().map(|n| n.id.clone()).collect();
    let near_ids: Vec<NodeId> = plan.nodes_at(Level::Label).iter().map(|n| n.id.clone()).collect();
    let handles = plan.far_clusters.iter().take(plan.cluster_shown).map(|c| c.handle.clone()).collect();
    Render {
        text,
        tokens,
        focus: focus_ids,
        near: near_ids,
        handles,
    }
}

/// Decisions, corrections and preferences lead the focus; then by weight.
fn focus_rank(g: &Graph, id: &NodeId) -> f64 {
    let Some(n) = g.node(id) else { return 0.0 };
    let kind_bonus = match n.kind {
        NodeKind::Decision | NodeKind::Correction => 0.3,
        NodeKind::Person | NodeKind::Preference => 0.1,
        NodeKind::Project => 0.05,
        _ => 0.0,
    };
    let superseded = if g.superseded_by(id).is_some() { -0.5 } else { 0.0 };
    n.weight + kind_bonus + superseded
}

fn far_clusters(plan: &Plan<'_>) -> Vec<Cluster> {
    let eligible: BTreeSet<NodeId> = plan
        .levels
        .iter()
        .filter(|(id, l)| **l == Level::Collapsed && !plan.decisions.contains(id) && !plan.standing.contains(id))
        .map(|(id, _)| id.clone())
        .collect();
    clusters(plan.g, &eligible)
}

/// One step down in detail. Returns false when nothing is left to shrink.
fn shrink(plan: &mut Plan<'_>) -> bool {
    // 1. Drop far cluster lines from the weakest end.
    if plan.cluster_shown > 2 {
        plan.cluster_shown -= 1;
        return true;
    }
    // 2. Demote the weakest near label to collapsed.
    let weakest_label = plan
        .levels
        .iter()
        .filter(|(_, l)| **l == Level::Label)
        .min_by(|a, b| plan.score[a.0].total_cmp(&plan.score[b.0]).then_with(|| b.0.cmp(a.0)))
        .map(|(id, _)| id.clone());
    let fulls = plan.levels.values().filter(|l| **l == Level::Full).count();
    if let Some(id) = weakest_label {
        if fulls <= 3 || plan.levels.values().filter(|l| **l == Level::Label).count() > 6 {
            plan.levels.insert(id, Level::Collapsed);
            plan.far_clusters = far_clusters(plan);
            plan.cluster_shown = plan.cluster_shown.min(plan.far_clusters.len());
            return true;
        }
    }
    // 3. Demote the last focus node to a label.
    if fulls > 1 {
        let last = plan.nodes_at(Level::Full).last().map(|n| n.id.clone());
        if let Some(id) = last {
            plan.levels.insert(id, Level::Label);
            return true;
        }
    }
    if plan.cluster_shown > 0 {
        plan.cluster_shown -= 1;
        return true;
    }
    if plan.standing.len() > 2 {
        plan.standing.pop();
        return true;
    }
    if !plan.decisions.is_empty() {
        plan.decisions.pop();
        return true;
    }
    false
}

/// One step up in detail. Returns false when nothing is left to grow.
fn grow(plan: &mut Plan<'_>) -> bool {
    if plan.cluster_shown < plan.far_clusters.len() && plan.cluster_shown < 12 {
        plan.cluster_shown += 1;
        return true;
    }
    // Promote the strongest label with something to say to full detail.
    let best_label = plan
        .levels
        .iter()
        .filter(|(_, l)| **l == Level::Label)
        .max_by(|a, b| plan.score[a.0].total_cmp(&plan.score[b.0]).then_with(|| b.0.cmp(a.0)))
        .map(|(id, _)| id.clone());
    if let Some(id) = best_label {
        plan.levels.insert(id, Level::Full);
        return true;
    }
    // Pull the strongest collapsed node up to a label.
    let best_far = plan
        .levels
        .iter()
        .filter(|(_, l)| **l == Level::Collapsed)
        .max_by(|a, b| plan.score[a.0].total_cmp(&plan.score[b.0]).then_with(|| b.0.cmp(a.0)))
        .map(|(id, _)| id.clone());
    if let Some(id) = best_far {
        plan.levels.insert(id, Level::Label);
        plan.far_clusters = far_clusters(plan);
        plan.cluster_shown = plan.cluster_shown.min(plan.far_clusters.len());
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Edge, Node};

    fn t() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    fn big_graph(n: usize) -> Graph {
        let mut g = Graph::new();
        let domains = Domain::ALL;
        for i in 0..n {
            let label = format!("Component {i} of the billing pipeline");
            let id = NodeId::slug(&label).unwrap_or_else(|| unreachable!());
            let mut node = Node::new(id, &label, domains[i % 4], 0.1 + (i % 10) as f64 * 0.09, t());
            node.detail = Some(format!("Detail sentence number {i} describing why it matters for invoices."));
            g.upsert_node(node);
        }
        let ids: Vec<NodeId> = g.nodes().iter().map(|n| n.id.clone()).collect();
        for i in 1..ids.len() {
            let _ = g.upsert_edge(Edge { source: ids[i].clone(), target: ids[(i * 7) % i].clone(), kind: EdgeKind::RelatesTo, weight: 0.5 });
        }
        g
    }

    #[test]
    fn big_graph_fits_the_budget() {
        let g = big_graph(1000);
        let focus: Vec<NodeId> = g.nodes().iter().take(4).map(|n| n.id.clone()).collect();
        let ctx = RenderContext { session: "s", turn: 3, now: t() };
        let r = render(&g, &focus, &ctx, &RenderConfig::default());
        assert!(r.tokens <= 800, "{}", r.tokens);
        assert!(r.tokens >= 500, "{}", r.tokens);
        assert_eq!(count_tokens(&r.text), r.tokens);
        assert!(!r.handles.is_empty());
    }

    #[test]
    fn small_graph_is_not_padded() {
        let g = big_graph(3);
        let ctx = RenderContext { session: "s", turn: 1, now: t() };
        let r = render(&g, &[], &ctx, &RenderConfig::default());
        assert!(r.tokens < 500);
        assert!(r.text.contains("Component"));
    }

    #[test]
    fn render_is_deterministic() {
        let g = big_graph(200);
        let ctx = RenderContext { session: "s", turn: 3, now: t() };
        let a = render(&g, &[], &ctx, &RenderConfig::default());
        let b = render(&Graph::from_doc(g.to_doc()).unwrap_or_default(), &[], &ctx, &RenderConfig::default());
        assert_eq!(a, b);
    }

    #[test]
    fn handles_expand_to_their_members() {
        let g = big_graph(60);
        let ctx = RenderContext { session: "s", turn: 3, now: t() };
        let r = render(&g, &[], &ctx, &RenderConfig::default());
        for h in &r.handles {
            let members = expand_handle(&g, h).unwrap_or_default();
            assert!(!members.is_empty(), "{h}");
        }
    }
}
