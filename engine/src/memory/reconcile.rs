//! The hybrid reconciler (§6): merges a session's hot graph into a warm graph.
//!
//! [`reconcile`] is pure: it reads the hot and warm graphs and returns the
//! change as a [`WarmEntry`] (full new values of every node and edge it
//! touches) plus a [`ReconcileReport`]; the caller journals the entry in the
//! [`crate::warm::WarmStore`]. The algorithm does the bulk — id match, alias
//! and normalised-label match, near-duplicates within a domain through a
//! [`Similar`] implementation (lexical trigrams offline, embeddings when the
//! model is there), weight merge, edge union, supersedes chains and
//! provenance kept. Pairs whose similarity falls between the two thresholds
//! go to an [`Adjudicator`]: an LLM where one is configured, else
//! [`OfflineAdjudicator`], which keeps them apart with a `relates_to` edge.
//!
//! Merging is idempotent: weights merge by maximum (plus a small
//! reinforcement the first time a new session brings a node), provenance
//! merges per session by maximum, edges by maximum weight, so reconciling
//! the same hot graph twice changes nothing the second time.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::graph::{
    Edge, EdgeKind, Graph, MAX_ALIASES, MAX_PROVENANCE, Node, NodeId, NodeKind, edge_key,
    normalize_name,
};
use crate::warm::{WarmEntry, WarmMeta};

/// What a reconciliation did, summed over the stores it touched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReconcileReport {
    /// The stores written (`global`, a project key).
    pub stores: Vec<String>,
    /// Hot nodes that matched a warm node by id.
    pub merged: usize,
    /// Hot nodes that matched a warm node by label or alias, or were judged
    /// near-duplicates, and became its aliases.
    pub aliased: usize,
    /// Hot nodes new to the warm graph.
    pub added: usize,
    /// Warm nodes whose value changed (weight, aliases, provenance …).
    pub updated: usize,
    /// Ambiguous pairs sent to the adjudicator.
    pub ambiguous: usize,
    /// Ambiguous pairs kept apart with a `relates_to` edge.
    pub related: usize,
    /// New `supersedes` edges in the warm graph.
    pub superseded: usize,
    /// New `contradicts` edges in the warm graph.
    pub contradicted: usize,
    /// Edges new to the warm graph.
    pub edges_added: usize,
    /// Existing edges strengthened.
    pub edges_updated: usize,
    /// Nodes flagged for graduation into flat memory (queued for review).
    pub graduations_flagged: usize,
    /// Anchors flagged for archive review.
    pub archive_flagged: usize,
    /// Episode lines copied into the warm store's log.
    #[serde(default)]
    pub episodes: usize,
    /// Things worth telling the user (a restored store, an adjudicator error).
    pub warnings: Vec<String>,
}

impl ReconcileReport {
    /// Adds another report's counts to this one.
    pub fn add(&mut self, o: &ReconcileReport) {
        for s in &o.stores {
            if !self.stores.contains(s) {
                self.stores.push(s.clone());
            }
        }
        self.merged += o.merged;
        self.episodes += o.episodes;
        self.aliased += o.aliased;
        self.added += o.added;
        self.updated += o.updated;
        self.ambiguous += o.ambiguous;
        self.related += o.related;
        self.superseded += o.superseded;
        self.contradicted += o.contradicted;
        self.edges_added += o.edges_added;
        self.edges_updated += o.edges_updated;
        self.graduations_flagged += o.graduations_flagged;
        self.archive_flagged += o.archive_flagged;
        self.warnings.extend(o.warnings.iter().cloned());
    }
}

/// A similarity between two nodes in 0..=1 (`None`: cannot say).
pub trait Similar {
    /// How alike `a` and `b` are.
    fn similarity(&mut self, a: &Node, b: &Node) -> Option<f32>;
}

/// Offline similarity: 1 when the names are the same words up to plurals
/// ("invoices service" / "invoice service"), else the Dice coefficient of
/// character trigrams (best over labels and aliases), halved when the names
/// carry different numbers and never a duplicate when only one has numbers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lexical;

impl Similar for Lexical {
    fn similarity(&mut self, a: &Node, b: &Node) -> Option<f32> {
        Some(lexical(a, b))
    }
}

