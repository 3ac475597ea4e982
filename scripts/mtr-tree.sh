# Sourced by scripts/test.sh and scripts/stock-suites.sh: the private copy of the installed
# mysql-test tree that mysql-test-run runs from (it writes results and .reject files next to
# the tests, so it never runs in /usr/share).
#
# prepare_mtr_tree BASE PLUGIN ROOT
#   BASE/{bin,sbin,share} link to /usr; BASE/lib/mysql/plugin holds links to the stock
#   plugins and to PLUGIN (ha_tidesdb.so); BASE/mysql-test is a copy of the installed tree,
#   made once per mariadb-test version in a folder of its own and moved into place, so two
#   runs preparing at once cannot mix; the repository's suite (ROOT/mysql-test/tidesdb) and
#   overlay (ROOT/mysql-test/plugin/tidesdb: mtr finds an overlay only as
#   <mysql-test>/plugin/<name>/<suite>) are linked in. Returns non-zero with a message on
#   stderr when something is missing.
prepare_mtr_tree() {
  local base=$1 plugin=$2 root=$3
  local stock_tests=/usr/share/mysql/mysql-test stock_plugins=/usr/lib/mysql/plugin
  [ -f "$plugin" ] || {
    echo "mtr-tree: $plugin is missing (make build)" >&2
    return 1
  }
  [ -f "$stock_tests/mariadb-test-run.pl" ] || {
    echo "mtr-tree: $stock_tests is missing (package mariadb-test; scripts/install-deps.sh)" >&2
    return 1
  }
  mkdir -p "$base/lib/mysql/plugin"
  local d
  for d in bin sbin share; do ln -sfn "/usr/$d" "$base/$d"; done
  local arch
  arch=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
  # Client plugins (libmariadb3/plugin) are looked up in lib/<multiarch>.
  [ -d "/usr/lib/$arch" ] && ln -sfn "/usr/lib/$arch" "$base/lib/$arch"
  find "$base/lib/mysql/plugin" -mindepth 1 -maxdepth 1 -type l -delete
  local f
  for f in "$stock_plugins"/*; do ln -s "$f" "$base/lib/mysql/plugin/$(basename "$f")"; done
  ln -sfn "$plugin" "$base/lib/mysql/plugin/ha_tidesdb.so"

  local tests=$base/mysql-test version
  version=$(dpkg-query -W -f='${Version}' mariadb-test 2>/dev/null || echo unknown)
  if [ ! -f "$tests/.tidesql-copy" ] || [ "$(cat "$tests/.tidesql-copy")" != "$version" ] ||
    [ ! -f "$tests/mariadb-test-run.pl" ]; then
    echo "mtr-tree: copying $stock_tests to $tests (once)"
    local copy
    copy=$(mktemp -d "$base/mysql-test.copy.XXXXXX") || return 1
    cp -a "$stock_tests/." "$copy/" || {
      rm -rf "$copy"
      return 1
    }
    echo "$version" >"$copy/.tidesql-copy"
    rm -rf "$tests"
    mv -T "$copy" "$tests" || return 1
  fi
  ln -sfn "$root/mysql-test/tidesdb" "$tests/suite/tidesdb"
  ln -sfn "$root/mysql-test/plugin/tidesdb" "$tests/plugin/tidesdb"
}
