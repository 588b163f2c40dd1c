//! Graph → flat memory: graduation, the review queue and archive flags.
//!
//! At reconciliation, [`flag`] looks over a warm store for nodes that meet
//! all three graduation criteria — sustained weight
//! (`reconcile.graduate_min_weight`), seen in several sessions
//! (`graduate_min_sessions`) and stable (not superseded, not contradicted,
//! no dispute for `graduate_stable_days`) — and queues each with a draft of
//! the flat memory text ([`Drafter`]: an LLM, or [`TemplateDrafter`]
//! offline). Reverse flagging queues anchors that have sat at their floor for
//! `archive_after_days`.
//!
//! The queue lives in `$ROLLGRAPH_HOME/review/`, one JSON file per item.
//! Nothing is written to a flat file until a human approves: [`ReviewQueue::approve`]
//! appends the text with an invisible marker (`<!-- rollgraph:ID -->`),
//! atomically, and never twice. An item is flagged once: a rejected item is
//! not queued again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::graph::{Domain, EdgeKind, Graph, Node, NodeId, NodeKind};
use crate::reconcile::effective_weight;
use crate::redact::redact_owned;
use crate::store::{FileLock, Home, StoreError, read_json, write_atomic, write_json};
use crate::warm::{WarmEntry, WarmMeta, WarmStore};

/// What a review item proposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    /// Write a durable warm node into the flat memory file.
    Graduate,
    /// Retire an anchor that has sat at its floor for weeks.
    Archive,
}

impl ReviewKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewKind::Graduate => "graduate",
            ReviewKind::Archive => "archive",
        }
    }
}

/// Where a review item stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Waiting for a human.
    Pending,
    /// Approved and carried out.
    Approved,
    /// Rejected; never queued again.
    Rejected,
}

impl ReviewStatus {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::Pending => "pending",
            ReviewStatus::Approved => "approved",
            ReviewStatus::Rejected => "rejected",
        }
    }
}

/// One item in the review queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewItem {
    /// Stable id (`g-…` graduation, `a-…` archive), from store and node.
    pub id: String,
    /// What it proposes.
    pub kind: ReviewKind,
    /// Where it stands.
    pub status: ReviewStatus,
    /// The warm store key.
    pub store: String,
    /// The project root of that store, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The warm node.
    pub node: NodeId,
    /// Its label.
    pub label: String,
    /// Its domain.
    pub domain: Domain,
    /// Its effective weight when flagged.
    pub weight: f64,
    /// Sessions that saw it.
    pub sessions: usize,
    /// Why it was flagged, in words.
    pub reason: String,
    /// The text to append (graduation), redacted.
    pub text: String,
    /// Whether a human edited the text.
    #[serde(default)]
    pub edited: bool,
    /// Who drafted the text (`template`, `llm`).
    pub drafted_by: String,
    /// When it was flagged.
    pub created: DateTime<Utc>,
    /// When it was approved or rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<DateTime<Utc>>,
    /// The flat file it was written to, once approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_to: Option<PathBuf>,
}

impl ReviewItem {
    /// The marker appended with the text, so an item is never written twice.
    pub fn marker(&self) -> String {
        format!("<!-- rollgraph:{} -->", self.id)
    }
}

/// Why a review action failed.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// No item with this id.
    #[error("no review item {0}")]
    NotFound(String),
    /// The item was already approved or rejected.
    #[error("review item {id} is already {status}")]
    Decided {
        /// The item.
        id: String,
        /// Its status.
        status: &'static str,
    },
    /// No flat file to write to.
    #[error("no flat memory file to graduate into: set flat.graduate_to in the config")]
    NoTarget,
    /// The edited text is empty.
    #[error("the text is empty")]
    EmptyText,
    /// A file operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Drafts the flat memory text for a graduating node.
pub trait Drafter {
    /// Who drafts (`template`, `llm`).
    fn name(&self) -> &str;
    /// The text (one Markdown bullet) for `node` in `graph`.
    fn draft(&mut self, node: &Node, graph: &Graph) -> String;
}

/// The offline drafter: a fixed template over label, detail and what a
/// decision replaced.
#[derive(Clone, Copy, Debug, Default)]
pub struct TemplateDrafter;

