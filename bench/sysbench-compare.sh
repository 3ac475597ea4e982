#!/usr/bin/env bash
# Usage: bench/sysbench-compare.sh BUILD_DIR [OUT_DIR]
#
# sysbench's ten OLTP workloads on TidesDB, InnoDB and MyRocks in ONE private MariaDB server
# (the same binary, the same SQL; only the ENGINE clause differs), each engine on its own
# copy of the data (database sb_<engine>), over a matrix: cache regime x durability x
# workload x thread count. A slice is one workload at one thread count on one engine for
# SLICE seconds; engines alternate innermost (slice by slice), so that the machine's drift
# hits all of them alike, and ROUNDS repeat each (workload, threads) so that the ratios to
# InnoDB come with their spread across rounds. Each group of slices (one round of one
# workload at one thread count) starts with the next engine in turn, so that no engine
# always runs right after the same other one (whose background work spills into it); the
# first slice waits until the server is quiet after the load (at most 180 s).
#
# Regimes, the same data in both, the server restarted between them with every engine's
# cache set (innodb_buffer_pool_size, tidesdb_block_cache_size with a 64 MiB tidesdb
# memtable, rocksdb_block_cache_size):
#   small  64 MiB: the data (TABLES=8 x ROWS=500000: 0.7-0.9 GiB per engine, going by the
#          285-377 MiB of 8 x 200,000 rows) is many times the caches
#   large  2 GiB: caches larger than the data (a fixed 2G, not derived from TABLES x ROWS:
#          raise it by hand beyond ~8 x 1,000,000 rows)
# Durabilities (bench/private-server.sh's start_server sets the same on every engine):
#   relaxed  no fsync per commit, every commit written to the OS
#   durable  fsync per commit (group commit allowed)
# The server restarts for each regime x durability; the data is loaded once, at the first
# start (under the first regime and durability), and the datadir persists across restarts.
# After each start every engine's tables are read once (full scan of the primary key and of
# the secondary index k_N; not measured) so that no engine starts colder than another, and
# InnoDB's buffer pool dump/load at shutdown/startup is off for the same reason.
# Binary log off. oltp_insert adds rows and oltp_delete deletes and re-inserts them: every
# engine runs the same sequence of slices, but a faster engine inserts more rows, so its
# tables are that much larger for the later workloads.
#
# Per slice: throughput (sysbench's transactions per second), p95 and p99 latency (both
# read from sysbench's --histogram, the buckets its own --percentile uses; sysbench's p99
# line is the fallback), retried conflicts (sysbench's "ignored errors": deadlock 1213,
# lock wait timeout 1205, and 1020), bytes the server process wrote to storage
# (/proc/PID/io write_bytes) and its CPU ticks (utime + stime) over the slice. Background
# work (flushes, compaction, purge) started by one engine's slice can land in the next
# engine's slice: the bytes and CPU are the server's, not the engine's.
#
# Environment: TABLES [8], ROWS [500000], THREAD_COUNTS ["1 2 4"], SLICE seconds [10],
#   ROUNDS [2], ENGINES ["TidesDB InnoDB RocksDB"], REGIMES ["small large"],
#   DURABILITIES ["relaxed durable"], WORKLOADS [all ten], LOAD_THREADS [4], WARMUP [1],
#   PORT [3390], QUICK=1 (2 tables x 20k rows, threads "1 4", 2 s slices, one round, four
#   workloads: point_select, read_write, insert, delete; a few minutes).
# Output, in OUT_DIR (default BUILD_DIR/bench-sysbench/<date>):
#   sysbench.csv          one line per slice:
#                           regime,cache,durability,threads,round,workload,engine,
#                           transactions,tps,p95_ms,p99_ms,errors,bytes_written,cpu_ticks,seconds
#                         (errors = retried conflicts; cpu_ticks in 1/CLK_TCK s, 100 per s on
#                         Linux; seconds = sysbench's measured total time; tps 0 = failed)
#   sysbench-loads.csv    engine,threads,seconds,rows (sysbench prepare, timed by the client)
#   sysbench-sizes.csv    regime,durability,stage,engine,table_bytes,disk_bytes: stage "load"
#                         after the load, "after" after each regime x durability's runs;
#                         table_bytes = SUM(DATA_LENGTH + INDEX_LENGTH) (each engine's own
#                         estimate), disk_bytes = blocks allocated by the engine's files
#                         (du): InnoDB sb_InnoDB/*.ibd (not the shared redo log, undo and
#                         system tablespace), TidesDB #tidesdb/, MyRocks #rocksdb/ (both
#                         with their WAL)
#   sysbench-summary.md   the tables of bench/sysbench-summary.py
#   sysbench-failures.log the last lines of any slice sysbench could not complete
#   server.err, install-db.log
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$BUILD/bench-sysbench/$(date +%Y%m%d-%H%M%S)}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${QUICK:-0}" = 1 ]; then
  : "${TABLES:=2}" "${ROWS:=20000}" "${SLICE:=2}" "${ROUNDS:=1}" "${THREAD_COUNTS:=1 4}"
  : "${WORKLOADS:=oltp_point_select oltp_read_write oltp_insert oltp_delete}"
