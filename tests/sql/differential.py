#!/usr/bin/python3
"""Randomized differential test: TidesDB against InnoDB, statement by statement.

Each case makes a random schema (integer, DECIMAL, DOUBLE, string, binary, TEXT/BLOB, date,
ENUM columns, nullable or not; a single, composite or no primary key; secondary, UNIQUE,
composite, prefix and DESC indexes) and creates it twice in one private server: di.t with
ENGINE=InnoDB and dt.t with ENGINE=TidesDB, each used by its own connection. Then a random
stream of statements (multi-row INSERT, INSERT IGNORE, REPLACE, INSERT ... ON DUPLICATE KEY
UPDATE, INSERT ... SELECT, UPDATE / DELETE by primary key, by secondary index, by range,
with ORDER BY ... LIMIT, UPDATE of key columns, transactions with savepoints and ROLLBACK,
and queries: point, range, ordered, reverse, covering, GROUP BY, aggregates, joins,
FORCE INDEX on every index) goes to both. For each statement the two answers must agree:
error code, affected rows, warning codes, and the result rows (as a list when the ORDER BY
determines the order, as a multiset otherwise). A case ends with CHECK TABLE and a full
comparison of the contents through every index.

Statements never depend on earlier answers, so a seed replays exactly. On a mismatch the
test prints the seed, the schema, the statement and both answers, then shrinks the case to
a minimal statement sequence that still disagrees (--no-shrink to skip). Engine bugs
already reported are listed in KNOWN_BUGS; --tolerate NAME (or all) looks past one, either
by not generating what triggers it or by recognising its signature.

    tests/sql/differential.py                       # about 90 s, random seed
    tests/sql/differential.py --seed 42 --duration 30
    tests/sql/differential.py --seed 42 --case 17   # replay one case
    tests/sql/differential.py --tolerate all        # past the known bugs
"""

import argparse
import collections
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pymysql  # noqa: E402

from private_server import DEFAULT_PLUGIN, PrivateServer, ServerError  # noqa: E402

ENGINES = ("InnoDB", "TidesDB")
DBS = ("di", "dt")

# --- values ----------------------------------------------------------------------------------

CI_STRINGS = ["", "a", "A", "a ", "ab", "AB", "Ab ", "b", "B", "abc", "abd", "é", "e", "E", "ß", "ss",
              "z", "zz", "日本", "😀", "😁", "x" * 20, "a\tb", "0", "10", "9"]
BIN_STRINGS = ["", "a", "A", "a ", "ab", "AB", "b", "B", "abc", "é", "É", "e", "z", "zz", "x" * 20, "0", "10"]
BYTES = [b"", b"\x00", b"\x00\x00", b"a", b"A", b"a ", b"a\x00", b"ab", b"b", b"\xff", b"\xff\xfe", b"\x7f",
         b"0", b"10"]
DATES = ["2020-01-01", "2020-01-02", "1999-12-31", "2000-02-29", "1000-01-01", "9999-12-31", "2024-06-15",
         "0000-00-00"]
DATETIMES = ["2020-01-01 00:00:00", "2020-01-01 00:00:00.000001", "2020-01-01 00:00:00.5",
             "1999-12-31 23:59:59.999999", "2038-01-19 03:14:08", "1000-01-01 00:00:00",
             "9999-12-31 23:59:59.999999", "2020-01-01 12:00:00"]
ENUMS = ["a", "b", "c", "x y"]
DECIMALS = ["0", "1.5", "-1.5", "2.25", "-0.001", "1234567.891", "9999999.999", "-9999999.999", "3", "0.125"]
DOUBLES = [0.0, 1.5, -1.5, 2.25, 1e100, -1e-10, 3.0, 0.1, 12345.678]
INT_RANGES = {"int": (-2147483648, 2147483647), "uint": (0, 4294967295),
              "bigint": (-9223372036854775808, 9223372036854775807), "ubigint": (0, 18446744073709551615)}


class Sql(str):
    """A literal SQL expression (not quoted)."""


def lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, Sql):
        return str(v)
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return "X'%s'" % v.hex()
    return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"


def long_string(rng, n):
    # A distinct head, so that ORDER BY (which sorts on the first max_sort_length bytes)
    # never ties two different long values.
    return "L%04d" % rng.randrange(10000) + "-" * n


