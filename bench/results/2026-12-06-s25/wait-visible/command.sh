#!/usr/bin/env bash
# Session 25: the write path with one wait for the visible sequence (WaitVisible) and a
# publish that skips publish_mu_ and the notify when nobody sleeps (05e3d09), against a
# build of 91018d6 (session 24's write queue change, whose publish path is the same as
# 05e3d09's parent). bench/scan-ab.sh: 4 x 100k rows as loaded, 2 GiB, relaxed, 4 threads,
# 3 rounds of 8 s slices; summary with session 24's write-pipeline/summary.py.
# Usage: command.sh BEFORE AFTER OUT
set -euo pipefail
BEFORE=$1 AFTER=$2 OUT=$3
mkdir -p "$OUT/fresh" && OUT=$(cd "$OUT" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
THREADS=4 ROUNDS=3 LABELS="oltp_update_non_index oltp_delete oltp_update_index" \
  bench/scan-ab.sh "$BEFORE" "$AFTER" "$OUT/fresh"
/usr/bin/python3 "$here/../../2026-12-06-s24/write-pipeline/summary.py" "$OUT" | tee "$OUT/summary.txt"
