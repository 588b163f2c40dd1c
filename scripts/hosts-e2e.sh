#!/usr/bin/env bash
# Runs the real Codex CLI and Gemini CLI, offline, against a scripted local
# model server (scripts/hosts-e2e-server.py), with rollgraph installed the way
# a user installs it (`rollgraph install codex|gemini` into a scratch HOME),
# and checks what reaches the model:
#
#   - the hooks fire (SessionStart, the prompt hook, Stop/AfterAgent,
#     SessionEnd: seen in rollgraph's state and log);
#   - a new session in the same project gets the memory block in its first
#     model request (Codex: a developer message; Gemini: <hook_context>);
#   - the model's call of the MCP tool `memory_query` reaches `rollgraph mcp`
#     and its answer comes back in the next request;
#   - Gemini's prompt hook does not feed our own block back as the user's words;
#   - `rollgraph reconcile --transcript` reads the transcript each client wrote.
#
# Opt-in, never run by scripts/test.sh: it downloads the clients from npm
# (pinned: CODEX_VERSION, GEMINI_VERSION; "latest" to try newer ones) into
# $ROLLGRAPH_E2E_DIR (default: a folder in the system temp directory, outside
# the repository). Without node, npm or python3 it says so and exits 0.
# Exit status: 0 when every check passed (or the run was skipped), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

CODEX_VERSION=${CODEX_VERSION:-0.169.0}
GEMINI_VERSION=${GEMINI_VERSION:-0.61.0}
E2E=${ROLLGRAPH_E2E_DIR:-${TMPDIR:-/tmp}/rollgraph-hosts-e2e}

skip() {
  echo "hosts-e2e: SKIPPED: $*" >&2
  exit 0
}
for tool in node npm python3; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (the clients come from npm; the model server is Python)"
done

# ---------------------------------------------------------------- setup

mkdir -p "$E2E/npm"
NPM_BIN="$E2E/npm/node_modules/.bin"
have_version() { # bin expected
  [ -x "$NPM_BIN/$1" ] && "$NPM_BIN/$1" --version 2>/dev/null | grep -q -- "$2"
}
if { [ "$CODEX_VERSION" = latest ] || ! have_version codex "$CODEX_VERSION"; } \
  || { [ "$GEMINI_VERSION" = latest ] || ! have_version gemini "$GEMINI_VERSION"; }; then
  echo "hosts-e2e: installing @openai/codex@$CODEX_VERSION and @google/gemini-cli@$GEMINI_VERSION into $E2E/npm" >&2
  if ! npm install --no-audit --no-fund --prefix "$E2E/npm" \
    "@openai/codex@$CODEX_VERSION" "@google/gemini-cli@$GEMINI_VERSION" >"$E2E/npm-install.log" 2>&1; then
    tail -5 "$E2E/npm-install.log" >&2
    skip "npm could not install the clients (no registry access?); see $E2E/npm-install.log"
  fi
fi
CODEX="$NPM_BIN/codex"
GEMINI="$NPM_BIN/gemini"

if [ -n "${ROLLGRAPH_BIN:-}" ]; then
  BIN_DIR=$(cd "$(dirname "$ROLLGRAPH_BIN")" && pwd)
