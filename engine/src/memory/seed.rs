//! Flat memory → graph: seeding warm stores with anchors.
//!
//! [`parse_flat`] reads a flat memory file (a `MEMORY.md`, a `CLAUDE.md` or
//! one section of it, `CLAUDE.md#Memory`) leniently: bullets, numbered
//! items and paragraphs become items; headings give context; front matter,
//! code fences, tables, HTML comments and images are skipped; emphasis and
//! links are flattened. [`seed_file`] turns each item into an anchor node
//! (never below the 0.2 floor); corrections and rules ("never …", "always …",
//! "don't …") become high-weight anchors. Each item is identified by the hash
//! of its normalised text, recorded in the store, so seeding the same file
//! again adds nothing.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use regex::Regex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::extract;
use crate::graph::{Domain, MAX_DETAIL_LEN, Node, NodeId, NodeKind, normalize_name};
use crate::redact::redact_owned;
use crate::store::{Home, StoreError};
use crate::warm::{self, GLOBAL_KEY, WarmEntry, WarmStore};

/// Longest label a seeded item gets (the rest goes to `detail`).
pub const LABEL_CHARS: usize = 80;

/// Largest flat file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// One item of a flat memory file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlatItem {
    /// The text, Markdown flattened, redacted.
    pub text: String,
    /// The heading it sits under, if any.
    pub section: Option<String>,
    /// 1-based line where it starts.
    pub line: usize,
    /// Whether it is a correction or rule ("never", "always", "don't" …).
    pub rule: bool,
    /// The review item it was graduated by (`<!-- rollgraph:ID -->`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graduated: Option<String>,
}

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is too large to be a memory file.
    #[error("{path} is {size} bytes; flat memory files over {MAX_FILE_BYTES} bytes are not seeded")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{0} is not UTF-8 text")]
    NotText(PathBuf),
    /// The section asked for is not in the file.
    #[error("{path} has no heading {section:?}")]
    NoSection {
        /// The file.
        path: PathBuf,
        /// The heading asked for.
        section: String,
    },
    /// The warm store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What seeding one file did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedReport {
    /// The file (and section) seeded.
    pub file: String,
    /// The store written.
    pub store: String,
    /// Items found.
    pub items: usize,
    /// Anchors created.
    pub added: usize,
    /// Of those, corrections and rules (high weight).
    pub rules: usize,
    /// Items already seeded before (unchanged).
    pub already: usize,
    /// Items graduated from this store: their node became the anchor.
    pub linked: usize,
    /// Things worth telling the user.
    pub warnings: Vec<String>,
}

static RULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(never|always|don'?t|do not|must|must not|mustn'?t|avoid|stop|no longer|instead of|not allowed|prefer)\b")
        .unwrap_or_else(|e| unreachable!("static regex: {e}"))
});
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"!?\[([^\]]*)\]\([^)]*\)").unwrap_or_else(|e| unreachable!("static regex: {e}"))
});
static COMMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)<!--.*?-->").unwrap_or_else(|e| unreachable!("static regex: {e}"))
});
static LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
        .unwrap_or_else(|e| unreachable!("static regex: {e}"))
});
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<!--\s*rollgraph:([a-z]-[0-9a-f]{10})\s*-->")
        .unwrap_or_else(|e| unreachable!("static regex: {e}"))
});
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
        .unwrap_or_else(|e| unreachable!("static regex: {e}"))
});

/// Whether an item reads as a correction or rule.
pub fn is_rule(text: &str) -> bool {
    RULE.is_match(text)
}

