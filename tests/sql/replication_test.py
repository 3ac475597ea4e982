#!/usr/bin/python3
"""Replication test: a TidesDB primary and a TidesDB replica converge, in every binlog format,
across SIGKILLs of the replica, and with a parallel replica.

Two private servers run on this machine: the primary with --log-bin --server-id=1
--sync-binlog=1, the replica with --server-id=2 --skip-slave-start, replicating by GTID
(CHANGE MASTER TO ... master_use_gtid=slave_pos, as root over TCP). The replica keeps
mysql.gtid_slave_pos on TidesDB (--gtid-pos-auto-engines=TidesDB), so the position a
replicated transaction records commits in the same TidesDB transaction as its rows
(--gtid-pos-engine InnoDB keeps the stock InnoDB table instead; the server then commits the
two engines with two-phase commit through its tc.log, which loses the InnoDB half at some
crashes).

Each binlog format (ROW, MIXED, STATEMENT; --format picks one) gets its own database and
three phases, with writer threads on the primary running multi-statement transactions over
four TidesDB tables (primary keys, UNIQUE and plain secondary indexes, an AUTO_INCREMENT
key, BLOB and TEXT columns, whose values over 16 bytes both servers store off their rows):
inserts (multi-row, AUTO_INCREMENT), updates by primary key,
by a UNIQUE key and by a plain secondary key, deletes by primary and by UNIQUE key, REPLACE
and INSERT ... ON DUPLICATE KEY UPDATE, and last a marker row with the transaction's id.
Deadlocks and lock wait timeouts (1213, 1205) roll back and retry. Threads alternate
optimistic and pessimistic locking and, for ROW and MIXED, REPEATABLE READ and READ
COMMITTED (--isolation overrides). A STATEMENT run first asks at which levels TidesDB logs
statements: READ COMMITTED must refuse (1665) and write nothing, and since TidesDB logs no
statements at all (its UPDATE and DELETE read a snapshot) every level must; should a level
accept, its writers use the weakest one accepted. After each COMMIT the writer reads
@@last_gtid, so the test knows which GTID carried which transaction.

  1. Serial replica: the workload runs, then the replica catches up (its @@gtid_slave_pos
     reaches the primary's @@gtid_binlog_pos) and the two are compared.
  2. The replica is SIGKILLed while the workload runs (--kills times), restarted, and
     before START SLAVE its data must be exactly the transactions up to its
     gtid_slave_pos: the markers it holds are those of the GTIDs up to that position, no
     more (the position lags the data: replaying would fail with 1062) and no fewer (it
     runs ahead: those transactions would be lost). Then START SLAVE; the replica must
     never stop with an error; after the workload it catches up and is compared.
  3. Parallel replica: slave_parallel_threads=4, slave_parallel_mode=optimistic. The
     workload runs with hot rows (every transaction moves money between a few accounts)
     while only the replica's IO thread runs, so the relay log holds a backlog of
     conflicting transactions; then the SQL thread applies it in parallel, once SIGKILLed
     midway (--parallel-kills). A conflict between two replicated transactions must be
     retried (Slave_retried_transactions counts them), never stop the replica; the result
     is compared.

A comparison is, per table: SHOW CREATE TABLE (without the AUTO_INCREMENT= counter, which
may legitimately run ahead on the primary, where rolled-back inserts used values),
CHECKSUM TABLE, the full contents in primary key order (the first differing rows are
printed), and CHECK TABLE on both sides. The binlog of each run is also read back
(SHOW BINLOG EVENTS) to show the format was in effect: ROW and MIXED log TidesDB's
changes as rows and no DML statements (TidesDB is not statement-capable), STATEMENT no row
events.

Before phase 1 each run replays one fixed interleaving (table `probe`) and compares it at
once: a REPEATABLE READ transaction reads, another inserts a row and commits, then the first
runs UPDATE ... WHERE on a secondary key value the new row has, and commits. Its snapshot
does not see the new row, so on the primary the UPDATE skips it; the binlog holds the INSERT
before the UPDATE, so a replica replaying the statement updates it too. ROW replicates the
outcome; a statement format shows whether the engine's reads for a logged statement can be
replayed in commit order.

What this finds today (docs/SQL-ENGINE.md, "Replication"): ROW and MIXED pass, STATEMENT is
refused at every level (before the engine stopped logging statements, MIXED and STATEMENT
failed at the probe: REPEATABLE READ is snapshot isolation); phase 3 passes also when the replica prepares before
it waits for its turn to commit (--replica-binlog) or locks as it writes
(--replica-arg=--tidesdb-pessimistic-locking=ON), since TidesDB reports its lock waits to
the server, which kills and retries the later transaction (it stalled until
tidesdb_lock_wait_timeout before). With --gtid-pos-engine InnoDB phase 2 can fail too: the
gtid_slave_pos row (InnoDB) of the last transaction is lost at a kill, its rows (TidesDB)
are not.

    tests/sql/replication_test.py                          # all three formats
    tests/sql/replication_test.py --format ROW --seed 7 -v # about 35 s
    tests/sql/replication_test.py --format STATEMENT --isolation SERIALIZABLE --keep-going
    tests/sql/replication_test.py --format ROW --gtid-pos-engine InnoDB --replica-binlog

The last line is "replication_test: PASS|FAIL ..." with the counts; exit 0 only on PASS.
"""

