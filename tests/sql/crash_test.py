#!/usr/bin/python3
"""SQL-level crash test: concurrent transactions, SIGKILL at random moments, then checks.

A private server runs with the durable settings (tidesdb_unified_memtable_sync_mode=FULL,
tidesdb_default_sync_mode=FULL) and a small write buffer, so memtables are flushed during a
round. Writer threads (pymysql connections; optimistic and pessimistic locking, REPEATABLE
READ and READ COMMITTED) run
transactions over five TidesDB tables and record each one in a ledger kept by this process:
what it wrote, and whether its COMMIT was acknowledged. A transaction:

  * appends 1-4 rows (now and then 20-200) to `events` (primary key (txn, seq), every row carrying the txn id and
    a unique tag) and sometimes deletes all rows of an older transaction of the same thread;
  * bumps the version of 0-3 keys: reads kver.ver FOR UPDATE, then puts (REPLACE / INSERT
    ... ON DUPLICATE KEY UPDATE) or deletes the key's row in `kv` with version ver+1, and
    sets kver to ver+1 and its own txn id (kv.val is a TEXT the writers store off the row:
    tidesdb_off_row_blob_size = 0);
  * adds a delta to one row of `counters` (total, cnt);
  * inserts its `marker` row last, then commits.

Deadlocks and lock timeouts (1213, 1205) roll back and retry under a new txn id. After a
number of seconds the server is SIGKILLed; it is restarted and the checks run:

  * an acknowledged transaction is present: its marker, its events (unless deleted by a
    later committed transaction), its kv versions; a transaction whose COMMIT got no answer
    is present entirely or not at all, decided by its marker; nothing else is present;
  * per key the committed versions are 1..V without gaps or repeats (a repeat is a lost
    update), kver holds V and its writer, and kv holds what version V wrote;
  * counters equal the sums of the committed deltas;
  * every secondary index has exactly the rows of its table (COUNT(*) and contents through
    FORCE INDEX against the primary key), point lookups through each index find the rows,
    and CHECK TABLE says OK.

The last round ends with a clean shutdown and one more check.

With --binlog FORMAT the server also writes the binary log (sync_binlog=1, so TidesDB
commits with two-phase commit against it), and each check also reads the binlog with
mariadb-binlog: the transactions whose event groups are complete there (ended by their Xid
event) must be exactly the committed ones (the marker rows). Recovery has to commit what
the binlog has and roll back what it lacks.

    tests/sql/crash_test.py                      # 5 rounds, random seed, about 90 s
    tests/sql/crash_test.py --seed 7 --rounds 3 --threads 4
    tests/sql/crash_test.py --binlog ROW --rounds 20 --threads 8 --think 0 --max-run 5
"""

import argparse
import collections
import itertools
import os
import random
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, PrivateServer, ServerError  # noqa: E402

KEYS = 200  # kv / kver keys
COUNTERS = 10
RETRYABLE = (1213, 1205, 1020)

SCHEMA = [
    "CREATE DATABASE crash",
    "CREATE TABLE crash.marker (txn BIGINT PRIMARY KEY, thread INT NOT NULL, round INT NOT NULL, "
    "nevents INT NOT NULL, nkv INT NOT NULL, tag VARCHAR(40) NOT NULL, UNIQUE KEY tag (tag), "
    "KEY thread (thread, txn)) ENGINE=TidesDB",
    "CREATE TABLE crash.events (txn BIGINT NOT NULL, seq INT NOT NULL, thread INT NOT NULL, "
    "tag VARCHAR(40) NOT NULL, payload VARCHAR(255) NOT NULL, amount INT NOT NULL, PRIMARY KEY (txn, seq), "
    "UNIQUE KEY tag (tag), KEY thread (thread, txn), KEY amount (amount)) ENGINE=TidesDB",
    "CREATE TABLE crash.kv (k INT PRIMARY KEY, ver BIGINT NOT NULL, txn BIGINT NOT NULL, "
    "val TEXT NOT NULL, KEY txn (txn), KEY val (val(8)), KEY ver (ver)) ENGINE=TidesDB",
    "CREATE TABLE crash.kver (k INT PRIMARY KEY, ver BIGINT NOT NULL, last_txn BIGINT NOT NULL, "
    "KEY last_txn (last_txn)) ENGINE=TidesDB",
    "CREATE TABLE crash.counters (id INT PRIMARY KEY, total BIGINT NOT NULL, cnt BIGINT NOT NULL, "
    "KEY cnt (cnt)) ENGINE=TidesDB",
]