/// The lexical similarity of [`Lexical`].
pub fn lexical(a: &Node, b: &Node) -> f32 {
    let an: Vec<String> = a.names().collect();
    let bn: Vec<String> = b.names().collect();
    let ak: BTreeSet<String> = an.iter().map(|n| word_key(n)).collect();
    if bn.iter().any(|n| ak.contains(&word_key(n))) {
        return 1.0;
    }
    let mut best = 0.0f32;
    for x in &an {
        let xg = trigrams(x);
        for y in &bn {
            let mut d = dice(&xg, &trigrams(y));
            // "issue 41" and "issue 42", "v1" and "v2": numbers name
            // different things; "dashboard" and "dashboard v2" may be related.
            let (nx, ny) = (numbers(x), numbers(y));
            if nx != ny {
                d = if nx.is_empty() || ny.is_empty() {
                    d.min(0.85)
                } else {
                    d * 0.5
                };
            }
            best = best.max(d);
        }
    }
    best
}

/// Caps a similarity where the labels carry different numbers ("issue 41"
/// and "issue 42" embed almost alike but are different things).
pub fn number_guard(a: &str, b: &str, sim: f32) -> f32 {
    let (na, nb) = (normalize_name(a), normalize_name(b));
    let (x, y) = (numbers(&na), numbers(&nb));
    if x == y {
        sim
    } else if x.is_empty() || y.is_empty() {
        sim.min(0.85)
    } else {
        sim * 0.5
    }
}

/// Similarity through sentence embeddings ([`crate::semantic::node_text`], cached),
/// never below the lexical similarity; the number guard applies.
pub struct EmbedSimilar<'e> {
    embedder: &'e mut crate::embed::Embedder,
    cache: HashMap<String, Option<crate::embed::Vector>>,
}

impl<'e> EmbedSimilar<'e> {
    /// Wraps a loaded embedder.
    pub fn new(embedder: &'e mut crate::embed::Embedder) -> EmbedSimilar<'e> {
        EmbedSimilar {
            embedder,
            cache: HashMap::new(),
        }
    }

    fn vector(&mut self, n: &Node) -> Option<crate::embed::Vector> {
        // The same text the hot graph's semantic index embeds.
        let text = crate::semantic::node_text(n);
        if let Some(v) = self.cache.get(&text) {
            return v.clone();
        }
        let v = self
            .embedder
            .embed_lossy(&[text.as_str()])
            .ok()
            .and_then(|mut v| v.pop().flatten());
        self.cache.insert(text, v.clone());
        v
    }
}

impl Similar for EmbedSimilar<'_> {
    fn similarity(&mut self, a: &Node, b: &Node) -> Option<f32> {
        let lex = lexical(a, b);
        let (Some(va), Some(vb)) = (self.vector(a), self.vector(b)) else {
            return Some(lex);
        };
        let cos = crate::embed::similarity(&va, &vb).unwrap_or(0.0);
        Some(lex.max(number_guard(&a.label, &b.label, cos)))
    }
}

/// The tokens of a name that contain digits, in order.
fn numbers(name: &str) -> Vec<&str> {
    name.split(' ')
        .filter(|w| w.bytes().any(|b| b.is_ascii_digit()))
        .collect()
}

/// A normalised name's words with a plural `s` dropped: equal keys name the
/// same thing.
pub fn word_key(name: &str) -> String {
    let words: Vec<&str> = name
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                &w[..w.len() - 1]
            } else {
                w
            }
        })
        .collect();
    words.join(" ")
}

