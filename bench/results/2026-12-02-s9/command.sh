#!/usr/bin/env bash
# The exact command behind the "After session 9's read-path changes" section of
# bench/RESULTS.md (2026-12-02, 14:03-14:13 UTC): five read-heavy workloads, relaxed
# durability, both cache regimes, the same reduced sizes as bench/results/2026-12-02.
set -euo pipefail
OUT=bench/results/2026-12-02-s9
TABLES=8 ROWS=200000 THREAD_COUNTS="1 4" SLICE=4 ROUNDS=2 DURABILITIES=relaxed \
  WORKLOADS="oltp_point_select oltp_read_only select_random_points select_random_ranges oltp_update_non_index" \
  bench/sysbench-compare.sh build "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
