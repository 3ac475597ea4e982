#!/usr/bin/env bash
# Usage: scripts/test.sh BUILD_DIR                   every test (what `make test` runs)
#        scripts/test.sh BUILD_DIR --mtr [ARGS...]   only the mysql-test-run suite, with
#                                                    extra mtr arguments, e.g.
#                                                    --record tidesdb.create_table
#
# Runs the library's unit tests (CTest) and then, unless ASAN=1 (the plugin is not part of
# sanitizer builds), the engine's mysql-test-run suite mysql-test/tidesdb, MariaDB's stock
# engine suites against TidesDB (scripts/stock-suites.sh: engines/funcs and engines/iuds in
# both locking modes; storage_engine judged against InnoDB by scripts/compare-rejects.py;
# binlog with TidesDB as the default engine; a subset of rpl), the randomized differential
# test against InnoDB and the SQL-level tests of tests/sql/ (crash, binlog crash,
# replication, backup, seed configuration, disk full). mysql-test-run writes results and .reject files next to
# the tests it runs, so it runs from a private copy of the installed test tree,
# BUILD_DIR/mtr/mysql-test, never from /usr/share. The copy's suite/tidesdb is a link to
# the repository's mysql-test/tidesdb, so --record updates the recorded results in the
# repository.
#
# The last line is always "N passed, N failed"; the exit status is non-zero when anything
# failed or a stage could not run (a stage that could not run counts as one failure).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${TEST_JOBS:-2}