import argparse
import collections
import itertools
import os
import random
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, PrivateServer, ServerError  # noqa: E402

FORMATS = ("ROW", "MIXED", "STATEMENT")
RETRYABLE = (1213, 1205, 1020)
ER_BINLOG_STMT_MODE_AND_ROW_ENGINE = 1665
ACCOUNTS = 40
HOT_ACCOUNTS = 4  # phase 3: every transaction moves money between two of these
KV_KEYS = 300
GROUPS = 60  # items.grp values: an UPDATE by grp touches a few dozen rows
PARALLEL_THREADS = 4


def schema(db):
    return [
        "CREATE DATABASE %s" % db,
        "CREATE TABLE %s.accounts (id INT PRIMARY KEY, email VARCHAR(64) NOT NULL, balance BIGINT NOT NULL, "
        "ops INT NOT NULL, grp INT NOT NULL, note TEXT, UNIQUE KEY email (email), KEY grp (grp, balance)) "
        "ENGINE=TidesDB DEFAULT CHARSET=utf8mb4" % db,
        "CREATE TABLE %s.items (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, tag VARCHAR(40) NOT NULL, "
        "thread INT NOT NULL, grp INT NOT NULL, qty INT NOT NULL, body BLOB, UNIQUE KEY tag (tag), "
        "KEY grp (grp, qty)) ENGINE=TidesDB" % db,
        "CREATE TABLE %s.kv (k INT PRIMARY KEY, v INT NOT NULL, txt VARCHAR(200) NOT NULL, KEY v (v)) "
        "ENGINE=TidesDB" % db,
        "CREATE TABLE %s.marker (txn BIGINT PRIMARY KEY, thread INT NOT NULL, phase TINYINT NOT NULL, "
        "KEY thread (thread, txn)) ENGINE=TidesDB" % db,
        "CREATE TABLE %s.probe (id INT PRIMARY KEY, grp INT NOT NULL, qty INT NOT NULL, KEY grp (grp)) "
        "ENGINE=TidesDB" % db,
    ]


class ReplicaStopped(Exception):
    """The replica's SQL or IO thread stopped with an error."""


def fetch(server, sql, args=None, **kw):
    """Runs one statement on a fresh connection (servers restart under the test)."""
    conn = server.connect(read_timeout=300, **kw)
    try:
        cur = conn.cursor()
        cur.execute(sql, args)
        return list(cur.fetchall())
    finally:
        conn.close()


def gtid_seq(pos):
    """The sequence number of domain 0 in a GTID position ('0-1-42' -> 42), 0 if none."""
    for gtid in pos.split(","):
        parts = gtid.strip().split("-")
        if len(parts) == 3 and parts[0] == "0":
            return int(parts[2])
    return 0


# --- the workload ----------------------------------------------------------------------------

class Workload:
    """What the writer threads share: transaction ids, the ledger of committed transactions
    (txn id -> (database, GTID sequence number)), a sample of items' ids and tags to update
    and delete, counters, and the problems found."""

    def __init__(self):
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.ledger = {}
        self.max_item = 0
        self.tags = collections.deque(maxlen=500)
        self.tag_ids = itertools.count(1)
        self.stats = collections.Counter()
        self.problems = []


