//! Deterministic text analysis shared by the gate and the heuristic probe:
//! sentences, named-entity candidates, decision / correction / preference
//! language, relations and the domain a piece of text is about.
//!
//! Nothing here allocates a regex, touches the disk, loads a model or calls
//! the network, so the gate can run it on the hook's critical path in
//! microseconds.

use crate::graph::{Domain, NodeKind, normalize_name};

/// A named thing found in text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The surface form, canonicalised (path without the project root, lexicon casing).
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

/// A decision found in one sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// "Use Bento for transactional email".
    pub label: String,
    /// The chosen thing, when one was named.
    pub chosen: Option<String>,
    /// What it replaces, when said ("instead of Resend").
    pub replaced: Option<String>,
    /// Content words describing what the decision is about.
    pub topic: Vec<String>,
    /// The sentence it came from.
    pub sentence: String,
}

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

/// Phrases that mark a decision. Order matters: longer first.
pub const DECISION_CUES: &[&str] = &[
    "let's go with",
    "lets go with",
    "let us go with",
    "we'll go with",
    "we will go with",
    "we're going with",
    "going with",
    "go with",
    "we decided to use",
    "we've decided to use",
    "decided to use",
    "we decided on",
    "decided on",
    "we decided to",
    "we've decided to",
    "decided to",
    "the plan is to",
    "the plan is",
    "let's use",
    "lets use",
    "we'll use",
    "we will use",
    "let's switch",
    "switch to",
    "switching to",
    "switch over to",
    "migrate to",
    "moving to",
    "move to",
    "settle on",
    "settled on",
    "stick with",
    "opt for",
    "replace",
    "use",
];

/// Phrases that mark a correction when they open a sentence.
pub const CORRECTION_OPENERS: &[&str] = &[
    "actually",
    "no need",
    "no,",
    "no -",
    "no.",
    "nope",
    "wait",
    "not that",
    "that's wrong",
    "thats wrong",
    "that is wrong",
    "that's not right",
    "that isn't right",
    "correction",
    "i meant",
    "sorry, i meant",
    "scratch that",
    "hold on",
    "oops",
];

/// Phrases that mark a correction anywhere in a sentence.
pub const CORRECTION_INNER: &[&str] = &[
    "that's wrong",
    "that is wrong",
    "not that one",
    "you got that wrong",
    "i meant",
];

const PREFERENCE_CUES: &[&str] = &[
    "i prefer",
    "i'd prefer",
    "i would prefer",
    "i like",
    "i love",
    "i hate",
    "i don't like",
    "i dont like",
    "i always",
    "i never",
    "i usually",
    "please always",
    "please never",
    "always use",
    "never use",
    "don't ever",
    "keep explanations",
    "keep answers",
    "keep responses",
    "keep it short",
    "i'm off",
    "i am off",
    "i'm out",
    "i work",
    "my preference",
    "call me",
];

/// Known libraries, tools and services, with their canonical spelling.
const LEXICON: &[&str] = &[
    "sqlx",
    "axum",
    "tokio",
    "serde",
    "reqwest",
    "hyper",
    "tonic",
    "tower",
    "tracing",
    "anyhow",
    "thiserror",
    "diesel",
    "sea-orm",
    "apalis",
    "tokio-cron-scheduler",
    "clap",
    "rayon",
    "actix",
    "actix-web",
    "rocket",
    "warp",
    "nextest",
    "clippy",
    "rustfmt",
    "cargo",
    "Postgres",
    "PostgreSQL",
    "MySQL",
    "SQLite",
    "Redis",
    "Kafka",
    "RabbitMQ",
    "NATS",
    "Docker",
    "Kubernetes",
    "Terraform",
    "Nginx",
    "GraphQL",
    "gRPC",
    "Stripe",
    "Sentry",
    "GitHub",
    "GitLab",
    "AWS",
    "S3",
    "GCP",
    "Azure",
    "Vercel",
    "Fly.io",
    "Heroku",
    "Cloudflare",
    "React",
    "Vue",
    "Svelte",
    "Next.js",
    "TypeScript",
    "JavaScript",
    "Python",
    "Rust",
    "Golang",
    "Node.js",
    "Resend",
    "Bento",
    "SendGrid",
    "Mailgun",
    "Postmark",
    "SES",
    "Twilio",
    "Slack",
    "Datadog",
    "Grafana",
    "Prometheus",
    "OpenTelemetry",
    "Elasticsearch",
    "MongoDB",
    "DynamoDB",
    "Supabase",
    "Firebase",
    "OAuth",
    "JWT",
    "CI",
    "Jenkins",
    "CircleCI",
    "npm",
    "pnpm",
    "yarn",
    "webpack",
    "vite",
    "Tailwind",
    "MJML",
    "Handlebars",
    "Tera",
    "Askama",
    "insta",
    "proptest",
    "criterion",
    "mockall",
    "wiremock",
    "testcontainers",
];

