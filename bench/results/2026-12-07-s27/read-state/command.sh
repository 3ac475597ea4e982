#!/usr/bin/env bash
# Session 27: the matrix row's write sequence (15 s of each write workload, 4 threads) on
# TidesDB alone (8 x 200k rows, 2 GiB caches, relaxed), with select_random_ranges before
# it, right after it and 20 s later, and the column families' shape
# (INFORMATION_SCHEMA.TIDESDB_COLUMN_FAMILIES) at each point.
# Usage: command.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
ENGINE=TidesDB
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=8 --table-size=200000 --threads=4 --mysql-storage-engine=TidesDB prepare >/dev/null
sb() {
  sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=8 --table-size=200000 --threads=4 --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2, $3}'
}
shape() { mariadb --no-defaults --socket="$SOCK" -uroot -e "SELECT * FROM information_schema.TIDESDB_COLUMN_FAMILIES" | head -40; }
echo "fresh: rranges $(sb select_random_ranges 8)"
shape > "$OUT/shape-fresh.txt"
for w in ${WRITES:-oltp_write_only oltp_read_write oltp_insert oltp_update_index oltp_update_non_index oltp_delete}; do echo "$w $(sb $w 15)"; done
shape > "$OUT/shape-after-writes.txt"
echo "after writes: rranges $(sb select_random_ranges 8)"
sleep 20
echo "after 20 s idle: rranges $(sb select_random_ranges 8)"
shape > "$OUT/shape-idle.txt"
