#!/usr/bin/env bash
# Session 19 (2026-12-05), plugin at 1c81c6f (tables compact L0 by size ratio 4): TidesDB,
# InnoDB and MyRocks, 8 x 200k rows, relaxed durability, 4 threads, both cache regimes,
# 2 rounds of 5 s slices: session 18's matrix (2026-12-05-s18/sysbench-3engines) again.
# Run from the repository root with the plugin built in build/.
ENGINES="TidesDB InnoDB RocksDB" TABLES=8 ROWS=200000 THREAD_COUNTS=4 ROUNDS=2 SLICE=5 REGIMES="large small" \
  DURABILITIES=relaxed bench/sysbench-compare.sh "$PWD/build" bench/results/2026-12-05-s19/sysbench-3engines
