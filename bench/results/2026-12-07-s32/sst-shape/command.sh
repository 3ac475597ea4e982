#!/usr/bin/env bash
# Session 32: the SSTables the reads see, per level, after the matrix's 20 s oltp_write_only churn
# and after 10 s of select_random_ranges (8 x 200k rows, 2 GiB caches, relaxed, 4 threads),
# from information_schema.TIDESDB_SST_FILES and SHOW ENGINE TIDESDB STATUS. Run from the
# repository root. Usage: command.sh BUILD OUT
set -euo pipefail
BUILD=$1 OUT=$2 PORT=3398 ENGINE=TidesDB
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=8 --table-size=200000 --threads=2 --mysql-storage-engine=TidesDB prepare >/dev/null
sb() { sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=8 --table-size=200000 --threads=4 --rand-type=uniform --time="$2" run | awk '/transactions:/ {print $2, $3}'; }
echo churn "$(sb oltp_write_only 20)"
sql "SELECT TABLE_NAME, INDEX_NAME, LEVEL, COUNT(*), SUM(ENTRIES) FROM information_schema.TIDESDB_SST_FILES WHERE TABLE_NAME IN ('sbtest1','sbtest2') GROUP BY 1,2,3 ORDER BY 1,2,3" || sql "SELECT * FROM information_schema.TIDESDB_SST_FILES LIMIT 3"
echo rr "$(sb select_random_ranges 10)"
sql "SELECT TABLE_NAME, INDEX_NAME, LEVEL, COUNT(*), SUM(ENTRIES) FROM information_schema.TIDESDB_SST_FILES WHERE TABLE_NAME IN ('sbtest1','sbtest2') GROUP BY 1,2,3 ORDER BY 1,2,3" || true
sql "SHOW ENGINE TIDESDB STATUS" | head -60
