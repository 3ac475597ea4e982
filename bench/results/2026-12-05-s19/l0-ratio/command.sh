#!/usr/bin/env bash
# Session 19 (2026-12-05): the L0 size-ratio trigger's write cost on the matrix's tables.
# On 8 x 200k rows a table's primary key is ~41 MiB in L1 and each flush of the unified
# 64 MiB memtable gives it a ~4.7 MiB L0 file: with the plugin's ratio 10 every flush
# merges into L1 (a 45 MiB rewrite for 4.7 MiB, 32 such compactions in 20 s of cached
# oltp_update_index). Session 17's l0-trigger harness, tables made with ratio 4 (r4) and
# 10 (r10) beside InnoDB; plugin at 4005b04. runN-compactions-and-files.txt: the L0,L1 file
# counts of sbtest1 after each round's writes and the compactions per database.
# run1: ROUNDS=3, run2: ROUNDS=5 (the harness writes l0-trigger.csv; renamed runN.csv).
cd "$(dirname "$0")/../../../.."
VAR=tidesdb_default_l0_compaction_size_ratio A=4 B=10 TAG=r TABLES=8 ROWS=200000 ROUNDS=${ROUNDS:-3} \
  bench/results/2026-12-05-s17/l0-trigger/command.sh "$PWD/build" bench/results/2026-12-05-s19/l0-ratio
# summary: bench/results/2026-12-05-s17/l0-trigger/summary.py r4 r10 r4 innodb r10 innodb -- \
#   bench/results/2026-12-05-s19/l0-ratio/runN.csv