class Writer(threading.Thread):
    def __init__(self, no, server, work, db, fmt, phase, seed, hot, isolations):
        super().__init__(daemon=True)
        self.no = no
        self.server = server
        self.work = work
        self.db = db
        self.fmt = fmt
        self.phase = phase
        self.hot = hot
        self.rng = random.Random("%d-%s-%d-%d" % (seed, fmt, phase, no))
        self.pessimistic = (no // len(isolations)) % 2 == 1
        self.isolation = isolations[no % len(isolations)]
        self.stop = False

    def run(self):
        try:
            conn = self.server.connect(read_timeout=120, write_timeout=120, autocommit=False)
            cur = conn.cursor()
            cur.execute("SET SESSION binlog_format = " + self.fmt)
            cur.execute("SET SESSION tidesdb_pessimistic_locking = %s" % ("ON" if self.pessimistic else "OFF"))
            cur.execute("SET SESSION tidesdb_lock_wait_timeout = 5")
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + self.isolation)
            conn.commit()
        except pymysql.err.MySQLError as e:
            self.work.problems.append("writer %d could not connect: %s" % (self.no, e))
            return
        while not self.stop:
            txn = next(self.work.ids)
            try:
                self.transaction(cur, txn)
            except pymysql.err.MySQLError as e:
                code = e.args[0] if e.args and isinstance(e.args[0], int) else -1
                if code in RETRYABLE:
                    self.work.stats["retried on the primary"] += 1
                    try:
                        conn.rollback()
                    except pymysql.err.MySQLError:
                        pass
                    continue
                # The primary is never killed: any other error is the engine's or the test's.
                self.work.problems.append("writer %d (%s, %s locking) txn %d: unexpected error %s" % (
                    self.no, self.isolation, "pessimistic" if self.pessimistic else "optimistic", txn, e))
                return
        conn.close()

    def transaction(self, cur, txn):
        rng, db = self.rng, self.db
        cur.execute("BEGIN")
        if self.hot:
            a, b = rng.sample(range(HOT_ACCOUNTS), 2)
            self.transfer(cur, a, b, rng.randint(1, 50))
        for _ in range(rng.randint(1, 5)):
            op = rng.choices(OPS, WEIGHTS)[0]
            op(self, cur, txn)
        cur.execute("INSERT INTO %s.marker (txn, thread, phase) VALUES (%%s, %%s, %%s)" % db,
                    (txn, self.no, self.phase))
        cur.execute("COMMIT")
        cur.execute("SELECT @@last_gtid")
        seq = gtid_seq(cur.fetchone()[0])
        with self.work.lock:
            self.work.ledger[txn] = (db, seq)
            self.work.stats["committed"] += 1

    # Each operation writes literal values chosen here (no RAND(), NOW(), LIMIT), so that
    # its statement replays deterministically; what it changes depends on the rows present.

    def body(self):
        return self.rng.randbytes(self.rng.choice((0, 16, 200, 3000)))

    def note(self):
        return "n%d-" % self.rng.randrange(10**6) + "é✓x" * self.rng.randint(0, 400)

    def insert_items(self, cur, txn):
        n = self.rng.randint(1, 3) if self.rng.random() > 0.03 else 40
        rows = [("t%d-%d" % (txn, next(self.work.tag_ids)), self.no, self.rng.randrange(GROUPS),
                 self.rng.randint(0, 100), self.body()) for i in range(n)]
        cur.execute("INSERT INTO %s.items (tag, thread, grp, qty, body) VALUES " % self.db
                    + ", ".join(["(%s, %s, %s, %s, %s)"] * n), [v for row in rows for v in row])
        with self.work.lock:
            self.work.max_item = max(self.work.max_item, cur.lastrowid + n - 1)
            self.work.tags.extend(row[0] for row in rows)

    def some_item(self):
        return self.rng.randint(1, max(1, self.work.max_item))

    def some_tag(self):
        with self.work.lock:
            return self.rng.choice(self.work.tags) if self.work.tags else "none"

    def update_item_by_pk(self, cur, txn):
        cur.execute("UPDATE %s.items SET qty = qty + %%s, body = %%s WHERE id = %%s" % self.db,
                    (self.rng.randint(1, 9), self.body(), self.some_item()))

    def update_items_by_grp(self, cur, txn):
        cur.execute("UPDATE %s.items SET qty = qty + 1 WHERE grp = %%s" % self.db, (self.rng.randrange(GROUPS),))

    def delete_item(self, cur, txn):
        if self.rng.random() < 0.5:
            cur.execute("DELETE FROM %s.items WHERE id = %%s" % self.db, (self.some_item(),))
        else:
            cur.execute("DELETE FROM %s.items WHERE tag = %%s" % self.db, (self.some_tag(),))

    def replace_item(self, cur, txn):
        # A REPLACE on the UNIQUE tag: the row holding it gives way to one with a new id.
        cur.execute("REPLACE INTO %s.items (tag, thread, grp, qty, body) VALUES (%%s, %%s, %%s, %%s, %%s)" % self.db,
                    (self.some_tag(), self.no, self.rng.randrange(GROUPS), self.rng.randint(0, 100), self.body()))

    def upsert_kv(self, cur, txn):
        # kv has no UNIQUE key besides the primary key, so this is safe for statement logging.
        cur.execute("INSERT INTO %s.kv (k, v, txt) VALUES (%%s, %%s, %%s) ON DUPLICATE KEY UPDATE "
                    "v = MOD(v + VALUES(v), 1000), txt = VALUES(txt)" % self.db,
                    (self.rng.randrange(KV_KEYS), self.rng.randint(1, 999), "u%d" % txn))

    def replace_kv(self, cur, txn):
        cur.execute("REPLACE INTO %s.kv (k, v, txt) VALUES (%%s, %%s, %%s)" % self.db,
                    (self.rng.randrange(KV_KEYS), self.rng.randint(0, 999),
                     "r%d-" % txn + "z" * self.rng.randint(0, 150)))

    def delete_kv(self, cur, txn):
        cur.execute("DELETE FROM %s.kv WHERE k = %%s" % self.db, (self.rng.randrange(KV_KEYS),))

    def update_kv_by_range(self, cur, txn):
        lo = self.rng.randint(0, 990)
        cur.execute("UPDATE %s.kv SET txt = %%s WHERE v BETWEEN %%s AND %%s" % self.db, ("g%d" % txn, lo, lo + 5))

    def transfer(self, cur, a, b, amount):
        for account, delta in ((a, -amount), (b, amount)):
            cur.execute("UPDATE %s.accounts SET balance = balance + %%s, ops = ops + 1 WHERE id = %%s" % self.db,
                        (delta, account))

    def transfer_any(self, cur, txn):
        a, b = self.rng.sample(range(ACCOUNTS), 2)
        self.transfer(cur, a, b, self.rng.randint(1, 100))

    def update_account_by_email(self, cur, txn):
        # Through the UNIQUE key; moving the row to another grp moves its grp index entry.
        cur.execute("UPDATE %s.accounts SET note = %%s, grp = %%s WHERE email = %%s" % self.db,
                    (self.note(), self.rng.randrange(8), "a%d@example.org" % self.rng.randrange(ACCOUNTS)))

    def update_accounts_by_grp(self, cur, txn):
        cur.execute("UPDATE %s.accounts SET ops = ops + 1 WHERE grp = %%s" % self.db, (self.rng.randrange(8),))


