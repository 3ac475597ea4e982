#!/usr/bin/env bash
# Session 20 (2026-12-06): the TPC-C-like workload, durable only, TidesDB (pessimistic
# locking, locking reads on the latest row) against InnoDB, with BASE's plugin and with
# NEW's, alternating runs (BASE, NEW, BASE, NEW by default: PAIRS=2), each run a fresh load
# (2 warehouses, 4 threads, 15 s slices x 2 rounds; bench/tpcc-compare.sh). The TidesDB /
# InnoDB NOPM ratio of each run goes to tpcc-ab.txt. Usage: tpcc-ab.sh BASE NEW
set -euo pipefail
BASE=$1 NEW=$2
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-12-06-s20/early-lock-release/tpcc-ab
mkdir -p "$OUT"
for p in $(seq 1 "${PAIRS:-2}"); do
  for b in BASE NEW; do
    build=$BASE
    [ $b = NEW ] && build=$NEW
    dir=$OUT/$p-$b
    mkdir -p "$dir"
    WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" DURABILITIES=durable \
      SERVER_OPTS="--tidesdb-pessimistic-locking=ON --tidesdb-locking-reads-latest=ON" \
      bench/tpcc-compare.sh "$build" "$dir" >"$dir/tpcc-compare.log" 2>&1
    echo "$p $b $(grep -E '^\| TidesDB \| [0-9]' "$dir/tpcc-summary.md" | head -1 | cut -d'|' -f3-4,9)" |
      tee -a "$OUT/../tpcc-ab.txt"
  done
done
