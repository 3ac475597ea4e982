#!/usr/bin/env bash
# Usage: scripts/stock-suites.sh BUILD_DIR [--engine=TidesDB|InnoDB] [--suites=LIST]
#                                [--subset] [--pessimistic] [-- MTR_ARGS...]
#
# Runs MariaDB's stock engine-agnostic mysql-test suites against one engine, as acceptance
# tests for TidesDB (or against InnoDB, the reference the results are compared with):
#
#   engines/funcs, engines/iuds   the suites' combinations files force InnoDB or MyISAM, so
#                                 the engine comes from --combination=--default-storage-engine
#   storage_engine                through the engine's overlay: mysql-test/plugin/tidesdb/
#   storage_engine/parts          storage_engine/ in this repository for TidesDB (linked into
#   storage_engine/trx            the private test tree), the stock plugin/innobase for InnoDB
#   binlog                        through the overlay mysql-test/plugin/tidesdb/binlog for
#                                 TidesDB (the default engine; its disabled.def lists what
#                                 fails for InnoDB too), --default-storage-engine for InnoDB
#   parts                         the same way (overlay mysql-test/plugin/tidesdb/parts), its
#                                 engine-agnostic tests only: those not named for an engine
#                                 (partition_basic_innodb, ...), which test that engine
#   rpl                           the same way (overlay mysql-test/plugin/tidesdb/rpl: TidesDB
#                                 the default engine of every server of a test; the row and
#                                 mixed combinations), every test; most of an hour per engine
#                                 on two cores, so run only when named
#
# LIST is comma-separated, from the eight names above (default: all but rpl). --subset runs
# only a few representative tests of each suite (a smoke run of a minute or two; none yet
# for rpl). --pessimistic
# starts the servers with --tidesdb-pessimistic-locking=ON. Arguments after -- go to
# mysql-test-run unchanged.
#
# Runs from the private copy of the installed test tree that scripts/test.sh prepares,
# BUILD_DIR/mtr/mysql-test (made here too when missing). Each suite has its own vardir,
# BUILD_DIR/test-logs/stock/<run>/<suite>/var (server error logs in var/log and
# var/*/log), its mtr output in BUILD_DIR/test-logs/stock/<run>/<suite>.log, and the
# .reject files of its failed tests moved to BUILD_DIR/test-logs/stock/<run>/<suite>/rejects
# (mysqltest writes them next to the result files, where the next run would overwrite them;
# scripts/compare-rejects.py reads them from there). <run> is tidesdb, tidesdb-pessimistic
# or innodb.
#
# Prints one line per suite (passed, failed, skipped, seconds) and last "N passed, N failed";
# the exit status is non-zero when a test failed or a suite could not run.
#
# The storage_engine results recorded in 10.11.18 are stale (InnoDB itself fails about half
# of them): judge its failures with scripts/compare-rejects.py against an InnoDB run.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${TEST_JOBS:-2}
TESTCASE_TIMEOUT=${TEST_TESTCASE_TIMEOUT:-5} # minutes, per test
SUITE_TIMEOUT=${TEST_SUITE_TIMEOUT:-120}     # minutes, per suite
ALL_SUITES=engines/funcs,engines/iuds,storage_engine,storage_engine/parts,storage_engine/trx,binlog,parts
KNOWN_SUITES=$ALL_SUITES,rpl

usage() {
  sed -n '2,3p' "$0" | sed 's/^# //' >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" 2>/dev/null && pwd) || {
  echo "stock-suites: build directory $1 does not exist (make build)" >&2
  echo "0 passed, 1 failed"
  exit 1
}
shift
ENGINE=TidesDB
SUITES=$ALL_SUITES
SUBSET=0
PESSIMISTIC=0
MTR_EXTRA_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --engine=*) ENGINE=${1#--engine=} ;;
    --suites=*) SUITES=${1#--suites=} ;;
    --subset) SUBSET=1 ;;
    --pessimistic) PESSIMISTIC=1 ;;
    --)
      shift
      MTR_EXTRA_ARGS=("$@")
      break
      ;;
    *) usage ;;
  esac
  shift
done
case "$ENGINE" in
  TidesDB | tidesdb) ENGINE=TidesDB OVERLAY=tidesdb ;;
  InnoDB | innodb) ENGINE=InnoDB OVERLAY=innobase ;;
  *) usage ;;
esac
[ "$PESSIMISTIC" = 1 ] && [ "$ENGINE" = InnoDB ] && usage

