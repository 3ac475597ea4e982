#!/usr/bin/env bash
# Session 17 (2026-12-05): how much of the cached regime's read loss is the number of sorted
# runs. The same tables made with two values of one tidesdb_default_* variable (VAR = A and
# VAR = B when they were made; databases TAG$A and TAG$B), and InnoDB, on sysbench's read
# workloads after write churn. run1: tidesdb_default_l1_file_count_trigger 1 (every flush's
# L0 file is merged into L1 at once) against 4, on the build before
# l0_compaction_size_ratio; run2: tidesdb_default_l0_compaction_size_ratio 10 against 0
# (both with the file-count trigger 4). One server, one build; three
# databases loaded alike (TABLES x ROWS, CACHE caches, relaxed). Each round: WRITE seconds
# of oltp_write_only on each database (both TidesDB databases share the memtable and its
# flushes), then SLICE-second slices of each read workload, the databases alternating. Per
# slice: transactions per second and the server's CPU per transaction (ms, /proc ticks); the
# write churn's own rates too (the extra compaction is paid there).
# Usage: command.sh BUILD [OUT_DIR]; env VAR [tidesdb_default_l1_file_count_trigger] A [1]
# B [4] TAG [t] TABLES [4] ROWS [100000] CACHE [2G] THREADS [4] SLICE [8] WRITE [20]
# ROUNDS [3] PORT [3397]
#   run1: command.sh BUILD
#   run2: VAR=tidesdb_default_l0_compaction_size_ratio A=10 B=0 TAG=r command.sh BUILD
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/l0-trigger-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
TABLES=${TABLES:-4} ROWS=${ROWS:-100000} CACHE=${CACHE:-2G} THREADS=${THREADS:-4}
SLICE=${SLICE:-8} WRITE=${WRITE:-20} ROUNDS=${ROUNDS:-3} PORT=${PORT:-3397}
VAR=${VAR:-tidesdb_default_l1_file_count_trigger} A=${A:-1} B=${B:-4} TAG=${TAG:-t}
DBS="$TAG$A $TAG$B innodb"
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
sb() { # db time workload
  sysbench "$3" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="$1" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$THREADS" --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}'
}
slice() { # round workload db seconds
  local before after tps cpu
  before=$(cpu_ticks)
  tps=$(sb "$3" "$4" "$2")
  after=$(cpu_ticks)
  cpu=$(awk -v t="$((after - before))" -v tps="$tps" -v s="$4" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.4f", t * 1000 / hz / (tps * s) }')
  echo "$1,$2,$3,$tps,$cpu" | tee -a "$OUT/l0-trigger.csv"
}
start_server "$CACHE" relaxed
for db in $DBS; do
  engine=TidesDB
  [ $db = innodb ] && engine=InnoDB
  sql "SET GLOBAL $VAR = $([ $db = "$TAG$A" ] && echo "$A" || echo "$B")"
  sql "CREATE DATABASE $db"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=$db \
    --tables="$TABLES" --table-size="$ROWS" --threads=2 --mysql-storage-engine=$engine prepare >/dev/null
done
sql "SET GLOBAL $VAR = DEFAULT"
echo "round,workload,db,tps,cpu_ms_per_txn" | tee "$OUT/l0-trigger.csv"
for round in $(seq 1 "$ROUNDS"); do
  for db in $DBS; do slice "$round" oltp_write_only $db "$WRITE"; done
  sql "SELECT TABLE_SCHEMA, INDEX_NAME, FILES_PER_LEVEL FROM INFORMATION_SCHEMA.TIDESDB_COLUMN_FAMILIES WHERE TABLE_NAME = 'sbtest1'" | sed "s/^/round $round files: /"
  for workload in select_random_ranges select_random_points oltp_read_only oltp_point_select; do
    for db in $DBS; do slice "$round" $workload $db "$SLICE"; done
  done
done
sql "SELECT TABLE_SCHEMA, REASON, COUNT(*), SUM(INPUT_BYTES) >> 20, SUM(OUTPUT_BYTES) >> 20 FROM INFORMATION_SCHEMA.TIDESDB_COMPACTIONS GROUP BY 1, 2" | sed "s/^/compactions: /" || true
stop_server
