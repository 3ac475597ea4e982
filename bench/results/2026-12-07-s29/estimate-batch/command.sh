#!/usr/bin/env bash
# Session 29: cached select_random_ranges after 20 s of oltp_write_only, profiled per build
# in alternating rounds (session 28's filter-prefetch/command.sh: 8 x 200k, 2 GiB, relaxed,
# 4 threads, perf record -a at 999 Hz for 12 s, a fresh server, load and churn per run),
# then symbol-diff.py over the rounds. BUILD_A: the plugin at fc889d5; BUILD_B: at 83b1b05
# (batched range estimates and the inline prefix compare).
# Usage: command.sh OUT BUILD_A BUILD_B
set -euo pipefail
OUT=$1 A=$2 B=$3
here=$(cd "$(dirname "$0")" && pwd)
WORKLOAD=select_random_ranges ROUNDS=${ROUNDS:-3} \
  SYMBOLS="ApproximateRangeSize BloomMayContain RangeMayMatch memcmp malloc estimate_ranges_together" \
  "$here/../../2026-12-07-s28/filter-prefetch/command.sh" "$OUT" "$A" "$B"
python3 "$here/symbol-diff.py" "$OUT" "$(basename "$A")" "$(basename "$B")" | tee "$OUT/symbol-diff.txt"
