#!/usr/bin/env bash
# Opens the report.html of every bundled scenario (and of the Monte-Carlo sweeps,
# a short sweep of goodput-collapse for the time series, sweeps over numeric axes,
# two boundaries and a tuning) in headless Chromium, as a reader would, and checks for each page:
#   - no console message (the page has no script: any message is an error),
#   - a screenshot that is not blank (at least MIN_PIXELS distinct pixel values),
#   - as many <svg> charts in the DOM as the page's CSV files call for.
# Installs Debian's `chromium` package when it is missing (needs root and apt).
# Screenshots stay in $SHOTS (default out/browser-test) to be looked at.
set -euo pipefail
cd "$(dirname "$0")/.."

MIN_PIXELS=${MIN_PIXELS:-100}
SHOTS=${SHOTS:-out/browser-test}

if ! command -v chromium >/dev/null 2>&1; then
  echo "browser-test: installing chromium (apt-get)" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

cargo build --locked
bin=target/debug/resim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

"$bin" run --quiet --out "$work/run" scenarios
"$bin" run --quiet --out "$work/examples" scenarios/examples
for mc in scenarios/*-montecarlo.toml; do
  "$bin" sweep --quiet -n 20 --out "$work/sweep/$(basename "$mc" .toml)" "$mc"
done
# a sweep's time series (per-window means, fault windows shaded), kept short
"$bin" sweep --quiet -n 5 --set workload.duration_ms=30000 \
  --out "$work/sweep/goodput-collapse" scenarios/goodput-collapse.toml
# sweeps over numbers: a line chart per metric against one numeric axis, heatmaps
# over two (one per value of the other axes)
"$bin" sweep --quiet -n 2 --set workload.duration_ms=20000 \
  --set 'compare.variant=["baseline", "codel"]' \
  --set 'compare."faults.0.for_ms"=[250, 1000, 4000]' \
  --set 'montecarlo={ report = ["recovery.stuck", "outcomes.answered_pct"] }' \
  --out "$work/sweep/retry-storm-lines" scenarios/retry-storm.toml
"$bin" sweep --quiet -n 2 --set workload.duration_ms=20000 \
  --set 'compare.variant=["baseline", "codel"]' \
  --set 'compare."faults.0.for_ms"=[250, 1000, 4000]' --vary 'faults.0.value=[1.5, 2, 3]' \
  --set 'montecarlo={ report = ["recovery.stuck", "outcomes.answered_pct"] }' \
  --out "$work/sweep/retry-storm-heatmaps" scenarios/retry-storm.toml
# boundaries: along one key, and traced over a second
"$bin" boundary --quiet scenarios/metastable-band.toml --set workload.duration_ms=60000 \
  --axis workload.rate_rps=10..40 --metric recovery.stuck --target 0.5 -n 4 --tolerance 5% \
  --out "$work/boundary/one-axis"
"$bin" boundary --quiet scenarios/metastable-band.toml --set workload.duration_ms=60000 \
  --axis workload.rate_rps=5..60 --axis 'services.api.handler.slots=[1, 2, 3]' \
  --metric recovery.stuck --target 0.5 -n 3 --tolerance 10% --once \
  --out "$work/boundary/curve"
# a tuning: the Pareto chart, one per key, the runs per round
"$bin" tune --quiet scenarios/examples/tune-deadline-retries.toml \
  --vary policies.retry.timeout_ms=10..500 --vary policies.retry.retry.max_attempts=1..10 \
  --maximize outcomes.answered_pct --constraint "calls.amplification <= 1.22" \
  --budget 400 --out "$work/tune"

chrome() {
  chromium --headless --no-sandbox --disable-gpu --window-size=1280,2000 \
    --enable-logging=stderr --v=0 \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$(mktemp -d -p "$work")" "$@"
}

# The charts a folder's report must hold, from the CSV files in it.
expected_charts() {
  python3 - "$1" <<'PY'
import csv, os, sys, tomllib
d = sys.argv[1]
has = lambda f: os.path.exists(os.path.join(d, f))
n = 0
if has("summary.csv"):
    with open(os.path.join(d, "manifest.toml"), "rb") as f:
        m = tomllib.load(f)
    def means(table):
        # metric -> the means of its lines that are not empty
        out = {}
        with open(os.path.join(d, table)) as f:
            for r in csv.DictReader(f):
                out.setdefault(r["metric"], [])
                if r["mean"] != "":
                    out[r["metric"]].append(float(r["mean"]))
        return out
    summary_means = means("summary.csv")
    # charted: `[montecarlo] report`, else the headline (a way of failing only
    # when some row has it), else the first six metrics
    failures = ("dropped", "timed_out", "shed", "rejected", "errors", "refused", "not_found")
    headline = [x for x in m.get("headline", []) if x in summary_means
                and (x.rsplit(".", 1)[-1] not in failures or any(summary_means[x]))]
    charted = m["report"] or headline or m["metrics"][:6]
    # a chart per charted metric with at least one mean, in each table
    for table in ("summary.csv", "paired.csv"):
        t = means(table)
        n += sum(1 for x in charted if t.get(x))
    # the time series: one chart per compare row with window means (in
    # summary.csv with `[montecarlo] windows = true`, else per replication)
    import re
    lines = ("answered", "attempts", "timed_out", "failed", "shed", "rejected", "width_ms")
    window = re.compile(r"timeseries\.window_start_ms_[0-9.]+\.(all\.)?([a-z_]+)$")
    with open(os.path.join(d, "replications.csv")) as f:
        r = csv.DictReader(f)
        axes = r.fieldnames[: r.fieldnames.index("replication")]
        cols = [c for c in r.fieldnames if (w := window.match(c)) and w.group(2) in lines]
        rows = {tuple(row[a] for a in axes) for row in r if any(row[c] != "" for c in cols)}
        n += len(rows)
    # charts against numeric axes (every value a number, at least 3 of them)
    with open(os.path.join(d, "summary.csv")) as f:
        r = csv.DictReader(f)
        axes = r.fieldnames[: r.fieldnames.index("metric")]
        rows = list(r)
    def numeric(a):
        vals = set()
        for row in rows:
            try:
                vals.add(float(row[a]))
            except ValueError:
                return False
        return len(vals) >= 3
    num_axes = [a for a in axes if numeric(a)]
    for x in charted:
        mrows = [row for row in rows if row["metric"] == x and row["mean"] != ""]
        if not mrows or not num_axes:
            continue
        if len(num_axes) == 1:
            n += 1
        else:
            others = [a for a in axes if a not in num_axes[-2:]]
            n += min(len({tuple(row[a] for a in others) for row in mrows}), 12)
elif has("crossing.csv"):
    # a recovery metric's search runs again at twice the run's length: its rows
    # have run_length 2 (the column is there only then)
    first = lambda row: row.get("run_length", "1") == "1"
    with open(os.path.join(d, "crossing.csv")) as f:
        r = csv.DictReader(f)
        grid = r.fieldnames[0] != "metric"
        rows = list(r)
        searches = sum(map(first, rows))
        twice = len(rows) - searches
    if not grid:
        # the points, and those near the boundary when they are 3 or more, not
        # all; and the points of the search at twice the run's length
        c = rows[0]
        with open(os.path.join(d, "boundary.csv")) as f:
            r = csv.DictReader(f)
            axis = r.fieldnames[1]
            values = [float(row[axis]) for row in r if row["estimate"] != "" and first(row)]
        n += 1 + (twice > 0)
        if c["bracket_low"] != "":
            a, b = float(c["bracket_low"]), float(c["bracket_high"])
            near = [v for v in values if a - 2 * (b - a) <= v <= b + 2 * (b - a)]
            n += 3 <= len(near) < len(values)
    else:
        with open(os.path.join(d, "boundary.csv")) as f:
            r = csv.DictReader(f)
            axis = r.fieldnames[2]
            values = {row[axis] for row in r if first(row)}
        # the curve, the heatmap of the points (up to 40 values), one per search
        n += 1 + (len(values) <= 40) + searches
elif has("tune.csv"):
    # the runs per round; the objective against the most binding constraint
    # (when a constraint was named); the objective against each numeric key
    n += 1
    with open(os.path.join(d, "pareto.csv")) as f:
        r = csv.DictReader(f)
        keys = r.fieldnames[1 : r.fieldnames.index("objective")]
        rows = list(r)
    n += any(row["constraint"] != "" for row in rows)
    def number(v):
        try:
            float(v)
            return True
        except ValueError:
            return False
    n += sum(1 for k in keys if all(number(row[k]) for row in rows))
else:
    n += 2 * has("ladder.csv") + has("latency_cdf.csv") + has("outcomes.csv")
    # the failed requests on their own scale: when some row failed a request
    if has("outcomes.csv"):
        kinds = ("dropped", "timed_out", "shed", "rejected", "errors", "refused", "not_found")
        with open(os.path.join(d, "outcomes.csv")) as f:
            n += any(r.get(k) not in (None, "") and float(r[k]) > 0
                     for r in csv.DictReader(f) for k in kinds)
    # the tail chart: when the times from the 90th percentile on (below 100, where
    # a row answered) spread by more than 5 % (a tail rises, or rows differ)
    if has("latency_cdf.csv"):
        with open(os.path.join(d, "latency_cdf.csv")) as f:
            tail = [float(r["latency_ms"]) for r in csv.DictReader(f)
                    if r["latency_ms"] != "" and 90 <= float(r["percentile"]) < 100]
        n += bool(tail) and max(tail) > min(tail) * 1.05
    n += has("limiters.csv") + has("members.csv")
    # time series, servers and dependencies, call sites, replicas: one chart per compare
    # row; limiter windows and concurrency limits: one per (compare row,
    # limiter, and replica for a limiter kept per replica); a replicated
    # server's replicas: one per (compare row, server). The axis columns
    # come before window_start_ms.
    for table, key in (("timeseries.csv", ()), ("timeseries_limiters.csv", ("limiter",)),
                       ("timeseries_services.csv", ()), ("timeseries_calls.csv", ()),
                       ("timeseries_concurrency.csv", ("limiter", "replica")),
                       ("timeseries_replicas.csv", ()),
                       ("timeseries_services_replicas.csv", ("service",))):
        if has(table):
            with open(os.path.join(d, table)) as f:
                r = csv.reader(f)
                head = next(r)
                axes = head.index("window_start_ms")
                cols = list(range(axes)) + [head.index(k) for k in key if k in head]
                n += len({tuple(row[c] for c in cols) for row in r})
print(n)
PY
}

failed=0
pages=0
for page in $(find "$work" -name report.html | sort); do
  dir=$(dirname "$page")
  name=${dir#"$work"/}
  name=${name//\//_}
  pages=$((pages + 1))
  chrome --dump-dom "file://$page" >"$work/dom.html" 2>"$work/dom.err" || true
  chrome --screenshot="$SHOTS/$name.png" "file://$page" >/dev/null 2>"$work/shot.err" || true
  problems=()
  if grep -h ':CONSOLE' "$work/dom.err" "$work/shot.err" >"$work/console.txt"; then
    problems+=("console: $(head -c 300 "$work/console.txt")")
  fi
  svgs=$(grep -o '<svg' "$work/dom.html" | wc -l)
  want=$(expected_charts "$dir")
  if [ "$svgs" -ne "$want" ] || [ "$want" -eq 0 ]; then
    problems+=("$svgs <svg> charts in the DOM, expected $want")
  fi
  if [ ! -s "$SHOTS/$name.png" ]; then
    problems+=("no screenshot")
  else
    pixels=$(python3 scripts/png_pixels.py "$SHOTS/$name.png" "$MIN_PIXELS")
    if [ "$pixels" -lt "$MIN_PIXELS" ]; then
      problems+=("blank screenshot: $pixels distinct pixel values")
    fi
  fi
  if [ ${#problems[@]} -eq 0 ]; then
    echo "ok   $name: $svgs charts, >= $pixels pixel values"
  else
    failed=$((failed + 1))
    for p in "${problems[@]}"; do echo "FAIL $name: $p"; done
  fi
done
echo "browser-test: $pages pages, $failed failed; screenshots in $SHOTS"
[ "$pages" -gt 0 ] && [ "$failed" -eq 0 ]