impl Drafter for TemplateDrafter {
    fn name(&self) -> &str {
        "template"
    }

    fn draft(&mut self, n: &Node, g: &Graph) -> String {
        template_draft(n, g)
    }
}

/// Drafts through the LLM (`prompts/graduate.md`); the template when the
/// call fails (and for the rest of the run after a failure).
pub struct LlmDrafter {
    client: crate::llm::LlmClient,
    prompts: crate::llm::Prompts,
    failed: bool,
}

impl LlmDrafter {
    /// Wraps a client and the prompts in force.
    pub fn new(client: crate::llm::LlmClient, prompts: crate::llm::Prompts) -> LlmDrafter {
        LlmDrafter {
            client,
            prompts,
            failed: false,
        }
    }

    /// The LLM drafter when `llm.base_url` is configured and the client builds.
    pub fn from_config(config: &Config, home: &Home) -> Option<LlmDrafter> {
        config
            .llm
            .base_url
            .as_deref()
            .filter(|b| !b.trim().is_empty())?;
        crate::llm::LlmClient::new(&config.llm)
            .ok()
            .map(|c| LlmDrafter::new(c, crate::llm::Prompts::load(home)))
    }
}

impl Drafter for LlmDrafter {
    fn name(&self) -> &str {
        if self.failed { "template" } else { "llm" }
    }

    fn draft(&mut self, n: &Node, g: &Graph) -> String {
        if !self.failed {
            match self.client.draft_graduation(&self.prompts, n) {
                Ok(line) => return redact_owned(&format!("- {}", line.trim())),
                Err(e) => {
                    tracing::warn!("llm draft failed: {}; using the template", e.error);
                    self.failed = true;
                }
            }
        }
        template_draft(n, g)
    }
}

/// The template text for a node: `- Label: detail (replaces X)`.
pub fn template_draft(n: &Node, g: &Graph) -> String {
    let mut s = String::from("- ");
    let label = n.label.trim().trim_end_matches('.');
    match n.kind {
        NodeKind::Decision => s.push_str(&format!("Decision: {label}")),
        _ => s.push_str(label),
    }
    if let Some(d) = n.detail.as_deref().map(str::trim).filter(|d| !d.is_empty())
        && !d.eq_ignore_ascii_case(label)
    {
        s.push_str(": ");
        s.push_str(d.trim_end_matches('.'));
    }
    let old: Vec<String> = g
        .supersedes(&n.id)
        .iter()
        .map(|o| o.label.clone())
        .collect();
    if !old.is_empty() {
        s.push_str(&format!(" (replaces {})", old.join(", ")));
    }
    s.push('.');
    redact_owned(&s.replace('\n', " "))
}

