#!/usr/bin/env bash
# Session 20 (2026-12-06): the TPC-C-like comparison again (last run 2026-12-02), on the
# plugin at f2304b6, in TidesDB's three concurrency settings: as installed (optimistic,
# snapshot isolation), pessimistic locking, and pessimistic locking with
# tidesdb_locking_reads_latest (locking reads and UPDATE/DELETE act on the latest
# committed row, as InnoDB's REPEATABLE READ does). 2 warehouses, 4 threads, 15 s slices x
# 2 rounds per durability, 256 MiB caches (bench/tpcc-compare.sh). Usage: command.sh BUILD
set -euo pipefail
BUILD=$1
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-06-s20
WAREHOUSES=2 SLICE=15 ROUNDS=2 bench/tpcc-compare.sh "$BUILD" "$OUT/tpcc" >"$OUT/tpcc/tpcc-compare.log" 2>&1
WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" SERVER_OPTS=--tidesdb-pessimistic-locking=ON \
  bench/tpcc-compare.sh "$BUILD" "$OUT/tpcc-pessimistic" >"$OUT/tpcc-pessimistic/tpcc-compare.log" 2>&1
WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" \
  SERVER_OPTS="--tidesdb-pessimistic-locking=ON --tidesdb-locking-reads-latest=ON" \
  bench/tpcc-compare.sh "$BUILD" "$OUT/tpcc-pessimistic-latest" >"$OUT/tpcc-pessimistic-latest/tpcc-compare.log" 2>&1
