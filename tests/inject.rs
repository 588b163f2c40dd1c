//! Update blocks ("what changed") and the tokens injected over whole
//! sessions, full mode against delta mode.

use rollgraph_engine::Config;
use rollgraph_engine::inject::{self, InjectMode, Injected, Moment, Planned};
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::render::count_tokens;
use rollgraph_engine::session::{Session, read_render};
use rollgraph_engine::store::Home;
use rollgraph_engine::transcript::{Event, Transcript, Turn};

use crate::common::{example, repo};
use crate::snap;

fn now() -> chrono::DateTime<chrono::Utc> {
    rollgraph_engine::clock::parse_time("2026-11-02T10:00:00Z").unwrap_or_default()
}

fn turn(s: &mut Session, i: u32, user: &str) {
    // Built before the gate runs: it loads the word list both read.
    let mut probe = HeuristicProbe::new(Config::default().probe);
    s.observe(Turn {
        index: i,
        user: user.to_owned(),
        ..Turn::default()
    });
    s.cycle(&mut probe, now()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_update_lists_what_changed_and_the_turn_it_updates() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = Home::at(dir.path());
    let mut s =
        Session::open(&home, "delta-session", Config::default()).unwrap_or_else(|e| panic!("{e}"));
    turn(
        &mut s,
        1,
        "Let's go with Resend for transactional email in the Ledgerline dunning work.",
    );
    turn(
        &mut s,
        2,
        "Priya Raman reviews the billing code; the retry schedule lives in src/billing/dunning.rs.",
    );
    let mut st = Injected::default();
    let r = read_render(&s.dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_default();
    assert!(matches!(
        inject::plan(&mut st, &r, Moment::Start, InjectMode::Delta),
        Some(Planned::Full { .. })
    ));
    // Nothing new: nothing sent.
    assert_eq!(
        inject::plan(&mut st, &r, Moment::Prompt, InjectMode::Delta),
        None
    );
    turn(
        &mut s,
        3,
        "Actually, switch from Resend to Bento for transactional email; Marco Díaz owns the Bento account.",
    );
    let r = read_render(&s.dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_default();
    let p = inject::plan(&mut st, &r, Moment::Prompt, InjectMode::Delta);
    let Some(Planned::Delta { text, tokens }) = p else {
        panic!("expected an update, got {p:?}");
    };
    assert!(text.contains("Bento"), "{text}");
    assert!(text.contains("turn=\"3\" updates=\"2\""), "{text}");
    // Well under the block, even this small one (three turns, 362
    // tokens); `delta_mode_injects_at_most_a_quarter_of_full_mode` measures
    // the share over the corpus.
    assert!(
        tokens * 3 < r.tokens * 2,
        "an update as large as a block: {tokens} of {} tokens: {text}",
        r.tokens
    );
    snap!("inject_delta_block", text);
    // Sent once: the same render again sends nothing.
    assert_eq!(
        inject::plan(&mut st, &r, Moment::Prompt, InjectMode::Delta),
        None
    );
}

/// Tokens injected over a transcript replayed as the hook and the daemon
/// would: SessionStart at the beginning and after each compaction, the
/// render of the previous turn's probe before each prompt.
fn injected_tokens(t: &Transcript, mode: InjectMode) -> (usize, usize, usize, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = Home::at(dir.path());
    let mut s =
        Session::open(&home, "measure", Config::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut st = Injected::default();
    let mut probe = HeuristicProbe::new(Config::default().probe);
    let (mut total, mut blocks, mut updates) = (0usize, 0usize, 0usize);
    // What the model has in its history: every injection since the last compaction.
    let mut context = String::new();
    let mut send = |st: &mut Injected, s: &Session, moment: Moment, context: &mut String| {
        if let Some(r) = read_render(&s.dir).unwrap_or_else(|e| panic!("{e}"))
            && let Some(p) = inject::plan(st, &r, moment, mode)
        {
            total += count_tokens(p.text());
            context.push_str(p.text());
            context.push('\n');
            match p {
                Planned::Full { .. } => blocks += 1,
                Planned::Delta { .. } => updates += 1,
            }
        }
    };
    send(&mut st, &s, Moment::Start, &mut context);
    for event in &t.events {
        match event {
            Event::Compaction { .. } => {
                context.clear();
                // As the hook does on PreCompact and a `compact` SessionStart.
                st.needs_full = true;
                send(&mut st, &s, Moment::Start, &mut context);
            }
            Event::Turn(turn) => {
                send(&mut st, &s, Moment::Prompt, &mut context);
                let mut prompt_only = turn.clone();
                prompt_only.assistant.clear();
                prompt_only.files.clear();
                if s.observe(prompt_only).fire {
                    let now = turn.timestamp.unwrap_or_else(now);
                    let _ = s.cycle(&mut probe, now);
                }
                s.record_reply(&turn.assistant, &turn.files);
                // The Stop hook: the model answered.
                inject::answered(&mut st);
            }
        }
    }
    // The next prompt's injection is in the history too.
    send(&mut st, &s, Moment::Prompt, &mut context);
    (total, blocks, updates, context)
}

/// Questions of a corpus session whose every answer is in `context`.
fn answer_hits(labels: &serde_json::Value, context: &str) -> (usize, usize) {
    let ctx = context.to_lowercase();
    let qs = labels["questions"].as_array().cloned().unwrap_or_default();
    let hit = qs
        .iter()
        .filter(|q| {
            q["answer"].as_array().is_some_and(|a| {
                a.iter().all(|ans| {
                    ans.as_str().is_some_and(|alts| {
                        alts.split('|')
                            .any(|alt| ctx.contains(&alt.trim().to_lowercase()))
                    })
                })
            })
        })
        .count();
    (hit, qs.len())
}

/// Over the example and the corpus, delta mode sends at most a quarter of
/// full mode's tokens and its context answers at least as many questions;
/// on any one session at most 30 % and at most two questions fewer.
#[test]
fn delta_mode_injects_at_most_a_quarter_of_full_mode() {
    let mut transcripts = vec![example()];
    // The development corpus (plain `{ts, user, assistant}` lines).
    let corpus = repo().join("tests/fixtures/corpus");
    if let Ok(rd) = std::fs::read_dir(&corpus) {
        let mut v: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        v.sort();
        transcripts.extend(v);
    }
    let mut totals = (0usize, 0usize, 0usize, 0usize);
    for path in transcripts {
        let Ok(t) = rollgraph_engine::plain::read_any(&path) else {
            continue;
        };
        if t.turns().count() < 5 {
            continue;
        }
        let (full, fb, _, full_ctx) = injected_tokens(&t, InjectMode::Full);
        let (delta, db, du, delta_ctx) = injected_tokens(&t, InjectMode::Delta);
        let labels: serde_json::Value = std::fs::read(path.with_extension("labels.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let (full_hits, n) = answer_hits(&labels, &full_ctx);
        let (delta_hits, _) = answer_hits(&labels, &delta_ctx);
        eprintln!(
            "{}: {} turns; full mode {full} tokens ({fb} blocks); delta mode {delta} tokens ({db} blocks, {du} updates) = {:.1} %; answers in the injected context: full {full_hits}/{n}, delta {delta_hits}/{n}",
            path.file_name().unwrap_or_default().to_string_lossy(),
            t.turns().count(),
            100.0 * delta as f64 / full.max(1) as f64
        );
        if delta_hits < full_hits {
            for q in labels["questions"].as_array().into_iter().flatten() {
                let one = serde_json::json!({"questions": [q]});
                if answer_hits(&one, &full_ctx).0 > answer_hits(&one, &delta_ctx).0 {
                    eprintln!("  only full mode answers: {}", q["q"]);
                }
            }
        }
        // Per session, an answer can hang on a detail that one full block
        // happened to show (a value in passing, a name in a far cluster's
        // line) and a short update did not: two such losses are allowed per
        // session, none over the corpus.
        assert!(
            delta_hits + 2 >= full_hits,
            "{}: delta mode's context answers fewer questions ({delta_hits}) than full mode's ({full_hits})",
            path.display()
        );
        assert!(full > 0, "{}: nothing injected", path.display());
        assert!(
            delta * 10 <= full * 3,
            "{}: delta {delta} > 30 % of full {full}",
            path.display()
        );
        totals = (
            totals.0 + full,
            totals.1 + delta,
            totals.2 + full_hits,
            totals.3 + delta_hits,
        );
    }
    let (full, delta, full_hits, delta_hits) = totals;
    eprintln!(
        "all: full {full} tokens, delta {delta} ({:.1} %); answers full {full_hits}, delta {delta_hits}",
        100.0 * delta as f64 / full.max(1) as f64
    );
    assert!(
        delta_hits >= full_hits,
        "over the corpus delta mode answers {delta_hits}, full mode {full_hits}"
    );
    assert!(
        delta * 4 <= full,
        "over the corpus delta {delta} > 25 % of full {full}"
    );
}

#[test]
fn a_reply_that_arrives_after_its_question_was_probed_is_read_with_it() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = Home::at(dir.path());
    let mut s =
        Session::open(&home, "asked-session", Config::default()).unwrap_or_else(|e| panic!("{e}"));
    // The question is probed before the reply exists.
    turn(&mut s, 1, "how do I flash the board again?");
    s.record_reply("Run `zeph flash --runner jlink` from the app folder.", &[]);
    // The next probe reads the reply with the question it answers.
    turn(&mut s, 2, "thanks, and Mirela Quenby is our firmware lead.");
    let procedures: Vec<String> = s
        .graph
        .nodes()
        .into_iter()
        .filter(|n| n.kind == rollgraph_engine::graph::NodeKind::Procedure)
        .map(|n| n.label.clone())
        .collect();
    assert!(
        procedures
            .iter()
            .any(|p| p == "flash: zeph flash --runner jlink"),
        "{procedures:?}"
    );
    // Once read, the question is not carried further.
    assert!(s.state.reply_to.is_empty());
}
