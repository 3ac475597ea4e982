#!/usr/bin/env bash
# Session 15 (2026-12-03): memtable values kept apart from the skip-list nodes. A memtable
# put or get is ~3 us in a full 64 MiB memtable of sysbench rows, nearly all cache misses
# on the nodes it visits (FindSpliceForLevel + FindGreaterOrEqual: 13 % of the server's CPU
# under cached oltp_update_index). values-apart.patch (this directory; not committed to the
# engine) keeps values longer than 16 bytes in a second arena, so the nodes fill ~10 MiB:
# in a microbenchmark (224k entries, 200-byte values, random keys) puts took 1.9-2.6 us
# instead of 2.9-3.3 and gets 1.4-2.5 instead of 2.6-2.8. In the plugin it did not pay:
# A = 3e323d4, B = 3e323d4 + values-apart.patch, both built by hand. 4 x 100k rows, tables
# optimized, 2 GiB caches, relaxed, 4 threads, 3 rounds of 8 s. Run with a copy of
# scan-ab.sh that took the builds from a list (the procedure scan-ab.sh runs for two
# builds); build paths in the CSV were renamed to their letters.
LABELS="oltp_update_index oltp_update_non_index oltp_insert oltp_write_only select_random_points oltp_point_select" \
  THREADS=4 SLICE=8 ROUNDS=3 \
  bench/scan-ab.sh /tmp/ab/base /tmp/ab/vapart bench/results/2026-12-03-s15/memtable-values-apart
bench/scan-ab-summary.py bench/results/2026-12-03-s15/memtable-values-apart/scan-ab.csv \
  >bench/results/2026-12-03-s15/memtable-values-apart/scan-ab-summary.md
