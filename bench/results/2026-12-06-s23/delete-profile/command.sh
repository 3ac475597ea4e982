#!/usr/bin/env bash
# Cached oltp_delete (or WORKLOAD, session 24), one engine per server (8 x 200k, 2 GiB,
# relaxed, 4 threads, after 20 s of oltp_write_only and a 5 s warm-up), measured one way
# per run:
#   MODE=profile  (default; session 23) perf record -e cpu-clock (FREQ samples a second,
#                 default 1999) for 12 s, reported by DSO
#                 and symbol (CALLGRAPH=fp or dwarf,SIZE records call chains too; KEEP=1
#                 keeps perf.ENGINE.data)
#   MODE=mallocs  (session 23) the server's malloc calls per event over 12 s (after
#                 `perf probe -x <libc.so.6> malloc`)
#   MODE=threads  (session 22) CPU ticks per server thread over 15 s (/proc/PID/task/*/stat;
#                 the names tell TidesDB's tdb-* background threads from the connections)
#   MODE=syscalls (session 22) context switches and system calls over 14 s (perf stat)
# Session 22's delete-threads/command.sh runs this with MODE=threads or syscalls.
# CACHE (session 26) sets every engine's cache (default 2G; 64M for the small-cache regime).
# THREADS (session 31) sets the run's client threads (default 4; the churn's too).
# CHURN_SECONDS (session 28) sets the oltp_write_only churn before the run (default 20; 0:
# none, the tables as loaded).
# WARM_SECONDS (session 32) sets the warm-up run of WORKLOAD before the measured one (default 5).
# Usage: ENGINE=TidesDB|InnoDB [MODE=...] [WORKLOAD=oltp_delete] [CACHE=2G] command.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2 PORT=${PORT:-3399}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
TABLES=8 ROWS=200000 WORKLOAD=${WORKLOAD:-oltp_delete}
start_server "${CACHE:-2G}" relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=$TABLES --table-size=$ROWS --threads=2 --mysql-storage-engine="$ENGINE" prepare >/dev/null
sb() {
  sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=$TABLES --table-size=$ROWS --threads=${THREADS:-4} --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2, $3}'
}
[ "${CHURN_SECONDS:-20}" = 0 ] || echo churn "$(sb oltp_write_only "${CHURN_SECONDS:-20}")"
echo warm "$(sb "$WORKLOAD" "${WARM_SECONDS:-5}")"
snap() { # tid name ticks, per thread of the server
  for t in "/proc/$SERVER_PID/task/"*; do
    echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"
  done
}
case ${MODE:-profile} in
  profile)
    # SYSTEM_WIDE=1 (session 25) samples every CPU (-a) and reports the server's samples
    # only: per-process events (-p) are switched at each of the server threads' context
    # switches, which slows the engine that switches more.
    target=(-p "$SERVER_PID") only=()
    [ -z "${SYSTEM_WIDE:-}" ] || target=(-a) only=(--pid "$SERVER_PID")
    perf record -e cpu-clock -F "${FREQ:-1999}" ${CALLGRAPH:+--call-graph=$CALLGRAPH} "${target[@]}" \
      -o "$OUT/perf.$ENGINE.data" -- sleep 12 2>/dev/null &
    perf_pid=$!
    echo run "$(sb "$WORKLOAD" 13)"
    wait "$perf_pid" # not the server, also a child of this shell
    perf report -i "$OUT/perf.$ENGINE.data" "${only[@]}" --no-children --sort dso,sym --percent-limit 0.3 --stdio 2>/dev/null |
      grep -v '^#' | grep -v '^$' >"$OUT/$WORKLOAD.$ENGINE.profile.txt"
    perf report -i "$OUT/perf.$ENGINE.data" "${only[@]}" --no-children --sort dso --stdio 2>/dev/null |
      grep -v '^#' | grep -v '^$' >"$OUT/$WORKLOAD.$ENGINE.dso.txt"
    [ -n "${KEEP:-}" ] || rm -f "$OUT/perf.$ENGINE.data"
    ;;
  mallocs)
    perf stat -e probe_libc:malloc -x, -p "$SERVER_PID" -o "$OUT/mallocs.$ENGINE.csv" -- sleep 12 &
    perf_pid=$!
    run=$(sb "$WORKLOAD" 13)
    wait "$perf_pid"
    calls=$(awk -F, '/probe_libc:malloc/ {print $1}' "$OUT/mallocs.$ENGINE.csv")
    echo "run $run; malloc calls in 12 s: $calls, per event:" \
      "$(awk -v c="$calls" -v r="${run#* (}" 'BEGIN {printf "%.1f", c / (r * 12)}')"
    ;;
  threads)
    snap >"$OUT/before"
    echo run "$(sb "$WORKLOAD" 15)"
    snap >"$OUT/after"
    join <(sort "$OUT/before") <(sort "$OUT/after") | awk '{print $1, $2, $5 - $3}' | sort -k3 -n -r \
      >"$OUT/$WORKLOAD.$ENGINE.threads.txt"
    ;;
  syscalls)
    perf stat -e context-switches,syscalls:sys_enter_sched_yield,syscalls:sys_enter_futex \
      -e syscalls:sys_enter_pwrite64,syscalls:sys_enter_write,syscalls:sys_enter_poll \
      -p "$SERVER_PID" -o "$OUT/$WORKLOAD.$ENGINE.stat" -- sleep 14 &
    perf_pid=$!
    echo run "$(sb "$WORKLOAD" 15)"
    wait "$perf_pid"
    ;;
  *)
    echo "unknown MODE '$MODE' (profile, mallocs, threads or syscalls)" >&2
    exit 2
    ;;
esac
stop_server
