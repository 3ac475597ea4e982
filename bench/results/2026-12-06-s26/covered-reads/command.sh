#!/usr/bin/env bash
# Session 26: secondary-index reads the read set covers, before and after the plugin
# decided that from the read set instead of the server's keyread request alone.
# bench/scan-ab.sh with the two builds (A = before, B = after) and InnoDB, 8 x 200k rows,
# 4 threads, relaxed, tables as loaded then churned by 20 s of oltp_write_only, 3 rounds of
# 8 s slices; each start of the server runs oltp_write_only, then select_random_ranges
# (the matrix's order: the writes leave table instances whose covering keys the server
# cleared, and prepared statements run on them without keyread). Two cache regimes:
# OUT/small (64 MiB caches) and OUT/large (2 GiB). Then summary.py's table.
# Usage: command.sh BEFORE_BUILD AFTER_BUILD OUT
set -euo pipefail
A=$1 B=$2 OUT=$3
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
for regime in small:64M large:2G; do
  mkdir -p "$OUT/${regime%%:*}"
  TABLES=8 ROWS=200000 THREADS=4 SLICE=8 ROUNDS=3 CACHE=${regime#*:} OPTIMIZE=0 \
    CHURN=oltp_write_only:20 LABELS="oltp_write_only rranges" \
    bench/scan-ab.sh "$A" "$B" "$OUT/${regime%%:*}" >"$OUT/${regime%%:*}/log" 2>&1
done
python3 bench/results/2026-12-06-s24/write-pipeline/summary.py "$OUT" small large | tee "$OUT/summary.md"
