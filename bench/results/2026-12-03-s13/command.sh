#!/usr/bin/env bash
# Session 13: oltp_read_only's queries one type at a time, the read path before (A) and
# after (B) the iterator and counter changes; cached regime (4 x 100k rows, 2 GiB caches,
# relaxed), 2 client threads, 3 rounds of 8 s slices, TidesDB and InnoDB alternating.
#   A = 18d10fb (the tree at the start of the session)
#   B = 51b45c6 (iterators read entries in place, inline varints, striped status counters,
#       the merge's runner-up)
# From the repository root, with each commit built (make build) into its own directory:
git worktree add /tmp/tidesql-a 18d10fb && (cd /tmp/tidesql-a && make build)
git worktree add /tmp/tidesql-b 51b45c6 && (cd /tmp/tidesql-b && make build)
bench/scan-ab.sh /tmp/tidesql-a/build /tmp/tidesql-b/build bench/results/2026-12-03-s13
bench/scan-ab-summary.py bench/results/2026-12-03-s13/scan-ab.csv > bench/results/2026-12-03-s13/scan-ab-summary.md
