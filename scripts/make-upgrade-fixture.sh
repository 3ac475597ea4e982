#!/usr/bin/env bash
# Usage: scripts/make-upgrade-fixture.sh BUILD_DIR OUT.tar.gz
#
# Writes the upgrade fixture of this release: a fresh private server with BUILD_DIR's
# plugin runs mysql-test/tidesdb/std_data/upgrade_fixture.sql, stops cleanly, and the
# database's .frm/.par files plus the whole #tidesdb directory are packed into OUT.tar.gz.
# The fixture is committed (mysql-test/tidesdb/std_data/upgrade-<version>.tar.gz) and every
# later build must open it: tidesdb.upgrade checks its contents. Make one per release whose
# formats changed, and keep the old ones.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR OUT.tar.gz}" && pwd)
TARGET=${2:?usage: $0 BUILD_DIR OUT.tar.gz}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mktemp -d)
PORT=${PORT:-3395}
. "$ROOT/bench/private-server.sh"
start_server 64M durable --skip-log-bin
mariadb --no-defaults --socket="$SOCK" -uroot <"$ROOT/mysql-test/tidesdb/std_data/upgrade_fixture.sql" >/dev/null
stop_server
tar -C "$DATA" --owner=0 --group=0 --sort=name -czf "$TARGET" upgrade_fixture '#tidesdb'
rm -rf "$OUT"
echo "fixture: $TARGET ($(du -h "$TARGET" | cut -f1))"
