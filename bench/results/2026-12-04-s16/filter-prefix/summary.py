#!/usr/bin/env python3
"""Ratios per workload from command.sh's CSVs: prefix / whole and prefix / innodb, for
throughput and CPU per transaction, mean (min..max) over rounds. Usage: summary.py CSV..."""
import csv
import sys
from collections import defaultdict

for path in sys.argv[1:]:
    rows = defaultdict(dict)  # (round, workload) -> db -> (tps, cpu)
    for r in csv.DictReader(open(path)):
        rows[(r["round"], r["workload"])][r["db"]] = (float(r["tps"]), float(r["cpu_ms_per_txn"]))
    print(path)
    for workload in sorted({w for _, w in rows}):
        for other in ("whole", "innodb"):
            tps, cpu = [], []
            for (rnd, w), dbs in sorted(rows.items()):
                if w != workload or "prefix" not in dbs or other not in dbs:
                    continue
                tps.append(dbs["prefix"][0] / dbs[other][0])
                cpu.append(dbs["prefix"][1] / dbs[other][1])
            if tps:
                fmt = lambda v: f"{sum(v) / len(v):.2f} ({min(v):.2f}..{max(v):.2f})"
                print(f"  {workload:22s} prefix/{other:6s} tps {fmt(tps)}  cpu/txn {fmt(cpu)}")
