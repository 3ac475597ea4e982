#!/usr/bin/env bash
# Session 22: per-thread CPU of the server during cached oltp_delete (8 x 200k, 2 GiB, relaxed,
# 4 threads, after 20 s of oltp_write_only): /proc/PID/task/*/stat before and after 15 s.
# Usage: ENGINE=TidesDB|InnoDB tasks.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=8 ROWS=200000
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine=$ENGINE prepare >/dev/null
sb() {
  sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=$TABLES --table-size=$ROWS --threads=${THREADS:-4} --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2, $3}'
}
snap() { for t in /proc/$SERVER_PID/task/*; do echo "$(basename $t) $(cat $t/comm | tr ' ' _) $(awk '{print $14+$15}' $t/stat)"; done; }
echo churn $(sb oltp_write_only 20)
for w in ${WORKLOADS:-oltp_delete}; do
  echo warm $w $(sb $w 5)
  snap > $OUT/before
  echo run $w $(sb $w 15)
  snap > $OUT/after
  join <(sort $OUT/before) <(sort $OUT/after) | awk '{d=$5-$3; if (d>0) s[$2]+=d; tot+=d} END {for (n in s) printf "%s %d ticks %.1f%%\n", n, s[n], 100*s[n]/tot}' | sort -k2 -n -r > $OUT/$w.$ENGINE.threads.txt
  cat $OUT/$w.$ENGINE.threads.txt
done
stop_server
