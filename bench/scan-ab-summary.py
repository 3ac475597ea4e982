#!/usr/bin/env python3
"""Summarizes bench/scan-ab.sh's CSV: per label and build, TidesDB's throughput and CPU per
transaction as ratios to InnoDB's in the same round (mean, min..max over rounds), and
each later build's TidesDB CPU per transaction against build A's (mean of the rounds'
means).

Usage: bench/scan-ab-summary.py OUT_DIR/scan-ab.csv > OUT_DIR/scan-ab-summary.md
"""
import csv
import statistics
import sys
from collections import defaultdict


def spread(values):
    return f"{statistics.mean(values):.2f} ({min(values):.2f}..{max(values):.2f})"


def main(path):
    rows = defaultdict(dict)  # (round, build, label) -> engine -> (tps, cpu)
    labels, builds = [], []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["round"], r["build"], r["label"])
            rows[key][r["engine"]] = (float(r["tps"]), float(r["cpu_ms_per_txn"]))
            if r["label"] not in labels:
                labels.append(r["label"])
            if r["build"] not in builds:
                builds.append(r["build"])
    print("| label | build | TidesDB/InnoDB tps | TidesDB/InnoDB CPU per txn | TidesDB CPU ms/txn |")
    print("|---|---|---|---|---|")
    cpu_by = defaultdict(list)
    for label in labels:
        for build in builds:
            tps, cpu, own = [], [], []
            for (rnd, b, lab), engines in sorted(rows.items()):
                if b != build or lab != label or len(engines) < 2:
                    continue
                t, i = engines["TidesDB"], engines["InnoDB"]
                tps.append(t[0] / i[0])
                cpu.append(t[1] / i[1])
                own.append(t[1])
            if not tps:
                continue
            cpu_by[(label, build)] = own
            print(f"| {label} | {build} | {spread(tps)} | {spread(cpu)} | {spread(own)} |")
    print()
    later = builds[1:]
    print("| label | " + " | ".join(f"TidesDB CPU per txn, {b} / A" for b in later) + " |")
    print("|---|" + "---|" * len(later))
    for label in labels:
        a = cpu_by.get((label, "A"))
        if not a:
            continue
        cells = []
        for b in later:
            own = cpu_by.get((label, b))
            cells.append(f"{statistics.mean(own) / statistics.mean(a):.2f}" if own else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