class Col:
    def __init__(self, name, kind, rng):
        self.name = name
        self.kind = kind
        self.nullable = rng.random() < 0.4
        self.length = None
        if kind in ("vchar_ci", "vchar_bin", "varbinary"):
            self.length = rng.choice([4, 8, 16, 64])
        elif kind == "char":
            self.length = rng.choice([1, 3, 10])
            self.char_ci = rng.random() < 0.5
        self.sqltype = {
            "int": "INT", "uint": "INT UNSIGNED", "bigint": "BIGINT", "ubigint": "BIGINT UNSIGNED",
            "decimal": "DECIMAL(10,3)", "double": "DOUBLE",
            "vchar_ci": "VARCHAR(%s) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci" % self.length,
            "vchar_bin": "VARCHAR(%s) CHARACTER SET latin1 COLLATE latin1_bin" % self.length,
            "char": "CHAR(%s) %s" % (self.length, "CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
                                     if kind == "char" and getattr(self, "char_ci", False)
                                     else "CHARACTER SET latin1 COLLATE latin1_bin"),
            "varbinary": "VARBINARY(%s)" % self.length,
            "text": "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", "blob": "BLOB",
            "date": "DATE", "datetime": "DATETIME(6)", "enum": "ENUM('a','b','c','x y')",
        }[kind]
        # Values compare equal while their bytes differ (case, accents, trailing spaces):
        # MIN/MAX/GROUP BY/DISTINCT on them may show any member of the class.
        self.ambiguous = kind in ("vchar_ci", "vchar_bin", "text") or (kind == "char" and self.char_ci)
        self.is_string = kind in ("vchar_ci", "vchar_bin", "char", "varbinary", "text", "blob")
        self.is_int = kind in INT_RANGES
        # A small pool of values per column, so keys collide often.
        self.pool = self.make_pool(rng)

    def make_pool(self, rng):
        k = self.kind
        if k in INT_RANGES:
            lo, hi = INT_RANGES[k]
            base = [v for v in range(-3, 25) if lo <= v <= hi]
            return rng.sample(base, 10) + [lo, hi]
        if k == "decimal":
            return rng.sample(DECIMALS, 7)
        if k == "double":
            return rng.sample(DOUBLES, 6)
        if k == "vchar_ci":
            return rng.sample(CI_STRINGS, 10)
        if k in ("vchar_bin", "char"):
            return rng.sample(CI_STRINGS if getattr(self, "char_ci", False) else BIN_STRINGS, 9)
        if k == "varbinary":
            return rng.sample(BYTES, 8)
        if k == "text":
            return rng.sample(CI_STRINGS, 8) + [long_string(rng, 300), long_string(rng, 3000)]
        if k == "blob":
            return rng.sample(BYTES, 7) + [long_string(rng, 500).encode(), b"\x00" + long_string(rng, 2000).encode()]
        if k == "date":
            return rng.sample(DATES, 6)
        if k == "datetime":
            return rng.sample(DATETIMES, 6)
        if k == "enum":
            return list(ENUMS)
        raise AssertionError(k)

    def value(self, rng, allow_null=True):
        """A value to store; allow_null=False: a value to compare with (no NULL, and no odd
        value, whose conversion warning would be repeated once per row the plan evaluates)."""
        r = rng.random()
        if allow_null and self.nullable and r < 0.12:
            return None
        if r < 0.015 and allow_null:
            return None  # NOT NULL column: error 1048 (or a warning for IGNORE)
        if r < 0.03 and allow_null:
            return self.odd_value(rng)
        if r < 0.2:
            return self.fresh_value(rng)
        return rng.choice(self.pool)

    def fresh_value(self, rng):
        k = self.kind
        if k in INT_RANGES:
            lo, hi = INT_RANGES[k]
            return rng.randint(max(lo, -1000), min(hi, 1000))
        if k == "decimal":
            return Sql("%d.%03d" % (rng.randint(-9999, 9999), rng.randint(0, 999)))
        if k == "double":
            return rng.choice([float(rng.randint(-100, 100)) / 4, rng.randint(-10, 10) * 1e20])
        if k in ("vchar_ci", "vchar_bin", "char", "text"):
            alphabet = "aAbBzZ é" if k != "vchar_bin" else "aAbBz é"
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, min(6, self.length or 6))))
        if k in ("varbinary", "blob"):
            return bytes(rng.choice([0, 1, 97, 98, 255]) for _ in range(rng.randint(1, min(6, self.length or 6))))
        if k == "date":
            return "%04d-%02d-%02d" % (rng.choice([1999, 2020, 2021]), rng.randint(1, 12), rng.randint(1, 28))
        if k == "datetime":
            return "2020-%02d-%02d %02d:%02d:%02d.%06d" % (rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                                                          rng.randint(0, 59), rng.randint(0, 59), rng.choice([0, 1, 500000, 999999]))
        return rng.choice(ENUMS)

    def odd_value(self, rng):
        """Out of range, too long, not representable: errors or warnings."""
        k = self.kind
        if k in INT_RANGES:
            lo, hi = INT_RANGES[k]
            return rng.choice([lo - 1, hi + 1, Sql("'12abc'"), Sql("1.5"), Sql("-0.4")])
        if k == "decimal":
            return rng.choice([Sql("99999999.5"), Sql("1.23456"), Sql("'x'")])
        if k == "double":
            return rng.choice([Sql("'1e400'"), Sql("'abc'"), Sql("7.0E-300")])
        if k in ("vchar_ci", "vchar_bin", "char", "varbinary"):
            return rng.choice(["y" * ((self.length or 1) + 1), "日本語" if k != "varbinary" else b"\x00" * 80])
        if k == "text":
            return "T" * 70000
        if k == "blob":
            return b"\x01" * 70000
        if k == "date":
            return rng.choice(["2020-13-01", "2021-02-29", "abc", "2020-01-01 10:00:00"])
        if k == "datetime":
            return rng.choice(["2020-01-01 25:00:00", "2020-01-01 10:00:00.1234567", "x"])
        return rng.choice(["A", "q", "", Sql("2")])

    def definition(self):
        return "%s %s %s" % (self.name, self.sqltype, "NULL" if self.nullable else "NOT NULL")

    def order_expr(self):
        """An expression that orders rows totally on this column (no collation ties)."""
        if self.kind in ("vchar_ci", "vchar_bin", "char", "text"):
            return "CAST(%s AS BINARY)" % self.name
        return self.name


class Index:
    def __init__(self, name, kind, parts):
        self.name = name  # "PRIMARY" for the primary key
        self.kind = kind  # PRIMARY, UNIQUE, KEY
        self.parts = parts  # [(Col, prefix or None, desc)]

    def definition(self):
        parts = ", ".join("%s%s%s" % (c.name, "(%d)" % p if p else "", " DESC" if d else "")
                          for c, p, d in self.parts)
        if self.kind == "PRIMARY":
            return "PRIMARY KEY (%s)" % parts
        return "%s %s (%s)" % ("UNIQUE KEY" if self.kind == "UNIQUE" else "KEY", self.name, parts)

    def cols(self):
        return [c for c, _, _ in self.parts]


class Schema:
    avoid = ()  # known bugs not to generate (--tolerate)
    KINDS = ["int", "uint", "bigint", "ubigint", "decimal", "double", "vchar_ci", "vchar_bin", "char",
             "varbinary", "text", "blob", "date", "datetime", "enum"]

    def __init__(self, rng):
        ncols = rng.randint(2, 7)
        weights = [3, 1, 2, 1, 1, 1, 3, 2, 1, 1, 1, 1, 1, 1, 1]
        self.cols = [Col("c%d" % i, rng.choices(self.KINDS, weights)[0], rng) for i in range(ncols)]
        if not any(c.is_int for c in self.cols):
            self.cols[0] = Col("c0", "int", rng)
        self.indexes = []
        r = rng.random()
        if r < 0.45:
            self.add_index(rng, "PRIMARY", 1)
        elif r < 0.8:
            self.add_index(rng, "PRIMARY", rng.randint(2, 3))
        for i in range(rng.randint(0, 4)):
            kind = rng.choice(["KEY", "KEY", "UNIQUE"])
            self.add_index(rng, kind, rng.choice([1, 1, 2, 2, 3]), "k%d" % i)
        self.pk = self.indexes[0] if self.indexes and self.indexes[0].kind == "PRIMARY" else None
        for c, _, _ in (self.pk.parts if self.pk else []):
            c.nullable = False
        # Columns of a unique key or the primary key: an UPDATE of one of them can collide
        # with another row, so the order it visits rows in must be fixed (ORDER BY).
        self.unique_cols = {c.name for ix in self.indexes if ix.kind != "KEY" for c in ix.cols()}
        # A total order of the rows: the primary key, else every column.
        if self.pk:
            self.full_order = [c.name for c in self.pk.cols()]
        else:
            self.full_order = [c.order_expr() for c in self.cols]

    def add_index(self, rng, kind, nparts, name=None):
        candidates = list(self.cols)
        rng.shuffle(candidates)
        parts = []
        for c in candidates[:nparts]:
            prefix = None
            if c.kind in ("text", "blob"):
                if kind == "PRIMARY" and (rng.random() < 0.7 or "prefix-pk-index-merge" in self.avoid):
                    continue
                prefix = rng.choice([1, 2, 3, 8])
            elif c.is_string and (c.length or 0) > 2 and rng.random() < 0.3:
                prefix = rng.randint(1, min(4, c.length - 1))
                if kind == "PRIMARY" and "prefix-pk-index-merge" in self.avoid:
                    prefix = None
            desc = kind != "PRIMARY" and rng.random() < 0.3 or kind == "PRIMARY" and rng.random() < 0.1
            parts.append((c, prefix, desc))
        if not parts:
            return
        self.indexes.append(Index(name or "PRIMARY", kind, parts))

    def create(self, engine="%ENGINE%"):
        defs = [c.definition() for c in self.cols] + [ix.definition() for ix in self.indexes]
        return "CREATE TABLE t (%s) ENGINE=%s DEFAULT CHARSET=utf8mb4" % (", ".join(defs), engine)


