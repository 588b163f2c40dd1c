//! Closed-class word lists (data files beside this module) and the optional
//! word-frequency list that tells a common word from a name.
//!
//! The lists under `data/` are compiled in: cue phrases, function words,
//! months, weekdays, titles, interjections, role and relation nouns. Whether a
//! word is *common* comes from wordfreq's English list, and what kind of thing
//! a noun names from WordNet's noun classes, both provisioned by
//! `scripts/provision-words.sh` into the rollgraph cache. They are loaded only
//! by [`init_frequencies`], which the heuristic probe calls when it is built
//! (daemon, replay, eval): the hook path never reads them, and without them
//! [`zipf`] and [`names_a_thing`] answer `None` for every word.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{LazyLock, OnceLock};

/// A closed class of words or phrases, lowercase.
pub struct WordList {
    items: Vec<&'static str>,
    set: HashSet<&'static str>,
}

impl WordList {
    /// Parses a list file: one entry a line, `#` starts a comment.
    pub fn parse(text: &'static str) -> WordList {
        let items: Vec<&'static str> = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        let set = items.iter().copied().collect();
        WordList { items, set }
    }

    /// Whether `w` (already lowercase) is in the list.
    pub fn contains(&self, w: &str) -> bool {
        self.set.contains(w)
    }

    /// The entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.items.iter().copied()
    }
}

macro_rules! list {
    ($name:ident, $file:literal, $doc:literal) => {
        #[doc = $doc]
        pub static $name: LazyLock<WordList> =
            LazyLock::new(|| WordList::parse(include_str!(concat!("data/", $file))));
    };
}

