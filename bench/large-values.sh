#!/usr/bin/env bash
# Usage: bench/large-values.sh BUILD_DIR [OUT_DIR]
#
# Large values side by side: TidesDB, InnoDB and MyRocks in ONE private MariaDB server, each
# with a table lv_<engine>.t (id INT PRIMARY KEY, k INT NOT NULL, small VARCHAR(64) NOT NULL,
# payload LONGBLOB NOT NULL, KEY (k)) of DATA_MB MiB of payloads, 64 KiB - 2 MiB per row
# (log-uniform, deterministic per id from a seed; a random block of up to 128 KiB repeated:
# nothing for LZ4 / Snappy / zlib to compress, zstd finds the repeats of rows over 128 KiB),
# against caches of CACHE (the data 8x the caches by default). Engines alternate slice by
# slice (the load in LOAD_CHUNKS chunks, each engine's chunk in turn), so that the machine's
# drift hits all alike. bench/large_values.py is the client (pymysql, THREADS threads with one
# connection each; writes are server-side prepared statements carrying raw bytes). It
# measures, per engine:
#   load        rows/s, MB/s, per-insert p50/p99, bytes written per byte loaded, size after;
#   read_full   SELECT payload BY id, uniform and zipfian (theta 0.99): ops/s, p50, p99;
#   read_small  SELECT small, k BY id, uniform: ops/s, p50, p99;
#   update      payload (a new blob of the same size) and small BY id: ops/s, p50, p99,
#               bytes written per update;
#   optimize    OPTIMIZE TABLE after the updates: seconds, size before and after.
# Latencies are the client's (time.perf_counter per statement). Bytes written are the
# server's /proc write_bytes over the slice plus a settle after each write slice (InnoDB's
# dirty pages and MyRocks' memtable forced out, then until the server goes quiet; the settle
# is not timed; see large_values.py). Sizes are information_schema DATA_LENGTH + INDEX_LENGTH,
# with the engine's files beside them for a cross-check (one table per engine, so the files
# are the table's: TidesDB key logs, value logs and WAL; MyRocks .sst and WAL; InnoDB t.ibd).
# TidesDB's DATA_LENGTH counts its key logs and memtable only, not the value logs that hold
# values of 1 KiB and more, so for these rows read its files. Every value read is checked
# for its length, every 8th byte for byte against the generator, and after the load, the
# updates and OPTIMIZE a sample of rows is read back whole (and hashed by the server); a
# mismatch fails the run.
#
# Environment: DATA_MB [2048], CACHE [256M], THREADS [2], SLICE seconds [20], ROUNDS [2],
#   ENGINES ["TidesDB InnoDB RocksDB"], DURABILITY [relaxed] (or durable, private-server.sh),
#   LOAD_CHUNKS [4], SETTLE_MAX seconds [120], SEED [42], PORT [3394], SERVER_OPTS [""] (more
#   mariadbd options, e.g. --innodb-flush-method=fsync: InnoDB reads with O_DIRECT by default,
#   bypassing the OS page cache that TidesDB's and MyRocks' reads go through),
#   QUICK=1 (DATA_MB=200, CACHE=32M, SLICE=3, ROUNDS=1, SETTLE_MAX=30: a few minutes).
# Output: OUT_DIR/large-values.csv (one line per slice:
#   round,engine,test,access,ops,ops_per_sec,p50_ms,p99_ms,bytes_written,size_bytes,seconds;
#   test load|read_full|read_small|update|optimize, access uniform|zipfian|-; for load, round
#   is the chunk; for optimize, ops is 1 and p50 = p99 = its duration),
#   OUT_DIR/large-values-extra.csv (per slice: payload bytes moved, client CPU %, server CPU
#   ticks, bytes read from storage, the engine's data file bytes and a breakdown by kind, settle
#   seconds), OUT_DIR/large-values-summary.md (a table
#   per test, ratios to InnoDB with min..max over rounds), OUT_DIR/run.log, tables.txt,
#   optimize.txt, tidesdb-status.txt, server-settings.txt, server.err; default OUT_DIR is
#   BUILD_DIR/bench-large-values/<date>.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$BUILD/bench-large-values/$(date +%Y%m%d-%H%M%S)}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${QUICK:-0}" = 1 ]; then
  : "${DATA_MB:=200}" "${CACHE:=32M}" "${SLICE:=3}" "${ROUNDS:=1}" "${SETTLE_MAX:=30}"
fi
export DATA_MB=${DATA_MB:-2048}
CACHE=${CACHE:-256M}
export THREADS=${THREADS:-2}
export SLICE=${SLICE:-20}
export ROUNDS=${ROUNDS:-2}
export ENGINES=${ENGINES:-"TidesDB InnoDB RocksDB"}
DURABILITY=${DURABILITY:-relaxed}
export LOAD_CHUNKS=${LOAD_CHUNKS:-4}
export SETTLE_MAX=${SETTLE_MAX:-120}
export SEED=${SEED:-42}
PORT=${PORT:-3394}
SERVER_OPTS=${SERVER_OPTS:-}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/private-server.sh"
# shellcheck disable=SC2086 # SERVER_OPTS is a list of options
start_server "$CACHE" "$DURABILITY" --max-allowed-packet=64M --skip-log-bin $SERVER_OPTS
echo "large-values: DATA_MB=$DATA_MB CACHE=$CACHE THREADS=$THREADS SLICE=$SLICE ROUNDS=$ROUNDS" \
  "DURABILITY=$DURABILITY ENGINES=\"$ENGINES\" SERVER_OPTS=\"$SERVER_OPTS\" out $OUT" | tee "$OUT/run.log"
for v in version max_allowed_packet innodb_buffer_pool_size innodb_doublewrite innodb_flush_method \
  tidesdb_block_cache_size tidesdb_default_compression rocksdb_block_cache_size rocksdb_use_direct_reads \
  rocksdb_default_cf_options; do
  echo "$v = $(sql "SELECT @@$v" 2>&1 || true)"
done >"$OUT/server-settings.txt"
SOCK=$SOCK SERVER_PID=$SERVER_PID DATA=$DATA /usr/bin/python3 "$ROOT/bench/large_values.py" run "$OUT" \
  2>&1 | tee -a "$OUT/run.log"
# The compression MyRocks' column families were opened with (its LOG writes the options).
grep -h -m 3 -E 'Options\.(compression|bottommost_compression|enable_blob_files):' "$DATA/#rocksdb/LOG" \
  >>"$OUT/server-settings.txt" 2>/dev/null || true
stop_server