# --- statements ------------------------------------------------------------------------------

class Stmt:
    __slots__ = ("sql", "ordered", "kind")

    def __init__(self, sql, ordered=False, kind="query"):
        self.sql = sql
        self.ordered = ordered  # the rows' order is determined: compare as lists
        self.kind = kind  # query, dml, txn, ddl, check, setup

    def __repr__(self):
        return self.sql


class Generator:
    def __init__(self, schema, rng, avoid=()):
        self.s = schema
        self.rng = rng
        # Known bugs whose statements are not generated (--tolerate).
        self.buffer_pk_updates = "pk-update-scan" in avoid
        self.fresh_savepoints = "savepoint-reuse" in avoid

        self.in_txn = False
        self.savepoints = []
        self.txn_left = 0
        self.q = ""  # the table qualifier of the columns in conditions (joins)

    # conditions
    def eq(self, c):
        n = self.q + c.name
        v = c.value(self.rng, allow_null=False)
        if c.nullable and self.rng.random() < 0.1:
            return "%s IS NULL" % n
        if self.rng.random() < 0.05:
            return "%s <=> %s" % (n, lit(v))
        return "%s = %s" % (n, lit(v))

    def range_cond(self, c):
        n = self.q + c.name
        rng = self.rng
        a, b = lit(c.value(rng, False)), lit(c.value(rng, False))
        r = rng.random()
        if r < 0.2:
            return "%s > %s" % (n, a)
        if r < 0.35:
            return "%s <= %s" % (n, a)
        if r < 0.55:
            return "%s BETWEEN %s AND %s" % (n, a, b)
        if r < 0.7:
            return "%s IN (%s, %s, %s)" % (n, a, b, lit(c.value(rng, False)))
        if r < 0.78 and c.is_string:
            return "%s LIKE %s" % (n, lit(rng.choice(["a%", "A%", "%b", "_", "x%", "é%"])))
        if r < 0.85 and c.nullable:
            return "%s IS NOT NULL" % n
        if r < 0.92:
            return "%s <> %s" % (n, a)
        return "%s >= %s" % (n, a)

    def index_cond(self, ix):
        """Equalities on a leading part of the index, perhaps a range on the next part."""
        parts = ix.cols()
        k = self.rng.randint(0, len(parts))
        conds = [self.eq(c) for c in parts[:k]]
        if k < len(parts) and (k == 0 or self.rng.random() < 0.6):
            conds.append(self.range_cond(parts[k]))
        return " AND ".join(conds) if conds else "1"

    def where(self):
        rng = self.rng
        r = rng.random()
        if r < 0.5 and self.s.indexes:
            cond = self.index_cond(rng.choice(self.s.indexes))
        elif r < 0.8:
            cond = self.range_cond(rng.choice(self.s.cols))
        elif r < 0.9:
            cond = "%s OR %s" % (self.eq(rng.choice(self.s.cols)), self.eq(rng.choice(self.s.cols)))
        else:
            cond = self.eq(rng.choice(self.s.cols))
        return cond

    def pk_where(self):
        if not self.s.pk:
            return " AND ".join(self.eq(c) for c in self.s.cols[:2])
        return " AND ".join("%s = %s" % (c.name, lit(c.value(self.rng, False))) for c in self.s.pk.cols())

    def force(self, ix=None):
        if ix is None:
            if not self.s.indexes or self.rng.random() < 0.4:
                return ""
            ix = self.rng.choice(self.s.indexes)
        return " FORCE INDEX (%s)" % ("`PRIMARY`" if ix.name == "PRIMARY" else ix.name)

    def order_full(self, desc=None):
        if desc is None:
            desc = self.rng.random() < 0.3
        return " ORDER BY " + ", ".join(e + (" DESC" if desc else "") for e in self.s.full_order)

    def select_list(self):
        if self.rng.random() < 0.5:
            return "*"
        cols = self.rng.sample(self.s.cols, self.rng.randint(1, len(self.s.cols)))
        return ", ".join(c.name for c in cols)

    # queries
    def query(self):
        rng = self.rng
        s = self.s
        r = rng.random()
        lock = ""
        if self.in_txn and rng.random() < 0.1:
            lock = rng.choice([" FOR UPDATE", " LOCK IN SHARE MODE"])
        if r < 0.1:
            return Stmt("SELECT * FROM t WHERE %s%s" % (self.pk_where(), lock))
        if r < 0.3 and s.indexes:
            ix = rng.choice(s.indexes)
            sql = "SELECT %s FROM t%s WHERE %s" % (self.select_list(), self.force(ix), self.index_cond(ix))
            if rng.random() < 0.5:
                sql += self.order_full()
                if rng.random() < 0.5:
                    sql += " LIMIT %d" % rng.randint(1, 5)
                return Stmt(sql + lock, ordered=True)
            return Stmt(sql + lock)
        if r < 0.45 and s.indexes:
            # Ordered along an index, forward or backward, the full order breaking ties.
            ix = rng.choice(s.indexes)
            back = rng.random() < 0.5
            order = ", ".join("%s%s" % (c.name, " DESC" if d != back else "") for c, _, d in ix.parts)
            order += ", " + ", ".join(e + (" DESC" if back else "") for e in s.full_order)
            cond = self.index_cond(ix)
            limit = " LIMIT %d" % rng.randint(1, 6) if rng.random() < 0.4 else ""
            return Stmt("SELECT %s FROM t%s WHERE %s ORDER BY %s%s%s"
                        % (self.select_list(), self.force(ix), cond, order, limit, lock), ordered=True)
        if r < 0.55 and s.indexes:
            # Covering: only the index's columns (and the primary key's).
            ix = rng.choice(s.indexes)
            cols = [c.name for c in ix.cols()] + [c.name for c in (s.pk.cols() if s.pk else []) if c not in ix.cols()]
            return Stmt("SELECT %s FROM t%s WHERE %s" % (", ".join(cols), self.force(ix), self.index_cond(ix)))
        if r < 0.65:
            return self.aggregate()
        if r < 0.75:
            return self.group_by()
        if r < 0.8 and s.indexes:
            ix = rng.choice(s.indexes)
            c = ix.cols()[0]
            self.q = "a."
            cond = self.where()
            self.q = ""
            return Stmt("SELECT a.*, b.* FROM t a JOIN t b%s ON a.%s = b.%s WHERE %s"
                        % (self.force(ix), c.name, c.name, cond))
        if r < 0.85:
            c = rng.choice(s.cols)
            return Stmt("SELECT * FROM t WHERE %s IN (SELECT %s FROM t%s WHERE %s)"
                        % (c.name, c.name, self.force(), self.where()))
        if r < 0.9:
            c = rng.choice([c for c in s.cols if not c.ambiguous] or s.cols)
            if c.ambiguous:
                return Stmt("SELECT COUNT(DISTINCT %s) FROM t" % c.name)
            return Stmt("SELECT DISTINCT %s FROM t%s WHERE %s" % (c.name, self.force(), self.where()))
        sql = "SELECT %s FROM t%s WHERE %s%s" % (self.select_list(), self.force(), self.where(), self.order_full())
        if rng.random() < 0.5:
            sql += " LIMIT %d, %d" % (rng.randint(0, 3), rng.randint(1, 5))
        return Stmt(sql + lock, ordered=True)

    def aggregate(self):
        rng = self.rng
        s = self.s
        exprs = ["COUNT(*)"]
        for c in rng.sample(s.cols, min(len(s.cols), rng.randint(1, 3))):
            opts = ["COUNT(%s)" % c.name, "COUNT(DISTINCT %s)" % c.name]
            if not c.ambiguous:
                opts += ["MIN(%s)" % c.name, "MAX(%s)" % c.name]
            if c.is_int or c.kind == "decimal":
                opts += ["SUM(%s)" % c.name, "AVG(%s)" % c.name]
            exprs.append(rng.choice(opts))
        where = ""
        if s.indexes and rng.random() < 0.5:
            # MIN/MAX of the part after an equality prefix: read from the index's ends.
            ix = rng.choice(s.indexes)
            cols = ix.cols()
            k = rng.randint(0, len(cols) - 1)
            target = cols[k]
            if not target.ambiguous:
                exprs = [rng.choice(["MIN(%s)", "MAX(%s)"]) % target.name, "COUNT(*)"]
            conds = [self.eq(c) for c in cols[:k]]
            where = " WHERE " + (" AND ".join(conds) if conds else "1")
            return Stmt("SELECT %s FROM t%s%s" % (", ".join(exprs), self.force(ix) if rng.random() < 0.5 else "", where))
        if rng.random() < 0.6:
            where = " WHERE " + self.where()
        return Stmt("SELECT %s FROM t%s%s" % (", ".join(exprs), self.force(), where))

    def group_by(self):
        rng = self.rng
        s = self.s
        if s.indexes and rng.random() < 0.5:
            ix = rng.choice(s.indexes)
            group = ix.cols()[:rng.randint(1, len(ix.parts))]
            force = self.force(ix)
        else:
            group = rng.sample(s.cols, rng.randint(1, min(2, len(s.cols))))
            force = self.force()
        shown = [c.name if not c.ambiguous else "MIN(CAST(%s AS BINARY))" % c.name for c in group]
        aggs = ["COUNT(*)"]
        other = [c for c in s.cols if c not in group]
        if other:
            c = rng.choice(other)
            if not c.ambiguous:
                aggs.append(rng.choice(["MIN(%s)", "MAX(%s)"]) % c.name)
            if c.is_int or c.kind == "decimal":
                aggs.append("SUM(%s)" % c.name)
        where = " WHERE " + self.where() if rng.random() < 0.4 else ""
        having = " HAVING COUNT(*) > 1" if rng.random() < 0.2 else ""
        return Stmt("SELECT %s FROM t%s%s GROUP BY %s%s"
                    % (", ".join(shown + aggs), force, where, ", ".join(c.name for c in group), having))

    # writes
    def row(self, cols):
        return "(" + ", ".join(lit(c.value(self.rng)) for c in cols) + ")"

    def insert_cols(self):
        if self.rng.random() < 0.85:
            return self.s.cols
        return [c for c in self.s.cols if not c.nullable or self.rng.random() < 0.5] or self.s.cols

    def assignment(self, c):
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return "%s = %s" % (c.name, lit(c.value(rng)))
        if c.is_int or c.kind in ("decimal", "double"):
            return "%s = %s %s %s" % (c.name, c.name, rng.choice(["+", "-"]), rng.choice(["1", "2", "7"]))
        if c.kind in ("vchar_ci", "vchar_bin", "char", "varbinary"):
            return "%s = %s" % (c.name, rng.choice(["CONCAT(%s, 'x')", "UPPER(%s)", "LEFT(%s, 1)", "REVERSE(%s)"])
                                % c.name)
        if c.kind in ("date", "datetime"):
            return "%s = %s + INTERVAL 1 DAY" % (c.name, c.name)
        return "%s = %s" % (c.name, lit(c.value(rng)))

    def write(self):
        rng = self.rng
        s = self.s
        r = rng.random()
        if r < 0.35:
            cols = self.insert_cols()
            verb = rng.choice(["INSERT", "INSERT", "INSERT IGNORE", "REPLACE", "INSERT"])
            rows = ", ".join(self.row(cols) for _ in range(rng.randint(1, 5)))
            sql = "%s INTO t (%s) VALUES %s" % (verb, ", ".join(c.name for c in cols), rows)
            if verb == "INSERT" and rng.random() < 0.3:
                sets = [self.assignment(c) if rng.random() < 0.6 else "%s = VALUES(%s)" % (c.name, c.name)
                        for c in rng.sample(s.cols, rng.randint(1, min(2, len(s.cols))))]
                sql += " ON DUPLICATE KEY UPDATE " + ", ".join(sets)
            return Stmt(sql, kind="dml")
        if r < 0.4:
            # INSERT ... SELECT from the table itself, one column shifted.
            c = rng.choice(s.cols)
            exprs = []
            for x in s.cols:
                if x is c and x.is_int:
                    exprs.append("%s + %d" % (x.name, rng.randint(1, 9)))
                elif x is c and x.kind in ("vchar_ci", "vchar_bin", "char"):
                    exprs.append("CONCAT(%s, 'q')" % x.name)
                else:
                    exprs.append(x.name)
            verb = rng.choice(["INSERT IGNORE", "REPLACE", "INSERT"])
            return Stmt("%s INTO t SELECT %s FROM t WHERE %s%s LIMIT %d"
                        % (verb, ", ".join(exprs), self.where(), self.order_full(), rng.randint(1, 4)), kind="dml")
        if r < 0.7:
            targets = rng.sample(s.cols, rng.randint(1, min(2, len(s.cols))))
            sets = ", ".join(self.assignment(c) for c in targets)
            ignore = " IGNORE" if rng.random() < 0.15 else ""
            w = rng.random()
            if w < 0.3:
                sql = "UPDATE%s t SET %s WHERE %s" % (ignore, sets, self.pk_where())
                if not s.pk and any(c.name in s.unique_cols for c in targets):
                    sql += self.order_full()  # several rows may match: fix the order
                return Stmt(sql, kind="dml")
            sql = "UPDATE%s t%s SET %s WHERE %s" % (ignore, self.force() if rng.random() < 0.3 else "", sets,
                                                    self.where())
            touches_unique = any(c.name in s.unique_cols for c in targets) or not s.pk
            if touches_unique or ignore or rng.random() < 0.4:
                sql += self.order_full()
                if rng.random() < 0.5:
                    sql += " LIMIT %d" % rng.randint(1, 4)
            return Stmt(sql, kind="dml")
        if r < 0.78 and s.pk:
            # Move rows along the primary key.
            c = rng.choice(s.pk.cols())
            if c.is_int and rng.random() < 0.3:
                # Without ORDER BY: a shift beyond every stored value cannot collide with a row
                # the statement also moves, so the outcome does not depend on the visiting order.
                sql = "UPDATE t SET %s = %s %s 1000003 WHERE %s" % (c.name, c.name, rng.choice("+-"), self.where())
                if self.buffer_pk_updates:
                    sql += self.order_full()
                return Stmt(sql, kind="dml")
            if c.is_int:
                step = rng.choice([1, -1, 2, 10])
                expr = "%s %s %d" % (c.name, "+" if step > 0 else "-", abs(step))
                desc = step > 0
            else:
                expr = lit(c.value(rng, False))
                desc = rng.random() < 0.5
            limit = " LIMIT %d" % rng.randint(1, 3) if rng.random() < 0.5 else ""
            return Stmt("UPDATE t SET %s = %s WHERE %s%s%s" % (c.name, expr, self.where(), self.order_full(desc), limit),
                        kind="dml")
        if r < 0.97:
            w = rng.random()
            if w < 0.3:
                return Stmt("DELETE FROM t WHERE %s" % self.pk_where(), kind="dml")
            sql = "DELETE FROM t WHERE %s" % self.where()
            if rng.random() < 0.4:
                sql += self.order_full() + " LIMIT %d" % rng.randint(1, 3)
            return Stmt(sql, kind="dml")
        if rng.random() < 0.5:
            return Stmt("DELETE FROM t", kind="dml")
        return Stmt("DELETE FROM t ORDER BY %s LIMIT %d" % (", ".join(s.full_order), rng.randint(1, 10)), kind="dml")

    def next(self):
        rng = self.rng
        if self.in_txn:
            self.txn_left -= 1
            if self.txn_left <= 0:
                self.in_txn = False
                self.savepoints = []
                return Stmt(rng.choice(["COMMIT", "COMMIT", "ROLLBACK"]), kind="txn")
            r = rng.random()
            if r < 0.08:
                name = "sp%d" % rng.randint(0, 2)
                if name in self.savepoints and self.fresh_savepoints:
                    name = "sp%d" % (3 + len(self.savepoints) + rng.randint(0, 1000))
                # Setting an existing name again replaces it: it moves to the top.
                if name in self.savepoints:
                    self.savepoints.remove(name)
                self.savepoints.append(name)
                return Stmt("SAVEPOINT " + name, kind="txn")
            if r < 0.14 and self.savepoints:
                name = rng.choice(self.savepoints)
                # Later savepoints are gone after a rollback to an earlier one.
                self.savepoints = self.savepoints[:self.savepoints.index(name) + 1]
                return Stmt("ROLLBACK TO SAVEPOINT " + name, kind="txn")
            if r < 0.16 and self.savepoints:
                # Releasing a savepoint also releases the ones set after it.
                name = rng.choice(self.savepoints)
                self.savepoints = self.savepoints[:self.savepoints.index(name)]
                return Stmt("RELEASE SAVEPOINT " + name, kind="txn")
        elif rng.random() < 0.07:
            self.in_txn = True
            self.txn_left = rng.randint(2, 20)
            return Stmt(rng.choice(["BEGIN", "START TRANSACTION"]), kind="txn")
        return self.write() if rng.random() < 0.5 else self.query()

    def final_checks(self):
        s = self.s
        out = []
        if self.in_txn:
            out.append(Stmt("COMMIT", kind="txn"))
        out.append(Stmt("CHECK TABLE t", kind="check"))
        out.append(Stmt("SELECT * FROM t" + self.order_full(False), ordered=True))
        out.append(Stmt("SELECT COUNT(*) FROM t"))
        for ix in s.indexes:
            name = "`PRIMARY`" if ix.name == "PRIMARY" else ix.name
            cols = [c.name for c in ix.cols()] + [c.name for c in (s.pk.cols() if s.pk else []) if c not in ix.cols()]
            out.append(Stmt("SELECT COUNT(*) FROM t FORCE INDEX (%s)" % name))
            out.append(Stmt("SELECT %s FROM t FORCE INDEX (%s)" % (", ".join(cols), name)))
            first = ix.cols()[0]
            order = ", ".join("%s%s" % (c.name, " DESC" if d else "") for c, _, d in ix.parts)
            out.append(Stmt("SELECT * FROM t FORCE INDEX (%s) WHERE %s IS NOT NULL OR %s IS NULL ORDER BY %s, %s"
                            % (name, first.name, first.name, order, ", ".join(s.full_order)), ordered=True))
        return out


