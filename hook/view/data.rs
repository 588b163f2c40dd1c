//! The page's data: every node and edge the graph ever held (in the
//! timeline or now), the frames of the timeline as weight changes, the
//! injections with each line linked to its nodes, and the layout groups
//! (the injection's far clusters). Serialised once into the page as JSON.

use std::collections::{BTreeSet, HashMap, HashSet};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use rollgraph_engine::graph::{Domain, EdgeKind, Graph, Node, NodeId};
use rollgraph_engine::render;

/// One node of the page (its latest attributes).
#[derive(Debug, Serialize)]
pub struct NodeOut {
    /// Stable id.
    pub id: String,
    /// Label.
    pub label: String,
    /// Domain index into `Data::domains`.
    pub d: u8,
    /// Kind.
    pub k: &'static str,
    /// Detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub det: Option<String>,
    /// Aliases.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub al: Vec<String>,
    /// Anchor.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub a: bool,
    /// Last activated (RFC 3339).
    pub last: String,
    /// Evidence: the sentences that mentioned it, with their turn and speaker.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ev: Vec<EvidenceOut>,
    /// Provenance: `[session, first_turn, last_turn, mentions]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prov: Vec<(String, u32, u32, u32)>,
    /// Layout group index into `Data::groups`.
    pub g: usize,
}

/// One evidence sentence of a node on the page.
#[derive(Debug, Serialize)]
pub struct EvidenceOut {
    /// The turn it was said in.
    pub turn: u32,
    /// `user` or `assistant`.
    pub speaker: String,
    /// The sentence (already redacted upstream).
    pub text: String,
}

/// One edge of the page.
#[derive(Debug, Serialize)]
pub struct EdgeOut {
    /// Source node index.
    pub s: usize,
    /// Target node index.
    pub t: usize,
    /// Kind.
    pub k: &'static str,
    /// Weight × 100.
    pub w: u8,
    /// First frame it exists in.
    pub from: usize,
    /// First frame it no longer exists in (absent: still there at the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<usize>,
}

