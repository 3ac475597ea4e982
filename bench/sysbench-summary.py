#!/usr/bin/env python3
"""Turns bench/sysbench-compare.sh's output into Markdown tables.

Usage: bench/sysbench-summary.py OUT_DIR   (reads sysbench.csv, sysbench-loads.csv and
       sysbench-sizes.csv there; prints Markdown on stdout)

First an overview: per cache regime, durability and thread count, the geometric mean over
workloads of each engine's ratio to InnoDB. Then one table per (regime, durability,
threads), a row per workload: each engine's mean throughput over its rounds; its ratio to
InnoDB (the mean of the per-round ratios, each round's slices being adjacent in time, with
min..max across rounds); p95 / p99 latency (means over rounds); KiB the server wrote to
storage and CPU milliseconds it spent per transaction (sums over the rounds' slices, so
background work of the previous slice counts too); retried conflicts (sum). The last row is
the geometric mean over workloads: of the mean throughputs, and of the ratios of every
workload and round (its min..max: each round's geometric mean over the workloads).
Then the load times and the sizes (on disk and as the engines estimate them).
"""
import os
import sys
from collections import defaultdict
from benchlib import engines_ordered, geomean, mean, ordered, read_csv

BASELINE = "InnoDB"


def ratio_cell(ratios):
    if not ratios:
        return "-"
    return f"{mean(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})"


class Slices:
    """The slices of one (regime, durability, threads), indexed by workload and engine."""

    def __init__(self, rows):
        self.rows = rows
        self.workloads = ordered(r["workload"] for r in rows)
        self.engines = engines_ordered(r["engine"] for r in rows)
        self.by = defaultdict(dict)  # (workload, engine) -> round -> row
        for r in rows:
            self.by[(r["workload"], r["engine"])][r["round"]] = r

    def tps(self, workload, engine):
        return {k: float(r["tps"]) for k, r in self.by[(workload, engine)].items()}

    def ratios(self, workload, engine):
        """Per round: engine's tps over the baseline's tps in the same round."""
        mine, base = self.tps(workload, engine), self.tps(workload, BASELINE)
        return {k: mine[k] / base[k] for k in mine if k in base and base[k] > 0 and mine[k] > 0}

    def per_txn(self, workload, engine, column, scale):
        rs = self.by[(workload, engine)].values()
        txns = sum(int(r["transactions"]) for r in rs)
        return sum(float(r[column]) for r in rs) * scale / txns if txns else None


def table(s, out):
    engines, others = s.engines, [e for e in s.engines if e != BASELINE]
    if BASELINE not in engines:
        others = []
    clk = os.sysconf("SC_CLK_TCK")
    head = ["workload"] + [f"{e} tps" for e in engines]
    head += [f"{e}/{BASELINE} (min..max)" for e in others]
    head += [f"{e} p95 / p99 ms" for e in engines]
    head += [f"{e} KiB written/txn" for e in engines]
    head += [f"{e} CPU ms/txn" for e in engines]
    head += [f"{e} retries" for e in engines]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    mean_tps = defaultdict(list)  # engine -> per-workload mean tps
    round_ratios = defaultdict(lambda: defaultdict(list))  # engine -> round -> ratios
    for w in s.workloads:
        cells = [w]
        for e in engines:
            t = list(s.tps(w, e).values())
            failed = sum(1 for x in t if x == 0)
            cells.append(f"{mean(t):.0f}" + (f" ({failed} failed)" if failed else ""))
            if mean(t) > 0:
                mean_tps[e].append(mean(t))
        for e in others:
            ratios = s.ratios(w, e)
            for k, v in ratios.items():
                round_ratios[e][k].append(v)
            cells.append(ratio_cell(list(ratios.values())))
        for e in engines:
            rs = s.by[(w, e)].values()
            p95 = mean([float(r["p95_ms"]) for r in rs])
            p99 = mean([float(r["p99_ms"]) for r in rs])
            cells.append(f"{p95:.2f} / {p99:.2f}")
        for e in engines:
            v = s.per_txn(w, e, "bytes_written", 1 / 1024)
            cells.append("-" if v is None else f"{v:.1f}")
        for e in engines:
            v = s.per_txn(w, e, "cpu_ticks", 1000 / clk)
            cells.append("-" if v is None else f"{v:.2f}")
        for e in engines:
            cells.append(str(sum(int(r["errors"]) for r in s.by[(w, e)].values())))
        out.append("| " + " | ".join(cells) + " |")
    cells = ["**geometric mean**"] + [f"{geomean(mean_tps[e]):.0f}" for e in engines]
    for e in others:
        # A round's geometric mean only over the workloads that have that round.
        per_round = [geomean(v) for v in round_ratios[e].values() if v]
        overall = geomean([r for v in round_ratios[e].values() for r in v])
        cells.append(f"{overall:.2f} ({min(per_round):.2f}..{max(per_round):.2f})" if per_round else "-")
    cells += ["-"] * (4 * len(engines))
    out.append("| " + " | ".join(cells) + " |")


