#!/usr/bin/python3
"""Backups of TidesDB tables taken under a concurrent write load, restored, rolled forward
with the binary log and compared with the primary.

A primary server writes the binary log (--log-bin --server-id=1 --sync-binlog=1
--binlog-format=ROW, a small TidesDB write buffer so memtables are flushed during the run).
The database `shop` holds TidesDB tables with primary, secondary and UNIQUE indexes, TEXT
columns (some values over the value-log threshold), a table without a primary key and a
partitioned table, and one InnoDB table. Writer threads (optimistic and pessimistic
locking, REPEATABLE READ and READ COMMITTED) run multi-statement transactions: transfers
between accounts, orders inserted and deleted, documents rewritten, partitioned events,
audit rows, a `journal` row (InnoDB: two engines and the binlog in one two-phase commit)
and a `txns` row naming the transaction; one thread also runs autocommit statements.
While they run:

  * consistent snapshots (START TRANSACTION WITH CONSISTENT SNAPSHOT): the set of `txns`
    rows each one sees must be exactly the transactions the binary log holds before the
    Binlog_snapshot_file / Binlog_snapshot_position it reports (read with mariadb-binlog),
    and the same set as its `journal` rows;
  * a logical backup: mariadb-dump --single-transaction --master-data=2 --gtid of `shop`;
    its recorded position is checked the same way, and its GTID against the binary log's
    last transaction before that position;
  * a physical backup: scripts/tidesdb-backup.py backup (BACKUP STAGE ... BLOCK_COMMIT, the
    position, the TidesDB checkpoint, mariadb-backup for the rest).

Then the writers stop. The dump is loaded into a fresh server; the physical backup is
restored (scripts/tidesdb-backup.py restore) into a fresh data directory and a server
started on it. Each restored server must hold exactly the transactions before its recorded
position, in both engines; then the primary's binary log from that position is applied to it (mariadb-binlog
--start-position=POS for the dump, =GTID for the physical backup, piped into mariadb), and
every table must equal the primary's: CHECKSUM TABLE, the full contents in primary-key
order, CHECK TABLE.

    tests/sql/backup_test.py                    # random seed
    tests/sql/backup_test.py --seed 5 --threads 6 --load 12 --backups 2
"""

import argparse
import collections
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, REPO, PrivateServer, ServerError  # noqa: E402

BACKUP_TOOL = os.path.join(REPO, "scripts", "tidesdb-backup.py")
ACCOUNTS = 50
DOCS = 40
RETRYABLE = (1213, 1205, 1020)

SCHEMA = [
    "CREATE DATABASE shop",
    "CREATE TABLE shop.accounts (id INT PRIMARY KEY, owner VARCHAR(32) NOT NULL, balance BIGINT NOT NULL, "
    "updates INT NOT NULL, note TEXT, UNIQUE KEY owner (owner), KEY balance (balance)) ENGINE=TidesDB",
    "CREATE TABLE shop.orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, account INT NOT NULL, txn BIGINT NOT NULL, "
    "amount INT NOT NULL, tag VARCHAR(40) NOT NULL, body TEXT NOT NULL, UNIQUE KEY tag (tag), "
    "KEY account (account, id), KEY txn (txn)) ENGINE=TidesDB",
    "CREATE TABLE shop.docs (k INT PRIMARY KEY, ver BIGINT NOT NULL, title VARCHAR(64) NOT NULL, "
    "body MEDIUMTEXT NOT NULL, KEY title (title(10)), KEY ver (ver)) ENGINE=TidesDB",
    "CREATE TABLE shop.events (id BIGINT PRIMARY KEY, thread INT NOT NULL, payload VARCHAR(200) NOT NULL, "
    "KEY thread (thread)) ENGINE=TidesDB PARTITION BY HASH (id) PARTITIONS 3",
    "CREATE TABLE shop.audit (thread INT NOT NULL, txn BIGINT NOT NULL, msg TEXT NOT NULL, KEY thread (thread, txn)) "
    "ENGINE=TidesDB",
    "CREATE TABLE shop.txns (txn BIGINT PRIMARY KEY, thread INT NOT NULL, tag VARCHAR(40) NOT NULL, "
    "statements INT NOT NULL, UNIQUE KEY tag (tag), KEY thread (thread, txn)) ENGINE=TidesDB",
    # InnoDB in the same transactions: the backups must hold both engines at one moment.
    "CREATE TABLE shop.journal (txn BIGINT PRIMARY KEY, thread INT NOT NULL, amount INT NOT NULL) ENGINE=InnoDB",
]

