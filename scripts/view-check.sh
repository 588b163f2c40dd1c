#!/usr/bin/env bash
# The real-browser check of `rollgraph view`.
#
# Replays examples/session.jsonl into a temporary ROLLGRAPH_HOME with the
# clock pinned, writes the view, renders it in headless Chromium and asserts
# on the DOM *after the page's scripts ran* (chromium --dump-dom):
#   - the page is ready and, with every cluster expanded, draws exactly as
#     many nodes as `rollgraph show --json` holds;
#   - a supersedes edge is drawn;
#   - moving the turn slider (driven through the page's #frame= link, which
#     sets the slider and fires its input event) moves the focus;
#   - the injection panel at the last position is `rollgraph render`'s text;
#   - a hostile session (labels with </script>, <img onerror>, quotes, RTL)
#     runs no injected script and shows the labels as text.
# Then it measures a 5,000-node and a 20,000-node warm graph (page size, time
# until the page is interactive, export times) and saves screenshots.
#
# Installs Chromium from the Debian packages when it is missing (apt-get
# update once, then apt-get install -y chromium). Environment:
#   ROLLGRAPH_BIN   the binary to test (default: $CARGO_TARGET_DIR/release/rollgraph if
#                   newer than the page, else the debug one, built when missing)
#   VIEW_CHECK_OUT  where pages, screenshots and numbers go (default target/view-check)
#   CHROMIUM        the browser binary (default: found on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${VIEW_CHECK_OUT:-target/view-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

