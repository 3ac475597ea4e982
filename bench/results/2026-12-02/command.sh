#!/usr/bin/env bash
# The exact commands behind bench/RESULTS.md (2026-12-02), run from the repository root
# on one machine, one benchmark at a time; a reduced matrix of the full `make bench`
# (which takes about 3 hours), so that it fits a working session.
set -euo pipefail
OUT=bench/results/2026-12-02
TABLES=8 ROWS=200000 THREAD_COUNTS="1 4" SLICE=4 ROUNDS=2 bench/sysbench-compare.sh build "$OUT" 2>&1 | tee "$OUT/sysbench-compare.log"
WAREHOUSES=2 SLICE=15 ROUNDS=2 bench/tpcc-compare.sh build "$OUT" 2>&1 | tee "$OUT/tpcc-compare.log"
mkdir -p "$OUT/tpcc-pessimistic"
WAREHOUSES=2 SLICE=15 ROUNDS=2 ENGINES="TidesDB InnoDB" SERVER_OPTS=--tidesdb-pessimistic-locking=ON \
  bench/tpcc-compare.sh build "$OUT/tpcc-pessimistic" 2>&1 | tee "$OUT/tpcc-pessimistic/tpcc-compare.log"
DATA_MB=512 CACHE=64M SLICE=8 ROUNDS=2 bench/large-values.sh build "$OUT" 2>&1 | tee "$OUT/large-values.log"
/usr/bin/python3 bench/plot.py "$OUT"  # Debian's python3 (matplotlib from install-deps --bench)