list!(
    STOP_WORDS,
    "stop_words.txt",
    "Function words ignored in topics."
);
list!(
    COPULAS,
    "copulas.txt",
    "Forms of \"be\" that link a subject to what is said of it."
);
list!(
    RELATIVE_PRONOUNS,
    "relative_pronouns.txt",
    "Relative pronouns that stand for the noun phrase before them."
);
list!(
    MODALS,
    "modals.txt",
    "Modal verbs, between a subject and its verb."
);
list!(
    ORDINALS,
    "ordinals.txt",
    "Ordinals in order, \"last\" last."
);
list!(
    CHANGE_VERBS,
    "change_verbs.txt",
    "Verbs that change a value to a new one (\"moved to\", \"drop … to\")."
);
list!(
    UPDATE_CUES,
    "update_cues.txt",
    "Words that say a value replaces an earlier one."
);
list!(
    CADENCE_WORDS,
    "cadence_words.txt",
    "Words before a measure that say how often or how much."
);
list!(
    AUXILIARIES,
    "auxiliaries.txt",
    "Auxiliary verbs before a main verb."
);
list!(
    PARTICLES,
    "particles.txt",
    "Adverb particles of phrasal verbs (\"move it over to\")."
);
list!(
    DROP_AFTER_CUES,
    "drop_after_cues.txt",
    "Said after a choice to drop it (\"X is out\")."
);
list!(
    DIFFERENCE_LEADS,
    "difference_leads.txt",
    "Words before a subject that make a value after \"by\" a difference (\"over the cap by £90\")."
);
list!(
    NOTE_LABELS,
    "note_labels.txt",
    "Labels that open a note, not a measured thing (\"Note: 5 of them failed\")."
);
list!(
    CLAUSE_FINAL_DROP_CUES,
    "clause_final_drop_cues.txt",
    "Drop cues that drop only where they end their clause (\"X is out.\")."
);
list!(
    SUFFICIENCY_CUES,
    "sufficiency_cues.txt",
    "Said after a choice to settle on it (\"Y is enough\")."
);
list!(
    ENDORSE_CUES,
    "endorse_cues.txt",
    "Said right after an option the reply named, to pick it (\"X for now\")."
);
list!(
    ENDORSE_LEADS,
    "endorse_leads.txt",
    "Said right before an option the reply named, to pick it (\"just do X\")."
);
list!(
    OPTION_CUES,
    "option_cues.txt",
    "Words with which a reply lays out alternatives."
);
list!(MONTHS, "months.txt", "Month names and abbreviations.");
list!(WEEKDAYS, "weekdays.txt", "Weekday names and relative days.");
list!(TITLES, "titles.txt", "Honorifics written before a name.");
list!(
    ABBREVIATIONS,
    "abbreviations.txt",
    "Short forms whose period does not end a sentence (besides titles)."
);
list!(
    INTERJECTIONS,
    "interjections.txt",
    "Reactions that open a sentence."
);
list!(
    ROLE_NOUNS,
    "role_nouns.txt",
    "Roles a person holds at work."
);
list!(
    RELATION_NOUNS,
    "relation_nouns.txt",
    "People in someone's life."
);
list!(
    PERSON_AFTER,
    "person_after.txt",
    "Words after a name that mark a person."
);
list!(
    PERSON_BEFORE,
    "person_before.txt",
    "Words before a name that mark a person."
);
list!(
    PERSON_POSSESSIVES,
    "person_possessives.txt",
    "Possessive pronouns before \"name is X\" that make X a person."
);
list!(
    THING_MARKERS,
    "thing_markers.txt",
    "Words before a name that a person's name does not take (\"at X\", \"the X\")."
);
list!(
    GROUP_WORDS,
    "group_words.txt",
    "Departments: \"X from finance\"."
);
list!(
    PROJECT_HEADS,
    "project_heads.txt",
    "Nouns that make the name before them a project."
);
list!(
    FEATURE_HEADS,
    "feature_heads.txt",
    "Head nouns of lowercase project phrases."
);
list!(
    NOT_CHOICES,
    "not_choices.txt",
    "Things switched to without a decision."
);
list!(FILE_EXTS, "file_exts.txt", "File name extensions.");
list!(
    DECISION_CUES,
    "decision_cues.txt",
    "Phrases that state a choice, longest first."
);
list!(
    REJECTION_CUES,
    "rejection_cues.txt",
    "Phrases that drop an earlier choice."
);
list!(
    VERB_ADVERBS,
    "verb_adverbs.txt",
    "Adverbs that may stand between \"never\" and its verb (with any -ly word)."
);
list!(
    PAST_FORMS,
    "past_forms.txt",
    "Irregular past forms of verbs (\"felt\", \"been\"): \"never felt\" tells of the past."
);
list!(
    IRREGULAR_PLURALS,
    "irregular_plurals.txt",
    "Plural nouns not formed with -s, counted by a plain number before them."
);
list!(
    CLAUSE_LEADS,
    "clause_leads.txt",
    "A pronoun and its linking verb opening a verbless clause that names a choice."
);
list!(
    VETO_CUES,
    "veto_cues.txt",
    "Verbs by which someone else drops a choice, after any short subject."
);
list!(
    RETURN_CUES,
    "return_cues.txt",
    "Phrases that go back to or keep a choice."
);
list!(
    NEGATION_CUES,
    "negation_cues.txt",
    "Phrases that refuse a choice."
);
list!(
    DEFERRAL_CUES,
    "deferral_cues.txt",
    "Phrases that put a choice off for later."
);
list!(
    CONTRAST_CUES,
    "contrast_cues.txt",
    "Words that set a new choice against an old one."
);
list!(
    DENIAL_LEADS,
    "denial_leads.txt",
    "Words before a value the sentence sets aside."
);
list!(
    RANGE_JOINERS,
    "range_joiners.txt",
    "Words that join two values into a range."
);
list!(
    PERSON_RELATIVES,
    "person_relatives.txt",
    "Relative pronouns that open a clause about another person."
);
list!(
    ACCEPT_CUES,
    "accept_cues.txt",
    "Replies that accept a proposal."
);
list!(
    AFFIRMATIONS,
    "affirmations.txt",
    "Words that open a short reply agreeing to a proposal."
);
list!(
    OBJECT_PRONOUNS,
    "object_pronouns.txt",
    "Pronouns standing for a thing already named: a choice ending in one names nothing."
);
list!(
    THING_PRONOUNS,
    "thing_pronouns.txt",
    "Object pronouns that can stand for a thing chosen: not the speakers, not a person."
);
list!(
    REPORTING_VERBS,
    "reporting_verbs.txt",
    "Verbs that report speech or thought: a subject phrase never reaches back across one."
);
list!(
    REPLACE_VERBS,
    "replace_verbs.txt",
    "Verbs that put one named thing in another's place (\"we replaced Y with X\")."
);
list!(
    UNIT_DIMENSIONS,
    "unit_dimensions.txt",
    "Units of one dimension, one dimension per line (\"kb mb gb\")."
);
list!(
    UNIT_QUANTITIES,
    "unit_quantities.txt",
    "The quantity a unit measures, one per line (\"weight: mg g kg\")."
);
list!(
    VALUE_PRONOUNS,
    "value_pronouns.txt",
    "Pronouns that can be the whole subject of a value (\"it's 9kg\")."
);
list!(
    BARE_CONTRACTIONS,
    "bare_contractions.txt",
    "Contractions typed without their apostrophe, each with the word meant (\"lets let's\")."
);
list!(
    HISTORY_MARKERS,
    "history_markers.txt",
    "Words opening a parenthesis that names what a thing replaced (\"(was Y)\")."
);
list!(
    RULE_SHAPES,
    "rule_shapes.txt",
    "Rules without a rule cue, as \"opener: words that must follow\"."
);
list!(
    EVALUATIVE_NOUNS,
    "evaluative_nouns.txt",
    "Nouns that judge or explain, not a slot a choice fills (\"the problem is X\")."
);
list!(
    GUESSING_MODALS,
    "guessing_modals.txt",
    "Modals that guess at a value, not state it (\"the deposit might be £300\")."
);
list!(
    TENTATIVE_MODALS,
    "tentative_modals.txt",
    "Modals that make a change a possibility (\"we could replace Y with X\")."
);
list!(
    MOVE_FROM_VERBS,
    "move_from_verbs.txt",
    "Verbs of a move from one named thing to another (\"moving from Y to X\")."
);
list!(
    SLOT_MOVE_PREPOSITIONS,
    "slot_move_prepositions.txt",
    "Prepositions before the place a slot moves to (\"the cache goes on X\")."
);
list!(
    MEASURE_VERBS,
    "measure_verbs.txt",
    "Verbs that link a subject to the measure after them (\"the build took 9 minutes\")."
);
list!(
    GRATITUDE,
    "gratitude.txt",
    "Words that thank: after \"no\" and with no number, they decline an offer."
);
list!(
    HOW_QUESTIONS,
    "how_questions.txt",
    "Words of a question asking how a task is done; the reply's command answers it."
);
list!(
    UPDATE_ADVERBS,
    "update_adverbs.txt",
    "Adverbs that mark a value as a new reading of one already measured."
);
list!(
    DATE_PREPOSITIONS,
    "date_prepositions.txt",
    "Prepositions between what happens and its date."
);
list!(
    PREVIOUS_REFS,
    "previous_refs.txt",
    "Phrases that stand for the choice made before the one in force."
);
list!(
    DETERMINERS,
    "determiners.txt",
    "Determiners: the words that open a noun phrase."
);
list!(
    RULE_HEADS,
    "rule_heads.txt",
    "Nouns that head a label naming a rule."
);
list!(
    ASIDE_MARKERS,
    "aside_markers.txt",
    "Phrases that mark a sentence as an aside from the conversation's thread."
);
list!(
    SUBJECT_PRONOUNS,
    "subject_pronouns.txt",
    "Subjects of a team's or the speaker's own choice."
);
list!(
    EVENT_SUBJECTS,
    "event_subjects.txt",
    "Pronouns before \"<verb> on <day>\" that make it an event."
);
list!(
    PROPOSAL_CUES,
    "proposal_cues.txt",
    "Phrases that propose a choice."
);
list!(
    CORRECTION_OPENERS,
    "correction_openers.txt",
    "Openers of a correction."
);
list!(
    CORRECTION_INNER,
    "correction_inner.txt",
    "Correction phrases anywhere in a sentence."
);
list!(
    PREFERENCE_CUES,
    "preference_cues.txt",
    "Phrases that state a preference or habit."
);
list!(
    RESTRICTION_CUES,
    "restriction_cues.txt",
    "Phrases that forbid something."
);
list!(
    PROCEDURE_CUES,
    "procedure_cues.txt",
    "Phrases that give a command to run."
);
list!(
    DEADLINE_CUES,
    "deadline_cues.txt",
    "Words before a date that make it a deadline."
);
list!(
    COMMAND_QUESTIONS,
    "command_questions.txt",
    "Questions that ask for a command to run."
);
list!(
    INTENTION_CUES,
    "intention_cues.txt",
    "Phrases for next steps and blockers."
);
list!(
    FACT_SUBJECT_HEADS,
    "fact_heads.txt",
    "Nouns that head a fact's subject."
);
list!(UNIT_WORDS, "units.txt", "Units that follow a number.");
list!(
    VERSION_CUES,
    "version_cues.txt",
    "Words that make a number after a name that thing's version."
);
list!(
    LIST_VALUE_LINKS,
    "list_value_links.txt",
    "Words that go on after a listed value with what it is for or per (\"£20 each\")."
);
list!(
    LATER_VALUE_SKIPS,
    "later_value_skips.txt",
    "Words before a later value of a sentence that make it no fact of its own (\"not £10\")."
);
list!(
    OPTION_PICK_LEADS,
    "option_pick_leads.txt",
    "Words before the label of an option a user picks (\"let's go with 2\")."
);
list!(
    NUMBER_WORDS,
    "number_words.txt",
    "Cardinal numbers written as words, each with its digits (\"five 5\")."
);
list!(
    COUNT_LEADS,
    "count_leads.txt",
    "Words that may come before a count the sentence states."
);
list!(
    COUNT_ADVERBS,
    "count_adverbs.txt",
    "Words that may follow a count the sentence states (\"right now\")."
);
list!(
    COUNT_LINKS,
    "count_links.txt",
    "Words that may go on from a stated count past its adverbs."
);
list!(
    DISCOURSE_NOUNS,
    "discourse_nouns.txt",
    "Plural nouns after a number that are not things counted."
);
list!(
    OPTION_PICK_TAILS,
    "option_pick_tails.txt",
    "Words that may follow a bare option label (\"a for now\")."
);
list!(
    CONDITIONALS,
    "conditionals.txt",
    "Words that make a clause a condition, not a statement (\"if you want, …\")."
);
list!(
    MAGNITUDES,
    "magnitudes.txt",
    "Number words that scale the number before them (\"3.6 billion\")."
);
list!(
    UNIT_QUALIFIERS,
    "unit_qualifiers.txt",
    "Words between a number and its unit that belong to it (\"5 working days\")."
);
list!(
    TECH_WORDS,
    "domain_technical.txt",
    "Words about technical work."
);
list!(
    PROJECT_WORDS,
    "domain_project.txt",
    "Words about project work."
);
list!(
    RELATIONSHIP_WORDS,
    "domain_relationship.txt",
    "Words about people."
);
list!(
    PERSONAL_WORDS,
    "domain_personal.txt",
    "Words about the user personally."
);
list!(
    OWNERSHIP_CUES,
    "ownership_cues.txt",
    "Words that mark ownership by a person."
);
list!(
    DEPENDENCY_CUES,
    "dependency_cues.txt",
    "Phrases that mark a dependency."
);
list!(
    TOPIC_DETERMINERS,
    "topic_determiners.txt",
    "Determiners trimmed, in order, from the front of a decision's topic."
);
list!(
    REPORT_OPENERS,
    "report_openers.txt",
    "First words of a reply sentence that reports rather than proposes."
);
list!(
    QUESTION_OPENERS,
    "question_openers.txt",
    "Openings of a sentence that asks rather than decides."
);
list!(
    BARE_DECISION_CUES,
    "bare_decision_cues.txt",
    "Decision cues that decide only as an imperative naming a thing."
);
list!(
    IMPERATIVE_LEADS,
    "imperative_leads.txt",
    "Words that may lead a bare decision cue and leave it an imperative."
);
list!(
    INSTEAD_PARTICLES,
    "instead_particles.txt",
    "Particles after the verb of an \"… instead\" clause, dropped with it."
);
list!(
    TRAILING_FILLERS,
    "trailing_fillers.txt",
    "Filler words dropped from the end of a choice."
);
list!(
    REJECTION_LEADS,
    "rejection_leads.txt",
    "Words that may come before a rejection cue, besides interjections."
);
list!(
    DROPPED_DETERMINERS,
    "dropped_determiners.txt",
    "Determiners trimmed, in order, from the front of a dropped thing."
);
list!(
    SHELL_NOUNS,
    "shell_nouns.txt",
    "Nouns trimmed, in order, from the end of a dropped thing (\"the X idea\")."
);
list!(
    DROPPED_PRONOUNS,
    "dropped_pronouns.txt",
    "Pronouns that, dropped, stand for the choice made last."
);
list!(
    CLAUSE_CONNECTIVES,
    "clause_connectives.txt",
    "Connectives that lead the clause after a dropped choice."
);
list!(
    MOVE_VERBS,
    "move_verbs.txt",
    "Verbs that move something into a new place."
);
list!(
    DESTINATION_PREPOSITIONS,
    "destination_prepositions.txt",
    "Prepositions after a move verb that the new place follows."
);
list!(
    REPLACED_MARKERS,
    "replaced_markers.txt",
    "Markers after a choice that name what it replaces, tried in order."
);
list!(
    PROPOSAL_LEADS,
    "proposal_leads.txt",
    "Words stripped, in order, from the front of a proposal."
);
list!(
    CORRECTION_LINKS,
    "correction_links.txt",
    "Words that make a correction's body state something."
);
list!(
    REACTION_OBJECTS,
    "reaction_objects.txt",
    "What follows \"I like\" in a reaction, not a preference."
);
list!(
    RULE_CLAUSE_BREAKS,
    "rule_clause_breaks.txt",
    "Conjunctions that end the clause of a preference, rule or next step."
);
list!(
    QUESTION_WORDS,
    "question_words.txt",
    "Question words that make a command cue a question."
);
list!(
    CHANGE_AUXILIARIES,
    "change_auxiliaries.txt",
    "Auxiliaries before a change verb that only say the change happened."
);
list!(
    FACT_LINKERS,
    "fact_linkers.txt",
    "Words between a fact's subject and its value that link the two."
);
list!(
    PLAIN_SUBJECT_LINKS,
    "plain_subject_links.txt",
    "Links before a value that let a subject with no head noun take it."
);
list!(
    FACT_SKIP_WORDS,
    "fact_skip_words.txt",
    "Words between a fact's subject and its value that say nothing."
);
list!(
    THIRD_PERSON_PRONOUNS,
    "third_person_pronouns.txt",
    "Pronouns that, after a name and a comma, mark a person."
);
list!(
    LOWER_NAME_DETERMINERS,
    "lower_name_determiners.txt",
    "Words before a role noun that, before a lowercase name, make it a role."
);
list!(
    COORDINATORS,
    "coordinators.txt",
    "Coordinating conjunctions that open a clause."
);
list!(
    ASK_VERBS,
    "ask_verbs.txt",
    "Verbs before a rare lowercase word that make it a name."
);
list!(
    APPOSITION_DETERMINERS,
    "apposition_determiners.txt",
    "Determiners that open an apposition after a name and a comma."
);
list!(
    ROLE_VERBS,
    "role_verbs.txt",
    "Verbs that join a name to the role after it."
);
list!(
    ROLE_VERB_FILLERS,
    "role_verb_fillers.txt",
    "Words skipped between a role verb and the role."
);
list!(
    ROLE_ADVERBS,
    "role_adverbs.txt",
    "Adverbs skipped at the start of a role phrase."
);
list!(
    ROLE_DETERMINERS,
    "role_determiners.txt",
    "Determiners skipped at the start of a role phrase."
);
list!(
    ROLE_PHRASE_SKIPS,
    "role_phrase_skips.txt",
    "Words before a name that are no part of the role stated there."
);
list!(
    PRE_ROLE_DETERMINERS,
    "pre_role_determiners.txt",
    "Words before a role noun that make it the role of the name after it."
);
list!(
    PRONOUN_CONTRACTIONS,
    "pronoun_contractions.txt",
    "\"He is\"/\"she is\" contracted, a role after them."
);
list!(
    CLAUSE_BREAKS,
    "clause_breaks.txt",
    "Conjunctions after which a phrase has ended, a space after them."
);
list!(
    NEGATORS,
    "negators.txt",
    "Words that deny what follows them."
);
list!(
    DAY_PARTS,
    "day_parts.txt",
    "Parts of a day said after a weekday (\"<day> nights\")."
);
list!(
    SUBORDINATORS,
    "subordinators.txt",
    "Conjunctions opening a subordinate clause, never in a noun phrase."
);
list!(
    CLAUSE_CLOSERS,
    "clause_closers.txt",
    "Words that close the clause of a phrase."
);

