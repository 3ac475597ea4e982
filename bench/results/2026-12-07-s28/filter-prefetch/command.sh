#!/usr/bin/env bash
# Session 28: builds A, B, ... of the plugin profiled in turn (ROUNDS rounds) on one cached
# workload after 20 s of oltp_write_only (8 x 200k rows, 2 GiB, relaxed, 4 threads; the
# session 23 delete-profile script, perf record -a at 999 Hz for 12 s, a fresh server per
# run), then summary.py: per run, throughput and the server's samples per thousand
# transactions, in all and in the functions named by SYMBOLS (substrings).
# Usage: [WORKLOAD=select_random_ranges ROUNDS=2 SYMBOLS="BloomMayContain ..."]
#        command.sh OUT BUILD_A BUILD_B...
set -euo pipefail
OUT=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
WORKLOAD=${WORKLOAD:-select_random_ranges}
: >"$OUT/runs.txt"
for round in $(seq "${ROUNDS:-2}"); do
  for build in "$@"; do
    name=$(basename "$build")
    SYSTEM_WIDE=1 CACHE=2G ENGINE=TidesDB WORKLOAD=$WORKLOAD FREQ=999 KEEP=1 \
      "$here/../../2026-12-06-s23/delete-profile/command.sh" "$build" "$OUT/$round.$name" |
      awk -v r="$round" -v b="$name" '/^run/ {gsub(/\(/, "", $3); print r, b, $3}' | tee -a "$OUT/runs.txt"
    perf report -i "$OUT/$round.$name/perf.TidesDB.data" --comm mariadbd --no-children --sort dso,sym -g none \
      -n --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' >"$OUT/$round.$name/samples.txt"
    rm -f "$OUT/$round.$name/perf.TidesDB.data"
  done
done
python3 "$here/summary.py" "$OUT" ${SYMBOLS:-BloomMayContain ApproximateRangeSize FindGreaterOrEqual memcmp} |
  tee "$OUT/summary.txt"
