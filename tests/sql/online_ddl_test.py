#!/usr/bin/python3
"""Online DDL under load: ALTERs of a TidesDB table while writers change it.

A private server holds one table, `ddl.t`, preloaded with rows. Writer threads (pymysql
connections, optimistic and pessimistic locking) run small transactions against it without
pause: inserts, updates of indexed and unindexed columns, primary key changes, deletes,
now and then a rollback. The column `email` stays unique (it is derived from a counter), so
a UNIQUE index on it must build; `grp` repeats, so a UNIQUE index on it must fail with
1062 and leave the table as it was.

Meanwhile a DDL connection runs, in a seeded random order, every kind of ALTER the engine
offers: ADD INDEX and ADD UNIQUE with LOCK=NONE (built while the writers go on), DROP
INDEX with LOCK=NONE, instant RENAME INDEX, COMMENT, ADD COLUMN (at the end, FIRST or AFTER)
and DROP COLUMN, and copying ALTERs
(ADD / DROP COLUMN, which hold writes off). After each ALTER, and at the end with the writers
stopped, the checks run:

  * through one consistent snapshot, every secondary index holds exactly the table's rows
    (COUNT(*) and the indexed columns through FORCE INDEX against the primary key), and
    point lookups through each index find a sample of rows;
  * CHECK TABLE says OK (at the end);
  * the table's indexes are the ones the ALTERs that succeeded left (SHOW INDEX), and an
    ALTER that failed failed with the expected error only (1062 for the UNIQUE index on
    grp; 1213 / 1205 are the writers', never the ALTER's).

    tests/sql/online_ddl_test.py                  # random seed, about 60 s
    tests/sql/online_ddl_test.py --seed 12 --alters 20 --threads 3
"""

import argparse
import collections
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, PrivateServer, ServerError  # noqa: E402

RETRYABLE = (1213, 1205, 1020)
PRELOAD = 40000
GROUPS = 50

# The secondary indexes the ALTERs may add: name -> (columns, unique).
CANDIDATES = {
    "by_grp": (["grp"], False),
    "by_grp_note": (["grp", "note"], False),
    "by_amount": (["amount"], False),
    "u_email": (["email"], True),
}


class Writer(threading.Thread):
    """Small transactions against ddl.t until stopped."""

    def __init__(self, number, server, seed, next_id, stats):
        super().__init__(daemon=True)
        self.number = number
        self.server = server
        self.rng = random.Random(seed * 100 + number)
        self.next_id = next_id
        self.stats = stats
        self.stop = False
        self.error = None

    def new_id(self):
        with self.next_id["lock"]:
            self.next_id["value"] += 1
            return self.next_id["value"]

    def run(self):
        try:
            conn = self.server.connect(autocommit=False)
            cur = conn.cursor()
            if self.number % 2 == 1:
                cur.execute("SET SESSION tidesdb_pessimistic_locking = ON")
            while not self.stop:
                try:
                    self.transaction(cur)
                    if self.rng.random() < 0.1:
                        conn.rollback()
                        self.stats["rollbacks"] += 1
                    else:
                        conn.commit()
                        self.stats["commits"] += 1
                except pymysql.err.MySQLError as e:
                    code = e.args[0] if e.args else None
                    try:
                        conn.rollback()
                    except pymysql.err.MySQLError:
                        pass
                    if code in RETRYABLE:
                        self.stats["retried %s" % code] += 1
                        continue
                    if code == 1054:  # a column a copying ALTER dropped (extra): take the next
                        self.stats["unknown column"] += 1
                        continue
                    raise
            conn.close()
        except Exception as e:  # noqa: BLE001 - reported by the driver
            self.error = "writer %d: %r" % (self.number, e)

    def transaction(self, cur):
        rng = self.rng
        top = self.next_id["value"]
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            some = rng.randint(1, top)
            if op < 0.3:
                n = self.new_id()
                cur.execute("INSERT INTO ddl.t (id, grp, email, note, amount) VALUES (%s, %s, %s, %s, %s)",
                            (n, n % GROUPS, "e%d@x" % n, rng.choice([None, "n%d" % rng.randint(0, 9)]),
                             rng.randint(0, 1000)))
            elif op < 0.5:
                cur.execute("UPDATE ddl.t SET grp = %s, amount = amount + 1 WHERE id = %s",
                            (rng.randint(0, GROUPS - 1), some))
            elif op < 0.6:
                cur.execute("UPDATE ddl.t SET note = %s WHERE id BETWEEN %s AND %s",
                            (rng.choice([None, "m%d" % rng.randint(0, 9)]), some, some + 3))
            elif op < 0.7:
                # A new email for a row: still unique (from the counter).
                cur.execute("UPDATE ddl.t SET email = %s WHERE id = %s", ("e%d@x" % self.new_id(), some))
            elif op < 0.8:
                cur.execute("UPDATE ddl.t SET id = %s WHERE id = %s", (self.new_id(), some))
            else:
                cur.execute("DELETE FROM ddl.t WHERE id = %s", (some,))


