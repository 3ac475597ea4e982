#!/usr/bin/env bash
# Usage: bench/index-build.sh BUILD_DIR [OUT_DIR]
#
# CREATE INDEX on a loaded table, side by side: TidesDB, InnoDB and MyRocks in ONE private
# server, each with a table of ROWS rows (id INT PRIMARY KEY, a INT, b VARCHAR(32), c INT,
# pad VARCHAR(100); a and b random, c distinct), and the same caches (256 MiB). For each
# round and engine in turn (engines alternate, so the machine's drift hits all alike):
# ALTER TABLE ... ADD INDEX (a), ADD INDEX (b), ADD UNIQUE (c), each timed by the client,
# then dropped again. Every engine builds in place (ALGORITHM=INPLACE) with the weakest lock
# it offers: TidesDB and InnoDB let writes go on (LOCK=NONE), MyRocks holds them off
# (SHARED); no writes run here.
#
# Environment: ROWS [1000000], ROUNDS [3], ENGINES ["TidesDB InnoDB RocksDB"], PORT [3392].
# Output: OUT_DIR/results.csv (one line per build), OUT_DIR/summary.md (median seconds
# and the ratio to InnoDB per index), OUT_DIR/server.err; default OUT_DIR is
# BUILD_DIR/bench-index-build/<date>.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$BUILD/bench-index-build/$(date +%Y%m%d-%H%M%S)}
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
ENGINES=${ENGINES:-"TidesDB InnoDB RocksDB"}
PORT=${PORT:-3392}

mkdir -p "$OUT"
. "$(dirname "${BASH_SOURCE[0]}")/private-server.sh"
start_server 256M relaxed --max-recursive-iterations=100000000
now() { date +%s.%N; }

sql "CREATE DATABASE bench"
for engine in $ENGINES; do
  t=bench.t_$engine
  sql "CREATE TABLE $t (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(32) NOT NULL, c INT NOT NULL,
       pad VARCHAR(100) NOT NULL) ENGINE=$engine"
  start=$(now)
  # In chunks of 100,000 rows, so that no engine holds one transaction of the whole table.
  for ((first = 1; first <= ROWS; first += 100000)); do
    last=$((first + 99999 < ROWS ? first + 99999 : ROWS))
    sql "INSERT INTO $t WITH RECURSIVE q (n) AS (SELECT $first UNION ALL SELECT n + 1 FROM q WHERE n < $last)
         SELECT n, FLOOR(RAND(n) * 1000000), MD5(n * 7), ($ROWS - n) * 3, REPEAT('x', 100) FROM q"
  done
  echo "load $engine: $(echo "$(now) - $start" | bc) s"
done | tee "$OUT/load.txt"

echo "round,engine,index,seconds" >"$OUT/results.csv"
for round in $(seq 1 "$ROUNDS"); do
  for engine in $ENGINES; do
    t=bench.t_$engine
    for spec in "ia:INDEX ia (a)" "ib:INDEX ib (b)" "uc:UNIQUE uc (c)"; do
      name=${spec%%:*}
      start=$(now)
      sql "ALTER TABLE $t ADD ${spec#*:}, ALGORITHM=INPLACE"
      seconds=$(echo "$(now) - $start" | bc)
      echo "$round,$engine,$name,$seconds" | tee -a "$OUT/results.csv"
      sql "ALTER TABLE $t DROP INDEX $name"
    done
  done
done

python3 - "$OUT" <<'EOF'
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(out + "/results.csv")))
engines = list(dict.fromkeys(r["engine"] for r in rows))
indexes = list(dict.fromkeys(r["index"] for r in rows))
median = {(e, i): statistics.median(float(r["seconds"]) for r in rows if r["engine"] == e and r["index"] == i)
          for e in engines for i in indexes}
what = {"ia": "INDEX (a), INT", "ib": "INDEX (b), VARCHAR(32)", "uc": "UNIQUE (c), INT"}
lines = ["| index | " + " | ".join("%s s" % e for e in engines) + " | " +
         " | ".join("InnoDB / %s" % e for e in engines if e != "InnoDB") + " |",
         "|---" * (1 + len(engines) + len([e for e in engines if e != "InnoDB"])) + "|"]
for i in indexes:
    cells = ["%.2f" % median[(e, i)] for e in engines]
    ratios = ["%.2fx" % (median[("InnoDB", i)] / median[(e, i)]) for e in engines if e != "InnoDB"] \
        if "InnoDB" in engines else []
    lines.append("| %s | %s | %s |" % (what.get(i, i), " | ".join(cells), " | ".join(ratios)))
open(out + "/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
