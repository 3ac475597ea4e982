#!/usr/bin/env python3
"""Turns bench/tpcc-compare.sh's OUT_DIR (tpcc.csv, tpcc-loads.csv, tpcc-checks.csv) into
tpcc-summary.md (Markdown, on stdout).

Usage: bench/tpcc/summary.py OUT_DIR

Per durability, one table with a row per engine: NOPM (mean over its slices), its ratio to
InnoDB (mean of the per-round ratios, min..max across rounds), transactions per second,
retries and errors per 1000 transactions, KiB written and CPU ticks per transaction, size
after the load and at the end of the durability's slices, and the consistency check; then
a table of p99 latency per transaction type (mean of the slices' p99s), and the mix: the
transactions of each type over the durability's slices, from the run logs (logs/run-*.log,
the tpcc-type lines of bench/tpcc/tpcc.lua).
"""
import csv
import os
import sys
from collections import defaultdict

TYPES = ["new_order", "payment", "order_status", "delivery", "stock_level"]


def read(path):
    try:
        with open(path) as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def mib(b):
    return f"{int(b) / 1048576:.1f}" if b not in (None, "", "NULL") else "-"


def mix_of(out_dir, durability, rounds, engine):
    """Commits and rollbacks per transaction type over the slices' logs."""
    counts = defaultdict(lambda: [0, 0])
    for rnd in rounds:
        try:
            with open(os.path.join(out_dir, "logs", f"run-{durability}-{rnd}-{engine}.log")) as f:
                for line in f:
                    if line.startswith("tpcc-type: "):
                        words = line.split()
                        kv = dict(w.split("=", 1) for w in words[2:])
                        counts[words[1]][0] += int(kv["commits"])
                        counts[words[1]][1] += int(kv["rollbacks"])
        except FileNotFoundError:
            pass
    return counts


def main():
    out_dir = sys.argv[1]
    rows = read(os.path.join(out_dir, "tpcc.csv"))
    loads = {r["engine"]: r for r in read(os.path.join(out_dir, "tpcc-loads.csv"))}
    checks = {(r["durability"], r["engine"]): r for r in read(os.path.join(out_dir, "tpcc-checks.csv"))}
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    by = defaultdict(list)  # (durability, engine) -> slices
    for r in rows:
        by[(r["durability"], r["engine"])].append(r)

    lines = ["# TPC-C-like workload: TidesDB, InnoDB and MyRocks side by side", ""]
    if rows:
        r0 = rows[0]
        lines.append(f"{r0['warehouses']} warehouses, {r0['threads']} threads; slices of "
                     f"{float(r0['seconds']):.0f} s, engines alternating; "
                     f"{len(set(r['round'] for r in rows))} round(s) per durability.")
        lines.append("")
    for durability in dict.fromkeys(r["durability"] for r in rows):
        lines.append(f"## Durability: {durability}")
        lines.append("")
        lines.append("| engine | NOPM | NOPM / InnoDB (min..max) | txn/s | retries / 1000 txn | errors / 1000 txn "
                     "| KiB written / txn | CPU ticks / txn | MiB after load | MiB at end | consistency |")
        lines.append("|---" * 11 + "|")
        innodb = {r["round"]: float(r["nopm"]) for r in by[(durability, "InnoDB")]}
        for e in engines:
            rs = by[(durability, e)]
            nopm = [float(r["nopm"]) for r in rs]
            ratios = [float(r["nopm"]) / innodb[r["round"]] for r in rs if innodb.get(r["round"], 0) > 0]
            ratio = f"{mean(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})" if ratios else "-"
            txns = sum(int(r["transactions"]) for r in rs)
            secs = sum(float(r["seconds"]) for r in rs)
            retries = sum(int(r["retries"]) for r in rs)
            errors = sum(int(r["errors"]) for r in rs)
            written = sum(int(r["bytes_written"]) for r in rs)
            ticks = sum(int(r["cpu_ticks"]) for r in rs)
            per = (lambda x, k=1: f"{x * k / txns:.1f}" if txns else "-")
            check = checks.get((durability, e), {})
            lines.append("| " + " | ".join([
                e, f"{mean(nopm):.0f}", ratio, f"{txns / secs:.1f}" if secs else "-",
                per(retries, 1000), per(errors, 1000), per(written, 1 / 1024), f"{ticks / txns:.2f}" if txns else "-",
                mib(loads.get(e, {}).get("size_bytes")), mib(check.get("size_bytes")),
                check.get("result", "not checked")]) + " |")
        lines.append("")
        lines.append("p99 latency in ms per transaction type (mean of the slices' p99):")
        lines.append("")
        lines.append("| engine | " + " | ".join(t.replace("_", "-") for t in TYPES) + " |")
        lines.append("|---" * (1 + len(TYPES)) + "|")
        for e in engines:
            rs = by[(durability, e)]
            lines.append("| " + " | ".join(
                [e] + [f"{mean([float(r[f'p99_{t}_ms']) for r in rs]):.1f}" for t in TYPES]) + " |")
        lines.append("")
        lines.append("The mix: committed transactions per type (share of all), new-orders rolled back on the "
                     "unused item:")
        lines.append("")
        lines.append("| engine | " + " | ".join(t.replace("_", "-") for t in TYPES) + " | new-order rollbacks |")
        lines.append("|---" * (2 + len(TYPES)) + "|")
        for e in engines:
            rounds = [r["round"] for r in by[(durability, e)]]
            counts = mix_of(out_dir, durability, rounds, e)
            total = sum(c[0] + c[1] for c in counts.values())
            cells = [e]
            for t in TYPES:
                n = counts[t][0]
                cells.append(f"{n} ({100 * n / total:.1f}%)" if total else "-")
            cells.append(str(counts["new_order"][1]))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if loads:
        lines.append("## Load (prepare)")
        lines.append("")
        lines.append("| engine | seconds | MiB (DATA_LENGTH + INDEX_LENGTH) |")
        lines.append("|---|---|---|")
        for e, r in loads.items():
            lines.append(f"| {e} | {float(r['seconds']):.1f} | {mib(r['size_bytes'])} |")
        lines.append("")
    lines.append("NOPM counts committed new-orders per minute (the 1% that roll back on an unused item are "
                 "not counted). Retries are deadlocks and conflicts rolled back and run again. "
                 "Sizes are each engine's information_schema estimate after ANALYZE TABLE (MyRocks' "
                 "memtable flushed first). Consistency: TPC-C conditions 1-4 (clause 3.3.2).")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
