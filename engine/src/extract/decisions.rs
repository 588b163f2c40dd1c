//! Decisions: choices, changes of mind, drops, proposals and terse answers.

use super::*;

/// Words that turn a following phrase into a non-choice object.
pub(super) fn is_non_choice(choice: &str) -> bool {
    let words: Vec<String> = normalize_name(choice)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let content: Vec<&String> = words
        .iter()
        .filter(|w| !lexicon::is_stop(w) && !lexicon::is_closed_class(w))
        .collect();
    if content.is_empty() {
        return true;
    }
    // "every 120 seconds instead", "4 MB": a measure is a value, not a
    // thing chosen (a version like "2.8.0" has no unit and stays one).
    let measure = words
        .iter()
        .skip_while(|w| lexicon::is_stop(w) || lexicon::CADENCE_WORDS.contains(w.as_str()))
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    // A measure with its unit glued on, before a noun, says which thing:
    // "a 40cm shelf", "the 2m hose".
    let mut mw = measure.split(' ');
    let sized_thing = mw.next().is_some_and(|w| {
        w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(char::is_alphabetic)
    }) && mw.next().is_some_and(|w| {
        w.chars().all(char::is_alphabetic)
            && !lexicon::is_stop(w)
            && !lexicon::UNIT_WORDS.contains(w)
            && !lexicon::CADENCE_WORDS.contains(w)
    });
    if !sized_thing
        && measure.starts_with(|c: char| c.is_ascii_digit())
        && super::value_unit(&measure).is_some_and(|u| u != "date")
    {
        return true;
    }
    // "the feature branch", "the other terminal", "staging context"
    words
        .iter()
        .take(4)
        .any(|w| lexicon::NOT_CHOICES.contains(w.as_str()))
}

/// The phrase that names a decision's topic, when the sentence says it:
/// "for the task queue", "switch the queue to", "as our queue".
pub(super) fn topic_phrase(lead: &str, rest_after: &str) -> Option<String> {
    for (hay, marker) in [(lead, "for "), (rest_after, " for "), (rest_after, " as ")] {
        if let Some(p) = find_ci(hay, marker.trim()) {
            let mut t = strip_clause(hay[p + marker.trim().len()..].trim());
            for d in lexicon::TOPIC_DETERMINERS.iter() {
                t = t.trim_start_matches(&*format!("{d} "));
            }
            let t = t.trim();
            let n = t.split_whitespace().count();
            if (1..=5).contains(&n) {
                return Some(t.to_owned());
            }
        }
    }
    None
}

/// The first named thing of a phrase in object position, or the phrase
/// itself when short, or its first uncommon word.
pub(super) fn chosen_of(choice: &str, root: Option<&str>) -> Option<String> {
    // The phrase sits after a verb: its first word is not a sentence start.
    if let Some(m) = mentions(&format!("x {choice}"), root)
        .into_iter()
        .find(|m| m.kind != NodeKind::Person)
    {
        return Some(m.label);
    }
    let content: Vec<&str> = choice
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
        .filter(|w| {
            let l = w.to_lowercase();
            !w.is_empty() && !lexicon::is_stop(&l) && !lexicon::is_closed_class(&l)
        })
        .collect();
    // The leading run of content words: "daily at 5 utc" → "daily".
    let lead = leading_content_words(choice);
    // A single very common word or a bare number names no choice ("work",
    // "exactly", "2023").
    let weak = |ws: &[&str]| {
        ws.len() == 1
            && (lexicon::is_common(ws[0], 4.8) || ws[0].chars().all(|c| c.is_ascii_digit()))
    };
    if weak(&lead) || (lead.is_empty() && weak(&content)) {
        return None;
    }
    match content.len() {
        0 => None,
        1..=3 if !lead.is_empty() => Some(lead.join(" ")),
        1..=3 => Some(content.join(" ")),
        _ => content
            .iter()
            .find(|w| {
                w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                    || !lexicon::is_common(w, 4.0)
            })
            .map(|w| (*w).to_owned()),
    }
}

/// What a prompt that accepts ("yes, do that") takes from the reply before
/// it: a stated proposal ("I'd suggest X"), else the first sentence that
/// names a concrete thing ("Record each event id in a `processed_events`
/// table …"), as the decision it becomes.
pub fn accepted_proposal(reply: &str, root: Option<&str>) -> Option<Decision> {
    if let Some(d) = stated_proposal(reply, root) {
        return Some(d);
    }
    let ss = sentences(reply);
    ss.iter().find_map(|s| {
        if s.ends_with('?') || s.split_whitespace().count() > 40 {
            return None;
        }
        let first = s.split_whitespace().next().unwrap_or("");
        // One step of a numbered list is not the proposal the list makes.
        let numbered = first
            .strip_suffix(['.', ')'])
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if numbered {
            return None;
        }
        // What the assistant did or is doing is a report, not a proposal.
        let first = first.to_lowercase();
        if lexicon::REPORT_OPENERS
            .contains(first.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        {
            return None;
        }
        let m = mentions(s, root)
            .into_iter()
            .find(|m| m.strong && !matches!(m.kind, NodeKind::Person | NodeKind::File))?;
        let clause = trim_fillers(&truncate_words(strip_clause(s), 12));
        if clause.split_whitespace().count() < 3 {
            return None;
        }
        Some(finish_decision(
            cap_first(&clause),
            Some(m.label.clone()),
            None,
            "",
            &clause,
            DecisionMove::Choose,
            s,
        ))
    })
}

pub(super) fn negated_before(sentence: &str, at: usize) -> bool {
    let head = &sentence[..at];
    lexicon::NEGATION_CUES
        .iter()
        .any(|c| find_ci(head, c).is_some())
        || head.trim_end().to_lowercase().ends_with(" not")
        || head.trim_end().to_lowercase().ends_with("don't")
}

/// Finds a decision in a sentence, if it states one.
pub fn decision(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let trimmed = sentence.trim();
    let lower = trimmed.to_lowercase();
    if lower.ends_with('?')
        || lexicon::QUESTION_OPENERS
            .iter()
            .any(|q| lower.starts_with(q))
    {
        return None;
    }
    // A refusal decides nothing: "let's not use X", "we won't switch to X".
    if lexicon::NEGATION_CUES
        .iter()
        .any(|c| find_ci(trimmed, c).is_some())
        && !lexicon::REJECTION_CUES
            .iter()
            .any(|c| find_ci(trimmed, c).is_some())
    {
        return None;
    }
    if let Some(d) = change_of_mind(trimmed, root) {
        return Some(d);
    }
    // Put off, not decided: "porting to X is a problem for later".
    if lexicon::DEFERRAL_CUES
        .iter()
        .any(|c| find_ci(trimmed, c).is_some())
    {
        return None;
    }
    for cue in lexicon::DECISION_CUES.iter() {
        let Some(at) = find_ci(trimmed, cue) else {
            continue;
        };
        if negated_before(trimmed, at) {
            return None;
        }
        let rest = trimmed[at + cue.len()..].trim();
        // "pick up the keys", "use up the stock": a verb and its particle
        // say something other than a choice ("pick out" still chooses; a
        // move verb keeps its "over to").
        let switchy = cue.contains("switch") || cue.contains("mov") || cue.contains("migrat");
        if !cue.contains(' ')
            && !switchy
            && rest
                .split_whitespace()
                .next()
                .map(str::to_lowercase)
                .is_some_and(|w| w != "out" && lexicon::PARTICLES.contains(w.as_str()))
        {
            continue;
        }
        // Bare "use" and "replace" only count as decisions when they lead
        // the sentence (an imperative) and name a thing or what they replace.
        if lexicon::BARE_DECISION_CUES.contains(cue) {
            let explicit = find_ci(rest, "instead of").is_some()
                || find_ci(rest, "rather than").is_some()
                || (cue == "replace" && find_ci(rest, "with").is_some());
            // What leads the choice's own clause ("sorry, I forgot: we use
            // X" is led by "we").
            let head = trimmed[..at]
                .rsplit([':', ';'])
                .next()
                .unwrap_or_default()
                .trim();
            let at_start = head.is_empty()
                || head.ends_with(['.', ',', ':'])
                || lexicon::IMPERATIVE_LEADS
                    .iter()
                    .any(|w| head.trim_end_matches(',').eq_ignore_ascii_case(w))
                || subject_led(head);
            // Its first content word: an acronym ("the QRVX") or a setting
            // ("mode=strict") names a thing too.
            let lead_word = rest
                .split_whitespace()
                .map(|w| w.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | ':' | '!')))
                .find(|w| !lexicon::is_stop(&w.to_lowercase()))
                .unwrap_or("");
            // A word the frequency list does not know ("we use zorpm") is a
            // name written in lowercase; what one person uses ("I use Quillpad
            // daily") is a habit, not the team's choice.
            let personal = head
                .split_whitespace()
                .last()
                .is_some_and(|w| w.eq_ignore_ascii_case("i"));
            let unknown = !personal && unknown_name(lead_word, &['-', '_']);
            let shaped = unknown
                || super::mentions::is_acronym(lead_word)
                || lead_word
                    .split_once('=')
                    .is_some_and(|(k, v)| !k.is_empty() && !v.is_empty());
            let names_thing = cue != "replace"
                && (shaped
                    // The phrase sits after a verb: its first word is not
                    // a sentence start.
                    || mentions(&format!("x {rest}"), root)
                    .first()
                    .is_some_and(|m| m.strong && m.kind != NodeKind::Person)
                    // "Use weekly partitions for the events table": a topic.
                    || (cue == "use" && find_ci(rest, "for").is_some()));
            // "try restarting it" acts on a thing named before ("use X
            // for it" names X).
            let acts_on_pronoun = {
                let c = strip_clause(rest);
                c.split_whitespace().count() <= 3 && find_ci(c, "for").is_none() && is_request(c)
            };
            if !at_start || !(explicit || names_thing) || acts_on_pronoun {
                continue;
            }
        }
        let mut rest = rest;
        let mut topic_part: Option<String> = None;
        let mut from_part: Option<String> = None;
        if switchy && !cue.ends_with(" to") {
            // "switch the queue to X", "move email from A to B"; a bare
            // "switch" with no "to" ("switch copy between …") decides nothing.
            if (matches!(cue, "switch" | "migrate")
                || cue.ends_with("move")
                || cue.ends_with("moving"))
                && find_ci(rest, "to").is_none()
            {
                continue;
            }
            let to = ["to", "into"]
                .iter()
                .filter_map(|m| find_ci(rest, m).map(|p| (p, m.len())))
                .min();
            if let Some((p, to_len)) = to {
                let before = rest[..p].trim();
                if let Some(f) = find_ci(before, "from") {
                    let old = before[f + 4..].trim();
                    if !old.is_empty() {
                        from_part = Some(truncate_words(old, 4));
                    }
                    topic_part = Some(before[..f].trim().to_owned());
                } else if !before.is_empty() {
                    // "move the cache across to X": the particle is no topic.
                    let topic = match before.rsplit_once(' ') {
                        Some((head, last)) if lexicon::PARTICLES.contains(&last.to_lowercase()) => {
                            head.trim()
                        }
                        _ => before,
                    };
                    topic_part = Some(topic.to_owned());
                }
                rest = rest[p + to_len..].trim();
                // "we'll move the review to the 12th": a day or a number is
                // the moved thing's new value, not a choice.
                let first = rest
                    .split_whitespace()
                    .find(|w| !w.eq_ignore_ascii_case("the"))
                    .unwrap_or_default()
                    .to_lowercase();
                if first.starts_with(|c: char| c.is_ascii_digit())
                    || lexicon::is_weekday(&first)
                    || lexicon::MONTHS.contains(first.as_str())
                {
                    continue;
                }
            }
        }
        let (choice_part, mut replaced) = split_replaced(rest, cue == "replace");
        if replaced.is_none() {
            replaced = from_part;
        }
        // "we were going to A but we switched to B": what the sentence
        // turned away from is named before the "but".
        if replaced.is_none() && switchy {
            let head = &trimmed[..at];
            if let Some(b) = find_ci(head, "but") {
                replaced = mentions(&head[..b], root)
                    .into_iter()
                    .rev()
                    .find(|m| m.strong && !matches!(m.kind, NodeKind::Person | NodeKind::File))
                    .map(|m| m.label);
            }
        }
        // "let's use X instead": instead of the choice made last.
        if replaced.is_none()
            && strip_clause(choice_part)
                .split_whitespace()
                .last()
                .is_some_and(|w| w.eq_ignore_ascii_case("instead"))
        {
            replaced = Some(PREVIOUS_CHOICE.to_owned());
        }
        let mut choice = trim_fillers(&truncate_words(strip_clause(choice_part), 8));
        // "stick to Y and the window": the first of two is the choice.
        if is_non_choice(&choice)
            && let Some(p) = find_ci(&choice, "and").filter(|p| *p > 0)
        {
            choice = choice[..p].trim().to_owned();
        }
        // "the Zorpo clock is cheaper, let's use that": the pronoun stands for
        // the thing the clause before it named.
        if !choice.is_empty()
            && choice
                .split_whitespace()
                .all(|w| lexicon::OBJECT_PRONOUNS.contains(&w.to_lowercase()))
            && let Some(m) = mentions(&trimmed[..at], root)
                .into_iter()
                .rev()
                .find(|m| m.strong && !matches!(m.kind, NodeKind::Person | NodeKind::File))
        {
            choice = m.label;
        }
        // "we pick option 2, X": the option's name, not its number.
        if let Some(named) = option_named(&choice, choice_part, root) {
            choice = named;
        }
        if choice.is_empty() || is_non_choice(&choice) {
            return None;
        }
        let chosen = chosen_of(&choice, root);
        let lead = trimmed[..at].trim().trim_end_matches(',');
        // "For the docs we use X": the subject is not part of the topic.
        let lead = subject_stripped(lead);
        let topic_part = topic_part
            .filter(|t| !t.is_empty() && !is_non_choice(t))
            .or_else(|| topic_phrase(lead, choice_part));
        // "move the cache across to Y": a switch replaces the choice in
        // force that the turn talks about, even when it does not name it.
        if replaced.is_none() && switchy {
            replaced = Some(PREVIOUS_NAMED.to_owned());
        }
        let verb_led = cue.ends_with("plan is to") || cue.ends_with("decided to");
        let label = if verb_led {
            cap_first(&choice)
        } else {
            let mut l = format!("Use {choice}");
            // A choice that says what it is for already ("Y for the
            // invoices") takes no second topic.
            if let Some(t) = &topic_part
                && find_ci(&choice, t).is_none()
                && find_ci(&choice, " for ").is_none()
            {
                l.push_str(&format!(" for {t}"));
            }
            if let Some(r) = &replaced {
                l.push_str(&format!(" instead of {r}"));
            }
            l
        };
        return Some(finish_decision(
            label,
            chosen,
            replaced,
            topic_part.as_deref().unwrap_or(""),
            &choice,
            DecisionMove::Choose,
            trimmed,
        ));
    }
    instead_choice(trimmed, root)
        .or_else(|| it_is_choice(trimmed, root))
        .or_else(|| for_choice(trimmed, root))
        .or_else(|| replacement_choice(trimmed, root))
        .or_else(|| slot_choice(trimmed, root))
}

