//! The level-of-detail renderer (§7): what the hook injects before a prompt.
//!
//! Around the focus it draws three layers — focus nodes in full detail,
//! nearby nodes as labels, distant clusters collapsed to one line with a
//! handle the model can expand — plus the decisions in force, each shown as
//! "new (was old)". It fits 500–800 tokens counted with `tiktoken-rs`: never
//! over the maximum, and at least the minimum when the graph has that much to
//! say (it promotes detail rather than padding). Output is a pure function of
//! the graph, the focus, the clock and the config.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::RenderConfig;
use crate::graph::{Domain, EdgeKind, Graph, Node, NodeId, NodeKind};

/// Most labels in the near layer before the budget fit.
const NEAR_MAX: usize = 36;

/// Counts tokens the way the budget is enforced (cl100k_base).
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Loads the tokenizer [`count_tokens`] uses, which otherwise loads on
/// first use (~0.1 s): for a one-shot command that can load it on a
/// thread of its own while it reads its files.
pub fn load_tokenizer() {
    let _ = tiktoken_rs::cl100k_base_singleton();
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

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let cut: String = s.chars().take(n.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// How long ago `then` was, rounded: "just now", "12m ago", "3h ago", "2d ago".
pub(crate) fn ago(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        0..=89 => "just now".into(),
        90..=5_399 => format!("{}m ago", (secs + 30) / 60),
        5_400..=129_599 => format!("{}h ago", (secs + 1_800) / 3_600),
        _ => format!("{}d ago", (secs + 43_200) / 86_400),
    }
}

/// Most decisions in force shown in the block.
const DECISIONS_MAX: usize = 8;

/// Most facts, rules, how-tos, preferences and next steps shown.
const STANDING_MAX: usize = 16;

/// Most member names a far line shows when the rest of the block leaves
/// room (three otherwise).
const FAR_NAMES_ROOMY: [usize; 4] = [6, 10, 16, 24];

/// Characters of a far name with room to spare (32 otherwise).
const FAR_NAME_ROOMY_CHARS: usize = 48;

/// More standing lines shown when the rest of the block leaves room.
const STANDING_SPARE: usize = 16;

/// The least weight a rule or a how-to ranks with among the standing
/// lines (see `render_with`).
const RULE_FLOOR: f64 = 0.65;

fn kind_tag(n: &Node) -> String {
    let mut tag = n.kind.as_str().to_owned();
    if n.anchor {
        tag.push_str(", anchor");
    }
    tag
}

/// The tag after a standing line: what kind of memory it is.
fn standing_tag(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Restriction => "rule",
        NodeKind::Procedure => "how-to",
        NodeKind::Intention => "next",
        other => other.as_str(),
    }
}

/// How many earlier values a fact's line shows.
const FACT_HISTORY: usize = 3;

/// Label with "(was …)" for decisions that superseded others.
fn label_with_history(g: &Graph, n: &Node) -> String {
    let old = g.supersedes(&n.id);
    if old.is_empty() {
        return n.label.clone();
    }
    // A drop is a step, not a choice: "(was: X)" names what it dropped.
    let mut was: Vec<String> = Vec::new();
    // A value's history, newest first: "5.2 µA (was: 9.1 µA; 7.3 µA)", the
    // subject said once.
    if n.kind == NodeKind::Fact {
        let subject = n.label.split_once(": ").map(|(s, _)| s);
        let mut at: Vec<&Node> = old.clone();
        let mut seen: Vec<&str> = vec![n.id.as_str()];
        while let Some(o) = at.first().copied()
            && was.len() < FACT_HISTORY
            && !seen.contains(&o.id.as_str())
        {
            seen.push(o.id.as_str());
            let shown = match (subject, o.label.split_once(": ")) {
                (Some(s), Some((os, v))) if s == os => v,
                _ => o.label.as_str(),
            };
            let l = short(shown, 60);
            if !was.contains(&l) {
                was.push(l);
            }
            at = g.supersedes(&o.id);
        }
        return format!("{} (was: {})", n.label, was.join("; "));
    }
    for o in &old {
        let dropped = if o.label.starts_with("Drop ") {
            g.supersedes(&o.id)
        } else {
            Vec::new()
        };
        let shown: Vec<&Node> = if dropped.is_empty() {
            vec![*o]
        } else {
            dropped
        };
        for n in shown {
            let l = short(&n.label, 60);
            if !was.contains(&l) {
                was.push(l);
            }
        }
    }
    format!("{} (was: {})", n.label, was.join("; "))
}

/// Groups nodes into far clusters: the strongest unassigned node becomes a
/// hub and takes its unassigned same-domain neighbours; hubs left alone are
/// gathered per domain under `domain/other`. Deterministic, and a handle
/// means the same thing when it is expanded later: a hub and its
/// same-domain neighbours.
pub fn clusters(g: &Graph, eligible: &BTreeSet<NodeId>) -> Vec<Cluster> {
    let set: HashSet<&NodeId> = eligible.iter().collect();
    clusters_in(g, &set, usize::MAX)
}

