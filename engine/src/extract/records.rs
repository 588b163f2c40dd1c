//! Typed records: facts, restrictions, procedures, intentions; corrections
//! and preferences.

use super::*;

/// Finds a correction in a sentence, if it is one.
pub fn correction(sentence: &str) -> Option<Correction> {
    let trimmed = sentence.trim_start_matches(|c: char| !c.is_alphanumeric());
    let mut stripped: Option<&str> = None;
    for cue in lexicon::CORRECTION_OPENERS.iter() {
        if let Some(after) = strip_prefix_ci(trimmed, cue) {
            // "wait"/"actually" must be followed by punctuation or a space,
            // not more letters ("Waiting", "Actually works" is fine).
            if after.starts_with(|c: char| c.is_alphanumeric()) {
                continue;
            }
            stripped = Some(after.trim_start_matches([',', ' ', ':', '-', '—', '.']));
            break;
        }
    }
    let lower = sentence.to_lowercase();
    let inner = lexicon::CORRECTION_INNER
        .iter()
        .any(|c| find_ci(sentence, c).is_some())
        || (lower.contains(", not ") && !lower.contains("whether") && !lower.contains("if not"));
    let body = match stripped {
        Some(b) => b,
        None if inner => sentence,
        None => return None,
    };
    let body = body.trim().trim_end_matches(['.', '!']);
    // "No, the summary is enough, thank you" and "no, thank you, …"
    // decline an offer.
    let thanks: Vec<bool> = body
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| lexicon::GRATITUDE.contains(&w.to_lowercase()))
        .collect();
    if stripped.is_some() && (thanks.contains(&true) && !body.chars().any(|c| c.is_ascii_digit())) {
        return None;
    }
    // "One more correction: the grace period is 3 days" → after the colon.
    let body = match body.split_once(':') {
        Some((head, tail))
            if head.to_lowercase().contains("correction")
                && tail.split_whitespace().count() >= 3 =>
        {
            tail.trim()
        }
        _ => body,
    };
    let body = body.trim_start_matches([',', ' ']).trim();
    // A correction states something: at least a few words, one of them a
    // verb-ish link or a number, not a bare reaction.
    if body.split_whitespace().count() < 3 {
        return None;
    }
    let says = inner
        || body.chars().any(|c| c.is_ascii_digit())
        || body.contains("'s ")
        || lexicon::CORRECTION_LINKS
            .iter()
            .any(|v| format!(" {} ", body.to_lowercase()).contains(&format!(" {v} ")));
    if !says {
        return None;
    }
    let label: String = truncate_words(body, 14).chars().take(120).collect();
    Some(Correction {
        label: cap_first(&label),
        sentence: sentence.trim().to_owned(),
    })
}

/// Finds a preference of the user in a sentence (user text only).
pub fn preference(sentence: &str) -> Option<Preference> {
    for cue in lexicon::PREFERENCE_CUES.iter() {
        let Some(at) = find_ci(sentence, cue) else {
            continue;
        };
        let rest = sentence[at + cue.len()..].trim_start().to_lowercase();
        // "I like that approach" / "I like it" are reactions, not preferences
        // (whole words: "I like items sorted" is one); so is a pronoun that
        // is all the object says ("I love those", "I love her so much").
        let starts = |r: &str| {
            rest.strip_prefix(r)
                .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
        };
        // The object as far as the clause goes ("I adore him but …").
        let clause = strip_clause_keep_commas(&sentence[at..]).to_lowercase();
        let words: Vec<&str> = clause
            .get(cue.len()..)
            .unwrap_or_default()
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .filter(|w| !w.is_empty())
            .collect();
        let only_pronoun = words
            .first()
            .is_some_and(|w| lexicon::OBJECT_PRONOUNS.contains(w))
            && words.len() <= 3;
        if only_pronoun || lexicon::REACTION_OBJECTS.iter().any(starts) {
            continue;
        }
        let clause = strip_clause_keep_commas(&sentence[at..]);
        if clause.split_whitespace().count() < 3 {
            continue;
        }
        let label: String = cap_first(&truncate_words(clause, 14))
            .chars()
            .take(120)
            .collect();
        return Some(Preference {
            label,
            sentence: sentence.trim().to_owned(),
        });
    }
    None
}

pub(super) fn strip_clause_keep_commas(s: &str) -> &str {
    let mut end = s.len();
    for stop in [";", " — "]
        .into_iter()
        .chain(lexicon::RULE_CLAUSE_BREAKS.iter())
    {
        if let Some(p) = find_ci(s, stop.trim()).filter(|p| *p > 0) {
            end = end.min(p);
        }
    }
    s[..end].trim().trim_end_matches(['.', '!', '?', ','])
}

/// A restriction: "never force-push to main", "don't touch the legacy tables".
pub fn restriction(sentence: &str) -> Option<Record> {
    let s = sentence.trim();
    for cue in lexicon::RESTRICTION_CUES.iter() {
        let Some(at) = find_ci(s, cue) else { continue };
        // The rule is the clause from the cue on; what comes before it may
        // only be a lead-in ("and", "also", "please", "oh and", a name).
        let head = s[..at].trim().trim_end_matches([',', ':']).to_lowercase();
        let lead_ok = head.split_whitespace().count() <= 4
            && !head.contains(" if ")
            && !head.ends_with("almost")
            && !head.ends_with("i'd");
        if !lead_ok {
            continue;
        }
        let clause = strip_clause_keep_commas(&s[at..]);
        let n = clause.split_whitespace().count();
        if !(3..=20).contains(&n) || tells_of_the_past(&clause[cue.len().min(clause.len())..]) {
            continue;
        }
        let label = cap_first(&truncate_words(clause, 16));
        return Some(Record {
            kind: NodeKind::Restriction,
            label,
            subject: None,
            sentence: s.to_owned(),
        });
    }
    labelled_rule(s).or_else(|| shaped_rule(s))
}

/// A rule a label introduces: "new rule: the back gate stays locked", "rule
/// for everything under src/net/: no global state" (the label's scope is
/// kept with the rule). The label is short and headed by a rule noun
/// (`rule_heads.txt`); what follows the colon is the rule.
fn labelled_rule(s: &str) -> Option<Record> {
    if s.ends_with('?') {
        return None;
    }
    let (head, rest) = s.split_once(':')?;
    let at = rule_label(head)?;
    let clause = strip_clause_keep_commas(rest.trim());
    let n = clause.split_whitespace().count();
    if !(2..=20).contains(&n) {
        return None;
    }
    // "rule for the docs folder during the freeze": the words after the
    // noun say where and when the rule holds.
    let scope = head
        .split_whitespace()
        .skip(at + 1)
        .collect::<Vec<_>>()
        .join(" ");
    let mut label = cap_first(&truncate_words(clause, 16));
    if scope.split_whitespace().count() >= 2 {
        label = format!("{label} ({scope})");
    }
    Some(Record {
        kind: NodeKind::Restriction,
        label,
        subject: None,
        sentence: s.to_owned(),
    })
}

/// Whether what follows a rule cue tells of the past instead of ruling:
/// "never felt so lost", "never actually published it" (a past form of a
/// verb after any adverbs), not "never push to the hotfix branch".
fn tells_of_the_past(rest: &str) -> bool {
    let verb = rest
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .find(|w| !(lexicon::VERB_ADVERBS.contains(w) || w.len() > 4 && w.ends_with("ly")));
    verb.is_some_and(|v| lexicon::PAST_FORMS.contains(&v) || is_regular_past(&v))
}

/// Whether a word is the regular past form of a known verb: "used"
/// (use), "published" (publish), "tried" (try), "stopped" (stop),
/// "cancelled" (cancel); not "embed" or "need", whose stems are no words.
fn is_regular_past(w: &str) -> bool {
    let Some(stem) = w.strip_suffix("ed").filter(|s| s.len() >= 2) else {
        return false;
    };
    let known = lexicon::is_known_word;
    // "stopp": a doubled final letter (single-byte, so the cut below is
    // on a character boundary).
    let b = stem.as_bytes();
    let doubled =
        b.len() >= 3 && b[b.len() - 1].is_ascii_alphabetic() && b[b.len() - 1] == b[b.len() - 2];
    known(w)
        && !w.ends_with("eed")
        && (known(&format!("{stem}e"))
            || known(stem)
            || stem
                .strip_suffix('i')
                .is_some_and(|b| known(&format!("{b}y")))
            || (doubled && known(&stem[..stem.len() - 1])))
}

/// Where the rule noun stands in a label naming a rule or rules ("new
/// rule", "rule for the docs folder", "house rules, for the fridge door"): a
/// short phrase headed by a noun of `rule_heads.txt` within its first
/// words, with no subject or verb of its own ("I read the rules", "the
/// rule is simple").
fn rule_label(head: &str) -> Option<usize> {
    let hw = super::decisions::bare_words(head);
    let at = hw.iter().position(|w| lexicon::RULE_HEADS.contains(w))?;
    let verb_after = hw.get(at + 1).is_some_and(|w| {
        lexicon::COPULAS.contains(w)
            || lexicon::AUXILIARIES.contains(w)
            || lexicon::MODALS.contains(w)
    });
    // "I read the rules", "they broke the rules".
    let own_subject = hw[..at].iter().any(|w| {
        lexicon::SUBJECT_PRONOUNS.contains(w)
            || lexicon::THIRD_PERSON_PRONOUNS.contains(w)
            || w == "you"
    });
    (hw.len() <= 9 && at <= 4 && !verb_after && !own_subject).then_some(at)
}

/// Rules listed under a heading that names them ("house rules. 1) never
/// run the dryer overnight. 2) no shoes in the lounge."): each numbered or
/// bulleted item after the heading that no cue makes a rule is one.
/// `sentences` are one turn's, in order.
pub fn listed_rules(sentences: &[String]) -> Vec<Record> {
    let Some(from) = sentences.iter().position(|s| {
        let h = s.trim().trim_end_matches(['.', ':']);
        !h.contains([':', '?']) && rule_label(h).is_some()
    }) else {
        return Vec::new();
    };
    sentences[from + 1..]
        .iter()
        .filter_map(|s| {
            let item = list_item(s)?;
            if restriction(s).is_some() {
                return None;
            }
            let clause = strip_clause_keep_commas(item);
            (2..=20)
                .contains(&clause.split_whitespace().count())
                .then(|| Record {
                    kind: NodeKind::Restriction,
                    label: cap_first(&truncate_words(clause, 16)),
                    subject: None,
                    sentence: s.trim().to_owned(),
                })
        })
        .collect()
}

/// The text of a list item without its marker ("2) no shoes" → "no
/// shoes"; "- no shoes", "b. no shoes"); `None` for a sentence that is
/// no list item.
fn list_item(s: &str) -> Option<&str> {
    let s = s.trim();
    let (marker, rest) = s.split_once(' ')?;
    let bullet = matches!(marker, "-" | "*" | "•");
    let numbered = marker.strip_suffix([')', '.']).is_some_and(|n| {
        !n.is_empty()
            && (n.chars().all(|c| c.is_ascii_digit())
                || (n.len() == 1 && n.chars().all(|c| c.is_ascii_lowercase())))
    });
    (bullet || numbered).then(|| rest.trim())
}

/// A rule with no rule cue, by its shape (`rule_shapes.txt`): "no deploys
/// on the api until the postmortem" (an activity, then a condition),
/// "only agents should see it" (a modal soon after "only").
fn shaped_rule(s: &str) -> Option<Record> {
    if s.ends_with('?') {
        return None;
    }
    let clause = strip_clause_keep_commas(s);
    let words = super::decisions::bare_words(clause);
    if !(3..=20).contains(&words.len()) {
        return None;
    }
    let fits = lexicon::RULE_SHAPES.iter().any(|shape| {
        let Some((opener, then)) = shape.split_once(':') else {
            return false;
        };
        let then: Vec<&str> = then.split_whitespace().collect();
        if words[0] != opener.trim() {
            return false;
        }
        if then.iter().any(|m| lexicon::MODALS.contains(m)) {
            // "only X should …": a modal within three words.
            words
                .iter()
                .skip(1)
                .take(3)
                .any(|w| then.contains(&w.as_str()))
        } else {
            // "no deploys … until …": an activity, then a condition.
            let activity = &words[1];
            (activity.ends_with('s') || activity.ends_with("ing"))
                && !lexicon::is_stop(activity)
                && words.iter().skip(2).any(|w| then.contains(&w.as_str()))
        }
    });
    fits.then(|| Record {
        kind: NodeKind::Restriction,
        label: cap_first(&truncate_words(clause, 16)),
        subject: None,
        sentence: s.to_owned(),
    })
}

/// Tasks a procedure is for, by the word that names them.
pub(super) const TASKS: &[(&str, &str)] = &[
    ("test", "test"),
    ("tests", "test"),
    ("testing", "test"),
    ("deploy", "deploy"),
    ("deploys", "deploy"),
    ("deploying", "deploy"),
    ("deployment", "deploy"),
    ("release", "release"),
    ("releases", "release"),
    ("releasing", "release"),
    ("build", "build"),
    ("builds", "build"),
    ("lint", "lint"),
    ("linting", "lint"),
    ("migrate", "migrate"),
    ("migrations", "migrate"),
    ("start", "run"),
    ("run", "run"),
    ("plan", "plan"),
    ("format", "format"),
    ("benchmark", "bench"),
    ("bench", "bench"),
];

/// The commands in backticks that look runnable (two or more words, or a
/// path to a script), at most three, as steps: "`a ci` then `a test`" →
/// "a ci && a test".
pub(super) fn command_in(sentence: &str) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = sentence;
    while found.len() < 3
        && let Some((cmd, after)) = next_command(rest)
    {
        found.push(cmd);
        rest = after;
    }
    // Among steps, a lone path is a file the sentence names, not a step,
    // unless it is a script run from here.
    if found.len() > 1 {
        found.retain(|c| c.contains(' ') || c.starts_with("./"));
    }
    (!found.is_empty()).then(|| found.join(" && "))
}