/// "option 1, X" or "option B (X)": when `choice` is an option word and
/// its number or letter, the named thing set beside it in `phrase`.
fn option_named(choice: &str, phrase: &str, root: Option<&str>) -> Option<String> {
    let mut ws = choice.split_whitespace();
    let (word, mark) = (ws.next()?, ws.next()?);
    let mark = mark.trim_end_matches([',', ':', ')', '.']);
    if !lexicon::OPTION_CUES.contains(word.to_lowercase().as_str())
        || mark.chars().count() > 2
        || !mark.chars().all(char::is_alphanumeric)
    {
        return None;
    }
    let at = find_ci(phrase, &format!("{word} {mark}"))? + word.len() + 1 + mark.len();
    let beside = phrase[at..].trim_start_matches([',', ':', '(', ' ', '-', '\u{2014}']);
    // Only the next clause: the name set right beside the option.
    let beside = beside.split([',', ';', '(', ')']).next()?.trim();
    let beside = beside.trim_end_matches(['.', '!']);
    if beside.is_empty() || beside.split_whitespace().count() > 4 {
        return None;
    }
    // It names a thing: "option B, it's cheaper" gives a reason.
    let names = mentions(&format!("x {beside}"), root)
        .first()
        .is_some_and(|m| m.strong && m.kind != NodeKind::Person)
        || beside
            .split_whitespace()
            .next()
            .is_some_and(|w| unknown_name(w, &['-']));
    (names && chosen_of(beside, root).is_some()).then(|| trim_fillers(beside))
}

