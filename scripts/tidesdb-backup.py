#!/usr/bin/python3
"""tidesdb-backup: an online physical backup of a running MariaDB server that has TidesDB
tables, and its restore into a new data directory.

    scripts/tidesdb-backup.py backup  --target-dir DIR [--socket S | --host H --port P] [--user U]
    scripts/tidesdb-backup.py restore --target-dir DIR --datadir NEW_DATADIR

backup runs on the server's host (it reads the server's files) while the server runs and
keeps serving; on one connection it does:

  1. BACKUP STAGE START, FLUSH, BLOCK_DDL, BLOCK_COMMIT. From BLOCK_COMMIT on no DDL runs
     and no transaction commits (commits wait, for TidesDB, InnoDB and the binary log
     alike); reads and uncommitted writes go on.
  2. SHOW MASTER STATUS and @@gtid_binlog_pos: exact, since nothing commits meanwhile.
  3. SET GLOBAL tidesdb_checkpoint_dir = 'DIR/#tidesdb': every TidesDB table, as committed
     (hard links of the engine's immutable files when DIR is on the data directory's file
     system, otherwise copies; the write-ahead log's tail is copied).
  4. mariadb-backup --backup --no-lock into DIR: everything else of the server (InnoDB with
     its redo log, Aria, MyISAM, the mysql schema, every table's .frm and .par, .opt, .TRG
     and .TRN files). --no-lock because the locks are this tool's, held throughout; TidesDB's
     own files are not copied by mariadb-backup (it skips engines it does not know).
  5. DIR/tidesdb_backup_info: the position and GTID of step 2, versions, timings.
  6. BACKUP STAGE END, also when a step failed (then DIR is incomplete: remove it).

So every engine's data in DIR is at the same moment, the binary log position recorded. The
price: commits wait for steps 2-5, which take as long as mariadb-backup needs to copy the
non-TidesDB data (a few seconds for a data directory whose InnoDB holds only the mysql
schema; more with large InnoDB tables).

restore lays out NEW_DATADIR (which must not exist or be empty): mariadb-backup --prepare
on DIR (applies InnoDB's copied redo log, in place), then mariadb-backup --copy-back into
NEW_DATADIR, which copies the TidesDB checkpoint with the rest. Start a server on it with
the TidesDB plugin loaded; it holds no binary log: to roll it forward, apply the primary's
binary log from the recorded position (mariadb-binlog --start-position=POS FILE ... |
mariadb), or make it a replica (SET GLOBAL gtid_slave_pos = 'GTID'; CHANGE MASTER TO ...,
MASTER_USE_GTID=slave_pos).

Privileges of --user: RELOAD (BACKUP STAGE), BINLOG MONITOR (SHOW MASTER STATUS), SUPER or
SYSTEM_VARIABLES_ADMIN (the checkpoint), and what mariadb-backup needs (PROCESS, SELECT).
--password is passed on to mariadb-backup's command line; to keep it out of the process
list, give it in an option file (--defaults-file, [client] section).
The last line printed is "tidesdb-backup: OK ..." or "tidesdb-backup: FAILED ..."; the
exit status is 0 or 1.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

import pymysql

INFO_FILE = "tidesdb_backup_info"
DEFAULT_SOCKET = "/run/mysqld/mysqld.sock"  # Debian's
CHECKPOINT = "#tidesdb"


class BackupError(Exception):
    pass


def log(msg):
    print("tidesdb-backup: " + msg, flush=True)


def defaults_args(args):
    """mariadb-backup's option-file arguments, which must come first."""
    if args.no_defaults:
        return ["--no-defaults"]
    if args.defaults_file:
        return ["--defaults-file=" + args.defaults_file]
    return []


def connection_args(args):
    out = []
    if args.socket:
        out.append("--socket=" + args.socket)
    if args.host:
        out.append("--host=" + args.host)
    if args.port:
        out.append("--port=%d" % args.port)
    if args.user:
        out.append("--user=" + args.user)
    if args.password is not None:
        out.append("--password=" + args.password)
    return out


