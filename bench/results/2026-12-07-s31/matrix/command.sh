#!/usr/bin/env bash
# Session 31 (2026-12-07), plugin at 2fb6599 (everything through session 30, its blocked
# SSTable filters included): session 21's reduced matrix again (all three engines, both
# cache regimes, both durabilities, 1 and 4 threads, 2 rounds of 5 s slices, 8 x 200k rows),
# with session 23's rotated slice order and quiet start, so that the headline tables of
# bench/RESULTS.md describe the current engine. Run from the repository root; BUILD is a
# build directory whose plugin/ha_tidesdb.so is the plugin to measure (default build).
set -euo pipefail
BUILD=${1:-build}
# sysbench, and matplotlib for bench/plot.py (added after the run, which drew its plots
# afterwards with the same plot.py once matplotlib was installed)
scripts/install-deps.sh --bench
OUT=${OUT:-bench/results/2026-12-07-s31/matrix}
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit"
sha256sum "$BUILD/plugin/ha_tidesdb.so" | cut -d' ' -f1 >"$OUT/plugin.sha256"
TABLES=8 ROWS=200000 THREAD_COUNTS="1 4" SLICE=5 ROUNDS=2 \
  bench/sysbench-compare.sh "$BUILD" "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
/usr/bin/python3 bench/plot.py "$OUT"  # the summary is written by sysbench-compare.sh
