#!/usr/bin/env bash
# Fuzzes the scenario loader (and the engine behind it) with cargo-fuzz/libFuzzer.
#
#   scripts/fuzz.sh [SECONDS]      default 600 (10 minutes)
#
# Needs the nightly toolchain (rustup toolchain install nightly) and cargo-fuzz
# (cargo install cargo-fuzz). The corpus lives in fuzz/corpus/scenario and is kept in
# git: each run starts from what earlier runs found, seeded with the bundled
# scenarios and the bad-input battery. Crashes land in fuzz/artifacts/scenario/
# (ignored by git); reproduce one with
#   cargo +nightly fuzz run scenario fuzz/artifacts/scenario/crash-...
# At the end the corpus is minimised (cargo fuzz cmin) so it stays small.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
corpus=fuzz/corpus/scenario
mkdir -p "$corpus"
for f in scenarios/*.toml tests/bad/*.toml; do
    [ -e "$f" ] || continue
    cp -n "$f" "$corpus/seed-$(basename "$f")"
done
before=$(ls "$corpus" | wc -l)
log=$(mktemp)
set +e +o pipefail
cargo +nightly fuzz run scenario "$corpus" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict=fuzz/scenario.dict -print_final_stats=1 2>&1 | tee "$log" |
    grep --line-buffered -E 'pulse|INITED|DONE|^Done|ERROR|panicked|SUMMARY'
status=${PIPESTATUS[0]}
set -e -o pipefail
cargo +nightly fuzz cmin scenario "$corpus" >/dev/null 2>&1 || true
after=$(ls "$corpus" | wc -l)
crashes=$(ls fuzz/artifacts/scenario 2>/dev/null | wc -l)
runs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)
echo "fuzz: ${runs:-no summary}; corpus ${before} -> ${after} files (after cmin); artifacts: ${crashes}"
rm -f "$log"
exit "$status"
