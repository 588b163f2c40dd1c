#!/usr/bin/env bash
# Runs rollgraph's whole test suite from a clean clone: provisions the local
# embedding model (pinned, sha256-checked, cached), then runs every test of
# the workspace with the model required, so a missing install step fails
# loudly instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo not found; install Rust from https://rustup.rs first" >&2
  exit 1
fi

bash scripts/provision.sh
bash scripts/provision-words.sh
export ROLLGRAPH_REQUIRE_MODEL=1
# A one-off build gains nothing from incremental caches, which double the
# size of target/ (set CARGO_INCREMENTAL=1 to keep them).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Benches are measured by `cargo bench` / `rollgraph bench`, not run as tests.
# The integration tests include the fast subset of the fault campaign
# (tests/faults.rs: fuzzed hook inputs, kill -9 trials, concurrent sessions,
# the corruption matrix, the secrets corpus); `scripts/faults.sh` runs it in full.
cargo test --workspace --lib --bins --tests "$@"

# The real-browser check of `rollgraph view` runs when a browser is here
# (`bash scripts/view-check.sh` alone installs Chromium from the Debian packages).
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
  || command -v google-chrome >/dev/null 2>&1 || [ -n "${CHROMIUM:-}" ]; then
  ROLLGRAPH_BIN="${CARGO_TARGET_DIR:-target}/debug/rollgraph" bash scripts/view-check.sh
else
  echo "test.sh: no Chromium here, skipping scripts/view-check.sh (run it alone to install one)" >&2
fi
