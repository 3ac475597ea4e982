#!/usr/bin/env python3
"""PNG plots of the SQL benchmarks in one output directory (matplotlib, no display needed).

Usage: bench/plot.py OUT_DIR   (writes OUT_DIR/plots/*.png, prints the files written)

From OUT_DIR/sysbench.csv (bench/sysbench-compare.sh), each at the highest thread count
of every cache regime x durability unless said otherwise:
  sysbench-ratio.png          throughput ratio to InnoDB per workload, TidesDB and MyRocks
                              side by side, bars = mean of the per-round ratios drawn from
                              1.0 on a log2 axis (2x and 0.5x equally long), whiskers =
                              min..max across rounds; one panel per regime x durability
  sysbench-threads-R-D.png    throughput against thread count per workload (one small
                              panel each), a line per engine, whiskers min..max over rounds;
                              one file per regime R x durability D
  sysbench-p99.png            p99 latency per workload and engine (log scale)
  sysbench-written.png        KiB the server wrote per transaction, per workload and engine
                              (log scale from 0.01 KiB: read-only workloads write ~0)
From OUT_DIR/tpcc.csv, if present (bench/tpcc-compare.sh):
  tpcc-nopm.png               new orders per minute per engine, per durability (and
                              warehouses x threads when several ran), whiskers min..max
                              over rounds, the ratio to InnoDB written above each bar
  tpcc-p99.png                p99 latency per transaction type and engine, one panel per
                              durability (x warehouses x threads)
From OUT_DIR/large-values.csv, if present (bench/large-values.sh):
  large-values-ratio.png      ops/s ratio to InnoDB per test (and access pattern), drawn
                              from 1.0 on a log2 axis, whiskers min..max over rounds
  large-values-p99.png        p99 latency per test and engine (log scale; tests without a
                              latency, such as load and optimize, are left out)
"""
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402
from benchlib import engines_ordered, mean, ordered, read_csv  # noqa: E402

BASELINE = "InnoDB"
COLORS = {"TidesDB": "#1f77b4", "InnoDB": "#ff7f0e", "RocksDB": "#2ca02c"}
LABELS = {"RocksDB": "MyRocks"}
TPCC_TYPES = ["new_order", "payment", "order_status", "delivery", "stock_level"]


def label(engine):
    return LABELS.get(engine, engine)


def color(engine):
    return COLORS.get(engine, "#7f7f7f")


def grid(n, width=6.0, height=3.6, cols=None):
    cols = cols or min(n, 2)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [a for row in axes for a in row]
    for a in flat[n:]:
        a.set_visible(False)
    return fig, flat[:n]


def bars(ax, groups, series, values, spans=None, log=False, floor=None, ratio=False):
    """Grouped bars: for each group (x tick) one bar per series; values[(group, series)] is
    the height, spans[(group, series)] an optional (low, high) whisker. On a log axis the
    bars start a power of ten below the smallest value, or at floor if that is higher.
    ratio: a log2 axis with the bars drawn up or down from 1.0 (2x and 0.5x equally long)."""
    n = max(1, len(series))
    width = 0.8 / n
    for i, s in enumerate(series):
        xs, hs, lo, hi = [], [], [], []
        for g, name in enumerate(groups):
            v = values.get((name, s))
            if v is None:
                continue
            xs.append(g - 0.4 + width * (i + 0.5))
            hs.append(v)
            low, high = (spans or {}).get((name, s), (v, v))
            lo.append(max(0.0, v - low))
            hi.append(max(0.0, high - v))
        if not xs:
            continue
        kw = {"yerr": [lo, hi], "capsize": 2, "ecolor": "#333333"} if spans else {}
        if ratio:
            ax.bar(xs, [h - 1 for h in hs], width, bottom=1, label=label(s), color=color(s), **kw)
        else:
            ax.bar(xs, hs, width, label=label(s), color=color(s), **kw)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=35, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    plain = FuncFormatter(lambda y, _: f"{y:g}")
    if ratio:
        ends = [v for v in values.values() if v > 0]
        ends += [x for span in (spans or {}).values() for x in span if x > 0]
        if ends:
            ax.set_yscale("log", base=2)
            ax.set_ylim(min(min(ends), 1) / 1.25, max(max(ends), 1) * 1.25)
            ax.yaxis.set_major_locator(LogLocator(base=2, numticks=30))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.axhline(1.0, color="#d62728", linewidth=1)
    elif log:
        # Bars from a power of ten below the smallest value, so their heights compare.
        shown = [v for v in values.values() if v > 0]
        ax.set_yscale("log")
        if shown:
            bottom = 10 ** math.floor(math.log10(min(shown)))
            top = max(shown) * 1.3
            if floor is not None:
                bottom = max(bottom, floor)
                top = max(top, floor * 10)
            ax.set_ylim(bottom, top)
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(FuncFormatter(minor_label))
    ax.grid(axis="y", alpha=0.3)


