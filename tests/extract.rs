//! Table tests of the embedded probe's text analysis and of supersession
//! through the real heuristic probe: every memory kind, changed decisions in
//! indirect words (A → B → A too), refusals and non-decisions, and text that
//! has broken the extractor before (case folding that changes byte lengths,
//! RTL marks, combining characters, emoji, over-long tokens).
//!
//! Names here are invented for the tests; none appear in the engine.

use chrono::{DateTime, TimeZone, Utc};
use rollgraph_engine::extract::{self, DecisionMove, lexicon};
use rollgraph_engine::graph::{EdgeKind, Graph, NodeKind};
use rollgraph_engine::patch::{PatchRules, apply};
use rollgraph_engine::probe::{HeuristicProbe, Probe, ProbeInput};
use rollgraph_engine::transcript::Turn;

fn words() {
    lexicon::init_frequencies();
}

/// The labels of the people a sentence names.
fn people(s: &str) -> Vec<String> {
    kinds(s)
        .into_iter()
        .filter(|(_, k)| *k == NodeKind::Person)
        .map(|(l, _)| l)
        .collect()
}

/// The label of the fact a sentence states first, if any.
fn fact(s: &str) -> Option<String> {
    words();
    extract::fact(s).map(|r| r.label)
}

fn kinds(s: &str) -> Vec<(String, NodeKind)> {
    words();
    extract::mentions(s, None)
        .into_iter()
        .map(|m| (m.label, m.kind))
        .collect()
}

#[test]
fn people_from_roles_appositions_and_lowercase() {
    let cases: &[(&str, &str)] = &[
        ("sam just became our tech lead, so ask him.", "sam"),
        ("Quorra is our SRE; deploys go through her.", "Quorra"),
        ("Tamsin from finance keeps reporting duplicates.", "Tamsin"),
        ("my sister nerys is getting married in spring.", "nerys"),
        ("Ask Velisar, she owns the billing service.", "Velisar"),
        ("My manager, Oriel, cares about the date.", "Oriel"),
        ("yusri just joined as on-call lead.", "yusri"),
        (
            "Brannagh Ostrow wants the export by then.",
            "Brannagh Ostrow",
        ),
        // A pronoun giving the role a few words on, a relative "who".
        (
            "I had a note from Quorvin — he's the product manager for billing.",
            "Quorvin",
        ),
        ("Talvi approves releases, she's the EM.", "Talvi"),
        // Lowercase and typed fast: no apostrophe, apposition without comma.
        (
            "tavik annotated most of it, hes my labmate, so blame him",
            "tavik",
        ),
        (
            "the reservation got extended, zibby the cluster admin was nice about it",
            "zibby",
        ),
        (
            "Ysolde, who looks after our servers, needs a heads-up.",
            "Ysolde",
        ),
        // A role in parentheses, after a lowercase name too.
        ("orsk (my manager) says the audit moved.", "orsk"),
        ("brivel (he's our PM) wants the copy by noon.", "brivel"),
        ("Quennet (chair of the board) approved the plan.", "Quennet"),
        // A role before a linking verb; a pronoun further on.
        ("the lease is fine, the landlord is Taddeo.", "Taddeo"),
        // Lowercase: a role set off by commas, a role before a linking verb
        // with the name ending its clause, a title.
        ("vessa, our analyst, said the build is slow.", "vessa"),
        (
            "one more box for quillan, our infra guy, to patch.",
            "quillan",
        ),
        ("the venue manager is ormund, very helpful.", "ormund"),
        ("vet visit done! dr. halvarik says she's fine.", "halvarik"),
        (
            "Ismay will own the release checklist, she's our QA lead.",
            "Ismay",
        ),
        // Where they are from, then what people do.
        (
            "Orlaith from Vantley emailed, she's the site manager.",
            "Orlaith",
        ),
        // Verbs only people do; a bare word where only a name can stand.
        ("Kesslyn rang about the invoice.", "Kesslyn"),
        ("fenwy and I picked the paint colours.", "fenwy"),
        ("fenwy's dad is lending us his drill.", "fenwy"),
    ];
    for (s, name) in cases {
        let got = kinds(s);
        assert!(
            got.contains(&((*name).to_owned(), NodeKind::Person)),
            "{s:?} → {got:?}"
        );
    }
    // The roles as words, without the pronoun or determiner around them.
    let role = |s: &str, name: &str| {
        words();
        extract::mentions(s, None)
            .into_iter()
            .find(|m| m.label == name)
            .and_then(|m| m.role)
    };
    assert_eq!(
        role("brivel (he's our PM) wants the copy by noon.", "brivel").as_deref(),
        Some("PM")
    );
    assert_eq!(
        role("the lease is fine, the landlord is Taddeo.", "Taddeo").as_deref(),
        Some("landlord")
    );
    // The place after "from" is not the person, even before a verb or a
    // pronoun; a word set off by a comma gets no role from a later pronoun.
    for (s, not_person) in [
        (
            "Orlaith from Vantley emailed, she's the site manager.",
            "Vantley",
        ),
        ("I met Peregrin from Oxley, she said hi.", "Oxley"),
        (
            "Anyway, tobin will draw the icons, he's our designer.",
            "Anyway",
        ),
        ("the client's partner called about it.", "client"),
        ("Logs from Grelm said nothing useful.", "Logs"),
        // A new subject after a comma is no apposition; a verb form after
        // a role and a linking verb is no name.
        (
            "I hate noisy errors, the tester will check them later.",
            "errors",
        ),
        ("does the board see that the pilot is running?", "running"),
        // Two capitalised words where someone is from or at are a place.
        (
            "Torvald from Brindle Hosting is our first sponsor.",
            "Brindle Hosting",
        ),
        ("Osric at Quillon Tacos does catering.", "Quillon Tacos"),
        ("the lead is quite slow today", "quite"),
        ("one more box for quillan, our infra guy, to patch.", "guy"),
    ] {
        let got = kinds(s);
        assert!(
            !got.contains(&(not_person.to_owned(), NodeKind::Person)),
            "{s:?} → {got:?}"
        );
    }
}

#[test]
fn a_role_in_the_next_sentence_makes_the_name_before_it_a_person() {
    words();
    let g = session(&["Extensions go through Brannoc. He's the DBA, owns the cluster."]);
    let n = g
        .nodes()
        .into_iter()
        .find(|n| n.label == "Brannoc")
        .unwrap_or_else(|| panic!("no node"));
    assert_eq!(n.kind, NodeKind::Person);
    assert!(
        n.detail.as_deref().is_some_and(|d| d.contains("DBA")),
        "{:?}",
        n.detail
    );
    // A name first seen as a thing becomes a person once a role names it.
    let g = session(&[
        "Check the Velmira config first.",
        "Velmira is our release manager, by the way.",
    ]);
    let n = g
        .nodes()
        .into_iter()
        .find(|n| n.label == "Velmira")
        .unwrap_or_else(|| panic!("no node"));
    assert_eq!(n.kind, NodeKind::Person);
    // No pronoun role, no person: "It's the default."
    assert_eq!(extract::pronoun_role("It's the default, leave it."), None);
    assert_eq!(
        extract::pronoun_role("She's the EM, ask her.").as_deref(),
        Some("EM")
    );
}

#[test]
fn an_ampersand_joins_a_name() {
    let got = kinds("found one! Quorrel & Sons sent a quote.");
    assert!(got.iter().any(|(l, _)| l == "Quorrel & Sons"), "{got:?}");
    // Only between capitalised words.
    let got = kinds("Quorrel & the others sent a quote.");
    assert!(got.iter().all(|(l, _)| !l.contains('&')), "{got:?}");
}

#[test]
fn calendar_words_titles_and_reactions_are_never_entities() {
    for s in [
        "Wow, that was fast.",
        "Yep, ship it.",
        "Glad that worked.",
        "Enter the password when asked.",
        "See you Monday then.",
        "We moved it in Nov and again in Dec.",
        "Nice. Thanks!",
    ] {
        let got = kinds(s);
        assert!(got.is_empty(), "{s:?} → {got:?}");
    }
    // A title before a name is not an entity of its own; the name is a person.
    let got = kinds("My boss, Dr Halvorsen, wants the report.");
    assert!(got.iter().all(|(l, _)| l != "Dr"), "{got:?}");
    assert!(
        got.contains(&("Halvorsen".into(), NodeKind::Person)),
        "{got:?}"
    );
}

#[test]
fn a_title_or_short_form_does_not_end_a_sentence() {
    let s = extract::sentences(
        "our dentist is dr. vantrosk on the high street, see her friday. \
         Bring a snack, e.g. an apple. Review every MR. Merges stay manual.",
    );
    assert_eq!(
        s,
        [
            "our dentist is dr. vantrosk on the high street, see her friday.",
            "Bring a snack, e.g. an apple.",
            "Review every MR.",
            "Merges stay manual.",
        ],
        "{s:?}"
    );
    // So the sentence with the title still names its person, and the
    // linking verb before the title gives the role.
    let m = extract::mentions(&s[0], None);
    assert!(
        m.iter()
            .any(|m| m.label == "vantrosk" && m.role.as_deref() == Some("dentist")),
        "{m:?}"
    );
    let got = kinds(&s[0]);
    assert!(
        got.contains(&("vantrosk".into(), NodeKind::Person)),
        "{got:?}"
    );
}

#[test]
fn code_shapes_are_technical() {
    let got = kinds("The bug is in src/jobs/worker.py where `retry_policy` calls FetchClient.");
    assert!(
        got.contains(&("src/jobs/worker.py".into(), NodeKind::File)),
        "{got:?}"
    );
    assert!(
        got.contains(&("retry_policy".into(), NodeKind::Identifier)),
        "{got:?}"
    );
    assert!(
        got.contains(&("FetchClient".into(), NodeKind::Identifier)),
        "{got:?}"
    );
}

#[test]
fn decisions_name_their_choice_topic_and_what_they_replace() {
    words();
    let d = extract::decision("OK let's go with Zephyrq for the task queue.", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("Zephyrq"));
    assert!(d.topic.iter().any(|w| w == "queue"), "{:?}", d.topic);
    let d = extract::decision("Ok scrap the Zephyrq idea, Brokk is enough.", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"));
    assert_eq!(d.replaced.as_deref(), Some("Zephyrq"));
    let d = extract::decision("Let's go back to Zephyrq.", None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.moves, DecisionMove::Return);
    let d = extract::decision("forget event_day, partition the table on loaded_ts", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("loaded_ts"), "{d:?}");
    assert_eq!(d.replaced.as_deref(), Some("event_day"));
}

#[test]
fn refusals_questions_and_non_decisions_decide_nothing() {
    words();
    for s in [
        "Let's not use Zephyrq for this.",
        "We won't switch to Brokk.",
        "Should we go with Brokk?",
        "Switch to the feature branch and rerun it.",
        "switch to the other terminal pls",
        "Let's use it.",
        "I use vim daily.",
        "never mind, the sensors are 8 bit so no point dithering.",
        "ok, sample every 90 seconds instead.",
        "try again",
        "try restarting it",
        // Someone away is no option dropped, with or without a capital.
        "sorry, the visit moved to the 22nd, dr. vantrosk is out on the 19th",
        "Dr. Vantrosk is out this week.",
    ] {
        assert!(extract::decision(s, None).is_none(), "{s:?}");
    }
    // "try X" naming a thing is a choice.
    let d = extract::decision("try zorplet b2", None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("zorplet b2"), "{d:?}");
    // "X it is" reads only its own clause.
    for (s, chosen) in [
        ("ok, Quillo it is", "Quillo"),
        ("they shipped the tokens, so Zorp tokens it is", "Zorp"),
    ] {
        let d = extract::decision(s, None).unwrap_or_else(|| panic!("none: {s}"));
        assert!(!d.label.contains(','), "{}", d.label);
        assert_eq!(d.chosen.as_deref(), Some(chosen), "{d:?}");
    }
    assert!(extract::decision("it is what it is", None).is_none());
    // The idiom may end its clause mid-sentence, the choice in lowercase.
    let d = extract::decision("fine, zorplet 2.4 it is, locked to 2.4.9.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Use zorplet 2.4");
    // A choice put off is not made; "let's go to X" makes one.
    for s in [
        "porting to Quillo is a problem for later, not this sprint",
        "switching to Brokk can wait until after the release",
    ] {
        assert!(extract::decision(s, None).is_none(), "{s:?}");
    }
    // "and I've …" opens a clause of its own.
    // "later" in a choice's own words puts nothing off.
    assert!(extract::decision("let's use Quillo for later lookups too.", None).is_some());
    let d = extract::decision("we're going with Quillo and I've let Brokk know.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Use Quillo");
    let d = extract::decision("sure, let's go to Brokk 4 for the upgrade.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"), "{d:?}");
    // "let's use that" takes the thing the clause before it named.
    let d = extract::decision("the Zorpo clock is cheaper, let's use that", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("Zorpo"), "{d:?}");
    assert!(extract::decision("ok, let's use that", None).is_none());
    // A pronoun after "for" is the topic's, not the choice's.
    let d = extract::decision("Use zorp-cron for it.", None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("zorp-cron"), "{d:?}");
}

