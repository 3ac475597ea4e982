#!/usr/bin/env bash
# Session 15 (2026-12-03): tidesdb_locking_reads_latest on the TPC-C-like mix. TidesDB with
# pessimistic locking, first without the new variable (snapshot isolation: a FOR UPDATE
# of a district row committed after the snapshot fails and the transaction is retried),
# then with it (InnoDB's REPEATABLE READ), each against InnoDB in the same server. 2
# warehouses, 4 threads, 256 MiB caches, relaxed, 2 rounds of 15 s slices per engine.
set -euo pipefail
OUT=bench/results/2026-12-03-s15/tpcc-locking-reads-latest
for mode in snapshot latest; do
  opts=--tidesdb-pessimistic-locking=ON
  [ $mode = latest ] && opts="$opts --tidesdb-locking-reads-latest=ON"
  mkdir -p "$OUT/$mode"
  WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" DURABILITIES=relaxed SERVER_OPTS="$opts" \
    bench/tpcc-compare.sh build "$OUT/$mode" 2>&1 | tee "$OUT/$mode/tpcc-compare.log"
done
