#!/usr/bin/env bash
# Session 14 (2026-12-03): does the write queue's 50 us spin (kWriterSpin in
# engine/src/db/db_impl_write.cc, sched_yield in a loop: 3.7 % of the server's CPU samples
# under oltp_update_non_index at 4 threads) help the SQL write workloads on 2 cores?
# A = the plugin at a8712d9; B = the same with SpinUntilReady returning at once (kWriterSpin
# 0: a queued writer sleeps on its condition variable straight away), built by hand and
# not committed. 4 x 100k rows, 2 GiB caches, relaxed, 4 threads, 2 rounds of 8 s.
LABELS="oltp_update_non_index oltp_update_index oltp_insert oltp_write_only" THREADS=4 SLICE=8 ROUNDS=2 \
  bench/scan-ab.sh /tmp/abA /tmp/abB bench/results/2026-12-03-s14/writer-spin
