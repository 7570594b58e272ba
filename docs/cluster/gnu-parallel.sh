#!/usr/bin/env bash
# A resim sweep as N shard processes under GNU parallel, then merged.
#
#   docs/cluster/gnu-parallel.sh scenarios/ay10-montecarlo.toml
#   N=16 REPS=200000 docs/cluster/gnu-parallel.sh scenarios/ay10-montecarlo.toml
#   PARALLEL_OPTS='-S host1,host2 --workdir /shared/resim' docs/cluster/gnu-parallel.sh ...
#
# Over ssh (-S), every host needs resim on its PATH and the same scenario file, and
# the output folder must be on a filesystem all hosts share.
# Without GNU parallel, xargs does the same on one machine:
#   seq 1 8 | xargs -P 8 -I {} resim sweep FILE -n 100000 -j 1 --quiet --shard {}/8 --out out/x-sweep/shard-{}-of-8
set -euo pipefail

SCENARIO=${1:?usage: $0 SCENARIO.toml}
N=${N:-8}
REPS=${REPS:-100000}
OUT=${OUT:-out/$(basename "$SCENARIO" .toml)-sweep}

# shellcheck disable=SC2086
parallel ${PARALLEL_OPTS:-} --halt now,fail=1 --joblog "$OUT.joblog" \
  resim sweep "$SCENARIO" --replications "$REPS" --jobs 1 --quiet \
  --shard {}/"$N" --out "$OUT/shard-{}-of-$N" ::: $(seq 1 "$N")

resim merge "$OUT"/shard-*-of-"$N" --out "$OUT"
