#!/usr/bin/env bash
# Session 24 (2026-12-06), plugin at 91018d6 (commit groups leave the write queue before
# their inserts): session 23's tpcc-rotated/command.sh again, writing here. TPC-C-like,
# relaxed, all three engines, rounds rotated, quiet start; 2 warehouses, 4 threads,
# 256 MiB caches, 15 s slices, 3 rounds. Usage: command.sh BUILD
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../2026-12-06-s23/tpcc-rotated/command.sh" "${1:-build}" "$here"
