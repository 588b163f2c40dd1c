//! Update blocks ("what changed") and the tokens injected over whole
//! sessions, full mode against delta mode.

use rollgraph_engine::Config;
use rollgraph_engine::inject::{self, InjectMode, Injected, Moment, Planned};
use rollgraph_engine::probe::HeuristicProbe;
use rollgraph_engine::render::count_tokens;
use rollgraph_engine::session::{Session, read_render};
use rollgraph_engine::store::Home;
use rollgraph_engine::transcript::{self, Event, Transcript, Turn};

use crate::common::{example, repo};
use crate::snap;

fn now() -> chrono::DateTime<chrono::Utc> {
    rollgraph_engine::clock::parse_time("2026-11-02T10:00:00Z").unwrap_or_default()
}

fn turn(s: &mut Session, i: u32, user: &str) {
    s.observe(Turn {
        index: i,
        user: user.to_owned(),
        ..Turn::default()
    });
    let mut probe = HeuristicProbe::new(Config::default().probe);
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
    assert!(
        tokens * 2 < r.tokens,
        "an update as large as a block: {text}"
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
fn injected_tokens(t: &Transcript, mode: InjectMode) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = Home::at(dir.path());
    let mut s =
        Session::open(&home, "measure", Config::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut st = Injected::default();
    let mut probe = HeuristicProbe::new(Config::default().probe);
    let (mut total, mut blocks, mut updates) = (0usize, 0usize, 0usize);
    let mut send = |st: &mut Injected, s: &Session, moment: Moment| {
        if let Some(r) = read_render(&s.dir).unwrap_or_else(|e| panic!("{e}"))
            && let Some(p) = inject::plan(st, &r, moment, mode)
        {
            total += count_tokens(p.text());
            match p {
                Planned::Full { .. } => blocks += 1,
                Planned::Delta { .. } => updates += 1,
            }
        }
    };
    send(&mut st, &s, Moment::Start);
    for event in &t.events {
        match event {
            Event::Compaction { .. } => send(&mut st, &s, Moment::Start),
            Event::Turn(turn) => {
                send(&mut st, &s, Moment::Prompt);
                let mut prompt_only = turn.clone();
                prompt_only.assistant.clear();
                prompt_only.files.clear();
                if s.observe(prompt_only).fire {
                    let now = turn.timestamp.unwrap_or_else(now);
                    let _ = s.cycle(&mut probe, now);
                }
                s.record_reply(&turn.assistant, &turn.files);
            }
        }
    }
    (total, blocks, updates)
}

#[test]
fn delta_mode_injects_at_most_a_quarter_of_full_mode() {
    let mut transcripts = vec![example()];
    // The development corpus, when this checkout has it in Claude Code's format.
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
    for path in transcripts {
        let Ok(t) = transcript::read_claude(&path) else {
            continue;
        };
        if t.turns().count() < 5 {
            continue;
        }
        let (full, fb, _) = injected_tokens(&t, InjectMode::Full);
        let (delta, db, du) = injected_tokens(&t, InjectMode::Delta);
        eprintln!(
            "{}: {} turns; full mode {full} tokens ({fb} blocks); delta mode {delta} tokens ({db} blocks, {du} updates) = {:.1} %",
            path.file_name().unwrap_or_default().to_string_lossy(),
            t.turns().count(),
            100.0 * delta as f64 / full.max(1) as f64
        );
        assert!(full > 0, "{}: nothing injected", path.display());
        assert!(
            delta * 4 <= full,
            "{}: delta {delta} > 25 % of full {full}",
            path.display()
        );
    }
}