def connect(args):
    kw = {"autocommit": True, "charset": "utf8mb4", "connect_timeout": 10}
    if args.defaults_file:
        kw["read_default_file"] = args.defaults_file  # [client]: what is not given here
    if args.user or not args.defaults_file:
        kw["user"] = args.user or "root"
    if args.password is not None:
        kw["password"] = args.password
    if args.host:
        kw["host"] = args.host
        if args.port:
            kw["port"] = args.port
    elif args.socket or not args.defaults_file:
        kw["unix_socket"] = args.socket or DEFAULT_SOCKET
    return pymysql.connect(**kw)


def query(cur, sql, args=None):
    cur.execute(sql, args)
    return cur.fetchall()


def run(cmd, what, log_path):
    with open(log_path, "ab") as out:
        out.write(("$ " + " ".join(c if not c.startswith("--password=") else "--password=..." for c in cmd)
                   + "\n").encode())
        out.flush()
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    if rc != 0:
        raise BackupError("%s failed with status %d; its output is in %s" % (what, rc, log_path))


def write_info(path, info):
    with open(path, "w") as f:
        for key, value in info.items():
            f.write("%s=%s\n" % (key, "" if value is None else value))
        f.flush()
        os.fsync(f.fileno())


def read_info(target):
    info = {}
    with open(os.path.join(target, INFO_FILE)) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            info[key] = value
    return info


# --- backup -----------------------------------------------------------------------------------

def backup(args):
    target = os.path.abspath(args.target_dir)
    if os.path.exists(target):
        raise BackupError("%s already exists; a backup goes into a new directory" % target)
    conn = connect(args)
    cur = conn.cursor()
    try:
        query(cur, "SELECT @@global.tidesdb_checkpoint_dir")
    except pymysql.err.MySQLError as e:
        raise BackupError("the server has no TidesDB engine loaded (%s)" % e)
    version = query(cur, "SELECT @@version")[0][0]
    plugin = query(cur, "SELECT plugin_version FROM information_schema.plugins WHERE plugin_name = 'TidesDB'")
    # The backup's own statements must not give up while the server finishes what runs.
    cur.execute("SET SESSION lock_wait_timeout = %d" % args.lock_wait_timeout)
    os.makedirs(target)
    try:
        take_backup(args, cur, target, version, plugin)
    except (BackupError, pymysql.err.MySQLError, OSError) as e:
        raise BackupError("%s; %s is incomplete: remove it" % (e, target))
    finally:
        conn.close()


def take_backup(args, cur, target, version, plugin):
    mariadb_backup_log = os.path.join(target, "mariadb-backup.log")
    info = {"server_version": version, "tidesdb_plugin_version": plugin[0][0] if plugin else ""}
    started = time.time()
    staged = False
    try:
        for stage in ("START", "FLUSH", "BLOCK_DDL"):
            cur.execute("BACKUP STAGE " + stage)
            staged = True
        # New commits wait from the moment BLOCK_COMMIT is asked for (while it waits for
        # the commits in flight, too).
        blocked_at = time.time()
        cur.execute("BACKUP STAGE BLOCK_COMMIT")
        info["block_commit_wait_seconds"] = "%.3f" % (time.time() - blocked_at)
        master = query(cur, "SHOW MASTER STATUS")
        if master:
            info["binlog_file"], info["binlog_position"] = master[0][0], master[0][1]
            info["gtid_binlog_pos"] = query(cur, "SELECT @@global.gtid_binlog_pos")[0][0]
        else:
            info["binlog_file"] = info["binlog_position"] = info["gtid_binlog_pos"] = None
        checkpoint_started = time.time()
        cur.execute("SET GLOBAL tidesdb_checkpoint_dir = %s", (os.path.join(target, CHECKPOINT),))
        checkpoint_done = time.time()
        run([args.mariadb_backup] + defaults_args(args) + ["--backup", "--no-lock", "--target-dir=" + target]
            + connection_args(args), "mariadb-backup --backup", mariadb_backup_log)
        info["checkpoint_seconds"] = "%.3f" % (checkpoint_done - checkpoint_started)
        info["commits_blocked_seconds"] = "%.3f" % (time.time() - blocked_at)
        info["taken_at"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(blocked_at))
        write_info(os.path.join(target, INFO_FILE), info)
    finally:
        if staged:
            try:
                cur.execute("BACKUP STAGE END")
            except pymysql.err.MySQLError:
                pass  # the server ends the backup when the connection closes
    position = ("binary log %s:%s, GTID %s" % (info["binlog_file"], info["binlog_position"], info["gtid_binlog_pos"])
                if info["binlog_file"] else "no binary log")
    log("OK backup in %s at %s; commits waited %s s (for commits in flight %s s, checkpoint %s s), %.1f s in all"
        % (target, position, info["commits_blocked_seconds"], info["block_commit_wait_seconds"],
           info["checkpoint_seconds"], time.time() - started))


