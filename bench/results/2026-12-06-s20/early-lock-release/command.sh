#!/usr/bin/env bash
# Session 20 (2026-12-06): durable commits release their locks before their WAL fsync
# (TransactionImpl::Commit: the write goes through the queue unsynced, then
# SyncWalThrough; acknowledged after the fsync). BASE is a build of f2304b6, NEW one with
# the change. Usage: command.sh BASE NEW
#  1. sysbench durable, the builds and InnoDB alternating on one datadir (bench/scan-ab.sh:
#     4 x 100k rows as loaded, 2 GiB caches, 4 threads, 8 s slices, ROUNDS rounds [2]);
#  2. the TPC-C-like workload durable, TidesDB with pessimistic locking and locking reads
#     on the latest row against InnoDB (2 warehouses, 4 threads, 15 s slices x 2 rounds),
#     NEW only: compare its ratio with tpcc-pessimistic-latest (BASE, the same day).
set -euo pipefail
BASE=$1 NEW=$2
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-06-s20/early-lock-release
LABELS="oltp_update_non_index oltp_update_index oltp_insert oltp_write_only" THREADS=4 SLICE=8 \
  ROUNDS=${ROUNDS:-2} OPTIMIZE=0 DURABILITY=durable bench/scan-ab.sh "$BASE" "$NEW" "$OUT/sysbench-durable"
/usr/bin/python3 bench/scan-ab-summary.py "$OUT/sysbench-durable/scan-ab.csv" \
  >"$OUT/sysbench-durable/scan-ab-summary.md"
mkdir -p "$OUT/tpcc-durable"
WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" DURABILITIES=durable \
  SERVER_OPTS="--tidesdb-pessimistic-locking=ON --tidesdb-locking-reads-latest=ON" \
  bench/tpcc-compare.sh "$NEW" "$OUT/tpcc-durable" >"$OUT/tpcc-durable/tpcc-compare.log" 2>&1
# Then (run by hand, in this order; SPIN is a build with the out-of-queue fsync's waiters
# spinning 50 us before they sleep, commit after b6b2b50):
#   bench/results/2026-12-06-s20/early-lock-release/tpcc-ab.sh BASE NEW       -> tpcc-ab.txt
#   LABELS="oltp_update_non_index oltp_update_index oltp_insert oltp_write_only" THREADS=4 \
#     SLICE=8 ROUNDS=3 OPTIMIZE=0 DURABILITY=durable bench/scan-ab.sh BASE NEW \
#     bench/results/2026-12-06-s20/early-lock-release/sysbench-durable-2
#   LABELS="oltp_update_non_index oltp_insert oltp_update_index" THREADS=4 SLICE=8 ROUNDS=2 \
#     OPTIMIZE=0 DURABILITY=durable bench/scan-ab.sh BASE NEW SPIN \
#     bench/results/2026-12-06-s20/early-lock-release/sysbench-durable-spin
#   the TPC-C run of step 2 with SPIN                                    -> tpcc-durable-spin/
# (each scan-ab directory's scan-ab-summary.md: bench/scan-ab-summary.py on its CSV)
