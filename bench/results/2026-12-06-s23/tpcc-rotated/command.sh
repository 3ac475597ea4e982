#!/usr/bin/env bash
# Session 23 (2026-12-06), plugin at 66ff062: TPC-C-like relaxed with all three engines and
# the rounds rotated (bench/tpcc-compare.sh after f7aaf84: each round starts with the next
# engine, the first waits until the server is quiet after the load). 2 warehouses, 4
# threads, 256 MiB caches, 15 s slices, 3 rounds: session 22's tpcc-cpu/cmp3 with rotation.
# Usage: command.sh BUILD [OUT] (OUT: this folder; session 24's run passes its own)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
cd "$(dirname "$0")"
HERE=${2:-$PWD}
cd ../../../..
WAREHOUSES=2 SLICE=15 ROUNDS=3 DURABILITIES=relaxed bench/tpcc-compare.sh "$BUILD" "$HERE/three-engines" \
  >"$HERE/three-engines.log" 2>&1