# table -> ORDER BY of its full contents (the primary key, or every column)
ORDER = {"accounts": "id", "orders": "id", "docs": "k", "events": "id", "audit": "thread, txn, msg",
         "txns": "txn", "journal": "txn"}


class Writer(threading.Thread):
    def __init__(self, no, server, seed, stats, errors):
        super().__init__(daemon=True)
        self.no = no
        self.server = server
        self.rng = random.Random("%d-%d" % (seed, no))
        self.stats = stats
        self.errors = errors
        # Threads 0..3: optimistic / pessimistic locking, each at REPEATABLE READ and READ COMMITTED.
        self.pessimistic = no % 2 == 1
        self.isolation = "READ COMMITTED" if no % 4 >= 2 else "REPEATABLE READ"
        self.serial = 0
        self.history = []  # txn ids of this thread whose orders / audit rows may still exist
        self.stop = False

    def run(self):
        try:
            conn = self.server.connect(read_timeout=120, write_timeout=120)
            cur = conn.cursor()
            cur.execute("SET SESSION tidesdb_pessimistic_locking = %s" % ("ON" if self.pessimistic else "OFF"))
            cur.execute("SET SESSION tidesdb_lock_wait_timeout = 5")
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + self.isolation)
        except pymysql.err.MySQLError as e:
            self.errors.append("writer %d: cannot connect: %s" % (self.no, e))
            return
        while not self.stop:
            self.serial += 1
            txn = (self.no + 1) * 1000000 + self.serial
            try:
                if self.no == 0 and self.rng.random() < 0.3:
                    self.autocommit_statement(cur, txn)
                else:
                    self.transaction(cur, txn)
            except pymysql.err.MySQLError as e:
                code = e.args[0] if e.args and isinstance(e.args[0], int) else -1
                try:
                    cur.execute("ROLLBACK")
                except pymysql.err.MySQLError:
                    pass
                if code in RETRYABLE:
                    self.stats["retried %d" % code] += 1
                    continue
                self.errors.append("writer %d txn %d: %s" % (self.no, txn, e))
                return

    def autocommit_statement(self, cur, txn):
        a = self.rng.randrange(ACCOUNTS)
        cur.execute("UPDATE shop.accounts SET note = %s, updates = updates + 1 WHERE id = %s",
                    ("autocommit %d " % txn + "n" * self.rng.randint(0, 300), a))
        self.stats["autocommit statements"] += 1

    def transaction(self, cur, txn):
        rng = self.rng
        statements = 0
        cur.execute("BEGIN")
        a, b = rng.sample(range(ACCOUNTS), 2)
        x = rng.randint(1, 100)
        cur.execute("UPDATE shop.accounts SET balance = balance - %s, updates = updates + 1 WHERE id = %s", (x, a))
        cur.execute("UPDATE shop.accounts SET balance = balance + %s, updates = updates + 1 WHERE id = %s", (x, b))
        statements += 2
        rows = [(rng.randrange(ACCOUNTS), txn, rng.randint(-500, 500), "o-%d-%d" % (txn, i),
                 "order %d/%d " % (txn, i) + "b" * rng.randint(0, 1500)) for i in range(rng.randint(1, 3))]
        cur.executemany("INSERT INTO shop.orders (account, txn, amount, tag, body) VALUES (%s, %s, %s, %s, %s)", rows)
        statements += 1
        if self.history and rng.random() < 0.2:
            old = self.history.pop(rng.randrange(len(self.history)))
            cur.execute("DELETE FROM shop.orders WHERE txn = %s", (old,))
            cur.execute("DELETE FROM shop.audit WHERE thread = %s AND txn = %s", (self.no, old))
            statements += 2
        k = rng.randrange(DOCS)
        body = "doc %d by %d " % (k, txn) + "d" * rng.choice((10, 200, 3000))
        if rng.random() < 0.5:
            cur.execute("INSERT INTO shop.docs (k, ver, title, body) VALUES (%s, 1, %s, %s) ON DUPLICATE KEY UPDATE "
                        "ver = ver + 1, title = VALUES(title), body = VALUES(body)", (k, "t%d-%d" % (k, txn), body))
        else:
            cur.execute("SELECT ver FROM shop.docs WHERE k = %s FOR UPDATE", (k,))
            found = cur.fetchall()
            ver = found[0][0] + 1 if found else 1
            cur.execute("REPLACE INTO shop.docs (k, ver, title, body) VALUES (%s, %s, %s, %s)",
                        (k, ver, "t%d-%d" % (k, txn), body))
        statements += 1
        cur.execute("INSERT INTO shop.events (id, thread, payload) VALUES (%s, %s, %s)",
                    (txn, self.no, "event of %d " % txn + "e" * rng.randint(0, 150)))
        cur.execute("INSERT INTO shop.audit (thread, txn, msg) VALUES (%s, %s, %s)",
                    (self.no, txn, "audit %d " % txn + "m" * rng.randint(0, 80)))
        cur.execute("INSERT INTO shop.journal (txn, thread, amount) VALUES (%s, %s, %s)", (txn, self.no, x))
        cur.execute("INSERT INTO shop.txns (txn, thread, tag, statements) VALUES (%s, %s, %s, %s)",
                    (txn, self.no, "t-%d" % txn, statements + 4))
        cur.execute("COMMIT")
        self.history.append(txn)
        self.stats["committed"] += 1


