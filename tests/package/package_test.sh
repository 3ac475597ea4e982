#!/usr/bin/env bash
# Usage: tests/package/package_test.sh DEB
#
# Installs the package into this machine's stock MariaDB as a user would, and checks the
# life cycle docs/PACKAGING.md describes:
#
#   1. apt-get install ./DEB; the files are where Debian puts a plugin's files.
#   2. service mariadb start (Debian's init script, the system configuration): the engine
#      is loaded; a TidesDB table is created and filled; service mariadb restart; the table
#      reads back the same; tidesdb-tool verify finds the engine's files clean.
#   3. apt-get remove: the plugin is gone, its configuration snippet stays (a conffile);
#      the server still starts, without the engine, and the engine's data is left in place.
#   4. apt-get install ./DEB again: the table reads back the same.
#   5. The test's database dropped, apt-get purge: the snippet is gone too.
#
# The system server is left as it was found: stopped if it was stopped, started again if
# it was running (it is stopped for the test). The engine's data directory
# (/var/lib/mysql/#tidesdb) is removed at the end only if the test created it. Refuses to
# run when the package is already installed. Needs root. The last line is
# "package test: PASS (N s)" or "package test: FAIL: reason".
set -uo pipefail

PKG=mariadb-plugin-tidesdb
DB=tidesql_package_test
CNF=/etc/mysql/mariadb.conf.d/90-tidesdb.cnf
PLUGIN=/usr/lib/mysql/plugin/ha_tidesdb.so
. "$(dirname "${BASH_SOURCE[0]}")/../install_test_lib.sh"
test_start package

[ $# -eq 1 ] || fail "usage: $0 DEB"
DEB=$(realpath "$1" 2>/dev/null) && [ -f "$DEB" ] || fail "no package file $1 (make package)"
[ "$(id -u)" -eq 0 ] || fail "must run as root (it installs a package and starts the system server)"

status_of() { dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null || true; }
case "$(status_of)" in
*" installed" | *" config-files")
  fail "$PKG is already on this machine ($(status_of)); remove or purge it first" ;;
esac

datadir=$(my_print_defaults --mysqld | sed -n 's/^--datadir=//p' | tail -n 1)
datadir=${datadir:-/var/lib/mysql}
engine_dir=$datadir/#tidesdb
had_engine_dir=0
[ -e "$engine_dir" ] && had_engine_dir=1

# The init script's output, and that of what it leaves running in the background
# (/etc/mysql/debian-start checks the tables after a start), go to a log.
service_log=$LOGS/service.log
: >"$service_log"
service_run() { service mariadb "$1" >>"$service_log" 2>&1; }
system_running() { service mariadb status >/dev/null 2>&1; }
was_running=0
if system_running; then
  was_running=1
  step "the system server is running: stopping it for the test (it is started again at the end)"
  service_run stop || fail "service mariadb stop failed"
fi

# Put the machine back as it was found, whatever happened.
cleanup() {
  set +e
  if [ -f "$PLUGIN" ]; then # installed: drop what the test created while the engine is there
    system_running || service_run start
    mariadb -e "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1
  fi
  system_running && service_run stop
  apt-get purge -y -qq "$PKG" >/dev/null 2>&1
  rm -rf "${datadir:?}/$DB"
  [ "$had_engine_dir" -eq 1 ] || rm -rf "$engine_dir"
  [ "$was_running" -eq 0 ] || service_run start
}
trap cleanup EXIT

sql() { mariadb -N -B -e "$1"; }
start() { service_run start || fail "service mariadb start failed ($1; $service_log)"; }
stop() { service_run stop || fail "service mariadb stop failed ($1; $service_log)"; }
engine_support() { sql "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'TidesDB'"; }
table_digest() { sql "$(table_digest_sql $DB)"; }

step "apt-get install $DEB"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >"$LOGS/apt.log" 2>&1 ||
  fail "apt-get install failed: $(tail -n 5 "$LOGS/apt.log")"
for f in "$PLUGIN" "$CNF" /usr/bin/tidesdb-tool /usr/share/doc/$PKG/copyright \
  /usr/share/doc/$PKG/changelog.Debian.gz /usr/share/man/man1/tidesdb-tool.1.gz; do
  [ -f "$f" ] || fail "$f is not installed"
done
server=$(dpkg-query -W -f='${Version}' mariadb-server)
dpkg-query -W -f='${Depends}' "$PKG" | grep -qF "mariadb-server (= $server)" ||
  fail "the package does not depend on mariadb-server (= $server)"

step "service mariadb start; create and fill a TidesDB table"
start "with the package installed"
[ "$(engine_support)" = "YES" ] || fail "TidesDB is not an available engine after install: '$(engine_support)'"
sql "$(fill_table_sql $DB)" || fail "creating the table failed"
[ "$(sql "$(table_engine_sql $DB)")" = "TidesDB" ] || fail "the table was not created with ENGINE=TidesDB"
before=$(table_digest)
[ -n "$before" ] || fail "reading the table failed"

step "service mariadb restart; read the table back"
service_run restart || fail "service mariadb restart failed ($service_log)"
after=$(table_digest)
[ "$after" = "$before" ] || fail "after a restart the table reads back as '$after', not '$before'"
stop "before tidesdb-tool verify"
tidesdb-tool verify "$engine_dir" >"$LOGS/verify.log" 2>&1 ||
  fail "tidesdb-tool verify $engine_dir: $(tail -n 3 "$LOGS/verify.log")"

step "apt-get remove $PKG; the server starts without the engine, the data stays"
apt-get remove -y -qq "$PKG" >"$LOGS/apt.log" 2>&1 ||
  fail "apt-get remove failed: $(tail -n 5 "$LOGS/apt.log")"
[ ! -e "$PLUGIN" ] || fail "$PLUGIN is still there after apt-get remove"
[ -f "$CNF" ] || fail "$CNF was removed by apt-get remove (a conffile stays until purge)"
start "after apt-get remove"
[ -z "$(engine_support)" ] || fail "TidesDB is still an engine after remove: '$(engine_support)'"
err=$(sql "SELECT COUNT(*) FROM $DB.t" 2>&1) && fail "the table is readable without the engine: $err"
grep -q "Unknown storage engine 'TidesDB'" <<<"$err" || fail "reading without the engine said '$err'"
[ -d "$engine_dir" ] || fail "$engine_dir is gone after apt-get remove"
stop "after apt-get remove"

step "apt-get install $DEB again; the table reads back"
apt-get install -y -qq "$DEB" >"$LOGS/apt.log" 2>&1 ||
  fail "apt-get install (again) failed: $(tail -n 5 "$LOGS/apt.log")"
start "after installing again"
again=$(table_digest)
[ "$again" = "$before" ] || fail "after remove and install the table reads back as '$again', not '$before'"

step "drop the test database, apt-get purge $PKG"
sql "DROP DATABASE $DB" || fail "DROP DATABASE failed"
stop "before purge"
apt-get purge -y -qq "$PKG" >"$LOGS/apt.log" 2>&1 ||
  fail "apt-get purge failed: $(tail -n 5 "$LOGS/apt.log")"
[ ! -e "$CNF" ] || fail "$CNF is still there after apt-get purge"
start "after purge"
stop "after purge"

trap - EXIT
cleanup
pass