def minor_label(y, _):
    """Labels 2 and 5 of each decade on a log axis (a range within one decade has no
    major tick to read)."""
    if y <= 0:
        return ""
    lead = y / 10 ** math.floor(math.log10(y) + 1e-9)
    return f"{y:g}" if min(abs(lead - 2), abs(lead - 5)) < 1e-6 else ""


def legend(fig, axes):
    """One legend for the figure, above the panels, from the panel with the most series."""
    handles, labels = max((a.get_legend_handles_labels() for a in axes), key=lambda hl: len(hl[1]))
    if labels:
        top = 1 - 0.27 / fig.get_figheight()
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, top), ncol=len(labels),
                   fontsize=8, frameon=False)


def save(fig, out, name, written):
    # Room at the top for the title and the legend under it (tight_layout pads too).
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.42 / fig.get_figheight()))
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


def short(workload):
    return workload.replace("oltp_", "").replace("select_random_", "random_")


# --- sysbench --------------------------------------------------------------------------


def sysbench_plots(rows, out, written):
    regimes = ordered(r["regime"] for r in rows)
    durabilities = ordered(r["durability"] for r in rows)
    engines = engines_ordered(r["engine"] for r in rows)
    workloads = ordered(r["workload"] for r in rows)
    others = [e for e in engines if e != BASELINE] if BASELINE in engines else []
    cache = {r["regime"]: r["cache"] for r in rows}
    cells = defaultdict(list)  # (regime, durability, threads, workload, engine) -> rows
    for r in rows:
        cells[(r["regime"], r["durability"], int(r["threads"]), r["workload"], r["engine"])].append(r)
    panels = [(g, d) for g in regimes for d in durabilities if any(k[0] == g and k[1] == d for k in cells)]

    def top_threads(g, d):
        return max(k[2] for k in cells if k[0] == g and k[1] == d)

    def title(g, d, t=None):
        return f"{g} cache ({cache[g]}), {d}" + (f", {t} threads" if t else "")

    if others:
        fig, axes = grid(len(panels), width=7.0)
        for ax, (g, d) in zip(axes, panels):
            t = top_threads(g, d)
            values, spans = {}, {}
            for w in workloads:
                base = {r["round"]: float(r["tps"]) for r in cells[(g, d, t, w, BASELINE)]}
                for e in others:
                    ratios = [float(r["tps"]) / base[r["round"]] for r in cells[(g, d, t, w, e)]
                              if base.get(r["round"], 0) > 0 and float(r["tps"]) > 0]
                    if ratios:
                        values[(short(w), e)] = mean(ratios)
                        spans[(short(w), e)] = (min(ratios), max(ratios))
            bars(ax, [short(w) for w in workloads], others, values, spans, ratio=True)
            ax.set_ylabel(f"throughput / {BASELINE} (log scale)")
            ax.set_title(title(g, d, t), fontsize=10)
        legend(fig, axes)
        fig.suptitle(f"sysbench: throughput ratio to {BASELINE} (whiskers: min..max over rounds)", fontsize=11)
        save(fig, out, "sysbench-ratio.png", written)

    for g, d in panels:
        fig, axes = grid(len(workloads), width=3.4, height=2.7, cols=min(5, len(workloads)))
        for ax, w in zip(axes, workloads):
            for e in engines:
                pts = sorted(
                    (k[2], [float(r["tps"]) for r in v]) for k, v in cells.items()
                    if k[:2] == (g, d) and k[3] == w and k[4] == e)
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                ys = [mean(p[1]) for p in pts]
                lo = [y - min(p[1]) for y, p in zip(ys, pts)]
                hi = [max(p[1]) - y for y, p in zip(ys, pts)]
                ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", markersize=3, capsize=2,
                            color=color(e), label=label(e))
                ax.set_xticks(xs)
            ax.set_title(short(w), fontsize=9)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
        legend(fig, axes)
        axes[0].set_ylabel("transactions/s", fontsize=8)
        fig.suptitle(f"sysbench throughput against threads: {title(g, d)}", fontsize=11)
        save(fig, out, f"sysbench-threads-{g}-{d}.png", written)

    for metric, name, ylabel, kw in [
        ("p99", "sysbench-p99.png", "p99 latency, ms", {"log": True}),
        ("written", "sysbench-written.png", "KiB written per transaction", {"log": True, "floor": 0.01}),
    ]:
        fig, axes = grid(len(panels), width=7.0)
        for ax, (g, d) in zip(axes, panels):
            t = top_threads(g, d)
            values = {}
            for w in workloads:
                for e in engines:
                    rs = cells[(g, d, t, w, e)]
                    if not rs:
                        continue
                    if metric == "p99":
                        v = mean([float(r["p99_ms"]) for r in rs])
                        if v > 0:
                            values[(short(w), e)] = v
                    else:
                        txns = sum(int(r["transactions"]) for r in rs)
                        if txns:
                            values[(short(w), e)] = sum(int(r["bytes_written"]) for r in rs) / 1024 / txns
            bars(ax, [short(w) for w in workloads], engines, values, **kw)
            ax.set_ylabel(ylabel)
            ax.set_title(title(g, d, t), fontsize=10)
        legend(fig, axes)
        note = "; log scale from 0.01: read-only workloads write ~0" if metric == "written" else "; log scale"
        fig.suptitle(f"sysbench: {ylabel} (mean over rounds{note})", fontsize=11)
        save(fig, out, name, written)


