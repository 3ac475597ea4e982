#!/usr/bin/env bash
# Session 14 (2026-12-03): A = the plugin at a8712d9, B = the tree of 8b84b99 (one index
# search per file for a range's two bounds, memtables without entries of the CF skipped by
# iterators and estimates), built in build/ and copied. Small caches (64M), the tables as
# loaded (not optimized), oltp_update_index and oltp_insert churning them between the
# reads, 8 x 200k rows, 4 threads, 3 rounds of 8 s.
CACHE=64M OPTIMIZE=0 TABLES=8 ROWS=200000 THREADS=4 SLICE=8 ROUNDS=3 \
  LABELS="oltp_update_index oltp_insert rranges rpoints" \
  bench/scan-ab.sh /tmp/abA /tmp/abB2 bench/results/2026-12-03-s14/estimates