# --- the binary log ---------------------------------------------------------------------------

def binlog_files(server):
    cur = server.connect().cursor()
    cur.execute("SHOW BINARY LOGS")
    return [row[0] for row in cur.fetchall()]


def binlog_transactions(server, stop_file, stop_position):
    """The txn ids of the `txns` rows in transactions the binary log completes (their Xid
    event) before stop_file:stop_position, and the GTID of the last of those transactions."""
    files = binlog_files(server)
    files = files[:files.index(stop_file) + 1]
    paths = [os.path.join(server.datadir, f) for f in files]
    out = subprocess.run(["mariadb-binlog", "--no-defaults", "-v", "--base64-output=DECODE-ROWS",
                          "--stop-position=%d" % stop_position] + paths,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout.decode("utf-8", "replace")
    txns, pending, last_gtid, gtid = set(), [], None, None
    in_txns = False
    for line in out.splitlines():
        m = re.match(r"#\d{6}\s.*\sGTID (\d+-\d+-\d+)", line)
        if m:
            gtid, pending = m.group(1), []
            continue
        if line.startswith("### INSERT INTO `shop`.`txns`"):
            in_txns = True
            continue
        if re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) ", line):
            in_txns = False
        m = re.match(r"###   @1=(\d+)", line)
        if in_txns and m:
            pending.append(int(m.group(1)))
            continue
        if re.match(r"#\d{6}\s.*\sXid = \d+", line):
            txns.update(pending)
            pending = []
            last_gtid = gtid
    return txns, last_gtid


