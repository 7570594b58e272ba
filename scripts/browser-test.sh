#!/usr/bin/env bash
# Opens the report.html of every bundled scenario (and of the Monte-Carlo sweeps,
# and a short sweep of goodput-collapse for the time series) in headless Chromium, as a reader would, and checks for each page:
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
    charted = m["report"] or m["metrics"][:6]
    for table in ("summary.csv", "paired.csv"):
        with open(os.path.join(d, table)) as f:
            metrics = {r["metric"] for r in csv.DictReader(f)}
        n += sum(1 for x in charted if x in metrics)
    # the time series: one chart per compare row with window means
    import re
    lines = ("answered", "attempts", "timed_out", "failed", "shed", "rejected", "width_ms")
    window = re.compile(r"timeseries\.window_start_ms_[0-9.]+\.(all\.)?([a-z_]+)$")
    with open(os.path.join(d, "summary.csv")) as f:
        r = csv.DictReader(f)
        axes = r.fieldnames[: r.fieldnames.index("metric")]
        rows = set()
        for row in r:
            m = window.match(row["metric"])
            if m and m.group(2) in lines and row["mean"] != "":
                rows.add(tuple(row[a] for a in axes))
        n += len(rows)
else:
    n += 2 * has("ladder.csv") + has("latency_cdf.csv") + has("outcomes.csv")
    n += has("limiters.csv") + has("members.csv")
    # time series, servers and dependencies, call sites: one chart per compare
    # row; limiter windows: one per (compare row, limiter). The axis columns
    # come before window_start_ms.
    for table, key in (("timeseries.csv", ()), ("timeseries_limiters.csv", ("limiter",)),
                       ("timeseries_services.csv", ()), ("timeseries_calls.csv", ())):
        if has(table):
            with open(os.path.join(d, table)) as f:
                r = csv.reader(f)
                head = next(r)
                axes = head.index("window_start_ms")
                cols = list(range(axes)) + [head.index(k) for k in key]
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
