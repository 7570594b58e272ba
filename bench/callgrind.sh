#!/usr/bin/env bash
# Instruction counts (valgrind callgrind) of resim and the hand-written Rust loop
# on M1 and M2: the measure BENCHMARKS.md uses for each optimisation, because it
# does not depend on how busy this shared machine is.
#
#   bench/callgrind.sh              # M1 at N = 1e6 and the four M2 rows at N = 2e5
#   N1=200000 N2=50000 bench/callgrind.sh
#   ROWS="m1 m2-slow-false" bench/callgrind.sh
#
# resim is built with line tables (target/prof) so that
# `callgrind_annotate bench/results/callgrind/<row>.resim.out` names source lines.
# Prints one line per row: instructions of resim, of the baseline, and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
N1=${N1:-1000000}
N2=${N2:-200000}
ROWS=${ROWS:-m1 m2-normal-false m2-normal-true m2-slow-false m2-slow-true}
PEERS=${PEERS:-/tmp/peers}
RB=$PEERS/rust-baseline/target/release/rust-baseline
OUT=bench/results/callgrind
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
[ -x "$RB" ] || { echo "build the peers first (bench/compare.sh or $PEERS/setup.sh)" >&2; exit 2; }
CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release --locked -q --target-dir target/prof
RESIM=target/prof/release/resim

# instructions NAME CMD...: runs CMD under callgrind, prints the instruction count.
instructions() {
  local name=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" "$@" 2>&1 >/dev/null |
    awk '/Collected :/ { print $NF }'
}

for row in $ROWS; do
  case $row in
    m1)
      r=$(instructions "$row.resim" $RESIM run scenarios/bench/m1-ladder-server.toml --set "workload.requests=$N1" --out "$OUT/$row.d")
      b=$(instructions "$row.baseline" "$RB" m1 --n "$N1" --lam 0.09 --seed 1) ;;
    m2-*)
      IFS=- read -r _ variant cancel <<< "$row"
      label=$variant; [ "$variant" = normal ] && label=baseline
      r=$(instructions "$row.resim" $RESIM run scenarios/bench/m2-budget-chain.toml --set "workload.requests=$N2" \
        --set "compare.variant=[\"$label\"]" --set "compare.\"services.tracking.handler.cancellation\"=[$cancel]" --out "$OUT/$row.d")
      b=$(instructions "$row.baseline" "$RB" m2 --n "$N2" --lam 0.4167 --variant "$variant" --cancel "$cancel" --seed 1) ;;
    *) echo "unknown row $row" >&2; exit 2 ;;
  esac
  awk -v row="$row" -v r="$r" -v b="$b" 'BEGIN { printf "%-16s resim %13d  baseline %13d  resim/baseline %.2f\n", row, r, b, r / b }'
done
