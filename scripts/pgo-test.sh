#!/usr/bin/env bash
# The profile-guided binary (scripts/build-pgo.sh) must write exactly what the
# release binary writes: every bundled scenario, the benchmark models and a short
# sweep of each Monte-Carlo file (scripts/same-bytes.sh), compared byte for byte.
# Run by .ci/run; about 6 minutes from a clean clone on 2 cores, nearly all of it
# the two builds of build-pgo.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q
scripts/build-pgo.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the release build draws every stream where it is used, the PGO build ahead on
# helper threads: equal bytes check the build and `--draw-ahead` at once
RUN_ARGS="--draw-ahead off" scripts/same-bytes.sh target/release/resim "$tmp/release" > /dev/null
RUN_ARGS="--draw-ahead on" scripts/same-bytes.sh target/pgo/resim "$tmp/pgo" > /dev/null
# same-bytes.sh writes each printed report with its folder replaced by OUT
if ! diff -r "$tmp/release" "$tmp/pgo" > "$tmp/diff.txt"; then
  echo "pgo-test: the profile-guided binary wrote different bytes:" >&2
  head -40 "$tmp/diff.txt" >&2
  exit 1
fi
echo "pgo-test: target/pgo/resim wrote the same $(find "$tmp/pgo" -type f | wc -l) files as target/release/resim"