OPS, WEIGHTS = zip(*[
    (Writer.insert_items, 6), (Writer.update_item_by_pk, 3), (Writer.update_items_by_grp, 1),
    (Writer.delete_item, 2), (Writer.replace_item, 1), (Writer.upsert_kv, 3), (Writer.replace_kv, 1),
    (Writer.delete_kv, 1), (Writer.update_kv_by_range, 1), (Writer.transfer_any, 2),
    (Writer.update_account_by_email, 1), (Writer.update_accounts_by_grp, 1),
])


def run_writers(primary, work, db, fmt, phase, args, levels, seconds, hot=False, during=None):
    """Runs the writers (isolation `levels` taken in turn) for `seconds`; `during()` runs
    meanwhile (the kills) instead of a plain sleep. Returns the number of transactions
    committed."""
    before = work.stats["committed"]
    writers = [Writer(i, primary, work, db, fmt, phase, args.seed, hot, levels) for i in range(args.threads)]
    for w in writers:
        w.start()
    try:
        if during is not None:
            during()
        else:
            time.sleep(seconds)
    finally:
        for w in writers:
            w.stop = True
        for w in writers:
            w.join(180)
    return work.stats["committed"] - before


# --- the replica -----------------------------------------------------------------------------

def slave_status(replica):
    conn = replica.connect(read_timeout=30)
    try:
        cur = conn.cursor(pymysql.cursors.DictCursor)
        cur.execute("SHOW SLAVE STATUS")
        return cur.fetchone() or {}
    finally:
        conn.close()


def check_replica_running(replica):
    """Raises ReplicaStopped when a replication thread stopped with an error (an IO error
    while the IO thread retries its connection is not one)."""
    st = slave_status(replica)
    if st.get("Last_SQL_Errno") or (st.get("Slave_IO_Running") == "No" and st.get("Last_IO_Errno")):
        raise ReplicaStopped("replica stopped: SQL error %s: %s; IO error %s: %s; gtid_slave_pos %s" % (
            st.get("Last_SQL_Errno"), st.get("Last_SQL_Error"), st.get("Last_IO_Errno"), st.get("Last_IO_Error"),
            fetch(replica, "SELECT @@gtid_slave_pos")[0][0]))
    return st


def wait_caught_up(primary, replica, timeout, io_only=False):
    """Waits until the replica has applied (or with io_only, received) everything the primary
    has logged; returns the seconds it took."""
    target = fetch(primary, "SELECT @@gtid_binlog_pos")[0][0]
    t0 = time.time()
    while True:
        st = check_replica_running(replica)
        pos = st.get("Gtid_IO_Pos") if io_only else fetch(replica, "SELECT @@gtid_slave_pos")[0][0]
        if gtid_seq(pos) >= gtid_seq(target):
            return time.time() - t0
        if time.time() - t0 > timeout:
            threads = fetch(replica, "SELECT id, command, time, state FROM information_schema.processlist "
                                     "WHERE user = 'system user' ORDER BY id")
            raise ReplicaStopped("the replica did not catch up in %d s: it is at %s, the primary at %s; its "
                                 "replication threads (id, command, seconds, state):\n%s" % (
                                     timeout, pos, target, "\n".join("    %r" % (t,) for t in threads)))
        time.sleep(0.1)


def retried_transactions(replica):
    """Slave_retried_transactions since the replica started (the counter restarts with it)."""
    return int(fetch(replica, "SHOW GLOBAL STATUS LIKE 'Slave_retried_transactions'")[0][1])


class KillPoint:
    """The replica's state right after a restart, before START SLAVE: its gtid_slave_pos
    and the markers it holds (and how far the primary was at the kill). Checked once the
    ledger knows every committed GTID."""

    def __init__(self, label, db, pos, markers, primary_pos):
        self.label, self.db, self.pos, self.markers, self.primary_pos = label, db, pos, markers, primary_pos

    def __str__(self):
        return "%s (primary at %d)" % (self.pos, gtid_seq(self.primary_pos))

    def check(self, ledger):
        seq = gtid_seq(self.pos)
        expected = {txn for txn, (db, s) in ledger.items() if db == self.db and s <= seq}
        ahead = sorted(self.markers - expected)
        behind = sorted(expected - self.markers)
        problems = []

        def some(txns):
            return ", ".join("txn %d (GTID seq %s)" % (t, ledger.get(t, (0, "?"))[1]) for t in txns[:5])

        if ahead:
            problems.append("%s: gtid_slave_pos is %s but the replica holds %d transactions after it: %s; the "
                            "position lags the data, replaying them would fail with 1062"
                            % (self.label, self.pos, len(ahead), some(ahead)))
        if behind:
            problems.append("%s: gtid_slave_pos is %s but %d transactions up to it are missing on the replica: %s; "
                            "the position ran ahead of the data" % (self.label, self.pos, len(behind), some(behind)))
        return problems


def kill_replica(primary, replica, db, label, parallel):
    """SIGKILLs the replica, restarts it, records its state before START SLAVE, starts it
    again; returns the KillPoint and the seconds the restart took."""
    primary_pos = fetch(primary, "SELECT @@gtid_binlog_pos")[0][0]
    replica.kill()
    t0 = time.time()
    replica.start()
    restart = time.time() - t0
    pos = fetch(replica, "SELECT @@gtid_slave_pos")[0][0]
    markers = {r[0] for r in fetch(replica, "SELECT txn FROM %s.marker" % db)}
    conn = replica.connect()
    cur = conn.cursor()
    if parallel:
        cur.execute("SET GLOBAL slave_parallel_threads = %d" % PARALLEL_THREADS)
        cur.execute("SET GLOBAL slave_parallel_mode = 'optimistic'")
    cur.execute("START SLAVE")
    conn.close()
    return KillPoint(label, db, pos, markers, primary_pos), restart


