#!/usr/bin/env bash
# Session 22 (2026-12-06): the cached relaxed writes that were furthest behind InnoDB at one
# thread in session 21's matrix (delete 0.71x, update_non_index 0.86x, update_index 0.84x),
# TidesDB and InnoDB only, 4 rounds of 8 s slices (8 x 200k rows, 2 GiB caches, relaxed).
# Usage: command.sh BUILD
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../../.."
TABLES=8 ROWS=200000 THREAD_COUNTS="1" SLICE=8 ROUNDS=4 ENGINES="TidesDB InnoDB" REGIMES=large \
  DURABILITIES=relaxed WORKLOADS="oltp_delete oltp_update_non_index oltp_update_index" \
  bench/sysbench-compare.sh "$BUILD" bench/results/2026-12-06-s22/one-thread
