#!/usr/bin/env bash
# One server with BUILD's plugin: for each engine of ENGINES, sysbench's load of TABLES x
# ROWS (4 threads) without the secondary index, then CREATE INDEX k_N on the tables, four
# statements at once. Prints "engine insert_s insert_ticks index_s index_ticks" (ticks: the
# server's CPU, user + system, 1/100 s). PROFILE=SECONDS records a perf profile of every
# CPU during the load (perf.ENGINE.data in OUT).
# Usage: [ENGINES="TidesDB InnoDB"] load.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3399}
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=${TABLES:-8} ROWS=${ROWS:-200000}
start_server 2G relaxed
for ENGINE in ${ENGINES:-TidesDB InnoDB}; do
  db=sb_$ENGINE
  sql "CREATE DATABASE $db"
  t0=$(date +%s.%N) c0=$(cpu_ticks)
  if [ -n "${PROFILE:-}" ]; then
    perf record -e cpu-clock -F 999 -a -o "$OUT/perf.$ENGINE.data" -- sleep "$PROFILE" 2>/dev/null &
  fi
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="$db" \
    --tables="$TABLES" --table-size="$ROWS" --threads=4 --create_secondary=off \
    --mysql-storage-engine="$ENGINE" prepare >/dev/null
  t1=$(date +%s.%N) c1=$(cpu_ticks)
  for i in $(seq 1 "$TABLES"); do echo "CREATE INDEX k_$i ON $db.sbtest$i(k)"; done |
    xargs -P4 -I{} mariadb --no-defaults --socket="$SOCK" -uroot -e "{}"
  t2=$(date +%s.%N) c2=$(cpu_ticks)
  echo "$ENGINE $(echo "$t1 - $t0" | bc) $((c1 - c0)) $(echo "$t2 - $t1" | bc) $((c2 - c1))"
done
