#!/usr/bin/env bash
# Usage: scripts/bench-kv.sh BUILD_DIR            (what `make bench-kv` runs)
#
# Runs kvbench (BUILD_DIR/tools/kvbench/kvbench): the library's key-value workloads against
# TidesDB and RocksDB side by side, then prints every summary line together at the end:
#   <workload> <tidesdb ops/s> <rocksdb ops/s> <ratio tidesdb/rocksdb>
#
#   QUICK=1          a run of a minute or two (small data), e.g. to check nothing is broken
#   default          the fuller suite, 10-18 minutes on a 2-core machine: 100 B values
#                    (1M keys), 4 KiB values (60K keys), fsync-per-commit rows, and
#                    transaction rows (txn_*: 1, 2 and 4 threads, about 2-3 minutes)
#   KVBENCH_ARGS     extra flags for every kvbench invocation, e.g. "--threads=2"
#   KVBENCH_TIMEOUT  seconds after which one (engine, workload) run is killed and reported
#                    as failed [120 with QUICK=1, 600 otherwise]
#   KVBENCH_LOG      where the full output is kept [BUILD_DIR/bench-kv/<date>.txt]
#
# Databases go under $TMPDIR (or /tmp) and are removed after each run. The exit status is
# non-zero if any run failed (engine error, wrong data read back, crash or timeout).
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || {
  echo "bench-kv: build directory $1 does not exist (make build)" >&2
  exit 2
}
BIN=$BUILD/tools/kvbench/kvbench
if [ ! -x "$BIN" ]; then
  echo "bench-kv: $BIN not found; build it: cmake --build $BUILD --target kvbench" >&2
  exit 2
fi

# Benchmarks of an unoptimized or instrumented build measure the wrong thing.
CACHE=$BUILD/CMakeCache.txt
if [ -f "$CACHE" ]; then
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$CACHE")
  case "$build_type" in
    Release | RelWithDebInfo) ;;
    *) echo "bench-kv: warning: $BUILD is a '${build_type:-unset}' build; numbers will not be representative" >&2 ;;
  esac
  if grep -Eq '^(ASAN|TSAN):BOOL=ON' "$CACHE"; then
    echo "bench-kv: warning: $BUILD is a sanitizer build; numbers will not be representative" >&2
  fi
fi

LOG=${KVBENCH_LOG:-$BUILD/bench-kv/$(date +%Y%m%d-%H%M%S).txt}
mkdir -p "$(dirname "$LOG")"
: >"$LOG"
read -r -a EXTRA <<<"${KVBENCH_ARGS:-}"
if [ "${QUICK:-0}" = 1 ]; then
  TIMEOUT=${KVBENCH_TIMEOUT:-120}
else
  TIMEOUT=${KVBENCH_TIMEOUT:-600}
fi

SUMMARY=()
CONFLICTS=() # "conflict-rate <workload> <tidesdb> <rocksdb>" lines of the transaction rows
FAILED=0

# run TITLE FLAGS...: one kvbench invocation; its output goes to the terminal and the log,
# its summary lines are kept for the end.
run() {
  local title=$1
  shift
  local out
  out=$(mktemp)
  echo "== $title: kvbench $* ${EXTRA[*]}" | tee -a "$LOG"
  # stdout (the tables) is logged; stderr (progress, library messages) only shown.
  "$BIN" --timeout="$TIMEOUT" "$@" "${EXTRA[@]}" | tee "$out" | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  echo | tee -a "$LOG"
  if [ "$rc" -ne 0 ]; then
    FAILED=$((FAILED + 1))
    echo "bench-kv: '$title' exited with status $rc" | tee -a "$LOG" >&2
  fi
  mapfile -t -O "${#SUMMARY[@]}" SUMMARY < <(sed -n '/^# summary:/,$p' "$out" | grep -v '^#')
  mapfile -t -O "${#CONFLICTS[@]}" CONFLICTS < <(sed -n '/^# summary:/q; /^conflict-rate /p' "$out")
  rm -f "$out"
}

TXN_WORKLOADS=txn_rmw_opt,txn_rmw_pess,txn_rmw_hot_opt,txn_rmw_hot_pess

# txn_rows TITLE FLAGS...: the transaction workloads with 1, 2 and 4 threads.
txn_rows() {
  local title=$1
  shift
  local t
  for t in 1 2 4; do
    run "$title, $t thread(s)" --workloads=$TXN_WORKLOADS --threads=$t --suffix=_t$t "$@"
  done
}

start=$(date +%s)
if [ "${QUICK:-0}" = 1 ]; then
  run "100 B values (quick)" --num=200000 --cache_mb=64 --cold_cache_mb=2
  run "4 KiB values (quick)" --num=10000 --value_size=4096 --cache_mb=64 --cold_cache_mb=2 \
    --workloads=fillrandom,readrandom,seekrandom --seeks=1000 --suffix=_4k
  run "fsync per commit (quick)" --num=100000 --sync=full --writes=1000 --workloads=fillrandom,overwrite \
    --suffix=_syncfull
  txn_rows "transactions (quick)" --num=20000 --txns=20000 --duration=2
else
  # 1M keys x 116 B: ~90 MB of files. The warm read rows fit in 256 MB of cache; the cold
  # row gets 8 MB, about a tenth of the data.
  run "100 B values" --num=1000000 --cache_mb=256 --cold_cache_mb=8
  # 60K keys x 4 KiB: ~240 MB of values (in TidesDB's value log, above its 1 KiB threshold).
  run "4 KiB values" --num=60000 --value_size=4096 --cache_mb=512 --cold_cache_mb=16 --reads=200000 --seeks=5000 \
    --suffix=_4k
  # fsync on every commit: one writer, then four (group commit shares one fsync).
  run "fsync per commit, 1 thread" --num=200000 --sync=full --writes=10000 --workloads=fillrandom,overwrite \
    --suffix=_syncfull
  run "fsync per commit, 4 threads" --num=200000 --sync=full --writes=20000 --threads=4 \
    --workloads=fillrandom,overwrite --suffix=_syncfull_t4
  # Transfers (GetForUpdate x2, Put x2, Commit) between 100K accounts and between 100 hot
  # accounts, optimistic and pessimistic: 24 runs of at most 6 s each plus the preloads.
  txn_rows "transactions" --num=100000 --txns=200000 --duration=6
fi

{
  echo "== summary ($(($(date +%s) - start)) s; full output in $LOG)"
  echo "# <workload> <tidesdb ops/s> <rocksdb ops/s> <ratio tidesdb/rocksdb>"
  printf '%s\n' "${SUMMARY[@]}"
  if [ "${#CONFLICTS[@]}" -gt 0 ]; then
    # Commented, so that every uncommented line of this block stays a summary line.
    echo "# conflict rates (aborted attempts / all attempts): <workload> <tidesdb> <rocksdb>"
    printf '# %s\n' "${CONFLICTS[@]#conflict-rate }"
  fi
} | tee -a "$LOG"
if [ "$FAILED" -ne 0 ]; then
  echo "bench-kv: $FAILED kvbench invocation(s) reported failures (see FAILED lines above)" >&2
  exit 1
fi