/// The first runnable command in backticks and the text after it.
fn next_command(sentence: &str) -> Option<(String, &str)> {
    let mut rest = sentence;
    while let Some(a) = rest.find('`') {
        let after = &rest[a + 1..];
        let Some(b) = after.find('`') else { break };
        let cmd = after[..b].trim();
        rest = &after[b + 1..];
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let first = words.first().copied().unwrap_or("");
        let runnable = first
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '-'))
            && first
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '.');
        // A call with its arguments ("def run(ctx, job)") is code, not a
        // command; "$(…)" is the shell's.
        let code = cmd.replace("$(", "").contains('(');
        if runnable && !code && (words.len() >= 2 || first.contains('/')) && cmd.len() <= 160 {
            return Some((cmd.to_owned(), rest));
        }
    }
    None
}

/// A command written without backticks: a run of lowercase words that ends
/// in flags or `KEY=value` arguments ("uv run pytest -q", "make deploy ENV=prod").
pub(super) fn bare_command(sentence: &str) -> Option<String> {
    let toks: Vec<&str> = sentence.split_whitespace().collect();
    let argish = |t: &str| {
        let t = t.trim_end_matches([',', '.', ';', ')']);
        (t.starts_with('-') && t.len() >= 2 && !t[1..].starts_with(|c: char| c.is_ascii_digit()))
            || t.split_once('=').is_some_and(|(k, v)| {
                !k.is_empty()
                    && !v.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            })
    };
    let wordish = |t: &str| {
        !t.is_empty()
            && t.chars().all(|c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || matches!(c, '.' | '/' | '_' | '-' | ':' | '+')
            })
            && t.chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '.')
    };
    // Every command in the sentence: "tool up -d db and then other
    // run pytest -q" is two steps of one procedure.
    let mut found: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(off) = toks[from..].iter().position(|t| argish(t)) {
        let fi = from + off;
        let mut start = fi;
        while start > from
            && fi - start < 4
            && wordish(toks[start - 1])
            && !toks[start - 1].ends_with([',', ':'])
        {
            start -= 1;
        }
        // A command starts with a program, not a function word ("up" may
        // follow it: "tool compose up -d"); "image with tool build -b x"
        // starts after "with".
        if let Some(k) = (start..fi)
            .rev()
            .find(|&k| lexicon::is_stop(toks[k]) && !lexicon::PARTICLES.contains(toks[k]))
        {
            start = k + 1;
        }
        while start < fi && lexicon::is_stop(toks[start]) {
            start += 1;
        }
        let mut end = fi + 1;
        while end < toks.len()
            && end - fi < 4
            && (argish(toks[end - 1]) && !toks[end - 1].ends_with([',', '.', ';']))
            && (argish(toks[end]) || wordish(toks[end]))
        {
            end += 1;
        }
        // A program and its subcommand, or a script named by its path.
        if fi - start >= 2 || (fi - start == 1 && toks[start].contains('/')) {
            found.push(
                toks[start..end]
                    .join(" ")
                    .trim_end_matches([',', '.', ';'])
                    .to_owned(),
            );
        }
        from = end;
    }
    if found.is_empty() {
        return None;
    }
    found.truncate(2);
    Some(found.join(" && "))
}

/// A procedure: how a routine task is done, with its command.
pub fn procedure(sentence: &str) -> Option<Record> {
    let cmd = command_in(sentence).or_else(|| bare_command(sentence))?;
    let lower = sentence.to_lowercase();
    let cue = lexicon::PROCEDURE_CUES
        .iter()
        .any(|c| find_ci(sentence, c).is_some());
    // The most specific task named: "to run the tests" is about testing.
    let named: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(|w| TASKS.iter().find(|(k, _)| *k == w).map(|(_, t)| *t))
        .collect();
    let task = named.iter().copied().find(|t| *t != "run").or_else(|| {
        let cl = cmd.to_lowercase();
        TASKS
            .iter()
            .find(|(k, _)| cl.split(|c: char| !c.is_alphanumeric()).any(|w| w == *k))
            .map(|(_, t)| *t)
    });
    let task = match task {
        Some(t) if cue || lower.contains(t) => t.to_owned(),
        Some(_) => return None,
        // "to flash the board, run `tool flash`": a task no list names,
        // said where the sentence says how to do it.
        None if cue => task_after_to(&lower, &cmd)
            .or_else(|| command_task(&cmd))
            .or_else(|| named.first().map(|t| (*t).to_owned()))?,
        None if named.first().is_some_and(|t| lower.contains(t)) => "run".to_owned(),
        // "she promotes the image with `tool promote app <tag>`": the
        // sentence says the subcommand's verb, so that is the task.
        None => said_subcommand(&lower, &cmd)?,
    };
    Some(Record {
        kind: NodeKind::Procedure,
        label: format!("{task}: {cmd}"),
        subject: Some(task),
        sentence: sentence.trim().to_owned(),
    })
}

/// A reply's sentence that says what a command does, the command right
/// before a verb in the third person ("`tool ship --prod` uploads the
/// bundle to the store", "then `tool beta` uploads the build", "qx docs
/// starts the docs server"): how that task is done.
pub fn described_procedure(sentence: &str) -> Option<Record> {
    let s = sentence.trim();
    let third_person = |after: &str| {
        let verb = after
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        verb.len() > 3
            && verb.ends_with('s')
            && !verb.ends_with("ss")
            && lexicon::is_known_word(&verb)
            && !lexicon::is_stop(&verb)
    };
    // A command in backticks anywhere, the verb right after it.
    let mut rest = s;
    let mut cmd = None;
    while let Some(a) = rest.find('`') {
        let Some((inner, after)) = rest[a + 1..].split_once('`') else {
            break;
        };
        rest = after;
        let Some(c) = command_in(&format!("`{inner}`")) else {
            continue;
        };
        // A lone path is a file, unless it is a script to run. The
        // commands before it in the sentence are its first steps.
        if (c.contains(' ') || c.starts_with("./")) && third_person(after) {
            let upto = &s[..s.len() - after.len()];
            cmd = Some((command_in(upto).unwrap_or_else(|| c.clone()), c));
            break;
        }
    }
    // A bare command leading the sentence: a program the word list does not
    // know and its subcommand ("qx docs starts …").
    let cmd = cmd.or_else(|| {
        let toks: Vec<&str> = s.split_whitespace().take(3).collect();
        let [program, sub, verb] = toks[..] else {
            return None;
        };
        let plain = |t: &str| {
            t.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && t.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | ':' | '.')
                })
        };
        (plain(program)
            && plain(sub)
            && program
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !lexicon::is_known_word(program)
            && third_person(verb))
        .then(|| (format!("{program} {sub}"), format!("{program} {sub}")))
    });
    // The task: one the sentence names, else the described command's own.
    let (cmd, described) = cmd?;
    // Words of a path ("app/build.gradle") name no task.
    let lower: String = s
        .to_lowercase()
        .split_whitespace()
        .filter(|w| {
            !w.trim_end_matches(['.', ',', ';', '`'])
                .contains(['/', '.'])
        })
        .collect::<Vec<_>>()
        .join(" ");
    let task = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(|w| TASKS.iter().find(|(k, _)| *k == w).map(|(_, t)| *t))
        .find(|t| *t != "run")
        .map(str::to_owned)
        .or_else(|| command_task(&described))?;
    Some(Record {
        kind: NodeKind::Procedure,
        label: format!("{task}: {cmd}"),
        subject: Some(task),
        sentence: s.to_owned(),
    })
}

/// The noun a value stands before as its modifier, after a determiner:
/// "keeping the 750ms flush interval" → "poll interval", "a 5-day window"
/// → "window". One to three plain words, up to a function word or a
/// clause's end.
fn attributive_subject(
    ws: &[super::Word<'_>],
    lws: &[String],
    vi: usize,
    value: &str,
) -> Option<String> {
    let determined = value.starts_with("the ")
        || vi
            .checked_sub(1)
            .is_some_and(|p| lexicon::DETERMINERS.contains(lws[p].as_str()));
    // A measure ("750ms", "5-day", "9 GB"), not a day, a year or a count.
    // A clock time ("a 1pm call", "the 14:00 slot") is when, not how much.
    let bare = value.strip_prefix("the ").unwrap_or(value);
    let measured = !bare.contains(':')
        && value_unit(bare).is_some_and(|u| !matches!(u.as_str(), "date" | "time"));
    if !determined || !measured || ws[vi].raw.ends_with([',', '.', ';', ':', '!', '?']) {
        return None;
    }
    let mut k = vi + value.split_whitespace().filter(|w| *w != "the").count();
    let mut out: Vec<&str> = Vec::new();
    while let Some(w) = ws.get(k)
        && out.len() < 3
    {
        let l = lws[k].as_str();
        if !l.chars().all(|c| c.is_alphabetic() || c == '-')
            || lexicon::is_stop(l)
            || lexicon::is_closed_class(l)
            || lexicon::UNIT_WORDS.contains(l)
        {
            break;
        }
        out.push(l);
        if w.raw.ends_with([',', '.', ';', ':', '!', '?']) {
            break;
        }
        k += 1;
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// The command's subcommand where the sentence also says it outside the
/// command, in any inflection ("promotes … `tool promote …`" → "promote").
fn said_subcommand(lower: &str, cmd: &str) -> Option<String> {
    let task =
        command_task(cmd).filter(|t| t.len() > 2 && t.chars().all(|c| c.is_ascii_alphabetic()))?;
    let program = cmd.split_whitespace().next()?;
    if lexicon::is_stop(&program.to_lowercase()) {
        return None;
    }
    let stem = super::stem(&task);
    // The words outside every command and code span.
    let outside: String = lower
        .split('`')
        .step_by(2)
        .collect::<Vec<_>>()
        .join(" ")
        .replace(&cmd.to_lowercase(), " ");
    outside
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| !w.is_empty() && super::stem(w) == stem)
        .then_some(task)
}

/// The verb of "to <verb>" outside the command ("to flash the board, run
/// …" → "flash").
fn task_after_to(lower: &str, cmd: &str) -> Option<String> {
    let outside = lower.replace(&cmd.to_lowercase(), " ");
    let words: Vec<&str> = outside
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|p| p[0] == "to" && !lexicon::is_stop(p[1]))
        .map(|p| p[1].to_owned())
}

/// What a command does by its own words: the subcommand after the program
/// ("make docs-serve" → "docs-serve", "tool render report/a.qmd" → "render").
fn command_task(cmd: &str) -> Option<String> {
    cmd.split_whitespace()
        .skip(1)
        .take_while(|w| !w.starts_with('-'))
        .find(|w| {
            w.chars().any(|c| c.is_ascii_alphabetic())
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
        })
        .map(str::to_lowercase)
}

/// Whether a prompt asks for a command to run ("what's the command for
/// the cache?", "how do i run it on the server again").
pub fn asks_for_command(question: &str) -> bool {
    let q = question.trim();
    let lower = q.to_lowercase();
    lexicon::COMMAND_QUESTIONS
        .iter()
        .any(|c| find_ci(q, c).is_some())
        && lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| lexicon::QUESTION_WORDS.contains(w))
}

/// The command a reply gives to a question that asks for one ("what's the
/// command for clearing the cache?" → "./scripts/clear-cache.sh …"), as a
/// procedure named by the question's task.
pub fn answered_procedure(question: &str, reply: &str) -> Option<Record> {
    let how = lexicon::HOW_QUESTIONS
        .iter()
        .any(|c| find_ci(question, c).is_some());
    if !asks_for_command(question) && !how {
        return None;
    }
    let lower = question.trim().to_lowercase();
    let (cmd, sentence) = super::sentences(reply).into_iter().find_map(|s| {
        command_in(&s)
            .or_else(|| bare_command(&s))
            .or_else(|| path_command(&s))
            .map(|c| (c, s))
    })?;
    let named = |w: &str| TASKS.iter().find(|(k, _)| *k == w).map(|(_, t)| *t);
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect();
    let task = words
        .iter()
        .filter_map(|w| named(w))
        .find(|t| *t != "run")
        .map(str::to_owned)
        .or_else(|| {
            // "how do I flash the board": the verb after the question.
            let rest = lexicon::HOW_QUESTIONS
                .iter()
                .filter(|c| c.contains(' '))
                .find_map(|c| find_ci(&lower, c).map(|at| &lower[at + c.len()..]))?;
            rest.split(|c: char| !c.is_alphanumeric() && c != '-')
                .filter(|w| !w.is_empty())
                .find(|w| !lexicon::is_stop(w))
                .map(|w| named(w).unwrap_or(w).to_owned())
        })
        .or_else(|| {
            // "the command for clearing the cache": what it is for.
            let at = words.iter().position(|w| *w == "for")?;
            let what: Vec<&str> = words[at + 1..]
                .iter()
                .copied()
                .take_while(|w| !lexicon::is_stop(w) || *w == "the")
                .filter(|w| *w != "the")
                .take(4)
                .collect();
            (!what.is_empty()).then(|| what.join(" "))
        })
        .or_else(|| {
            // "what's the failover procedure": the word before it.
            let at = words.iter().position(|w| {
                lexicon::HOW_QUESTIONS.contains(w) || lexicon::COMMAND_QUESTIONS.contains(w)
            })?;
            words[..at]
                .iter()
                .rev()
                .find(|w| !lexicon::is_stop(w))
                .map(|w| (*w).to_owned())
        })
        .unwrap_or_else(|| "run".to_owned());
    Some(Record {
        kind: NodeKind::Procedure,
        label: format!("{task}: {cmd}"),
        subject: Some(task),
        sentence: sentence.trim().to_owned(),
    })
}

