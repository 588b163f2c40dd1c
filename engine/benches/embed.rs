//! Embedding benchmark: model load time, sentences per second embedded one
//! at a time and in batches, and the resident memory of a process with the
//! model loaded.
//!
//! Needs the model provisioned (`scripts/provision.sh`); without it the
//! benchmark prints the one-line notice and exits 0.
//!
//! Run: `cargo bench -p rollgraph-engine --bench embed`
//! Extra arguments (after `--`): `--quick` for one round instead of the best
//! of three, `--variants` to also compare batch sizes, thread counts,
//! spin-waiting and the CPU arena (each variant loads the model again, after
//! the memory figures are taken), `--memory-trace` to print resident memory
//! after each step instead.
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
    "translate the dashboard into two more languages",
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
    "Still open before release: {}",
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

fn load(paths: &EmbedPaths, options: &EmbedOptions) -> Option<(Embedder, Duration)> {
    let t = Instant::now();
    match Embedder::load_with(paths, options) {
        Ok(m) => Some((m, t.elapsed())),
        Err(e) => {
            println!("{}", e.notice());
            None
        }
    }
}

fn header(first: &str, second: &str) {
    println!("| {first:<44} | {second:>16} |");
    println!("|{:-<46}|{:->18}|", "", "");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let rounds = if flag("--quick") { 1 } else { 3 };
    let texts = sentences();
    let paths = EmbedPaths::discover();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if flag("--memory-trace") {
        memory_trace(&paths, &texts);
        return;
    }

    // The production configuration: what a long-lived rollgraph process runs.
    let defaults = EmbedOptions::default();
    let (rss_start, _) = memory();
    let Some((mut m, load_time)) = load(&paths, &defaults) else {
        return;
    };
    let (rss_loaded, hwm_loaded) = memory();
    // Warm up: the first calls pick kernels and grow buffers.
    let _ = batched(&mut m, &texts[..64], 64, 1);
    let _ = single(&mut m, &texts[..16], 1);

    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let single_rate = single(&mut m, &texts, rounds);
    let batch_rate = best(rounds, texts.len(), || {
        assert!(m.embed(&refs).is_ok(), "embedding failed");
    });
    let long = "The retry budget and the backoff policy of the mail worker. ".repeat(80);
    let long_refs = vec![long.as_str(); 16];
    let long_rate = best(1, long_refs.len(), || {
        assert!(m.embed(&long_refs).is_ok(), "embedding failed");
    });
    let (rss_after, hwm_after) = memory();
    let model_id = m.model_id().to_owned();
    let dim = m.dim();
    drop(m);
    let reload = load(&paths, &defaults).map(|(_, t)| t);

    println!(
        "\nrollgraph embeddings: {model_id} ({dim} dims), {} sentences, {cores} cores, \
         default options (batch {}, {} threads max, no spin, no arena), best of {rounds}\n",
        texts.len(),
        defaults.batch_size,
        rollgraph_engine::embed::DEFAULT_MAX_THREADS,
    );
    header("measure", "value");
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
    row("model load (first, incl. ONNX Runtime)", &ms(load_time));
    if let Some(t) = reload {
        row("model load (again, runtime already loaded)", &ms(t));
    }
    row(
        "single: embed_one per sentence",
        &format!("{single_rate:.0} /s"),
    );
    row(
        "batched: embed(all 200), batches of 32",
        &format!("{batch_rate:.0} /s"),
    );
    row(
        "long texts (256-token window), 16 per call",
        &format!("{long_rate:.1} /s"),
    );
    row("VmRSS before load", &format!("{rss_start:.1} MiB"));
    row("VmRSS after load", &format!("{rss_loaded:.1} MiB"));
    row(
        "VmHWM after load (peak while loading)",
        &format!("{hwm_loaded:.1} MiB"),
    );
    row("VmRSS after embedding", &format!("{rss_after:.1} MiB"));
    row("VmHWM after embedding", &format!("{hwm_after:.1} MiB"));

    if flag("--variants") {
        println!("\nvariants, model reloaded for each (memory figures above are unaffected):\n");
        header("options", "single / batched");
        let variant = |label: String, opts: EmbedOptions| {
            if let Some((mut v, _)) = load(&paths, &opts) {
                let _ = batched(&mut v, &texts[..64], 64, 1);
                let s = single(&mut v, &texts, rounds);
                let b = best(rounds, texts.len(), || {
                    assert!(v.embed(&refs).is_ok(), "embedding failed");
                });
                row(&label, &format!("{s:.0} / {b:.0}"));
            }
        };
        for batch_size in [8, 16, 32, 64, 128] {
            variant(
                format!("batch {batch_size}"),
                EmbedOptions {
                    batch_size,
                    ..EmbedOptions::default()
                },
            );
        }
        for threads in [1, 2] {
            for spin in [false, true] {
                variant(
                    format!("{threads} intra-op thread(s), spin {spin}"),
                    EmbedOptions {
                        intra_threads: Some(threads),
                        spin,
                        ..EmbedOptions::default()
                    },
                );
            }
        }
        variant(
            "with ONNX Runtime's CPU arena".to_owned(),
            EmbedOptions {
                arena: true,
                ..EmbedOptions::default()
            },
        );
    }
}

/// Resident memory after each step of a load and a run of growing batches.
fn memory_trace(paths: &EmbedPaths, texts: &[String]) {
    let show = |what: &str| {
        let (r, h) = memory();
        println!("{what:<34} VmRSS {r:7.1} MiB  VmHWM {h:7.1} MiB");
    };
    show("start");
    let Some((mut m, _)) = load(paths, &EmbedOptions::default()) else {
        return;
    };
    show("loaded");
    let _ = single(&mut m, texts, 1);
    show("200 x embed_one");
    for batch in [8, 32, 64, 128, 200] {
        let _ = batched(&mut m, texts, batch, 1);
        show(&format!("embed() {batch} per call"));
    }
    let long = "The retry budget and the backoff policy of the mail worker. ".repeat(80);
    let _ = m.embed(&[long.as_str()]);
    show("1 long text (256 tokens)");
    let _ = m.embed(&[long.as_str(); 32]);
    show("32 long texts in one call");
}