# --- TPC-C-like ------------------------------------------------------------------------


def tpcc_plots(rows, out, written):
    engines = engines_ordered(r["engine"] for r in rows)
    configs = ordered((r["durability"], r["warehouses"], r["threads"]) for r in rows)
    several = len({c[1:] for c in configs}) > 1

    def name(c):
        return f"{c[0]}, {c[1]} wh, {c[2]} thr" if several else c[0]

    by = defaultdict(list)
    for r in rows:
        by[((r["durability"], r["warehouses"], r["threads"]), r["engine"])].append(r)
    values, spans = {}, {}
    for c in configs:
        for e in engines:
            nopm = [float(r["nopm"]) for r in by[(c, e)]]
            if nopm:
                values[(name(c), e)] = mean(nopm)
                spans[(name(c), e)] = (min(nopm), max(nopm))
    fig, axes = grid(1, width=max(6.0, 2.2 * len(configs)), height=4.0, cols=1)
    ax = axes[0]
    bars(ax, [name(c) for c in configs], engines, values, spans)
    ax.set_xticklabels([name(c) for c in configs], rotation=0, ha="center", fontsize=9)
    width = 0.8 / len(engines)
    for g, c in enumerate(configs):
        base = values.get((name(c), BASELINE))
        for i, e in enumerate(engines):
            v = values.get((name(c), e))
            if v is None or not base or e == BASELINE:
                continue
            ax.annotate(f"{v / base:.2f}x", (g - 0.4 + width * (i + 0.5), spans[(name(c), e)][1]),
                        ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("new orders per minute (NOPM)")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.08)
    legend(fig, axes)
    fig.suptitle("TPC-C-like: NOPM per engine", fontsize=11)
    ax.set_title(f"whiskers: min..max over rounds; labels: ratio to {BASELINE}", fontsize=9)
    save(fig, out, "tpcc-nopm.png", written)

    fig, axes = grid(len(configs), width=6.0)
    for ax, c in zip(axes, configs):
        values = {}
        for e in engines:
            for t in TPCC_TYPES:
                v = [float(r[f"p99_{t}_ms"]) for r in by[(c, e)] if r.get(f"p99_{t}_ms")]
                if v and mean(v) > 0:
                    values[(t, e)] = mean(v)
        bars(ax, TPCC_TYPES, engines, values, log=True)
        ax.set_ylabel("p99 latency, ms")
        ax.set_title(name(c), fontsize=10)
    legend(fig, axes)
    fig.suptitle("TPC-C-like: p99 latency per transaction type (mean over rounds)", fontsize=11)
    save(fig, out, "tpcc-p99.png", written)