/// What the gate said at a turn.
#[derive(Debug, Default, Serialize)]
pub struct GateOut {
    /// Whether a probe ran.
    pub fire: bool,
    /// Triggers that fired.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
    /// The reason, as `replay -v` prints it.
    pub reason: String,
    /// New names that fired `new_entity`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

/// What a probe cycle did.
#[derive(Debug, Default, Serialize)]
pub struct ProbeOut {
    /// Operations applied.
    pub ops: usize,
    /// Why the patch was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// Near-duplicates folded: `[proposed, existing]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<(String, String)>,
}

/// One position of the timeline slider.
#[derive(Debug, Serialize)]
pub struct FrameOut {
    /// Short title ("turn 12", "now").
    pub title: String,
    /// The turn (0 = before any).
    pub turn: u32,
    /// The turn's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// The gate's decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateOut>,
    /// The probe cycle, when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeOut>,
    /// Other events at this position (compaction, expansion, reset).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// Focus node indices.
    pub f: Vec<usize>,
    /// Weight changes since the previous frame: `[node, weight × 1000]`, −1 = gone.
    pub w: Vec<(usize, i32)>,
    /// Index into `Data::renders` of the injection the next prompt gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r: Option<usize>,
}

/// One line of an injection, linked to the nodes it came from.
#[derive(Debug, Serialize)]
pub struct LineOut {
    /// The text.
    pub t: String,
    /// Node indices (first: the line's own node; far lines: the cluster).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub n: Vec<usize>,
    /// The expansion handle of a far line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<String>,
}

/// An injection.
#[derive(Debug, Serialize)]
pub struct RenderOut {
    /// Token count.
    pub tokens: usize,
    /// Its lines.
    pub lines: Vec<LineOut>,
}

/// A layout group: a far cluster of the final injection, a domain's shown
/// nodes, or a domain's nodes that are gone by the end.
#[derive(Debug, Serialize)]
pub struct GroupOut {
    /// Handle (`technical/sqlx`, `technical/focus`, `technical/gone`).
    pub h: String,
    /// Domain index.
    pub d: u8,
}

/// Everything the page shows.
#[derive(Debug, Serialize)]
pub struct Data {
    /// Header facts.
    pub meta: Meta,
    /// Domain names, in index order.
    pub domains: [&'static str; 4],
    /// Nodes.
    pub nodes: Vec<NodeOut>,
    /// Edges.
    pub edges: Vec<EdgeOut>,
    /// Timeline frames; the last is the stored state now.
    pub frames: Vec<FrameOut>,
    /// Distinct injections.
    pub renders: Vec<RenderOut>,
    /// Layout groups.
    pub groups: Vec<GroupOut>,
}

/// Header facts.
#[derive(Debug, Default, Serialize)]
pub struct Meta {
    /// "session", "project" or "global".
    pub kind: String,
    /// Session id or project directory.
    pub name: String,
    /// When the page was made (the clock, pinnable).
    pub generated: String,
    /// Nodes in the stored graph now.
    pub node_count: usize,
    /// Edges in the stored graph now.
    pub edge_count: usize,
    /// Where the timeline came from and how far to trust it.
    pub timeline: String,
    /// Whether the re-derived timeline ends at the stored graph (None: not re-derived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline_matches: Option<bool>,
    /// Damage found while reading (nothing was repaired).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// Over this many nodes the page opens collapsed by domain.
    pub domain_collapse_at: usize,
}

/// Domain index.
pub fn domain_ix(d: Domain) -> u8 {
    match d {
        Domain::Relationship => 0,
        Domain::Project => 1,
        Domain::Technical => 2,
        Domain::Personal => 3,
    }
}

fn edge_kind(k: EdgeKind) -> &'static str {
    k.as_str()
}

/// What one frame carries besides the graph.
#[derive(Debug, Default)]
pub struct FrameInfo {
    /// Title.
    pub title: String,
    /// Turn.
    pub turn: u32,
    /// Time.
    pub time: Option<DateTime<Utc>>,
    /// Gate.
    pub gate: Option<GateOut>,
    /// Probe.
    pub probe: Option<ProbeOut>,
    /// Events.
    pub events: Vec<String>,
}

/// Builds [`Data`] frame by frame.
#[derive(Default)]
pub struct Builder {
    nodes: Vec<NodeOut>,
    index: HashMap<NodeId, usize>,
    edges: Vec<EdgeOut>,
    edge_index: HashMap<String, usize>,
    weights: Vec<i32>,
    live_edges: HashSet<usize>,
    frames: Vec<FrameOut>,
    renders: Vec<RenderOut>,
    render_index: HashMap<String, usize>,
}

fn node_out(n: &Node) -> NodeOut {
    NodeOut {
        id: n.id.to_string(),
        label: n.label.clone(),
        d: domain_ix(n.domain),
        k: n.kind.as_str(),
        det: n.detail.clone(),
        al: n.aliases.clone(),
        a: n.anchor,
        last: n.last_activated.to_rfc3339_opts(SecondsFormat::Secs, true),
        ev: n
            .evidence
            .iter()
            .map(|e| EvidenceOut {
                turn: e.turn,
                speaker: e.speaker.clone(),
                text: e.text.clone(),
            })
            .collect(),
        prov: n
            .provenance
            .iter()
            .map(|p| (p.session.clone(), p.first_turn, p.last_turn, p.mentions))
            .collect(),
        g: 0,
    }
}

fn weight_int(w: f64) -> i32 {
    (w.clamp(0.0, 1.0) * 1000.0).round() as i32
}

impl Builder {
    /// Records a frame. `graph` is `Some` when the graph may have changed
    /// since the previous frame; `render` is the injection the next prompt
    /// gets (linked against `current`, the graph as it stands).
    pub fn frame(
        &mut self,
        info: FrameInfo,
        graph: Option<&Graph>,
        current: &Graph,
        focus: &[NodeId],
        render: Option<(&str, usize)>,
    ) {
        let fx = self.frames.len();
        let mut w = Vec::new();
        if let Some(g) = graph {
            let mut present = vec![false; self.nodes.len()];
            for n in g.nodes() {
                let ix = match self.index.get(&n.id) {
                    Some(&ix) => {
                        self.nodes[ix] = NodeOut {
                            g: 0,
                            ..node_out(n)
                        };
                        ix
                    }
                    None => {
                        self.nodes.push(node_out(n));
                        self.weights.push(-1);
                        present.push(false);
                        self.index.insert(n.id.clone(), self.nodes.len() - 1);
                        self.nodes.len() - 1
                    }
                };
                present[ix] = true;
                let wi = weight_int(n.weight);
                if self.weights[ix] != wi {
                    self.weights[ix] = wi;
                    w.push((ix, wi));
                }
            }
            for (ix, p) in present.iter().enumerate() {
                if !p && self.weights[ix] >= 0 {
                    self.weights[ix] = -1;
                    w.push((ix, -1));
                }
            }
            let mut live = HashSet::with_capacity(self.live_edges.len());
            for e in g.edges() {
                let key = e.key();
                let (Some(&s), Some(&t)) = (self.index.get(&e.source), self.index.get(&e.target))
                else {
                    continue;
                };
                let ex = match self.edge_index.get(&key) {
                    Some(&ex) if self.edges[ex].to.is_none() => {
                        self.edges[ex].w = (e.weight.clamp(0.0, 1.0) * 100.0).round() as u8;
                        ex
                    }
                    _ => {
                        self.edges.push(EdgeOut {
                            s,
                            t,
                            k: edge_kind(e.kind),
                            w: (e.weight.clamp(0.0, 1.0) * 100.0).round() as u8,
                            from: fx,
                            to: None,
                        });
                        self.edge_index.insert(key, self.edges.len() - 1);
                        self.edges.len() - 1
                    }
                };
                live.insert(ex);
            }
            for ex in &self.live_edges {
                if !live.contains(ex) {
                    self.edges[*ex].to = Some(fx);
                }
            }
            self.live_edges = live;
        }
        let f: Vec<usize> = focus
            .iter()
            .filter_map(|id| self.index.get(id).copied())
            .collect();
        let r = render.map(|(text, tokens)| {
            if let Some(&ix) = self.render_index.get(text) {
                return ix;
            }
            let lines = link_lines(current, text, &self.index);
            self.renders.push(RenderOut { tokens, lines });
            self.render_index
                .insert(text.to_owned(), self.renders.len() - 1);
            self.renders.len() - 1
        });
        w.sort_unstable();
        self.frames.push(FrameOut {
            title: info.title,
            turn: info.turn,
            time: info
                .time
                .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true)),
            gate: info.gate,
            probe: info.probe,
            events: info.events,
            f,
            w,
            r,
        });
    }

    /// Finishes: assigns layout groups from the final graph and its
    /// injection (the shown nodes per domain, the far clusters, the gone).
    pub fn finish(mut self, final_graph: &Graph, meta: Meta) -> Data {
        let shown: BTreeSet<usize> = self
            .frames
            .last()
            .and_then(|f| f.r)
            .map(|r| {
                self.renders[r]
                    .lines
                    .iter()
                    .filter(|l| l.h.is_none())
                    .flat_map(|l| l.n.iter().copied())
                    .collect()
            })
            .unwrap_or_default();
        let mut groups: Vec<GroupOut> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        let mut group = |h: String, d: u8, groups: &mut Vec<GroupOut>| -> usize {
            *group_of.entry(h.clone()).or_insert_with(|| {
                groups.push(GroupOut { h, d });
                groups.len() - 1
            })
        };
        // The shown nodes of each domain first: they sit in the middle.
        for d in Domain::ALL {
            group(format!("{}/focus", d.as_str()), domain_ix(d), &mut groups);
        }
        let mut far: BTreeSet<NodeId> = BTreeSet::new();
        for (ix, n) in self.nodes.iter_mut().enumerate() {
            let id = NodeId::parse(&n.id);
            let in_final = id.as_ref().is_some_and(|id| final_graph.contains(id));
            if shown.contains(&ix) {
                n.g = domain_ix_to_group(n.d);
            } else if !in_final {
                n.g = group(
                    format!("{}/gone", Domain::ALL[n.d as usize].as_str()),
                    n.d,
                    &mut groups,
                );
            } else if let Some(id) = id {
                far.insert(id);
            }
        }
        for c in render::clusters(final_graph, &far) {
            let g = group(c.handle.clone(), domain_ix(c.domain), &mut groups);
            for m in &c.members {
                if let Some(&ix) = self.index.get(m) {
                    self.nodes[ix].g = g;
                }
            }
        }
        Data {
            meta,
            domains: [
                Domain::Relationship.as_str(),
                Domain::Project.as_str(),
                Domain::Technical.as_str(),
                Domain::Personal.as_str(),
            ],
            nodes: self.nodes,
            edges: self.edges,
            frames: self.frames,
            renders: self.renders,
            groups,
        }
    }
}