/// Sorted, de-duplicated hashes of the character trigrams of a normalised
/// name (padded with spaces, so short names still have some).
pub fn trigrams(name: &str) -> Vec<u64> {
    let chars: Vec<char> = std::iter::once(' ')
        .chain(name.chars())
        .chain(std::iter::once(' '))
        .collect();
    let mut v: Vec<u64> = chars
        .windows(3)
        .map(|w| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for c in w {
                h ^= u64::from(*c);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            h
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn dice(a: &[u64], b: &[u64]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * shared) as f32 / (a.len() + b.len()) as f32
}

/// What an adjudicator decided about an ambiguous pair (hot, warm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The same thing: merge the hot node into the warm one as an alias.
    Same,
    /// Different and unrelated: keep both, no edge.
    Distinct,
    /// Different but related: keep both with a `relates_to` edge.
    Related,
    /// The hot node replaces the warm one: keep both, `supersedes` hot → warm.
    Supersedes,
    /// They disagree and neither is known to win: keep both, `contradicts`.
    Contradicts,
}

/// Decides ambiguous pairs (an LLM, or the offline rule).
pub trait Adjudicator {
    /// The verdict on `hot` (from the session) against `warm` (already known).
    fn adjudicate(&mut self, hot: &Node, warm: &Node) -> Verdict;
}

/// The offline rule: ambiguous pairs stay separate and get `relates_to`.
#[derive(Clone, Copy, Debug, Default)]
pub struct OfflineAdjudicator;

impl Adjudicator for OfflineAdjudicator {
    fn adjudicate(&mut self, _hot: &Node, _warm: &Node) -> Verdict {
        Verdict::Related
    }
}

/// Adjudication by the LLM (`prompts/reconcile.md`) through the probe's
/// client. After the first failed call the rest of the run is offline (kept
/// apart with `relates_to`), so a dead endpoint costs one timeout, not one
/// per pair.
pub struct LlmAdjudicator {
    client: crate::llm::LlmClient,
    prompts: crate::llm::Prompts,
    /// Calls made.
    pub calls: u32,
    /// The failure that turned the rest of the run offline.
    pub failure: Option<String>,
}

impl LlmAdjudicator {
    /// Wraps a client and the prompts in force.
    pub fn new(client: crate::llm::LlmClient, prompts: crate::llm::Prompts) -> LlmAdjudicator {
        LlmAdjudicator {
            client,
            prompts,
            calls: 0,
            failure: None,
        }
    }

    /// The LLM adjudicator when `llm.base_url` is configured and the client
    /// builds; `None` means offline.
    pub fn from_config(
        config: &crate::config::Config,
        home: &crate::store::Home,
    ) -> Option<LlmAdjudicator> {
        config
            .llm
            .base_url
            .as_deref()
            .filter(|b| !b.trim().is_empty())?;
        match crate::llm::LlmClient::new(&config.llm) {
            Ok(c) => Some(LlmAdjudicator::new(c, crate::llm::Prompts::load(home))),
            Err(e) => {
                tracing::warn!("llm: {e}; ambiguous pairs are kept apart offline");
                None
            }
        }
    }
}

impl Adjudicator for LlmAdjudicator {
    fn adjudicate(&mut self, hot: &Node, warm: &Node) -> Verdict {
        if self.failure.is_some() {
            return Verdict::Related;
        }
        self.calls += 1;
        match self.client.adjudicate_pair(&self.prompts, hot, warm) {
            Ok(crate::llm::Verdict::Same) => Verdict::Same,
            Ok(crate::llm::Verdict::Unrelated) => Verdict::Distinct,
            // "One replaces or denies the other": the newer decision wins.
            Ok(crate::llm::Verdict::Contradicts) => {
                let choice = matches!(
                    hot.kind,
                    NodeKind::Decision
                        | NodeKind::Correction
                        | NodeKind::Fact
                        | NodeKind::Preference
                        | NodeKind::Restriction
                        | NodeKind::Procedure
                        | NodeKind::Intention
                );
                if choice && hot.last_activated > warm.last_activated {
                    Verdict::Supersedes
                } else {
                    Verdict::Contradicts
                }
            }
            Err(e) => {
                tracing::warn!(
                    "llm adjudication failed: {}; the rest of this run is offline",
                    e.error
                );
                self.failure = Some(e.error.to_string());
                Verdict::Related
            }
        }
    }
}

/// The constants and context of one merge.
#[derive(Clone, Debug)]
pub struct MergeContext<'a> {
    /// The session being merged (its first contribution reinforces weights).
    pub session: &'a str,
    /// The clock.
    pub now: DateTime<Utc>,
    /// Similarity at or above which a same-domain pair is one node.
    pub duplicate_threshold: f32,
    /// Similarity at or above which (below the duplicate threshold) a pair is
    /// ambiguous and goes to the adjudicator.
    pub ambiguous_threshold: f32,
    /// Raise when a new session brings a known node: w += r × (1 − w).
    pub reinforce: f64,
    /// Half-life, in days, of a warm node's weight since its last activation.
    pub half_life_days: f64,
    /// Anchors never fall below this.
    pub anchor_floor: f64,
}

