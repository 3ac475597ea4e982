#!/usr/bin/env bash
# Session 22: where cached oltp_delete's server CPU goes (8 x 200k, 2 GiB, relaxed, 4 threads,
# after 20 s of oltp_write_only and a 5 s warm-up), one engine per server. MODE=threads:
# CPU ticks per server thread over 15 s of the workload (/proc/PID/task/*/stat; the thread
# names tell TidesDB's tdb-* background threads from the connections). MODE=syscalls:
# context switches and system calls over 14 s (perf stat). The README's numbers come from
# one run per engine and mode. Since session 23 the steps are in the one script that also
# profiles the same run (../../2026-12-06-s23/delete-profile/command.sh); unchanged.
# Usage: ENGINE=TidesDB|InnoDB MODE=threads|syscalls command.sh BUILD OUT
set -euo pipefail
MODE=${MODE:-threads} exec "$(dirname "$0")/../../2026-12-06-s23/delete-profile/command.sh" "$@"
