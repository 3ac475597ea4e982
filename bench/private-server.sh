# Sourced by the bench/*.sh scripts: a scratch directory for one private MariaDB server with
# a fresh datadir, and a plugin folder holding links to the stock plugins plus BUILD's
# ha_tidesdb.so. Expects BUILD and OUT; sets WORK, DATA, SOCK, PLUGINS and SERVER_PID (the
# caller starts the server and sets it), and removes it all when the script exits (the
# server is killed if still running).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidesql-bench.XXXXXX")
DATA=$WORK/data
SOCK=$WORK/mysqld.sock
PLUGINS=$WORK/plugins
mkdir -p "$PLUGINS"
for f in /usr/lib/mysql/plugin/*; do ln -s "$f" "$PLUGINS/$(basename "$f")"; done
ln -sfn "$BUILD/plugin/ha_tidesdb.so" "$PLUGINS/ha_tidesdb.so"
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

mariadb-install-db --no-defaults --user=root --datadir="$DATA" --auth-root-authentication-method=normal \
  --skip-test-db >"$OUT/install-db.log" 2>&1
