#!/usr/bin/env bash
# Session 18 (2026-12-05): the memtable's prefix filter (MemTable::RangeMayMatch) on the
# cached read workloads. BUILD is a build of the commit that added it with toggle.patch
# applied (for this experiment only, not committed: a global switch that makes
# RangeMayMatch always answer "may match", set by the variable tidesdb_xexp_prefix_off), so
# both sides run one server, one datadir and one memtable: VALUES "1 0" = filter off, on.
# TidesDB and InnoDB, TABLES x ROWS, CACHE caches, relaxed, THREADS threads; 10 s of
# oltp_write_only per database first (a memtable of churned rows); then each round, each
# workload: a SLICE-second slice per value (their order swapped every other round), then
# InnoDB. oltp_write_only is in the list so that every round churns the memtable again.
# Per slice: transactions per second and the server's CPU per transaction (ms).
# Usage: command.sh BUILD [OUT_DIR]; env as below.
#   run: VAR=tidesdb_xexp_prefix_off VALUES="1 0" ROUNDS=3 SLICE=8 \
#        WORKLOADS="oltp_write_only select_random_points select_random_ranges oltp_read_only oltp_point_select" \
#        command.sh BUILD
#   summary: summary.py ab.csv v1 v0
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/ab-out} PORT=${PORT:-3398}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
TABLES=${TABLES:-4} ROWS=${ROWS:-100000} CACHE=${CACHE:-2G} THREADS=${THREADS:-4} SLICE=${SLICE:-8} ROUNDS=${ROUNDS:-3}
VAR=${VAR:-tidesdb_xexp_prefix_off} VALUES=${VALUES:-"1 0"}
WORKLOADS=${WORKLOADS:-"oltp_write_only select_random_points select_random_ranges oltp_read_only oltp_point_select"}
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
sb() { # db seconds workload
  sysbench "$3" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="$1" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$THREADS" --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}'
}
slice() { # round workload db label
  local before after tps cpu
  before=$(cpu_ticks)
  tps=$(sb "$3" "$SLICE" "$2")
  after=$(cpu_ticks)
  cpu=$(awk -v t="$((after - before))" -v tps="$tps" -v s="$SLICE" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.4f", t * 1000 / hz / (tps * s) }')
  echo "$1,$2,$4,$tps,$cpu" | tee -a "$OUT/ab.csv"
}
start_server "$CACHE" relaxed
for db in t innodb; do
  engine=TidesDB
  [ $db = innodb ] && engine=InnoDB
  sql "CREATE DATABASE $db"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=$db \
    --tables="$TABLES" --table-size="$ROWS" --threads=2 --mysql-storage-engine=$engine prepare >/dev/null
done
echo "round,workload,label,tps,cpu_ms_per_txn" | tee "$OUT/ab.csv"
sb t 10 oltp_write_only >/dev/null
sb innodb 10 oltp_write_only >/dev/null
for round in $(seq 1 "$ROUNDS"); do
  for w in $WORKLOADS; do
    vals=$VALUES
    [ $((round % 2)) = 0 ] && vals=$(echo $VALUES | tr ' ' '\n' | tac | tr '\n' ' ')
    for v in $vals; do
      sql "SET GLOBAL $VAR = $v"
      slice "$round" "$w" t "v$v"
    done
    slice "$round" "$w" innodb innodb
  done
done
stop_server