/// Whether a lowercase word is a function word.
pub fn is_stop(w: &str) -> bool {
    STOP_WORDS.contains(w)
}

/// Whether a lowercase label is a closed-class word that never names a
/// thing: a month, weekday, title, interjection or function word.
pub fn is_closed_class(w: &str) -> bool {
    let w = w.trim_end_matches('.');
    MONTHS.contains(w)
        || WEEKDAYS.contains(w)
        // "on Tuesdays"
        || w.strip_suffix('s').is_some_and(|d| WEEKDAYS.contains(d))
        || TITLES.contains(w)
        || INTERJECTIONS.contains(w)
        || STOP_WORDS.contains(w)
}

type Freq = HashMap<String, u16>;

static FREQ: OnceLock<Option<Freq>> = OnceLock::new();

/// Where the provisioned list lives: `$ROLLGRAPH_WORDS`, else
/// `<cache>/words/en.tsv`.
pub fn frequency_path() -> PathBuf {
    if let Some(p) = std::env::var_os("ROLLGRAPH_WORDS").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    crate::embed::cache_dir().join("words").join("en.tsv")
}

/// Loads the frequency list and the noun classes once (later calls are
/// free). Returns whether the frequency list is available. A missing or
/// unreadable file leaves its list off.
pub fn init_frequencies() -> bool {
    NOUNS.get_or_init(load_nouns);
    FREQ.get_or_init(|| {
        let text = std::fs::read_to_string(frequency_path()).ok()?;
        let mut m = HashMap::with_capacity(30_000);
        for line in text.lines() {
            if line.starts_with('#') {
                continue;
            }
            if let Some((w, z)) = line.split_once('\t')
                && let Ok(z) = z.trim().parse::<u16>()
            {
                m.insert(w.to_owned(), z);
            }
        }
        (!m.is_empty()).then_some(m)
    })
    .is_some()
}

