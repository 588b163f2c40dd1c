//! The gate: a cheap per-turn heuristic that decides whether a probe runs.
//!
//! Four triggers (new named entity, domain shift, decision language,
//! correction language) and a dead man's switch. Every decision carries the
//! triggers that fired or the reason it stayed quiet, so the probe rate is
//! measurable. The gate reads no files and allocates no regex: it runs inline
//! on the hook's critical path.

use std::collections::{HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::config::{GateConfig, Inferred};
use crate::extract;
use crate::graph::{Domain, NodeKind, normalize_name};

/// Why the gate fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A name, path or identifier that is not yet a node label or alias.
    NewEntity,
    /// The turn's dominant domain differs from the recent window's.
    DomainShift,
    /// "let's go with", "we decided", "switch to" …
    Decision,
    /// "actually", "no,", "that's wrong" …
    Correction,
    /// A fact, rule, procedure or next step: "the timeout is 3 s",
    /// "never force-push to main", "blocked on …".
    Memory,
    /// Too many quiet turns in a row.
    DeadMansSwitch,
}

impl Trigger {
    /// All triggers in a fixed order.
    pub const ALL: [Trigger; 6] = [
        Trigger::NewEntity,
        Trigger::DomainShift,
        Trigger::Decision,
        Trigger::Correction,
        Trigger::Memory,
        Trigger::DeadMansSwitch,
    ];

    /// The snake_case name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::NewEntity => "new_entity",
            Trigger::DomainShift => "domain_shift",
            Trigger::Decision => "decision",
            Trigger::Correction => "correction",
            Trigger::Memory => "memory",
            Trigger::DeadMansSwitch => "dead_mans_switch",
        }
    }
}

/// What the gate sees of one turn.
#[derive(Clone, Debug, Default)]
pub struct GateInput<'a> {
    /// The user's prompt (already redacted).
    pub prompt: &'a str,
    /// The assistant's previous reply (already redacted), if any.
    pub previous_reply: &'a str,
}

/// The gate's verdict on one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateDecision {
    /// Whether a probe should run.
    pub fire: bool,
    /// Every trigger that fired (empty when quiet).
    pub triggers: Vec<Trigger>,
    /// Human-readable reason, for the log and `replay`.
    pub reason: String,
    /// The new names that fired `NewEntity`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_entities: Vec<String>,
    /// The turn's dominant domain, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<Domain>,
}

/// What the gate remembers between turns (persisted with the session).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GateState {
    /// Quiet turns since the last probe.
    pub quiet_turns: u32,
    /// Dominant domains of the recent turns, newest last.
    pub recent_domains: VecDeque<Domain>,
    /// Names seen by the gate but not yet probed, so one name fires once.
    #[serde(default)]
    pub pending_names: Vec<String>,
    /// Triggers seen on earlier turns that fire with the next probe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Trigger>,
    /// Whether a decision or correction is among them (it waits one turn
    /// at most, whatever `soft_quiet_turns` says).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting_hard: bool,
    /// Whether what waits is weak evidence only (it lasts one turn).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting_weak: bool,
    /// Signal points of the pending names (people 2, files 1 …).
    #[serde(default)]
    pub pending_points: u32,
    /// Whether any probe has run in this session.
    #[serde(default)]
    pub probed: bool,
}

/// The prompt's domain when it clearly dominates: at least `min` points and
/// `min` ahead of the runner-up... or half of that for short prompts.
fn clear_domain(text: &str, min: u32) -> Option<Domain> {
    let scores = extract::domain_scores(text);
    let d = extract::dominant_domain(text)?;
    let i = Domain::ALL.iter().position(|x| *x == d)?;
    let top = scores[i];
    let second = scores
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, s)| *s)
        .max()
        .unwrap_or(0);
    (top >= min && top >= second + min.div_ceil(2)).then_some(d)
}

