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
    re: Regex,
    /// Capture group holding the secret (0 = whole match).
    group: usize,
}

fn rule(kind: &'static str, pattern: &str, group: usize) -> Option<Rule> {
    Regex::new(pattern).ok().map(|re| Rule { kind, re, group })
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    [
        rule(
            "private-key",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
            0,
        ),
        rule(
            "token",
            concat!(
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
            ),
            0,
        ),
        rule(
            "url-credentials",
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:([^\s@/]{3,})@",
            1,
        ),
        rule(
            "bearer",
            r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9_\-\.=+/]{16,})",
            1,
        ),
        rule(
            "assignment",
            concat!(
                r#"(?i)\b[A-Za-z0-9_\-\.]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|pwd|credential|private[_\-]?key|auth)[A-Za-z0-9_\-\.]*"#,
                r#"["']?\s*(?:=|:|=>)\s*["']?([^\s"',;]{6,})"#
            ),
            1,
        ),
        rule(
            "high-entropy",
            r"[A-Za-z0-9+_\-]{32,}={0,2}",
            0,
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
});

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
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    let mut count = 0;
    for r in RULES.iter() {
        let mut out = String::new();
        let mut last = 0;
        let mut changed = false;
        for caps in r.re.captures_iter(&current) {
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
    Redacted {
        text: current,
        count,
    }
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
}
