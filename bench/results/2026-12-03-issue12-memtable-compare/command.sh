#!/usr/bin/env bash
# The exact commands behind docs/BENCHMARKS.md "Issue 12: memtable comparisons"
# (2026-12-03). before = 5ab9ead (kvbench --preload_flush, the parent of the change),
# after = eef9f8b; Release builds without the plugin, RocksDB side on. As run, the two
# binaries came from the wt-memcmp worktree's build-rel (before copied aside at 5ab9ead);
# the worktree lines below are the equivalent from a clean checkout.
set -euo pipefail
OUT=bench/results/2026-12-03-issue12-memtable-compare
git worktree add --detach /work/wt-before 5ab9ead
for t in before after; do
  src=/work/wt-before
  [ $t = after ] && src=$PWD
  cmake -S $src -B /work/kvb-$t -DWITH_PLUGIN=OFF -DCMAKE_BUILD_TYPE=Release
  cmake --build /work/kvb-$t --target kvbench -j2
  cp /work/kvb-$t/tools/kvbench/kvbench /tmp/kvbench.$t
done

# Wall clock: both engines, memtable-resident (256 MB write buffer, no flush after the
# preload), before and after alternated, the first side swapping every round. Summary
# lines go to results.txt as "<side> r<round> <workload> <tidesdb> <rocksdb> <ratio>".
# (Run 1 kept the order before, after in every round; runs 2 and 3 alternate.)
for r in $(seq 1 8); do
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for side in $order; do
    /tmp/kvbench.$side --num=300000 --write_buffer_mb=256 --preload_flush=0 \
      --workloads=fillrandom,overwrite,fillseq,readrandom 2>/dev/null |
      sed -n '/^# summary:/,$p' | grep -v '^#' | sed "s/^/$side r$r /" >>results.txt
  done
done
python3 $OUT/summarize.py results.txt

# Instruction counts (repeatable to ~1e-6): TidesDB only, 50K keys, one workload per run;
# kvbench forks one child per engine run, the larger callgrind file is that child.
for side in before after; do
  for w in fillrandom overwrite fillseq readrandom; do
    valgrind --tool=callgrind --callgrind-out-file=cg.$side.$w.%p /tmp/kvbench.$side --engines=tidesdb \
      --num=50000 --write_buffer_mb=256 --preload_flush=0 --workloads=$w >/dev/null 2>&1
    f=$(ls -S cg.$side.$w.* | head -1)
    echo "$side $w"
    callgrind_annotate --inclusive=yes "$f" |
      grep -E 'PROGRAM TOTALS|SkipList<tidesdb::MemTable::EntryComparator>::Insert|MemTable::Get\(|MemTable::Add\('
  done
done
