#!/usr/bin/env bash
# A sharded `resim sweep` on a real batch engine: a single-node Slurm (array job) and
# GNU parallel, each merged with `resim merge` and compared byte for byte with the
# unsharded run of the same sweep.
#
#   scripts/cluster-test.sh                 # from the repository root, as root
#   RESIM=target/release/resim scripts/cluster-test.sh
#
# What it does (docs/cluster.md, "Tested on a real Slurm"):
# - installs Debian's slurm-wlm, munge and parallel when missing (apt-get);
# - writes a one-node slurm.conf for this host into a private folder (nothing under
#   /etc/slurm is touched; SLURM_CONF points the daemons and clients at it), on
#   loopback ports of its own;
# - starts munged (unless one already answers), slurmctld and slurmd, and stops every
#   daemon it started when it exits, however it exits;
# - runs docs/cluster/slurm-array.sbatch with `sbatch --array=1-4 --wait` and
#   docs/cluster/gnu-parallel.sh with N=4: the job files the docs give to users.
#
# It prints "skipped: ..." and exits 0 where it cannot run: not root, no apt-get, or
# the packages cannot be installed. Any other failure exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
  echo "skipped: cluster-test: $*"
  exit 0
}

[ "$(id -u)" = 0 ] || skip "needs root (it installs packages and starts munged, slurmctld, slurmd)"

SHARDS=4
SCENARIO=${SCENARIO:-scenarios/ay10-montecarlo.toml}
REPS=${REPS:-400}
RESIM=${RESIM:-target/debug/resim}
STATE=${CLUSTER_TEST_STATE:-/tmp/resim-cluster-test}
CTLD_PORT=${CTLD_PORT:-16817}
SLURMD_PORT=${SLURMD_PORT:-16818}
started=$(date +%s)

# One run at a time on a machine: the daemons' ports and the state folder are shared.
mkdir -p "$STATE"
exec 9>"$STATE.lock"
flock 9

# --- packages -------------------------------------------------------------------
missing=()
for tool in sbatch slurmctld slurmd munged munge parallel; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 ||
    skip "no apt-get to install slurm-wlm, munge and parallel (missing: ${missing[*]})"
  echo "cluster-test: installing slurm-wlm munge parallel (missing: ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  # Keep the packages' init scripts from starting daemons: this script starts and
  # stops its own (policy-rc.d exit 101 = "not allowed"), unless a policy exists.
  policy=/usr/sbin/policy-rc.d
  own_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=1
    trap 'rm -f "$policy"' EXIT
  fi
  rc=0
  { apt-get update -qq && apt-get install -y -qq slurm-wlm munge parallel; } \
    >"$STATE/apt.log" 2>&1 || rc=$?
  [ -z "$own_policy" ] || {
    rm -f "$policy"
    trap - EXIT
  }
  if [ $rc -ne 0 ]; then
    tail -5 "$STATE/apt.log" >&2
    skip "apt-get could not install slurm-wlm, munge and parallel (log: $STATE/apt.log)"
  fi
fi

