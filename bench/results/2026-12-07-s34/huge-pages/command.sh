#!/usr/bin/env bash
# Session 34: tools/memtable-bench of two builds alternating (ROUNDS rounds, default 3):
# a fill of 262,144 and 1,048,576 sysbench-shaped entries (BM_Add) and random present-key
# lookups (BM_Get), one line per build and round.
# Usage: command.sh MEMTABLE_BENCH_A MEMTABLE_BENCH_B
set -euo pipefail
for round in $(seq "${ROUNDS:-3}"); do
  for bench in "$@"; do
    echo "$round $(basename "$bench") $("$bench" --benchmark_filter='BM_Add/(262144|1048576)|BM_Get/(262144|1048576)' 2>&1 |
      awk '/^BM_/ {printf "%s %s %s | ", $1, $2, $3}')"
  done
done
