#!/usr/bin/env bash
# Session 21 (2026-12-06): the TPC-C-like comparison on the plugin at 453874c, which has
# session 20's durable commits that release their locks before the fsync: TidesDB as
# installed (optimistic, snapshot isolation) against InnoDB and MyRocks, and TidesDB with
# pessimistic locking and tidesdb_locking_reads_latest against InnoDB. 2 warehouses, 4
# threads, 15 s slices x 2 rounds per durability, 256 MiB caches (bench/tpcc-compare.sh).
# Usage: tpcc-command.sh BUILD
set -euo pipefail
BUILD=$1
cd "$(dirname "$0")/../../.."
OUT=bench/results/2026-12-06-s21
WAREHOUSES=2 SLICE=15 ROUNDS=2 bench/tpcc-compare.sh "$BUILD" "$OUT/tpcc" >"$OUT/tpcc/tpcc-compare.log" 2>&1
WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" \
  SERVER_OPTS="--tidesdb-pessimistic-locking=ON --tidesdb-locking-reads-latest=ON" \
  bench/tpcc-compare.sh "$BUILD" "$OUT/tpcc-pessimistic-latest" >"$OUT/tpcc-pessimistic-latest/tpcc-compare.log" 2>&1
