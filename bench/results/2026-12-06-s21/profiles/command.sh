#!/usr/bin/env bash
# Session 21 (2026-12-06): where cached oltp_delete spends the server's CPU (the one
# large-cache row where MyRocks is ahead in the session's matrix). Session 20's profile
# script with WORKLOADS=oltp_delete (8 x 200k rows, 2 GiB caches, relaxed, 4 threads, 20 s
# of oltp_write_only first, 15 s under perf), plus who calls the scheduler's
# finish_task_switch (the context switches). Usage: command.sh BUILD
set -euo pipefail
BUILD=$(cd "$1" && pwd)
cd "$(dirname "$0")/../../../.."
OUT=$PWD/bench/results/2026-12-06-s21/profiles
WORKLOADS=oltp_delete bench/results/2026-12-06-s20/profiles/command.sh "$BUILD" "$OUT"
perf report -i "$OUT/oltp_delete.data" --no-children --symbols=finish_task_switch.isra.0 \
  -g caller,0.5,callee,function,percent --stdio 2>/dev/null | grep -v '^$' | grep -v '^#' | head -120 \
  >"$OUT/oltp_delete.context-switches.txt"
rm -f "$OUT/oltp_delete.data"
