#!/usr/bin/env bash
# Session 32 (2026-12-07), plugin at 44e3c08 (session 31's plus the snapshot list): the large
# regime only (2 GiB caches), 4 threads, both durabilities, all ten workloads, 4 rounds of
# 8 s slices (the matrix has 2 of 5 s), three engines rotated, 8 x 200k rows: the rows
# TidesDB loses to InnoDB, with a spread that ranks them. Run from the repository root.
# Usage: command.sh BUILD [OUT]
set -euo pipefail
BUILD=$1
OUT=${2:-bench/results/2026-12-07-s32/large-4threads}
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit"
REGIMES=large DURABILITIES="relaxed durable" THREAD_COUNTS=4 ROUNDS=4 SLICE=8 TABLES=8 ROWS=200000 \
  bench/sysbench-compare.sh "$BUILD" "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
