#!/usr/bin/env bash
# Session 26: MemTable::RangeMayMatch hashing every prefix of a range and prefetching its
# filter word before testing any (prefetch.patch, applied to fb448b5 for B), against
# fb448b5 (A). bench/scan-ab.sh, 8 x 200k rows, 64 MiB caches, 4 threads, relaxed, tables
# churned by 20 s of oltp_write_only, select_random_ranges and select_random_points in 8 s
# slices alternating with InnoDB, 3 rounds. Usage: command.sh BUILD_A BUILD_B OUT
set -euo pipefail
A=$1 B=$2 OUT=$3
cd "$(dirname "$0")/../../../.."
TABLES=8 ROWS=200000 THREADS=4 SLICE=8 ROUNDS=3 CACHE=64M OPTIMIZE=0 CHURN=oltp_write_only:20 \
  LABELS="rranges rpoints" bench/scan-ab.sh "$A" "$B" "$OUT"
python3 bench/results/2026-12-06-s24/write-pipeline/summary.py "$(dirname "$OUT")" "$(basename "$OUT")"
