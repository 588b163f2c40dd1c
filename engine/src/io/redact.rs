//! Secret redaction: runs on every piece of conversation text before it is
//! extracted from, stored, logged or sent to an LLM.
//!
//! It errs on the side of redacting: a false positive costs a word of
//! context, a false negative leaks a credential to disk.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

struct Rule {
    kind: &'static str,
    /// Compiled on first use only: most texts never need most rules, and
    /// compiling all of them costs about a millisecond on the hook's path.
    re: LazyLock<Option<Regex>>,
    /// Capture group holding the secret (0 = whole match).
    group: usize,
    /// A cheap necessary condition: when it is false the rule cannot match,
    /// so its regex is neither compiled nor run.
    could_match: fn(&str) -> bool,
}

const TOKEN_PATTERN: &str = concat!(
    r"\b(?:",
    r"sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{16,}",
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"|whsec_[A-Za-z0-9]{16,}",
    r"|re_[A-Za-z0-9_]{16,}",
    r"|gh[pousr]_[A-Za-z0-9]{20,}",
    r"|github_pat_[A-Za-z0-9_]{20,}",
    r"|glpat-[A-Za-z0-9_\-]{16,}",
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}",
    r"|AIza[A-Za-z0-9_\-]{30,}",
    r"|npm_[A-Za-z0-9]{30,}",
    r"|hf_[A-Za-z0-9]{30,}",
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    r")"
);

const ASSIGNMENT_PATTERN: &str = concat!(
    r#"(?i)\b[A-Za-z0-9_\-\.]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|pwd|credential|private[_\-]?key|auth|key)[A-Za-z0-9_\-\.]*"#,
    r#"["']?\s*(?:=|:|=>)\s*["']?([^\s"',;]{6,})"#
);

static RULES: [Rule; 7] = [
    Rule {
        kind: "private-key",
        re: LazyLock::new(|| {
            Regex::new(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)").ok()
        }),
        group: 0,
        could_match: |t| t.contains("-----BEGIN "),
    },
    Rule {
        kind: "token",
        re: LazyLock::new(|| Regex::new(TOKEN_PATTERN).ok()),
        group: 0,
        could_match: could_be_token,
    },
    Rule {
        kind: "url-credentials",
        re: LazyLock::new(|| {
            Regex::new(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:([^\s@/]{3,})@").ok()
        }),
        group: 1,
        could_match: |t| t.contains("://") && t.contains('@'),
    },
    Rule {
        kind: "bearer",
        re: LazyLock::new(|| {
            Regex::new(r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9_\-\.=+/]{16,})").ok()
        }),
        group: 1,
        could_match: |t| contains_any_ci(t, &["bearer", "basic", "token"]),
    },
    Rule {
        kind: "assignment",
        re: LazyLock::new(|| Regex::new(ASSIGNMENT_PATTERN).ok()),
        group: 1,
        could_match: |t| {
            (t.contains('=') || t.contains(':'))
                && contains_any_ci(
                    t,
                    &[
                        "api",
                        "secret",
                        "token",
                        "passw",
                        "pwd",
                        "credential",
                        "private",
                        "auth",
                        "key",
                    ],
                )
        },
    },
    Rule {
        // `password=secret` inside a URL, a DSN or a config line: any value
        // after a password key is a secret, even a plain word.
        kind: "password",
        re: LazyLock::new(|| {
            Regex::new(r"(?i)\b[A-Za-z0-9_\-\.]*(?:password|passwd|passphrase|passcode|pwd)\s*(?:=|:)\s*([^\s&;,'`\x22\)\]]{4,})").ok()
        }),
        group: 1,
        could_match: |t| {
            (t.contains('=') || t.contains(':')) && contains_any_ci(t, &["pass", "pwd"])
        },
    },
    Rule {
        kind: "high-entropy",
        re: LazyLock::new(|| Regex::new(r"[A-Za-z0-9+_\-]{32,}={0,2}").ok()),
        group: 0,
        could_match: |t| {
            longest_run(t, |b| {
                b.is_ascii_alphanumeric() || b == b'+' || b == b'_' || b == b'-'
            }) >= 32
        },
    },
];

