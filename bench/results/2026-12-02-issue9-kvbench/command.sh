#!/usr/bin/env bash
# The exact command behind docs/BENCHMARKS.md "Issue 9: before and after" (2026-12-02):
# the full kvbench suite (scripts/bench-kv.sh) on the library before issue 9 (ffb5b91, the
# parent of its first change 83c8b4a) and after (c88bfe7), Release builds, one run each
# before then after (one round: the session had no time for a second); each tree runs its
# own scripts/bench-kv.sh.
set -euo pipefail
OUT=bench/results/2026-12-02-issue9-kvbench
git worktree add --detach /work/wt-before ffb5b91
for t in before after; do
  src=/work/wt-before
  [ $t = after ] && src=$PWD
  cmake -S $src -B /work/kvb-$t -DWITH_PLUGIN=OFF -DCMAKE_BUILD_TYPE=Release -DWITH_ROCKSDB_BENCH=ON
  cmake --build /work/kvb-$t --target kvbench -j2
done
for round in 1; do
  KVBENCH_LOG=$OUT/before-$round.txt /work/wt-before/scripts/bench-kv.sh /work/kvb-before
  KVBENCH_LOG=$OUT/after-$round.txt scripts/bench-kv.sh /work/kvb-after
done
scripts/bench-ratios.py $OUT/before-1.txt $OUT/after-1.txt
