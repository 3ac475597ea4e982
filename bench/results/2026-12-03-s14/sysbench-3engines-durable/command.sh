#!/usr/bin/env bash
# Session 14 (2026-12-03), plugin at 8b84b99: TidesDB, InnoDB and MyRocks, 8 x 200k rows,
# durable (fsync per commit on every engine), 4 threads, both cache regimes, 2 rounds of 5 s.
# Run from the repository root with the plugin built in build/.
ENGINES="TidesDB InnoDB RocksDB" TABLES=8 ROWS=200000 THREAD_COUNTS=4 ROUNDS=2 SLICE=5 REGIMES="large small" \
  DURABILITIES=durable bench/sysbench-compare.sh "$PWD/build" bench/results/2026-12-03-s14/sysbench-3engines-durable
