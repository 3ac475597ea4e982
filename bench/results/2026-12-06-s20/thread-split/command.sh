#!/usr/bin/env bash
# Session 20 (2026-12-06): how the server's CPU divides between connection threads and
# TidesDB's background threads (named tdb-flush, tdb-compact, tdb-subcompact, tdb-sync
# since this session) during cached writes. 8 x 200k rows (the 3-engine matrix's tables),
# 2 GiB caches, relaxed durability, 4 threads: 20 s of oltp_write_only to churn, then per
# workload 5 s of warm-up and MEASURE s (default 20) measured. CPU comes from
# /proc/PID/task/*/stat (utime + stime, in clock ticks) before and after each measured run,
# summed by thread name. Usage: command.sh BUILD [OUT_DIR]; ENGINE=InnoDB for the other.
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/thread-split-out} PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=${TABLES:-8} ROWS=${ROWS:-200000} MEASURE=${MEASURE:-20}
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine=${ENGINE:-TidesDB} prepare >/dev/null
sb() {
  sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=$TABLES --table-size=$ROWS --threads=4 --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2}'
}
# "name ticks" per live thread
snapshot() {
  for t in /proc/$SERVER_PID/task/*; do
    name=$(tr ' ' '_' <"$t/comm" 2>/dev/null) || continue
    ticks=$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null) || continue
    echo "$(basename "$t") $name $ticks"
  done
}
echo "workload txns thread_name cpu_ticks ticks_per_1000_txns" | tee "$OUT/thread-split.txt"
echo churn $(sb oltp_write_only 20) >&2
for w in ${WORKLOADS:-oltp_update_index oltp_update_non_index oltp_delete oltp_insert oltp_write_only}; do
  sb "$w" 5 >/dev/null
  snapshot >"$OUT/before"
  n=$(sb "$w" "$MEASURE")
  snapshot >"$OUT/after"
  # threads that ended meanwhile are lost; threads born meanwhile count from 0
  awk -v w="$w" -v n="$n" 'NR == FNR { b[$1] = $3; next }
    { d[$2] += $3 - ($1 in b ? b[$1] : 0) }
    END { for (k in d) if (d[k] > 0) printf "%s %d %s %d %.1f\n", w, n, k, d[k], 1000 * d[k] / n }' \
    "$OUT/before" "$OUT/after" | sort -k4,4nr | tee -a "$OUT/thread-split.txt"
done
rm -f "$OUT/before" "$OUT/after"
stop_server
