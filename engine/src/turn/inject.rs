//! What the hook injects: a full block or only what changed since the last one.
//!
//! Hosts keep every injection in the conversation history, so re-sending the
//! whole block on every prompt fills the context with copies. Each render
//! therefore carries its [`Item`]s — the decisions in force, corrections,
//! preferences, facts, people and focus nodes it is about, one line each —
//! and each session remembers what it was sent ([`Injected`], kept by the
//! hook beside its spool). [`plan`] then chooses per event:
//!
//! - SessionStart (startup, resume, clear, compact, fork): the full block.
//! - A prompt after a compaction, or the first one ever: the full block.
//! - Any other prompt: nothing when nothing changed, else a short
//!   `<rolling-memory-update>` listing new and changed items and where the
//!   focus moved, naming the turn it updates; the full block again once
//!   everything that changed since the last full block, said in one update,
//!   would outweigh a fresh block.
//! - Never the same block twice in one turn (SessionStart then the first
//!   prompt of a resumed session send one block; so do a prompt and a
//!   SessionStart the host ran at once, in either order). A turn lasts from
//!   its prompt to the model's answer ([`answered`]); a compaction or a
//!   clear (`needs_full`) cuts the history, so the block goes again.
//!
//! Everything here is pure and cheap (no tokenizer: delta sizes are
//! estimated from the full block's own characters-per-token), because it
//! runs on the hook's hot path.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::graph::{Graph, Node, NodeKind};
use crate::render::Render;
use crate::session::StoredRender;

/// Most items a render carries.
pub const MAX_ITEMS: usize = 48;

/// Focus labels compared to say the focus moved.
const FOCUS_SHOWN: usize = 4;

/// One thing a render says, as one line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The node id.
    pub id: String,
    /// The node kind (`decision`, `person` …).
    pub kind: String,
    /// The line an update shows.
    pub text: String,
}

/// How the hook injects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectMode {
    /// Full block at session start and after compaction; updates otherwise.
    #[default]
    Delta,
    /// The full block on every prompt (the block is never repeated within one turn).
    Full,
}

/// When the hook is asked for context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// SessionStart, whatever its source.
    Start,
    /// A prompt (UserPromptSubmit, BeforeAgent).
    Prompt,
}

/// What one session was sent so far (the hook's own file).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Injected {
    /// Item id → fingerprint of the line the model last saw for it.
    pub seen: BTreeMap<String, u64>,
    /// The focus labels last sent.
    pub focus: Vec<String>,
    /// The render turn the last block (full or update) showed.
    pub turn: Option<u32>,
    /// Estimated tokens of updates sent since the last full block.
    pub since_full: usize,
    /// Item fingerprints as the last full block showed them.
    pub base: BTreeMap<String, u64>,
    /// The focus labels of the last full block.
    pub base_focus: Vec<String>,
    /// Fingerprint of the last block sent.
    pub last_block: u64,
    /// Whether the last block was sent at SessionStart (no prompt since).
    pub at_start: bool,
    /// A prompt came and its answer (Stop, AfterAgent) has not: the turn
    /// is still open.
    pub turn_open: bool,
    /// The next prompt gets the full block (compaction happened).
    pub needs_full: bool,
    /// Prompts this session had (through the hook).
    pub prompts: u64,
    /// Tokens sent: full blocks and updates.
    pub sent_full_tokens: usize,
    /// Tokens sent as updates.
    pub sent_delta_tokens: usize,
}

/// What to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// The whole block.
    Full {
        /// The text.
        text: String,
        /// Its tokens.
        tokens: usize,
    },
    /// An update.
    Delta {
        /// The text.
        text: String,
        /// Its estimated tokens.
        tokens: usize,
    },
}

impl Planned {
    /// The text to send.
    pub fn text(&self) -> &str {
        match self {
            Planned::Full { text, .. } | Planned::Delta { text, .. } => text,
        }
    }

    /// Its tokens (exact for a full block, estimated for an update).
    pub fn tokens(&self) -> usize {
        match self {
            Planned::Full { tokens, .. } | Planned::Delta { tokens, .. } => *tokens,
        }
    }
}