# --- the resim binary -----------------------------------------------------------
if [ ! -x "$RESIM" ]; then
  echo "cluster-test: building $RESIM"
  case "$RESIM" in
  target/release/*) cargo build --locked --release --quiet ;;
  *) cargo build --locked --quiet ;;
  esac
fi
BIN_DIR=$(cd "$(dirname "$RESIM")" && pwd)
export PATH="$BIN_DIR:$PATH"
command -v resim >/dev/null

# --- daemons: stop what we started, whatever happens ----------------------------
pids=() # "name pidfile" of each daemon this script started
stop_daemons() {
  local entry name file pid
  for entry in "${pids[@]}"; do
    name=${entry%% *}
    file=${entry#* }
    [ -s "$file" ] || continue
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then
        echo "cluster-test: $name ($pid) did not stop on TERM, killing it" >&2
        kill -9 "$pid" 2>/dev/null || true
      fi
    fi
  done
}
trap stop_daemons EXIT
trap 'exit 130' INT TERM

# munge: shared with anything else on the machine that uses it; start it only if
# nothing answers on its socket.
if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  echo "cluster-test: munged already running, using it"
else
  mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  fi
  chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
  chmod 700 /etc/munge
  chmod 400 /etc/munge/munge.key
  rm -f /run/munge/munged.pid
  su -s /bin/sh munge -c '/usr/sbin/munged --force'
  pids+=("munged /run/munge/munged.pid")
  for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n </dev/null | unmunge >/dev/null
fi

# Slurm: a private configuration, state and logs under $STATE.
H=$(hostname)
CONF="$STATE/slurm.conf"
mkdir -p "$STATE/ctld" "$STATE/d" "$STATE/log"
MEM=$(free -m | awk '/Mem/{print int($2*0.8)}')
cat >"$CONF" <<CONF
# Written by scripts/cluster-test.sh: a one-node Slurm on this host, loopback only.
ClusterName=resimtest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=main Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$CONF"

for name in slurmctld slurmd; do
  if [ -s "$STATE/$name.pid" ] && kill -0 "$(cat "$STATE/$name.pid")" 2>/dev/null; then
    # Left over by a run that could not clean up (its lock is ours now): restart it
    # on this configuration.
    kill "$(cat "$STATE/$name.pid")" 2>/dev/null || true
    sleep 1
  fi
done
rm -f "$STATE/slurmctld.pid" "$STATE/slurmd.pid"
pids+=("slurmctld $STATE/slurmctld.pid" "slurmd $STATE/slurmd.pid")
slurmctld -c -f "$CONF"  # -c: cold start, no jobs from an earlier run
slurmd -f "$CONF"
up=
for _ in $(seq 100); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qx 'idle'; then
    up=1
    break
  fi
  sleep 0.2
done
if [ -z "$up" ]; then
  echo "cluster-test: the Slurm node did not come up idle:" >&2
  sinfo >&2 || true
  tail -20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
  exit 1
fi
echo "cluster-test: Slurm up on $H: $(sinfo -h -o '%P %D node(s) %c CPUs %t')"

# --- the runs -------------------------------------------------------------------
rm -rf "$STATE"/run.*
WORK=$(mktemp -d "$STATE/run.XXXXXX")
cleanup_work() { rm -rf "$WORK"; }
# secs T0 T1: the seconds between two `date +%s%N` readings.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }

t0=$(date +%s%N)
resim sweep "$SCENARIO" --replications "$REPS" --quiet --out "$WORK/whole"
t1=$(date +%s%N)
echo "cluster-test: unsharded sweep of $SCENARIO, $REPS replications: $(secs "$t0" "$t1") s"

# compare_dir LABEL DIR [REF]: every file of the unsharded run REF (default the
# sweep's; but the manifest, which records the command line) is byte for byte the
# same in DIR, and DIR has no other result file.
compare_dir() {
  local label=$1 dir=$2 ref=${3:-$WORK/whole} f n=0
  for f in "$ref"/*; do
    [ -f "$f" ] || continue
    f=$(basename "$f")
    [ "$f" = manifest.toml ] && continue
    cmp "$ref/$f" "$dir/$f"
    n=$((n + 1))
  done
  for f in "$dir"/*.csv; do
    [ -e "$ref/$(basename "$f")" ] || {
      echo "cluster-test: $label wrote $(basename "$f"), the unsharded run did not" >&2
      exit 1
    }
  done
  [ "$n" -ge 2 ] || {
    echo "cluster-test: the unsharded run wrote only $n result file(s)" >&2
    exit 1
  }
  echo "cluster-test: $label: $n files equal the unsharded run byte for byte"
}

# Slurm: the documented array job, 4 tasks of one CPU each, waiting for the end.
t0=$(date +%s%N)
SCENARIO="$SCENARIO" REPS="$REPS" OUT="$WORK/slurm" \
  sbatch --array=1-$SHARDS --wait --cpus-per-task=1 --quiet \
  --output="$WORK/slurm-%A_%a.out" docs/cluster/slurm-array.sbatch
t1=$(date +%s%N)
for k in $(seq $SHARDS); do
  # Each shard was written by its own array task (its output file is Slurm's).
  if [ ! -s "$WORK/slurm/shard-$k-of-$SHARDS/manifest.toml" ] ||
    ! compgen -G "$WORK/slurm-*_$k.out" >/dev/null; then
    echo "cluster-test: array task $k wrote no shard" >&2
    cat "$WORK"/slurm-*.out >&2 || true
    exit 1
  fi
done
echo "cluster-test: sbatch --array=1-$SHARDS --wait: $(secs "$t0" "$t1") s"
resim merge --quiet "$WORK/slurm"/shard-*-of-$SHARDS --out "$WORK/slurm"
compare_dir "Slurm array job" "$WORK/slurm"

# GNU parallel: the documented script, 4 shards (it merges into OUT itself).
t0=$(date +%s%N)
N=$SHARDS REPS="$REPS" OUT="$WORK/parallel" PARALLEL_OPTS=--will-cite \
  docs/cluster/gnu-parallel.sh "$SCENARIO" >"$WORK/parallel.log"
t1=$(date +%s%N)
echo "cluster-test: GNU parallel, $SHARDS shards and merge: $(secs "$t0" "$t1") s"
compare_dir "GNU parallel" "$WORK/parallel"

# resim tune: one process, then 4 shards as a Slurm array job (on this machine's 2
# CPUs two tasks wait: the running ones make their slices) and under GNU parallel,
# each folder compared byte for byte with the one process's.
TUNE=scenarios/examples/tune-deadline-retries.toml
resim tune "$TUNE" --budget 400 --quiet --out "$WORK/tune-whole"
t0=$(date +%s%N)
TUNE="$TUNE" TUNE_ARGS="--budget 400" OUT="$WORK/tune-slurm" \
  sbatch --array=1-$SHARDS --wait --cpus-per-task=1 --quiet \
  --output="$WORK/tune-slurm-%A_%a.out" docs/cluster/slurm-tune.sbatch
t1=$(date +%s%N)
echo "cluster-test: tune, sbatch --array=1-$SHARDS --wait: $(secs "$t0" "$t1") s"
compare_dir "tune as a Slurm array job" "$WORK/tune-slurm" "$WORK/tune-whole"
t0=$(date +%s%N)
parallel --will-cite --halt now,fail=1 \
  resim tune "$TUNE" --budget 400 --jobs 1 --quiet --shard {}/$SHARDS \
  --out "$WORK/tune-parallel" ::: $(seq 1 $SHARDS)
t1=$(date +%s%N)
echo "cluster-test: tune, GNU parallel, $SHARDS shards: $(secs "$t0" "$t1") s"
compare_dir "tune under GNU parallel" "$WORK/tune-parallel" "$WORK/tune-whole"

cleanup_work
echo "cluster-test: passed in $(($(date +%s) - started)) s"
