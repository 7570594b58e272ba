#!/usr/bin/env bash
# Runs every bundled scenario (and a short sweep of each Monte-Carlo file) with a
# given resim binary into a folder, so that two builds can be compared byte for
# byte: the check behind a refactoring that must change nothing.
#
#   scripts/same-bytes.sh BINARY OUTDIR
#   diff -r OUT_BEFORE OUT_AFTER && echo same bytes
#
# RUN_ARGS (word-split) is added to every `run`, e.g. RUN_ARGS="--draw-ahead on".
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1 out=$2
rm -rf "$out"; mkdir -p "$out"
for f in scenarios/*.toml scenarios/examples/*.toml scenarios/bench/*.toml; do
  stem=$(basename "$f" .toml)
  # shellcheck disable=SC2086
  "$bin" run "$f" ${RUN_ARGS:-} --out "$out/run/$stem" > "$out/run-$stem.txt"
done
for f in scenarios/*montecarlo*.toml; do
  stem=$(basename "$f" .toml)
  "$bin" sweep "$f" -n 20 --quiet --out "$out/sweep/$stem" > "$out/sweep-$stem.txt"
  rm -f "$out/sweep/$stem/manifest.toml"   # records the binary's path and options
done
# the printed reports name the output folder: make them comparable
sed -i "s|$out|OUT|g" "$out"/*.txt
echo "wrote $(find "$out" -type f | wc -l) files under $out"