fn item_id(kind: ReviewKind, store: &str, node: &NodeId) -> String {
    let digest = Sha256::digest(format!("{}\0{store}\0{node}", kind.as_str()).as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let p = match kind {
        ReviewKind::Graduate => "g",
        ReviewKind::Archive => "a",
    };
    format!("{p}-{hex}")
}

/// Distinct sessions in a node's provenance.
pub fn session_count(n: &Node) -> usize {
    let mut s: Vec<&str> = n.provenance.iter().map(|p| p.session.as_str()).collect();
    s.sort_unstable();
    s.dedup();
    s.len()
}

/// Why a node does not graduate (`None`: it meets all three criteria).
pub fn graduation_blocker(
    g: &Graph,
    meta: &WarmMeta,
    n: &Node,
    config: &Config,
    now: DateTime<Utc>,
) -> Option<String> {
    let rc = &config.reconcile;
    if n.anchor {
        return Some("already in flat memory (anchor)".into());
    }
    let w = effective_weight(n, now, rc.warm_half_life_days, config.decay.anchor_floor);
    if w < rc.graduate_min_weight {
        return Some(format!("weight {w:.2} < {:.2}", rc.graduate_min_weight));
    }
    let sessions = session_count(n);
    if sessions < rc.graduate_min_sessions {
        return Some(format!(
            "seen in {sessions} sessions < {}",
            rc.graduate_min_sessions
        ));
    }
    if let Some(by) = g.superseded_by(&n.id) {
        return Some(format!("superseded by {}", by.id));
    }
    if g.edges_of(&n.id)
        .iter()
        .any(|e| e.kind == EdgeKind::Contradicts)
    {
        return Some("contradicted".into());
    }
    let since = meta
        .disputed
        .get(&n.id)
        .copied()
        .into_iter()
        .chain(meta.first_seen.get(&n.id).copied())
        .max()
        .unwrap_or(n.last_activated);
    let days = (now - since).num_seconds() as f64 / 86_400.0;
    if days < rc.graduate_stable_days as f64 {
        return Some(format!(
            "stable {days:.1} days < {}",
            rc.graduate_stable_days
        ));
    }
    None
}

/// When an anchor reached its floor (its weight halves every half-life).
pub fn at_floor_since(n: &Node, half_life_days: f64, floor: f64) -> DateTime<Utc> {
    if n.weight <= floor || half_life_days <= 0.0 || floor <= 0.0 {
        return n.last_activated;
    }
    let days = half_life_days * (n.weight / floor).log2();
    n.last_activated + chrono::Duration::seconds((days * 86_400.0) as i64)
}

/// The review queue: `$ROLLGRAPH_HOME/review/<id>.json`.
pub struct ReviewQueue {
    dir: PathBuf,
}

impl ReviewQueue {
    /// The queue of a home.
    pub fn new(home: &Home) -> ReviewQueue {
        ReviewQueue {
            dir: home.root().join("review"),
        }
    }

    /// The queue's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: &str) -> Option<PathBuf> {
        let ok = id.len() <= 32 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        ok.then(|| self.dir.join(format!("{id}.json")))
    }

    fn lock(&self) -> Result<FileLock, StoreError> {
        FileLock::acquire(&self.dir.join("lock"), Duration::from_secs(10))
    }

    /// Every item, oldest first; unreadable files are reported, not fatal.
    pub fn list(&self) -> (Vec<ReviewItem>, Vec<String>) {
        let mut items = Vec::new();
        let mut warnings = Vec::new();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for p in paths {
            match read_json::<ReviewItem>(&p) {
                Ok(Some(i)) => items.push(i),
                Ok(None) => {}
                Err(e) => warnings.push(e.to_string()),
            }
        }
        items.sort_by(|a, b| a.created.cmp(&b.created).then(a.id.cmp(&b.id)));
        (items, warnings)
    }

    /// One item.
    pub fn get(&self, id: &str) -> Result<ReviewItem, ReviewError> {
        let path = self
            .path(id)
            .ok_or_else(|| ReviewError::NotFound(id.to_owned()))?;
        read_json(&path)?.ok_or_else(|| ReviewError::NotFound(id.to_owned()))
    }

    /// Whether an item with this id exists (in any status).
    pub fn exists(&self, id: &str) -> bool {
        self.path(id).is_some_and(|p| p.exists())
    }

    fn save(&self, item: &ReviewItem) -> Result<(), ReviewError> {
        let path = self
            .path(&item.id)
            .ok_or_else(|| ReviewError::NotFound(item.id.clone()))?;
        write_json(&path, item)?;
        Ok(())
    }

    /// Queues an item unless one with its id exists; true when queued.
    pub fn enqueue(&self, item: &ReviewItem) -> Result<bool, ReviewError> {
        let _lock = self.lock()?;
        if self.exists(&item.id) {
            return Ok(false);
        }
        self.save(item)?;
        Ok(true)
    }

    fn pending(&self, id: &str) -> Result<ReviewItem, ReviewError> {
        let item = self.get(id)?;
        if item.status != ReviewStatus::Pending {
            return Err(ReviewError::Decided {
                id: id.to_owned(),
                status: item.status.as_str(),
            });
        }
        Ok(item)
    }

    /// Replaces a pending item's text.
    pub fn edit(&self, id: &str, text: &str) -> Result<ReviewItem, ReviewError> {
        let _lock = self.lock()?;
        let mut item = self.pending(id)?;
        let text = redact_owned(text.trim());
        if text.is_empty() {
            return Err(ReviewError::EmptyText);
        }
        item.text = text;
        item.edited = true;
        self.save(&item)?;
        Ok(item)
    }

    /// Rejects a pending item; it is never queued again.
    pub fn reject(&self, id: &str, now: DateTime<Utc>) -> Result<ReviewItem, ReviewError> {
        let _lock = self.lock()?;
        let mut item = self.pending(id)?;
        item.status = ReviewStatus::Rejected;
        item.decided = Some(now);
        self.save(&item)?;
        Ok(item)
    }

    /// Approves a pending item. A graduation appends its text (with its
    /// marker) to `target` atomically — unless the marker is already there,
    /// so it is never written twice; an archive retires the anchor in its
    /// warm store.
    pub fn approve(
        &self,
        home: &Home,
        id: &str,
        target: Option<&Path>,
        now: DateTime<Utc>,
    ) -> Result<ReviewItem, ReviewError> {
        // Retire an archived anchor before taking the queue's lock: a
        // reconciler holds the warm lock while it queues items, so the two
        // locks are never held in the opposite order. Retiring is idempotent.
        let first = self.pending(id)?;
        if first.kind == ReviewKind::Archive {
            let mut store = WarmStore::open(home, &first.store)?;
            if let Some(n) = store
                .graph
                .node(&first.node)
                .filter(|n| n.anchor || n.weight > 0.0)
            {
                let mut n = n.clone();
                n.anchor = false;
                n.weight = 0.0;
                store.commit(WarmEntry {
                    cause: format!("archive:{}", first.id),
                    now: Some(now),
                    nodes: vec![n],
                    ..WarmEntry::default()
                })?;
            }
        }
        let _lock = self.lock()?;
        let mut item = self.pending(id)?;
        if item.kind == ReviewKind::Graduate {
            let target = target.ok_or(ReviewError::NoTarget)?;
            append_once(target, &item.text, &item.marker())?;
            item.written_to = Some(target.to_owned());
        }
        item.status = ReviewStatus::Approved;
        item.decided = Some(now);
        self.save(&item)?;
        Ok(item)
    }
}

