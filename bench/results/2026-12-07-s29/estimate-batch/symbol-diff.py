#!/usr/bin/env python3
"""Per symbol, the server's samples per thousand transactions of two builds, summed over
the rounds of a filter-prefetch/command.sh run (OUT/runs.txt and OUT/R.BUILD/samples.txt),
sorted by the change: the N that fell most, then the N that rose most, then the totals.
Usage: symbol-diff.py OUT BUILD_A BUILD_B [N]"""
import collections
import re
import sys

out, a, b = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 15
line_re = re.compile(r"\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*)")
samples = {a: collections.Counter(), b: collections.Counter()}
ktxn = {a: 0.0, b: 0.0}
for line in open(f"{out}/runs.txt"):
    rnd, build, tps = line.split()
    if build not in samples:
        continue
    ktxn[build] += float(tps) * 12 / 1000  # the profile spans 12 s
    for s in open(f"{out}/{rnd}.{build}/samples.txt"):
        m = line_re.match(s)
        if m:
            samples[build][(m.group(2), m.group(3)[:90])] += int(m.group(1))
rate = {x: {k: v / ktxn[x] for k, v in samples[x].items()} for x in samples}
keys = sorted(set(rate[a]) | set(rate[b]), key=lambda k: rate[b].get(k, 0) - rate[a].get(k, 0))
print(f"{a:>8} {b:>8}  samples per thousand transactions, dso symbol")
for k in keys[:n] + keys[-n:]:
    print(f"{rate[a].get(k, 0):8.2f} {rate[b].get(k, 0):8.2f}  {k[0]} {k[1]}")
print(f"{sum(rate[a].values()):8.1f} {sum(rate[b].values()):8.1f}  total")
