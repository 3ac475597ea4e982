#!/usr/bin/python3
"""The seed benchmark configuration starts our server unchanged and means what it says.

bench/seed-benchmark.cnf is, verbatim, the configuration the engine this project implements
was benchmarked with (shared/seed-benchmark.cnf). A private server starts with it as its
only configuration file (--defaults-file; only the paths are given on the command line, so
every setting in the file holds, plugin_maturity = gamma included), and then:

  * TidesDB is loaded, by the file's plugin_load_add, and the server accepts its maturity;
  * every tidesdb_* line of the file is the variable's value (sizes in bytes, booleans and
    enumerations by name), and the server-wide lines the engine depends on hold
    (transaction_isolation READ-COMMITTED, no binary log);
  * sysbench's oltp_read_write prepares and runs on TidesDB tables under it (conflicts,
    1213, are retried by sysbench), CHECK TABLE is clean, and after a clean restart every
    row is there.

    tests/sql/seed_config_test.py [--config FILE] [--plugin SO] [--keep]
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, REPO, PrivateServer, ServerError  # noqa: E402

SEED_CONFIG = os.path.join(REPO, "bench", "seed-benchmark.cnf")
SIZE_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def config_lines(path):
    """The [mysqld] settings of the file as (name, value) pairs, in order."""
    settings, section = [], None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            if section == "mysqld":
                name, _, value = line.partition("=")
                settings.append((name.strip().replace("-", "_"), value.strip()))
    return settings


def same_value(configured, actual):
    """Whether a configuration value and the server's SHOW VARIABLES value agree."""
    m = re.fullmatch(r"(\d+)([KMG])", configured, re.IGNORECASE)
    if m:
        return actual == str(int(m.group(1)) * SIZE_SUFFIX[m.group(2).upper()])
    return configured.upper() == actual.upper()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=SEED_CONFIG, help="the configuration file (default: %(default)s)")
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--keep", action="store_true", help="keep the server's directory")
    args = ap.parse_args()
    problems = []
    settings = config_lines(args.config)
    try:
        server = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=True,
                               defaults_file=os.path.abspath(args.config))
    except ServerError as e:
        print("seed_config_test: FAIL: %s" % e)
        return 2
    with server:
        try:
            server.start()
            cur = server.connect().cursor()
            cur.execute("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'TidesDB'")
            rows = cur.fetchall()
            if rows != (("YES",),):
                problems.append("TidesDB is not available (ENGINES says %r):\n%s" % (rows, server.log_tail(20)))
            cur.execute("SELECT PLUGIN_MATURITY FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'TidesDB'")
            print("seed_config_test: TidesDB loaded, maturity %s" % (cur.fetchone() or ("none",))[0], flush=True)
            checked = 0
            for name, value in settings:
                if not name.startswith("tidesdb_") and name not in ("transaction_isolation", "plugin_maturity"):
                    continue
                # The option transaction_isolation sets the variable tx_isolation in 10.11.
                variable = "tx_isolation" if name == "transaction_isolation" else name
                cur.execute("SHOW GLOBAL VARIABLES LIKE %s", (variable,))
                row = cur.fetchone()
                if row is None:
                    problems.append("%s = %s: the server has no such variable" % (name, value))
                elif not same_value(value, row[1]):
                    problems.append("%s = %s in the file, but the server says %s" % (name, value, row[1]))
                checked += 1
            cur.execute("SELECT @@log_bin")
            if cur.fetchone()[0] != 0:
                problems.append("skip-log-bin did not hold")
            print("seed_config_test: %d settings checked" % checked, flush=True)

            cur.execute("CREATE DATABASE sbtest")
            sysbench = ["sysbench", "--db-driver=mysql", "--mysql-socket=" + server.socket, "--mysql-user=root",
                        "--mysql-db=sbtest", "--tables=4", "--table-size=5000", "--mysql-storage-engine=TidesDB",
                        "--mysql-ignore-errors=1213", "--threads=4"]
            for step in (["oltp_read_write", "prepare"], ["--time=5", "oltp_read_write", "run"]):
                out = subprocess.run(sysbench + step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if out.returncode != 0:
                    problems.append("sysbench %s failed:\n%s" % (" ".join(step), out.stdout[-2000:]))
                    break
                m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", out.stdout)
                if m:
                    print("seed_config_test: oltp_read_write %s transactions (%s per second)"
                          % (m.group(1), m.group(2)), flush=True)
            counts = {}
            for i in range(1, 5):
                cur.execute("CHECK TABLE sbtest.sbtest%d" % i)
                result = cur.fetchall()[-1]
                if result[3] != "OK":
                    problems.append("CHECK TABLE sbtest%d: %r" % (i, result))
                cur.execute("SELECT COUNT(*), SUM(k) FROM sbtest.sbtest%d" % i)
                counts[i] = cur.fetchone()
            status = server.stop()
            if status != 0:
                problems.append("clean shutdown: exit status %s:\n%s" % (status, server.log_tail(20)))
            server.start()
            cur = server.connect().cursor()
            for i, expected in counts.items():
                cur.execute("SELECT COUNT(*), SUM(k) FROM sbtest.sbtest%d" % i)
                got = cur.fetchone()
                if got != expected:
                    problems.append("sbtest%d after the restart: %r, before it %r" % (i, got, expected))
            server.stop()
        except (ServerError, pymysql.err.MySQLError) as e:
            problems.append("%s: %s\n%s" % (type(e).__name__, e, server.log_tail(20)))
        if problems:
            server.mark_failed()
    for p in problems:
        print("  PROBLEM: " + p, flush=True)
    print("seed_config_test: %s (%s)" % ("FAIL" if problems else "PASS", os.path.relpath(args.config, REPO)),
          flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