# --- comparison ------------------------------------------------------------------------------

AUTO_INCREMENT = re.compile(r" AUTO_INCREMENT=\d+")


def compare(primary, replica, db, only=None):
    """Compares the database (or its table `only`) on both servers; returns (problems, rows
    compared)."""
    problems = []
    tables = [r[0] for r in fetch(primary, "SHOW TABLES IN %s" % db)]
    replica_tables = [r[0] for r in fetch(replica, "SHOW TABLES IN %s" % db)]
    if tables != replica_tables:
        problems.append("%s: tables on the primary %s, on the replica %s" % (db, tables, replica_tables))
    if only is not None:
        tables = [only]
    rows_compared = 0
    for table in tables:
        name = "%s.%s" % (db, table)
        create = [AUTO_INCREMENT.sub("", fetch(s, "SHOW CREATE TABLE " + name)[0][1]) for s in (primary, replica)]
        if create[0] != create[1]:
            problems.append("%s: SHOW CREATE TABLE differs:\n  primary: %s\n  replica: %s"
                            % (name, create[0], create[1]))
        sums = [fetch(s, "CHECKSUM TABLE " + name)[0][1] for s in (primary, replica)]
        rows = [fetch(s, "SELECT * FROM %s ORDER BY 1" % name) for s in (primary, replica)]
        rows_compared += len(rows[0])
        if sums[0] != sums[1] or rows[0] != rows[1]:
            problems.append("%s: CHECKSUM TABLE primary %s, replica %s; %d rows on the primary, %d on the replica; "
                            "first differences:\n%s" % (name, sums[0], sums[1], len(rows[0]), len(rows[1]),
                                                        row_differences(rows[0], rows[1])))
        for s, side in ((primary, "primary"), (replica, "replica")):
            for r in fetch(s, "CHECK TABLE " + name):
                if r[2] in ("error", "Error") or (r[2] == "status" and r[3] != "OK"):
                    problems.append("CHECK TABLE %s on the %s: %s %s" % (name, side, r[2], r[3]))
    return problems, rows_compared


def shorten(row):
    return tuple(v[:24] + b"..." if isinstance(v, bytes) and len(v) > 24 else
                 v[:40] + "..." if isinstance(v, str) and len(v) > 40 else v for v in row)


def row_differences(primary_rows, replica_rows, limit=5):
    p = {r[0]: r for r in primary_rows}
    r = {row[0]: row for row in replica_rows}
    out = []
    for key in sorted(set(p) | set(r)):
        if p.get(key) == r.get(key):
            continue
        if key not in r:
            out.append("    key %r only on the primary: %r" % (key, shorten(p[key])))
        elif key not in p:
            out.append("    key %r only on the replica: %r" % (key, shorten(r[key])))
        else:
            out.append("    key %r primary %r\n    %s replica %r" % (key, shorten(p[key]), " " * len(repr(key)),
                                                                    shorten(r[key])))
        if len(out) >= limit:
            break
    return "\n".join(out)


# --- per-format checks -----------------------------------------------------------------------

def setup(primary, db, fmt):
    conn = primary.connect()
    cur = conn.cursor()
    # Rows under STATEMENT too: TidesDB refuses statement logging of its changes (1665).
    cur.execute("SET SESSION binlog_format = " + ("ROW" if fmt == "STATEMENT" else fmt))
    for sql in schema(db):
        cur.execute(sql)
    cur.execute("INSERT INTO %s.accounts (id, email, balance, ops, grp, note) VALUES " % db
                + ", ".join("(%d, 'a%d@example.org', 1000, 0, %d, '')" % (i, i, i % 8) for i in range(ACCOUNTS)))
    cur.execute("INSERT INTO %s.kv (k, v, txt) VALUES " % db
                + ", ".join("(%d, %d, 'init')" % (k, k * 7 % 1000) for k in range(0, KV_KEYS, 2)))
    cur.execute("INSERT INTO %s.probe (id, grp, qty) VALUES (1, 7, 0)" % db)
    conn.close()


def snapshot_probe(primary, db, fmt, level):
    """The fixed interleaving described at the top (table probe), its first transaction at
    `level`: an UPDATE by secondary key after a concurrent insert into that key value
    committed. Returns the primary's rows and how the transaction ended (a conflict, 1213,
    is a correct answer too)."""
    a, b = primary.connect(autocommit=False), primary.connect()
    ca, cb = a.cursor(), b.cursor()
    ca.execute("SET SESSION binlog_format = " + fmt)
    cb.execute("SET SESSION binlog_format = " + fmt)
    ca.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + level)
    ca.execute("BEGIN")
    ca.execute("SELECT COUNT(*) FROM %s.probe" % db)
    cb.execute("INSERT INTO %s.probe (id, grp, qty) VALUES (2, 7, 0)" % db)
    try:
        ca.execute("UPDATE %s.probe SET qty = qty + 1 WHERE grp = 7" % db)
        ca.execute("COMMIT")
        ended = "committed"
    except pymysql.err.MySQLError as e:
        if e.args[0] not in RETRYABLE:
            raise
        a.rollback()
        ended = "rolled back (%s)" % e.args[0]
    a.close()
    b.close()
    return fetch(primary, "SELECT id, qty FROM %s.probe ORDER BY id" % db), ended