usage() {
  echo "usage: $0 BUILD_DIR [--mtr [MTR_ARGS...]]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" 2>/dev/null && pwd) || {
  echo "test: build directory $1 does not exist (make build)" >&2
  echo "0 passed, 1 failed"
  exit 1
}
shift
MTR_ONLY=0
if [ $# -gt 0 ]; then
  [ "$1" = "--mtr" ] || usage
  MTR_ONLY=1
  shift
fi
MTR_EXTRA_ARGS=("$@")

LOGS=$BUILD/test-logs
mkdir -p "$LOGS"
passed=0
failed=0
failures=() # one line per failed test or stage, listed at the end

stage_failed() { # name, reason
  failed=$((failed + 1))
  failures+=("$1: $2")
}

# --- unit tests -------------------------------------------------------------------------------

run_ctest() {
  echo "=== unit tests (ctest --test-dir $BUILD -j$JOBS) ==="
  local log=$LOGS/ctest.log
  ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local summary
  summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -n "$summary" ]; then
    local total bad
    bad=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
    total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
    passed=$((passed + total - bad))
    failed=$((failed + bad))
    # "	  3 - coding_test.Fixed32 (Failed)" after "The following tests FAILED:"
    while read -r line; do
      failures+=("ctest: $line")
    done < <(sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ')
  elif grep -q 'No tests were found' "$log"; then
    echo "test: ctest found no tests"
  else
    stage_failed "ctest" "did not run to completion (exit $rc); see $log"
  fi
}

# --- mysql-test-run ---------------------------------------------------------------------------

MTR_BASE=${TIDESQL_MTR_BASE:-$BUILD/mtr}

# The private test tree (scripts/mtr-tree.sh), shared with scripts/stock-suites.sh.
. "$ROOT/scripts/mtr-tree.sh"
prepare_mtr() { prepare_mtr_tree "$MTR_BASE" "$BUILD/plugin/ha_tidesdb.so" "$ROOT"; }

run_mtr() {
  echo "=== mysql-test-run suite tidesdb ==="
  if ! prepare_mtr; then
    stage_failed "mysql-test-run" "could not prepare $MTR_BASE"
    return
  fi
  local log=$LOGS/mtr.log
  local args=(--suite=tidesdb --parallel="$JOBS" --force --max-test-fail=0
    --testcase-timeout=5 --suite-timeout=20 "${MTR_EXTRA_ARGS[@]}")
  echo "(cd $MTR_BASE/mysql-test && perl mariadb-test-run.pl ${args[*]})"
  (cd "$MTR_BASE/mysql-test" && perl mariadb-test-run.pl "${args[@]}") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # One result line per test run: "tidesdb.create_table   w1 [ pass ]   12".
  local ok bad
  ok=$(grep -cE '\[ pass \]' "$log")
  bad=$(grep -cE '\[ fail \]' "$log")
  passed=$((passed + ok))
  failed=$((failed + bad))
  local name
  while read -r name; do
    failures+=("mysql-test-run: $name (diff above; log $MTR_BASE/mysql-test/var/log)")
  done < <(grep -E '\[ fail \]' "$log" | awk '{print $1}' | sort -u)
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    stage_failed "mysql-test-run" "exited with status $rc without a failed test; see $log"
  elif [ "$rc" -eq 0 ] && [ "$ok" -eq 0 ]; then
    stage_failed "mysql-test-run" "ran no test; see $log"
  fi
}

# --- MariaDB's stock suites and the SQL-level tests ----------------------------------------

# Adds the "N passed, N failed" of a log's last such line to the totals.
add_counts() { # name log
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
  if [ -z "$line" ]; then
    stage_failed "$1" "printed no summary; see $2"
    return
  fi
  local p f
  p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
  f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$f" -eq 0 ] || failures+=("$1: $f failed; see $2")
}

# Tests of the stock suites that need a feature TidesDB does not have yet, each listed with
# its reason in docs/SQL-ENGINE.md ("Stock suites"): rpl_alter, whose recorded result names MyISAM (InnoDB fails it the same way); and six
# replication tests of engines/funcs that replicate TidesDB tables in STATEMENT format,
# which TidesDB refuses (1665, as MyRocks: its UPDATE and DELETE read a snapshot, so a
# replayed statement could find other rows; docs/SQL-ENGINE.md "Replication").
# (mtr matches the pattern anywhere in "suite.test": $ keeps rpl_sp from also skipping
# rpl_sp004 and rpl_sp_effects.)
STOCK_SKIP='engines/funcs.rpl_alter|engines/funcs.rpl_sp$'
STOCK_SKIP+='|engines/funcs.rpl_stm_mystery22$|engines/funcs.rpl_stm_no_op$|engines/funcs.rpl_switch_stm_row_mixed$'
STOCK_SKIP+='|engines/funcs.rpl_temp_table$|engines/funcs.rpl_trigger$'

run_stock_suites() {
  local log
  for mode in optimistic pessimistic; do
    echo "=== stock suites engines/funcs, engines/iuds on TidesDB ($mode) ==="
    log=$LOGS/stock-$mode.log
    local flag=()
    [ "$mode" = pessimistic ] && flag=(--pessimistic)
    "$ROOT/scripts/stock-suites.sh" "$BUILD" --suites=engines/funcs,engines/iuds "${flag[@]}" \
      -- --skip-test="$STOCK_SKIP" 2>&1 | tee "$log"
    add_counts "stock suites ($mode)" "$log"
  done
  # The binlog suite with TidesDB as the default engine; what fails for InnoDB as well is in
  # the overlay's disabled.def, each test with its reason.
  echo "=== stock suite binlog with TidesDB as the default engine ==="
  log=$LOGS/stock-binlog.log
  "$ROOT/scripts/stock-suites.sh" "$BUILD" --suites=binlog 2>&1 | tee "$log"
  add_counts "stock suite binlog" "$log"
  # The parts suite: its engine-agnostic tests with TidesDB as the default engine, and its
  # per-engine include files run on TidesDB (the overlay mysql-test/plugin/tidesdb/parts).
  echo "=== stock suite parts on TidesDB ==="
  log=$LOGS/stock-parts.log
  "$ROOT/scripts/stock-suites.sh" "$BUILD" --suites=parts 2>&1 | tee "$log"
  add_counts "stock suite parts" "$log"
  # A subset of the rpl suite (about three minutes; the whole suite, about 25 minutes, is make
  # test-rpl) with TidesDB as the default engine of the primary and the replica: tests that
  # replicate tables of the default engine, so TidesDB's (the overlay
  # mysql-test/plugin/tidesdb/rpl; the list is scripts/stock-suites.sh's subset_of rpl).
  echo "=== stock suite rpl (a subset) with TidesDB as the default engine ==="
  log=$LOGS/stock-rpl.log
  "$ROOT/scripts/stock-suites.sh" "$BUILD" --suites=rpl --subset 2>&1 | tee "$log"
  add_counts "stock suite rpl (subset)" "$log"
  # storage_engine's recorded results are stale in this server release (InnoDB fails about
  # half): a TidesDB failure counts only where its output differs from InnoDB's.
  echo "=== stock suite storage_engine (+ parts, trx) on TidesDB and InnoDB ==="
  local se=storage_engine,storage_engine/parts,storage_engine/trx
  "$ROOT/scripts/stock-suites.sh" "$BUILD" --suites=$se >"$LOGS/stock-se-tidesdb.log" 2>&1
  "$ROOT/scripts/stock-suites.sh" "$BUILD" --suites=$se --engine=InnoDB >"$LOGS/stock-se-innodb.log" 2>&1
  log=$LOGS/stock-se-compare.log
  python3 "$ROOT/scripts/compare-rejects.py" "$BUILD" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local ran own
  ran=$(grep -cE '\[ (pass|fail) \]' "$LOGS/stock-se-tidesdb.log")
  own=$(sed -nE 's/.* ([0-9]+) of TidesDB.s own.*/\1/p' "$log" | tail -n 1)
  if [ "$rc" -eq 2 ] || [ -z "$own" ]; then
    stage_failed "storage_engine" "the comparison with InnoDB could not run; see $log"
    return
  fi
  passed=$((passed + ran - own))
  failed=$((failed + own))
  [ "$rc" -eq 0 ] || failures+=("storage_engine: $own failures of TidesDB's own; see $log")
}

# One tests/sql/ script: a stage that passes or fails as a whole, its output in LOGS/LOG.
sql_stage() { # title log script args...
  local title=$1 log=$LOGS/$2
  shift 2
  echo "=== $title ==="
  if /usr/bin/python3 "$ROOT/tests/sql/$@" >"$log" 2>&1; then
    passed=$((passed + 1))
  else
    stage_failed "$title" "see $log"
  fi
  tail -n 1 "$log"
}

run_sql_tests() {
  # Fixed seeds and case counts, so every run checks the same statements; other seeds
  # (tests/sql/differential.py --seed N) find more.
  local s
  for s in 1 3; do
    sql_stage "differential test against InnoDB, seed $s" "differential-$s.log" \
      differential.py --seed "$s" --cases 60 --duration 300
  done
  sql_stage "SQL crash test (SIGKILL, durable mode)" crash-test.log crash_test.py --seed 7 --rounds 3
  sql_stage "SQL crash test with the binary log (two-phase commit, 20 SIGKILLs)" crash-test-binlog.log \
    crash_test.py --seed 8 --binlog ROW --rounds 20 --threads 8 --think 0 --min-run 1 --max-run 4
  sql_stage "SQL backup test (mariadb-dump and tidesdb-backup.py under load, restored, rolled forward)" \
    backup-test.log backup_test.py --seed 11 --backups 2 --plugin "$BUILD/plugin/ha_tidesdb.so"
  sql_stage "SQL replication test (primary and replica, every binlog format, replica SIGKILLed, parallel replica)" \
    replication-test.log replication_test.py --seed 9 --plugin "$BUILD/plugin/ha_tidesdb.so"
  sql_stage "SQL replication test (a replica that locks as it writes and logs what it applies)" \
    replication-test-locking.log replication_test.py --seed 10 --format ROW --replica-binlog \
    --replica-arg=--tidesdb-pessimistic-locking=ON --plugin "$BUILD/plugin/ha_tidesdb.so"
  sql_stage "the seed benchmark configuration, unchanged (bench/seed-benchmark.cnf)" seed-config-test.log \
    seed_config_test.py --plugin "$BUILD/plugin/ha_tidesdb.so"
  sql_stage "SQL disk-full test (engine directory on a small tmpfs)" disk-full-test.log disk_full_test.py
  sql_stage "SQL online DDL test (every kind of ALTER while writers change the table)" online-ddl-test.log \
    online_ddl_test.py --seed 12 --plugin "$BUILD/plugin/ha_tidesdb.so"
  sql_stage "SQL foreign keys test (parents deleted and re-keyed while children reference them, both modes)" \
    foreign-keys-test.log foreign_keys_test.py --seed 13 --duration 30 --plugin "$BUILD/plugin/ha_tidesdb.so"
}

if [ "$MTR_ONLY" -eq 0 ]; then
  run_ctest
fi
if [ "${ASAN:-0}" = "1" ]; then
  echo "=== mysql-test-run skipped: ASAN=1 builds no plugin ==="
else
  run_mtr
  if [ "$MTR_ONLY" -eq 0 ]; then
    run_stock_suites
    run_sql_tests
  fi
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
  echo "Failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#failures[@]} -eq 0 ]
