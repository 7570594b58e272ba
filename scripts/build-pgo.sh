#!/usr/bin/env bash
# Builds resim with profile-guided optimisation (PGO): the fastest binary this
# source makes, for long runs and sweeps. Same results as `cargo build --release`,
# byte for byte; only the speed differs (BENCHMARKS.md, "The builds").
#
#   scripts/build-pgo.sh            # -> target/pgo/resim
#   target/pgo/resim run scenarios/retry-storm.toml
#
# Steps (about 5 minutes on 2 cores):
#   1. an instrumented release build (target/pgo/gen), which counts how often
#      each branch and call runs;
#   2. a training run: the bundled scenarios (scenarios/ and scenarios/examples/,
#      the README's run command). The benchmark models in scenarios/bench are
#      left out on purpose, so that the benchmarks measure a binary that was
#      not trained on them;
#   3. the counts merged with LLVM's llvm-profdata, from the toolchain's
#      llvm-tools component (installed with rustup when it is missing: the
#      profile format must match the compiler's LLVM, so a system llvm-profdata
#      will not do);
#   4. the release build again, optimised with those counts (target/pgo/use),
#      copied to target/pgo/resim.
#
# Environment: PGO_DIR (default target/pgo), RUSTFLAGS (kept, the PGO flags are
# added to it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PGO_DIR=${PGO_DIR:-$ROOT/target/pgo}
mkdir -p "$PGO_DIR"
PGO_DIR=$(cd "$PGO_DIR" && pwd)
start=$SECONDS

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  command -v rustup >/dev/null || {
    echo "build-pgo: $profdata is missing and rustup is not installed: install the llvm-tools component of this toolchain" >&2
    exit 2
  }
  toolchain=$(rustup show active-toolchain | cut -d' ' -f1)
  echo "== installing llvm-tools for $toolchain (rustup)" >&2
  rustup component add llvm-tools --toolchain "$toolchain" >&2
fi
[ -x "$profdata" ] || { echo "build-pgo: no llvm-profdata at $profdata" >&2; exit 2; }

data=$PGO_DIR/data
rm -rf "$data" "$PGO_DIR/train"
mkdir -p "$data"

echo "== 1/4 instrumented build (target/pgo/gen)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$data" CARGO_TARGET_DIR="$PGO_DIR/gen" \
  cargo build --release --locked -q

echo "== 2/4 training run: scenarios scenarios/examples" >&2
# on one thread: counts that vary less between builds (hash seeds and the progress
# bar's timer still vary them a little; the outputs never vary)
# (exit 3: a scenario's [thresholds] failed, which is still a run to learn from);
# drawing ahead on, as `auto` has it on a machine with a core to spare, so that
# both the helper's draws and the reads of them are counted
rc=0
RAYON_NUM_THREADS=1 "$PGO_DIR/gen/release/resim" run scenarios scenarios/examples -q \
  --draw-ahead on --out "$PGO_DIR/train" >&2 || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
  echo "build-pgo: the training run failed (exit $rc)" >&2
  exit 1
fi

echo "== 3/4 merging the profiles" >&2
"$profdata" merge -o "$PGO_DIR/merged.profdata" "$data"

echo "== 4/4 optimised build (target/pgo/use)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$PGO_DIR/merged.profdata" CARGO_TARGET_DIR="$PGO_DIR/use" \
  cargo build --release --locked -q
cp "$PGO_DIR/use/release/resim" "$PGO_DIR/resim"
rm -rf "$PGO_DIR/train"
echo "built $PGO_DIR/resim in $((SECONDS - start)) s" >&2
