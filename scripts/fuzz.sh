#!/usr/bin/env bash
# Fuzzes resim with cargo-fuzz/libFuzzer: the scenario loader (and the engine
# behind it), or `resim import` (trace and settings files).
#
#   scripts/fuzz.sh [SECONDS]           the scenario target, default 600 (10 minutes)
#   scripts/fuzz.sh TARGET [SECONDS]    TARGET: scenario or import
#
# Needs the nightly toolchain (rustup toolchain install nightly) and cargo-fuzz
# (cargo install cargo-fuzz). The corpus lives in fuzz/corpus/scenario and is kept in
# git: each run starts from what earlier runs found, seeded with the bundled
# scenarios and the bad-input battery. The import target's corpus is
# fuzz/corpus/import, seeded with tests/fixtures/traces and tests/fixtures/configs
# (each file after one byte choosing how it is read: see
# fuzz/fuzz_targets/import.rs). Crashes land in fuzz/artifacts/TARGET/
# (ignored by git); reproduce one with
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...
# At the end the corpus is minimised (cargo fuzz cmin) so it stays small.
set -euo pipefail
cd "$(dirname "$0")/.."
target=scenario
case "${1:-}" in
scenario | import)
    target="$1"
    shift
    ;;
'' | *[!0-9]*)
    if [ -n "${1:-}" ]; then
        echo "usage: scripts/fuzz.sh [scenario|import] [SECONDS]" >&2
        exit 2
    fi
    ;;
esac
seconds="${1:-600}"
corpus=fuzz/corpus/$target
mkdir -p "$corpus"
dict=()
if [ "$target" = scenario ]; then
    dict=(-dict=fuzz/scenario.dict)
    for f in scenarios/*.toml tests/bad/*.toml; do
        [ -e "$f" ] || continue
        cp -n "$f" "$corpus/seed-$(basename "$f")"
    done
else
    # the first byte: bit 3 reads the file as .yaml, else .json
    for f in tests/fixtures/traces/*.json tests/fixtures/configs/*; do
        [ -e "$f" ] || continue
        seed="$corpus/seed-$(basename "$f")"
        [ -e "$seed" ] && continue
        case "$f" in
        *.yaml | *.yml | *.properties) printf '\x08' >"$seed" ;;
        *) printf '\x00' >"$seed" ;;
        esac
        cat "$f" >>"$seed"
    done
fi
before=$(ls "$corpus" | wc -l)
log=$(mktemp)
set +e +o pipefail
cargo +nightly fuzz run "$target" "$corpus" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    "${dict[@]}" -print_final_stats=1 2>&1 | tee "$log" |
    grep --line-buffered -E 'pulse|INITED|DONE|^Done|ERROR|panicked|SUMMARY'
status=${PIPESTATUS[0]}
set -e -o pipefail
cargo +nightly fuzz cmin "$target" "$corpus" >/dev/null 2>&1 || true
after=$(ls "$corpus" | wc -l)
crashes=$(ls "fuzz/artifacts/$target" 2>/dev/null | wc -l)
runs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)
echo "fuzz: ${runs:-no summary}; corpus ${before} -> ${after} files (after cmin); artifacts: ${crashes}"
rm -f "$log"
exit "$status"