else
  echo "hosts-e2e: building rollgraph" >&2
  cargo build --quiet --bins || exit 1
  BIN_DIR="$REPO/${CARGO_TARGET_DIR:-target}/debug"
  case "${CARGO_TARGET_DIR:-}" in /*) BIN_DIR="$CARGO_TARGET_DIR/debug" ;; esac
fi
RG="$BIN_DIR/rollgraph"
[ -x "$RG" ] && [ -x "$BIN_DIR/rollgraph-hook" ] || { echo "hosts-e2e: no rollgraph and rollgraph-hook in $BIN_DIR" >&2; exit 1; }

RUN="$E2E/run-$(date +%Y%m%dT%H%M%S)"
mkdir -p "$RUN"
RESULTS="$RUN/results.txt"
: >"$RESULTS"
echo "hosts-e2e: codex $("$CODEX" --version 2>/dev/null), gemini $("$GEMINI" --version 2>/dev/null), rollgraph $RG; files in $RUN" >&2

check() { # host name status detail
  printf '%-7s %-4s %-58s %s\n' "$1" "$3" "$2" "$4" | tee -a "$RESULTS"
}

SERVER_PIDS=()
cleanup() {
  for p in "${SERVER_PIDS[@]}"; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT

start_server() { # dir -> sets PORT
  rm -f "$1/port"
  python3 "$REPO/scripts/hosts-e2e-server.py" "$1/requests.jsonl" "$1/port" 2>"$1/server.err" &
  SERVER_PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$1/port" ] && break; sleep 0.1; done
  PORT=$(cat "$1/port" 2>/dev/null)
  [ -n "$PORT" ] || { echo "hosts-e2e: the model server did not start: $(cat "$1/server.err")" >&2; exit 1; }
}

# Waits until the daemon has processed every spooled job.
drain() { # state
  for _ in $(seq 1 300); do
    python3 - "$1" <<'EOF' && return 0
import os, sys
spool = os.path.join(sys.argv[1], "spool")
for name in os.listdir(spool) if os.path.isdir(spool) else []:
    if not name.endswith(".jsonl"):
        continue
    size = os.path.getsize(os.path.join(spool, name))
    try:
        off = int(open(os.path.join(spool, name[:-6] + ".off")).read().strip() or 0)
    except OSError:
        off = 0
    if size and off < size:
        sys.exit(1)
EOF
    sleep 0.1
  done
  return 1
}

# Python checks over the state directory and the server's request log; each
# prints "PASS detail" or "FAIL detail".
py() { python3 - "$@"; }

session_checks() { # host state session
  py "$2" "$3" <<'EOF'
import json, os, sys
state, sid = sys.argv[1], sys.argv[2]
log = open(os.path.join(state, "rollgraph.log")).read() if os.path.exists(os.path.join(state, "rollgraph.log")) else ""
st = {}
try:
    st = json.load(open(os.path.join(state, "sessions", sid, "state.json")))
except OSError:
    pass
def out(ok, name, detail):
    print(("PASS" if ok else "FAIL") + "\t" + name + "\t" + detail)
out(f"session {sid} started" in log, "SessionStart hook -> daemon start job", "log: 'session … started'")
out(st.get("turn", 0) >= 1, "prompt hook -> a turn in the session", f"state.turn={st.get('turn')}")
out(bool(st.get("last_reply")), "Stop/AfterAgent hook -> the reply reached the session", f"last_reply={st.get('last_reply')!r}")
out(f"reconciled session {sid} (session_end)" in log, "SessionEnd hook -> reconciled into the warm graph", "log: 'reconciled … (session_end)'")
errors = [l for l in log.splitlines() if " hook[" in l]
out(not errors, "no hook errors in rollgraph.log", "; ".join(errors)[:300])
EOF
}

report() { # host
  while IFS=$'\t' read -r status name detail; do
    [ -n "$status" ] && check "$1" "$name" "$status" "$detail"
  done
}

PROMPT1="Let's go with Postwick for transactional email in the invoicing work. Dana Whitlock owns the billing service."
PROMPT2="Actually, switch from Postwick to Mailbarn for transactional email; the retry schedule lives in src/billing/retry.rs."
PROMPT3="Which email provider did we pick? CALL_MEMORY_QUERY email provider"

# ---------------------------------------------------------------- Codex

codex_run() {
  local D="$RUN/codex"
  mkdir -p "$D/home/.codex" "$D/project" "$D/state"
  start_server "$D"
  cat >"$D/home/.codex/config.toml" <<EOF
model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
EOF
  (
    export HOME="$D/home" ROLLGRAPH_HOME="$D/state" FAKE_API_KEY=offline ROLLGRAPH_DAEMON_IDLE_SECS=10
    unset CODEX_HOME XDG_DATA_HOME
    cd "$D/project" || exit 1
    "$RG" install codex >"$D/install.out" 2>&1 || { echo "FAIL	rollgraph install codex	$(cat "$D/install.out")"; exit 0; }
    echo "PASS	rollgraph install codex	hooks.json + [mcp_servers.rollgraph]"
    # Hooks the user has not trusted in /hooks do not run; exec can skip that review.
    local X=("$CODEX" exec --skip-git-repo-check --dangerously-bypass-hook-trust)
    timeout 180 "${X[@]}" "$PROMPT1" >"$D/a1.out" 2>"$D/a1.err"
    timeout 180 "${X[@]}" resume --last "$PROMPT2" >"$D/a2.out" 2>"$D/a2.err"
    local A
    A=$(sed -n 's/^session id: //p' "$D/a1.err" | head -1)
    if [ -z "$A" ]; then
      echo "FAIL	codex exec ran	$(tail -3 "$D/a1.err" | tr '\n' ' ')"
      exit 0
    fi
    echo "PASS	codex exec ran (session A, two turns)	session $A"
    drain "$D/state" || echo "FAIL	the daemon drained the spool	timed out"
    session_checks codex "$D/state" "$A"
    cp "$D/requests.jsonl" "$D/requests-a.jsonl"
    py "$D/requests-a.jsonl" <<'EOF'
import json, sys
posts = [json.loads(l)["body"] for l in open(sys.argv[1]) if '"/v1/responses"' in l]
last = posts[-1] if posts else {}
blocks = [b.get("text", "") for i in last.get("input", []) if i.get("role") == "developer"
          for b in i.get("content", []) if isinstance(b, dict) and b.get("text", "").startswith("<rolling-memory")]
print(("PASS" if len(blocks) == 1 else "FAIL") + "\tresume: SessionStart + prompt hook put one block in the turn, not two\t"
      + f"{len(blocks)} block(s) in the resumed turn's request")
EOF
    : >"$D/requests.jsonl"
    timeout 180 "${X[@]}" "$PROMPT3" >"$D/b.out" 2>"$D/b.err"
    drain "$D/state"
    py "$D/requests.jsonl" "$D/b.out" <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
posts = [r["body"] for r in reqs if r.get("method") == "POST" and r["path"].endswith("/responses")]
def out(ok, name, detail):
    print(("PASS" if ok else "FAIL") + "\t" + name + "\t" + detail)
first = posts[0] if posts else {}
dev = [b.get("text", "") for i in first.get("input", []) if i.get("role") == "developer"
       for b in i.get("content", []) if isinstance(b, dict)]
block = next((t for t in dev if t.startswith("<rolling-memory")), "")
out(bool(block), "new session: the block is in the first model request",
    f"developer message, {len(block)} chars")
out("Mailbarn" in block and "Postwick" in block, "… with session A's changed decision",
    block[block.find("## Decisions"):][:160].replace("\n", " | "))
out(0 < len(block) <= 6000, "… under Codex's cap (6,000 characters)", f"{len(block)} chars")
out("memory_expand" in block, "… names memory_expand (the MCP server is configured)", "")
tools = [t for t in first.get("tools", []) if t.get("name") == "mcp__rollgraph"]
names = [s.get("name") for t in tools for s in t.get("tools", [])]
out({"memory_query", "memory_expand"} <= set(names), "MCP: rollgraph's tools are offered to the model", str(names))
outputs = [i for b in posts for i in b.get("input", []) if i.get("type") == "function_call_output"]
text = json.dumps(outputs)
out("results for" in text and "Mailbarn" in text, "MCP: memory_query round trip (call -> rollgraph mcp -> answer in the next request)",
    text[:200])
reply = open(sys.argv[2]).read().strip()
out(reply.startswith("TOOL RESULT:") and "results for" in reply, "codex printed the model's answer built on the tool result", reply[:120])
EOF
    # The rollout Codex wrote, read back by crash recovery.
    local R
    R=$(ls "$D"/home/.codex/sessions/*/*/*/rollout-*"$A".jsonl 2>/dev/null | head -1)
    ROLLGRAPH_HOME="$D/recovered" "$RG" reconcile --transcript "$R" --project "$D/project" --json >"$D/reconcile.json" 2>"$D/reconcile.err"
    py "$D/reconcile.json" <<'EOF'
import json, sys
try:
    v = json.load(open(sys.argv[1]))[0]
except Exception as e:
    v = {"error": str(e)}
ok = v.get("transcript_format") == "codex" and v.get("replayed_turns") == 2
print(("PASS" if ok else "FAIL") + "\treconcile --transcript <the rollout codex wrote>\t" + json.dumps({k: v.get(k) for k in ("transcript_format", "replayed_turns", "added", "error")}))
EOF
  ) | report codex
}

# ---------------------------------------------------------------- Gemini

gemini_run() {
  local D="$RUN/gemini"
  mkdir -p "$D/home/.gemini" "$D/project" "$D/state"
  start_server "$D"
  echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}}' >"$D/home/.gemini/settings.json"
  (
    export HOME="$D/home" ROLLGRAPH_HOME="$D/state" GEMINI_API_KEY=offline \
      GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_CLI_TRUST_WORKSPACE=true \
      ROLLGRAPH_DAEMON_IDLE_SECS=10
    unset XDG_DATA_HOME
    cd "$D/project" || exit 1
    "$RG" install gemini >"$D/install.out" 2>&1 || { echo "FAIL	rollgraph install gemini	$(cat "$D/install.out")"; exit 0; }
    echo "PASS	rollgraph install gemini	hooks + mcpServers in settings.json"
    timeout 180 "$GEMINI" -p "$PROMPT1" >"$D/a1.out" 2>"$D/a1.err"
    timeout 180 "$GEMINI" --resume latest -p "$PROMPT2" >"$D/a2.out" 2>"$D/a2.err"
    local F A
    F=$(ls -t "$D"/home/.gemini/tmp/*/chats/session-*.json* 2>/dev/null | tail -1)
    A=$(head -1 "$F" 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.read()).get("sessionId",""))' 2>/dev/null)
    if [ -z "$A" ]; then
      echo "FAIL	gemini -p ran	$(grep -v '^\s' "$D/a1.err" | tail -3 | tr '\n' ' ')"
      exit 0
    fi
    echo "PASS	gemini -p ran (session A, two turns, --resume)	session $A"
    drain "$D/state" || echo "FAIL	the daemon drained the spool	timed out"
    session_checks gemini "$D/state" "$A"
    cp "$D/requests.jsonl" "$D/requests-a.jsonl"
    py "$D/requests-a.jsonl" <<'EOF'
