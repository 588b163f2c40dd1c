//! The weighted memory graph: four domain subgraphs of one `StableGraph`.
//!
//! Identity is always our own [`NodeId`] (a slug of the label); petgraph's
//! indices never leave this module. The persisted and patched form is the
//! [`GraphDoc`]: nodes and edges keyed by stable strings, never array
//! positions, so an RFC 6902 patch addresses `/nodes/<id>/weight` or
//! `/edges/<source>|<kind>|<target>`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;

use chrono::{DateTime, Utc};
use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableDiGraph};
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

/// Version of the JSON document form written to disk.
pub const DOC_VERSION: u32 = 1;

/// The four domain subgraphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// People, teams, who owns and reviews what.
    Relationship,
    /// Products, features, deadlines, plans and decisions about them.
    Project,
    /// Code, files, libraries, services, errors and technical choices.
    Technical,
    /// The user's own preferences, habits and constraints.
    Personal,
}

impl Domain {
    /// All domains in a fixed order.
    pub const ALL: [Domain; 4] = [
        Domain::Relationship,
        Domain::Project,
        Domain::Technical,
        Domain::Personal,
    ];

    /// The lowercase name used in documents and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Relationship => "relationship",
            Domain::Project => "project",
            Domain::Technical => "technical",
            Domain::Personal => "personal",
        }
    }

    /// Parses a lowercase domain name.
    pub fn parse(s: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stable node identifier: a lowercase slug (`rolling-memory-graph`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(String);

/// Longest id accepted.
pub const MAX_ID_LEN: usize = 80;

impl NodeId {
    /// Makes the slug of a label: lowercase single-byte letters and digits joined by
    /// single dashes. Returns `None` when nothing sluggable remains.
    pub fn slug(label: &str) -> Option<NodeId> {
        let mut out = String::with_capacity(label.len());
        let mut dash = false;
        for c in label.chars() {
            if c.is_ascii_alphanumeric() {
                if dash && !out.is_empty() {
                    out.push('-');
                }
                dash = false;
                out.push(c.to_ascii_lowercase());
            } else {
                dash = true;
            }
        }
        if out.len() > MAX_ID_LEN {
            // Cut at a word boundary within the limit.
            let cut = out[..MAX_ID_LEN]
                .rfind('-')
                .filter(|&p| p > MAX_ID_LEN / 2)
                .unwrap_or(MAX_ID_LEN);
            out.truncate(cut);
        }
        while out.ends_with('-') {
            out.pop();
        }
        (!out.is_empty()).then_some(NodeId(out))
    }

    /// Accepts an existing id only if it is already a valid slug.
    pub fn parse(s: &str) -> Option<NodeId> {
        let valid = !s.is_empty()
            && s.len() <= MAX_ID_LEN
            && !s.starts_with('-')
            && !s.ends_with('-')
            && !s.contains("--")
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        valid.then(|| NodeId(s.to_owned()))
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What sort of thing a node stands for; guides rendering and merging.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A named thing: product, library, service, concept.
    #[default]
    Entity,
    /// A person.
    Person,
    /// A project, feature or milestone.
    Project,
    /// A file path.
    File,
    /// A code identifier (function, type, variant).
    Identifier,
    /// A choice that was made ("use X for email").
    Decision,
    /// A correction of something said earlier.
    Correction,
    /// A preference, habit or constraint of the user.
    Preference,
    /// A fact worth keeping (a number, limit, date or deadline with its subject).
    Fact,
    /// Something not to do ("never force-push to main").
    Restriction,
    /// How a routine task is done: the command to test, deploy, release.
    Procedure,
    /// A next step, plan or blocker.
    Intention,
}

impl NodeKind {
    /// The snake_case name used in documents and output.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Entity => "entity",
            NodeKind::Person => "person",
            NodeKind::Project => "project",
            NodeKind::File => "file",
            NodeKind::Identifier => "identifier",
            NodeKind::Decision => "decision",
            NodeKind::Correction => "correction",
            NodeKind::Preference => "preference",
            NodeKind::Fact => "fact",
            NodeKind::Restriction => "restriction",
            NodeKind::Procedure => "procedure",
            NodeKind::Intention => "intention",
        }
    }
}

/// Where a node was seen: one entry per session, bounded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The session id.
    pub session: String,
    /// First turn (1-based) the node was seen in that session.
    pub first_turn: u32,
    /// Last turn it was seen in that session.
    pub last_turn: u32,
    /// How many probe cycles touched it in that session.
    pub mentions: u32,
}