/// WordNet's lexicographer classes of nouns, in its numbering order
/// (`noun.Tops` … `noun.time`), as `scripts/provision-words.sh` writes them.
const NOUN_CLASSES: [&str; 26] = [
    "Tops",
    "act",
    "animal",
    "artifact",
    "attribute",
    "body",
    "cognition",
    "communication",
    "event",
    "feeling",
    "food",
    "group",
    "location",
    "motive",
    "object",
    "person",
    "phenomenon",
    "plant",
    "possession",
    "process",
    "quantity",
    "relation",
    "shape",
    "state",
    "substance",
    "time",
];

/// The classes of a noun's senses: the most frequent sense's class and
/// the set of all of them (bits by [`NOUN_CLASSES`] index).
#[derive(Clone, Copy, Debug)]
struct NounSenses {
    first: u8,
    all: u32,
}

enum NounRow {
    Senses(NounSenses),
    /// An irregular plural ("feet"): its singular.
    PluralOf(String),
}

static NOUNS: OnceLock<Option<HashMap<String, NounRow>>> = OnceLock::new();

/// Where the provisioned noun classes live: `nouns.tsv` beside the
/// frequency list.
pub fn nouns_path() -> PathBuf {
    frequency_path().with_file_name("nouns.tsv")
}

fn load_nouns() -> Option<HashMap<String, NounRow>> {
    let text = std::fs::read_to_string(nouns_path()).ok()?;
    let mut m = HashMap::with_capacity(60_000);
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some((w, classes)) = line.split_once('\t') else {
            continue;
        };
        if let Some(base) = classes.strip_prefix('=') {
            m.insert(w.to_owned(), NounRow::PluralOf(base.trim().to_owned()));
            continue;
        }
        let mut first = None;
        let mut all = 0u32;
        for c in classes.trim().split(',') {
            if let Some(i) = NOUN_CLASSES.iter().position(|k| *k == c) {
                first.get_or_insert(i as u8);
                all |= 1 << i;
            }
        }
        if let Some(first) = first {
            m.insert(w.to_owned(), NounRow::Senses(NounSenses { first, all }));
        }
    }
    (!m.is_empty()).then_some(m)
}

