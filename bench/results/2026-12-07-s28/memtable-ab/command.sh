#!/usr/bin/env bash
# Session 28: builds A, B, ... of the plugin on reads that meet a full memtable. scan-ab.sh
# cannot show this: each of its slices starts a server, and recovery flushes what it
# replayed, so every build reads tables without memtable entries.
# Here TidesDB's sysbench tables (TABLES x ROWS, 2 GiB caches, relaxed) are loaded once and
# the datadir kept; then, ROUNDS times and per build in turn (the first build rotating), a
# copy of it is started with that build, churned by CHURN seconds of oltp_write_only (the
# unified memtable then holds about a fifth of each table's index entries; the builds'
# write paths are the same), and select_random_ranges and select_random_points run SLICE
# seconds each, 4 threads. Per slice: transactions per second and the server's CPU ms per
# transaction. Output: OUT/memtable-ab.csv (round,build,label,tps,cpu_ms_per_txn).
# Usage: [TABLES=8 ROWS=200000 CHURN=20 SLICE=8 ROUNDS=3] command.sh OUT BUILD_A BUILD_B...
set -euo pipefail
OUT=$1
shift
BUILDS=()
for b in "$@"; do BUILDS+=("$(cd "$b" && pwd)"); done
BUILD=${BUILDS[0]} PORT=${PORT:-3399}
TABLES=${TABLES:-8} ROWS=${ROWS:-200000} CHURN=${CHURN:-20} SLICE=${SLICE:-8} ROUNDS=${ROUNDS:-3}
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
sb() { # workload seconds threads command [sysbench options...]
  local workload=$1 seconds=$2 threads=$3 command=$4
  shift 4
  sysbench "$workload" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables="$TABLES" --table-size="$ROWS" --threads="$threads" --rand-type=uniform --time="$seconds" \
    --mysql-ignore-errors=1213,1205,1020 "$@" "$command"
}
start_server 2G relaxed
sql "CREATE DATABASE t"
sb oltp_read_only 0 2 prepare --mysql-storage-engine=TidesDB >/dev/null
stop_server
cp -a "$DATA" "$WORK/seed"
echo "round,build,label,tps,cpu_ms_per_txn" >"$OUT/memtable-ab.csv"
names=(A B C D E F)
for round in $(seq "$ROUNDS"); do
  for i in $(rotated $((round - 1)) "${!BUILDS[@]}"); do
    rm -rf "$DATA" && cp -a "$WORK/seed" "$DATA"
    ln -sfn "${BUILDS[$i]}/plugin/ha_tidesdb.so" "$PLUGINS/ha_tidesdb.so"
    start_server 2G relaxed
    wait_quiet 30 >/dev/null
    sb oltp_write_only "$CHURN" 4 run >/dev/null
    for label in select_random_ranges select_random_points; do
      c0=$(cpu_ticks)
      tps=$(sb "$label" "$SLICE" 4 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}')
      row="$round,${names[$i]},$label,$tps,$(ms_per_txn $(($(cpu_ticks) - c0)) "$tps" "$SLICE")"
      echo "$row" | tee -a "$OUT/memtable-ab.csv"
    done
    stop_server
  done
done