/// A program run on a path, as a reply to a question for a command gives
/// it: "Yes: tool scripts/train.job configs/base.yaml." → "tool
/// scripts/train.job configs/base.yaml". The program is a lowercase word
/// that is no function word; the path has a slash or a file extension.
fn path_command(sentence: &str) -> Option<String> {
    let toks: Vec<&str> = sentence
        .split_whitespace()
        .map(|t| t.trim_end_matches([',', '.', ';', ')', ':']))
        .collect();
    let pathish = |t: &str| {
        t.chars().any(|c| c.is_ascii_alphabetic())
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '-' | '%'))
            && (t.contains('/') || super::mentions::file_path(t, None).is_some())
    };
    let program = |t: &str| {
        t.len() >= 2
            && t.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_'))
            && !lexicon::is_stop(t)
            && !lexicon::is_closed_class(t)
    };
    let p =
        (0..toks.len().saturating_sub(1)).find(|&i| program(toks[i]) && pathish(toks[i + 1]))?;
    let mut end = p + 2;
    while end < toks.len() && end - p < 6 && (pathish(toks[end]) || toks[end].starts_with('-')) {
        end += 1;
    }
    Some(toks[p..end].join(" "))
}

/// An intention or blocker: "next I'll add pagination", "blocked on Lena's review".
pub fn intention(sentence: &str) -> Option<Record> {
    let s = sentence.trim();
    if s.ends_with('?') {
        return None;
    }
    for cue in lexicon::INTENTION_CUES.iter() {
        let Some(at) = find_ci(s, cue) else { continue };
        if s[..at].split_whitespace().count() > 6 {
            continue;
        }
        let clause = strip_clause_keep_commas(&s[at..]);
        let n = clause.split_whitespace().count();
        if !(3..=18).contains(&n) {
            continue;
        }
        return Some(Record {
            kind: NodeKind::Intention,
            label: cap_first(&truncate_words(clause, 14)),
            subject: None,
            sentence: s.to_owned(),
        });
    }
    None
}

/// A statement's words and their lowercase forms, the sentence trimmed;
/// none for a question.
fn statement(sentence: &str) -> Option<(&str, Vec<Word<'_>>, Vec<String>)> {
    let s = sentence.trim();
    if s.ends_with('?') {
        return None;
    }
    let ws = words(s);
    let lws = ws.iter().map(|w| w.text.to_lowercase()).collect();
    Some((s, ws, lws))
}

/// Whether a token carries a value: a number, a size, a time, an ordinal.
pub(super) fn value_token(t: &str) -> bool {
    let t = t.trim_matches(|c: char| {
        matches!(
            c,
            ',' | '.' | ';' | ':' | '(' | ')' | '"' | '\'' | '`' | '!' | '?'
        )
    });
    let t = t.trim_start_matches(['$', '€', '£', '~', '<', '>', '≤', '≥']);
    // A negative number: "-16 LUFS", "−40".
    let t = t
        .strip_prefix(['-', '−'])
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(t);
    if t.is_empty() || !t.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return false;
    }
    // 3, 3.5, 25MB, 10k, 06:00, 14th, 30s, 2026-11-24, 90%
    let shaped = |t: &str| {
        t.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '–' | '%' | '/' | ',')
        }) && t.chars().filter(|c| c.is_ascii_alphabetic()).count() <= 4
    };
    // A rate with its period written out: "5/day", "3/week".
    shaped(t)
        || t.split_once('/').is_some_and(|(n, per)| {
            shaped(n) && !per.is_empty() && per.chars().all(|c| c.is_ascii_alphabetic())
        })
}

/// The value at word `vi` with what belongs to it: its unit ("20 per
/// pod", "3 s"), month ("the 12th of <month>") or weekday ("<weekday> the 9th").
fn fact_value(ws: &[super::Word<'_>], lws: &[String], vi: usize) -> String {
    // A clause mark ends the value: "on 4 <month>, 2 vans" is no "<month> 2".
    let ends_clause = |i: usize| ws[i].raw.ends_with(super::CLAUSE_MARKS);
    let forward = !ends_clause(vi);
    // "5 working days": the unit's qualifier goes with it.
    if forward
        && lws
            .get(vi + 1)
            .is_some_and(|w| lexicon::UNIT_QUALIFIERS.contains(w.as_str()))
        && lws
            .get(vi + 2)
            .is_some_and(|w| lexicon::UNIT_WORDS.contains(w.as_str()))
    {
        return format!("{} {} {}", ws[vi].text, ws[vi + 1].text, ws[vi + 2].text);
    }
    let mut value = ws[vi].text.to_owned();
    // What a rate is per is a word with content ("20 per pod", not "per the").
    let content = |i: usize| lws.get(i).is_some_and(|w| !lexicon::is_stop(w));
    // "4 runs a week": a count of things in a period.
    let counted = lws
        .get(vi + 1)
        .is_some_and(|w| w.chars().all(char::is_alphabetic) && !lexicon::is_stop(w))
        && lws.get(vi + 2).is_some_and(|w| w == "a" || w == "per")
        && lws
            .get(vi + 3)
            .is_some_and(|w| lexicon::UNIT_WORDS.contains(w.as_str()));
    // "8 episodes", "12 seats": a plain number counts the plural noun
    // after it.
    let plain_number = ws[vi]
        .text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | ','));
    let counts = |i: usize| lws.get(i).is_some_and(|w| plural_noun(w));
    // "3.6 billion rows", "£2 million": a number word that scales the
    // number is part of it (`magnitudes.txt`), with the unit or the
    // counted noun after it.
    if forward
        && lws
            .get(vi + 1)
            .is_some_and(|w| lexicon::MAGNITUDES.contains(w.as_str()))
    {
        let mut value = format!("{} {}", ws[vi].text, ws[vi + 1].text);
        if !ends_clause(vi + 1)
            && (lws
                .get(vi + 2)
                .is_some_and(|w| lexicon::UNIT_WORDS.contains(w.as_str()))
                || counts(vi + 2))
        {
            value = format!("{value} {}", ws[vi + 2].text);
        }
        return value;
    }
    // "£14 a bag", "$9 per seat": a sum for each of a thing is a rate.
    let money = ws[vi].raw.starts_with(['$', '€', '£', '¥']);
    if forward
        && money
        && lws.get(vi + 1).is_some_and(|w| w == "a" || w == "per")
        && content(vi + 2)
        && lws[vi + 2].chars().all(char::is_alphabetic)
    {
        return format!("{value} {} {}", ws[vi + 1].text, ws[vi + 2].text);
    }
    // "90 req/min", "120 km/h": a rate written with a slash is the unit.
    let slashed = |w: &str| {
        w.split_once('/').is_some_and(|(a, b)| {
            [a, b].iter().all(|p| {
                (1..=8).contains(&p.len())
                    && p.chars().all(|c| c.is_ascii_lowercase())
                    && !lexicon::is_stop(p)
            })
        })
    };
    if forward && lws.get(vi + 1).is_some_and(|w| slashed(w)) {
        value = format!("{value} {}", ws[vi + 1].text);
        if !ends_clause(vi + 1) && lws.get(vi + 2).is_some_and(|w| w == "per") && content(vi + 3) {
            value = format!("{value} per {}", ws[vi + 3].text);
        }
        return value;
    }
    // "0.8 FTE (£31,000)": an acronym right after a plain number, with no
    // noun after it, is its unit.
    let acronym_unit = plain_number
        && ws.get(vi + 1).is_some_and(|w| {
            (2..=4).contains(&w.text.len())
                && w.text.chars().all(|c| c.is_ascii_uppercase())
                && w.raw.starts_with(|c: char| c.is_ascii_uppercase())
        })
        && (ends_clause(vi + 1)
            || ws
                .get(vi + 2)
                .is_none_or(|w| value_token(w.raw) || lexicon::is_stop(&w.text.to_lowercase())));
    if forward && acronym_unit {
        return format!("{value} {}", ws[vi + 1].text);
    }
    // The last word of the value said from `vi` on.
    let mut end = vi;
    if forward
        && let Some(next) = lws.get(vi + 1)
        && (lexicon::UNIT_WORDS.contains(next.as_str())
            || lexicon::MONTHS.contains(next.as_str())
            || counted
            || (plain_number && counts(vi + 1)))
        && (next != "per" || content(vi + 2))
    {
        value = format!("{value} {}", ws[vi + 1].text);
        end = vi + 1;
        // "20 per pod": a rate names what it is per.
        if next == "per"
            && let Some(n2) = ws.get(vi + 2)
        {
            value = format!("{value} {}", n2.text);
            end = vi + 2;
        }
        if let Some(n2) = lws.get(vi + 2)
            && (n2 == "per" || n2 == "a")
            && content(vi + 3)
            && let Some(n3) = ws.get(vi + 3)
        {
            value = format!("{value} {} {}", ws[vi + 2].text, n3.text);
            end = vi + 3;
        }
    }
    // "the 12th of <month>".
    if forward
        && lws.get(vi + 1).is_some_and(|w| w == "of")
        && let Some(m) = ws.get(vi + 2)
        && lexicon::MONTHS.contains(lws[vi + 2].as_str())
    {
        value = format!("{value} of {}", m.text);
        end = vi + 2;
    }
    // A weekday or month before the number: "a weekday the 9th", "a month 14".
    if vi >= 1 && !ends_clause(vi - 1) {
        let p = &lws[vi - 1];
        let p2 = if vi >= 2 { lws[vi - 2].as_str() } else { "" };
        // A month before a clock time is a date's end: "30 June 7am".
        let month_day = lexicon::MONTHS.contains(p.as_str()) && !clock_time(&value);
        if month_day || lexicon::WEEKDAYS.contains(p.as_str()) {
            value = format!("{} {value}", ws[vi - 1].text);
        } else if p == "the" && (lexicon::WEEKDAYS.contains(p2) || lexicon::MONTHS.contains(p2)) {
            value = format!("{} the {value}", ws[vi - 2].text);
        } else if p == "the" {
            value = format!("the {value}");
        } else if p == "at" && lexicon::is_weekday(p2) && clock_time(&value) {
            // "Tuesdays at 11am": the day and the time.
            value = format!("{} at {value}", ws[vi - 2].text);
        }
    }
    // "friday 9th at 3:15pm": a day with the time it is at.
    if is_dated(&value)
        && !ends_clause(end)
        && lws.get(end + 1).is_some_and(|w| w == "at")
        && let Some(t) = ws.get(end + 2)
    {
        // "2:40pm", or "2 pm" in two words.
        let two = ws
            .get(end + 3)
            .filter(|_| !ends_clause(end + 2))
            .map(|m| format!("{} {}", t.text, m.text))
            .filter(|t2| clock_time(t2));
        if clock_time(t.text) {
            value = format!("{value} at {}", t.text);
        } else if let Some(t2) = two {
            value = format!("{value} at {t2}");
        }
    }
    value
}

/// Whether a value is a time of day ("14:30", "2pm", "9 am").
fn clock_time(value: &str) -> bool {
    let v = value.to_lowercase().replace(['.', ' '], "");
    let digits = v.trim_end_matches(|c: char| c.is_alphabetic());
    (v.ends_with("am") || v.ends_with("pm") || v.contains(':'))
        && !digits.is_empty()
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || c == ':' || c == '.')
}

/// What a fact value is measured in, to tell which facts one value can
/// update: the words after the number ("µa", "runs a week"), a currency
/// sign ("€"), a unit glued on ("/min"), or "date" for a day.
pub fn value_unit(value: &str) -> Option<String> {
    if is_dated(value) {
        return Some("date".into());
    }
    // "7am", "6:30 pm" and "19:00" are all times of day.
    if clock_time(value.trim()) {
        return Some("time".into());
    }
    let v = value.trim().to_lowercase();
    let mut words = v.split_whitespace();
    let first = words.next()?;
    let rest: Vec<&str> = words.collect();
    if !rest.is_empty() {
        return Some(rest.join(" "));
    }
    if let Some(c) = first.chars().next().filter(|c| !c.is_alphanumeric()) {
        // "$40/mo" is a rate, not a sum: another measure than "$500".
        return Some(match first.split_once('/') {
            Some((_, per)) if !per.is_empty() && per.chars().all(char::is_alphabetic) => {
                format!("{c}/{per}")
            }
            _ => c.to_string(),
        });
    }
    // A unit glued on after the number: "41.2%", "16px", "2.5ms" (not an
    // ordinal: "14th").
    let digits = first.trim_end_matches(|c: char| !c.is_ascii_digit());
    let glued = &first[digits.len()..];
    if !digits.is_empty()
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ','))
        && !glued.is_empty()
        && (glued == "%" || glued.chars().all(char::is_alphabetic))
        && !["st", "nd", "rd", "th"].contains(&glued)
        // "the 1970s" is a decade.
        && !(glued == "s" && digits.len() == 4)
    {
        return Some(glued.to_owned());
    }
    first
        .split_once('/')
        .filter(|(n, u)| n.chars().any(|c| c.is_ascii_digit()) && !u.is_empty())
        .map(|(_, u)| format!("/{u}"))
}

/// The pairs a text states as "X (was Y)" ("backbone: quillnet_b2
/// (was plumenet18)", "lr 5e-4 (previously 3e-4)"; `history_markers.txt`):
/// X is the word or two before the parenthesis, Y its first few words.
pub fn stated_history(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let before = &rest[..open];
        let after = &rest[open + 1..];
        rest = after;
        let Some(close) = after.find(')') else { break };
        let inner = after[..close].trim();
        // "(was Y)", "(moved from Y)": a marker of one word or more.
        let Some(old) = lexicon::HISTORY_MARKERS
            .iter()
            .filter(|m| {
                inner
                    .get(..m.len())
                    .is_some_and(|h| h.eq_ignore_ascii_case(m))
                    && inner[m.len()..].starts_with(' ')
            })
            .max_by_key(|m| m.len())
            .map(|m| &inner[m.len() + 1..])
        else {
            continue;
        };
        let old = old.trim().trim_start_matches(':').trim();
        if old.is_empty() || old.split_whitespace().count() > 4 {
            continue;
        }
        // X: back over at most two words to a clause mark.
        let words: Vec<&str> = before.split_whitespace().collect();
        let mut start = words.len();
        while start > 0
            && words.len() - start < 2
            && !(start < words.len() && words[start - 1].ends_with([':', ',', ';', '.']))
        {
            start -= 1;
        }
        // The marks around a value go; a currency sign before it stays
        // ("(was €9)" is "€9").
        let bare = |t: &str| {
            t.trim_end_matches(|c: char| !c.is_alphanumeric())
                .trim_start_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '$' | '€' | '£'))
                .to_owned()
        };
        let new = bare(&words[start..].join(" "));
        if !new.is_empty() {
            out.push((new, bare(old)));
        }
    }
    out
}