/// The words of `span` (as written) whose lowercase form is in `slot`.
fn as_written(span: &[&str], slot: &[String]) -> String {
    span.iter()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|w| slot.contains(&w.to_lowercase()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A slot said to hold a named thing, or moved to one: "the chart library
/// is Vizzle", "our CI is Quillrun", "we switched the caterer to
/// Tansyfare", "logging moves to Logrim". Read as "let's use X for the slot" and
/// "switch the slot to X", so a later change of the slot replaces it. A
/// slot that judges ("the problem is X"), a role ("the lead is Sam") or a
/// person decides nothing.
fn slot_choice(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let s = sentence.trim().trim_end_matches(['.', '!']);
    let words: Vec<&str> = s.split_whitespace().collect();
    let lws = bare_words(s);
    // The slot: one to three plain words after an optional subject
    // pronoun and determiner.
    let plain = |w: &str| {
        w.chars().all(|c| c.is_alphabetic() || c == '-')
            && !lexicon::is_stop(w)
            && !lexicon::is_closed_class(w)
    };
    let slot_ok = |slot: &[String]| {
        (1..=3).contains(&slot.len())
            && slot.iter().all(|w| plain(w))
            && !slot
                .iter()
                .any(|w| lexicon::EVALUATIVE_NOUNS.contains(w.as_str()) || lexicon::is_role_noun(w))
    };
    // `moved`: the thing a slot moved to ("… moves to memcached"), where a
    // word in "-ed" is a name, not how the slot stands.
    let thing = |p: &str, moved: bool| {
        let ms = mentions(&format!("x {p}"), root);
        !p.is_empty()
            && !ms.iter().any(|m| m.kind == NodeKind::Person)
            && (ms.iter().any(|m| m.strong)
                || p.split_whitespace().any(|w| {
                    let written = w.trim_matches(|c: char| !c.is_alphanumeric());
                    let w = written.to_lowercase();
                    lexicon::frequencies_loaded()
                        && w.chars().any(char::is_alphabetic)
                        && !lexicon::is_known_word(&w)
                        // "the page is unblocked" says how it stands.
                        && (moved || !lexicon::is_participle(written))
                }))
    };
    let complement = |from: usize, moved: bool| -> Option<String> {
        let mut rest = words.get(from..)?;
        // "the logs are X now": the adverb is no part of X (a short
        // complement only: "on X 4.2 right now" is no choice).
        while rest.len() <= 3
            && let Some((last, head)) = rest.split_last()
            && !head.is_empty()
            && lexicon::UPDATE_ADVERBS.contains(
                last.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
                    .as_str(),
            )
        {
            rest = head;
        }
        if rest.is_empty() || rest.len() > 4 {
            return None;
        }
        let p = rest
            .join(" ")
            .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '!'))
            .to_owned();
        thing(&p, moved).then_some(p)
    };
    if lws.iter().any(|w| {
        lexicon::TENTATIVE_MODALS.contains(w.as_str())
            || lexicon::REPORTING_VERBS.contains(w.as_str())
    }) {
        return None;
    }
    // Past an opening "ok so" and a subject pronoun.
    let mut k = 0;
    while lws.get(k).is_some_and(|w| {
        lexicon::INTERJECTIONS.contains(w.as_str())
            || lexicon::CLAUSE_CONNECTIVES.contains(w.as_str())
    }) {
        k += 1;
    }
    let opened = k;
    if lws
        .get(k)
        .is_some_and(|w| lexicon::SUBJECT_PRONOUNS.contains(w.as_str()))
    {
        k += 1;
    }
    // "we switched the caterer to X", "logging moves to X".
    if let Some(v) =
        (k..(k + 4).min(lws.len())).find(|&i| lexicon::MOVE_FROM_VERBS.contains(lws[i].as_str()))
        && let Some(to) = (v + 1..(v + 6).min(lws.len()))
            .find(|&i| lexicon::SLOT_MOVE_PREPOSITIONS.contains(lws[i].as_str()))
    {
        // An imperative ("move the search to X") is the decision cues'
        // case; a report ("changed the caterer to X") is this one's.
        if v == k && k == opened && !lws[v].ends_with("ed") {
            return None;
        }
        let span = if v == k { v + 1..to } else { k..v };
        let slot: Vec<String> = lws[span.clone()]
            .iter()
            .filter(|w| !lexicon::TOPIC_DETERMINERS.contains(w.as_str()) && *w != "over")
            .cloned()
            .collect();
        let new = complement(to + 1, true)?;
        if !slot_ok(&slot) {
            return None;
        }
        let named = as_written(&words[span], &slot);
        let d = decision(&format!("switch the {named} to {new}"), root)?;
        return Some(Decision {
            sentence: sentence.trim().to_owned(),
            ..d
        });
    }
    // "the chart library is Vizzle".
    if k != opened
        || !lws
            .get(k)
            .is_some_and(|w| lexicon::TOPIC_DETERMINERS.contains(w.as_str()))
    {
        return None;
    }
    let cop =
        (k + 1..(k + 4).min(lws.len())).find(|&i| lexicon::COPULAS.contains(lws[i].as_str()))?;
    // "the access logs aren't JSON" says what the slot is not.
    if lws[cop].ends_with("n't") || lws.get(cop + 1).is_some_and(|w| w == "not" || w == "never") {
        return None;
    }
    let slot = lws[k + 1..cop].to_vec();
    if !slot_ok(&slot) {
        return None;
    }
    let new = complement(cop + 1, false)?;
    let named = as_written(&words[k + 1..cop], &slot);
    let d = decision(&format!("let's use {new} for the {named}"), root)?;
    Some(Decision {
        sentence: sentence.trim().to_owned(),
        ..d
    })
}

/// A sentence that names both sides of a change without a decision cue:
/// "we booked the Alder Inn instead of the Quayside", "we replaced Corvel
/// with Vizzle", "we're moving from Tarnish to Kelvane", "payments go through
/// Quillpay, not Ledgery". Read as "let's use X instead of Y" when both
/// sides name a thing; a modal ("we could replace …") proposes, and
/// decides nothing.
fn replacement_choice(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let s = sentence.trim().trim_end_matches(['.', '!']);
    let words: Vec<&str> = s.split_whitespace().collect();
    let lws = bare_words(s);
    // "we could replace …" is a possibility; "mention that we moved from
    // Y to X" asks to write down a change already made.
    if lws.iter().any(|w| {
        lexicon::TENTATIVE_MODALS.contains(w.as_str())
            || lexicon::REPORTING_VERBS.contains(w.as_str())
    }) {
        return None;
    }
    // The phrase that ends before word `end`: back to a function word, a
    // verb in the past or "-ing" form, or a clause's end; at most four.
    let before = |end: usize| -> String {
        let mut start = end;
        while start > 0 && end - start < 4 {
            let w = &lws[start - 1];
            let verb_form = (w.ends_with("ed") || w.ends_with("ing")) && lexicon::is_known_word(w);
            if lexicon::is_stop(w)
                || verb_form
                || (start < end && words[start - 1].ends_with([',', ';', ':']))
            {
                break;
            }
            start -= 1;
        }
        words[start..end].join(" ")
    };
    // The name that starts at word `from`, past a determiner: up to a
    // function word, a clause's end or an ordinary lowercase word ("vizzle
    // last week" → "vizzle"); at most four words.
    let after = |from: usize| -> String {
        let mut k = from;
        while k < lws.len() && lexicon::is_stop(&lws[k]) {
            k += 1;
        }
        let mut out: Vec<&str> = Vec::new();
        while k < words.len() && out.len() < 4 && !lexicon::is_stop(&lws[k]) {
            let ordinary = words[k].starts_with(|c: char| c.is_lowercase())
                && lws[k].chars().all(char::is_alphabetic)
                && lexicon::is_known_word(&lws[k]);
            if !out.is_empty() && ordinary {
                break;
            }
            out.push(words[k]);
            if words[k].ends_with([',', ';', ':', '.']) {
                break;
            }
            k += 1;
        }
        out.join(" ")
    };
    let pos = |w: &str, from: usize| (from..lws.len()).find(|&i| lws[i] == w);
    let (new, old) = if let Some(i) = (0..lws.len().saturating_sub(1)).find(|&i| {
        (lws[i] == "instead" && lws[i + 1] == "of") || (lws[i] == "rather" && lws[i + 1] == "than")
    }) {
        (before(i), after(i + 2))
    } else if let Some(v) =
        (0..lws.len()).find(|&i| lexicon::REPLACE_VERBS.contains(lws[i].as_str()))
        && let Some(w) = pos("with", v + 1).or_else(|| pos("for", v + 1))
    {
        (after(w + 1), words[v + 1..w].join(" "))
    } else if let Some(f) = pos("from", 0)
        && (f.saturating_sub(4)..f).any(|i| lexicon::MOVE_FROM_VERBS.contains(lws[i].as_str()))
        && let Some(t) = (f + 2..(f + 6).min(lws.len())).find(|&i| lws[i] == "to")
    {
        (after(t + 1), words[f + 1..t].join(" "))
    } else if let Some(n) = (1..lws.len()).find(|&i| lws[i] == "not" && words[i - 1].ends_with(','))
        && lws.len() - n <= 4
    {
        (before(n), after(n + 1))
    } else {
        return None;
    };
    let clean = |p: &str| {
        p.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '!' | '"' | '\''))
            .trim()
            .to_owned()
    };
    let (new, old) = (clean(&new), clean(&old));
    // Both sides name something: a capitalised name, a code shape, a word
    // the frequency list does not know; not a value ("10 minutes"). One
    // of them at least is a thing, not a person ("the Alder Inn" reads
    // like a name).
    let named = |p: &str, people: bool| {
        !p.is_empty()
            && !p.starts_with(|c: char| c.is_ascii_digit())
            && (mentions(&format!("x {p}"), root)
                .iter()
                .any(|m| m.strong && (people || m.kind != NodeKind::Person))
                || p.split_whitespace().any(|w| {
                    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
                    // "from Vortl to QRS": an acronym names a thing.
                    super::mentions::is_acronym(w) || unknown_name(w, &['-'])
                }))
    };
    if !named(&new, true)
        || !named(&old, true)
        || !(named(&new, false) || named(&old, false))
        || new.eq_ignore_ascii_case(&old)
    {
        return None;
    }
    let d = decision(&format!("let's use {new} instead of {old}"), root)?;
    Some(Decision {
        sentence: sentence.trim().to_owned(),
        ..d
    })
}

/// "X it is." (the idiom that settles a choice): X, a few words long.
fn it_is_choice(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let s = sentence.trim().trim_end_matches(['.', '!']).trim();
    // The idiom ends its clause: "fine, X it is, locked to 3.1.9".
    let s = s
        .split([',', ';'])
        .map(str::trim)
        .find(|c| {
            let c = strip_suffix_ci(c, " then").unwrap_or(c);
            strip_suffix_ci(c, " it is").is_some()
        })
        .map_or(s, |c| &s[..s.find(c).unwrap_or(0) + c.len()]);
    let s = strip_suffix_ci(s, " then")
        .unwrap_or(s)
        .trim_end_matches(',');
    let x = strip_suffix_ci(s, " it is")?.trim();
    // Only its own clause: "ok, X it is", "they shipped it, so X it is".
    let x = x.rsplit([',', ';', ':']).next().unwrap_or(x).trim();
    let x = lexicon::CLAUSE_CONNECTIVES
        .iter()
        .find_map(|c| strip_prefix_ci(x, &format!("{c} ")))
        .unwrap_or(x)
        .trim();
    // Past a reaction that opens it: "ok X it is".
    let mut x = x;
    while let Some((w, rest)) = x.split_once(' ')
        && lexicon::INTERJECTIONS.contains(w.to_lowercase().as_str())
    {
        x = rest.trim_start();
    }
    let n = x.split_whitespace().count();
    let first = x.split_whitespace().next()?.to_lowercase();
    if !(1..=4).contains(&n) || lexicon::is_stop(&first) || lexicon::is_closed_class(&first) {
        return None;
    }
    plain_choice(x, root, sentence.trim())
}