/// [`clusters`] over a borrowed set, forming at most `limit` hub clusters:
/// once that many exist, the rest of each domain goes to `domain/other`.
fn clusters_in(g: &Graph, eligible: &HashSet<&NodeId>, limit: usize) -> Vec<Cluster> {
    let mut order: Vec<&Node> = eligible.iter().filter_map(|id| g.node(id)).collect();
    order.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
    let mut assigned: HashSet<&NodeId> = HashSet::with_capacity(order.len());
    let mut out: Vec<Cluster> = Vec::new();
    let mut loose: BTreeMap<Domain, Vec<NodeId>> = BTreeMap::new();
    for hub in &order {
        if assigned.contains(&hub.id) {
            continue;
        }
        assigned.insert(&hub.id);
        if out.len() >= limit {
            loose.entry(hub.domain).or_default().push(hub.id.clone());
            continue;
        }
        let mut members: Vec<&Node> = g
            .neighbors(&hub.id)
            .filter(|m| {
                m.domain == hub.domain
                    && m.id != hub.id
                    && eligible.contains(&m.id)
                    && !assigned.contains(&m.id)
            })
            .collect();
        if members.is_empty() {
            loose.entry(hub.domain).or_default().push(hub.id.clone());
            continue;
        }
        members.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
        members.dedup_by(|a, b| a.id == b.id);
        for m in &members {
            assigned.insert(&m.id);
        }
        let mut ids = vec![hub.id.clone()];
        ids.extend(members.iter().map(|m| m.id.clone()));
        out.push(Cluster {
            handle: format!("{}/{}", hub.domain.as_str(), hub.id),
            domain: hub.domain,
            members: ids,
        });
    }
    for (domain, members) in loose {
        out.push(Cluster {
            handle: format!("{}/other", domain.as_str()),
            domain,
            members,
        });
    }
    let weight = |id: &NodeId| g.node(id).map(|n| n.weight).unwrap_or(0.0);
    let mut keyed: Vec<(f64, Cluster)> = out
        .into_iter()
        .map(|c| (c.members.iter().map(&weight).sum(), c))
        .collect();
    keyed.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.handle.cmp(&b.1.handle))
    });
    keyed.into_iter().map(|(_, c)| c).collect()
}

fn neighbours_in_domain<'g>(g: &'g Graph, n: &Node) -> Vec<&'g Node> {
    g.neighbors(&n.id)
        .filter(|m| m.domain == n.domain && m.id != n.id)
        .collect()
}

/// Resolves an expansion handle to its members, strongest first:
/// `technical/sqlx` is the hub and its same-domain neighbours, a bare id the
/// node and all its neighbours, `personal/other` the whole domain.
pub fn expand_handle(g: &Graph, handle: &str) -> Option<Vec<NodeId>> {
    let handle = handle.trim().trim_start_matches('[').trim_end_matches(']');
    let by_weight = |mut v: Vec<&Node>| -> Vec<NodeId> {
        v.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
        v.dedup_by(|a, b| a.id == b.id);
        v.into_iter().map(|n| n.id.clone()).collect()
    };
    let (domain, rest) = match handle.split_once('/') {
        Some((d, r)) => (Domain::parse(d), r),
        None => (None, handle),
    };
    if rest == "other" {
        // The loose ends of a domain: everything in it, strongest first.
        let domain = domain?;
        let v: Vec<&Node> = g.nodes_unordered().filter(|n| n.domain == domain).collect();
        return (!v.is_empty()).then(|| by_weight(v));
    }
    let hub = match g.node(&NodeId::parse(rest)?) {
        Some(n) => n,
        // A short handle (a query answer's): the one id it starts.
        None => {
            let mut starting = g
                .nodes_unordered()
                .filter(|n| id_has_prefix(n.id.as_str(), rest));
            let first = starting.next()?;
            if starting.next().is_some() {
                return None;
            }
            first
        }
    };
    let mut v = vec![hub];
    if domain.is_some() {
        v.extend(neighbours_in_domain(g, hub));
    } else {
        v.extend(g.edges_of(&hub.id).into_iter().filter_map(|e| {
            g.node(if e.source == hub.id {
                &e.target
            } else {
                &e.source
            })
        }));
    }
    let mut ids = by_weight(v[1..].to_vec());
    ids.insert(0, hub.id.clone());
    Some(ids)
}

/// Whether `id` starts with `prefix` as a run of its words (`a-b` starts
/// `a-b-c`, not `a-bc`).
pub fn id_has_prefix(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
}

/// One node in full: the multi-line detail a focus or expansion shows.
pub fn describe(g: &Graph, n: &Node, now: DateTime<Utc>, edges_max: usize) -> String {
    let mut s = format!(
        "- **{}** ({}, {}; {})",
        label_with_history(g, n),
        n.domain.as_str(),
        kind_tag(n),
        ago(now, n.last_activated)
    );
    if let Some(d) = &n.detail {
        s.push_str(" — ");
        s.push_str(&short(d, 120));
    }
    // Rank first, format only the winners: hubs carry hundreds of edges.
    let mut ranked: Vec<(f64, bool, EdgeKind, &Node)> = Vec::new();
    for (e, other) in g.edges_with_nodes(&n.id) {
        if e.kind == EdgeKind::Supersedes {
            continue;
        }
        let outgoing = e.source == n.id;
        if e.kind == EdgeKind::PartOf && other.kind == NodeKind::Project && outgoing {
            continue;
        }
        ranked.push((e.weight * other.weight, outgoing, e.kind, other));
    }
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| b.1.cmp(&a.1))
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.3.id.cmp(&b.3.id))
    });
    let edges: Vec<(f64, String)> = ranked
        .into_iter()
        .take(edges_max)
        .map(|(score, outgoing, kind, other)| {
            let arrow = if outgoing { "→" } else { "←" };
            // "relates_to" is the default link: the arrow says enough.
            let text = if kind == EdgeKind::RelatesTo {
                format!("{arrow} {}", short(&other.label, 32))
            } else {
                format!("{arrow} {} {}", kind.as_str(), short(&other.label, 32))
            };
            (score, text)
        })
        .collect();
    if let Some(old) = g.superseded_by(&n.id) {
        s.push_str(&format!(" [superseded by: {}]", short(&old.label, 60)));
    }
    if !edges.is_empty() {
        let list: Vec<String> = edges.into_iter().take(edges_max).map(|(_, e)| e).collect();
        s.push_str(&format!(" ({})", list.join("; ")));
    }
    s
}

