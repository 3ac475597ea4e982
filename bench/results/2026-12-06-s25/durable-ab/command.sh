#!/usr/bin/env bash
# Session 25: the durable regime (fsync per commit on every engine) with and without
# session 24's write queue change (commit groups leave the queue before their memtable
# inserts). BEFORE and AFTER are build directories holding plugin/ha_tidesdb.so.
#   scan-ab.csv  bench/scan-ab.sh, 4 x 100k rows as loaded, 2 GiB, durable, 4 threads,
#                3 rounds of 8 s slices of five write workloads, both builds against InnoDB
#   groups.txt   groups.sh, twice per build alternating: TidesDB alone in a durable server,
#                10 s per workload; throughput, commit groups and fsyncs per transaction
# Summary of scan-ab.csv: ../../2026-12-06-s24/write-pipeline/summary.py with OUT/fresh
# holding it.
# Usage: command.sh BEFORE AFTER OUT
set -euo pipefail
BEFORE=$(cd "$1" && pwd) AFTER=$(cd "$2" && pwd) OUT=$3
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
THREADS=4 ROUNDS=3 DURABILITY=durable \
  LABELS="oltp_delete oltp_update_index oltp_update_non_index oltp_write_only oltp_insert" \
  bench/scan-ab.sh "$BEFORE" "$AFTER" "$OUT/fresh"
for round in 1 2; do
  for b in "$BEFORE" "$AFTER"; do
    echo "== round $round $([ "$b" = "$BEFORE" ] && echo before || echo after)"
    "$here/groups.sh" "$b" "$OUT/groups-$round" 2>/dev/null
  done
done | tee "$OUT/groups.txt"
/usr/bin/python3 "$here/../../2026-12-06-s24/write-pipeline/summary.py" "$OUT" | tee "$OUT/summary.txt"
