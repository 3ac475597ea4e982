#!/usr/bin/env bash
# Session 27: A = the plugin before (c47a5ba), B = after the key codec's per-part layout
# (cbce9bb) and the commit table's prune by keys and flat index (ce3db02).
# bench/scan-ab.sh on 8 x 200k rows, 2 GiB caches, relaxed, 4 threads, tables as loaded
# and churned by 20 s of oltp_write_only, 8 s slices alternating with InnoDB, 3 rounds:
#   OUT/reads   select_random_ranges and select_random_points only (no writes between
#               the builds' slices, so every build reads the same tables)
#   OUT/writes  oltp_insert, oltp_update_index and oltp_write_only
# Then summary.py's table.
# Usage: command.sh BEFORE_BUILD AFTER_BUILD OUT
set -euo pipefail
A=$1 B=$2 OUT=$3
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
for part in "reads:rranges rpoints" "writes:oltp_insert oltp_update_index oltp_write_only"; do
  mkdir -p "$OUT/${part%%:*}"
  TABLES=8 ROWS=200000 THREADS=4 SLICE=8 ROUNDS=3 CACHE=2G OPTIMIZE=0 \
    CHURN=oltp_write_only:20 LABELS="${part#*:}" \
    bench/scan-ab.sh "$A" "$B" "$OUT/${part%%:*}" >"$OUT/${part%%:*}/log" 2>&1
done
python3 bench/results/2026-12-06-s24/write-pipeline/summary.py "$OUT" reads writes | tee "$OUT/summary.md"