/// Appends `text` and `marker` to a file atomically unless the marker is
/// already in it. Returns whether it wrote.
pub fn append_once(path: &Path, text: &str, marker: &str) -> Result<bool, StoreError> {
    let old = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            return Err(StoreError::Io {
                action: "read",
                path: path.to_owned(),
                error,
            });
        }
    };
    if String::from_utf8_lossy(&old).contains(marker) {
        return Ok(false);
    }
    let mut new = old;
    if !new.is_empty() && !new.ends_with(b"\n") {
        new.push(b'\n');
    }
    new.extend_from_slice(text.trim_end().as_bytes());
    new.push(b' ');
    new.extend_from_slice(marker.as_bytes());
    new.push(b'\n');
    write_atomic(path, &new)?;
    Ok(true)
}

/// Looks over a warm store and queues new graduation and archive items.
/// Returns (graduations queued, archives queued).
pub fn flag(
    home: &Home,
    store: &WarmStore,
    config: &Config,
    now: DateTime<Utc>,
    drafter: &mut dyn Drafter,
) -> Result<(usize, usize), ReviewError> {
    let queue = ReviewQueue::new(home);
    let rc = &config.reconcile;
    let floor = config.decay.anchor_floor;
    let (mut grads, mut archives) = (0, 0);
    for n in store.graph.nodes() {
        let (kind, reason) = if n.anchor {
            let since = at_floor_since(n, rc.warm_half_life_days, floor);
            let days = (now - since).num_seconds() as f64 / 86_400.0;
            if days < rc.archive_after_days as f64 {
                continue;
            }
            (
                ReviewKind::Archive,
                format!("anchor at its floor for {days:.0} days"),
            )
        } else {
            // Personal and relationship knowledge graduates from the global store only.
            let global_domain = matches!(n.domain, Domain::Personal | Domain::Relationship);
            if global_domain != (store.key() == crate::warm::GLOBAL_KEY) {
                continue;
            }
            if graduation_blocker(&store.graph, &store.meta, n, config, now).is_some() {
                continue;
            }
            let w = effective_weight(n, now, rc.warm_half_life_days, floor);
            (
                ReviewKind::Graduate,
                format!(
                    "weight {w:.2}, seen in {} sessions, stable",
                    session_count(n)
                ),
            )
        };
        let id = item_id(kind, store.key(), &n.id);
        if queue.exists(&id) {
            continue;
        }
        let (text, drafted_by) = match kind {
            ReviewKind::Graduate => (
                redact_owned(drafter.draft(n, &store.graph).trim()),
                drafter.name().to_owned(),
            ),
            ReviewKind::Archive => (
                n.detail.clone().unwrap_or_else(|| n.label.clone()),
                "template".to_owned(),
            ),
        };
        let item = ReviewItem {
            id,
            kind,
            status: ReviewStatus::Pending,
            store: store.key().to_owned(),
            root: store.meta.root.clone(),
            node: n.id.clone(),
            label: n.label.clone(),
            domain: n.domain,
            weight: effective_weight(n, now, rc.warm_half_life_days, floor),
            sessions: session_count(n),
            reason,
            text,
            edited: false,
            drafted_by,
            created: now,
            decided: None,
            written_to: None,
        };
        if queue.enqueue(&item)? {
            match kind {
                ReviewKind::Graduate => grads += 1,
                ReviewKind::Archive => archives += 1,
            }
        }
    }
    Ok((grads, archives))
}

