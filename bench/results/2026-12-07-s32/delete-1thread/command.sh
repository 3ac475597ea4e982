#!/usr/bin/env bash
# Session 32 (2026-12-07), plugin at 2fb6599 (session 31's matrix plugin): the two matrix rows
# where TidesDB was behind MyRocks, cached oltp_delete at 1 client thread (large regime, 2 GiB
# caches; relaxed 0.86x against MyRocks' 0.87x InnoDB, durable 0.64x against 0.69x), alone:
# bench/sysbench-compare.sh with only that workload, 6 rounds of 8 s slices per durability,
# the three engines rotated, 8 x 200k rows. Run from the repository root.
# Usage: command.sh BUILD [OUT]
set -euo pipefail
BUILD=$1
OUT=${2:-bench/results/2026-12-07-s32/delete-1thread}
REGIMES=large DURABILITIES="relaxed durable" WORKLOADS=oltp_delete THREAD_COUNTS=1 ROUNDS=6 SLICE=8 \
  TABLES=8 ROWS=200000 bench/sysbench-compare.sh "$BUILD" "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
