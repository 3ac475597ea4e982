#!/usr/bin/env bash
# Usage: scripts/server.sh start BUILD_DIR
#        scripts/server.sh stop
#
# Runs the project's own MariaDB server with BUILD_DIR/plugin/ha_tidesdb.so loaded and
# forced (--tidesdb=FORCE: the server refuses to start without the engine). Everything lives
# under var/ in the repository (ignored by git):
#
#   var/data/          data directory, created by mariadb-install-db on first start
#   var/plugins/       the plugin directory: links to the stock plugins and to ours
#   var/run/           mysqld.sock, mysqld.pid
#   var/log/           mysqld.err (the error log), install-db.log
#   var/my.cnf         created empty on first start; add [mariadbd] settings here, e.g.
#                      tidesdb_block_cache_size=256M. It is the only option file read.
#
# Port 3307 unless TIDESQL_PORT is set; TCP listens on 127.0.0.1 only. Start is idempotent:
# when the server in var/ is already running it only prints how to connect.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VAR=$ROOT/var
DATA=$VAR/data
PLUGINS=$VAR/plugins
RUN=$VAR/run
LOGS=$VAR/log
SOCKET=$RUN/mysqld.sock
PIDFILE=$RUN/mysqld.pid
ERRLOG=$LOGS/mysqld.err
CNF=$VAR/my.cnf
PORT=${TIDESQL_PORT:-3307}
STOCK_PLUGINS=${TIDESQL_STOCK_PLUGIN_DIR:-/usr/lib/mysql/plugin}
MARIADBD=/usr/sbin/mariadbd
START_TIMEOUT=${TIDESQL_START_TIMEOUT:-60}

die() {
  echo "server: error: $*" >&2
  exit 1
}

# The pid of the server of this var/, or nothing. A stale pid file (crash, reboot, pid
# reused by another program) does not count.
running_pid() {
  [ -f "$PIDFILE" ] || return 0
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null || true)
  case "$pid" in '' | *[!0-9]*) return 0 ;; esac
  kill -0 "$pid" 2>/dev/null || return 0
  [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$MARIADBD" ] || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--datadir=$DATA " || return 0
  echo "$pid"
}

print_connect() {
  echo "Connect with:"
  echo "  mariadb --socket=$SOCKET -uroot"
  echo "or over TCP:"
  echo "  mariadb --host=127.0.0.1 --port=$PORT -uroot"
  echo "Stop with: make stop"
}

ping_server() {
  mariadb-admin --no-defaults --socket="$SOCKET" -uroot --connect-timeout=2 ping >/dev/null 2>&1
}

start() {
  local build_dir=$1
  local plugin
  plugin=$(cd "$build_dir" 2>/dev/null && pwd)/plugin/ha_tidesdb.so ||
    die "build directory $build_dir does not exist (make build)"
  [ -f "$plugin" ] || die "$plugin does not exist (make build)"
  [ -x "$MARIADBD" ] || die "$MARIADBD is missing (scripts/install-deps.sh)"
  # sun_path holds 107 bytes.
  [ ${#SOCKET} -lt 108 ] || die "socket path $SOCKET is too long for a Unix socket; move the repository"

  local pid
  pid=$(running_pid)
  if [ -n "$pid" ]; then
    echo "server: already running (pid $pid, port $PORT, data $DATA)"
    print_connect
    return 0
  fi

  mkdir -p "$PLUGINS" "$RUN" "$LOGS"
  rm -f "$PIDFILE" "$SOCKET"

  # A fresh plugin directory every start, so a new build or a new stock plugin is seen.
  find "$PLUGINS" -mindepth 1 -maxdepth 1 -type l -delete
  for f in "$STOCK_PLUGINS"/*; do
    ln -s "$f" "$PLUGINS/$(basename "$f")"
  done
  ln -sfn "$plugin" "$PLUGINS/ha_tidesdb.so"

  if [ ! -f "$CNF" ]; then
    cat >"$CNF" <<'EOF'
# Options for the server that `make run` starts (scripts/server.sh). Data directory, socket,
# port, plugin loading and logs are given on its command line; put anything else here, for
# example the engine's system variables (docs/SYSTEM-VARIABLES.md):
#
#   tidesdb_block_cache_size=256M
[mariadbd]
EOF
  fi

  if [ ! -d "$DATA/mysql" ]; then
    echo "server: creating the data directory $DATA"
    local tmp="$DATA.tmp.$$"
    rm -rf "$tmp"
    if ! mariadb-install-db --no-defaults --user=root --datadir="$tmp" \
      --auth-root-authentication-method=normal --skip-test-db >"$LOGS/install-db.log" 2>&1; then
      rm -rf "$tmp"
      tail -n 30 "$LOGS/install-db.log" >&2
      die "mariadb-install-db failed; its log is $LOGS/install-db.log"
    fi
    rm -rf "$DATA"
    mv "$tmp" "$DATA"
  fi

  echo "server: starting MariaDB with TidesDB on port $PORT (log $ERRLOG)"
  local offset=0
  [ -f "$ERRLOG" ] && offset=$(stat -c %s "$ERRLOG")
  # setsid + nohup: the server outlives the make that started it and its terminal.
  setsid nohup "$MARIADBD" --defaults-file="$CNF" --user=root \
    --datadir="$DATA" --socket="$SOCKET" --port="$PORT" --bind-address=127.0.0.1 \
    --pid-file="$PIDFILE" --log-error="$ERRLOG" \
    --plugin-dir="$PLUGINS" --plugin-maturity=experimental \
    --plugin-load-add=ha_tidesdb.so --tidesdb=FORCE \
    </dev/null >>"$LOGS/mysqld.out" 2>&1 &
  local server_pid=$!

  local waited=0
  until ping_server; do
    if ! kill -0 "$server_pid" 2>/dev/null || [ "$waited" -ge "$((START_TIMEOUT * 2))" ]; then
      kill "$server_pid" 2>/dev/null || true
      echo "server: the server did not come up; the end of its error log ($ERRLOG):" >&2
      tail -c +"$((offset + 1))" "$ERRLOG" 2>/dev/null | tail -n 25 >&2 || true
      die "start failed"
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  echo "server: running (pid $(cat "$PIDFILE" 2>/dev/null || echo "$server_pid"), data $DATA)"
  print_connect
}

stop() {
  local pid
  pid=$(running_pid)
  if [ -z "$pid" ]; then
    echo "server: not running"
    rm -f "$PIDFILE"
    return 0
  fi
  echo "server: stopping pid $pid"
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge 120 ]; then
      echo "server: pid $pid did not stop within 60 s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  rm -f "$PIDFILE"
  echo "server: stopped"
}

case "${1:-}" in
start)
  [ $# -eq 2 ] || die "usage: $0 start BUILD_DIR"
  start "$2"
  ;;
stop)
  stop
  ;;
*)
  die "usage: $0 start BUILD_DIR | $0 stop"
  ;;
esac