fn domain_ix_to_group(d: u8) -> usize {
    usize::from(d)
}

/// `render`'s shortening: at most `n` characters, an ellipsis when cut.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let cut: String = s.chars().take(n.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// Prefix lookup over node labels: first four characters → nodes.
struct Labels<'g> {
    by_prefix: HashMap<String, Vec<&'g Node>>,
}

impl<'g> Labels<'g> {
    fn new(g: &'g Graph) -> Labels<'g> {
        let mut by_prefix: HashMap<String, Vec<&'g Node>> = HashMap::new();
        for n in g.nodes_unordered() {
            let key: String = n.label.chars().take(4).collect();
            by_prefix.entry(key).or_default().push(n);
        }
        Labels { by_prefix }
    }

    /// The node whose (possibly shortened to `max` characters) label starts
    /// `item` and ends at a boundary; the longest such label wins.
    fn find(&self, item: &str, max: usize) -> Option<&'g Node> {
        let mut best: Option<(usize, &'g Node)> = None;
        let chars: Vec<char> = item.chars().take(4).collect();
        for k in 1..=chars.len() {
            let key: String = chars[..k].iter().collect();
            let Some(cands) = self.by_prefix.get(&key) else {
                continue;
            };
            for n in cands {
                let s = short(&n.label, max);
                if !item.starts_with(&s) {
                    continue;
                }
                let rest = &item[s.len()..];
                let boundary = rest.is_empty()
                    || rest.starts_with(" (")
                    || rest.starts_with(" [")
                    || rest.starts_with(" —");
                if !boundary {
                    continue;
                }
                let better = best.is_none_or(|(len, b)| {
                    s.len() > len || (s.len() == len && n.weight > b.weight)
                });
                if better {
                    best = Some((s.len(), n));
                }
            }
        }
        best.map(|(_, n)| n)
    }
}

/// Splits an injection into lines and links each to the nodes it came from:
/// focus lines (`- **Label** …`), decisions (`- New (was: Old)`: both),
/// corrections and preferences, near labels (`- domain: a · b`, each one),
/// far clusters (`- [handle] …`: the cluster's members).
pub fn link_lines(g: &Graph, text: &str, index: &HashMap<NodeId, usize>) -> Vec<LineOut> {
    let labels = Labels::new(g);
    let ix = |n: &Node| index.get(&n.id).copied();
    let mut out = Vec::new();
    let mut section = "";
    for line in text.lines() {
        let mut l = LineOut {
            t: line.to_owned(),
            n: Vec::new(),
            h: None,
        };
        if let Some(h) = line.strip_prefix("## ") {
            section = match h {
                "Focus" => "focus",
                "Decisions in force" => "decisions",
                "Corrections and preferences" => "standing",
                "Near" => "near",
                "Far (collapsed)" => "far",
                _ => "",
            };
            out.push(l);
            continue;
        }
        let Some(item) = line.strip_prefix("- ") else {
            out.push(l);
            continue;
        };
        match section {
            "far" => {
                if let Some(h) = item
                    .strip_prefix('[')
                    .and_then(|r| r.split_once(']'))
                    .map(|(h, _)| h)
                {
                    if let Some(members) = render::expand_handle(g, h) {
                        l.n = members
                            .iter()
                            .filter_map(|m| index.get(m).copied())
                            .collect();
                    }
                    l.h = Some(h.to_owned());
                }
            }
            "near" => {
                if let Some((_, list)) = item.split_once(": ") {
                    for part in list.split(" · ") {
                        if let Some(n) = labels.find(part, 70) {
                            l.n.extend(ix(n));
                        }
                    }
                }
            }
            _ => {
                let body = item
                    .strip_prefix("**")
                    .map(|b| b.split_once("**").map_or(b, |(a, _)| a))
                    .unwrap_or(item);
                let max = if section == "standing" { 110 } else { 160 };
                if let Some(n) = labels.find(body, max) {
                    l.n.extend(ix(n));
                    // "New (was: Old; Older)": the superseded decisions too.
                    for old in g.supersedes(&n.id) {
                        l.n.extend(ix(old));
                    }
                }
            }
        }
        out.push(l);
    }
    out
}