import json, sys
posts = [json.loads(l)["body"] for l in open(sys.argv[1]) if "streamGenerateContent" in l]
last = posts[-1] if posts else {}
n = sum(p.get("text", "").count("Rolling memory (") for c in last.get("contents", []) for p in c.get("parts", [])
        if isinstance(p, dict))
print(("PASS" if n == 1 else "FAIL") + "\tresume: SessionStart + BeforeAgent put one block in the turn, not two\t"
      + f"{n} block(s) in the resumed turn's request")
EOF
    : >"$D/requests.jsonl"
    # Headless Gemini offers MCP tools only when allowed (or --approval-mode yolo).
    timeout 180 "$GEMINI" --allowed-tools mcp_rollgraph_memory_query -p "$PROMPT3" >"$D/b.out" 2>"$D/b.err"
    drain "$D/state"
    local B
    B=$(ls -t "$D"/home/.gemini/tmp/*/chats/session-*.json* | head -1 | xargs head -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.read()).get("sessionId",""))')
    "$RG" show --session "$B" --json >"$D/b-graph.json" 2>/dev/null
    py "$D/requests.jsonl" "$D/b.out" "$D/b-graph.json" <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
main = [r["body"] for r in reqs if "streamGenerateContent" in r.get("path", "")]
def out(ok, name, detail):
    print(("PASS" if ok else "FAIL") + "\t" + name + "\t" + detail)
def texts(body):
    return [p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []) if isinstance(p, dict)]
first = texts(main[0]) if main else []
ctx = next((t for t in first if "<hook_context>" in t), "")
block = ctx[ctx.find("<hook_context>") + 14: ctx.find("</hook_context>")]
out(block.startswith("Rolling memory ("), "new session: the block is in the first model request",
    f"<hook_context>, {len(block)} chars")
out("Mailbarn" in block and "Postwick" in block, "… with session A's changed decision",
    block[block.find("## Decisions"):][:160].replace("\n", " | "))
out("<rolling-memory" not in block and "</rolling-memory" not in block, "… plain text, no angle-bracket wrapper", "")
tools = [d.get("name") for t in (main[0].get("tools", []) if main else []) for d in t.get("functionDeclarations", [])]
out("mcp_rollgraph_memory_query" in tools, "MCP: memory_query is offered to the model", str([t for t in tools if "rollgraph" in t]))
responses = [p["functionResponse"] for b in main for c in b.get("contents", []) for p in c.get("parts", [])
             if isinstance(p, dict) and "functionResponse" in p]
text = json.dumps(responses)
out("results for" in text and "Mailbarn" in text, "MCP: memory_query round trip (call -> rollgraph mcp -> answer in the next request)", text[:200])
reply = open(sys.argv[2]).read().strip()
out(reply.startswith("TOOL RESULT:"), "gemini printed the model's answer built on the tool result", reply[:120])
try:
    g = json.load(open(sys.argv[3]))
except Exception:
    g = {}
nodes = g.get("nodes", [])
nodes = nodes.values() if isinstance(nodes, dict) else nodes
labels = [n.get("label", "") for n in nodes]
own = [l for l in labels if "memory_expand" in l or "Rolling memory" in l or l == "relates_to"]
out(bool(labels) and not own, "the prompt hook did not read our own block back as the user's words",
    f"{len(labels)} nodes; from the block: {own}")
EOF
    ROLLGRAPH_HOME="$D/recovered" "$RG" reconcile --transcript "$F" --project "$D/project" --json >"$D/reconcile.json" 2>"$D/reconcile.err"
    py "$D/reconcile.json" <<'EOF'
import json, sys
try:
    v = json.load(open(sys.argv[1]))[0]
except Exception as e:
    v = {"error": str(e)}
ok = v.get("transcript_format") == "gemini" and v.get("replayed_turns") == 2
print(("PASS" if ok else "FAIL") + "\treconcile --transcript <the session file gemini wrote>\t" + json.dumps({k: v.get(k) for k in ("transcript_format", "replayed_turns", "added", "error")}))
EOF
  ) | report gemini
}

codex_run
gemini_run

echo
PASSED=$(grep -c ' PASS ' "$RESULTS")
FAILED=$(grep -c ' FAIL ' "$RESULTS")
echo "hosts-e2e: $PASSED passed, $FAILED failed (codex $CODEX_VERSION, gemini $GEMINI_VERSION); details in $RUN"
[ "$FAILED" -eq 0 ]
