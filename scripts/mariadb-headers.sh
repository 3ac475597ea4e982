#!/usr/bin/env bash
# Usage: scripts/mariadb-headers.sh DIR
#
# Puts into DIR the private MariaDB server headers that a storage-engine plugin compiles
# against, taken from Debian's source package of the installed server (the plugin is built
# out of tree; the server itself is never configured or built):
#
#   DIR/include, DIR/sql                       from mariadb_<ver>.orig.tar.gz
#   DIR/wsrep-lib/include, .../wsrep-API/v26   (my_config.h has WITH_WSREP)
#   DIR/generated                              my_config.h, mysql_version.h, ... copied from
#                                              /usr/include/mariadb/server (libmariadbd-dev,
#                                              the binary's own build configuration), plus
#                                              probes_mysql_nodtrace.h (dtrace is off)
#   DIR/VERSION                                the source tree's version file
#   DIR/.stamp                                 the version these headers belong to
#
# Fast path: when DIR/.stamp names the installed server's version, exit at once. The
# downloaded source package is kept in $TIDESQL_SOURCE_CACHE (default: DIR/../mariadb-source)
# so that rebuilding the headers later needs no network.
set -euo pipefail

die() {
  echo "mariadb-headers: error: $*" >&2
  exit 1
}
log() { echo "mariadb-headers: $*"; }

