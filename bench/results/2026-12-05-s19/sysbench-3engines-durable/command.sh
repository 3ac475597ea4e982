#!/usr/bin/env bash
# Session 19 (2026-12-05), plugin at 4005b04 (the memtable's prefix filter; no plugin or
# library change since): TidesDB, InnoDB and MyRocks with fsync per commit on every engine,
# 8 x 200k rows, 4 threads, both cache regimes, 2 rounds of 5 s slices: session 14's
# durable matrix (2026-12-03-s14/sysbench-3engines-durable) again. Run from the repository
# root with the plugin built in build/.
ENGINES="TidesDB InnoDB RocksDB" TABLES=8 ROWS=200000 THREAD_COUNTS=4 ROUNDS=2 SLICE=5 REGIMES="large small" \
  DURABILITIES=durable bench/sysbench-compare.sh "$PWD/build" bench/results/2026-12-05-s19/sysbench-3engines-durable
