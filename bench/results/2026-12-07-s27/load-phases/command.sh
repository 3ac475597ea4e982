#!/usr/bin/env bash
# Session 27: the sysbench load (8 x 200k rows, 4 threads, 2 GiB caches, relaxed) and the
# secondary index build, timed by phase, for several plugin builds and InnoDB, ROUNDS times
# (each round: a fresh server per build, TidesDB loaded; InnoDB in the first build's
# server). Output: OUT/load-phases.csv (round,build,engine,insert_s,insert_ticks,index_s,
# index_ticks) and the mean per build and engine.
# Usage: [ROUNDS=2] command.sh OUT BUILD...   (builds named by their position: A, B, ...)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=$1
shift
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
echo "round,build,engine,insert_s,insert_ticks,index_s,index_ticks" >"$OUT/load-phases.csv"
for round in $(seq 1 "${ROUNDS:-2}"); do
  n=0
  for build in "$@"; do
    name=$(printf "\\x$(printf %x $((65 + n)))")
    engines=TidesDB
    [ "$n" -gt 0 ] || engines="TidesDB InnoDB"
    ENGINES=$engines "$here/load.sh" "$build" "$OUT/server-$name" 2>/dev/null | grep -E '^(TidesDB|InnoDB) ' |
      while read -r engine a b c d; do echo "$round,$name,$engine,$a,$b,$c,$d"; done >>"$OUT/load-phases.csv"
    n=$((n + 1))
  done
done
python3 - "$OUT/load-phases.csv" <<'PY' | tee "$OUT/summary.md"
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
groups = collections.defaultdict(list)
for r in rows: groups[(r["build"], r["engine"])].append(r)
print("| build | engine | rounds | insert s | insert CPU s | index s | index CPU s |")
print("|---|---|---|---|---|---|---|")
for (build, engine), rs in sorted(groups.items()):
    mean = lambda k, scale=1: sum(float(r[k]) for r in rs) / len(rs) / scale
    print(f"| {build} | {engine} | {len(rs)} | {mean('insert_s'):.2f} | {mean('insert_ticks', 100):.2f} | "
          f"{mean('index_s'):.2f} | {mean('index_ticks', 100):.2f} |")
PY