[ $# -eq 1 ] || die "usage: $0 DIR"
DIR=$1
MARIADB_VERSION="${MARIADB_VERSION:-1:10.11.18-0+deb12u1}"  # Debian version; same pin as install-deps.sh
SERVER_INCLUDE=/usr/include/mariadb/server
CACHE="${TIDESQL_SOURCE_CACHE:-$(dirname "$DIR")/mariadb-source}"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# "1:10.11.18-0+deb12u1" -> "10.11.18"
upstream=${MARIADB_VERSION#*:}
upstream=${upstream%%-*}

[ -f "$SERVER_INCLUDE/mysql_version.h" ] ||
  die "$SERVER_INCLUDE/mysql_version.h is missing: install libmariadbd-dev (scripts/install-deps.sh)"
installed=$(sed -n 's/^#define[[:space:]]*MYSQL_SERVER_VERSION[[:space:]]*"\([0-9.]*\)-.*/\1/p' \
  "$SERVER_INCLUDE/mysql_version.h")
[ -n "$installed" ] || die "cannot read MYSQL_SERVER_VERSION from $SERVER_INCLUDE/mysql_version.h"

if [ -f "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$installed" ]; then
  exit 0
fi

# One run at a time (make test and make run may start together); the winner's work is reused.
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if [ -f "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$installed" ]; then
  exit 0
fi

[ "$installed" = "$upstream" ] ||
  die "the installed server headers are $installed but the pinned source package is $MARIADB_VERSION;" \
    "run scripts/install-deps.sh so that every MariaDB package is $MARIADB_VERSION"

# --- the source package -------------------------------------------------------------------
orig="$CACHE/mariadb_${upstream}.orig.tar.gz"

# True when apt knows a deb-src entry for Debian bookworm (any file, .list or .sources).
# shellcheck disable=SC2016 # apt's --format takes $(FIELD) literally
have_bookworm_deb_src() {
  apt-get indextargets --no-release-info --format '$(SITE)' 'Target-Of: deb-src' 'Release: bookworm' \
    2>/dev/null | grep -q .
}

download_source() {
  local sandbox=()
  # As root, apt would otherwise fetch as user _apt, which may not be able to write $CACHE.
  [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
  (cd "$CACHE" && apt-get source --download-only -qq "${sandbox[@]}" "mariadb=$MARIADB_VERSION")
}

# Adds a deb-src entry beside the machine's own bookworm entry (same mirror). apt rejects
# the whole configuration when two entries for one mirror and suite disagree on Signed-By,
# so each variant is checked with apt's parser before apt-get update, and apt is never left
# unable to read its sources.
# shellcheck disable=SC2016 # apt's --format takes $(FIELD) literally
add_bookworm_deb_src() {
  local parts=/etc/apt/sources.list.d/
  eval "$(apt-config shell parts Dir::Etc::sourceparts/d)"
  local src_list=${parts%/}/tidesdb-src.sources
  local site keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  site=$(apt-get indextargets --no-release-info --format '$(SITE)' 'Target-Of: deb' 'Release: bookworm' \
    2>/dev/null | head -n 1)
  site=${site:-http://deb.debian.org/debian}
  # The keyring the existing bookworm entry names, if any: "file:line" for one-line .list
  # entries ([signed-by=...]), "file:stanza" for deb822 .sources files (Signed-By: ...).
  local entry file index own_keyring=""
  entry=$(apt-get indextargets --no-release-info --format '$(SOURCESENTRY)' 'Target-Of: deb' \
    'Release: bookworm' 2>/dev/null | head -n 1)
  file=${entry%:*}
  index=${entry##*:}
  if [ -f "$file" ] && [ -n "$index" ]; then
    case "$file" in
    *.sources)
      own_keyring=$(awk -v n="$index" 'BEGIN { RS = "" } NR == n' "$file" |
        sed -n 's/^Signed-By:[[:space:]]*\([^[:space:]]\+\)[[:space:]]*$/\1/p' | head -n 1)
      ;;
    *)
      own_keyring=$(sed -n "${index}p" "$file" | sed -n 's/.*signed-by=\([^] ]*\).*/\1/p')
      ;;
    esac
  fi
  local signed_by
  for signed_by in ${own_keyring:+"Signed-By: $own_keyring"} "Signed-By: $keyring" ""; do
    [ -z "$signed_by" ] || [ -f "${signed_by#Signed-By: }" ] || continue
    log "adding a deb-src entry for Debian bookworm ($site): $src_list"
    printf '%s\n' \
      "# Added by TideSQL's scripts/mariadb-headers.sh: the plugin is compiled against the private" \
      "# headers of Debian's MariaDB source package." \
      "Types: deb-src" "URIs: $site" "Suites: bookworm bookworm-updates" "Components: main" \
      ${signed_by:+"$signed_by"} | $SUDO tee "$src_list" >/dev/null
    if apt-get indextargets --no-release-info >/dev/null 2>&1; then
      $SUDO apt-get update -qq
      return 0
    fi
    $SUDO rm -f "$src_list"
  done
  die "could not add a deb-src entry that apt accepts; add one for Debian bookworm by hand" \
    "(e.g. 'deb-src $site bookworm main' with the same options as your 'deb' line) and rerun"
}

if [ ! -f "$orig" ]; then
  mkdir -p "$CACHE"
  have_bookworm_deb_src || add_bookworm_deb_src
  log "downloading the source package mariadb=$MARIADB_VERSION into $CACHE"
  if ! download_source; then
    # The deb-src entry may exist while its index was never fetched.
    $SUDO apt-get update -qq
    download_source ||
      die "apt-get source mariadb=$MARIADB_VERSION failed (is Debian's archive reachable?)"
  fi
  [ -f "$orig" ] || die "apt-get source did not produce $orig"
fi

# --- extract only what the plugin includes ------------------------------------------------
tmp="$DIR.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
top="mariadb-$upstream"
log "extracting server headers from $(basename "$orig")"
tar -xzf "$orig" -C "$tmp" --no-same-owner --strip-components=1 --wildcards \
  "$top/VERSION" \
  "$top/include/*" \
  "$top/sql/*.h" "$top/sql/*.hh" \
  "$top/wsrep-lib/include/*" \
  "$top/wsrep-lib/wsrep-API/v26/*.h" ||
  die "extracting headers from $orig failed (corrupt download? delete it and rerun)"

mkdir -p "$tmp/generated"
for h in my_config.h mysql_version.h mysqld_error.h mysqld_ername.h sql_state.h; do
  [ -f "$SERVER_INCLUDE/$h" ] || die "$SERVER_INCLUDE/$h is missing (libmariadbd-dev)"
  cp "$SERVER_INCLUDE/$h" "$tmp/generated/$h"
done
cp "$tmp/include/probes_mysql_nodtrace.h.in" "$tmp/generated/probes_mysql_nodtrace.h"

# The source tree's VERSION file must describe the installed server.
src_version=$(awk -F= '
  /^MYSQL_VERSION_MAJOR=/ { ma = $2 } /^MYSQL_VERSION_MINOR=/ { mi = $2 }
  /^MYSQL_VERSION_PATCH=/ { pa = $2 } END { print ma "." mi "." pa }' "$tmp/VERSION")
[ "$src_version" = "$installed" ] ||
  die "the source package holds MariaDB $src_version but the installed server headers" \
    "($SERVER_INCLUDE/mysql_version.h) are $installed"

echo "$installed" >"$tmp/.stamp"
rm -rf "$DIR"
mv "$tmp" "$DIR"
trap - EXIT
log "server headers for MariaDB $installed in $DIR"
