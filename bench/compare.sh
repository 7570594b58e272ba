#!/usr/bin/env bash
# resim side by side with its peers (SimPy, Ciw, nexosim, a hand-written Rust loop)
# on the peer models M1 (ladder server, N = 1,000,000), M2 (budget chain,
# N = 200,000) and M3 (retry chain: N = 1,000,000 first tries against the loop,
# 100,000 against SimPy, as the peers run it). See BENCHMARKS.md for the results
# and shared/peers/README.md for the peers.
#
#   bench/compare.sh                 # every comparison
#   bench/compare.sh baseline        # only comparisons whose name contains 'baseline'
#   PAIRS=15 PY_PAIRS=3 bench/compare.sh
#
# Each comparison runs resim and one peer alternately, A B B A A B ..., PAIRS times
# (default 11) so both see the same machine load; the Python peers (8-50 s a run)
# use PY_PAIRS pairs instead (default 5; the table says how many pairs each row
# had). Before each pair the script waits (at most QUIET_MAX_S, default 60 s) until
# the machine was at most QUIET_PCT percent busy (default 55: others use at most
# one of two cores) over half a second, and records what it saw. Every run is timed under /usr/bin/time -v
# (peak RSS) with the wall time taken from bash's $EPOCHREALTIME around it
# (microseconds; /usr/bin/time itself rounds to 10 ms). resim runs exactly one model
# row per run (the compare grid pinned with --set) and does everything a user run
# does: parse, validate, simulate, analyse, print the report, write the CSV files.
#
# Printed: per row the median wall time, model events per second (the peers'
# common definition: M1 arrivals + service completions; M2 arrivals + call outcomes
# + completions of abandoned work; resim's own count adds the gateway hop of M2,
# one event per request, which the peers add arithmetically, so it is subtracted;
# M3: resim has no such column, so the peers' formula is applied to its counters:
# client attempts + client timeouts + frontend and backend completions + backend
# timeouts),
# median peak RSS, and the median over pairs of (peer wall / resim wall).
# Then the statistics each engine printed in its first run, and the memory check
# (M1 at N = 1e7 under 64 MiB). Raw outputs: bench/results/raw/.
#
# Environment: PEERS_SRC (the peers' folder, default ../shared/peers), PEERS (a
# writable copy, default /tmp/peers), M2_ROWS (default "normal:false normal:true
# slow:false slow:true"), MEMORY=0 skips the 1e7 run, RESIM_BUILD=release times
# the plain `cargo build --release` binary instead of the profile-guided one
# (scripts/build-pgo.sh, trained on the bundled scenarios, not on these models),
# RESIM_ARGS (word-split) is added to every resim run: RESIM_ARGS="--draw-ahead
# off" times resim on one core (by default a single-row run draws its random
# streams ahead on the second core; the CPU column shows what that costs).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PAIRS=${PAIRS:-11}
PY_PAIRS=${PY_PAIRS:-5}
QUIET_PCT=${QUIET_PCT:-55}
QUIET_MAX_S=${QUIET_MAX_S:-60}
PEERS_SRC=${PEERS_SRC:-$ROOT/../shared/peers}
PEERS=${PEERS:-/tmp/peers}
M2_ROWS=${M2_ROWS:-normal:false normal:true slow:false slow:true}
MEMORY=${MEMORY:-1}
RESIM_ARGS=${RESIM_ARGS:-}
RESIM_BUILD=${RESIM_BUILD:-pgo}
case $RESIM_BUILD in
  pgo | release) ;;
  *) echo "RESIM_BUILD must be pgo or release, not '$RESIM_BUILD'" >&2; exit 2 ;;
esac
FILTER=${1:-}
RESULTS=$ROOT/bench/results
RAW=$RESULTS/raw

# --- tools -------------------------------------------------------------------
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
apt_install() {
  echo "installing $* (apt-get)" >&2
  $SUDO apt-get install -y -q "$@" >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q "$@" >&2; }
}
[ -x /usr/bin/time ] || apt_install time
command -v python3 >/dev/null || apt_install python3 python3-venv
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv

# --- builds ------------------------------------------------------------------
if [ ! -d "$PEERS" ]; then
  [ -d "$PEERS_SRC" ] || { echo "no peers folder at $PEERS_SRC (set PEERS_SRC)" >&2; exit 2; }
  cp -r "$PEERS_SRC" "$PEERS"
fi
echo "== building the peers ($PEERS/setup.sh)" >&2
(cd "$PEERS" && ./setup.sh >&2)
case $RESIM_BUILD in
  pgo)
    echo "== building resim (profile-guided: scripts/build-pgo.sh)" >&2
    scripts/build-pgo.sh
    RESIM=$ROOT/target/pgo/resim ;;
  release)
    echo "== building resim (release)" >&2
    cargo build --release --locked -q
    RESIM=$ROOT/target/release/resim ;;
esac
PY=$PEERS/.venv/bin/python
RB=$PEERS/rust-baseline/target/release/rust-baseline
NX=$PEERS/nexosim-m1/target/release/nexosim-m1

rm -rf "$RAW"; mkdir -p "$RAW"
RUNS=$RESULTS/runs.tsv
printf 'comparison\tengine\tpair\twall_s\trss_kib\tmodel_events\tcpu_s\n' > "$RUNS"

# --- one timed run -----------------------------------------------------------
# run_timed NAME CMD...: runs CMD with stdout to $RAW/NAME.out; sets WALL, RSS and
# CPU (user + system seconds, every thread; /usr/bin/time's 10 ms steps).
run_timed() {
  local name=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -v -o "$RAW/$name.time" "$@" > "$RAW/$name.out" 2> "$RAW/$name.err"
  local t1=$EPOCHREALTIME
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  RSS=$(awk -F': ' '/Maximum resident/ { print $2 }' "$RAW/$name.time")
  CPU=$(awk -F': ' '/User time|System time/ { t += $2 } END { printf "%.2f", t }' "$RAW/$name.time")
}

# Percent of all CPUs busy over half a second, from /proc/stat.
busy_pct() {
  local a b c d e f g h t1 i1 t2 i2
  read -r _ a b c d e f g h _ < /proc/stat; t1=$((a+b+c+d+e+f+g+h)); i1=$((d+e))
  sleep 0.5
  read -r _ a b c d e f g h _ < /proc/stat; t2=$((a+b+c+d+e+f+g+h)); i2=$((d+e))
  echo $(( 100 * ( (t2-t1) - (i2-i1) ) / (t2-t1 > 0 ? t2-t1 : 1) ))
}

# Waits until the machine is quiet enough (or QUIET_MAX_S passed); sets BUSY.
wait_quiet() {
  local start=$SECONDS
  while :; do
    BUSY=$(busy_pct)
    if (( BUSY <= QUIET_PCT )) || (( SECONDS - start >= QUIET_MAX_S )); then
      return
    fi
  done
}

# A value from a peer's key=value output.
peer_value() { tr ' ' '\n' < "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# A column of the single data row of a CSV file.
csv_value() {
  awk -F, -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i } NR == 2 { print $c }' "$1"
}

# A column of the row of a CSV file whose first column is KEY (services.csv,
# server_work.csv), or whose first two are KEY (calls.csv: "caller,target").
csv_row_value() {
  awk -F, -v key="$2" -v k="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i; next }
    $1 == key || $1 "," $2 == key { print $c }' "$1"
}

# M3's model events as the peers count them, from resim's counters: first tries +
# retries (= client attempts) + client timers that fired + frontend and backend
# service completions + backend timers that fired.
m3_model_events() {
  local d=$1
  echo $(( $(csv_row_value "$d/calls.csv" main,frontend attempts) \
    + $(csv_row_value "$d/calls.csv" main,frontend timeout) \
    + $(csv_row_value "$d/services.csv" frontend processed) \
    + $(csv_row_value "$d/services.csv" backend processed) \
    + $(csv_row_value "$d/calls.csv" frontend,backend timeout) ))
}

