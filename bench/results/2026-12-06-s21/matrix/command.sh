#!/usr/bin/env bash
# Session 21 (2026-12-06), plugin at 453874c (everything through session 20: durable commits
# that release their locks before the fsync, the L0 size-ratio 4, prefix filters, ...): the
# reduced matrix of 2026-12-02 again, all three engines, both cache regimes, both
# durabilities, 1 and 4 threads, 2 rounds of 5 s slices, so that the headline tables of
# bench/RESULTS.md describe the current engine. Run from the repository root; BUILD is a
# build directory whose plugin/ha_tidesdb.so is the plugin to measure.
set -euo pipefail
BUILD=${1:-build}
OUT=bench/results/2026-12-06-s21/matrix
git rev-parse HEAD >"$OUT/commit"
sha256sum "$BUILD/plugin/ha_tidesdb.so" | cut -d' ' -f1 >"$OUT/plugin.sha256"
TABLES=8 ROWS=200000 THREAD_COUNTS="1 4" SLICE=5 ROUNDS=2 \
  bench/sysbench-compare.sh "$BUILD" "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
/usr/bin/python3 bench/plot.py "$OUT"  # the summary is written by sysbench-compare.sh