# A few tests per suite for --subset, a smoke run of about a minute: table DDL, each DML
# statement, keys, CHECK / CHECKSUM / TRUNCATE, partitions, and the transaction tests. The
# storage_engine ones are tests whose recorded results InnoDB passes (most others are stale).
subset_of() {
  case "$1" in
    engines/funcs) echo "ai_init_create_table de_truncate ix_index_non_string in_number_null
      in_string_pk_constraint_duplicate_update ta_add_column_first up_nullcheck
      sq_all se_join_inner tc_partition_hash tr_insert" ;;
    engines/iuds) echo "insert_number update_decimal delete_year" ;;
    storage_engine) echo "1st insert insert_with_keys update update_with_keys update_multi
      delete delete_with_keys replace loaddata check_table checksum_table truncate_table
      type_blob type_enum vcol" ;;
    storage_engine/parts) echo "alter_table check_table checksum_table optimize_table" ;;
    parts) echo "alter_table partition_exch_qa_2 reorganize show_create" ;;
    storage_engine/trx) echo "insert update delete level_read_committed
      level_repeatable_read cons_snapshot_repeatable_read xa" ;;
  esac
}

RUN=$(tr '[:upper:]' '[:lower:]' <<<"$ENGINE")
[ "$PESSIMISTIC" = 1 ] && RUN=$RUN-pessimistic
LOGS=$BUILD/test-logs/stock/$RUN
mkdir -p "$LOGS"
MTR_BASE=$BUILD/mtr
TESTS=$MTR_BASE/mysql-test

# The private test tree (scripts/mtr-tree.sh), shared with scripts/test.sh.
. "$ROOT/scripts/mtr-tree.sh"
prepare_tree() { prepare_mtr_tree "$MTR_BASE" "$BUILD/plugin/ha_tidesdb.so" "$ROOT"; }