/// Capitalised words that are not names.
const CAPITAL_STOP: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "the",
    "this",
    "that",
    "these",
    "those",
    "there",
    "then",
    "than",
    "let's",
    "lets",
    "ok",
    "okay",
    "yes",
    "yeah",
    "no",
    "not",
    "nope",
    "sure",
    "thanks",
    "thank",
    "please",
    "also",
    "and",
    "but",
    "or",
    "so",
    "if",
    "when",
    "while",
    "what",
    "why",
    "how",
    "where",
    "who",
    "which",
    "we",
    "we're",
    "we'll",
    "you",
    "you're",
    "your",
    "it",
    "it's",
    "its",
    "they",
    "he",
    "she",
    "my",
    "our",
    "a",
    "an",
    "in",
    "on",
    "at",
    "for",
    "to",
    "of",
    "by",
    "with",
    "from",
    "as",
    "is",
    "are",
    "was",
    "be",
    "do",
    "does",
    "did",
    "done",
    "can",
    "could",
    "should",
    "would",
    "will",
    "just",
    "now",
    "next",
    "first",
    "after",
    "before",
    "here",
    "good",
    "great",
    "nice",
    "perfect",
    "right",
    "wait",
    "actually",
    "hmm",
    "hi",
    "hey",
    "hello",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "today",
    "tomorrow",
    "yesterday",
    "done",
    "all",
    "some",
    "any",
    "every",
    "each",
    "one",
    "two",
    "new",
    "old",
    "add",
    "run",
    "fix",
    "use",
    "make",
    "update",
    "let",
    "see",
    "check",
    "read",
    "write",
    "edit",
    "looks",
    "look",
    "found",
    "note",
    "step",
    "todo",
    "fixed",
    "added",
    "updated",
    "created",
    "removed",
    "running",
    "tests",
    "test",
    "error",
    "warning",
    "summary",
    "plan",
    "option",
    "both",
    "only",
    "even",
    "still",
    "maybe",
    "because",
    "since",
    "once",
    "instead",
    "other",
    "another",
    "same",
    "most",
    "more",
    "less",
    "much",
    "many",
    "again",
    "sounds",
    "agreed",
    "correct",
    "true",
    "false",
    "none",
    "null",
    "yes,",
    "can't",
    "don't",
    "doesn't",
    "won't",
    "isn't",
    "aren't",
    "didn't",
    "here's",
    "there's",
    "that's",
    "what's",
    "let",
    "want",
    "need",
    "think",
    "know",
    "got",
    "go",
    "went",
    "made",
    "try",
    "tried",
    "good,",
    "ah",
    "oh",
    "so,",
    "well",
    "btw",
    "fyi",
    "eta",
    "asap",
    "api",
    "url",
    "id",
    "ids",
    "json",
    "http",
    "https",
    "sql",
    "ui",
    "ux",
    "pr",
    "prs",
    "cli",
    "db",
    "env",
    "dev",
    "prod",
    "staging",
    "am",
    "pm",
    "utc",
    "tl;dr",
    "re",
    "per",
    "via",
    "vs",
    "eg",
    "ie",
    "etc",
    "none",
    "some",
    "ok",
    "err",
    "self",
    "true",
    "false",
    "null",
    "ask",
    "tell",
    "ping",
    "call",
    "send",
    "move",
    "switch",
    "rename",
    "review",
    "merge",
    "deploy",
    "remember",
    "keep",
    "can",
    "could",
    "commit",
    "push",
    "pull",
    "open",
    "close",
    "show",
    "list",
    "find",
    "search",
    "start",
    "stop",
    "build",
    "install",
    "remove",
    "delete",
    "revert",
    "undo",
    "drop",
    "wire",
    "hook",
    "wrap",
    "split",
    "bump",
    "ship",
    "draft",
    "write",
    "rerun",
    "retry",
    "implement",
    "refactor",
    "change",
    "replace",
    "create",
    "generate",
    "explain",
    "describe",
    "help",
    "give",
    "put",
    "set",
    "get",
    "take",
    "leave",
    "hold",
    "sounds",
    "works",
    "worked",
    "great,",
    "cool",
    "awesome",
    "quick",
    "quickly",
    "needs",
    "need",
    "gets",
    "makes",
    "uses",
    "adds",
    "final",
    "reminder",
    "where's",
    "how's",
    "who's",
    "when's",
    "it'll",
    "we've",
    "you've",
    "they're",
    "i'll",
];

