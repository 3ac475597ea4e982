#!/usr/bin/env bash
# Session 34 (2026-12-07), plugin at 6253981 (memtable arenas on huge pages, point lookups
# without a block iterator): the large regime only (2 GiB caches), relaxed, 4 threads, the read rows and
# the two mixed rows session 32 found behind InnoDB, 4 rounds of 8 s slices, three engines
# rotated, 8 x 200k rows: the same settings as session 32's large-4threads run, so the
# ratios compare with its rows. Run from the repository root.
# Usage: command.sh BUILD [OUT]
set -euo pipefail
BUILD=$1
OUT=${2:-bench/results/2026-12-07-s34/large-4threads}
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit"
REGIMES=large DURABILITIES=relaxed THREAD_COUNTS=4 ROUNDS=4 SLICE=8 TABLES=8 ROWS=200000 \
  WORKLOADS="oltp_point_select oltp_read_only select_random_points select_random_ranges oltp_update_non_index oltp_read_write" \
  bench/sysbench-compare.sh "$BUILD" "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