# The directories where mysqltest may leave .reject files of a suite: beside the stock
# results, and beside the overlay's .rdiff files.
reject_dirs() {
  case "$1" in
    engines/*) echo "$TESTS/suite/$1/r" ;;
    storage_engine*) echo "$TESTS/suite/$1 $TESTS/plugin/$OVERLAY/$1" ;;
    binlog | parts | rpl) echo "$TESTS/suite/$1/r $TESTS/plugin/tidesdb/$1" ;;
  esac
}

# The stock parts suite's tests that are not named for one engine (the others set $engine
# to theirs, or name it in their .opt files: they test that engine's partitioning), and,
# for TidesDB, the overlay's own runs of the suite's per-engine include files on TidesDB
# (partition_int_tidesdb, ...).
parts_tests() {
  find "$TESTS/suite/parts/t" -name '*.test' -printf '%f\n' | sed 's/\.test$//' |
    grep -vE '(innodb|myisam|maria|archive|blackhole|memory|rocksdb)' | sort
  [ "$ENGINE" = TidesDB ] && find -L "$TESTS/plugin/tidesdb/parts/t" -name '*.test' -printf '%f\n' |
    sed 's/\.test$//' | sort
}

# The servers load a copy of ha_tidesdb.so taken when the run starts, from a plugin folder of
# this script's own (links to the stock plugins plus that copy), so that every suite of a run
# tests the same build even when the plugin is rebuilt meanwhile.
snapshot_plugin() {
  PLUGIN_DIR=$LOGS/plugin
  rm -rf "$PLUGIN_DIR"
  mkdir -p "$PLUGIN_DIR"
  local f
  for f in /usr/lib/mysql/plugin/*; do ln -s "$f" "$PLUGIN_DIR/$(basename "$f")"; done
  rm -f "$PLUGIN_DIR/ha_tidesdb.so"
  cp "$BUILD/plugin/ha_tidesdb.so" "$PLUGIN_DIR/ha_tidesdb.so" || return 1
  echo "stock-suites: testing $BUILD/plugin/ha_tidesdb.so of" \
    "$(date -r "$BUILD/plugin/ha_tidesdb.so" '+%F %T'), md5 $(md5sum <"$PLUGIN_DIR/ha_tidesdb.so" | cut -c1-12)"
}

total_passed=0
total_failed=0
failures=()

run_suite() {
  local suite=$1 slug=${1//\//-}
  local log=$LOGS/$slug.log out=$LOGS/$slug
  local args=(--parallel="$JOBS" --force --max-test-fail=0 --testcase-timeout="$TESTCASE_TIMEOUT"
    --suite-timeout="$SUITE_TIMEOUT" --vardir="$out/var")
  case "$suite" in
    engines/funcs | engines/iuds)
      args+=(--suite="$suite" --combination=--default-storage-engine="$ENGINE" --mysqld=--partition)
      if [ "$ENGINE" = TidesDB ]; then
        args+=(--mysqld=--plugin-load-add=ha_tidesdb.so --mysqld=--tidesdb=FORCE
          --mysqld=--plugin-maturity=gamma)
      else
        args+=(--mysqld=--innodb) # mtr starts servers with --loose-skip-innodb
      fi
      ;;
    storage_engine | storage_engine/parts | storage_engine/trx)
      # The overlay's suite.opt loads the engine.
      args+=(--suite="$suite-$OVERLAY")
      ;;
    binlog | parts | rpl)
      if [ "$ENGINE" = TidesDB ]; then
        args+=(--suite="$suite-tidesdb")
      else
        args+=(--suite="$suite" --mysqld=--innodb --mysqld=--default-storage-engine=InnoDB)
      fi
      ;;
    *)
      echo "stock-suites: unknown suite $suite (one of $KNOWN_SUITES)" >&2
      failures+=("$suite: unknown suite")
      total_failed=$((total_failed + 1))
      return
      ;;
  esac
  [ "$ENGINE" = TidesDB ] && args+=(--mysqld=--plugin-dir="$PLUGIN_DIR")
  [ "$PESSIMISTIC" = 1 ] && args+=(--mysqld=--tidesdb-pessimistic-locking=ON)
  args+=("${MTR_EXTRA_ARGS[@]}")
  local t
  if [ "$SUBSET" = 1 ]; then
    for t in $(subset_of "$suite"); do args+=("$t"); done
  elif [ "$suite" = parts ]; then
    # Big tests included: the per-engine include files are most of the suite's coverage.
    args+=(--big-test)
    for t in $(parts_tests); do args+=("$t"); done
  fi

  local dir
  for dir in $(reject_dirs "$suite"); do
    [ -d "$dir" ] && find -L "$dir" -maxdepth 1 -name '*.reject' -delete
  done
  rm -rf "$out/rejects"
  mkdir -p "$out/rejects"

  echo "=== $suite ($ENGINE) ==="
  echo "(cd $TESTS && perl mariadb-test-run.pl ${args[*]})"
  local start=$SECONDS
  (cd "$TESTS" && perl mariadb-test-run.pl "${args[@]}") >"$log" 2>&1
  local rc=$? seconds=$((SECONDS - start))

  for dir in $(reject_dirs "$suite"); do
    [ -d "$dir" ] && find -L "$dir" -maxdepth 1 -name '*.reject' -exec mv -t "$out/rejects" {} +
  done

  # Result lines: "storage_engine-tidesdb.alter_table  w2 [ pass ]  123". A test can be
  # reported twice (passed, then failed by the server-log check): it counts as failed. A
  # worker's start-up warning can land between a test's name and its "[ disabled ]" (the
  # workers share the output): such a line is put back together first.
  local statuses
  statuses=$(perl -0pe 's/ *worker\[\d+\] mysql-test-run: WARNING: [^\n]*\n(?=\[ )/ /g' "$log" |
    sed -nE 's/^([^ ]+\.[^ ]+)( +'"'"'[^'"'"']*'"'"')? +(w[0-9]+ +)?\[ (pass|fail|skipped|disabled) \].*/\1 \4/p' |
    sort -u)
  local failed_names ok bad skipped
  failed_names=$(awk '$2 == "fail" {print $1}' <<<"$statuses" | sort -u)
  bad=$(grep -c . <<<"$failed_names")
  ok=$(awk '$2 == "pass" {print $1}' <<<"$statuses" | sort -u | comm -23 - <(echo "$failed_names") | grep -c .)
  skipped=$(awk '$2 == "skipped" || $2 == "disabled" {print $1}' <<<"$statuses" | sort -u | grep -c .)
  total_passed=$((total_passed + ok))
  total_failed=$((total_failed + bad))
  local name
  for name in $failed_names; do failures+=("$name"); done
  # mtr prints "Completed: ..." last; without it the run was cut short (seen: the main mtr
  # process dying of SIGPIPE, exit 141, with tests still queued), and the counts are partial.
  if ! grep -q '^Completed: ' "$log"; then
    failures+=("$suite: mysql-test-run did not complete (exit $rc), counts are partial; see $log")
    total_failed=$((total_failed + 1))
  elif [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    failures+=("$suite: mysql-test-run exited with status $rc without a failed test; see $log")
    total_failed=$((total_failed + 1))
  elif [ "$ok" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$skipped" -eq 0 ]; then
    failures+=("$suite: ran no test; see $log")
    total_failed=$((total_failed + 1))
  fi
  summaries+=("$(printf '%-22s %-8s %4d passed %4d failed %4d skipped %6ds' \
    "$suite" "$ENGINE" "$ok" "$bad" "$skipped" "$seconds")")
  echo "${summaries[-1]}   (log $log)"
}

summaries=()
if ! prepare_tree || { [ "$ENGINE" = TidesDB ] && ! snapshot_plugin; }; then
  echo "0 passed, 1 failed"
  exit 1
fi
IFS=, read -r -a suite_list <<<"$SUITES"
for s in "${suite_list[@]}"; do run_suite "$s"; done

echo
printf '%s\n' "${summaries[@]}"
if [ ${#failures[@]} -gt 0 ]; then
  echo "Failures (logs in $LOGS):"
  printf '  %s\n' "${failures[@]}"
fi
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