/// Verbs and cues that, right after a capitalised name, mark a person.
const PERSON_AFTER: &[&str] = &[
    "said",
    "says",
    "wants",
    "wanted",
    "asked",
    "asks",
    "thinks",
    "thought",
    "reviews",
    "reviewed",
    "prefers",
    "mentioned",
    "suggested",
    "suggests",
    "pinged",
    "told",
    "approved",
    "owns",
    "leads",
    "agreed",
    "needs",
    "is out",
    "is off",
    "will review",
    "will",
    "flagged",
    "noticed",
    "reported",
    "wrote",
    "designed",
    "insists",
    "raised",
    "signed",
    "'s",
    "\u{2019}s",
];

/// Words that, right before a capitalised name, mark a person.
const PERSON_BEFORE: &[&str] = &[
    "ask",
    "asked",
    "tell",
    "told",
    "ping",
    "pinged",
    "with",
    "cc",
    "thanks",
    "per",
    "from",
    "and",
    "by",
    "for",
    "to",
    "teammate",
    "colleague",
    "our",
];

/// Role words that mark a person when attached to a name.
const ROLE_WORDS: &[&str] = &[
    "lead",
    "pm",
    "designer",
    "manager",
    "engineer",
    "developer",
    "dev",
    "cto",
    "ceo",
    "founder",
    "reviewer",
    "owner",
    "architect",
    "intern",
    "qa",
    "tester",
    "analyst",
    "director",
    "head",
];

/// Words that mark a project, feature or milestone when they follow a name.
const PROJECT_HEADS: &[&str] = &[
    "feature",
    "project",
    "app",
    "service",
    "milestone",
    "epic",
    "release",
    "launch",
    "flow",
    "dashboard",
    "module",
    "pipeline",
    "integration",
    "rollout",
    "migration",
];

/// Heads that make a lowercase phrase a project ("the dunning feature").
const FEATURE_HEADS: &[&str] = &[
    "feature",
    "project",
    "epic",
    "milestone",
    "launch",
    "rollout",
];

const TECH_WORDS: &[&str] = &[
    "function",
    "fn",
    "struct",
    "enum",
    "trait",
    "impl",
    "compile",
    "compiler",
    "error",
    "errors",
    "test",
    "tests",
    "crate",
    "crates",
    "migration",
    "migrations",
    "query",
    "queries",
    "sql",
    "bug",
    "panic",
    "stack",
    "async",
    "await",
    "api",
    "endpoint",
    "build",
    "cargo",
    "type",
    "types",
    "module",
    "refactor",
    "lint",
    "schema",
    "index",
    "config",
    "handler",
    "webhook",
    "retry",
    "retries",
    "timeout",
    "column",
    "table",
    "database",
    "db",
    "deploy",
    "library",
    "dependency",
    "code",
    "file",
    "files",
    "null",
    "option",
    "result",
    "request",
    "response",
    "json",
    "http",
    "cache",
    "queue",
    "job",
    "jobs",
    "worker",
    "thread",
    "memory",
    "latency",
    "log",
    "logs",
    "benchmark",
    "serialize",
    "deserialize",
    "field",
    "method",
    "variable",
    "integer",
    "cents",
    "decimal",
    "transaction",
    "lock",
    "mutex",
    "channel",
    "runtime",
];
const PROJECT_WORDS: &[&str] = &[
    "deadline",
    "demo",
    "milestone",
    "feature",
    "features",
    "ship",
    "shipping",
    "release",
    "launch",
    "customer",
    "customers",
    "roadmap",
    "scope",
    "sprint",
    "ticket",
    "priority",
    "priorities",
    "spec",
    "requirement",
    "requirements",
    "users",
    "pricing",
    "plan",
    "product",
    "mvp",
    "beta",
    "stakeholder",
    "invoice",
    "invoices",
    "billing",
    "dunning",
    "onboarding",
    "metrics",
    "okr",
    "quarter",
    "budget",
    "cost",
];
const RELATIONSHIP_WORDS: &[&str] = &[
    "team",
    "teammate",
    "teammates",
    "review",
    "reviews",
    "reviewer",
    "meeting",
    "standup",
    "sync",
    "asked",
    "told",
    "wants",
    "manager",
    "lead",
    "designer",
    "pm",
    "colleague",
    "pair",
    "pairing",
    "ping",
    "slack",
    "feedback",
    "approve",
    "approved",
    "approval",
    "he",
    "she",
    "her",
    "his",
    "they",
    "them",
    "1:1",
    "boss",
    "hire",
    "onboard",
    "mentor",
    "owner",
    "owns",
];
const PERSONAL_WORDS: &[&str] = &[
    "prefer",
    "preference",
    "like",
    "love",
    "hate",
    "tired",
    "weekend",
    "vacation",
    "holiday",
    "off",
    "afternoon",
    "morning",
    "evening",
    "coffee",
    "habit",
    "style",
    "always",
    "never",
    "usually",
    "personally",
    "myself",
    "me",
    "my",
    "mine",
    "i'm",
    "skim",
    "short",
    "brief",
    "verbose",
    "kids",
    "family",
    "sick",
];

