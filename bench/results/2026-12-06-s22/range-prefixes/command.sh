#!/usr/bin/env bash
# Session 22 (2026-12-06): what probing each filter prefix of a small range (be590c5) saves.
# Builds A (before) and B (after) on one datadir: 8 x 200k sysbench rows (uniform keys),
# 64 MiB caches, relaxed; after the load 20 s each of oltp_write_only, oltp_insert,
# oltp_delete and oltp_update_index (4 threads); then per round and build a restart, a
# warm-up and the same 20,000 select_random_ranges / select_random_points queries (1
# thread, fixed seed): block reads per query (block-cache hits + misses, deterministic) and
# the server's CPU per query (noisy). SERVER_OPTS: options for every start, e.g.
# --tidesdb-default-l0-compaction-size-ratio=0 (L0 files wait for four: a larger index's
# shape, several runs per range). Usage: command.sh BUILD_A BUILD_B OUT
set -euo pipefail
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) OUT=$3 PORT=${PORT:-3396}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../../.."
BUILD=$A
. bench/private-server.sh
TABLES=${TABLES:-8} ROWS=${ROWS:-200000} EVENTS=${EVENTS:-20000}
sb() {
  local w=$1
  shift
  sysbench "$w" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=sb \
    --tables="$TABLES" --table-size="$ROWS" --rand-type=uniform "$@"
}
blocks() {
  sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('tidesdb_block_cache_hits','tidesdb_block_cache_misses')" |
    awk '{s += $2} END {print s}'
}
# shellcheck disable=SC2086 # SERVER_OPTS is a list of options
start_server 64M relaxed ${SERVER_OPTS:-}
sql "CREATE DATABASE sb"
sb oltp_read_only --threads=2 --mysql-storage-engine=TidesDB prepare >/dev/null
for w in oltp_write_only oltp_insert oltp_delete oltp_update_index; do sb $w --threads=4 --time=20 run >/dev/null; done
sleep 10
sql "SELECT INDEX_NAME, SST_FILES, FILES_PER_LEVEL FROM information_schema.TIDESDB_COLUMN_FAMILIES
  WHERE TABLE_SCHEMA = 'sb' AND TABLE_NAME = 'sbtest1'" >"$OUT/shape.txt"
stop_server
for round in 1 2 3; do
  for b in A B; do
    dir=$A
    [ $b = B ] && dir=$B
    ln -sfn "$dir/plugin/ha_tidesdb.so" "$PLUGINS/ha_tidesdb.so"
    # shellcheck disable=SC2086
    start_server 64M relaxed ${SERVER_OPTS:-}
    sb select_random_ranges --threads=1 --events=3000 --time=0 --rand-seed=7 run >/dev/null
    for w in select_random_ranges select_random_points; do
      b0=$(blocks) c0=$(cpu_ticks)
      tps=$(sb $w --threads=1 --events="$EVENTS" --time=0 --rand-seed=11 run | awk '/transactions:/ {gsub(/\(/, "", $3); print $3}')
      b1=$(blocks) c1=$(cpu_ticks)
      awk -v r=$round -v b=$b -v w=$w -v b0="$b0" -v b1="$b1" -v c0="$c0" -v c1="$c1" -v n="$EVENTS" -v tps="$tps" \
        -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%s,%s,%s,%.2f,%.4f,%s\n", r, b, w, (b1 - b0) / n, (c1 - c0) * 1000 / hz / n, tps}' |
        tee -a "$OUT/blocks.csv"
    done
    stop_server
  done
done
