#!/usr/bin/env bash
# Session 13: oltp_read_only's queries one type at a time, the read path before (A) and
# after (B) the iterator and counter changes; cached regime (4 x 100k rows, 2 GiB caches,
# relaxed), 2 client threads, 3 rounds of 8 s slices, TidesDB and InnoDB alternating.
#   A = 18d10fb (the tree at the start of the session)
#   B = 6308d3e (B of 2026-12-03-s13, and SELECT fills only the columns it reads)
# From the repository root, with each commit built (make build) into its own directory:
git worktree add /tmp/tidesql-a 18d10fb && (cd /tmp/tidesql-a && make build)
git worktree add /tmp/tidesql-b 6308d3e && (cd /tmp/tidesql-b && make build)
bench/scan-ab.sh /tmp/tidesql-a/build /tmp/tidesql-b/build bench/results/2026-12-03-s13-final
bench/scan-ab-summary.py bench/results/2026-12-03-s13-final/scan-ab.csv > bench/results/2026-12-03-s13-final/scan-ab-summary.md
