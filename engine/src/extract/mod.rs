//! Deterministic text analysis shared by the gate and the heuristic probe:
//! sentences, named-entity candidates, decisions with their topic, changes
//! of mind, proposals and their acceptance, corrections, preferences, facts,
//! restrictions, procedures, intentions, relations and the domain a piece of
//! text is about.
//!
//! Everything here works from general signals (capitalisation mid-sentence,
//! code shapes, role and apposition patterns, sentence structure) and the
//! closed-class word lists in `data/` ([`lexicon`]); no product, vendor,
//! person or place is named in this code. Nothing here allocates a regex,
//! touches the disk (but for [`lexicon::init_frequencies`], which only the
//! probe calls), loads a model or calls the network, so the gate can run it
//! on the hook's critical path in microseconds.

pub mod lexicon;

use crate::graph::{Domain, NodeKind, normalize_name};

/// Longest token kept whole; longer ones are cut.
const MAX_TOKEN_CHARS: usize = 120;

/// A named thing found in text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The surface form, canonicalised (path without the project root).
    pub label: String,
    /// What it looks like.
    pub kind: NodeKind,
    /// Which subgraph it belongs to.
    pub domain: Domain,
    /// A role or short description found next to it ("backend lead").
    pub role: Option<String>,
    /// Whether it is a strong signal (a name or path) rather than a weak one.
    pub strong: bool,
}

/// How a decision sentence relates to earlier choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionMove {
    /// A choice is made ("let's go with X").
    Choose,
    /// An earlier choice is taken up again or kept ("go back to X", "keep X").
    Return,
    /// An earlier choice is dropped without a replacement ("scrap X").
    Drop,
}

/// A decision found in one sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// "Use arq for the task queue".
    pub label: String,
    /// The chosen thing, when one was named.
    pub chosen: Option<String>,
    /// What it replaces, when said ("instead of X", "scrap X").
    pub replaced: Option<String>,
    /// Content words naming what is being decided ("task", "queue").
    pub topic: Vec<String>,
    /// Choose, return to, or drop.
    pub moves: DecisionMove,
    /// The sentence it came from.
    pub sentence: String,
}

/// What `replaced` holds when the user drops "that": the choice made last.
pub const PREVIOUS_CHOICE: &str = "(the previous choice)";

/// What `replaced` holds for a switch that names nothing it replaces: the
/// choice in force whose name or topic the turn mentions, if one does.
pub const PREVIOUS_NAMED: &str = "(the choice the turn names)";

/// A correction found in one sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Correction {
    /// The corrected statement, cue stripped ("the retry limit is 5, not 3").
    pub label: String,
    /// The sentence it came from.
    pub sentence: String,
}

/// A preference, habit or constraint of the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preference {
    /// "Prefers small commits with conventional commit messages".
    pub label: String,
    /// The sentence it came from.
    pub sentence: String,
}

/// A typed record: a fact, restriction, procedure or intention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// [`NodeKind::Fact`], [`NodeKind::Restriction`], [`NodeKind::Procedure`]
    /// or [`NodeKind::Intention`].
    pub kind: NodeKind,
    /// The line shown ("request timeout: 3 s", "never force-push to main").
    pub label: String,
    /// What it is about ("request timeout", "deploy"); records with the same
    /// subject replace each other with history.
    pub subject: Option<String>,
    /// The sentence it came from.
    pub sentence: String,
}

/// Splits text into sentences, dropping fenced code blocks.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || trimmed.is_empty() {
            continue;
        }
        let trimmed = trimmed.trim_start_matches(['-', '*', '>', '#', ' ']);
        let mut start = 0;
        let bytes = trimmed.as_bytes();
        for i in 0..bytes.len() {
            let c = bytes[i];
            if (c == b'.' || c == b'?' || c == b'!' || c == b';')
                && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())
            {
                let s = trimmed[start..=i].trim();
                if !s.is_empty() {
                    out.push(s.to_owned());
                }
                start = i + 1;
            }
        }
        let s = trimmed[start..].trim();
        if !s.is_empty() {
            out.push(s.to_owned());
        }
    }
    out
}

/// A word of a sentence, with its trimmed form and position facts.
#[derive(Clone, Debug)]
struct Word<'a> {
    raw: &'a str,
    text: &'a str,
    backticked: bool,
    sentence_start: bool,
}

fn words(sentence: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut first = true;
    for raw in sentence.split_whitespace() {
        // An over-long token (a hash, a minified line) is cut, not dropped
        // with the rest of the sentence.
        let raw = cut_chars(raw, MAX_TOKEN_CHARS);
        let backticked = raw.starts_with('`')
            || raw.ends_with('`')
            || raw.ends_with("`,")
            || raw.ends_with("`.");
        let text = raw
            .trim_start_matches(['(', '"', '\'', '`', '[', '{', '*', '_', '<'])
            .trim_end_matches([
                ')', '"', '\'', '`', ']', '}', ',', '.', ':', ';', '!', '?', '*', '>',
            ]);
        let text = text.strip_suffix("()").unwrap_or(text);
        let text = text
            .strip_suffix("'s")
            .or_else(|| text.strip_suffix("\u{2019}s"))
            .unwrap_or(text);
        let text = if text.contains("://") {
            text
        } else {
            clean_code_token(text)
        };
        // "Acme-specific", "Zorp-backed": the name is the first part.
        let text = match text.split_once('-') {
            Some((head, tail))
                if is_capitalized(head)
                    && tail.chars().all(|c| c.is_ascii_lowercase())
                    && !tail.is_empty() =>
            {
                head
            }
            _ => text,
        };
        if !text.is_empty() {
            out.push(Word {
                raw,
                text,
                backticked,
                sentence_start: first,
            });
        }
        first = false;
    }
    out
}

fn is_capitalized(w: &str) -> bool {
    let mut chars = w.chars();
    matches!(chars.next(), Some(c) if c.is_uppercase())
        && w.chars().skip(1).any(|c| c.is_lowercase())
        && w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '\'' | '&'))
}