# --- execution and comparison ----------------------------------------------------------------

class ServerGone(Exception):
    pass


class Answer:
    __slots__ = ("error", "message", "affected", "rows", "warnings", "info")

    def __init__(self, error=None, message=None, affected=None, rows=None, warnings=(), info=""):
        self.error = error
        self.message = message
        self.affected = affected
        self.rows = rows
        self.warnings = warnings
        self.info = info  # the OK packet's message: "Rows matched: 1  Changed: 0  Warnings: 0"

    def matched(self):
        m = re.search(r"Rows matched: (\d+)", self.info)
        return int(m.group(1)) if m else None

    def show(self, limit=25, other=None):
        if self.error:
            return "error %d: %s" % (self.error, short(self.message, 200))
        out = []
        if self.rows is None:
            out.append("affected %s" % self.affected)
            if self.info:
                out.append("(%s)" % self.info.strip("( "))
        else:
            out.append("%d rows" % len(self.rows))
        if self.warnings:
            out.append("warnings %s" % (list(self.warnings),))
        text = ", ".join(out)
        if self.rows:
            if other is not None and other.rows is not None:
                # Mark the rows the other side does not have (as a multiset) with "!".
                theirs = collections.Counter(other.rows)
            for r in self.rows[:limit]:
                mark = " "
                if other is not None and other.rows is not None:
                    if theirs[r] > 0:
                        theirs[r] -= 1
                    else:
                        mark = "!"
                text += "\n    %s %s" % (mark, short_row(r))
            if len(self.rows) > limit:
                text += "\n      ... %d more" % (len(self.rows) - limit)
        return text


