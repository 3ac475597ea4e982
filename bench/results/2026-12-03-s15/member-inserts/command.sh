#!/usr/bin/env bash
# Session 15 (2026-12-03): should a commit group's members insert their own batches? Today
# the leader inserts every batch under DBImpl::kMinEntriesForOwnInsert (8) entries, and a
# member waits for the group (yielding, then sleeping). Three hand-built plugins:
#   A  3e323d4 as committed
#   B  kMinEntriesForOwnInsert = 1: every member inserts its own batch
#   C  spinning-members-insert.patch (this directory): a member still spinning in the
#      queue (awake, so the hand-off wakes no one) inserts its own batch
# 4 x 100k rows, tables optimized, 2 GiB caches, relaxed, 4 threads, 3 rounds of 8 s.
# Neither pays: B and C cost 1.01-1.13x A's CPU per transaction on three of the four
# workloads (B: 0.93x on write_only, within its spread).
LABELS="oltp_update_index oltp_update_non_index oltp_insert oltp_write_only" THREADS=4 SLICE=8 ROUNDS=3 \
  bench/scan-ab.sh /tmp/ab/base /tmp/ab/own1 /tmp/ab/ownspin bench/results/2026-12-03-s15/member-inserts
bench/scan-ab-summary.py bench/results/2026-12-03-s15/member-inserts/scan-ab.csv \
  >bench/results/2026-12-03-s15/member-inserts/scan-ab-summary.md