/// The senses of a noun, found as WordNet's morphology finds a plural's
/// singular: listed irregular forms, then the regular endings.
fn noun_senses(word: &str) -> Option<NounSenses> {
    let m = NOUNS.get()?.as_ref()?;
    let lower = word.to_lowercase();
    let senses = |w: &str| match m.get(w)? {
        NounRow::Senses(s) => Some(*s),
        NounRow::PluralOf(base) => match m.get(base)? {
            NounRow::Senses(s) => Some(*s),
            NounRow::PluralOf(_) => None,
        },
    };
    if let Some(s) = senses(&lower) {
        return Some(s);
    }
    const ENDINGS: [(&str, &str); 8] = [
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
        ("s", ""),
    ];
    ENDINGS.iter().find_map(|(end, base)| {
        let stem = lower.strip_suffix(end)?;
        (!stem.is_empty())
            .then(|| senses(&format!("{stem}{base}")))
            .flatten()
    })
}

/// Whether the noun classes are loaded.
pub fn nouns_loaded() -> bool {
    NOUNS.get().is_some_and(Option::is_some)
}

/// The classes of natural kinds that family names are often taken from
/// ("Brook", "Fox", "Reed", "Flint"): a last name in them may be a
/// person's.
const SURNAME_SOURCES: [&str; 6] = [
    "person",
    "object",
    "animal",
    "plant",
    "substance",
    "quantity",
];

