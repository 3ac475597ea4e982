#!/usr/bin/env bash
# Session 24: commit groups that leave the write queue before their memtable inserts
# (the next group logs meanwhile; groups publish in sequence order), against the build
# before (8e1d168). BEFORE and AFTER are build directories holding plugin/ha_tidesdb.so.
#   fresh/    bench/scan-ab.sh, 4 x 100k rows as loaded, 2 GiB, relaxed, 4 threads, 3 rounds
#             of 8 s slices of five write workloads
#   churned/  the same on 8 x 200k rows after 20 s of oltp_write_only (the sysbench
#             matrix's cached state), oltp_read_write too
#   syscalls/ cached oltp_delete, one server per build: sched_yield calls, context
#             switches and WAL writes per event (delete-profile's MODE=syscalls)
# Summary: summary.py OUT (TidesDB / InnoDB per build, and B against A).
# Usage: command.sh BEFORE AFTER OUT
set -euo pipefail
BEFORE=$1 AFTER=$2 OUT=$3
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
THREADS=4 ROUNDS=3 LABELS="oltp_delete oltp_update_index oltp_update_non_index oltp_write_only oltp_insert" \
  bench/scan-ab.sh "$BEFORE" "$AFTER" "$OUT/fresh"
TABLES=8 ROWS=200000 THREADS=4 ROUNDS=3 CHURN=oltp_write_only:20 \
  LABELS="oltp_delete oltp_update_index oltp_update_non_index oltp_write_only oltp_insert oltp_read_write" \
  bench/scan-ab.sh "$BEFORE" "$AFTER" "$OUT/churned"
mkdir -p "$OUT/syscalls"
for b in "$BEFORE" "$AFTER"; do
  name=$([ "$b" = "$BEFORE" ] && echo before || echo after)
  echo "$name: $(ENGINE=TidesDB MODE=syscalls bench/results/2026-12-06-s23/delete-profile/command.sh "$b" \
    "$OUT/syscalls/$name" 2>/dev/null | grep '^run')"
done | tee "$OUT/syscalls/runs.txt"
/usr/bin/python3 "$here/summary.py" "$OUT" | tee "$OUT/summary.txt"