def short(s, n=80):
    s = str(s)
    return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


def short_row(r):
    return "(" + ", ".join(short(repr(v), 40) for v in r) + ")"


def execute(conn, stmt):
    cur = conn.cursor()
    try:
        affected = cur.execute(stmt.sql)
        rows = list(cur.fetchall()) if cur.description else None
        nwarn = conn._result.warning_count if conn._result else 0
        info = conn._result.message if conn._result and conn._result.message else b""
        info = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
        warnings = ()
        if nwarn:
            cur.execute("SHOW WARNINGS")
            warnings = tuple(sorted(r[1] for r in cur.fetchall()))
        return Answer(affected=affected, rows=rows, warnings=warnings, info=info)
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args and isinstance(e.args[0], int) else -1
        if code >= 2000 or code < 0 or isinstance(e, pymysql.err.InterfaceError):
            raise ServerGone("%s: %s" % (type(e).__name__, e))
        return Answer(error=code, message=e.args[1] if len(e.args) > 1 else str(e))
    finally:
        cur.close()


def differ(stmt, a, b):
    """What differs between the two answers, or None."""
    if a.error or b.error:
        if a.error != b.error:
            # An UPDATE without ORDER BY visits rows in an order of the plan's choosing; when
            # several rows fail differently (overflow here, duplicate there) the first error
            # depends on it. Both failed and were rolled back: that is the same answer.
            if (a.error and b.error and stmt.sql.upper().startswith("UPDATE")
                    and " ORDER BY " not in stmt.sql.upper()):
                return None
            return "error code"
        return None
    if stmt.kind == "check":
        # The first column names the table (di.t / dt.t).
        ra = [r[1:] for r in a.rows]
        rb = [r[1:] for r in b.rows]
        if ra != rb:
            return "CHECK TABLE"
        if any(r[3] != "OK" for r in b.rows if r[2] == "status"):
            return "CHECK TABLE status"
        return None
    if (a.rows is None) != (b.rows is None):
        return "result kind"
    if a.rows is None and a.affected != b.affected:
        return "affected rows"
    if a.warnings != b.warnings:
        return "warnings"
    if a.rows is not None:
        if stmt.ordered:
            if a.rows != b.rows:
                return "rows (ordered)"
        elif collections.Counter(a.rows) != collections.Counter(b.rows):
            return "rows (multiset)"
    return None


