#!/usr/bin/env bash
# Session 31 (2026-12-07), plugin at 2fb6599: cached oltp_update_index at 1 client thread
# (the matrix's large / relaxed / 1-thread row, 0.77x InnoDB in session 31's run, 0.90x in
# session 30's), one engine per server (8 x 200k, 2 GiB, relaxed, after 20 s of
# oltp_write_only at 1 thread): a perf profile of every CPU (the server's samples by symbol
# and DSO), then context switches and system calls over 14 s (perf stat), TidesDB first.
# Usage: command.sh BUILD OUT
set -euo pipefail
BUILD=$1 OUT=$2
script="$(dirname "$0")/../../2026-12-06-s23/delete-profile/command.sh"
for engine in TidesDB InnoDB; do
  THREADS=1 SYSTEM_WIDE=1 CACHE=2G ENGINE=$engine WORKLOAD=oltp_update_index FREQ=999 \
    "$script" "$BUILD" "$OUT"
done
for engine in TidesDB InnoDB; do
  MODE=syscalls THREADS=1 CACHE=2G ENGINE=$engine WORKLOAD=oltp_update_index \
    "$script" "$BUILD" "$OUT"
done