impl NounSenses {
    /// Whether the most frequent sense is outside [`SURNAME_SOURCES`].
    fn names_a_thing(self) -> bool {
        !SURNAME_SOURCES.contains(&NOUN_CLASSES[usize::from(self.first)])
    }

    /// Whether no sense is a person.
    fn never_a_person(self) -> bool {
        NOUN_CLASSES
            .iter()
            .position(|c| *c == "person")
            .is_none_or(|p| self.all & (1 << p) == 0)
    }
}

/// Whether a word is a noun whose most frequent sense names a made thing,
/// an act, a group, a place or an idea ("bakery", "removals", "terrace",
/// "league"): `Some(false)` for a noun of a person or of the natural kinds
/// family names come from ("baker", "brook"), `None` for a word WordNet
/// does not know as a noun, or without the noun classes.
pub fn names_a_thing(word: &str) -> Option<bool> {
    noun_senses(word).map(NounSenses::names_a_thing)
}

/// Whether a word is a noun none of whose senses is a person ("barbecue",
/// "wedding"); `None` when WordNet does not know it as a noun, or without
/// the noun classes.
pub fn never_a_person(word: &str) -> Option<bool> {
    noun_senses(word).map(NounSenses::never_a_person)
}

/// Whether a word is a noun for a thing that never names a person
/// ("wedding", "contract", "shops"): its most frequent sense [names a
/// thing](names_a_thing) and none of its senses is a person. False for
/// a word WordNet does not know as a noun, or without the noun classes.
pub fn is_thing_noun(word: &str) -> bool {
    noun_senses(word).is_some_and(|s| s.names_a_thing() && s.never_a_person())
}

/// Whether a word as written is a lowercase past participle rather than
/// a name: it ends in "-ed" and WordNet knows no noun by it ("unblocked",
/// "deprecated"; not "seed" or "shed"). False without the noun classes.
pub fn is_participle(word: &str) -> bool {
    word.len() >= 5
        && word.ends_with("ed")
        && word.chars().all(|c| c.is_ascii_lowercase())
        && nouns_loaded()
        && noun_senses(word).is_none()
}

/// Whether the frequency list is loaded.
pub fn frequencies_loaded() -> bool {
    FREQ.get().is_some_and(Option::is_some)
}

/// A word's Zipf frequency (≈ 7.7 for "the", 3 for rare words); `None` when
/// the word is rarer than the list reaches or the list is not loaded.
pub fn zipf(word: &str) -> Option<f32> {
    let m = FREQ.get()?.as_ref()?;
    let lower = word.to_lowercase();
    m.get(&lower).map(|z| f32::from(*z) / 100.0)
}

/// Whether a word is common English (Zipf ≥ `min`). Without the list only
/// closed-class words count as common.
pub fn is_common(word: &str, min: f32) -> bool {
    let lower = word.to_lowercase();
    is_closed_class(&lower) || zipf(&lower).is_some_and(|z| z >= min)
}