# --- large values ----------------------------------------------------------------------


def large_values_plots(rows, out, written):
    engines = engines_ordered(r["engine"] for r in rows)
    others = [e for e in engines if e != BASELINE] if BASELINE in engines else []

    def name(r):
        return r["test"] if r["access"] in ("", "-") else f"{r['test']} {r['access']}"

    tests = ordered(name(r) for r in rows)
    by = defaultdict(list)
    for r in rows:
        by[(name(r), r["engine"])].append(r)
    if others:
        values, spans = {}, {}
        for t in tests:
            base = {r["round"]: float(r["ops_per_sec"]) for r in by[(t, BASELINE)]}
            for e in others:
                ratios = [float(r["ops_per_sec"]) / base[r["round"]] for r in by[(t, e)]
                          if base.get(r["round"], 0) > 0 and float(r["ops_per_sec"]) > 0]
                if ratios:
                    values[(t, e)] = mean(ratios)
                    spans[(t, e)] = (min(ratios), max(ratios))
        fig, axes = grid(1, width=max(7.0, 0.9 * len(tests)), height=4.0, cols=1)
        bars(axes[0], tests, others, values, spans, ratio=True)
        axes[0].set_ylabel(f"ops/s / {BASELINE} (log scale)")
        legend(fig, axes)
        fig.suptitle(f"Large values: ops/s ratio to {BASELINE} (whiskers: min..max over rounds)", fontsize=11)
        save(fig, out, "large-values-ratio.png", written)
    values = {}
    for t in tests:
        for e in engines:
            v = [float(r["p99_ms"]) for r in by[(t, e)] if r.get("p99_ms") not in (None, "", "-")]
            if v and mean(v) > 0:
                values[(t, e)] = mean(v)
    shown = [t for t in tests if any((t, e) in values for e in engines)]
    if shown:
        fig, axes = grid(1, width=max(7.0, 0.9 * len(shown)), height=4.0, cols=1)
        bars(axes[0], shown, engines, values, log=True)
        axes[0].set_ylabel("p99 latency, ms")
        legend(fig, axes)
        fig.suptitle("Large values: p99 latency per test (mean over rounds)", fontsize=11)
        save(fig, out, "large-values-p99.png", written)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py OUT_DIR")
    where = sys.argv[1]
    out = os.path.join(where, "plots")
    os.makedirs(out, exist_ok=True)
    written = []
    for csv_name, plots in [("sysbench.csv", sysbench_plots), ("tpcc.csv", tpcc_plots),
                            ("large-values.csv", large_values_plots)]:
        rows = read_csv(os.path.join(where, csv_name))
        if rows:
            plots(rows, out, written)
    for path in written:
        print(path)


if __name__ == "__main__":
    main()
