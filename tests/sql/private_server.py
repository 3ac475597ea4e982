"""A private MariaDB server with the TidesDB plugin, for the SQL-level tests of tests/sql/.

Each test starts its own server: a data directory made by mariadb-install-db under a
temporary directory, its own Unix socket, a free TCP port on 127.0.0.1, and a plugin
directory holding links to the stock plugins plus a copy of the built ha_tidesdb.so. The
copy is taken once, when the PrivateServer is made, so a rebuild of the plugin during a run
changes neither the running server nor the one restarted after a crash.

    with PrivateServer(plugin=..., extra_args=[...]) as server:
        server.start()
        conn = server.connect()
        ...
        server.kill()      # SIGKILL, for crash tests
        server.start()     # the same data directory
        server.stop()      # SIGTERM, waits

PrivateServer(datadir=PATH) runs on an existing data directory (a restored backup) instead
of making one; that directory is the caller's and is never removed.

The temporary directory is removed at exit unless keep=True or the test failed
(mark_failed()); its path is printed so the error log can be read.
"""

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pymysql

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_PLUGIN = os.path.join(REPO, "build", "plugin", "ha_tidesdb.so")
STOCK_PLUGIN_DIR = "/usr/lib/mysql/plugin"
MARIADBD = "/usr/sbin/mariadbd"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def file_digest(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:12]


class ServerError(Exception):
    pass


class PrivateServer:
    def __init__(self, plugin=DEFAULT_PLUGIN, extra_args=(), keep=False, start_timeout=90, quiet=False,
                 defaults_file=None, datadir=None):
        if not os.path.isfile(plugin):
            raise ServerError(f"{plugin} does not exist (make build)")
        self.keep = keep
        self.failed = False
        self.quiet = quiet
        self.start_timeout = start_timeout
        self.extra_args = list(extra_args)
        # A configuration file to start with instead of this class's own settings: only the
        # paths (and extra_args) are given on the command line then, so the file's settings
        # all hold.
        self.defaults_file = defaults_file
        # Short path: the Unix socket path must stay under 108 bytes.
        self.dir = tempfile.mkdtemp(prefix="tidesql-", dir="/tmp")
        self.datadir = datadir if datadir is not None else os.path.join(self.dir, "data")
        self.plugin_dir = os.path.join(self.dir, "plugins")
        self.socket = os.path.join(self.dir, "mysqld.sock")
        self.errlog = os.path.join(self.dir, "mysqld.err")
        self.port = free_port()
        self.proc = None
        self.starts = 0

        os.makedirs(self.plugin_dir)
        for name in os.listdir(STOCK_PLUGIN_DIR):
            if name != "ha_tidesdb.so":
                os.symlink(os.path.join(STOCK_PLUGIN_DIR, name), os.path.join(self.plugin_dir, name))
        self.plugin = os.path.join(self.plugin_dir, "ha_tidesdb.so")
        shutil.copy2(plugin, self.plugin)
        self.plugin_info = "%s (mtime %s, sha1 %s)" % (
            plugin, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(plugin))),
            file_digest(self.plugin))

        if datadir is not None:
            return
        log = os.path.join(self.dir, "install-db.log")
        with open(log, "w") as out:
            rc = subprocess.call(["mariadb-install-db", "--no-defaults", "--user=root",
                                  "--datadir=" + self.datadir, "--auth-root-authentication-method=normal",
                                  "--skip-test-db"], stdout=out, stderr=subprocess.STDOUT)
        if rc != 0:
            self.failed = True
            raise ServerError(f"mariadb-install-db failed, see {log}")

    def log(self, msg):
        if not self.quiet:
            print(msg, flush=True)

    # --- lifecycle -------------------------------------------------------------------------

    def command(self):
        if self.defaults_file is not None:
            return [MARIADBD, "--defaults-file=" + self.defaults_file, "--user=root", "--datadir=" + self.datadir,
                    "--socket=" + self.socket, "--port=%d" % self.port,
                    "--pid-file=" + os.path.join(self.dir, "mysqld.pid"), "--log-error=" + self.errlog,
                    "--plugin-dir=" + self.plugin_dir] + self.extra_args
        return [MARIADBD, "--no-defaults", "--user=root", "--datadir=" + self.datadir,
                "--socket=" + self.socket, "--port=%d" % self.port, "--bind-address=127.0.0.1",
                "--pid-file=" + os.path.join(self.dir, "mysqld.pid"), "--log-error=" + self.errlog,
                "--plugin-dir=" + self.plugin_dir, "--plugin-maturity=gamma",
                "--plugin-load-add=ha_tidesdb.so", "--tidesdb=FORCE",
                # Keep the private server small: two cores are shared.
                "--innodb-buffer-pool-size=64M", "--max-connections=64",
                "--skip-log-bin", "--core-file=0"] + self.extra_args

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        if self.running():
            raise ServerError("server already running")
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        self.log_offset = os.path.getsize(self.errlog) if os.path.exists(self.errlog) else 0
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "mysqld.out"), "ab"),
                                     start_new_session=True)
        self.starts += 1
        deadline = time.time() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                self.failed = True
                raise ServerError("server exited with status %s during start:\n%s"
                                  % (self.proc.returncode, self.log_tail()))
            try:
                self.connect(connect_timeout=2).close()
                return
            except pymysql.err.OperationalError:
                pass
            if time.time() > deadline:
                self.failed = True
                self.kill()
                raise ServerError("server did not come up in %d s:\n%s" % (self.start_timeout, self.log_tail()))
            time.sleep(0.2)

    def stop(self, timeout=120):
        """SIGTERM and wait for a clean shutdown; returns the exit status."""
        if not self.running():
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.failed = True
            self.log("server: did not stop in %d s; killing it" % timeout)
            return self.kill()

    def kill(self):
        """SIGKILL (a crash at an arbitrary moment); returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait()

    def exited_on_its_own(self):
        """The exit status when the server died without being told to, else None."""
        if self.proc is not None and self.proc.poll() is not None:
            return self.proc.returncode
        return None

    def connect(self, connect_timeout=10, autocommit=True, tcp=False, **kw):
        """A root connection over the Unix socket, or with tcp=True over 127.0.0.1:port (the
        way a replica reaches its primary)."""
        where = dict(host="127.0.0.1", port=self.port) if tcp else dict(unix_socket=self.socket)
        return pymysql.connect(user="root", password="", connect_timeout=connect_timeout, autocommit=autocommit,
                               charset="utf8mb4", **where, **kw)

    def log_tail(self, lines=30, since_start=True):
        try:
            with open(self.errlog, "rb") as f:
                if since_start:
                    f.seek(getattr(self, "log_offset", 0))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return "(no error log)"
        return "\n".join(text.splitlines()[-lines:])

    def mark_failed(self):
        self.failed = True

    def cleanup(self):
        self.kill()
        if self.keep or self.failed:
            print("server: kept %s (error log %s)" % (self.dir, self.errlog), flush=True)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and exc_type is not SystemExit:
            self.failed = True
        self.cleanup()
        return False


def die(msg, code=2):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(code)