/// "X for the export archives", "Y for the logs": a verbless clause that sets
/// a named thing to a purpose. The thing is a code shape, an acronym or a
/// word the frequency list does not know (so "Thanks for the help",
/// "Notes for the standup" choose nothing); the purpose is a short noun
/// phrase after a determiner, and the clause ends there.
fn for_choice(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let s = strip_interjections(strip_clause_lead(sentence));
    let clause = s
        .split([',', ';'])
        .next()?
        .trim()
        .trim_end_matches(['.', '!']);
    let ws: Vec<&str> = clause.split_whitespace().collect();
    let f = ws.iter().position(|w| w.eq_ignore_ascii_case("for"))?;
    let purpose = ws.len().checked_sub(f + 2)?;
    if !(1..=2).contains(&f)
        || !(1..=4).contains(&purpose)
        || !lexicon::DETERMINERS.contains(ws[f + 1].to_lowercase().as_str())
        || ws[f + 2..]
            .iter()
            .any(|w| lexicon::is_stop(&w.to_lowercase()))
    {
        return None;
    }
    let first = ws[0].trim_matches('`');
    let shaped = first.chars().skip(1).any(char::is_uppercase)
        || super::mentions::is_acronym(first)
        || unknown_name(first, &['-', '_', '.']);
    let person = mentions(&format!("x {}", ws[..f].join(" ")), root)
        .iter()
        .any(|m| m.kind == NodeKind::Person);
    if !shaped || person || is_request(clause) {
        return None;
    }
    let d = decision(&format!("let's use {clause}"), root).filter(|d| d.chosen.is_some())?;
    Some(Decision {
        sentence: sentence.trim().to_owned(),
        ..d
    })
}

/// "Use `choice`", choosing the thing it names, with no topic and nothing
/// replaced: a choice said by itself ("X it is", an option picked).
fn plain_choice(choice: &str, root: Option<&str>, sentence: &str) -> Option<Decision> {
    let chosen = chosen_of(choice, root)?;
    Some(finish_decision(
        format!("Use {choice}"),
        Some(chosen),
        None,
        "",
        choice,
        DecisionMove::Choose,
        sentence,
    ))
}

/// "… and set up the X cache instead": a clause of any verb that ends in
/// "instead" chooses its object over the choice the turn talks about.
fn instead_choice(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let s = sentence.trim().trim_end_matches(['.', '!']);
    // "instead" ends its clause: the sentence, or a comma after it
    // ("booked X instead, £90 all in").
    let lower = s.to_ascii_lowercase();
    let at = lower.match_indices(" instead").map(|(p, _)| p).find(|&p| {
        let after = &s[p + " instead".len()..];
        after.is_empty() || after.starts_with([',', ';'])
    })?;
    let body = &s[..=at];
    // The last clause: after the last comma, semicolon or "and".
    let mut clause = body.trim();
    for sep in [",", ";", " and ", " then "] {
        if let Some(p) = clause.rfind(sep) {
            clause = clause[p + sep.len()..].trim();
        }
    }
    // Drop the verb and its particle: "set up the X" → "the X".
    let mut words: Vec<&str> = clause.split_whitespace().collect();
    if words.len() < 2 || words.len() > 8 {
        return None;
    }
    let first = words.remove(0).to_lowercase();
    if lexicon::is_stop(&first) || lexicon::is_closed_class(&first) {
        return None;
    }
    if words
        .first()
        .is_some_and(|w| lexicon::INSTEAD_PARTICLES.contains(&w.to_lowercase()))
    {
        words.remove(0);
    }
    let object = trim_fillers(&words.join(" "));
    if object.is_empty() || is_non_choice(&object) {
        return None;
    }
    let chosen = chosen_of(&object, root)?;
    Some(finish_decision(
        format!("Use {object} instead of {PREVIOUS_NAMED}"),
        Some(chosen),
        Some(PREVIOUS_NAMED.to_owned()),
        "",
        &object,
        DecisionMove::Choose,
        sentence.trim(),
    ))
}

/// Whether `w` is a name written like a word: letters (and digits or
/// `joiners`) that the frequency list does not know ("zorpm", "wt-trim").
/// False without the list.
fn unknown_name(w: &str, joiners: &[char]) -> bool {
    lexicon::frequencies_loaded()
        && w.chars().any(char::is_alphabetic)
        && w.chars()
            .all(|c| c.is_alphanumeric() || joiners.contains(&c))
        && !lexicon::is_known_word(&w.to_lowercase())
}

/// The words of a phrase, lowercase, without the punctuation around them.
pub fn bare_words(phrase: &str) -> Vec<String> {
    phrase
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect()
}

/// Whether the words before a bare "use"/"go with" are a short lead ending in
/// the speaker's team or self as subject: "we go with X", "for the docs we
/// use X", "so I pick X".
fn subject_led(head: &str) -> bool {
    let words = bare_words(head);
    words.len() <= 4
        && words
            .last()
            .is_some_and(|w| lexicon::SUBJECT_PRONOUNS.contains(w.as_str()))
        && words[..words.len() - 1]
            .iter()
            .all(|w| !lexicon::SUBJECT_PRONOUNS.contains(w.as_str()))
}

/// `lead` without a trailing subject pronoun ("for the docs we" → "for the docs").
fn subject_stripped(lead: &str) -> &str {
    match lead.trim_end().rsplit_once(' ') {
        Some((before, last))
            if lexicon::SUBJECT_PRONOUNS.contains(last.to_lowercase().as_str()) =>
        {
            before.trim_end()
        }
        None if lexicon::SUBJECT_PRONOUNS.contains(lead.trim().to_lowercase().as_str()) => "",
        _ => lead,
    }
}

/// Drops trailing filler words from a choice: "Dramatiq then" → "Dramatiq".
pub(super) fn trim_fillers(choice: &str) -> String {
    let mut words: Vec<&str> = choice.split_whitespace().collect();
    while let Some(last) = words.last() {
        let l = last.to_lowercase();
        if lexicon::TRAILING_FILLERS.contains(&l) {
            words.pop();
        } else {
            break;
        }
    }
    words.join(" ")
}

pub(super) fn finish_decision(
    label: String,
    chosen: Option<String>,
    replaced: Option<String>,
    topic_part: &str,
    choice: &str,
    moves: DecisionMove,
    sentence: &str,
) -> Decision {
    let label: String = label.chars().take(120).collect();
    let mut topic = content_words(&format!("{choice} {topic_part}"));
    for c in chosen.iter().chain(replaced.iter()) {
        // A phrase's last word is its head, what is being chosen among
        // ("daily partitions" and "weekly partitions" decide partitions).
        let mut cw = content_words(c);
        if c.split_whitespace().count() >= 2 {
            let head = c.split_whitespace().last().map(stem).unwrap_or_default();
            cw.retain(|w| *w != head);
        }
        topic.retain(|w| !cw.contains(w));
    }
    Decision {
        label,
        chosen,
        replaced,
        topic,
        moves,
        sentence: sentence.to_owned(),
    }
}

/// The text after the last of `marks` or full stop in `s`: its last
/// clause. A dot inside a word ("Chart.js", "4.8B") parts nothing.
fn last_clause<'s>(s: &'s str, marks: &[char]) -> &'s str {
    s.char_indices()
        .rev()
        .find(|&(i, c)| {
            marks.contains(&c) || (c == '.' && s[i + 1..].starts_with(char::is_whitespace))
        })
        .map_or(s, |(i, c)| &s[i + c.len_utf8()..])
}

/// Whether the last clause of `head` reports what someone other than the
/// speaker says or thinks ("priya reckons …", "the client wants …"), not "I
/// think …" or "we agreed …".
fn reported_by_another(head: &str) -> bool {
    let clause = last_clause(head, &[';', ':']);
    let words: Vec<String> = clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        lexicon::REPORTING_VERBS.contains(w.as_str())
            && i > 0
            && !lexicon::SUBJECT_PRONOUNS.contains(words[i - 1].as_str())
    })
}