# table -> (primary key columns, {secondary index: its columns})
INDEXES = {
    "marker": (["txn"], {"tag": ["tag"], "thread": ["thread", "txn"]}),
    "events": (["txn", "seq"], {"tag": ["tag"], "thread": ["thread", "txn"], "amount": ["amount"]}),
    "kv": (["k"], {"txn": ["txn"], "val": ["val"], "ver": ["ver"]}),
    "kver": (["k"], {"last_txn": ["last_txn"]}),
    "counters": (["id"], {"cnt": ["cnt"]}),
}


class Txn:
    __slots__ = ("id", "thread", "round", "events", "victim", "kv", "counter", "state")

    def __init__(self, txn_id, thread, round_no):
        self.id = txn_id
        self.thread = thread
        self.round = round_no
        self.events = []  # (seq, tag, payload, amount)
        self.victim = None  # txn id whose events this one deletes
        self.kv = []  # (k, version, "put"/"del", val)
        self.counter = None  # (id, delta)
        # writing -> (aborted | commit-sent) -> (committed | ambiguous) -> (committed | absent)
        self.state = "writing"

    def tag(self):
        return "m-%d" % self.id


class Anomaly(Exception):
    """An answer the engine must not give (e.g. an UPDATE by primary key that finds no row
    the transaction has just read)."""


