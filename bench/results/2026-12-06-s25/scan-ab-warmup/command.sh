#!/usr/bin/env bash
# Session 25: bench/scan-ab.sh's TidesDB / InnoDB ratios with both engines warmed the same
# way at each server start. One build given twice (A and B are the same plugin: four
# samples per round pair), 8 x 200k rows, 2 GiB, relaxed, 4 threads, tables as loaded
# after 20 s of oltp_write_only, 2 rounds of 8 s slices of oltp_point_select and
# oltp_read_write.
#   before.csv  bench/scan-ab.sh as of 05e3d09: InnoDB's buffer pool dumped at shutdown and
#               loaded at each start, TidesDB warmed by 5 s of oltp_read_only only
#   after.csv   bench/scan-ab.sh since this session: no dump or load, every table of both
#               engines read once after each start (as bench/sysbench-compare.sh does)
# fresh-before.csv / fresh-after.csv: the scripts' defaults (4 x 100k, optimized), THREADS=4
# ROUNDS=3 LABELS="oltp_point_select all" (FRESH=1 here).
# Usage: [FRESH=1] command.sh BUILD OUT (runs the current scan-ab.sh; for before.csv, check out
# bench/scan-ab.sh from 05e3d09 first)
set -euo pipefail
BUILD=$1 OUT=$2
cd "$(dirname "$0")/../../../.."
if [ -n "${FRESH:-}" ]; then
  THREADS=4 ROUNDS=3 LABELS="oltp_point_select all" bench/scan-ab.sh "$BUILD" "$BUILD" "$OUT"
  exit
fi
TABLES=8 ROWS=200000 THREADS=4 OPTIMIZE=0 CHURN=oltp_write_only:20 \
  LABELS="oltp_point_select oltp_read_write" ROUNDS=2 bench/scan-ab.sh "$BUILD" "$BUILD" "$OUT"