# compare NAME PAIRS MODEL RESIM_ARGS PEER_ENGINE PEER_CMD
# RESIM_ARGS is one string (word-split); M2 rows subtract the gateway hop.
# Which engine runs first alternates from pair to pair: the second run of a pair
# was measured a few per cent slower than the first (the first one's output
# still being written back, the caches it left), whichever engine it was.
compare() {
  local name=$1 pairs=$2 model=$3 resim_args=$4 peer=$5 peer_cmd=$6
  [[ -n "$FILTER" && "$name" != *"$FILTER"* ]] && return 0
  echo "== $name: $pairs pairs (resim, $peer alternately; each goes first in every other pair)" >&2
  local i r_wall p_wall first
  run_resim() {
    local out=$RAW/$name.resim.$i.d events
    # shellcheck disable=SC2086
    run_timed "$name.resim.$i" "$RESIM" run $resim_args $RESIM_ARGS --out "$out"
    events=$(csv_value "$out/run.csv" events)
    if [ "$model" = M2 ]; then
      events=$((events - $(csv_value "$out/run.csv" requests)))
    elif [ "$model" = M3 ]; then
      events=$(m3_model_events "$out")
    fi
    printf '%s\tresim\t%s\t%s\t%s\t%s\t%s\n' "$name" "$i" "$WALL" "$RSS" "$events" "$CPU" >> "$RUNS"
    r_wall=$WALL
  }
  run_peer() {
    local events
    # shellcheck disable=SC2086
    run_timed "$name.$peer.$i" $peer_cmd
    events=$(peer_value "$RAW/$name.$peer.$i.out" model_events)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$peer" "$i" "$WALL" "$RSS" "$events" "$CPU" >> "$RUNS"
    p_wall=$WALL
  }
  for i in $(seq 1 "$pairs"); do
    wait_quiet
    first=resim
    ((i % 2)) || first=$peer
    echo "busy_before_pct=$BUSY loadavg=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,) first=$first" > "$RAW/$name.$i.env"
    if [[ $first == resim ]]; then
      run_resim
      run_peer
    else
      run_peer
      run_resim
    fi
    printf '   pair %s: resim %.3f s, %s %.3f s (machine %s%% busy before)\n' "$i" "$r_wall" "$peer" "$p_wall" "$BUSY" >&2
  done
}

M1_FILE=scenarios/bench/m1-ladder-server.toml
M2_FILE=scenarios/bench/m2-budget-chain.toml
M3_FILE=scenarios/bench/m3-retry-chain.toml
M1_RESIM="$M1_FILE"
M1_ARGS="--n 1000000 --lam 0.09 --seed 1"