/// One piece of the render, with its token cost counted once.
#[derive(Clone, Debug)]
struct Piece {
    text: String,
    tokens: usize,
}

/// Bytes per token assumed when estimating (cl100k averages ~3.6 on our
/// renders; a little less keeps the estimate on the safe side).
const BYTES_PER_TOKEN: f64 = 3.55;

/// How piece costs are known while choosing: estimated from length (one
/// exact count of the result), or counted exactly piece by piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Costs {
    Estimated,
    Exact,
}

fn piece(text: String, costs: Costs) -> Piece {
    let tokens = match costs {
        Costs::Estimated => ((text.len() as f64) / BYTES_PER_TOKEN).ceil() as usize,
        Costs::Exact => count_tokens(&text),
    };
    Piece { text, tokens }
}

/// Token costs for many short pieces. Exact mode counts them in one
/// tokenizer pass over all of them, shared out by length (rounded up).
/// Either way it is a choosing aid: the final text is always counted exactly.
fn pieces(texts: Vec<String>, costs: Costs) -> Vec<Piece> {
    if texts.is_empty() {
        return Vec::new();
    }
    if costs == Costs::Estimated {
        return texts.into_iter().map(|t| piece(t, costs)).collect();
    }
    let total_tokens = count_tokens(&texts.concat());
    let total_chars: usize = texts
        .iter()
        .map(|t| t.chars().count())
        .sum::<usize>()
        .max(1);
    texts
        .into_iter()
        .map(|text| {
            let share = text.chars().count() * total_tokens;
            let tokens = share.div_ceil(total_chars).max(1);
            Piece { text, tokens }
        })
        .collect()
}

/// A near-layer label, grouped by domain when assembled.
#[derive(Clone, Debug)]
struct LabelPiece {
    id: NodeId,
    domain: Domain,
    piece: Piece,
}

/// What the greedy fill chose, in the order it chose it.
#[derive(Clone, Debug)]
enum Chosen {
    Full(usize),
    Decision(usize),
    Standing(usize),
    Label(usize),
    Far(usize),
}

struct Assembly<'a> {
    header: &'a Piece,
    full: &'a [(NodeId, Piece)],
    decisions: &'a [Piece],
    standing: &'a [Piece],
    labels: &'a [LabelPiece],
    far: &'a [(String, Piece)],
    chosen: &'a [Chosen],
}

impl Assembly<'_> {
    fn text(&self) -> String {
        let mut full: Vec<usize> = Vec::new();
        let mut decisions: Vec<usize> = Vec::new();
        let mut standing: Vec<usize> = Vec::new();
        let mut labels: Vec<usize> = Vec::new();
        let mut far: Vec<usize> = Vec::new();
        for c in self.chosen {
            match c {
                Chosen::Full(i) => full.push(*i),
                Chosen::Decision(i) => decisions.push(*i),
                Chosen::Standing(i) => standing.push(*i),
                Chosen::Label(i) => labels.push(*i),
                Chosen::Far(i) => far.push(*i),
            }
        }
        full.sort_unstable();
        decisions.sort_unstable();
        standing.sort_unstable();
        labels.sort_unstable();
        far.sort_unstable();
        let mut out = self.header.text.clone();
        if !full.is_empty() {
            out.push_str("## Focus\n");
            for i in full {
                out.push_str(&self.full[i].1.text);
            }
        }
        if !decisions.is_empty() {
            out.push_str("## Decisions in force\n");
            for i in decisions {
                out.push_str(&self.decisions[i].text);
            }
        }
        if !standing.is_empty() {
            out.push_str("## Facts, rules and preferences\n");
            for i in standing {
                out.push_str(&self.standing[i].text);
            }
        }
        if !labels.is_empty() {
            out.push_str("## Near\n");
            let mut by_domain: BTreeMap<Domain, Vec<&str>> = BTreeMap::new();
            for i in labels {
                let l = &self.labels[i];
                by_domain.entry(l.domain).or_default().push(&l.piece.text);
            }
            for (d, ls) in by_domain {
                out.push_str(&format!("- {}: {}\n", d.as_str(), ls.join(" · ")));
            }
        }
        if !far.is_empty() {
            out.push_str("## Far (collapsed)\n");
            for i in far {
                out.push_str(&self.far[i].1.text);
            }
        }
        out.push_str(FOOTER);
        out
    }
}

const FOOTER: &str = "</rolling-memory>";
/// Tokens held back for section headings and line joins the pieces don't count.
const SLACK: usize = 24;

