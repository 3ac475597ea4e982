"""Helpers shared by the bench/ Python scripts (imported from the script's own directory)."""

import csv
import math
import os


def ordered(values):
    """The distinct values in their first order."""
    return list(dict.fromkeys(values))


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0


def read_csv(path):
    """The rows of a CSV file with a header, as dicts; [] if the file is not there."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
