//! Embedding benchmark: model load time, sentences per second embedded one
//! at a time and in batches, and the resident memory of a process with the
//! model loaded.
//!
//! Needs the model provisioned (`scripts/provision.sh`); without it the
//! benchmark prints the one-line notice and exits 0.
//!
//! Run: `cargo bench -p rollgraph-engine --bench embed`
//! Extra arguments (after `--`): `--quick` for fewer rounds, `--variants` to
//! also compare thread counts and spin-waiting (each variant loads the model
//! again, so those run after the memory figures are taken).
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::time::{Duration, Instant};

use rollgraph_engine::embed::{EmbedOptions, EmbedPaths, Embedder};

const SUBJECTS: [&str; 40] = [
    "switch mail to Bento",
    "the retry limit is five",
    "use Postgres for the job queue",
    "the login page is broken on Safari",
    "move the billing webhook behind the API gateway",
    "rename the users table to accounts",
    "cache the pricing page for ten minutes",
    "the CI job times out after 30 minutes",
    "drop support for Node 16",
    "keep the feature flag for the new editor off in production",
    "store session tokens in an httpOnly cookie",
    "the export endpoint returns CSV, not JSON",
    "paginate the audit log with cursors",
    "run migrations before the deploy, never during it",
    "the mobile app reads the config from the edge",
    "use UTC everywhere in the database",
    "the search index is rebuilt nightly",
    "send the weekly digest on Monday mornings",
    "limit uploads to 25 MB",
    "the staging database is a copy of production from Sunday",
    "write integration tests against a real Redis",
    "prefer composition over inheritance in the UI kit",
    "the payment provider is Stripe, with Adyen as a fallback",
    "log request ids in every service",
    "the rate limiter allows 100 requests per minute per key",
    "customers can delete their account from settings",
    "the onboarding flow has three steps",
    "translate the dashboard into German and Japanese",
    "use semantic versioning for the public SDK",
    "the worker pool has eight threads",
    "invoices are generated on the first of the month",
    "do not touch the legacy reports module",
    "the health check lives at /healthz",
    "encrypt backups with the KMS key",
    "the design system uses an 8px grid",
    "add a dark mode toggle to the settings page",
    "the queue consumer must be idempotent",
    "error messages should say what to do next",
    "the admin panel is only reachable over the VPN",
    "deprecate the v1 API by the end of the quarter",
];

const FRAMES: [&str; 5] = [
    "{}",
    "Decision: {}.",
    "We agreed that {} after the incident review.",
    "TODO before release: {}",
    "Note from the user: {} (see the discussion in PR #{n})",
];

fn sentences() -> Vec<String> {
    let mut out = Vec::new();
    for (i, frame) in FRAMES.iter().enumerate() {
        for (j, s) in SUBJECTS.iter().enumerate() {
            out.push(
                frame
                    .replace("{n}", &(100 + i * 40 + j).to_string())
                    .replace("{}", s),
            );
        }
    }
    out
}

/// `VmRSS` and `VmHWM` from `/proc/self/status`, in MiB.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn per_second(n: usize, elapsed: Duration) -> f64 {
    n as f64 / elapsed.as_secs_f64()
}

/// Best of `rounds` runs of `f` over `n` sentences, in sentences per second.
fn best(rounds: usize, n: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            per_second(n, t.elapsed())
        })
        .fold(0.0, f64::max)
}

fn single(m: &mut Embedder, texts: &[String], rounds: usize) -> f64 {
    best(rounds, texts.len(), || {
        for t in texts {
            assert!(m.embed_one(t).is_ok(), "embedding failed");
        }
    })
}

fn batched(m: &mut Embedder, texts: &[String], batch: usize, rounds: usize) -> f64 {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    best(rounds, texts.len(), || {
        for chunk in refs.chunks(batch) {
            assert!(m.embed(chunk).is_ok(), "embedding failed");
        }
    })
}

fn row(what: &str, value: &str) {
    println!("| {what:<44} | {value:>16} |");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let variants = args.iter().any(|a| a == "--variants");
    let rounds = if quick { 1 } else { 3 };
    let texts = sentences();
    let paths = EmbedPaths::discover();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);

    let (rss_start, _) = memory();
    let t = Instant::now();
    let options = EmbedOptions {
        batch_size: 1024, // the benchmark chunks the input itself
        ..EmbedOptions::default()
    };
    let mut m = match Embedder::load_with(&paths, &options) {
        Ok(m) => m,
        Err(e) => {
            println!("{}", e.notice());
            return;
        }
    };
    let load = t.elapsed();
    let (rss_loaded, _) = memory();

    // Warm up (first calls allocate arenas and pick kernels).
    let _ = batched(&mut m, &texts[..64], 32, 1);
    let _ = single(&mut m, &texts[..16], 1);

    println!(
        "\nrollgraph embeddings: {} ({} dims), {} sentences, {cores} cores, best of {rounds}\n",
        m.model_id(),
        m.dim(),
        texts.len()
    );
    println!("| {:<44} | {:>16} |", "measure", "value");
    println!("|{:-<46}|{:->18}|", "", "");
    row(
        "model load (first, incl. ONNX Runtime)",
        &format!("{:.0} ms", load.as_secs_f64() * 1e3),
    );
    let t = Instant::now();
    let again = Embedder::load_with(&paths, &options);
    let reload = t.elapsed();
    drop(again);
    row(
        "model load (again, runtime already loaded)",
        &format!("{:.0} ms", reload.as_secs_f64() * 1e3),
    );
    row(
        "single, one sentence per call",
        &format!("{:.0} /s", single(&mut m, &texts, rounds)),
    );
    for batch in [8, 32, 64, 128] {
        row(
            &format!("batched, {batch} per call"),
            &format!("{:.0} /s", batched(&mut m, &texts, batch, rounds)),
        );
    }
    let (rss_after, hwm_after) = memory();
    row("VmRSS before load", &format!("{rss_start:.1} MiB"));
    row("VmRSS after load", &format!("{rss_loaded:.1} MiB"));
    row("VmRSS after embedding", &format!("{rss_after:.1} MiB"));
    row(
        "VmHWM (peak) after embedding",
        &format!("{hwm_after:.1} MiB"),
    );
    drop(m);

    if variants {
        println!("\nvariants (model reloaded for each):\n");
        println!("| {:<44} | {:>16} |", "threads, spin", "single / batch 32");
        println!("|{:-<46}|{:->18}|", "", "");
        for threads in [1, 2] {
            for spin in [false, true] {
                let opts = EmbedOptions {
                    intra_threads: Some(threads),
                    batch_size: 1024,
                    spin,
                };
                let Ok(mut v) = Embedder::load_with(&paths, &opts) else {
                    println!("variant {threads} threads failed to load");
                    continue;
                };
                let _ = batched(&mut v, &texts[..64], 32, 1);
                let s = single(&mut v, &texts, rounds);
                let b = batched(&mut v, &texts, 32, rounds);
                row(
                    &format!("{threads} intra-op thread(s), spin {spin}"),
                    &format!("{s:.0} / {b:.0}"),
                );
            }
        }
    }
}