/// Renders the graph around `focus` within the token budget.
///
/// One greedy pass: every candidate line is built and counted once, then
/// taken in priority order (first focus lines, decisions in force,
/// corrections and preferences, the rest of the focus, a few far clusters,
/// near labels, more far clusters) while it fits; the room left goes to the
/// standing lines past the block's share and to more names on each far
/// line; if the result is under the minimum, near labels are promoted to
/// full detail. The assembled text is
/// counted exactly and trimmed from the last choice if it overshoots.
pub fn render(g: &Graph, focus: &[NodeId], ctx: &RenderContext<'_>, cfg: &RenderConfig) -> Render {
    // Choose with estimated costs and count the result once; only when that
    // falls short of the minimum, choose again with exact per-piece counts.
    let quick = render_with(g, focus, ctx, cfg, Costs::Estimated);
    if quick.tokens >= cfg.min_tokens || quick.text.is_empty() {
        return quick;
    }
    let exact = render_with(g, focus, ctx, cfg, Costs::Exact);
    if exact.tokens >= quick.tokens {
        exact
    } else {
        quick
    }
}

fn render_with(
    g: &Graph,
    focus: &[NodeId],
    ctx: &RenderContext<'_>,
    cfg: &RenderConfig,
    costs: Costs,
) -> Render {
    // A rule or a how-to never fades out of sight: it holds however long
    // ago it was said.
    let visible: Vec<&Node> = g
        .nodes_unordered()
        .filter(|n| {
            n.weight >= cfg.min_weight
                || matches!(n.kind, NodeKind::Restriction | NodeKind::Procedure)
        })
        .collect();
    if visible.is_empty() {
        return Render::default();
    }
    let recency = |id: &NodeId| g.node(id).map(|n| n.last_activated).unwrap_or_default();
    // What is in force: an old choice or value is said only as the "(was:
    // …)" of what replaced it, never on a line of its own.
    let in_force: Vec<&Node> = visible
        .iter()
        .copied()
        .filter(|n| g.superseded_by(&n.id).is_none())
        .collect();

    // The focus: the cycle's nodes, else the strongest ones.
    let mut focus: Vec<NodeId> = focus
        .iter()
        .filter(|id| g.node(id).is_some_and(|n| n.weight >= cfg.min_weight))
        .cloned()
        .collect();
    focus.sort();
    focus.dedup();
    let mut ranked: Vec<(f64, DateTime<Utc>, NodeId)> = focus
        .into_iter()
        .map(|id| (focus_rank(g, &id), recency(&id), id))
        .collect();
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| b.1.cmp(&a.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    let mut focus: Vec<NodeId> = ranked.into_iter().map(|(_, _, id)| id).collect();
    if focus.is_empty() {
        let mut all: Vec<&Node> = visible.clone();
        all.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.id.cmp(&b.id)));
        focus = all.iter().take(3).map(|n| n.id.clone()).collect();
    }
    let distances = g.distances_ref(&focus, cfg.near_distance.max(1) + 2);
    let score = |n: &Node| -> f64 {
        let proximity = match distances.get(&n.id) {
            Some(d) => 1.0 / (1.0 + f64::from(*d)),
            None => 0.15,
        };
        n.weight * proximity + 0.25 * n.weight
    };

    // Decisions in force and what the user corrected or prefers.
    let mut decisions: Vec<&Node> = in_force
        .iter()
        .copied()
        .filter(|n| n.kind == NodeKind::Decision)
        .collect();
    decisions.sort_by(|a, b| {
        b.last_activated
            .cmp(&a.last_activated)
            .then_with(|| b.weight.total_cmp(&a.weight))
            .then_with(|| a.id.cmp(&b.id))
    });
    // A changed decision is the one most easily remembered wrong: those
    // with history keep their place when there are too many.
    if decisions.len() > DECISIONS_MAX {
        let (mut changed, plain): (Vec<&Node>, Vec<&Node>) = decisions
            .iter()
            .copied()
            .partition(|n| !g.supersedes(&n.id).is_empty());
        changed.truncate(DECISIONS_MAX);
        let room = DECISIONS_MAX - changed.len();
        changed.extend(plain.into_iter().take(room));
        let keep: BTreeSet<&NodeId> = changed.iter().map(|n| &n.id).collect();
        decisions.retain(|n| keep.contains(&n.id));
    }
    let standing: Vec<&Node> = in_force
        .iter()
        .copied()
        .filter(|n| {
            matches!(
                n.kind,
                NodeKind::Correction
                    | NodeKind::Preference
                    | NodeKind::Fact
                    | NodeKind::Restriction
                    | NodeKind::Procedure
                    | NodeKind::Intention
            )
        })
        .collect();
    // Rules and how-tos are what a reader most needs to see again; then what
    // the user corrected or prefers, then facts and next steps.
    // A date (a deadline, an event) and a value corrected since are the
    // facts a reader most needs again.
    let fact_bonus = |n: &Node| {
        if n.kind != NodeKind::Fact {
            return 0.0;
        }
        let dated = n
            .label
            .split_once(": ")
            .and_then(|(_, v)| crate::extract::value_unit(v))
            .is_some_and(|u| u == "date");
        let corrected = !g.supersedes(&n.id).is_empty();
        0.1 * f64::from(u8::from(dated)) + 0.3 * f64::from(u8::from(corrected))
    };
    // A rule or a how-to holds however long ago it was said: its weight
    // counts for no less than RULE_FLOOR here.
    let standing_score = |n: &Node| {
        let weight = match n.kind {
            NodeKind::Restriction | NodeKind::Procedure => n.weight.max(RULE_FLOOR),
            _ => n.weight,
        };
        weight
            + fact_bonus(n)
            + match n.kind {
                NodeKind::Restriction => 0.3,
                NodeKind::Procedure => 0.25,
                NodeKind::Preference => 0.2,
                NodeKind::Correction | NodeKind::Fact => 0.15,
                _ => 0.1,
            }
    };
    // Scored once each: a score reads the node's value and its history.
    let mut ranked: Vec<(f64, &Node)> = standing
        .into_iter()
        .map(|n| (standing_score(n), n))
        .collect();
    ranked.sort_by(|(sa, a), (sb, b)| {
        sb.total_cmp(sa)
            .then_with(|| b.last_activated.cmp(&a.last_activated))
            .then_with(|| a.id.cmp(&b.id))
    });
    // One value said under a shorter name too ("ttl: 45 s" beside "dns ttl:
    // 45 s") is shown once, under the better ranked name.
    let fact_parts = |n: &Node| -> Option<(String, Vec<String>)> {
        if n.kind != NodeKind::Fact {
            return None;
        }
        let (subject, value) = n.label.split_once(": ")?;
        let words = subject
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| crate::extract::stem(&w.to_lowercase()))
            .collect();
        Some((value.trim().to_lowercase(), words))
    };
    let mut kept: Vec<(String, Vec<String>)> = Vec::new();
    ranked.retain(|(_, n)| {
        let Some((value, words)) = fact_parts(n) else {
            return true;
        };
        let within = |a: &[String], b: &[String]| a.iter().all(|w| b.contains(w));
        let again = kept
            .iter()
            .any(|(v, ws)| *v == value && (within(&words, ws) || within(ws, &words)));
        if !again {
            kept.push((value, words));
        }
        !again
    });
    // Past the block's share, the next lines in rank order wait for the
    // room everything else leaves.
    ranked.truncate(STANDING_MAX + STANDING_SPARE);
    let mut standing: Vec<&Node> = ranked.into_iter().map(|(_, n)| n).collect();
    let spare: Vec<&Node> = standing.split_off(standing.len().min(STANDING_MAX));
    let special: BTreeSet<&NodeId> = decisions
        .iter()
        .chain(standing.iter())
        .map(|n| &n.id)
        .collect();

    let full_ids: Vec<NodeId> = focus
        .iter()
        .filter(|id| !special.contains(id))
        .take(cfg.focus_max)
        .cloned()
        .collect();
    let in_full: BTreeSet<&NodeId> = full_ids.iter().collect();

    // Near candidates: close to the focus or weighty anywhere, strongest first.
    let near: Vec<&Node> = in_force
        .iter()
        .copied()
        // Decisions show in their own block.
        .filter(|n| {
            !in_full.contains(&n.id) && !special.contains(&n.id) && n.kind != NodeKind::Decision
        })
        // Who's who is worth a few words wherever the focus is.
        .filter(|n| {
            distances
                .get(&n.id)
                .is_some_and(|d| *d <= cfg.near_distance)
                || n.weight >= 0.6
                || n.kind == NodeKind::Person
        })
        .collect();
    let near_score = |n: &Node| score(n) + if n.kind == NodeKind::Person { 0.2 } else { 0.0 };
    let mut scored: Vec<(f64, &Node)> = near.into_iter().map(|n| (near_score(n), n)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
    scored.truncate(NEAR_MAX);
    let near: Vec<&Node> = scored.into_iter().map(|(_, n)| n).collect();

    let sid: String = ctx.session.chars().take(8).collect();
    let header = piece(
        format!(
            "<rolling-memory session=\"{}\" turn=\"{}\" updated=\"{}\">\n\
         What this session has been about (rollgraph memory; focus first). Expand a [handle] with the memory_expand tool.\n",
            sid,
            ctx.turn,
            ctx.now.format("%Y-%m-%dT%H:%MZ")
        ),
        Costs::Exact,
    );
    let footer_tokens = count_tokens(FOOTER);
    let full_nodes: Vec<&Node> = full_ids.iter().filter_map(|id| g.node(id)).collect();
    let mut full: Vec<(NodeId, Piece)> = full_nodes
        .iter()
        .map(|n| n.id.clone())
        .zip(pieces(
            full_nodes
                .iter()
                .map(|n| format!("{}\n", describe(g, n, ctx.now, cfg.edges_per_node)))
                .collect(),
            costs,
        ))
        .collect();
    let decision_pieces: Vec<Piece> = pieces(
        decisions
            .iter()
            .map(|n| format!("- {}\n", label_with_history(g, n)))
            .collect(),
        costs,
    );
    let standing_pieces: Vec<Piece> = pieces(
        standing
            .iter()
            .chain(spare.iter())
            .map(|n| {
                format!(
                    "- {} ({})\n",
                    short(&label_with_history(g, n), 140),
                    standing_tag(n.kind)
                )
            })
            .collect(),
        costs,
    );
    let labels: Vec<LabelPiece> = near
        .iter()
        .zip(pieces(
            near.iter().map(|n| near_label(g, n)).collect(),
            costs,
        ))
        .map(|(n, piece)| LabelPiece {
            id: n.id.clone(),
            domain: n.domain,
            piece,
        })
        .collect();

    let budget = cfg.max_tokens.saturating_sub(SLACK + footer_tokens);
    let mut used = header.tokens;
    let mut chosen: Vec<Chosen> = Vec::new();
    let take = |chosen: &mut Vec<Chosen>, used: &mut usize, c: Chosen, cost: usize| -> bool {
        if *used + cost <= budget {
            *used += cost;
            chosen.push(c);
            true
        } else {
            false
        }
    };
    for (i, (_, p)) in full.iter().enumerate().take(3) {
        take(&mut chosen, &mut used, Chosen::Full(i), p.tokens);
    }
    for (i, p) in decision_pieces.iter().enumerate() {
        take(&mut chosen, &mut used, Chosen::Decision(i), p.tokens);
    }
    for (i, p) in standing_pieces.iter().enumerate().take(standing.len()) {
        take(&mut chosen, &mut used, Chosen::Standing(i), p.tokens);
    }
    // Keep room for a few far lines before more focus detail or the near
    // labels take it: the far layer is the only sight of the rest.
    let far_reserve = 4 * 28;
    for (i, (_, p)) in full.iter().enumerate().skip(3) {
        if used + p.tokens + far_reserve <= budget {
            used += p.tokens;
            chosen.push(Chosen::Full(i));
        }
    }
    let mut label_taken = vec![false; labels.len()];
    for (i, l) in labels.iter().enumerate() {
        if used + l.piece.tokens + 2 + far_reserve <= budget {
            used += l.piece.tokens + 2;
            chosen.push(Chosen::Label(i));
            label_taken[i] = true;
        }
    }

    // Far clusters over everything not shown otherwise.
    let shown: HashSet<&NodeId> = in_full
        .iter()
        .copied()
        .chain(special.iter().copied())
        .chain(
            labels
                .iter()
                .zip(&label_taken)
                .filter(|(_, t)| **t)
                .map(|(l, _)| &l.id),
        )
        .collect();
    let eligible: HashSet<&NodeId> = in_force
        .iter()
        .map(|n| &n.id)
        .filter(|id| !shown.contains(id))
        .collect();
    // Each far line names its strongest few; a longer form names more, for
    // the room the rest of the block leaves.
    let far_line = |c: &Cluster, shown: usize, width: usize| {
        let names: Vec<String> = c
            .members
            .iter()
            .take(shown)
            .filter_map(|m| g.node(m))
            .map(|n| short(&n.label, width))
            .collect();
        let more = c.members.len().saturating_sub(shown);
        let more = if more > 0 {
            format!(" +{more} more")
        } else {
            String::new()
        };
        format!("- [{}] {}{}\n", c.handle, names.join(", "), more)
    };
    let clusters: Vec<Cluster> = clusters_in(g, &eligible, 12).into_iter().take(12).collect();
    let far: Vec<(String, Piece)> = clusters
        .iter()
        .map(|c| c.handle.clone())
        .zip(pieces(
            clusters.iter().map(|c| far_line(c, 3, 32)).collect(),
            costs,
        ))
        .collect();
    for (i, (_, p)) in far.iter().enumerate() {
        take(&mut chosen, &mut used, Chosen::Far(i), p.tokens);
    }

    // Room left: the standing lines past the block's share, in rank order,
    // those not shown as a label already.
    for (i, n) in spare.iter().enumerate() {
        if !shown.contains(&n.id) {
            let i = standing.len() + i;
            take(
                &mut chosen,
                &mut used,
                Chosen::Standing(i),
                standing_pieces[i].tokens,
            );
        }
    }

    // Room still left: far lines name more of their members, in order.
    // A few more names on every line before many more on the first.
    let mut far = far;
    let mut upgrades: Vec<(usize, Piece)> = Vec::new();
    for (step, &names) in FAR_NAMES_ROOMY.iter().enumerate() {
        let shown_before = step.checked_sub(1).map_or(3, |p| FAR_NAMES_ROOMY[p]);
        for (i, c) in clusters.iter().enumerate() {
            // The first round also writes out names cut short.
            if (step > 0 && c.members.len() <= shown_before)
                || !chosen
                    .iter()
                    .any(|x| matches!(x, Chosen::Far(j) if *j == i))
            {
                continue;
            }
            let long = piece(far_line(c, names, FAR_NAME_ROOMY_CHARS), costs);
            let extra = long.tokens.saturating_sub(far[i].1.tokens);
            if used + extra <= budget {
                used += extra;
                upgrades.push((i, std::mem::replace(&mut far[i].1, long)));
            }
        }
    }

    // Under the minimum: promote near labels to full detail, strongest first.
    if used < cfg.min_tokens {
        for (i, l) in labels.iter().enumerate() {
            if used >= cfg.min_tokens {
                break;
            }
            if !label_taken[i] {
                continue;
            }
            let Some(n) = g.node(&l.id) else { continue };
            let p = piece(
                format!("{}\n", describe(g, n, ctx.now, cfg.edges_per_node)),
                costs,
            );
            let extra = p.tokens.saturating_sub(l.piece.tokens + 2);
            if used + extra > budget {
                continue;
            }
            used += extra;
            if let Some(pos) = chosen
                .iter()
                .position(|c| matches!(c, Chosen::Label(j) if *j == i))
            {
                chosen.remove(pos);
            }
            full.push((l.id.clone(), p));
            chosen.push(Chosen::Full(full.len() - 1));
        }
    }

    // Exact count; if the estimate was short, the far lines' longer forms
    // go first (the newest first), then the last choice.
    let mut text;
    let mut tokens;
    loop {
        let asm = Assembly {
            header: &header,
            full: &full,
            decisions: &decision_pieces,
            standing: &standing_pieces,
            labels: &labels,
            far: &far,
            chosen: &chosen,
        };
        text = asm.text();
        tokens = count_tokens(&text);
        if tokens <= cfg.max_tokens || chosen.is_empty() {
            break;
        }
        match upgrades.pop() {
            Some((i, shorter)) => far[i].1 = shorter,
            None => {
                chosen.pop();
            }
        }
    }

    let mut focus_out = Vec::new();
    let mut near_out = Vec::new();
    let mut handles = Vec::new();
    for c in &chosen {
        match c {
            Chosen::Full(i) => focus_out.push(full[*i].0.clone()),
            Chosen::Label(i) => near_out.push(labels[*i].id.clone()),
            Chosen::Far(i) => handles.push(far[*i].0.clone()),
            Chosen::Decision(_) | Chosen::Standing(_) => {}
        }
    }
    Render {
        text,
        tokens,
        focus: focus_out,
        near: near_out,
        handles,
    }
}