/// FNV-1a, 64 bits: a stable fingerprint (std's hasher is not stable across releases).
pub fn fingerprint(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let cut: String = s.chars().take(n.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// Kinds an update lists even away from the focus: everything said about
/// the work (decisions, corrections, preferences, facts, restrictions,
/// procedures, intentions) and the people in it.
fn durable(kind: NodeKind) -> bool {
    !matches!(
        kind,
        NodeKind::Entity | NodeKind::Project | NodeKind::File | NodeKind::Identifier
    )
}

fn item_text(g: &Graph, n: &Node) -> String {
    let mut s = short(&n.label, 90);
    let mut tag = n.kind.as_str().to_owned();
    let old = g.supersedes(&n.id);
    if !old.is_empty() {
        let was: Vec<String> = old.iter().map(|o| short(&o.label, 50)).collect();
        tag.push_str(&format!("; was: {}", was.join("; ")));
    }
    s.push_str(&format!(" ({tag})"));
    if let Some(d) = n.detail.as_deref().filter(|d| !d.trim().is_empty()) {
        s.push_str(" — ");
        // As long as the block shows it: an update never says less.
        s.push_str(&short(d.trim(), 120));
    }
    s
}

/// The items of a render: its focus and near nodes and the durable nodes
/// (decisions in force, corrections, preferences, facts, people) above
/// `min_weight` that the block's text shows, strongest first, at most
/// [`MAX_ITEMS`].
pub fn items(g: &Graph, r: &Render, min_weight: f64) -> Vec<Item> {
    let shown: BTreeSet<&str> = r
        .focus
        .iter()
        .chain(r.near.iter())
        .map(|id| id.as_str())
        .collect();
    // Only what the block shows: a full block marks its items as seen.
    let in_text = |n: &Node| {
        let head: String = n.label.chars().take(30).collect();
        !head.trim().is_empty() && r.text.contains(head.trim_end())
    };
    let mut ranked: Vec<(f64, &Node)> = g
        .nodes_unordered()
        .filter(|n| n.weight >= min_weight)
        .filter(|n| shown.contains(n.id.as_str()) || durable(n.kind))
        .filter(|n| in_text(n))
        .filter(|n| n.kind != NodeKind::Decision || g.superseded_by(&n.id).is_none())
        .map(|n| {
            let boost = if r.focus.contains(&n.id) { 1.0 } else { 0.0 };
            (n.weight + boost, n)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
    ranked
        .into_iter()
        .take(MAX_ITEMS)
        .map(|(_, n)| Item {
            id: n.id.to_string(),
            kind: n.kind.as_str().to_owned(),
            text: item_text(g, n),
        })
        .collect()
}

/// The labels of a render's focus, in order.
pub fn focus_labels(g: &Graph, r: &Render) -> Vec<String> {
    r.focus
        .iter()
        .filter_map(|id| g.node(id))
        .take(FOCUS_SHOWN)
        .map(|n| short(&n.label, 60))
        .collect()
}

/// Estimated tokens of `text` at the full block's characters per token.
pub fn estimate_tokens(text: &str, r: &StoredRender) -> usize {
    let chars = text.chars().count();
    let full_chars = r.text.chars().count();
    if r.tokens == 0 || full_chars == 0 {
        return chars.div_ceil(4);
    }
    (chars * r.tokens).div_ceil(full_chars)
}

fn focus_moved(old: &[String], new: &[String]) -> bool {
    if new.is_empty() {
        return false;
    }
    let a: BTreeSet<&String> = old.iter().take(FOCUS_SHOWN).collect();
    let b: BTreeSet<&String> = new.iter().take(FOCUS_SHOWN).collect();
    a != b
}

/// The update block for the items that changed since `state`, every one
/// of them (a fresh block is sent instead once an update would outweigh
/// it): `None` when there is nothing to say.
pub fn delta_text(state: &Injected, r: &StoredRender) -> Option<String> {
    let changed: Vec<(&Item, bool)> = r
        .items
        .iter()
        .filter(|i| state.seen.get(&i.id) != Some(&fingerprint(&i.text)))
        .map(|i| (i, !state.seen.contains_key(&i.id)))
        .collect();
    let moved = focus_moved(&state.focus, &r.focus_labels);
    if changed.is_empty() && !moved {
        return None;
    }
    let sid: String = r.session.chars().take(8).collect();
    let since = state.turn.unwrap_or(0);
    let mut s = format!(
        "<rolling-memory-update session=\"{sid}\" turn=\"{}\" updates=\"{since}\">\n\
         Changes since the rolling-memory block of turn {since}; the rest of it still holds.\n",
        r.turn
    );
    for (i, new) in &changed {
        s.push_str(if *new { "- new: " } else { "- changed: " });
        s.push_str(&i.text);
        s.push('\n');
    }
    if moved {
        s.push_str("Focus now: ");
        s.push_str(&r.focus_labels.join(" · "));
        s.push('\n');
    }
    s.push_str("</rolling-memory-update>");
    Some(s)
}

fn record_full(state: &mut Injected, r: &StoredRender) {
    state.seen = r
        .items
        .iter()
        .map(|i| (i.id.clone(), fingerprint(&i.text)))
        .collect();
    state.focus.clone_from(&r.focus_labels);
    state.base.clone_from(&state.seen);
    state.base_focus.clone_from(&r.focus_labels);
    state.turn = Some(r.turn);
    state.since_full = 0;
    state.needs_full = false;
    state.last_block = fingerprint(&r.text);
    state.sent_full_tokens += r.tokens;
}

/// The model answered (Stop, AfterAgent): the turn is closed, and a later
/// SessionStart (a resume) gets the block again.
pub fn answered(state: &mut Injected) {
    state.turn_open = false;
}

/// Chooses what to send for `r` at `moment` and records it in `state`.
/// `None`: send nothing.
pub fn plan(
    state: &mut Injected,
    r: &StoredRender,
    moment: Moment,
    mode: InjectMode,
) -> Option<Planned> {
    let prompt = moment == Moment::Prompt;
    let was_at_start = state.at_start;
    let was_open = state.turn_open;
    state.at_start = !prompt;
    if prompt {
        state.prompts += 1;
        state.turn_open = true;
    }
    if r.text.trim().is_empty() {
        return None;
    }
    let fp = fingerprint(&r.text);
    // The block the model got at SessionStart of this very turn: not again.
    if prompt && was_at_start && state.last_block == fp {
        return None;
    }
    // A SessionStart after this turn's prompt (or another SessionStart)
    // already sent this very block: the host ran two hooks of one turn at
    // once. Not again, unless the history was cut (compaction, clear).
    if !prompt && !state.needs_full && (was_at_start || was_open) && state.last_block == fp {
        return None;
    }
    let full = |state: &mut Injected| {
        record_full(state, r);
        Some(Planned::Full {
            text: r.text.clone(),
            tokens: r.tokens,
        })
    };
    if !prompt || mode == InjectMode::Full || state.turn.is_none() || state.needs_full {
        return full(state);
    }
    let text = delta_text(state, r)?;
    let tokens = estimate_tokens(&text, r);
    // Everything that changed since the last full block, said at once: once
    // that outweighs a fresh block, the fresh block is the better message.
    let since_base = Injected {
        seen: state.base.clone(),
        focus: state.base_focus.clone(),
        turn: state.turn,
        ..Injected::default()
    };
    let accumulated = delta_text(&since_base, r).map_or(0, |t| estimate_tokens(&t, r));
    if tokens.max(accumulated) >= r.tokens {
        return full(state);
    }
    for i in &r.items {
        state.seen.insert(i.id.clone(), fingerprint(&i.text));
    }
    state.focus.clone_from(&r.focus_labels);
    state.turn = Some(r.turn);
    state.since_full += tokens;
    state.last_block = fingerprint(&text);
    state.sent_delta_tokens += tokens;
    Some(Planned::Delta { text, tokens })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(turn: u32, items: &[(&str, &str)], focus: &[&str]) -> StoredRender {
        StoredRender {
            session: "s1".into(),
            turn,
            tokens: 600,
            text: format!(
                "<rolling-memory turn=\"{turn}\">{}</rolling-memory>",
                "x".repeat(2400)
            ),
            items: items
                .iter()
                .map(|(id, t)| Item {
                    id: (*id).into(),
                    kind: "fact".into(),
                    text: (*t).into(),
                })
                .collect(),
            focus_labels: focus.iter().map(|s| (*s).to_owned()).collect(),
            ..StoredRender::default()
        }
    }

    #[test]
    fn full_at_start_nothing_when_unchanged_update_when_changed() {
        let mut st = Injected::default();
        let r1 = render(1, &[("a", "A (fact)")], &["A"]);
        assert!(matches!(
            plan(&mut st, &r1, Moment::Start, InjectMode::Delta),
            Some(Planned::Full { .. })
        ));
        // Resume: the first prompt of the same turn gets nothing more.
        assert_eq!(plan(&mut st, &r1, Moment::Prompt, InjectMode::Delta), None);
        assert_eq!(plan(&mut st, &r1, Moment::Prompt, InjectMode::Delta), None);
        let r2 = render(3, &[("a", "A (fact)"), ("b", "B (decision)")], &["A"]);
        let p = plan(&mut st, &r2, Moment::Prompt, InjectMode::Delta);
        let Some(Planned::Delta { text, .. }) = p else {
            panic!("expected an update, got {p:?}");
        };
        assert!(text.contains("- new: B (decision)"), "{text}");
        assert!(!text.contains("A (fact)"), "{text}");
        assert!(text.contains("updates=\"1\""), "{text}");
        assert_eq!(plan(&mut st, &r2, Moment::Prompt, InjectMode::Delta), None);
    }

    #[test]
    fn a_start_and_a_prompt_of_one_turn_send_one_block_in_either_order() {
        for mode in [InjectMode::Delta, InjectMode::Full] {
            let r = render(1, &[("a", "A")], &["A"]);
            // Start first.
            let mut st = Injected::default();
            assert!(plan(&mut st, &r, Moment::Start, mode).is_some());
            assert_eq!(plan(&mut st, &r, Moment::Prompt, mode), None);
            // Prompt first: the SessionStart behind it sends nothing.
            let mut st = Injected::default();
            assert!(plan(&mut st, &r, Moment::Prompt, mode).is_some());
            assert_eq!(plan(&mut st, &r, Moment::Start, mode), None, "{mode:?}");
            // Two SessionStarts of one turn: one block.
            let mut st = Injected::default();
            assert!(plan(&mut st, &r, Moment::Start, mode).is_some());
            assert_eq!(plan(&mut st, &r, Moment::Start, mode), None, "{mode:?}");
            // Once the model answered, a resume gets the block again; so does
            // a compaction or a clear, answered or not.
            let mut st = Injected::default();
            let _ = plan(&mut st, &r, Moment::Prompt, mode);
            answered(&mut st);
            assert!(plan(&mut st, &r, Moment::Start, mode).is_some(), "{mode:?}");
            let _ = plan(&mut st, &r, Moment::Prompt, mode);
            st.needs_full = true;
            assert!(plan(&mut st, &r, Moment::Start, mode).is_some(), "{mode:?}");
        }
    }

    #[test]
    fn an_update_cheaper_than_a_block_lists_every_change() {
        // Twenty short changes against a 600-token block: one update naming
        // all twenty (none hidden behind "and N more"), not the block again.
        let mut st = Injected::default();
        let _ = plan(
            &mut st,
            &render(1, &[], &[]),
            Moment::Start,
            InjectMode::Delta,
        );
        let items: Vec<(String, String)> = (0..20)
            .map(|k| (format!("n{k}"), format!("item {k} (fact)")))
            .collect();
        let refs: Vec<(&str, &str)> = items
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let p = plan(
            &mut st,
            &render(3, &refs, &[]),
            Moment::Prompt,
            InjectMode::Delta,
        );
        let Some(Planned::Delta { text, .. }) = p else {
            panic!("expected an update, got {p:?}");
        };
        for (_, t) in &items {
            assert!(
                text.contains(&format!("- new: {t}\n")),
                "{t} missing: {text}"
            );
        }
    }

    #[test]
    fn full_mode_repeats_but_never_twice_in_a_turn() {
        let mut st = Injected::default();
        let r = render(1, &[("a", "A")], &[]);
        assert!(plan(&mut st, &r, Moment::Start, InjectMode::Full).is_some());
        assert_eq!(plan(&mut st, &r, Moment::Prompt, InjectMode::Full), None);
        assert!(plan(&mut st, &r, Moment::Prompt, InjectMode::Full).is_some());
    }

    #[test]
    fn compaction_and_accumulated_updates_bring_back_the_full_block() {
        let mut st = Injected::default();
        let r = render(1, &[("a", "A")], &[]);
        let _ = plan(&mut st, &r, Moment::Prompt, InjectMode::Delta);
        st.needs_full = true;
        assert!(matches!(
            plan(&mut st, &r, Moment::Prompt, InjectMode::Delta),
            Some(Planned::Full { .. })
        ));
        // Many small updates: once the changes since the last full block
        // add up to a block, a block is sent.
        let mut fulls = 0;
        let mut items: Vec<(String, String)> = Vec::new();
        for t in 2..90u32 {
            items.push((
                format!("n{t}"),
                format!("item number {t} with some words in it"),
            ));
            let refs: Vec<(&str, &str)> = items
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            let r = render(t, &refs, &[]);
            if let Some(Planned::Full { .. }) = plan(&mut st, &r, Moment::Prompt, InjectMode::Delta)
            {
                fulls += 1;
            }
        }
        assert!(fulls >= 1, "never fell back to a full block");
        assert!(fulls <= 3, "full blocks too often: {fulls}");
    }
}