/// A warm node's weight at `at`: halved every `half_life_days` since its last
/// activation; anchors never below `floor`.
pub fn effective_weight(n: &Node, at: DateTime<Utc>, half_life_days: f64, floor: f64) -> f64 {
    let age_days = (at - n.last_activated).num_seconds().max(0) as f64 / 86_400.0;
    let w = if half_life_days > 0.0 {
        n.weight * 0.5f64.powf(age_days / half_life_days)
    } else {
        n.weight
    };
    if n.anchor { w.max(floor) } else { w }
}

/// Whether two kinds may be the same thing (same kind, or one is generic).
fn kinds_compatible(a: NodeKind, b: NodeKind) -> bool {
    a == b || a == NodeKind::Entity || b == NodeKind::Entity
}

/// Kinds never merged by similarity alone (one character apart is another file).
fn exact_only(k: NodeKind) -> bool {
    matches!(k, NodeKind::File | NodeKind::Identifier)
}

/// Postings longer than this are too common to pick candidates with.
const MAX_POSTING: usize = 400;
/// Most candidates scored per hot node.
const MAX_CANDIDATES: usize = 16;

/// A trigram index of warm nodes per domain, for near-duplicate candidates.
struct GramIndex {
    postings: HashMap<(u8, u64), Vec<u32>>,
    ids: Vec<NodeId>,
    sizes: Vec<u32>,
}

impl GramIndex {
    fn build(warm: &Graph, domains: &BTreeSet<crate::graph::Domain>) -> GramIndex {
        let mut idx = GramIndex {
            postings: HashMap::new(),
            ids: Vec::new(),
            sizes: Vec::new(),
        };
        for n in warm.nodes_unordered() {
            if !domains.contains(&n.domain) || exact_only(n.kind) {
                continue;
            }
            let grams = trigrams(&normalize_name(&n.label));
            let i = idx.ids.len() as u32;
            idx.ids.push(n.id.clone());
            idx.sizes.push(grams.len() as u32);
            let d = n.domain as u8;
            for g in grams {
                idx.postings.entry((d, g)).or_default().push(i);
            }
        }
        idx
    }

    /// Warm ids sharing enough trigrams with `name` to be worth scoring.
    fn candidates(&self, domain: crate::graph::Domain, name: &str, min_dice: f32) -> Vec<NodeId> {
        let grams = trigrams(name);
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for g in &grams {
            if let Some(p) = self.postings.get(&(domain as u8, *g)) {
                if p.len() > MAX_POSTING {
                    continue;
                }
                for &i in p {
                    *counts.entry(i).or_default() += 1;
                }
            }
        }
        let mut scored: Vec<(f32, u32)> = counts
            .into_iter()
            .map(|(i, shared)| {
                let total = grams.len() as f32 + self.sizes[i as usize] as f32;
                (2.0 * shared as f32 / total.max(1.0), i)
            })
            // Dice on the label alone is a lower bound only for lexical
            // similarity; keep a margin so aliases and embeddings get a chance.
            .filter(|(d, _)| *d >= min_dice * 0.6)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(MAX_CANDIDATES);
        scored
            .into_iter()
            .map(|(_, i)| self.ids[i as usize].clone())
            .collect()
    }
}

/// The working state of one merge: changed nodes over the unchanged warm graph.
struct Overlay<'w> {
    warm: &'w Graph,
    nodes: BTreeMap<NodeId, Node>,
    edges: BTreeMap<String, Edge>,
    names: HashMap<String, NodeId>,
}

impl Overlay<'_> {
    fn node(&self, id: &NodeId) -> Option<&Node> {
        self.nodes.get(id).or_else(|| self.warm.node(id))
    }

    fn edge(&self, key: &str) -> Option<&Edge> {
        self.edges.get(key).or_else(|| self.warm.edge(key))
    }

    fn add_names(&mut self, n: &Node) {
        for name in n.names() {
            self.names.entry(name).or_insert_with(|| n.id.clone());
        }
    }
}

