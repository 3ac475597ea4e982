#!/usr/bin/env bash
# Session 22 (2026-12-06), plugin at be590c5: does loading MyRocks' data into the same server
# change TidesDB's ratio to InnoDB? The same reduced sysbench run twice, one after the
# other, each with a fresh load: TidesDB and InnoDB only, then all three engines (8 x 200k,
# 2 GiB caches, relaxed, 4 threads, 2 rounds of 5 s). Usage: command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-06-s22/myrocks-loaded
common=(TABLES=8 ROWS=200000 THREAD_COUNTS=4 SLICE=5 ROUNDS=2 REGIMES=large DURABILITIES=relaxed
  WORKLOADS="oltp_point_select oltp_read_only oltp_update_non_index oltp_delete")
env "${common[@]}" ENGINES="TidesDB InnoDB" bench/sysbench-compare.sh "$BUILD" "$OUT/two-engines"
env "${common[@]}" ENGINES="TidesDB InnoDB RocksDB" bench/sysbench-compare.sh "$BUILD" "$OUT/three-engines"