/// Flattens inline Markdown: links to their text, emphasis and code marks
/// dropped, whitespace collapsed.
fn flatten(s: &str) -> String {
    let s = COMMENT.replace_all(s, " ");
    let s = LINK.replace_all(&s, "$1");
    let s: String = s
        .chars()
        .filter(|c| !matches!(c, '*' | '`' | '~'))
        .collect();
    let s = s.replace("__", "");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits a file spec `path#Section` into the path and the section.
pub fn split_spec(spec: &Path) -> (PathBuf, Option<String>) {
    if spec.exists() {
        return (spec.to_owned(), None);
    }
    let s = spec.to_string_lossy();
    match s.rsplit_once('#') {
        Some((p, sec)) if !p.is_empty() && !sec.trim().is_empty() => {
            (PathBuf::from(p), Some(sec.trim().to_owned()))
        }
        _ => (spec.to_owned(), None),
    }
}

/// Reads the items of a flat memory text; only those under `section` when
/// given (until the next heading of the same or a higher level).
pub fn parse_flat(text: &str, section: Option<&str>) -> Vec<FlatItem> {
    let mut items: Vec<FlatItem> = Vec::new();
    let mut heading: Option<String> = None;
    let mut in_section = section.is_none();
    let mut section_level = 0usize;
    let mut fence: Option<&str> = None;
    let mut in_comment = false;
    let mut para: Option<(usize, String)> = None;
    let mut lines = text.lines().enumerate().peekable();
    // YAML front matter.
    if text.starts_with("---") {
        let _ = lines.next();
        for (_, l) in lines.by_ref() {
            if l.trim() == "---" || l.trim() == "..." {
                break;
            }
        }
    }
    let flush = |para: &mut Option<(usize, String)>,
                 heading: &Option<String>,
                 items: &mut Vec<FlatItem>,
                 in_section: bool| {
        if let Some((line, raw)) = para.take() {
            let text = redact_owned(&flatten(&raw));
            let trimmed = text.trim().trim_start_matches(['>', ' ']).trim();
            if in_section && trimmed.chars().filter(|c| c.is_alphanumeric()).count() >= 3 {
                items.push(FlatItem {
                    graduated: MARKER
                        .captures(&raw)
                        .and_then(|c| c.get(1))
                        .map(|m| m.as_str().to_owned()),
                    rule: is_rule(trimmed),
                    text: trimmed.to_owned(),
                    section: heading.clone(),
                    line,
                });
            }
        }
    };
    for (i, raw) in lines {
        let line = raw.trim_end();
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            flush(&mut para, &heading, &mut items, in_section);
            fence = Some(if t.starts_with("```") { "```" } else { "~~~" });
            continue;
        }
        if in_comment {
            if t.contains("-->") {
                in_comment = false;
            }
            continue;
        }
        if t.starts_with("<!--") && !t.contains("-->") {
            flush(&mut para, &heading, &mut items, in_section);
            in_comment = true;
            continue;
        }
        if let Some(c) = HEADING.captures(line) {
            flush(&mut para, &heading, &mut items, in_section);
            let level = c.get(1).map_or(1, |m| m.as_str().len());
            let title = flatten(c.get(2).map_or("", |m| m.as_str()));
            if let Some(want) = section {
                if in_section && level <= section_level {
                    in_section = false;
                }
                if title.eq_ignore_ascii_case(want) {
                    in_section = true;
                    section_level = level;
                }
            }
            heading = Some(title);
            continue;
        }
        if t.is_empty()
            || t.starts_with('|')
            || t.chars().all(|c| matches!(c, '-' | '=' | '*' | '_' | ' '))
        {
            flush(&mut para, &heading, &mut items, in_section);
            continue;
        }
        if t.starts_with("<!--") && t.ends_with("-->") && !t.contains("rollgraph:") {
            continue;
        }
        if let Some(c) = LIST.captures(line) {
            flush(&mut para, &heading, &mut items, in_section);
            para = Some((i + 1, c.get(1).map_or("", |m| m.as_str()).to_owned()));
            continue;
        }
        // A continuation of the current item or paragraph.
        match &mut para {
            Some((_, p)) => {
                p.push(' ');
                p.push_str(t);
            }
            None => para = Some((i + 1, t.to_owned())),
        }
    }
    flush(&mut para, &heading, &mut items, in_section);
    items
}

