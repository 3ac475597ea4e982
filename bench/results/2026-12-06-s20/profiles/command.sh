#!/usr/bin/env bash
# Session 20 (2026-12-06): where a cached multi-statement write transaction spends the
# server's CPU. TidesDB only (ENGINE=InnoDB for the other), 8 x 200k rows, 2 GiB caches,
# relaxed, 4 threads: 20 s of oltp_write_only to churn, then per workload 5 s of warm-up
# and 15 s under perf (cpu-clock, 1999 Hz, DWARF call graphs). Usage:
# command.sh BUILD [OUT_DIR]. Per workload W it writes
#   W.top.txt       perf report --no-children --sort dso,symbol (first 40 rows), then by dso
#   W.children.txt  perf report --children --sort symbol, ha_tidesdb.so's symbols (first 60)
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/prof-out} PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=${TABLES:-8} ROWS=${ROWS:-200000}
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine=${ENGINE:-TidesDB} prepare >/dev/null
sb() {
  sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=$TABLES --table-size=$ROWS --threads=4 --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2, $3}'
}
echo churn $(sb oltp_write_only 20)
for w in ${WORKLOADS:-oltp_write_only}; do
  echo warm $w $(sb $w 5)
  perf record -e cpu-clock -F 1999 --call-graph dwarf,16384 -p "$SERVER_PID" -o "$OUT/$w.data" -- sleep 15 >/dev/null 2>&1 &
  P=$!
  echo run $w $(sb $w 15)
  wait $P || true
  { perf report -i "$OUT/$w.data" --no-children -g none --sort dso,symbol --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^$' | cut -c1-160 | head -40
    perf report -i "$OUT/$w.data" --no-children -g none --sort dso --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -8; } >"$OUT/$w.top.txt" || true
  perf report -i "$OUT/$w.data" --children -g none --sort dso,symbol --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^$' | grep 'ha_tidesdb' | cut -c1-200 | head -60 >"$OUT/$w.children.txt" || true
done
stop_server
