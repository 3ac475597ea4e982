#!/usr/bin/env python3
"""Turns bench/sysbench-compare.sh's results.csv into the ratio table (Markdown).

Per regime and workload: each engine's mean throughput over its slices, its ratio to
InnoDB (mean of the per-round ratios, with min..max across rounds), p95 latency, bytes
written to storage and CPU ticks per transaction, errors (retried conflicts).
"""
import csv
import sys
from collections import defaultdict


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    loads = []
    if len(sys.argv) > 2:
        try:
            loads = [line.strip().split(",") for line in open(sys.argv[2]) if line.strip()]
        except FileNotFoundError:
            pass
    by = defaultdict(list)  # (regime, workload, engine) -> rows
    for r in rows:
        by[(r["regime"], r["workload"], r["engine"])].append(r)
    engines = []
    for r in rows:
        if r["engine"] not in engines:
            engines.append(r["engine"])
    others = [e for e in engines if e != "InnoDB"]
    out = []
    for regime in dict.fromkeys(r["regime"] for r in rows):
        out.append(f"\n### Cache regime: {regime}\n")
        head = "| workload | " + " | ".join(f"{e} tps" for e in engines)
        head += " | " + " | ".join(f"{e}/InnoDB (min..max)" for e in others)
        head += " | " + " | ".join(f"{e} p95 ms" for e in engines)
        head += " | " + " | ".join(f"{e} KiB written/txn" for e in engines) + " |"
        out.append(head)
        out.append("|" + "---|" * (1 + 3 * len(engines) + len(others)))
        for workload in dict.fromkeys(r["workload"] for r in rows if r["regime"] == regime):
            cells = [workload]
            tps = {}
            for e in engines:
                rs = by[(regime, workload, e)]
                tps[e] = [float(r["tps"]) for r in rs]
                cells.append(f"{sum(tps[e]) / max(1, len(tps[e])):.0f}")
            for e in others:
                ratios = [a / b for a, b in zip(tps[e], tps["InnoDB"]) if b > 0]
                if ratios:
                    cells.append(f"{sum(ratios) / len(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})")
                else:
                    cells.append("-")
            for e in engines:
                rs = by[(regime, workload, e)]
                p95 = [float(r["p95_ms"]) for r in rs]
                cells.append(f"{sum(p95) / max(1, len(p95)):.2f}")
            for e in engines:
                rs = by[(regime, workload, e)]
                txns = sum(float(r["tps"]) * float(r["seconds"]) for r in rs)
                written = sum(int(r["bytes_written"]) for r in rs)
                cells.append(f"{written / 1024 / txns:.1f}" if txns > 0 else "-")
            out.append("| " + " | ".join(cells) + " |")
    if loads:
        out.append("\n### Load (sysbench prepare) and size after load\n")
        out.append("| engine | seconds | MiB (DATA_LENGTH + INDEX_LENGTH) |")
        out.append("|---|---|---|")
        for parts in loads:
            _, engine, seconds, size = parts[:4]
            mib = int(size) / 1048576 if size and size != "NULL" else 0
            out.append(f"| {engine} | {float(seconds):.1f} | {mib:.0f} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