fn near_label(g: &Graph, n: &Node) -> String {
    let mut l = short(&n.label, 70);
    if n.kind == NodeKind::Person
        && let Some(d) = &n.detail
    {
        let role: String = d.split('.').next().unwrap_or("").chars().take(30).collect();
        if !role.is_empty() && role.split_whitespace().count() <= 4 {
            l = format!("{l} ({role})");
        }
    }
    if let Some(newer) = g.superseded_by(&n.id) {
        l = format!("{l} [superseded by {}]", short(&newer.label, 40));
    }
    l
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
    let superseded = if g.superseded_by(id).is_some() {
        -0.5
    } else {
        0.0
    };
    n.weight + kind_bonus + superseded
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Edge, Node};

    fn t() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    /// The render context of session "s" after `turn`, at [`t`].
    fn ctx(turn: u32) -> RenderContext<'static> {
        RenderContext {
            session: "s",
            turn,
            now: t(),
        }
    }

    fn big_graph(n: usize) -> Graph {
        let mut g = Graph::new();
        let domains = Domain::ALL;
        for i in 0..n {
            let label = format!("Component {i} of the billing pipeline");
            let id = NodeId::slug(&label).unwrap_or_else(|| unreachable!());
            let mut node = Node::new(
                id,
                &label,
                domains[i % 4],
                0.1 + (i % 10) as f64 * 0.09,
                t(),
            );
            node.detail = Some(format!(
                "Detail sentence number {i} describing why it matters for invoices."
            ));
            g.upsert_node(node);
        }
        let ids: Vec<NodeId> = g.nodes().iter().map(|n| n.id.clone()).collect();
        for i in 1..ids.len() {
            let _ = g.upsert_edge(Edge {
                source: ids[i].clone(),
                target: ids[(i * 7) % i].clone(),
                kind: EdgeKind::RelatesTo,
                weight: 0.5,
            });
        }
        g
    }

    /// Adds a technical node of `kind` with weight `w`; its id.
    fn add_kind(g: &mut Graph, label: &str, kind: NodeKind, w: f64) -> NodeId {
        let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
        let mut n = Node::new(id.clone(), label, Domain::Technical, w, t());
        n.kind = kind;
        g.upsert_node(n);
        id
    }

    #[test]
    fn a_value_is_shown_once_and_an_old_one_only_as_history() {
        let mut g = Graph::new();
        let mut add = |label: &str, kind: NodeKind, w: f64| add_kind(&mut g, label, kind, w);
        add("dns ttl: 45 s", NodeKind::Fact, 0.9);
        add("ttl: 45 s", NodeKind::Fact, 0.8);
        add("read timeout: 45 s", NodeKind::Fact, 0.7);
        let new = add("pool size: 12", NodeKind::Fact, 0.9);
        let old = add("pool size: 8", NodeKind::Fact, 0.9);
        let _ = g.upsert_edge(Edge {
            source: new.clone(),
            target: old,
            kind: EdgeKind::Supersedes,
            weight: 0.9,
        });
        let ctx = ctx(3);
        let r = render(&g, &[new], &ctx, &RenderConfig::default());
        assert!(r.text.contains("dns ttl: 45 s"), "{}", r.text);
        // The shorter name of the same value is left out; another subject
        // with the same value stays.
        assert!(!r.text.contains("\n- ttl: 45 s"), "{}", r.text);
        assert!(r.text.contains("read timeout: 45 s"), "{}", r.text);
        // The old value is said once, as the history of the new one.
        assert_eq!(r.text.matches("pool size: 8").count(), 0, "{}", r.text);
        assert!(r.text.contains("pool size: 12 (was: 8)"), "{}", r.text);
    }

    #[test]
    fn a_rule_and_a_how_to_stay_in_sight_however_long_ago_they_were_said() {
        let mut g = Graph::new();
        let mut add = |label: &str, kind: NodeKind, w: f64| add_kind(&mut g, label, kind, w);
        // Said long ago: decayed below the render's least weight.
        add(
            "Never edit the archived ledgers table",
            NodeKind::Restriction,
            0.03,
        );
        add("test: make check", NodeKind::Procedure, 0.05);
        // Fresh facts, more than the block holds.
        let mut focus = Vec::new();
        for i in 0..STANDING_MAX {
            focus.push(add(
                &format!("shelf {i} height: {i}0 cm"),
                NodeKind::Fact,
                0.6,
            ));
        }
        // Noise below the least weight stays out.
        add("crate width: 3 m", NodeKind::Fact, 0.03);
        let ctx = ctx(40);
        let r = render(&g, &focus, &ctx, &RenderConfig::default());
        assert!(
            r.text
                .contains("Never edit the archived ledgers table (rule)"),
            "{}",
            r.text
        );
        assert!(r.text.contains("test: make check (how-to)"), "{}", r.text);
        assert!(!r.text.contains("crate width"), "{}", r.text);
    }

    #[test]
    fn room_left_shows_more_facts_and_more_far_names_never_past_the_budget() {
        let mut g = Graph::new();
        let mut focus = Vec::new();
        // More facts than the block's share, ranked by weight; the last
        // ones faint, far from the focus.
        for i in 0..STANDING_MAX + 4 {
            let w = if i < STANDING_MAX { 0.9 } else { 0.3 };
            focus.push(add_kind(
                &mut g,
                &format!("bay {i} depth: {i}1 cm"),
                NodeKind::Fact,
                w,
            ));
        }
        // Loose things far from the focus: one collapsed line.
        for i in 0..9 {
            add_kind(&mut g, &format!("crate{i}.toml"), NodeKind::File, 0.2);
        }
        let long = "config/overrides/staging_pool_limits.toml";
        add_kind(&mut g, long, NodeKind::File, 0.25);
        let ctx = ctx(9);
        let r = render(&g, &focus[..1], &ctx, &RenderConfig::default());
        assert!(r.tokens <= 800, "{}", r.tokens);
        // The facts past the share still show, the weakest one too.
        let last = STANDING_MAX + 3;
        let line = format!("- bay {last} depth: {last}1 cm (fact)");
        assert!(r.text.contains(&line), "{}", r.text);
        // The far line names more than its first three.
        let far = r
            .text
            .lines()
            .find(|l| l.starts_with("- [technical/other]"))
            .unwrap_or_else(|| panic!("no far line: {}", r.text));
        assert!(far.matches(".toml").count() > 3, "{far}");
        // A name cut short at first is written out in full.
        assert!(far.contains(long), "{far}");
        // With no room, the far line names three and says how many more.
        let tight = RenderConfig {
            max_tokens: r.tokens - 30,
            min_tokens: 100,
            ..RenderConfig::default()
        };
        let r2 = render(&g, &focus[..1], &ctx, &tight);
        assert!(r2.tokens <= tight.max_tokens, "{}", r2.tokens);
        assert!(
            r2.text.lines().filter(|l| l.ends_with("more")).count() <= 1,
            "{}",
            r2.text
        );
    }

    #[test]
    fn an_estimate_too_short_gives_up_longer_far_lines_before_a_line() {
        let mut g = Graph::new();
        let mut focus = Vec::new();
        for i in 0..STANDING_MAX {
            focus.push(add_kind(
                &mut g,
                &format!("rack {i} in the north aisle of the cold store, upper shelf, left bay by the loading door: {i}5 kg"),
                NodeKind::Fact,
                0.9,
            ));
        }
        // Names of rare characters take more tokens than their bytes
        // suggest: the estimate of the longer far lines is short.
        for i in 0..40 {
            let name = format!("鳥{i}龜鱗鬱鸞麤{i}齉爨驫靐龘{i}灪籱厵麷鸜");
            add_kind(&mut g, &name, NodeKind::File, 0.2);
        }
        let ctx = ctx(9);
        let r = render(&g, &focus[..1], &ctx, &RenderConfig::default());
        assert!(r.tokens <= 800, "{}", r.tokens);
        assert!(
            r.handles.iter().any(|h| h == "technical/other"),
            "{:?}\n{}",
            r.handles,
            r.text
        );
    }

    #[test]
    fn big_graph_fits_the_budget() {
        let g = big_graph(1000);
        let focus: Vec<NodeId> = g.nodes().iter().take(4).map(|n| n.id.clone()).collect();
        let ctx = ctx(3);
        let r = render(&g, &focus, &ctx, &RenderConfig::default());
        assert!(r.tokens <= 800, "{}", r.tokens);
        assert!(r.tokens >= 500, "{}", r.tokens);
        assert_eq!(count_tokens(&r.text), r.tokens);
        assert!(!r.handles.is_empty());
    }

    #[test]
    fn small_graph_is_not_padded() {
        let g = big_graph(3);
        let ctx = ctx(1);
        let r = render(&g, &[], &ctx, &RenderConfig::default());
        assert!(r.tokens < 500);
        assert!(r.text.contains("Component"));
    }

    #[test]
    fn render_is_deterministic() {
        let g = big_graph(200);
        let ctx = ctx(3);
        let a = render(&g, &[], &ctx, &RenderConfig::default());
        let b = render(
            &Graph::from_doc(g.to_doc()).unwrap_or_default(),
            &[],
            &ctx,
            &RenderConfig::default(),
        );
        assert_eq!(a, b);
    }

    #[test]
    fn handles_expand_to_their_members() {
        let g = big_graph(60);
        let ctx = ctx(3);
        let r = render(&g, &[], &ctx, &RenderConfig::default());
        // The loop below proves nothing over no handles.
        assert!(!r.handles.is_empty(), "a 60-node graph has far clusters");
        for h in &r.handles {
            let members = expand_handle(&g, h).unwrap_or_default();
            assert!(!members.is_empty(), "{h}");
        }
    }

    #[test]
    fn a_leading_run_of_an_ids_words_expands_it_when_no_other_id_starts_so() {
        let g = big_graph(20);
        let whole = expand_handle(&g, "component-1-of-the-billing-pipeline");
        assert!(whole.is_some());
        // "component-1" starts component-1-…, not component-10-…: words count.
        assert_eq!(expand_handle(&g, "component-1"), whole);
        assert_eq!(expand_handle(&g, "component-1-of"), whole);
        // Every id starts with "component": ambiguous, so nothing.
        assert_eq!(expand_handle(&g, "component"), None);
        assert_eq!(
            expand_handle(&g, "component-1-of-the-billing-pipeline-x"),
            None
        );
        assert!(id_has_prefix("a-b-c", "a-b") && id_has_prefix("a-b", "a-b"));
        assert!(!id_has_prefix("a-bc", "a-b"));
    }
}