/// The stable content hash of an item (16 hex digits of SHA-256 of its
/// normalised text).
pub fn content_hash(text: &str) -> String {
    let digest = Sha256::digest(normalize_name(text).as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A label of at most [`LABEL_CHARS`] characters, cut at a word boundary.
pub fn short_label(text: &str) -> String {
    let first = text
        .split_inclusive(['.', '!', '?'])
        .next()
        .unwrap_or(text)
        .trim();
    let first = first.trim_end_matches(['.', '!', '?', ':', ';']);
    if first.chars().count() <= LABEL_CHARS {
        return first.to_owned();
    }
    let mut out = String::new();
    for w in first.split_whitespace() {
        if out.chars().count() + w.chars().count() + 1 > LABEL_CHARS - 1 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        out = first.chars().take(LABEL_CHARS - 1).collect();
    }
    out.push('…');
    out
}

/// The anchor node for an item.
pub fn anchor_node(item: &FlatItem, config: &Config, now: DateTime<Utc>, id: NodeId) -> Node {
    let label = short_label(&item.text);
    let domain = extract::dominant_domain(&item.text).unwrap_or(Domain::Project);
    let mut n = Node::new(id, &label, domain, 0.5, now);
    n.anchor = true;
    if item.rule {
        n.kind = NodeKind::Correction;
        n.weight = config.probe.correction_weight.clamp(0.0, 1.0);
    } else {
        n.kind = NodeKind::Fact;
        n.weight = config.probe.new_weight.clamp(0.0, 1.0);
    }
    n.weight = n.weight.max(config.decay.anchor_floor);
    if item.text != label {
        n.detail = Some(item.text.chars().take(MAX_DETAIL_LEN).collect());
    }
    n
}

/// Seeds a flat memory file (`path` or `path#Section`) into the warm store
/// `key` (the project's, or `global`). Idempotent.
pub fn seed_file(
    home: &Home,
    config: &Config,
    spec: &Path,
    key: &str,
    now: DateTime<Utc>,
) -> Result<SeedReport, SeedError> {
    let (path, section) = split_spec(spec);
    let meta = std::fs::metadata(&path).map_err(|source| SeedError::Read {
        path: path.clone(),
        source,
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(SeedError::TooLarge {
            path,
            size: meta.len(),
        });
    }
    let bytes = std::fs::read(&path).map_err(|source| SeedError::Read {
        path: path.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|_| SeedError::NotText(path.clone()))?;
    let items = parse_flat(&text, section.as_deref());
    let has_heading = |s: &str| {
        text.lines().any(|l| {
            HEADING.captures(l).is_some_and(|c| {
                c.get(2)
                    .is_some_and(|m| flatten(m.as_str()).eq_ignore_ascii_case(s))
            })
        })
    };
    if let Some(s) = &section
        && items.is_empty()
        && !has_heading(s)
    {
        return Err(SeedError::NoSection {
            path,
            section: s.clone(),
        });
    }
    let mut report = SeedReport {
        file: spec.display().to_string(),
        store: key.to_owned(),
        items: items.len(),
        ..SeedReport::default()
    };
    let mut store = WarmStore::open(home, key)?;
    report.warnings.extend(
        store
            .load
            .restored
            .iter()
            .map(|r| format!("warm store {key}: {r}")),
    );
    let mut entry = WarmEntry {
        cause: format!("seed:{}", path.display()),
        now: Some(now),
        ..WarmEntry::default()
    };
    let mut taken: std::collections::BTreeSet<NodeId> = std::collections::BTreeSet::new();
    for item in &items {
        let hash = content_hash(&item.text);
        if store.meta.seeded.contains_key(&hash) || entry.seeded.iter().any(|(h, _)| *h == hash) {
            report.already += 1;
            continue;
        }
        // A line this store graduated: its node becomes the anchor, no twin.
        if let Some(node) = item
            .graduated
            .as_deref()
            .and_then(|g| crate::graduate::ReviewQueue::new(home).get(g).ok())
            .filter(|r| r.store == key)
            .and_then(|r| store.graph.node(&r.node).cloned())
        {
            let mut node = node;
            node.anchor = true;
            node.weight = node.weight.max(config.decay.anchor_floor);
            report.linked += 1;
            entry.seeded.push((hash, node.id.clone()));
            entry.nodes.push(node);
            continue;
        }
        let label = short_label(&item.text);
        let Some(base) = NodeId::slug(&label).or_else(|| NodeId::parse(&format!("memory-{hash}")))
        else {
            report
                .warnings
                .push(format!("line {}: nothing to name an anchor by", item.line));
            continue;
        };
        // A different item with the same slug keeps its own id.
        let id = if store.graph.contains(&base) || taken.contains(&base) {
            let stem: String = base
                .as_str()
                .chars()
                .take(crate::graph::MAX_ID_LEN - 9)
                .collect();
            NodeId::parse(&format!("{}-{}", stem.trim_end_matches('-'), &hash[..8])).unwrap_or(base)
        } else {
            base
        };
        if store.graph.contains(&id) || taken.contains(&id) {
            report.already += 1;
            entry.seeded.push((hash, id));
            continue;
        }
        taken.insert(id.clone());
        let node = anchor_node(item, config, now, id.clone());
        report.added += 1;
        if item.rule {
            report.rules += 1;
        }
        entry.first_seen.push((id.clone(), now));
        entry.seeded.push((hash, id));
        entry.nodes.push(node);
    }
    store.commit(entry)?;
    Ok(report)
}

/// Seeds the flat files listed in `flat.seed_files` into the store of the
/// project at `cwd` (relative paths resolve against it, `~/` against
/// `$HOME`). Missing or unreadable files become warnings.
pub fn seed_configured(
    home: &Home,
    config: &Config,
    cwd: Option<&str>,
    now: DateTime<Utc>,
) -> (Vec<SeedReport>, Vec<String>) {
    let key = match cwd {
        Some(c) if !c.trim().is_empty() => warm::key_for_cwd(Some(c)),
        _ => GLOBAL_KEY.to_owned(),
    };
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    for spec in &config.flat.seed_files {
        let path = crate::config::resolve_path(spec, cwd);
        match seed_file(home, config, &path, &key, now) {
            Ok(r) => reports.push(r),
            Err(SeedError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                warnings.push(format!(
                    "flat memory file {} not found; skipped",
                    path.display()
                ));
            }
            Err(e) => warnings.push(format!("flat memory file {}: {e}", path.display())),
        }
    }
    (reports, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ODD: &str = "---\ntitle: memory\n---\n# Project notes\n\nWe ship the **billing** service on Fridays.\nIt is deployed\nwith [Fly](https://fly.io).\n\n## Rules\n- Never push to `main` directly\n* always run `cargo fmt` before committing\n  (the CI checks it)\n1. Don't use unwrap in library code\n- [x] done: migrate invoices to Postwick\n\n```rust\nfn not_an_item() {}\n```\n<!--\nhidden\n-->\n| a | b |\n|---|---|\n> Quoted: keep the API small\n\n### Empty\n-\n## People\n- Ilsa reviews billing PRs\n";

    #[test]
    fn odd_markdown_parses_leniently() {
        let items = parse_flat(ODD, None);
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "We ship the billing service on Fridays. It is deployed with Fly.",
                "Never push to main directly",
                "always run cargo fmt before committing (the CI checks it)",
                "Don't use unwrap in library code",
                "done: migrate invoices to Postwick",
                "Quoted: keep the API small",
                "Ilsa reviews billing PRs",
            ]
        );
        let rules: Vec<bool> = items.iter().map(|i| i.rule).collect();
        assert_eq!(rules, vec![false, true, true, true, false, false, false]);
        assert_eq!(items[1].section.as_deref(), Some("Rules"));
        assert_eq!(items[1].line, 11);
    }

    #[test]
    fn a_section_only() {
        let items = parse_flat(ODD, Some("rules"));
        assert_eq!(items.len(), 5);
        assert!(items.iter().all(|i| i.section.as_deref() == Some("Rules")));
        let people = parse_flat(ODD, Some("People"));
        assert_eq!(people.len(), 1);
    }

    #[test]
    fn spec_splits_on_hash_only_when_no_such_file() {
        let (p, s) = split_spec(Path::new("/nowhere/CLAUDE.md#Memory"));
        assert_eq!(
            (p, s.as_deref()),
            (PathBuf::from("/nowhere/CLAUDE.md"), Some("Memory"))
        );
    }

    #[test]
    fn labels_are_short_and_whole_words() {
        let long = "word ".repeat(40);
        let l = short_label(long.trim());
        assert!(l.chars().count() <= LABEL_CHARS);
        assert!(l.ends_with("word…"));
        assert_eq!(short_label("Use Postwick. It is cheaper."), "Use Postwick");
    }

    #[test]
    fn seeding_twice_is_idempotent() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path().join("home"));
        let file = dir.path().join("MEMORY.md");
        std::fs::write(&file, ODD).unwrap_or_else(|e| panic!("{e}"));
        let now = DateTime::from_timestamp(1_790_000_000, 0).unwrap_or_default();
        let cfg = Config::default();
        let r = seed_file(&home, &cfg, &file, GLOBAL_KEY, now).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((r.items, r.added, r.rules, r.already), (7, 7, 3, 0));
        let r2 = seed_file(&home, &cfg, &file, GLOBAL_KEY, now).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((r2.added, r2.already), (0, 7));
        let store = WarmStore::open(&home, GLOBAL_KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.graph.node_count(), 7);
        assert!(
            store
                .graph
                .nodes()
                .iter()
                .all(|n| n.anchor && n.weight >= 0.2)
        );
        let never = store
            .graph
            .find_by_name("Never push to main directly")
            .cloned();
        assert!(never.is_some_and(|n| n.kind == NodeKind::Correction && n.weight >= 0.85));
    }
}
