#!/usr/bin/env bash
# Session 23 (2026-12-06), plugin at ce48800, bench scripts after the rotation change: is the
# lower TidesDB / InnoDB ratio with MyRocks in the server (session 22, myrocks-loaded/) the
# fixed slice order (TidesDB always ran right after MyRocks)? The same reduced sysbench run
# as session 22's (8 x 200k, 2 GiB caches, relaxed, 4 threads, 5 s slices), now with 3
# rounds, slice groups rotated and a quiet wait after the load: TidesDB + InnoDB, then all
# three engines, twice (A B A B). Usage: command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-06-s23/rotation
common=(TABLES=8 ROWS=200000 THREAD_COUNTS=4 SLICE=5 ROUNDS=3 REGIMES=large DURABILITIES=relaxed
  WORKLOADS="oltp_point_select oltp_read_only oltp_update_non_index oltp_delete")
for rep in 1 2; do
  env "${common[@]}" ENGINES="TidesDB InnoDB" bench/sysbench-compare.sh "$BUILD" "$OUT/two-engines-$rep"
  env "${common[@]}" ENGINES="TidesDB InnoDB RocksDB" bench/sysbench-compare.sh "$BUILD" "$OUT/three-engines-$rep"
done
