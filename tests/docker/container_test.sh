#!/usr/bin/env bash
# Usage: tests/docker/container_test.sh
#
# The container scaffold (docker/) as a user runs it, after `make package`:
#
#   1. The Docker daemon: used if it runs, else started (and stopped at the end).
#   2. docker/build-base-image.sh (debootstrap + docker import; kept if it exists).
#   3. docker compose up -d --build in docker/, under a project name and port of its own
#      (tidesql-test, a free port) so that a deployment made from the same folder is left
#      alone; the password is a random one passed like the .env's.
#   4. Over 127.0.0.1: the engine is there, a TidesDB table is created and filled; the
#      port is published on 127.0.0.1 only.
#   5. docker compose restart; the table reads back the same. docker compose down and up
#      (a new container on the same named volume); the same again.
#   6. docker compose down -v: containers, network and volume are gone.
#
# The images (the base image and tidesql/mariadb-tidesdb) are kept, so that a second run
# builds from cache. Needs root. The last line is "container test: PASS (N s)" or
# "container test: FAIL: reason".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PROJECT=tidesql-test
. "$ROOT/tests/install_test_lib.sh"
test_start container

[ "$(id -u)" -eq 0 ] || fail "must run as root (it may start the Docker daemon, and debootstrap needs root)"
ls "$ROOT"/build-deb/package/mariadb-plugin-tidesdb_*.deb >/dev/null 2>&1 ||
  fail "no package in $ROOT/build-deb/package (make package)"

# The daemon.
dockerd_pid=""
if ! docker info >/dev/null 2>&1; then
  command -v dockerd >/dev/null || fail "dockerd is missing (scripts/install-deps.sh --container)"
  step "starting dockerd (log $LOGS/dockerd.log)"
  setsid dockerd >"$LOGS/dockerd.log" 2>&1 </dev/null &
  dockerd_pid=$!
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || fail "dockerd exited: $(tail -n 3 "$LOGS/dockerd.log")"
    sleep 1
  done
  docker info >/dev/null 2>&1 || fail "dockerd did not answer within 60 s"
fi

# Compose v2 (docker compose) where there is one, else Debian 12's docker-compose 1.29.
if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose=(docker-compose)
else
  fail "neither docker compose nor docker-compose is installed (scripts/install-deps.sh --container)"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
password="test-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export COMPOSE_PROJECT_NAME=$PROJECT TIDESQL_PORT=$port MARIADB_ROOT_PASSWORD=$password
dc() { (cd "$ROOT/docker" && "${compose[@]}" "$@"); }

cleanup() {
  set +e
  dc down -v >>"$LOGS/compose.log" 2>&1
  if [ -n "$dockerd_pid" ]; then
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 1; done
  fi
}
trap cleanup EXIT

sql() { mariadb --no-defaults --host=127.0.0.1 --port="$port" -uroot -p"$password" -N -B -e "$1"; }
wait_for_server() {
  for _ in $(seq 120); do
    sql "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 1
  done
  dc logs --tail=30 >&2
  fail "the server in the container did not answer on 127.0.0.1:$port within 120 s ($1)"
}
table_digest() { sql "$(table_digest_sql demo)"; }

step "docker/build-base-image.sh"
"$ROOT/docker/build-base-image.sh" || fail "building the base image failed"

step "${compose[*]} up -d --build (project $PROJECT, port 127.0.0.1:$port; log $LOGS/compose.log)"
dc up -d --build >"$LOGS/compose.log" 2>&1 || fail "up -d --build failed: $(tail -n 5 "$LOGS/compose.log")"
wait_for_server "after up"
container=$(dc ps -q mariadb)
[ -n "$container" ] || fail "no container for the service mariadb"
published=$(docker port "$container" 3306/tcp)
[ "$published" = "127.0.0.1:$port" ] || fail "port 3306 is published as '$published', not only on 127.0.0.1:$port"

step "create and fill a TidesDB table over 127.0.0.1"
[ "$(sql "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'TidesDB'")" = YES ] ||
  fail "TidesDB is not an available engine in the container"
sql "$(fill_table_sql demo)" || fail "creating the table failed"
[ "$(sql "$(table_engine_sql demo)")" = TidesDB ] || fail "the table was not created with ENGINE=TidesDB"
before=$(table_digest)
[ -n "$before" ] || fail "reading the table failed"

step "${compose[*]} restart; read the table back"
dc restart >>"$LOGS/compose.log" 2>&1 || fail "restart failed"
wait_for_server "after restart"
after=$(table_digest)
[ "$after" = "$before" ] || fail "after a restart the table reads back as '$after', not '$before'"

step "${compose[*]} down, up -d (a new container, the same volume); read the table back"
dc down >>"$LOGS/compose.log" 2>&1 || fail "down failed"
dc up -d >>"$LOGS/compose.log" 2>&1 || fail "up -d (again) failed"
wait_for_server "after down and up"
again=$(table_digest)
[ "$again" = "$before" ] || fail "in a new container the table reads back as '$again', not '$before'"

step "${compose[*]} down -v"
dc down -v >>"$LOGS/compose.log" 2>&1 || fail "down -v failed"
[ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")" ] ||
  fail "containers of $PROJECT are left after down -v"
[ -z "$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")" ] ||
  fail "the volume of $PROJECT is left after down -v"

trap - EXIT
cleanup
pass
