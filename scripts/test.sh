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
# Benches are measured by `cargo bench` / `rollgraph bench`, not run as tests.
cargo test --workspace --lib --bins --tests "$@"
