#!/usr/bin/env bash
# Session 15 (2026-12-03): where a cached update's CPU goes, TidesDB against InnoDB, by
# shared object. 1 x 100k rows, 2 GiB caches, relaxed, oltp_update_index (or WL) at 4 threads;
# each engine warmed up 5 s, then `perf record -e cpu-clock -F 999 -g -p <mariadbd>` for
# 10 s while sysbench runs on it alone; samples per 1000 transactions (at 999 Hz one
# sample is about 1 ms of CPU, so samples per 1000 transactions ~ microseconds per
# transaction). InnoDB is linked into mariadbd, so its engine share is mariadbd's minus
# the server's own (mariadbd's share in TidesDB's run). Then the kernel's context switches
# by the system call that led to them (perf script, the frame after
# entry_SYSCALL_64_after_hwframe). Needs perf (linux-perf) and root.
# Usage: [WL=workload] command.sh BUILD (a build directory: BUILD/plugin/ha_tidesdb.so), absolute path.
set -euo pipefail
BUILD=$1 OUT=$(mktemp -d) PORT=3397 WL=${WL:-oltp_update_index}
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
start_server 2G relaxed
for engine in TidesDB InnoDB; do
  sql "CREATE DATABASE sb_$engine"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root \
    --mysql-db="sb_$engine" --tables=1 --table-size=100000 --threads=2 \
    --mysql-storage-engine="$engine" prepare >/dev/null
done
run() {
  sysbench $WL --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$1" \
    --tables=1 --table-size=100000 --threads=4 --rand-type=uniform --time="$2" run |
    awk '/transactions:/ {print $2}'
}
run TidesDB 5 >/dev/null
run InnoDB 5 >/dev/null
for e in TidesDB InnoDB; do
  perf record -e cpu-clock -F 999 -g -p "$SERVER_PID" -o "$OUT/perf-$e.data" -- sleep 10 >/dev/null 2>&1 &
  pp=$!
  n=$(run $e 10)
  while kill -0 $pp 2>/dev/null; do sleep 1; done
  echo "$e transactions=$n"
  perf report -i "$OUT/perf-$e.data" --no-children --sort dso --stdio -g none -n 2>/dev/null | grep "%" |
    head -6 | awk -v n="$n" '{printf "  %-20s samples per 1000 txn %.2f\n", $3, $2 * 1000 / n}'
  echo "  context switches (finish_task_switch samples per 1000 txn) by system call:"
  perf script -i "$OUT/perf-$e.data" 2>/dev/null | awk -v n="$n" '
    /^mariadbd/ { s = 1; first = ""; call = ""; next }
    s && NF == 0 { if (first ~ /finish_task_switch/) c[call == "" ? "(interrupt)" : call]++; s = 0; next }
    s { if (first == "") first = $2; if (prev ~ /entry_SYSCALL_64_after_hwframe/ && call == "") call = $2; prev = $2 }
    END { for (k in c) printf "    %-32s %.2f\n", k, c[k] * 1000 / n }' | sort -k2 -rn | head -6
done
stop_server
rm -rf "$OUT"