class Writer(threading.Thread):
    def __init__(self, no, server, ledger, ids, seed, round_no, stats, anomalies, history, think):
        super().__init__(daemon=True)
        self.think = think
        # Threads 0..3: optimistic / pessimistic locking, each at REPEATABLE READ and READ COMMITTED.
        self.pessimistic = no % 2 == 1
        self.isolation = "READ COMMITTED" if no % 4 >= 2 else "REPEATABLE READ"
        self.no = no
        self.server = server
        self.ledger = ledger
        self.ids = ids
        self.rng = random.Random("%d-%d-%d" % (seed, round_no, no))
        self.round = round_no
        self.stats = stats
        self.anomalies = anomalies
        self.history = history  # this thread's committed txns whose events still exist
        self.stop = False

    def run(self):
        try:
            conn = self.server.connect(read_timeout=60, write_timeout=60, autocommit=False)
            cur = conn.cursor()
            cur.execute("SET SESSION tidesdb_pessimistic_locking = %s" % ("ON" if self.pessimistic else "OFF"))
            cur.execute("SET SESSION tidesdb_lock_wait_timeout = 5")
            # kv.val is TEXT: every value off its row, written and deleted with it.
            cur.execute("SET SESSION tidesdb_off_row_blob_size = 0")
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + self.isolation)
            conn.commit()
        except pymysql.err.MySQLError:
            return
        while not self.stop:
            if self.think:
                time.sleep(self.think)
            txn = Txn(next(self.ids), self.no, self.round)
            self.ledger.append(txn)
            try:
                self.transaction(cur, txn)
            except pymysql.err.MySQLError as e:
                code = e.args[0] if e.args and isinstance(e.args[0], int) else -1
                if code in RETRYABLE:
                    txn.state = "aborted"
                    self.stats["retry %d" % code] += 1
                    if self.skewed:
                        self.stats["read-committed skew, then rolled back"] += 1
                    try:
                        conn.rollback()
                    except pymysql.err.MySQLError:
                        return
                    continue
                # The connection is gone (the server was killed): the COMMIT, if it was sent,
                # may or may not have happened.
                if txn.state == "commit-sent":
                    txn.state = "ambiguous"
                else:
                    txn.state = "aborted"
                if code < 2000:
                    self.anomalies.append("thread %d txn %d: unexpected error %s" % (self.no, txn.id, e))
                return
            except Anomaly as e:
                txn.state = "aborted"
                self.anomalies.append("thread %d txn %d: %s" % (self.no, txn.id, e))
                try:
                    conn.rollback()
                except pymysql.err.MySQLError:
                    return
            except Exception:  # a socket error pymysql did not wrap: the server is gone
                txn.state = "ambiguous" if txn.state == "commit-sent" else "aborted"
                return

    def unexpected(self, txn, what):
        """An answer that contradicts the transaction's earlier reads. With optimistic locking at
        READ COMMITTED each statement reads the newest commit and FOR UPDATE takes no lock, so
        another commit may come between two statements; the transaction must then fail at
        COMMIT (its FOR UPDATE reads are validated). Anywhere else it is an anomaly."""
        if self.pessimistic or self.isolation != "READ COMMITTED":
            raise Anomaly(what)
        self.skewed = what

    def expect(self, cur, txn, sql, args, affected):
        n = cur.execute(sql, args)
        if affected is not None and n != affected:
            self.unexpected(txn, "%s %s: %d rows affected, expected %d" % (sql, args, n, affected))
        return n

    def transaction(self, cur, txn):
        rng = self.rng
        self.skewed = None
        cur.execute("BEGIN")
        # Now and then a large transaction: a WAL record of tens of kilobytes.
        for seq in range(rng.randint(1, 4) if rng.random() > 0.03 else rng.randint(20, 200)):
            txn.events.append((seq, "e-%d-%d" % (txn.id, seq), "p%d-" % txn.id + "x" * rng.randint(0, 200),
                               rng.randint(-1000, 1000)))
        self.expect(cur, txn, "INSERT INTO crash.events (txn, seq, thread, tag, payload, amount) VALUES "
                    + ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(txn.events)),
                    [v for seq, tag, payload, amount in txn.events for v in (txn.id, seq, self.no, tag, payload, amount)],
                    len(txn.events))
        if self.history and rng.random() < 0.25:
            victim = rng.choice(self.history)
            self.expect(cur, txn, "DELETE FROM crash.events WHERE txn = %s", (victim.id,), len(victim.events))
            txn.victim = victim.id
        for k in sorted(rng.sample(range(KEYS), rng.randint(0, 3))):
            cur.execute("SELECT ver, last_txn FROM crash.kver WHERE k = %s FOR UPDATE", (k,))
            rows = cur.fetchall()
            if len(rows) != 1:
                raise Anomaly("kver row %d: %d rows" % (k, len(rows)))
            ver = rows[0][0] + 1
            cur.execute("SELECT ver, txn FROM crash.kv WHERE k = %s FOR UPDATE", (k,))
            present = cur.fetchall()
            if present and present[0][0] != ver - 1:
                self.unexpected(txn, "kv row %d has version %d, kver says %d" % (k, present[0][0], ver - 1))
            if present and rng.random() < 0.3:
                self.expect(cur, txn, "DELETE FROM crash.kv WHERE k = %s", (k,), 1)
                txn.kv.append((k, ver, "del", None))
            else:
                val = "v%d-%d-" % (txn.id, ver) + "y" * rng.randint(0, 60)
                if rng.random() < 0.5:
                    cur.execute("REPLACE INTO crash.kv (k, ver, txn, val) VALUES (%s, %s, %s, %s)",
                                (k, ver, txn.id, val))
                else:
                    self.expect(cur, txn, "INSERT INTO crash.kv (k, ver, txn, val) VALUES (%s, %s, %s, %s) ON DUPLICATE "
                                "KEY UPDATE ver = VALUES(ver), txn = VALUES(txn), val = VALUES(val)",
                                (k, ver, txn.id, val), 2 if present else 1)
                txn.kv.append((k, ver, "put", val))
            self.expect(cur, txn, "UPDATE crash.kver SET ver = %s, last_txn = %s WHERE k = %s", (ver, txn.id, k), 1)
        c, d = rng.randrange(COUNTERS), rng.randint(-50, 100)
        self.expect(cur, txn, "UPDATE crash.counters SET total = total + %s, cnt = cnt + 1 WHERE id = %s", (d, c), 1)
        txn.counter = (c, d)
        self.expect(cur, txn, "INSERT INTO crash.marker (txn, thread, round, nevents, nkv, tag) VALUES "
                    "(%s, %s, %s, %s, %s, %s)", (txn.id, self.no, self.round, len(txn.events), len(txn.kv), txn.tag()), 1)
        txn.state = "commit-sent"
        cur.execute("COMMIT")
        txn.state = "committed"
        if self.skewed:
            self.anomalies.append("thread %d txn %d committed although it read data changed before COMMIT "
                                  "(%s): its FOR UPDATE reads were not validated" % (self.no, txn.id, self.skewed))
            self.stop = True
        self.stats["committed"] += 1
        if txn.victim is not None:
            self.history[:] = [t for t in self.history if t.id != txn.victim]
        self.history.append(txn)


