#!/usr/bin/env bash
# Usage: scripts/package.sh BUILD_DIR HEADERS_DIR
#
# Builds the Debian package mariadb-plugin-tidesdb (what `make package` runs), laid out as
# Debian lays out mariadb-plugin-rocksdb:
#
#   /usr/lib/mysql/plugin/ha_tidesdb.so                  the engine
#   /etc/mysql/mariadb.conf.d/90-tidesdb.cnf             loads it (a conffile)
#   /usr/bin/tidesdb-tool, /usr/share/man/man1/...       the inspection tool
#   /usr/share/doc/mariadb-plugin-tidesdb/               copyright, changelog, docs
#
# BUILD_DIR is a build tree of its own (make uses build-deb/), configured with Debian's
# compiler and linker flags (dpkg-buildflags, hardening=+all), in which only ha_tidesdb
# and tidesdb-tool are built; HEADERS_DIR holds the server headers
# (scripts/mariadb-headers.sh). The package depends on exactly the mariadb-server version
# installed here (a plugin loads only into the server release it was compiled for); the
# script refuses to run when the headers belong to another version. The tooling is dpkg's
# own (dpkg-buildflags, dpkg-shlibdeps, dpkg-gencontrol, dpkg-deb); the sources are
# packaging/. Writes BUILD_DIR/package/mariadb-plugin-tidesdb_<version>_<arch>.deb and,
# when lintian is installed, prints its report of the package.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG=mariadb-plugin-tidesdb

die() {
  echo "package: error: $*" >&2
  exit 1
}

