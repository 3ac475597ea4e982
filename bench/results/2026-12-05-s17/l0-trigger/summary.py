#!/usr/bin/env python3
"""Ratios per workload from command.sh's CSVs: A / B for each pair of databases given, for
throughput and CPU per transaction, mean (min..max) over rounds.
Usage: summary.py A B [A B ...] -- CSV...  (e.g. summary.py t1 t4 t1 innodb t4 innodb -- run1.csv)"""
import csv
import sys
from collections import defaultdict

split = sys.argv.index("--")
names, paths = sys.argv[1:split], sys.argv[split + 1:]
pairs = list(zip(names[0::2], names[1::2]))
for path in paths:
    rows = defaultdict(dict)  # (round, workload) -> db -> (tps, cpu)
    for r in csv.DictReader(open(path)):
        rows[(r["round"], r["workload"])][r["db"]] = (float(r["tps"]), float(r["cpu_ms_per_txn"]))
    print(path)
    for workload in sorted({w for _, w in rows}):
        for a, b in pairs:
            tps, cpu = [], []
            for (_, w), dbs in sorted(rows.items()):
                if w != workload or a not in dbs or b not in dbs:
                    continue
                tps.append(dbs[a][0] / dbs[b][0])
                cpu.append(dbs[a][1] / dbs[b][1])
            if tps:
                fmt = lambda v: f"{sum(v) / len(v):.2f} ({min(v):.2f}..{max(v):.2f})"
                print(f"  {workload:22s} {a}/{b:6s} tps {fmt(tps)}  cpu/txn {fmt(cpu)}")