find_browser() {
  for b in "${CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
    [ -n "$b" ] && command -v "$b" >/dev/null 2>&1 && { command -v "$b"; return 0; }
  done
  return 1
}
BROWSER=$(find_browser || true)
if [ -z "$BROWSER" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "view-check: installing Chromium from the Debian packages" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
    BROWSER=$(find_browser || true)
  fi
fi
if [ -z "$BROWSER" ]; then
  echo "view-check: no Chromium and no apt-get to install it; set CHROMIUM=/path/to/chromium" >&2
  exit 1
fi

if [ -n "${ROLLGRAPH_BIN:-}" ]; then
  BIN=$ROLLGRAPH_BIN
else
  # Honour CARGO_TARGET_DIR (a shared target directory, a clean clone's CI).
  TARGET=${CARGO_TARGET_DIR:-target}
  if [ -x "$TARGET/release/rollgraph" ] && [ "$TARGET/release/rollgraph" -nt hook/view/page.js ]; then
    BIN=$TARGET/release/rollgraph
  else
    cargo build --quiet --bin rollgraph
    BIN=$TARGET/debug/rollgraph
  fi
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

# Scratch space beside the results (not /tmp, which other jobs may sweep).
TMP=$(mktemp -d "$OUT/run.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# Keep the provisioned embedding model (if any) while HOME moves.
export ROLLGRAPH_CACHE=${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}
export HOME=$TMP/home ROLLGRAPH_HOME=$TMP/state ROLLGRAPH_NOW=2026-11-02T12:30:00Z ROLLGRAPH_SEED=7
mkdir -p "$HOME"

chrome() {
  # Headless, no GPU, a fixed window; virtual time lets the page's scripts finish.
  "$BROWSER" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --no-default-browser-check --user-data-dir="$TMP/profile" \
    --hide-scrollbars --window-size=1600,1000 --virtual-time-budget=10000 "$@" 2>/dev/null
}
dump() { chrome --dump-dom "file://$1#$2" > "$3"; }
shot() { chrome --screenshot="$OUT/$3.png" "file://$1#$2" >/dev/null; }

# --- the example session ------------------------------------------------
"$BIN" replay examples/session.jsonl --json > "$TMP/replay.json"
"$BIN" show --json > "$TMP/show.json"
"$BIN" render --json > "$TMP/render.json"
"$BIN" view --out "$OUT/example.html" > "$TMP/view.txt"
cat "$TMP/view.txt"

dump "$OUT/example.html" "frame=now&expand=all" "$TMP/now-all.html"
dump "$OUT/example.html" "frame=now" "$TMP/now.html"
dump "$OUT/example.html" "frame=turn:12" "$TMP/t12.html"
dump "$OUT/example.html" "frame=turn:40" "$TMP/t40.html"
shot "$OUT/example.html" "frame=now" example-now
shot "$OUT/example.html" "frame=now&expand=all&select=decision-use-bento-instead-of-resend" example-expanded-selected
shot "$OUT/example.html" "frame=turn:12" example-turn-12
shot "$OUT/example.html" "frame=now&q=dana" example-search

# --- a hostile session ----------------------------------------------------
mkdir -p "$ROLLGRAPH_HOME/sessions/hostile"
python3 - "$ROLLGRAPH_HOME/sessions/hostile" <<'PY'
import json, sys, os
d = sys.argv[1]
labels = {
  "script": "</script><script>document.title='PWNED'</script>",
  "img": "<img src=x onerror=\"document.title='PWNED'\">",
  "quotes": "\"quoted\" & 'single'",
  "rtl": "\u202egnp.exe \u05e9\u05dc\u05d5\u05dd \u0627\u0644\u0633\u0644\u0627\u0645",
}
now = "2026-11-02T12:00:00Z"
nodes = {k: {"id": k, "label": v, "domain": "technical", "weight": 0.9, "last_activated": now, "detail": "detail: " + v} for k, v in labels.items()}
edges = {"script|supersedes|img": {"source": "script", "target": "img", "kind": "supersedes", "weight": 0.9}}
json.dump({"seq": 0, "doc": {"version": 1, "nodes": nodes, "edges": edges}, "applied": []}, open(os.path.join(d, "snapshot.json"), "w"))
json.dump({"session": "hostile", "turn": 2, "last_focus": ["script", "rtl"]}, open(os.path.join(d, "state.json"), "w"))
PY
"$BIN" view --session hostile --out "$OUT/hostile.html" >/dev/null
dump "$OUT/hostile.html" "frame=now&expand=all" "$TMP/hostile.html"
shot "$OUT/hostile.html" "frame=now&expand=all&select=script" hostile

# --- big warm graphs: size, time to interactive, export time -----------------
gen() { # gen N DIR: a synthetic warm graph (four domains, hubs, supersedes, anchors)
  python3 - "$1" "$2" <<'PY'
import json, sys, os
n, d = int(sys.argv[1]), sys.argv[2]
os.makedirs(d, exist_ok=True)
doms = ["relationship", "project", "technical", "personal"]
kinds = ["entity", "person", "project", "file", "identifier", "decision", "fact"]
words = ["invoice", "billing", "dunning", "retry", "webhook", "email", "template", "migration", "schema", "queue", "worker", "report", "ledger", "refund"]
nodes, edges = {}, {}
def nid(i): return "%s-%s-%d" % (words[i % len(words)], words[(i * 7) % len(words)], i)
for i in range(n):
    label = "%s %s %d" % (words[i % len(words)].title(), words[(i * 7) % len(words)], i)
    node = {"id": nid(i), "label": label, "domain": doms[i % 4], "weight": round(0.05 + (i % 19) * 0.05, 3),
            "last_activated": "2026-11-0%dT12:00:00Z" % (1 + i % 2), "kind": kinds[i % len(kinds)],
            "detail": "Why %s matters for the %s run, noted in session %d." % (label, words[(i * 3) % len(words)], i % 9)}
    if i % 97 == 0: node["anchor"] = True
    nodes[nid(i)] = node
    if i > 0:
        j = (i * 7) % i
        edges["%s|relates_to|%s" % (nid(i), nid(j))] = {"source": nid(i), "target": nid(j), "kind": "relates_to", "weight": 0.5}
    if i >= 4 and i % 40 == 0:
        edges["%s|supersedes|%s" % (nid(i), nid(i - 4))] = {"source": nid(i), "target": nid(i - 4), "kind": "supersedes", "weight": 0.9}
json.dump({"seq": 0, "doc": {"version": 1, "nodes": nodes, "edges": edges}, "meta": {}}, open(os.path.join(d, "snapshot.json"), "w"))
PY
}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for n in 5000 20000; do
  H=$TMP/big-$n
  gen "$n" "$H/warm/global"
  ROLLGRAPH_HOME=$H "$BIN" view --global --out "$OUT/warm-$n.html" >/dev/null
  for fmt in dot json graphml; do
    t=$(date +%s%N); ROLLGRAPH_HOME=$H "$BIN" export --global --format "$fmt" > "$TMP/big.$fmt"; echo "export_${fmt}_${n}_ms=$(ms "$t")" >> "$TMP/numbers"
  done
  t=$(date +%s%N); dump "$OUT/warm-$n.html" "" "$TMP/warm-$n.dom"; echo "chromium_dump_${n}_ms=$(ms "$t")" >> "$TMP/numbers"
  dump "$OUT/warm-$n.html" "expand=all" "$TMP/warm-$n-all.dom"
  shot "$OUT/warm-$n.html" "" "warm-$n"
  echo "page_bytes_${n}=$(wc -c < "$OUT/warm-$n.html")" >> "$TMP/numbers"
done
shot "$OUT/warm-20000.html" "select=refund-migration-13" warm-20000-selected
# Open-to-painted, measured from outside: a screenshot of the page (load,
# scripts, layout, paint) minus one of a blank page (the browser's start).
echo '<!doctype html><title>blank</title>' > "$TMP/blank.html"
shot_ms() { local t; t=$(date +%s%N); chrome --screenshot="$TMP/t.png" "file://$1#$2" >/dev/null; ms "$t"; }
blank=$(shot_ms "$TMP/blank.html" "")
echo "painted_5000_ms=$(( $(shot_ms "$OUT/warm-5000.html" "") - blank ))" >> "$TMP/numbers"
echo "painted_5000_expanded_ms=$(( $(shot_ms "$OUT/warm-5000.html" "expand=all") - blank ))" >> "$TMP/numbers"

# --- assertions on the DOM after the scripts ran ------------------------------
python3 - "$TMP" "$OUT" <<'PY'
import json, re, sys, html as H
from html.parser import HTMLParser
tmp, out = sys.argv[1], sys.argv[2]
fails = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond: fails.append(what)

class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body, self.svg, self.nodes, self.sup, self.lines = {}, {}, [], 0, []
        self.cur_line, self.depth, self.title, self.in_title, self.scripts = None, 0, "", False, 0
        self.note, self.in_note = "", False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs); cls = (a.get("class") or "").split()
        if tag == "body": self.body = a
        if tag == "svg" and a.get("id") == "graph": self.svg = a
        if tag == "circle" and "node" in cls: self.nodes.append(a)
        if tag == "line" and "supersedes" in cls: self.sup += 1
        if tag == "title": self.in_title = True
        if a.get("id") == "timeline-note": self.in_note = True
        if tag == "script": self.scripts += 1
        if tag == "img": fails.append("an <img> element exists in the DOM")
        if tag == "div" and "line" in cls and self.cur_line is None:
            self.cur_line = []; self.depth = 0
        elif tag == "div" and self.cur_line is not None: self.depth += 1
    def handle_endtag(self, tag):
        if tag == "title": self.in_title = False
        if tag == "div" and self.cur_line is not None:
            if self.depth == 0: self.lines.append("".join(self.cur_line)); self.cur_line = None
            else: self.depth -= 1
    def handle_data(self, d):
        if self.cur_line is not None: self.cur_line.append(d)
        if self.in_title and not self.title: self.title = d
        if self.in_note: self.note += d; self.in_note = False
def dom(name):
    p = Dom(); p.feed(open(f"{tmp}/{name}", encoding="utf-8").read()); return p

show = json.load(open(f"{tmp}/show.json"))
render = json.load(open(f"{tmp}/render.json"))
n_nodes = len(show["nodes"])
sup_edges = sum(1 for e in show["edges"].values() if e["kind"] == "supersedes")

d = dom("now-all.html")
check(d.body.get("data-ready") == "1", "the example page ran its scripts (data-ready)")
check(int(d.body.get("data-nodes-total", -1)) == n_nodes, f"page node total {d.body.get('data-nodes-total')} == show --json {n_nodes}")
check(int(d.svg.get("data-nodes", -1)) == n_nodes and len(d.nodes) == n_nodes, f"expanded, {len(d.nodes)} node circles drawn == {n_nodes}")
check(sup_edges > 0 and d.sup >= 1 and int(d.svg.get("data-supersedes", 0)) == sup_edges, f"supersedes edges drawn: {d.sup} of {sup_edges}")
check(len([n for n in d.nodes if "superseded" in n.get("class", "")]) >= 1, "the old side of a supersedes edge is faded")
check(d.lines and "\n".join(d.lines) == render["text"].rstrip("\n"), "the injection panel at the last position is `rollgraph render`'s text")
check("ends at exactly the stored graph" in d.note, "the timeline re-derived from the transcript ends at the stored graph: " + d.note[:160])
now = dom("now.html")
check(int(now.svg.get("data-bubbles", 0)) > 0 and int(now.svg.get("data-nodes", 0)) < n_nodes, f"far clusters collapsed by default ({now.svg.get('data-nodes')} drawn, {now.svg.get('data-bubbles')} bubbles)")
t12, t40 = dom("t12.html"), dom("t40.html")
focus = [x.svg.get("data-focus", "") for x in (t12, t40, now)]
check(all(focus) and len(set(focus)) == 3, "the slider moves the focus: " + " | ".join(f[:60] for f in focus))
check(t12.svg.get("data-frame") != now.svg.get("data-frame"), "the slider moved (frame %s vs %s)" % (t12.svg.get("data-frame"), now.svg.get("data-frame")))
check(t12.lines != now.lines, "the injection panel follows the slider")
h = dom("hostile.html")
check(h.body.get("data-ready") == "1", "the hostile page ran its scripts")
check("PWNED" not in h.title and h.scripts == 2, f"no injected script ran (title {h.title!r}, {h.scripts} script elements)")
check(len(h.nodes) == 4, "the hostile labels are four nodes")
raw = open(f"{tmp}/hostile.html", encoding="utf-8").read()
check("&lt;/script&gt;&lt;script&gt;" in raw, "a </script> label is shown as text")
check("\u202e" not in raw and "\u27eaU+202E\u27eb" in raw, "a bidi override in a label is shown as a visible mark, never applied")

nums = dict(l.strip().split("=", 1) for l in open(f"{tmp}/numbers"))
for n in ("5000", "20000"):
    w = dom(f"warm-{n}.dom")
    check(w.body.get("data-ready") == "1" and int(w.body.get("data-nodes-total", 0)) == int(n), f"the {n}-node page is ready with {n} nodes")
    nums[f"interactive_{n}_ms"] = w.body.get("data-ready-ms")
    nums[f"drawn_{n}"] = w.svg.get("data-nodes"); nums[f"bubbles_{n}"] = w.svg.get("data-bubbles")
    wa = dom(f"warm-{n}-all.dom")
    check(wa.body.get("data-ready") == "1" and int(wa.svg.get("data-nodes", 0)) == int(n) and len(wa.nodes) == int(n), f"the {n}-node page expanded draws all {n} nodes")
    nums[f"interactive_{n}_expanded_ms"] = wa.body.get("data-ready-ms")
w20 = dom("warm-20000.dom")
check(int(w20.svg.get("data-nodes", 0)) < 2000 and int(w20.svg.get("data-bubbles", 0)) >= 4, f"20,000 nodes open collapsed ({w20.svg.get('data-nodes')} drawn, {w20.svg.get('data-bubbles')} bubbles)")
json.dump(nums, open(f"{out}/numbers.json", "w"), indent=1)
print("numbers:", json.dumps(nums))
if fails:
    print(f"view-check: {len(fails)} failed", file=sys.stderr); sys.exit(1)
print("view-check: all passed; screenshots in", out)
PY
