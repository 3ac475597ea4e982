#!/usr/bin/env bash
# Session 19: where a cached write slice's written bytes go (flushes and compactions from the
# server log), TidesDB only, 8 x 200k, 2G, relaxed, plugin at 4005b04 (ratio 10).
# Usage: compactions-during-writes.sh BUILD OUT_DIR (absolute paths). From the log, not
# INFORMATION_SCHEMA.TIDESDB_COMPACTIONS: that keeps the last 32, fewer than one slice runs.
set -euo pipefail
BUILD=$1 OUT=$2 PORT=3391
mkdir -p $OUT
cd "$(dirname "$0")/../../../.."
. bench/private-server.sh
start_server 2G relaxed
sql "CREATE DATABASE t"
sysbench oltp_read_write --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
  --tables=8 --table-size=200000 --threads=4 --mysql-storage-engine=TidesDB prepare >/dev/null
sb() { sysbench "$1" --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root --mysql-db=t \
    --tables=8 --table-size=200000 --threads=4 --rand-type=uniform --time="$2" \
    --mysql-ignore-errors=1213,1205,1020 run | awk '/transactions:/ {print $2, $3}'; }
echo insert $(sb oltp_insert 10)
for w in oltp_update_index oltp_delete; do
  mark=$(wc -l < $OUT/server.err)
  w0=$(io_written); c0=$(cpu_ticks)
  echo $w $(sb $w 20) written_mb=$(( ($(io_written) - w0) >> 20 )) cpu_ticks=$(( $(cpu_ticks) - c0 ))
  tail -n +$((mark + 1)) $OUT/server.err | { grep -E "compaction|flush" || true; } | sed 's/^.*TidesDB: //' > $OUT/$w.events
  echo "  events: $(wc -l < $OUT/$w.events)"
  awk '/compaction/ { match($0, /\(([a-z0-9-]+)\)/, m); r=m[1]; match($0, /-> .* ([0-9]+) bytes;/, b); n[r]++; by[r]+=b[1] }
       END { for (r in n) printf "  compaction %-20s %d runs, %.1f MiB out\n", r, n[r], by[r]/1048576 }' $OUT/$w.events
  { grep -c flush $OUT/$w.events || true; } | sed 's/^/  flush lines: /'
done
stop_server
