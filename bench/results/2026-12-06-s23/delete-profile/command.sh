#!/usr/bin/env bash
# Session 23: a flat CPU profile of the server under cached oltp_delete (8 x 200k, 2 GiB,
# relaxed, 4 threads, after 20 s of oltp_write_only and a 5 s warm-up), one engine per
# server: perf record -e cpu-clock for 12 s, reported by DSO and symbol (CALLGRAPH=fp or
# dwarf,SIZE records call chains too; KEEP=1 keeps perf.ENGINE.data). MODE=mallocs counts the
# server's malloc calls per event instead (after `perf probe -x <libc.so.6> malloc`).
# Usage: ENGINE=TidesDB|InnoDB command.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=8 ROWS=200000
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine="$ENGINE" prepare >/dev/null
sb() {
  sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=$TABLES --table-size=$ROWS --threads=4 --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2, $3}'
}
echo churn "$(sb oltp_write_only 20)"
echo warm "$(sb oltp_delete 5)"
if [ "${MODE:-profile}" = mallocs ]; then
  # Calls to malloc in the server per DELETE (needs the uprobe: perf probe -x LIBC malloc).
  perf stat -e probe_libc:malloc -x, -p "$SERVER_PID" -o "$OUT/mallocs.$ENGINE.csv" -- sleep 12 &
  perf_pid=$!
  run=$(sb oltp_delete 13)
  wait "$perf_pid"
  calls=$(awk -F, '/probe_libc:malloc/ {print $1}' "$OUT/mallocs.$ENGINE.csv")
  echo "run $run; malloc calls in 12 s: $calls, per event: $(awk -v c="$calls" -v r="${run#* (}" 'BEGIN {printf "%.1f", c / (r * 12)}')"
  stop_server
  exit 0
fi
perf record -e cpu-clock -F 1999 ${CALLGRAPH:+--call-graph=$CALLGRAPH} -p "$SERVER_PID" -o "$OUT/perf.$ENGINE.data" -- sleep 12 2>/dev/null &
perf_pid=$!
echo run "$(sb oltp_delete 13)"
wait "$perf_pid"
perf report -i "$OUT/perf.$ENGINE.data" --no-children --sort dso,sym --percent-limit 0.3 --stdio 2>/dev/null \
  | grep -v '^#' | grep -v '^$' >"$OUT/oltp_delete.$ENGINE.profile.txt"
perf report -i "$OUT/perf.$ENGINE.data" --no-children --sort dso --stdio 2>/dev/null \
  | grep -v '^#' | grep -v '^$' >"$OUT/oltp_delete.$ENGINE.dso.txt"
[ -n "${KEEP:-}" ] || rm -f "$OUT/perf.$ENGINE.data"
stop_server
