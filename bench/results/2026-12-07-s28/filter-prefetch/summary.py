#!/usr/bin/env python3
"""Per run of command.sh: transactions per second, and the server's perf samples per
thousand transactions (12 s at 999 Hz), in all and in each symbol substring given."""
import re
import sys

out, symbols = sys.argv[1], sys.argv[2:]
print("round build tps samples/ktxn " + " ".join(symbols))
for line in open(f"{out}/runs.txt"):
    rnd, build, tps = line.split()
    ktxn = float(tps) * 12 / 1000
    total, per = 0, {s: 0 for s in symbols}
    for row in open(f"{out}/{rnd}.{build}/samples.txt"):
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+\S+\s+\[.\]\s+(.*)", row)
        if not m:
            continue
        n = int(m.group(1))
        total += n
        for s in symbols:
            if s in m.group(2):
                per[s] += n
    print(rnd, build, tps, "%.1f" % (total / ktxn), " ".join("%.2f" % (per[s] / ktxn) for s in symbols))
