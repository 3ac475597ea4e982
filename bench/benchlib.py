"""Helpers shared by the bench/ Python scripts (imported from the script's own directory)."""

import csv
import math
import os


def ordered(values):
    """The distinct values in their first order."""
    return list(dict.fromkeys(values))


ENGINE_ORDER = ("TidesDB", "InnoDB", "RocksDB")


def engines_ordered(values):
    """The distinct engines, TidesDB, InnoDB and RocksDB first: the scripts rotate which engine
    starts each round, so the order they first appear in says nothing."""
    found = ordered(values)
    known = [e for e in ENGINE_ORDER if e in found]
    return known + [e for e in found if e not in ENGINE_ORDER]


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
