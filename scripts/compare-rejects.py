#!/usr/bin/env python3
"""Compare the failures of TidesDB in the stock suites with those of InnoDB.

Usage: scripts/compare-rejects.py BUILD_DIR [--diff] [--suites=LIST] [--run=tidesdb-pessimistic]

The results recorded for the stock storage_engine suites are stale in MariaDB 10.11.18:
InnoDB itself fails about half of them (and the binlog suite's assume MyISAM in places). A TidesDB failure therefore says something about
TidesDB only when InnoDB passes the test, or fails it differently. This script reads what
scripts/stock-suites.sh left of one run per engine,

    BUILD_DIR/test-logs/stock/{tidesdb,innodb}/<suite>.log       mtr output (pass/fail)
    BUILD_DIR/test-logs/stock/{tidesdb,innodb}/<suite>/rejects/  the failed tests' .reject

(--run=tidesdb-pessimistic reads the TidesDB run of stock-suites.sh --pessimistic instead)

and sorts each TidesDB failure into one of

    identical   InnoDB fails too, and its .reject equals TidesDB's once the engine name (and
                EXPLAIN's row estimates) are masked: the stale recorded result, nothing
                about TidesDB
    different   InnoDB fails too, with another .reject (--diff prints the masked diff)
    no-reject   InnoDB fails too, and one of the two runs left no .reject (a crash, a
                timeout, warnings in the server log): read the mtr log
    as-innodb   InnoDB passes, and TidesDB's .reject equals what InnoDB passes with: the
                suite's .result patched by plugin/innobase's .rdiff (mtr leaves it in the
                private test tree as .result~). The same engine difference as InnoDB's;
                the TidesDB overlay wants the same .rdiff
    tidesdb     InnoDB passes otherwise, or does not run the test (skipped or disabled)

and lists the tests InnoDB fails and TidesDB passes. The exit status is 0 when every TidesDB
failure is "identical" or "as-innodb", 1 otherwise, 2 when a run is missing.
"""

import difflib
import os
import re
import sys

SUITES = ["storage_engine", "storage_engine/parts", "storage_engine/trx"]
# "storage_engine-tidesdb.alter_table", or for a suite InnoDB runs without an overlay
# "binlog.binlog_grant 'row'".
RESULT_LINE = re.compile(r"^(\S+?)(?:-(?:tidesdb|innobase))?\.(\S+)(?: +'[^']*')? +(?:w\d+ +)?\[ (pass|fail|skipped|disabled) \]")
# The engine's name as it appears in results: ENGINE=..., error messages, SHOW ENGINES.
ENGINE_NAME = re.compile(r"tidesdb|innodb|innobase", re.IGNORECASE)


def statuses(log):
    """Test name -> 'fail', 'pass' or 'skipped' from one mtr output; fail wins."""
    result = {}
    with open(log, errors="replace") as f:
        # A worker's start-up warning can split a result line in two (see stock-suites.sh).
        text = re.sub(r" *worker\[\d+\] mysql-test-run: WARNING: [^\n]*\n(?=\[ )", " ", f.read())
        for line in text.splitlines():
            m = RESULT_LINE.match(line)
            if not m:
                continue
            name, status = m.group(2), m.group(3)
            if status == "disabled":
                status = "skipped"
            if result.get(name) != "fail":
                result[name] = status
    return result


# An EXPLAIN row (id, select_type, table, type, possible_keys, key, key_len, ref, rows,
# Extra): its rows column is each engine's estimate, which moves with timing (when the
# engine last counted): masked, like the engine's name.
JOIN_TYPES = {"ALL", "index", "range", "ref", "eq_ref", "const", "system", "index_merge", "ref_or_null",
              "fulltext", "unique_subquery", "index_subquery", "NULL"}


def mask_line(line):
    line = ENGINE_NAME.sub("<ENGINE>", line)
    fields = line.rstrip("\n").split("\t")
    if len(fields) == 10 and fields[0].isdigit() and fields[3] in JOIN_TYPES:
        fields[8] = "#"
        line = "\t".join(fields) + "\n"
    return line


