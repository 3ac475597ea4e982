#!/usr/bin/env bash
# Session 23 (2026-12-06), plugin at ce48800, bench scripts with rotated slice groups and the
# quiet wait after the load: the ten workloads, three engines, caches holding the data
# (2 GiB), relaxed, 4 threads, 8 x 200k rows, 3 rounds of 5 s (each engine in each position
# once per workload). Usage: command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
TABLES=8 ROWS=200000 THREAD_COUNTS=4 SLICE=5 ROUNDS=3 REGIMES=large DURABILITIES=relaxed \
  bench/sysbench-compare.sh "$BUILD" bench/results/2026-12-06-s23/sysbench-3engines