compare m1-baseline "$PAIRS" M1 "$M1_RESIM" rust-baseline "$RB m1 $M1_ARGS"
compare m1-nexosim "$PAIRS" M1 "$M1_RESIM" nexosim "$NX $M1_ARGS --threads 1"
compare m1-simpy "$PY_PAIRS" M1 "$M1_RESIM" simpy "$PY $PEERS/py/simpy_m1_ladder.py $M1_ARGS"
compare m1-ciw "$PY_PAIRS" M1 "$M1_RESIM" ciw "$PY $PEERS/py/ciw_m1_ladder.py $M1_ARGS"
for row in $M2_ROWS; do
  variant=${row%:*}; cancel=${row#*:}
  label=$variant; [ "$variant" = normal ] && label=baseline   # the scenario's name for it
  # --set values are TOML; the quotes inside are for TOML, not for the shell
  m2_resim="$M2_FILE --set compare.variant=[\"$label\"] --set compare.\"services.tracking.handler.cancellation\"=[$cancel]"
  m2_args="--n 200000 --lam 0.4167 --variant $variant --cancel $cancel --seed 1"
  compare "m2-$variant-cancel_$cancel-baseline" "$PAIRS" M2 "$m2_resim" rust-baseline "$RB m2 $m2_args"
  compare "m2-$variant-cancel_$cancel-simpy" "$PY_PAIRS" M2 "$m2_resim" simpy "$PY $PEERS/py/simpy_m2_budget.py $m2_args"
done

# M3: the loop at the file's N (1,000,000 first tries); SimPy at 100,000 (as the
# peers run it; about 20 s a run), resim at the same N for the pair
compare m3-baseline "$PAIRS" M3 "$M3_FILE" rust-baseline "$RB m3 --n 1000000 --lam 0.5 --seed 1"
compare m3-simpy "$PY_PAIRS" M3 "$M3_FILE --set workload.requests=100000" simpy \
  "$PY $PEERS/py/simpy_m3_retry.py --n 100000 --lam 0.5 --seed 1"

# --- summary -----------------------------------------------------------------
TABLE=$RESULTS/table.md
awk -F'\t' -v pairs_note="PAIRS=$PAIRS PY_PAIRS=$PY_PAIRS RESIM_BUILD=$RESIM_BUILD RESIM_ARGS=$RESIM_ARGS" '
function median(list,   n, a, i, j, t) {
  n = split(list, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function rate(x) { return x >= 1e6 ? sprintf("%.2f M", x / 1e6) : sprintf("%.1f k", x / 1e3) }
NR == 1 { next }
{
  key = $1 SUBSEP $2
  if (!(key in wall)) { order[++n] = key; comp[key] = $1; eng[key] = $2 }
  wall[key] = wall[key] " " $4; rss[key] = rss[key] " " $5; ev[key] = $6; cpu[key] = cpu[key] " " $7; cnt[key]++
  if ($2 == "resim") rw[$1 SUBSEP $3] = $4; else pw[$1 SUBSEP $3] = $4
}
END {
  for (k in pw) { split(k, p, SUBSEP); ratios[p[1]] = ratios[p[1]] " " pw[k] / rw[k] }
  print "| comparison | engine | pairs | median wall s | median CPU s | model events | model events/s (wall) | peak RSS MiB | peer wall / resim wall (median of pairs) |"
  print "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  for (i = 1; i <= n; i++) {
    k = order[i]; w = median(wall[k])
    r = eng[k] == "resim" ? "" : sprintf("%.2fx", median(ratios[comp[k]]))
    printf "| %s | %s | %d | %.3f | %.2f | %d | %s | %.1f | %s |\n", comp[k], eng[k], cnt[k], w, median(cpu[k]), ev[k], rate(ev[k] / w), median(rss[k]) / 1024, r
  }
  print ""
  print "(" pairs_note "; ratio > 1: resim is faster; CPU: user + system time of every thread)"
  # M3 per first try: SimPy runs 100,000 first tries, the loop row 1,000,000
  a = "m3-simpy" SUBSEP "simpy"; b = "m3-baseline" SUBSEP "resim"; c = "m3-simpy" SUBSEP "resim"
  if ((a in wall) && (b in wall)) {
    ps = median(wall[a]) / 1e5; rb = median(wall[b]) / 1e6
    msg = sprintf("M3 per first try: SimPy %.2f us (N = 1e5), resim %.3f us (N = 1e6): SimPy / resim = %.1fx", ps * 1e6, rb * 1e6, ps / rb)
    if (c in wall) msg = msg sprintf("; resim at N = 1e5 %.3f us", median(wall[c]) / 1e5 * 1e6)
    print ""
    print msg
  }
}' "$RUNS" > "$TABLE"
echo
cat "$TABLE"

# --- statistics of the first pair ----------------------------------------------
# resim's CSV columns printed as the peers' keys, so the lines can be compared.
resim_stats() {
  local dir=$1 c k
  if [ -f "$dir/calls.csv" ]; then
    # M3 (scenarios/bench/m3-retry-chain.toml explains the mapping)
    local o=$dir/outcomes.csv cl=$dir/calls.csv sv=$dir/services.csv sw=$dir/server_work.csv
    local n answered
    n=$(csv_value "$o" requests); answered=$(csv_value "$o" answered)
    echo "first_tries=$n answered=$answered failed=$((n - answered))" \
      "attempts_client=$(csv_row_value "$cl" main,frontend attempts)" \
      "attempts_backend=$(csv_row_value "$cl" frontend,backend attempts)" \
      "p50_e2e_ms=$(csv_value "$o" p50_ms) p99_e2e_ms=$(csv_value "$o" p99_ms) mean_e2e_ms=$(csv_value "$o" answered_mean_ms)" \
      "backend_wasted_ms=$(csv_row_value "$sw" backend late_work_ms) frontend_wasted_ms=$(csv_row_value "$sw" frontend late_work_ms)" \
      "client_timeouts=$(csv_row_value "$cl" main,frontend timeout) client_shed=$(csv_row_value "$cl" main,frontend shed) client_errors=$(csv_row_value "$cl" main,frontend error)" \
      "frontend_cancelled=$(csv_row_value "$sv" frontend abandoned)" \
      "backend_timeouts=$(csv_row_value "$cl" frontend,backend timeout) backend_shed=$(csv_row_value "$sv" backend shed) backend_cancelled=$(csv_row_value "$sv" backend abandoned)" \
      "model_events=$(m3_model_events "$dir")"
  elif [ -f "$dir/services.csv" ]; then
    local arrived shed
    arrived=$(csv_value "$dir/services.csv" arrived); shed=$(csv_value "$dir/services.csv" shed)
    echo "admitted=$((arrived - shed)) rejected=$shed mean_wait_ms=$(csv_value "$dir/services.csv" mean_wait_ms) p95_wait_ms=$(csv_value "$dir/services.csv" p95_wait_ms) sim_end_ms=$(csv_value "$dir/run.csv" sim_time_ms)"
  else
    for c in answered:answered dropped:dropped median_ms:median_e2e_ms worst_ms:worst_e2e_ms mean_ms:mean_e2e_ms wasted_ms:wasted_ms; do
      k=${c#*:}; printf '%s=%s ' "$k" "$(csv_value "$dir/outcomes.csv" "${c%:*}")"
    done
    echo
  fi
}
echo
echo "Statistics (first run of each comparison; seed 1, both RNG families: compare within the"
echo "peers' 30-seed bands, as tests/it/peers.rs does):"
for f in "$RAW"/*.1.out; do
  name=$(basename "$f" .1.out)
  case "$name" in
    *.resim) echo "  $name: $(resim_stats "${f%.out}.d")" ;;
    *m3-*) echo "  $name: $(sed -n '2,$p' "$f" | grep -v -e '^engine_events=' -e '^sim_loop_s=' | tr '\n' ' ')" ;;
    *) echo "  $name: $(sed -n 2p "$f")" ;;
  esac
done

# --- memory: M1 at 1e7 -------------------------------------------------------
if [ "$MEMORY" = 1 ] && [[ -z "$FILTER" || "memory" == *"$FILTER"* ]]; then
  echo
  echo "== memory: M1 at N = 10,000,000" >&2
  run_timed memory-m1-1e7 "$RESIM" run "$M1_FILE" --set workload.requests=10000000 --out "$RAW/memory-m1-1e7.d"
  mib=$(awk -v k="$RSS" 'BEGIN { printf "%.1f", k / 1024 }')
  verdict=$(awk -v k="$RSS" 'BEGIN { print (k < 64 * 1024 ? "under" : "OVER") }')
  echo "resim M1 N=1e7: wall $(printf %.2f "$WALL") s, peak RSS $mib MiB ($verdict the 64 MiB target)"
  echo "  services.csv: $(sed -n 2p "$RAW/memory-m1-1e7.d/services.csv")"
fi
