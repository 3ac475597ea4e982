#!/usr/bin/env bash
# Usage: bench/sysbench-compare.sh BUILD_DIR [OUT_DIR]
#
# sysbench's ten OLTP workloads on TidesDB, InnoDB and MyRocks in ONE private MariaDB server
# (the same binary, the same SQL; only the ENGINE clause differs), each engine on its own
# copy of the data (database sb_<engine>). Engines alternate in short slices, workload by
# workload, so that the machine's drift hits all of them alike; the ratios to InnoDB are
# reported with their spread across slices.
#
# Relaxed durability on every engine (none fsyncs per commit; a killed server loses
# nothing acknowledged, a power loss may lose the last second):
#   InnoDB   innodb_flush_log_at_trx_commit=2 (write at commit, fsync once a second)
#   TidesDB  tidesdb_unified_memtable_sync_mode=NONE (written to the OS at commit)
#   MyRocks  rocksdb_flush_log_at_trx_commit=2 with rocksdb_manual_wal_flush=OFF (written
#            at commit; with the default manual_wal_flush=ON it would not even write)
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

start_server() { # regime
  local cache
  case $1 in small) cache=64M ;; large) cache=2G ;; esac
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$DATA" --socket="$SOCK" --port="$PORT" \
    --bind-address=127.0.0.1 --plugin-dir="$PLUGINS" --plugin-maturity=gamma \
    --plugin-load-add=ha_tidesdb.so --plugin-load-add=ha_rocksdb.so --tidesdb=FORCE \
    --skip-log-bin --max-connections=200 --table-open-cache=2048 \
    --innodb-buffer-pool-size=$cache --innodb-flush-log-at-trx-commit=2 --innodb-log-file-size=256M \
    --tidesdb-block-cache-size=$cache --tidesdb-unified-memtable-write-buffer-size=64M \
    --tidesdb-unified-memtable-sync-mode=NONE --tidesdb-default-sync-mode=NONE \
    --rocksdb-block-cache-size=$cache --rocksdb-flush-log-at-trx-commit=2 --rocksdb-manual-wal-flush=OFF \
    --log-error="$OUT/server.err" &
  SERVER_PID=$!
  for _ in $(seq 1 120); do
    mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "bench: the server did not start; see $OUT/server.err" >&2
  exit 1
}
stop_server() {
  mariadb-admin --no-defaults --socket="$SOCK" -uroot shutdown >/dev/null 2>&1 || kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
sb() { # engine workload args...
  local engine=$1 workload=$2
  shift 2
  sysbench --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$engine" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$THREADS" --rand-type=uniform \
    --mysql-storage-engine="$engine" --mysql-ignore-errors=1213,1205,1020 "$workload" "$@"
}
# Bytes the server process has written to storage so far (read_bytes/write_bytes of /proc).
io_written() { awk '/^write_bytes/ {print $2}' "/proc/$SERVER_PID/io"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

echo "regime,round,workload,engine,tps,p95_ms,errors,bytes_written,cpu_ticks,seconds" >"$OUT/results.csv"
first=1
for regime in $REGIMES; do
  start_server "$regime"
  if [ "$first" = 1 ]; then
    for engine in $ENGINES; do
      mariadb --no-defaults --socket="$SOCK" -uroot -e "CREATE DATABASE sb_$engine"
      t0=$(date +%s.%N)
      sb "$engine" oltp_read_write prepare >"$OUT/prepare-$engine.log" 2>&1
      t1=$(date +%s.%N)
      size=$(mariadb --no-defaults --socket="$SOCK" -uroot -N -e \
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
