#!/usr/bin/env bash
# Session 19 (2026-12-05): where a cached point select's, delete's and random-ranges
# query's CPU goes, TidesDB against InnoDB, by shared object: session 15's split
# (2026-12-03-s15/cpu-split/command.sh, which says what it measures) for other workloads.
# Plugin at 4005b04. Usage: command.sh BUILD (absolute path); output.txt is its output.
set -euo pipefail
cd "$(dirname "$0")"
for wl in oltp_point_select oltp_delete select_random_ranges; do
  echo "== $wl"
  WL=$wl ../../2026-12-03-s15/cpu-split/command.sh "$1" 2>&1 | grep -v '^20..-'
done