# Engine bugs already reported, which --tolerate NAME stops counting as failures so that a
# run can look past them. Each predicate sees (statement, InnoDB answer, TidesDB answer,
# what differs) and must match only that bug's signature.
def _null_field_update_count(stmt, a, b, what):
    if what != "affected rows":
        return False
    sql = stmt.sql.lstrip().upper()
    if sql.startswith("UPDATE"):
        return a.matched() == b.matched() and b.affected > a.affected
    return "ON DUPLICATE KEY UPDATE" in sql and b.affected > a.affected and (b.affected - a.affected) % 2 == 0


def _replace_same_row_count(stmt, a, b, what):
    return what == "affected rows" and stmt.sql.lstrip().upper().startswith("REPLACE") and b.affected > a.affected


def _like_range_update_error(stmt, a, b, what):
    return (what == "error code" and a.error is None and b.error == 1406 and " LIKE " in stmt.sql
            and stmt.sql.lstrip().upper().startswith(("UPDATE", "DELETE", "INSERT", "REPLACE")))


# name: (description, predicate or None (avoided by the generator), whether the tables differ
# after a tolerated statement, so that the rest of the case is skipped)
KNOWN_BUGS = {
    "null-update-count": (
        "an UPDATE that sets an already-NULL CHAR/DECIMAL/DATETIME/TIME column to NULL counts the "
        "row as changed (the bytes of NULL fields read from TidesDB differ from the field's reset value)",
        _null_field_update_count, False),
    "replace-same-row": (
        "REPLACE of a row by an identical one counts it as deleted and inserted (update_row does not "
        "return HA_ERR_RECORD_IS_THE_SAME as InnoDB does; MyISAM counts it the same way)",
        _replace_same_row_count, False),
    "zero-row-estimate": (
        "the table's row estimate can reach 0 while rows exist (deletes counted before a ROLLBACK, the "
        "transaction's own inserts after the 2-second estimate refresh), and the optimizer then finds "
        "'Impossible WHERE': SELECT / UPDATE / DELETE miss existing rows; tolerating it means ending the "
        "case when TidesDB's EXPLAIN of the differing statement says Impossible WHERE (or const row not "
        "found) and InnoDB's does not", None, True),
    "prefix-pk-index-merge": (
        "index merge (union / sort_union) on a table whose PRIMARY KEY has a prefix part fails with "
        "1032 or drops rows; tolerating it means not generating prefix parts in primary keys", None, False),
    "savepoint-reuse": (
        "setting a savepoint name again (SAVEPOINT a; SAVEPOINT b; SAVEPOINT a) after the transaction has "
        "read: a later ROLLBACK TO SAVEPOINT b undoes nothing; tolerating it means fresh savepoint "
        "names", None, False),
    "pk-update-scan": (
        "UPDATE of a primary key column through a table scan revisits the rows it moved forward "
        "(UPDATE t SET pk = pk + 10 runs until the write set exceeds tidesdb_max_write_set_bytes or "
        "the column overflows): the handler leaves key_used_on_scan at MAX_KEY, so the server does not "
        "buffer the rows first; tolerating it means ORDER BY on such updates", None, False),
    "like-range-1406": (
        "UPDATE / DELETE ... WHERE indexed_utf8mb4_varchar LIKE 'b%' fails with 1406 Data too long for "
        "column (strict mode) where InnoDB updates the rows; tolerating it ends the case at such a "
        "statement", _like_range_update_error, True),
}