fi
TABLES=${TABLES:-8}
ROWS=${ROWS:-500000}
THREAD_COUNTS=${THREAD_COUNTS:-"1 2 4"}
SLICE=${SLICE:-10}
ROUNDS=${ROUNDS:-2}
ENGINES=${ENGINES:-"TidesDB InnoDB RocksDB"}
REGIMES=${REGIMES:-"small large"}
DURABILITIES=${DURABILITIES:-"relaxed durable"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only oltp_write_only oltp_read_write oltp_insert oltp_update_index oltp_update_non_index oltp_delete select_random_points select_random_ranges"}
LOAD_THREADS=${LOAD_THREADS:-4}
WARMUP=${WARMUP:-1}
PORT=${PORT:-3390}

mkdir -p "$OUT"
. "$(dirname "${BASH_SOURCE[0]}")/private-server.sh"

cache_of() {
  case $1 in
    small) echo 64M ;;
    large) echo 2G ;;
    *)
      echo "sysbench-compare: unknown regime '$1' (small or large)" >&2
      exit 2
      ;;
  esac
}
sb() { # engine threads workload args...
  local engine=$1 threads=$2 workload=$3
  shift 3
  sysbench --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db="sb_$engine" \
    --tables="$TABLES" --table-size="$ROWS" --threads="$threads" --rand-type=uniform \
    --mysql-storage-engine="$engine" --mysql-ignore-errors=1213,1205,1020 "$workload" "$@"
}
# The value of the first histogram bucket at which the cumulative count reaches PCT percent
# of all events (how sysbench computes its own --percentile), from a run's --histogram.
hist_pct() { # pct <log
  awk -v pct="$1" 'BEGIN { n = 0; total = 0 }
    /^ *[0-9.]+ \|/ { value[n] = $1; count[n] = $NF; total += $NF; n++ }
    END {
      sum = 0
      for (i = 0; i < n; i++) {
        sum += count[i]
        if (sum >= total * pct / 100) { print value[i]; exit }
      }
    }'
}
table_bytes() {
  sql "SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES
       WHERE TABLE_SCHEMA = 'sb_$1'"
}
disk_bytes() {
  local files
  case $1 in
    InnoDB) files=("$DATA"/sb_InnoDB/*.ibd) ;;
    TidesDB) files=("$DATA/#tidesdb") ;;
    RocksDB) files=("$DATA/#rocksdb") ;;
    *) files=("$DATA/sb_$1") ;;
  esac
  { du -s -B1 -c "${files[@]}" 2>/dev/null || true; } | awk 'END {print $1 + 0}'
}
record_sizes() { # regime durability stage
  for engine in $ENGINES; do
    echo "$1,$2,$3,$engine,$(table_bytes "$engine"),$(disk_bytes "$engine")" >>"$OUT/sysbench-sizes.csv"
  done
}
now() { date +%s.%N; }

echo "regime,cache,durability,threads,round,workload,engine,transactions,tps,p95_ms,p99_ms,errors,bytes_written,cpu_ticks,seconds" \
  >"$OUT/sysbench.csv"
echo "engine,threads,seconds,rows" >"$OUT/sysbench-loads.csv"
echo "regime,durability,stage,engine,table_bytes,disk_bytes" >"$OUT/sysbench-sizes.csv"
: >"$OUT/sysbench-failures.log"
loaded=0
group=0 # slice groups so far: each starts with the next engine in turn (rotated)
for regime in $REGIMES; do
  cache=$(cache_of "$regime")
  for durability in $DURABILITIES; do
    start_server "$cache" "$durability" --skip-log-bin
    if [ "$loaded" = 0 ]; then
      for engine in $ENGINES; do
        sql "CREATE DATABASE sb_$engine"
        t0=$(now)
        sb "$engine" "$LOAD_THREADS" oltp_read_write prepare >"$OUT/prepare-$engine.log" 2>&1
        t1=$(now)
        seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
        echo "$engine,$LOAD_THREADS,$seconds,$((TABLES * ROWS))" >>"$OUT/sysbench-loads.csv"
        echo "load $engine: $seconds s"
      done
      record_sizes "$regime" "$durability" load
      loaded=1
      echo "after the load, the server was quiet after $(wait_quiet 180) s"
    fi
    # shellcheck disable=SC2086 # ENGINES is a list of words
    if [ "$WARMUP" = 1 ]; then read_tables "$TABLES" $ENGINES; fi
    for workload in $WORKLOADS; do
      for threads in $THREAD_COUNTS; do
        for round in $(seq 1 "$ROUNDS"); do
          # shellcheck disable=SC2086 # ENGINES is a list of words
          for engine in $(rotated "$group" $ENGINES); do
            io0=$(io_written)
            c0=$(cpu_ticks)
            log=$(sb "$engine" "$threads" "$workload" --time="$SLICE" --percentile=99 --histogram=on run 2>&1) || true
            io1=$(io_written)
            c1=$(cpu_ticks)
            txns=$(sed -n 's/.*transactions: *\([0-9]*\) *(.*/\1/p' <<<"$log")
            tps=$(sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' <<<"$log")
            errors=$(sed -n 's/.*ignored errors: *\([0-9]*\).*/\1/p' <<<"$log")
            seconds=$(sed -n 's/.*total time: *\([0-9.]*\)s.*/\1/p' <<<"$log")
            p95=$(hist_pct 95 <<<"$log")
            p99=$(hist_pct 99 <<<"$log")
            [ -n "$p99" ] || p99=$(sed -n 's/.*99th percentile: *\([0-9.]*\).*/\1/p' <<<"$log")
            echo "$regime,$cache,$durability,$threads,$round,$workload,$engine,${txns:-0},${tps:-0},${p95:-0},${p99:-0},${errors:-0},$((io1 - io0)),$((c1 - c0)),${seconds:-$SLICE}" \
              >>"$OUT/sysbench.csv"
            echo "$regime $durability $workload ${threads}t round $round $engine: ${tps:-FAILED} tps," \
              "p95 ${p95:-?} ms, p99 ${p99:-?} ms, retries ${errors:-?}"
            if [ -z "$tps" ]; then
              {
                echo "== $regime $durability $workload ${threads}t round $round $engine"
                tail -n 20 <<<"$log"
              } >>"$OUT/sysbench-failures.log"
              tail -n 5 <<<"$log" >&2
            fi
          done
          group=$((group + 1))
        done
      done
    done
    record_sizes "$regime" "$durability" after
    stop_server
  done
done
/usr/bin/python3 "$ROOT/bench/sysbench-summary.py" "$OUT" >"$OUT/sysbench-summary.md"
cat "$OUT/sysbench-summary.md"