/// The flat file an approved graduation goes to: `flat.graduate_to`,
/// relative paths against the item's project root (`~/` against `$HOME`).
pub fn target_for(item: &ReviewItem, config: &Config) -> Option<PathBuf> {
    let spec = config.flat.graduate_to.as_ref()?;
    Some(crate::config::resolve_path(spec, item.root.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Provenance;

    fn t(days: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000 + days * 86_400, 0).unwrap_or_default()
    }

    #[test]
    fn append_once_never_twice_and_keeps_content() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = dir.path().join("MEMORY.md");
        std::fs::write(&f, "# Memory\n- old").unwrap_or_else(|e| panic!("{e}"));
        assert!(append_once(&f, "- new", "<!-- rollgraph:g-1 -->").unwrap_or(false));
        assert!(!append_once(&f, "- new", "<!-- rollgraph:g-1 -->").unwrap_or(true));
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        assert_eq!(text, "# Memory\n- old\n- new <!-- rollgraph:g-1 -->\n");
    }

    #[test]
    fn criteria_each_block() {
        let cfg = Config::default();
        let mut g = Graph::new();
        let mut meta = WarmMeta::default();
        let id = NodeId::slug("Postwick").unwrap_or_else(|| unreachable!());
        let mut n = Node::new(id.clone(), "Postwick", Domain::Technical, 0.9, t(0));
        for s in ["s1", "s2", "s3"] {
            n.provenance.push(Provenance {
                session: s.into(),
                first_turn: 1,
                last_turn: 1,
                mentions: 1,
            });
        }
        g.upsert_node(n.clone());
        meta.first_seen.insert(id.clone(), t(0));
        assert_eq!(
            graduation_blocker(&g, &meta, &n, &cfg, t(1)).map(|s| s.starts_with("stable")),
            Some(true)
        );
        assert_eq!(graduation_blocker(&g, &meta, &n, &cfg, t(4)), None);
        // Weight fades with time.
        assert!(
            graduation_blocker(&g, &meta, &n, &cfg, t(60)).is_some_and(|s| s.starts_with("weight"))
        );
        let mut two = n.clone();
        two.provenance.pop();
        assert!(
            graduation_blocker(&g, &meta, &two, &cfg, t(4)).is_some_and(|s| s.contains("sessions"))
        );
        meta.disputed.insert(id.clone(), t(3));
        assert!(
            graduation_blocker(&g, &meta, &n, &cfg, t(4)).is_some_and(|s| s.starts_with("stable"))
        );
    }

    #[test]
    fn floor_time_follows_the_half_life() {
        let mut n = Node::new(
            NodeId::slug("x").unwrap_or_else(|| unreachable!()),
            "x",
            Domain::Project,
            0.8,
            t(0),
        );
        n.anchor = true;
        // 0.8 → 0.2 is two half-lives.
        assert_eq!(at_floor_since(&n, 21.0, 0.2), t(42));
    }
}
