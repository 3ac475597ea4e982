#!/usr/bin/env bash
# Session 18 (2026-12-05): what the memtable's prefix filter costs the writers (every
# memtable insert into a column family with a filter prefix adds a second hash to the
# memtable's bloom) and whether it moves cached random points. Two builds of the plugin:
#   A  /tmp/base/build: 7478d16, before the filter
#   B  /work/main/build: the commit that added MemTable::RangeMayMatch
# 4 x 100k rows, 2 GiB caches, relaxed, 4 threads, 2 rounds of 8 s, tables not optimized
# (the write workloads churn them between the reads).
LABELS="oltp_update_index oltp_update_non_index oltp_insert oltp_write_only rpoints" THREADS=4 SLICE=8 \
  ROUNDS=2 OPTIMIZE=0 bench/scan-ab.sh /tmp/base/build /work/main/build \
  bench/results/2026-12-05-s18/memtable-prefix-filter/writes
bench/scan-ab-summary.py bench/results/2026-12-05-s18/memtable-prefix-filter/writes/scan-ab.csv \
  >bench/results/2026-12-05-s18/memtable-prefix-filter/writes/scan-ab-summary.md
