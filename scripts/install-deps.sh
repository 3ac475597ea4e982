#!/usr/bin/env bash
# Installs every Debian package TideSQL needs, with MariaDB pinned to the release whose
# source package Debian serves (the plugin is compiled against that server's private
# headers, and the server refuses a plugin built for another patch release).
# Idempotent: does nothing when everything is already in place.
#
# Usage: scripts/install-deps.sh [--package] [--container] [--bench]
#   --package     also what `make package` uses beyond the build (lintian)
#   --container   also what the container scaffold uses (docker.io, docker-compose,
#                 debootstrap); the Docker daemon is not started here
#   --bench       also what `make bench` uses beyond sysbench and pymysql (always
#                 installed): matplotlib for bench/plot.py, util-linux for lsblk/findmnt
set -euo pipefail

MARIADB_VERSION="${MARIADB_VERSION:-1:10.11.18-0+deb12u1}"
MARIADB_PKGS=(mariadb-server mariadb-server-core mariadb-client mariadb-client-core
  mariadb-common mariadb-test mariadb-test-data mariadb-plugin-rocksdb
  libmariadbd-dev libmariadbd19 libmariadb-dev libmariadb3 mariadb-backup)
BUILD_PKGS=(build-essential cmake ccache pkg-config libgtest-dev googletest
  libbenchmark-dev liblz4-dev libzstd-dev libsnappy-dev libxxhash-dev librocksdb-dev
  clang-format perl python3 python3-pymysql sysbench procps mount)
for arg in "$@"; do
  case "$arg" in
  --package) BUILD_PKGS+=(dpkg-dev lintian) ;;
  --container) BUILD_PKGS+=(docker.io docker-compose debootstrap) ;;
  --bench) BUILD_PKGS+=(python3-matplotlib util-linux) ;;
  *)
    echo "usage: $0 [--package] [--container] [--bench]" >&2
    exit 2
    ;;
  esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

have_pkg() { # name [version]
  local st
  st=$(dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null) || return 1
  # Held packages (apt-mark hold) report "hold ok installed".
  case "$st" in "install ok installed"* | "hold ok installed"*) ;; *) return 1 ;; esac
  [ -z "${2:-}" ] || [ "${st##* }" = "$2" ]
}

missing=()
for p in "${BUILD_PKGS[@]}"; do have_pkg "$p" || missing+=("$p"); done
for p in "${MARIADB_PKGS[@]}"; do have_pkg "$p" "$MARIADB_VERSION" || missing+=("$p=$MARIADB_VERSION"); done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-mark unhold "${MARIADB_PKGS[@]}" >/dev/null 2>&1 || true
  $SUDO apt-get update -qq
  # The service must not start on its own: the project runs its own server.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  pinned=()
  for p in "${MARIADB_PKGS[@]}"; do pinned+=("$p=$MARIADB_VERSION"); done
  $SUDO apt-get install -y -qq --allow-downgrades --no-install-recommends \
    "${BUILD_PKGS[@]}" "${pinned[@]}"
  $SUDO apt-mark hold "${MARIADB_PKGS[@]}" >/dev/null
fi
# A distribution server started by the package would hold port 3306 and its socket; the
# project's own server does not need it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet mariadb 2>/dev/null; then
  $SUDO systemctl stop mariadb || true
fi
echo "install-deps: all packages present (MariaDB $MARIADB_VERSION held)"
