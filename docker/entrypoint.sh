#!/bin/bash
# Entrypoint of the TideSQL MariaDB image. On the first start (an empty /var/lib/mysql,
# normally a fresh volume) it creates the data directory and sets the root password from
# MARIADB_ROOT_PASSWORD for root@localhost and root@'%'; later starts use the data as it
# is (changing the variable then changes nothing). Then it runs the server in the
# foreground, as user mysql, with the system configuration (/etc/mysql).
set -euo pipefail

if [ "${1:-}" != mariadbd ]; then
  exec "$@"
fi
shift
DATADIR=/var/lib/mysql
mkdir -p /run/mysqld
chown mysql:mysql /run/mysqld "$DATADIR"

if [ ! -d "$DATADIR/mysql" ]; then
  if [ -z "${MARIADB_ROOT_PASSWORD:-}" ]; then
    echo "entrypoint: MARIADB_ROOT_PASSWORD is not set (docker/.env)" >&2
    exit 1
  fi
  echo "entrypoint: creating the data directory"
  mariadb-install-db --user=mysql --datadir="$DATADIR" --skip-test-db \
    --auth-root-authentication-method=socket >/dev/null
  # A server on a private socket only, to set the password.
  socket=/run/mysqld/init.sock
  mariadbd --user=mysql --skip-networking --socket="$socket" &
  pid=$!
  for _ in $(seq 60); do
    mariadb-admin --socket="$socket" -uroot ping >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { echo "entrypoint: the server did not start" >&2; exit 1; }
    sleep 1
  done
  # The password goes in as a string literal: quotes and backslashes escaped.
  pw=$(printf '%s' "$MARIADB_ROOT_PASSWORD" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")
  mariadb --socket="$socket" -uroot <<SQL
ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('$pw');
CREATE USER 'root'@'%' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
SQL
  mariadb-admin --socket="$socket" -uroot shutdown
  wait "$pid" || true
  echo "entrypoint: data directory ready"
fi

exec mariadbd --user=mysql "$@"
