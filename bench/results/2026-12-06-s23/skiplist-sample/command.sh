#!/usr/bin/env bash
# Session 23: the skip list's sampled insert start (skiplist-sample.patch, not kept) against
# the plugin without it, one server per run, builds alternating: the flat profile of cached
# oltp_delete (../delete-profile/command.sh) and its server CPU per event
# (the same script with MODE=threads), twice each: first the
# profiles, then the CPU counts.
# Usage: command.sh BEFORE_BUILD SAMPLE_BUILD OUT (SAMPLE_BUILD: this tree with the patch
# applied, `git apply bench/results/2026-12-06-s23/skiplist-sample/skiplist-sample.patch`).
set -euo pipefail
BEFORE=$1 SAMPLE=$2 OUT=$3
cd "$(dirname "$0")/../../../.."
build_of() { if [ "$1" = sample ]; then echo "$SAMPLE"; else echo "$BEFORE"; fi; }
for r in 1 2; do
  for b in before sample; do
    ENGINE=TidesDB bench/results/2026-12-06-s23/delete-profile/command.sh "$(build_of $b)" "$OUT/profile-$b-$r"
  done
done
for r in 1 2; do
  for b in before sample; do
    ENGINE=TidesDB MODE=threads bench/results/2026-12-06-s23/delete-profile/command.sh "$(build_of $b)" "$OUT/threads-$b-$r"
  done
done
