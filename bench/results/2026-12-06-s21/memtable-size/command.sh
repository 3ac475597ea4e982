#!/usr/bin/env bash
# Session 21 (2026-12-06): does a smaller unified memtable make cached writes cheaper? The
# skip list's searches miss the CPU caches once the memtable outgrows them (memtable-bench:
# an Add into 256k entries costs several times one into 16k). One plugin build, started
# alternately with the 64 MiB unified memtable the benchmarks use (A) and with 16 MiB (B),
# against InnoDB on the same datadir: 8 x 200k rows, 2 GiB caches, relaxed, 4 threads, the
# tables left as the writes shape them. Run from the repository root.
#   part 1: tools/memtable-bench at 16k .. 1M entries (4 MiB .. 256 MiB worth)
#   part 2: bench/scan-ab.sh, the write workloads and the reads they leave behind
set -euo pipefail
BUILD=${1:-build}
OUT=bench/results/2026-12-06-s21/memtable-size
"$BUILD/tools/memtable-bench/memtable-bench" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | tee "$OUT/memtable-bench.txt"
OPTS_B=--tidesdb-unified-memtable-write-buffer-size=16M TABLES=8 ROWS=200000 THREADS=4 SLICE=8 \
  ROUNDS=2 OPTIMIZE=0 \
  LABELS="oltp_update_index oltp_update_non_index oltp_insert oltp_delete oltp_write_only rranges rpoints points" \
  bench/scan-ab.sh "$BUILD" "$BUILD" "$OUT"
/usr/bin/python3 bench/scan-ab-summary.py "$OUT/scan-ab.csv" | tee "$OUT/scan-ab-summary.md"