/// "scrap the X idea, Y is enough", "forget X, we'll do Y", "let's go back to
/// X", "actually keep X": a change of mind, with or without a replacement.
pub(super) fn change_of_mind(sentence: &str, root: Option<&str>) -> Option<Decision> {
    // "X is out", "the hourly run is overkill": a drop, stated after.
    // "X's out": the cue's "is" contracted onto the name. "X is out sick"
    // says someone is away: some cues drop only where their clause ends.
    let ends_clause = |c: &str, end: usize| {
        let rest = sentence[end..].trim_start();
        !lexicon::CLAUSE_FINAL_DROP_CUES.contains(c)
            || rest.is_empty()
            || rest.starts_with(|ch: char| !ch.is_alphanumeric())
            || lexicon::COORDINATORS.contains(
                rest.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_lowercase()
                    .as_str(),
            )
    };
    if let Some((p, cue_len)) = lexicon::DROP_AFTER_CUES.iter().find_map(|c| {
        find_ci(sentence, c)
            .map(|p| (p, c.len()))
            .or_else(|| {
                let rest = c.strip_prefix("is ")?;
                ["'s ", "\u{2019}s "].iter().find_map(|is| {
                    let cue = format!("{is}{rest}");
                    find_ci(sentence, &cue).map(|p| (p, cue.len()))
                })
            })
            .filter(|&(p, len)| ends_clause(c, p + len))
    }) {
        let head = sentence[..p].trim();
        let head = last_clause(head, &[';', ',']).trim();
        let head: Vec<&str> = head
            .split_whitespace()
            .filter(|w| !lexicon::INTERJECTIONS.contains(w.to_lowercase().as_str()))
            .collect();
        // "on reflection the fallback route isn't worth it": the noun
        // phrase right before the cue.
        let mut head = &head[head.len().saturating_sub(4)..];
        // "Setting up a forum was a mistake": the thing after the verb that
        // made it ("Using the old poller", not "Billing page").
        if head.len() >= 3
            && head[0].to_lowercase().ends_with("ing")
            && lexicon::DETERMINERS.contains(&head[1].to_lowercase())
        {
            head = &head[2..];
        }
        let head = head.join(" ");
        // "our release manager is out next week": a person away, not a choice
        // dropped.
        // So is a name after a title ("dr. x is out on the 19th").
        let titled = sentence[..p]
            .split_whitespace()
            .rev()
            .nth(1)
            .is_some_and(|t| lexicon::is_title(&t.to_lowercase()));
        let someone = titled
            || head
                .split_whitespace()
                .last()
                .is_some_and(|w| lexicon::is_person_noun(&w.to_lowercase()));
        // "priya reckons X is overkill": someone's view, not a drop.
        let reported = reported_by_another(&sentence[..p]);
        // "the previous one is dead": the choice before the one in force,
        // which the probe knows.
        if !reported && lexicon::PREVIOUS_REFS.contains(&head.to_lowercase()) {
            return Some(finish_decision(
                format!("Drop {EARLIER_CHOICE}"),
                None,
                Some(EARLIER_CHOICE.to_owned()),
                "",
                "",
                DecisionMove::Drop,
                sentence,
            ));
        }
        if (1..=4).contains(&head.split_whitespace().count())
            && !someone
            && !reported
            && !is_non_choice(&head)
            && let Some(dropped) = chosen_of(&head, root)
        {
            let after = sentence[p + cue_len..].trim_start_matches([';', ',', '.', ' ', '-', '—']);
            // "so back to Y for the cache, X is out": the choice may come
            // in the clause before the drop too.
            let before = || {
                let cut = sentence[..p].rfind([',', ';'])?;
                decision(&sentence[..cut], root).filter(|d| {
                    d.chosen.is_some() && d.moves != DecisionMove::Drop && d.replaced.is_none()
                })
            };
            let d = decision(after, root)
                .filter(|d| d.chosen.is_some())
                .or_else(|| plain_return(after))
                .or_else(before);
            if let Some(d) = d {
                // What it replaces is named here, not left to the turn.
                let base = d.label.split(" instead of ").next().unwrap_or(&d.label);
                return Some(Decision {
                    label: format!("{base} instead of {dropped}"),
                    replaced: Some(dropped),
                    sentence: sentence.to_owned(),
                    ..d
                });
            }
            return Some(finish_decision(
                format!("Drop {dropped}"),
                None,
                Some(dropped),
                "",
                "",
                DecisionMove::Drop,
                sentence,
            ));
        }
    }
    // Going back to, or keeping, an earlier choice.
    for cue in lexicon::RETURN_CUES.iter() {
        let Some(at) = find_ci(sentence, cue) else {
            continue;
        };
        // "priya reckons we'd better go back to X": a view, not a choice.
        if negated_before(sentence, at) || reported_by_another(&sentence[..at]) {
            continue;
        }
        let head = sentence[..at].trim().trim_end_matches(',').to_lowercase();
        // "keep" only as an imperative: "actually keep X", "ok keep X",
        // maybe after a clause of its own ("tempting, but staying with X").
        // "we're staying with X" may be a place to sleep.
        if cue.contains("keep") || cue.starts_with("stay") {
            let lead = if cue.contains("keep") {
                head.clone()
            } else {
                sentence[..at]
                    .rsplit([',', ';'])
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_lowercase()
            };
            let lead_ok = lead.is_empty()
                || lead.split_whitespace().all(|w| {
                    lexicon::INTERJECTIONS.contains(w.trim_matches([',', ':', ';']))
                        || w == "let's"
                        || w == "we'll"
                        // "ok we just stay with X": staying is said as a plain
                        // statement too.
                        || (cue.starts_with("stay") && lexicon::REJECTION_LEADS.contains(w))
                });
            if !lead_ok {
                continue;
            }
        }
        let rest = sentence[at + cue.len()..].trim();
        let choice = truncate_words(strip_clause(rest), 6);
        // "go back to what we had": the choice before the one in force,
        // which the probe knows.
        if lexicon::PREVIOUS_REFS.contains(&trim_fillers(&choice).to_lowercase()) {
            return Some(finish_decision(
                format!("Use {EARLIER_CHOICE}"),
                Some(EARLIER_CHOICE.to_owned()),
                None,
                "",
                "",
                DecisionMove::Return,
                sentence,
            ));
        }
        // "staying with my aunt": a person, not a choice.
        let possessed = choice
            .split_whitespace()
            .next()
            .is_some_and(|w| lexicon::PERSON_POSSESSIVES.contains(w.to_lowercase().as_str()));
        if choice.is_empty() || is_non_choice(&choice) || (cue.starts_with("stay") && possessed) {
            continue;
        }
        // "actually keep the library": a thing kept is definite, so a
        // common noun after "the" names it here; the probe takes it only
        // against a choice of it, or a change it turns down.
        let definite = || {
            let mut ws = choice.split_whitespace();
            let (det, noun) = (ws.next()?, ws.next()?);
            let noun = noun
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            (ws.next().is_none()
                && cue.contains("keep")
                && lexicon::DETERMINERS.contains(det.to_lowercase().as_str())
                && noun.chars().all(char::is_alphabetic)
                && !noun.is_empty()
                && !lexicon::is_closed_class(&noun))
            .then_some(noun)
        };
        let Some(chosen) = chosen_of(&choice, root).or_else(definite) else {
            continue;
        };
        return Some(finish_decision(
            format!("Use {choice}"),
            Some(chosen),
            None,
            "",
            &choice,
            DecisionMove::Return,
            sentence,
        ));
    }
    // Dropping an earlier choice, maybe naming the replacement.
    let cues = (lexicon::REJECTION_CUES.iter().map(|c| (c, false)))
        .chain(lexicon::VETO_CUES.iter().map(|c| (c, true)));
    for (cue, veto) in cues {
        let Some(at) = find_ci(sentence, cue) else {
            continue;
        };
        let head = sentence[..at].trim().trim_end_matches(',').to_lowercase();
        // "news from the client: they vetoed X": someone else's veto follows
        // its subject, a word or two after the clause's start.
        let subject = || {
            let clause = head.rsplit([':', ';', ',', '.']).next().unwrap_or("");
            (1..=3).contains(&clause.split_whitespace().count())
        };
        let lead_ok = head.is_empty()
            || (veto && subject())
            || head.split_whitespace().all(|w| {
                let w = w.trim_matches([',', ':', ';']);
                lexicon::INTERJECTIONS.contains(w) || lexicon::REJECTION_LEADS.contains(w)
            });
        if !lead_ok {
            continue;
        }
        let rest = sentence[at + cue.len()..].trim();
        let dropped_part = strip_clause(rest);
        // "dropping the fee to $12": an amount set to a new value, not a
        // choice dropped.
        if fact(sentence).is_some_and(|f| {
            let value = f.value().to_lowercase();
            let lower = dropped_part.to_lowercase();
            lower.find(&value).is_some_and(|at| {
                lower[..at]
                    .split_whitespace()
                    .last()
                    .is_some_and(|w| lexicon::DESTINATION_PREPOSITIONS.contains(w))
            })
        }) {
            continue;
        }
        // "drop the X plan and move it into Y": one thing dropped.
        let dropped_part = find_ci(dropped_part, "and")
            .filter(|p| *p > 0)
            .map(|p| dropped_part[..p].trim())
            .unwrap_or(dropped_part);
        // "never mind, the files are small": a statement follows, nothing
        // is dropped by name.
        if dropped_part
            .split_whitespace()
            .skip(1)
            .any(|w| lexicon::COPULAS.contains(&w.to_lowercase()))
        {
            continue;
        }
        let mut dropped = dropped_part;
        for d in lexicon::DROPPED_DETERMINERS.iter() {
            dropped = dropped.trim_start_matches(&*format!("{d} "));
        }
        for n in lexicon::SHELL_NOUNS.iter() {
            dropped = dropped.trim_end_matches(&*format!(" {n}"));
        }
        let dropped = dropped.trim();
        let pronoun = lexicon::DROPPED_PRONOUNS.contains(&dropped.to_lowercase());
        if !pronoun && (dropped.is_empty() || is_non_choice(dropped)) {
            continue;
        }
        let dropped = if pronoun {
            PREVIOUS_CHOICE.to_owned()
        } else {
            chosen_of(dropped, root).unwrap_or_else(|| truncate_words(dropped, 4))
        };
        // The replacement, when the rest of the sentence names one.
        let after = rest
            .get(dropped_part.len()..)
            .unwrap_or("")
            .trim_start_matches([',', ';', ' ', '-', '—']);
        // "never mind that, leave it at 8": what is set aside is a change of a
        // value, which stays; no choice is dropped.
        if pronoun {
            let ws = bare_words(after);
            let keeps_value = ws.iter().enumerate().any(|(i, w)| {
                lexicon::DROPPED_PRONOUNS.contains(w.as_str())
                    && ws[i + 1..]
                        .iter()
                        .take(2)
                        .any(|n| n.starts_with(|c: char| c.is_ascii_digit()))
            });
            if keeps_value {
                continue;
            }
        }
        // "drop X and move state into Y": the connective leads nothing.
        let after = lexicon::CLAUSE_CONNECTIVES
            .iter()
            .find_map(|c| strip_prefix_ci(after, &format!("{c} ")))
            .unwrap_or(after);
        let replacement = decision(after, root)
            .and_then(|d| d.chosen.map(|c| (c, d.label)))
            .or_else(|| {
                // "do client side", "use the small pool": a bare imperative.
                let a = after.trim();
                let r = strip_prefix_ci(a, "do ")
                    .or_else(|| strip_prefix_ci(a, "use "))
                    .or_else(|| moved_into(a))?;
                decision(&format!("let's use {r}"), root)
                    .and_then(|d| d.chosen.map(|c| (c, d.label)))
            })
            .or_else(|| {
                // "Y is enough", "Y is fine", "Y it is", "Y will do"
                let a = after.trim();
                lexicon::SUFFICIENCY_CUES
                    .iter()
                    .find_map(|m| find_ci(a, m).map(|p| a[..p].trim()))
                    // Only the last clause before "will do": "by the way; X will do".
                    .map(|y| y.rsplit([';', ',']).next().unwrap_or(y).trim())
                    .filter(|y| !y.is_empty() && y.split_whitespace().count() <= 8)
                    .and_then(|y| chosen_of(y, root).map(|c| (c, format!("Use {y}"))))
            })
            .or_else(|| {
                // "forget event_date, partition fct_events on loaded_at": the
                // last thing of the dropped one's kind that the rest names.
                let kind_of = |t: &str| mentions(&format!("x {t}"), root).first().map(|m| m.kind);
                let want = kind_of(&dropped)?;
                let m = mentions(after, root).into_iter().rev().find(|m| {
                    m.kind == want && normalize_name(&m.label) != normalize_name(&dropped)
                })?;
                let clause = trim_fillers(&truncate_words(strip_clause(after), 10));
                // A clause that is only the thing ("Y from now on") has no
                // verb of its own.
                let label = if normalize_name(&clause) == normalize_name(&m.label) {
                    format!("Use {clause}")
                } else {
                    cap_first(&clause)
                };
                Some((m.label.clone(), label))
            });
        return Some(match replacement {
            // "we'll do Y instead": what it is instead of is named here.
            Some((chosen, label)) => finish_decision(
                format!(
                    "{} instead of {dropped}",
                    label.split(" instead of ").next().unwrap_or(&label)
                ),
                Some(chosen),
                Some(dropped.clone()),
                "",
                "",
                DecisionMove::Choose,
                sentence,
            ),
            None => finish_decision(
                format!("Drop {dropped}"),
                None,
                Some(dropped.clone()),
                "",
                "",
                DecisionMove::Drop,
                sentence,
            ),
        });
    }
    None
}

