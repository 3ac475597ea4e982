#!/usr/bin/env bash
# Session 19 (2026-12-05): does backing the memtable's arena with 2 MiB transparent huge
# pages help the cached write workloads, whose profiles (session 18) spend 9-14% in the
# skip list's FindSpliceForLevel / FindGreaterOrEqual, most of it cache and TLB misses?
# BASE is a build of cc1051b; HUGE is the same commit with huge-pages.patch applied (not
# committed): arena blocks of 1 MiB or more come from aligned_alloc(2 MiB) + madvise
# (MADV_HUGEPAGE), and a memtable's block size may reach 2 MiB - 64. This machine's THP
# setting is "madvise"; kvbench's RSS showed 280 MiB of AnonHugePages with the patch.
# Usage: command.sh BASE HUGE
set -euo pipefail
BASE=$1 HUGE=$2
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-05-s19/memtable-huge-pages
# SQL: both builds and InnoDB on one datadir, 4 x 100k rows, 2 GiB caches, relaxed, 4 threads.
LABELS="oltp_update_index oltp_delete oltp_update_non_index oltp_write_only rpoints" THREADS=4 \
  SLICE=8 ROUNDS=2 OPTIMIZE=0 bench/scan-ab.sh "$BASE" "$HUGE" "$OUT"
/usr/bin/python3 bench/scan-ab-summary.py "$OUT/scan-ab.csv" >"$OUT/scan-ab-summary.md"
# Library: the memtable alone (2M random keys held in a 1 GiB memtable), alternating builds.
for r in 1 2 3; do
  for b in "$BASE" "$HUGE"; do
    echo "== round $r $b"
    "$b/tools/kvbench/kvbench" --engines=tidesdb --num=2000000 --write_buffer_mb=1024 \
      --preload_flush=0 --workloads=fillrandom,readrandom --reads=2000000 | grep -E "^(fillrandom|readrandom) "
  done
done | tee "$OUT/kvbench-memtable.txt"