/// Merges `hot` into `warm`: returns the change to journal and what it did.
/// `meta` is the warm store's bookkeeping (read only).
pub fn reconcile(
    hot: &Graph,
    warm: &Graph,
    meta: &WarmMeta,
    ctx: &MergeContext<'_>,
    sim: &mut dyn Similar,
    adj: &mut dyn Adjudicator,
) -> (WarmEntry, ReconcileReport) {
    let mut report = ReconcileReport::default();
    let mut ov = Overlay {
        warm,
        nodes: BTreeMap::new(),
        edges: BTreeMap::new(),
        names: HashMap::with_capacity(warm.node_count() * 2),
    };
    let mut warm_nodes: Vec<&Node> = warm.nodes_unordered().collect();
    warm_nodes.sort_unstable_by(|a, b| a.id.cmp(&b.id));
    for n in warm_nodes {
        ov.add_names(n);
    }
    let domains: BTreeSet<_> = hot.nodes_unordered().map(|n| n.domain).collect();
    let grams = GramIndex::build(warm, &domains);
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    let mut first_seen = Vec::new();
    let mut disputed: BTreeMap<NodeId, DateTime<Utc>> = BTreeMap::new();
    let mut extra_edges: Vec<Edge> = Vec::new();

    for h in hot.nodes() {
        // 1. Same id. 2. Same normalised label or alias.
        let by_id = ov.node(&h.id).map(|_| h.id.clone());
        let by_name = || h.names().find_map(|name| ov.names.get(&name).cloned());
        let target = match by_id {
            Some(id) => {
                report.merged += 1;
                Some(id)
            }
            None => match by_name() {
                Some(id) => {
                    report.aliased += 1;
                    Some(id)
                }
                None => None,
            },
        };
        // 3. Near-duplicates within the domain.
        let target = target.or_else(|| {
            if exact_only(h.kind) {
                return None;
            }
            let mut best: Option<(f32, NodeId)> = None;
            for cid in
                grams.candidates(h.domain, &normalize_name(&h.label), ctx.ambiguous_threshold)
            {
                let Some(c) = ov.node(&cid) else { continue };
                if c.domain != h.domain || !kinds_compatible(c.kind, h.kind) {
                    continue;
                }
                if let Some(s) = sim.similarity(h, c)
                    && s >= ctx.ambiguous_threshold
                    && best.as_ref().is_none_or(|(b, _)| s > *b)
                {
                    best = Some((s, cid));
                }
            }
            let (s, cid) = best?;
            if s >= ctx.duplicate_threshold {
                report.aliased += 1;
                return Some(cid);
            }
            report.ambiguous += 1;
            let c = ov.node(&cid)?;
            let verdict = adj.adjudicate(h, c);
            let edge = |kind| Edge {
                source: h.id.clone(),
                target: cid.clone(),
                kind,
                weight: f64::from(s).clamp(0.0, 1.0),
            };
            match verdict {
                Verdict::Same => {
                    report.aliased += 1;
                    return Some(cid);
                }
                Verdict::Distinct => {}
                Verdict::Related => {
                    report.related += 1;
                    extra_edges.push(edge(EdgeKind::RelatesTo));
                }
                Verdict::Supersedes => extra_edges.push(edge(EdgeKind::Supersedes)),
                Verdict::Contradicts => extra_edges.push(edge(EdgeKind::Contradicts)),
            }
            None
        });
        match target {
            Some(id) => {
                let Some(base) = ov.node(&id).cloned() else {
                    continue;
                };
                let merged = merge_node(&base, h, ctx);
                if merged != base {
                    report.updated += 1;
                    ov.add_names(&merged);
                    ov.nodes.insert(id.clone(), merged);
                }
                map.insert(h.id.clone(), id);
            }
            None => {
                report.added += 1;
                let mut n = h.clone();
                n.weight = n.weight.clamp(0.0, 1.0);
                ov.add_names(&n);
                first_seen.push((n.id.clone(), ctx.now));
                ov.nodes.insert(n.id.clone(), n);
                map.insert(h.id.clone(), h.id.clone());
            }
        }
    }

    // Edge union, remapped onto the warm ids.
    let hot_edges = hot.edges().into_iter().cloned();
    for e in hot_edges.chain(extra_edges) {
        // Hot ends map onto their warm ids; adjudicated edges already name warm ids.
        let resolve = |id: &NodeId| {
            map.get(id)
                .cloned()
                .or_else(|| ov.node(id).map(|n| n.id.clone()))
        };
        let (Some(s), Some(t)) = (resolve(&e.source), resolve(&e.target)) else {
            continue;
        };
        let (s, t) = (&s, &t);
        if s == t {
            continue;
        }
        let key = edge_key(s, e.kind, t);
        let weight = e.weight.clamp(0.0, 1.0);
        match ov.edge(&key) {
            Some(old) if old.weight >= weight => {}
            Some(old) => {
                let mut new = old.clone();
                new.weight = weight;
                report.edges_updated += 1;
                ov.edges.insert(key, new);
            }
            None => {
                report.edges_added += 1;
                match e.kind {
                    EdgeKind::Supersedes => {
                        report.superseded += 1;
                        disputed.insert(t.clone(), ctx.now);
                    }
                    EdgeKind::Contradicts => {
                        report.contradicted += 1;
                        disputed.insert(s.clone(), ctx.now);
                        disputed.insert(t.clone(), ctx.now);
                    }
                    _ => {}
                }
                ov.edges.insert(
                    key,
                    Edge {
                        source: s.clone(),
                        target: t.clone(),
                        kind: e.kind,
                        weight,
                    },
                );
            }
        }
    }

    let changed = !ov.nodes.is_empty() || !ov.edges.is_empty();
    let entry = WarmEntry {
        cause: format!("reconcile:{}", ctx.session),
        now: Some(ctx.now),
        nodes: ov.nodes.into_values().collect(),
        edges: ov.edges.into_values().collect(),
        first_seen,
        disputed: disputed.into_iter().collect(),
        seeded: Vec::new(),
        sessions: if changed || !meta.sessions.contains_key(ctx.session) {
            vec![(ctx.session.to_owned(), ctx.now)]
        } else {
            Vec::new()
        },
        root: None,
    };
    (entry, report)
}

