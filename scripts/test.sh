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
export ROLLGRAPH_REQUIRE_MODEL=1
# Benches are measured by `cargo bench` / `rollgraph bench`, not run as tests.
# The integration tests include the fast subset of the fault campaign
# (tests/faults.rs: fuzzed hook inputs, kill -9 trials, concurrent sessions,
# the corruption matrix, the secrets corpus); `scripts/faults.sh` runs it in full.
cargo test --workspace --lib --bins --tests "$@"