/// Case-insensitive substring test. The `(?i)` rules fold Unicode too (a
/// Kelvin sign matches `k`), so any text with multi-byte characters counts as a possible match.
fn contains_any_ci(text: &str, needles: &[&str]) -> bool {
    if !text.is_ascii() {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    needles.iter().any(|n| lower.contains(n))
}

/// Whether `needle` occurs where the token rule's leading `\b` could hold
/// (not right after a single-byte word character; a multi-byte letter before it is
/// left to the regex).
fn at_word_start(text: &str, needle: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(needle)
        .any(|(i, _)| i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
}

fn could_be_token(t: &str) -> bool {
    const STARTS: [&str; 23] = [
        "sk-",
        "sk_live_",
        "sk_test_",
        "rk_live_",
        "rk_test_",
        "pk_live_",
        "pk_test_",
        "whsec_",
        "re_",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xox",
        "AKIA",
        "ASIA",
        "AIza",
        "npm_",
        "hf_",
        "SG.",
    ];
    STARTS.iter().any(|s| at_word_start(t, s)) || at_word_start(t, "eyJ")
}

/// Length of the longest run of bytes satisfying `f`.
fn longest_run(t: &str, f: impl Fn(u8) -> bool) -> usize {
    let (mut best, mut cur) = (0, 0);
    for &b in t.as_bytes() {
        if f(b) {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// Tokens of this length or more that mix upper, lower and digits are
/// treated as secrets even without a known prefix.
const HIGH_ENTROPY_MIN: usize = 32;

/// The result of redacting a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted<'a> {
    /// The text with every secret replaced by `[REDACTED:kind]`.
    pub text: Cow<'a, str>,
    /// How many secrets were replaced.
    pub count: usize,
}

fn placeholder(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// Replaces every secret in `text` with a `[REDACTED:kind]` placeholder.
pub fn redact(text: &str) -> Redacted<'_> {
    redact_with(text, true)
}

fn redact_with(text: &str, prefilter: bool) -> Redacted<'_> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    let mut count = 0;
    for r in RULES.iter() {
        if prefilter && !(r.could_match)(&current) {
            continue;
        }
        let Some(re) = r.re.as_ref() else { continue };
        let mut out = String::new();
        let mut last = 0;
        let mut changed = false;
        for caps in re.captures_iter(&current) {
            let Some(m) = caps.get(r.group) else { continue };
            let secret = m.as_str();
            if secret.starts_with("[REDACTED") {
                continue;
            }
            if r.kind == "high-entropy" && !mixed_alnum(secret) {
                continue;
            }
            if r.kind == "assignment" && !looks_like_secret_value(secret) {
                continue;
            }
            out.push_str(&current[last..m.start()]);
            out.push_str(&placeholder(r.kind));
            last = m.end();
            count += 1;
            changed = true;
        }
        if changed {
            out.push_str(&current[last..]);
            current = Cow::Owned(out);
        }
    }
    if !prefilter || could_be_prose_secret(&current) {
        let (text, n) = redact_prose(&current);
        if n > 0 {
            count += n;
            current = Cow::Owned(text);
        }
    }
    Redacted {
        text: current,
        count,
    }
}

/// Words that make what follows them a secret in prose ("my admin password
/// is …", "the secret key is …"): strong ones redact any value after `is`,
/// `:` or `=`; weak ones only a value that looks like a credential.
const STRONG_WORDS: [&str; 7] = [
    "password",
    "passphrase",
    "passcode",
    "passwd",
    "pwd",
    "pin",
    "passwords",
];
const WEAK_WORDS: [&str; 9] = [
    "secret",
    "secrets",
    "token",
    "tokens",
    "key",
    "keys",
    "credential",
    "credentials",
    "apikey",
];

/// Words between the connector and the value that are not the value
/// ("the password is now …", "is set to …").
const FILLER: [&str; 14] = [
    "now",
    "still",
    "actually",
    "just",
    "currently",
    "simply",
    "set",
    "changed",
    "to",
    "literally",
    "always",
    "probably",
    "also",
    "like",
];

/// Values that read as an ordinary statement about the secret, not the
/// secret itself ("the password is wrong", "the token is missing").
const NOT_VALUES: &[&str] = &[
    "the",
    "a",
    "an",
    "not",
    "in",
    "on",
    "at",
    "for",
    "of",
    "from",
    "stored",
    "required",
    "missing",
    "empty",
    "wrong",
    "correct",
    "invalid",
    "expired",
    "valid",
    "rotated",
    "same",
    "different",
    "here",
    "there",
    "below",
    "above",
    "fine",
    "ok",
    "okay",
    "set",
    "unset",
    "blank",
    "too",
    "being",
    "what",
    "which",
    "that",
    "this",
    "it",
    "my",
    "your",
    "our",
    "their",
    "his",
    "her",
    "only",
    "gone",
    "safe",
    "please",
];

fn could_be_prose_secret(t: &str) -> bool {
    contains_any_ci(
        t,
        &["pass", "pwd", "pin", "secret", "token", "key", "credential"],
    )
}

/// A word with surrounding punctuation and quotes stripped, lower-cased,
/// possessive dropped: `"Password's` → `password`.
fn bare_word(w: &str) -> String {
    let t = w.trim_matches(|c: char| !c.is_alphanumeric());
    let t = t.strip_suffix("'s").unwrap_or(t);
    t.to_lowercase()
}

/// Whether a word names a secret: 2 = strong (password …), 1 = weak (key …).
fn secret_word(w: &str) -> u8 {
    let b = bare_word(w);
    if b.is_empty() || b.len() > 40 {
        return 0;
    }
    if STRONG_WORDS.contains(&b.as_str()) {
        return 2;
    }
    if WEAK_WORDS.contains(&b.as_str()) {
        return 1;
    }
    // Compounds: `admin-password`, `db_password`, `api-key`, `secret_key`.
    let tail = b.rsplit(['-', '_']).next().unwrap_or("");
    if tail.len() < b.len() {
        if STRONG_WORDS.contains(&tail) {
            return 2;
        }
        if WEAK_WORDS.contains(&tail) {
            return 1;
        }
    }
    if b.ends_with("password") || b.ends_with("passphrase") {
        return 2;
    }
    0
}

fn is_connector(w: &str) -> bool {
    matches!(
        bare_word(w).as_str(),
        "is" | "was" | "are" | "were" | "equals" | "reads"
    ) || w == "="
        || w == ":"
        || w == "->"
        || w == "=>"
}

/// The candidate value inside a word: trailing sentence punctuation and
/// quotes removed.
fn value_span(w: &str) -> (usize, usize) {
    let lead = w.len()
        - w.trim_start_matches(['"', '\'', '`', '(', '[', '<', '*'])
            .len();
    let inner = &w[lead..];
    let trimmed = inner.trim_end_matches([
        '"', '\'', '`', ')', ']', '>', '*', '.', ',', ';', '!', '?', ':',
    ]);
    (lead, lead + trimmed.len())
}

/// A string that reads like a generated credential: long, with at least
/// three of upper case, lower case, digits and symbols (paths and
/// snake_case identifiers have two).
fn high_entropy(v: &str) -> bool {
    if v.len() < 16 || v.contains("REDACTED") {
        return false;
    }
    let classes = [
        v.bytes().any(|b| b.is_ascii_uppercase()),
        v.bytes().any(|b| b.is_ascii_lowercase()),
        v.bytes().any(|b| b.is_ascii_digit()),
        v.bytes().any(|b| !b.is_ascii_alphanumeric()),
    ];
    let n = classes.iter().filter(|c| **c).count();
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    n >= 3 || (v.len() >= 24 && n >= 2 && digits >= 4 && !v.contains('/'))
}

/// Redacts secrets stated in prose, in user and assistant text alike:
/// the value after "password/passphrase/secret/token/key … is|:|=", a value
/// before "is my password", and high-entropy strings next to such words.
fn redact_prose(text: &str) -> (String, usize) {
    // Words with their byte spans.
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push((s, i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push((s, text.len()));
    }
    let w = |i: usize| &text[words[i].0..words[i].1];
    let mut cut: Vec<(usize, usize)> = Vec::new();
    let mark = |cut: &mut Vec<(usize, usize)>, i: usize, strong: bool| {
        let (a, b) = value_span(w(i));
        let v = &w(i)[a..b];
        if v.len() < 4 || v.contains("REDACTED") || v.starts_with(['<', '$', '{']) {
            return false;
        }
        if NOT_VALUES.contains(&bare_word(v).as_str()) {
            return false;
        }
        if !(strong || high_entropy(v) || (looks_like_secret_value(v) && v.len() >= 8)) {
            return false;
        }
        cut.push((words[i].0 + a, words[i].0 + b));
        true
    };
    for i in 0..words.len() {
        let strength = secret_word(w(i));
        if strength == 0 {
            continue;
        }
        let strong = strength == 2;
        // "<value> is my password", "use <value> as the password".
        if i >= 3
            && matches!(
                bare_word(w(i - 1)).as_str(),
                "my" | "the" | "our" | "your" | "a"
            )
            && (is_connector(w(i - 2)) || bare_word(w(i - 2)) == "as")
            && strong
        {
            mark(&mut cut, i - 3, true);
        }
        // A command-line flag: `--password <value>`.
        if strong && w(i).starts_with("--") && !w(i).contains('=') && i + 1 < words.len() {
            mark(&mut cut, i + 1, true);
        }
        // "password: <value>", "key=<value>" within the word itself.
        let word = w(i);
        if let Some(p) = word.find([':', '=']) {
            let rest = &word[p + 1..];
            if !rest.is_empty() && secret_word(&word[..p]) > 0 {
                let (a, b) = value_span(rest);
                let v = &rest[a..b];
                if v.len() >= 4
                    && !v.contains("REDACTED")
                    && (strong || high_entropy(v) || (looks_like_secret_value(v) && v.len() >= 8))
                {
                    let off = words[i].0 + p + 1;
                    cut.push((off + a, off + b));
                }
            }
        }
        // Forward: "... password for the admin account is <value>".
        let mut j = i + 1;
        let end = (i + 10).min(words.len());
        let mut connected = word.ends_with(':') || word.ends_with('=');
        while j < end {
            let cur = w(j);
            if connected {
                if FILLER.contains(&bare_word(cur).as_str()) && !cur.ends_with(['.', '!', '?']) {
                    j += 1;
                    continue;
                }
                mark(&mut cut, j, strong);
                break;
            }
            // A nearer secret word takes over (its own strength decides).
            if secret_word(cur) > 0 {
                break;
            }
            let (a, b) = value_span(cur);
            if high_entropy(&cur[a..b]) {
                mark(&mut cut, j, true);
            }
            if is_connector(cur) || (cur.ends_with(':') && !cur.contains("://")) {
                connected = true;
            }
            if cur.ends_with(['.', '!', '?', ';']) && !connected {
                break;
            }
            j += 1;
        }
        // Backward: a high-entropy string just before the word ("wJalr… is the secret key").
        for k in i.saturating_sub(4)..i {
            let cur = w(k);
            let (a, b) = value_span(cur);
            if high_entropy(&cur[a..b]) {
                mark(&mut cut, k, true);
            }
        }
    }
    if cut.is_empty() {
        return (text.to_owned(), 0);
    }
    cut.sort_unstable();
    cut.dedup();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut n = 0;
    for (a, b) in cut {
        if a < last {
            continue;
        }
        out.push_str(&text[last..a]);
        out.push_str(&placeholder("prose"));
        last = b;
        n += 1;
    }
    out.push_str(&text[last..]);
    (out, n)
}

/// A long token mixing upper case, lower case and digits (hex hashes and
/// snake_case identifiers don't).
fn mixed_alnum(s: &str) -> bool {
    s.len() >= HIGH_ENTROPY_MIN
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes().filter(|b| b.is_ascii_digit()).count() >= 2
        && !s.contains("__")
}

/// A value after `password=` is a secret unless it reads like a plain word
/// or a placeholder (`password: please`, `token: <your-token>`).
fn looks_like_secret_value(v: &str) -> bool {
    if v.starts_with('<') || v.starts_with('$') || v.starts_with('{') || v.contains("REDACTED") {
        return false;
    }
    let has_digit = v.bytes().any(|b| b.is_ascii_digit());
    let has_upper = v.bytes().any(|b| b.is_ascii_uppercase());
    let has_symbol = v.bytes().any(|b| !b.is_ascii_alphanumeric());
    let all_lower_word = v.bytes().all(|b| b.is_ascii_lowercase());
    !all_lower_word && (has_digit || has_upper || has_symbol)
}

/// Redacts and returns an owned string.
pub fn redact_owned(text: &str) -> String {
    redact(text).text.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_tokens_are_redacted() {
        let cases = [
            "RESEND_API_KEY=re_8sJk2LmQ9xVbN4pT7wZc1",
            "use sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu for prod",
            "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv123",
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "aws AKIAIOSFODNN7EXAMPLE here",
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
            "postgres://sam:hunter2secret@db.internal:5432/ledger",
            "password: Tr0ub4dor&3",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ];
        for c in cases {
            let r = redact(c);
            assert!(r.count >= 1, "missed a secret in {c:?}: {}", r.text);
            assert!(r.text.contains("[REDACTED:"), "{c:?}");
        }
        let r = redact("RESEND_API_KEY=re_8sJk2LmQ9xVbN4pT7wZc1");
        assert!(!r.text.contains("8sJk2LmQ9"), "{}", r.text);
    }

    #[test]
    fn secrets_in_prose_are_redacted() {
        let cases = [
            (
                "my admin password is Moonlight-Orchid-42",
                "Moonlight-Orchid-42",
            ),
            (
                "the secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "wJalrXUtnFEMI",
            ),
            (
                "the password for the admin account is now Saffron_Tiger_1987.",
                "Saffron_Tiger_1987",
            ),
            ("use Zebra!Crossing77 as the password", "Zebra!Crossing77"),
            ("Glacier-Pepper-88 is my password", "Glacier-Pepper-88"),
            ("my PIN is 4821", "4821"),
            (
                "the token for staging is 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
                "9f8e7d6c5b4a3928",
            ),
            (
                "auth key, copied just now, Hq7Kp2Lm9Xn4Wz8Tb3Vc",
                "Hq7Kp2Lm9Xn4Wz8Tb3Vc",
            ),
            ("psql --password Tr0ub4dor3x -h db", "Tr0ub4dor3x"),
            (
                "jdbc:postgresql://db/app?user=app&password=quietmeadow&ssl=true",
                "quietmeadow",
            ),
            (
                "AccountName=acme;AccountKey=Wq7Zk2Lp9Xm4Nb8Tc3Vd6Hy1Gf5Rs0Ja+Ke==;",
                "Wq7Zk2Lp9Xm4",
            ),
            (
                "the passphrase is correct-horse-battery-staple",
                "correct-horse",
            ),
        ];
        for (text, secret) in cases {
            let r = redact(text);
            assert!(
                !r.text.contains(secret),
                "{text:?} kept {secret:?}: {}",
                r.text
            );
            assert!(r.count >= 1);
        }
    }

    #[test]
    fn talk_about_secrets_is_not_a_secret() {
        let cases = [
            "the key is to keep it simple",
            "the password is wrong, try again",
            "the token is missing from the request",
            "we need a secret manager: probably Vault",
            "PRIMARY KEY DEFAULT gen_random_uuid()",
            "read the key from RESEND_API_KEY at startup",
        ];
        for c in cases {
            let r = redact(c);
            assert_eq!(r.text, c, "false positive in {c:?}");
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let cases = [
            "Let's go with Resend for transactional email.",
            "the webhook handler is in src/webhooks/stripe.rs",
            "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it",
            "the password reset flow needs a token: please add one",
            "set RETRY_LIMIT=5 in the config",
            "call send_invoice_email(invoice_id) after DunningPolicy::next_step",
        ];
        for c in cases {
            let r = redact(c);
            assert_eq!(r.count, 0, "false positive in {c:?}: {}", r.text);
            assert_eq!(r.text, c);
        }
    }

    #[test]
    fn redaction_is_idempotent() {
        let once =
            redact_owned("key=re_8sJk2LmQ9xVbN4pT7wZc1 and sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu");
        let twice = redact(&once);
        assert_eq!(twice.count, 0);
        assert_eq!(twice.text, once);
    }

    #[test]
    fn the_prefilter_never_changes_the_result() {
        let cases = [
            "RESEND_API_KEY=re_8sJk2LmQ9xVbN4pT7wZc1",
            "use sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu for prod",
            "task-sk-proj-abcdefghijklmnopqrstuv123 and mask_live_51Hx9aBcDeFgHiJkLmNoPqRsTu",
            "Authorization: BEARER abcdefghijklmnopqrstuvwxyz012345",
            "the \u{212A}ey is ToKen abcdefghijklmnopqrstuvwxyz012345",
            "ſecret: Tr0ub4dor&3x",
            "postgres://sam:hunter2secret@db.internal:5432/ledger",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
            "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5 plain",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789 though high",
            "Let's go with Resend; the password reset flow needs a token: please add one",
            "éghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ];
        for c in cases {
            assert_eq!(redact_with(c, true), redact_with(c, false), "{c:?}");
        }
        for line in include_str!("../../../examples/session.jsonl").lines() {
            assert_eq!(redact_with(line, true), redact_with(line, false), "{line}");
        }
    }

    proptest::proptest! {
        #[test]
        fn prefilter_agrees_with_the_full_scan(parts in proptest::collection::vec(proptest::sample::select(vec![
            " ", "\n", "=", ": ", "=> ", "@", "://", "-", "_", ".", "é", "\u{212A}", "ſ",
            "token", "Bearer", "api_key", "PASSWORD", "auth", "secret", "sk-", "sk_live_", "re_", "ghp_", "xoxb-", "AKIA",
            "eyJhbGciOiJIUzI1NiJ9", "SG.", "hf_", "npm_", "-----BEGIN RSA PRIVATE KEY-----",
            "abcdefghijklmnop", "ABCDEFGH12345678", "Tr0ub4dor&3", "x", "9",
        ]), 0..14)) {
            let text: String = parts.concat();
            proptest::prop_assert_eq!(redact_with(&text, true), redact_with(&text, false));
        }
    }
}
