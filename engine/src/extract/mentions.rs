//! Names in a sentence: people (with their roles), projects, products,
//! files, identifiers; and the roles pronouns give them.

use super::*;

pub(super) fn is_capitalized(w: &str) -> bool {
    let mut chars = w.chars();
    matches!(chars.next(), Some(c) if c.is_uppercase())
        && w.chars().skip(1).any(|c| c.is_lowercase())
        && w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '\'' | '&'))
}

/// Up to `n` words from `from` on, lowercase, joined by spaces ("" past the end).
fn lower_run(ws: &[Word<'_>], from: usize, n: usize) -> String {
    ws.get(from.min(ws.len())..(from + n).min(ws.len()))
        .unwrap_or_default()
        .iter()
        .map(|w| w.text.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// An all-capitals abbreviation of two to six letters or digits ("HTTP",
/// "API", "S3"), at least two of them letters.
pub(super) fn is_acronym(w: &str) -> bool {
    let n = w.chars().count();
    (2..=6).contains(&n)
        && w.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && w.chars().filter(char::is_ascii_uppercase).count() >= 2
}

pub(super) fn file_path(w: &str, root: Option<&str>) -> Option<String> {
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
pub(super) fn clean_code_token(t: &str) -> &str {
    let end = t.find(['<', '(', '{', '[', '=']).unwrap_or(t.len());
    t[..end].trim_end_matches([':', '.', ','])
}

pub(super) fn looks_like_hash(t: &str) -> bool {
    t.len() >= 7
        && t.bytes().all(|b| b.is_ascii_hexdigit())
        && t.bytes().any(|b| b.is_ascii_digit())
        && t.bytes().any(|b| b.is_ascii_alphabetic())
}

pub(super) fn identifier(w: &Word<'_>) -> bool {
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
    // kebab-case names a package, chart or flag when it is backticked or
    // one of its parts is no common word ("proxy-x", not "well-known").
    let kebab = t.contains('-')
        && !t.starts_with('-')
        && !t.ends_with('-')
        && t.split('-').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && t.chars().any(|c| c.is_ascii_alphabetic())
        && (w.backticked
            || (lexicon::frequencies_loaded()
                && t.split('-').any(|p| {
                    p.len() >= 3
                        && p.chars().all(|c| c.is_ascii_alphabetic())
                        && !lexicon::is_known_word(p)
                })));
    // An issue or ticket key: "ABC-123".
    let ticket = t.split_once('-').is_some_and(|(a, b)| {
        (2..=10).contains(&a.len())
            && a.chars().all(|c| c.is_ascii_uppercase())
            && (2..=7).contains(&b.len())
            && b.chars().all(|c| c.is_ascii_digit())
    });
    if kebab || ticket {
        return true;
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

/// Whether a lowercase word could be a name: alphabetic, not a function word,
/// not closed-class, not very common English.
pub(super) fn could_be_lower_name(w: &str) -> bool {
    let chars = w.chars().count();
    (2..=20).contains(&chars)
        && w.chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
        && w.chars().next().is_some_and(char::is_lowercase)
        && !lexicon::is_closed_class(w)
        && !lexicon::is_common(w, 5.6)
        && !lexicon::GROUP_WORDS.contains(w)
        && !lexicon::is_person_noun(w)
        // "my aunt's christening", "our lead keeps asking": a noun for a
        // thing, never for a person, is no name. (Not a word of three letters: WordNet
        // lists acronyms among nouns, and "sam" is one.)
        && !(chars > 3 && lexicon::is_thing_noun(w))
        && !w.ends_with("one")
        && !w.ends_with("body")
}

/// A word the frequency list knows but rarely ("otto", "mabel": names are
/// in it too) opening its clause before a verb of what people do ("says",
/// "wants", "emailed"): a name. Not a verb form ("shaken says"), not the
/// plural of a role ("neighbours told"); the verb is a one-word entry
/// of `person_after.txt` (not "from the" or "and i").
fn known_name_like(ws: &[Word<'_>], i: usize) -> bool {
    let w = ws[i].text.to_lowercase();
    let clause_start = i == 0
        || ws[i - 1].raw.ends_with(super::CLAUSE_MARKS)
        || lexicon::COORDINATORS.contains(&lw_at(ws, i - 1));
    let verb = lw_at(ws, i + 1);
    clause_start
        && lexicon::zipf(&w).is_some_and(|z| z < KNOWN_NAME_ZIPF)
        && !w.ends_with("ed")
        && !w.ends_with("en")
        && !w.ends_with("ing")
        && !lexicon::PRONOUN_CONTRACTIONS.contains(&w)
        && !w
            .strip_suffix('s')
            .is_some_and(|s| lexicon::is_person_noun(s) || lexicon::GROUP_WORDS.contains(s))
        && lexicon::PERSON_AFTER.contains(&verb)
}

/// Below this Zipf frequency a word before a speech verb may be a name.
const KNOWN_NAME_ZIPF: f32 = 4.6;

/// Whether a word that opens a sentence is too common to be a name by itself.
pub(super) fn common_at_start(w: &str) -> bool {
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
                strong: w.backticked
                    || w.text.contains("::")
                    || w.text.contains('_')
                    || w.text.contains('-'),
            });
            i += 1;
            continue;
        }
        let lower = w.text.to_lowercase();
        // A title before a name: "Dr X".
        // Not a unit after a number ("40 ms"), nor before a pronoun.
        let after_number = i > 0
            && !ws[i - 1].raw.ends_with(super::CLAUSE_MARKS)
            && ws[i - 1]
                .text
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.');
        if lexicon::is_title(&lower)
            && !after_number
            && ws.get(i + 1).is_some_and(|n| {
                !lexicon::is_closed_class(&n.text.to_lowercase())
                    && is_capitalized(n.text)
                    // "dr. x": a title vouches for a name in lowercase.
                    || (w.raw.ends_with('.') && could_be_lower_name(n.text))
            })
        {
            i += 1;
            let n = &ws[i];
            out.push(Mention {
                label: n.text.to_owned(),
                kind: NodeKind::Person,
                domain: Domain::Relationship,
                // "our vet is dr. x": the role a linking verb gives it.
                role: copula_role_before(&ws, i),
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
        // A month that is also a name ("Jun", "May"), with a person's cue
        // after it: "Jun from the office", "May said".
        if is_capitalized(w.text) && lexicon::MONTHS.contains(&lower) {
            let before_digit = i > 0 && ws[i - 1].text.chars().all(|c| c.is_ascii_digit());
            if !before_digit
                && !w.raw.ends_with([',', '.', ':', ';'])
                && (lexicon::PERSON_AFTER.contains(&lower_run(&ws, i + 1, 1))
                    || lexicon::PERSON_AFTER.contains(&lower_run(&ws, i + 1, 2)))
            {
                out.push(Mention {
                    label: w.text.to_owned(),
                    kind: NodeKind::Person,
                    domain: Domain::Relationship,
                    role: role_after(&ws, i + 1),
                    strong: true,
                });
                i += 1;
                continue;
            }
        }
        // An acronym opens a name only with a capitalised word after it
        // ("XYZ Widgets"); alone it is left to the code shapes.
        let acronym_led = is_acronym(w.text)
            && ws.get(i + 1).is_some_and(|n| is_capitalized(n.text))
            && !w.raw.ends_with([',', '.', ':', ';', ')']);
        if (is_capitalized(w.text) || acronym_led) && !lexicon::is_closed_class(&lower) {
            // Merge a run of capitalised words (and acronyms) into one name.
            let mut j = i + 1;
            // "Quorrel & Sons": an ampersand between capitalised words joins
            // them into one name.
            let mut amp = false;
            while j < ws.len()
                && j - i < 3
                && (is_capitalized(ws[j].text) || is_acronym(ws[j].text))
                && !ws[j].raw.starts_with(['(', '[', '"', '\''])
                && !lexicon::is_closed_class(&ws[j].text.to_lowercase())
                && !ws[j - 1].raw.ends_with([',', '.', ':', ';', ')'])
                || (!amp
                    && j < ws.len()
                    && ws[j].raw == "&"
                    && !ws[j - 1].raw.ends_with([',', '.', ':', ';', ')'])
                    && ws.get(j + 1).is_some_and(|n| is_capitalized(n.text)))
            {
                amp |= ws[j].raw == "&";
                j += 1;
            }
            let name = ws[i..j]
                .iter()
                .map(|w| if w.raw == "&" { "&" } else { w.text })
                .collect::<Vec<_>>()
                .join(" ");
            let after = lower_run(&ws, j, 1);
            let after2 = lower_run(&ws, j, 2);
            let before = if i > 0 {
                ws[i - 1].text.to_lowercase()
            } else {
                String::new()
            };
            // "X — he's the product manager", "X approves windows, she's the EM".
            // "X from Acme emailed": a name, then where they are from, then
            // what people do. The place's name after "from" is not the one
            // who emailed, and a pronoun after it speaks of the name.
            let org_end = (after == "from"
                && ws.get(j + 1).is_some_and(|n| is_capitalized(n.text))
                && !(w.sentence_start && j - i == 1 && common_at_start(w.text)))
            .then(|| {
                let mut k = j + 1;
                while k < ws.len() && k - j <= 3 && is_capitalized(ws[k].text) {
                    k += 1;
                }
                k
            })
            .filter(|&k| {
                lexicon::PERSON_AFTER.contains(&lower_run(&ws, k, 1))
                    || lexicon::PERSON_AFTER.contains(&lower_run(&ws, k, 2))
            });
            let from_org = org_end.is_some();
            // "Osric from Brindle Hosting", "Ilva at Quillon Tacos": the
            // place after a name is where the person is, not a person.
            let after_from = (before == "from" || before == "at")
                && i >= 2
                && is_capitalized(ws[i - 2].text)
                && !ws[i - 2].raw.ends_with(super::CLAUSE_MARKS);
            // A word set off by a comma ("Anyway, x will …") is not
            // the subject a later pronoun speaks of.
            let by_pronoun = || {
                if ws[j - 1].raw.ends_with(',') {
                    (j..(j + 6).min(ws.len())).find_map(|k| pronoun_role_at(&ws, k))
                } else {
                    pronoun_role_near(&ws, org_end.unwrap_or(j), true)
                }
            };
            let role = if after_from {
                None
            } else {
                role_after(&ws, j)
                    .or_else(|| role_before(&ws, i))
                    .or_else(|| copula_role_before(&ws, i))
                    .or_else(by_pronoun)
            };
            // "X, he …", "X, who looks after …": only people take these.
            let pronoun_next = !after_from
                && ((ws[j - 1].raw.ends_with(',')
                    && lexicon::THIRD_PERSON_PRONOUNS.contains(&after))
                    || after == "who");
            let person_cue = (!after_from
                && (lexicon::PERSON_AFTER.contains(&after)
                    || lexicon::PERSON_AFTER.contains(&after2)))
                || from_org
                || role.is_some()
                || pronoun_next
                || (lexicon::PERSON_BEFORE.contains(&before) && i > 0)
                || named_as_person(&ws, i);
            // A name of two words or more whose last word is a noun for a
            // thing or a place ("Norrow Bakery", "Fenley Terrace") names a
            // business or a place.
            let thing_head = j - i >= 2 && lexicon::is_thing_noun(ws[j - 1].text);
            // "Norrow Coffee wants …", "the Weavers' Guild asked …": a
            // business or a body does what people do; it needs a role or a
            // pronoun to be a person.
            let person_cue = person_cue && !(thing_head && role.is_none() && !pronoun_next);
            // A common word opening a sentence needs a role, not just a verb
            // after it ("Data from the last run …").
            let person_cue = person_cue
                && !(w.sentence_start
                    && j - i == 1
                    && common_at_start(w.text)
                    && role.is_none()
                    && lexicon::is_common(w.text, 4.5));
            let two_names = !after_from
                && j - i == 2
                && ws[i..j]
                    .iter()
                    .all(|w| w.text.chars().all(char::is_alphabetic) && is_capitalized(w.text))
                && !lexicon::is_common(ws[i + 1].text, 4.3)
                && !lexicon::is_common(ws[i].text, 5.0)
                && !thing_head;
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
            // "my nephew painted a fox": a word taking a determiner after it
            // is a verb, not the kid's name.
            let verb_like = ws
                .get(i + 1)
                .is_some_and(|n| lexicon::DETERMINERS.contains(&n.text.to_lowercase()))
                && !w.raw.ends_with(super::CLAUSE_MARKS);
            let det_role = || {
                (i >= 2
                    && !verb_like
                    && !ws[i - 1].raw.contains([')', '(', ',', '.'])
                    && lexicon::LOWER_NAME_DETERMINERS.contains(&ws[i - 2].text.to_lowercase()))
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
            // A clause's subject: "x annotated it, hes my labmate".
            let subject = i == 0
                || ws[i - 1].raw.ends_with([',', ';', ':'])
                || lexicon::COORDINATORS.contains(&lw_at(&ws, i - 1));
            let described = || {
                let the_role = (zipf_below(2.5) && lw_at(&ws, i + 1) == "the")
                    .then(|| role_phrase_at(&ws, i + 1))
                    .flatten()
                    .filter(|r| r.split_whitespace().count() <= 3);
                the_role.or_else(|| {
                    (subject && zipf_below(3.5))
                        .then(|| {
                            // The pronoun refers to this name while no other
                            // name comes between: "x will do the layout for
                            // the page — he's our designer".
                            pronoun_role_near(&ws, i + 1, false)
                        })
                        .flatten()
                })
            };
            // "x, our analyst, said": a role set off by commas after it.
            // The role ends its own clause: "errors, the tester
            // will check them" sets off a new subject, not a role.
            let appositive = || {
                (w.raw.ends_with(',') && lexicon::ROLE_DETERMINERS.contains(&lw_at(&ws, i + 1)))
                    .then(|| role_phrase_at(&ws, i + 1))
                    .flatten()
                    .filter(|r| {
                        let n = r.split_whitespace().count();
                        let last = i + 1 + n;
                        n <= 3
                            && ws.get(last).is_some_and(|e| {
                                e.raw.ends_with(super::CLAUSE_MARKS) || last + 1 == ws.len()
                            })
                    })
            };
            // "Ana, one of my regulars, is a nurse": the word the
            // apposition ends with is not who the role is said of.
            let role = (!w.raw.ends_with(','))
                .then(|| lower_role_after(&ws, i + 1))
                .flatten()
                .or_else(|| paren_role(&ws, i + 1))
                .or_else(det_role)
                .or_else(appositive)
                // "the venue manager is x", the name ending its clause
                // ("the lead is quite slow" names no one).
                .or_else(|| {
                    let ends = w.raw.ends_with(super::CLAUSE_MARKS)
                        || i + 1 == ws.len()
                        || lexicon::COORDINATORS.contains(&lw_at(&ws, i + 1));
                    // "the pilot is running": a verb form, not a name.
                    let ends = ends && !w.text.ends_with("ing") && !w.text.ends_with("ed");
                    ends.then(|| copula_role_before(&ws, i)).flatten()
                })
                .or_else(described);
            // A bare word where only a name can stand: "x and I …" opening
            // a clause, "x's mum" (a word that needs a determiner would
            // have one: "the client's partner").
            let rare = lexicon::zipf(w.text).is_none_or(|z| z < 5.0);
            let no_det = i == 0 || !lexicon::DETERMINERS.contains(&lw_at(&ws, i - 1));
            let with_me = subject
                && lw_at(&ws, i + 1) == "and"
                && lw_at(&ws, i + 2) == "i"
                && !w.raw.ends_with([',', '.', ';', ':']);
            let kin = (w.raw.ends_with("'s") || w.raw.ends_with("’s"))
                && lexicon::RELATION_NOUNS.contains(&lw_at(&ws, i + 1));
            let bare_name = rare && no_det && (with_me || kin);
            let asked = i > 0
                && lexicon::ASK_VERBS.contains(&ws[i - 1].text.to_lowercase())
                && ws[i - 1].raw.chars().all(|c| c.is_alphabetic())
                && !lexicon::is_common(w.text, 4.5);
            // "(lead, owns the dashboards) says" ends an aside, and "X's
            // widget wants" is X's thing: neither says who speaks.
            let owned = i > 0 && (ws[i - 1].raw.ends_with("'s") || ws[i - 1].raw.ends_with("’s"));
            let verb_after = ws.get(i + 1).is_some_and(|n| {
                let l = n.text.to_lowercase();
                lexicon::PERSON_AFTER.contains(&l) && !w.raw.ends_with([',', '.', ';', ':', ')'])
            }) && !owned
                && lexicon::frequencies_loaded()
                && (lexicon::zipf(w.text).is_none() || known_name_like(&ws, i))
                && !w.text.contains('-');
            if let Some(role) = role.or((asked || verb_after || bare_name).then(String::new)) {
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

pub(super) fn dedup_mentions(v: Vec<Mention>) -> Vec<Mention> {
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
pub(super) fn phrase_until_clause(ws: &[Word<'_>], from: usize, max: usize) -> String {
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
pub(super) fn names_role(phrase: &str) -> bool {
    phrase.to_lowercase().split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
        lexicon::is_person_noun(w)
    })
}

/// A role stated after a name: "(backend lead)", ", our backend lead,",
/// "is our SRE", "just became our tech lead", "from finance".
pub(super) fn role_after(ws: &[Word<'_>], j: usize) -> Option<String> {
    let next = ws.get(j)?;
    if let Some(role) = paren_role(ws, j) {
        return Some(role);
    }
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
    if prev.raw.ends_with(',') && lexicon::APPOSITION_DETERMINERS.contains(&nl) {
        let role = phrase_until_clause(ws, j + 1, 4);
        return names_role(&role).then_some(role);
    }
    lower_role_after(ws, j)
}

/// A role in parentheses right after a name, as its words: "(designer)",
/// "(my manager)", "(he's our PM)", "(chair of the board)" → "designer",
/// "manager", "PM", "chair".
pub(super) fn paren_role(ws: &[Word<'_>], j: usize) -> Option<String> {
    if !ws.get(j)?.raw.starts_with('(') {
        return None;
    }
    pronoun_role_at(ws, j).or_else(|| role_phrase_at(ws, j))
}

/// "her name's X", "Dad's name is X": a name given as a person's name,
/// the owner a possessive pronoun (`person_possessives.txt`) or a noun for
/// a person ("the landlord's name is X"; not "the dog's name").
pub(super) fn named_as_person(ws: &[Word<'_>], i: usize) -> bool {
    let raw = |k: usize| ws[k].spoken();
    let owner = if i >= 2 && raw(i - 1) == "name's" {
        i - 2
    } else if i >= 3 && matches!(raw(i - 1).as_str(), "is" | "was") && raw(i - 2) == "name" {
        i - 3
    } else {
        return false;
    };
    let o = raw(owner);
    lexicon::PERSON_POSSESSIVES.contains(&o)
        || o.strip_suffix("'s").is_some_and(lexicon::is_person_noun)
}

/// A role a linking verb gives the name after it: "the landlord is X",
/// "our PM is X", "our vet is dr. X" → "landlord", "PM", "vet" (the run of
/// role words before the verb; a title before the name is passed over).
pub(super) fn copula_role_before(ws: &[Word<'_>], i: usize) -> Option<String> {
    let titled = i >= 1 && lexicon::is_title(&lw_at(ws, i - 1));
    let i = if titled { i - 1 } else { i };
    if i < 2 || !lexicon::COPULAS.contains(&lw_at(ws, i - 1)) {
        return None;
    }
    let is_role = |w: &Word<'_>| {
        let l = w.text.to_lowercase();
        lexicon::is_person_noun(&l) && w.raw.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    let mut start = i - 1;
    while start > 0 && i - 1 - start < 2 && is_role(&ws[start - 1]) {
        start -= 1;
    }
    (start < i - 1).then(|| {
        ws[start..i - 1]
            .iter()
            .map(|w| w.text)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The role a pronoun gives a name within the next words of its sentence
/// ("X will own the release checklist, she's our QA lead"), while no
/// other name (a capitalised word not opening a sentence; an acronym too
/// unless `past_acronyms`) comes between.
fn pronoun_role_near(ws: &[Word<'_>], from: usize, past_acronyms: bool) -> Option<String> {
    (from..(from + 15).min(ws.len()))
        .take_while(|&k| {
            !is_capitalized(ws[k].text)
                || ws[k].sentence_start
                || (past_acronyms && is_acronym(ws[k].text))
        })
        .find_map(|k| pronoun_role_at(ws, k))
}

/// The verb patterns after a name that give its role.
pub(super) fn lower_role_after(ws: &[Word<'_>], j: usize) -> Option<String> {
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
    if !lexicon::ROLE_VERBS.contains(&lw(k)) {
        return None;
    }
    k += 1;
    // "got promoted to", "was made", "has become", "is now", "joined as"
    while lexicon::ROLE_VERB_FILLERS.contains(&lw(k)) {
        k += 1;
    }
    role_phrase_at(ws, k)
}

/// The role named from `k` on, after a linking verb: "(now) (our|the|a)
/// backend lead" → "backend lead"; only when a role or relation noun ends it.
pub(super) fn role_phrase_at(ws: &[Word<'_>], k: usize) -> Option<String> {
    let lw = |k: usize| ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default();
    let mut k = k;
    while lexicon::ROLE_ADVERBS.contains(&lw(k)) {
        k += 1;
    }
    if lexicon::ROLE_DETERMINERS.contains(&lw(k)) {
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
        lexicon::is_person_noun(&l)
    };
    let mut end = words.iter().position(is_role).map(|p| p + 1)?;
    // "product manager", "release manager": the whole run of role nouns.
    while end < words.len() && is_role(&words[end]) {
        end += 1;
    }
    // "starts the dev box": a role noun that modifies the noun after it
    // names no role.
    if let Some(next) = words.get(end)
        && !words[end - 1].ends_with(super::CLAUSE_MARKS)
    {
        let l = next
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if !l.is_empty() && !lexicon::is_stop(&l) && !lexicon::is_closed_class(&l) {
            return None;
        }
    }
    Some(words[..end].join(" "))
}

/// A role stated before a name: "our designer X", "my sister x",
/// "my manager X".
pub(super) fn role_before(ws: &[Word<'_>], i: usize) -> Option<String> {
    if i == 0 {
        return None;
    }
    let prev = ws[i - 1].text.to_lowercase();
    // "my sister's flat": what the relative has, not their name.
    let bare = ws[i - 1]
        .raw
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let possessive = bare.ends_with("'s") || bare.ends_with("\u{2019}s");
    if possessive
        || ws[i - 1].raw.ends_with(['.', ';', ':'])
        || (ws[i - 1].raw.ends_with(',') && !lexicon::is_person_noun(&prev))
    {
        return None;
    }
    if lexicon::is_person_noun(&prev) {
        let start = i.saturating_sub(3);
        let role: Vec<&str> = ws[start..i]
            .iter()
            .map(|w| w.text)
            .filter(|w| !lexicon::ROLE_PHRASE_SKIPS.contains(&w.to_lowercase()))
            .collect();
        // "my sister x", not "the lead engineer said": the word before
        // the role must be a determiner or a role word itself.
        let det = ws[..i - 1]
            .last()
            .map(|w| w.text.to_lowercase())
            .unwrap_or_default();
        // "my little brother x": one lowercase word that is no noun
        // (WordNet's) may stand between the determiner and the role.
        let described = i >= 3
            && ws[i - 2].text.chars().all(|c| c.is_ascii_lowercase())
            && lexicon::nouns_loaded()
            && lexicon::never_a_person(ws[i - 2].text).is_none()
            && lexicon::PRE_ROLE_DETERMINERS.contains(&ws[i - 3].text.to_lowercase());
        let ok = lexicon::PRE_ROLE_DETERMINERS.contains(&det)
            || described
            || lexicon::is_role_noun(&det)
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

pub(super) fn lw_at(ws: &[Word<'_>], k: usize) -> String {
    ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default()
}

/// "he's the DBA", "she is our EM": a role given by a pronoun at `k`
/// (within a few words after a name, or opening the next sentence).
pub(super) fn pronoun_role_at(ws: &[Word<'_>], k: usize) -> Option<String> {
    let lw = |k: usize| ws.get(k).map(|w| w.text.to_lowercase()).unwrap_or_default();
    let w = ws.get(k).map(Word::spoken).unwrap_or_default();
    let after = match w.as_str() {
        // Typed fast, the apostrophe goes: "hes my labmate".
        c if lexicon::PRONOUN_CONTRACTIONS.contains(c) => k + 1,
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
