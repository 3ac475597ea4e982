#!/usr/bin/env bash
# Session 22 (2026-12-06), plugin at 330a6b9: TPC-C-like (bench/tpcc-compare.sh, 2 warehouses,
# 4 threads, 256 MiB caches, relaxed, 15 s slices): TidesDB as installed against InnoDB
# with and without MyRocks loaded, engines in both orders; then the server's CPU per
# transaction and profile, one engine per server (profile.sh).
# Usage: command.sh BUILD
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
cd "$(dirname "$0")"
HERE=$PWD
cd ../../../..
run() { # out, then environment assignments
  local out=$1
  shift
  env WAREHOUSES=2 SLICE=15 DURABILITIES=relaxed "$@" bench/tpcc-compare.sh "$BUILD" "$HERE/$out" >"$HERE/$out.log" 2>&1
}
run cmp1 ROUNDS=3 ENGINES="TidesDB InnoDB"
run cmp2 ROUNDS=3 ENGINES="InnoDB TidesDB"
run cmp3 ROUNDS=3
run cmp4 ROUNDS=3 ENGINES="TidesDB RocksDB InnoDB"
# cmp5: ROUNDS=2, all three engines, with cmp5/thread-classes.patch applied to a copy of
# bench/tpcc-compare.sh (CPU ticks of tdb-* and rocksdb/myrocks threads per slice).
SERVER_OPTS="--tidesdb-pessimistic-locking=ON --tidesdb-locking-reads-latest=ON" \
  "$HERE/profile.sh" "$BUILD" "$HERE/profile/pessimistic-latest"
"$HERE/profile.sh" "$BUILD" "$HERE/profile/optimistic"
ENGINE=InnoDB "$HERE/profile.sh" "$BUILD" "$HERE/profile/innodb"
