#!/usr/bin/env bash
# Session 30: kvbench's read workloads on TidesDB, the library before the blocked filters
# (OLD: a build of 64e5901) and after (NEW: a build of 9346f0e or later), alternated ROUNDS
# times: 1M keys of 100 B, 256 MiB block cache (readrandom_cold: 8 MiB), 10 bloom bits per key.
# Usage: command.sh OLD_BUILD NEW_BUILD OUT   (each BUILD holds tools/kvbench/kvbench)
set -euo pipefail
OLD=$1 NEW=$2 OUT=$3
mkdir -p "$OUT"
for round in $(seq "${ROUNDS:-3}"); do
  for b in old new; do
    dir=$OLD
    [ "$b" = new ] && dir=$NEW
    "$dir/tools/kvbench/kvbench" --engines=tidesdb --num=1000000 --cache_mb=256 --cold_cache_mb=8 \
      --workloads=readrandom,readrandom_cold,seekrandom >"$OUT/$round.$b.txt" 2>&1
    echo "round $round $b"
    grep -E "^(readrandom|readrandom_cold|seekrandom) +[0-9]+ " "$OUT/$round.$b.txt" || tail -5 "$OUT/$round.$b.txt"
  done
done
