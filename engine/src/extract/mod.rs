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

mod dates;
mod decisions;
pub mod lexicon;
mod mentions;
mod records;

pub use dates::*;
pub use decisions::*;
pub use mentions::*;
pub use records::*;

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

/// What `chosen` holds for a return to "what we had": the choice made
/// before the one in force.
pub const EARLIER_CHOICE: &str = "(the choice before this one)";

/// What `replaced` holds for a switch that names nothing it replaces: the
/// choice in force whose name or topic the turn mentions, if one does.
pub const PREVIOUS_NAMED: &str = "(the choice the turn names)";

/// Marks that end a clause when a word ends with one ("on 4 May, 2 vans").
const CLAUSE_MARKS: [char; 7] = [',', '.', ';', ':', '!', '?', ')'];

/// What a decision's label says, after its choice, of the options the reply
/// offered beside it: "Use X (over Y, Z)". A later choice of Y replaces it.
pub const PASSED_OVER: &str = " (over ";

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

impl Record {
    /// A fact: "`subject`: `value`", about `subject`, said in `sentence`.
    pub fn fact(subject: &str, value: &str, sentence: &str) -> Record {
        Record {
            kind: NodeKind::Fact,
            label: format!("{subject}: {value}"),
            subject: Some(subject.to_owned()),
            sentence: sentence.trim().to_owned(),
        }
    }

    /// What the label says of its subject: "3 s" of "request timeout: 3 s"
    /// (empty for a label without one).
    pub fn value(&self) -> &str {
        self.label.split_once(": ").map_or("", |(_, v)| v)
    }
}

/// Text as the cue lists spell it: a typographic apostrophe (U+2019, or a
/// U+2018 typed for one) inside a word is the plain one ("let’s" →
/// "let's"). With `bare`, for what a person typed, a contraction typed
/// without its apostrophe gets it back where the bare form is no other word
/// (`bare_contractions.txt`: "dont" → "don't"; "its" and "were" stay). The
/// first letter keeps its case. Nothing else changes.
pub fn normalize_typing(text: &str, bare: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let inside = i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if matches!(c, '\u{2019}' | '\u{2018}') && inside {
            out.push('\'');
        } else {
            out.push(c);
        }
    }
    if !bare {
        return out;
    }
    let out = restore_lets(&out);
    let meant = |word: &str| {
        let l = word.to_lowercase();
        lexicon::BARE_CONTRACTIONS.iter().find_map(|pair| {
            let (bare, full) = pair.split_once(' ')?;
            (bare == l).then_some(full)
        })
    };
    if !out
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| meant(w).is_some())
    {
        return out;
    }
    // A token is restored only when it is the bare word with at most
    // punctuation around it ("dont,"), never inside a path or an
    // identifier ("im.rs", "dont_x").
    map_prose_tokens(&out, |piece| {
        let core = piece.trim_matches(|c: char| {
            matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')' | '"')
        });
        let full = meant(core).filter(|_| core.chars().all(char::is_alphabetic))?;
        let at = piece.find(core).unwrap_or(0);
        let mut fixed = piece[..at].to_owned();
        let mut cs = full.chars();
        if let Some(f) = cs.next() {
            if core.starts_with(char::is_uppercase) {
                fixed.extend(f.to_uppercase());
            } else {
                fixed.push(f);
            }
            fixed.extend(cs);
        }
        fixed.push_str(&piece[at + core.len()..]);
        Some(fixed)
    })
}