fn file_path(w: &str, root: Option<&str>) -> Option<String> {
    let w = w.trim_end_matches(['.', ',', ':']);
    let (stem, ext) = w.rsplit_once('.')?;
    if stem.is_empty()
        || !lexicon::FILE_EXTS.contains(&ext.to_lowercase())
        || w.contains("://")
        || w.starts_with("[REDACTED")
    {
        return None;
    }
    if !w.contains('/')
        && (w.starts_with('.')
            || !stem
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
    {
        return None;
    }
    let mut p = w.to_owned();
    if let Some(root) = root {
        let root = root.trim_end_matches('/');
        if let Some(rest) = p.strip_prefix(root) {
            p = rest.trim_start_matches('/').to_owned();
        }
    }
    if let Some(rest) = p.strip_prefix("./") {
        p = rest.to_owned();
    }
    (!p.is_empty()).then_some(p)
}

/// Cuts code noise off a token: generics (`Foo<Bar`), calls (`f(&x`).
fn clean_code_token(t: &str) -> &str {
    let end = t.find(['<', '(', '{', '[', '=']).unwrap_or(t.len());
    t[..end].trim_end_matches([':', '.', ','])
}

fn looks_like_hash(t: &str) -> bool {
    t.len() >= 7
        && t.bytes().all(|b| b.is_ascii_hexdigit())
        && t.bytes().any(|b| b.is_ascii_digit())
        && t.bytes().any(|b| b.is_ascii_alphabetic())
}

fn identifier(w: &Word<'_>) -> bool {
    let t = w.text;
    if looks_like_hash(t) || lexicon::is_closed_class(&t.to_lowercase()) {
        return false;
    }
    // SQL keywords and constants in backticks are not things worth remembering.
    if t.len() > 1 && t.bytes().all(|b| b.is_ascii_uppercase()) {
        return false;
    }
    if t.len() < 4 || t.starts_with("[REDACTED") || t.contains('/') || t.contains("://") {
        return false;
    }
    let valid = t
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '.');
    if !valid || t.starts_with(':') || t.ends_with(':') {
        return false;
    }
    let snake = t.contains('_') && t.chars().any(|c| c.is_alphabetic()) && !t.starts_with('_');
    let path = t.contains("::");
    let upper = t.chars().filter(|c| c.is_uppercase()).count();
    let camel = upper >= 2
        && t.chars().any(|c| c.is_lowercase())
        && t.chars().next().is_some_and(|c| c.is_alphabetic())
        && !t.contains('.');
    let call = w.raw.contains("()");
    // A backticked plain word (`from`, `setup`) is too common to be a name.
    let plain = t.chars().all(|c| c.is_ascii_lowercase());
    (w.backticked && !plain && t.chars().any(|c| c.is_alphabetic()))
        || snake
        || path
        || camel
        || call
}

/// Cuts a string to at most `n` characters, on a character boundary.
fn cut_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Case-insensitive prefix test that never slices inside a character.
fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Byte offset of `needle` (lowercase ASCII) in `hay` at word boundaries,
/// case-insensitively, computed on `hay` itself so it is safe to slice.
fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    let hb = hay.as_bytes();
    let nb = needle.as_bytes();
    let mut at = 0;
    while at + nb.len() <= hb.len() {
        if hay.is_char_boundary(at)
            && hb[at..at + nb.len()].eq_ignore_ascii_case(nb)
            && hay.is_char_boundary(at + nb.len())
        {
            let first_alnum = nb[0].is_ascii_alphanumeric();
            let before_ok = at == 0 || !first_alnum || !hb[at - 1].is_ascii_alphanumeric();
            let end = at + nb.len();
            let last_alnum = nb.last().is_some_and(|b| b.is_ascii_alphanumeric());
            let after_ok = end >= hb.len() || !last_alnum || !hb[end].is_ascii_alphanumeric();
            if before_ok && after_ok {
                return Some(at);
            }
        }
        at += 1;
    }
    None
}

/// Whether a lowercase word could be a name: alphabetic, not a function word,
/// not closed-class, not very common English.
fn could_be_lower_name(w: &str) -> bool {
    let chars = w.chars().count();
    (2..=20).contains(&chars)
        && w.chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
        && w.chars().next().is_some_and(char::is_lowercase)
        && !lexicon::is_closed_class(w)
        && !lexicon::is_common(w, 5.6)
        && !lexicon::GROUP_WORDS.contains(w)
        && !lexicon::ROLE_NOUNS.contains(w)
        && !lexicon::RELATION_NOUNS.contains(w)
        && !w.ends_with("one")
        && !w.ends_with("body")
}

/// Whether a word that opens a sentence is too common to be a name by itself.
fn common_at_start(w: &str) -> bool {
    let lower = w.to_lowercase();
    if lexicon::is_closed_class(&lower) {
        return true;
    }
    if lexicon::frequencies_loaded() {
        // "Dashboards", "Duplicates": an inflected form is as common as its stem.
        lexicon::is_common(&lower, 3.2) || lexicon::is_common(&stem(&lower), 3.2)
    } else {
        // Without the frequency list a lone capitalised word at a sentence
        // start is only a name when something else says so.
        true
    }
}

