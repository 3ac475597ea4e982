#!/usr/bin/env python3
"""Ratio table of a kvbench log (scripts/bench-kv.sh output): TidesDB / RocksDB per workload.

Usage: scripts/bench-ratios.py LOG
       scripts/bench-ratios.py BEFORE_LOG AFTER_LOG

For each workload run by both engines, prints one markdown row with the ratios of the
summary phase's throughput (higher is better for TidesDB) and of its p50 and p99 latency,
and of the run's disk use, write amplification and peak RSS (lower is better for TidesDB).
With two logs (two builds, each run against RocksDB), each row shows both engines' ops/s
and the throughput, p99 and peak-RSS ratios of the first log -> the second (RocksDB is the
same binary in both: when its ops/s moves as much as the ratio, the machine moved).
"""
import re
import sys


def parse(path):
    runs = {}  # (workload, engine) -> dict
    current = None
    row = re.compile(r"^(\S+)\s+(tidesdb|rocksdb)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
                     r"(?:\s+(\S+)\s+(\S+)\s+(\S+))?")
    cont = re.compile(r"^\s{20,}(\S+\*?)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)")
    with open(path) as f:
        for line in f:
            m = row.match(line)
            if m:
                workload, engine, phase = m.group(1), m.group(2), m.group(3)
                current = runs.setdefault((workload, engine), {})
                current["disk"], current["wamp"], current["rss"] = m.group(10), m.group(11), m.group(12)
                if phase.endswith("*"):
                    current.update(ops=m.group(6), p50=m.group(7), p99=m.group(8))
                continue
            m = cont.match(line)
            if m and current is not None and m.group(1).endswith("*"):
                current.update(ops=m.group(4), p50=m.group(5), p99=m.group(6))
    return runs


def ratio(a, b):
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return "-"
    return "-" if y == 0 else f"{x / y:.2f}"


def workloads_of(runs):
    workloads = []
    for workload, _ in runs:
        if workload not in workloads:
            workloads.append(workload)
    return workloads


def ratios(runs, workload, keys):
    t, r = runs.get((workload, "tidesdb")), runs.get((workload, "rocksdb"))
    if not t or not r:
        return None
    return [ratio(t.get(k), r.get(k)) for k in keys]


def compare(before_log, after_log):
    before, after = parse(before_log), parse(after_log)
    keys = ("ops", "p99", "rss")
    print("| workload | TidesDB ops/s | RocksDB ops/s | ops/s ratio | p99 ratio | peak RSS ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for w in workloads_of(after):
        a = ratios(after, w, keys)
        if a is None:
            continue
        b = ratios(before, w, keys) or ["-"] * len(keys)
        ops = [f"{before.get((w, e), {}).get('ops', '-')} -> {after[(w, e)].get('ops', '-')}"
               for e in ("tidesdb", "rocksdb")]
        print(f"| {w} | " + " | ".join(ops + [f"{x} -> {y}" for x, y in zip(b, a)]) + " |")


def main():
    if len(sys.argv) == 3:
        compare(sys.argv[1], sys.argv[2])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    runs = parse(sys.argv[1])
    workloads = workloads_of(runs)
    print("| workload | ops/s | p50 | p99 | disk | wamp | peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for w in workloads:
        cells = ratios(runs, w, ("ops", "p50", "p99", "disk", "wamp", "rss"))
        if cells is not None:
            print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