/// Whether a lowercase word names a role a person holds: a listed role
/// noun, or an agent noun the frequency list knows by its suffix
/// ("librarian", "dentist"), a list word ("checklist") excepted.
pub fn is_role_noun(w: &str) -> bool {
    ROLE_NOUNS.contains(w)
        || (w.chars().count() >= 6
            && w.chars().all(char::is_alphabetic)
            && (w.ends_with("ian") || (w.ends_with("ist") && !w.ends_with("list")))
            && zipf(w).is_some())
}

/// Whether a word names a person by what they are: a role noun or a
/// relation noun ("manager", "landlord", "sister").
pub fn is_person_noun(w: &str) -> bool {
    is_role_noun(w) || RELATION_NOUNS.contains(w)
}

/// Whether a lowercase word is a title written before a name, with or
/// without its period ("dr", "dr.").
pub fn is_title(w: &str) -> bool {
    TITLES.contains(w.trim_end_matches('.'))
}

/// Whether a word is a weekday, or one said of every week ("thursdays").
pub fn is_weekday(w: &str) -> bool {
    WEEKDAYS.contains(w) || w.strip_suffix('s').is_some_and(|d| WEEKDAYS.contains(d))
}

/// Whether the list knows the word at all (a known lowercase word is an
/// ordinary English word, not a product name or a made-up identifier).
pub fn is_known_word(word: &str) -> bool {
    zipf(word).is_some() || is_closed_class(&word.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_files_parse_and_hold_no_comments() {
        for l in [
            &*MONTHS,
            &*WEEKDAYS,
            &*DECISION_CUES,
            &*STOP_WORDS,
            &*FILE_EXTS,
        ] {
            assert!(l.iter().count() > 3);
            assert!(l.iter().all(|w| !w.contains('#') && w == w.trim()));
            assert!(
                l.iter().all(|w| w == w.to_lowercase()),
                "lists are lowercase"
            );
        }
        // Every list, the small ones too: entries are trimmed, lowercase and
        // free of comments.
        for l in [
            &*STOP_WORDS,
            &*COPULAS,
            &*RELATIVE_PRONOUNS,
            &*MODALS,
            &*ORDINALS,
            &*CHANGE_VERBS,
            &*UPDATE_CUES,
            &*CADENCE_WORDS,
            &*AUXILIARIES,
            &*PARTICLES,
            &*DROP_AFTER_CUES,
            &*CLAUSE_FINAL_DROP_CUES,
            &*NOTE_LABELS,
            &*DIFFERENCE_LEADS,
            &*SUFFICIENCY_CUES,
            &*ENDORSE_CUES,
            &*ENDORSE_LEADS,
            &*OPTION_CUES,
            &*MONTHS,
            &*WEEKDAYS,
            &*TITLES,
            &*INTERJECTIONS,
            &*ROLE_NOUNS,
            &*RELATION_NOUNS,
            &*PERSON_AFTER,
            &*PERSON_BEFORE,
            &*PERSON_POSSESSIVES,
            &*THING_MARKERS,
            &*GROUP_WORDS,
            &*PROJECT_HEADS,
            &*FEATURE_HEADS,
            &*NOT_CHOICES,
            &*FILE_EXTS,
            &*DECISION_CUES,
            &*REJECTION_CUES,
            &*VETO_CUES,
            &*CLAUSE_LEADS,
            &*IRREGULAR_PLURALS,
            &*PAST_FORMS,
            &*VERB_ADVERBS,
            &*RETURN_CUES,
            &*NEGATION_CUES,
            &*DEFERRAL_CUES,
            &*CONTRAST_CUES,
            &*DENIAL_LEADS,
            &*PERSON_RELATIVES,
            &*RANGE_JOINERS,
            &*ACCEPT_CUES,
            &*AFFIRMATIONS,
            &*OBJECT_PRONOUNS,
            &*THING_PRONOUNS,
            &*REPORTING_VERBS,
            &*MEASURE_VERBS,
            &*REPLACE_VERBS,
            &*MOVE_FROM_VERBS,
            &*SLOT_MOVE_PREPOSITIONS,
            &*TENTATIVE_MODALS,
            &*GUESSING_MODALS,
            &*EVALUATIVE_NOUNS,
            &*RULE_SHAPES,
            &*HISTORY_MARKERS,
            &*UNIT_DIMENSIONS,
            &*UNIT_QUANTITIES,
            &*VALUE_PRONOUNS,
            &*BARE_CONTRACTIONS,
            &*GRATITUDE,
            &*HOW_QUESTIONS,
            &*UPDATE_ADVERBS,
            &*DATE_PREPOSITIONS,
            &*PREVIOUS_REFS,
            &*DETERMINERS,
            &*SUBJECT_PRONOUNS,
            &*ASIDE_MARKERS,
            &*RULE_HEADS,
            &*EVENT_SUBJECTS,
            &*PROPOSAL_CUES,
            &*CORRECTION_OPENERS,
            &*CORRECTION_INNER,
            &*PREFERENCE_CUES,
            &*RESTRICTION_CUES,
            &*PROCEDURE_CUES,
            &*DEADLINE_CUES,
            &*COMMAND_QUESTIONS,
            &*INTENTION_CUES,
            &*FACT_SUBJECT_HEADS,
            &*UNIT_WORDS,
            &*VERSION_CUES,
            &*UNIT_QUALIFIERS,
            &*TECH_WORDS,
            &*PROJECT_WORDS,
            &*RELATIONSHIP_WORDS,
            &*PERSONAL_WORDS,
            &*OWNERSHIP_CUES,
            &*DEPENDENCY_CUES,
            &*TOPIC_DETERMINERS,
            &*REPORT_OPENERS,
            &*QUESTION_OPENERS,
            &*BARE_DECISION_CUES,
            &*IMPERATIVE_LEADS,
            &*INSTEAD_PARTICLES,
            &*TRAILING_FILLERS,
            &*REJECTION_LEADS,
            &*DROPPED_DETERMINERS,
            &*SHELL_NOUNS,
            &*DROPPED_PRONOUNS,
            &*CLAUSE_CONNECTIVES,
            &*MOVE_VERBS,
            &*DESTINATION_PREPOSITIONS,
            &*REPLACED_MARKERS,
            &*PROPOSAL_LEADS,
            &*CORRECTION_LINKS,
            &*REACTION_OBJECTS,
            &*RULE_CLAUSE_BREAKS,
            &*QUESTION_WORDS,
            &*CHANGE_AUXILIARIES,
            &*FACT_LINKERS,
            &*PLAIN_SUBJECT_LINKS,
            &*FACT_SKIP_WORDS,
            &*THIRD_PERSON_PRONOUNS,
            &*LOWER_NAME_DETERMINERS,
            &*COORDINATORS,
            &*ASK_VERBS,
            &*APPOSITION_DETERMINERS,
            &*ROLE_VERBS,
            &*ROLE_VERB_FILLERS,
            &*ROLE_ADVERBS,
            &*ROLE_DETERMINERS,
            &*ROLE_PHRASE_SKIPS,
            &*PRE_ROLE_DETERMINERS,
            &*PRONOUN_CONTRACTIONS,
            &*CLAUSE_BREAKS,
            &*SUBORDINATORS,
            &*DAY_PARTS,
            &*NEGATORS,
            &*CLAUSE_CLOSERS,
            &*LIST_VALUE_LINKS,
            &*LATER_VALUE_SKIPS,
            &*OPTION_PICK_LEADS,
            &*OPTION_PICK_TAILS,
            &*NUMBER_WORDS,
            &*COUNT_LEADS,
            &*DISCOURSE_NOUNS,
            &*COUNT_ADVERBS,
            &*COUNT_LINKS,
        ] {
            assert!(l.iter().count() > 0);
            assert!(
                l.iter()
                    .all(|w| !w.is_empty() && !w.contains('#') && w == w.trim())
            );
            assert!(
                l.iter().all(|w| w == w.to_lowercase()),
                "lists are lowercase"
            );
        }
        assert!(
            BARE_DECISION_CUES.iter().all(|c| DECISION_CUES.contains(c)),
            "bare decision cues are decision cues"
        );
        assert!(is_closed_class("nov") && is_closed_class("dec.") && is_closed_class("wow"));
        assert!(is_closed_class("tuesdays") && !is_closed_class("tuesdayss"));
        assert!(!is_closed_class("postgres"));
    }

    #[test]
    fn frequencies_answer_when_provisioned() {
        let loaded = init_frequencies();
        if std::env::var_os("ROLLGRAPH_REQUIRE_MODEL").is_some() {
            assert!(
                loaded,
                "run scripts/provision-words.sh: {}",
                frequency_path().display()
            );
        }
        if loaded {
            assert!(is_common("glad", 4.0));
            assert!(zipf("the").is_some_and(|z| z > 7.0));
            assert!(zipf("xqzvbn").is_none());
        }
    }

    #[test]
    fn noun_classes_answer_when_provisioned() {
        init_frequencies();
        if std::env::var_os("ROLLGRAPH_REQUIRE_MODEL").is_some() {
            assert!(
                nouns_loaded(),
                "run scripts/provision-words.sh: {}",
                nouns_path().display()
            );
        }
        if nouns_loaded() {
            // A thing, its regular and irregular plurals.
            assert!(is_thing_noun("bakery") && is_thing_noun("Bakeries"));
            assert!(is_thing_noun("weddings") && is_thing_noun("boxes"));
            assert_eq!(names_a_thing("mice"), Some(false), "an animal");
            // A person; the natural kinds family names come from.
            assert!(!is_thing_noun("baker") && !is_thing_noun("brook"));
            assert_eq!(never_a_person("baker"), Some(false));
            // Not a noun WordNet knows.
            assert!(!is_thing_noun("xqzvbn"));
            assert_eq!(names_a_thing("xqzvbn"), None);
        }
    }
}
