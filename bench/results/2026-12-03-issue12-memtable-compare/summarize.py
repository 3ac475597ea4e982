#!/usr/bin/env python3
# Summarizes kvbench before/after summary lines (see command.sh): per workload, TidesDB ops/s
# median (min-max) per side, after/before per round, TidesDB/RocksDB medians.
import sys, statistics as st, collections
rows = collections.defaultdict(lambda: collections.defaultdict(dict))  # wl -> tag -> round -> (t, r)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] in ("before", "after") and len(f) == 6:
        tag, rnd, wl, t, r, _ = f
        rows[wl][tag][rnd] = (float(t), float(r))
def k(x): return f"{x/1000:.0f}K"
print("| workload | TidesDB before: median (min-max) | TidesDB after: median (min-max) | after/before per round: median (min-max) | TidesDB/RocksDB before -> after (medians) |")
print("|---|---:|---:|---|---|")
for wl in ("fillrandom", "overwrite", "fillseq", "readrandom"):
    b, a = rows[wl]["before"], rows[wl]["after"]
    rounds = sorted(set(b) & set(a), key=lambda s: int(s[1:]))
    bt = [b[x][0] for x in rounds]; at = [a[x][0] for x in rounds]
    pairs = [a[x][0] / b[x][0] for x in rounds]
    br = [b[x][0] / b[x][1] for x in rounds]; ar = [a[x][0] / a[x][1] for x in rounds]
    print(f"| {wl} | {k(st.median(bt))} ({k(min(bt))}-{k(max(bt))}) | {k(st.median(at))} ({k(min(at))}-{k(max(at))}) | "
          f"{st.median(pairs):.2f} ({min(pairs):.2f}-{max(pairs):.2f}) | {st.median(br):.2f} -> {st.median(ar):.2f} |")
    print("   pairs:", " ".join(f"{p:.2f}" for p in pairs), file=sys.stderr)
