#!/usr/bin/env bash
# Session 24: the library's concurrent writes before and after 91018d6 (commit groups leave
# the write queue before their memtable inserts), TidesDB only, the two kvbench builds
# alternating, ROUNDS [3] rounds:
#   4 writers, no fsync: fillrandom and overwrite, 500k keys of 100 B
#   4 writers, fsync per commit: fillrandom and overwrite, 20k commits (group commit)
#   4 threads of transactions: txn_rmw_opt and txn_rmw_pess, 6 s each
# Output: OUT/kvbench.txt (round, build, workload, ops/s), then OUT/summary.txt: the
# geometric mean over rounds of after / before per workload.
# Usage: command.sh BEFORE_KVBENCH AFTER_KVBENCH OUT
set -euo pipefail
BEFORE=$1 AFTER=$2 OUT=$3 ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
runs=(
  "--threads=4 --num=500000 --workloads=fillrandom,overwrite --suffix=_t4"
  "--threads=4 --num=200000 --sync=full --writes=20000 --workloads=fillrandom,overwrite --suffix=_syncfull_t4"
  "--threads=4 --num=100000 --txns=200000 --duration=6 --workloads=txn_rmw_opt,txn_rmw_pess --suffix=_t4"
)
: >"$OUT/kvbench.txt"
for round in $(seq "$ROUNDS"); do
  for build in before after; do
    bin=$([ $build = before ] && echo "$BEFORE" || echo "$AFTER")
    for args in "${runs[@]}"; do
      # shellcheck disable=SC2086 # args are several flags
      "$bin" --engines=tidesdb $args 2>&1 | awk -v r="$round" -v b="$build" '/^# summary:/ {on = 1; next} on && NF == 4 {print r, b, $1, $2}' |
        tee -a "$OUT/kvbench.txt"
    done
  done
done
awk '{v[$3 " " $2 " " $1] = $4; if ($2 == "after") {w[$3]; r[$1]}} END { # POSIX awk (mawk too)
  for (k in w) { n = 0; s = 0
    for (i in r) if (v[k " before " i] > 0 && v[k " after " i] > 0) { s += log(v[k " after " i] / v[k " before " i]); n++ }
    if (n) printf "%s after/before %.2f over %d rounds\n", k, exp(s / n), n } }' "$OUT/kvbench.txt" |
  sort | tee "$OUT/summary.txt"
