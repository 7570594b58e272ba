#!/usr/bin/env bash
# Time and peak memory of `resim import` on a million spans (BENCHMARKS.md,
# "Trace import"). The spans are a run of the round-trip system
# (tests/fixtures/traces/roundtrip.toml) written with --spans: about 8 spans a
# request, so 126,000 requests (420 s at 300 requests a second) give a million.
#
#   bench/import.sh                  # release build, ~1e6 spans, OTLP JSON
#   SECONDS_OF_TRAFFIC=42 bench/import.sh   # a tenth of it
#
# Prints the file's size and spans, then /usr/bin/time -v's wall-clock time and
# maximum resident set size of the import.
set -euo pipefail
cd "$(dirname "$0")/.."
S=${SECONDS_OF_TRAFFIC:-420}
WORK=${WORK:-/tmp/resim-import-bench}
mkdir -p "$WORK"
command -v /usr/bin/time >/dev/null || { echo "/usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }
cargo build --release --locked -q
RESIM=target/release/resim
$RESIM run -q --no-report --out "$WORK/run" --spans "$WORK/spans.json" \
  --set "workload.duration_ms=$((S * 1000))" tests/fixtures/traces/roundtrip.toml
echo "spans file: $(stat -c %s "$WORK/spans.json") bytes"
/usr/bin/time -v $RESIM import "$WORK/spans.json" --out "$WORK/imported.toml" --force 2>&1 |
  grep -E '^read |spans:|Elapsed \(wall clock\)|Maximum resident set size'
