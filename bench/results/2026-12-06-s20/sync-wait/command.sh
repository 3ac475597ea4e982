#!/usr/bin/env bash
# Session 20 (2026-12-06): writers queued behind a commit group whose WAL fsync is slower
# than their 50 us spin sleep at once instead of spinning (db_impl_write.cc,
# WaitWithoutSpinning). BASE is a build of f2304b6, NEW one with the change. Durable
# (fsync per commit on every engine), 2 GiB caches, 4 x 100k rows as loaded, 4 threads,
# the builds and InnoDB alternating on one datadir, 8 s slices, ROUNDS rounds (default 3);
# then the same in relaxed durability for the write workloads, where nothing should move.
# Usage: command.sh BASE NEW
set -euo pipefail
BASE=$1 NEW=$2
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-06-s20/sync-wait
LABELS="oltp_update_non_index oltp_update_index oltp_insert oltp_write_only" THREADS=4 SLICE=8 \
  ROUNDS=${ROUNDS:-3} OPTIMIZE=0 DURABILITY=durable bench/scan-ab.sh "$BASE" "$NEW" "$OUT/durable"
/usr/bin/python3 bench/scan-ab-summary.py "$OUT/durable/scan-ab.csv" >"$OUT/durable/scan-ab-summary.md"
