#!/usr/bin/env bash
# Usage: bench/run-all.sh BUILD_DIR [OUT_DIR]
#
# Every SQL-level benchmark, one after the other, into one directory, then the plots and a
# RESULTS.md that says what ran where: bench/sysbench-compare.sh, then bench/tpcc-compare.sh
# and bench/large-values.sh when they exist (each with the same BUILD_DIR, OUT_DIR and
# QUICK), then bench/plot.py. Each script starts and removes its own private server (never
# two at once). A script that fails is reported in RESULTS.md and the next one still runs;
# the exit status is then 1.
#
# Environment: QUICK=1 (every script's smoke run: a few minutes in all). Every other knob
#   in the environment (TABLES, ROWS, SLICE, ROUNDS, ENGINES, ...) reaches every script:
#   set them for one script by running that script alone.
# Output, in OUT_DIR (default bench/results/<date>, bench/results/<date>-quick with
# QUICK=1, a -HHMMSS suffix when that exists already):
#   RESULTS.md          machine, versions, engine settings, the command, every summary and
#                       plot
#   <script>.log        each script's console output
#   plots/*.png         bench/plot.py's plots
#   and each script's own files (sysbench*.csv, sysbench-summary.md, tpcc.csv,
#   large-values.csv, server.err, ...).
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=${QUICK:-0}
if [ -n "${2:-}" ]; then
  OUT=$2
else
  OUT=$ROOT/bench/results/$(date -u +%Y-%m-%d)
  [ "$QUICK" = 1 ] && OUT=$OUT-quick
  [ -e "$OUT" ] && OUT=$OUT-$(date -u +%H%M%S)
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export QUICK

command_line="bench/run-all.sh $*"
[ -n "${MAKELEVEL:-}" ] && command_line="$command_line   # started by make bench"
knobs=$(env | grep -E '^(QUICK|TABLES|ROWS|THREAD_COUNTS|SLICE|ROUNDS|ENGINES|REGIMES|DURABILITIES|WORKLOADS|LOAD_THREADS|WARMUP|TMPDIR)=' |
  sort | tr '\n' ' ' || true)
plugin=$BUILD/plugin/ha_tidesdb.so
plugin_sha=$(sha256sum "$plugin" | cut -d' ' -f1)
started=$(date -u +"%Y-%m-%d %H:%M:%S")
t_start=$(date +%s)
steps=()
failed=0

run_step() { # script
  local script=$1 name rc t0
  name=$(basename "$script" .sh)
  if [ ! -f "$ROOT/bench/$script" ]; then
    echo "run-all: bench/$script is not there; skipped"
    steps+=("| bench/$script | not present, skipped | - |")
    return 0
  fi
  echo "run-all: bench/$script $BUILD $OUT (QUICK=$QUICK)"
  t0=$(date +%s)
  rc=0
  bash "$ROOT/bench/$script" "$BUILD" "$OUT" 2>&1 | tee "$OUT/$name.log" || rc=${PIPESTATUS[0]}
  local minutes
  minutes=$(awk -v s=$(($(date +%s) - t0)) 'BEGIN {printf "%.1f", s / 60}')
  if [ "$rc" = 0 ]; then
    steps+=("| bench/$script | ok | $minutes |")
  else
    steps+=("| bench/$script | **failed** (exit $rc; see $name.log) | $minutes |")
    failed=1
  fi
}

run_step sysbench-compare.sh
run_step tpcc-compare.sh
run_step large-values.sh
plots_ok=1
/usr/bin/python3 "$ROOT/bench/plot.py" "$OUT" >"$OUT/plot.log" 2>&1 || {
  plots_ok=0
  failed=1
}
finished=$(date -u +"%Y-%m-%d %H:%M:%S")
total_minutes=$(awk -v s=$(($(date +%s) - t_start)) 'BEGIN {printf "%.0f", s / 60}')

# --- RESULTS.md ---------------------------------------------------------------------------
scratch=${TMPDIR:-/tmp}
mount_line=$(findmnt -T "$scratch" -n -o SOURCE,FSTYPE,SIZE,OPTIONS 2>/dev/null || echo "?")
source_dev=$(findmnt -T "$scratch" -n -o SOURCE 2>/dev/null || true)
if [ -b "$source_dev" ]; then
  disk=$(lsblk -d -n -o NAME,MODEL,SIZE,ROTA,TYPE "$source_dev" 2>/dev/null | tr -s ' ')
else
  disk="$source_dev is not a block device"
