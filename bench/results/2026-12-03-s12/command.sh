#!/usr/bin/env bash
# Session 12: the cached regime's two losses (point select, update_non_index at 1 thread)
# after the memtable comparison change (bf7739d) and the one-word memtable filter (077e7ba).
# TidesDB and InnoDB only, caches larger than the data, relaxed durability, 3 rounds of 10 s
# slices alternated by engine. From the repository root, after `make build`:
TABLES=4 ROWS=100000 REGIMES=large DURABILITIES=relaxed THREAD_COUNTS="1 2" SLICE=10 ROUNDS=3 \
  ENGINES="TidesDB InnoDB" WORKLOADS="oltp_point_select oltp_update_non_index oltp_read_only" \
  bench/sysbench-compare.sh build bench/results/2026-12-03-s12
