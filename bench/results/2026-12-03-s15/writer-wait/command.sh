#!/usr/bin/env bash
# Session 15 (2026-12-03): how should a queued writer wait for its commit group? sched_yield
# in the write queue's spin (SpinUntilReady, engine/src/db/db_impl_write.cc) was 5 % of the
# server's CPU samples under oltp_update_index (1 x 100k rows, 2 GiB, 4 threads; perf with
# call graphs: 692 samples of finish_task_switch under __sched_yield against 798 under the
# connection threads' poll), so four ways of waiting, each a hand-built plugin (not
# committed) differing only in SpinUntilReady:
#   A  the committed one (3e323d4): yield in a loop for up to 50 us, then sleep on the cv
#   B  no spin: sleep on the condition variable at once
#   C  busy-wait with the pause instruction for up to 10 us, then sleep
#   D  at most two yields, then sleep
# 4 x 100k rows, 2 GiB caches, relaxed, 4 threads, 2 rounds of 8 s. Run with a copy of
# scan-ab.sh that took the builds from a list, the procedure scan-ab.sh now runs when
# given more than two builds; build paths in the CSV were renamed to their letters.
LABELS="oltp_update_index oltp_update_non_index oltp_insert oltp_write_only" THREADS=4 SLICE=8 ROUNDS=2 \
  bench/scan-ab.sh /tmp/ab/base /tmp/ab/nospin /tmp/ab/pause /tmp/ab/yield2 \
  bench/results/2026-12-03-s15/writer-wait
bench/scan-ab-summary.py bench/results/2026-12-03-s15/writer-wait/scan-ab.csv \
  >bench/results/2026-12-03-s15/writer-wait/scan-ab-summary.md
