#!/usr/bin/env bash
# Session 18 (2026-12-05): where a cached update_index and a cached random-ranges query
# spend the server's CPU after write churn. TidesDB only (ENGINE=InnoDB for the other),
# 4 x 100k rows, 2 GiB caches, relaxed, 4 threads: 20 s of oltp_write_only, then per
# workload 5 s of warm-up and 15 s under perf (cpu-clock, 1999 Hz, call graphs).
# Plugin at 7478d16. Usage: command.sh BUILD [OUT_DIR]; the *.top.txt files are
#   perf report -i W.data --no-children -g none --sort dso,symbol --stdio  (first 30 rows)
#   perf report -i W.data --no-children -g none --sort dso --stdio
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/prof-out} PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=4 ROWS=100000
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
for w in ${WORKLOADS:-oltp_update_index select_random_ranges}; do
  echo warm $w $(sb $w 5)
  perf record -e cpu-clock -F 1999 -g -p "$SERVER_PID" -o "$OUT/$w.data" -- sleep 15 >/dev/null 2>&1 &
  P=$!
  echo run $w $(sb $w 15)
  wait $P || true
  perf report -i "$OUT/$w.data" --no-children -g none --sort dso,symbol --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^$' | cut -c1-140 | head -30 >"$OUT/$w.top.txt" || true  # head may close the pipe first
  perf report -i "$OUT/$w.data" --no-children -g none --sort dso --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -8 >>"$OUT/$w.top.txt" || true
done
stop_server