# --- checks ----------------------------------------------------------------------------------

def fetch(cur, sql, args=None):
    cur.execute(sql, args)
    return list(cur.fetchall())


MARKER_STATEMENT = re.compile(r"INSERT INTO crash\.marker \(txn, [^)]*\) VALUES \((\d+),")


def binlog_markers(server):
    """The txn ids whose marker insert is in a complete event group of the binary log (one
    that ends with its Xid event), from every binlog file, in row or statement form."""
    with open(os.path.join(server.datadir, "binlog.index")) as f:
        files = [os.path.join(server.datadir, os.path.basename(line.strip())) for line in f if line.strip()]
    # One file at a time: a kill in the middle of a binlog write leaves that file with a
    # truncated last event, and mariadb-binlog stops at it, which would hide every later
    # file. A group cut off at a file's end has no Xid and is not counted.
    lines = []
    for name in files:
        lines.append("BEGIN")  # a new file starts a new group
        lines += subprocess.run(["mariadb-binlog", "--no-defaults", "--base64-output=decode-rows", "--verbose", name],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace").stdout.splitlines()
    committed, group, row_marker = set(), [], False
    for line in lines:
        if line.startswith("START TRANSACTION") or line.startswith("BEGIN"):
            group, row_marker = [], False
        elif line.startswith("### INSERT INTO `crash`.`marker`"):
            row_marker = True
        elif row_marker and line.startswith("###   @1="):
            group.append(int(line.split("=", 1)[1].split()[0]))
            row_marker = False
        elif re.search(r"\bXid = \d+", line):
            committed.update(group)
            group = []
        else:
            m = MARKER_STATEMENT.search(line)
            if m:
                group.append(int(m.group(1)))
    return committed


def check(server, ledger, round_no, histories, verbose, binlog=False):
    """Resolves the ambiguous transactions and checks everything; returns a list of problems."""
    problems = []
    conn = server.connect(read_timeout=300)
    cur = conn.cursor()
    markers = {r[0]: r for r in fetch(cur, "SELECT txn, thread, round, nevents, nkv, tag FROM crash.marker")}
    if binlog:
        logged = binlog_markers(server)
        for txn_id in sorted(set(markers) - logged)[:20]:
            problems.append("txn %d is committed in TidesDB but not in the binary log" % txn_id)
        for txn_id in sorted(logged - set(markers))[:20]:
            problems.append("txn %d is committed in the binary log but not in TidesDB" % txn_id)
        if verbose:
            print("  binlog: %d committed transactions, TidesDB: %d" % (len(logged), len(markers)), flush=True)
    by_id = {t.id: t for t in ledger}

    # Resolve: a COMMIT without an answer happened iff its marker is there.
    resolved = collections.Counter()
    for t in ledger:
        if t.state in ("ambiguous", "commit-sent"):
            t.state = "committed" if t.id in markers else "absent"
            resolved[t.state] += 1
        elif t.state in ("aborted", "writing"):
            t.state = "absent"
    committed = {t.id: t for t in ledger if t.state == "committed"}

    # Markers.
    for txn_id, row in markers.items():
        t = by_id.get(txn_id)
        if t is None or t.state != "committed":
            problems.append("marker of txn %d present, but the txn %s" % (
                txn_id, "is unknown" if t is None else "never committed (COMMIT not sent / failed)"))
        elif row[1:] != (t.thread, t.round, len(t.events), len(t.kv), t.tag()):
            problems.append("marker of txn %d is %r, expected %r" % (txn_id, row[1:], (
                t.thread, t.round, len(t.events), len(t.kv), t.tag())))
    for t in committed.values():
        if t.id not in markers:
            problems.append("LOST COMMIT: txn %d (thread %d, round %d) was acknowledged; its marker is missing"
                            % (t.id, t.thread, t.round))

    # Events: every committed txn's rows, minus those deleted by a committed txn.
    deleted = {t.victim: t.id for t in committed.values() if t.victim is not None}
    expected = {}
    for t in committed.values():
        if t.id in deleted:
            continue
        for seq, tag, payload, amount in t.events:
            expected[(t.id, seq)] = (t.id, seq, t.thread, tag, payload, amount)
    actual = {(r[0], r[1]): tuple(r) for r in fetch(cur, "SELECT txn, seq, thread, tag, payload, amount FROM crash.events")}
    for key in sorted(set(expected) | set(actual)):
        e, a = expected.get(key), actual.get(key)
        if e == a:
            continue
        t = by_id.get(key[0])
        if a is None:
            problems.append("events row %r of committed txn %d missing" % (key, key[0]))
        elif e is None:
            why = ("deleted by committed txn %d" % deleted[key[0]] if key[0] in deleted
                   else "txn not committed" if t is not None else "unknown txn")
            problems.append("events row %r present, but %s" % (key, why))
        else:
            problems.append("events row %r is %r, expected %r" % (key, a, e))

    # kv / kver: per key, the committed versions are 1..V, kver holds V, kv what V wrote.
    ops = collections.defaultdict(list)
    for t in committed.values():
        for k, ver, op, val in t.kv:
            ops[k].append((ver, t.id, op, val))
    kver = {r[0]: (r[1], r[2]) for r in fetch(cur, "SELECT k, ver, last_txn FROM crash.kver")}
    kv = {r[0]: (r[1], r[2], r[3]) for r in fetch(cur, "SELECT k, ver, txn, val FROM crash.kv")}
    for k in range(KEYS):
        history = sorted(ops.get(k, []))
        versions = [h[0] for h in history]
        if versions != list(range(1, len(versions) + 1)):
            dup = [v for v, n in collections.Counter(versions).items() if n > 1]
            problems.append("key %d: committed versions %s%s" % (
                k, versions[:20], " (LOST UPDATE: version %s written by more than one committed txn)" % dup
                if dup else " (a gap)"))
            continue
        want_ver, want_txn = (history[-1][0], history[-1][1]) if history else (0, 0)
        if kver.get(k) != (want_ver, want_txn):
            problems.append("kver %d is %r, expected %r" % (k, kver.get(k), (want_ver, want_txn)))
        want_kv = None
        if history and history[-1][2] == "put":
            want_kv = (history[-1][0], history[-1][1], history[-1][3])
        if kv.get(k) != want_kv:
            problems.append("kv %d is %r, expected %r" % (k, kv.get(k), want_kv))
    for k in kv:
        if not 0 <= k < KEYS:
            problems.append("kv has unexpected key %d" % k)

    # Counters.
    totals = collections.defaultdict(lambda: [0, 0])
    for t in committed.values():
        c, d = t.counter
        totals[c][0] += d
        totals[c][1] += 1
    for r in fetch(cur, "SELECT id, total, cnt FROM crash.counters"):
        if [r[1], r[2]] != totals[r[0]]:
            problems.append("counter %d is (total %d, cnt %d), expected %r" % (r[0], r[1], r[2], tuple(totals[r[0]])))

    problems += check_indexes(cur)

    # The threads' lists of txns whose events can be deleted: only committed ones.
    for h in histories.values():
        h[:] = [t for t in h if t.state == "committed" and t.id not in deleted]
    conn.close()
    if verbose or resolved:
        print("  round %s check: %d committed txns, %d markers, %d events rows; unanswered COMMITs: %d present, "
              "%d absent" % (round_no, len(committed), len(markers), len(actual), resolved["committed"],
                             resolved["absent"]), flush=True)
    return problems


def check_indexes(cur):
    problems = []
    for table, (pk, secondaries) in INDEXES.items():
        count_pk = fetch(cur, "SELECT COUNT(*) FROM crash.%s FORCE INDEX (PRIMARY)" % table)[0][0]
        for name, cols in secondaries.items():
            covered = cols + [c for c in pk if c not in cols]
            sel = ", ".join(covered)
            count = fetch(cur, "SELECT COUNT(*) FROM crash.%s FORCE INDEX (%s)" % (table, name))[0][0]
            if count != count_pk:
                problems.append("%s: COUNT(*) through index %s is %d, through the primary key %d"
                                % (table, name, count, count_pk))
            via_index = collections.Counter(fetch(cur, "SELECT %s FROM crash.%s FORCE INDEX (%s)" % (sel, table, name)))
            via_pk = collections.Counter(fetch(cur, "SELECT %s FROM crash.%s FORCE INDEX (PRIMARY)" % (sel, table)))
            if via_index != via_pk:
                extra = list((via_index - via_pk).elements())[:5]
                missing = list((via_pk - via_index).elements())[:5]
                problems.append("%s: index %s differs from the table: only in the index %r, missing from it %r"
                                % (table, name, extra, missing))
            # Point lookups through the index find each of a sample of rows.
            rows = list(via_pk.elements())
            for row in random.Random(len(rows)).sample(rows, min(20, len(rows))):
                where = " AND ".join("%s = %%s" % c for c in cols)
                got = fetch(cur, "SELECT %s FROM crash.%s FORCE INDEX (%s) WHERE %s" % (sel, table, name, where),
                            row[:len(cols)])
                if row not in got:
                    problems.append("%s: lookup of %r through index %s does not find the row" % (table, row, name))
                    break
        for r in fetch(cur, "CHECK TABLE crash.%s" % table):
            if r[2] in ("error", "Error") or (r[2] == "status" and r[3] != "OK"):
                problems.append("CHECK TABLE %s: %s %s" % (table, r[2], r[3]))
    return problems


# --- driver ----------------------------------------------------------------------------------

def engine_status(server):
    """The engine's flush / compaction / WAL sync counts since the server started."""
    try:
        conn = server.connect(connect_timeout=2, read_timeout=5)
        cur = conn.cursor()
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Tidesdb_flushes', 'Tidesdb_compactions', "
                    "'Tidesdb_wal_syncs', 'Tidesdb_conflicts')")
        got = ", ".join("%s %s" % (name[len("Tidesdb_"):], value) for name, value in cur.fetchall())
        conn.close()
        return got
    except pymysql.err.MySQLError as e:
        return "engine status unavailable (%s)" % e


