#!/usr/bin/env bash
# Session 20 (2026-12-06): what an explicit transaction costs on top of its statements.
# oltp_write_only with BEGIN ... COMMIT (skip_trx=off, its default) and the same statements
# as autocommits (skip_trx=on), on TidesDB and InnoDB in one server: 8 x 200k rows each,
# 2 GiB caches, relaxed, 4 threads; engines and modes alternate in SLICE-second slices
# (default 10), ROUNDS rounds (default 3), after a 20 s churn of each engine. Prints
# per slice: engine, mode, transactions, server CPU ms per transaction.
# Usage: command.sh BUILD [OUT_DIR]
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=${2:-$PWD/skip-trx-out} PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=${TABLES:-8} ROWS=${ROWS:-200000} SLICE=${SLICE:-10} ROUNDS=${ROUNDS:-3}
HZ=$(getconf CLK_TCK)
start_server 2G relaxed
for e in TidesDB InnoDB; do
  sql "CREATE DATABASE $e"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=$e \
    --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine=$e prepare >/dev/null
done
sb() { # engine seconds skip_trx
  sysbench oltp_write_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="$1" \
    --tables=$TABLES --table-size=$ROWS --threads=4 --rand-type=uniform --time="$2" --skip_trx="$3" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2}'
}
for e in TidesDB InnoDB; do sb $e 20 off >/dev/null; done
echo "round engine skip_trx txns cpu_ms_per_txn" | tee "$OUT/skip-trx.txt"
for r in $(seq 1 "$ROUNDS"); do
  for e in TidesDB InnoDB; do
    for m in off on; do
      c0=$(cpu_ticks)
      n=$(sb $e "$SLICE" $m)
      c1=$(cpu_ticks)
      echo "$r $e $m $n $(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$HZ" 'BEGIN {printf "%.4f", 1000 * c / hz / n}')" |
        tee -a "$OUT/skip-trx.txt"
    done
  done
done
stop_server
