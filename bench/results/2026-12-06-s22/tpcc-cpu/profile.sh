#!/usr/bin/env bash
# Session 22: where the server's CPU goes under the TPC-C-like mix: 2 warehouses, 4 threads, relaxed,
# 256 MiB caches; load, 10 s warm-up, then 20 s under perf (cpu-clock, DWARF call graphs).
# Usage: profile.sh BUILD OUT   (SERVER_OPTS: more mariadbd options; ENGINE [TidesDB])
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3398}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
cd "$ROOT"
. bench/private-server.sh
ENGINE=${ENGINE:-TidesDB}
start_server 256M relaxed --skip-log-bin ${SERVER_OPTS:-}
sql "CREATE DATABASE tpcc_$ENGINE"
tpcc() { local c=$1; shift; sysbench $ROOT/bench/tpcc/tpcc.lua --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root \
  --mysql-db=tpcc_$ENGINE --mysql-storage-engine=$ENGINE --warehouses=2 --scale=1 --threads=4 --stats-dir="$WORK" "$@" $c; }
tpcc prepare >/dev/null 2>&1
tpcc run --time=10 --report-interval=0 > $OUT/warm.log 2>&1
perf record -e cpu-clock -F 999 --call-graph dwarf,16384 -p "$SERVER_PID" -o "$OUT/$ENGINE.data" -- sleep 20 >/dev/null 2>&1 &
P=$!
c0=$(cpu_ticks)
tpcc run --time=20 --report-interval=0 > $OUT/run.log 2>&1
c1=$(cpu_ticks)
wait $P || true
echo "cpu_ticks $((c1-c0))" >> $OUT/run.log
grep -E "^tpcc:" $OUT/run.log | head -5
stop_server
