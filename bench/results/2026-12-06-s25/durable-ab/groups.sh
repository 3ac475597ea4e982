#!/usr/bin/env bash
# Durable (fsync per commit) sysbench writes, TidesDB only, one server per build: throughput,
# commit groups and fsyncs per transaction. Usage: groups.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3398}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
start_server 2G durable
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=4 --table-size=100000 --threads=2 --mysql-storage-engine=TidesDB prepare >/dev/null
st() { sql "SHOW GLOBAL STATUS LIKE 'Tidesdb_wal_$1'" | awk '{print $2}'; }
for wl in ${WORKLOADS:-oltp_write_only oltp_update_index oltp_delete}; do
  g0=$(st commit_groups) s0=$(st syncs)
  tps=$(sysbench $wl --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=4 --table-size=100000 --threads=${THREADS:-4} --time=${TIME:-10} \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}')
  g1=$(st commit_groups) s1=$(st syncs)
  awk -v w=$wl -v t=$tps -v g=$((g1-g0)) -v s=$((s1-s0)) -v time=${TIME:-10} \
    'BEGIN {printf "%s tps %.0f groups/txn %.3f syncs/txn %.3f\n", w, t, g/(t*time), s/(t*time)}'
done
stop_server