def statement_levels(primary, db):
    """The isolation levels at which TidesDB logs statements; at the others it must refuse
    (1665) and write nothing. READ COMMITTED must refuse. Returns (levels, problems)."""
    levels, problems = [], []
    for level in ("READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"):
        conn = primary.connect(autocommit=False)
        cur = conn.cursor()
        cur.execute("SET SESSION binlog_format = STATEMENT")
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + level)
        try:
            cur.execute("INSERT INTO %s.kv (k, v, txt) VALUES (%d, 1, 'probe')" % (db, KV_KEYS + 1))
            levels.append(level)
        except pymysql.err.MySQLError as e:
            if e.args[0] != ER_BINLOG_STMT_MODE_AND_ROW_ENGINE:
                problems.append("STATEMENT at %s: expected success or error 1665, got %s" % (level, e))
        conn.rollback()
        conn.close()
    for level in levels:
        problems.append("STATEMENT at %s: expected error 1665 (TidesDB logs no statements), the INSERT "
                        "succeeded" % level)
    if fetch(primary, "SELECT COUNT(*) FROM %s.kv WHERE k = %d" % (db, KV_KEYS + 1))[0][0]:
        problems.append("STATEMENT: a refused or rolled-back INSERT left its row")
    return levels, problems


def binlog_event_counts(primary, first_file):
    """Counts, in the binlog files from first_file on, row events and DML statements."""
    files = [r[0] for r in fetch(primary, "SHOW BINARY LOGS")]
    counts = collections.Counter()
    for name in files[files.index(first_file):]:
        # Bytes: a statement's Info holds the BLOB literals it wrote.
        for r in fetch(primary, "SHOW BINLOG EVENTS IN %s", (name,), use_unicode=False):
            kind, info = r[2].decode(), (r[5] or b"").decode("utf-8", "replace")
            if kind.endswith("_rows_v1") or kind.endswith("_rows"):
                counts["row events"] += 1
            elif kind == "Query" and re.match(r"(use `[^`]*`; )?(INSERT|UPDATE|DELETE|REPLACE)", info):
                counts["DML statements"] += 1
    return counts


def format_problems(fmt, counts):
    rows, stmts = counts["row events"], counts["DML statements"]
    if fmt == "ROW" and (stmts or not rows) or fmt == "STATEMENT" and (rows or not stmts) \
            or fmt == "MIXED" and (stmts or not rows):
        return ["binlog format %s not in effect: %d row events, %d DML statements" % (fmt, rows, stmts)]
    return []