/// The leading run of content words of a phrase, past its function words:
/// "the daily run at 5 utc" → daily, run.
pub(super) fn leading_content_words(s: &str) -> Vec<&str> {
    s.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
        .skip_while(|w| lexicon::is_stop(&w.to_lowercase()))
        .take_while(|w| {
            let l = w.to_lowercase();
            !w.is_empty() && !lexicon::is_stop(&l) && !lexicon::is_closed_class(&l)
        })
        .collect()
}

/// "put it back to daily" right after dropping something: a return to a
/// plain word, which alone would name no choice ("back to work"), but here
/// stands against what was just dropped.
pub(super) fn plain_return(after: &str) -> Option<Decision> {
    for cue in lexicon::RETURN_CUES.iter() {
        let Some(at) = find_ci(after, cue) else {
            continue;
        };
        if cue.contains("keep") || cue.starts_with("stay") {
            continue;
        }
        let rest = strip_clause(after[at + cue.len()..].trim());
        let mut lead = leading_content_words(rest);
        lead.truncate(3);
        if lead.is_empty() || is_non_choice(&lead.join(" ")) {
            continue;
        }
        let choice = lead.join(" ");
        return Some(finish_decision(
            format!("Use {choice}"),
            Some(choice.clone()),
            None,
            "",
            &choice,
            DecisionMove::Return,
            after,
        ));
    }
    None
}

/// Where "move state into Y", "put it on Y", "switch it to Y" moves
/// something: "Y".
pub(super) fn moved_into(a: &str) -> Option<&str> {
    let first = a.split_whitespace().next()?.to_lowercase();
    if !lexicon::MOVE_VERBS.contains(&first) {
        return None;
    }
    lexicon::DESTINATION_PREPOSITIONS
        .iter()
        .filter_map(|m| find_ci(a, m).map(|p| (p, m.len())))
        .min()
        .map(|(p, n)| a[p + n..].trim())
        .filter(|r| !r.is_empty())
}

/// A verbless clause without what leads it to the thing it names: "so Y
/// for the logs" → "Y for the logs", "so it's Y then" → "Y then".
pub fn strip_clause_lead(s: &str) -> &str {
    let mut s = s.trim();
    loop {
        let Some((first, rest)) = s.split_once(' ') else {
            return s;
        };
        let w = first.trim_end_matches(',').to_lowercase();
        let w = w.replace('’', "'");
        if lexicon::CLAUSE_CONNECTIVES.contains(&w) || lexicon::CLAUSE_LEADS.contains(&w) {
            s = rest.trim_start();
        } else {
            return s;
        }
    }
}

/// A sentence without the interjections that open it: "sorry, lol, Y for
/// the cache" → "Y for the cache".
pub fn strip_interjections(s: &str) -> &str {
    let mut s = s.trim();
    loop {
        let (first, rest) = s.split_once(' ').unwrap_or((s, ""));
        let w = first
            .trim_end_matches([',', '!', '.', '…'])
            .to_lowercase()
            .replace('’', "'");
        if w.is_empty() || !lexicon::INTERJECTIONS.contains(&w) {
            return s;
        }
        s = rest.trim_start();
    }
}

/// A choice without the words that settle on it: "per-device tokens will
/// do" → "per-device tokens".
pub fn strip_sufficiency(s: &str) -> &str {
    let t = s.trim().trim_end_matches(['.', '!']);
    for c in lexicon::SUFFICIENCY_CUES.iter() {
        if let Some(p) = find_ci(t, c)
            && t[p + c.len()..].trim().is_empty()
            && t[..p]
                .split_whitespace()
                .any(|w| !lexicon::is_stop(&w.to_lowercase()))
        {
            return t[..p].trim();
        }
    }
    s
}

pub(super) fn split_replaced(rest: &str, replace_cue: bool) -> (&str, Option<String>) {
    if replace_cue && let Some(p) = find_ci(rest, "with") {
        // "replace X with Y"
        let old = strip_clause(&rest[..p]).to_owned();
        return (&rest[p + 4..], (!old.is_empty()).then_some(old));
    }
    for marker in lexicon::REPLACED_MARKERS.iter() {
        if let Some(p) = find_ci(rest, marker) {
            let old = truncate_words(strip_clause(&rest[p + marker.len()..]), 4);
            return (&rest[..p], (!old.is_empty()).then_some(old));
        }
    }
    (rest, None)
}

/// A concrete proposal in the assistant's reply ("I'd suggest X with a
/// small worker pool"), as the decision it would be if accepted.
pub fn proposal(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let trimmed = sentence.trim().trim_end_matches('?');
    for cue in lexicon::PROPOSAL_CUES.iter() {
        let Some(at) = find_ci(trimmed, cue) else {
            continue;
        };
        let mut rest = trimmed[at + cue.len()..]
            .trim()
            .trim_start_matches(':')
            .trim();
        for lead in lexicon::PROPOSAL_LEADS.iter() {
            if let Some(r) = strip_prefix_ci(rest, &format!("{lead} ")) {
                rest = r.trim();
            }
        }
        // "my proposal: … and move to Y": the choice
        // inside it.
        if let Some(d) = lexicon::DECISION_CUES
            .iter()
            .filter(|c| c.ends_with(" to") || c.ends_with(" with"))
            .find_map(|c| find_ci(rest, c))
            .and_then(|at| decision(&format!("let's {}", &rest[at..]), root))
            .filter(|d| d.chosen.is_some())
        {
            return Some(Decision {
                sentence: sentence.trim().to_owned(),
                ..d
            });
        }
        let as_decision = if let Some(r) = strip_prefix_ci(rest, "using ") {
            format!("let's use {r}")
        } else if let Some(r) = strip_prefix_ci(rest, "switching ") {
            // "switching to Y", "switching from X to Y"
            format!("let's switch {r}")
        } else if let Some(r) = strip_prefix_ci(rest, "going with ") {
            format!("let's go with {r}")
        } else if let Some(r) = strip_prefix_ci(rest, "replacing ") {
            format!("replace {r}")
        } else if let Some(r) =
            strip_prefix_ci(rest, "adding ").or_else(|| strip_prefix_ci(rest, "add "))
        {
            format!("let's use {r}")
        } else if lexicon::DECISION_CUES
            .iter()
            .any(|c| strip_prefix_ci(rest, c).is_some())
        {
            format!("let's {rest}")
        } else {
            format!("let's use {rest}")
        };
        if let Some(d) = decision(&as_decision, root)
            && d.chosen.is_some()
        {
            return Some(Decision {
                sentence: sentence.trim().to_owned(),
                ..d
            });
        }
    }
    None
}