def tolerated(names, stmt, a, b, what):
    """The known bug that explains this difference, if tolerated, and whether the tables now differ."""
    for name in names:
        if KNOWN_BUGS[name][1] and KNOWN_BUGS[name][1](stmt, a, b, what):
            return name, KNOWN_BUGS[name][2]
    return None, False


class Pair:
    """One connection per engine, each in its own database, running the same statements."""

    def __init__(self, server):
        self.server = server
        self.conns = []
        for db in DBS:
            c = server.connect(read_timeout=120, write_timeout=120)
            c.cursor().execute("CREATE DATABASE IF NOT EXISTS " + db)
            c.select_db(db)
            self.conns.append(c)

    def run(self, stmt):
        answers = []
        for conn, engine in zip(self.conns, ENGINES):
            s = stmt
            if "%ENGINE%" in stmt.sql:
                s = Stmt(stmt.sql.replace("%ENGINE%", engine), stmt.ordered, stmt.kind)
            try:
                answers.append(execute(conn, s))
            except ServerGone as e:
                raise ServerGone("%s connection: %s" % (engine, e))
        return answers

    def impossible_where_on_tidesdb_only(self, stmt):
        sql = stmt.sql.lstrip()
        if not sql.upper().startswith(("SELECT", "UPDATE", "DELETE", "INSERT", "REPLACE")):
            return False
        verdicts = []
        for conn in self.conns:
            got = execute(conn, Stmt("EXPLAIN " + sql))
            text = " ".join(str(v) for r in (got.rows or []) for v in r)
            verdicts.append(any(s in text for s in ("Impossible WHERE", "no matching row in const table",
                                                    "Const row not found")))
        return verdicts == [False, True]

    def reset(self):
        for c in self.conns:
            cur = c.cursor()
            cur.execute("ROLLBACK")
            cur.execute("DROP TABLE IF EXISTS t")

    def close(self):
        for c in self.conns:
            try:
                c.close()
            except Exception:
                pass


def replay(server, setup, stmts):
    """Runs setup + stmts on fresh connections and tables. Returns None when the engines
    agree throughout, else (index into stmts of the first disagreement, what, answers); a
    server crash counts as a disagreement ("crash", answers = (message, None))."""
    try:
        pair = Pair(server)
        pair.reset()
    except (ServerGone, pymysql.err.MySQLError):
        restart(server)
        pair = Pair(server)
        pair.reset()
    try:
        for i, stmt in enumerate(list(setup) + list(stmts)):
            try:
                a, b = pair.run(stmt)
            except ServerGone as e:
                restart(server)
                return i - len(setup), "crash", (str(e), None)
            what = differ(stmt, a, b)
            if what:
                return i - len(setup), what, (a, b)
        return None
    finally:
        pair.close()


def restart(server):
    server.kill()
    server.start()


