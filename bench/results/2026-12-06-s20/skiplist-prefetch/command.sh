#!/usr/bin/env bash
# Session 20 (2026-12-06): does prefetching in the skip list's searches hide the cache
# misses of a memtable insert or lookup (FindSpliceForLevel is 6-9 % of the server's CPU
# in cached sysbench writes)? A negative result, not kept. Two variants were tried, each
# against the commit before it (f2304b6):
#   v1  prefetch the entry and the link at the current level of the node a search is about
#       to compare, as soon as its address is loaded (overlaps the two lines' misses when
#       the level is high);
#   v2  (prefetch.patch) prefetch the node after it on the same level, one step ahead, as
#       RocksDB's InlineSkipList does.
# Measured with tools/memtable-bench (this session): Add fills a fresh memtable with 256k
# sysbench-shaped entries (8 column families, 8-byte keys, 200-byte values, random order),
# Get looks up random present keys; the builds alternate, ROUNDS rounds (10 here).
# Usage: command.sh BASE_BUILD VARIANT_BUILD [...]; prints median and min per build.
set -euo pipefail
ROUNDS=${ROUNDS:-10}
for r in $(seq 1 "$ROUNDS"); do
  for b in "$@"; do
    "$b/tools/memtable-bench/memtable-bench" --benchmark_filter=/262144 --benchmark_min_time=0.5 \
      --benchmark_format=csv 2>/dev/null | grep '^"BM' | sed "s|^|$b,|"
  done
done | awk -F, '{k = $1 " " $2; v[k] = v[k] " " $4} END {for (k in v) print k, v[k]}' | sort |
  /usr/bin/python3 -c '
import statistics, sys
for line in sys.stdin:
    f = line.split()
    xs = [float(x) for x in f[2:]]
    print(f[0], f[1], "median %.0f" % statistics.median(xs), "min %.0f" % min(xs))'