/// "lets" typed for "let's" where it opens a clause and a verb follows
/// ("ok lets try X", "fine, lets keep it"), not the verb ("it lets you",
/// "this lets the job retry"): restored where the word before it is none,
/// ends a clause or is an interjection or a conjunction, and the word after
/// it is no pronoun or determiner.
fn restore_lets(text: &str) -> String {
    if !text
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("lets"))
    {
        return text.to_owned();
    }
    let core_of = |piece: &str| -> String {
        piece
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
            .to_lowercase()
    };
    let pieces: Vec<&str> = text.split_inclusive(char::is_whitespace).collect();
    let mut code = false;
    let mut out = String::with_capacity(text.len() + 8);
    for (i, piece) in pieces.iter().enumerate() {
        let was_code = code;
        code ^= piece.matches('`').count() % 2 == 1;
        let word = piece.trim_end();
        if was_code || word.contains('`') || core_of(word) != "lets" || !word.contains("ets") {
            out.push_str(piece);
            continue;
        }
        let opens = match i.checked_sub(1).map(|j| pieces[j].trim_end()) {
            None | Some("") => true,
            Some(p) => {
                let lead = core_of(p);
                p.ends_with(CLAUSE_MARKS)
                    || p.ends_with(['!', '?', '-', '—', '('])
                    || lexicon::INTERJECTIONS.contains(lead.as_str())
                    || lexicon::COORDINATORS.contains(lead.as_str())
            }
        };
        let next = pieces.get(i + 1).map(|p| core_of(p)).unwrap_or_default();
        let verb_next = !next.is_empty()
            && next.chars().all(char::is_alphabetic)
            && !lexicon::OBJECT_PRONOUNS.contains(next.as_str())
            && !lexicon::DETERMINERS.contains(next.as_str());
        if opens && verb_next && !word.ends_with(CLAUSE_MARKS) {
            let at = piece.find(|c: char| c.is_alphabetic()).unwrap_or(0);
            out.push_str(&piece[..at + 3]);
            out.push('\'');
            out.push_str(&piece[at + 3..]);
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// `text` with each whitespace-separated token outside a code span passed
/// through `rewrite` (`None` keeps it as written). Whitespace, code spans
/// and tokens that touch a backtick are never passed.
pub fn map_prose_tokens(text: &str, mut rewrite: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut in_code = false;
    let mut rest = text;
    while !rest.is_empty() {
        let space = rest.starts_with(char::is_whitespace);
        let split = rest
            .find(|c: char| c.is_whitespace() != space)
            .unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(split);
        rest = tail;
        let ticks = piece.matches('`').count();
        let code = in_code || ticks > 0;
        if ticks % 2 == 1 {
            in_code = !in_code;
        }
        match (!space && !code).then(|| rewrite(piece)).flatten() {
            Some(new) => out.push_str(&new),
            None => out.push_str(piece),
        }
    }
    out
}

/// Splits text into sentences, dropping fenced code blocks. An emoji
/// followed by a space or the line's end closes a sentence as a full stop
/// would ("that's messy 😅 ok forget it"), and is no part of either.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut push = |s: &str| {
        let s = s.trim();
        if s.chars().any(char::is_alphanumeric) {
            out.push(s.to_owned());
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || trimmed.is_empty() {
            continue;
        }
        let unbolded = without_bold(trimmed);
        let trimmed = unbolded.trim_start_matches(['-', '*', '>', '#', ' ']);
        let mut start = 0;
        let mut chars = trimmed.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if is_emoji(c) {
                let mut end = i + c.len_utf8();
                while let Some(&(j, n)) = chars.peek().filter(|&&(_, n)| is_emoji(n)) {
                    end = j + n.len_utf8();
                    chars.next();
                }
                if trimmed[end..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
                {
                    push(&trimmed[start..i]);
                    start = end;
                }
                continue;
            }
            if matches!(c, '.' | '?' | '!' | ';')
                && trimmed[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
                && !(c == '.' && i + 1 < trimmed.len() && short_form_before(&trimmed[start..i]))
            {
                push(&trimmed[start..=i]);
                start = i + 1;
            }
        }
        push(&trimmed[start..]);
    }
    out
}

/// A pictograph or a part of one (a skin tone, a joiner, a variation
/// selector), by Unicode's emoji property; ASCII and Latin-1 ("#", "7", "©")
/// are text here.
fn is_emoji(c: char) -> bool {
    use unicode_properties::UnicodeEmoji;
    u32::from(c) > 0xff && c.is_emoji_char_or_emoji_component()
}

/// `line` without Markdown bold marks ("**Budget**: 80%" → "Budget: 80%");
/// "**" between two letters or digits ("2**10") is kept.
fn without_bold(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("**") {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("**") {
        let before = rest[..at]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back());
        let after = rest[at + 2..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric) {
            out.push_str("**");
        }
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out.into()
}

/// Whether `text` ends in a title or short form ("dr", "e.g") whose period
/// does not end the sentence: "our vet is dr. x" is one sentence. One in
/// capitals is an acronym that may end one ("on every MR. Then …").
fn short_form_before(text: &str) -> bool {
    let word = text
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("");
    if word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && !word.chars().any(char::is_lowercase)
    {
        return false;
    }
    let word = word.to_lowercase();
    // "needs 40 ms. Then …": after a number a title's letters are a unit.
    let after_number = text
        .split_whitespace()
        .nth_back(1)
        .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit() || c == '.'));
    (lexicon::is_title(&word) && !after_number) || lexicon::ABBREVIATIONS.contains(&word)
}

/// A word of a sentence, with its trimmed form and position facts.
#[derive(Clone, Debug)]
struct Word<'a> {
    raw: &'a str,
    text: &'a str,
    backticked: bool,
    sentence_start: bool,
}

