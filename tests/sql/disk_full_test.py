#!/usr/bin/python3
"""SQL-level disk-full test: the engine's directory on a small tmpfs, filled by committed
transactions, then given room again.

A private server runs with durable commits (tidesdb_unified_memtable_sync_mode=FULL) and
its engine directory (DATADIR/#tidesdb) on a tmpfs of --size MiB, mounted before the first
start (the rest of the data directory, InnoDB's included, stays on the normal disk). One
connection commits transactions of --rows-per-txn rows of about 1.5 KiB each and records
every acknowledged commit, until a statement or COMMIT fails. Then:

  * the failure is a clear error: ER_DISK_FULL (1021) naming the engine, never a crash,
    a hang or a silent success; the error log says why;
  * the server still answers, and every acknowledged transaction is readable (all its rows,
    through the primary key and the secondary index), nothing of the failed one is;
  * a flush or compaction that failed on the full disk (in the error log) is counted in
    Tidesdb_background_errors and shown in SHOW ENGINE TIDESDB STATUS;
  * more writes while the disk is still full fail the same way and leave nothing behind;
  * the tmpfs is grown (remount with a larger size): writes succeed again, now or after a
    restart (the library may ask for a reopen after a failed WAL write: then the server
    restarts cleanly);
  * after a restart every acknowledged transaction is present, CHECK TABLE is OK, and the
    table takes writes.

Needs root (mount). tests/sql/disk_full_test.py [--size 24] [--keep] [-v]
"""

import argparse
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, PrivateServer, ServerError  # noqa: E402

ER_DISK_FULL = 1021
PAD = 1500


def pad_of(row_id):
    """The row's value: incompressible (so the disk fills by the rows' size), a function of the id."""
    return random.Random(row_id).randbytes(PAD // 2).hex()


def mount_tmpfs(path, size_mb, remount=False):
    opts = ("remount," if remount else "") + "size=%dm" % size_mb
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path], check=True, capture_output=True)


def used_mb(path):
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize / (1 << 20)


class Ledger:
    """Acknowledged transactions: txn number -> its row ids."""

    def __init__(self):
        self.acked = {}
        self.next_id = 1
        self.next_txn = 1

    def rows_of_next(self, n):
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        txn = self.next_txn
        self.next_txn += 1
        return txn, ids


def commit_batch(conn, ledger, n):
    """One transaction of n rows. Returns None if acknowledged, else the MySQL error."""
    txn, ids = ledger.rows_of_next(n)
    cur = conn.cursor()
    try:
        cur.execute("BEGIN")
        cur.executemany("INSERT INTO t (id, txn, k, pad) VALUES (%s, %s, %s, %s)",
                        [(i, txn, i % 97, pad_of(i)) for i in ids])
        cur.execute("COMMIT")
    except pymysql.err.MySQLError as e:
        try:
            cur.execute("ROLLBACK")
        except pymysql.err.MySQLError:
            pass
        return e
    ledger.acked[txn] = ids
    return None


def check_contents(conn, ledger, problems, when):
    cur = conn.cursor()
    expected = {i for ids in ledger.acked.values() for i in ids}
    cur.execute("SELECT id FROM t FORCE INDEX (PRIMARY)")
    by_pk = {r[0] for r in cur.fetchall()}
    cur.execute("SELECT id FROM t FORCE INDEX (k)")
    by_k = {r[0] for r in cur.fetchall()}
    if by_pk != expected:
        problems.append("%s: primary key has %d rows, %d acknowledged (missing %s, extra %s)" % (
            when, len(by_pk), len(expected), sorted(expected - by_pk)[:10], sorted(by_pk - expected)[:10]))
    if by_k != by_pk:
        problems.append("%s: index k disagrees with the primary key (%d vs %d rows)" % (when, len(by_k), len(by_pk)))
    cur.execute("SELECT id, pad FROM t")
    bad = sum(1 for row_id, pad in cur.fetchall() if pad != pad_of(row_id))
    if bad:
        problems.append("%s: %d rows with a wrong value" % (when, bad))


def check_table(conn, problems, when):
    cur = conn.cursor()
    cur.execute("CHECK TABLE t")
    rows = cur.fetchall()
    if rows[-1][2] != "status" or rows[-1][3] != "OK":
        problems.append("%s: CHECK TABLE says %s" % (when, rows))