const FILE_EXTS: &[&str] = &[
    "rs", "toml", "sql", "md", "ts", "tsx", "js", "jsx", "py", "json", "yaml", "yml", "go", "sh",
    "lock", "html", "css", "scss", "mjml", "hbs", "txt", "env", "proto", "graphql", "java", "kt",
    "rb", "c", "h", "cpp", "hpp", "swift", "vue", "svelte",
];

const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "of", "to", "for", "and", "or", "in", "on", "at", "by", "with", "from", "as",
    "is", "are", "was", "be", "it", "its", "this", "that", "we", "our", "us", "i", "you", "your",
    "use", "using", "go", "let's", "lets", "instead", "then", "so", "now", "all", "just", "also",
    "into", "over", "our", "will", "should", "would", "can", "could", "do", "does", "not", "no",
    "yes", "ok", "okay", "some", "any", "new", "old", "them", "they", "there", "here", "what",
    "which", "when", "up", "out", "too", "very", "really", "but", "if", "than", "have", "has",
    "had", "been", "being", "switch", "move", "stick", "going", "plan",
];

fn is_stop(w: &str) -> bool {
    STOP_WORDS.contains(&w)
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
        // "Resend-specific", "Postgres-backed": the name is the first part.
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

fn lexicon_match(w: &str) -> Option<&'static str> {
    LEXICON.iter().copied().find(|l| l.eq_ignore_ascii_case(w))
}