def run_format(fmt, primary, replica, args, work, rng, totals, problems):
    """The three phases for one binlog format; appends what it finds to problems and stops
    at the first phase that found something (unless --keep-going)."""
    db = "repl_" + fmt.lower()
    conn = primary.connect()
    cur = conn.cursor()
    cur.execute("SET GLOBAL binlog_format = " + fmt)
    cur.execute("FLUSH BINARY LOGS")
    cur.execute("SHOW MASTER STATUS")
    first_binlog = cur.fetchone()[0]
    conn.close()
    setup(primary, db, fmt)
    found_before = len(problems)

    def fail(phase, found):
        label = "phase %d" % phase if isinstance(phase, int) else phase
        problems.extend("%s %s: %s" % (fmt, label, p) for p in found)

    def stop_here():
        return len(problems) > found_before and not args.keep_going

    def load(phase, seconds, **kw):
        mark = len(work.problems)
        n = run_writers(primary, work, db, fmt, phase, args, levels, seconds, **kw)
        fail(phase, work.problems[mark:])
        return n

    def compare_now(phase):
        found, n = compare(primary, replica, db)
        fail(phase, found)
        return n

    def check_kills(phase, points):
        # Every writer has stopped, so the ledger knows the GTID of each committed transaction.
        found = [p for point in points for p in point.check(work.ledger)]
        fail(phase, found)
        return "matching the data" if not found else "NOT matching the data"

    # The writers' isolation levels: REPEATABLE READ and READ COMMITTED; for STATEMENT the
    # weakest level it is accepted at (REPEATABLE READ, or SERIALIZABLE should the engine
    # refuse statements at REPEATABLE READ too).
    levels = args.isolation or ["REPEATABLE READ", "READ COMMITTED"]
    probe_level = "REPEATABLE READ"
    if fmt == "STATEMENT":
        accepted, found = statement_levels(primary, db)
        fail("setup", found)
        print("STATEMENT: accepted at %s, refused (1665) at the others" % (" and ".join(accepted) or "no level"),
              flush=True)
        usable = [level for level in accepted if level != "READ COMMITTED"]
        if not usable:
            return
        probe_level = usable[0]
        levels = args.isolation or [probe_level]
    probe, ended = snapshot_probe(primary, db, fmt, probe_level)
    wait_caught_up(primary, replica, args.catch_up)
    found, _ = compare(primary, replica, db, only="probe")
    fail("probe", found)
    print("%s: probe (a %s snapshot, then UPDATE ... WHERE grp = 7 after a concurrent insert into grp 7 "
          "committed; %s) left (id, qty) %s on the primary, %s on the replica" % (
              fmt, probe_level, ended, probe,
              "the same" if not found else fetch(replica, "SELECT id, qty FROM %s.probe ORDER BY id" % db)),
          flush=True)
    if stop_here():
        return

    # 1. Serial replica.
    n = load(1, args.run)
    lag = wait_caught_up(primary, replica, args.catch_up)
    rows = compare_now(1)
    print("%s phase 1 (serial replica): %d transactions in %.0f s; caught up %.1f s later; %d rows compared"
          % (fmt, n, args.run, lag, rows), flush=True)
    if stop_here():
        return

    # 2. SIGKILL the replica mid-stream, restart, continue.
    kills, restarts = [], []

    def kill_rounds():
        for k in range(1, args.kills + 1):
            time.sleep(rng.uniform(1.0, 3.0))
            check_replica_running(replica)
            point, took = kill_replica(primary, replica, db, "%s kill %d" % (fmt, k), parallel=False)
            kills.append(point)
            restarts.append(took)
            totals["kills"] += 1
        time.sleep(1.5)

    n = load(2, 0, during=kill_rounds)
    verdict = check_kills(2, kills)
    lag = wait_caught_up(primary, replica, args.catch_up)
    rows = compare_now(2)
    print("%s phase 2 (replica SIGKILLed %d times mid-stream): %d transactions; restarts took %s s; gtid_slave_pos "
          "at the restarts %s, %s; caught up %.1f s after the load; %d rows compared"
          % (fmt, args.kills, n, "/".join("%.1f" % t for t in restarts) or "-", ", ".join(map(str, kills)) or "-",
             verdict, lag, rows),
          flush=True)
    if stop_here():
        return

    # 3. Parallel replica (optimistic) applying a backlog of conflicting transactions.
    conn = replica.connect()
    cur = conn.cursor()
    cur.execute("STOP SLAVE")
    cur.execute("SET GLOBAL slave_parallel_threads = %d" % PARALLEL_THREADS)
    cur.execute("SET GLOBAL slave_parallel_mode = 'optimistic'")
    cur.execute("START SLAVE IO_THREAD")
    conn.close()
    retries_before = retried_transactions(replica)
    n = load(3, args.parallel_run, hot=True)
    wait_caught_up(primary, replica, args.catch_up, io_only=True)
    first = gtid_seq(fetch(replica, "SELECT @@gtid_slave_pos")[0][0]) + 1
    last = gtid_seq(fetch(primary, "SELECT @@gtid_binlog_pos")[0][0])
    t0 = time.time()
    fetch(replica, "START SLAVE SQL_THREAD")
    retried = 0
    kills = []
    for k in range(1, args.parallel_kills + 1):
        time.sleep(rng.uniform(0.3, 1.2))
        # The counter starts again with the server: add up what each run of it counted.
        retried += retried_transactions(replica) - retries_before
        retries_before = 0
        point, took = kill_replica(primary, replica, db, "%s parallel kill %d" % (fmt, k), parallel=True)
        kills.append(point)
        totals["kills"] += 1
    verdict = check_kills(3, kills)
    wait_caught_up(primary, replica, args.catch_up)
    applied = time.time() - t0
    retried += retried_transactions(replica) - retries_before
    totals["replica retries"] += retried
    rows = compare_now(3)
    print("%s phase 3 (parallel replica, %d threads, optimistic): %d transactions on hot rows; the backlog (GTIDs "
          "%d-%d) applied in %.1f s, SIGKILLed at %s (%s); %d transactions retried on the replica; %d rows compared"
          % (fmt, PARALLEL_THREADS, n, first, last, applied, ", ".join(map(str, kills)) or "-", verdict, retried,
             rows),
          flush=True)
    conn = replica.connect()
    cur = conn.cursor()
    cur.execute("STOP SLAVE")
    cur.execute("SET GLOBAL slave_parallel_threads = 0")
    cur.execute("START SLAVE")
    conn.close()

    counts = binlog_event_counts(primary, first_binlog)
    fail("binlog", format_problems(fmt, counts))
    print("%s: the binlog holds %d row events and %d DML statements" % (fmt, counts["row events"],
                                                                       counts["DML statements"]), flush=True)


# --- driver ----------------------------------------------------------------------------------

def gtid_pos_tables(replica):
    """(name, engine, rows) of the replica's mysql.gtid_slave_pos tables."""
    tables = fetch(replica, "SELECT table_name, engine FROM information_schema.tables "
                            "WHERE table_schema = 'mysql' AND table_name LIKE 'gtid\\_slave\\_pos%%'")
    return [(name, engine, fetch(replica, "SELECT COUNT(*) FROM mysql.`%s`" % name)[0][0]) for name, engine in tables]


