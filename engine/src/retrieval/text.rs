//! Words for retrieval: lowercase, function words out, Snowball-stemmed.
//!
//! The English Snowball stemmer (`rust-stemmers`, the one tantivy uses)
//! maps "invoice", "invoices" and "invoicing" to one stem, which the crude
//! suffix stripper it replaced did not. Function words come from the
//! extract stage's data file, so the two stages agree on what carries no
//! meaning.

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

use crate::extract::lexicon;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The stem of one lowercase word.
pub fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The words of `text` that carry meaning, stemmed, in order (repeats
/// kept): letters and digits; function words and one-letter words dropped
/// (a lone digit is kept: "day 4").
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let w = raw.trim_matches('\'');
        if w.is_empty() {
            continue;
        }
        let lower = w.to_lowercase();
        if lexicon::is_stop(&lower) {
            continue;
        }
        // Possessives and contractions: "nora's" is "nora".
        let base = lower
            .strip_suffix("'s")
            .unwrap_or(&lower)
            .split('\'')
            .next()
            .unwrap_or("");
        if base.chars().count() < 2 && !base.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if base.is_empty() || lexicon::is_stop(base) {
            continue;
        }
        out.push(stem(base));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_share_a_stem() {
        assert_eq!(stem("invoice"), stem("invoices"));
        assert_eq!(stem("retry"), stem("retries"));
        assert_eq!(stem("partition"), stem("partitioned"));
        assert_eq!(stem("webhook"), stem("webhooks"));
    }

    #[test]
    fn function_words_go_and_possessives_fold() {
        let t = tokenize("What is Nora's wedding date, and when did we book it?");
        assert!(t.contains(&stem("nora")), "{t:?}");
        assert!(t.contains(&stem("wedding")), "{t:?}");
        assert!(
            !t.iter().any(|w| w == "what" || w == "is" || w == "the"),
            "{t:?}"
        );
        assert_eq!(tokenize("day 4"), vec![stem("day"), "4".to_owned()]);
        // Other scripts tokenize too (no panic, words kept).
        assert!(!tokenize("Привет мир 日本語").is_empty());
    }
}