[ $# -eq 2 ] || die "usage: $0 BUILD_DIR HEADERS_DIR"
for cmd in cmake dpkg-buildflags dpkg-deb dpkg-gencontrol dpkg-shlibdeps dpkg-parsechangelog; do
  command -v "$cmd" >/dev/null || die "$cmd is missing (scripts/install-deps.sh --package)"
done
HEADERS=$2
server_version=$(dpkg-query -W -f='${Version}' mariadb-server 2>/dev/null) ||
  die "mariadb-server is not installed (scripts/install-deps.sh)"
built_for=$(cat "$HEADERS/.stamp" 2>/dev/null) || die "cannot read $HEADERS/.stamp (make headers)"
upstream=${server_version#*:} # "1:10.11.18-0+deb12u1" -> "10.11.18"
upstream=${upstream%%-*}
[ "$built_for" = "$upstream" ] ||
  die "the server headers in $HEADERS are MariaDB $built_for's, but mariadb-server $server_version is installed"

# Debian's flags, as a package build gets them. The project's RelWithDebInfo (-O2 -g)
# stays the build type; the flags add fortification, stack protection and full RELRO.
mkdir -p "$1"
BUILD=$(cd "$1" && pwd)
flags() { DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1"; }
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMARIADB_HEADERS_DIR="$HEADERS" \
  -DCMAKE_C_FLAGS="$(flags CPPFLAGS) $(flags CFLAGS)" -DCMAKE_CXX_FLAGS="$(flags CPPFLAGS) $(flags CXXFLAGS)" \
  -DCMAKE_EXE_LINKER_FLAGS="$(flags LDFLAGS)" -DCMAKE_MODULE_LINKER_FLAGS="$(flags LDFLAGS)" \
  -DCMAKE_SHARED_LINKER_FLAGS="$(flags LDFLAGS)" -DWITH_ROCKSDB_BENCH=OFF >/dev/null
cmake --build "$BUILD" -j"${JOBS:-$(nproc)}" --target ha_tidesdb tidesdb-tool
PLUGIN=$BUILD/plugin/ha_tidesdb.so
TOOL=$BUILD/tools/tidesdb-tool/tidesdb-tool

OUT=$BUILD/package
STAGE=$OUT/stage          # a source-package-shaped tree: dpkg's tools read debian/ here
DEST=$STAGE/debian/$PKG   # the package's root
rm -rf "$STAGE"
mkdir -p "$STAGE/debian"
cp "$ROOT/packaging/debian/control" "$ROOT/packaging/debian/changelog" \
  "$ROOT/packaging/debian/copyright" "$STAGE/debian/"
cd "$STAGE"

version=$(dpkg-parsechangelog -SVersion)
# Reproducible: every timestamp (files, archive members, gzip) is the changelog entry's.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -STimestamp)
export SOURCE_DATE_EPOCH
umask 022

doc=$DEST/usr/share/doc/$PKG
install -d "$DEST/usr/lib/mysql/plugin" "$DEST/etc/mysql/mariadb.conf.d" "$DEST/usr/bin" \
  "$DEST/usr/share/man/man1" "$doc" "$DEST/usr/share/lintian/overrides"
# Stripped as dh_strip strips; a shared object is not executable in Debian.
install -m 644 "$PLUGIN" "$DEST/usr/lib/mysql/plugin/ha_tidesdb.so"
install -m 755 "$TOOL" "$DEST/usr/bin/tidesdb-tool"
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
  "$DEST/usr/lib/mysql/plugin/ha_tidesdb.so" "$DEST/usr/bin/tidesdb-tool"
install -m 644 "$ROOT/packaging/90-tidesdb.cnf" "$DEST/etc/mysql/mariadb.conf.d/90-tidesdb.cnf"
gzip -9n <"$ROOT/packaging/tidesdb-tool.1" >"$DEST/usr/share/man/man1/tidesdb-tool.1.gz"
install -m 644 "$ROOT/packaging/debian/copyright" "$doc/copyright"
gzip -9n <"$ROOT/packaging/debian/changelog" >"$doc/changelog.Debian.gz"
for f in PACKAGING.md SYSTEM-VARIABLES.md TOOLS.md; do
  gzip -9n <"$ROOT/docs/$f" >"$doc/$f.gz"
done
install -m 644 "$ROOT/packaging/lintian-overrides" "$DEST/usr/share/lintian/overrides/$PKG"
chmod 644 "$DEST"/usr/share/man/man1/* "$doc"/*

# The control file: shared-library dependencies from the binaries, the server pin from
# the installed server. The plugin's references to the server's own symbols (resolved
# from mariadbd when it is loaded) are no library's, hence --ignore-missing-info and
# --warnings=0 for it.
install -d "$DEST/DEBIAN" # dpkg-shlibdeps finds the package root by it
dpkg-shlibdeps -Tdebian/substvars --warnings=0 --ignore-missing-info \
  "debian/$PKG/usr/lib/mysql/plugin/ha_tidesdb.so" "debian/$PKG/usr/bin/tidesdb-tool"
echo "server:Version=$server_version" >>debian/substvars
dpkg-gencontrol -p"$PKG" -Tdebian/substvars -P"$DEST"
echo /etc/mysql/mariadb.conf.d/90-tidesdb.cnf >"$DEST/DEBIAN/conffiles"
(cd "$DEST" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
  xargs -0 md5sum) >"$DEST/DEBIAN/md5sums"
chmod 644 "$DEST"/DEBIAN/*
find "$DEST" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

arch=$(dpkg --print-architecture)
deb=$OUT/${PKG}_${version}_${arch}.deb
rm -f "$OUT/${PKG}"_*.deb
dpkg-deb --root-owner-group -Zxz --build "$DEST" "$deb" >/dev/null
echo "package: built $deb (depends on mariadb-server (= $server_version))"

if command -v lintian >/dev/null; then
  echo "package: lintian $deb"
  # Informational tags too; not as root when it can be helped (lintian warns against it).
  as_user=()
  [ "$(id -u)" -ne 0 ] || ! command -v runuser >/dev/null || as_user=(runuser -u nobody -- env HOME=/tmp)
  "${as_user[@]}" lintian --display-info "$deb" || true
  echo "package: lintian done (docs/PACKAGING.md lists what it still reports, and why)"
else
  echo "package: lintian is not installed; scripts/install-deps.sh --package installs it"
fi
