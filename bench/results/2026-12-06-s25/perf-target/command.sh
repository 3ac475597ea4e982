#!/usr/bin/env bash
# Session 25: what `perf record` does to the rates it profiles. Cached oltp_read_write
# after 20 s of oltp_write_only, one engine per server (8 x 200k, 2 GiB, relaxed, 4 threads;
# ../../2026-12-06-s23/delete-profile/command.sh), four ways per engine:
#   no-perf            MODE=threads: no perf, CPU ticks per server thread
#   per-process-1999   perf record -e cpu-clock -F 1999 -p <mariadbd> (every earlier profile)
#   per-process-199    the same at 199 samples a second
#   system-wide-1999   perf record -a -F 1999, reported for the server's pid only
# Each run prints the rates of its churn, warm-up and measured run (runs.txt).
# Usage: command.sh BUILD OUT
set -euo pipefail
BUILD=$(cd "$1" && pwd) OUT=$2
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
profile=$(cd "$(dirname "$0")/../../2026-12-06-s23/delete-profile" && pwd)/command.sh
for engine in TidesDB InnoDB; do
  for way in no-perf per-process-1999 per-process-199 system-wide-1999; do
    case $way in
      no-perf) env=(MODE=threads) ;;
      per-process-1999) env=(MODE=profile) ;;
      per-process-199) env=(MODE=profile FREQ=199) ;;
      system-wide-1999) env=(MODE=profile SYSTEM_WIDE=1) ;;
    esac
    echo "$engine $way: $(env "${env[@]}" ENGINE=$engine WORKLOAD=oltp_read_write "$profile" "$BUILD" \
      "$OUT/$way" 2>/dev/null | tr '\n' ' ')"
  done
done | tee "$OUT/runs.txt"