/// Whether two units measure the same thing: equal, or of one dimension
/// (`unit_dimensions.txt`: "mb" and "kb", "seconds" and "minutes").
pub fn same_dimension(a: &str, b: &str) -> bool {
    a == b
        || lexicon::UNIT_DIMENSIONS.iter().any(|line| {
            let mut units = line.split(' ');
            let has = |u: &str| line.split(' ').any(|x| x == u);
            units.any(|x| x == a) && has(b)
        })
}

/// Whether a sentence says a value changes: a change verb ("drop the
/// price to …", "moved to …") or an update cue ("… instead", "actually").
pub fn says_change(sentence: &str) -> bool {
    let (words, after_mark): (Vec<String>, Vec<bool>) = marked_words(sentence).into_iter().unzip();
    words.iter().enumerate().any(|(i, w)| {
        // "…, up to 9k", "for up to 6 guests", "is up to 4": a particle
        // that is a change verb, opening its clause or after a copula or a
        // preposition, before "to" is a bound ("put the cap up to 40",
        // "the fee is going up to £70" say a change).
        let opens = i == 0 || after_mark[i] || {
            let p = words[i - 1].as_str();
            lexicon::COPULAS.contains(p)
                || lexicon::DATE_PREPOSITIONS.contains(p)
                || lexicon::LIST_VALUE_LINKS.contains(p)
        };
        let bound = lexicon::PARTICLES.contains(w.as_str())
            && opens
            && words.get(i + 1).is_some_and(|n| n == "to");
        (lexicon::CHANGE_VERBS.contains(w.as_str()) && !bound)
            || lexicon::UPDATE_CUES.contains(w.as_str())
    })
}

/// The sentence's words, lowercased (runs of letters, digits and
/// apostrophes: "moved/shifted" is two), each with whether a comma, a
/// semicolon or a colon stands between it and the word before.
fn marked_words(sentence: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut mark = false;
    for c in sentence.chars().chain([' ']) {
        if c.is_alphanumeric() || c == '\'' {
            word.extend(c.to_lowercase());
        } else {
            if !word.is_empty() {
                out.push((std::mem::take(&mut word), mark));
                mark = false;
            }
            if matches!(c, ',' | ';' | ':') {
                mark = true;
            }
        }
    }
    out
}

/// Whether a word of the sentence (lowercased) is in one of `lists`.
fn has_word_of(sentence: &str, lists: &[&lexicon::WordList]) -> bool {
    marked_words(sentence)
        .iter()
        .any(|(w, _)| lists.iter().any(|l| l.contains(w)))
}

/// Whether a sentence marks its value as a new reading ("it's 12 cm
/// now", "measured again").
pub fn says_update(sentence: &str) -> bool {
    has_word_of(sentence, &[&lexicon::UPDATE_ADVERBS])
}

/// Every value with a unit among the words `ws` (`lws` lowercased), in
/// order: the word it starts at, the value and its unit.
fn values_with_unit<'a>(
    ws: &'a [super::Word<'_>],
    lws: &'a [String],
) -> impl Iterator<Item = (usize, String, String)> + 'a {
    (0..ws.len())
        .filter(|&i| value_token(ws[i].raw) && !ws[i].backticked)
        .filter_map(|i| {
            let v = fact_value(ws, lws, i);
            let unit = value_unit(&v)?;
            Some((i, v, unit))
        })
}

/// Every value with a unit in a sentence, in order ("41.2%", "63 min").
pub fn measures(sentence: &str) -> Vec<String> {
    let ws = words(sentence);
    let lws: Vec<String> = ws.iter().map(|w| w.text.to_lowercase()).collect();
    values_with_unit(&ws, &lws).map(|(_, v, _)| v).collect()
}

/// The values with a unit in a sentence that no noun right after claims:
/// "drop to 3 a week", "€17,500 now", not the "7am" of "a 7am start".
pub fn free_measures(sentence: &str) -> Vec<String> {
    let ws = words(sentence);
    let lws: Vec<String> = ws.iter().map(|w| w.text.to_lowercase()).collect();
    values_with_unit(&ws, &lws)
        .filter(|(i, v, _)| {
            // The value may take in words before it ("<month> 14"): it ends
            // at its last word, found from `i` on.
            let last = v.split_whitespace().last().unwrap_or_default();
            let end = (*i..ws.len()).find(|&j| ws[j].text == last).unwrap_or(*i);
            let claimed = !ws[end].raw.ends_with(super::CLAUSE_MARKS)
                && lws.get(end + 1).is_some_and(|w| {
                    w.chars().all(char::is_alphabetic)
                        && !lexicon::is_stop(w)
                        && !lexicon::is_closed_class(w)
                        && !lexicon::UPDATE_ADVERBS.contains(w.as_str())
                        && !lexicon::TRAILING_FILLERS.contains(w.as_str())
                });
            !claimed
        })
        .map(|(_, v, _)| v)
        .collect()
}

/// The number a value starts with ("14,000" of "€14,000", "47" of "47%").
pub fn value_number(value: &str) -> Option<String> {
    let t = value
        .split_whitespace()
        .find(|w| w.chars().any(|c| c.is_ascii_digit()))?;
    let n: String = t
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | ','))
        .collect();
    let n = n.trim_end_matches(['.', ',']).to_owned();
    (!n.is_empty()).then_some(n)
}

/// Whether a sentence names the number `n` as a word of its own ("the 250
/// was too generous", "not 47%").
pub fn names_number(sentence: &str, n: &str) -> bool {
    sentence
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '"' | '/'))
        .filter_map(value_number)
        .any(|w| w == n)
}

/// Whether a sentence denies the day of the month `day` by its number
/// after a denial lead ("so it's the 11th, not the 4th", "11 not 4").
pub fn denies_day(sentence: &str, day: &str) -> bool {
    let ws = words(sentence);
    let lws: Vec<String> = ws.iter().map(|w| w.text.to_lowercase()).collect();
    (1..ws.len()).any(|k| {
        let j = if lws[k - 1] == "the" { k - 1 } else { k };
        value_number(ws[k].text).as_deref() == Some(day)
            && j >= 1
            && lexicon::DENIAL_LEADS.iter().any(|lead| {
                let n = lead.split(' ').count();
                j >= n && lws[j - n..j].join(" ") == *lead
            })
    })
}

/// Where the phrase of at most four words that ends at word `end` starts:
/// back to a word that ends a clause (not the last one) or one `stops`
/// rejects.
fn phrase_start(
    ws: &[super::Word<'_>],
    lws: &[String],
    end: usize,
    stops: impl Fn(&str) -> bool,
) -> usize {
    let mut start = end;
    while start > 0 && end - start < 4 {
        let ends_clause = ws[start - 1].raw.ends_with(super::CLAUSE_MARKS);
        if (start != end && ends_clause) || stops(lws[start - 1].as_str()) {
            break;
        }
        start -= 1;
    }
    start
}

/// A value said to change from one value to another ("bumped the login
/// limit from 12/min to 40/min", "the launch moved from the 3rd to the 10th"):
/// the new fact and the old one, on one subject. Only where the sentence
/// says a change (a change verb or an update cue), so "we work from 9 to
/// 5" is none.
pub fn value_change(sentence: &str) -> Option<(Record, Record)> {
    let s = sentence.trim();
    // "…, down from 16" says a change by itself.
    let marked = || {
        lexicon::HISTORY_MARKERS
            .iter()
            .any(|m| m.ends_with(" from") && find_ci(s, m).is_some())
    };
    if s.ends_with('?') || !(says_change(s) || marked()) {
        return None;
    }
    let ws = words(s);
    let lws: Vec<String> = ws.iter().map(|w| w.text.to_lowercase()).collect();
    let from = lws.iter().position(|w| w == "from")?;
    // The number of a value at `i`, past a month or weekday before it
    // ("April 19").
    let number_at = |i: usize| {
        let calendar = |k: usize| {
            lws.get(k).is_some_and(|w| {
                lexicon::MONTHS.contains(w.as_str()) || lexicon::WEEKDAYS.contains(w.as_str())
            })
        };
        let i = if calendar(i) { i + 1 } else { i };
        ws.get(i)
            .is_some_and(|w| value_token(w.raw) && !w.backticked)
            .then_some(i)
    };
    let a = number_at(from + 1)?;
    let old_value = fact_value(&ws, &lws, a);
    // "workshops are £12 a head, up from £10": the clause before the
    // comma states the new value; "up from" (any change word) its old one.
    if from >= 2
        && ws[from - 2].raw.ends_with(',')
        && (lexicon::CHANGE_VERBS.contains(lws[from - 1].as_str())
            || matches!(lws[from - 1].as_str(), "up" | "down"))
    {
        let cut = super::offset_in(s, ws[from - 1].raw).filter(|&c| c > 0)?;
        let new = fact(s[..cut].trim_end().trim_end_matches(','))?;
        let subject = new.subject.clone()?;
        let old = with_unit_of(old_value, new.value());
        if value_number(&old) == value_number(new.value()) {
            return None;
        }
        return Some((
            Record::fact(&subject, new.value(), s),
            Record::fact(&subject, &old, s),
        ));
    }
    let to = (a + 1..(a + 4).min(lws.len())).find(|&i| lws[i] == "to")?;
    // "up from £10, still up to 6 a session": a "to" past a clause mark
    // is another clause's.
    if ws[a..to].iter().any(|w| w.raw.ends_with([',', ';'])) {
        return None;
    }
    let b = number_at(to + 1)?;
    let new_value = fact_value(&ws, &lws, b);
    // "from 45 to 90 seconds": the old value takes the new one's unit.
    let old_value = with_unit_of(old_value, &new_value);
    // The subject: the words before "from", past the verb that changes it
    // and the words that only say so ("went", "has gone").
    let mut end = from;
    while end > 0
        && (lexicon::CHANGE_VERBS.contains(lws[end - 1].as_str())
            || lexicon::COPULAS.contains(lws[end - 1].as_str())
            || lexicon::CHANGE_AUXILIARIES.contains(lws[end - 1].as_str()))
    {
        end -= 1;
    }
    let start = phrase_start(&ws, &lws, end, |l| {
        lexicon::is_stop(l)
            || lexicon::CHANGE_VERBS.contains(l)
            || !l.chars().any(char::is_alphabetic)
    });
    if start == end {
        return None;
    }
    let subject = lws[start..end].join(" ");
    if subject.chars().count() > 60 || subject.split_whitespace().all(lexicon::is_closed_class) {
        return None;
    }
    let record = |v: &str| Record::fact(&subject, v, s);
    Some((record(&new_value), record(&old_value)))
}

/// A bare number said of the same thing as `new` takes its unit: "20"
/// beside "75 seconds" is "20 seconds", "20" beside "64kb" is "20kb".
fn with_unit_of(old: String, new: &str) -> String {
    match (value_unit(&old), value_unit(new)) {
        (None, Some(u)) if !u.starts_with('/') && u.len() > 1 && u != "date" => {
            match new.split_once(' ') {
                Some((_, unit)) => format!("{old} {unit}"),
                None => format!("{old}{u}"),
            }
        }
        _ => old,
    }
}

/// "the ceiling is 15 min not 8", "it's 3 business days here, not 7", "on
/// the 14th instead of the 9th": the value a sentence denies after a denial
/// lead is the history of the value it states, in its unit. The stated
/// value and its subject are [`fact`]'s (or [`event`]'s).
pub fn denied_value(sentence: &str) -> Option<(Record, Record)> {
    let s = sentence.trim();
    let new = fact(s).or_else(|| event(s))?;
    let subject = new.subject.clone()?;
    let ws = words(s);
    let lws: Vec<String> = ws.iter().map(|w| w.text.to_lowercase()).collect();
    // The denied value: one right after a denial lead (`denial_leads.txt`),
    // past "the" and a month or weekday before its number.
    let dated = is_dated(new.value());
    let denied_at = |k: usize| {
        let j = date_start(&lws, k);
        lexicon::DENIAL_LEADS.iter().any(|lead| {
            let n = lead.split(' ').count();
            // "instead of"/"rather than" sets one day against another;
            // before other values it often compares things, not values.
            (n == 1 || dated) && j >= n && lws[j - n..j].join(" ") == *lead
        })
    };
    let k = (1..ws.len()).find(|&k| value_token(ws[k].raw) && !ws[k].backticked && denied_at(k))?;
    let old = with_unit_of(fact_value(&ws, &lws, k), new.value());
    if old.eq_ignore_ascii_case(new.value()) || is_dated(&old) != dated {
        return None;
    }
    let old = Record::fact(&subject, &old, s);
    Some((new, old))
}

/// A value said of a pronoun, right after it and its copula: "it's 9kg not
/// 7", "he's $30 per lesson", "that is 3 per seat" (`value_pronouns.txt`).
/// The value and the one the sentence denies right after it ("not 7"), in
/// the stated value's unit. The pronoun names no subject: the caller finds
/// one (a fact in force of that unit, or the quantity the unit measures,
/// [`quantity_of`]). A day is none: it is [`event`]'s.
pub fn pronoun_value(sentence: &str) -> Option<(String, Option<String>)> {
    let (_, ws, lws) = statement(sentence)?;
    let raw = |i: usize| ws[i].spoken();
    // The word after a pronoun and its copula: "it's", "its", "they're",
    // "it is".
    let after_copula = |i: usize| {
        let w = raw(i);
        let contracted = lexicon::VALUE_PRONOUNS.iter().any(|p| {
            w.strip_prefix(p)
                .is_some_and(|rest| ["'s", "s", "'re"].contains(&rest))
        });
        if contracted {
            return Some(i + 1);
        }
        let affirmative = |c: &String| lexicon::COPULAS.contains(c.as_str()) && !c.ends_with("n't");
        (lexicon::VALUE_PRONOUNS.contains(w.as_str()) && lws.get(i + 1).is_some_and(affirmative))
            .then_some(i + 2)
    };
    let vi = (0..ws.len()).find_map(|i| {
        let mut j = after_copula(i)?;
        while lws.get(j).is_some_and(|w| {
            lexicon::FACT_SKIP_WORDS.contains(w.as_str())
                || lexicon::UPDATE_ADVERBS.contains(w.as_str())
        }) {
            j += 1;
        }
        ws.get(j)
            .is_some_and(|w| value_token(w.raw) && !w.backticked)
            .then_some(j)
    })?;
    let value = fact_value(&ws, &lws, vi);
    if value_unit(&value).is_none_or(|u| u == "date") {
        return None;
    }
    Some((value.clone(), value_denied(&ws, &lws, vi, &value)))
}

/// The digits of a whole count written either way: "12", "1,200" or
/// "twelve".
fn count_digits(w: &str) -> Option<String> {
    if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == ',') {
        let digits: String = w.chars().filter(char::is_ascii_digit).collect();
        return (!digits.is_empty()).then_some(digits);
    }
    lexicon::NUMBER_WORDS.iter().find_map(|line| {
        let (word, digits) = line.split_once(' ')?;
        (word == w).then(|| digits.trim().to_owned())
    })
}

