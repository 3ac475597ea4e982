#!/usr/bin/env bash
# The exact command behind the "Off-row BLOB values" section of bench/RESULTS.md
# (2026-12-02, session 10): the large-values benchmark of bench/results/2026-12-02 again,
# same sizes, after off-row BLOB storage (tidesdb_off_row_blob_size, default 8192: every
# payload of this benchmark, 64 KiB - 2 MiB, is stored off its row).
set -euo pipefail
OUT=bench/results/2026-12-02-s10
DATA_MB=512 CACHE=64M SLICE=8 ROUNDS=2 bench/large-values.sh build "$OUT" 2>&1 | tee "$OUT/large-values.log"
