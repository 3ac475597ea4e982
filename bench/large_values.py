#!/usr/bin/env python3
"""The client of bench/large-values.sh: rows with 64 KiB - 2 MiB blobs on several engines of
one running server, engines alternating slice by slice.

    large_values.py run OUT_DIR      (the server and knobs from the environment, see below)
    large_values.py summary OUT_DIR  (rewrites OUT_DIR/large-values-summary.md from the CSVs)

`run` expects SOCK (the server's socket), SERVER_PID, DATA (its datadir), and the knobs
DATA_MB, THREADS, SLICE, ROUNDS, ENGINES, LOAD_CHUNKS, SETTLE_MAX, SEED. It writes
  OUT_DIR/large-values.csv        one line per slice, the contract columns (HEADER below);
  OUT_DIR/large-values-extra.csv  per slice: payload bytes moved, client CPU, server CPU,
                                  the engine's files, the settle after writes;
  OUT_DIR/large-values-summary.md the tables (`summary`).

Rows: `lv_<engine>.t (id INT PRIMARY KEY, k INT NOT NULL, small VARCHAR(64) NOT NULL,
payload LONGBLOB NOT NULL, KEY (k))`. Row `id`'s payload size is drawn log-uniformly in
[64 KiB, 2 MiB] from (SEED, id); its content, version v, is a block of min(size, 128 KiB)
pseudo-random bytes drawn from (SEED, id, v), repeated to the size. Within any 128 KiB
window the bytes are random, so compressors with a smaller window (LZ4, Snappy: 64 KiB;
zlib: 32 KiB) find nothing; zstd (a window of megabytes) finds the repeats of rows over
128 KiB. Every engine gets the same rows. Writes send the payload as raw bytes through a
server-side prepared statement (pymysql speaks only the text protocol, so `Prepared`
below does COM_STMT_PREPARE / EXECUTE itself): no escaping or hex literal costs the
client or the server's parser.

Writes are followed by a settle, outside the timed slice and with its bytes counted: the
engine's buffered writes are forced out where a statement can do it (InnoDB
innodb_max_dirty_pages_pct=0 until no page is dirty; MyRocks
rocksdb_force_flush_memtable_now), then the server is left until it writes under 1 MiB in
a second (at most SETTLE_MAX seconds). TidesDB has no statement that flushes its
memtable: up to the memtable's size of its latest writes is written by its next write
slice (still its own). So bytes_written is what the slice caused, not what happened to
be written while it ran.
"""
import csv
import hashlib
import math
import os
import random
import struct
import sys
import threading
import time
from collections import defaultdict

import pymysql
from pymysql.protocol import OKPacketWrapper

MIN_SIZE = 64 << 10
MAX_SIZE = 2 << 20
BLOCK = 128 << 10
HEADER = "round,engine,test,access,ops,ops_per_sec,p50_ms,p99_ms,bytes_written,size_bytes,seconds"
EXTRA_HEADER = ("round,engine,test,access,payload_bytes,client_cpu_pct,server_cpu_ticks,bytes_read,files_bytes,"
                "settle_seconds,settle_capped,files_detail,size_before,files_before")
VERIFY_EVERY = 8  # every 8th value read is compared with the generator's, byte for byte
QUIET_BYTES = 1 << 20

COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
TYPE_LONGLONG = 0x08
TYPE_LONG_BLOB = 0xFB
TYPE_VAR_STRING = 0xFD


class VerifyError(Exception):
    pass


# --- the rows ------------------------------------------------------------------------------