/// A sentence that mentioned a node: where it was said, by whom, redacted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The session id.
    pub session: String,
    /// The turn (1-based) in that session.
    pub turn: u32,
    /// `user` or `assistant`.
    pub speaker: String,
    /// The sentence, redacted and cut to [`MAX_EVIDENCE_CHARS`].
    pub text: String,
}

/// Most evidence sentences kept per node (oldest dropped first).
pub const MAX_EVIDENCE: usize = 6;

/// Longest evidence sentence kept, in characters.
pub const MAX_EVIDENCE_CHARS: usize = 300;

/// Most provenance entries kept per node (oldest dropped first).
pub const MAX_PROVENANCE: usize = 32;

/// A node: five core fields plus optional extras.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Stable id; equals the node's key in the document.
    pub id: NodeId,
    /// Human-readable name.
    pub label: String,
    /// Which subgraph it belongs to.
    pub domain: Domain,
    /// Current relevance in 0..=1; decay acts on it.
    pub weight: f64,
    /// When it was last activated (touched by a probe or mentioned).
    pub last_activated: DateTime<Utc>,
    /// What sort of thing it is.
    #[serde(default, skip_serializing_if = "is_default_kind")]
    pub kind: NodeKind,
    /// One line of detail drawn from the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Other names it goes by (matched by the gate and the reconciler).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Anchors (seeded from flat memory) never fall below the floor.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anchor: bool,
    /// The sentences that mentioned it, newest last, bounded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// Which sessions and turns it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<Provenance>,
}

fn is_default_kind(k: &NodeKind) -> bool {
    *k == NodeKind::Entity
}

impl Node {
    /// A fresh node with the given core fields and no extras.
    pub fn new(id: NodeId, label: &str, domain: Domain, weight: f64, now: DateTime<Utc>) -> Node {
        Node {
            id,
            label: label.to_owned(),
            domain,
            weight,
            last_activated: now,
            kind: NodeKind::Entity,
            detail: None,
            aliases: Vec::new(),
            anchor: false,
            evidence: Vec::new(),
            provenance: Vec::new(),
        }
    }

    /// Records a sentence that mentioned this node (deduplicated, bounded).
    pub fn note_evidence(&mut self, session: &str, turn: u32, speaker: &str, text: &str) {
        let text: String = text.chars().take(MAX_EVIDENCE_CHARS).collect();
        if self.evidence.iter().any(|e| e.text == text) {
            return;
        }
        self.evidence.push(Evidence {
            session: session.to_owned(),
            turn,
            speaker: speaker.to_owned(),
            text,
        });
        if self.evidence.len() > MAX_EVIDENCE {
            self.evidence.remove(0);
        }
    }

    /// Records that `session` touched this node at `turn`.
    pub fn note_provenance(&mut self, session: &str, turn: u32) {
        if let Some(p) = self.provenance.iter_mut().find(|p| p.session == session) {
            p.last_turn = p.last_turn.max(turn);
            p.first_turn = p.first_turn.min(turn);
            p.mentions = p.mentions.saturating_add(1);
        } else {
            self.provenance.push(Provenance {
                session: session.to_owned(),
                first_turn: turn,
                last_turn: turn,
                mentions: 1,
            });
            if self.provenance.len() > MAX_PROVENANCE {
                self.provenance.remove(0);
            }
        }
    }

    /// Every name this node answers to, normalised for matching.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        std::iter::once(self.label.as_str())
            .chain(self.aliases.iter().map(String::as_str))
            .map(normalize_name)
    }
}

