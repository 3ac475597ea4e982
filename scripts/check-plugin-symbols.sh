#!/usr/bin/env bash
# Usage: scripts/check-plugin-symbols.sh PLUGIN.so [SERVER]   (SERVER: /usr/sbin/mariadbd)
#
# A plugin is linked without -Wl,--no-undefined: the server's own symbols (my_error,
# handler::ha_open, ...) stay undefined and are resolved by the dynamic loader from the
# running mariadbd. A wrong flag (DBUG on, another server version) therefore shows up only
# when the server refuses the file. This check runs at build time instead: every strong
# undefined symbol of PLUGIN.so must be defined by one of the libraries it links (libc,
# libstdc++, libm, ...) or exported by SERVER. It exits non-zero and names the missing
# symbols otherwise. The build removes a plugin that fails, so it is rebuilt and rechecked.
set -euo pipefail

die() {
  echo "check-plugin-symbols: error: $*" >&2
  exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: $0 PLUGIN.so [SERVER]"; fi
plugin=$1
server=${2:-/usr/sbin/mariadbd}
[ -f "$plugin" ] || die "$plugin does not exist"
[ -x "$server" ] || die "$server does not exist (install mariadb-server-core)"

# Dynamic symbol names without their version suffix (memcpy@GLIBC_2.14 -> memcpy).
undefined_symbols() { nm -D --undefined-only "$1" | awk '$1 == "U" { sub(/@.*/, "", $2); print $2 }'; }
defined_symbols() { nm -D --defined-only "$1" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }'; }

# The plugin's own shared-library dependencies, as the loader would resolve them.
libs=()
while read -r line; do
  case "$line" in
  *"not found"*) die "$plugin needs a library that is not installed: $line" ;;
  esac
  for word in $line; do
    case "$word" in /*) libs+=("$word") ;; esac
  done
done < <(ldd "$plugin" | grep -v 'linux-vdso')

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
undefined_symbols "$plugin" | sort -u >"$tmp/needed"
{
  defined_symbols "$server"
  for lib in "${libs[@]}"; do defined_symbols "$lib"; done
} | sort -u >"$tmp/provided"
comm -23 "$tmp/needed" "$tmp/provided" >"$tmp/missing"

if [ -s "$tmp/missing" ]; then
  count=$(wc -l <"$tmp/missing")
  {
    echo "check-plugin-symbols: error: $(basename "$plugin") needs $count symbol(s) that neither"
    echo "$server nor the plugin's libraries (${libs[*]##*/}) define:" | sed 's/()/(none)/'
    while read -r sym; do
      echo "  $sym  ($(echo "$sym" | c++filt))"
    done <"$tmp/missing"
    echo "The server would refuse to load this plugin. Typical causes: DBUG_OFF missing (_db_*"
    echo "symbols), headers of another MariaDB release, or a call into a server function that"
    echo "mariadbd does not export."
  } >&2
  rm -f "$plugin"
  exit 1
fi
echo "check-plugin-symbols: $(basename "$plugin"): all $(wc -l <"$tmp/needed") undefined symbols resolve" \
  "($(basename "$server") and ${#libs[@]} libraries)"