def is_disk_full(err):
    return isinstance(err, pymysql.err.MySQLError) and err.args and err.args[0] == ER_DISK_FULL


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=24, help="tmpfs size in MiB while full (default 24)")
    ap.add_argument("--grown", type=int, default=256, help="tmpfs size in MiB after growing (default 256)")
    ap.add_argument("--rows-per-txn", type=int, default=20)
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--keep", action="store_true", help="keep the server's directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("disk_full_test: FAIL: needs root to mount a tmpfs")
        return 2
    started = time.time()
    problems = []
    ledger = Ledger()
    try:
        server = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=not args.verbose, extra_args=[
            "--tidesdb-unified-memtable-sync-mode=FULL", "--tidesdb-default-sync-mode=FULL",
            "--tidesdb-unified-memtable-write-buffer-size=8M"])
    except ServerError as e:
        print("disk_full_test: FAIL: %s" % e)
        return 2
    engine_dir = os.path.join(server.datadir, "#tidesdb")
    os.makedirs(engine_dir, exist_ok=True)
    mounted = False
    first_error = None
    with server:
        try:
            mount_tmpfs(engine_dir, args.size)
            mounted = True
            server.start()
            conn = server.connect()
            cur = conn.cursor()
            cur.execute("CREATE DATABASE IF NOT EXISTS test")
            cur.execute("USE test")
            cur.execute("CREATE TABLE t (id INT PRIMARY KEY, txn INT NOT NULL, k INT NOT NULL, "
                        "pad VARCHAR(%d) NOT NULL, KEY k (k)) ENGINE=TidesDB" % (PAD + 10))

            # Fill the disk with acknowledged transactions.
            while first_error is None:
                first_error = commit_batch(conn, ledger, args.rows_per_txn)
                if len(ledger.acked) > 100000:
                    problems.append("the disk never filled (%.1f MiB used)" % used_mb(engine_dir))
                    break
            print("disk_full_test: %d transactions acknowledged, then: %s (%.1f of %d MiB used)" % (
                len(ledger.acked), first_error, used_mb(engine_dir), args.size), flush=True)
            if first_error is not None and not is_disk_full(first_error):
                problems.append("the write that hit the full disk failed with %r, not ER_DISK_FULL" % (first_error,))
            if server.exited_on_its_own() is not None:
                problems.append("the server died when the disk filled:\n" + server.log_tail(30))
                raise ServerError("server died")
            if "disk is full" not in server.log_tail(200).lower() and "no space" not in server.log_tail(200).lower():
                problems.append("the error log does not say the disk is full:\n" + server.log_tail(20))

            # Still serving reads, with exactly what was acknowledged.
            conn = server.connect()
            conn.cursor().execute("USE test")
            check_contents(conn, ledger, problems, "disk full")

            # A failed flush or compaction (the library's own threads) is counted and shown.
            c = conn.cursor()
            c.execute("SHOW GLOBAL STATUS LIKE 'Tidesdb_background_errors'")
            background_errors = int(c.fetchone()[1])
            c.execute("SHOW ENGINE TIDESDB STATUS")
            report = c.fetchone()[2]
            tail = server.log_tail(400)
            logged = any(m in tail for m in ("TidesDB: flush failed", "TidesDB: compaction of cf"))
            print("disk_full_test: %d background errors counted (log: %s)" % (
                background_errors, "a flush or compaction failed" if logged else "no background failure"), flush=True)
            if logged and (background_errors == 0 or "the latest" not in report.split("BACKGROUND ERRORS")[1]):
                problems.append("a background failure was logged but Tidesdb_background_errors is %d and the "
                                "status report says: %s" % (background_errors,
                                                            report.split("BACKGROUND ERRORS")[1][:200]))

            # More writes while full: the same clear error, nothing left behind.
            for _ in range(3):
                err = commit_batch(conn, ledger, args.rows_per_txn)
                if err is None:
                    continue  # the engine may have freed room (a flush): fine
                if not is_disk_full(err) and not (isinstance(err, pymysql.err.MySQLError) and err.args[0] == 1296):
                    problems.append("a write on the full disk failed with %r" % (err,))
            check_contents(conn, ledger, problems, "after more writes on the full disk")

            # Room again.
            mount_tmpfs(engine_dir, args.grown, remount=True)
            err = commit_batch(conn, ledger, args.rows_per_txn)
            needed_restart = err is not None
            if needed_restart:
                print("disk_full_test: after growing the disk the engine refuses writes until a restart: %s"
                      % (err,), flush=True)
                status = server.stop()
                if status != 0:
                    problems.append("clean shutdown after the full disk: exit status %s:\n%s"
                                    % (status, server.log_tail(30)))
                server.start()
                conn = server.connect()
                conn.cursor().execute("USE test")
                err = commit_batch(conn, ledger, args.rows_per_txn)
                if err is not None:
                    problems.append("after growing the disk and a restart, a write fails: %r" % (err,))
            check_contents(conn, ledger, problems, "after growing the disk")

            # A restart keeps everything acknowledged.
            status = server.stop()
            if status != 0:
                problems.append("clean shutdown: exit status %s:\n%s" % (status, server.log_tail(30)))
            server.start()
            conn = server.connect()
            conn.cursor().execute("USE test")
            check_contents(conn, ledger, problems, "after restart")
            check_table(conn, problems, "after restart")
            if commit_batch(conn, ledger, args.rows_per_txn) is not None:
                problems.append("after restart the table takes no writes")
            check_contents(conn, ledger, problems, "after restart and a write")
            server.stop()
        except (ServerError, pymysql.err.MySQLError, subprocess.CalledProcessError) as e:
            problems.append("%s: %s" % (type(e).__name__, e))
            problems.append("server error log:\n" + server.log_tail(30))
        finally:
            server.kill()
            if mounted:
                subprocess.run(["umount", engine_dir], capture_output=True)
        if problems:
            server.mark_failed()
            for p in problems:
                print("  PROBLEM: " + p, flush=True)
    ok = not problems
    print("disk_full_test: %s acknowledged=%d rows=%d in %.0f s" % (
        "PASS" if ok else "FAIL", len(ledger.acked), sum(len(v) for v in ledger.acked.values()),
        time.time() - started), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