impl Word<'_> {
    /// The token as said: lowercase, its outer punctuation off, its
    /// apostrophes kept and straightened ("He’s," → "he's"). (`text` drops
    /// a possessive "'s".)
    fn spoken(&self) -> String {
        self.raw
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
            .to_lowercase()
            .replace('\u{2019}', "'")
    }
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

/// Where `part`, a slice of `s` (a word [`words`] gave), starts in `s`:
/// by position, not by a search that would find an earlier copy of the
/// same word.
fn offset_in(s: &str, part: &str) -> Option<usize> {
    let at = (part.as_ptr() as usize).checked_sub(s.as_ptr() as usize)?;
    (at + part.len() <= s.len() && s.is_char_boundary(at)).then_some(at)
}

/// Cuts a string to at most `n` characters, on a character boundary.
fn cut_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Case-insensitive prefix test that never slices inside a character.
fn strip_suffix_ci<'a>(s: &'a str, suffix: &str) -> Option<&'a str> {
    let at = s.len().checked_sub(suffix.len())?;
    (s.is_char_boundary(at) && s[at..].eq_ignore_ascii_case(suffix)).then(|| &s[..at])
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Whether a sentence says it is an aside ("…, by the way", "fyi …").
pub fn is_aside(sentence: &str) -> bool {
    lexicon::ASIDE_MARKERS
        .iter()
        .any(|m| find_ci(sentence, m).is_some())
}

/// Byte offset of `needle` (lowercase, single-byte) in `hay` at word boundaries,
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

/// Whether byte offset `p` of `s` sits inside a backticked span.
fn in_backticks(s: &str, p: usize) -> bool {
    s[..p].matches('`').count() % 2 == 1
}

fn strip_clause(s: &str) -> &str {
    let mut end = s.len();
    // Punctuation, then the words of the lists; a trailing space asks for a
    // space after the word.
    let words = lexicon::CLAUSE_BREAKS
        .iter()
        .map(|w| format!(" {w} "))
        .chain(lexicon::CLAUSE_CLOSERS.iter().map(|w| format!(" {w}")));
    for stop in [",", ";", ":", " — ", " - "]
        .map(str::to_owned)
        .into_iter()
        .chain(words)
    {
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

/// The English Snowball stem of a word (lowercased first), the one
/// retrieval uses, so topic matching and search agree on inflections.
pub fn stem(w: &str) -> String {
    crate::retrieval::text::stem(&w.to_lowercase())
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

/// The facts (versions and settings too), restrictions, procedures and
/// intentions a text states.
pub fn records(text: &str) -> Vec<Record> {
    sentences(text)
        .iter()
        .flat_map(|s| {
            [fact(s), restriction(s), procedure(s), intention(s)]
                .into_iter()
                .flatten()
                .chain(versions(s))
        })
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