def overview(groups, out):
    engines = engines_ordered(e for s in groups.values() for e in s.engines)
    others = [e for e in engines if e != BASELINE]
    if BASELINE not in engines or not others:
        return
    out.append(f"\n### Overview: geometric mean over workloads of the throughput ratio to {BASELINE}\n")
    head = ["cache regime", "durability", "threads"] + [f"{e}/{BASELINE} (min..max over rounds)" for e in others]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for (regime, cache, durability, threads), s in groups.items():
        cells = [f"{regime} ({cache})", durability, threads]
        for e in others:
            by_round = defaultdict(list)
            for w in s.workloads:
                for k, v in s.ratios(w, e).items():
                    by_round[k].append(v)
            per_round = [geomean(v) for v in by_round.values()]
            overall = geomean([r for v in by_round.values() for r in v])
            cells.append(f"{overall:.2f} ({min(per_round):.2f}..{max(per_round):.2f})" if per_round else "-")
        out.append("| " + " | ".join(cells) + " |")


def loads_and_sizes(loads, sizes, out):
    if loads:
        out.append("\n### Load (sysbench prepare, timed by the client)\n")
        out.append("| engine | load threads | rows | seconds | rows/s |")
        out.append("|---|---|---|---|---|")
        for r in loads:
            seconds = float(r["seconds"])
            rate = int(r["rows"]) / seconds if seconds > 0 else 0
            out.append(f"| {r['engine']} | {r['threads']} | {int(r['rows'])} | {seconds:.1f} | {rate:.0f} |")
    if sizes:
        stages = ordered(
            "after load" if r["stage"] == "load" else f"after {r['regime']}/{r['durability']}" for r in sizes)
        engines = engines_ordered(r["engine"] for r in sizes)
        cell = {}
        for r in sizes:
            stage = "after load" if r["stage"] == "load" else f"after {r['regime']}/{r['durability']}"
            cell[(r["engine"], stage)] = (int(r["disk_bytes"] or 0), int(r["table_bytes"] or 0))
        out.append("\n### Size: MiB on disk (MiB the engine reports as DATA_LENGTH + INDEX_LENGTH)\n")
        out.append("On disk: InnoDB's sb_InnoDB/*.ibd (without the shared redo log, undo and system")
        out.append("tablespace), TidesDB's #tidesdb/ and MyRocks' #rocksdb/ (both with their WAL).\n")
        out.append("| engine | " + " | ".join(stages) + " |")
        out.append("|---|" + "---|" * len(stages))
        for e in engines:
            cells = [e]
            for st in stages:
                if (e, st) in cell:
                    disk, est = cell[(e, st)]
                    cells.append(f"{disk / 1048576:.0f} ({est / 1048576:.0f})")
                else:
                    cells.append("-")
            out.append("| " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sysbench-summary.py OUT_DIR")
    where = sys.argv[1]
    if where.endswith(".csv"):
        where = os.path.dirname(where) or "."
    rows = read_csv(os.path.join(where, "sysbench.csv"))
    loads = read_csv(os.path.join(where, "sysbench-loads.csv"))
    sizes = read_csv(os.path.join(where, "sysbench-sizes.csv"))
    grouped = defaultdict(list)
    for r in rows:
        grouped[(r["regime"], r["cache"], r["durability"], r["threads"])].append(r)
    groups = {k: Slices(v) for k, v in grouped.items()}
    out = ["## sysbench: TidesDB, InnoDB and MyRocks side by side"]
    overview(groups, out)
    for (regime, cache, durability, threads), s in groups.items():
        rounds = len(ordered(r["round"] for r in s.rows))
        seconds = mean([float(r["seconds"]) for r in s.rows])
        plural = "" if threads == "1" else "s"
        out.append(f"\n### Cache {regime} ({cache}), {durability}, {threads} thread{plural}\n")
        out.append(f"{rounds} round(s) of {seconds:.0f} s slices per engine and workload.\n")
        table(s, out)
    loads_and_sizes(loads, sizes, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()
