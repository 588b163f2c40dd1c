//! Injectable time and randomness: `ROLLGRAPH_NOW` and `ROLLGRAPH_SEED`.
//!
//! Every "now" in rollgraph comes from [`now`], so tests and snapshot renders
//! pin it; every random choice (retry jitter) is seeded from [`seed`].

use chrono::{DateTime, Utc};

/// Parses a clock value: RFC 3339 (`2026-11-02T09:00:00Z`) or Unix seconds.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<i64>() {
        return DateTime::from_timestamp(secs, 0);
    }
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|d| d.with_timezone(&Utc))
}

/// The current time: `ROLLGRAPH_NOW` when set and valid, else the system clock.
pub fn now() -> DateTime<Utc> {
    std::env::var("ROLLGRAPH_NOW")
        .ok()
        .and_then(|v| parse_time(&v))
        .unwrap_or_else(Utc::now)
}

/// Whether the clock is pinned by `ROLLGRAPH_NOW`.
pub fn pinned() -> bool {
    std::env::var("ROLLGRAPH_NOW")
        .ok()
        .and_then(|v| parse_time(&v))
        .is_some()
}

/// The random seed: `ROLLGRAPH_SEED` when set, else derived from the clock and pid.
pub fn seed() -> u64 {
    std::env::var("ROLLGRAPH_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            let t = Utc::now().timestamp_nanos_opt().unwrap_or(0) as u64;
            t ^ (u64::from(std::process::id()) << 32)
        })
}

/// A small deterministic PRNG (splitmix64) for jitter; not for secrets.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms() {
        assert_eq!(parse_time("0").map(|t| t.timestamp()), Some(0));
        assert_eq!(
            parse_time("2026-11-02T09:00:00Z").map(|t| t.timestamp()),
            Some(1_793_610_000)
        );
        assert!(parse_time("yesterday").is_none());
    }

    #[test]
    fn rng_is_deterministic() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        assert!((0.0..1.0).contains(&a.next_f64()));
    }
}
