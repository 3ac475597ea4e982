#!/usr/bin/env bash
# Session 16 (2026-12-04): secondary keys with prefix bloom filters (tidesdb_index_filter_prefixes
# ON, the default) against the same tables with whole-key filters (OFF when they were made)
# and InnoDB, on sysbench's select_random_points / select_random_ranges after write churn
# (the state in which they lose: L0 files and a full memtable beside each index's L1 file).
# One server, one build; three databases loaded alike (TABLES x ROWS, CACHE caches,
# relaxed). Each round: WRITE seconds of oltp_write_only on each database (the same writes,
# so both TidesDB databases keep alike shapes: they share the memtable and its flushes), then
# SLICE-second slices of each read workload, the databases alternating. Per slice:
# transactions per second and the server's CPU per transaction (ms, /proc ticks).
# Usage: command.sh BUILD [OUT_DIR]; env TABLES [4] ROWS [100000] CACHE [2G] THREADS [4]
# SLICE [8] WRITE [10] ROUNDS [3] PORT [3397]
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/filter-prefix-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
TABLES=${TABLES:-4} ROWS=${ROWS:-100000} CACHE=${CACHE:-2G} THREADS=${THREADS:-4}
SLICE=${SLICE:-8} WRITE=${WRITE:-10} ROUNDS=${ROUNDS:-3} PORT=${PORT:-3397}
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
sb() { # db time workload
  sysbench "$3" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="$1" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$THREADS" --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}'
}
start_server "$CACHE" relaxed
for db in prefix whole innodb; do
  engine=TidesDB
  [ $db = innodb ] && engine=InnoDB
  sql "SET GLOBAL tidesdb_index_filter_prefixes = $([ $db = whole ] && echo OFF || echo ON)"
  sql "CREATE DATABASE $db"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=$db \
    --tables="$TABLES" --table-size="$ROWS" --threads=2 --mysql-storage-engine=$engine prepare >/dev/null
done
sql "SET GLOBAL tidesdb_index_filter_prefixes = ON"
sql "SELECT TABLE_SCHEMA, REGEXP_SUBSTR(OPTIONS, 'filter_prefix_length=[0-9]+') FROM INFORMATION_SCHEMA.TIDESDB_COLUMN_FAMILIES WHERE TABLE_NAME = 'sbtest1' AND INDEX_NAME = 'k_1'"
echo "round,workload,db,tps,cpu_ms_per_txn" | tee "$OUT/filter-prefix.csv"
for round in $(seq 1 "$ROUNDS"); do
  for db in prefix whole innodb; do sb $db "$WRITE" oltp_write_only >/dev/null; done
  sql "SELECT TABLE_SCHEMA, FILES_PER_LEVEL FROM INFORMATION_SCHEMA.TIDESDB_COLUMN_FAMILIES WHERE TABLE_NAME = 'sbtest1' AND INDEX_NAME = 'k_1'" | sed "s/^/round $round files: /"
  for workload in select_random_points select_random_ranges; do
    for db in prefix whole innodb; do
      before=$(cpu_ticks)
      tps=$(sb $db "$SLICE" $workload)
      after=$(cpu_ticks)
      cpu=$(awk -v t="$((after - before))" -v tps="$tps" -v s="$SLICE" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.4f", t * 1000 / hz / (tps * s) }')
      echo "$round,$workload,$db,$tps,$cpu" | tee -a "$OUT/filter-prefix.csv"
    done
  done
done
stop_server