/// Whether a lowercase word is the plural of a known noun ("rows",
/// "people"): the noun a number counts.
fn plural_noun(w: &str) -> bool {
    lexicon::IRREGULAR_PLURALS.contains(w)
        || (w.len() >= 4
            && w.chars().all(|c| c.is_ascii_lowercase())
            && w.ends_with('s')
            && !w.ends_with("ss")
            && !w.ends_with("us")
            && !w.ends_with("is")
            && !lexicon::is_stop(w)
            && !lexicon::is_closed_class(w)
            && ((lexicon::is_known_word(w) && lexicon::is_known_word(&w[..w.len() - 1]))
                // "loaves", "depots": WordNet knows the noun.
                || lexicon::names_a_thing(w).is_some()))
}

/// Whether `w` names things that are counted one by one ("members",
/// "depots"): a [plural noun](plural_noun), neither a unit of measure
/// ("minutes", "kg") nor a part of what is said next ("two questions:").
fn counted_noun(w: &str) -> bool {
    plural_noun(w)
        && !lexicon::DISCOURSE_NOUNS.contains(w)
        && !lexicon::UNIT_DIMENSIONS
            .iter()
            .any(|line| line.split_whitespace().any(|u| u == w))
}

/// "9 volunteers so far", "so we're down to 7 volunteers", "it's five
/// kilns not three": a count of a plural noun that is what the sentence
/// states, nothing but leading words before it, as "12 members", with
/// the count the sentence denies ("not four", "not 25") in the same
/// noun.
pub fn count_value(sentence: &str) -> Option<(String, Option<String>)> {
    let (_, ws, _) = statement(sentence)?;
    let said: Vec<String> = ws.iter().map(super::Word::spoken).collect();
    let at = said.iter().position(|w| {
        !(lexicon::COUNT_LEADS.contains(w.as_str()) || lexicon::INTERJECTIONS.contains(w.as_str()))
    })?;
    // The number as written: "£1,080" and "50%" are measures, "1)" a
    // list's mark.
    let written = ws[at].raw.trim_end_matches([',', '.', ';', ':', '!']);
    if written.chars().any(|c| !c.is_alphanumeric() && c != ',') {
        return None;
    }
    let n = count_digits(&said[at])?;
    let noun = said.get(at + 1).filter(|w| counted_noun(w))?;
    // "40 requests per hour" is a rate; "two lab benches" counts the
    // last noun.
    if said
        .get(at + 2)
        .is_some_and(|w| w == "per" || plural_noun(w))
    {
        return None;
    }
    // "3 services: …": a list opened, not a count stated.
    if ws[at + 1].raw.ends_with(':') {
        return None;
    }
    // Without a copula before it ("it's", "we're"), a count opening the
    // sentence is a value only when nothing but its adverbs, a clause
    // mark or a link follows ("9 volunteers so far", "5 tutors on the
    // evening course"); "three tutors asked …" is a clause's subject.
    let copula = said[..at]
        .iter()
        .any(|w| lexicon::COPULAS.contains(w.as_str()) || w.contains('\''));
    let mut k = at + 2;
    while said
        .get(k)
        .is_some_and(|w| lexicon::COUNT_ADVERBS.contains(w.as_str()))
        && !ws[k - 1].raw.ends_with(super::CLAUSE_MARKS)
    {
        k += 1;
    }
    let stated = k >= said.len()
        || ws[k - 1].raw.ends_with(super::CLAUSE_MARKS)
        || lexicon::COUNT_LINKS.contains(said[k].as_str());
    if !copula && !stated {
        return None;
    }
    // The count denied: "not" and a count later in the sentence, the
    // only one.
    let mut denied = (at + 2..said.len())
        .filter(|&i| said[i - 1] == "not")
        .filter_map(|i| count_digits(&said[i]));
    let old = denied.next().filter(|d| *d != n);
    let old = if denied.next().is_some() { None } else { old };
    Some((format!("{n} {noun}"), old.map(|d| format!("{d} {noun}"))))
}

/// The value a sentence denies right after the value `value` at word `vi`
/// ("9kg not 7", "50 per run, not 20"), in the stated value's unit.
fn value_denied(ws: &[super::Word<'_>], lws: &[String], vi: usize, value: &str) -> Option<String> {
    let after = vi + value.split_whitespace().count();
    let denied = lexicon::DENIAL_LEADS.iter().find_map(|lead| {
        let n = lead.split(' ').count();
        let at = after + n;
        (lws.get(after..at)?.join(" ") == *lead
            && ws
                .get(at)
                .is_some_and(|w| value_token(w.raw) && !w.backticked))
        .then(|| fact_value(ws, lws, at))
    });
    // "€15/month not 11": a bare number is the stated value with its number.
    let denied = denied.map(|d| match (value_unit(&d), value_number(value)) {
        (None, Some(n)) => value.replacen(&n, &d, 1),
        _ => d,
    });
    denied.filter(|d| !d.eq_ignore_ascii_case(value))
}

/// A value with a unit that the sentence sets against another right after
/// it, with no subject of its own: "she wants 50 reviews per page, not
/// 20", "we need 4 replicas, not 2". The value and the one denied, in the
/// stated value's unit; the caller finds the subject ([`pronoun_value`]'s
/// way, or the counted noun itself). A day is none.
pub fn denied_measure(sentence: &str) -> Option<(String, String)> {
    let (_, ws, lws) = statement(sentence)?;
    values_with_unit(&ws, &lws)
        .filter(|(_, _, unit)| unit != "date")
        .find_map(|(vi, value, _)| {
            let denied = value_denied(&ws, &lws, vi, &value)?;
            Some((value, denied))
        })
}

/// "the clinic phoned, it's now wednesday 11th at 10:45", "we shifted it
/// to Sunday 28 June": a day said of a thing pronoun (`thing_pronouns.txt`: "it",
/// "it's", "its") with a change or update cue and no subject of its own.
/// The day; the caller finds what "it" is (the dated fact talked about
/// last).
pub fn pronoun_day(sentence: &str) -> Option<String> {
    let (s, ws, lws) = statement(sentence)?;
    if !(says_change(s) || says_update(s)) || fact(s).is_some() || event(s).is_some() {
        return None;
    }
    // "it" right before the day, past a cue ("it's now …", "moved it to
    // …"): the day is what "it" is moved to, not one said elsewhere.
    let thing = |i: usize| {
        let w = lws[i].replace('\u{2019}', "'");
        let w = w
            .strip_suffix("'s")
            // "its now …" written without the apostrophe.
            .or_else(|| {
                w.strip_suffix('s')
                    .filter(|b| lexicon::THING_PRONOUNS.contains(b))
            })
            .unwrap_or(&w);
        lexicon::THING_PRONOUNS.contains(w)
    };
    (0..ws.len())
        .filter(|&i| value_token(ws[i].raw))
        .filter_map(|vi| day_at(&ws, &lws, vi))
        .find(|&(_, k)| (k.saturating_sub(3)..k).any(thing))
        .map(|(value, _)| value)
}

/// "79 not 49", "1212 not 1240": a bare number the sentence sets against
/// another right after it, with no unit and no subject. The number and the
/// one denied; the caller finds the fact in force whose value the denied
/// number is.
pub fn denied_number(sentence: &str) -> Option<(String, String)> {
    let (_, ws, lws) = statement(sentence)?;
    let bare = |t: &str| {
        let t = t.trim_end_matches(['.', ',', '!', ';']);
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, ',' | '.'))
    };
    (0..ws.len()).find_map(|vi| {
        if !bare(ws[vi].raw) || ws[vi].backticked {
            return None;
        }
        let value = ws[vi].text.trim_end_matches(['.', ',']).to_owned();
        let denied = value_denied(&ws, &lws, vi, &value)?;
        bare(&denied).then_some((value, denied))
    })
}

/// The quantity a value measures (`unit_quantities.txt`): "weight" for
/// "9kg", "price" for "$30 per lesson" (a currency sign opening the value
/// names it, whatever follows).
pub fn quantity_of(value: &str) -> Option<&'static str> {
    let v = value.trim().to_lowercase();
    let sign = v
        .chars()
        .next()
        .filter(|c| !c.is_alphanumeric())
        .map(String::from);
    let unit = sign.or_else(|| {
        value_unit(&v).map(|u| u.split_whitespace().next().unwrap_or_default().to_owned())
    })?;
    lexicon::UNIT_QUANTITIES.iter().find_map(|line| {
        let (name, units) = line.split_once(':')?;
        units
            .split_whitespace()
            .any(|u| u == unit)
            .then(|| name.trim())
    })
}

/// A number with its unit and no subject ("ok so 12 per node"): the value
/// and its unit ("per node"), for the fact whose value has the same unit.
pub fn bare_quantity(sentence: &str) -> Option<(String, String)> {
    let (_, ws, lws) = statement(sentence)?;
    let vi = ws.iter().position(|w| value_token(w.raw))?;
    // "40/min": the unit glued on.
    let glued = ws[vi]
        .text
        .split_once('/')
        .filter(|(n, u)| {
            n.chars().any(|c| c.is_ascii_digit())
                && u.chars().all(char::is_alphabetic)
                && !u.is_empty()
        })
        .map(|(_, u)| format!("/{}", u.to_lowercase()));
    if ws[vi].backticked
        || (glued.is_none()
            && !lws
                .get(vi + 1)
                .is_some_and(|n| lexicon::UNIT_WORDS.contains(n.as_str())))
    {
        return None;
    }
    let value = fact_value(&ws, &lws, vi);
    if let Some(unit) = glued {
        let others = ws.len().saturating_sub(1);
        if others > 3 || ws.iter().filter(|w| value_token(w.raw)).count() > 1 {
            return None;
        }
        return Some((ws[vi].text.to_owned(), unit));
    }
    // Only the number and a few words around it ("ok so 12 per node",
    // "make it 8 per node"): a longer sentence has a subject of its own.
    let others = ws.len().saturating_sub(value.split_whitespace().count());
    if others > 3 || ws.iter().filter(|w| value_token(w.raw)).count() > 1 {
        return None;
    }
    let unit = value.split_once(' ')?.1.to_lowercase();
    Some((value, unit))
}

/// A fact: a number, limit, date or deadline with its subject
/// ("request timeout: 3 s", "demo: the 14th").
pub fn fact(sentence: &str) -> Option<Record> {
    let (s, ws, lws) = statement(sentence)?;
    // The value: the first value token with a subject, else the first date
    // after a deadline word ("ship 1.4.0 latest on 3 May").
    let values: Vec<usize> = (0..ws.len()).filter(|&i| value_token(ws[i].raw)).collect();
    let first = *values.first()?;
    // "the limit is not 70, it is 80": the subject of the value denied
    // takes the value said after it.
    let denied = |vi: usize| vi > 0 && (lws[vi - 1] == "not" || lws[vi - 1].ends_with("n't"));
    if denied(first)
        && let Some(&then) = values.iter().find(|&&v| v > first && !denied(v))
        && let Some(r) = fact_at(s, &ws, &lws, first, true)
        && let Some(subject) = r.subject
    {
        let value = fact_value(&ws, &lws, then);
        return Some(Record::fact(&subject, &value, s));
    }
    fact_at(s, &ws, &lws, first, false)
        .or_else(|| values.iter().find_map(|&vi| deadline_at(s, &ws, &lws, vi)))
}

