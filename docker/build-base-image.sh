#!/usr/bin/env bash
# Usage: docker/build-base-image.sh [IMAGE]
#
# Builds the base image the Dockerfile starts from (default IMAGE tidesql/debian:bookworm)
# without pulling anything from a registry: a minimal Debian 12 root file system made by
# debootstrap from this machine's Debian mirror (the first deb source for bookworm in
# /etc/apt/sources.list or /etc/apt/sources.list.d/*; DEBIAN_MIRROR overrides it), imported
# with `docker import`. Its apt sources are bookworm, bookworm-updates and
# bookworm-security from the same mirror. Does nothing when IMAGE exists already (REBUILD=1
# builds it again). Needs root, debootstrap and a running Docker daemon.
set -euo pipefail

IMAGE=${1:-tidesql/debian:bookworm}
die() {
  echo "build-base-image: error: $*" >&2
  exit 1
}
log() { echo "build-base-image: $*"; }

if [ "${REBUILD:-0}" != 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "$IMAGE exists (REBUILD=1 builds it again)"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap)"
command -v debootstrap >/dev/null || die "debootstrap is missing (scripts/install-deps.sh --container)"

# The URI of the first "deb" source whose suites include bookworm, in either format.
find_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" { u = ($2 ~ /^\[/) ? $3 : $2; s = ($2 ~ /^\[/) ? $4 : $3
                       if (s == "bookworm") { print u; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: paragraphs separated by blank lines.
    awk 'BEGIN { RS = ""; FS = "\n" }
         { t = ""; u = ""; s = ""
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^Types:/) t = $i; if ($i ~ /^URIs:/) u = $i; if ($i ~ /^Suites:/) s = $i }
           if (t ~ /[ \t]deb([ \t]|$)/ && s ~ /[ \t]bookworm([ \t]|$)/) {
             sub(/^URIs:[ \t]*/, "", u); split(u, a, /[ \t]+/); print a[1]; exit } }' "$f"
  done
}
mirror=${DEBIAN_MIRROR:-$(find_mirror | head -n 1)}
[ -n "$mirror" ] || die "no Debian bookworm source in /etc/apt/sources.list*; set DEBIAN_MIRROR"
mirror=${mirror%/}
security=${DEBIAN_SECURITY_MIRROR:-${mirror%/debian}/debian-security}

rootfs=$(mktemp -d /var/tmp/tidesql-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
log "debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 20 "$rootfs.log" >&2
  die "debootstrap failed; its log is $rootfs.log"
}
rm -f "$rootfs.log"

cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SOURCES
# As Debian's own container images: no service starts during apt-get in a build, no
# package lists or caches kept in the image.
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 755 "$rootfs/usr/sbin/policy-rc.d"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb

log "docker import as $IMAGE"
tar --numeric-owner -C "$rootfs" -c . | docker import --change 'CMD ["/bin/bash"]' - "$IMAGE" >/dev/null
log "built $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE") bytes)"
