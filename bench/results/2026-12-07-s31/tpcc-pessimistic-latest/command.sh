#!/usr/bin/env bash
# Session 31 (2026-12-07), plugin at 2fb6599 (everything through session 30): the TPC-C-like
# comparison with TidesDB's pessimistic locking and tidesdb_locking_reads_latest (InnoDB's
# REPEATABLE READ behaviour: locking reads and writes on the latest row, no first-committer
# conflicts), against InnoDB, rounds rotated and a quiet start (bench/tpcc-compare.sh), both
# durabilities: 2 warehouses, 4 threads, 256 MiB caches, 15 s slices, 3 rounds (session 30's
# tpcc/command.sh with TidesDB as installed is the other setting).
# Usage: command.sh BUILD [OUT] (OUT: this folder)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
cd "$(dirname "$0")"
HERE=${2:-$PWD}
mkdir -p "$HERE"
cd ../../../..
WAREHOUSES=2 SLICE=15 ROUNDS=3 DURABILITIES="relaxed durable" ENGINES="TidesDB InnoDB" \
  SERVER_OPTS="--tidesdb-pessimistic-locking=ON --tidesdb-locking-reads-latest=ON" \
  bench/tpcc-compare.sh "$BUILD" "$HERE/two-engines" >"$HERE/two-engines.log" 2>&1