/// Decides whether this turn fires a probe and updates `state`.
///
/// `known` holds every node label and alias, normalised with
/// [`normalize_name`].
pub fn decide<K: KnownNames + ?Sized>(
    state: &mut GateState,
    input: &GateInput<'_>,
    known: &K,
    cfg: &GateConfig,
) -> GateDecision {
    let mut triggers = Vec::new();
    let mut reasons = Vec::new();

    // Until the first probe, two points make a name worth one.
    let bar = if state.probed {
        cfg.new_entity_points
    } else {
        cfg.new_entity_points.min(2)
    };
    let found = new_names(input, known, &state.pending_names, cfg);
    let new_points: u32 = found.iter().map(|(_, p)| p).sum();
    let new_entities: Vec<String> = found.into_iter().map(|(n, _)| n).collect();
    if !new_entities.is_empty() {
        reasons.push(format!(
            "new: {} ({new_points} point{})",
            new_entities.join(", "),
            if new_points == 1 { "" } else { "s" }
        ));
        // One new file or identifier alone waits for company.
        if new_points + state.pending_points >= bar {
            triggers.push(Trigger::NewEntity);
        }
    }

    // The window remembers every turn's leaning; a shift needs a clear lead.
    let domain = extract::dominant_domain(input.prompt);
    let clear = clear_domain(input.prompt, cfg.domain_min_score);
    if let (Some(d), Some(window)) = (clear, window_domain(&state.recent_domains))
        && d != window
        && state.recent_domains.len() >= cfg.domain_window.min(2)
    {
        triggers.push(Trigger::DomainShift);
        reasons.push(format!("domain {window} -> {d}"));
    }
    // Weak evidence (by default a domain shift) fires only with company:
    // other evidence on the same turn or the next.
    let mut strong = triggers.contains(&Trigger::NewEntity);
    let mut inferred = Vec::new();
    if triggers.contains(&Trigger::DomainShift) {
        inferred.push(Inferred::DomainShift);
    }
    // Facts, rules, procedures and next steps. Only what the graph does not
    // hold yet (a record said again is not news).
    let mut memory = Vec::new();
    if extract::records(input.prompt)
        .iter()
        .any(|r| !known.contains_name(&normalize_name(&r.label)))
    {
        memory.push("fact, rule, procedure or next step");
        strong = true;
    }
    if !memory.is_empty() {
        triggers.push(Trigger::Memory);
        reasons.push(memory.join(", "));
    }

    // Decisions and corrections are hard: they never wait for quiet turns.
    let mut hard = false;
    if extract::has_decision_language(input.prompt) {
        triggers.push(Trigger::Decision);
        reasons.push("decision language".into());
        hard = true;
    } else if extract::is_acceptance(input.prompt)
        // Only a stated proposal ("I'd suggest X") fires; an acceptance of
        // anything else is read by the next probe all the same.
        && extract::sentences(input.previous_reply)
            .iter()
            .any(|s| extract::proposal(s, None).is_some())
    {
        triggers.push(Trigger::Decision);
        reasons.push("accepts a proposal".into());
        hard = true;
    }
    if extract::has_correction_language(input.prompt) {
        triggers.push(Trigger::Correction);
        reasons.push("correction language".into());
        hard = true;
    }

    // When to fire. Decisions and corrections are hard: at once, or with
    // `next_turn` on the turn after. Other triggers are soft: they wait for
    // `soft_quiet_turns` quiet turns since the last probe and, with
    // `next_turn`, for the turn after they were seen, so one probe reads
    // that turn and the next. Weak evidence waits one turn for company and
    // is dropped without it.
    let any = !triggers.is_empty();
    let weak = inferred.iter().filter(|k| cfg.weak.contains(k)).count();
    let strong = strong || hard || weak >= 2 || weak < inferred.len();
    let eligible = state.quiet_turns >= cfg.soft_quiet_turns || !state.probed;
    let waiting_weak = state.waiting_weak && !state.waiting.is_empty();
    let at_once = if hard {
        !cfg.next_turn
    } else {
        strong && eligible && !cfg.next_turn
    };
    let fire_now = at_once
        || state.waiting_hard
        || (eligible && state.pending_points >= bar)
        || (eligible && !state.waiting.is_empty() && !waiting_weak)
        || (eligible && waiting_weak && any);
    if !fire_now {
        if waiting_weak {
            // Weak evidence lasts one turn.
            state.waiting.clear();
            state.waiting_weak = false;
        }
        state.pending_points += new_points;
        for n in &new_entities {
            let norm = normalize_name(n);
            if !state.pending_names.contains(&norm) && state.pending_names.len() < 64 {
                state.pending_names.push(norm);
            }
        }
        if any {
            state.waiting_weak = !strong && state.waiting.is_empty();
            for t in &triggers {
                if *t != Trigger::NewEntity && !state.waiting.contains(t) {
                    state.waiting.push(*t);
                }
            }
            state.waiting_hard |= hard;
            reasons.push(if !strong {
                "waits a turn for company".into()
            } else if eligible || hard {
                "waits a turn".into()
            } else {
                format!(
                    "deferred: {} quiet turn(s) since the last probe",
                    state.quiet_turns
                )
            });
        }
        triggers.clear();
    } else {
        // What earlier turns left waiting fires now.
        if state.pending_points >= bar && !triggers.contains(&Trigger::NewEntity) {
            triggers.push(Trigger::NewEntity);
            reasons.push(format!("deferred new: {}", state.pending_names.join(", ")));
        }
        for t in std::mem::take(&mut state.waiting) {
            if !triggers.contains(&t) {
                triggers.push(t);
                reasons.push(format!("deferred {}", t.as_str()));
            }
        }
    }
    if triggers.is_empty() && state.quiet_turns >= cfg.dead_mans_switch {
        triggers.push(Trigger::DeadMansSwitch);
        reasons.push(format!("{} quiet turns", state.quiet_turns));
    }

    if let Some(d) = domain {
        state.recent_domains.push_back(d);
        while state.recent_domains.len() > cfg.domain_window.max(1) {
            state.recent_domains.pop_front();
        }
    }

    let fire = !triggers.is_empty();
    if fire {
        state.quiet_turns = 0;
        state.pending_names.clear();
        state.pending_points = 0;
        state.waiting.clear();
        state.waiting_hard = false;
        state.waiting_weak = false;
        state.probed = true;
    } else {
        state.quiet_turns += 1;
        reasons.push(format!("quiet ({} since last probe)", state.quiet_turns));
    }
    GateDecision {
        fire,
        triggers,
        reason: reasons.join("; "),
        new_entities,
        domain,
    }
}