#[test]
fn facts_restrictions_procedures_and_intentions() {
    words();
    let f = extract::fact("The request timeout is 3 s for now.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "request timeout: 3 s");
    let f = extract::fact("actually the upload limit is 50 MB, not 20")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.subject.as_deref(), Some("upload limit"));
    assert!(f.label.contains("50"), "{}", f.label);
    let f = extract::fact("The demo is on the 14th.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.subject.as_deref(), Some("demo"), "{f:?}");
    assert!(extract::fact("Step 2 looks done.").is_none());
    // A plain subject linked by a copula; a rate with what it is per; a
    // date's month after "of"; an event noun after the value.
    let f = extract::fact("wait. msrv is 1.76 not 1.74").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "msrv: 1.76");
    let f = extract::fact("Pool: 20 per pod.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "pool: 20 per pod");
    let f = extract::fact("she'd like to demo it on the 12th of November.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "demo: the 12th of November");
    let f = extract::fact("Talvi approved February 28 for the cutover.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "cutover: February 28");
    // What a thing gets or allows is measured by the value after it.
    let f = extract::fact("Each trial workspace gets 40 builds per day.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.subject.as_deref(), Some("trial workspace"), "{f:?}");
    let f = extract::fact("the archive tier allows 12 restores per month")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "archive tier: 12 restores per month");
    // A pronoun is no subject.
    assert!(extract::fact("it is 3").is_none());
    // A value denied takes the one said after it; a relative pronoun
    // stands for the phrase before its comma; a range of times is a value.
    let f = extract::fact("the sm gutter is not 12, it is 16px.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "sm gutter: 16px");
    assert!(extract::fact("the gutter is not 12 anymore").is_none_or(|f| !f.label.contains("12")));
    let f = extract::fact("ship it before the quarter review, which is Monday the 9th.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "quarter review: Monday the 9th");
    let f =
        extract::fact("the best score in the last run was 0.91.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "last run: 0.91");
    // A change to a value links its subject; an interval links with
    // "every"; a rate is per a word with content; a count in a period.
    let f = extract::fact("the launch moved to May 9.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "launch: May 9");
    let f =
        extract::fact("we sample the gauge every 30 seconds.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "gauge: 30 seconds");
    let f = extract::fact("the pump draw is 20 mA per the spec sheet.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "pump draw: 20 mA");
    let f = extract::fact("the swim quota is 3 sessions a week.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "swim quota: 3 sessions a week");
    // What the value is for; the verb that changes it and a participle
    // after the subject are no part of it.
    let f = extract::fact("let's go with 20 minutes for the lock timeout.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "lock timeout: 20 minutes");
    let f = extract::fact("bump retries to 7.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "retries: 7");
    let f = extract::fact("standby draw measured at 3.2 mA.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "standby draw: 3.2 mA");
    let f = extract::fact("the handover slipped to June 20.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "handover: June 20");
    let f = extract::fact("handover got moved to june 27!").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "handover: june 27");
    let f = extract::fact("the handover slips to July 1.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "handover: July 1");
    // A modal of what is to come links like "is"; a rate written with a
    // slash keeps its unit and what it is per.
    let f = extract::fact("the refund would be £40.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "refund: £40");
    let f =
        extract::fact("the sync quota is 90 req/min per token.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "sync quota: 90 req/min per token");
    assert_eq!(
        extract::value_unit("90 req/min").as_deref(),
        Some("req/min")
    );
    let later = extract::later_facts("The hall is booked for 3 May, and the deposit will be £300.");
    assert!(
        later.iter().any(|r| r.label == "deposit: £300"),
        "{later:?}"
    );
    assert_eq!(extract::value_unit("40/min").as_deref(), Some("/min"));
    assert_eq!(extract::value_unit("41.2%").as_deref(), Some("%"));
    assert_eq!(extract::value_unit("16px").as_deref(), Some("px"));
    assert_eq!(extract::value_unit("14th").as_deref(), Some("date"));
    assert_eq!(extract::value_unit("€42").as_deref(), Some("€"));
    assert_eq!(extract::value_unit("the 9th").as_deref(), Some("date"));
    assert_eq!(extract::value_unit("2.8.0"), None);
    let f = extract::fact("Freeze is Friday 14:00–18:00 UTC.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "freeze: Friday 14:00–18:00");
    // A measure before its noun, after a determiner, is that noun's value;
    // a year or a count is not.
    let f = extract::fact("Keeping the 750ms flush interval.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "flush interval: 750ms");
    let f =
        extract::fact("we went with a 5-day window on every run").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "window: 5-day");
    assert!(extract::fact("the split from the 2025 paper").is_none());
    assert!(extract::fact("a 1970s semi with a garden").is_none());
    assert!(extract::fact("I have a 1pm call with the bank").is_none());
    // Who reports a value is no part of its subject.
    let f = extract::fact("Legal says retention is 45 days.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "retention: 45 days");
    let f = extract::fact("Noor thinks warmup is 15 minutes.").unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "warmup: 15 minutes");
    // Declining an offer with thanks corrects nothing; a number still does.
    assert!(extract::correction("No, the short list is enough, thank you.").is_none());
    assert!(extract::correction("No thanks, Oskar will not like more build minutes.").is_none());
    let c = extract::correction("No, thanks, the limit is 20 not 10.")
        .unwrap_or_else(|| panic!("lost"));
    assert!(c.label.contains("20"), "{}", c.label);

    let r =
        extract::restriction("Also, never force-push to main.").unwrap_or_else(|| panic!("none"));
    assert_eq!(r.kind, NodeKind::Restriction);
    assert!(r.label.starts_with("Never force-push"), "{}", r.label);

    let p = extract::procedure("To run the tests use `uv run pytest -q` from the root.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "test: uv run pytest -q");
    let p = extract::procedure("we deploy with make deploy ENV=prod after review")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.subject.as_deref(), Some("deploy"), "{p:?}");
    // Two commands in one sentence are one procedure; "up" may sit inside one.
    let p = extract::procedure("so it's docker compose up -d db and then uv run pytest -q, noted")
        .unwrap_or_else(|| panic!("none"));
    assert!(
        p.label
            .ends_with("docker compose up -d db && uv run pytest -q"),
        "{}",
        p.label
    );
    // A task no list names: the verb after "to", else the subcommand; a
    // command starts after a function word before it.
    let p = extract::procedure("To flash the board run `zeph flash --runner jlink`.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "flash: zeph flash --runner jlink");
    let p = extract::procedure("run `quill render report/main.qmd` for the pdf")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "render: quill render report/main.qmd");
    let p = extract::procedure("to release, build the image with zeph build -b board_s2")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "release: zeph build -b board_s2");
    // A reply that says what a command does; a lone file path is no command.
    let p = extract::described_procedure("`tern ship --track beta` uploads the bundle to testers.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "ship: tern ship --track beta");
    assert!(extract::described_procedure("`deploy/db/values.yaml` sets the pool size.").is_none());
    assert!(extract::described_procedure("`tern ship` is slow today.").is_none());
    // The command may stand mid-sentence; the steps before it come with it.
    let p = extract::described_procedure(
        "Tag it, run `./gradlew assembleDebug`, then `tern ship --track beta` uploads the APK.",
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(
        p.label,
        "ship: ./gradlew assembleDebug && tern ship --track beta"
    );
    // A file the steps name is no step.
    let p = extract::described_procedure(
        "Edit `app/build.gradle.kts`, run `./gradlew bundleRelease`, then `tern ship` uploads it.",
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "ship: ./gradlew bundleRelease && tern ship");
    // A bare command leads: a program the word list does not know.
    let p = extract::described_procedure("qx docs starts the docs server on port 4000.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "docs: qx docs");
    assert!(extract::described_procedure("The server starts quickly after a deploy.").is_none());
    // Every command of a step list, in order.
    let p = extract::procedure("For the tests: clone, `npm ci`, then `npx jest --ci`.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(p.label, "test: npm ci && npx jest --ci");
    // "how do I …" answered with a command names the task by its verb.
    let r = extract::answered_procedure(
        "how do I flash the board again?",
        "Run `zeph flash --runner jlink` from the app folder.",
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(r.label, "flash: zeph flash --runner jlink");
    let r = extract::answered_procedure(
        "what's the failover procedure?",
        "`opsctl region failover --to b --confirm`, then watch the error rate.",
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(r.subject.as_deref(), Some("failover"));
    let r = extract::restriction("no new deps that pull in openssl please")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(r.kind, NodeKind::Restriction);

    let i = extract::intention("Next I'll add pagination to the list view.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(i.kind, NodeKind::Intention);
    assert!(extract::intention("blocked on Velisar's review of the schema").is_some());
}

#[test]
fn acceptance_takes_the_proposal_before_it() {
    words();
    assert!(extract::is_acceptance("Yes, do that."));
    assert!(extract::is_acceptance("sounds good, go with it"));
    assert!(!extract::is_acceptance(
        "ok build it and tell me when it is done"
    ));
    let d = extract::accepted_proposal(
        "I'd suggest using Brokk with a small worker pool. It keeps ops simple.",
        None,
    )
    .unwrap_or_else(|| panic!("no proposal"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"));
    // "I'd suggest replacing X with Y" proposes Y in place of X.
    let d = extract::accepted_proposal(
        "Plotwise is 180 KB. I'd suggest replacing Plotwise with Linechartr, it's 40 KB.",
        None,
    )
    .unwrap_or_else(|| panic!("no proposal"));
    assert_eq!(d.chosen.as_deref(), Some("Linechartr"));
    assert_eq!(d.replaced.as_deref(), Some("Plotwise"));
    // "I'd suggest switching from X to Y" proposes Y in place of X.
    let d = extract::accepted_proposal(
        "I'd suggest switching from flat fees to a sliding scale for the stalls. It keeps it fair.",
        None,
    )
    .unwrap_or_else(|| panic!("no proposal"));
    assert!(d.label.contains("sliding scale"), "{}", d.label);
    assert_eq!(d.replaced.as_deref(), Some("flat fees"));
}

#[test]
fn a_rate_with_its_period_written_out_is_a_value() {
    words();
    assert!(
        extract::measures("the paid plan went up to $12/month").contains(&"$12/month".to_owned())
    );
    assert!(extract::measures("we do 3/week at most").contains(&"3/week".to_owned()));
    // A path or a word after a slash is no rate.
    assert!(extract::measures("see docs/setup for it").is_empty());
}

#[test]
fn a_drop_and_its_replacement_name_what_is_replaced_once() {
    words();
    let d = extract::decision(
        "Scrap the bundle thing, we'll do a single flat price instead, $80 a seat.",
        None,
    )
    .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.label, "Use a single flat price instead of bundle");
    let d = extract::decision("Using the cron job was a mistake, going with Brokk.", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.replaced.as_deref(), Some("cron job"), "{}", d.label);
}

#[test]
fn a_plan_of_ones_own_is_a_choice() {
    words();
    let d = extract::decision("my plan: a weekly digest built on Zephyrq", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert!(d.label.contains("Zephyrq"), "{}", d.label);
    let d = extract::decision("our plan is to move the notes to Brokk next week", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"));
}

#[test]
fn a_sized_thing_is_a_choice_and_a_bare_measure_is_not() {
    words();
    // A measure glued to its unit before a noun names the thing chosen.
    let d = extract::decision("the short hose was a mistake, going with a 15m hose.", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert!(d.label.contains("15m hose"), "{}", d.label);
    assert_eq!(d.replaced.as_deref(), Some("short hose"));
    assert!(extract::decision("let's go with a 40cm crate", None).is_some());
    // A measure alone is a value, not a thing.
    for s in [
        "let's go with 4 MB chunks",
        "use 5 minutes",
        "switch to every 120 seconds instead",
    ] {
        assert!(extract::decision(s, None).is_none(), "{s}");
    }
}

#[test]
fn hostile_unicode_never_panics_and_loses_nothing() {
    words();
    let long = "x".repeat(220);
    for s in [
        "No, \u{e9}\u{212a} is wrong".to_owned(),
        "\u{212a}\u{212a}\u{212a} actually, the limit is 5, not 3".to_owned(),
        "Wait, \u{130}stanbul is not the plan".to_owned(),
        "\u{202e}use Brokk instead of Zephyrq\u{202c}".to_owned(),
        "e\u{301}e\u{301} let's go with Brokk \u{1f680}\u{1f680}".to_owned(),
        format!("let's use {long} for the cache"),
        format!("{long} the timeout is 3 s"),
        "on \u{212a} June 7am, \u{1f680} 5 \u{e9}xamples, not 3 on Monday the 9th".to_owned(),
    ] {
        let _ = extract::date_style([s.as_str()]);
        for x in extract::sentences(&s) {
            let _ = extract::measures(&x);
            let _ = extract::free_measures(&x);
            let _ = extract::denied_measure(&x);
            let _ = extract::pronoun_value(&x);
            let _ = extract::resolve_day(
                &x,
                at(0).date_naive(),
                extract::DateStyle::DayMonth,
                Some(6),
            );
            let _ = extract::mentions(&x, None);
            let _ = extract::decision(&x, None);
            let _ = extract::correction(&x);
            let _ = extract::preference(&x);
            let _ = extract::fact(&x);
            let _ = extract::restriction(&x);
            let _ = extract::procedure(&x);
            let _ = extract::intention(&x);
        }
    }
    // The correction after a case-folding character is still found.
    let c = extract::correction("No, \u{e9}\u{212a} is wrong, the key is fine")
        .unwrap_or_else(|| panic!("lost"));
    assert!(c.label.contains("wrong"), "{}", c.label);
    // An over-long token is cut, the rest of the sentence still counts.
    let f =
        extract::fact(&format!("{long} so the timeout is 3 s")).unwrap_or_else(|| panic!("lost"));
    assert_eq!(f.label, "timeout: 3 s");
}

fn at(min: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 10, 5, 9, 0, 0)
        .single()
        .unwrap_or_else(|| panic!("date"))
        + chrono::Duration::minutes(min)
}

/// Runs the heuristic probe over each prompt in turn, applying its patch.
fn session(prompts: &[&str]) -> Graph {
    // The word lists load once per process: every session reads them, so
    // no test's result depends on which test ran first.
    words();
    let mut g = Graph::new();
    let mut probe = HeuristicProbe::default();
    for (i, p) in prompts.iter().enumerate() {
        let turns = [Turn {
            index: i as u32 + 1,
            user: (*p).to_owned(),
            assistant: String::new(),
            files: vec![],
            timestamp: Some(at(i as i64)),
        }];
        probe_step(&mut g, &mut probe, i, &turns);
    }
    g
}

/// Probe `i` over `turns`, its patch applied to `g`.
fn probe_step(g: &mut Graph, probe: &mut HeuristicProbe, i: usize, turns: &[Turn]) {
    probe_step_asked(g, probe, i, turns, None);
}

/// [`probe_step`], with the prompt a leading reply-only turn answers (as
/// the session passes it).
fn probe_step_asked(
    g: &mut Graph,
    probe: &mut HeuristicProbe,
    i: usize,
    turns: &[Turn],
    asked: Option<&str>,
) {
    let input = ProbeInput {
        session: "t",
        probe_id: format!("p{i}"),
        turns,
        graph: g,
        now: at(i as i64),
        root: None,
        asked,
    };
    let out = probe.probe(&input).unwrap_or_else(|e| panic!("{e}"));
    apply(g, &out.patch.ops, &PatchRules::default()).unwrap_or_else(|e| panic!("{e}"));
}

/// Decision labels in force (not superseded).
fn in_force(g: &Graph) -> Vec<String> {
    in_force_of(g, NodeKind::Decision)
}

/// Asserts that a decision in force starts with `prefix`.
fn assert_in_force(g: &Graph, prefix: &str) {
    let live = in_force(g);
    assert!(
        live.iter().any(|l| l.starts_with(prefix)),
        "{prefix}: {live:?}"
    );
}

/// Labels of `kind` in force (not superseded).
fn in_force_of(g: &Graph, kind: NodeKind) -> Vec<String> {
    g.nodes()
        .into_iter()
        .filter(|n| n.kind == kind && g.superseded_by(&n.id).is_none())
        .map(|n| n.label.clone())
        .collect()
}

#[test]
fn an_unnamed_instead_refers_to_a_recent_choice_only() {
    // "Y instead" right after a choice replaces it …
    let g = session(&[
        "Let's use Zephyrq for the queue.",
        "Hmm, we'll go with Brokk instead.",
    ]);
    assert_eq!(
        in_force(&g),
        ["Use Brokk instead of Zephyrq"],
        "{:?}",
        g.nodes()
    );
    // "instead" may end its clause before the sentence goes on.
    let d = extract::decision(
        "ok, booked Brokk instead, cheaper and already on the box.",
        None,
    )
    .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"));
    assert_eq!(d.replaced.as_deref(), Some(extract::PREVIOUS_NAMED));
    assert!(
        extract::decision("booked Brokk instead of the old one later on", None)
            .is_none_or(|d| d.replaced.as_deref() != Some(extract::PREVIOUS_NAMED))
    );
    // … but not a choice from many turns back about something else.
    let g = session(&[
        "Let's use Zephyrq for the queue.",
        "The tests pass now.",
        "Lunch first, back in an hour.",
        "Okay, the logs look clean.",
        "Nothing else from the review.",
        "For the standup we'll do a written update instead.",
    ]);
    let force = in_force(&g);
    assert!(
        force.iter().any(|l| l == "Use Zephyrq for the queue"),
        "{force:?}"
    );
    assert!(
        force.iter().all(|l| !l.contains("instead of Zephyrq")),
        "{force:?}"
    );
}

#[test]
fn a_changed_decision_supersedes_however_it_is_phrased() {
    let cases: &[(&[&str], &str, &str)] = &[
        // The same thing at another version is another choice: A → B → A.
        (
            &[
                "sure, let's go to Brokk 4.0 for the upgrade.",
                "fine, Brokk 3.1 it is, locked to 3.1.9.",
                "right, back to Brokk 4.0 for this release.",
            ],
            "4.0",
            "3.1",
        ),
        (
            &[
                "Let's go with Zephyrq for the queue.",
                "Ok scrap the Zephyrq idea, Brokk is enough.",
            ],
            "Brokk",
            "Zephyrq",
        ),
        // Staying with X, said as a plain statement.
        (
            &[
                "the export is a Brokkel file today.",
                "the export has to move to Zephyrq.",
                "they read the old files fine after all. ok we just stay with Brokkel!",
            ],
            "Brokkel",
            "Zephyrq",
        ),
        // Back to a thing never chosen before: it replaces the choice the
        // turn before talked about.
        (
            &[
                "flour from Quillmarsh, butter from Dunnock Dairy.",
                "let's try Brokkelby for the flour.",
                "the Brokkelby van can't come before 9, that's a no.",
                "back to Quillmarsh then.",
            ],
            "Quillmarsh",
            "Brokkelby",
        ),
        (
            &[
                "Let's use Zephyrq for the queue.",
                "Forget Zephyrq, we'll do Brokk on the managed broker.",
            ],
            "Brokk",
            "Zephyrq",
        ),
        (
            &[
                "Let's use Zephyrq for the queue.",
                "Switch the queue to Brokk instead of Zephyrq.",
            ],
            "Brokk",
            "Zephyrq",
        ),
        (
            &[
                "Use weekly partitions for the events table.",
                "Let's use daily partitions instead.",
            ],
            "daily",
            "weekly",
        ),
        // Someone else's veto, relayed, then the replacement in a verbless
        // clause led by "so" and a pronoun.
        (
            &[
                "Let's use Zephyrq for the cache.",
                "news from mira: she vetoed Zephyrq, too much to run. So Brokk for the cache.",
            ],
            "Brokk",
            "Zephyrq",
        ),
        (
            &[
                "we're calling the boat Skerrow.",
                "fyi tamsin vetoed Skerrow. so it's Marram then.",
            ],
            "Marram",
            "Skerrow",
        ),
        // A gerund before the thing dropped; "Y instead" after a drop that
        // names what it is instead of.
        (
            &[
                "Let's use Zephyrq for announcements.",
                "Setting up a Zephyrq board was a mistake, going with a Brokk list instead.",
            ],
            "Brokk",
            "Zephyrq",
        ),
        // What the sentence turned away from, named before "but".
        (
            &["We were heading to Quillmoor but we switched to Ardwen."],
            "Ardwen",
            "Quillmoor",
        ),
        // A drop and its replacement joined by "and", moved "into".
        (
            &[
                "Let's use the Zephyrq bucket for state.",
                "So drop the bucket plan and move state into Brokk workspaces.",
            ],
            "Brokk",
            "Zephyrq",
        ),
        // "X is overkill, put it back to Y", Y a plain word.
        (
            &[
                "Let's use hourly syncs for the export.",
                "hourly is overkill, put it back to nightly at 5.",
            ],
            "nightly",
            "hourly",
        ),
        // A bare "instead" replaces the choice before, not itself.
        (
            &[
                "Let's use Zephyrq for the queue.",
                "Zephyrq is heavy for this. let's use Brokk instead",
            ],
            "Brokk",
            "Zephyrq",
        ),
        // Dropping the first word of a two-word name drops the choice made
        // with it ("Harrow Jetline", chosen as "Jetline").
        (
            &[
                "Harrow Jetline sounds fun, so let's go with Jetline for the buffer.",
                "Ok scrap the Harrow idea, a Brokk job table is enough.",
            ],
            "Brokk",
            "Jetline",
        ),
        // The same choice in other words: "topics", "the topic-based approach".
        (
            &[
                "Let's go with topics for pushes.",
                "Let's drop the topic-based approach for pushes; per-device tokens will do.",
            ],
            "per-device tokens",
            "topics",
        ),
    ];
    for (prompts, new, old) in cases {
        let g = session(prompts);
        let live = in_force(&g);
        assert!(
            live.iter().any(|l| l.contains(new)),
            "{prompts:?}: {live:?}"
        );
        assert!(
            !live.iter().any(|l| l.contains(old) && !l.contains(new)),
            "{prompts:?}: the old choice is still in force: {live:?}"
        );
        let sup = g
            .edges()
            .into_iter()
            .filter(|e| e.kind == EdgeKind::Supersedes)
            .count();
        assert!(sup >= 1, "{prompts:?}: no supersedes edge");
    }
}

#[test]
fn going_back_to_what_we_had_returns_to_the_choice_replaced_last() {
    let g = session(&[
        "Let's use Zephyrq for data fetching.",
        "Switch data fetching to Brokk, we need caching.",
        "hm, that did not pan out, go back to what we had before.",
    ]);
    let live = in_force(&g);
    assert_in_force(&g, "Use Zephyrq");
    assert!(!live.iter().any(|l| l.starts_with("Use Brokk")), "{live:?}");
    // "Y from now on" after a drop: Y, its label read as a choice.
    let g = session(&[
        "we use Zephyrq for the queue",
        "no more Zephyrq, Brokk from now on",
    ]);
    assert_eq!(
        in_force(&g),
        vec!["Use Brokk instead of Zephyrq".to_owned()],
        "{:?}",
        in_force(&g)
    );
    // What is dropped was never recorded as chosen ("forget X, Y it is"
    // with X said only as a place): it becomes the history Y supersedes.
    let g = session(&[
        "there's the quarry pool nearby, lots of lanes.",
        "ok forget the quarry pool, harbour baths it is.",
    ]);
    let newer = g
        .nodes()
        .into_iter()
        .find(|n| n.kind == NodeKind::Decision && n.label == "Use quarry pool")
        .and_then(|n| g.superseded_by(&n.id).map(|x| x.label.clone()));
    assert_eq!(
        newer.as_deref(),
        Some("Use harbour baths instead of quarry pool"),
        "{:?}",
        g.nodes().iter().map(|n| &n.label).collect::<Vec<_>>()
    );
    // Nothing was replaced yet: nothing to go back to.
    let g = session(&[
        "Let's use Zephyrq for data fetching.",
        "go back to what we had before.",
    ]);
    assert_eq!(in_force(&g).len(), 1, "{:?}", in_force(&g));
}

#[test]
fn going_back_puts_the_first_choice_in_force_again() {
    let g = session(&[
        "Let's go with Zephyrq for the queue.",
        "Forget Zephyrq, we'll do Brokk for the queue.",
        "Brokk was a mistake. Let's go back to Zephyrq.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Zephyrq")), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|l| l.contains("Brokk") && !l.contains("Zephyrq")),
        "{live:?}"
    );
}

#[test]
fn refusals_and_branch_switches_add_no_decision() {
    let g = session(&[
        "Let's not use Zephyrq for the queue.",
        "Switch to the feature branch first.",
        "Wow. See you Monday.",
    ]);
    assert!(in_force(&g).is_empty(), "{:?}", in_force(&g));
    assert!(
        g.nodes()
            .iter()
            .all(|n| !lexicon::is_closed_class(&n.label.to_lowercase())),
        "{:?}",
        g.nodes().iter().map(|n| &n.label).collect::<Vec<_>>()
    );
}

#[test]
fn a_corrected_number_keeps_its_history() {
    let g = session(&[
        "The upload limit is 20 MB for now.",
        "Actually the upload limit is 50 MB, not 20.",
    ]);
    assert_fact_replaced(&g, "50", "20");
}

/// Asserts that a fact whose label holds `new` supersedes one whose label
/// holds `old`.
fn assert_fact_replaced(g: &Graph, new: &str, old: &str) {
    let facts: Vec<_> = g
        .nodes()
        .into_iter()
        .filter(|n| n.kind == NodeKind::Fact)
        .collect();
    let newer = facts
        .iter()
        .find(|n| n.label.contains(new))
        .unwrap_or_else(|| panic!("{facts:?}"));
    let older = g.supersedes(&newer.id);
    assert!(older.iter().any(|o| o.label.contains(old)), "{facts:?}");
}

#[test]
fn a_count_of_an_irregular_plural_keeps_its_noun() {
    words();
    let (new, old) = extract::denied_value("the boat takes 12 people max, not 16 people.")
        .unwrap_or_else(|| panic!("no denial"));
    assert_eq!(new.label, "boat: 12 people");
    assert_eq!(old.label, "boat: 16 people");
}

#[test]
fn a_scaled_number_and_a_day_with_its_time_are_whole_values() {
    words();
    for (s, want) in [
        (
            "the ledger table is 3.6 billion rows",
            "ledger table: 3.6 billion rows",
        ),
        ("the grant is £2 million", "grant: £2 million"),
        (
            "the site visit is friday 9th at 3:15pm",
            "site visit: friday 9th at 3:15pm",
        ),
        (
            "the tasting is Monday 4 May at 6 pm",
            "tasting: Monday 4 May at 6 pm",
        ),
    ] {
        assert_eq!(fact(s).as_deref(), Some(want), "{s}");
    }
    // A count after the day is no time of it.
    assert_eq!(
        fact("the tasting is Monday 4 May at 6 tables").as_deref(),
        Some("tasting: Monday 4 May")
    );
    let (new, old) = extract::denied_value("sorry, the ledger table is 3.6 billion rows, not 1.9.")
        .unwrap_or_else(|| panic!("no denial"));
    assert_eq!(new.label, "ledger table: 3.6 billion rows");
    assert_eq!(old.label, "ledger table: 1.9 billion rows");
}

#[test]
fn a_value_set_against_the_old_one_updates_it_over_other_values() {
    words();
    // The sentence names two other sums before the corrected one; the
    // value set against the held one is its new value.
    let g = session(&[
        "the raffle goal is £3,000",
        "the club gives £900 and the shop £600, so to cover the roof the raffle must bring in £4,200, not £3,000.",
    ]);
    assert_fact_replaced(&g, "£4,200", "£3,000");
}

#[test]
fn a_day_said_of_it_with_a_change_moves_the_dated_fact_talked_about_last() {
    words();
    let g = session(&[
        "the vet check-up is on Tuesday 10 February at 8:50",
        "the clinic phoned back and it's now wednesday 11th at 10:45",
    ]);
    assert_fact_replaced(
        &g,
        "vet check-up: wednesday 11th at 10:45",
        "Tuesday 10 February",
    );
    for (s, want) in [
        (
            "we shifted it over to Sunday 28 June, same slot",
            Some("Sunday 28 June"),
        ),
        ("ok we moved it to friday 6th", Some("friday 6th")),
        // "it" is not what the day is said of, or no change is said.
        (
            "mailed it to the printer, proofs go to the board on the 21st",
            None,
        ),
        (
            "the 23rd is when my cousin visits, I swapped them round",
            None,
        ),
        ("it is on Sunday 28 June", None),
    ] {
        assert_eq!(extract::pronoun_day(s).as_deref(), want, "{s}");
    }
}

#[test]
fn a_bare_number_set_against_a_held_one_replaces_it() {
    words();
    let g = session(&["the minimum order is €35", "55 not 35. the owner raised it"]);
    assert_fact_replaced(&g, "minimum order: €55", "€35");
    assert_eq!(
        extract::denied_number("55 not 35."),
        Some(("55".to_owned(), "35".to_owned()))
    );
    // Two facts hold that number: which one changed is not said.
    let g = session(&[
        "the minimum order is €35",
        "the delivery fee cap is €35",
        "55 not 35.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.contains(&"minimum order: €35".to_owned())
            && facts.contains(&"delivery fee cap: €35".to_owned()),
        "{facts:?}"
    );
}

#[test]
fn a_reply_that_says_it_changed_a_held_value_updates_it() {
    words();
    let g = session_with_replies(&[
        (
            "the nightly sync window is 20 minutes",
            "Noted: the nightly sync window is 20 minutes.",
        ),
        (
            "big files keep failing, give it more room",
            "Changed: the nightly sync window is now 75 minutes.",
        ),
        ("thanks", "You're welcome."),
    ]);
    assert_fact_replaced(&g, "nightly sync window: 75 minutes", "20 minutes");
    // A reply that offers, hedges, or sets one value against another
    // changes nothing.
    for reply in [
        "I could raise the nightly sync window to 75 minutes.",
        "If you want, our nightly sync window is now 75 minutes.",
        "The nightly sync window is now 75 minutes, from the 20 minutes before, and retries wait 5 minutes.",
        "Retries start before 75 minutes pass on the nightly sync window.",
    ] {
        let g = session_with_replies(&[
            ("the nightly sync window is 20 minutes", "Noted."),
            ("big files keep failing", reply),
            ("thanks", "You're welcome."),
        ]);
        let facts = in_force_of(&g, NodeKind::Fact);
        assert!(
            facts.contains(&"nightly sync window: 20 minutes".to_owned()),
            "{reply}: {facts:?}"
        );
    }
    // A value the user never set is not the reply's to record.
    let g = session_with_replies(&[
        (
            "big files keep failing",
            "Changed: the nightly sync window is now 75 minutes.",
        ),
        ("thanks", "You're welcome."),
    ]);
    assert!(in_force_of(&g, NodeKind::Fact).is_empty());
}

#[test]
fn a_value_beside_a_new_choice_updates_no_other_fact() {
    words();
    let g = session(&[
        "the catering budget is £300",
        "Scrap the bundle thing, we'll do a single tier instead — £80 flat, logo included.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.contains(&"catering budget: £300".to_owned()),
        "{facts:?}"
    );
}

#[test]
fn a_day_denied_by_its_number_alone_is_corrected() {
    words();
    let g = session(&[
        "goal is the handover by May 2",
        "mira needs a few more days, so its May 9 not the 2nd",
    ]);
    assert_fact_replaced(&g, "May 9", "May 2");
    assert!(extract::denies_day("so it's the 11th, not the 4th", "4"));
    assert!(!extract::denies_day("the 4th and the 11th both work", "4"));
}

#[test]
fn details_follow_the_conversation_and_keep_evidence() {
    let g = session(&[
        "We keep invoices in Ledgrin.",
        "Ledgrin now also stores the credit notes since this morning.",
    ]);
    let n = g
        .nodes()
        .into_iter()
        .find(|n| n.label == "Ledgrin")
        .unwrap_or_else(|| panic!("no node"));
    assert!(
        n.detail
            .as_deref()
            .is_some_and(|d| d.contains("credit notes")),
        "{:?}",
        n.detail
    );
    assert_eq!(n.evidence.len(), 2, "{:?}", n.evidence);
    assert_eq!(n.evidence[1].turn, 2);
    assert_eq!(n.evidence[1].speaker, "user");
}

#[test]
fn terse_answers_and_a_bare_instead_are_choices() {
    words();
    let d =
        extract::answer_choice("parser: zorp derive", "", None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Use zorp derive for parser");
    let d = extract::answer_choice(
        "Brokk bucket.",
        "Two options: a Brokk bucket with locking, or Zephyrq workspaces. Which one?",
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert!(d.label.contains("Brokk"), "{}", d.label);
    // Not an answer when nothing was offered, or when it is a question.
    assert!(extract::answer_choice("Brokk bucket.", "Done, tests pass.", None).is_none());
    assert!(extract::answer_choice("parser: which one?", "", None).is_none());
    // Asking for one of the offered actions chooses that action.
    let d = extract::answer_choice(
        "Please archive it.",
        "We can fix the export now, or archive the old report for a while. What do you prefer?",
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Archive it");
    // "we use X, not Y" names X even in lowercase and after a colon.
    let d = extract::decision(
        "Sorry, I forgot to say: for the docs we use zensical, not sphinx.",
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("zensical"), "{d:?}");
    let d = extract::decision("We use Quillo, not the old tracker.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("Quillo"), "{d:?}");
    let g = session(&[
        "Let's use Zephyrq for parsing.",
        "Let's try Brokk instead.",
        "Ok, let's go back to Zephyrq.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Zephyrq")), "{live:?}");
    assert!(!live.iter().any(|l| l.contains("Brokk")), "{live:?}");
}

/// Runs the heuristic probe over (prompt, reply) turns, one probe each.
fn session_with_replies(turns: &[(&str, &str)]) -> Graph {
    words();
    let mut g = Graph::new();
    let mut probe = HeuristicProbe::default();
    let mut previous = String::new();
    for (i, (user, reply)) in turns.iter().enumerate() {
        // The reply before this prompt travels with it, as a reply-only turn.
        let mut batch = Vec::new();
        if !previous.is_empty() {
            batch.push(Turn {
                index: i as u32,
                user: String::new(),
                assistant: previous.clone(),
                files: vec![],
                timestamp: Some(at(i as i64)),
            });
        }
        batch.push(Turn {
            index: i as u32 + 1,
            user: (*user).to_owned(),
            assistant: String::new(),
            files: vec![],
            timestamp: Some(at(i as i64)),
        });
        let asked = (i > 0).then(|| turns[i - 1].0);
        probe_step_asked(&mut g, &mut probe, i, &batch, asked);
        previous = (*reply).to_owned();
    }
    g
}

/// A session whose every turn reaches the probe with its reply, as a
/// replay gives it.
fn session_with_turn_replies(turns: &[(&str, &str)]) -> Graph {
    let mut g = Graph::new();
    let mut probe = HeuristicProbe::default();
    for (i, (user, reply)) in turns.iter().enumerate() {
        let batch = [Turn {
            index: i as u32 + 1,
            user: (*user).to_owned(),
            assistant: (*reply).to_owned(),
            files: vec![],
            timestamp: Some(at(i as i64)),
        }];
        probe_step(&mut g, &mut probe, i, &batch);
    }
    g
}

#[test]
fn switches_returns_and_proposals_replace_what_the_turn_talks_about() {
    words();
    // Accepting "my proposal: … move to Y" replaces the choice the proposal names.
    let g = session_with_replies(&[
        (
            "Keep Zephyrq for schema.",
            "Every edited changeset breaks Zephyrq checksums. My proposal: generate one baseline and move to Brokk with plain SQL migrations.",
        ),
        ("yes do that", ""),
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Brokk")), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|l| l.contains("Zephyrq") && !l.contains("Brokk")),
        "{live:?}"
    );
    // "let's not bother with X after all, stick to Y and …".
    let g = session(&[
        "Let's use Zephyrq for the copy.",
        "Let's not bother with Zephyrq after all, stick to Brokk and the window.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Brokk")), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|l| l.contains("Zephyrq") && !l.contains("Brokk")),
        "{live:?}"
    );
    // A switch about something else replaces nothing.
    let g = session(&[
        "Let's use Zephyrq for the queue.",
        "I'm switching to decaf after this cup.",
    ]);
    let live = in_force(&g);
    assert!(
        live.iter().any(|l| l == "Use Zephyrq for the queue"),
        "{live:?}"
    );
    // A switch on the same topic replaces it; going back puts it in force and
    // "drop Y" in the same sentence takes Y out.
    let g = session(&[
        "Let's go with Zephyrq for search.",
        "Fine, move the search to Brokk.",
        "Then let's go back to Zephyrq, and drop Brokk entirely.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Zephyrq")), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|l| l.contains("Brokk") && !l.contains("Zephyrq")),
        "{live:?}"
    );
    // "X isn't worth the upkeep" drops X.
    let g = session(&["On reflection the Corvane fallback route isn't worth the upkeep."]);
    let live = in_force(&g);
    assert!(
        live.iter()
            .any(|l| l.starts_with("Drop") && l.contains("Corvane")),
        "{live:?}"
    );
}

#[test]
fn a_choice_taken_up_again_is_shown_in_the_new_words() {
    let g = session(&[
        "Let's go with the Zephyrq ranking approach for search.",
        "Fine, move the search to Brokk.",
        "Let's go back to the Zephyrq index with typo matching, and drop Brokk.",
    ]);
    let live = in_force(&g);
    let z: Vec<&String> = live.iter().filter(|l| l.contains("Zephyrq")).collect();
    assert_eq!(z.len(), 1, "{live:?}");
    assert!(z[0].contains("Zephyrq index"), "{live:?}");
    // The old words still find it.
    let n = g.find_by_name("Use the Zephyrq ranking approach for search");
    assert!(n.is_some_and(|n| n.label == *z[0]), "{:?}", g.nodes());
    assert!(!live.iter().any(|l| l.contains("Brokk")), "{live:?}");
}

#[test]
fn an_ordinal_names_the_thing_of_its_kind_the_session_named() {
    let g = session(&[
        "We could rent Studio Quarvo by the canal, 80 an hour.",
        "There is also Studio Verdo in the old mill.",
        "Or the Loft Brill above the bakery?",
        "Fine, we book the Loft Brill then.",
        "hm, let's go back to the first studio, the Loft Brill has no parking.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Studio Quarvo")), "{live:?}");
    assert!(!live.iter().any(|l| l.contains("Brill")), "{live:?}");
    assert!(!live.iter().any(|l| l.contains("first studio")), "{live:?}");
    // In the order they were named, not by name.
    let g = session(&[
        "We could rent Studio Zenta by the canal.",
        "There is also Studio Amber in the old mill.",
        "let's go with the first studio.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Studio Zenta")), "{live:?}");
    let g = session(&[
        "We could rent Studio Zenta by the canal.",
        "There is also Studio Amber in the old mill.",
        "let's go with the last studio.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Studio Amber")), "{live:?}");
}

#[test]
fn a_complaint_clause_names_the_choice_a_new_one_replaces() {
    words();
    // "X <problem>, go with Y": Y replaces X; an acronym names a thing.
    let g = session(&[
        "we use the QRVX crystal for the clock.",
        "QRVX keeps timing out, go with the ZLTK.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("ZLTK")), "{live:?}");
    assert!(!live.iter().any(|l| l.contains("QRVX")), "{live:?}");
    assert!(
        g.nodes()
            .iter()
            .any(|n| n.label.contains("QRVX") && g.superseded_by(&n.id).is_some()),
        "{:?}",
        g.nodes()
    );
    // "forget X, Y is simpler": Y replaces X.
    let d = extract::decision("ok forget Zephyrq, Brokk is simpler.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Use Brokk instead of Zephyrq");
    // A measure overkill is no choice dropped; the label names nothing twice.
    let d = extract::decision(
        "16 workers is overkill, switch the build to brisk-small.",
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert!(!d.label.contains("16 workers"), "{}", d.label);
    assert_eq!(d.label.matches("instead of").count(), 1, "{}", d.label);
}

#[test]
fn that_means_the_choice_the_user_is_talking_about() {
    // "scrap that" after talking about the queue drops the queue's choice,
    // not the parser's, though the parser's was made last.
    let g = session(&[
        "Let's use Zephyrq for the queue.",
        "Let's use Corvane for the parser.",
        "the queue keeps stalling. scrap that, Brokk is enough",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Brokk")), "{live:?}");
    assert!(live.iter().any(|l| l.contains("Corvane")), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|l| l.contains("Zephyrq") && !l.contains("Brokk")),
        "{live:?}"
    );
}

#[test]
fn options_answered_with_a_reason_or_without_a_question() {
    words();
    let offered = "Two options: shared topics per group, or per-device tokens kept by the server.";
    let d = extract::answer_choice(
        "Tokens for now, the server knows the devices.",
        offered,
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert!(d.label.contains("Tokens"), "{}", d.label);
    // Alternatives laid out without a question mark.
    let d = extract::answer_choice(
        "Brokk bucket.",
        "Two reasonable ones: a Brokk bucket with locking, or Zephyrq workspaces with remote runs.",
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert!(d.label.contains("Brokk"), "{}", d.label);
    // One ordinary word answers a question; it is not a choice.
    assert!(
        extract::answer_choice(
            "Hard. The client never moves dates.",
            "Is it hard, or soft?",
            None
        )
        .is_none()
    );
}

#[test]
fn terse_topic_then_choice() {
    words();
    if lexicon::frequencies_loaded() {
        assert_eq!(
            extract::terse_choice("errors. typed. zorpfail").as_deref(),
            Some("errors: zorpfail")
        );
    }
    // Ordinary words are not a choice; questions and long prompts are not terse.
    assert_eq!(extract::terse_choice("tests. all green"), None);
    assert_eq!(extract::terse_choice("done. thanks"), None);
    assert_eq!(extract::terse_choice("errors? zorpfail"), None);
    assert_eq!(
        extract::terse_choice("errors. we should really think about zorpfail"),
        None
    );
    assert_eq!(
        extract::strip_sufficiency("per-device tokens will do."),
        "per-device tokens"
    );
    assert_eq!(extract::strip_sufficiency("it works"), "it works");
}

#[test]
fn the_render_names_the_choice_a_drop_replaced() {
    use rollgraph_engine::config::RenderConfig;
    use rollgraph_engine::render::{RenderContext, render};
    let g = session(&[
        "Let's go with Zephyrq for the queue.",
        "Let's drop the Zephyrq approach; Brokk will do.",
    ]);
    let ctx = RenderContext {
        session: "t",
        turn: 2,
        now: at(2),
    };
    let r = render(&g, &[], &ctx, &RenderConfig::default());
    let line = r
        .text
        .lines()
        .find(|l| l.starts_with("- Use Brokk"))
        .unwrap_or_else(|| panic!("{}", r.text));
    assert!(line.contains("(was: Use Zephyrq"), "{line}");
    assert!(!line.contains("(was: Drop"), "{line}");
    // A value changed twice shows both earlier values, its subject once.
    let g = session(&[
        "the sleep current is 7.3 µA.",
        "the sleep current is 9.1 µA with the other clock.",
        "the sleep current is 5.2 µA.",
    ]);
    let r = render(&g, &[], &ctx, &RenderConfig::default());
    assert!(
        r.text
            .contains("sleep current: 5.2 µA (was: 9.1 µA; 7.3 µA)"),
        "{}",
        r.text
    );
}

#[test]
fn redaction_placeholders_never_become_names() {
    words();
    for s in [
        "my admin password is [REDACTED:prose] so use it",
        "Set `[REDACTED:token]` in the env and restart Brokk.",
    ] {
        let got = kinds(s);
        assert!(
            got.iter().all(|(l, _)| !l.contains("REDACTED")),
            "{s:?} → {got:?}"
        );
    }
}

#[test]
fn a_short_go_ahead_accepts_only_a_stated_proposal() {
    words();
    assert!(extract::is_go_ahead("ok, go ahead like that."));
    assert!(extract::is_go_ahead("Please do, many thanks."));
    assert!(!extract::is_go_ahead("ok, but not Brokk."));
    assert!(!extract::is_go_ahead("ok. what about Brokk?"));
    assert!(!extract::is_go_ahead("ok use Brokk for the queue now"));
    let g = session_with_replies(&[
        (
            "Page loads are slow, what would you do?",
            "The bundle is the problem. My suggestion: move the charts to Quorrakit sprites and drop the runtime.",
        ),
        ("ok, go ahead like that.", ""),
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Quorrakit")), "{live:?}");
    // A go-ahead after a report (no proposal stated) decides nothing.
    let g = session_with_replies(&[
        (
            "How do I start it?",
            "Brokkctl starts the server on port 7007.",
        ),
        ("Good.", ""),
    ]);
    assert!(in_force(&g).is_empty(), "{:?}", in_force(&g));
}

#[test]
fn a_choice_the_turn_complains_about_is_replaced_by_the_next_one() {
    words();
    let g = session(&[
        "For documentation we use Zephyrdoc, version 8.",
        "Zephyrdoc takes 50 seconds to start and breaks on every upgrade. We go with Brokkdoc, it reads the same stories.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Brokkdoc")), "{live:?}");
    assert!(!live.iter().any(|l| l.contains("Zephyrdoc")), "{live:?}");
    // A choice on another topic named in the same turn stays in force.
    let g = session(&[
        "For the queue we use Zephyrq.",
        "Zephyrq is fine. For the cache we go with Brokk.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Zephyrq")), "{live:?}");
    assert!(live.iter().any(|l| l.contains("Brokk")), "{live:?}");
}

#[test]
fn acronyms_kebab_names_and_ticket_keys() {
    let got = kinds("Write the page styles as XYZ Widgets and keep the QRS Router API.");
    assert!(
        got.contains(&("XYZ Widgets".into(), NodeKind::Entity)),
        "{got:?}"
    );
    assert!(
        got.contains(&("QRS Router API".into(), NodeKind::Entity)),
        "{got:?}"
    );
    let got = kinds("The old cluster runs proxy-qorvex, tracked in OPS-4412.");
    assert!(
        got.contains(&("proxy-qorvex".into(), NodeKind::Identifier)),
        "{got:?}"
    );
    assert!(
        got.contains(&("OPS-4412".into(), NodeKind::Identifier)),
        "{got:?}"
    );
    // Ordinary hyphenated words and a name before its role in parentheses.
    assert!(kinds("a well-known long-running read-only job").is_empty());
    let got = kinds("Dana Quell (PM) signs off.");
    assert!(
        got.contains(&("Dana Quell".into(), NodeKind::Person)),
        "{got:?}"
    );
    // A role noun that modifies the next noun names no role.
    let got = kinds("npm run zephyrbook starts the dev box on port 7007.");
    assert!(got.iter().all(|(_, k)| *k != NodeKind::Person), "{got:?}");
}

#[test]
fn a_list_of_work_is_no_choice_and_a_command_answers_its_question() {
    words();
    assert!(extract::answer_choice("Next screens: Login, Cart, Search.", "", None).is_none());
    // A speaker is no topic, and a request on a thing named before
    // chooses nothing.
    assert!(extract::answer_choice("We decide: please archive it.", "", None).is_none());
    assert!(extract::answer_choice("runner: please resize it", "", None).is_none());
    let r = extract::answered_procedure(
        "cache is full. what's the command for clearing stale entries",
        "From the ops notes: ./ops/clear-cache.sh --region eu --older-than 2h. It removes them.",
    )
    .unwrap_or_else(|| panic!("no procedure"));
    assert_eq!(r.kind, NodeKind::Procedure);
    assert!(
        r.label.starts_with("clearing stale entries: "),
        "{}",
        r.label
    );
    assert!(
        r.label.contains("clear-cache.sh --region eu"),
        "{}",
        r.label
    );
    // No question for a command, no procedure.
    assert!(
        extract::answered_procedure("status", "Ran ./ops/clear-cache.sh --region eu.").is_none()
    );
}

#[test]
fn a_bare_number_with_the_unit_of_one_fact_updates_it() {
    words();
    assert_eq!(
        extract::bare_quantity("ok so 12 per node."),
        Some(("12 per node".to_owned(), "per node".to_owned()))
    );
    // A sentence with its own subject, or two numbers, is no bare quantity.
    assert!(extract::bare_quantity("Nightly snapshots are retained for 7 days now.").is_none());
    assert!(extract::bare_quantity("6 nodes x 12 per node").is_none());
    let g = session(&[
        "workers is 16 per node.",
        "ok so 12 per node. that's the right one.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.iter().any(|f| f == "workers: 12 per node"),
        "{facts:?}"
    );
    assert!(
        !facts.iter().any(|f| f.contains("16 per node")),
        "{facts:?}"
    );
}

#[test]
fn any_verb_with_instead_replaces_what_was_just_dropped() {
    words();
    let d = extract::decision(
        "Sure, please delete it and wire up the zephyrpoll relay instead.",
        None,
    )
    .unwrap_or_else(|| panic!("no decision"));
    assert!(
        d.chosen
            .as_deref()
            .is_some_and(|c| c.starts_with("zephyrpoll")),
        "{d:?}"
    );
    assert!(extract::decision("I'll take a nap instead.", None).is_none());
    let g = session(&[
        "Let's use the Brokkfall endpoint for blocked sockets.",
        "Thinking again, the Brokkfall endpoint isn't worth the upkeep.",
        "Sure, please delete it and wire up the zephyrpoll relay instead.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("zephyrpoll")), "{live:?}");
    assert!(
        !live.iter().any(|l| l.contains("Use the Brokkfall")),
        "{live:?}"
    );
}

#[test]
fn a_pronoun_role_later_in_the_sentence_and_a_script_run_on_a_path() {
    let got = kinds(
        "By the way, qlorin will be drawing the new icons for the sidebar — he's our product designer.",
    );
    assert!(
        got.contains(&("qlorin".into(), NodeKind::Person)),
        "{got:?}"
    );
    // Another name between them takes the pronoun.
    let got = kinds("By the way, qlorin will pair with Marta Vell on it — she's our designer.");
    assert!(
        !got.contains(&("qlorin".into(), NodeKind::Person)),
        "{got:?}"
    );
    // An agent noun the word list knows is a role even when no list has it.
    let got = kinds("Tamsin is our florist, she quotes the bouquets.");
    assert!(
        got.contains(&("Tamsin".into(), NodeKind::Person)),
        "{got:?}"
    );
    let got = kinds("Ledgerwise is our checklist for the cutover.");
    assert!(
        !got.contains(&("Ledgerwise".into(), NodeKind::Person)),
        "{got:?}"
    );
    let r = extract::answered_procedure(
        "how do i start the batch job again? never remember",
        "Yes: qbatch jobs/train.job configs/base.yaml. It asks for one GPU.",
    )
    .unwrap_or_else(|| panic!("no procedure"));
    assert_eq!(r.label, "run: qbatch jobs/train.job configs/base.yaml");
}

#[test]
fn a_date_after_a_deadline_word_is_a_deadline() {
    words();
    let label = |s: &str| extract::fact(s).map(|r| r.label);
    assert_eq!(
        label("My lead wants the audit report by the 9th, so this week is busy."),
        Some("audit report deadline: the 9th".to_owned())
    );
    // A version number before it does not hide the date.
    assert_eq!(
        label("So we have to ship 1.4.0 latest on 3 May."),
        Some("deadline: 3 May".to_owned())
    );
    // A time, or a date after another word, is no deadline.
    assert_eq!(label("I was there by 5 pm"), None);
    assert_eq!(label("he can start on Monday August 2"), None);
}

#[test]
fn x_it_is_settles_a_choice() {
    words();
    let d = extract::decision("4.1.0 it is.", None).unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("4.1.0"));
    let d = extract::decision("Brokk it is then.", None).unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"));
    assert!(extract::decision("That's how it is.", None).is_none());
    assert!(extract::decision("Well it is.", None).is_none());
}

#[test]
fn a_changed_value_updates_the_fact_with_its_unit() {
    words();
    let facts = |g: &Graph| in_force_of(g, NodeKind::Fact);
    // A unit glued on ("/min") and a change said with a verb.
    let g = session(&["the upload limit is 12/min.", "too low, make it 40/min."]);
    assert_eq!(facts(&g), vec!["upload limit: 40/min"], "{:?}", g.nodes());
    let g = session(&[
        "the pool is 6 lanes a day.",
        "my back is sore, cut it to 4 lanes a day.",
    ]);
    assert_eq!(facts(&g), vec!["pool: 4 lanes a day"], "{:?}", g.nodes());
    // "move X to <day>": the verb before the subject links it.
    let g = session(&["the launch is on June 3.", "move the launch to June 12."]);
    assert_eq!(facts(&g), vec!["launch: June 12"], "{:?}", g.nodes());
    // The verb in its -ing form links the same, and dropping an amount to a
    // new value drops no choice.
    assert_eq!(
        fact("Lowering the armband to £7.").as_deref(),
        Some("armband: £7")
    );
    assert!(extract::decision("Dropping the armband to £7.", None).is_none());
    let g = session(&["the armband is £9.", "Dropping the armband to £7."]);
    assert_eq!(facts(&g), vec!["armband: £7"], "{:?}", g.nodes());
    assert!(
        in_force_of(&g, NodeKind::Decision).is_empty(),
        "{:?}",
        g.nodes()
    );
    // A choice dropped is still one.
    let d =
        extract::decision("let's drop quillo, use brokk", None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Use brokk instead of quillo");
    // A day is too many kinds of thing to update by its unit alone.
    let g = session(&[
        "the audit is on June 3.",
        "we move to the new flat on June 9.",
    ]);
    assert!(
        facts(&g).iter().any(|f| f == "audit: June 3"),
        "{:?}",
        facts(&g)
    );
}

#[test]
fn a_value_changed_from_one_to_another_keeps_the_old_as_history() {
    words();
    let shown = |g: &Graph| -> Vec<(String, Option<String>)> {
        g.nodes()
            .into_iter()
            .filter(|n| n.kind == NodeKind::Fact)
            .map(|n| {
                (
                    n.label.clone(),
                    g.superseded_by(&n.id).map(|s| s.label.clone()),
                )
            })
            .collect()
    };
    // Said by the assistant, confirming what it did.
    let g = session_with_replies(&[
        (
            "make the sync less chatty",
            "Raised the sync interval from 45 to 90 seconds.",
        ),
        ("thanks", "You're welcome."),
    ]);
    let facts = shown(&g);
    assert!(
        facts.contains(&(
            "sync interval: 45 seconds".into(),
            Some("sync interval: 90 seconds".into())
        )),
        "{facts:?}"
    );
    // Said by the user, with days.
    let g = session(&["the launch moved from June 3 to June 10."]);
    let facts = shown(&g);
    assert!(
        facts.contains(&("launch: June 3".into(), Some("launch: June 10".into()))),
        "{facts:?}"
    );
    // A new value said beside the old one's number, or marked as a new
    // reading, updates the fact whatever the sentence calls it.
    for (prompts, old, new) in [
        (
            &[
                "the peak error rate was 47% in the outage",
                "checked again: errors peaked at 41.2%, not 47%",
            ][..],
            "peak error rate: 47%",
            "peak error rate: 41.2%",
        ),
        (
            &[
                "bundle budget 320 KB",
                "let's make the budget 280 KB, the 320 was generous",
            ][..],
            "bundle budget: 320 KB",
            "bundle budget: 280 KB",
        ),
        (
            &["the shed wall is 410 cm", "measured it again, it's 395 cm"][..],
            "shed wall: 410 cm",
            "shed wall: 395 cm",
        ),
        (
            &[
                "the budget is €14,000",
                "grandma adds 3.5k so we have €17,500 now",
            ][..],
            "budget: €14,000",
            "budget: €17,500",
        ),
        (
            &[
                "the review is on the 16th",
                "Ines is away then, so the 23rd, not the 16th",
            ][..],
            "review: October 16th",
            "review: October 23rd",
        ),
        // A count set against another, with no subject of its own, names
        // what it counts.
        (
            &["the grader wants 30 samples per prompt, not 10 samples"][..],
            "samples: 10 samples",
            "samples: 30 samples per prompt",
        ),
        (
            &["correction: it's 6 tables not 4"][..],
            "tables: 4 tables",
            "tables: 6 tables",
        ),
        // A day alone takes the month of the value it replaces, written as
        // the session writes dates.
        (
            &[
                "the recital is on the 21st of December",
                "no wait, the recital is on the 14th not the 21st",
            ][..],
            "recital: the 21st of December",
            "recital: 14th December",
        ),
        // A day said to move, of a thing the old day's sentence named.
        (
            &[
                "dana says the pilot goes to the testers on fri 20 march.",
                "dana update: pilot moved to tue 24 march.",
            ][..],
            "testers: fri 20 march",
            "testers: tue 24 march",
        ),
        // The value a sentence denies is the history of the one it states,
        // in its unit, when the memory held no value of that subject.
        (
            &["the ceiling is 15 min not 8, to match the quota window"][..],
            "ceiling: 8 min",
            "ceiling: 15 min",
        ),
        (
            &["checked the plan page, the upload limit is 40 MB here, not 25"][..],
            "upload limit: 25 MB",
            "upload limit: 40 MB",
        ),
        // A unit's qualifier goes with it.
        (
            &["the refund window is 7 business days now, not 4"][..],
            "refund window: 4 business days",
            "refund window: 7 business days",
        ),
        // A plain number counts the plural noun after it.
        (
            &["the abstract is 300 words now, not 250"][..],
            "abstract: 250 words",
            "abstract: 300 words",
        ),
        // One day set against another: "instead of", "rather than".
        (
            &["the owner will end our lease on 12 May instead of 9 June"][..],
            "lease: 9 June",
            "lease: 12 May",
        ),
        (
            &["we ship on the 14th rather than the 9th"][..],
            "ship: October 9th",
            "ship: October 14th",
        ),
    ] {
        let g = session(prompts);
        let facts = shown(&g);
        assert!(
            facts.contains(&(old.into(), Some(new.into()))),
            "{prompts:?}: {facts:?}"
        );
    }
    assert!(extract::denied_value("the sync runs every 90 s and not on the main thread").is_none());
    // A count set against nothing is no change.
    assert!(extract::denied_measure("we need 4 replicas for the launch").is_none());
    assert_eq!(
        extract::denied_measure("we need 4 replicas, not 2").as_ref(),
        Some(&("4 replicas".to_owned(), "2 replicas".to_owned()))
    );
    // A number that is no old value's changes nothing.
    let g = session(&["the shed wall is 410 cm", "the door is 80 cm wide"]);
    assert!(
        shown(&g).iter().all(|(_, by)| by.is_none()),
        "{:?}",
        shown(&g)
    );
    // A range is no change.
    let g = session(&["the shop is open from 9 to 5 on weekdays."]);
    assert!(
        shown(&g).iter().all(|(_, by)| by.is_none()),
        "{:?}",
        shown(&g)
    );
    // Nor is a range that names a day the memory holds, a day said of
    // someone else ("a buyer who …"), or a number after a day and a comma.
    for prompts in [
        &[
            "the garage lease ends on 12 May",
            "so the overlap is only 3 May to 12 May",
        ][..],
        &[
            "the garage lease ends on 12 May",
            "she has a buyer who wants to move in from 1 July",
        ][..],
        &[
            "the pickup is tuesday 4 March",
            "the courier quoted £80 for tuesday 4 March, 2 vans and a driver",
        ][..],
    ] {
        let g = session(prompts);
        let facts = shown(&g);
        assert!(
            facts.iter().all(|(_, by)| by.is_none()),
            "{prompts:?}: {facts:?}"
        );
        assert!(
            facts
                .iter()
                .all(|(l, _)| !l.contains("July") && !l.contains("March 2")),
            "{prompts:?}: {facts:?}"
        );
    }
}

#[test]
fn an_event_on_a_day_is_a_fact_that_a_later_date_updates() {
    words();
    let e =
        extract::event("The lease ends on Thursday May 2, so I guess we travel on Friday May 3.")
            .map(|r| r.label);
    assert_eq!(e.as_deref(), Some("travel: Friday May 3"));
    assert!(extract::event("I turned it on 5 times.").is_none());
    // A modal or a contraction between the subject and the verb.
    let e = extract::event("she can begin on Tuesday June 4, all going well.").map(|r| r.label);
    assert_eq!(e.as_deref(), Some("begin: Tuesday June 4"));
    let e = extract::event("they'll land on the 9th.").map(|r| r.label);
    assert_eq!(e.as_deref(), Some("land: the 9th"));
    assert!(extract::event("The meeting on Friday went fine.").is_none());
    // A calendar date after what happens on it, with no verb between.
    for (s, label) in [
        (
            "the sample kits arrive August 14",
            "sample kits arrive: August 14",
        ),
        (
            "we got the kiln slot for September 3, 9 to 5",
            "kiln slot: September 3",
        ),
        ("race day: Oct 12", "race day: Oct 12"),
        (
            "checked — packers booked for Tuesday 17th",
            "packers booked: Tuesday 17th",
        ),
    ] {
        let e = extract::event(s).map(|r| r.label);
        assert_eq!(e.as_deref(), Some(label), "{s:?}");
    }
    // A bare ordinal is no calendar date; a pronoun names nothing.
    assert!(extract::event("I ran the loop 5 times on the 3rd").is_none());
    assert!(extract::event("it August 14").is_none());
    let g = session(&[
        "we travel on Friday May 3.",
        "Change of plan: we travel on Friday May 10.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(facts.iter().any(|f| f.contains("May 10")), "{facts:?}");
    assert!(!facts.iter().any(|f| f.contains("May 3")), "{facts:?}");
}

#[test]
fn a_month_that_is_a_name_is_a_person_with_a_cue() {
    let got = kinds("Jun from the book club lent me a novel.");
    assert!(got.contains(&("Jun".into(), NodeKind::Person)), "{got:?}");
    let got = kinds("May said the venue is fine.");
    assert!(got.contains(&("May".into(), NodeKind::Person)), "{got:?}");
    for s in [
        "We ship in Jun.",
        "May I ask something?",
        "The 3 Jun release said nothing.",
    ] {
        let got = kinds(s);
        assert!(
            got.iter().all(|(l, _)| l != "Jun" && l != "May"),
            "{s}: {got:?}"
        );
    }
}

#[test]
fn measured_values_shorter_names_and_pronouns_update_their_fact() {
    words();
    // (first prompt, second prompt, the fact in force after, the value it replaced)
    let cases = [
        // A verb of measuring links its subject.
        (
            "the nightly import took 96 ms",
            "re-measured: 71 ms",
            "nightly import: 71 ms",
            "96 ms",
        ),
        (
            "the outage lasted 40 minutes",
            "correction: it was 52 minutes",
            "outage: 52 minutes",
            "40 minutes",
        ),
        // The verb before a particle is no part of the subject.
        (
            "the deposit is £400",
            "deposit went up to £550",
            "deposit: £550",
            "£400",
        ),
        // A shorter name comes back to the fuller one.
        (
            "the cache ttl is 12 minutes",
            "ttl of 6 minutes is better, change it",
            "cache ttl: 6 minutes",
            "12 minutes",
        ),
        (
            "the retry limit is 4",
            "actually 7 retries",
            "retry limit: 7",
            "4",
        ),
        // A fuller name of the same head, said with a change; a label
        // before a colon names the value after it.
        (
            "budget: we agreed £900 for the whole trip",
            "ok, the trip budget goes up to £1,100",
            "budget: £1,100",
            "£900",
        ),
        // A day said to move, in a sentence that names the event.
        (
            "the design review is on May 6",
            "the review got pushed, new date May 13",
            "design review: May 13",
            "May 6",
        ),
        // Values of one dimension: a size in another unit.
        (
            "the upload size limit is 2 MB",
            "limit: 500 KB then",
            "upload size limit: 500 KB",
            "2 MB",
        ),
        // "make it N": the fact talked about last, in its own unit.
        (
            "the worker count is 6",
            "hmm make it 8",
            "worker count: 8",
            "6",
        ),
        (
            "the request timeout is 20 seconds",
            "bump it to 35",
            "request timeout: 35 seconds",
            "20 seconds",
        ),
    ];
    for (first, second, now, was) in cases {
        let g = session(&[first, second]);
        let facts = in_force_of(&g, NodeKind::Fact);
        assert!(
            facts.iter().any(|f| f == now),
            "{first} / {second}: {facts:?}"
        );
        let new = g
            .nodes()
            .into_iter()
            .find(|n| n.label == now)
            .expect("the new fact");
        assert!(
            g.supersedes(&new.id)
                .iter()
                .any(|o| o.label.ends_with(&format!(": {was}"))),
            "{first} / {second}: {facts:?}"
        );
    }
    // A longer name is often another thing: "hostel deposit" does not
    // replace "deposit".
    let g = session(&["the deposit is £400", "the hostel deposit is £90"]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(facts.iter().any(|f| f == "deposit: £400"), "{facts:?}");
    // Two fuller names fit a shorter one: neither is replaced.
    let g = session(&[
        "the read timeout is 10 seconds",
        "the write timeout is 20 seconds",
        "timeout of 15 seconds then",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.iter().any(|f| f == "read timeout: 10 seconds"),
        "{facts:?}"
    );
    assert!(
        facts.iter().any(|f| f == "write timeout: 20 seconds"),
        "{facts:?}"
    );
    // "make it" with two numbers, or with nothing to point at, is none.
    let g = session(&["the worker count is 6", "make it 8 or 10"]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(facts.iter().any(|f| f == "worker count: 6"), "{facts:?}");
    let g = session(&["let's make it 8"]);
    assert!(in_force_of(&g, NodeKind::Fact).is_empty());
}

#[test]
fn a_change_that_names_both_sides_is_a_decision_without_a_cue() {
    words();
    let cases = [
        (
            "we booked the Alder Inn instead of the Quayside",
            "Alder Inn",
            "Quayside",
        ),
        (
            "we replaced Corvel with vizzle last week",
            "vizzle",
            "Corvel",
        ),
        ("we're moving from Tarnish to Kelvane", "Kelvane", "Tarnish"),
        (
            "payments will be handled by Quillpay, not Ledgery",
            "Quillpay",
            "Ledgery",
        ),
    ];
    for (s, new, old) in cases {
        let d = extract::decision(s, None).unwrap_or_else(|| panic!("no decision: {s}"));
        assert_eq!(d.chosen.as_deref(), Some(new), "{s}: {d:?}");
        assert_eq!(d.replaced.as_deref(), Some(old), "{s}: {d:?}");
        assert_eq!(d.sentence, s);
    }
    // A possibility, a value, or ordinary words decide nothing.
    for s in [
        "we could replace Corvel with vizzle",
        "we moved from 10 to 20 workers",
        "it's a bug, not a feature",
        "we went from bad to worse",
    ] {
        assert!(extract::decision(s, None).is_none(), "{s}");
    }
    // The session keeps the old side as the new one's history.
    let g = session(&["we replaced Corvel with vizzle last week"]);
    let decisions = in_force_of(&g, NodeKind::Decision);
    assert!(
        decisions.iter().any(|d| d.contains("vizzle")),
        "{decisions:?}"
    );
    assert!(
        !decisions.iter().any(|d| d == "Use Corvel"),
        "{decisions:?}"
    );
}

#[test]
fn a_slot_said_to_hold_a_thing_is_a_choice_a_later_move_replaces() {
    words();
    for (s, chosen) in [
        ("the chart library is Corvel", "Corvel"),
        ("our CI is Quillrun", "Quillrun"),
        ("we switched the caterer to Tansyfare", "Tansyfare"),
        ("logging moves to Pinolog", "Pinolog"),
    ] {
        let d = extract::decision(s, None).unwrap_or_else(|| panic!("no decision: {s}"));
        assert_eq!(d.chosen.as_deref(), Some(chosen), "{s}: {d:?}");
    }
    // A reason after the thing, however it is spelled, is no part of it.
    for s in [
        "let's use Quillq because it's simpler.",
        "let's use Quillq cos it's simpler.",
    ] {
        let d = extract::decision(s, None).unwrap_or_else(|| panic!("no decision: {s}"));
        assert_eq!(d.chosen.as_deref(), Some("Quillq"), "{s}: {d:?}");
    }
    // An adverb after the thing is no part of it.
    let d = extract::decision("the export files are Tarnfile now.", None)
        .unwrap_or_else(|| panic!("no decision"));
    assert_eq!(d.chosen.as_deref(), Some("Tarnfile"), "{d:?}");
    // A slot that judges, a role, a value, what a slot is not: no choice.
    for s in [
        "the problem is Corvel",
        "the tech lead is Sam Quenby",
        "we changed the page size to 50",
        "the access logs aren't Tarnfile.",
        "the access logs are not Tarnfile.",
    ] {
        assert!(extract::decision(s, None).is_none(), "{s}");
    }
    let g = session(&[
        "the chart library is Corvel",
        "ok so we switched the chart library to vizzle",
    ]);
    let decisions = in_force_of(&g, NodeKind::Decision);
    assert!(
        decisions.iter().any(|d| d.starts_with("Use vizzle")),
        "{decisions:?}"
    );
    assert!(
        !decisions.iter().any(|d| d.starts_with("Use Corvel")),
        "{decisions:?}"
    );
}

#[test]
fn a_change_written_down_or_imagined_decides_nothing() {
    words();
    for s in [
        "Mention that we moved from Tarnish to Kelvane, and why.",
        "Note that the chart library is Corvel now.",
        "the caterer could be Tansyfare",
    ] {
        assert!(extract::decision(s, None).is_none(), "{s}");
    }
}

#[test]
fn times_of_events_and_prices_of_things_are_facts() {
    words();
    for (s, want) in [
        ("our ferry leaves at 06:50 on Friday", "ferry: 06:50"),
        (
            "the deploy window opens at 22:00 UTC",
            "deploy window: 22:00",
        ),
        (
            "the book club meets Tuesdays at 11am",
            "book club: Tuesdays at 11am",
        ),
        ("Kickoff is Monday at 10am.", "kickoff: Monday at 10am"),
        ("the movers will take the harp for £95 extra", "harp: £95"),
        ("we got the sofa for €300 in the end", "sofa: €300"),
    ] {
        let f = extract::fact(s).unwrap_or_else(|| panic!("no fact: {s}"));
        assert_eq!(f.label, want, "{s}");
    }
    // A count after "for" is no price.
    assert!(extract::fact("I paid for 3 nights").is_none());
}

#[test]
fn rules_by_their_shape_without_a_rule_word() {
    words();
    for s in [
        "no deploys on the api until the postmortem",
        "Only agents should see it.",
        "No merges without a review from Sam.",
    ] {
        let r = extract::restriction(s).unwrap_or_else(|| panic!("no rule: {s}"));
        assert_eq!(r.kind, NodeKind::Restriction);
    }
    for s in [
        "no worries, thanks",
        "only two of them showed up",
        "no deploys until the postmortem?",
    ] {
        assert!(extract::restriction(s).is_none(), "{s}");
    }
}

#[test]
fn a_day_alone_is_dated_by_what_the_memory_already_holds() {
    words();
    let facts = |g: &Graph| -> Vec<String> {
        g.nodes()
            .into_iter()
            .filter(|n| n.kind == NodeKind::Fact)
            .map(|n| n.label.clone())
            .collect()
    };
    // Said on 5 October: the nearest 27th would be October's, but the
    // memory holds a 27th of December.
    let g = session(&[
        "the gala is on the 27th of December",
        "the caterer deadline is the 27th",
    ]);
    assert!(
        facts(&g).contains(&"caterer deadline: 27th December".to_owned()),
        "{:?}",
        facts(&g)
    );
    // Nothing held names that day: the nearest month.
    let g = session(&["the caterer deadline is the 19th"]);
    assert!(
        facts(&g).contains(&"caterer deadline: October 19th".to_owned()),
        "{:?}",
        facts(&g)
    );
}

#[test]
fn a_time_that_starts_something_changes_no_other_time() {
    words();
    let s = "booked the painters instead, £340, 12 May 8am start";
    // A month before a clock time ends a date, it is no date.
    assert!(
        extract::measures(s).contains(&"8am".to_owned()),
        "{:?}",
        extract::measures(s)
    );
    assert!(!extract::measures(s).iter().any(|m| m.contains("May 8am")));
    // "8am start" is the start's time: no fact of that unit takes it.
    assert!(!extract::free_measures(s).contains(&"8am".to_owned()));
    assert!(extract::free_measures("ok so make it 9am now").contains(&"9am".to_owned()));
    let g = session(&["the walkthrough is at 11am", s]);
    let held: Vec<(String, bool)> = g
        .nodes()
        .into_iter()
        .filter(|n| n.kind == NodeKind::Fact)
        .map(|n| (n.label.clone(), g.superseded_by(&n.id).is_some()))
        .collect();
    assert!(
        held.contains(&("walkthrough: 11am".to_owned(), false)),
        "{held:?}"
    );
}

#[test]
fn a_preference_names_what_is_preferred() {
    words();
    for s in [
        "I prefer small commits with clear messages",
        "I like items sorted by date",
        "I like to keep replies short",
    ] {
        assert!(extract::preference(s).is_some(), "{s}");
    }
    // Reactions: the object is a pronoun and no more.
    for s in [
        "I love those",
        "I adore him but he hums all day",
        "I like it a lot",
        "I like that approach",
    ] {
        assert!(extract::preference(s).is_none(), "{s}");
    }
}

#[test]
fn never_with_a_past_verb_tells_of_the_past_and_is_no_rule() {
    words();
    for s in [
        "Never felt so tired in my life",
        "never actually finished the old parser so nothing to migrate",
        "Never opened the new dashboard",
        "never really liked it",
        "never even been to that office",
        "never stopped the old worker",
    ] {
        assert!(extract::restriction(s).is_none(), "{s}");
    }
    // Letters beyond ASCII before "ed" never split a character.
    for s in [
        "never \u{1041}\u{1041}ed the thing again",
        "never ééed it at all",
    ] {
        let _ = extract::restriction(s);
    }
    for s in [
        "never push to the hotfix branch without a review",
        "Never ever deploy on a Friday",
        "never feed the cat from the table",
        "never really trust the cache in tests",
    ] {
        let r = extract::restriction(s).unwrap_or_else(|| panic!("no rule: {s}"));
        assert_eq!(r.kind, NodeKind::Restriction);
    }
}

#[test]
fn a_thing_said_with_its_history_in_parentheses_gets_that_history() {
    words();
    assert_eq!(
        extract::stated_history("Model: quillnet_b2 (was plumenet18), lr 5e-4 (previously 3e-4)."),
        vec![
            ("quillnet_b2".to_owned(), "plumenet18".to_owned()),
            ("lr 5e-4".to_owned(), "3e-4".to_owned()),
        ]
    );
    // A marker of several words; odd case or script before it is no panic.
    assert_eq!(
        extract::stated_history("- Launch: 9 May (Moved from 2 May). (\u{212A}elvin ok)"),
        vec![("9 May".to_owned(), "2 May".to_owned())]
    );
    // A currency sign is part of the value, on either side.
    assert_eq!(
        extract::stated_history("Armbands: €9 (was €11), rides €1."),
        vec![("€9".to_owned(), "€11".to_owned())]
    );
    // A parenthesis that names no history is none.
    assert!(extract::stated_history("the cache (a Redis box) is warm").is_empty());
    let g = session_with_replies(&[
        ("try quillnet b2", "Switched to quillnet_b2."),
        (
            "summary pls",
            "Backbone: quillnet_b2 (was plumenet18), everything else unchanged.",
        ),
        ("thanks", ""),
    ]);
    let live = in_force(&g);
    let new = g
        .nodes()
        .into_iter()
        .find(|n| n.kind == NodeKind::Decision && n.label.contains("quillnet"))
        .unwrap_or_else(|| panic!("{live:?}"));
    assert!(
        g.supersedes(&new.id)
            .iter()
            .any(|o| o.label == "Use plumenet18"),
        "{live:?}"
    );
}

#[test]
fn a_value_changed_after_the_reply_stated_it_keeps_the_reply_value_as_history() {
    words();
    for change in ["make it 60 KB", "the image budget should be 60 KB now"] {
        let g = session_with_replies(&[
            ("what's the image budget?", "The image budget is 90 KB."),
            (change, ""),
        ]);
        let new = g
            .nodes()
            .into_iter()
            .find(|n| n.kind == NodeKind::Fact && n.label == "image budget: 60 KB")
            .unwrap_or_else(|| panic!("{change}: {:?}", in_force_of(&g, NodeKind::Fact)));
        assert!(
            g.supersedes(&new.id)
                .iter()
                .any(|o| o.label == "image budget: 90 KB"),
            "{change}"
        );
    }
    // A value said without a change is no update of the reply's.
    let g = session_with_replies(&[
        ("what's the image budget?", "The image budget is 90 KB."),
        ("the hero banner is 60 KB", ""),
    ]);
    assert!(
        !in_force_of(&g, NodeKind::Fact)
            .iter()
            .any(|f| f == "image budget: 60 KB")
    );
}

#[test]
fn an_option_the_reply_named_is_picked_by_an_endorsement() {
    words();
    let options = "Two ways to go:\n\n1. **Quick double buffer**: swap two arrays each frame.\n2. **Ring journal**: append and trim.\n\nEither works.";
    // An acronym of the option, "for now" after it.
    let d = extract::endorsed_choice("qdb for now. the frame budget is tight", options, None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.label, "Use qdb (over Ring journal)", "{d:?}");
    // "X sounds good", past an opening "ok".
    let d = extract::endorsed_choice("ok ring journal sounds good", options, None)
        .unwrap_or_else(|| panic!("none"));
    assert!(d.label.starts_with("Use ring journal"), "{d:?}");
    // "just do X for Y": the option and what it is for.
    let d = extract::endorsed_choice("just do ring journal for every frame", options, None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("ring journal"), "{d:?}");
    // Not an option the reply named, a question, a refusal, a pronoun.
    for (s, reply) in [
        ("lunch sounds good", options),
        ("qdb for now?", options),
        ("let's not do ring journal for now", options),
        ("just do it", options),
        ("qdb for now", "Done, the tests pass."),
        // Lowercasing changes these byte lengths: no panic, no pick.
        ("İİİ FOR NOW", options),
        ("JUST DO İstanbul ring", options),
    ] {
        assert!(
            extract::endorsed_choice(s, reply, None).is_none(),
            "{s:?} picked something"
        );
    }
    // The option passed over, taken later, replaces the first pick.
    let g = session_with_replies(&[
        ("frames. what are the options", options),
        (
            "qdb for now",
            "OK, the quick double buffer; a ring journal can come later if frames drop.",
        ),
        (
            "ugh, the artist hates it. just do ring journal for every frame",
            "Done.",
        ),
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("ring journal")), "{live:?}");
    assert!(!live.iter().any(|l| l.contains("qdb")), "{live:?}");
}

#[test]
fn versions_and_settings_are_facts_of_their_name() {
    words();
    let cases: &[(&str, &[&str])] = &[
        (
            "it's on Quokka 6.1.7 right now, with gemla 3.0.6.",
            &["Quokka 6.1.7", "gemla 3.0.6"],
        ),
        ("we're on zentrafs 14 in prod.", &["zentrafs 14"]),
        (
            "Yeah no, actually keep minLevel 26, we can't strand them.",
            &["minLevel 26"],
        ),
        ("installed brisket@18.2.0 last night.", &["brisket@18.2.0"]),
        (
            "Sam added MAX_POOL_THREADS=8 to the worker env.",
            &["MAX_POOL_THREADS=8"],
        ),
        (
            "the Vexo Stack 3.2 line is what we target.",
            &["Vexo Stack 3.2"],
        ),
        ("upgrade plinth version 2.4 first.", &["plinth version 2.4"]),
        // One word ending its clause after a setting is no command; nor is
        // the next setting; a dotted key and a path are settings too.
        (
            "so QUILL_PORT=7311 everywhere: the image, the probe, the docs.",
            &["QUILL_PORT=7311"],
        ),
        (
            "set A_MODE=fast B_MODE=slow for now.",
            &["A_MODE=fast", "B_MODE=slow"],
        ),
        (
            "I set brine.pool.workers=12 in prod.",
            &["brine.pool.workers=12"],
        ),
        (
            "point it at DUSK_MODEL=/srv/models/dusk_v4.bin and retry.",
            &["DUSK_MODEL=/srv/models/dusk_v4.bin"],
        ),
        ("CI runs with GLINT=1 bin/lint in the image.", &[]),
        // Not versions: a count, a measure, a price, a year, a date, a
        // decimal, a variable set for a command, a question.
        ("zentrafs 14 connections is the cap.", &[]),
        ("the crate weighs 2.5 kg.", &[]),
        ("it costs 4.50 a month.", &[]),
        ("Q3 2026 is the goal.", &[]),
        ("the review is on March 24.", &[]),
        ("the ratio is 0.8 today.", &[]),
        ("run HEADLESS=1 make check.", &[]),
        ("are we on Quokka 6.1?", &[]),
    ];
    for (s, want) in cases {
        let got: Vec<String> = extract::versions(s).into_iter().map(|r| r.label).collect();
        assert_eq!(&got, want, "{s}");
    }
    // The label reads back as its subject and value.
    assert_eq!(
        extract::fact_parts("Quokka 6.1.7"),
        Some(("Quokka", "6.1.7"))
    );
    assert_eq!(
        extract::fact_parts("plinth version 2.4"),
        Some(("plinth", "2.4"))
    );
    assert_eq!(
        extract::fact_parts("MAX_POOL_THREADS=8"),
        Some(("MAX_POOL_THREADS", "8"))
    );
    assert_eq!(
        extract::fact_parts("pool size: 12"),
        Some(("pool size", "12"))
    );
    assert_eq!(extract::fact_parts("Use per-device tokens"), None);
}

#[test]
fn a_label_with_a_colon_names_its_value() {
    words();
    // Bold marks are no part of the text; "2**10" is kept.
    assert_eq!(
        extract::sentences("**Uptake target**: 80% of households. use 2**10 buckets."),
        ["Uptake target: 80% of households.", "use 2**10 buckets."]
    );
    let f = extract::fact("Evening attendance: 80% of households joining four evenings.")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(f.label, "evening attendance: 80%");
    // A difference is no value of its subject.
    for s in [
        "Over the cap by £90 before the tiles.",
        "we're behind plan by 2 weeks.",
    ] {
        assert!(extract::fact(s).is_none(), "{s}: {:?}", extract::fact(s));
    }
    // A note's opener is no subject.
    for s in ["Note: 5 of them failed.", "Update: 3 failures today."] {
        assert!(extract::fact(s).is_none(), "{s}: {:?}", extract::fact(s));
    }
}

#[test]
fn a_value_the_reply_stated_and_the_user_turns_down_gets_the_new_one() {
    let turns = [
        (
            "draft the outcomes for the bid.",
            "**Uptake target**: 80% of households joining four or more evenings.",
        ),
        (
            "80% is far more than our members manage. call it 55%.",
            "55% it is.",
        ),
    ];
    let g = session_with_replies(&turns);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.contains(&"uptake target: 55%".to_owned()),
        "{facts:?}"
    );
    let n = g
        .nodes()
        .into_iter()
        .find(|n| n.label == "uptake target: 55%")
        .unwrap_or_else(|| panic!("{facts:?}"));
    assert!(
        g.supersedes(&n.id)
            .iter()
            .any(|o| o.label == "uptake target: 80%"),
        "{facts:?}"
    );
    // A value the turn says without naming the reply's: no counter to it.
    let g = session_with_replies(&[turns[0], ("Let's say 55%.", "ok.")]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        !facts.iter().any(|f| f.starts_with("uptake target")),
        "{facts:?}"
    );
}

#[test]
fn a_value_said_bare_is_of_the_subject_the_reply_names() {
    // (The reply reaches the probe with the next prompt, as a hook's does.)
    let g = session_with_replies(&[
        (
            "ok so 45 minutes, tops.",
            "Noted. The standup limit is 45 minutes.",
        ),
        ("thanks.", ""),
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.contains(&"standup limit: 45 minutes".to_owned()),
        "{facts:?}"
    );
    // The reply's own denial stays the value's history.
    let g = session_with_replies(&[
        (
            "So it's 6 seats on the kiln course, not 8.",
            "The kiln course is 6 seats, not 8: six wheels and a demo wheel.",
        ),
        ("thanks.", ""),
    ]);
    let n = g
        .nodes()
        .into_iter()
        .find(|n| n.label == "kiln course: 6 seats")
        .unwrap_or_else(|| panic!("{:?}", in_force_of(&g, NodeKind::Fact)));
    assert!(
        g.supersedes(&n.id)
            .iter()
            .any(|o| o.label == "kiln course: 8 seats"),
        "{:?}",
        g.nodes()
            .iter()
            .map(|n| n.label.clone())
            .collect::<Vec<_>>()
    );
    // A reply that names another number names nothing of the user's.
    let g = session_with_replies(&[
        (
            "ok so 45 minutes, tops.",
            "Noted. The standup limit is 30 minutes.",
        ),
        ("thanks.", ""),
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(!facts.iter().any(|f| f.contains("45 minutes")), "{facts:?}");
}

#[test]
fn a_pasted_env_file_is_one_setting_a_line() {
    let text = "here's the env:\n```\n# service\nQUILL_PORT=7311\nexport QUILL_MODE=\"lazy\"\nquill.cache.dir=/var/cache/quill\n```\nthat's it.";
    let got: Vec<String> = extract::fenced_settings(text)
        .into_iter()
        .map(|r| r.label)
        .collect();
    assert_eq!(
        got,
        [
            "QUILL_PORT=7311",
            "QUILL_MODE=lazy",
            "quill.cache.dir=/var/cache/quill"
        ]
    );
    // A log, a command or code in the block: no settings at all.
    for text in [
        "```\n08:14:02: pool up quill_build=3.1.9 open_slots=0\n```",
        "```\nQUILL_PORT=7311 make run\n```",
        "```\nQUILL_PORT=7311\nprint(port)\n```",
        "QUILL_PORT=7311 said outside any block",
    ] {
        assert!(extract::fenced_settings(text).is_empty(), "{text}");
    }
    // A long file gives a bounded number.
    let long: String = (0..40).map(|i| format!("KEY_{i}=v{i}\n")).collect();
    assert_eq!(
        extract::fenced_settings(&format!("```\n{long}```")).len(),
        16
    );
    // Through the probe: the file's value, then the one said later in prose.
    let g = session(&[
        "current env:\n```\nQUILL_PORT=7311\nQUILL_MODE=lazy\n```",
        "so QUILL_PORT=7312 everywhere: image, probe, docs.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(facts.contains(&"QUILL_PORT=7312".to_owned()), "{facts:?}");
    assert!(facts.contains(&"QUILL_MODE=lazy".to_owned()), "{facts:?}");
    assert!(!facts.iter().any(|f| f.contains("7311")), "{facts:?}");
}

#[test]
fn a_new_version_of_a_name_supersedes_the_old_one() {
    // "zentrafs" is a version's name because the word list does not know it.
    words();
    let g = session(&[
        "we're on zentrafs 14 for now.",
        "ok, the staging box runs zentrafs 16 since this morning.",
        "And the minLevel thing: Dana wants to bump minLevel to 28.",
        "actually keep minLevel 26, we can't strand those folks.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    for (new, old) in [("zentrafs 16", "zentrafs 14"), ("minLevel 26", "28")] {
        let n = g
            .nodes()
            .into_iter()
            .find(|n| n.kind == NodeKind::Fact && n.label == new)
            .unwrap_or_else(|| panic!("{new} not held: {facts:?}"));
        assert!(
            g.supersedes(&n.id).iter().any(|o| o.label.contains(old)),
            "{new} should supersede {old}: {facts:?}"
        );
        assert!(facts.contains(&new.to_owned()), "{facts:?}");
        assert!(
            !facts.iter().any(|f| f.contains(old)),
            "{old} still in force: {facts:?}"
        );
    }
    // A decision naming a version supersedes the version held before.
    let g = session(&[
        "the app is on Quokka 4.2 right now.",
        "let's go to Quokka 5.1 as part of this.",
    ]);
    assert!(
        in_force_of(&g, NodeKind::Fact).is_empty(),
        "{:?}",
        in_force_of(&g, NodeKind::Fact)
    );
    let d = g
        .nodes()
        .into_iter()
        .find(|n| n.kind == NodeKind::Decision && n.label.contains("Quokka 5.1"))
        .unwrap_or_else(|| panic!("{:?}", in_force(&g)));
    assert!(g.supersedes(&d.id).iter().any(|o| o.label == "Quokka 4.2"));
}

#[test]
fn a_thing_later_said_to_act_as_a_person_is_a_person() {
    words();
    // First a bare name (a thing), then doing what people do: no role said.
    let g = session(&[
        "Brannock is on call tonight.",
        "not our call, Brannock decides.",
    ]);
    let n = g
        .nodes()
        .into_iter()
        .find(|n| n.label == "Brannock")
        .unwrap_or_else(|| panic!("no node: {:?}", g.nodes()));
    assert_eq!(n.kind, NodeKind::Person, "{n:?}");
    assert_eq!(n.domain, rollgraph_engine::graph::Domain::Relationship);
    // A thing never said to act stays a thing.
    let g = session(&["Brannock is on call tonight.", "Brannock looks fine now."]);
    assert!(
        g.nodes()
            .into_iter()
            .all(|n| n.label != "Brannock" || n.kind != NodeKind::Person),
        "{:?}",
        g.nodes()
    );
}

#[test]
fn a_pronoun_choice_and_a_complaint_said_sentences_before_it() {
    words();
    // "we're going with them": the thing the sentence before named.
    let g = session(&[
        "Harrowby & Daughters, family firm, £540 for saturday with two guys and a van. we're going with them.",
    ]);
    assert!(
        in_force(&g)
            .iter()
            .any(|l| l.contains("Harrowby & Daughters")),
        "{:?}",
        in_force(&g)
    );
    // A refusal of a pronoun decides nothing, whatever came before.
    let g = session(&["we looked at Quillmark for the docs. let's not use it."]);
    assert!(in_force(&g).is_empty(), "{:?}", in_force(&g));
    // "'X' is too close to … . And … . So we're going back to Y": X, the
    // choice in force the earlier sentence opens with, is what Y replaces.
    let g = session(&[
        "Working title is 'Pages Together'.",
        "Odile suggests 'Read Along Brackley' then. not sold, but let's go with it for now.",
        "let's use Pellworth.",
        "'Read Along Brackley' is too close to another project they fund. And the trustees never liked it. So we're going back to Pages Together.",
    ]);
    let live = in_force(&g);
    assert!(
        live.iter().any(|l| l.contains("Pages Together")),
        "{live:?}"
    );
    assert!(!live.iter().any(|l| l.contains("Brackley")), "{live:?}");
    // The choice made since, on another topic, stays.
    assert!(live.iter().any(|l| l.contains("Pellworth")), "{live:?}");
}

#[test]
fn a_value_said_of_a_pronoun_takes_the_quantity_its_unit_measures() {
    words();
    for (s, value, denied) in [
        ("he's $30 per lesson, on tuesdays", "$30 per lesson", None),
        ("vet says she's fine but it's 9kg not 7", "9kg", Some("7kg")),
        (
            "and she says its €15/month not 11",
            "€15/month",
            Some("€11/month"),
        ),
        ("that is 4 per seat", "4 per seat", None),
        ("it’s 40 km, not 25 km", "40 km", Some("25 km")),
    ] {
        let (v, d) = extract::pronoun_value(s).unwrap_or_else(|| panic!("{s}: none"));
        assert_eq!((v.as_str(), d.as_deref()), (value, denied), "{s}");
    }
    // A day is an event's, a negated copula states nothing, a question asks.
    for s in [
        "it's the 22nd not the 15th",
        "it isn't 12kg",
        "is it 12kg?",
        "he's the trainer",
    ] {
        assert!(extract::pronoun_value(s).is_none(), "{s}");
    }
    assert_eq!(extract::quantity_of("$30 per lesson"), Some("price"));
    assert_eq!(extract::quantity_of("9kg"), Some("weight"));
    assert_eq!(extract::quantity_of("20 minutes"), None);
    // No fact of its own before: the quantity names it, the denied value is
    // its history.
    let g = session(&[
        "Quillon is the new tutor for the twins.",
        "he's $30 per lesson, tuesdays at 4",
        "ok correction, he texted, it's $35 per lesson not 30",
    ]);
    let new = g
        .nodes()
        .into_iter()
        .find(|n| n.kind == NodeKind::Fact && n.label == "price: $35 per lesson")
        .unwrap_or_else(|| panic!("{:?}", in_force_of(&g, NodeKind::Fact)));
    assert!(
        g.supersedes(&new.id)
            .iter()
            .any(|o| o.label == "price: $30 per lesson"),
        "{:?}",
        in_force_of(&g, NodeKind::Fact)
    );
    // A fact in force of that value takes the new one under its own subject.
    let g = session(&[
        "the subscription is €11/month",
        "turns out its €15/month not 11",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.iter().any(|f| f == "subscription: €15/month"),
        "{facts:?}"
    );
    assert!(!facts.iter().any(|f| f.ends_with("€11/month")), "{facts:?}");
}

#[test]
fn moving_something_to_a_thing_is_a_choice_and_to_a_day_is_not() {
    words();
    let d = extract::decision("Let's move the archives to quorvex.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("quorvex"), "{d:?}");
    assert!(d.label.contains("for the archives"), "{d:?}");
    for s in [
        "let's move the review to the 12th",
        "let's move the standup to friday",
        "let's move on",
    ] {
        let d = extract::decision(s, None);
        assert!(d.is_none(), "{s}: {d:?}");
    }
}

#[test]
fn keeping_what_a_change_moved_away_from_turns_the_change_down() {
    words();
    // The kept thing was never a decision; the change it turns down was.
    let g = session(&[
        "For the archives, the set is 3 GB as Brindlefile and loading is slow.",
        "Let's move the archives to quorvex.",
        "The nightly job needs a retry too.",
        "Actually let's keep Brindlefile.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().any(|l| l.contains("Brindlefile")), "{live:?}");
    assert!(
        !live.iter().any(|l| l.starts_with("Use quorvex")),
        "{live:?}"
    );
    // A common noun kept after "the" counts the same way.
    let g = session(&[
        "The party is at the hall, the room limit is 40 people.",
        "The upstairs room at Pellory Yard is brighter, we'll move it to Pellory Yard.",
        "ok keep the hall.",
    ]);
    let live = in_force(&g);
    assert!(
        !live.iter().any(|l| l.starts_with("Use Pellory")),
        "{live:?}"
    );
    // Without a change to turn down, "keep X" decides nothing.
    let g = session(&[
        "We use Brindlefile for the archives.",
        "Let's use quorvex for the search index.",
        "ok keep the tests green",
    ]);
    let live = in_force(&g);
    assert_in_force(&g, "Use quorvex");
    assert!(!live.iter().any(|l| l.contains("tests")), "{live:?}");
}

#[test]
fn a_switch_that_names_nothing_does_not_replace_a_choice_over_a_common_word() {
    words();
    // "free" is said again, but the venue is no choice about signups.
    let g = session(&[
        "Signups: we'll use Trellisform, it's cheap and it's free for free meetups.",
        "The café lends its upstairs for free if we buy coffee. Let's move it to Vantle Hall.",
    ]);
    assert_in_force(&g, "Use Trellisform");
}

#[test]
fn typographic_and_missing_apostrophes_read_as_plain_ones() {
    words();
    assert_eq!(
        extract::normalize_typing("Let’s use Brindlefile, we don’t need ‘quotes’", false),
        "Let's use Brindlefile, we don't need ‘quotes’"
    );
    assert_eq!(
        extract::normalize_typing("Dont use it, im off friday; its fine, we were late", true),
        "Don't use it, i'm off friday; its fine, we were late"
    );
    // An assistant's text keeps its bare words: only what a person typed is
    // read for missing apostrophes.
    assert_eq!(extract::normalize_typing("dont", false), "dont");
    // Code, paths and identifiers keep what was typed.
    assert_eq!(
        extract::normalize_typing("see im.rs, `dont` and dont_x (dont)", true),
        "see im.rs, `dont` and dont_x (don't)"
    );
    // The probe reads a curly apostrophe as the cue lists spell it.
    let g = session(&["let’s use Brindlefile for the archives."]);
    assert_in_force(&g, "Use Brindlefile");
    // A refusal typed without its apostrophe is still a refusal.
    for s in [
        "dont switch to Brindlefile.",
        "we wont switch to Brindlefile",
    ] {
        let g = session(&[s]);
        assert!(in_force(&g).is_empty(), "{s}: {:?}", in_force(&g));
    }
}

#[test]
fn keeping_a_choice_again_turns_down_what_was_tried_beside_it() {
    words();
    let g = session(&[
        "Let's use Quillpress for the invoice PDFs.",
        "Hmm Quillpress is making the docker image 1.1GB.",
        "let's try Vellumjs then, a plainer layout is fine by me",
        "actually let's keep Quillpress.",
    ]);
    let live = in_force(&g);
    assert_in_force(&g, "Use Quillpress");
    assert!(!live.iter().any(|l| l.contains("Vellumjs")), "{live:?}");
}

#[test]
fn a_thing_that_is_out_is_dropped_and_a_person_away_is_not() {
    words();
    // "X's out" drops X as "X is out" does; a choice in the clause before
    // replaces it.
    let d = extract::decision("ok, Grivlet's out.", None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.moves, DecisionMove::Drop, "{d:?}");
    assert_eq!(d.replaced.as_deref(), Some("Grivlet"), "{d:?}");
    let d = extract::decision("so back to Kelvane for the queue, Tarnish's out.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("Kelvane"), "{d:?}");
    assert_eq!(d.replaced.as_deref(), Some("Tarnish"), "{d:?}");
    // Someone out sick or away until a day is no choice dropped.
    for s in ["Oriel's out sick today.", "Oriel is out until Monday."] {
        assert!(
            extract::decision(s, None).is_none_or(|d| d.moves != DecisionMove::Drop),
            "{s}"
        );
    }
}

#[test]
fn a_choice_named_as_an_owner_is_not_the_one_replaced() {
    // "Quillq's lines" is about what Quillq does: switching the logger
    // leaves the job queue in force.
    let g = session(&[
        "let's use Quillq for the jobs.",
        "the handler prints Quillq's output twice. ok then, switching to Strucko.",
    ]);
    let live = in_force(&g);
    assert_in_force(&g, "Use Quillq");
    assert_in_force(&g, "Use Strucko");
    assert!(
        !live.iter().any(|l| l.contains("instead of Quillq")),
        "{live:?}"
    );
}

#[test]
fn a_thing_that_is_out_is_no_person() {
    words();
    for s in ["ok Grivlet is out.", "fine, Tessaplot is off the table"] {
        let got = kinds(s);
        assert!(
            !got.iter().any(|(_, k)| *k == NodeKind::Person),
            "{s}: {got:?}"
        );
    }
}

#[test]
fn a_day_the_turn_gives_up_is_the_one_a_moved_date_replaces() {
    words();
    assert_eq!(
        extract::days_said("Oriel is away on the 10th, so June 17 it is."),
        [(17, Some(6)), (10, None)]
    );
    assert_eq!(extract::date_of("Thursday June 10"), Some((10, Some(6))));
    // Typed in lowercase: a month right before its day; a modal is none.
    assert_eq!(extract::date_of("thursday oct 10"), Some((10, Some(10))));
    assert!(extract::date_of("we may 9 of them").is_none_or(|(_, m)| m.is_none()));
    // A bare number is a count, not a day.
    assert!(extract::days_said("we need 10 chairs").is_empty());
    // The old day is named in the turn, not in the sentence that moves
    // the event, and under another name for the event.
    let g = session(&[
        "the launch party is on Thursday June 10.",
        "Oriel is away on the 10th, it turns out. Right, the celebration moved to June 17.",
    ]);
    assert_fact_replaced(&g, "June 17", "June 10");
    // A day the same turn states for something else is no old day.
    let g = session(&[
        "the design review is set for June 3. the release moved to June 24.",
        "the release is June 24 and the design review June 3.",
    ]);
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(live.iter().any(|l| l.contains("June 3")), "{live:?}");
}

#[test]
fn a_bare_value_updates_the_fact_of_its_unit_said_just_before() {
    words();
    let g = session(&[
        "the read timeout is 30 seconds.",
        "the retry delay is 20 seconds.",
        "too short, bump it to 45 seconds.",
    ]);
    assert_fact_replaced(&g, "retry delay: 45 seconds", "retry delay: 20 seconds");
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(
        live.iter().any(|l| l == "read timeout: 30 seconds"),
        "{live:?}"
    );
    // Times of day are values of one kind, however written.
    assert_eq!(extract::value_unit("6:30 pm").as_deref(), Some("time"));
    assert_eq!(extract::value_unit("7am").as_deref(), Some("time"));
    assert_eq!(extract::value_unit("19:00").as_deref(), Some("time"));
    assert_eq!(
        extract::fact("The standup is at 9 am on Mondays.").map(|f| f.label),
        Some("standup: 9 am".into())
    );
}

#[test]
fn a_chosen_pronoun_stands_for_the_thing_a_sentence_before_named() {
    words();
    let g = session(&[
        "good news, Quillby, a small local outfit, dropped by this morning. £610 all in, with insurance. we're going with them.",
    ]);
    assert_in_force(&g, "Use Quillby");
    let d = g
        .nodes()
        .into_iter()
        .find(|n| n.label.starts_with("Use Quillby"))
        .unwrap_or_else(|| panic!("no decision"));
    // The evidence is what was said, not the rewritten sentence.
    assert!(
        d.evidence
            .iter()
            .any(|e| e.text.contains("going with them")),
        "{:?}",
        d.evidence
    );
    // A person picked up is no choice.
    let g = session(&[
        "Tamsin Okoro, our cat sitter, is brilliant. the vet is on friday. and we pick her up sunday afternoon.",
    ]);
    assert!(in_force(&g).is_empty(), "{:?}", in_force(&g));
}

#[test]
fn a_value_of_another_measure_is_another_fact_on_the_subject() {
    words();
    let g = session(&[
        "The launch is 12 May.",
        "After launch keep the old site up for 30 days.",
        "The launch is 14 May.",
    ]);
    // The days after the launch are no new day for it …
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(live.iter().any(|l| l == "launch: 30 days"), "{live:?}");
    // … and the day it moves to replaces the day, not the days.
    assert_fact_replaced(&g, "launch: 14 May", "launch: 12 May");
    // A count of one noun still updates a count of another.
    let g = session(&["the team is 5 people.", "the team is 7 engineers now."]);
    assert_fact_replaced(&g, "team: 7 engineers", "team: 5 people");
}

#[test]
fn lets_typed_bare_opens_a_choice_but_stays_a_verb_after_a_subject() {
    words();
    let n = |s: &str| extract::normalize_typing(s, true);
    assert_eq!(n("ok lets try quillby then"), "ok let's try quillby then");
    assert_eq!(n("Lets keep it simple."), "Let's keep it simple.");
    assert_eq!(
        n("fine, lets go with the small pool"),
        "fine, let's go with the small pool"
    );
    // The verb: after a subject, or before its object.
    assert_eq!(n("it lets you pick a port"), "it lets you pick a port");
    assert_eq!(n("this lets the job retry"), "this lets the job retry");
    assert_eq!(n("lets us skip the cache"), "lets us skip the cache");
    // Code is left as typed.
    assert_eq!(n("run `lets try` again"), "run `lets try` again");
    let g = session(&["lets try Quillby for the queue, we can live with the docs for now"]);
    assert_in_force(&g, "Use Quillby");
}

#[test]
fn someone_elses_view_is_no_choice_and_a_colon_after_a_lead_is_a_comma() {
    words();
    let d = |s: &str| extract::decision(s, None).map(|d| d.label);
    // "so:" leads a change of mind as "so," does.
    assert_eq!(
        d("so: forget the nightjar plan, quillby will do.").as_deref(),
        Some("Use quillby instead of nightjar")
    );
    assert_eq!(
        d("ok: keep the old poller.").as_deref(),
        Some("Use the old poller")
    );
    // What someone else reckons drops or brings back nothing …
    assert_eq!(d("priya reckons nightjar is overkill here."), None);
    assert_eq!(d("priya reckons we'd better go back to Nightjar."), None);
    // … what the speaker thinks still does.
    assert_eq!(
        d("I think we'll go back to Nightjar.").as_deref(),
        Some("Use Nightjar")
    );
    assert_eq!(
        d("the hourly run is overkill").as_deref(),
        Some("Drop hourly run")
    );
}

#[test]
fn a_sum_per_period_is_another_measure_than_a_sum() {
    words();
    assert_eq!(extract::value_unit("$40/mo").as_deref(), Some("$/mo"));
    assert_eq!(extract::value_unit("€42").as_deref(), Some("€"));
    let g = session(&[
        "the landlord wants a $600 deposit before signing.",
        "the insurer says $85/mo for contents, with a 600 excess.",
    ]);
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(live.iter().any(|l| l == "deposit: $600"), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|l| l.ends_with("$85/mo") && l.starts_with("deposit")),
        "{live:?}"
    );
}

#[test]
fn each_item_of_a_list_of_values_is_a_fact_of_its_own() {
    words();
    let labels = |s: &str| -> Vec<String> {
        extract::fact(s)
            .into_iter()
            .chain(extract::later_facts(s))
            .map(|r| r.label)
            .collect()
    };
    assert_eq!(
        labels("hall rental £480 for the term, catering £900, snacks £3 a head."),
        ["hall rental: £480", "catering: £900", "snacks: £3 a head"]
    );
    // A later value linked by its own verb; the one denied is no fact.
    assert_eq!(
        labels("The venue fee is £300, and the ticket price is now £12, not £10."),
        ["venue fee: £300", "ticket price: £12"]
    );
    // Bounds, comparisons and versions are no items.
    for s in [
        "the queue grew from 3 to 5 workers.",
        "Thornbury quoted £9.20 a sack versus £12 elsewhere.",
        "runtime 3.12, then we see.",
    ] {
        assert!(
            extract::later_facts(s).is_empty(),
            "{s}: {:?}",
            extract::later_facts(s)
        );
    }
    assert!(
        extract::fact("runtime 3.12, then we see.").is_none(),
        "a version is no listed value"
    );
    // Items without commas: a one-word item right after another's value.
    assert_eq!(
        labels("workers on m5.large, floor 4 ceiling 12"),
        ["floor: 4", "ceiling: 12"]
    );
    // A count of things is no item; nor is a unit of the value before.
    assert!(labels("we have 2 cats 3 dogs").is_empty());
    assert_eq!(
        labels("tutor 0.5 FTE £9,000, rent £800"),
        ["tutor: 0.5 FTE", "rent: £800"]
    );
    // A comma after a value ends what it is of: no head noun past it.
    assert_eq!(
        labels("scale out on cpu 85%, floor 2 cap 12"),
        ["floor: 2", "cap: 12"]
    );
    assert_eq!(labels("scale out on cpu 85%, max 12"), ["max: 12"]);
    // In a session: the item says its own value, and the later one updates it.
    let g = session(&[
        "hall rental £480 for the term, catering £900.",
        "catering goes up to £950.",
    ]);
    assert_fact_replaced(&g, "catering: £950", "catering: £900");
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(live.iter().any(|l| l == "hall rental: £480"), "{live:?}");
}

#[test]
fn a_value_said_again_as_the_sentences_own_is_not_replaced() {
    words();
    let g = session(&[
        "the grant cap is £400.",
        "our request is £400 in all, and Ruth trimmed £50 off travel.",
    ]);
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(live.iter().any(|l| l == "grant cap: £400"), "{live:?}");
}

#[test]
fn a_reply_that_corrects_a_count_keeps_it_beside_a_price() {
    words();
    let g = session_with_replies(&[
        ("cookery class £180, twelve weeks.", "Noted."),
        (
            "hmm, only six hobs work.",
            "Then the cookery class is 6 pupils, not 8: one pupil per hob.",
        ),
        ("ok.", ""),
    ]);
    let live = in_force_of(&g, NodeKind::Fact);
    assert!(live.iter().any(|l| l == "cookery class: £180"), "{live:?}");
    assert!(
        live.iter().any(|l| l == "cookery class: 6 pupils"),
        "{live:?}"
    );
}

#[test]
fn an_option_picked_by_its_label_or_place_is_a_choice() {
    words();
    let offer = "Two ways to cache the tiles:\na) Quellbox: in memory, simple.\nb) Dravon (a shared store): survives restarts.\n\n(b) is what most teams pick.";
    let pick = |user: &str, reply: &str| -> Vec<String> {
        let g = session_with_replies(&[("how should we cache the tiles?", reply), (user, "")]);
        in_force(&g)
    };
    assert_eq!(pick("b for now", offer), ["Use Dravon"]);
    assert_eq!(pick("ok, option a.", offer), ["Use Quellbox"]);
    assert_eq!(pick("second option, thanks", offer), ["Use Dravon"]);
    // Markers inside one line, and a number.
    assert_eq!(
        pick(
            "2",
            "Options: (1) Quellbox in memory; (2) Dravon, shared; (3) no cache."
        ),
        ["Use Dravon"]
    );
    // A letter that is a word, a question list, or no list: nothing.
    assert!(pick("a quick fix would do", offer).is_empty());
    assert!(pick("1. page numbers", "Two questions:\n1. Paging: page numbers or endless scroll?\n2. Review: who looks at it?").is_empty());
    assert!(pick("b", "Sounds good, done.").is_empty());
    // A multi-byte character where "option " would end is no panic.
    assert!(pick("b", "Optio€ a) x\nOptio€ b) y").is_empty());
    // A later pick from the same list replaces the earlier one.
    let g = session_with_replies(&[
        ("how should we cache the tiles?", offer),
        ("a", "Done: Quellbox in memory."),
        ("restarts lose everything. options again?", offer),
        ("b then", ""),
    ]);
    assert_eq!(in_force(&g), ["Use Dravon"]);
    assert!(
        g.nodes()
            .iter()
            .any(|n| n.label == "Use Quellbox" && g.superseded_by(&n.id).is_some()),
        "{:?}",
        g.nodes().iter().map(|n| &n.label).collect::<Vec<_>>()
    );
}

#[test]
fn verbs_asides_and_owned_things_are_no_lowercase_people() {
    words();
    // A word taking a determiner after it is the verb, not the name.
    assert!(people("my nephew painted a fox for art class.").is_empty());
    assert_eq!(people("my nephew tobiah is staying over."), ["tobiah"]);
    // The role after an apposition is said of its head, not its last word.
    assert!(
        !people("Oda, one of our allotment regulars, is a nurse.").contains(&"regulars".to_owned())
    );
    // An aside's last word before "says", and a thing someone owns.
    assert!(
        !people("Ilka Vornholm (steward, owns the intake spreadsheets) says they sort by week.")
            .contains(&"spreadsheets".to_owned())
    );
    assert!(people("Vesna's zorbctl wants a token first.").is_empty());
}

#[test]
fn a_name_the_word_list_knows_is_a_person_before_what_people_do() {
    words();
    // Names are in the frequency list too; a rare one opening its clause
    // before a verb of what people do is a name.
    assert_eq!(people("otto wants the export by friday."), ["otto"]);
    assert_eq!(
        people("fine by me, and mabel says the van is booked."),
        ["mabel"]
    );
    // Not a verb form, a typed-fast pronoun, or the plural of a role.
    assert!(people("the rack is loose, shaken says it all.").is_empty());
    assert!(people("the rack is loose, bolted says the note.").is_empty());
    assert!(people("shes told the whole studio already.").is_empty());
    assert!(people("the neighbours told us about the skip.").is_empty());
    assert!(people("ok, neighbours told us about the skip.").is_empty());
    // A common word is not a name, wherever it stands.
    assert!(people("hope says a lot about the team.").is_empty());
    // A person noun is the person's role, not their name.
    assert!(people("rang the garage, bloke said it's fine.").is_empty());
}

#[test]
fn a_sentence_with_its_own_subject_after_a_drop_is_no_named_replacement() {
    // After a drop, a verbless "Y for the uploads" names the replacement;
    // "Let's go back to …" is a clause of its own, never a thing chosen.
    let g = session(&[
        "let's add the Zephyrq library for the uploads.",
        "ugh, the Zephyrq idea was a mistake. Let's return to what we used and write a plain loop with a backoff.",
        "thanks.",
    ]);
    for n in g.nodes() {
        assert!(!n.label.to_lowercase().contains("let's"), "{}", n.label);
        for e in &n.evidence {
            assert!(!e.text.starts_with("let's use"), "{}: {}", n.label, e.text);
        }
    }
    assert!(
        !in_force(&g).iter().any(|l| l.starts_with("Use Zephyrq")),
        "{:?}",
        in_force(&g)
    );
    // A reaction after the drop names nothing either.
    let g = session(&[
        "let's add Zephyrq for the uploads.",
        "the Zephyrq idea was a mistake. Sorry for the churn.",
        "thanks.",
    ]);
    let live = in_force(&g);
    assert!(live.iter().all(|l| !l.contains("Sorry")), "{live:?}");
    assert!(
        live.iter().any(|l| l.starts_with("Drop Zephyrq")),
        "{live:?}"
    );
}

#[test]
fn a_switch_said_as_an_aside_replaces_only_what_it_names() {
    words();
    let run = |turns: &[(&str, &str)]| in_force(&session_with_turn_replies(turns));
    let mut turns = vec![
        (
            "what runs the e2e suite?",
            "There's a target for it: `make test-e2e`.",
        ),
        ("Great, make test-e2e it is.", "Noted."),
        (
            "I'm switching to herbal tea for the afternoon, btw, far too wired. So how did the e2e tests do on the retry change?",
            "`make test-e2e` passes, the new retry test too.",
        ),
        ("thanks.", "ok"),
    ];
    let live = run(&turns);
    assert!(live.iter().any(|l| l == "Use make test-e2e"), "{live:?}");
    assert!(live.iter().all(|l| !l.contains("instead of")), "{live:?}");
    // Without the aside, the same switch replaces the choice the turn
    // talks about.
    turns[2].0 = "I'm switching to herbal tea for the afternoon, far too wired. So how did the e2e tests do on the retry change?";
    let live = run(&turns);
    assert!(!live.iter().any(|l| l == "Use make test-e2e"), "{live:?}");
}

#[test]
fn a_reply_that_says_up_from_gives_the_new_value_its_history() {
    words();
    // "up from £10" gives the clause before it its old value; the "to" of
    // "still up to 6 …" is another clause's (never "groups: 6 kids (was
    // £10)").
    let (new, old) = extract::value_change(
        "Changed: lessons are £12 a lesson, up from £10, groups still up to 6 kids.",
    )
    .unwrap_or_else(|| panic!("no change"));
    assert_eq!(
        (new.label.as_str(), old.label.as_str()),
        ("lessons: £12 a lesson", "lessons: £10")
    );
    assert!(extract::value_change("we drove up from the coast, 40 miles.").is_none());
    assert!(extract::value_change("Prices went up from £10, still up to 6 people.").is_none());
    assert!(
        extract::value_change("the poll interval is 8s, up from 5s to be safe, with 3 retries.")
            .is_some()
    );
    let g = session_with_replies(&[
        (
            "Our lessons are £10 a lesson, up to 6 kids.",
            "Got it: lessons at £10 each, 6 kids max.",
        ),
        (
            "lesson price: with the hall costing more, let's charge £12.",
            "Changed: lessons are £12 a lesson, up from £10, groups still up to 6 kids.",
        ),
        ("thanks!", ""),
    ]);
    let facts: Vec<String> = g
        .nodes()
        .into_iter()
        .filter(|n| n.kind == NodeKind::Fact)
        .map(|n| n.label.clone())
        .collect();
    assert!(!facts.iter().any(|f| f.contains("6 kids")), "{facts:?}");
    assert_fact_replaced(&g, "£12", "£10");
}

#[test]
fn a_rule_a_label_introduces_or_a_list_under_a_rules_heading_is_a_restriction() {
    words();
    let rule = |s: &str| extract::restriction(s).map(|r| r.label);
    assert_eq!(
        rule("OK, new rule then: the back gate stays locked and everyone uses the side door.")
            .as_deref(),
        Some("The back gate stays locked and everyone uses the side door")
    );
    assert_eq!(
        rule("rule for all code in src/net/: no global state, no unwrap().").as_deref(),
        Some("No global state, no unwrap() (for all code in src/net/)")
    );
    assert_eq!(
        rule("Policy: all invoices go to finance.").as_deref(),
        Some("All invoices go to finance")
    );
    // A sentence that only mentions rules before a colon states none.
    for s in [
        "the rule is simple: ship it.",
        "I read the rules: they were weird.",
        "they broke the rules: all of them, twice.",
        "what's the rule: tabs or spaces?",
    ] {
        assert_eq!(rule(s), None, "{s}");
    }
    // Items listed under a heading that names rules are rules, whatever
    // their shape; the same items under another heading are not.
    let listed = |text: &str| -> Vec<String> {
        extract::listed_rules(&extract::sentences(text))
            .into_iter()
            .map(|r| r.label)
            .collect()
    };
    assert_eq!(
        listed(
            "house rules, for the fridge door. 1) never run the dryer overnight. 2) no shoes in the lounge, slippers stay by the door. 3) bins out on sunday night."
        ),
        vec![
            "No shoes in the lounge, slippers stay by the door",
            "Bins out on sunday night"
        ]
    );
    assert!(listed("shopping list. 1) milk and eggs. 2) bin bags for the garden.").is_empty());
    // The probe records them.
    let g = session(&[
        "house rules, for the fridge door. 1) bins out on sunday night. 2) no shoes in the lounge, slippers stay by the door.",
        "thanks.",
    ]);
    let rules = in_force_of(&g, NodeKind::Restriction);
    assert!(
        rules
            .iter()
            .any(|r| r.starts_with("No shoes in the lounge")),
        "{rules:?}"
    );
    assert!(listed("house rules. we should talk about them. no shoes in the lounge.").is_empty());
}

#[test]
fn a_setting_named_in_words_is_the_fact_said_in_prose() {
    words();
    // "UPLOAD_TIMEOUT_S" is the upload timeout (its unit suffix aside): a
    // new value for it replaces the timeout said in prose.
    let g = session(&[
        "so the timeout is 20s for the whole upload call.",
        "and the retry delay is 5s between attempts.",
        "the p99 is about 31 seconds on a cold start, so bump UPLOAD_TIMEOUT_S to 40s.",
        "thanks.",
    ]);
    assert_fact_replaced(&g, "40s", "20s");
    // The clause that sets it is a fact of its own after the sentence's
    // first value; a range is none.
    let later = |s: &str| -> Vec<String> {
        extract::later_facts(s)
            .into_iter()
            .map(|r| r.label)
            .collect()
    };
    assert_eq!(
        later("it's 5 now, so raise the pool size to 30."),
        vec!["pool size: 30"]
    );
    assert!(later("we need 5 to 10 seats.").is_empty());
    // The clause starts at its own "so", not at an earlier one.
    assert_eq!(
        later("so the pool is 5 now, so bump the pool size to 30."),
        vec!["pool size: 30"]
    );
}

#[test]
fn the_week_of_a_date_is_a_time_not_a_subject() {
    words();
    let event = |s: &str| extract::event(s).map(|r| r.label);
    for s in [
        "a skip is going outside the house the week of 7 March, so no parking then.",
        "Evening classes: the spring block begins the week of 9 March.",
    ] {
        assert!(
            !event(s).is_some_and(|l| l.starts_with("week:")),
            "{s}: {:?}",
            event(s)
        );
        assert!(
            !fact(s).is_some_and(|l| l.starts_with("week:")),
            "{s}: {:?}",
            fact(s)
        );
    }
    // Two dates "the week of" each: the second does not replace the first
    // as one "week" fact.
    let g = session(&[
        "Evening classes: the spring block begins the week of 9 March.",
        "a skip is going outside the house the week of 2 March, ugh.",
        "thanks.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(!facts.iter().any(|l| l.starts_with("week:")), "{facts:?}");
}

#[test]
fn an_acronym_after_a_number_is_its_unit_and_a_list_item_may_carry_two_values() {
    words();
    assert_eq!(
        fact("the editor is 0.3 FTE.").as_deref(),
        Some("editor: 0.3 FTE")
    );
    // An acronym that opens a noun ("3 API keys") is no unit.
    assert_ne!(
        fact("the keys are 3 API keys.").as_deref(),
        Some("keys: 3 API")
    );
    assert_eq!(
        fact("Breakdown: editor 0.3 FTE £15,000, printing £1,500.").as_deref(),
        Some("editor: 0.3 FTE")
    );
    let g = session(&[
        "Breakdown: editor 0.3 FTE £15,000, printing £1,500.",
        "Editor up to 0.6 FTE (£30,000) because 0.3 was never realistic, printing £2,000.",
        "thanks.",
    ]);
    assert_fact_replaced(&g, "editor: 0.6 FTE", "0.3 FTE");
}

#[test]
fn the_ends_of_a_range_of_times_are_no_values_or_versions() {
    words();
    let s = "times for the booking site: monday slipcasting 7 till 9pm, wednesday kintsugi 11 till 1.30.";
    let versions: Vec<String> = extract::versions(s).into_iter().map(|r| r.label).collect();
    assert!(versions.is_empty(), "{versions:?}");
    for s in [
        "the kintsugi class is 7 till 9pm.",
        "opening hours 9 until 5, lunch 12 until 1",
    ] {
        let fact = extract::fact(s).map(|r| r.label);
        assert!(fact.is_none(), "{s}: {fact:?}");
    }
    // A version beside another is still one.
    let versions: Vec<String> = extract::versions("upgrade to rails 7.1 and ruby 3.3")
        .into_iter()
        .map(|r| r.label)
        .collect();
    assert_eq!(versions, vec!["rails 7.1", "ruby 3.3"]);
}

#[test]
fn a_day_moved_with_no_subject_is_of_what_the_reply_dates() {
    words();
    // The reply in the same turn names what the day is of (the hook
    // probes a reply with its prompt when the gate waits for it).
    let g = session_with_turn_replies(&[
        (
            "the viewing is thursday oct 15, 9am at the agent.",
            "Viewing: Thursday Oct 15, 9am at the agent.",
        ),
        (
            "the survey costs £450, booked it.",
            "Noted, £450 for the survey.",
        ),
        (
            "and the mortgage broker call is monday oct 12 at 4pm.",
            "Broker call: Monday Oct 12, 4pm.",
        ),
        (
            "the agent pushed me to saturday oct 17, 10am",
            "That still works: viewing Saturday Oct 17, 10am at the estate agent.",
        ),
        ("thanks.", ""),
    ]);
    assert_fact_replaced(&g, "viewing: Oct 17", "oct 15");
}

#[test]
fn a_subordinate_clause_a_later_value_and_code_name_no_subject_or_command() {
    words();
    // A subordinator opens the clause: the subject starts after it.
    let later: Vec<String> = extract::later_facts(
        "the probe sends 9 frames and expects a reset, since frame window is 8.",
    )
    .into_iter()
    .map(|r| r.label)
    .collect();
    assert_eq!(later, vec!["frame window: 8"]);
    // A head noun after another value is that value's unit, not a subject.
    let f = extract::fact("nah, keep the importer, it gets through 90k rows in 4 min.");
    assert!(f.is_none(), "{f:?}");
    // A call with its arguments in backticks is code, not a command; the
    // shell's "$(…)" still is one.
    let p =
        extract::procedure("To run it, the worker calls `async def sync_batch(ctx, batch_id)`.");
    assert!(p.is_none(), "{p:?}");
    let p =
        extract::procedure("To deploy, run `./ship.sh $(git describe --tags)`.").map(|r| r.label);
    assert_eq!(
        p.as_deref(),
        Some("deploy: ./ship.sh $(git describe --tags)")
    );
}

#[test]
fn a_command_whose_subcommand_the_sentence_says_is_how_to_do_it() {
    words();
    let p = extract::procedure(
        "on fridays Wen publishes the site with `shipit publish web <tag> --channel stable`.",
    )
    .map(|r| r.label);
    assert_eq!(
        p.as_deref(),
        Some("publish: shipit publish web <tag> --channel stable")
    );
    // A word inside another code span says nothing; nor does a phrase in
    // backticks that opens with a function word.
    for s in [
        "Set `pageSize = 25` and `maxPages = 4` in the config.",
        "the failing ones share a context called `with logged in admin`, which logs in first.",
    ] {
        let p = extract::procedure(s);
        assert!(p.is_none(), "{s}: {p:?}");
    }
}

#[test]
fn up_to_a_value_is_a_bound_not_a_change() {
    words();
    for s in [
        "the bank offered 4.9% over 36 months, up to 11k.",
        "tasting sessions are for up to 5 people.",
    ] {
        assert!(!extract::says_change(s), "{s}");
    }
    for s in [
        "we're putting the kit budget up to 17k.",
        "the ticket price is going up to £90 a head.",
        "bump it up to 12k.",
        // Words joined by a slash are still words.
        "standup moved/shifted to 10:30.",
    ] {
        assert!(extract::says_change(s), "{s}");
    }
    let g = session(&[
        "the kit budget is 15k in total.",
        "the bank offered 4.9% over 36 months, up to 11k.",
        "thanks.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(facts.iter().any(|f| f == "kit budget: 15k"), "{facts:?}");
}

#[test]
fn what_happens_on_a_day_of_every_week_is_a_fact_and_a_denied_one_a_rule() {
    words();
    let sched = |s: &str| -> Vec<String> {
        extract::schedule_facts(s)
            .into_iter()
            .map(|r| r.label)
            .collect()
    };
    assert_eq!(
        sched("our routine is full backups on Sundays and log rotation on Wednesdays."),
        vec!["full backups: Sundays", "log rotation: Wednesdays"]
    );
    assert_eq!(
        sched("standup every Tuesday at 9:30."),
        vec!["standup: Tuesday"]
    );
    assert_eq!(
        sched("Index rebuilds stay on Friday nights."),
        vec!["index rebuilds: Friday nights"]
    );
    // One day, a thing done on a day, a question: none.
    for s in [
        "he's away on Friday.",
        "he's away on Thurs.",
        "the cleaner is in on weds.",
        "we can only collect the van on weekends.",
        "do the restores run on Mondays?",
    ] {
        assert!(sched(s).is_empty(), "{s}: {:?}", sched(s));
    }
    // A denied day is a rule.
    let r = extract::schedule_facts("No schema migrations on Fridays.");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].kind, NodeKind::Restriction);
    // A later day replaces the earlier one, its history kept.
    let g = session(&[
        "the cleaning is on Tuesdays, the window guy on Thursdays.",
        "from next month, the cleaning is on Monday mornings instead.",
        "thanks.",
    ]);
    let facts = in_force_of(&g, NodeKind::Fact);
    assert!(
        facts.iter().any(|f| f == "window guy: Thursdays"),
        "{facts:?}"
    );
    assert_fact_replaced(&g, "cleaning: Monday mornings", "Tuesdays");
}

#[test]
fn a_clock_time_after_at_is_the_time_of_what_opens_the_clause() {
    words();
    assert_eq!(
        fact("so gates at 7:15 pm, the film starts later.").as_deref(),
        Some("gates: 7:15 pm")
    );
    assert_eq!(
        fact("ok, the shuttle pickup at 9:40.").as_deref(),
        Some("shuttle pickup: 9:40")
    );
    // After a pronoun the word is its verb; after a preposition it is an
    // object; a verb in the past opens no subject; a number is no subject.
    assert_eq!(fact("we land at 7:40 am."), None);
    assert_eq!(fact("I pick the van up from the depot at 5:45."), None);
    assert_eq!(fact("the courier was late, then rang at 4pm."), None);
    assert_eq!(fact("the 12th at 6pm works."), None);
}

#[test]
fn a_reporting_verb_after_a_determiner_is_a_noun_of_the_subject() {
    words();
    assert_eq!(
        fact("the notice period is 6 weeks.").as_deref(),
        Some("notice period: 6 weeks")
    );
    // Without the determiner it is the verb that reports: not the subject.
    assert_eq!(
        fact("ops say timeout is 40s.").as_deref(),
        Some("timeout: 40s")
    );
}

#[test]
fn an_approximate_value_is_linked_like_an_exact_one() {
    // "is about X" states X of the subject, as "is X" does.
    assert_eq!(
        fact("our joint income is roughly 64k.").as_deref(),
        Some("joint income: 64k")
    );
    assert_eq!(
        fact("the cold start is approximately 12 seconds.").as_deref(),
        Some("cold start: 12 seconds")
    );
    assert_eq!(
        fact("the invite list is around 140.").as_deref(),
        Some("invite list: 140")
    );
    // An approximator is never the subject.
    assert_eq!(
        fact("lately i cycle on weekends, 40k, about 24 km/h."),
        None
    );
}

#[test]
fn a_name_whose_last_word_is_a_noun_for_a_thing_is_no_person() {
    // WordNet's noun classes (scripts/provision-words.sh): a business or a
    // place named by a noun for a thing, an act or a group is an entity.
    words();
    assert!(lexicon::nouns_loaded(), "run scripts/provision-words.sh");
    let kind_of = |s: &str, name: &str| {
        kinds(s)
            .into_iter()
            .find(|(l, _)| l == name)
            .map(|(_, k)| k)
    };
    assert_eq!(
        kind_of(
            "we ordered the cake from Marrowby Bakery last week.",
            "Marrowby Bakery"
        ),
        Some(NodeKind::Entity)
    );
    assert_eq!(
        kind_of(
            "Torvane Haulage wants the invoices by friday.",
            "Torvane Haulage"
        ),
        Some(NodeKind::Entity)
    );
    // Family names are often nouns for natural kinds or for people.
    assert_eq!(
        kind_of("Odile Marsh wants the invoices by friday.", "Odile Marsh"),
        Some(NodeKind::Person)
    );
    assert_eq!(
        kind_of("we met Teodric Baker at the stand.", "Teodric Baker"),
        Some(NodeKind::Person)
    );
    // A role or a pronoun still makes a person of it.
    assert_eq!(
        kind_of(
            "Quill Haulage, she runs the depot, wants the invoices.",
            "Quill Haulage"
        ),
        Some(NodeKind::Person)
    );
    // After a possessive, a noun for a thing is no lowercase name.
    for s in [
        "my niece's christening is on sunday so i'm off.",
        "our accountant's invoice came in late.",
    ] {
        assert_eq!(people(s), Vec::<String>::new(), "{s}");
    }
}

#[test]
fn a_count_of_things_is_a_fact_of_what_it_counts() {
    // "N <plural> of X": the count is of X, up to a particle or a
    // coordinator.
    assert_eq!(
        fact("we'll need 40 sacks of bark mulch for the beds.").as_deref(),
        Some("bark mulch: 40 sacks")
    );
    assert_eq!(
        fact("the quote says 4.5 metres of cable plus a junction box.").as_deref(),
        Some("cable: 4.5 metres")
    );
    // A later count of the same things updates it.
    let g = session(&[
        "I'll order 40 sacks of bark mulch from the depot.",
        "changed my mind, make that 25 sacks, the van is small.",
    ]);
    assert_fact_replaced(&g, "bark mulch: 25 sacks", "bark mulch: 40 sacks");
}

#[test]
fn a_bare_value_updates_the_fact_of_its_unit_said_last_in_the_turn() {
    words();
    // Two facts in seconds said in one turn: the new value is of the one
    // said last before it.
    let g = session(&[
        "the boot time is 20 seconds. with only 45 seconds of warmup, the first readings were noisy. she wants 90 seconds instead.",
    ]);
    assert_fact_replaced(&g, "warmup: 90 seconds", "warmup: 45 seconds");
}

#[test]
fn an_emoji_ends_a_sentence_and_is_no_part_of_it() {
    let s = extract::sentences(
        "the old store is a mess 😅 ok forget Zephyrq, Brokk is enough\n\
         so back to brokk 🙌🏽\n👍 done ✅ status: 7°C, © me",
    );
    assert_eq!(
        s,
        [
            "the old store is a mess",
            "ok forget Zephyrq, Brokk is enough",
            "so back to brokk",
            "done",
            "status: 7°C, © me",
        ],
        "{s:?}"
    );
    // So a return said with an emoji names the choice alone.
    let d = extract::decision(&s[2], None).unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("brokk"), "{d:?}");
}

#[test]
fn a_drop_with_a_plural_or_a_does_everything_replacement() {
    words();
    let d = extract::decision(
        "And forget the Zephyrq thing, plain YAML configs are fine.",
        None,
    )
    .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.replaced.as_deref(), Some("Zephyrq"), "{d:?}");
    assert!(
        d.chosen.as_deref().is_some_and(|c| c.contains("YAML")),
        "{d:?}"
    );
    let d = extract::decision("ok forget Zephyrq, Brokk does everything we want.", None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("Brokk"), "{d:?}");
    assert_eq!(d.label, "Use Brokk instead of Zephyrq");
}

#[test]
fn a_state_or_a_phrasal_verb_is_no_choice() {
    words();
    // "pick up" collects; it does not choose.
    assert!(
        extract::decision(
            "errands: grab milk, pick up the Zephyrq mics at the depot.",
            None
        )
        .is_none()
    );
    assert!(extract::decision("pick out the Zephyrq mics", None).is_some());
    if lexicon::nouns_loaded() {
        // "is unblocked" says how the thing stands.
        assert!(
            extract::decision("so the payments page is unblocked, on it today", None).is_none()
        );
    }
}

#[test]
fn stacked_endorsements_pick_the_option() {
    words();
    let reply =
        "A few options:\n\n- **Brokk**: records locally.\n- **Zephyrq**: cheaper, in the browser.";
    let d = extract::endorsed_choice("brokk sounds good then.", reply, None)
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(d.chosen.as_deref(), Some("brokk"), "{d:?}");
    assert!(d.label.contains("Zephyrq"), "passed over: {d:?}");
}

#[test]
fn a_name_given_as_a_persons_name_is_a_person() {
    words();
    let got = kinds("her name's Quenby, she runs the stall");
    assert!(
        got.contains(&("Quenby".into(), NodeKind::Person)),
        "{got:?}"
    );
    let got = kinds("Mum's name is Orlaith btw");
    assert!(
        got.contains(&("Orlaith".into(), NodeKind::Person)),
        "{got:?}"
    );
    // A pet's or a thing's name is no person's.
    let got = kinds("the boat's name is Quenby");
    assert!(
        !got.contains(&("Quenby".into(), NodeKind::Person)),
        "{got:?}"
    );
    let got = kinds("its name is Quenby");
    assert!(
        !got.contains(&("Quenby".into(), NodeKind::Person)),
        "{got:?}"
    );
    // A word that is no noun may describe the relative.
    if lexicon::nouns_loaded() {
        let got = kinds("so my younger brother Tavish just got engaged");
        assert!(
            got.contains(&("Tavish".into(), NodeKind::Person)),
            "{got:?}"
        );
    }
    // "his wife X": a role after "his" or "her", the pronoun no part of it.
    let m = extract::mentions("my cousin Tavish and his wife Orlaith are coming", None);
    assert!(
        m.iter().any(|m| m.label == "Orlaith"
            && m.kind == NodeKind::Person
            && m.role.as_deref() == Some("wife")),
        "{m:?}"
    );
}

#[test]
fn a_name_used_as_places_are_is_no_person() {
    words();
    let kind_of = |g: &Graph, label: &str| {
        g.nodes()
            .into_iter()
            .find(|n| n.label == label)
            .map(|n| n.kind)
    };
    let g = session(&[
        "Quellmoor emailed back, they have rooms for the 14th.",
        "the pool at Quellmoor looks lovely",
        "ok so we book the Quellmoor for four nights",
    ]);
    assert_eq!(
        kind_of(&g, "Quellmoor"),
        Some(NodeKind::Entity),
        "{:?}",
        g.nodes()
    );
    // A person's name before a possessive stays a person's.
    let g = session(&[
        "Tavish emailed back, he can host.",
        "we're at Tavish's flat on friday",
        "dinner at Tavish's place after",
    ]);
    assert_eq!(
        kind_of(&g, "Tavish"),
        Some(NodeKind::Person),
        "{:?}",
        g.nodes()
    );
}

#[test]
fn what_a_relative_has_and_a_unit_after_a_number_are_no_names() {
    words();
    // "my sister's X": the relative's thing, not the relative's name.
    let got = kinds("it's my son's zumbathon this weekend");
    assert!(!got.iter().any(|(_, k)| *k == NodeKind::Person), "{got:?}");
    let got = kinds("my sister's Tavrin broke down again");
    assert!(
        !got.contains(&("Tavrin".into(), NodeKind::Person)),
        "{got:?}"
    );
    // Her name after the relative is hers.
    let got = kinds("my sister Tavrin's car broke down again");
    assert!(
        got.contains(&("Tavrin".into(), NodeKind::Person)),
        "{got:?}"
    );
    // "120 ms." is a unit: it ends the sentence, and the pronoun after it
    // is no name.
    let s = extract::sentences("the fade takes 120 ms. I've shortened it.");
    assert_eq!(s.len(), 2, "{s:?}");
    let got = kinds("the fade takes 120 ms. I've shortened it");
    assert!(got.is_empty(), "{got:?}");
    // A title still vouches for the name after it.
    let got = kinds("Ms. Quennell said the hall is free");
    assert!(
        got.contains(&("Quennell".into(), NodeKind::Person)),
        "{got:?}"
    );
    let got = kinds("pushed to the 9th, dr. quennell is away until then");
    assert!(
        got.contains(&("quennell".into(), NodeKind::Person)),
        "{got:?}"
    );
}

#[test]
fn choices_in_other_shapes_name_the_thing_chosen() {
    words();
    let label = |s: &str| extract::decision(s, None).map(|d| d.label);
    // An option picked by number names the thing set beside it; a reason
    // beside it is no thing.
    assert_eq!(
        label("fine, we pick option 2, Zorvex.").as_deref(),
        Some("Use Zorvex")
    );
    assert_eq!(
        label("we'll go with option B, it's cheaper.").as_deref(),
        Some("Use option B")
    );
    // A dot inside a name or a number parts no clause.
    assert_eq!(
        label("ok, Quillchart.js is out, sadly.").as_deref(),
        Some("Drop Quillchart.js")
    );
    assert_eq!(
        label(
            "kai says we need totals per week, and the full scan over 4.8B events is too slow for the lake."
        ),
        None
    );
    // An acronym names the new side of a move.
    assert_eq!(
        label("right, I am switching from Vortl to QRS 7.").as_deref(),
        Some("Use QRS 7 instead of Vortl")
    );
    // Staying with a thing, after a clause of its own; not with a person.
    assert_eq!(
        label("tempting, but it's pricey, so staying with Brokk.").as_deref(),
        Some("Use Brokk")
    );
    assert_eq!(label("so, staying with my aunt in Oxbury."), None);
    // A named thing set to a purpose, without a verb.
    assert_eq!(
        label("PackWerk for the export archives.").as_deref(),
        Some("Use PackWerk for the export archives")
    );
    for s in ["Thanks for the help.", "Notes for the standup."] {
        assert_eq!(label(s), None, "{s}");
    }
}

#[test]
fn a_slot_moved_or_the_previous_one_dropped_replaces_the_choice_in_force() {
    words();
    // "the X goes on Y": a slot moved to a name ending in "-ed".
    let g = session(&[
        "so, Brokk for the thumbnail cache, one entry per image path.",
        "so the thumbnail cache goes on zorpcached.",
    ]);
    assert_in_force(&g, "Use zorpcached");
    let live = in_force(&g);
    assert!(!live.iter().any(|l| l.starts_with("Use Brokk")), "{live:?}");
    // "the previous one is dead" beside a new choice: the choice in
    // force before it is replaced.
    let g = session(&[
        "Bit-pack the map, stay on Zephyrq.",
        "PackWerk for the export archives. The previous one is dead, honestly.",
    ]);
    assert_in_force(&g, "Use PackWerk");
    let live = in_force(&g);
    assert!(
        !live.iter().any(|l| l.starts_with("Use Zephyrq")),
        "{live:?}"
    );
    // Said alone, it replaces nothing.
    let g = session(&[
        "Bit-pack the map, stay on Zephyrq.",
        "The previous one is dead, honestly.",
    ]);
    assert_in_force(&g, "Use Zephyrq");
    // "back to chemistry" goes back to a subject of the talk: no choice.
    let g = session(&["Use Zephyrq for the saves.", "Back to chemistry then."]);
    assert_eq!(in_force(&g), vec!["Use Zephyrq for the saves".to_owned()]);
    // "scrap that, leave it at 5" keeps a value: no choice is dropped. A
    // drop of "it" names the choice it drops.
    let g = session(&[
        "Use Zephyrq for the saves.",
        "Snapshots every 5 minutes, too often? Hmm no, scrap that, leave it at 5.",
    ]);
    assert_eq!(in_force(&g), vec!["Use Zephyrq for the saves".to_owned()]);
    let g = session(&["Use Zephyrq for the saves.", "hmm, forget it."]);
    let labels: Vec<String> = g.nodes().into_iter().map(|n| n.label.clone()).collect();
    assert!(labels.contains(&"Drop Zephyrq".to_owned()), "{labels:?}");
    assert!(!labels.iter().any(|l| l.contains("(the ")), "{labels:?}");
}

#[test]
fn a_count_stated_alone_is_a_fact_of_what_it_counts() {
    words();
    // A count with nothing but leading words before it, in digits or in
    // words, is a fact of the noun it counts; "not" and a count is its
    // history.
    let g = session(&["9 volunteers so far."]);
    assert_eq!(
        in_force_of(&g, NodeKind::Fact),
        vec!["volunteers: 9 volunteers".to_owned()]
    );
    let g = session(&["ok and it's seven kilns not three, the shed holds more."]);
    assert_fact_replaced(&g, "7 kilns", "3 kilns");
    // A later count of what a fact in force counts is its new value.
    let g = session(&["the pear order is 14 crates.", "hmm no, it's 11 crates."]);
    assert_fact_replaced(&g, "11 crates", "14 crates");
    // No count: a measure, a rate, a multiple, a list opened, the parts of
    // what comes next, a count inside someone else's clause, or the
    // subject of a clause of its own.
    for s in [
        "£1,080 looks thin.",
        "40% feels right.",
        "40 requests per hour.",
        "That's four times the old figure.",
        "3 kilns: the big one, the test one and the raku one.",
        "Two questions.",
        "the volunteers said 9 kilns.",
        "12 minutes is plenty.",
        "Nine kilns already cracked this year.",
    ] {
        let g = session(&[s]);
        let facts = in_force_of(&g, NodeKind::Fact);
        assert!(
            !facts.iter().any(|f| f.contains("kilns: ")
                || f.contains("requests: ")
                || f.contains("times: ")
                || f.contains("questions: ")
                || f.contains("minutes: ")
                || f.contains("looks")
                || f.contains("feels")),
            "{s}: {facts:?}"
        );
    }
}

#[test]
fn a_measure_names_what_it_is_on_or_off_for() {
    words();
    // A measure opening its clause is of what it is put on, or off for.
    assert_eq!(
        fact("fine by me, 15% on spare parts and the rest unchanged").as_deref(),
        Some("spare parts: 15%")
    );
    assert_eq!(
        fact("12% off for members.").as_deref(),
        Some("members: 12%")
    );
    // A negative number is a value.
    assert_eq!(
        fact("the freezer setpoint is -18 °C now").as_deref(),
        Some("freezer setpoint: -18 °C")
    );
    // After a determiner the measure describes a thing; a clock time on a
    // day is when, not a measure.
    for s in [
        "the 40mg tablets on the top shelf expired.",
        "ok, 21:05 on the evening it broke.",
    ] {
        assert!(
            !fact(s).is_some_and(|f| f.starts_with("top shelf") || f.starts_with("evening")),
            "{s}: {:?}",
            fact(s)
        );
    }
}

#[test]
fn going_back_to_what_was_never_recorded_drops_the_change_in_force() {
    words();
    // What "we had" was never heard, but the change in force is left.
    let g = session(&[
        "switch the export job to zorpfmt.",
        "the zorpfmt export took 14 minutes, no gain.",
        "meh, scrap it, back to what we used before.",
    ]);
    assert_eq!(in_force(&g), vec!["Drop zorpfmt".to_owned()]);
    // A choice that said no change is no change to turn down.
    let g = session(&[
        "we use zorpfmt for the export job.",
        "right, back to what we used before.",
    ]);
    assert_in_force(&g, "Use zorpfmt");
}
