#!/usr/bin/env bash
# Usage: bench/tpcc-compare.sh BUILD_DIR [OUT_DIR]
#
# A TPC-C-like workload (bench/tpcc/tpcc.lua, sysbench 1.0.20) on TidesDB, InnoDB and
# MyRocks in ONE private MariaDB server (the same binary and SQL; only the ENGINE clause
# differs), each engine on its own copy of the data (database tpcc_<engine>). Measures the
# load (seconds, size), then ROUNDS x ENGINES slices of SLICE seconds, engines alternating
# (each round starting with the next engine in turn; the first waits until the server is
# quiet after the load, at most 180 s), for each durability in DURABILITIES
# (bench/private-server.sh: relaxed = no fsync per commit, durable = fsync per commit on
# every engine). The server restarts between
# durabilities, and the second runs on the data the first left; after each start every
# engine first runs WARMUP seconds unmeasured, so that no engine's measured slice is its
# cold-cache one. Per slice: transactions, new orders per minute (NOPM), p99 latency per
# transaction type, errors, retries (deadlocks and conflicts rolled back and run again),
# bytes the server wrote (/proc/PID/io write_bytes) and its CPU ticks, the engine's size
# after the slice; the transactions per type are in the slice's log. After each
# durability's slices the TPC-C consistency conditions 1-4 are checked per engine (PASS /
# FAIL in the summary).
#
# Sizes are SUM(DATA_LENGTH + INDEX_LENGTH) of information_schema.TABLES after ANALYZE
# TABLE: each engine's own estimate. MyRocks counts only its SST files there, so its
# memtable is flushed (rocksdb_force_flush_memtable_now) before the size after the load
# and the size at the end of a durability, outside any slice; sizes after a slice are
# taken as they are.
#
# Environment: WAREHOUSES [4], THREADS [4], SLICE seconds [30], ROUNDS [3], CACHE [256M]
#   (every engine's cache), ENGINES ["TidesDB InnoDB RocksDB"], DURABILITIES
#   ["relaxed durable"], PORT [3393], SCALE [1] (< 1 is NOT the standard TPC-C size: fewer
#   customers, orders, items and stock per warehouse), WARMUP seconds [10], QUICK=1
#   (SCALE=0.1, 1 warehouse, 10 s slices, 3 s warm-up, one round; a few minutes),
#   SERVER_OPTS [""] (more mariadbd options, e.g. --tidesdb-pessimistic-locking=ON).
# Output in OUT_DIR (default BUILD_DIR/bench-tpcc/<date>):
#   tpcc.csv        one line per slice: durability,round,engine,warehouses,threads,seconds,
#                   transactions,new_orders,nopm,p99_new_order_ms,p99_payment_ms,
#                   p99_order_status_ms,p99_delivery_ms,p99_stock_level_ms,errors,retries,
#                   bytes_written,cpu_ticks,size_bytes
#   tpcc-loads.csv  engine,seconds,size_bytes
#   tpcc-checks.csv durability,engine,result,size_bytes (consistency after the durability's
#                   slices, and the size then)
#   tpcc-summary.md the tables (bench/tpcc/summary.py); logs of every sysbench call in logs/
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$BUILD/bench-tpcc/$(date +%Y%m%d-%H%M%S)}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${QUICK:-0}" = 1 ]; then
  : "${SCALE:=0.1}" "${WAREHOUSES:=1}" "${SLICE:=10}" "${ROUNDS:=1}" "${WARMUP:=3}"
fi
WAREHOUSES=${WAREHOUSES:-4}
THREADS=${THREADS:-4}
SLICE=${SLICE:-30}
ROUNDS=${ROUNDS:-3}
CACHE=${CACHE:-256M}
ENGINES=${ENGINES:-"TidesDB InnoDB RocksDB"}
DURABILITIES=${DURABILITIES:-"relaxed durable"}
PORT=${PORT:-3393}
SCALE=${SCALE:-1}
WARMUP=${WARMUP:-10}

mkdir -p "$OUT/logs"
. "$(dirname "${BASH_SOURCE[0]}")/private-server.sh"

TABLES="warehouse district customer history new_orders orders order_line item stock"

tpcc() { # engine command [sysbench options...]
  local engine=$1 command=$2
  shift 2
  sysbench "$ROOT/bench/tpcc/tpcc.lua" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root \
    --mysql-db="tpcc_$engine" --mysql-storage-engine="$engine" --warehouses="$WAREHOUSES" --scale="$SCALE" \
    --threads="$THREADS" --stats-dir="$WORK" "$@" "$command"
}