/// "…, so bump UPLOAD_TIMEOUT_S to 40s": a clause of its own, led by a
/// change verb, that sets the value at `vi` of a subject it names. The
/// clause runs from the last comma or semicolon before the value.
fn changed_in_clause(s: &str, ws: &[Word<'_>], vi: usize) -> Option<Record> {
    let from = (0..vi).rev().find(|&i| ws[i].raw.ends_with([',', ';']))? + 1;
    let start = super::offset_in(s, ws.get(from)?.raw)?;
    let clause = super::decisions::strip_clause_lead(&s[start..]);
    let verb = clause.split_whitespace().next()?.to_lowercase();
    if !lexicon::CHANGE_VERBS.contains(&verb) {
        return None;
    }
    let r = fact(clause)?;
    let value = fact_value(
        ws,
        &ws.iter().map(|w| w.text.to_lowercase()).collect::<Vec<_>>(),
        vi,
    );
    (r.subject.is_some() && r.value() == value).then(|| Record {
        sentence: s.to_owned(),
        ..r
    })
}

/// The facts a sentence states after its first, each linked to its own
/// subject by the sentence's shape: "the venue is Saturday 4 May, and the
/// ticket price is now £12, not £10" → "ticket price: £12"; "hall rental
/// £480, catering £900" → "catering: £900". A value denied ("not £10"),
/// compared ("versus £9") or the start of a range is none.
pub fn later_facts(sentence: &str) -> Vec<Record> {
    let Some((s, ws, lws)) = statement(sentence) else {
        return Vec::new();
    };
    let values: Vec<usize> = (0..ws.len()).filter(|&i| value_token(ws[i].raw)).collect();
    let mut out: Vec<Record> = Vec::new();
    let mut taken = values.first().map_or(0, |&f| f + 1);
    for &vi in values.iter().skip(1) {
        if vi < taken || lws[vi - 1].ends_with("n't") {
            continue;
        }
        // "5 to 10" is a range; "…, so bump X to 40s" a clause's change.
        let found = if lws[vi - 1] == "to" {
            changed_in_clause(s, &ws, vi)
        } else if lexicon::LATER_VALUE_SKIPS.contains(lws[vi - 1].as_str()) {
            None
        } else {
            fact_linked(s, &ws, &lws, vi, false).and_then(|(r, linked)| linked.then_some(r))
        };
        let Some(r) = found else {
            continue;
        };
        taken = vi + r.value().split_whitespace().count();
        if out.iter().all(|o| o.subject != r.subject) {
            out.push(r);
        }
    }
    out
}

/// What happens on a day of every week: "pool cleaning on <day>s",
/// "standup every <day>", "backups on <day> nights" → "pool cleaning:
/// <day>s". The weekday recurs (a plural, "every", or a plural part of
/// the day after it); the subject is the few content words right before
/// "on" or "every". A one-off day ("he's away on <day>") is none; a
/// denied one ("no deploys on <day>s") is a rule.
pub fn schedule_facts(sentence: &str) -> Vec<Record> {
    let Some((s, ws, lws)) = statement(sentence) else {
        return Vec::new();
    };
    let mut out: Vec<Record> = Vec::new();
    for k in 1..ws.len() {
        let day = lws[k].as_str();
        if !lexicon::is_weekday(day) || ws[k].backticked {
            continue;
        }
        let lead = lws[k - 1].as_str();
        if lead != "on" && lead != "every" {
            continue;
        }
        let plural = |w: &str| w.len() > 1 && w.ends_with('s');
        let part = lws
            .get(k + 1)
            .filter(|_| !ws[k].raw.ends_with(super::CLAUSE_MARKS))
            .filter(|p| lexicon::DAY_PARTS.contains(p.strip_suffix('s').unwrap_or(p)));
        // A day's plural is of its full name: "thurs" and "weds" are one
        // day each (short forms run to four letters).
        let plural_day = !lexicon::WEEKDAYS.contains(day)
            && day
                .strip_suffix('s')
                .is_some_and(|one| one.len() > 4 && lexicon::WEEKDAYS.contains(one));
        let recurs = lead == "every" || plural_day || part.is_some_and(|p| plural(p));
        if !recurs {
            continue;
        }
        // "standup is on <day>s", "the audit stays on <day>s": the link is
        // no part of the subject.
        let mut end = k - 1;
        while end > 0 && lexicon::PLAIN_SUBJECT_LINKS.contains(lws[end - 1].as_str()) {
            end -= 1;
        }
        let start = phrase_start(&ws, &lws, end, |l| {
            lexicon::is_stop(l)
                || lexicon::is_closed_class(l)
                || lexicon::SUBORDINATORS.contains(l)
                || lexicon::INTERJECTIONS.contains(l)
        });
        if start == end || ws[end - 1].raw.ends_with(super::CLAUSE_MARKS) {
            continue;
        }
        // The subject opens its clause, past a determiner: "collect the van
        // on weekends" says when of the collecting, not of the van.
        let mut before = start;
        while before > 0 && lexicon::DETERMINERS.contains(lws[before - 1].as_str()) {
            before -= 1;
        }
        if before > 0
            && !ws[before - 1].raw.ends_with(super::CLAUSE_MARKS)
            && !lexicon::is_stop(&lws[before - 1])
        {
            continue;
        }
        if start > 0 && lexicon::NEGATORS.contains(lws[start - 1].as_str()) {
            let rule =
                strip_clause_keep_commas(&s[super::offset_in(s, ws[start - 1].raw).unwrap_or(0)..]);
            out.push(Record {
                kind: NodeKind::Restriction,
                label: cap_first(&truncate_words(rule, 16)),
                subject: None,
                sentence: s.to_owned(),
            });
            continue;
        }
        let named = ws[start..end]
            .iter()
            .all(|w| w.text.chars().all(|c| c.is_alphabetic() || c == '-') && !value_token(w.raw));
        if !named {
            continue;
        }
        let subject = lws[start..end].join(" ");
        let mut value = ws[k].text.trim_end_matches(super::CLAUSE_MARKS).to_owned();
        if let Some(p) = part {
            value = format!("{value} {}", p.trim_end_matches(super::CLAUSE_MARKS));
        }
        if out
            .iter()
            .all(|r| r.subject.as_deref() != Some(subject.as_str()))
        {
            out.push(Record::fact(&subject, &value, s));
        }
    }
    out
}

/// An event on a day said with a pronoun as its subject, anywhere in the
/// sentence, beside any other fact in it: "the lease ends on May 2, so we
/// travel on Friday May 3" → "travel: Friday May 3".
pub fn event(sentence: &str) -> Option<Record> {
    let (s, ws, lws) = statement(sentence)?;
    let values: Vec<usize> = (0..ws.len()).filter(|&i| value_token(ws[i].raw)).collect();
    values
        .iter()
        .find_map(|&vi| event_at(s, &ws, &lws, vi))
        .or_else(|| values.iter().find_map(|&vi| dated_at(s, &ws, &lws, vi)))
        .filter(names_a_subject)
}

/// A calendar date said after what happens on it, with no verb to link
/// them: "the new boards arrive <date>", "lab slot for <date>", "race day:
/// <date>". The subject is the words right before the date (past a
/// preposition), as said. Only a date with a month or a weekday counts.
fn dated_at(s: &str, ws: &[super::Word<'_>], lws: &[String], vi: usize) -> Option<Record> {
    let (value, k) = day_at(ws, lws, vi)?;
    if about_another(ws, lws, k) {
        return None;
    }
    if !value.split_whitespace().any(|w| {
        let l = w.to_lowercase();
        lexicon::MONTHS.contains(l.trim_end_matches('.')) || lexicon::WEEKDAYS.contains(&l)
    }) {
        return None;
    }
    // Past the linking words before the date: "for", "on", "is", "now" …
    let mut end = k;
    while end > 0
        && (lexicon::FACT_LINKERS.contains(lws[end - 1].as_str())
            || lexicon::DATE_PREPOSITIONS.contains(lws[end - 1].as_str())
            || lexicon::FACT_SKIP_WORDS.contains(lws[end - 1].as_str())
            || lexicon::COPULAS.contains(lws[end - 1].as_str())
            // "the kickoff would be <date>".
            || (lexicon::MODALS.contains(lws[end - 1].as_str())
                && lws.get(end).is_some_and(|w| w == "be")))
        && !ws[end - 1].raw.ends_with([',', ';', '.'])
    {
        end -= 1;
    }
    let start = phrase_start(ws, lws, end, |l| {
        lexicon::is_stop(l)
            || lexicon::INTERJECTIONS.contains(l)
            || lexicon::REPORTING_VERBS.contains(l)
            || lexicon::SUBJECT_PRONOUNS.contains(l)
            // A dash standing alone ends a clause: "checked — packers …".
            || (!l.is_empty() && l.chars().all(|c| matches!(c, '-' | '–' | '—')))
    });
    let subject: Vec<String> = ws[start..end]
        .iter()
        .map(|w| w.text.trim_end_matches([',', ':', ';']).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    let content = subject
        .iter()
        .filter(|w| {
            w.chars().any(char::is_alphabetic)
                && !lexicon::is_stop(w)
                && !lexicon::is_closed_class(w)
        })
        .count();
    if content == 0 || subject.iter().any(|w| value_token(w)) {
        return None;
    }
    let subject = subject.join(" ");
    Some(Record::fact(&subject, &value, s))
}

/// Whether the clause before word `k` is about another person ("a buyer
/// who wants to move in from …"): a person's relative pronoun
/// (`person_relatives.txt`) within six words, with no clause mark between.
fn about_another(ws: &[super::Word<'_>], lws: &[String], k: usize) -> bool {
    (k.saturating_sub(6)..k)
        .rev()
        .take_while(|&i| !ws[i].raw.ends_with([',', ';', '.', ':', '!', '?']))
        .any(|i| lexicon::PERSON_RELATIVES.contains(lws[i].as_str()))
}

/// Whether a fact value names a day: a month, a weekday or an ordinal.
fn is_dated(value: &str) -> bool {
    value.split_whitespace().any(|w| {
        let l = w.to_lowercase();
        lexicon::MONTHS.contains(l.as_str())
            || lexicon::WEEKDAYS.contains(l.as_str())
            || (l.len() > 2
                && ["st", "nd", "rd", "th"].iter().any(|x| l.ends_with(x))
                && l[..l.len() - 2].chars().all(|c| c.is_ascii_digit()))
    })
}

/// The value at word `vi` when it names a day, with the index of the date's
/// first word (see [`date_start`]); `None` for a backticked or undated value.
fn day_at(ws: &[super::Word<'_>], lws: &[String], vi: usize) -> Option<(String, usize)> {
    if ws[vi].backticked {
        return None;
    }
    let value = fact_value(ws, lws, vi);
    is_dated(&value).then(|| (value, date_start(lws, vi)))
}

/// The index of the first word of the date that ends at `vi`: past "the"
/// and a month or weekday before the number.
fn date_start(lws: &[String], vi: usize) -> usize {
    let mut k = vi;
    while k > 0 {
        let w = lws[k - 1].as_str();
        if w == "the" || lexicon::MONTHS.contains(w) || lexicon::WEEKDAYS.contains(w) {
            k -= 1;
        } else {
            break;
        }
    }
    k
}

/// An event on a day, said with a pronoun as subject: "we travel on Friday
/// May 3" → "travel: Friday May 3". The verb names the event; a later fact
/// on the same subject ("we travel on Friday May 10", "the travel is now
/// May 10") updates it.
fn event_at(s: &str, ws: &[super::Word<'_>], lws: &[String], vi: usize) -> Option<Record> {
    let (value, k) = day_at(ws, lws, vi)?;
    if about_another(ws, lws, k) {
        return None;
    }
    if k < 3 || lws[k - 1] != "on" {
        return None;
    }
    let event = lws[k - 2].as_str();
    // "we move on …", "he can start on …", "they'll arrive on …".
    let subject = match lws[k - 3].as_str() {
        m if k >= 4 && lexicon::MODALS.contains(m) => lws[k - 4].as_str(),
        w => w
            .strip_suffix("'ll")
            .or_else(|| w.strip_suffix("’ll"))
            .unwrap_or(w),
    };
    let plain = |w: &str| w.len() >= 3 && w.chars().all(|c| c.is_ascii_alphabetic());
    if !plain(event)
        || !lexicon::EVENT_SUBJECTS.contains(subject)
        // Not a function word ("we are on …"); an ordinary verb may be a
        // stop word of topics ("move") and still name the event.
        || lexicon::zipf(event).is_some_and(|z| z >= 6.5)
        || lexicon::INTERJECTIONS.contains(event)
        || lexicon::MONTHS.contains(event)
        || lexicon::WEEKDAYS.contains(event)
        || ws[k - 2].raw.ends_with([',', '.', ';', ':'])
    {
        return None;
    }
    // "Friday May 3": the value with its weekday when one was said.
    let value = if k < vi
        && lexicon::WEEKDAYS.contains(lws[k].as_str())
        && !value.starts_with(ws[k].text)
    {
        format!("{} {value}", ws[k].text)
    } else {
        value
    };
    Some(Record::fact(event, &value, s))
}

/// A date after a deadline word ("by the 9th", "latest on 3 May"),
/// as a fact about what is due: the object before the word when there is
/// one ("audit report deadline: the 9th"), else "deadline".
fn deadline_at(s: &str, ws: &[super::Word<'_>], lws: &[String], vi: usize) -> Option<Record> {
    // `k`: the words before the value, past "the" and a month or weekday.
    let (value, k) = day_at(ws, lws, vi)?;
    let before = lws[..k].join(" ");
    let cue = lexicon::DEADLINE_CUES
        .iter()
        .filter(|c| before.ends_with(&format!(" {c}")) || before == **c)
        .max_by_key(|c| c.len())?;
    let cue_words = cue.split_whitespace().count();
    let head = k.checked_sub(cue_words)?;
    let object: Vec<&str> = lws[..head]
        .iter()
        .rev()
        .take_while(|w| {
            w.chars().all(|c| c.is_alphanumeric() || c == '-')
                && !lexicon::is_stop(w)
                && !lexicon::is_closed_class(w)
        })
        .filter(|w| !value_token(w))
        .take(2)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let subject = if object.is_empty() {
        "deadline".to_owned()
    } else {
        format!("{} deadline", object.join(" "))
    };
    Some(Record::fact(&subject, &value, s))
}

/// The fact with its value at word `vi`, when a subject is found for it.
/// `denied`: the value is one the sentence denies ("is not 70"): the
/// negation links the subject like the copula before it.
fn fact_at(
    s: &str,
    ws: &[super::Word<'_>],
    lws: &[String],
    vi: usize,
    denied: bool,
) -> Option<Record> {
    fact_linked(s, ws, lws, vi, denied).map(|(r, _)| r)
}

/// [`fact_at`], and whether the subject is the one the sentence's shape
/// links to the value (a linking verb, or an item of a list) rather than a
/// head noun found elsewhere.
fn fact_linked(
    s: &str,
    ws: &[super::Word<'_>],
    lws: &[String],
    vi: usize,
    denied: bool,
) -> Option<(Record, bool)> {
    fact_of_subject(s, ws, lws, vi, denied).filter(|(r, _)| names_a_subject(r))
}

/// "the week of 3 March": a unit of time the value is "of" names no
/// subject; the value is a time, not what happens then.
fn names_a_subject(r: &Record) -> bool {
    r.subject.as_deref().is_none_or(|sub| {
        let sub = sub.trim();
        !(lexicon::UNIT_WORDS.contains(sub)
            && find_ci(&r.sentence, &format!("{sub} of {}", r.value())).is_some())
    })
}

fn fact_of_subject(
    s: &str,
    ws: &[super::Word<'_>],
    lws: &[String],
    vi: usize,
    denied: bool,
) -> Option<(Record, bool)> {
    // A file, version of code or identifier is not a fact value.
    if ws[vi].backticked {
        return None;
    }
    let value = fact_value(ws, lws, vi);
    // "choir 6 till 8pm": the start of a range is no value of its own
    // ("to" and "and" join more than ranges).
    let last = value.split_whitespace().last().unwrap_or_default();
    let after = (vi..ws.len()).find(|&i| ws[i].text == last).unwrap_or(vi) + 1;
    if !ws[after - 1].raw.ends_with(super::CLAUSE_MARKS)
        && lws
            .get(after)
            .is_some_and(|w| w != "to" && w != "and" && lexicon::RANGE_JOINERS.contains(w.as_str()))
        && ws.get(after + 1).is_some_and(|w| value_token(w.raw))
    {
        return None;
    }
    if is_dated(&value) && about_another(ws, lws, date_start(lws, vi)) {
        return None;
    }
    // The subject: the noun phrase before a linking verb ahead of the value,
    // or the words right before the value.
    let mut end = vi;
    // "msrv is 1.76": a copula right before the value links a subject that
    // needs no head noun.
    let mut linked = false;
    let mut at_time = false;
    while end > 0 {
        let w = lws[end - 1].as_str();
        // "the launch moved to the 10th": a change to a value links like "is now".
        let changed_to = w == "to"
            && end >= 2
            && lexicon::CHANGE_VERBS.contains(lws[end - 2].as_str())
            && end - 2 > 0;
        if changed_to {
            linked = true;
            end -= 2;
            // "the deposit went up to …", "came down to …": the verb
            // before a particle.
            while end > 1
                && (lexicon::CHANGE_VERBS.contains(lws[end - 1].as_str())
                    || lexicon::PARTICLES.contains(lws[end - 1].as_str()))
            {
                end -= 1;
            }
            // "the launch got moved to …", "has been pushed to …".
            while end > 1 && lexicon::AUXILIARIES.contains(lws[end - 1].as_str()) {
                end -= 1;
            }
            continue;
        }
        // "the kickoff will be the 12th": a modal of what is to come
        // and "be" link like "is" ("might be" only guesses).
        if w == "be"
            && end >= 3
            && lexicon::MODALS.contains(lws[end - 2].as_str())
            && !lexicon::GUESSING_MODALS.contains(lws[end - 2].as_str())
        {
            linked = true;
            end -= 2;
            break;
        }
        // "the build took 9 minutes", "latency peaked at 800 ms": a verb
        // of measuring links the words before it.
        if end >= 2 && lexicon::MEASURE_VERBS.contains(w) {
            linked = true;
            end -= 1;
            break;
        }
        if lexicon::PLAIN_SUBJECT_LINKS.contains(w) || (denied && lexicon::COPULAS.contains(w)) {
            linked = true;
        }
        // "gates at 7:15 pm", "standup at 9:15": a clock time right after
        // "at" is the time of what the words before it name.
        if w == "at" && end == vi && clock_time(&value) {
            linked = true;
            at_time = true;
        }
        if lexicon::FACT_LINKERS.contains(w)
            || (denied && (w == "not" || lexicon::COPULAS.contains(w)))
            || w == "the"
            || lexicon::is_weekday(w)
            || lexicon::MONTHS.contains(w)
            || lexicon::FACT_SKIP_WORDS.contains(w)
        {
            end -= 1;
        } else {
            break;
        }
    }
    // "my knee hurts, drop to 3 a week": a clause ends right before.
    if end > 0 && ws[end - 1].raw.ends_with([',', ';']) {
        end = 0;
    }
    let mut start = phrase_start(ws, lws, end, |l| {
        (lexicon::is_stop(l) && !lexicon::FACT_SUBJECT_HEADS.contains(l))
            || lexicon::INTERJECTIONS.contains(l)
            || lexicon::REPORTING_VERBS.contains(l)
            || lexicon::CORRECTION_OPENERS.contains(l)
            // "…, since the queue depth is 64": a subordinator opens the clause.
            || lexicon::SUBORDINATORS.contains(l)
    });
    // "the notice period": after a determiner a reporting verb's form is a
    // noun of the subject.
    if start >= 2
        && start < end
        && lexicon::REPORTING_VERBS.contains(lws[start - 1].as_str())
        && lexicon::DETERMINERS.contains(lws[start - 2].as_str())
        && !ws[start - 1].raw.ends_with(super::CLAUSE_MARKS)
    {
        start -= 1;
    }
    // "over the cap by £90": a difference, not the cap.
    // The lead opens the subject or comes right before it, past a
    // determiner ("over the cap").
    let lead_at = |k: usize| lexicon::DIFFERENCE_LEADS.contains(lws[k].as_str());
    let before = start.checked_sub(1).map(|k| {
        if k > 0 && lexicon::DETERMINERS.contains(lws[k].as_str()) {
            k - 1
        } else {
            k
        }
    });
    if end < vi
        && start < end
        && lws[end] == "by"
        && (lead_at(start) || before.is_some_and(lead_at))
    {
        return None;
    }
    // "before the close, which is Friday the 23rd": the relative pronoun
    // stands for the noun phrase before its comma.
    if start == end
        && end >= 2
        && lexicon::RELATIVE_PRONOUNS.contains(lws[end - 1].as_str())
        && ws[end - 2].raw.ends_with(',')
    {
        end -= 1;
        start = phrase_start(ws, lws, end, lexicon::is_stop);
    }
    // "we land at 7:40": after a subject pronoun the word is its verb.
    // The few words before "at" open their clause (past a determiner:
    // "so the gates open at 7:15"), none is a number ("the 9th at 4pm")
    // and the first is no verb in the past ("then rang at 4pm"; "x paged
    // at 09:12" is a time line's entry).
    if at_time {
        let opens = |k: usize| {
            k == 0
                || ws[k - 1].raw.ends_with([',', ';', ':'])
                || lexicon::COORDINATORS.contains(lws[k - 1].as_str())
                || lexicon::CLAUSE_CONNECTIVES.contains(lws[k - 1].as_str())
        };
        let opening = opens(start)
            || (start > 0
                && lexicon::DETERMINERS.contains(lws[start - 1].as_str())
                && opens(start - 1));
        let plain = lws[start..end]
            .iter()
            .all(|w| w.chars().all(|c| c.is_alphabetic() || c == '-'))
            && lws
                .get(start)
                .is_some_and(|w| !w.ends_with("ed") && !lexicon::PAST_FORMS.contains(w.as_str()));
        if !opening || !plain {
            linked = false;
        }
    }
    // "low 3 high 9": a one-word item right after another's value, when
    // that one opens its clause, names the value after it.
    let item_after_item = !linked
        && end == vi
        && end >= 3
        && start + 3 <= end
        && value_token(ws[end - 2].raw)
        && !ws[end - 2].raw.ends_with(super::CLAUSE_MARKS)
        && fact_value(ws, lws, end - 2).split_whitespace().count() == 1
        && [end - 1, end - 3].iter().all(|&k| content_word(&lws[k]))
        && (end == 3 || ws[end - 4].raw.ends_with([',', ':', ';']));
    if item_after_item {
        start = end - 1;
    }
    let mut subject_words: Vec<String> = ws[start..end]
        .iter()
        .map(|w| w.text.to_lowercase())
        .collect();
    // "bump retries to 5": the verb that changes it is no part of the
    // subject; nor is "measured" in "standby draw measured at 3.2 mA".
    if subject_words.len() >= 2 && lexicon::CHANGE_VERBS.contains(subject_words[0].as_str()) {
        subject_words.remove(0);
    }
    // "move the review to the 12th": the verb before the subject links it
    // to the value after "to".
    if lws.get(end).is_some_and(|w| w == "to") {
        let mut k = start;
        while k > 0
            && start - k < 2
            && lexicon::is_stop(&lws[k - 1])
            && !lexicon::CHANGE_VERBS.contains(lws[k - 1].as_str())
        {
            k -= 1;
        }
        if k > 0 && lexicon::CHANGE_VERBS.contains(lws[k - 1].as_str())
            || subject_words.len() < end - start
        {
            linked = true;
        }
    }
    if subject_words.len() >= 2
        && subject_words
            .last()
            .is_some_and(|w| w.ends_with("ed") && lexicon::is_known_word(w))
    {
        subject_words.pop();
    }
    let mut subject = subject_words.join(" ");
    let has_head = |t: &str| {
        t.split_whitespace().any(|w| {
            lexicon::FACT_SUBJECT_HEADS.contains(stem(w).as_str())
                || lexicon::FACT_SUBJECT_HEADS.contains(w)
        })
    };
    let plain_subject = linked
        && (1..=3).contains(&subject.split_whitespace().count())
        && subject.split_whitespace().all(|w| {
            w.chars().any(|c| c.is_alphabetic())
                && !lexicon::is_stop(w)
                && !lexicon::is_closed_class(w)
        });
    let after_value = vi + value.split_whitespace().count();
    // A list item's name and a label are content words only, and the value
    // they name is no version ("3.2.1").
    let named_plainly = subject.split_whitespace().all(content_word)
        && !(value.split_whitespace().count() == 1 && version_token(&value, false));
    // "hall rental £480, catering £900": an item of a list, a few content
    // words opening their clause right before a value that closes it (or
    // goes on with what it is for or per), names that value.
    let listed = !linked
        && end == vi
        && (1..=3).contains(&(end - start))
        && (start == 0 || ws[start - 1].raw.ends_with([',', ':', ';']) || item_after_item)
        && !ws[start..end]
            .iter()
            .any(|w| w.raw.ends_with(super::CLAUSE_MARKS))
        && named_plainly
        && (after_value >= ws.len()
            || ws[after_value - 1].raw.ends_with(super::CLAUSE_MARKS)
            || lexicon::LIST_VALUE_LINKS.contains(lws[after_value].as_str())
            // "editor 0.3 FTE £15,000,": a second value of the item.
            || (value_token(ws[after_value].raw)
                && (after_value + 1 >= ws.len()
                    || ws[after_value].raw.ends_with(super::CLAUSE_MARKS)))
            // "low 3 high 9": the next item follows without a comma.
            || (after_value == vi + 1
                && ws.get(after_value + 1).is_some_and(|w| value_token(w.raw))
                && content_word(&lws[after_value])));
    // "Seat uptake: 70% of members …": a label of a few content words
    // opening the sentence, its colon right before the value.
    let labelled = !linked
        && start == 0
        && (1..=3).contains(&end)
        && ws[end - 1].raw.ends_with(':')
        && !ws[..end - 1]
            .iter()
            .any(|w| w.raw.ends_with(super::CLAUSE_MARKS))
        && subject.split_whitespace().count() == end
        && !lexicon::NOTE_LABELS.contains(lws[0].as_str())
        && named_plainly;
    let plain_subject = plain_subject || listed || labelled;
    // The words before the value name it by the sentence's shape.
    let shaped = !subject.is_empty() && (plain_subject || (linked && has_head(&subject)));
    // "go with 10 minutes for the cache ttl": what the value is for. "fine,
    // 15% on spare parts": a measure is on what it applies to; "12% off
    // for members".
    // "the 40mg tablets on the top shelf": after a determiner the value
    // describes a thing, it is no measure set on one.
    let opens_clause = subject.is_empty()
        && (vi == 0
            || ws[vi - 1].raw.ends_with(super::CLAUSE_MARKS)
            || !lexicon::DETERMINERS.contains(lws[vi - 1].as_str()));
    let for_subject = || {
        let measured = value_unit(&value).is_some_and(|u| u != "date");
        let mut k = after_value;
        if measured && lws.get(k).is_some_and(|w| w == "off") {
            k += 1;
        }
        match lws.get(k).map(String::as_str) {
            Some("for") => {}
            Some("on") if measured && k == after_value && opens_clause && !clock_time(&value) => {}
            _ => return None,
        }
        let mut k = k + 1;
        while lws.get(k).is_some_and(|w| lexicon::is_stop(w)) {
            k += 1;
        }
        let mut out: Vec<&str> = Vec::new();
        while let Some(w) = ws.get(k)
            && out.len() < 3
            && !lexicon::is_stop(&lws[k])
            && w.text.chars().all(|c| c.is_alphanumeric() || c == '-')
            // "£80 for Tuesday 4 <month>": a day is when, not what.
            && !lexicon::is_weekday(&lws[k])
            && !lexicon::MONTHS.contains(lws[k].as_str())
            && !value_token(w.raw)
        {
            out.push(&lws[k]);
            if w.raw.ends_with([',', '.', ';', ':', '!', '?']) {
                break;
            }
            k += 1;
        }
        (!out.is_empty()).then(|| out.join(" "))
    };
    // "take the harp for £95": a price is the price of the thing before
    // "for".
    let priced = || {
        let money = ws[vi].raw.starts_with(['$', '€', '£']);
        if !money || vi < 2 || lws[vi - 1] != "for" {
            return None;
        }
        let end = vi - 1;
        let start = phrase_start(ws, lws, end, |l| {
            lexicon::is_stop(l) || !l.chars().all(|c| c.is_alphabetic() || c == '-')
        });
        (start < end).then(|| lws[start..end].join(" "))
    };
    // "we need 40 sacks of bark mulch": a count of things is of what follows
    // "of" (a few content words, up to a stop word or a clause mark).
    let of_subject = || {
        let (_, counted) = value.split_once(' ')?;
        if counted.contains(' ')
            || !counted.chars().all(char::is_alphabetic)
            || ws[after_value - 1].raw.ends_with(super::CLAUSE_MARKS)
            || lws.get(after_value).is_none_or(|w| w != "of")
        {
            return None;
        }
        let mut k = after_value + 1;
        while lws
            .get(k)
            .is_some_and(|w| lexicon::DETERMINERS.contains(w.as_str()))
        {
            k += 1;
        }
        let mut out: Vec<&str> = Vec::new();
        while let Some(w) = ws.get(k)
            && out.len() < 3
            // A hyphenated compound is one word ("well-kept").
            && lws[k].starts_with(char::is_alphabetic)
            && content_word(&lws[k].replace('-', ""))
            && !lexicon::PARTICLES.contains(lws[k].as_str())
            && !lexicon::COORDINATORS.contains(lws[k].as_str())
        {
            out.push(&lws[k]);
            if w.raw.ends_with(super::CLAUSE_MARKS) {
                break;
            }
            k += 1;
        }
        (!out.is_empty()).then(|| out.join(" "))
    };
    // "budget: we agreed £900 for the trip": a label before a colon
    // that opens the sentence, a word that names a quantity, is what the
    // value is of.
    let heading = || {
        let k = ws.iter().take(2).position(|w| w.raw.ends_with(':'))?;
        let h = lws[..=k].join(" ");
        (k < vi && has_head(&h) && h.split_whitespace().all(|w| !lexicon::is_stop(w))).then_some(h)
    };
    if (subject.is_empty() || (!has_head(&subject) && !plain_subject))
        && let Some(h) = heading()
    {
        subject = h;
    } else if (subject.is_empty() || (!has_head(&subject) && !plain_subject))
        && let Some(p) = priced()
    {
        subject = p;
    } else if (subject.is_empty() || (!has_head(&subject) && !plain_subject))
        && let Some(o) = of_subject()
    {
        subject = o;
    } else if (subject.is_empty() || (!has_head(&subject) && !plain_subject))
        && let Some(f) = for_subject()
    {
        subject = f;
    } else if (subject.is_empty() || (!has_head(&subject) && !plain_subject))
        && let Some(noun) = attributive_subject(ws, lws, vi, &value)
    {
        subject = noun;
    } else if subject.is_empty() || (!has_head(&subject) && !plain_subject) {
        // A head noun elsewhere in the clause: before the value ("the demo
        // is on the 14th") or right after it ("a flat 30 second delay").
        let after_value = vi + 1 + usize::from(value.split_whitespace().count() > 1);
        // Not past another value: "loads 90k rows in 3 min" is not of "min".
        if let Some(h) = lws[..vi]
            .iter()
            .rev()
            .chain(
                // "load 80%, low 3": a comma after the value ends what it
                // is of.
                (after_value..ws.len())
                    .filter(|_| !ws[after_value - 1].raw.ends_with(super::CLAUSE_MARKS))
                    .take_while(|&k| !value_token(ws[k].raw))
                    .take(3)
                    .map(|k| &lws[k]),
            )
            .find(|w| lexicon::FACT_SUBJECT_HEADS.contains(w.as_str()))
        {
            subject = h.clone();
        } else {
            return None;
        }
    }
    let subject = subject.trim().to_owned();
    if subject.is_empty() || subject.chars().count() > 60 {
        return None;
    }
    // "the 750ms" is 750ms; "the 9th" stays a day.
    let value = match value.strip_prefix("the ") {
        Some(v) if !is_dated(&value) => v.to_owned(),
        _ => value,
    };
    Some((Record::fact(&subject, &value, s), shaped))
}

/// A content word only: letters, no function word, no closed-class word.
/// What names a list item, a label, or the things a count is of.
fn content_word(w: &str) -> bool {
    w.chars().all(char::is_alphabetic) && !lexicon::is_stop(w) && !lexicon::is_closed_class(w)
}

/// Whether a token is a version number: "7.1", "6.5.12", "v2", "6.2+",
/// "1.4.0-rc1"; a bare integer ("14") only where `integer` allows it. A
/// decimal fraction is no version: "0.8", "3.14159".
fn version_token(t: &str, integer: bool) -> bool {
    let t = t.strip_suffix('+').unwrap_or(t);
    let (core, pre) = t.split_once('-').unwrap_or((t, ""));
    if !pre.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
        return false;
    }
    let (core, prefixed) = match core.strip_prefix(['v', 'V']) {
        Some(c) => (c, true),
        None => (core, false),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || p.len() > 4 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    match parts.len() {
        1 => integer || prefixed,
        2 => parts[0] != "0" && parts[1].len() <= 2 || prefixed,
        3 | 4 => true,
        _ => false,
    }
}

/// The most settings read from one turn's pasted files.
const MAX_FENCED_SETTINGS: usize = 16;

/// The settings of an env or config file pasted in a fenced block, where
/// every line of the block is one ("```\nPORT=8080\nexport LOG_LEVEL=info\n```";
/// `#` comments aside): each "NAME=value", about NAME, as [`versions`]
/// labels a setting written in prose. A block of anything else (a log, a
/// command, code) gives none; at most 16 a turn.
pub fn fenced_settings(text: &str) -> Vec<Record> {
    let setting = |line: &str| -> Option<(String, String)> {
        let line = line.strip_prefix("export ").unwrap_or(line).trim();
        let (name, value) = line.split_once('=')?;
        let value = value.trim_matches(['"', '\'']);
        let named = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        let valued = !value.is_empty()
            && value.chars().count() <= 80
            && value.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '+' | ',')
            });
        (named && valued).then(|| (name.to_owned(), value.to_owned()))
    };
    let mut out: Vec<Record> = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            match block.take() {
                None => block = Some(Vec::new()),
                Some(lines) => {
                    let kept: Vec<&str> = lines
                        .into_iter()
                        .filter(|l| !l.is_empty() && !l.starts_with('#'))
                        .collect();
                    let settings: Option<Vec<(String, String)>> =
                        kept.iter().map(|l| setting(l)).collect();
                    for (name, value) in settings.unwrap_or_default() {
                        let subject = normalize_name(&name);
                        if out.len() < MAX_FENCED_SETTINGS
                            && !out.iter().any(|r| r.subject.as_deref() == Some(&subject))
                        {
                            out.push(Record {
                                kind: NodeKind::Fact,
                                label: format!("{name}={value}"),
                                subject: Some(subject),
                                sentence: format!("{name}={value}"),
                            });
                        }
                    }
                }
            }
            continue;
        }
        if let Some(lines) = block.as_mut() {
            lines.push(t);
        }
    }
    out
}

/// Versions of named things a sentence states: "it's on Quokka 6.1.7",
/// "zentrafs 14 in prod", "minLevel 26", "brisket@18.2.0", and settings written
/// as code ("MAX_THREADS=8"). One fact each, labelled as written ("Quokka
/// 6.1.7", "MAX_THREADS=8"), about the name: a later version of the same
/// name supersedes it. A plain number after a word is a version only with
/// evidence that the word names software (written as code or capitalised
/// mid-sentence and not a common noun, unknown to the word list, or a
/// version word in the sentence) and nothing counted after it ("14
/// connections").
pub fn versions(sentence: &str) -> Vec<Record> {
    let Some((s, ws, lws)) = statement(sentence) else {
        return Vec::new();
    };
    let cued = lws
        .iter()
        .any(|w| lexicon::VERSION_CUES.contains(w.as_str()));
    let ends = |raw: &str| raw.ends_with(super::CLAUSE_MARKS);
    // Written as code: "MAX_THREADS", "minLevel", "db.pool.size".
    let code_shaped = |t: &str| {
        t.contains('_')
            || t.chars().skip(1).any(char::is_uppercase)
            || (t.contains('.')
                && t.split('.')
                    .all(|p| p.chars().next().is_some_and(char::is_alphabetic)))
    };
    let mut out: Vec<Record> = Vec::new();
    let mut push = |name: String, label: String| {
        let subject = normalize_name(&name);
        if !subject.is_empty() && !out.iter().any(|r| r.subject.as_deref() == Some(&subject)) {
            out.push(Record {
                kind: NodeKind::Fact,
                label,
                subject: Some(subject),
                sentence: s.to_owned(),
            });
        }
    };
    // A name word: a thing, not a function word, a calendar word, a unit or
    // the head of a measured subject ("timeout 30").
    let nameish = |k: usize| {
        let l = lws[k].as_str();
        ws[k].text.chars().next().is_some_and(char::is_alphabetic)
            && ws[k]
                .text
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '&'))
            && ws[k].text.chars().any(char::is_alphabetic)
            && !ends(ws[k].raw)
            && !lexicon::is_closed_class(l)
            && !lexicon::UNIT_WORDS.contains(l)
            && !lexicon::FACT_SUBJECT_HEADS.contains(l)
            && !lexicon::ORDINALS.contains(l)
    };
    for (i, w) in ws.iter().enumerate() {
        let raw = w
            .raw
            .trim_start_matches(['(', '"', '\'', '`', '['])
            .trim_end_matches([')', '"', '\'', '`', ']', ',', '.', ';', ':', '!', '?']);
        // "brisket@18.2.0", "MAX_THREADS=8": one token.
        if let Some((name, v)) = raw.split_once('@').or_else(|| raw.split_once('='))
            && !name.is_empty()
            && name.chars().next().is_some_and(char::is_alphabetic)
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
        {
            let v = v.trim_start_matches(['^', '~']);
            // "HEADLESS=1 make check": a variable set for a command
            // is the command's, not a setting. A command takes a word
            // after it or is written as a path ("RUN=1 bin/check"); one
            // word ending its clause ("PORT=7311 everywhere:") is none, nor
            // another setting ("A=1 B=2").
            let commanded = !ends(w.raw)
                && ws.get(i + 1).is_some_and(|n| {
                    let l = lws[i + 1].as_str();
                    !lexicon::is_stop(l)
                        && l.chars().any(char::is_alphabetic)
                        && !n.raw.contains('=')
                        && (!ends(n.raw) && i + 2 < ws.len() || n.raw.contains('/'))
                });
            let pinned = raw.contains('@') && version_token(v, false);
            let setting = raw.contains('=')
                && code_shaped(name)
                && !commanded
                && !v.is_empty()
                // A path or an address is a setting's value too.
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '+'));
            if pinned || setting {
                push(name.to_owned(), raw.to_owned());
            }
            continue;
        }
        if i == 0
            || !w
                .text
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == 'v' || c == 'V')
        {
            continue;
        }
        // "version 3.6" and "v" give way to the name before them.
        let mut k = i - 1;
        if lexicon::VERSION_CUES.contains(lws[k].as_str()) && k > 0 {
            k -= 1;
        }
        // "pottery 7 till 9pm": either end of a range of times is no
        // version.
        let joins = |j: usize| {
            lws.get(j)
                .is_some_and(|l| lexicon::RANGE_JOINERS.contains(l.as_str()))
        };
        if !nameish(k)
            || joins(k)
            || (!ends(w.raw) && joins(i + 1) && ws.get(i + 2).is_some_and(|n| value_token(n.raw)))
        {
            continue;
        }
        let name_w = &ws[k];
        let code = code_shaped(name_w.text) || name_w.backticked;
        let zipf = lexicon::zipf(&lws[k]);
        let capital = !name_w.sentence_start && super::mentions::is_capitalized(name_w.text);
        let rare = zipf.is_none_or(|z| z < 4.3);
        let unknown = lexicon::frequencies_loaded() && zipf.is_none();
        // Nothing counted after the number: "14 connections" is a count.
        let counted = ws.get(i + 1).is_some_and(|n| {
            let l = lws[i + 1].as_str();
            !ends(w.raw)
                && !lexicon::is_stop(l)
                && n.text.chars().all(char::is_alphabetic)
                && ((l.ends_with('s') && !l.ends_with("ss")) || lexicon::UNIT_WORDS.contains(l))
        });
        // A year is no version ("Q3 2026").
        let integer =
            !counted && w.text.len() <= 3 && (code || (rare && (capital || unknown || cued)));
        // "2.5 kg" is a measure.
        let measured = lws
            .get(i + 1)
            .is_some_and(|n| lexicon::UNIT_WORDS.contains(n.as_str()));
        let dotted = code || capital || rare || cued;
        if measured || !(dotted && version_token(w.text, integer)) {
            continue;
        }
        // Said together: "pins x < 7" is a bound, not x's version.
        let said: Vec<&str> = ws[k..=i].iter().map(|w| w.raw).collect();
        if !s.contains(&said.join(" ")) {
            continue;
        }
        // "Vexo Stack 3.2": capitalised words before the name go with it.
        let mut from = k;
        while from > 0
            && k - from < 2
            && super::mentions::is_capitalized(ws[from - 1].text)
            && !ws[from - 1].sentence_start
            && !ends(ws[from - 1].raw)
            && nameish(from - 1)
        {
            from -= 1;
        }
        let name: Vec<&str> = ws[from..=k].iter().map(|w| w.text).collect();
        let name = name.join(" ");
        let label = if k + 1 == i {
            format!("{name} {}", w.text)
        } else {
            format!("{name} {} {}", ws[k + 1].text, w.text)
        };
        push(name, label);
    }
    out
}

/// The subject and value of a fact's label: "request timeout: 3 s", a
/// setting "MAX_THREADS=8", or a version "Quokka 7.1".
pub fn fact_parts(label: &str) -> Option<(&str, &str)> {
    if let Some(p) = label.split_once(": ") {
        return Some(p);
    }
    if !label.contains(' ')
        && let Some(p) = label.split_once('=').or_else(|| label.split_once('@'))
    {
        return Some(p);
    }
    let (name, v) = label.rsplit_once(' ')?;
    let name = name
        .strip_suffix(" version")
        .or_else(|| name.strip_suffix(" v"))
        .unwrap_or(name);
    version_token(v, true).then_some((name, v))
}
