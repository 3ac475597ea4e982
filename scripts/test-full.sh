#!/usr/bin/env bash
# Usage: scripts/test-full.sh PACKAGE_BUILD_DIR
#
# What `make test-full` runs after `make package`: the tests that install into this machine
# and so are not part of `make test`. Each leaves what it touched as it found it.
#
#   tests/package/package_test.sh   the .deb into the system MariaDB (service mariadb)
#   tests/docker/container_test.sh  the docker/ scaffold (starts dockerd if it is not running)
#
# TESTS=package or TESTS=container runs one of them. Logs go to PACKAGE_BUILD_DIR/test-logs/.
# The last line is "N passed, N failed"; the exit status is non-zero when anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 PACKAGE_BUILD_DIR" >&2; exit 2; }
BUILD=$1
LOGS=$BUILD/test-logs
mkdir -p "$LOGS"
passed=0
failed=0

run() { # name script args...
  local name=$1 log=$LOGS/$1-test.log
  shift
  echo "=== $name test ($log) ==="
  local t0=$SECONDS
  TIDESQL_TEST_LOGS=$LOGS "$@" 2>&1 | tee "$log"
  if tail -n 1 "$log" | grep -q ': PASS'; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  echo "($name test: $((SECONDS - t0)) s)"
}

tests=${TESTS:-package container}
for t in $tests; do
  case $t in
  package)
    deb=$(ls "$BUILD"/package/mariadb-plugin-tidesdb_*.deb 2>/dev/null | head -n 1)
    run package "$ROOT/tests/package/package_test.sh" "${deb:-$BUILD/package/missing.deb}"
    ;;
  container) run container "$ROOT/tests/docker/container_test.sh" ;;
  *)
    echo "test-full: unknown test '$t' (package, container)"
    failed=$((failed + 1))
    ;;
  esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