/// The majority domain of the window (ties: most recent wins).
fn window_domain(window: &VecDeque<Domain>) -> Option<Domain> {
    let mut counts = [0usize; 4];
    for d in window {
        counts[Domain::ALL.iter().position(|x| x == d).unwrap_or(0)] += 1;
    }
    let max = *counts.iter().max()?;
    if max == 0 {
        return None;
    }
    window
        .iter()
        .rev()
        .find(|d| counts[Domain::ALL.iter().position(|x| x == *d).unwrap_or(0)] == max)
        .copied()
}

/// New names in the turn, each with its weight as a signal: people,
/// projects and named products count 2, files and identifiers 1.
fn new_names<K: KnownNames + ?Sized>(
    input: &GateInput<'_>,
    known: &K,
    pending: &[String],
    cfg: &GateConfig,
) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    let mut consider = |label: &str, points: u32| {
        let norm = normalize_name(label);
        if norm.chars().count() < cfg.min_entity_len
            || known.contains_name(&norm)
            || pending.contains(&norm)
        {
            return;
        }
        // A person known by full name also answers to their first name; a
        // path known in full also answers to its file name.
        let first = format!("{norm} ");
        let base = format!("/{norm}");
        if known.any_starts_or_ends(&first, &base) {
            return;
        }
        if !out.iter().any(|(o, _)| normalize_name(o) == norm) {
            out.push((label.to_owned(), points));
        }
    };
    for s in extract::sentences(input.prompt) {
        for m in extract::mentions(&s, None) {
            let points = match m.kind {
                NodeKind::File | NodeKind::Identifier => 1,
                _ => 2,
            };
            if m.strong || m.kind == NodeKind::Project {
                consider(&m.label, points);
            }
        }
    }
    // The assistant names many identifiers in passing; only people and
    // projects it introduces count.
    for s in extract::sentences(input.previous_reply) {
        for m in extract::mentions(&s, None) {
            if matches!(m.kind, NodeKind::Person | NodeKind::Project) {
                consider(&m.label, 2);
            }
        }
    }
    out.truncate(cfg.max_reported_entities);
    out
}

