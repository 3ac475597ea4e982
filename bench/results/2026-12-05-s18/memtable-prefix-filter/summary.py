#!/usr/bin/python3
"""Ratios of label B to label A per workload in command.sh's ab.csv: throughput (geometric
mean over rounds, min..max), CPU per transaction, and each label's throughput against
InnoDB's in the same rounds.  Usage: summary.py ab.csv A B"""
import collections
import csv
import math
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
a, b = sys.argv[2], sys.argv[3]
by_round = collections.defaultdict(dict)
workloads = []
for r in rows:
    by_round[(r["workload"], r["round"])][r["label"]] = (float(r["tps"]), float(r["cpu_ms_per_txn"]))
    if r["workload"] not in workloads:
        workloads.append(r["workload"])


def gmean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


for w in workloads:
    tps, cpu, vs_a, vs_b = [], [], [], []
    for (workload, _), v in by_round.items():
        if workload != w or a not in v or b not in v:
            continue
        tps.append(v[b][0] / v[a][0])
        cpu.append(v[b][1] / v[a][1])
        if "innodb" in v:
            vs_a.append(v[a][0] / v["innodb"][0])
            vs_b.append(v[b][0] / v["innodb"][0])
    print(f"{w:24s} {b}/{a} tps {gmean(tps):.2f} ({min(tps):.2f}..{max(tps):.2f}) cpu {gmean(cpu):.2f}"
          f"  vs InnoDB: {a} {gmean(vs_a):.2f}, {b} {gmean(vs_b):.2f}")