fn file_path(w: &str, root: Option<&str>) -> Option<String> {
    let w = w.trim_end_matches(['.', ',', ':']);
    let (stem, ext) = w.rsplit_once('.')?;
    if stem.is_empty()
        || !FILE_EXTS.contains(&ext)
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
    if looks_like_hash(t) || CAPITAL_STOP.contains(&t.to_lowercase().as_str()) {
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

/// Finds the named things in one sentence. `root` is the project directory,
/// stripped from absolute paths.
pub fn mentions(sentence: &str, root: Option<&str>) -> Vec<Mention> {
    let ws = words(sentence);
    let mut out: Vec<Mention> = Vec::new();
    let lower_sentence = sentence.to_lowercase();
    let mut i = 0;
    while i < ws.len() {
        let w = &ws[i];
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
        if let Some(lex) = lexicon_match(w.text) {
            out.push(Mention {
                label: lex.to_owned(),
                kind: NodeKind::Entity,
                domain: Domain::Technical,
                role: None,
                strong: true,
            });
            i += 1;
            continue;
        }
        if is_capitalized(w.text) && !CAPITAL_STOP.contains(&w.text.to_lowercase().as_str()) {
            // Merge a run of capitalised words into one name.
            let mut j = i + 1;
            while j < ws.len()
                && j - i < 3
                && is_capitalized(ws[j].text)
                && !CAPITAL_STOP.contains(&ws[j].text.to_lowercase().as_str())
                && lexicon_match(ws[j].text).is_none()
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
            let possessive = ws[j - 1].raw.contains("'s") || ws[j - 1].raw.contains('\u{2019}');
            let role = role_after(&ws, j, sentence).or_else(|| role_before(&ws, i));
            let person_cue = PERSON_AFTER.iter().any(|c| *c == after || *c == after2)
                || possessive
                || role.is_some()
                || (PERSON_BEFORE.contains(&before.as_str()) && j - i == 2);
            let two_plain_words = j - i == 2
                && ws[i..j]
                    .iter()
                    .all(|w| w.text.chars().all(|c| c.is_alphabetic()));
            let project_head = PROJECT_HEADS.contains(&after.as_str());
            let (kind, domain) = if project_head {
                (NodeKind::Project, Domain::Project)
            } else if person_cue || two_plain_words {
                (NodeKind::Person, Domain::Relationship)
            } else {
                (NodeKind::Entity, Domain::Technical)
            };
            // A lone capitalised word at the start of a sentence is only a
            // name when something else says so.
            let lone_start = w.sentence_start && j - i == 1 && kind == NodeKind::Entity;
            if !lone_start && name.chars().count() >= 2 {
                let label = name.clone();
                out.push(Mention {
                    label,
                    kind,
                    domain,
                    role,
                    strong: true,
                });
            }
            i = j;
            continue;
        }
        // Lowercase feature phrases: "the dunning feature".
        if i + 1 < ws.len() {
            let head = ws[i + 1].text.to_lowercase();
            let word = w.text.to_lowercase();
            if FEATURE_HEADS.contains(&head.as_str())
                && word.len() >= 4
                && word.chars().all(|c| c.is_alphabetic() || c == '-')
                && !is_stop(&word)
                && !CAPITAL_STOP.contains(&word.as_str())
                && !PROJECT_HEADS.contains(&word.as_str())
                && !TECH_WORDS.contains(&word.as_str())
                && lower_sentence.contains(&format!("{word} {head}"))
            {
                out.push(Mention {
                    label: format!("{word} {head}"),
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

fn role_after(ws: &[Word<'_>], j: usize, _sentence: &str) -> Option<String> {
    // "Priya Raman (backend lead)" or "Priya, our backend lead,"
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
        if ROLE_WORDS
            .iter()
            .any(|r| role.to_lowercase().split_whitespace().any(|w| w == *r))
        {
            return Some(role);
        }
        return None;
    }
    let prev = &ws[j - 1];
    if prev.raw.ends_with(',') && matches!(next.text.to_lowercase().as_str(), "our" | "the" | "my")
    {
        let mut parts = Vec::new();
        for w in &ws[j + 1..ws.len().min(j + 5)] {
            parts.push(w.text);
            if w.raw.ends_with([',', '.', ';']) {
                break;
            }
        }
        let role = parts.join(" ");
        if ROLE_WORDS
            .iter()
            .any(|r| role.to_lowercase().split_whitespace().any(|w| w == *r))
        {
            return Some(role);
        }
    }
    None
}

fn role_before(ws: &[Word<'_>], i: usize) -> Option<String> {
    // "our designer Marco", "our PM Dana"
    if i == 0 {
        return None;
    }
    let prev = ws[i - 1].text.to_lowercase();
    if ROLE_WORDS.contains(&prev.as_str()) {
        let start = i.saturating_sub(3);
        let role: Vec<&str> = ws[start..i]
            .iter()
            .map(|w| w.text)
            .filter(|w| {
                !matches!(
                    w.to_lowercase().as_str(),
                    "our" | "the" | "my" | "with" | "ask" | "and"
                )
            })
            .collect();
        return Some(role.join(" "));
    }
    None
}

fn strip_clause(s: &str) -> &str {
    let lower = s.to_lowercase();
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
        " since ",
    ] {
        if let Some(p) = lower.find(stop) {
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

/// Content words of a phrase, for topic matching.
pub fn content_words(s: &str) -> Vec<String> {
    let mut v: Vec<String> = normalize_name(s)
        .split(' ')
        .filter(|w| w.len() >= 3 && !is_stop(w))
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    // Word-boundary, case-insensitive search on ASCII-lowercased text.
    let h = hay.to_lowercase();
    let mut from = 0;
    while let Some(p) = h[from..].find(needle) {
        let at = from + p;
        let before_ok = at == 0 || !h.as_bytes()[at - 1].is_ascii_alphanumeric();
        let end = at + needle.len();
        let after_ok = end >= h.len() || !h.as_bytes()[end].is_ascii_alphanumeric();
        if before_ok && after_ok && h.len() == hay.len() {
            return Some(at);
        }
        from = at + needle.len().max(1);
        if from >= h.len() {
            break;
        }
    }
    None
}

/// Finds a decision in a sentence, if it states one.
pub fn decision(sentence: &str, root: Option<&str>) -> Option<Decision> {
    let lower = sentence.to_lowercase();
    if lower.ends_with('?')
        || lower.starts_with("should we")
        || lower.starts_with("do we")
        || lower.starts_with("can we")
    {
        return None;
    }
    for cue in DECISION_CUES {
        let Some(at) = find_ci(sentence, cue) else {
            continue;
        };
        let rest = sentence[at + cue.len()..].trim();
        // Bare "use" and "replace" only count as decisions with "instead of"/"with".
        if matches!(*cue, "use" | "replace") {
            let l = lower.as_str();
            let explicit = l.contains("instead of")
                || l.contains("rather than")
                || (*cue == "replace" && l.contains(" with "));
            let at_start = at == 0
                || lower[..at].trim().is_empty()
                || lower[..at].trim_end().ends_with(['.', ',']);
            // An imperative "Use X for Y" naming a known kind of thing is a decision too.
            let names_thing = *cue == "use"
                && mentions(rest, root)
                    .first()
                    .is_some_and(|m| m.strong && m.kind != NodeKind::Person);
            if !at_start || !(explicit || names_thing) {
                continue;
            }
        }
        // "switch background jobs to apalis", "let's switch to Bento", "move email from Resend to Bento"
        let mut rest = rest;
        let mut topic_part: Option<&str> = None;
        let mut from_part: Option<String> = None;
        if matches!(
            *cue,
            "let's switch"
                | "migrate to"
                | "move to"
                | "moving to"
                | "switch to"
                | "switching to"
                | "switch over to"
        ) {
            let l = rest.to_lowercase();
            if let Some(r) = l.strip_prefix("to ").map(|_| &rest[3..]) {
                rest = r;
            } else if let Some(p) = l.find(" to ") {
                let before = &rest[..p];
                let lb = before.to_lowercase();
                if let Some(f) = lb.find("from ") {
                    let old = before[f + 5..].trim();
                    if !old.is_empty() {
                        from_part = Some(truncate_words(old, 4));
                    }
                    topic_part = Some(before[..f].trim());
                } else {
                    topic_part = Some(before.trim());
                }
                rest = &rest[p + 4..];
            }
        }
        let (choice_part, mut replaced) = split_replaced(rest, *cue == "replace");
        if replaced.is_none() {
            replaced = from_part;
        }
        let choice = strip_clause(choice_part);
        let choice = truncate_words(choice, 8);
        if choice.split_whitespace().count() == 0 || choice.len() < 2 {
            continue;
        }
        let chosen = mentions(&choice, root)
            .into_iter()
            .find(|m| m.kind != NodeKind::Person)
            .map(|m| m.label);
        let lead = sentence[..at].trim().trim_end_matches(',');
        if topic_part.is_none() {
            let ll = lead.to_lowercase();
            if let Some(p) = ll.rfind("for ")
                && (p == 0 || ll[..p].ends_with(' '))
            {
                let t = lead[p + 4..].trim();
                if !t.is_empty() && t.split_whitespace().count() <= 5 {
                    topic_part = Some(t);
                }
            }
        }
        let topic_part = topic_part
            .map(|t| {
                t.trim_start_matches("over ")
                    .trim_start_matches("the ")
                    .trim()
            })
            .filter(|t| !t.is_empty());
        let verb_led = matches!(
            *cue,
            "the plan is to" | "the plan is" | "decided to" | "we decided to" | "we've decided to"
        );
        let label = if verb_led {
            cap_first(&choice)
        } else {
            let mut l = format!("Use {choice}");
            if let Some(t) = topic_part {
                l.push_str(&format!(" for {t}"));
            }
            if let Some(r) = &replaced {
                l.push_str(&format!(" instead of {r}"));
            }
            l
        };
        let label: String = label.chars().take(120).collect();
        let mut topic = content_words(&format!("{choice} {}", topic_part.unwrap_or("")));
        if let Some(c) = &chosen {
            let cw = content_words(c);
            topic.retain(|w| !cw.contains(w));
        }
        return Some(Decision {
            label,
            chosen,
            replaced,
            topic,
            sentence: sentence.trim().to_owned(),
        });
    }
    None
}

fn split_replaced(rest: &str, replace_cue: bool) -> (&str, Option<String>) {
    let lower = rest.to_lowercase();
    if replace_cue {
        // "replace Resend with Bento"
        if let Some(p) = lower.find(" with ") {
            let old = strip_clause(&rest[..p]).to_owned();
            return (&rest[p + 6..], (!old.is_empty()).then_some(old));
        }
    }
    for marker in [" instead of ", " rather than ", " over "] {
        if let Some(p) = lower.find(marker) {
            let old = truncate_words(strip_clause(&rest[p + marker.len()..]), 4);
            return (&rest[..p], (!old.is_empty()).then_some(old));
        }
    }
    if let Some(p) = lower.find(" from ") {
        // "switch email from Resend to Bento" is handled by the cue "switch to";
        // "move from X to Y" leaves rest = "Y" already.
        let _ = p;
    }
    (rest, None)
}

/// Finds a correction in a sentence, if it is one.
pub fn correction(sentence: &str) -> Option<Correction> {
    let lower = sentence.to_lowercase();
    let trimmed = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
    let mut stripped: Option<&str> = None;
    for cue in CORRECTION_OPENERS {
        if let Some(after) = trimmed.strip_prefix(cue) {
            // "no" must be followed by punctuation, "actually" by a comma or space.
            if (*cue == "wait" || *cue == "actually")
                && after.starts_with(|c: char| c.is_alphanumeric())
            {
                continue;
            }
            let offset = sentence.len() - trimmed.len() + cue.len();
            stripped = Some(sentence[offset..].trim_start_matches([',', ' ', ':', '-', '—', '.']));
            break;
        }
    }
    let inner = CORRECTION_INNER.iter().any(|c| lower.contains(c))
        || (lower.contains(", not ") && !lower.contains("whether") && !lower.contains("if not"))
        || lower.contains(" not dollars")
        || lower.contains("not in cents");
    let body = match stripped {
        Some(b) => b,
        None if inner => sentence,
        None => return None,
    };
    let body = body.trim().trim_end_matches(['.', '!']);
    // "One more correction from Dana: the grace period is 3 days" → after the colon.
    let body = match body.split_once(':') {
        Some((head, tail))
            if head.to_lowercase().contains("correction")
                && tail.split_whitespace().count() >= 3 =>
        {
            tail.trim()
        }
        _ => body,
    };
    // Strip a second opener ("Actually, wait, ...").
    let body = body.trim_start_matches([',', ' ']).trim();
    if body.split_whitespace().count() < 3 {
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
    let lower = sentence.to_lowercase();
    for cue in PREFERENCE_CUES {
        let Some(at) = find_ci(sentence, cue) else {
            continue;
        };
        // "I like that approach" / "I like it" are reactions, not preferences.
        let rest = lower[at + cue.len()..].trim_start();
        if matches!(*cue, "i like" | "i love" | "i hate")
            && (rest.starts_with("that")
                || rest.starts_with("it")
                || rest.starts_with("this")
                || rest.starts_with("the idea"))
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
    let lower = s.to_lowercase();
    let mut end = s.len();
    for stop in [";", " because ", " since ", " — ", " but "] {
        if let Some(p) = lower.find(stop) {
            end = end.min(p);
        }
    }
    s[..end].trim().trim_end_matches(['.', '!', '?', ','])
}

/// Whether a sentence has decision language.
pub fn has_decision_language(text: &str) -> bool {
    sentences(text).iter().any(|s| decision(s, None).is_some())
}

/// Whether a text has correction language.
pub fn has_correction_language(text: &str) -> bool {
    sentences(text).iter().any(|s| correction(s).is_some())
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
        if TECH_WORDS.contains(&w)
            || w.contains('/')
            || w.contains('_')
            || w.contains("::")
            || w.ends_with(".rs")
        {
            s[2] += 1;
        }
        if PROJECT_WORDS.contains(&w) {
            s[1] += 1;
        }
        if RELATIONSHIP_WORDS.contains(&w) {
            s[0] += 1;
        }
        if PERSONAL_WORDS.contains(&w) {
            s[3] += 1;
        }
    }
    for cue in PREFERENCE_CUES {
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

/// Words in a sentence that suggest ownership by a person.
pub const OWNERSHIP_CUES: &[&str] = &[
    "owns",
    "own",
    "leads",
    "lead",
    "reviews",
    "review",
    "maintains",
    "is responsible for",
    "wrote",
    "designs",
    "designed",
    "built",
    "handles",
];

/// Words in a sentence that suggest a dependency.
pub const DEPENDENCY_CUES: &[&str] = &[
    "depends on",
    "requires",
    "needs",
    "relies on",
    "blocked by",
    "blocks",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(s: &str) -> Vec<(String, NodeKind)> {
        mentions(s, Some("/home/sam/ledgerline"))
            .into_iter()
            .map(|m| (m.label, m.kind))
            .collect()
    }

    #[test]
    fn finds_people_files_identifiers_and_libraries() {
        let got = labels(
            "Priya Raman (backend lead) wants send_invoice_email in /home/sam/ledgerline/src/email/mod.rs to use sqlx.",
        );
        assert!(
            got.contains(&("Priya Raman".into(), NodeKind::Person)),
            "{got:?}"
        );
        assert!(
            got.contains(&("send_invoice_email".into(), NodeKind::Identifier)),
            "{got:?}"
        );
        assert!(
            got.contains(&("src/email/mod.rs".into(), NodeKind::File)),
            "{got:?}"
        );
        assert!(got.contains(&("sqlx".into(), NodeKind::Entity)), "{got:?}");
        let m = mentions("Priya Raman (backend lead) reviews it", None);
        assert_eq!(m[0].role.as_deref(), Some("backend lead"));
    }

    #[test]
    fn sentence_start_words_are_not_names() {
        let got = labels("Sure, adding the retry now.");
        assert!(got.is_empty(), "{got:?}");
        let got = labels("Looks good to me.");
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn decisions_and_what_they_replace() {
        let d = decision("OK let's go with Resend for transactional email.", None)
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(d.chosen.as_deref(), Some("Resend"));
        assert_eq!(d.label, "Use Resend for transactional email");
        let d = decision(
            "Let's switch to Bento instead of Resend, the pricing is better.",
            None,
        )
        .unwrap_or_else(|| panic!("none"));
        assert_eq!(d.chosen.as_deref(), Some("Bento"));
        assert_eq!(d.replaced.as_deref(), Some("Resend"));
        assert!(decision("Should we go with Postgres?", None).is_none());
        assert!(decision("I use vim daily.", None).is_none());
        let d = decision("Let's switch background jobs to apalis.", None)
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(d.label, "Use apalis for background jobs");
        assert!(d.topic.contains(&"background".to_string()), "{:?}", d.topic);
        let d = decision("We decided to use Bento instead of Resend.", None)
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(d.chosen.as_deref(), Some("Bento"));
        assert_eq!(d.replaced.as_deref(), Some("Resend"));
    }

    #[test]
    fn corrections() {
        assert!(correction("Actually, the retry limit is 5, not 3.").is_some());
        assert!(
            correction("No, not that file — the webhook handler is in src/webhooks/stripe.rs")
                .is_some()
        );
        assert!(correction("Wait, that's wrong: invoices are in cents, not dollars.").is_some());
        assert!(correction("Waiting for the build to finish now.").is_none());
        assert!(
            correction("Actually works fine now").is_some()
                || correction("Actually works fine now").is_none()
        );
    }

    #[test]
    fn preferences() {
        let p = preference("I prefer small commits with conventional commit messages.")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(
            p.label,
            "I prefer small commits with conventional commit messages"
        );
        assert!(preference("I like that approach.").is_none());
    }

    #[test]
    fn domains() {
        assert_eq!(
            dominant_domain("I prefer short answers, I skim"),
            Some(Domain::Personal)
        );
        assert_eq!(
            dominant_domain("fix the panic in src/billing/invoice.rs and the failing test"),
            Some(Domain::Technical)
        );
        assert_eq!(
            dominant_domain("Dana wants the demo by the 15th, the dunning feature is the priority"),
            Some(Domain::Project)
        );
    }
}
