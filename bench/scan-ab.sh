#!/usr/bin/env bash
# Usage: bench/scan-ab.sh BUILD_A BUILD_B [BUILD_C ...] [OUT_DIR]
#
# Two or more builds of the plugin (e.g. before and after a change of the read path; each a
# build directory holding plugin/ha_tidesdb.so, named A, B, C... in that order; a last
# argument without a plugin is OUT_DIR) against each other and against InnoDB on
# oltp_read_only's queries, one query type at a time, by
# default in the cached regime (2 GiB caches, relaxed durability). The data is loaded once
# (TidesDB and InnoDB, TABLES x ROWS) and every table optimized; then, ROUNDS times, the
# server is started with BUILD_A's plugin, then with BUILD_B's (and so on), on the same datadir; each
# start warms both engines up (not measured: every table read once through the primary key
# and the secondary index, InnoDB's buffer pool dump and load off, so that both start from
# empty caches; then a few seconds of oltp_read_only each) and runs every label for SLICE
# seconds per engine, the engines alternating. (Before session 25 InnoDB's buffer pool was
# reloaded at each start and TidesDB had only the few seconds to warm its block cache.)
#
# Labels (LABELS): simple / sum / order / distinct (four of that range query per
# transaction, 100 rows each), points (ten point selects), all (oltp_read_only's mix),
# rN (four simple ranges of N rows: r1 and r1000 separate the per-query cost from the
# per-row cost), rpoints / rranges (sysbench's select_random_points: ten secondary-key
# values by IN, rows read by primary key; select_random_ranges: COUNT over ten 5-value
# ranges of the secondary key, index only), or any sysbench OLTP workload by its name
# (oltp_update_index, ...: the writes change both engines' data alike).
#
# Per slice: transactions per second and the server's CPU per transaction (utime + stime
# of mariadbd over the slice, in ms), which moves less than throughput on a shared machine.
# Output: OUT_DIR/scan-ab.csv (round,build,label,engine,tps,cpu_ms_per_txn) and the same
# rows on stdout.
#
# Environment: TABLES [4], ROWS [100000], THREADS [2], SLICE seconds [8], ROUNDS [3],
#   LABELS ["r1 r1000 simple points all"], PORT [3397], CACHE [2G] (every engine's cache:
#   64M for data several times the caches), OPTIMIZE [1] (0: the tables stay as loaded, and
#   write workloads among the labels churn them between the reads), DURABILITY [relaxed]
#   (or durable: fsync per commit on every engine, bench/private-server.sh), OPTS_A,
#   OPTS_B, ... [none] (mariadbd options for the starts with that build only: one plugin
#   given twice with different settings, e.g.
#   OPTS_B=--tidesdb-unified-memtable-write-buffer-size=16M bench/scan-ab.sh build build),
#   CHURN [none] (WORKLOAD:SECONDS, e.g. oltp_write_only:30: that sysbench workload runs
#   once on each engine after the load, so that the tables every build then reads have the
#   shape writes leave, memtable entries and L0 files included, the same for every build).
set -euo pipefail
usage() {
  echo "usage: $0 BUILD_A BUILD_B [BUILD_C ...] [OUT_DIR]" >&2
  exit 2
}
BUILDS=()
OUT=$PWD/scan-ab-out
while [ $# -gt 0 ]; do
  if [ -f "$1/plugin/ha_tidesdb.so" ]; then
    BUILDS+=("$(cd "$1" && pwd)")
  elif [ $# -eq 1 ]; then
    OUT=$1
  else
    echo "scan-ab: $1/plugin/ha_tidesdb.so is missing" >&2
    exit 2
  fi
  shift
done
[ ${#BUILDS[@]} -ge 2 ] || usage
NAMES=(A B C D E F G H)
[ ${#BUILDS[@]} -le ${#NAMES[@]} ] || usage
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TABLES=${TABLES:-4} ROWS=${ROWS:-100000} THREADS=${THREADS:-2} SLICE=${SLICE:-8} ROUNDS=${ROUNDS:-3}
CACHE=${CACHE:-2G} OPTIMIZE=${OPTIMIZE:-1} DURABILITY=${DURABILITY:-relaxed}
LABELS=${LABELS:-r1 r1000 simple points all}
PORT=${PORT:-3397}
BUILD=${BUILDS[1]}
cd "$(dirname "$0")/.."
. bench/private-server.sh

sysbench_ro() { # engine time [workload] options... ; prints the transactions per second
  local engine=$1 time=$2 workload=oltp_read_only
  shift 2
  case ${1:-} in select_random_* | oltp_*) workload=$1 && shift ;; esac
  sysbench "$workload" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root \
    --mysql-db="sb_$engine" --tables="$TABLES" --table-size="$ROWS" --threads="$THREADS" \
    --time="$time" --mysql-ignore-errors=1213,1205,1020 "$@" run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}'
}

start_server "$CACHE" "$DURABILITY"
for engine in TidesDB InnoDB; do
  sql "CREATE DATABASE sb_$engine"
  sysbench oltp_read_only --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root \
    --mysql-db="sb_$engine" --tables="$TABLES" --table-size="$ROWS" --threads=2 \
    --mysql-storage-engine="$engine" prepare >/dev/null
  # One sorted run per table (TidesDB), rebuilt tables (InnoDB): every start of either build
  # then reads the same files, with no compaction left to run into a slice's CPU.
  if [ "$OPTIMIZE" = 1 ]; then
    for t in $(seq 1 "$TABLES"); do sql "OPTIMIZE TABLE sb_$engine.sbtest$t" >/dev/null; done
  fi
  if [ -n "${CHURN:-}" ]; then
    sysbench_ro "$engine" "${CHURN#*:}" "${CHURN%%:*}" >/dev/null
  fi
done
# Let flushes and compactions the load or the churn started finish before the first start.
[ -z "${CHURN:-}" ] || sleep 10
stop_server

none="--point_selects=0 --simple_ranges=0 --sum_ranges=0 --order_ranges=0 --distinct_ranges=0"
echo "round,build,label,engine,tps,cpu_ms_per_txn" | tee "$OUT/scan-ab.csv"
for round in $(seq 1 "$ROUNDS"); do
  for index in "${!BUILDS[@]}"; do
    build=${NAMES[$index]}
    ln -sfn "${BUILDS[$index]}/plugin/ha_tidesdb.so" "$PLUGINS/ha_tidesdb.so"
    opts_var=OPTS_$build
    # shellcheck disable=SC2086 # a list of options
    start_server "$CACHE" "$DURABILITY" ${!opts_var:-}
    read_tables "$TABLES" TidesDB InnoDB
    sysbench_ro TidesDB 5 >/dev/null
    sysbench_ro InnoDB 3 >/dev/null
    for label in $LABELS; do
      case $label in
        simple | sum | order | distinct) options="$none --${label}_ranges=4" ;;
        points) options="$none --point_selects=10" ;;
        all) options="" ;;
        r[0-9]*) options="$none --simple_ranges=4 --range_size=${label#r}" ;;
        rpoints) options="select_random_points" ;;
        rranges) options="select_random_ranges" ;;
        oltp_* | select_random_*) options="$label" ;;
        *)
          echo "scan-ab: unknown label '$label'" >&2
          exit 2
          ;;
      esac
      for engine in TidesDB InnoDB; do
        before=$(cpu_ticks)
        # shellcheck disable=SC2086 # options is a list of flags
        tps=$(sysbench_ro "$engine" "$SLICE" $options)
        after=$(cpu_ticks)
        cpu=$(ms_per_txn $((after - before)) "$tps" "$SLICE")
        echo "$round,$build,$label,$engine,$tps,$cpu" | tee -a "$OUT/scan-ab.csv"
      done
    done
    stop_server
  done
done
