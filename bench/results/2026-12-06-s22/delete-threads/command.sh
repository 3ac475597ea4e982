#!/usr/bin/env bash
# Session 22: where cached oltp_delete's server CPU goes (8 x 200k, 2 GiB, relaxed, 4 threads,
# after 20 s of oltp_write_only and a 5 s warm-up), one engine per server. MODE=threads:
# CPU ticks per server thread over 15 s of the workload (/proc/PID/task/*/stat; the thread
# names tell TidesDB's tdb-* background threads from the connections). MODE=syscalls:
# context switches and system calls over 14 s (perf stat). The README's numbers come from
# one run per engine and mode. Usage: ENGINE=TidesDB|InnoDB MODE=threads|syscalls command.sh BUILD OUT
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
snap() { # tid name ticks, per thread of the server
  for t in /proc/$SERVER_PID/task/*; do
    echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"
  done
}
echo churn "$(sb oltp_write_only 20)"
echo warm "$(sb oltp_delete 5)"
case ${MODE:-threads} in
  threads)
    snap >"$OUT/before"
    echo run "$(sb oltp_delete 15)"
    snap >"$OUT/after"
    join <(sort "$OUT/before") <(sort "$OUT/after") | awk '{print $1, $2, $5 - $3}' | sort -k3 -n -r \
      >"$OUT/oltp_delete.$ENGINE.threads.txt"
    ;;
  syscalls)
    perf stat -e context-switches,syscalls:sys_enter_sched_yield,syscalls:sys_enter_futex \
      -e syscalls:sys_enter_pwrite64,syscalls:sys_enter_write,syscalls:sys_enter_poll \
      -p "$SERVER_PID" -o "$OUT/oltp_delete.$ENGINE.stat" -- sleep 14 &
    perf_pid=$!
    echo run "$(sb oltp_delete 15)"
    wait "$perf_pid" # not the server, also a child of this shell
    ;;
esac
stop_server
