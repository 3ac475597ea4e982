#!/usr/bin/env bash
# Session 27 (2026-12-07), plugin at c47a5ba (session 26, before this session's changes),
# in the same hour as sysbench-large/ (after sysbench-small/): that row again (the
# ten workloads, three engines, caches holding the data (2 GiB), relaxed, 4 threads,
# 8 x 200k rows, 3 rounds of 5 s, rotated, after the quiet wait). Usage: command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
TABLES=8 ROWS=200000 THREAD_COUNTS=4 SLICE=5 ROUNDS=3 REGIMES=large DURABILITIES=relaxed \
  bench/sysbench-compare.sh "$BUILD" bench/results/2026-12-07-s27/sysbench-large-before
