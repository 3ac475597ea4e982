#!/usr/bin/env bash
# Session 29 (2026-12-07), plugin at 83b1b05 (a query's range estimates made in one batch,
# their memtable walks interleaved; filter prefixes compared inline): select_random_ranges
# after oltp_write_only, three engines, both cache regimes (64 MiB and 2 GiB), relaxed,
# 4 threads, 8 x 200k rows, 3 rounds of 5 s, rotated, after the quiet wait.
# The same with the plugin of fc889d5 (before) into OUT=.../sysbench-ranges-base.
# Usage: [OUT=DIR] command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
TABLES=8 ROWS=200000 THREAD_COUNTS=4 SLICE=5 ROUNDS=3 REGIMES="small large" DURABILITIES=relaxed \
  WORKLOADS="oltp_write_only select_random_ranges" \
  bench/sysbench-compare.sh "$BUILD" ${OUT:-bench/results/2026-12-07-s29/sysbench-ranges}