/// Merges a hot node into its warm counterpart (idempotent).
pub fn merge_node(warm: &Node, hot: &Node, ctx: &MergeContext<'_>) -> Node {
    let mut n = warm.clone();
    // Names: the warm label stays; the hot label and aliases become aliases.
    let known: BTreeSet<String> = n.names().collect();
    let mut seen = known;
    for name in std::iter::once(&hot.label).chain(hot.aliases.iter()) {
        let norm = normalize_name(name);
        if norm.is_empty() || seen.contains(&norm) || n.aliases.len() >= MAX_ALIASES {
            continue;
        }
        seen.insert(norm);
        n.aliases.push(name.clone());
    }
    // Weight: the larger of the warm weight (aged to the hot activation) and
    // the hot one; a first contribution from a new session reinforces it.
    let floor = if n.anchor || hot.anchor {
        ctx.anchor_floor
    } else {
        0.0
    };
    let aged = if hot.last_activated > warm.last_activated {
        effective_weight(warm, hot.last_activated, ctx.half_life_days, floor)
    } else {
        warm.weight
    };
    let mut w = aged.max(hot.weight);
    let hot_brings_session = hot.provenance.iter().any(|p| p.session == ctx.session);
    let warm_has_session = warm.provenance.iter().any(|p| p.session == ctx.session);
    if hot_brings_session && !warm_has_session {
        w += ctx.reinforce * (1.0 - w);
    }
    n.weight = w.clamp(0.0, 1.0).max(floor);
    if hot.last_activated >= warm.last_activated {
        if hot.detail.is_some() {
            n.detail.clone_from(&hot.detail);
        }
        if n.kind == NodeKind::Entity && hot.kind != NodeKind::Entity {
            n.kind = hot.kind;
        }
    }
    n.last_activated = warm.last_activated.max(hot.last_activated);
    n.anchor = warm.anchor || hot.anchor;
    for p in &hot.provenance {
        if let Some(q) = n.provenance.iter_mut().find(|q| q.session == p.session) {
            q.first_turn = q.first_turn.min(p.first_turn);
            q.last_turn = q.last_turn.max(p.last_turn);
            q.mentions = q.mentions.max(p.mentions);
        } else {
            n.provenance.push(p.clone());
        }
    }
    while n.provenance.len() > MAX_PROVENANCE {
        n.provenance.remove(0);
    }
    n
}