def error_lines(server):
    try:
        with open(server.errlog, errors="replace") as f:
            return [line.rstrip() for line in f if "[ERROR]" in line]
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="seed (default: from the clock)")
    ap.add_argument("--format", choices=FORMATS, action="append", help="binlog format to run (repeatable; "
                    "default all three)")
    ap.add_argument("--threads", type=int, default=4, help="writer connections on the primary (default 4)")
    ap.add_argument("--run", type=float, default=6, help="seconds of load in phase 1 (default 6)")
    ap.add_argument("--kills", type=int, default=2, help="replica SIGKILLs in phase 2 (default 2)")
    ap.add_argument("--parallel-run", type=float, default=5, help="seconds of hot-row load in phase 3 (default 5)")
    ap.add_argument("--parallel-kills", type=int, default=1, help="replica SIGKILLs while phase 3's backlog "
                    "is applied in parallel (default 1)")
    ap.add_argument("--isolation", action="append", choices=("READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"),
                    help="the writers' isolation levels, taken in turn (repeatable; default REPEATABLE READ and READ "
                         "COMMITTED, for STATEMENT REPEATABLE READ only)")
    ap.add_argument("--gtid-pos-engine", choices=("TidesDB", "InnoDB"), default="TidesDB",
                    help="engine of the replica's mysql.gtid_slave_pos (default TidesDB)")
    ap.add_argument("--replica-binlog", action="store_true",
                    help="the replica writes its own binlog too (--log-bin --log-slave-updates): it commits with "
                         "two-phase commit against it")
    ap.add_argument("--replica-arg", action="append", default=[], metavar="ARG",
                    help="one more mariadbd argument for the replica (repeatable), e.g. "
                         "--replica-arg=--tidesdb-pessimistic-locking=ON")
    ap.add_argument("--catch-up", type=float, default=120, help="most seconds to wait for the replica (default 120)")
    ap.add_argument("--keep-going", action="store_true", help="run the later phases after a difference")
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--keep", action="store_true", help="keep the servers' directories")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
    formats = args.format or list(FORMATS)
    print("replication_test: seed %d (replay with --seed %d; the kill moments vary with timing)"
          % (args.seed, args.seed), flush=True)
    rng = random.Random(args.seed)
    started = time.time()
    work = Workload()
    totals = collections.Counter()
    problems = []
    # Most BLOB and TEXT values off their rows on both servers (the replica's applier
    # writes them as its statements do).
    off_row = "--tidesdb-off-row-blob-size=16"
    replica_args = ["--server-id=2", "--skip-slave-start", "--relay-log=relay-bin", off_row]
    if args.gtid_pos_engine == "TidesDB":
        replica_args.append("--gtid-pos-auto-engines=TidesDB")
    if args.replica_binlog:
        replica_args += ["--log-bin=binlog", "--log-slave-updates", "--sync-binlog=1"]
    replica_args += args.replica_arg
    try:
        primary = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=not args.verbose, extra_args=[
            "--log-bin=binlog", "--server-id=1", "--sync-binlog=1", "--binlog-format=ROW", off_row])
        replica = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=not args.verbose, extra_args=replica_args)
    except ServerError as e:
        print("replication_test: FAIL: %s" % e)
        return 2
    with primary, replica:
        print("replication_test: plugin %s; formats %s; mysql.gtid_slave_pos on %s%s" % (
            primary.plugin_info, "/".join(formats), args.gtid_pos_engine,
            "; the replica logs its updates" if args.replica_binlog else ""), flush=True)
        try:
            primary.start()
            replica.start()
            # The replica connects as root over TCP: check that this works before relying on it.
            user = fetch(primary, "SELECT CURRENT_USER()", tcp=True)[0][0]
            fetch(replica, "CHANGE MASTER TO master_host = '127.0.0.1', master_port = %d, master_user = 'root', "
                           "master_use_gtid = slave_pos" % primary.port)
            fetch(replica, "START SLAVE")
            if args.verbose:
                print("  the replica connects to 127.0.0.1:%d as %s" % (primary.port, user), flush=True)
            for fmt in formats:
                run_format(fmt, primary, replica, args, work, rng, totals, problems)
                if problems and not args.keep_going:
                    break
            tables = gtid_pos_tables(replica)
            print("replica's gtid_slave_pos tables: %s" % ", ".join("%s (%s, %d rows)" % t for t in tables),
                  flush=True)
            if args.gtid_pos_engine == "TidesDB" and not any(t[1] == "TidesDB" for t in tables):
                problems.append("no TidesDB gtid_slave_pos table on the replica: %r" % (tables,))
        except ReplicaStopped as e:
            problems.append(str(e))
        except (ServerError, pymysql.err.MySQLError) as e:
            problems.append("%s: %s" % (type(e).__name__, e))
        servers = ((replica, "replica"), (primary, "primary"))
        for server, name in servers:
            status = server.exited_on_its_own()
            if status is not None:
                problems.append("the %s died on its own (status %s)" % (name, status))
        if not problems:
            for server, name in servers:
                status = server.stop()
                if status != 0:
                    problems.append("the %s's clean shutdown: exit status %s" % (name, status))
        if problems:
            for p in problems:
                print("  PROBLEM: " + p, flush=True)
            for server, name in servers:
                server.mark_failed()
                print("--- %s error log (%s), last lines ---\n%s" % (name, server.errlog,
                                                                    server.log_tail(25, since_start=False)))
                # The directories are kept for a look; a SIGKILL does not wait for stuck
                # replication threads.
                server.kill()
        elif args.verbose:
            for server, name in servers:
                for line in error_lines(server):
                    print("  %s error log: %s" % (name, line))
    ok = not problems
    print("replication_test: %s seed=%d formats=%s transactions=%d primary-retries=%d replica-retries=%d kills=%d "
          "problems=%d in %.0f s" % ("PASS" if ok else "FAIL", args.seed, "/".join(formats), work.stats["committed"],
                                     work.stats["retried on the primary"], totals["replica retries"], totals["kills"],
                                     len(problems), time.time() - started), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