/// The names the gate already knows: node labels and aliases, normalised
/// with [`normalize_name`].
pub trait KnownNames {
    /// Whether `name` is known exactly.
    fn contains_name(&self, name: &str) -> bool;
    /// Whether some known name starts with `prefix` or ends with `suffix`.
    fn any_starts_or_ends(&self, prefix: &str, suffix: &str) -> bool;
}

impl<S: std::hash::BuildHasher> KnownNames for HashSet<String, S> {
    fn contains_name(&self, name: &str) -> bool {
        self.contains(name)
    }

    fn any_starts_or_ends(&self, prefix: &str, suffix: &str) -> bool {
        self.iter()
            .any(|k| k.starts_with(prefix) || k.ends_with(suffix))
    }
}

/// Known names borrowed from sorted lines (the session's `terms.txt`):
/// what the hook uses, since it allocates nothing per name.
#[derive(Clone, Debug, Default)]
pub struct SortedNames<'a>(Vec<&'a str>);

impl<'a> SortedNames<'a> {
    /// One normalised name per line; sorted here if the lines are not.
    pub fn from_lines(text: &'a str) -> SortedNames<'a> {
        let mut v: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        if !v.is_sorted() {
            v.sort_unstable();
        }
        v.dedup();
        SortedNames(v)
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl KnownNames for SortedNames<'_> {
    fn contains_name(&self, name: &str) -> bool {
        self.0.binary_search(&name).is_ok()
    }

    fn any_starts_or_ends(&self, prefix: &str, suffix: &str) -> bool {
        let i = self.0.partition_point(|k| *k < prefix);
        self.0.get(i).is_some_and(|k| k.starts_with(prefix))
            || self.0.iter().any(|k| k.ends_with(suffix))
    }
}

/// Builds the `known` set from names (labels and aliases).
pub fn known_set<I, S>(names: I) -> HashSet<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    names
        .into_iter()
        .map(|n| normalize_name(n.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mechanism tests below were written for a two-point bar, two
    /// quiet turns and triggers that fire at once; they pin those so they
    /// test the mechanism, not the tuned defaults (which the `defaults_*`
    /// tests cover).
    fn cfg() -> GateConfig {
        GateConfig {
            soft_quiet_turns: 2,
            new_entity_points: 2,
            next_turn: false,
            weak: Vec::new(),
            ..GateConfig::default()
        }
    }

    fn turn<'a>(prompt: &'a str, previous_reply: &'a str) -> GateInput<'a> {
        GateInput {
            prompt,
            previous_reply,
        }
    }

    #[test]
    fn defaults_wait_for_three_points_and_a_turn() {
        let known = known_set(std::iter::empty::<&str>());
        let d_cfg = GateConfig::default();
        // The first names of a session that never probed need two points;
        // they fire on the next turn, with whatever that turn says.
        let mut st = GateState::default();
        let d = decide(
            &mut st,
            &turn("Ask Quorra Vance about it", ""),
            &known,
            &d_cfg,
        );
        assert!(!d.fire, "{d:?}");
        let d = decide(&mut st, &turn("ok", ""), &known, &d_cfg);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
        // Later, two capitalised words alone (2 points) wait for company ...
        let mut st = GateState {
            probed: true,
            quiet_turns: 5,
            ..GateState::default()
        };
        let d = decide(
            &mut st,
            &turn("Ask Quorra Vance about it", ""),
            &known,
            &d_cfg,
        );
        assert!(!d.fire && !d.reason.contains("waits"), "{d:?}");
        // ... and a file beside them passes the bar, firing the turn after.
        let d = decide(&mut st, &turn("and check src/a.rs", ""), &known, &d_cfg);
        assert!(!d.fire && d.reason.contains("waits a turn"), "{d:?}");
        let d = decide(&mut st, &turn("thanks", ""), &known, &d_cfg);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
    }

    /// Runs prompts through the default gate; returns the turns (1-based)
    /// that fired.
    fn fired_turns(prompts: &[&str]) -> Vec<usize> {
        let known = known_set(std::iter::empty::<&str>());
        let mut st = GateState {
            probed: true,
            quiet_turns: 3,
            ..GateState::default()
        };
        prompts
            .iter()
            .enumerate()
            .filter(|(_, p)| decide(&mut st, &turn(p, ""), &known, &GateConfig::default()).fire)
            .map(|(i, _)| i + 1)
            .collect()
    }

    #[test]
    fn defaults_pair_a_turn_with_the_next() {
        let decision = "We decided to drop the beta flag.";
        let rule = "Never rebase the shared branch, please.";
        let quiet = "ok run it again";
        // A decision waits a turn: the probe reads it with the turn after.
        assert_eq!(fired_turns(&[decision, quiet, quiet]), vec![2]);
        // Two turns in a row with something to keep: one probe for both.
        assert_eq!(fired_turns(&[rule, decision, quiet, quiet]), vec![2]);
        // Three in a row: the third waits for the fourth.
        assert_eq!(
            fired_turns(&[rule, decision, rule, quiet, quiet]),
            vec![2, 4]
        );
    }

    fn run(state: &mut GateState, prompt: &str, known: &[&str]) -> GateDecision {
        let known = known_set(known.iter().copied());
        decide(
            state,
            &GateInput {
                prompt,
                previous_reply: "",
            },
            &known,
            &cfg(),
        )
    }

    #[test]
    fn each_trigger_table() {
        let table: &[(&str, &[&str], Option<Trigger>)] = &[
            (
                "Can you look at src/billing/invoice.rs and src/billing/money.rs?",
                &[],
                Some(Trigger::NewEntity),
            ),
            (
                "Can you look at src/billing/invoice.rs?",
                &["src/billing/invoice.rs"],
                None,
            ),
            ("Ask Ilsa Voss to review it", &[], Some(Trigger::NewEntity)),
            ("Ask Ilsa to review it", &["Ilsa Voss"], None),
            (
                "Let's go with option two then.",
                &[],
                Some(Trigger::Decision),
            ),
            (
                "We decided to ship it on Monday.",
                &[],
                Some(Trigger::Decision),
            ),
            (
                "Actually, the limit is 5, not 3.",
                &[],
                Some(Trigger::Correction),
            ),
            (
                "No, that's wrong, revert it.",
                &[],
                Some(Trigger::Correction),
            ),
            ("run the tests again please", &[], None),
            (
                "Never force-push to main, by the way.",
                &[],
                Some(Trigger::Memory),
            ),
        ];
        for (prompt, known, want) in table {
            let mut st = GateState::default();
            let d = run(&mut st, prompt, known);
            match want {
                Some(t) => assert!(d.triggers.contains(t), "{prompt:?}: {d:?}"),
                None => assert!(!d.fire, "{prompt:?} fired: {d:?}"),
            }
        }
    }

    #[test]
    fn domain_shift_fires_on_change() {
        let mut st = GateState::default();
        for _ in 0..3 {
            run(
                &mut st,
                "fix the failing test in the handler and the compile error",
                &[],
            );
        }
        let d = run(
            &mut st,
            "I prefer short answers, I skim everything; my style, my habit: keep it brief",
            &[],
        );
        assert!(d.triggers.contains(&Trigger::DomainShift), "{d:?}");
    }

    #[test]
    fn dead_mans_switch_fires_on_the_ninth_quiet_turn() {
        let mut st = GateState::default();
        for i in 1..=8 {
            let d = run(&mut st, "ok run it again", &[]);
            assert!(!d.fire, "turn {i} fired: {d:?}");
        }
        let d = run(&mut st, "ok run it again", &[]);
        assert_eq!(d.triggers, vec![Trigger::DeadMansSwitch]);
        let d = run(&mut st, "ok run it again", &[]);
        assert!(!d.fire);
    }

    #[test]
    fn soft_triggers_right_after_a_probe_are_deferred_not_lost() {
        let mut st = GateState::default();
        let d = run(&mut st, "We decided to ship on Monday.", &[]);
        assert!(d.fire);
        let d = run(&mut st, "Look at src/billing/invoice.rs with Stripe", &[]);
        assert!(!d.fire, "{d:?}");
        assert!(d.reason.contains("deferred"), "{}", d.reason);
        let d = run(&mut st, "ok", &[]);
        assert!(!d.fire, "{d:?}");
        let d = run(&mut st, "ok", &[]);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
        assert!(d.reason.contains("src/billing/invoice.rs"), "{}", d.reason);
    }

    #[test]
    fn one_new_file_waits_for_company() {
        let mut st = GateState {
            probed: true,
            quiet_turns: 5,
            ..GateState::default()
        };
        let d = run(&mut st, "open src/a.rs", &[]);
        assert!(!d.fire, "{d:?}");
        let d = run(&mut st, "and src/b.rs", &[]);
        assert_eq!(d.triggers, vec![Trigger::NewEntity], "{d:?}");
    }

    #[test]
    fn quiet_reason_is_recorded() {
        let mut st = GateState::default();
        let d = run(&mut st, "ok", &[]);
        assert!(d.reason.contains("quiet"), "{}", d.reason);
    }

    #[test]
    fn sorted_names_answer_like_the_hash_set() {
        let names = [
            "ilsa voss",
            "src/billing/invoice.rs",
            "mailvane",
            "wren brandt",
            "sqlx",
        ];
        let set = known_set(names);
        let mut lines: Vec<&str> = names.to_vec();
        lines.reverse();
        let text = lines.join("\n");
        let sorted = SortedNames::from_lines(&text);
        assert_eq!(sorted.len(), 5);
        for (name, first, base) in [
            ("ilsa", "ilsa ", "/ilsa"),
            ("invoice.rs", "invoice.rs ", "/invoice.rs"),
            ("mailvane", "mailvane ", "/mailvane"),
            ("postgres", "postgres ", "/postgres"),
            ("wren", "wren ", "/wren"),
        ] {
            assert_eq!(
                sorted.contains_name(name),
                set.contains_name(name),
                "{name}"
            );
            assert_eq!(
                sorted.any_starts_or_ends(first, base),
                set.any_starts_or_ends(first, base),
                "{name}"
            );
        }
        for prompt in [
            "Ask Ilsa to look at invoice.rs",
            "Use Postgres with sqlx",
            "Wren Brandt wants it Friday",
        ] {
            let a = decide(
                &mut GateState::default(),
                &GateInput {
                    prompt,
                    previous_reply: "",
                },
                &set,
                &cfg(),
            );
            let b = decide(
                &mut GateState::default(),
                &GateInput {
                    prompt,
                    previous_reply: "",
                },
                &sorted,
                &cfg(),
            );
            assert_eq!(a, b, "{prompt}");
        }
    }
}