def fetch(cur, sql, args=None):
    cur.execute(sql, args)
    return cur.fetchall()


def secondary_indexes(cur):
    """name -> columns of ddl.t's secondary indexes, from SHOW INDEX."""
    got = collections.OrderedDict()
    for row in fetch(cur, "SHOW INDEX FROM ddl.t"):
        name, seq, column = row[2], row[3], row[4]
        if name == "PRIMARY":
            continue
        got.setdefault(name, []).append((seq, column))
    return {name: [c for _, c in sorted(cols)] for name, cols in got.items()}


def check_indexes(conn, expected):
    """Problems found comparing every secondary index with the rows, in one snapshot."""
    problems = []
    cur = conn.cursor()
    actual = secondary_indexes(cur)
    if set(actual) != set(expected):
        problems.append("indexes %s, expected %s" % (sorted(actual), sorted(expected)))
    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    try:
        rows = fetch(cur, "SELECT id, grp, email, note, amount FROM ddl.t FORCE INDEX (PRIMARY)")
        by_pk = collections.Counter(rows)
        for name, cols in actual.items():
            sel = ", ".join(["id"] + cols)
            via_index = collections.Counter(fetch(cur, "SELECT %s FROM ddl.t FORCE INDEX (%s)" % (sel, name)))
            col_pos = [["id", "grp", "email", "note", "amount"].index(c) for c in ["id"] + cols]
            via_pk = collections.Counter(tuple(r[i] for i in col_pos) for r in by_pk.elements())
            if via_index != via_pk:
                extra = list((via_index - via_pk).elements())[:5]
                missing = list((via_pk - via_index).elements())[:5]
                problems.append("index %s differs from the table: only in the index %r, missing from it %r"
                                % (name, extra, missing))
            sample = random.Random(len(rows)).sample(list(via_pk.elements()), min(20, len(rows)))
            for row in sample:
                if any(v is None for v in row[1:]):
                    continue
                where = " AND ".join("%s = %%s" % c for c in cols)
                got = fetch(cur, "SELECT %s FROM ddl.t FORCE INDEX (%s) WHERE %s" % (sel, name, where), row[1:])
                if row not in got:
                    problems.append("lookup of %r through index %s does not find the row" % (row, name))
                    break
    finally:
        cur.execute("COMMIT")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="seed (default: from the clock)")
    ap.add_argument("--alters", type=int, default=16, help="ALTER statements (default 16)")
    ap.add_argument("--threads", type=int, default=4, help="writer connections (default 4)")
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--keep", action="store_true", help="keep the server's directory")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
    print("online_ddl_test: seed %d (replay with --seed %d; interleavings vary with timing)" % (seed, seed),
          flush=True)
    rng = random.Random(seed)
    try:
        server = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=True)
    except ServerError as e:
        print("online_ddl_test: FAIL: %s" % e)
        return 2
    problems = []
    stats = collections.Counter()
    with server:
        try:
            server.start()
            conn = server.connect()
            cur = conn.cursor()
            cur.execute("CREATE DATABASE ddl")
            cur.execute("CREATE TABLE ddl.t (id INT PRIMARY KEY, grp INT NOT NULL, email VARCHAR(40) NOT NULL, "
                        "note VARCHAR(20), amount INT NOT NULL) ENGINE=TidesDB")
            for start in range(1, PRELOAD + 1, 1000):
                cur.execute("INSERT INTO ddl.t VALUES " + ", ".join(
                    "(%d, %d, 'e%d@x', %s, %d)" % (n, n % GROUPS, n, "NULL" if n % 3 == 0 else "'n%d'" % (n % 7),
                                                    n % 1000)
                    for n in range(start, min(start + 1000, PRELOAD + 1))))
            next_id = {"value": PRELOAD, "lock": threading.Lock()}
            writers = [Writer(i, server, seed, next_id, stats) for i in range(args.threads)]
            for w in writers:
                w.start()
            expected = {}
            extra_column = False
            started = time.time()
            for number in range(1, args.alters + 1):
                absent = [n for n in CANDIDATES if n not in expected]
                choices = ["add"] * (3 if absent else 0) + ["drop"] * (2 if expected else 0) + \
                          ["unique_fails", "rename", "comment", "copy"]
                kind = rng.choice(choices)
                if kind == "add":
                    name = rng.choice(absent)
                    cols, unique = CANDIDATES[name]
                    sql = "ALTER TABLE ddl.t ADD %s %s (%s), ALGORITHM=INPLACE, LOCK=NONE" % (
                        "UNIQUE" if unique else "INDEX", name, ", ".join(cols))
                    want_error = None
                elif kind == "drop":
                    name = rng.choice(sorted(expected))
                    sql = "ALTER TABLE ddl.t DROP INDEX %s, ALGORITHM=INPLACE, LOCK=NONE" % name
                    want_error = None
                elif kind == "unique_fails":
                    sql = "ALTER TABLE ddl.t ADD UNIQUE u_grp (grp), LOCK=NONE"
                    want_error = 1062
                elif kind == "rename":
                    if not expected:
                        continue
                    name = rng.choice(sorted(expected))
                    new_name = name + "_r" if not name.endswith("_r") else name[:-2]
                    if new_name in expected:  # both spellings exist: rename would clash
                        continue
                    sql = "ALTER TABLE ddl.t RENAME INDEX %s TO %s, ALGORITHM=INSTANT" % (name, new_name)
                    want_error = None
                elif kind == "comment":
                    sql = "ALTER TABLE ddl.t COMMENT 'alter %d', ALGORITHM=INSTANT" % number
                    want_error = None
                else:
                    # Copying, or instant (a column dropped, or added at the end, first or
                    # in the middle: the rows already stored keep their bytes).
                    sql = ("ALTER TABLE ddl.t DROP COLUMN extra, ALGORITHM=%s" % rng.choice(["COPY", "INSTANT"])
                           if extra_column
                           else "ALTER TABLE ddl.t ADD COLUMN extra INT DEFAULT 7%s, ALGORITHM=%s"
                           % (rng.choice(["", " FIRST", " AFTER grp"]), rng.choice(["COPY", "INSTANT"])))
                    want_error = None
                t0 = time.time()
                try:
                    cur.execute(sql)
                    got_error = None
                except pymysql.err.MySQLError as e:
                    got_error = e.args[0] if e.args else None
                    if got_error != want_error:
                        problems.append("%s: error %r" % (sql, e))
                if got_error is None and want_error is not None:
                    problems.append("%s: succeeded, expected error %d" % (sql, want_error))
                if got_error is None:
                    if kind == "add":
                        expected[name] = CANDIDATES[name][0]
                    elif kind == "drop":
                        del expected[name]
                    elif kind == "rename":
                        expected[new_name] = expected.pop(name)
                    elif kind == "copy":
                        extra_column = not extra_column
                stats["alter " + kind] += 1
                print("online_ddl_test: %2d %-60s %5.2fs %s" % (number, sql[16:76], time.time() - t0,
                                                               "ok" if got_error is None else "error %s" % got_error),
                      flush=True)
                found = check_indexes(conn, expected)
                if extra_column:
                    # Nobody writes extra: every row, whatever its schema version, reads 7.
                    wrong = fetch(cur, "SELECT COUNT(*) FROM ddl.t WHERE NOT extra <=> 7")[0][0]
                    if wrong:
                        found.append("%d rows read extra other than its default 7" % wrong)
                problems += ["after ALTER %d (%s): %s" % (number, sql, p) for p in found]
                if problems or any(w.error for w in writers):
                    break
            for w in writers:
                w.stop = True
            for w in writers:
                w.join(60)
                if w.error:
                    problems.append(w.error)
            problems += ["at the end: %s" % p for p in check_indexes(conn, expected)]
            for r in fetch(cur, "CHECK TABLE ddl.t"):
                if r[2] in ("error", "Error") or (r[2] == "status" and r[3] != "OK"):
                    problems.append("CHECK TABLE: %s %s" % (r[2], r[3]))
            rows = fetch(cur, "SELECT COUNT(*) FROM ddl.t")[0][0]
            conn.close()
            print("online_ddl_test: %d rows at the end, %.0f s; %s" % (
                rows, time.time() - started, ", ".join("%s %d" % kv for kv in sorted(stats.items()))), flush=True)
        except (ServerError, pymysql.err.MySQLError) as e:
            problems.append("%r\n%s" % (e, server.log_tail(30)))
        if problems:
            server.mark_failed()
            for p in problems[:20]:
                print("online_ddl_test: problem: %s" % p)
            print("online_ddl_test: FAIL (seed %d)" % seed)
            return 1
    print("online_ddl_test: PASS (seed %d)" % seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