/// A terse answer that makes a choice: "parser: x derive" (a topic and
/// its choice), or the first words of a prompt naming one of the options the
/// reply before it offered ("…the bucket or workspaces?" → "X bucket.").
pub fn answer_choice(first: &str, previous_reply: &str, root: Option<&str>) -> Option<Decision> {
    let s = first.trim().trim_end_matches(['.', '!']);
    if s.is_empty() || s.ends_with('?') {
        return None;
    }
    if let Some((topic, choice)) = s.split_once(": ") {
        if s.split_whitespace().count() > 6 {
            return None;
        }
        let topic = topic.trim();
        let choice = choice.trim();
        let topic_ok = (1..=2).contains(&topic.split_whitespace().count())
            && topic
                .chars()
                .all(|c| c.is_alphabetic() || c == ' ' || c == '-')
            && !lexicon::is_closed_class(&topic.to_lowercase())
            // "we decide: …" has a speaker, not a topic.
            && !topic
                .split_whitespace()
                .any(|w| lexicon::SUBJECT_PRONOUNS.contains(&w.to_lowercase()));
        // "Next screens: A, B, C" lists work to do; it picks nothing.
        if topic_ok
            && !is_request(choice)
            && (1..=4).contains(&choice.split_whitespace().count())
            && !choice.contains(',')
            && !is_non_choice(choice)
        {
            let chosen = chosen_of(choice, root)?;
            return Some(finish_decision(
                format!("Use {choice} for {topic}"),
                Some(chosen),
                None,
                topic,
                choice,
                DecisionMove::Choose,
                first.trim(),
            ));
        }
        return None;
    }
    // Picking one of the options just offered ("an X bucket …, or
    // workspaces …"), maybe with a reason after it: "Tokens for now, the
    // server knows the devices".
    let offered = find_ci(previous_reply, "or").is_some()
        && (previous_reply.contains('?')
            || previous_reply.contains(", or ")
            || lexicon::OPTION_CUES
                .iter()
                .any(|c| find_ci(previous_reply, c).is_some()));
    let s = strip_clause(s);
    if !offered || s.is_empty() || s.split_whitespace().count() > 4 {
        return None;
    }
    // One ordinary word answers a question ("Hard." to "hard or soft
    // deadline?"); it chooses nothing. Its capital is the sentence's.
    if !s.contains(' ') && lexicon::is_common(&s.to_lowercase(), 4.8) {
        return None;
    }
    let content = content_words(s);
    let reply_words = content_words(previous_reply);
    if content.is_empty() || !content.iter().all(|w| reply_words.contains(w)) {
        return None;
    }
    if lexicon::ACCEPT_CUES
        .iter()
        .any(|c| s.eq_ignore_ascii_case(c))
        || is_non_choice(s)
    {
        return None;
    }
    // "Please archive it": the offered action itself is the choice.
    if is_request(s) {
        let action = s
            .split_whitespace()
            .skip_while(|w| {
                lexicon::INTERJECTIONS.contains(
                    &w.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase(),
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        let chosen = chosen_of(&action, root)?;
        return Some(finish_decision(
            cap_first(&action),
            Some(chosen),
            None,
            "",
            &action,
            DecisionMove::Choose,
            first.trim(),
        ));
    }
    plain_choice(s, root, first.trim())
}

/// An option the reply before named, picked in a short clause of the
/// user's sentence: "ok zorbify sounds good", "qdb for now" (an option the
/// reply spelt out as "quick double buffer"), "just do shadow copies for
/// every clash". The clause is the option and an endorsement before or
/// after it ([`lexicon::ENDORSE_CUES`], [`lexicon::ENDORSE_LEADS`]); the
/// option must be one the reply named, so "lunch sounds good" to a reply
/// about caches picks nothing.
pub fn endorsed_choice(
    sentence: &str,
    previous_reply: &str,
    root: Option<&str>,
) -> Option<Decision> {
    let s = sentence.trim();
    if s.is_empty() || s.contains('?') || previous_reply.trim().is_empty() {
        return None;
    }
    if lexicon::NEGATION_CUES
        .iter()
        .any(|c| find_ci(s, c).is_some())
    {
        return None;
    }
    // The reply's words, read only once a clause has the shape (the gate
    // runs this on every prompt).
    let mut reply_words: Option<Vec<String>> = None;
    for clause in s.split([',', ';', '.', '!']) {
        let words: Vec<&str> = clause
            .split_whitespace()
            .skip_while(|w| {
                let w = w
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                lexicon::INTERJECTIONS.contains(w.as_str())
                    || lexicon::CLAUSE_CONNECTIVES.contains(w.as_str())
            })
            .collect();
        let clause = words.join(" ");
        // Cut on the clause itself, never at an offset of its lowercase copy.
        fn endorsed(c: &str) -> Option<&str> {
            lexicon::ENDORSE_CUES
                .iter()
                .find_map(|e| strip_suffix_ci(c, &format!(" {e}")))
                .map(str::trim)
        }
        let (option, rest) = if let Some(before) = endorsed(&clause) {
            // "X sounds fine then": cues may stack.
            (endorsed(before).unwrap_or(before).to_owned(), String::new())
        } else if let Some(after) = lexicon::ENDORSE_LEADS
            .iter()
            .find_map(|c| strip_prefix_ci(&clause, &format!("{c} ")))
        {
            // "just do shadow copies for every clash": the option, then what
            // it is for.
            let after = after.trim();
            let (o, r) = match find_ci(after, "for") {
                Some(p) if p > 0 => (after[..p].trim(), after[p..].trim()),
                _ => (after, ""),
            };
            (o.to_owned(), r.to_owned())
        } else {
            continue;
        };
        let n = option.split_whitespace().count();
        let first = option
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_lowercase();
        if !(1..=4).contains(&n)
            || lexicon::is_stop(&first)
            || lexicon::is_closed_class(&first)
            || is_non_choice(&option)
            || is_request(&option)
        {
            continue;
        }
        let content = content_words(&option);
        // Whether a text (with these content words) names the option: all
        // its words, or a single word that is their initials.
        let names_option = |words: &[String], text: &str| {
            (!content.is_empty() && content.iter().all(|w| words.contains(w)))
                || (n == 1 && initials_in(text, &option))
        };
        let reply_words = reply_words.get_or_insert_with(|| content_words(previous_reply));
        if !names_option(reply_words, previous_reply)
            || mentions(&format!("x {option}"), root)
                .iter()
                .any(|m| m.kind == NodeKind::Person)
        {
            continue;
        }
        let d = if !rest.is_empty()
            && let Some(d) = decision(&format!("let's use {option} {rest}"), root)
            && d.chosen.is_some()
        {
            Some(Decision {
                sentence: s.to_owned(),
                ..d
            })
        } else {
            plain_choice(&option, root, s)
        };
        if let Some(mut d) = d {
            // The options the reply offered beside it were passed over.
            let offered = offered_options(previous_reply);
            let is_it = |o: &str| names_option(&content_words(o), o);
            if offered.iter().any(|o| is_it(o)) {
                let others: Vec<&str> = offered
                    .iter()
                    .filter(|o| !is_it(o))
                    .take(3)
                    .map(String::as_str)
                    .collect();
                if !others.is_empty() {
                    d.label = format!("{}{}{})", d.label, super::PASSED_OVER, others.join(", "));
                }
            }
            return Some(d);
        }
    }
    None
}

/// The options a reply lays out as a list, each led by its name in bold:
/// "1. **Name**: what it does". Two or more, else none.
pub fn offered_options(reply: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in reply.lines() {
        let l = line.trim();
        let item = if let Some(r) = l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")) {
            r
        } else {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            match l[digits..]
                .strip_prefix(". ")
                .or_else(|| l[digits..].strip_prefix(") "))
            {
                Some(r) if digits > 0 => r,
                _ => continue,
            }
        };
        let Some(name) = item
            .trim_start()
            .strip_prefix("**")
            .and_then(|r| r.split_once("**"))
            .map(|(name, _)| name.trim().trim_end_matches(':').trim())
        else {
            continue;
        };
        if (1..=5).contains(&name.split_whitespace().count()) && !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
    }
    if out.len() < 2 {
        out.clear();
    }
    out
}

/// Whether `short` (two to five letters) is the initials of consecutive
/// words of `text`, hyphenated parts counting as words: "lww" in "the
/// last-write-wins rule".
fn initials_in(text: &str, short: &str) -> bool {
    let short = short.to_lowercase();
    if !(2..=5).contains(&short.len()) || !short.chars().all(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    let initials: Vec<char> = text
        .split(|c: char| c.is_whitespace() || c == '-')
        .filter_map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .chars()
                .next()
                .map(|c| c.to_ascii_lowercase())
        })
        .collect();
    let want: Vec<char> = short.chars().collect();
    initials.windows(want.len()).any(|w| w == want.as_slice())
}

/// Whether a phrase asks for an action on a thing named before ("please
/// archive it", "resize it"): it chooses nothing.
fn is_request(phrase: &str) -> bool {
    let lower = bare_words(phrase);
    lower
        .first()
        .is_some_and(|w| lexicon::INTERJECTIONS.contains(w))
        || lower
            .last()
            .is_some_and(|w| lexicon::OBJECT_PRONOUNS.contains(w))
}

/// A terse prompt that names a topic and then its choice in fragments:
/// "errors. typed. thiserror" → "errors: thiserror", for [`answer_choice`].
/// The topic is one or two plain words; the choice is the last fragment and
/// not an ordinary word.
pub fn terse_choice(prompt: &str) -> Option<String> {
    let p = prompt.trim().trim_end_matches(['.', '!']);
    if p.contains('?') || p.contains(':') || p.split_whitespace().count() > 6 {
        return None;
    }
    let parts: Vec<&str> = p
        .split(['.', ',', ';'])
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let topic = parts[0];
    let choice = parts[parts.len() - 1];
    let topic_ok = (1..=2).contains(&topic.split_whitespace().count())
        && topic.chars().all(|c| c.is_alphabetic() || c == ' ')
        && topic
            .split_whitespace()
            .all(|w| !lexicon::is_closed_class(&w.to_lowercase()));
    let choice_ok = choice.split_whitespace().count() == 1
        && choice.chars().any(|c| c.is_alphabetic())
        && !lexicon::is_known_word(&choice.to_lowercase())
        && !lexicon::is_closed_class(&choice.to_lowercase());
    (topic_ok && choice_ok && lexicon::frequencies_loaded()).then(|| format!("{topic}: {choice}"))
}

/// Whether a prompt is a short go-ahead ("ok, go ahead like that", "please do,
/// thank you", "good, do it so"): a first sentence of a few words that opens
/// with an affirmation, asks and refuses nothing, and names nothing new. It
/// accepts a proposal only when the reply before stated one in so many words
/// ([`stated_proposal`]).
pub fn is_go_ahead(prompt: &str) -> bool {
    let first = sentences(prompt).into_iter().next().unwrap_or_default();
    let words: Vec<String> = first
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    !words.is_empty()
        && words.len() <= 6
        && lexicon::AFFIRMATIONS.contains(&words[0])
        && !prompt.contains('?')
        && !lexicon::NEGATION_CUES
            .iter()
            .any(|c| find_ci(&first, c).is_some())
        && !words
            .iter()
            .any(|w| w == "not" || w == "no" || w.ends_with("n't"))
        && mentions(&first, None).iter().all(|m| !m.strong)
}

/// The last proposal the reply states in so many words ("I'd suggest X",
/// "my suggestion: X"), as the decision it becomes when accepted.
pub fn stated_proposal(reply: &str, root: Option<&str>) -> Option<Decision> {
    sentences(reply)
        .iter()
        .rev()
        .find_map(|s| proposal(s, root))
}

/// Whether a prompt accepts what was just proposed ("yes, do that",
/// "sounds good, go with it"): it opens with an acceptance and is short.
pub fn is_acceptance(prompt: &str) -> bool {
    let first = sentences(prompt).into_iter().next().unwrap_or_default();
    let lower = first.to_lowercase();
    let lower = lower.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    let words = prompt.split_whitespace().count();
    lexicon::ACCEPT_CUES.iter().any(|c| {
        lower == c
            || (lower.starts_with(c)
                && lower[c.len()..].starts_with(|ch: char| !ch.is_alphanumeric()))
    }) && words <= 25
}

/// Which option a user's sentence picks: a label ("b", "2") or a place in
/// the list ("the second one": 1).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pick {
    Label(char),
    Nth(usize),
    Last,
}

