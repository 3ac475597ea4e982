#!/usr/bin/env python3
"""Summarises command.sh's output folder: per workload, TidesDB / InnoDB throughput
(geometric mean, min..max over rounds) and CPU per transaction for the build before (A)
and after (B); then, for the syscalls runs, calls per DELETE event.
Usage: summary.py OUT [PART ...] (the folders of OUT holding a scan-ab.csv; default fresh
churned; session 26's covered-reads/command.sh passes its own)."""
import collections
import csv
import math
import os
import re
import sys

out = sys.argv[1]
parts = sys.argv[2:] or ["fresh", "churned"]


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


for part in parts:
    path = os.path.join(out, part, "scan-ab.csv")
    if not os.path.exists(path):
        continue
    cells = collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        cells[(r["round"], r["build"], r["label"])][r["engine"]] = (float(r["tps"]), float(r["cpu_ms_per_txn"]))
    labels = sorted({k[2] for k in cells})
    print(f"## {part}: TidesDB / InnoDB, throughput (min..max over rounds) and CPU per transaction")
    print("| workload | A tps | A cpu | B tps | B cpu | B / A tps |")
    print("|---|---|---|---|---|---|")
    all_a, all_b = [], []
    for label in labels:
        row = [label]
        means = {}
        for build in ("A", "B"):
            tps = [v["TidesDB"][0] / v["InnoDB"][0] for k, v in cells.items()
                   if k[1] == build and k[2] == label and len(v) == 2]
            cpu = [v["TidesDB"][1] / v["InnoDB"][1] for k, v in cells.items()
                   if k[1] == build and k[2] == label and len(v) == 2]
            means[build] = gmean(tps)
            row += [f"{gmean(tps):.2f} ({min(tps):.2f}..{max(tps):.2f})", f"{gmean(cpu):.2f}"]
        all_a.append(means["A"])
        all_b.append(means["B"])
        row.append(f"{means['B'] / means['A']:.2f}")
        print("| " + " | ".join(row) + " |")
    print(f"| geometric mean | {gmean(all_a):.2f} | | {gmean(all_b):.2f} | | {gmean(all_b) / gmean(all_a):.2f} |")
    print()

runs = os.path.join(out, "syscalls", "runs.txt")
if os.path.exists(runs):
    print("## cached oltp_delete (8 x 200k, churned), per event over perf's 14 s")
    print("| build | events/s | sched_yield | context switches | WAL write(2) | futex |")
    print("|---|---|---|---|---|---|")
    for line in open(runs):
        name, rest = line.split(":", 1)
        rate = float(re.search(r"\(([\d.]+)", rest).group(1))
        stat = open(os.path.join(out, "syscalls", name, "oltp_delete.TidesDB.stat")).read()
        count = lambda ev: int(re.search(r"([\d,]+)\s+" + re.escape(ev), stat).group(1).replace(",", ""))
        events = rate * 14
        print(f"| {name} | {rate:.0f} | {count('syscalls:sys_enter_sched_yield') / events:.2f} | "
              f"{count('context-switches') / events:.2f} | {count('syscalls:sys_enter_write') / events:.2f} | "
              f"{count('syscalls:sys_enter_futex') / events:.2f} |")
