#!/usr/bin/env bash
# Session 25: churned oltp_read_write with both engines in one server and no restart between
# the churn and the slices (scan-ab.sh restarts; delete-profile/command.sh runs one engine
# per server without a restart). 8 x 200k rows per engine, 2 GiB, relaxed, 4 threads;
# 20 s of oltp_write_only on each engine, 10 s pause, 5 s warm-up each, then ROUNDS [4]
# rounds of SLICE [8] s slices, the engine order alternating by round. RESTART=1 restarts
# the server after the pause and reads every table once (as scan-ab.sh does). Per slice:
# throughput and the server's CPU per transaction (ms).
# Usage: command.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3395}
ROUNDS=${ROUNDS:-4} SLICE=${SLICE:-8} TABLES=8 ROWS=200000
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
sb() { # engine seconds workload
  sysbench "$3" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$1" \
    --tables=$TABLES --table-size=$ROWS --threads=4 --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}'
}
start_server 2G relaxed
for engine in TidesDB InnoDB; do
  sql "CREATE DATABASE sb_$engine"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$engine" \
    --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine="$engine" prepare >/dev/null
done
for engine in TidesDB InnoDB; do sb "$engine" 20 oltp_write_only >/dev/null; done
sleep 10
if [ -n "${RESTART:-}" ]; then
  stop_server
  start_server 2G relaxed
  read_tables $TABLES TidesDB InnoDB
fi
for engine in TidesDB InnoDB; do sb "$engine" 5 oltp_read_write >/dev/null; done
echo "round,engine,tps,cpu_ms_per_txn" | tee "$OUT/colocated.csv"
for round in $(seq 1 "$ROUNDS"); do
  for engine in $(rotated $((round - 1)) TidesDB InnoDB); do
    c0=$(cpu_ticks)
    tps=$(sb "$engine" "$SLICE" oltp_read_write)
    c1=$(cpu_ticks)
    cpu=$(ms_per_txn $((c1 - c0)) "$tps" "$SLICE")
    echo "$round,$engine,$tps,$cpu" | tee -a "$OUT/colocated.csv"
  done
done
stop_server
