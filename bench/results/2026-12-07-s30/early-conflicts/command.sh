#!/usr/bin/env bash
# Session 30: TPC-C-like relaxed, TidesDB and InnoDB, 2 warehouses, 4 threads, 15 s slices, 3 rounds,
# one run per plugin in turn, twice. /tmp/s30/blocked: the plugin at 9346f0e; /tmp/s30/early: the same
# with patch.diff. Each holds plugin/ha_tidesdb.so.
set -uo pipefail
cd /work/main
for pass in 1 2; do
  for b in blocked early; do
    ENGINES="TidesDB InnoDB" WAREHOUSES=2 SLICE=15 ROUNDS=3 DURABILITIES=relaxed \
      bench/tpcc-compare.sh /tmp/s30/$b /tmp/s30/early-ab/$pass.$b > /tmp/s30/early-ab/$pass.$b.log 2>&1
    grep -A4 "^| engine | NOPM" /tmp/s30/early-ab/$pass.$b/tpcc-summary.md | sed "s/^/$pass $b /"
  done
done