def masked(path):
    with open(path, errors="replace") as f:
        return [mask_line(line) for line in f]


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    show_diff = "--diff" in argv
    suites = SUITES
    run = "tidesdb"
    for a in argv[1:]:
        if a.startswith("--suites="):
            suites = a.split("=", 1)[1].split(",")
        elif a.startswith("--run="):
            run = a.split("=", 1)[1]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    stock = os.path.join(args[0], "test-logs", "stock")

    explained = unexplained = 0
    for suite in suites:
        slug = suite.replace("/", "-")
        runs = {}
        for engine in (run, "innodb"):
            log = os.path.join(stock, engine, slug + ".log")
            if not os.path.exists(log):
                print(f"compare-rejects: {log} is missing; run scripts/stock-suites.sh "
                      f"{args[0]} --engine={engine.split('-')[0]} --suites={suite} first",
                      file=sys.stderr)
                return 2
            runs[engine] = statuses(log)
        tides, inno = runs[run], runs["innodb"]
        groups = {"identical": [], "as-innodb": [], "different": [], "no-reject": [],
                  "tidesdb": []}
        tree = os.path.join(args[0], "mtr", "mysql-test")
        for name in sorted(t for t, s in tides.items() if s == "fail"):
            if inno.get(name) != "fail":
                why = "InnoDB " + (inno.get(name) or "did not run it")
                reject = os.path.join(stock, run, slug, "rejects", name + ".reject")
                patched = os.path.join(tree, "plugin", "innobase", suite, name + ".result~")
                rdiff = os.path.join(tree, "plugin", "innobase", suite, name + ".rdiff")
                if (inno.get(name) == "pass" and os.path.exists(rdiff) and
                        os.path.exists(patched) and os.path.exists(reject) and
                        masked(reject) == masked(patched)):
                    groups["as-innodb"].append((name, "InnoDB passes with " +
                                                os.path.relpath(rdiff, tree), []))
                    continue
                diff = []
                if os.path.exists(reject):
                    expected = patched if os.path.exists(rdiff) and os.path.exists(patched) \
                        else os.path.join(tree, "suite", suite, name + ".result")
                    if os.path.exists(expected):
                        diff = list(difflib.unified_diff(masked(expected), masked(reject),
                                                         "InnoDB expected", "TidesDB", n=1))
                groups["tidesdb"].append((name, why, diff))
                continue
            rejects = [os.path.join(stock, e, slug, "rejects", name + ".reject")
                       for e in (run, "innodb")]
            missing = [r for r in rejects if not os.path.exists(r)]
            if missing:
                who = " and ".join("InnoDB" if "/innodb/" in r else "TidesDB" for r in missing)
                groups["no-reject"].append((name, f"no .reject from {who}", []))
                continue
            a, b = masked(rejects[0]), masked(rejects[1])
            if a == b:
                groups["identical"].append((name, "", []))
            else:
                diff = list(difflib.unified_diff(b, a, "InnoDB", "TidesDB", n=1))
                changed = sum(1 for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))
                groups["different"].append((name, f"{changed} lines differ", diff))
        only_innodb = sorted(t for t, s in inno.items() if s == "fail" and tides.get(t) == "pass")

        failed = sum(len(g) for g in groups.values())
        print(f"{suite}: TidesDB fails {failed}: " +
              ", ".join(f"{len(g)} {k}" for k, g in groups.items()) +
              f"; InnoDB only fails {len(only_innodb)}")
        for kind in ("tidesdb", "different", "no-reject", "as-innodb", "identical"):
            for name, why, diff in groups[kind]:
                print(f"  {kind:<10} {name}" + (f"  ({why})" if why else ""))
                if show_diff and diff:
                    sys.stdout.writelines("      " + d if d.endswith("\n") else "      " + d + "\n"
                                          for d in diff)
        for name in only_innodb:
            print(f"  {'innodb':<10} {name}  (TidesDB passes)")
        same = len(groups["identical"]) + len(groups["as-innodb"])
        explained += same
        unexplained += failed - same

    print(f"{explained} failures as InnoDB's (identical, as-innodb), {unexplained} of TidesDB's own")
    return 0 if unexplained == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
