#!/usr/bin/env bash
# Session 21 (2026-12-06): the large-values comparison of 2026-12-02 again, on the plugin at
# 453874c, all three engines: 512 MiB of 64 KiB - 2 MiB BLOBs per engine, 64 MiB caches,
# 8 s slices x 2 rounds (bench/large-values.sh). Usage: large-values-command.sh BUILD; the
# run after OPTIMIZE learned to collect all value-log garbage: OUT=bench/results/2026-12-06-s21/large-values-optimize
set -euo pipefail
BUILD=$1
cd "$(dirname "$0")/../../.."
OUT=${OUT:-bench/results/2026-12-06-s21/large-values}
DATA_MB=512 CACHE=64M SLICE=8 ROUNDS=2 bench/large-values.sh "$BUILD" "$OUT" >"$OUT/large-values.log" 2>&1
/usr/bin/python3 bench/plot.py "$OUT"