# --- restore ----------------------------------------------------------------------------------

def restore(args):
    target = os.path.abspath(args.target_dir)
    datadir = os.path.abspath(args.datadir)
    if not os.path.isfile(os.path.join(target, INFO_FILE)):
        raise BackupError("%s is not a complete backup (no %s)" % (target, INFO_FILE))
    if not os.path.isdir(os.path.join(target, CHECKPOINT)):
        raise BackupError("%s has no TidesDB checkpoint (%s)" % (target, CHECKPOINT))
    if os.path.exists(datadir) and os.listdir(datadir):
        raise BackupError("%s is not empty" % datadir)
    info = read_info(target)
    restore_log = os.path.join(target, "mariadb-backup-restore.log")
    run([args.mariadb_backup] + defaults_args(args) + ["--prepare", "--target-dir=" + target],
        "mariadb-backup --prepare", restore_log)
    os.makedirs(datadir, exist_ok=True)
    run([args.mariadb_backup] + defaults_args(args) + ["--copy-back", "--target-dir=" + target,
                                                       "--datadir=" + datadir],
        "mariadb-backup --copy-back", restore_log)
    copied = os.path.join(datadir, CHECKPOINT)
    if not os.path.isdir(copied):
        shutil.copytree(os.path.join(target, CHECKPOINT), copied)
    missing = sorted(set(os.listdir(os.path.join(target, CHECKPOINT))) - set(os.listdir(copied)))
    if missing:
        raise BackupError("the TidesDB checkpoint was not copied whole into %s: missing %s" % (copied, missing))
    for name in ("mariadb-backup.log", "mariadb-backup-restore.log", INFO_FILE):
        leftover = os.path.join(datadir, name)
        if os.path.exists(leftover):
            os.unlink(leftover)
    if info.get("binlog_file"):
        log("restored into %s; it holds every transaction before binary log %s:%s (GTID %s). To roll it "
            "forward: mariadb-binlog --start-position=%s %s [later binlogs] | mariadb; or as a replica: "
            "SET GLOBAL gtid_slave_pos = '%s'; CHANGE MASTER TO ..., MASTER_USE_GTID = slave_pos"
            % (datadir, info["binlog_file"], info["binlog_position"], info["gtid_binlog_pos"],
               info["binlog_position"], info["binlog_file"], info["gtid_binlog_pos"]))
    log("OK restored %s into %s (chown it to the server's user before starting a server on it)" % (target, datadir))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("backup", "restore"))
    ap.add_argument("--target-dir", required=True, help="the backup's directory (backup: created, must not exist)")
    ap.add_argument("--datadir", help="restore: the new data directory (must not exist or be empty)")
    ap.add_argument("--socket", help="the server's socket (default %s)" % DEFAULT_SOCKET)
    ap.add_argument("--host")
    ap.add_argument("--port", type=int)
    ap.add_argument("--user")
    ap.add_argument("--password")
    ap.add_argument("--defaults-file", help="option file for the connection and mariadb-backup")
    ap.add_argument("--no-defaults", action="store_true", help="mariadb-backup reads no option file")
    ap.add_argument("--mariadb-backup", default="mariadb-backup", help="the mariadb-backup binary "
                    "(of the server's exact version)")
    ap.add_argument("--lock-wait-timeout", type=int, default=600,
                    help="seconds each BACKUP STAGE may wait for running statements (default 600)")
    args = ap.parse_args()
    try:
        if args.action == "backup":
            backup(args)
        else:
            if not args.datadir:
                raise BackupError("restore needs --datadir")
            restore(args)
    except (BackupError, pymysql.err.MySQLError, OSError) as e:
        log("FAILED: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