fi
plugin_commit=$(git -C "$BUILD" rev-parse --short HEAD 2>/dev/null || echo "not in a git tree")
bench_commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo "?")
# What a script measures: its header comment from the line after "Usage:" up to its
# "Environment:" paragraph.
quote_header() { # script
  sed -n '3,/^# Environment/p' "$1" | sed '$d; s/^# \{0,1\}//' |
    awk 'NF { for (; blank > 0; blank--) print ""; print; seen = 1; next } seen { blank++ }'
}
quote_settings() {
  # The header comment of private-server.sh (why the settings are equivalent) and the
  # mariadbd command line start_server runs.
  sed -n '1,/^[^#]/{/^#/p}' "$ROOT/bench/private-server.sh"
  echo
  sed -n '/\/usr\/sbin\/mariadbd/,/"\$@"/p' "$ROOT/bench/private-server.sh" | sed 's/^ *//'
}
# A summary's headings moved so that its top level sits just under "## Results" (###),
# fenced code left alone.
under_results() { # file.md
  awk 'NR == FNR {
         if (/^```/) fence = !fence
         else if (!fence && match($0, /^#+ /) && (!top || RLENGTH - 1 < top)) top = RLENGTH - 1
         next
       }
       FNR == 1 { fence = 0 }
       /^```/ { fence = !fence; print; next }
       !fence && match($0, /^#+ / ) {
         printf "%s%s\n", substr("######", 1, RLENGTH - 1 - top + 3), substr($0, RLENGTH); next
       }
       { print }' "$1" "$1"
}

{
  echo "# SQL benchmarks: TidesDB, InnoDB and MyRocks side by side"
  echo
  echo "Run from $started to $finished UTC ($total_minutes min)$([ "$QUICK" = 1 ] && echo ", QUICK=1: a smoke run, not results")."
  echo
  echo "## Command"
  echo
  echo '```'
  echo "cd $ROOT && ${knobs}$command_line"
  echo '```'
  echo
  echo "| step | status | minutes |"
  echo "|---|---|---|"
  printf '%s\n' "${steps[@]}"
  echo "| bench/plot.py | $([ "$plots_ok" = 1 ] && echo ok || echo "**failed** (see plot.log)") | - |"
  echo
  echo "## Machine"
  echo
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores online" \
    "($(lscpu | sed -n 's/^Thread(s) per core: *//p') thread(s) per core)"
  echo "- RAM: $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "- Kernel: $(uname -srm); $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "- Datadirs in $scratch: \`$mount_line\`; disk: \`$disk\` (ROTA 1 = reported rotational)"
  echo "- Other work may run on this machine; engines alternate slice by slice for that reason."
  echo
  echo "## Versions"
  echo
  echo "- $(/usr/sbin/mariadbd --version)"
  echo "- $(sysbench --version)"
  echo "- bench scripts: commit $bench_commit ($ROOT)"
  echo "- plugin: $plugin, sha256 ${plugin_sha:0:16}..., file dated $(date -u -r "$plugin" +"%Y-%m-%d %H:%M UTC"), BUILD_DIR commit $plugin_commit"
  if [ "$(sha256sum "$plugin" | cut -d' ' -f1)" != "$plugin_sha" ]; then
    echo "- **the plugin file changed during the run** (now sha256 $(sha256sum "$plugin" | cut -c1-16)...):" \
      "servers started after the change ran the new one"
  fi
  echo
  echo "## Engine settings"
  echo
  echo "Every script starts one private server with \`start_server CACHE DURABILITY [options]\`"
  echo "from bench/private-server.sh; its own comment says why the settings are equivalent:"
  echo
  echo '```'
  quote_settings
  echo '```'
  echo
  echo "Each script's start_server calls (their extra options on top of the above) and what it"
  echo "measures, from its header:"
  echo
  echo '```'
  for script in sysbench-compare.sh tpcc-compare.sh large-values.sh; do
    [ -f "$ROOT/bench/$script" ] || continue
    { grep -n -A1 '^ *start_server ' "$ROOT/bench/$script" || true; } | sed "s|^|bench/$script:|"
  done
  echo '```'
  for script in sysbench-compare.sh tpcc-compare.sh large-values.sh; do
    [ -f "$ROOT/bench/$script" ] || continue
    echo
    echo "bench/$script:"
    echo
    echo '```'
    quote_header "$ROOT/bench/$script"
    echo '```'
  done
  echo
  echo "## Results"
  for md in "$OUT/sysbench-summary.md" "$OUT"/*.md; do
    [ -f "$md" ] || continue
    case $(basename "$md") in RESULTS.md) continue ;; esac
    [ "$md" = "$OUT/sysbench-summary.md" ] && [ -n "${sysbench_shown:-}" ] && continue
    [ "$md" = "$OUT/sysbench-summary.md" ] && sysbench_shown=1
    echo
    echo "<!-- from $(basename "$md") -->"
    under_results "$md"
  done
  echo
  echo "## Plots"
  echo
  # In the order plot.py wrote them (sysbench first).
  for png in $(grep '\.png$' "$OUT/plot.log" 2>/dev/null || true); do
    [ -f "$png" ] || continue
    echo "### $(basename "$png" .png)"
    echo
    echo "![$(basename "$png" .png)](plots/$(basename "$png"))"
    echo
  done
} >"$OUT/RESULTS.md"

echo "run-all: $OUT/RESULTS.md"
exit "$failed"