def shrink(server, setup, stmts, deadline):
    """Greedy delta debugging: drops chunks of statements while the last one still
    disagrees in the same way. The CREATE TABLE (first) and the failing (last) statement
    stay; then each session setting is dropped if the failure does not need it."""
    first = replay(server, setup, stmts)
    if first is None or first[0] != len(stmts) - 1:
        return setup, stmts, first
    kind = first[1]

    def still_fails(st, body):
        got = replay(server, st, [stmts[0]] + body + [stmts[-1]])
        return got is not None and got[0] == len(body) + 1 and got[1] == kind

    body = stmts[1:-1]
    chunk = max(1, len(body) // 2)
    while chunk >= 1 and time.time() < deadline:
        i = 0
        changed = False
        while i < len(body) and time.time() < deadline:
            trial = body[:i] + body[i + chunk:]
            if still_fails(setup, trial):
                body = trial
                changed = True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    for s in list(setup):
        trial = [x for x in setup if x is not s]
        if still_fails(trial, body):
            setup = trial
    result = [stmts[0]] + body + [stmts[-1]]
    return setup, result, replay(server, setup, result)


# --- driver ----------------------------------------------------------------------------------

def case_statements(seed, case_no, nstmts, avoid=()):
    """The schema, session settings and statements of one case: a function of the seed
    (and of the known bugs to avoid)."""
    rng = random.Random("%d-%d" % (seed, case_no))
    Schema.avoid = avoid
    schema = Schema(rng)
    gen = Generator(schema, rng, avoid)
    setup = [Stmt("SET SESSION TRANSACTION ISOLATION LEVEL " + rng.choice(
        ["REPEATABLE READ", "REPEATABLE READ", "READ COMMITTED", "SERIALIZABLE"]), kind="setup"),
        Stmt("SET SESSION tidesdb_pessimistic_locking = %s" % rng.choice(["OFF", "ON"]), kind="setup"),
        # Off-row BLOB values (every nonempty one, most, or none: the default keeps these
        # short values in the row); drawn apart so that a seed's statements stay the same.
        Stmt("SET SESSION tidesdb_off_row_blob_size = %d" % random.Random("%d-%d-off-row" % (seed, case_no)).choice(
            [0, 3, 8192]), kind="setup")]
    stmts = [Stmt(schema.create(), kind="ddl")] + [gen.next() for _ in range(nstmts)] + gen.final_checks()
    return schema, setup, stmts


def run_case(pair, setup, stmts, stats, tolerate=()):
    """Runs one case; None when the engines agree, else (index, what, answers).
    Raises ServerGone (with .index) when the server dies."""
    for s in setup:
        pair.run(s)
    for i, stmt in enumerate(stmts):
        try:
            a, b = pair.run(stmt)
        except ServerGone as e:
            e.index = i
            raise
        stats["statements"] += 1
        stats[stmt.kind] += 1
        if a.error:
            stats["errors"] += 1
            stats["error %d" % a.error] += 1
        what = differ(stmt, a, b)
        if what:
            known, diverged = tolerated(tolerate, stmt, a, b, what)
            if known:
                stats["tolerated " + known] += 1
                if diverged:
                    return None
                continue
            if "zero-row-estimate" in tolerate and pair.impossible_where_on_tidesdb_only(stmt):
                # The tables differ from here on: the rest of the case says nothing.
                stats["tolerated zero-row-estimate"] += 1
                return None
            return i, what, (a, b)
        if stmt.kind == "ddl" and a.error:
            stats["schemas refused by both"] += 1
            return None
    return None


def show_answers(what, answers, server):
    if what == "crash":
        print("  -> the server crashed: %s\n  end of its error log:\n%s" % (answers[0], server.log_tail(25)))
    else:
        a, b = answers
        print("  InnoDB:  " + a.show(other=b))
        print("  TidesDB: " + b.show(other=a))


def report(seed, case_no, schema, setup, stmts, failure, args, server):
    index, what, answers = failure
    print("\nMISMATCH (%s) seed=%d case=%d statement %d of %d" % (what, seed, case_no, index, len(stmts)))
    print("replay: tests/sql/differential.py --seed %d --case %d --statements %d%s"
          % (seed, case_no, args.statements, "".join(" --tolerate " + t for t in args.tolerate)))
    print("session: " + "; ".join(s.sql for s in setup))
    print("schema:  " + schema.create("<engine>"))
    print("statement: " + short(stmts[index].sql, 600))
    show_answers(what, answers, server)
    path = os.path.join(server.dir, "case-%d-%d.sql" % (seed, case_no))
    with open(path, "w") as f:
        for s in setup + stmts[:index + 1]:
            f.write(s.sql + ";\n")
    print("statement log: " + path, flush=True)
    if args.no_shrink:
        return
    print("shrinking (up to %d s) ..." % args.shrink_time, flush=True)
    setup, small, got = shrink(server, setup, stmts[:index + 1], time.time() + args.shrink_time)
    if got is None:
        print("  (the failure did not replay on fresh tables)")
        return
    path = os.path.join(server.dir, "min-%d-%d.sql" % (seed, case_no))
    with open(path, "w") as f:
        for s in setup + small:
            f.write(s.sql + ";\n")
    print("minimal reproduction (%d statements, the last one disagrees: %s; in full: %s):"
          % (len(setup) + len(small), got[1], path))
    for s in setup + small:
        print("  " + short(s.sql.replace("%ENGINE%", "<engine>"), 600) + ";")
    show_answers(got[1], got[2], server)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="master seed (default: from the clock)")
    ap.add_argument("--duration", type=float, default=90, help="seconds of cases to run (default 90)")
    ap.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    ap.add_argument("--case", type=int, default=None, help="run only this case of the seed")
    ap.add_argument("--statements", type=int, default=250, help="random statements per case (default 250)")
    ap.add_argument("--plugin", default=DEFAULT_PLUGIN, help="the ha_tidesdb.so to test (copied at start)")
    ap.add_argument("--write-buffer", default="1M",
                    help="tidesdb_unified_memtable_write_buffer_size (default 1M, the minimum: memtables "
                    "are flushed during the run, so reads also go through SSTables)")
    ap.add_argument("--keep-going", action="store_true", help="continue with the next case after a mismatch")
    ap.add_argument("--no-shrink", action="store_true", help="do not shrink a failure")
    ap.add_argument("--shrink-time", type=float, default=120, help="seconds for shrinking a failure (default 120)")
    ap.add_argument("--keep", action="store_true", help="keep the server's directory")
    ap.add_argument("--tolerate", action="append", default=[], metavar="BUG",
                    help="do not fail on this known bug (repeatable; 'all' for every one): "
                    + "; ".join("%s: %s" % (k, v[0]) for k, v in KNOWN_BUGS.items()).replace("%", "%%"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if "all" in args.tolerate:
        args.tolerate = list(KNOWN_BUGS)
    for name in args.tolerate:
        if name not in KNOWN_BUGS:
            ap.error("unknown bug name %s (known: %s)" % (name, ", ".join(KNOWN_BUGS)))
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
    print("differential: seed %d (replay with --seed %d)" % (seed, seed), flush=True)
    started = time.time()
    stats = collections.Counter()
    failures = []
    try:
        server = PrivateServer(plugin=args.plugin, keep=args.keep, quiet=not args.verbose,
                               extra_args=["--tidesdb-unified-memtable-write-buffer-size=" + args.write_buffer])
    except ServerError as e:
        print("differential: FAIL: %s" % e)
        return 2
    with server:
        print("differential: plugin %s" % server.plugin_info, flush=True)
        server.start()
        pair = Pair(server)
        case_no = args.case if args.case is not None else 0
        while True:
            if args.case is None and (time.time() - started > args.duration
                                      or (args.cases is not None and stats["cases"] >= args.cases)):
                break
            schema, setup, stmts = case_statements(seed, case_no, args.statements, args.tolerate)
            if args.verbose:
                print("case %d: %s" % (case_no, schema.create("<engine>")), flush=True)
            pair.reset()
            try:
                failure = run_case(pair, setup, stmts, stats, args.tolerate)
            except ServerGone as e:
                failure = (e.index, "crash", (str(e), None))
                restart(server)
            stats["cases"] += 1
            if failure:
                failures.append((case_no, failure[1]))
                server.mark_failed()
                pair.close()
                report(seed, case_no, schema, setup, stmts, failure, args, server)
                pair = Pair(server)
                if not args.keep_going:
                    break
            if args.case is not None:
                break
            case_no += 1
        pair.reset()
        pair.close()
        c = server.connect()
        c.cursor().execute("DROP DATABASE IF EXISTS di")
        c.cursor().execute("DROP DATABASE IF EXISTS dt")
        c.close()
        status = server.stop()
        if status not in (0, None):
            failures.append((None, "server exit status %s at shutdown" % status))
            server.mark_failed()
    elapsed = time.time() - started
    if args.verbose:
        print("statement kinds and errors: %s" % dict(sorted(stats.items())))
    known = sum(v for k, v in stats.items() if k.startswith("tolerated "))
    print("differential: %s seed=%d cases=%d statements=%d (same error on both %d) mismatches=%d%s in %.0f s"
          % ("PASS" if not failures else "FAIL", seed, stats["cases"], stats["statements"], stats["errors"],
             len(failures), " tolerated=%d" % known if args.tolerate else "", elapsed), flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
