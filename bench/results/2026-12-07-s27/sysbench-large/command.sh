#!/usr/bin/env bash
# Session 27 (2026-12-07), plugin at ce3db02 (the key codec's per-part layout and the
# commit table's prune by keys and flat index): session 26's sysbench-large row again (the
# ten workloads, three engines, caches holding the data (2 GiB), relaxed, 4 threads,
# 8 x 200k rows, 3 rounds of 5 s, rotated, after the quiet wait). Usage: command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
TABLES=8 ROWS=200000 THREAD_COUNTS=4 SLICE=5 ROUNDS=3 REGIMES=large DURABILITIES=relaxed \
  bench/sysbench-compare.sh "$BUILD" bench/results/2026-12-07-s27/sysbench-large