size_of() { # engine [flush]: bytes, after ANALYZE TABLE (and a MyRocks memtable flush if asked)
  local engine=$1 flush=${2:-}
  if [ -n "$flush" ] && [ "$engine" = RocksDB ]; then
    sql "SET GLOBAL rocksdb_force_flush_memtable_now = ON"
  fi
  local list="" t
  for t in $TABLES; do list+="${list:+, }tpcc_$engine.$t"; done
  sql "ANALYZE TABLE $list" >/dev/null
  sql "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'tpcc_$engine'"
}

field() { sed -n "s/^tpcc:.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; } # name, sysbench output

header="durability,round,engine,warehouses,threads,seconds,transactions,new_orders,nopm"
header+=",p99_new_order_ms,p99_payment_ms,p99_order_status_ms,p99_delivery_ms,p99_stock_level_ms"
header+=",errors,retries,bytes_written,cpu_ticks,size_bytes"
echo "$header" >"$OUT/tpcc.csv"
echo "engine,seconds,size_bytes" >"$OUT/tpcc-loads.csv"
echo "durability,engine,result,size_bytes" >"$OUT/tpcc-checks.csv"
[ "$SCALE" = 1 ] || echo "tpcc: SCALE=$SCALE is NOT the standard TPC-C size"

first=1
for durability in $DURABILITIES; do
  # shellcheck disable=SC2086 # SERVER_OPTS is a list of options
  start_server "$CACHE" "$durability" --skip-log-bin ${SERVER_OPTS:-}
  if [ "$first" = 1 ]; then
    for engine in $ENGINES; do
      sql "CREATE DATABASE tpcc_$engine"
      t0=$(date +%s.%N)
      tpcc "$engine" prepare >"$OUT/logs/prepare-$engine.log" 2>&1 ||
        { tail -n 5 "$OUT/logs/prepare-$engine.log" >&2; exit 1; }
      t1=$(date +%s.%N)
      size=$(size_of "$engine" flush)
      seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
      echo "$engine,$seconds,$size" >>"$OUT/tpcc-loads.csv"
      echo "load $engine: $seconds s, $size bytes"
    done
    first=0
    echo "after the load, the server was quiet after $(wait_quiet 180) s"
  fi
  if [ "$WARMUP" != 0 ]; then
    for engine in $ENGINES; do
      tpcc "$engine" run --time="$WARMUP" --report-interval=0 >"$OUT/logs/warmup-$durability-$engine.log" 2>&1 || true
    done
  fi
  for round in $(seq 1 "$ROUNDS"); do
    # shellcheck disable=SC2086 # ENGINES is a list of words
    for engine in $(rotated $((round - 1)) $ENGINES); do
      log=$OUT/logs/run-$durability-$round-$engine.log
      io0=$(io_written)
      c0=$(cpu_ticks)
      tpcc "$engine" run --time="$SLICE" --report-interval=0 >"$log" 2>&1 || true
      io1=$(io_written)
      c1=$(cpu_ticks)
      out=$(cat "$log")
      size=$(size_of "$engine")
      line="$durability,$round,$engine,$WAREHOUSES,$THREADS"
      for f in seconds transactions new_orders nopm p99_new_order_ms p99_payment_ms p99_order_status_ms \
        p99_delivery_ms p99_stock_level_ms errors retries; do
        v=$(field "$f" "$out")
        line+=",${v:-0}"
      done
      echo "$line,$((io1 - io0)),$((c1 - c0)),$size" >>"$OUT/tpcc.csv"
      nopm=$(field nopm "$out")
      echo "$durability round $round $engine: NOPM ${nopm:-FAILED}, retries $(field retries "$out"), errors $(field errors "$out")"
      [ -n "$nopm" ] || tail -n 5 "$log" >&2
      grep '^tpcc: thread' "$log" | head -n 3 >&2 || true
    done
  done
  for engine in $ENGINES; do
    tpcc "$engine" check >"$OUT/logs/check-$durability-$engine.log" 2>&1 || true
    result=$(sed -n 's/^tpcc-check: \(PASS\|FAIL.*\)$/\1/p' "$OUT/logs/check-$durability-$engine.log")
    echo "$durability,$engine,\"${result:-FAIL (the check did not run)}\",$(size_of "$engine" flush)" >>"$OUT/tpcc-checks.csv"
    echo "$durability consistency $engine: ${result:-the check did not run}"
  done
  stop_server
done
/usr/bin/python3 "$ROOT/bench/tpcc/summary.py" "$OUT" >"$OUT/tpcc-summary.md"
cat "$OUT/tpcc-summary.md"
