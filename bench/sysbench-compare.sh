#!/usr/bin/env bash
# Usage: bench/sysbench-compare.sh BUILD_DIR [OUT_DIR]
#
# sysbench's ten OLTP workloads on TidesDB, InnoDB and MyRocks in ONE private MariaDB server
# (the same binary, the same SQL; only the ENGINE clause differs), each engine on its own
# copy of the data (database sb_<engine>). Engines alternate in short slices, workload by
# workload, so that the machine's drift hits all of them alike; the ratios to InnoDB are
# reported with their spread across slices.
#
# Relaxed durability on every engine (bench/private-server.sh: no fsync per commit).
# Binary log off. Two cache regimes, the same data: small (64 MiB: data several times
# the caches) and large (2 GiB: caches larger than the data); the server restarts between
# them with the caches set:
#   innodb_buffer_pool_size, tidesdb_block_cache_size (+ tidesdb memtable 64 MiB),
#   rocksdb_block_cache_size
#
# Environment: TABLES [8], ROWS [200000], THREADS [4], SLICE seconds [10], ROUNDS [2],
#   ENGINES ["TidesDB InnoDB RocksDB"], REGIMES ["small large"], WORKLOADS [all ten],
#   PORT [3390], QUICK=1 (2 tables x 20k rows, 3 s slices, one round).
# Output: OUT_DIR/results.csv (one line per slice) and OUT_DIR/summary.md (the ratio
# table), OUT_DIR/server.err; default OUT_DIR is BUILD_DIR/bench-sysbench/<date>.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$BUILD/bench-sysbench/$(date +%Y%m%d-%H%M%S)}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${QUICK:-0}" = 1 ]; then
  : "${TABLES:=2}" "${ROWS:=20000}" "${SLICE:=3}" "${ROUNDS:=1}"
fi
TABLES=${TABLES:-8}
ROWS=${ROWS:-200000}
THREADS=${THREADS:-4}
SLICE=${SLICE:-10}
ROUNDS=${ROUNDS:-2}
ENGINES=${ENGINES:-"TidesDB InnoDB RocksDB"}
REGIMES=${REGIMES:-"small large"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only oltp_write_only oltp_read_write oltp_insert oltp_update_index oltp_update_non_index oltp_delete select_random_points select_random_ranges"}
PORT=${PORT:-3390}

mkdir -p "$OUT"
. "$(dirname "${BASH_SOURCE[0]}")/private-server.sh"

cache_of() { case $1 in small) echo 64M ;; large) echo 2G ;; esac; }
sb() { # engine workload args...
  local engine=$1 workload=$2
  shift 2
  sysbench --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$engine" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$THREADS" --rand-type=uniform \
    --mysql-storage-engine="$engine" --mysql-ignore-errors=1213,1205,1020 "$workload" "$@"
}

echo "regime,round,workload,engine,tps,p95_ms,errors,bytes_written,cpu_ticks,seconds" >"$OUT/results.csv"
first=1
for regime in $REGIMES; do
  start_server "$(cache_of "$regime")" relaxed --skip-log-bin
  if [ "$first" = 1 ]; then
    for engine in $ENGINES; do
      sql "CREATE DATABASE sb_$engine"
      t0=$(date +%s.%N)
      sb "$engine" oltp_read_write prepare >"$OUT/prepare-$engine.log" 2>&1
      t1=$(date +%s.%N)
      size=$(sql \
        "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sb_$engine'")
      echo "load,$engine,$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}'),$size" >>"$OUT/loads.csv"
    done
    first=0
  fi
  for workload in $WORKLOADS; do
    for round in $(seq 1 "$ROUNDS"); do
      for engine in $ENGINES; do
        io0=$(io_written)
        c0=$(cpu_ticks)
        log=$(sb "$engine" "$workload" --time="$SLICE" --percentile=95 run 2>&1) || true
        io1=$(io_written)
        c1=$(cpu_ticks)
        tps=$(sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' <<<"$log")
        p95=$(sed -n 's/.*95th percentile: *\([0-9.]*\).*/\1/p' <<<"$log")
        errors=$(sed -n 's/.*ignored errors: *\([0-9]*\).*/\1/p' <<<"$log")
        echo "$regime,$round,$workload,$engine,${tps:-0},${p95:-0},${errors:-0},$((io1 - io0)),$((c1 - c0)),$SLICE" \
          >>"$OUT/results.csv"
        echo "$regime $workload round $round $engine: ${tps:-FAILED} tps, p95 ${p95:-?} ms, errors ${errors:-?}"
        [ -n "$tps" ] || echo "$log" | tail -n 5 >&2
      done
    done
  done
  stop_server
done
python3 "$ROOT/bench/sysbench-summary.py" "$OUT/results.csv" "$OUT/loads.csv" >"$OUT/summary.md"
cat "$OUT/summary.md"