class Rows:
    """The generator: each row's size, payload, small column and k, from the seed alone."""

    def __init__(self, seed, data_bytes):
        self.seed = seed
        self.sizes = [0]  # sizes[id]; id 0 unused
        total = 0
        while total < data_bytes:
            size = self.size_of(len(self.sizes))
            self.sizes.append(size)
            total += size
        self.count = len(self.sizes) - 1
        self.total = total

    def size_of(self, row_id):
        rng = random.Random(f"{self.seed}/size/{row_id}")
        size = int(math.exp(rng.uniform(math.log(MIN_SIZE), math.log(MAX_SIZE))))
        return min(MAX_SIZE, max(MIN_SIZE, size))

    def payload(self, row_id, version):
        size = self.sizes[row_id]
        block = random.Random(f"{self.seed}/data/{row_id}/{version}").randbytes(min(size, BLOCK))
        if len(block) == size:
            return block
        return (block * -(-size // len(block)))[:size]

    @staticmethod
    def small(row_id, version):
        return f"row {row_id} version {version}"

    @staticmethod
    def k(row_id):
        return row_id * 2654435761 % 1000


class Zipfian:
    """Ranks 0 .. n-1 with P(r) proportional to 1 / (r + 1)^theta, one uniform draw each
    (the method of Gray et al., "Quickly generating billion-record synthetic databases",
    1994: after the sum zeta(n) the inverse is approximated in closed form)."""

    def __init__(self, n, theta=0.99):
        self.n = n
        self.theta = theta
        self.zetan = sum(1.0 / (i ** theta) for i in range(1, n + 1))
        zeta2 = 1.0 + 0.5 ** theta
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = (1.0 - (2.0 / n) ** (1.0 - theta)) / (1.0 - zeta2 / self.zetan)
        self.second = 1.0 + 0.5 ** theta

    def next(self, rng):
        u = rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return 0
        if uz < self.second:
            return 1
        return min(self.n - 1, int(self.n * (self.eta * u - self.eta + 1.0) ** self.alpha))


# --- the server ----------------------------------------------------------------------------

def lenenc(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + struct.pack("<Q", n)


class Prepared:
    """A server-side prepared statement on a pymysql connection, for statements without a
    result set: parameters go as raw bytes (ints as LONGLONG, str as VAR_STRING, bytes as
    LONG_BLOB) in one COM_STMT_EXECUTE. execute() returns the affected rows; a server error
    raises pymysql's exception, as a query would."""

    def __init__(self, conn, sql):
        self.conn = conn
        conn._execute_command(COM_STMT_PREPARE, sql.encode())
        data = conn._read_packet().get_all_data()
        if data[0] != 0:
            raise RuntimeError(f"COM_STMT_PREPARE answered {data[:16]!r}")
        self.stmt_id, columns, self.params = struct.unpack_from("<IHH", data, 1)
        # Without CLIENT_DEPRECATE_EOF (pymysql does not ask for it) each list of column
        # definitions ends with an EOF packet.
        for count in (self.params, columns):
            for _ in range(count + (1 if count else 0)):
                conn._read_packet()

    def execute(self, *values):
        if len(values) != self.params:
            raise ValueError(f"{self.params} parameters, {len(values)} given")
        types = bytearray()
        parts = [struct.pack("<IBI", self.stmt_id, 0, 1), bytes((self.params + 7) // 8), b"\x01"]
        encoded = []
        for v in values:
            if isinstance(v, int):
                types += bytes((TYPE_LONGLONG, 0))
                encoded.append(struct.pack("<q", v))
            else:
                b = v.encode() if isinstance(v, str) else v
                types += bytes((TYPE_VAR_STRING if isinstance(v, str) else TYPE_LONG_BLOB, 0))
                encoded.append(lenenc(len(b)))
                encoded.append(b)
        parts.append(bytes(types))
        self.conn._execute_command(COM_STMT_EXECUTE, b"".join(parts + encoded))
        return OKPacketWrapper(self.conn._read_packet()).affected_rows


def connect(sock, db=None):
    return pymysql.connect(unix_socket=sock, user="root", database=db, autocommit=True,
                           max_allowed_packet=64 << 20)


class Server:
    def __init__(self, sock, pid, datadir):
        self.sock = sock
        self.pid = pid
        self.datadir = datadir
        self.admin = connect(sock)

    def sql(self, statement):
        with self.admin.cursor() as c:
            c.execute(statement)
            return c.fetchall()

    def value(self, statement):
        rows = self.sql(statement)
        return rows[0][0] if rows else None

    def status(self, name):
        return int(self.value(f"SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                              f"WHERE VARIABLE_NAME = '{name}'"))

    def io(self, field):
        with open(f"/proc/{self.pid}/io") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise RuntimeError(f"no {field} in /proc/PID/io")

    def io_written(self):  # as private-server.sh's io_written
        return self.io("write_bytes")

    def io_read(self):  # bytes read from storage (not from the OS page cache)
        return self.io("read_bytes")

    def cpu_ticks(self):  # as private-server.sh's cpu_ticks
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)

    def files_bytes(self, engine):
        """The engine's files holding the table, for a cross-check of information_schema (one
        table per engine here, so the engine's files are the table's), and a breakdown by
        kind: TidesDB the key logs, value logs and WAL of #tidesdb (the WAL holds the rows of
        the memtable, which no statement can flush), MyRocks the .sst files and WAL of
        #rocksdb (its memtable is flushed before sizes are taken), InnoDB lv_InnoDB/t.ibd
        (its redo log and undo tablespaces are shared and of fixed size). Returns
        (bytes, "kind=bytes;...")."""
        if engine == "InnoDB":
            path = os.path.join(self.datadir, "lv_InnoDB", "t.ibd")
            size = os.path.getsize(path) if os.path.exists(path) else 0
            return size, f"ibd={size}"
        top, data = {"TidesDB": ("#tidesdb", (".klog", ".vlog", ".wal")), "RocksDB": ("#rocksdb", (".sst", ".log"))}.get(
            engine, (None, ()))
        if top is None:
            return 0, ""
        kinds = defaultdict(int)
        for root, _, names in os.walk(os.path.join(self.datadir, top)):
            for name in names:
                try:
                    size = os.path.getsize(os.path.join(root, name))
                except FileNotFoundError:
                    continue  # removed by a compaction meanwhile
                ext = os.path.splitext(name)[1]
                kinds[ext if ext in data + (".wal", ".log") else "other"] += size
        return sum(kinds[k] for k in data), ";".join(f"{k.lstrip('.')}={v}" for k, v in sorted(kinds.items()))

    def table_size(self, engine, analyze):
        """DATA_LENGTH + INDEX_LENGTH of lv_<engine>.t. InnoDB's and MyRocks' figures move
        only with ANALYZE (done when analyze is set: after writes); TidesDB's are fresh."""
        if analyze and engine != "TidesDB":
            self.sql(f"ANALYZE TABLE lv_{engine}.t")
        return int(self.value(f"SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "
                              f"WHERE TABLE_SCHEMA = 'lv_{engine}' AND TABLE_NAME = 't'") or 0)

    def settle(self, engine, limit):
        """Forces the engine's buffered writes out where a statement can, then waits until the
        server writes under QUIET_BYTES in a second. Returns (seconds, capped)."""
        start = time.monotonic()
        if engine == "InnoDB":
            old = self.value("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            self.sql("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            try:
                while self.status("INNODB_BUFFER_POOL_PAGES_DIRTY") > 0 and time.monotonic() - start < limit:
                    time.sleep(0.25)
            finally:
                self.sql(f"SET GLOBAL innodb_max_dirty_pages_pct = {old}")
        elif engine == "RocksDB":
            self.sql("SET GLOBAL rocksdb_force_flush_memtable_now = ON")
        capped = True
        while time.monotonic() - start < limit:
            w0 = self.io_written()
            time.sleep(1.0)
            if self.io_written() - w0 < QUIET_BYTES:
                capped = False
                break
        return time.monotonic() - start, capped


# --- slices --------------------------------------------------------------------------------

class Bench:
    def __init__(self, out, env):
        self.out = out
        self.engines = env["ENGINES"].split()
        self.threads = int(env["THREADS"])
        self.slice = float(env["SLICE"])
        self.rounds = int(env["ROUNDS"])
        self.chunks = int(env["LOAD_CHUNKS"])
        self.settle_max = float(env["SETTLE_MAX"])
        self.rows = Rows(int(env["SEED"]), int(float(env["DATA_MB"]) * (1 << 20)))
        self.zipf = Zipfian(self.rows.count)
        # Zipfian ranks name rows through a fixed permutation, so the hot rows are spread
        # over the key space and over the load's chunks.
        self.by_rank = list(range(1, self.rows.count + 1))
        random.Random(int(env["SEED"]) + 1).shuffle(self.by_rank)
        self.server = Server(env["SOCK"], int(env["SERVER_PID"]), env["DATA"])
        self.versions = {e: [0] * (self.rows.count + 1) for e in self.engines}
        self.conns = {}
        self.csv = open(os.path.join(out, "large-values.csv"), "w")
        self.extra = open(os.path.join(out, "large-values-extra.csv"), "w")
        print(HEADER, file=self.csv, flush=True)
        print(EXTRA_HEADER, file=self.extra, flush=True)
        self.size = {}

    def setup(self):
        for e in self.engines:
            self.server.sql(f"CREATE DATABASE lv_{e}")
            self.server.sql(f"CREATE TABLE lv_{e}.t (id INT PRIMARY KEY, k INT NOT NULL, "
                            f"small VARCHAR(64) NOT NULL, payload LONGBLOB NOT NULL, KEY (k)) ENGINE={e}")
            conns = []
            for _ in range(self.threads):
                conn = connect(self.server.sock, f"lv_{e}")
                conns.append({
                    "conn": conn,
                    "insert": Prepared(conn, "INSERT INTO t (id, k, small, payload) VALUES (?, ?, ?, ?)"),
                    "update": Prepared(conn, "UPDATE t SET payload = ?, small = ? WHERE id = ?"),
                })
            self.conns[e] = conns
        with open(os.path.join(self.out, "tables.txt"), "w") as f:
            for e in self.engines:
                print(self.server.sql(f"SHOW CREATE TABLE lv_{e}.t")[0][1] + ";\n", file=f)

    # One thread's work; returns its latencies (seconds) and payload bytes moved.
    def worker(self, engine, t, test, access, ids, deadline, result):
        rows, versions = self.rows, self.versions[engine]
        c = self.conns[engine][t]
        cur = c["conn"].cursor()
        rng = random.Random(f"{engine}/{test}/{access}/{t}/{time.time_ns()}")
        lat = []
        moved = 0
        try:
            n = 0
            while True:
                if ids is not None:  # load: this thread's ids of the chunk, in order
                    if n >= len(ids):
                        break
                    row_id = ids[n]
                elif time.monotonic() >= deadline:
                    break
                elif test == "update":  # this thread's rows only: versions stay exact
                    row_id = t + 1 + rng.randrange((rows.count - t - 1) // self.threads + 1) * self.threads
                elif access == "zipfian":
                    row_id = self.by_rank[self.zipf.next(rng)]
                else:
                    row_id = rng.randint(1, rows.count)
                n += 1
                if test == "load":
                    payload = rows.payload(row_id, 0)
                    t0 = time.perf_counter()
                    c["insert"].execute(row_id, rows.k(row_id), rows.small(row_id, 0), payload)
                    lat.append(time.perf_counter() - t0)
                    moved += len(payload)
                elif test == "update":
                    v = versions[row_id] + 1
                    payload = rows.payload(row_id, v)
                    t0 = time.perf_counter()
                    affected = c["update"].execute(payload, rows.small(row_id, v), row_id)
                    lat.append(time.perf_counter() - t0)
                    if affected != 1:
                        raise VerifyError(f"{engine}: UPDATE of id {row_id} changed {affected} rows")
                    versions[row_id] = v
                    moved += len(payload)
                elif test == "read_full":
                    t0 = time.perf_counter()
                    cur.execute(f"SELECT payload FROM t WHERE id = {row_id}")
                    got = cur.fetchone()
                    lat.append(time.perf_counter() - t0)
                    if got is None or len(got[0]) != rows.sizes[row_id]:
                        raise VerifyError(f"{engine}: id {row_id} read {None if got is None else len(got[0])} "
                                          f"bytes, wrote {rows.sizes[row_id]}")
                    if n % VERIFY_EVERY == 0 and got[0] != rows.payload(row_id, versions[row_id]):
                        raise VerifyError(f"{engine}: id {row_id}'s payload is not the one written "
                                          f"(version {versions[row_id]})")
                    moved += len(got[0])
                else:  # read_small
                    t0 = time.perf_counter()
                    cur.execute(f"SELECT small, k FROM t WHERE id = {row_id}")
                    got = cur.fetchone()
                    lat.append(time.perf_counter() - t0)
                    want = (rows.small(row_id, versions[row_id]), rows.k(row_id))
                    if got != want:
                        raise VerifyError(f"{engine}: id {row_id} read {got!r}, wrote {want!r}")
        except Exception as exc:  # reported by the main thread
            result["error"] = exc
        result["lat"] = lat
        result["moved"] = moved

    def run_slice(self, engine, test, access, ids_by_thread=None):
        deadline = time.monotonic() + self.slice
        results = [{} for _ in range(self.threads)]
        w0, c0, r0 = self.server.io_written(), self.server.cpu_ticks(), self.server.io_read()
        p0, start = time.process_time(), time.perf_counter()
        threads = [threading.Thread(target=self.worker, args=(
            engine, t, test, access, None if ids_by_thread is None else ids_by_thread[t], deadline, results[t]))
            for t in range(self.threads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        elapsed = time.perf_counter() - start
        client_cpu = 100.0 * (time.process_time() - p0) / elapsed
        for r in results:
            if "error" in r:
                raise r["error"]
        lat = sorted(x for r in results for x in r["lat"])
        return {
            "ops": len(lat), "elapsed": elapsed, "lat": lat, "moved": sum(r["moved"] for r in results),
            "client_cpu": client_cpu, "w0": w0, "c0": c0, "r0": r0,
        }

    def record(self, rnd, engine, test, access, s, size, settle=(0.0, False), before=("", "")):
        lat = s["lat"]
        p50 = lat[len(lat) // 2] * 1000 if lat else 0.0
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else 0.0
        written = self.server.io_written() - s["w0"]
        ticks = self.server.cpu_ticks() - s["c0"]
        read = self.server.io_read() - s["r0"]
        files, detail = self.server.files_bytes(engine)
        ops_s = s["ops"] / s["elapsed"] if s["elapsed"] > 0 else 0.0
        print(f"{rnd},{engine},{test},{access},{s['ops']},{ops_s:.2f},{p50:.3f},{p99:.3f},{written},{size},"
              f"{s['elapsed']:.2f}", file=self.csv, flush=True)
        print(f"{rnd},{engine},{test},{access},{s['moved']},{s['client_cpu']:.0f},{ticks},{read},{files},"
              f"{settle[0]:.1f},{int(settle[1])},{detail},{before[0]},{before[1]}", file=self.extra, flush=True)
        print(f"round {rnd} {test} {access} {engine}: {s['ops']} ops, {ops_s:.1f}/s, p50 {p50:.2f} ms, "
              f"p99 {p99:.2f} ms, {written / 2**20:.1f} MiB written, {read / 2**20:.1f} MiB read, size {size / 2**20:.1f} MiB "
              f"(files {files / 2**20:.1f} MiB), client CPU {s['client_cpu']:.0f} %"
              + (f", settle {settle[0]:.1f} s{' (capped)' if settle[1] else ''}" if settle[0] else ""),
              flush=True)

    def order(self, i):  # engines rotated by slice group, so none always follows the same one
        k = i % len(self.engines)
        return self.engines[k:] + self.engines[:k]

    def verify(self, engine, count=12):
        """A sample of rows read back with their small column and compared with the generator:
        payload bytes, version, k; also the server's own SHA2 of one payload."""
        rng = random.Random(f"verify/{engine}/{time.time_ns()}")
        ids = {1, self.rows.count} | {rng.randint(1, self.rows.count) for _ in range(count)}
        changed = [i for i, v in enumerate(self.versions[engine]) if v > 0]
        ids |= set(rng.sample(changed, min(len(changed), count)))
        cur = self.conns[engine][0]["conn"].cursor()
        for row_id in sorted(ids):
            v = self.versions[engine][row_id]
            cur.execute(f"SELECT small, k, payload, SHA2(payload, 256) FROM t WHERE id = {row_id}")
            got = cur.fetchone()
            want = self.rows.payload(row_id, v)
            if got is None or got[0] != self.rows.small(row_id, v) or got[1] != self.rows.k(row_id) \
                    or got[2] != want:
                raise VerifyError(f"{engine}: id {row_id} (version {v}) does not read back as written: "
                                  f"{None if got is None else (got[0], got[1], len(got[2]))}")
            if got[3] != hashlib.sha256(want).hexdigest():
                raise VerifyError(f"{engine}: id {row_id}: the server's SHA2 differs from the written payload's")
        count_rows = self.server.value(f"SELECT COUNT(*) FROM lv_{engine}.t")
        if count_rows != self.rows.count:
            raise VerifyError(f"{engine}: {count_rows} rows, {self.rows.count} written")
        print(f"verify {engine}: {len(ids)} rows read back as written, {count_rows} rows", flush=True)

    def load(self):
        ids = list(range(1, self.rows.count + 1))
        per_chunk = -(-len(ids) // self.chunks)
        for chunk in range(self.chunks):
            part = ids[chunk * per_chunk:(chunk + 1) * per_chunk]
            by_thread = [part[t::self.threads] for t in range(self.threads)]
            for engine in self.order(chunk):
                s = self.run_slice(engine, "load", "-", by_thread)
                settle = self.server.settle(engine, self.settle_max)
                self.record(chunk + 1, engine, "load", "-", s, self.server.table_size(engine, True), settle)
        for engine in self.engines:
            self.verify(engine)
            self.engine_status("after the load", engine)

    def rounds_of_slices(self):
        group = 0
        for rnd in range(1, self.rounds + 1):
            for test, access in (("read_full", "uniform"), ("read_full", "zipfian"),
                                 ("read_small", "uniform"), ("update", "uniform")):
                for engine in self.order(group):
                    s = self.run_slice(engine, test, access)
                    settle = self.server.settle(engine, self.settle_max) if test == "update" else (0.0, False)
                    self.record(rnd, engine, test, access, s,
                                self.server.table_size(engine, test == "update"), settle)
                group += 1
            for engine in self.order(group):
                self.verify(engine)
                self.optimize(rnd, engine)
                self.verify(engine)
            group += 1

    def optimize(self, rnd, engine):
        size_before = self.server.table_size(engine, True)
        files_before, detail_before = self.server.files_bytes(engine)
        self.engine_status(f"round {rnd}, before OPTIMIZE", engine)
        w0, c0, r0 = self.server.io_written(), self.server.cpu_ticks(), self.server.io_read()
        p0, start = time.process_time(), time.perf_counter()
        result = self.server.sql(f"OPTIMIZE TABLE lv_{engine}.t")
        elapsed = time.perf_counter() - start
        for row in result:
            if row[2] == "error":
                raise RuntimeError(f"OPTIMIZE TABLE lv_{engine}.t: {row}")
        with open(os.path.join(self.out, "optimize.txt"), "a") as f:
            print(f"round {rnd} {engine} (files before {detail_before}): {result}", file=f)
        settle = self.server.settle(engine, self.settle_max)
        s = {"ops": 1, "elapsed": elapsed, "lat": [elapsed], "moved": 0,
             "client_cpu": 100.0 * (time.process_time() - p0) / elapsed, "w0": w0, "c0": c0, "r0": r0}
        self.record(rnd, engine, "optimize", "-", s, self.server.table_size(engine, True), settle,
                    (size_before, files_before))
        self.engine_status(f"round {rnd}, after OPTIMIZE", engine)

    def engine_status(self, when, engine):
        """SHOW ENGINE TIDESDB STATUS into tidesdb-status.txt (flushes, compactions, value logs)."""
        if engine != "TidesDB":
            return
        with open(os.path.join(self.out, "tidesdb-status.txt"), "a") as f:
            print(f"===== {when}", file=f)
            for row in self.server.sql("SHOW ENGINE TIDESDB STATUS"):
                print("\n".join(str(x) for x in row), file=f)

    def run(self):
        r = self.rows
        print(f"{r.count} rows, {r.total / 2**20:.0f} MiB of payload per engine (mean {r.total / r.count / 1024:.0f} KiB,"
              f" {min(r.sizes[1:]) / 1024:.0f} .. {max(r.sizes[1:]) / 1024:.0f} KiB); engines {self.engines}, "
              f"{self.threads} threads, {self.slice:g} s slices, {self.rounds} rounds", flush=True)
        with open(os.path.join(self.out, "rows.txt"), "w") as f:
            print(f"rows {r.count}\npayload_bytes {r.total}", file=f)
        self.setup()
        self.load()
        self.rounds_of_slices()
        if "TidesDB" in self.engines:
            self.engine_status("at the end", "TidesDB")


# --- the summary ---------------------------------------------------------------------------

def spread(values):
    return f"{sum(values) / len(values):.2f} ({min(values):.2f}..{max(values):.2f})" if values else "-"


def summary(out):
    rows = list(csv.DictReader(open(os.path.join(out, "large-values.csv"))))
    extra = {(r["round"], r["engine"], r["test"], r["access"]): r
             for r in csv.DictReader(open(os.path.join(out, "large-values-extra.csv")))}
    for r in rows:
        r.update({k: v for k, v in extra.get((r["round"], r["engine"], r["test"], r["access"]), {}).items()
                  if k not in r})
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    base = "InnoDB" if "InnoDB" in engines else engines[0]
    info = dict(line.split() for line in open(os.path.join(out, "rows.txt")))
    mib = 1 << 20

    def of(engine, test, access):
        return [r for r in rows if r["engine"] == engine and r["test"] == test and r["access"] == access]

    def mean(rs, key):
        return sum(float(r[key]) for r in rs) / len(rs) if rs else 0.0

    def ratios(engine, test, access, key, invert=False):
        mine = {r["round"]: float(r[key]) for r in of(engine, test, access)}
        theirs = {r["round"]: float(r[key]) for r in of(base, test, access)}
        out_ = []
        for rnd, v in mine.items():
            b = theirs.get(rnd, 0.0)
            if b > 0 and v > 0:
                out_.append(b / v if invert else v / b)
        return out_

    lines = [f"Large values: {info['rows']} rows per engine, {int(info['payload_bytes']) / mib:.0f} MiB of payload "
             "(64 KiB - 2 MiB, log-uniform; each a random block of up to 128 KiB repeated). "
             f"Ratios are to {base}, mean (min..max) over rounds (load: over chunks).", ""]

    rs_load = {e: of(e, "load", "-") for e in engines}
    lines += ["### load", "",
              f"| engine | rows/s | MB/s | rows/s / {base} | p50 ms | p99 ms | bytes written per byte loaded "
              "| size after load, information_schema MiB | files MiB | information_schema / files | client CPU % |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in engines:
        rs = rs_load[e]
        if not rs:
            continue
        secs = sum(float(r["seconds"]) for r in rs)
        loaded = sum(int(r["payload_bytes"]) for r in rs)
        written = sum(int(r["bytes_written"]) for r in rs)
        last = rs[-1]
        lines.append(f"| {e} | {sum(int(r['ops']) for r in rs) / secs:.1f} | {loaded / secs / 1e6:.1f} | "
                     f"{spread(ratios(e, 'load', '-', 'ops_per_sec'))} | {mean(rs, 'p50_ms'):.1f} | "
                     f"{mean(rs, 'p99_ms'):.1f} | {written / loaded:.2f} | {int(last['size_bytes']) / mib:.0f} | "
                     f"{int(last['files_bytes']) / mib:.0f} | "
                     f"{int(last['size_bytes']) / max(1, int(last['files_bytes'])):.2f} | {mean(rs, 'client_cpu_pct'):.0f} |")

    for test, access in (("read_full", "uniform"), ("read_full", "zipfian"), ("read_small", "uniform")):
        lines += ["", f"### {test}, {access}", "",
                  f"| engine | ops/s | ops/s / {base} | p50 ms | p99 ms | p99 / {base} | KiB read from storage per op "
                  "| MiB written | client CPU % |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for e in engines:
            rs = of(e, test, access)
            if rs:
                lines.append(f"| {e} | {mean(rs, 'ops_per_sec'):.1f} | {spread(ratios(e, test, access, 'ops_per_sec'))} | "
                             f"{mean(rs, 'p50_ms'):.2f} | {mean(rs, 'p99_ms'):.2f} | "
                             f"{spread(ratios(e, test, access, 'p99_ms'))} | "
                             f"{sum(int(r['bytes_read']) for r in rs) / max(1, sum(int(r['ops']) for r in rs)) / 1024:.0f} | "
                             f"{sum(int(r['bytes_written']) for r in rs) / mib:.1f} | {mean(rs, 'client_cpu_pct'):.0f} |")

    lines += ["", "### update, uniform", "",
              f"| engine | ops/s | ops/s / {base} | p50 ms | p99 ms | p99 / {base} | KiB written per update "
              "| bytes written per payload byte | size after updates MiB (files) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for e in engines:
        rs = of(e, "update", "uniform")
        if rs:
            ops = sum(int(r["ops"]) for r in rs)
            written = sum(int(r["bytes_written"]) for r in rs)
            moved = sum(int(r["payload_bytes"]) for r in rs)
            lines.append(f"| {e} | {mean(rs, 'ops_per_sec'):.1f} | {spread(ratios(e, 'update', 'uniform', 'ops_per_sec'))} | "
                         f"{mean(rs, 'p50_ms'):.2f} | {mean(rs, 'p99_ms'):.2f} | "
                         f"{spread(ratios(e, 'update', 'uniform', 'p99_ms'))} | {written / max(1, ops) / 1024:.0f} | "
                         f"{written / max(1, moved):.2f} | "
                         + ", ".join(f"{int(r['size_bytes']) / mib:.0f} ({int(r['files_bytes']) / mib:.0f})" for r in rs)
                         + " |")

    lines += ["", "### optimize (after the updates)", "",
              f"| engine | seconds | seconds / {base} | size before -> after, information_schema MiB "
              "| files before -> after MiB | MiB written |",
              "|---|---|---|---|---|---|"]
    for e in engines:
        rs = of(e, "optimize", "-")
        ups = {r["round"]: r for r in of(e, "update", "uniform")}

        def before(r, key, update_key):  # measured just before OPTIMIZE; older CSVs: after the updates
            if r.get(key):
                return int(r[key])
            return int(ups[r["round"]][update_key]) if r["round"] in ups else 0
        if rs:
            sizes = ", ".join(f"{before(r, 'size_before', 'size_bytes') / mib:.0f} -> {int(r['size_bytes']) / mib:.0f}"
                              for r in rs)
            files = ", ".join(f"{before(r, 'files_before', 'files_bytes') / mib:.0f} -> {int(r['files_bytes']) / mib:.0f}"
                              for r in rs)
            seconds = ", ".join(f"{float(r['seconds']):.1f}" for r in rs)
            lines.append(f"| {e} | {seconds} | "
                         f"{spread(ratios(e, 'optimize', '-', 'seconds'))} | {sizes} | {files} | "
                         f"{sum(int(r['bytes_written']) for r in rs) / mib:.0f} |")
    lines += ["", "Sizes: information_schema's DATA_LENGTH + INDEX_LENGTH (after ANALYZE for InnoDB and MyRocks); "
              "files: TidesDB the key logs, value logs and WAL of #tidesdb (its only table here), MyRocks the .sst files "
              "and WAL of #rocksdb, InnoDB lv_InnoDB/t.ibd (large-values-extra.csv has them by kind). "
              "Bytes written: the server's /proc write_bytes over the slice and the settle after it (writes forced "
              "out; see bench/large_values.py); bytes read from storage: its read_bytes (reads served by the OS page "
              "cache do not count)."]
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "large-values-summary.md"), "w").write(text)
    return text


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("run", "summary"):
        sys.exit(f"usage: {sys.argv[0]} run|summary OUT_DIR")
    out = sys.argv[2]
    if sys.argv[1] == "run":
        try:
            Bench(out, os.environ).run()
        except VerifyError as exc:
            sys.exit(f"large-values: VERIFY FAILED: {exc}")
    print(summary(out))


if __name__ == "__main__":
    main()