def setup(server):
    conn = server.connect()
    cur = conn.cursor()
    for sql in SCHEMA:
        cur.execute(sql)
    cur.execute("INSERT INTO crash.kver (k, ver, last_txn) VALUES " + ", ".join("(%d, 0, 0)" % k for k in range(KEYS)))
    cur.execute("INSERT INTO crash.counters (id, total, cnt) VALUES " + ", ".join("(%d, 0, 0)" % i for i in range(COUNTERS)))
    conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="seed (default: from the clock)")
    ap.add_argument("--rounds", type=int, default=5, help="SIGKILLs (default 5)")
    ap.add_argument("--threads", type=int, default=4, help="writer connections (default 4)")
    ap.add_argument("--min-run", type=float, default=4, help="least seconds of load before a kill (default 4)")
    ap.add_argument("--max-run", type=float, default=14, help="most seconds of load before a kill (default 14)")
    ap.add_argument("--think", type=float, default=2, help="milliseconds each writer waits between "
                    "transactions (default 2; keeps the load modest)")
    ap.add_argument("--write-buffer", default="1M", help="tidesdb_unified_memtable_write_buffer_size (default 1M)")
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--binlog", choices=("ROW", "MIXED"), default=None,
                    help="write the binary log in this format (sync_binlog=1) and check it against the tables")
    ap.add_argument("--keep", action="store_true", help="keep the server's directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
    print("crash_test: seed %d (replay with --seed %d; the kill moments vary with timing)" % (seed, seed), flush=True)
    rng = random.Random(seed)
    started = time.time()
    ledger = []
    ids = itertools.count(1)
    stats = collections.Counter()
    anomalies = []
    problems = []
    histories = {i: [] for i in range(args.threads)}
    try:
        binlog_args = [] if args.binlog is None else [
            "--log-bin=binlog", "--server-id=1", "--sync-binlog=1", "--binlog-format=" + args.binlog]
        server = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=not args.verbose, extra_args=[
            "--tidesdb-unified-memtable-sync-mode=FULL", "--tidesdb-default-sync-mode=FULL",
            "--tidesdb-unified-memtable-write-buffer-size=" + args.write_buffer] + binlog_args)
    except ServerError as e:
        print("crash_test: FAIL: %s" % e)
        return 2
    with server:
        print("crash_test: plugin %s" % server.plugin_info, flush=True)
        try:
            server.start()
            setup(server)
            for round_no in range(1, args.rounds + 1):
                writers = [Writer(i, server, ledger, ids, seed, round_no, stats, anomalies, histories[i],
                                  args.think / 1000.0) for i in range(args.threads)]
                for w in writers:
                    w.start()
                run_for = rng.uniform(args.min_run, args.max_run)
                deadline = time.time() + run_for
                while time.time() < deadline and server.exited_on_its_own() is None:
                    time.sleep(0.05)
                engine = engine_status(server)
                status = server.exited_on_its_own()
                if status is not None:
                    problems.append("round %d: the server died on its own (status %s):\n%s"
                                    % (round_no, status, server.log_tail(30)))
                server.kill()
                for w in writers:
                    w.stop = True
                for w in writers:
                    w.join(120)
                acked = sum(1 for t in ledger if t.round == round_no and t.state == "committed")
                unanswered = sum(1 for t in ledger if t.round == round_no and t.state == "ambiguous")
                print("round %d: killed after %.1f s; %d commits acknowledged, %d COMMITs unanswered; %s"
                      % (round_no, run_for, acked, unanswered, engine), flush=True)
                t0 = time.time()
                server.start()
                recovery = time.time() - t0
                m = re.search(r"Found (\d+) prepared transaction\(s\) in TidesDB", server.log_tail(200))
                if m:
                    stats["prepared at a kill, resolved by recovery"] += int(m.group(1))
                found = check(server, ledger, round_no, histories, args.verbose, args.binlog is not None)
                if args.verbose:
                    print("  restart took %.1f s" % recovery, flush=True)
                for p in found:
                    print("  PROBLEM: " + p, flush=True)
                problems += ["round %d: %s" % (round_no, p) for p in found]
                if found or anomalies:
                    break
            if not problems and not anomalies:
                # A clean shutdown and restart must keep everything too.
                status = server.stop()
                if status != 0:
                    problems.append("clean shutdown: exit status %s:\n%s" % (status, server.log_tail(30)))
                server.start()
                found = check(server, ledger, "final", histories, args.verbose, args.binlog is not None)
                for p in found:
                    print("  PROBLEM (after clean shutdown): " + p, flush=True)
                problems += ["after clean shutdown: %s" % p for p in found]
                server.stop()
        except (ServerError, pymysql.err.MySQLError) as e:
            problems.append("%s: %s" % (type(e).__name__, e))
            if not isinstance(e, ServerError):
                problems.append("server error log:\n" + server.log_tail(30))
        for a in anomalies[:20]:
            print("  ANOMALY: " + a, flush=True)
        if problems or anomalies:
            server.mark_failed()
            for p in problems:
                if "\n" in p:
                    print("  " + p)
    committed = sum(1 for t in ledger if t.state == "committed")
    retries = sum(v for k, v in stats.items() if k.startswith("retry"))
    recovered = stats["prepared at a kill, resolved by recovery"]
    if args.verbose:
        print("retries: %s" % dict(stats))
    ok = not problems and not anomalies
    print("crash_test: %s seed=%d rounds=%d%s committed=%d retried=%d prepared-at-kill=%d anomalies=%d problems=%d in %.0f s"
          % ("PASS" if ok else "FAIL", seed, args.rounds, "" if args.binlog is None else " binlog=" + args.binlog,
             committed, retries, recovered, len(anomalies), len(problems),
             time.time() - started), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