/// Finds the named things in one sentence. `root` is the project directory,
/// stripped from absolute paths.
pub fn mentions(sentence: &str, root: Option<&str>) -> Vec<Mention> {
    let ws = words(sentence);
    let mut out: Vec<Mention> = Vec::new();
    let lower_sentence = sentence.to_lowercase();
    let mut i = 0;
    while i < ws.len() {
        let w = &ws[i];
        // A redaction placeholder stands for a secret: never a name.
        if w.text.contains("REDACTED") {
            i += 1;
            continue;
        }
        if let Some(p) = file_path(w.text, root) {
            out.push(Mention {
                label: p,
                kind: NodeKind::File,
                domain: Domain::Technical,
                role: None,
                strong: true,
            });
            i += 1;
            continue;
        }
        if identifier(w) {
            out.push(Mention {
                label: w.text.to_owned(),
                kind: NodeKind::Identifier,
                domain: Domain::Technical,
                role: None,
                strong: w.backticked || w.text.contains("::") || w.text.contains('_'),
            });
            i += 1;
            continue;
        }
        let lower = w.text.to_lowercase();
        // A title before a name: "Dr X".
        if lexicon::TITLES.contains(lower.trim_end_matches('.'))
            && ws.get(i + 1).is_some_and(|n| is_capitalized(n.text))
        {
            i += 1;
            let n = &ws[i];
            out.push(Mention {
                label: n.text.to_owned(),
                kind: NodeKind::Person,
                domain: Domain::Relationship,
                role: None,
                strong: true,
            });
            i += 1;
            continue;
        }
        if is_capitalized(w.text)
            && w.sentence_start
            && lexicon::PERSON_BEFORE.contains(&lower)
            && ws.get(i + 1).is_some_and(|n| is_capitalized(n.text))
            && !w.raw.ends_with([',', '.', ':', ';'])
        {
            // "Ask X", "Tell X": the verb is not part of the name.
            i += 1;
            continue;
        }
        if is_capitalized(w.text) && !lexicon::is_closed_class(&lower) {
            // Merge a run of capitalised words into one name.
            let mut j = i + 1;
            while j < ws.len()
                && j - i < 3
                && is_capitalized(ws[j].text)
                && !lexicon::is_closed_class(&ws[j].text.to_lowercase())
                && !ws[j - 1].raw.ends_with([',', '.', ':', ';', ')'])
            {
                j += 1;
            }
            let name = ws[i..j]
                .iter()
                .map(|w| w.text)
                .collect::<Vec<_>>()
                .join(" ");
            let after = ws.get(j).map(|w| w.text.to_lowercase()).unwrap_or_default();
            let after2 = ws
                .get(j..(j + 2).min(ws.len()))
                .map(|s| {
                    s.iter()
                        .map(|w| w.text.to_lowercase())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let before = if i > 0 {
                ws[i - 1].text.to_lowercase()
            } else {
                String::new()
            };
            // "X — he's the product manager", "X approves windows, she's the EM".
            let by_pronoun = || (j..(j + 6).min(ws.len())).find_map(|k| pronoun_role_at(&ws, k));
            let role = role_after(&ws, j)
                .or_else(|| role_before(&ws, i))
                .or_else(by_pronoun);
            // "X, he …", "X, who looks after …": only people take these.
            let pronoun_next = (ws[j - 1].raw.ends_with(',')
                && matches!(after.as_str(), "he" | "she" | "they"))
                || after == "who";
            let person_cue = lexicon::PERSON_AFTER.contains(&after)
                || lexicon::PERSON_AFTER.contains(&after2)
                || role.is_some()
                || pronoun_next
                || (lexicon::PERSON_BEFORE.contains(&before) && i > 0);
            // A common word opening a sentence needs a role, not just a verb
            // after it ("Data from the last run …").
            let person_cue = person_cue
                && !(w.sentence_start
                    && j - i == 1
                    && common_at_start(w.text)
                    && role.is_none()
                    && lexicon::is_common(w.text, 4.5));
            let two_names = j - i == 2
                && ws[i..j]
                    .iter()
                    .all(|w| w.text.chars().all(char::is_alphabetic))
                && !lexicon::is_common(ws[i + 1].text, 4.3)
                && !lexicon::is_common(ws[i].text, 5.0);
            let project_head = lexicon::PROJECT_HEADS.contains(&after);
            let (kind, domain) = if project_head {
                (NodeKind::Project, Domain::Project)
            } else if person_cue || two_names {
                (NodeKind::Person, Domain::Relationship)
            } else {
                (NodeKind::Entity, Domain::Technical)
            };
            // A lone capitalised word at the start of a sentence is only a
            // name when it is rare or something else says so.
            let lone_start = w.sentence_start
                && j - i == 1
                && kind == NodeKind::Entity
                && common_at_start(w.text);
            // Mid-sentence, a very common word capitalised (a heading, an
            // emphasis) is not a name either.
            let common_mid = !w.sentence_start
                && j - i == 1
                && kind == NodeKind::Entity
                && lexicon::is_common(w.text, 5.8);
            if !lone_start && !common_mid && name.chars().count() >= 2 {
                out.push(Mention {
                    label: name,
                    kind,
                    domain,
                    role,
                    strong: true,
                });
            }
            i = j;
            continue;
        }
        // Lowercase names a role pattern vouches for: "x just became our
        // tech lead", "my sister x", "ask x", "x from finance".
        if could_be_lower_name(w.text) && !w.backticked {
            // Before a lowercase name the role needs its determiner: "my
            // sister x", "our designer x", not "(PM) needs".
            let det_role = || {
                (i >= 2
                    && !ws[i - 1].raw.contains([')', '(', ',', '.'])
                    && matches!(
                        ws[i - 2].text.to_lowercase().as_str(),
                        "my" | "our" | "new" | "your" | "their"
                    ))
                .then(|| role_before(&ws, i))
                .flatten()
            };
            // A rare word right before "hes my labmate" or "the cluster
            // admin" is the name they describe.
            let zipf_below = |z: f32| {
                lexicon::frequencies_loaded()
                    && lexicon::zipf(w.text).is_none_or(|x| x < z)
                    && !w.text.contains('-')
            };
            // A clause's subject: "rafa annotated it, hes my labmate".
            let subject = i == 0
                || ws[i - 1].raw.ends_with([',', ';', ':'])
                || matches!(lw_at(&ws, i - 1).as_str(), "and" | "but" | "so");
            let described = || {
                let the_role = (zipf_below(2.5) && lw_at(&ws, i + 1) == "the")
                    .then(|| role_phrase_at(&ws, i + 1))
                    .flatten()
                    .filter(|r| r.split_whitespace().count() <= 3);
                the_role.or_else(|| {
                    (subject && zipf_below(3.5))
                        .then(|| {
                            (i + 1..(i + 7).min(ws.len())).find_map(|k| pronoun_role_at(&ws, k))
                        })
                        .flatten()
                })
            };
            let role = lower_role_after(&ws, i + 1)
                .or_else(det_role)
                .or_else(described);
            let asked = i > 0
                && matches!(
                    ws[i - 1].text.to_lowercase().as_str(),
                    "ask" | "ping" | "cc"
                )
                && ws[i - 1].raw.chars().all(|c| c.is_alphabetic())
                && !lexicon::is_common(w.text, 4.5);
            let verb_after = ws.get(i + 1).is_some_and(|n| {
                let l = n.text.to_lowercase();
                lexicon::PERSON_AFTER.contains(&l) && !w.raw.ends_with([',', '.', ';', ':'])
            }) && lexicon::frequencies_loaded()
                && lexicon::zipf(w.text).is_none()
                && !w.text.contains('-');
            if let Some(role) = role.or((asked || verb_after).then(String::new)) {
                out.push(Mention {
                    label: w.text.to_owned(),
                    kind: NodeKind::Person,
                    domain: Domain::Relationship,
                    role: (!role.is_empty()).then_some(role),
                    strong: true,
                });
                i += 1;
                continue;
            }
        }
        // Lowercase feature phrases: "the export feature".
        if i + 1 < ws.len() {
            let head = ws[i + 1].text.to_lowercase();
            if lexicon::FEATURE_HEADS.contains(&head)
                && lower.len() >= 4
                && lower.chars().all(|c| c.is_alphabetic() || c == '-')
                && !lexicon::is_closed_class(&lower)
                && !lexicon::PROJECT_HEADS.contains(&lower)
                && !lexicon::TECH_WORDS.contains(&lower)
                && lower_sentence.contains(&format!("{lower} {head}"))
            {
                out.push(Mention {
                    label: format!("{lower} {head}"),
                    kind: NodeKind::Project,
                    domain: Domain::Project,
                    role: None,
                    strong: false,
                });
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    dedup_mentions(out)
}

fn dedup_mentions(v: Vec<Mention>) -> Vec<Mention> {
    let mut out: Vec<Mention> = Vec::with_capacity(v.len());
    for m in v {
        let key = normalize_name(&m.label);
        if let Some(existing) = out.iter_mut().find(|e| normalize_name(&e.label) == key) {
            if existing.role.is_none() {
                existing.role = m.role;
            }
            continue;
        }
        out.push(m);
    }
    out
}

/// Joins words up to the end of a clause, at most `max`.
fn phrase_until_clause(ws: &[Word<'_>], from: usize, max: usize) -> String {
    let mut parts = Vec::new();
    for w in ws.iter().skip(from).take(max) {
        parts.push(w.text);
        if w.raw.ends_with([',', '.', ';', ')', ':', '!', '?']) {
            break;
        }
    }
    parts.join(" ")
}

/// Whether a phrase names a role: it holds a role or relation noun.
fn names_role(phrase: &str) -> bool {
    phrase.to_lowercase().split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
        lexicon::ROLE_NOUNS.contains(w) || lexicon::RELATION_NOUNS.contains(w)
    })
}

/// A role stated after a name: "(backend lead)", ", our backend lead,",
/// "is our SRE", "just became our tech lead", "from finance".
fn role_after(ws: &[Word<'_>], j: usize) -> Option<String> {
    let next = ws.get(j)?;
    if next.raw.starts_with('(') {
        let mut parts = Vec::new();
        for w in &ws[j..ws.len().min(j + 5)] {
            parts.push(w.text);
            if w.raw.contains(')') {
                break;
            }
        }
        let role = parts.join(" ");
        return names_role(&role).then_some(role);
    }
    let prev = &ws[j - 1];
    let nl = next.text.to_lowercase();
    if prev.raw.ends_with(',') && matches!(nl.as_str(), "our" | "the" | "my" | "a" | "an") {
        let role = phrase_until_clause(ws, j + 1, 4);
        return names_role(&role).then_some(role);
    }
    lower_role_after(ws, j)
}

/// The verb patterns after a name that give its role.
fn lower_role_after(ws: &[Word<'_>], j: usize) -> Option<String> {
    let lw = |k: usize| ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default();
    let mut k = j;
    // "is", "is now", "was", "just became", "became", "joined as", "'s"
    let first = lw(k);
    if first == "from" {
        let g = lw(k + 1);
        let g = g.trim_start_matches("the ");
        return lexicon::GROUP_WORDS
            .contains(g)
            .then(|| format!("from {g}"));
    }
    if first == "just" {
        k += 1;
    }
    match lw(k).as_str() {
        "is" | "was" | "became" | "becomes" | "joined" | "joins" | "started" | "starts" | "'s"
        | "got" | "has" => k += 1,
        _ => return None,
    }
    // "got promoted to", "was made", "has become", "is now", "joined as"
    while matches!(
        lw(k).as_str(),
        "now" | "also" | "still" | "as" | "promoted" | "made" | "to" | "become" | "officially"
    ) {
        k += 1;
    }
    role_phrase_at(ws, k)
}

/// The role named from `k` on, after a linking verb: "(now) (our|the|a)
/// backend lead" → "backend lead"; only when a role or relation noun ends it.
fn role_phrase_at(ws: &[Word<'_>], k: usize) -> Option<String> {
    let lw = |k: usize| ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default();
    let mut k = k;
    while matches!(lw(k).as_str(), "now" | "also" | "still" | "officially") {
        k += 1;
    }
    if matches!(
        lw(k).as_str(),
        "our" | "the" | "my" | "a" | "an" | "their" | "your"
    ) {
        k += 1;
    }
    if k == 0 || k > ws.len() {
        return None;
    }
    let k = k - 1;
    let role = phrase_until_clause(ws, k + 1, 4);
    // Only the role words themselves, not what follows them.
    let words: Vec<&str> = role.split_whitespace().collect();
    let is_role = |w: &&str| {
        let l = w
            .trim_end_matches([',', '.', ';', ':', '!', '?', ')'])
            .to_lowercase();
        lexicon::ROLE_NOUNS.contains(&l) || lexicon::RELATION_NOUNS.contains(&l)
    };
    let mut end = words.iter().position(is_role).map(|p| p + 1)?;
    // "product manager", "release manager": the whole run of role nouns.
    while end < words.len() && is_role(&words[end]) {
        end += 1;
    }
    Some(words[..end].join(" "))
}

/// A role stated before a name: "our designer X", "my sister x",
/// "my manager X".
fn role_before(ws: &[Word<'_>], i: usize) -> Option<String> {
    if i == 0 {
        return None;
    }
    let prev = ws[i - 1].text.to_lowercase();
    if ws[i - 1].raw.ends_with(['.', ';', ':'])
        || (ws[i - 1].raw.ends_with(',')
            && !(lexicon::ROLE_NOUNS.contains(&prev) || lexicon::RELATION_NOUNS.contains(&prev)))
    {
        return None;
    }
    if lexicon::ROLE_NOUNS.contains(&prev) || lexicon::RELATION_NOUNS.contains(&prev) {
        let start = i.saturating_sub(3);
        let role: Vec<&str> = ws[start..i]
            .iter()
            .map(|w| w.text)
            .filter(|w| {
                !matches!(
                    w.to_lowercase().as_str(),
                    "our" | "the" | "my" | "with" | "ask" | "and" | "to" | "from"
                )
            })
            .collect();
        // "my sister x", not "the lead engineer said": the word before
        // the role must be a determiner or a role word itself.
        let det = ws[..i - 1]
            .last()
            .map(|w| w.text.to_lowercase())
            .unwrap_or_default();
        let ok = matches!(
            det.as_str(),
            "our" | "my" | "the" | "new" | "your" | "their"
        ) || lexicon::ROLE_NOUNS.contains(&det)
            || i >= 2
                && ws[i - 2]
                    .text
                    .chars()
                    .next()
                    .is_some_and(char::is_uppercase);
        return ok.then(|| role.join(" "));
    }
    None
}

/// Whether byte offset `p` of `s` sits inside a backticked span.
fn in_backticks(s: &str, p: usize) -> bool {
    s[..p].matches('`').count() % 2 == 1
}

fn strip_clause(s: &str) -> &str {
    let mut end = s.len();
    for stop in [
        ",",
        ";",
        ":",
        " because ",
        " since ",
        " so that ",
        " so we ",
        " so it ",
        " for now",
        " as it ",
        " which ",
        " — ",
        " - ",
        " but ",
        " and then ",
        " until ",
        " once ",
        " if ",
        " then",
    ] {
        if let Some(p) = find_ci(s, stop.trim_start()).filter(|p| {
            // a leading space in the stop means "a new word": honour it
            (!stop.starts_with(' ') || *p > 0) && !in_backticks(s, *p)
        }) {
            end = end.min(p);
        }
    }
    s[..end].trim().trim_end_matches(['.', '!', '?'])
}

fn cap_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn truncate_words(s: &str, n: usize) -> String {
    s.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

/// A crude English stem for topic matching: plural and common suffixes off.
pub fn stem(w: &str) -> String {
    let w = w.to_lowercase();
    for suf in ["ies", "ing", "ed", "es", "s"] {
        if let Some(base) = w.strip_suffix(suf)
            && base.chars().count() >= 3
            && !w.ends_with("ss")
        {
            return if suf == "ies" {
                format!("{base}y")
            } else {
                base.to_owned()
            };
        }
    }
    w
}

/// Content words of a phrase (stemmed), for topic matching.
pub fn content_words(s: &str) -> Vec<String> {
    let mut v: Vec<String> = normalize_name(s)
        .split(' ')
        .filter(|w| w.len() >= 3 && !lexicon::is_stop(w) && !lexicon::is_closed_class(w))
        .map(stem)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Words that turn a following phrase into a non-choice object.
fn is_non_choice(choice: &str) -> bool {
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
    // "the feature branch", "the other terminal", "staging context"
    words
        .iter()
        .take(4)
        .any(|w| lexicon::NOT_CHOICES.contains(w.as_str()))
}

/// The phrase that names a decision's topic, when the sentence says it:
/// "for the task queue", "switch the queue to", "as our queue".
fn topic_phrase(lead: &str, rest_after: &str) -> Option<String> {
    for (hay, marker) in [(lead, "for "), (rest_after, " for "), (rest_after, " as ")] {
        if let Some(p) = find_ci(hay, marker.trim()) {
            let t = strip_clause(hay[p + marker.trim().len()..].trim());
            let t = t
                .trim_start_matches("the ")
                .trim_start_matches("our ")
                .trim_start_matches("my ")
                .trim();
            let n = t.split_whitespace().count();
            if (1..=5).contains(&n) {
                return Some(t.to_owned());
            }
        }
    }
    None
}

fn lw_at(ws: &[Word<'_>], k: usize) -> String {
    ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default()
}

/// "he's the DBA", "she is our EM": a role given by a pronoun at `k`
/// (within a few words after a name, or opening the next sentence).
fn pronoun_role_at(ws: &[Word<'_>], k: usize) -> Option<String> {
    let lw = |k: usize| ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default();
    // The raw token: a word's text drops a possessive "'s".
    let w = ws
        .get(k)
        .map(|w| {
            w.raw
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
                .to_lowercase()
                .replace('’', "'")
        })
        .unwrap_or_default();
    let after = match w.as_str() {
        // Typed fast, the apostrophe goes: "hes my labmate".
        "he's" | "she's" | "hes" | "shes" => k + 1,
        "he" | "she" if matches!(lw(k + 1).as_str(), "is" | "was") => k + 2,
        _ => return None,
    };
    role_phrase_at(ws, after)
}

/// The role a sentence opening with a pronoun gives ("He's the DBA, owns
/// the cluster." → "DBA"): the person is the name just before it.
pub fn pronoun_role(sentence: &str) -> Option<String> {
    let ws = words(sentence);
    pronoun_role_at(&ws, 0)
}

/// The first named thing of a phrase in object position, or the phrase
/// itself when short, or its first uncommon word.
fn chosen_of(choice: &str, root: Option<&str>) -> Option<String> {
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
    let lead: Vec<&str> = choice
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
        .skip_while(|w| lexicon::is_stop(&w.to_lowercase()))
        .take_while(|w| {
            let l = w.to_lowercase();
            !w.is_empty() && !lexicon::is_stop(&l) && !lexicon::is_closed_class(&l)
        })
        .collect();
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
    let ss = sentences(reply);
    if let Some(d) = ss.iter().rev().find_map(|s| proposal(s, root)) {
        return Some(d);
    }
    ss.iter().find_map(|s| {
        if s.ends_with('?') || s.split_whitespace().count() > 40 {
            return None;
        }
        // What the assistant did or is doing is a report, not a proposal.
        let first = s.split_whitespace().next().unwrap_or("").to_lowercase();
        if matches!(
            first.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''),
            "i'll"
                | "i've"
                | "i'm"
                | "i"
                | "it"
                | "it's"
                | "this"
                | "that"
                | "there"
                | "done"
                | "the"
                | "yes"
                | "no"
                | "you"
                | "your"
        ) {
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

fn negated_before(sentence: &str, at: usize) -> bool {
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
        || [
            "should we",
            "do we",
            "can we",
            "could we",
            "shall we",
            "would",
            "what if",
        ]
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
    for cue in lexicon::DECISION_CUES.iter() {
        let Some(at) = find_ci(trimmed, cue) else {
            continue;
        };
        if negated_before(trimmed, at) {
            return None;
        }
        let rest = trimmed[at + cue.len()..].trim();
        // Bare "use" and "replace" only count as decisions when they lead
        // the sentence (an imperative) and name a thing or what they replace.
        if matches!(cue, "use" | "replace" | "pick" | "go with") {
            let explicit = find_ci(rest, "instead of").is_some()
                || find_ci(rest, "rather than").is_some()
                || (cue == "replace" && find_ci(rest, "with").is_some());
            let head = trimmed[..at].trim();
            let at_start = head.is_empty()
                || head.ends_with(['.', ',', ':'])
                || [
                    "ok", "okay", "so", "then", "alright", "right", "fine", "yes", "yeah", "ya",
                    "k",
                ]
                .iter()
                .any(|w| head.trim_end_matches(',').eq_ignore_ascii_case(w));
            let names_thing = cue != "replace"
                && (mentions(rest, root)
                    .first()
                    .is_some_and(|m| m.strong && m.kind != NodeKind::Person)
                    // "Use weekly partitions for the events table": a topic.
                    || (cue == "use" && find_ci(rest, "for").is_some()));
            if !at_start || !(explicit || names_thing) {
                continue;
            }
        }
        let mut rest = rest;
        let mut topic_part: Option<String> = None;
        let mut from_part: Option<String> = None;
        let switchy = cue.contains("switch") || cue.contains("move") || cue.contains("migrat");
        if switchy && !cue.ends_with(" to") {
            // "switch the queue to X", "move email from A to B"; a bare
            // "switch" with no "to" ("switch copy between …") decides nothing.
            if matches!(cue, "switch" | "migrate") && find_ci(rest, "to").is_none() {
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
                    topic_part = Some(before.to_owned());
                }
                rest = rest[p + to_len..].trim();
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
        // "stick to pgloader and the window": the first of two is the choice.
        if is_non_choice(&choice)
            && let Some(p) = find_ci(&choice, "and").filter(|p| *p > 0)
        {
            choice = choice[..p].trim().to_owned();
        }
        if choice.is_empty() || is_non_choice(&choice) {
            return None;
        }
        let chosen = chosen_of(&choice, root);
        let lead = trimmed[..at].trim().trim_end_matches(',');
        let topic_part = topic_part
            .filter(|t| !t.is_empty() && !is_non_choice(t))
            .or_else(|| topic_phrase(lead, choice_part));
        // "switch the search over to Y": a switch replaces the choice in
        // force that the turn talks about, even when it does not name it.
        if replaced.is_none() && switchy {
            replaced = Some(PREVIOUS_NAMED.to_owned());
        }
        let verb_led = cue.starts_with("the plan is") || cue.ends_with("decided to");
        let label = if verb_led {
            cap_first(&choice)
        } else {
            let mut l = format!("Use {choice}");
            if let Some(t) = &topic_part
                && find_ci(&choice, t).is_none()
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
    None
}

/// Drops trailing filler words from a choice: "Dramatiq then" → "Dramatiq".
fn trim_fillers(choice: &str) -> String {
    let mut words: Vec<&str> = choice.split_whitespace().collect();
    while let Some(last) = words.last() {
        let l = last.to_lowercase();
        if matches!(
            l.as_str(),
            "then"
                | "instead"
                | "please"
                | "too"
                | "now"
                | "again"
                | "here"
                | "anyway"
                | "ok"
                | "okay"
        ) {
            words.pop();
        } else {
            break;
        }
    }
    words.join(" ")
}

fn finish_decision(
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

/// "scrap the X idea, Y is enough", "forget X, we'll do Y", "let's go back to
/// X", "actually keep X": a change of mind, with or without a replacement.
fn change_of_mind(sentence: &str, root: Option<&str>) -> Option<Decision> {
    // "recharts is out", "hourly is overkill": a drop, stated after.
    if let Some((p, cue_len)) = lexicon::DROP_AFTER_CUES
        .iter()
        .find_map(|c| find_ci(sentence, c).map(|p| (p, c.len())))
    {
        let head = sentence[..p].trim();
        let head = head.rsplit(['.', ';', ',']).next().unwrap_or(head).trim();
        let head: Vec<&str> = head
            .split_whitespace()
            .filter(|w| !lexicon::INTERJECTIONS.contains(w.to_lowercase().as_str()))
            .collect();
        // "on reflection the fallback route isn't worth it": the noun
        // phrase right before the cue.
        let head = head[head.len().saturating_sub(4)..].join(" ");
        if (1..=4).contains(&head.split_whitespace().count())
            && let Some(dropped) = chosen_of(&head, root)
        {
            let after = sentence[p + cue_len..].trim_start_matches([';', ',', '.', ' ', '-', '—']);
            let d = decision(after, root)
                .filter(|d| d.chosen.is_some())
                .or_else(|| plain_return(after));
            if let Some(d) = d {
                return Some(Decision {
                    label: format!("{} instead of {dropped}", d.label),
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
        if negated_before(sentence, at) {
            continue;
        }
        let head = sentence[..at].trim().trim_end_matches(',').to_lowercase();
        // "keep" only as an imperative: "actually keep X", "ok keep X".
        if cue.contains("keep") || cue.starts_with("stay") {
            let lead_ok = head.is_empty()
                || head.split_whitespace().all(|w| {
                    lexicon::INTERJECTIONS.contains(w.trim_matches(','))
                        || w == "let's"
                        || w == "we'll"
                });
            if !lead_ok {
                continue;
            }
        }
        let rest = sentence[at + cue.len()..].trim();
        let choice = truncate_words(strip_clause(rest), 6);
        if choice.is_empty() || is_non_choice(&choice) {
            continue;
        }
        let Some(chosen) = chosen_of(&choice, root) else {
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
    for cue in lexicon::REJECTION_CUES.iter() {
        let Some(at) = find_ci(sentence, cue) else {
            continue;
        };
        let head = sentence[..at].trim().trim_end_matches(',').to_lowercase();
        let lead_ok = head.is_empty()
            || head.split_whitespace().all(|w| {
                let w = w.trim_matches(',');
                lexicon::INTERJECTIONS.contains(w)
                    || matches!(w, "let's" | "lets" | "we" | "i" | "just" | "so")
            });
        if !lead_ok {
            continue;
        }
        let rest = sentence[at + cue.len()..].trim();
        let dropped_part = strip_clause(rest);
        // "drop the bucket plan and move state into …": one thing dropped.
        let dropped_part = find_ci(dropped_part, "and")
            .filter(|p| *p > 0)
            .map(|p| dropped_part[..p].trim())
            .unwrap_or(dropped_part);
        let dropped = dropped_part
            .trim_start_matches("the ")
            .trim_start_matches("that ")
            .trim_start_matches("our ");
        let dropped = dropped
            .trim_end_matches(" idea")
            .trim_end_matches(" plan")
            .trim_end_matches(" approach")
            .trim_end_matches(" thing")
            .trim_end_matches(" option")
            .trim();
        let pronoun = matches!(
            dropped.to_lowercase().as_str(),
            "that" | "it" | "this" | "those"
        );
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
        // "drop X and move state into Y": the connective leads nothing.
        let after = ["and ", "then ", "so "]
            .iter()
            .find_map(|c| strip_prefix_ci(after, c))
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
                Some((m.label.clone(), cap_first(&clause)))
            });
        return Some(match replacement {
            Some((chosen, label)) => finish_decision(
                format!("{label} instead of {dropped}"),
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

/// "put it back to daily" right after dropping something: a return to a
/// plain word, which alone would name no choice ("back to work"), but here
/// stands against what was just dropped.
fn plain_return(after: &str) -> Option<Decision> {
    for cue in lexicon::RETURN_CUES.iter() {
        let Some(at) = find_ci(after, cue) else {
            continue;
        };
        if cue.contains("keep") || cue.starts_with("stay") {
            continue;
        }
        let rest = strip_clause(after[at + cue.len()..].trim());
        let lead: Vec<&str> = rest
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
            .skip_while(|w| lexicon::is_stop(&w.to_lowercase()))
            .take_while(|w| {
                let l = w.to_lowercase();
                !w.is_empty() && !lexicon::is_stop(&l) && !lexicon::is_closed_class(&l)
            })
            .take(3)
            .collect();
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
fn moved_into(a: &str) -> Option<&str> {
    let first = a.split_whitespace().next()?.to_lowercase();
    if !matches!(
        first.as_str(),
        "move" | "moving" | "put" | "switch" | "migrate" | "change"
    ) {
        return None;
    }
    ["into", "onto", "to"]
        .iter()
        .filter_map(|m| find_ci(a, m).map(|p| (p, m.len())))
        .min()
        .map(|(p, n)| a[p + n..].trim())
        .filter(|r| !r.is_empty())
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

fn split_replaced(rest: &str, replace_cue: bool) -> (&str, Option<String>) {
    if replace_cue && let Some(p) = find_ci(rest, "with") {
        // "replace X with Y"
        let old = strip_clause(&rest[..p]).to_owned();
        return (&rest[p + 4..], (!old.is_empty()).then_some(old));
    }
    for marker in ["instead of", "rather than", "over"] {
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
        for lead in ["we ", "you ", "i ", "to "] {
            if let Some(r) = strip_prefix_ci(rest, lead) {
                rest = r.trim();
            }
        }
        // "my proposal: generate a baseline and move to Y": the choice
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
        } else if let Some(r) = strip_prefix_ci(rest, "switching to ") {
            format!("let's switch to {r}")
        } else if let Some(r) = strip_prefix_ci(rest, "going with ") {
            format!("let's go with {r}")
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

/// A terse answer that makes a choice: "parser: clap derive" (a topic and
/// its choice), or the first words of a prompt naming one of the options the
/// reply before it offered ("…the bucket or workspaces?" → "GCS bucket.").
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
            && !lexicon::is_closed_class(&topic.to_lowercase());
        if topic_ok
            && (1..=4).contains(&choice.split_whitespace().count())
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
    // Picking one of the options just offered ("a GCS bucket …, or
    // workspaces …"), maybe with a reason after it: "Topics for now, the
    // backend already knows the groups".
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
    let chosen = chosen_of(s, root)?;
    Some(finish_decision(
        format!("Use {s}"),
        Some(chosen),
        None,
        "",
        s,
        DecisionMove::Choose,
        first.trim(),
    ))
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
        || [
            " is ", " are ", " was ", " not ", " should ", " in ", " at ", " goes ", " lives ",
        ]
        .iter()
        .any(|v| format!(" {} ", body.to_lowercase()).contains(v));
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
        // "I like that approach" / "I like it" are reactions, not preferences.
        if ["that", "it", "this", "the idea", "how", "where"]
            .iter()
            .any(|r| rest.starts_with(r))
        {
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

fn strip_clause_keep_commas(s: &str) -> &str {
    let mut end = s.len();
    for stop in [";", "because", "since", " — ", "but"] {
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
        if !(3..=20).contains(&n) {
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
    None
}

/// Tasks a procedure is for, by the word that names them.
const TASKS: &[(&str, &str)] = &[
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

/// A command in backticks that looks runnable: two or more words, or a
/// path to a script.
fn command_in(sentence: &str) -> Option<String> {
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
        if runnable && (words.len() >= 2 || first.contains('/')) && cmd.len() <= 160 {
            return Some(cmd.to_owned());
        }
    }
    None
}

/// A command written without backticks: a run of lowercase words that ends
/// in flags or `KEY=value` arguments ("uv run pytest -q", "make deploy ENV=prod").
fn bare_command(sentence: &str) -> Option<String> {
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
    // Every command in the sentence: "docker compose up -d db and then uv
    // run pytest -q" is two steps of one procedure.
    let mut found: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(off) = toks[from..].iter().position(|t| argish(t)) {
        let fi = from + off;
        let mut start = fi;
        while start > from
            && fi - start < 4
            && wordish(toks[start - 1])
            && !toks[start - 1].ends_with(',')
        {
            start -= 1;
        }
        // A command starts with a program, not a function word ("up" may
        // follow it: "docker compose up -d").
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
        if fi - start >= 2 {
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
    let task = named
        .iter()
        .copied()
        .find(|t| *t != "run")
        .or_else(|| named.first().copied())
        .or_else(|| {
            let cl = cmd.to_lowercase();
            TASKS
                .iter()
                .find(|(k, _)| cl.split(|c: char| !c.is_alphanumeric()).any(|w| w == *k))
                .map(|(_, t)| *t)
        })?;
    if !cue && !lower.contains(task) {
        return None;
    }
    Some(Record {
        kind: NodeKind::Procedure,
        label: format!("{task}: {cmd}"),
        subject: Some(task.to_owned()),
        sentence: sentence.trim().to_owned(),
    })
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

/// Whether a token carries a value: a number, a size, a time, an ordinal.
fn value_token(t: &str) -> bool {
    let t =
        t.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | ':' | '(' | ')' | '"' | '\'' | '`'));
    let t = t.trim_start_matches(['$', '€', '£', '~', '<', '>', '≤', '≥']);
    if t.is_empty() || !t.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return false;
    }
    // 3, 3.5, 25MB, 10k, 06:00, 14th, 30s, 2026-11-24, 90%
    t.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '%' | '/' | ','))
        && t.chars().filter(|c| c.is_ascii_alphabetic()).count() <= 4
}

/// A fact: a number, limit, date or deadline with its subject
/// ("request timeout: 3 s", "demo: the 14th").
pub fn fact(sentence: &str) -> Option<Record> {
    let s = sentence.trim();
    if s.ends_with('?') {
        return None;
    }
    let ws = words(s);
    let lws: Vec<String> = ws.iter().map(|w| w.text.to_lowercase()).collect();
    // The value: the first value token, with a unit or a "th/st" day.
    let vi = ws.iter().position(|w| value_token(w.raw))?;
    // A file, version of code or identifier is not a fact value.
    if ws[vi].backticked {
        return None;
    }
    let mut value = ws[vi].text.to_owned();
    if let Some(next) = lws.get(vi + 1)
        && (lexicon::UNIT_WORDS.contains(next.as_str()) || lexicon::MONTHS.contains(next.as_str()))
    {
        value = format!("{value} {}", ws[vi + 1].text);
        // "20 per pod": a rate names what it is per.
        if next == "per"
            && let Some(n2) = ws.get(vi + 2)
        {
            value = format!("{value} {}", n2.text);
        }
        if let Some(n2) = lws.get(vi + 2)
            && (n2 == "per" || n2 == "a")
            && let Some(n3) = ws.get(vi + 3)
        {
            value = format!("{value} {} {}", ws[vi + 2].text, n3.text);
        }
    }
    // "the 12th of November".
    if lws.get(vi + 1).is_some_and(|w| w == "of")
        && let Some(m) = ws.get(vi + 2)
        && lexicon::MONTHS.contains(lws[vi + 2].as_str())
    {
        value = format!("{value} of {}", m.text);
    }
    // A weekday or month before the number: "a weekday the 9th", "a month 14".
    if vi >= 1 {
        let p = &lws[vi - 1];
        let p2 = if vi >= 2 { lws[vi - 2].as_str() } else { "" };
        if lexicon::MONTHS.contains(p.as_str()) || lexicon::WEEKDAYS.contains(p.as_str()) {
            value = format!("{} {value}", ws[vi - 1].text);
        } else if p == "the" && (lexicon::WEEKDAYS.contains(p2) || lexicon::MONTHS.contains(p2)) {
            value = format!("{} the {value}", ws[vi - 2].text);
        } else if p == "the" {
            value = format!("the {value}");
        }
    }
    // The subject: the noun phrase before a linking verb ahead of the value,
    // or the words right before the value.
    let linkers = [
        "is", "are", "was", "=", "of", "at", "to", "be", "stays", "becomes", "on", "by", "'s",
        "goes",
    ];
    let mut end = vi;
    // "msrv is 1.76": a copula right before the value links a subject that
    // needs no head noun.
    let mut linked = false;
    while end > 0 {
        let w = lws[end - 1].as_str();
        if matches!(w, "is" | "are" | "=" | "stays" | "becomes") {
            linked = true;
        }
        if linkers.contains(&w)
            || w == "the"
            || lexicon::WEEKDAYS.contains(w)
            || lexicon::MONTHS.contains(w)
            || w == "now"
            || w == "actually"
            || w == "just"
            || w == "should"
            || w == "will"
            || w == "set"
            || w == "up"
        {
            end -= 1;
        } else {
            break;
        }
    }
    let mut start = end;
    while start > 0 && end - start < 4 {
        let w = &ws[start - 1];
        let l = lws[start - 1].as_str();
        if w.raw.ends_with([',', '.', ';', ':', '!', '?', ')']) && start != end {
            break;
        }
        if lexicon::is_stop(l) && !lexicon::FACT_SUBJECT_HEADS.contains(l) {
            break;
        }
        if lexicon::INTERJECTIONS.contains(l) || lexicon::CORRECTION_OPENERS.contains(l) {
            break;
        }
        start -= 1;
    }
    let mut subject: String = ws[start..end]
        .iter()
        .map(|w| w.text.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ");
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
    if subject.is_empty() || (!has_head(&subject) && !plain_subject) {
        // A head noun elsewhere in the clause: before the value ("the demo
        // is on the 14th") or right after it ("a flat 30 second delay").
        let after_value = vi + 1 + usize::from(value.split_whitespace().count() > 1);
        if let Some(h) = lws[..vi]
            .iter()
            .rev()
            .chain(lws.iter().skip(after_value).take(3))
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
    Some(Record {
        kind: NodeKind::Fact,
        label: format!("{subject}: {value}"),
        subject: Some(subject),
        sentence: s.to_owned(),
    })
}

/// Whether a sentence has decision language. "Keep X" is a decision only
/// when X was chosen before, which the graph knows and the gate does not: it
/// is left to the next probe.
pub fn has_decision_language(text: &str) -> bool {
    sentences(text).iter().any(|s| {
        decision(s, None).is_some_and(|d| {
            !(d.moves == DecisionMove::Return
                && (find_ci(s, "keep").is_some() || find_ci(s, "stay").is_some()))
        })
    })
}

/// Whether a text has correction language.
pub fn has_correction_language(text: &str) -> bool {
    sentences(text).iter().any(|s| correction(s).is_some())
}

/// The facts, restrictions, procedures and intentions a text states.
pub fn records(text: &str) -> Vec<Record> {
    sentences(text)
        .iter()
        .flat_map(|s| [fact(s), restriction(s), procedure(s), intention(s)])
        .flatten()
        .collect()
}

/// Scores how much a text is about each domain; the highest wins.
pub fn domain_scores(text: &str) -> [u32; 4] {
    let mut s = [0u32; 4];
    let lower = text.to_lowercase();
    for raw in lower.split(|c: char| {
        c.is_whitespace() || matches!(c, ',' | '.' | '(' | ')' | '"' | '!' | '?' | ';')
    }) {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != ':');
        if w.is_empty() {
            continue;
        }
        if lexicon::TECH_WORDS.contains(w) || w.contains('/') || w.contains('_') || w.contains("::")
        {
            s[2] += 1;
        }
        if lexicon::PROJECT_WORDS.contains(w) {
            s[1] += 1;
        }
        if lexicon::RELATIONSHIP_WORDS.contains(w) {
            s[0] += 1;
        }
        if lexicon::PERSONAL_WORDS.contains(w) {
            s[3] += 1;
        }
    }
    for cue in lexicon::PREFERENCE_CUES.iter() {
        if lower.contains(cue) {
            s[3] += 3;
        }
    }
    for m in sentences(text).iter().flat_map(|x| mentions(x, None)) {
        match m.kind {
            NodeKind::Person => s[0] += 2,
            NodeKind::Project => s[1] += 2,
            NodeKind::File | NodeKind::Identifier => s[2] += 1,
            _ => {}
        }
    }
    s
}

/// The dominant domain of a text, if any signal at all.
pub fn dominant_domain(text: &str) -> Option<Domain> {
    let s = domain_scores(text);
    let max = *s.iter().max()?;
    if max == 0 {
        return None;
    }
    // Ties go to the first in a fixed order: personal, relationship, project, technical.
    [3usize, 0, 1, 2]
        .into_iter()
        .find(|&i| s[i] == max)
        .map(|i| Domain::ALL[i])
}