def roll_forward(primary, restored, start, start_file):
    """Applies the primary's binary log from `start` (an offset in start_file, or a GTID
    list) to the restored server; returns the number of transactions applied."""
    files = binlog_files(primary)
    if start_file is not None:
        files = files[files.index(start_file):]
    paths = [os.path.join(primary.datadir, f) for f in files]
    binlog = subprocess.run(["mariadb-binlog", "--no-defaults", "--start-position=%s" % start] + paths,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout
    applied = len(re.findall(rb"\nCOMMIT/\*!\*/;", binlog))
    load = subprocess.run(["mariadb", "--no-defaults", "--socket=" + restored.socket, "--user=root"], input=binlog,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if load.returncode != 0:
        raise CheckFailed("applying the binary log from %s failed: %s" % (start, load.stderr.decode()[-2000:]))
    return applied


# --- checks -----------------------------------------------------------------------------------

class CheckFailed(Exception):
    pass


def committed_txns(server):
    """The transactions in `txns` (TidesDB); raises if `journal` (InnoDB) holds others."""
    cur = server.connect().cursor()
    cur.execute("SELECT txn FROM shop.txns")
    tidesdb = {row[0] for row in cur.fetchall()}
    cur.execute("SELECT txn FROM shop.journal")
    innodb = {row[0] for row in cur.fetchall()}
    if innodb != tidesdb:
        raise CheckFailed("TidesDB and InnoDB disagree: %d transactions only in txns (%s), %d only in journal (%s)"
                          % (len(tidesdb - innodb), sorted(tidesdb - innodb)[:5], len(innodb - tidesdb),
                             sorted(innodb - tidesdb)[:5]))
    return tidesdb


def compare_sets(what, seen, logged):
    if seen == logged:
        return []
    extra, missing = sorted(seen - logged), sorted(logged - seen)
    return ["%s: %d transactions the binary log has before the position are missing (%s), %d present that it "
            "has only after it (%s)" % (what, len(missing), missing[:8], len(extra), extra[:8])]


def compare_servers(what, primary, restored):
    problems = []
    pcur, rcur = primary.connect().cursor(), restored.connect().cursor()
    for table, order in ORDER.items():
        sums = []
        for cur in (pcur, rcur):
            cur.execute("CHECKSUM TABLE shop.%s" % table)
            sums.append(cur.fetchall()[0][1])
        contents = []
        for cur in (pcur, rcur):
            cur.execute("SELECT * FROM shop.%s ORDER BY %s" % (table, order))
            contents.append(list(cur.fetchall()))
        if sums[0] != sums[1] or contents[0] != contents[1]:
            a, b = set(contents[0]), set(contents[1])
            problems.append("%s: shop.%s differs from the primary: checksum %s vs %s, %d vs %d rows, %d only on the "
                            "primary (e.g. %s), %d only restored (e.g. %s)"
                            % (what, table, sums[0], sums[1], len(contents[0]), len(contents[1]), len(a - b),
                               str(sorted(a - b)[:1])[:200], len(b - a), str(sorted(b - a)[:1])[:200]))
        rcur.execute("CHECK TABLE shop.%s" % table)
        verdict = [row for row in rcur.fetchall() if row[2] in ("error", "status") and row[3] != "OK"]
        if verdict:
            problems.append("%s: CHECK TABLE shop.%s: %s" % (what, table, verdict))
    return problems


def snapshot(server):
    """A consistent snapshot's binlog position and the transactions it sees."""
    conn = server.connect()
    cur = conn.cursor()
    cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
    status = dict(cur.fetchall())
    cur.execute("SELECT txn FROM shop.txns")
    seen = {row[0] for row in cur.fetchall()}
    cur.execute("SELECT txn FROM shop.journal")
    if {row[0] for row in cur.fetchall()} != seen:
        raise CheckFailed("a consistent snapshot sees different transactions in TidesDB and InnoDB")
    cur.execute("COMMIT")
    conn.close()
    return status["Binlog_snapshot_file"], int(status["Binlog_snapshot_position"]), seen


def logical_backup(primary, path):
    with open(path, "wb") as out:
        subprocess.run(["mariadb-dump", "--no-defaults", "--socket=" + primary.socket, "--user=root",
                        "--single-transaction", "--master-data=2", "--gtid", "--databases", "shop"],
                       stdout=out, stderr=subprocess.PIPE, check=True)
    with open(path, "rb") as f:
        head = f.read(1 << 16).decode("utf-8", "replace")
    m = re.search(r"CHANGE MASTER TO MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+);", head)
    g = re.search(r"SET GLOBAL gtid_slave_pos='([^']*)';", open(path, "rb").read().decode("utf-8", "replace"))
    if not m or not g:
        raise CheckFailed("the dump %s records no binlog position or GTID" % path)
    return m.group(1), int(m.group(2)), g.group(1)


def physical_backup(primary, target):
    run = subprocess.run([sys.executable, BACKUP_TOOL, "backup", "--no-defaults", "--socket=" + primary.socket,
                          "--user=root", "--target-dir=" + target], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = run.stdout.decode("utf-8", "replace")
    if run.returncode != 0:
        raise CheckFailed("tidesdb-backup.py backup failed:\n" + out[-3000:])
    info = {}
    with open(os.path.join(target, "tidesdb_backup_info")) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            info[key] = value
    return info, out.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="seed (default: from the clock)")
    ap.add_argument("--threads", type=int, default=4, help="writer connections (default 4)")
    ap.add_argument("--load", type=float, default=8, help="seconds of load, backups taken meanwhile (default 8)")
    ap.add_argument("--backups", type=int, default=1, help="logical and physical backups each (default 1)")
    ap.add_argument("--write-buffer", default="1M", help="tidesdb_unified_memtable_write_buffer_size (default 1M)")
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--keep", action="store_true", help="keep the servers' directories")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    print("backup_test: seed %d (replay with --seed %d; the backup moments vary with timing)" % (seed, seed), flush=True)
    rng = random.Random(seed)
    started = time.time()
    problems, errors = [], []
    stats = collections.Counter()
    work = tempfile.mkdtemp(prefix="tidesql-backup-", dir="/tmp")
    servers = []
    snapshots = []

    def new_server(**kw):
        s = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=not args.verbose, **kw)
        servers.append(s)
        return s

    try:
        primary = new_server(extra_args=["--log-bin=mysql-bin", "--server-id=1", "--sync-binlog=1",
                                         "--binlog-format=ROW",
                                         "--tidesdb-unified-memtable-write-buffer-size=" + args.write_buffer])
        print("backup_test: plugin %s" % primary.plugin_info, flush=True)
        primary.start()
        cur = primary.connect().cursor()
        for sql in SCHEMA:
            cur.execute(sql)
        cur.executemany("INSERT INTO shop.accounts VALUES (%s, %s, 1000, 0, NULL)",
                        [(i, "owner-%d" % i) for i in range(ACCOUNTS)])
        cur.executemany("INSERT INTO shop.docs VALUES (%s, 1, %s, %s)",
                        [(k, "t%d" % k, "doc %d " % k + "s" * rng.randint(0, 2500)) for k in range(DOCS)])

        # An XA transaction prepared before the backups (in both engines): the physical
        # backup must hold it prepared; the dump must not hold it.
        xa = primary.connect()
        for sql in ("XA START 'backup-xa'", "INSERT INTO shop.txns VALUES (0, -1, 'xa', 2)",
                    "INSERT INTO shop.journal VALUES (0, -1, 0)", "XA END 'backup-xa'", "XA PREPARE 'backup-xa'"):
            xa.cursor().execute(sql)
        xa.close()

        writers = [Writer(i, primary, seed, stats, errors) for i in range(args.threads)]
        for w in writers:
            w.start()
        dumps, physicals = [], []
        stop_snapshots = threading.Event()
        snapshot_rng = random.Random(seed + 1)

        def take_snapshots():
            while not stop_snapshots.wait(snapshot_rng.uniform(0.3, 0.9)):
                try:
                    snapshots.append(snapshot(primary))
                except (pymysql.err.MySQLError, CheckFailed) as e:
                    errors.append("consistent snapshot: %s" % e)
                    return
        snapshotter = threading.Thread(target=take_snapshots, daemon=True)
        snapshotter.start()

        # The backups, spread over the load.
        deadline = time.time() + args.load
        for i in range(args.backups):
            time.sleep(max(0.5, rng.uniform(0.5, 1.5) * args.load / (3 * args.backups)))
            path = os.path.join(work, "dump-%d.sql" % i)
            t0 = time.time()
            dumps.append((path,) + logical_backup(primary, path))
            if args.verbose:
                print("dump %d at %s:%d (GTID %s) in %.1f s" % (i, dumps[-1][1], dumps[-1][2], dumps[-1][3],
                                                              time.time() - t0), flush=True)
            time.sleep(max(0.5, rng.uniform(0.5, 1.5) * args.load / (3 * args.backups)))
            target = os.path.join(work, "backup-%d" % i)
            info, line = physical_backup(primary, target)
            physicals.append((target, info))
            print("physical backup %d: %s" % (i, line), flush=True)
        time.sleep(max(0.5, deadline - time.time()))
        for w in writers:
            w.stop = True
        stop_snapshots.set()
        for w in writers:
            w.join(180)
        snapshotter.join(60)
        if errors:
            raise CheckFailed("; ".join(errors[:5]))
        committed = committed_txns(primary)
        print("load: %d transactions committed, %d autocommit statements, %d snapshots, %s"
              % (stats["committed"], stats["autocommit statements"], len(snapshots),
                 {k: v for k, v in stats.items() if k.startswith("retried")}), flush=True)

        # Each consistent snapshot saw exactly the transactions before its binlog position.
        for file, position, seen in snapshots:
            logged, _ = binlog_transactions(primary, file, position)
            problems += compare_sets("snapshot at %s:%d" % (file, position), seen, logged)
        if snapshots and not any(0 < len(seen) < len(committed) for _, _, seen in snapshots):
            problems.append("no snapshot was taken while transactions committed: the check proved nothing")

        for i, (path, file, position, gtid) in enumerate(dumps):
            what = "dump %d (%s:%d)" % (i, file, position)
            found = len(problems)
            logged, last_gtid = binlog_transactions(primary, file, position)
            if last_gtid is not None and last_gtid not in gtid.split(","):
                problems.append("%s: GTID %s, but the binlog's last transaction before it is %s" % (what, gtid, last_gtid))
            restored = new_server()
            restored.start()
            with open(path, "rb") as f:
                subprocess.run(["mariadb", "--no-defaults", "--socket=" + restored.socket, "--user=root"], stdin=f,
                               check=True)
            problems += compare_sets(what + ", restored", committed_txns(restored), logged)
            applied = roll_forward(primary, restored, position, file)
            stats["replayed after dumps"] += applied
            problems += compare_servers(what + " rolled forward", primary, restored)
            print("%s: %d transactions in it, %d applied from the binary log, compared: %s"
                  % (what, len(logged), applied, "equal" if len(problems) == found else "DIFFERENT"), flush=True)
            restored.stop()

        for i, (target, info) in enumerate(physicals):
            what = "physical backup %d (%s:%s, GTID %s)" % (i, info["binlog_file"], info["binlog_position"],
                                                            info["gtid_binlog_pos"])
            found = len(problems)
            datadir = os.path.join(work, "restored-%d" % i)
            run = subprocess.run([sys.executable, BACKUP_TOOL, "restore", "--no-defaults", "--target-dir=" + target,
                                  "--datadir=" + datadir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if run.returncode != 0:
                raise CheckFailed("tidesdb-backup.py restore failed:\n" + run.stdout.decode()[-3000:])
            logged, last_gtid = binlog_transactions(primary, info["binlog_file"], int(info["binlog_position"]))
            if last_gtid is not None and last_gtid not in info["gtid_binlog_pos"].split(","):
                problems.append("%s: the binlog's last transaction before the position is %s" % (what, last_gtid))
            restored = new_server(datadir=datadir)
            restored.start()
            problems += compare_sets(what + ", restored", committed_txns(restored), logged)
            applied = roll_forward(primary, restored, info["gtid_binlog_pos"], None)
            stats["replayed after physical backups"] += applied
            problems += compare_servers(what + " rolled forward", primary, restored)
            rcur = restored.connect().cursor()
            rcur.execute("XA RECOVER")
            if [row[3] for row in rcur.fetchall()] != [b"backup-xa"]:
                problems.append("%s: the XA transaction prepared on the primary is not prepared here" % what)
            else:
                rcur.execute("XA COMMIT 'backup-xa'")
                if committed_txns(restored) != committed_txns(primary) | {0}:
                    problems.append("%s: XA COMMIT of the prepared transaction did not add its rows" % what)
            print("%s: %d transactions in it, %d applied from the binary log, compared: %s"
                  % (what, len(logged), applied, "equal" if len(problems) == found else "DIFFERENT"), flush=True)
            restored.stop()
        primary.connect().cursor().execute("XA ROLLBACK 'backup-xa'")
        if primary.stop() != 0:
            problems.append("the primary did not shut down cleanly:\n" + primary.log_tail(30))
    except (ServerError, CheckFailed, subprocess.CalledProcessError, pymysql.err.MySQLError) as e:
        detail = e.stderr.decode()[-2000:] if isinstance(e, subprocess.CalledProcessError) and e.stderr else ""
        problems.append("%s: %s %s" % (type(e).__name__, e, detail))
    for p in problems:
        print("  PROBLEM: " + p, flush=True)
    ok = not problems
    for s in servers:
        if not ok:
            s.mark_failed()
        s.cleanup()
    if ok and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("backup_test: kept %s" % work, flush=True)
    print("backup_test: %s seed=%d threads=%d committed=%d snapshots=%d dumps=%d physical=%d replayed=%d problems=%d "
          "in %.0f s" % ("PASS" if ok else "FAIL", seed, args.threads, stats["committed"], len(snapshots), args.backups, args.backups,
                         stats["replayed after dumps"] + stats["replayed after physical backups"], len(problems),
                         time.time() - started), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
