#!/usr/bin/env bash
# Session 30 (2026-12-07), plugin at 64e5901 (everything through session 29): TPC-C-like
# with all three engines, rounds rotated and a quiet start (bench/tpcc-compare.sh), both
# durabilities: 2 warehouses, 4 threads, 256 MiB caches, 15 s slices, 3 rounds. TidesDB as
# installed (optimistic, snapshot isolation). Usage: command.sh BUILD [OUT] (OUT: this folder)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
cd "$(dirname "$0")"
HERE=${2:-$PWD}
mkdir -p "$HERE"
cd ../../../..
WAREHOUSES=2 SLICE=15 ROUNDS=3 DURABILITIES="relaxed durable" bench/tpcc-compare.sh "$BUILD" "$HERE/three-engines" \
  >"$HERE/three-engines.log" 2>&1
