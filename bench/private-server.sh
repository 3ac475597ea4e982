# Sourced by the bench/*.sh scripts: a scratch directory for one private MariaDB server with
# a fresh datadir, and a plugin folder holding links to the stock plugins plus BUILD's
# ha_tidesdb.so. Expects BUILD, OUT and PORT; sets WORK, DATA, SOCK, PLUGINS and SERVER_PID,
# and removes it all when the script exits (the server is killed if still running).
#
# start_server CACHE DURABILITY [mariadbd options...] starts the server with TidesDB and
# MyRocks loaded beside InnoDB, every engine's cache at CACHE (e.g. 64M, 2G) and the same
# durability on every engine:
#   relaxed  no fsync per commit; each commit is written to the OS (a killed server loses
#            nothing acknowledged, a power loss may lose the last second):
#              InnoDB   innodb_flush_log_at_trx_commit=2 (write at commit, fsync once a second)
#              TidesDB  tidesdb_*_sync_mode=NONE (written to the OS at commit)
#              MyRocks  rocksdb_flush_log_at_trx_commit=2 with rocksdb_manual_wal_flush=OFF
#                       (written at commit; with the default manual_wal_flush=ON it would
#                       not even write)
#   durable  fsync per commit (group commit allowed) on every engine:
#              innodb_flush_log_at_trx_commit=1, tidesdb_*_sync_mode=FULL,
#              rocksdb_flush_log_at_trx_commit=1
# Every start begins with every engine's cache empty: InnoDB's buffer pool dump at shutdown
# and load at startup are off (on, a restarted server would start InnoDB warm and the LSM
# engines cold; session 25, results/2026-12-06-s25/scan-ab-warmup/).
# stop_server shuts it down; sql runs one statement; io_written and cpu_ticks read the
# server process's bytes written to storage and CPU ticks (user + system) so far;
# ms_per_txn TICKS TPS SECONDS turns a slice's ticks into CPU ms per transaction.
# rotated K WORDS... prints the words rotated left by K (slice groups in turn start with a
# different engine, so that none always follows the same one: one engine's flushes and
# compactions after its slice land in the next engine's slice). wait_quiet MAX waits until
# the server used under 3 CPU ticks and wrote under 1 MiB in one second (or MAX seconds
# passed) and prints the seconds waited. read_tables TABLES ENGINE... reads every sysbench
# table of each engine's database sb_ENGINE once, by its primary key and its secondary index
# (a warm-up: no engine starts a measurement colder than another).
# The server runs in its datadir, so OUT (its error log's folder) must be absolute.
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
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

start_server() { # cache durability [mariadbd options...]
  local cache=$1 durability=$2 innodb tidesdb rocksdb
  shift 2
  case $durability in
    relaxed) innodb=2 tidesdb=NONE rocksdb=2 ;;
    durable) innodb=1 tidesdb=FULL rocksdb=1 ;;
    *)
      echo "bench: unknown durability '$durability' (relaxed or durable)" >&2
      exit 2
      ;;
  esac
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$DATA" --socket="$SOCK" --port="$PORT" \
    --bind-address=127.0.0.1 --plugin-dir="$PLUGINS" --plugin-maturity=gamma \
    --plugin-load-add=ha_tidesdb.so --plugin-load-add=ha_rocksdb.so --tidesdb=FORCE \
    --max-connections=200 --table-open-cache=2048 \
    --innodb-buffer-pool-size="$cache" --innodb-log-file-size=256M \
    --innodb-flush-log-at-trx-commit=$innodb \
    --innodb-buffer-pool-dump-at-shutdown=OFF --innodb-buffer-pool-load-at-startup=OFF \
    --tidesdb-block-cache-size="$cache" --tidesdb-unified-memtable-write-buffer-size=64M \
    --tidesdb-unified-memtable-sync-mode=$tidesdb --tidesdb-default-sync-mode=$tidesdb \
    --rocksdb-block-cache-size="$cache" --rocksdb-flush-log-at-trx-commit=$rocksdb \
    --rocksdb-manual-wal-flush=OFF \
    "$@" --log-error="$OUT/server.err" &
  SERVER_PID=$!
  for _ in $(seq 1 240); do
    mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1 && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.5
  done
  echo "bench: the server did not start; see $OUT/server.err" >&2
  exit 1
}
stop_server() {
  mariadb-admin --no-defaults --socket="$SOCK" -uroot shutdown >/dev/null 2>&1 || kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
sql() { mariadb --no-defaults --socket="$SOCK" -uroot -N -e "$1"; }
ms_per_txn() { # cpu_ticks transactions_per_second seconds: the server's CPU ms per transaction
  awk -v t="$1" -v tps="$2" -v s="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.4f", t * 1000 / hz / (tps * s) }'
}
io_written() { awk '/^write_bytes/ {print $2}' "/proc/$SERVER_PID/io"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
rotated() { # k words...
  local k=$1
  shift
  local words=("$@")
  k=$((k % ${#words[@]}))
  echo "${words[@]:k}" "${words[@]:0:k}"
}
wait_quiet() { # max_seconds
  local start c0 w0
  start=$(date +%s)
  while [ $(($(date +%s) - start)) -lt "$1" ]; do
    c0=$(cpu_ticks) w0=$(io_written)
    sleep 1
    [ $(($(cpu_ticks) - c0)) -lt 3 ] && [ $(($(io_written) - w0)) -lt 1048576 ] && break
  done
  echo $(($(date +%s) - start))
}
read_tables() { # tables engine...
  local tables=$1 engine t
  shift
  for engine in "$@"; do
    for t in $(seq 1 "$tables"); do
      sql "SELECT COUNT(*), SUM(LENGTH(c)) FROM sb_$engine.sbtest$t" >/dev/null
      sql "SELECT SUM(k) FROM sb_$engine.sbtest$t FORCE INDEX (k_$t)" >/dev/null
    done
  done
}