/// Normalises a name for matching: lowercase, punctuation folded to spaces,
/// whitespace collapsed.
pub fn normalize_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_alphanumeric() || c == '_' || c == '.' || c == '/' {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

/// How two nodes relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// A loose association (co-mentioned, related).
    RelatesTo,
    /// The source replaces the target (new decision → old); both stay.
    Supersedes,
    /// The two disagree and neither is known to win.
    Contradicts,
    /// The source is a part of the target.
    PartOf,
    /// The source needs the target.
    DependsOn,
    /// The source uses or chose the target.
    Uses,
    /// A person owns, leads or reviews the target.
    Owns,
    /// A correction fixes what the target said.
    Corrects,
}

impl EdgeKind {
    /// All kinds, in a fixed order.
    pub const ALL: [EdgeKind; 8] = [
        EdgeKind::RelatesTo,
        EdgeKind::Supersedes,
        EdgeKind::Contradicts,
        EdgeKind::PartOf,
        EdgeKind::DependsOn,
        EdgeKind::Uses,
        EdgeKind::Owns,
        EdgeKind::Corrects,
    ];

    /// The snake_case name used in keys and output.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::RelatesTo => "relates_to",
            EdgeKind::Supersedes => "supersedes",
            EdgeKind::Contradicts => "contradicts",
            EdgeKind::PartOf => "part_of",
            EdgeKind::DependsOn => "depends_on",
            EdgeKind::Uses => "uses",
            EdgeKind::Owns => "owns",
            EdgeKind::Corrects => "corrects",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<EdgeKind> {
        EdgeKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A directed, weighted, typed edge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Where it starts.
    pub source: NodeId,
    /// Where it ends.
    pub target: NodeId,
    /// What it means.
    pub kind: EdgeKind,
    /// Strength in 0..=1.
    pub weight: f64,
}

impl Edge {
    /// The stable key of this edge in the document: `source|kind|target`.
    pub fn key(&self) -> String {
        edge_key(&self.source, self.kind, &self.target)
    }
}

/// The document key of an edge.
pub fn edge_key(source: &NodeId, kind: EdgeKind, target: &NodeId) -> String {
    format!("{}|{}|{}", source, kind.as_str(), target)
}

/// The JSON document form of a graph: what is persisted and what patches address.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphDoc {
    /// Document format version.
    #[serde(default = "doc_version")]
    pub version: u32,
    /// Nodes keyed by id.
    #[serde(default)]
    pub nodes: BTreeMap<String, Node>,
    /// Edges keyed by `source|kind|target`.
    #[serde(default)]
    pub edges: BTreeMap<String, Edge>,
}

fn doc_version() -> u32 {
    DOC_VERSION
}

