#!/usr/bin/env bash
# Usage: bench/binlog-group-commit.sh BUILD_DIR [OUT_DIR]
#
# Group commit with the binary log, side by side: TidesDB, InnoDB and MyRocks in ONE private
# server with the crash-safe settings (log_bin, sync_binlog=1, and durable engine commits:
# tidesdb sync FULL, innodb_flush_log_at_trx_commit=1, rocksdb_flush_log_at_trx_commit=1).
# Every commit is then a two-phase commit against the binlog. For each engine and thread
# count, sysbench oltp_update_non_index runs for SLICE seconds, and the server's counters
# give, per commit: binlog group commits (one binlog fsync each) and the engine's fsyncs
# (Tidesdb_wal_syncs: WAL fsyncs; Innodb_data_fsyncs: every InnoDB fsync, redo log and data
# files; Rocksdb_wal_synced: WAL syncs). Engines alternate slice by
# slice so the machine's drift hits all alike.
#
# Environment: TABLES [4], ROWS [20000], THREAD_COUNTS ["1 4 16"], SLICE seconds [10],
#   ROUNDS [2], ENGINES ["TidesDB InnoDB RocksDB"], PORT [3391].
# Output: OUT_DIR/results.csv (one line per slice), OUT_DIR/summary.md, OUT_DIR/server.err;
# default OUT_DIR is BUILD_DIR/bench-group-commit/<date>.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$BUILD/bench-group-commit/$(date +%Y%m%d-%H%M%S)}
TABLES=${TABLES:-4}
ROWS=${ROWS:-20000}
THREAD_COUNTS=${THREAD_COUNTS:-"1 4 16"}
SLICE=${SLICE:-10}
ROUNDS=${ROUNDS:-2}
ENGINES=${ENGINES:-"TidesDB InnoDB RocksDB"}
PORT=${PORT:-3391}

mkdir -p "$OUT"
. "$(dirname "${BASH_SOURCE[0]}")/private-server.sh"
start_server 256M durable --log-bin="$DATA/binlog" --server-id=1 --sync-binlog=1 --binlog-format=ROW
counter() { sql "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '$1'"; }
engine_fsyncs() {
  case $1 in
    TidesDB) counter TIDESDB_WAL_SYNCS ;;
    InnoDB) counter INNODB_DATA_FSYNCS ;;
    RocksDB) counter ROCKSDB_WAL_SYNCED ;;
  esac
}
sb() { # engine threads workload args...
  local engine=$1 threads=$2 workload=$3
  shift 3
  sysbench --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$engine" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$threads" --rand-type=uniform \
    --mysql-storage-engine="$engine" --mysql-ignore-errors=1213,1205,1020 "$workload" "$@"
}

for engine in $ENGINES; do
  sql "CREATE DATABASE sb_$engine"
  sb "$engine" 1 oltp_update_non_index prepare >"$OUT/prepare-$engine.log" 2>&1
done
echo "round,threads,engine,commits,tps,binlog_groups,engine_fsyncs,seconds" >"$OUT/results.csv"
for round in $(seq 1 "$ROUNDS"); do
  for threads in $THREAD_COUNTS; do
    for engine in $ENGINES; do
      g0=$(counter BINLOG_GROUP_COMMITS)
      f0=$(engine_fsyncs "$engine")
      log=$(sb "$engine" "$threads" oltp_update_non_index --time="$SLICE" run 2>&1) || true
      g1=$(counter BINLOG_GROUP_COMMITS)
      f1=$(engine_fsyncs "$engine")
      commits=$(sed -nE 's/^ *transactions: *([0-9]+).*/\1/p' <<<"$log")
      tps=$(sed -nE 's/^ *transactions: *[0-9]+ *\(([0-9.]+) per sec.*/\1/p' <<<"$log")
      echo "$round,$threads,$engine,${commits:-0},${tps:-0},$((g1 - g0)),$((f1 - f0)),$SLICE" >>"$OUT/results.csv"
    done
  done
done

# The summary: per engine and thread count, summed over rounds.
{
  echo "Binary log group commit: sysbench oltp_update_non_index, $TABLES tables x $ROWS rows,"
  echo "$SLICE s slices x $ROUNDS rounds; log_bin, sync_binlog=1, durable engine commits."
  echo
  echo "| threads | engine | commits/s | commits per binlog fsync | engine fsyncs per commit | commits per engine fsync |"
  echo "|---|---|---|---|---|---|"
  awk -F, 'NR > 1 {k = $2 "," $3; c[k] += $4; t[k] += $5; g[k] += $6; f[k] += $7; n[k]++}
    END {for (k in c) {split(k, a, ","); printf "%s|%s|%.0f|%.2f|%.2f|%.2f\n", a[1], a[2], t[k] / n[k],
      c[k] / (g[k] ? g[k] : 1), f[k] / (c[k] ? c[k] : 1), c[k] / (f[k] ? f[k] : 1)}}' "$OUT/results.csv" |
    sort -t'|' -k1,1n -k2,2 | sed 's/^/| /; s/$/ |/; s/|/ | /g; s/  */ /g'
} >"$OUT/summary.md"
cat "$OUT/summary.md"