/// The part of a graph whose nodes pass `keep`, with the edges among them.
pub fn subgraph(g: &Graph, keep: impl Fn(&Node) -> bool) -> Graph {
    let mut out = Graph::new();
    for n in g.nodes_unordered().filter(|n| keep(n)) {
        out.upsert_node(n.clone());
    }
    for e in g.edges() {
        if out.contains(&e.source) && out.contains(&e.target) {
            let _ = out.upsert_edge(e.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Domain, Provenance};
    use crate::warm::apply_entry;

    fn t(h: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000 + h * 3600, 0).unwrap_or_default()
    }

    fn node(label: &str, domain: Domain, w: f64, session: &str) -> Node {
        let id = NodeId::slug(label).unwrap_or_else(|| unreachable!());
        let mut n = Node::new(id, label, domain, w, t(0));
        n.provenance.push(Provenance {
            session: session.into(),
            first_turn: 1,
            last_turn: 3,
            mentions: 2,
        });
        n
    }

    fn ctx(session: &str) -> MergeContext<'_> {
        MergeContext {
            session,
            now: t(1),
            duplicate_threshold: 0.88,
            ambiguous_threshold: 0.6,
            reinforce: 0.1,
            half_life_days: 21.0,
            anchor_floor: 0.2,
        }
    }

    fn run(hot: &Graph, warm: &mut Graph, meta: &mut WarmMeta, session: &str) -> ReconcileReport {
        let (entry, report) = reconcile(
            hot,
            warm,
            meta,
            &ctx(session),
            &mut Lexical,
            &mut OfflineAdjudicator,
        );
        assert!(apply_entry(warm, meta, &entry).is_ok());
        report
    }

    #[test]
    fn merges_by_id_and_alias_and_is_idempotent() {
        let mut warm = Graph::new();
        let mut meta = WarmMeta::default();
        let mut pg = node("PostgreSQL", Domain::Technical, 0.6, "s0");
        pg.aliases.push("Postgres".into());
        warm.upsert_node(pg);
        let mut hot = Graph::new();
        hot.upsert_node(node("postgres", Domain::Technical, 0.4, "s1"));
        hot.upsert_node(node("Postwick", Domain::Technical, 0.7, "s1"));
        hot.upsert_node(node("Mailvane", Domain::Technical, 0.3, "s1"));
        let postwick = NodeId::slug("postwick").unwrap_or_else(|| unreachable!());
        let mailvane = NodeId::slug("mailvane").unwrap_or_else(|| unreachable!());
        let _ = hot.upsert_edge(Edge {
            source: postwick.clone(),
            target: mailvane.clone(),
            kind: EdgeKind::Supersedes,
            weight: 1.0,
        });
        let r = run(&hot, &mut warm, &mut meta, "s1");
        assert_eq!((r.aliased, r.added, r.superseded), (1, 2, 1), "{r:?}");
        assert_eq!(warm.node_count(), 3);
        let pg = warm
            .node(&NodeId::slug("postgresql").unwrap_or_else(|| unreachable!()))
            .cloned();
        let pg = pg.unwrap_or_else(|| unreachable!());
        assert_eq!(pg.provenance.len(), 2);
        // A new session reinforced it above its old weight.
        assert!(pg.weight > 0.6);
        assert!(meta.disputed.contains_key(&mailvane));
        let before = warm.to_doc();
        let again = run(&hot, &mut warm, &mut meta, "s1");
        assert_eq!(warm.to_doc(), before, "second reconcile changed the graph");
        assert_eq!(
            (
                again.updated,
                again.added,
                again.edges_added,
                again.edges_updated
            ),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn near_duplicates_merge_and_ambiguous_pairs_relate() {
        let mut warm = Graph::new();
        let mut meta = WarmMeta::default();
        warm.upsert_node(node("invoice service", Domain::Project, 0.5, "s0"));
        warm.upsert_node(node("billing dashboard", Domain::Project, 0.5, "s0"));
        warm.upsert_node(node("invoice services", Domain::Technical, 0.5, "s0"));
        let mut hot = Graph::new();
        hot.upsert_node(node("invoices service", Domain::Project, 0.5, "s1"));
        hot.upsert_node(node("billing dashboards v2", Domain::Project, 0.5, "s1"));
        let r = run(&hot, &mut warm, &mut meta, "s1");
        // Same domain near-duplicate → alias; the technical one is another domain.
        assert_eq!(r.aliased, 1, "{r:?}");
        let inv = warm
            .node(&NodeId::slug("invoice service").unwrap_or_else(|| unreachable!()))
            .cloned();
        assert!(inv.is_some_and(|n| n.aliases.iter().any(|a| a == "invoices service")));
        assert_eq!((r.ambiguous, r.related, r.added), (1, 1, 1), "{r:?}");
        let v2 = NodeId::slug("billing dashboards v2").unwrap_or_else(|| unreachable!());
        assert!(
            warm.edges_of(&v2)
                .iter()
                .any(|e| e.kind == EdgeKind::RelatesTo)
        );
    }

    struct Judge(Verdict);
    impl Adjudicator for Judge {
        fn adjudicate(&mut self, _: &Node, _: &Node) -> Verdict {
            self.0
        }
    }

    #[test]
    fn adjudicator_verdicts_apply() {
        let mut warm = Graph::new();
        let meta = WarmMeta::default();
        warm.upsert_node(node("billing dashboard", Domain::Project, 0.5, "s0"));
        let mut hot = Graph::new();
        hot.upsert_node(node("billing dashboards v2", Domain::Project, 0.5, "s1"));
        let (e, r) = reconcile(
            &hot,
            &warm,
            &meta,
            &ctx("s1"),
            &mut Lexical,
            &mut Judge(Verdict::Same),
        );
        assert_eq!((r.aliased, r.added), (1, 0));
        assert_eq!(e.nodes.len(), 1);
        let (e, r) = reconcile(
            &hot,
            &warm,
            &meta,
            &ctx("s1"),
            &mut Lexical,
            &mut Judge(Verdict::Supersedes),
        );
        assert_eq!((r.superseded, r.added), (1, 1));
        assert!(e.edges.iter().any(|x| x.kind == EdgeKind::Supersedes && x.target.as_str() == "billing-dashboard"));
    }

    #[test]
    fn lexical_similarity_values() {
        let mut l = Lexical;
        let n = |s: &str| node(s, Domain::Project, 0.5, "s0");
        let s = |a: &str, b: &str, l: &mut Lexical| l.similarity(&n(a), &n(b)).unwrap_or(0.0);
        assert!((s("invoice service", "Invoices Service", &mut l) - 1.0).abs() < 1e-6);
        assert!(s("topic 0 item 1", "topic 1 item 0", &mut l) < 0.7);
        let amb = s("billing dashboard", "billing dashboards v2", &mut l);
        assert!((0.7..0.88).contains(&amb), "{amb}");
        assert!(s("Mailvane", "Postwick", &mut l) < 0.3);
        assert!(s("topic 3 item 10", "topic 3 item 11", &mut l) < 0.7);
        assert!(s("billing dashboard v2", "billing dashboard v3", &mut l) < 0.7);
    }

    #[test]
    fn embeddings_find_what_letters_miss_when_the_model_is_there() {
        let (embedder, notice) = crate::embed::load_optional(&crate::embed::EmbedPaths::discover());
        let Some(mut e) = embedder else {
            eprintln!("skipped: {notice:?}");
            return;
        };
        let mut sim = EmbedSimilar::new(&mut e);
        let n = |s: &str| node(s, Domain::Technical, 0.5, "s0");
        let mut s = |a: &str, b: &str| sim.similarity(&n(a), &n(b)).unwrap_or(0.0);
        let close = s("Postgres database", "PostgreSQL database");
        let far = s("Postgres database", "email templates");
        let numbered = s("issue 41", "issue 42");
        eprintln!("close {close} far {far} numbered {numbered}");
        assert!(close > far + 0.2, "close {close} far {far}");
        assert!(numbered < 0.7, "{numbered}");
        // Never below the lexical similarity.
        assert!((s("invoice service", "invoices service") - 1.0).abs() < 1e-6);
    }

    #[test]
    fn aged_warm_weight_does_not_resurrect() {
        let mut w = node("old thing", Domain::Project, 0.8, "s0");
        w.last_activated = t(0);
        let mut h = w.clone();
        h.weight = 0.1;
        h.last_activated = t(24 * 42);
        let m = merge_node(&w, &h, &ctx("s0"));
        assert!(m.weight < 0.3, "{}", m.weight);
    }
}