/// Marks that may close an option's label: "a)", "2.", "b,".
const PICK_MARKS: [char; 6] = [')', '.', ',', '!', ':', ';'];

/// Bullets that open a list item.
const BULLETS: [&str; 3] = ["- ", "* ", "• "];

/// Whether a (lowercase) character can label an option: "a"–"h", "1"–"9".
fn option_label(c: char) -> bool {
    c.is_ascii_digit() && c != '0' || ('a'..='h').contains(&c)
}

/// "option b", "a for now", "2, it's simpler", "the second option, thanks":
/// the option the sentence opens by picking, read as a label or a place.
/// A bare letter or digit needs a mark after it, the sentence's end, or a
/// word of `option_pick_tails.txt` ("a quick fix" picks nothing).
fn option_pick(first: &str) -> Option<Pick> {
    if first.contains('?') {
        return None;
    }
    let words: Vec<&str> = first.split_whitespace().collect();
    let lower = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
            .to_lowercase()
    };
    // "ok, option b": leads with or without their commas.
    let mut i = 0;
    while i + 1 < words.len()
        && i < 5
        && lexicon::OPTION_PICK_LEADS.contains(lower(words[i]).as_str())
    {
        i += 1;
    }
    let raw = *words.get(i)?;
    let core = raw.trim_start_matches('(').trim_end_matches(PICK_MARKS);
    let marked = raw.ends_with(PICK_MARKS);
    let ends = |k: usize| {
        words
            .get(k)
            .is_none_or(|w| lexicon::OPTION_PICK_TAILS.contains(lower(w).as_str()))
    };
    let mut chars = core.chars();
    let (c, rest) = (chars.next()?, chars.next());
    if rest.is_none() && option_label(c.to_ascii_lowercase()) {
        return (marked || ends(i + 1)).then(|| Pick::Label(c.to_ascii_lowercase()));
    }
    let ordinal = core.to_lowercase();
    let place = lexicon::ORDINALS.iter().position(|o| *o == ordinal)?;
    // "second one", "the last option".
    let next = words.get(i + 1).map(|w| lower(w));
    let k = if next
        .as_deref()
        .is_some_and(|n| n == "one" || lexicon::OPTION_CUES.contains(n))
    {
        i + 2
    } else {
        i + 1
    };
    let said_end = marked
        || words
            .get(k - 1)
            .is_some_and(|w| w.ends_with([',', '.', '!', ':', ';']));
    if !(said_end || ends(k)) {
        return None;
    }
    // "last" is the list's end, whatever its length.
    Some(if ordinal == "last" {
        Pick::Last
    } else {
        Pick::Nth(place)
    })
}

/// The options a reply lists, as (label, text): lines that open with
/// "a)", "(b)", "2.", "Option 3:" (after a bullet or bold marks); else
/// markers inside the text ("(1) X; (2) Y"); else plain bullets, labelled
/// by their place.
fn listed_options(reply: &str) -> Vec<(char, String)> {
    let mut out: Vec<(char, String)> = Vec::new();
    for line in reply.lines() {
        let mut t = line.trim_start();
        for b in BULLETS {
            t = t.strip_prefix(b).unwrap_or(t);
        }
        t = t.trim_start_matches("**");
        if t.get(..7)
            .is_some_and(|h| h.eq_ignore_ascii_case("option "))
        {
            t = &t[7..];
        }
        let t = t.strip_prefix('(').unwrap_or(t);
        let mut cs = t.char_indices();
        let Some((_, c)) = cs.next() else { continue };
        let Some((_, mark)) = cs.next() else { continue };
        if !option_label(c.to_ascii_lowercase()) || !matches!(mark, ')' | '.' | ':') {
            continue;
        }
        let rest = t[2..].trim_start_matches("**");
        if !rest.starts_with(' ') {
            continue;
        }
        out.push((c.to_ascii_lowercase(), rest.trim().to_owned()));
    }
    if out.len() >= 2 {
        return out;
    }
    // "(1) X; (2) Y; (3) Z" inside a line.
    out.clear();
    let mut at = 0;
    let markers: Vec<(usize, char)> = reply
        .match_indices('(')
        .filter_map(|(p, _)| {
            let t = &reply[p + 1..];
            let mut cs = t.chars();
            let c = cs.next()?;
            (cs.next() == Some(')') && cs.next() == Some(' ') && option_label(c)).then_some((p, c))
        })
        .collect();
    for (k, &(p, c)) in markers.iter().enumerate() {
        if p < at {
            continue;
        }
        let start = p + 4;
        let end = markers.get(k + 1).map_or(reply.len(), |m| m.0);
        let text = reply[start..end]
            .trim()
            .trim_end_matches([';', ','])
            .trim_end_matches(" or")
            .trim_end_matches(" and")
            .trim();
        out.push((c, text.to_owned()));
        at = end;
    }
    if out.len() >= 2 {
        return out;
    }
    // Plain bullets, labelled by their place.
    reply
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            BULLETS
                .iter()
                .find_map(|b| t.strip_prefix(b))
                .map(|x| x.trim().to_owned())
        })
        .enumerate()
        .filter_map(|(k, x)| Some((char::from_digit(u32::try_from(k + 1).ok()?, 10)?, x)))
        .collect()
}

/// What an option is, said short: its text up to a colon, dash,
/// parenthesis or clause mark, at most six words, without code or bold
/// marks and trailing function words ("12 shards (~80 GB each): …"
/// → "12 shards").
fn option_head(text: &str) -> Option<String> {
    let t = text.replace(['`', '*'], "");
    let mut end = t.len();
    for cut in [": ", " — ", " – ", " - ", " (", "; ", ". ", ", ", "? "] {
        if let Some(p) = t.find(cut) {
            end = end.min(p);
        }
    }
    let head = t[..end].trim().trim_end_matches(['.', ':', ',', ';']);
    if head.ends_with('?') || head.is_empty() {
        return None;
    }
    let mut words: Vec<&str> = head.split_whitespace().take(6).collect();
    while words
        .last()
        .is_some_and(|w| lexicon::is_stop(&w.to_lowercase()))
    {
        words.pop();
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// The option of the reply just before that the user's first sentence
/// picks by its label or place ("option b", "a for now", "the second one,
/// please"), as a choice of that option, with the other options' heads
/// (what the choice is made against).
pub fn picked_option(
    first: &str,
    previous_reply: &str,
    root: Option<&str>,
) -> Option<(Decision, Vec<String>)> {
    let pick = option_pick(first)?;
    let options = listed_options(previous_reply);
    if options.len() < 2 {
        return None;
    }
    let index = match pick {
        // The list's own label, not a later "(b) is what most teams pick".
        Pick::Label(c) => options.iter().position(|(l, _)| *l == c)?,
        Pick::Last => options.len() - 1,
        Pick::Nth(n) => {
            // A place counts in the list the options' labels make.
            (n < options.len()).then_some(n)?
        }
    };
    // A list of questions ("1. tabs or spaces?") offers
    // no options: "1. tabs" answers it.
    if options.iter().any(|(_, t)| t.contains('?')) {
        return None;
    }
    let head = option_head(&options[index].1)?;
    let chosen = chosen_of(&head, root).unwrap_or_else(|| head.clone());
    let others: Vec<String> = options
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != index)
        .filter_map(|(_, (_, t))| option_head(t))
        .collect();
    let d = finish_decision(
        format!("Use {head}"),
        Some(chosen),
        None,
        "",
        &head,
        DecisionMove::Choose,
        first.trim(),
    );
    Some((d, others))
}
