#!/usr/bin/python3
"""Foreign keys under concurrency: no committed child ever lacks its parent.

A private server holds a parent table and three children: `c_r` references the parent
with RESTRICT, `c_c` with ON DELETE CASCADE ON UPDATE CASCADE, and `g` references `c_c`
with ON DELETE SET NULL (a cascade two levels deep). Writer threads (pymysql connections;
optimistic and pessimistic locking, READ COMMITTED and REPEATABLE READ) run small
transactions over a small key range, so that parents are deleted and re-inserted and their
keys changed while other transactions insert and move children that reference them:

    INSERT / DELETE / UPDATE of parent keys, INSERT of children with random parents,
    UPDATE of a child's parent, DELETE of children, now and then a rollback.

Every statement either succeeds or fails with an error the model allows (1451 / 1452 for
a violation, 1062 for a duplicate key, 1213 / 1205 for a conflict or a lock wait). After
the run, and at checkpoints during it, through one consistent snapshot:

  * every non-NULL foreign key value of c_r, c_c and g has its parent row;
  * CHECK TABLE says OK for every table (at the end).

    tests/sql/foreign_keys_test.py                  # random seed, about 40 s
    tests/sql/foreign_keys_test.py --seed 13 --duration 20 --threads 4
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

ALLOWED = {1451, 1452, 1062, 1213, 1205, 1020}
KEYS = 40  # parent keys in play

SCHEMA = [
    "CREATE DATABASE fk",
    "CREATE TABLE fk.p (id INT PRIMARY KEY, v INT) ENGINE=TidesDB",
    "CREATE TABLE fk.c_r (id INT PRIMARY KEY, pid INT, KEY (pid),"
    " FOREIGN KEY (pid) REFERENCES fk.p (id)) ENGINE=TidesDB",
    "CREATE TABLE fk.c_c (id INT PRIMARY KEY, pid INT, KEY (pid),"
    " FOREIGN KEY (pid) REFERENCES fk.p (id) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=TidesDB",
    "CREATE TABLE fk.g (id INT PRIMARY KEY, cid INT,"
    " FOREIGN KEY (cid) REFERENCES fk.c_c (id) ON DELETE SET NULL) ENGINE=TidesDB",
]

ORPHANS = {
    "c_r": "SELECT COUNT(*) FROM fk.c_r c LEFT JOIN fk.p p ON p.id = c.pid WHERE c.pid IS NOT NULL AND p.id IS NULL",
    "c_c": "SELECT COUNT(*) FROM fk.c_c c LEFT JOIN fk.p p ON p.id = c.pid WHERE c.pid IS NOT NULL AND p.id IS NULL",
    "g": "SELECT COUNT(*) FROM fk.g g LEFT JOIN fk.c_c c ON c.id = g.cid WHERE g.cid IS NOT NULL AND c.id IS NULL",
}


class Writer(threading.Thread):
    def __init__(self, number, server, seed, counter, stats):
        super().__init__(daemon=True)
        self.number = number
        self.server = server
        self.rng = random.Random(seed * 1000 + number)
        self.counter = counter
        self.stats = stats
        self.stop = False
        self.error = None

    def new_id(self):
        with self.counter["lock"]:
            self.counter["value"] += 1
            return self.counter["value"]

    def run(self):
        try:
            conn = self.server.connect(autocommit=False)
            cur = conn.cursor()
            cur.execute("SET SESSION tidesdb_pessimistic_locking = %s" % ("ON" if self.number % 2 else "OFF"))
            cur.execute("SET SESSION tidesdb_lock_wait_timeout = 2")
            level = "REPEATABLE READ" if self.number % 4 < 2 else "READ COMMITTED"
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + level)
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
                    if code not in ALLOWED:
                        raise
                    self.stats["error %s" % code] += 1
            conn.close()
        except Exception as e:  # noqa: BLE001 - reported by the driver
            self.error = "writer %d: %r" % (self.number, e)

    def statement(self, cur, sql, args):
        """One statement; a violation or a duplicate fails only the statement."""
        try:
            cur.execute(sql, args)
        except pymysql.err.MySQLError as e:
            code = e.args[0] if e.args else None
            if code in (1451, 1452, 1062):
                self.stats["error %s" % code] += 1
                return
            raise

    def transaction(self, cur):
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            key = rng.randint(1, KEYS)
            if op < 0.2:
                self.statement(cur, "INSERT INTO fk.p VALUES (%s, 0)", (key,))
            elif op < 0.3:
                self.statement(cur, "DELETE FROM fk.p WHERE id = %s", (key,))
            elif op < 0.37:
                self.statement(cur, "UPDATE fk.p SET id = %s WHERE id = %s", (rng.randint(1, KEYS), key))
            elif op < 0.4:
                self.statement(cur, "UPDATE fk.p SET v = v + 1 WHERE id = %s", (key,))
            elif op < 0.55:
                table = rng.choice(["c_r", "c_c"])
                self.statement(cur, "INSERT INTO fk.%s VALUES (%%s, %%s)" % table, (self.new_id(), key))
            elif op < 0.65:
                table = rng.choice(["c_r", "c_c"])
                self.statement(cur, "UPDATE fk.%s SET pid = %%s WHERE pid = %%s LIMIT 1" % table,
                               (rng.randint(1, KEYS), key))
            elif op < 0.75:
                table = rng.choice(["c_r", "c_c"])
                self.statement(cur, "DELETE FROM fk.%s WHERE pid = %%s LIMIT 2" % table, (key,))
            elif op < 0.9:
                cur.execute("SELECT id FROM fk.c_c WHERE pid = %s LIMIT 1", (key,))
                row = cur.fetchone()
                self.statement(cur, "INSERT INTO fk.g VALUES (%s, %s)",
                               (self.new_id(), row[0] if row else rng.randint(1, 1000)))
            else:
                self.statement(cur, "DELETE FROM fk.c_c WHERE id = %s", (rng.randint(1, max(1, self.counter["value"])),))


def check_orphans(server):
    conn = server.connect(autocommit=False)
    cur = conn.cursor()
    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    found = {}
    for table, sql in ORPHANS.items():
        cur.execute(sql)
        found[table] = cur.fetchone()[0]
    counts = {}
    for table in ("p", "c_r", "c_c", "g"):
        cur.execute("SELECT COUNT(*) FROM fk.%s" % table)
        counts[table] = cur.fetchone()[0]
    conn.commit()
    conn.close()
    return found, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--duration", type=float, default=40)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--plugin", default=DEFAULT_PLUGIN)
    parser.add_argument("--keep", action="store_true", help="keep the server's directory")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print("foreign keys test: seed %d, %d writers, %.0f s" % (seed, args.threads, args.duration), flush=True)

    failures = []
    with PrivateServer(plugin=args.plugin, keep=args.keep) as server:
        server.start()
        conn = server.connect()
        cur = conn.cursor()
        for sql in SCHEMA:
            cur.execute(sql)
        conn.close()
        stats = collections.Counter()
        counter = {"lock": threading.Lock(), "value": 0}
        writers = [Writer(i, server, seed, counter, stats) for i in range(args.threads)]
        for w in writers:
            w.start()
        deadline = time.monotonic() + args.duration
        checkpoint = 0
        while time.monotonic() < deadline and all(w.is_alive() for w in writers):
            time.sleep(min(5.0, max(0.1, deadline - time.monotonic())))
            found, counts = check_orphans(server)
            checkpoint += 1
            print("  checkpoint %d: rows %s, orphans %s" % (checkpoint, counts, found), flush=True)
            if any(found.values()):
                failures.append("checkpoint %d: orphaned children %s" % (checkpoint, found))
                break
        for w in writers:
            w.stop = True
        for w in writers:
            w.join(60)
            if w.error:
                failures.append(w.error)
        found, counts = check_orphans(server)
        print("  at the end: rows %s, orphans %s" % (counts, found), flush=True)
        if any(found.values()):
            failures.append("at the end: orphaned children %s" % found)
        conn = server.connect()
        cur = conn.cursor()
        for table in ("p", "c_r", "c_c", "g"):
            cur.execute("CHECK TABLE fk.%s" % table)
            for row in cur.fetchall():
                if row[2] == "status" and row[3] != "OK":
                    failures.append("CHECK TABLE fk.%s: %s" % (table, row[3]))
        conn.close()
        print("  %s" % ", ".join("%s %d" % kv for kv in sorted(stats.items())), flush=True)
        violations = stats["error 1451"] + stats["error 1452"]
        if stats["commits"] < 50 or violations == 0:
            failures.append("too little happened: %d commits, %d violations refused" % (stats["commits"], violations))
        if failures:
            server.mark_failed()
    if failures:
        for f in failures:
            print("FAILED: " + f)
        print("0 passed, 1 failed")
        return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ServerError as e:
        print("FAILED: %s" % e)
        print("0 passed, 1 failed")
        sys.exit(1)
