#!/usr/bin/env bash
# Session 16 (2026-12-04), plugin at bc2c76a (prefix filters on secondary keys): TidesDB,
# InnoDB and MyRocks, 8 x 200k rows, relaxed durability, 4 threads, both cache regimes,
# 2 rounds of 5 s slices: session 14's matrix (2026-12-03-s14/sysbench-3engines) again.
# Run from the repository root with the plugin built in build/.
ENGINES="TidesDB InnoDB RocksDB" TABLES=8 ROWS=200000 THREAD_COUNTS=4 ROUNDS=2 SLICE=5 REGIMES="large small" \
  DURABILITIES=relaxed bench/sysbench-compare.sh "$PWD/build" bench/results/2026-12-04-s16/sysbench-3engines