/// Why a document is not a valid graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// A node's key is not its id, or the id is not a slug.
    #[error("node key {key:?} does not match a valid id {id:?}")]
    BadNodeKey {
        /// The document key.
        key: String,
        /// The id inside the node.
        id: String,
    },
    /// A field is out of range or malformed.
    #[error("node {id}: {reason}")]
    BadNode {
        /// The node id.
        id: String,
        /// What is wrong.
        reason: String,
    },
    /// An edge's key does not match its contents.
    #[error("edge key {key:?} does not match its source, kind and target")]
    BadEdgeKey {
        /// The document key.
        key: String,
    },
    /// An edge points at a node that does not exist.
    #[error("edge {key} points at a missing node {missing}")]
    DanglingEdge {
        /// The edge key.
        key: String,
        /// The missing id.
        missing: String,
    },
    /// An edge is malformed.
    #[error("edge {key}: {reason}")]
    BadEdge {
        /// The edge key.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// Longest label accepted.
pub const MAX_LABEL_LEN: usize = 160;
/// Longest detail accepted.
pub const MAX_DETAIL_LEN: usize = 400;
/// Most aliases a node may carry.
pub const MAX_ALIASES: usize = 24;

fn check_unit(x: f64) -> bool {
    x.is_finite() && (0.0..=1.0).contains(&x)
}

/// Checks one node of a document against its key and the field limits.
pub fn check_node(key: &str, n: &Node) -> Result<(), GraphError> {
    if key != n.id.as_str() || NodeId::parse(key).is_none() {
        return Err(GraphError::BadNodeKey {
            key: key.to_owned(),
            id: n.id.to_string(),
        });
    }
    let bad = |reason: String| GraphError::BadNode {
        id: key.to_owned(),
        reason,
    };
    if n.label.trim().is_empty() {
        return Err(bad("empty label".into()));
    }
    if n.label.chars().count() > MAX_LABEL_LEN {
        return Err(bad(format!("label longer than {MAX_LABEL_LEN} characters")));
    }
    if !check_unit(n.weight) {
        return Err(bad(format!("weight {} outside 0..1", n.weight)));
    }
    if let Some(d) = &n.detail
        && d.chars().count() > MAX_DETAIL_LEN
    {
        return Err(bad(format!(
            "detail longer than {MAX_DETAIL_LEN} characters"
        )));
    }
    if n.aliases.len() > MAX_ALIASES {
        return Err(bad(format!("more than {MAX_ALIASES} aliases")));
    }
    if n.aliases
        .iter()
        .any(|a| a.trim().is_empty() || a.chars().count() > MAX_LABEL_LEN)
    {
        return Err(bad("empty or overlong alias".into()));
    }
    if n.provenance.len() > MAX_PROVENANCE {
        return Err(bad(format!(
            "more than {MAX_PROVENANCE} provenance entries"
        )));
    }
    Ok(())
}

/// Checks one edge of a document against its key and the field limits.
pub fn check_edge(key: &str, edge: &Edge) -> Result<(), GraphError> {
    if key != edge.key() {
        return Err(GraphError::BadEdgeKey {
            key: key.to_owned(),
        });
    }
    if !check_unit(edge.weight) {
        return Err(GraphError::BadEdge {
            key: key.to_owned(),
            reason: format!("weight {} outside 0..1", edge.weight),
        });
    }
    if edge.source == edge.target {
        return Err(GraphError::BadEdge {
            key: key.to_owned(),
            reason: "an edge may not loop back to its own node".into(),
        });
    }
    Ok(())
}

/// The in-memory graph: a petgraph `StableGraph` plus our id → index map.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    inner: StableDiGraph<Node, Edge>,
    index: HashMap<NodeId, NodeIndex>,
    edge_index: HashMap<String, EdgeIndex>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    /// Builds a graph from its document form, validating every node and edge.
    pub fn from_doc(doc: GraphDoc) -> Result<Graph, GraphError> {
        let mut g = Graph::new();
        for (key, node) in doc.nodes {
            check_node(&key, &node)?;
            let id = node.id.clone();
            let ix = g.inner.add_node(node);
            g.index.insert(id, ix);
        }
        for (key, edge) in doc.edges {
            check_edge(&key, &edge)?;
            let (Some(&s), Some(&t)) = (g.index.get(&edge.source), g.index.get(&edge.target))
            else {
                let missing = if g.index.contains_key(&edge.source) {
                    edge.target.to_string()
                } else {
                    edge.source.to_string()
                };
                return Err(GraphError::DanglingEdge { key, missing });
            };
            let ex = g.inner.add_edge(s, t, edge);
            g.edge_index.insert(key, ex);
        }
        Ok(g)
    }

    /// The document form (sorted by key, so serialisation is deterministic).
    pub fn to_doc(&self) -> GraphDoc {
        GraphDoc {
            version: DOC_VERSION,
            nodes: self
                .inner
                .node_weights()
                .map(|n| (n.id.to_string(), n.clone()))
                .collect(),
            edges: self
                .inner
                .edge_weights()
                .map(|e| (e.key(), e.clone()))
                .collect(),
        }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.inner.node_count()
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.inner.edge_count()
    }

    /// True when the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.inner.node_count() == 0
    }

    /// Whether a node with this id exists.
    pub fn contains(&self, id: &NodeId) -> bool {
        self.index.contains_key(id)
    }

    /// The node with this id.
    pub fn node(&self, id: &NodeId) -> Option<&Node> {
        self.index.get(id).map(|&ix| &self.inner[ix])
    }

    /// Mutable access to a node. Callers must keep `id` unchanged.
    pub fn node_mut(&mut self, id: &NodeId) -> Option<&mut Node> {
        let ix = *self.index.get(id)?;
        Some(&mut self.inner[ix])
    }

    /// All nodes, sorted by id (deterministic).
    pub fn nodes(&self) -> Vec<&Node> {
        let mut v: Vec<&Node> = self.inner.node_weights().collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// All nodes in arbitrary (but stable for one process) order.
    pub fn nodes_unordered(&self) -> impl Iterator<Item = &Node> {
        self.inner.node_weights()
    }

    /// Mutable iteration over all nodes; callers must keep ids unchanged.
    pub fn nodes_mut(&mut self) -> impl Iterator<Item = &mut Node> {
        self.inner.node_weights_mut()
    }

    /// All edges, sorted by key.
    pub fn edges(&self) -> Vec<&Edge> {
        let mut v: Vec<&Edge> = self.inner.edge_weights().collect();
        v.sort_by_key(|e| e.key());
        v
    }

    /// All edges in arbitrary (but stable for one process) order.
    pub fn edges_unordered(&self) -> impl Iterator<Item = &Edge> {
        self.inner.edge_weights()
    }

    /// Removes an edge by key.
    pub fn remove_edge(&mut self, key: &str) -> Option<Edge> {
        let ex = self.edge_index.remove(key)?;
        self.inner.remove_edge(ex)
    }

    /// The edge with this key.
    pub fn edge(&self, key: &str) -> Option<&Edge> {
        self.edge_index.get(key).map(|&ex| &self.inner[ex])
    }

    /// Inserts a node, or replaces the node with the same id (edges kept).
    pub fn upsert_node(&mut self, node: Node) {
        if let Some(&ix) = self.index.get(&node.id) {
            self.inner[ix] = node;
        } else {
            let id = node.id.clone();
            let ix = self.inner.add_node(node);
            self.index.insert(id, ix);
        }
    }

    /// Inserts or replaces an edge. Fails if either end is missing or it loops.
    pub fn upsert_edge(&mut self, edge: Edge) -> Result<(), GraphError> {
        let key = edge.key();
        if edge.source == edge.target {
            return Err(GraphError::BadEdge {
                key,
                reason: "an edge may not loop back to its own node".into(),
            });
        }
        if let Some(&ex) = self.edge_index.get(&key) {
            self.inner[ex] = edge;
            return Ok(());
        }
        let (Some(&s), Some(&t)) = (self.index.get(&edge.source), self.index.get(&edge.target))
        else {
            let missing = if self.index.contains_key(&edge.source) {
                edge.target.to_string()
            } else {
                edge.source.to_string()
            };
            return Err(GraphError::DanglingEdge { key, missing });
        };
        let ex = self.inner.add_edge(s, t, edge);
        self.edge_index.insert(key, ex);
        Ok(())
    }

    /// Removes a node and every edge touching it.
    pub fn remove_node(&mut self, id: &NodeId) -> Option<Node> {
        let ix = self.index.remove(id)?;
        let keys: Vec<String> = self
            .inner
            .edges_directed(ix, petgraph::Direction::Outgoing)
            .chain(self.inner.edges_directed(ix, petgraph::Direction::Incoming))
            .map(|e| e.weight().key())
            .collect();
        for k in keys {
            self.edge_index.remove(&k);
        }
        self.inner.remove_node(ix)
    }

    /// Edges touching a node, in either direction, sorted by key.
    pub fn edges_of(&self, id: &NodeId) -> Vec<&Edge> {
        let Some(&ix) = self.index.get(id) else {
            return Vec::new();
        };
        let mut v: Vec<&Edge> = self
            .inner
            .edges_directed(ix, petgraph::Direction::Outgoing)
            .chain(self.inner.edges_directed(ix, petgraph::Direction::Incoming))
            .map(|e| e.weight())
            .collect();
        // A stable order without building key strings (hubs have hundreds of edges).
        v.sort_by(|a, b| {
            (a.source.as_str(), a.kind, a.target.as_str()).cmp(&(
                b.source.as_str(),
                b.kind,
                b.target.as_str(),
            ))
        });
        v
    }

    /// Edges touching a node with the node at their other end (unsorted).
    pub fn edges_with_nodes(&self, id: &NodeId) -> impl Iterator<Item = (&Edge, &Node)> {
        self.index.get(id).into_iter().flat_map(move |&ix| {
            self.inner
                .edges_directed(ix, petgraph::Direction::Outgoing)
                .map(move |e| (e.weight(), &self.inner[e.target()]))
                .chain(
                    self.inner
                        .edges_directed(ix, petgraph::Direction::Incoming)
                        .map(move |e| (e.weight(), &self.inner[e.source()])),
                )
        })
    }

    /// Neighbours in either direction (unsorted, may repeat), without allocating.
    pub fn neighbors(&self, id: &NodeId) -> impl Iterator<Item = &Node> {
        self.index.get(id).into_iter().flat_map(move |&ix| {
            self.inner
                .neighbors_undirected(ix)
                .map(move |n| &self.inner[n])
        })
    }

    /// The node that supersedes this one, if any (newest first when several).
    pub fn superseded_by(&self, id: &NodeId) -> Option<&Node> {
        let &ix = self.index.get(id)?;
        self.inner
            .edges_directed(ix, petgraph::Direction::Incoming)
            .filter(|e| e.weight().kind == EdgeKind::Supersedes)
            .map(|e| &self.inner[e.source()])
            .max_by(|a, b| {
                a.last_activated
                    .cmp(&b.last_activated)
                    .then(a.id.cmp(&b.id))
            })
    }

    /// The nodes this one supersedes, sorted by id.
    pub fn supersedes(&self, id: &NodeId) -> Vec<&Node> {
        let Some(&ix) = self.index.get(id) else {
            return Vec::new();
        };
        let mut v: Vec<&Node> = self
            .inner
            .edges_directed(ix, petgraph::Direction::Outgoing)
            .filter(|e| e.weight().kind == EdgeKind::Supersedes)
            .map(|e| &self.inner[e.target()])
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// Whether the node is the source or target of a `supersedes` edge.
    pub fn in_supersedes_chain(&self, id: &NodeId) -> bool {
        let Some(&ix) = self.index.get(id) else {
            return false;
        };
        self.inner
            .edges_directed(ix, petgraph::Direction::Outgoing)
            .chain(self.inner.edges_directed(ix, petgraph::Direction::Incoming))
            .any(|e| e.weight().kind == EdgeKind::Supersedes)
    }

    /// Undirected hop distance from the nearest focus node, for every node
    /// within `cap` hops. Nodes further away or disconnected are absent.
    pub fn distances(&self, focus: &[NodeId], cap: u32) -> HashMap<NodeId, u32> {
        self.distances_ref(focus, cap)
            .into_iter()
            .map(|(id, d)| (id.clone(), d))
            .collect()
    }

    /// Like [`Graph::distances`], borrowing the ids instead of cloning them.
    pub fn distances_ref(&self, focus: &[NodeId], cap: u32) -> HashMap<&NodeId, u32> {
        let mut dist: HashMap<NodeIndex, u32> = HashMap::new();
        let mut queue = VecDeque::new();
        for id in focus {
            if let Some(&ix) = self.index.get(id)
                && dist.insert(ix, 0).is_none()
            {
                queue.push_back(ix);
            }
        }
        while let Some(ix) = queue.pop_front() {
            let d = dist[&ix];
            if d >= cap {
                continue;
            }
            for n in self.inner.neighbors_undirected(ix) {
                if let std::collections::hash_map::Entry::Vacant(v) = dist.entry(n) {
                    v.insert(d + 1);
                    queue.push_back(n);
                }
            }
        }
        dist.into_iter()
            .map(|(ix, d)| (&self.inner[ix].id, d))
            .collect()
    }

    /// Finds a node whose label or alias normalises to `name`.
    pub fn find_by_name(&self, name: &str) -> Option<&Node> {
        let want = normalize_name(name);
        if want.is_empty() {
            return None;
        }
        if let Some(id) = NodeId::slug(name)
            && let Some(n) = self.node(&id)
            && n.names().any(|x| x == want)
        {
            return Some(n);
        }
        self.nodes_unordered()
            .filter(|n| n.names().any(|x| x == want))
            .min_by(|a, b| a.id.cmp(&b.id))
    }

    /// A lookup table from every normalised name to its node id.
    pub fn name_index(&self) -> HashMap<String, NodeId> {
        let mut map = HashMap::new();
        for n in self.nodes() {
            for name in n.names() {
                map.entry(name).or_insert_with(|| n.id.clone());
            }
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default()
    }

    #[test]
    fn slug_is_stable_and_clean() {
        assert_eq!(
            NodeId::slug("Rolling Memory  Graph!").map(|i| i.0),
            Some("rolling-memory-graph".into())
        );
        assert_eq!(
            NodeId::slug("src/billing/invoice.rs").map(|i| i.0),
            Some("src-billing-invoice-rs".into())
        );
        assert_eq!(NodeId::slug("  ?? "), None);
        let long = "pref I'm away most afternoons so let's wrap the migration and the scheduler by the evening before";
        let id = NodeId::slug(long).unwrap_or_else(|| unreachable!());
        assert!(NodeId::parse(id.as_str()).is_some(), "{id}");
        assert!(NodeId::parse("a--b").is_none());
        assert!(NodeId::parse("Abc").is_none());
        assert!(NodeId::parse("abc-1").is_some());
    }

    #[test]
    fn doc_round_trip_and_dangling_edges_rejected() {
        let mut g = Graph::new();
        let a = NodeId::slug("Mailvane").unwrap_or_else(|| unreachable!());
        let b = NodeId::slug("Postwick").unwrap_or_else(|| unreachable!());
        g.upsert_node(Node::new(
            a.clone(),
            "Mailvane",
            Domain::Technical,
            0.5,
            t0(),
        ));
        g.upsert_node(Node::new(
            b.clone(),
            "Postwick",
            Domain::Technical,
            0.7,
            t0(),
        ));
        let e = Edge {
            source: b.clone(),
            target: a.clone(),
            kind: EdgeKind::Supersedes,
            weight: 1.0,
        };
        assert!(g.upsert_edge(e).is_ok());
        let doc = g.to_doc();
        let g2 = Graph::from_doc(doc.clone()).unwrap_or_default();
        assert_eq!(g2.to_doc(), doc);
        assert_eq!(
            g2.superseded_by(&a).map(|n| n.label.as_str()),
            Some("Postwick")
        );

        let mut bad = doc;
        bad.nodes.remove("mailvane");
        assert!(matches!(
            Graph::from_doc(bad),
            Err(GraphError::DanglingEdge { .. })
        ));
    }

    #[test]
    fn distances_are_undirected_and_capped() {
        let mut g = Graph::new();
        let ids: Vec<NodeId> = (0..5)
            .filter_map(|i| NodeId::slug(&format!("n{i}")))
            .collect();
        for id in &ids {
            g.upsert_node(Node::new(
                id.clone(),
                id.as_str(),
                Domain::Project,
                0.5,
                t0(),
            ));
        }
        for w in ids.windows(2) {
            let _ = g.upsert_edge(Edge {
                source: w[1].clone(),
                target: w[0].clone(),
                kind: EdgeKind::RelatesTo,
                weight: 0.5,
            });
        }
        let d = g.distances(&ids[..1], 2);
        assert_eq!(d.get(&ids[0]), Some(&0));
        assert_eq!(d.get(&ids[2]), Some(&2));
        assert_eq!(d.get(&ids[3]), None);
    }

    #[test]
    fn remove_node_drops_its_edges() {
        let mut g = Graph::new();
        let a = NodeId::slug("a").unwrap_or_else(|| unreachable!());
        let b = NodeId::slug("b").unwrap_or_else(|| unreachable!());
        g.upsert_node(Node::new(a.clone(), "a", Domain::Project, 0.5, t0()));
        g.upsert_node(Node::new(b.clone(), "b", Domain::Project, 0.5, t0()));
        let _ = g.upsert_edge(Edge {
            source: a.clone(),
            target: b.clone(),
            kind: EdgeKind::Uses,
            weight: 0.5,
        });
        g.remove_node(&b);
        assert_eq!(g.edge_count(), 0);
        assert!(Graph::from_doc(g.to_doc()).is_ok());
    }
}
