// Transactions: atomic, isolated units of work over any number of column families.
//
// A TransactionDB owns a DB and hands out Transactions. A transaction buffers its writes
// in an indexed write set (it reads its own writes, in point reads and iterators) and
// commits them as one WAL record under one commit sequence: after a crash all of it is
// visible or none. The isolation levels, the two concurrency modes and exactly which
// anomalies each combination prevents are documented in docs/TRANSACTIONS.md.
//
// Retryable outcomes (the transaction must be rolled back and run again):
//   Status::Busy      a conflict with a transaction that committed first (optimistic
//                     validation, or a pessimistic lock on a key committed after the
//                     transaction's snapshot)
//   Status::TimedOut  a lock wait exceeded lock_timeout_micros (pessimistic mode, or
//                     commit-time locks in optimistic mode)
//   Status::Deadlock  this transaction was chosen as a deadlock victim
// A failed Commit or Prepare (any status) leaves the transaction rolled back; after a
// failed Put / Delete / Get* it is still active and the caller decides (usually Rollback,
// or RollbackToSavepoint).
//
// Threading: a Transaction is used by one thread at a time; different transactions may
// be used from different threads at once. TransactionDB methods are thread-safe.
//
// Ownership: BeginTransaction returns a Transaction the caller deletes. Deleting an
// active transaction rolls it back. Deleting a prepared transaction leaves it prepared:
// it keeps its locks and can still be resolved by xid (CommitPrepared / RollbackPrepared).
// Iterators of a transaction must be destroyed before the transaction, and every
// transaction before the TransactionDB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tidesdb/db.h"
#include "tidesdb/iterator.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

enum class IsolationLevel : uint8_t {
  kReadUncommitted = 0,  // behaves as kReadCommitted: uncommitted data is never readable
  kReadCommitted = 1,    // each read sees the latest committed state
  kRepeatableRead = 2,   // one snapshot for all reads; first committer wins on writes
  kSnapshot = 3,         // the same mechanism as kRepeatableRead (snapshot isolation)
  kSerializable = 4,     // kSnapshot + validated reads and scanned ranges (or S locks)
};

enum class ConcurrencyMode : uint8_t {
  // No locks while the transaction runs; conflicts are found at commit by validation
  // against a table of recent commits. Cheap when conflicts are rare.
  kOptimistic = 0,
  // Row locks as the transaction runs (X for writes and GetForUpdate, S for reads under
  // kSerializable); waits time out; deadlocks are detected and a victim aborted.
  kPessimistic = 1,
};

struct TransactionOptions {
  IsolationLevel isolation = IsolationLevel::kRepeatableRead;
  ConcurrencyMode mode = ConcurrencyMode::kOptimistic;
  // Lock wait bound, microseconds; negative = TransactionDBOptions::lock_timeout_micros.
  // 0 = never wait (TimedOut at once if a lock is taken).
  int64_t lock_timeout_micros = -1;
  // Sync mode of this transaction's Commit and Prepare. Unset: Commit follows the
  // database's (Options::sync_mode) and Prepare syncs (kFull). Set, both follow it: a
  // coordinator whose own log is the durable record (a SQL server's binary log) need not
  // have the prepare synced too.
  std::optional<SyncMode> sync_mode;
  // Largest write set (keys + values + per-entry overhead) the transaction may buffer;
  // 0 = TransactionDBOptions::max_write_set_bytes. A write that would exceed it fails
  // with Status::NotSupported and is not applied; the transaction stays active (roll it
  // back, or to a savepoint). A transaction is never committed piecemeal.
  size_t max_write_set_bytes = 0;
  // Pessimistic mode at kRepeatableRead and kSnapshot: locking reads (GetForUpdate,
  // GetForShare) read the latest committed value, which their lock then holds still, and
  // neither they nor writes fail because the key was committed after the snapshot. Plain
  // reads and iterators keep the snapshot. This is InnoDB's REPEATABLE READ: a write
  // computed from a locking read applies to the latest committed row, where first
  // committer wins would make it fail and retry (the hot rows of a TPC-C mix); a write
  // computed from a plain read can overwrite a commit the snapshot did not see (a lost
  // update, as in InnoDB). Ignored in optimistic mode and at the other levels.
  bool locking_reads_latest = false;
  // Take the read snapshot at BeginTransaction instead of at the first operation
  // (START TRANSACTION WITH CONSISTENT SNAPSHOT). Levels kRepeatableRead and above.
  bool snapshot_at_begin = false;
  // Asked, from the waiting thread, about every LockManager::kInterruptPollMicros while a
  // lock request of this transaction waits: true ends the wait with Status::Aborted
  // ("lock wait interrupted"), the request withdrawn and the transaction still active
  // (a SQL engine passes "the statement was killed"). Empty: waits run to their timeout.
  std::function<bool()> interrupted;
  // Called from the waiting thread, with no lock held, with the id() of each transaction
  // a lock request of this transaction waits for (a holder of the key, or a request
  // queued ahead of it), once each: when the request starts to wait, and within
  // LockManager::kInterruptPollMicros for blockers that arrive later (a SQL engine reports
  // the wait to its server, whose parallel replication breaks waits that contradict the
  // commit order it must keep). Empty: not called.
  std::function<void(uint64_t holder_id)> waiting_for;
};

struct TransactionDBOptions {
  int64_t lock_timeout_micros = 50'000'000;  // InnoDB's innodb_lock_wait_timeout default
  size_t max_write_set_bytes = 256 << 20;
  // Memory for the table of recent commits that optimistic validation and the
  // pessimistic snapshot check consult. When it overflows it forgets the oldest commits
  // and validations with older snapshots fail conservatively (Busy), never wrongly pass.
  size_t commit_table_bytes = 64 << 20;
  // Memory for the ordered index of recent commits that validates scanned ranges of
  // kSerializable transactions (phantoms); the same conservative overflow rule.
  size_t range_index_bytes = 16 << 20;
};

// Why a transaction's most recent retryable failure happened (Transaction::last_failure),
// for diagnostics: a SQL engine logs it and shows the latest one.
struct TransactionFailure {
  enum class Kind : uint8_t {
    kNone,         // no retryable failure
    kConflict,     // Status::Busy: a write, read or range conflict
    kLockTimeout,  // Status::TimedOut
    kDeadlock,     // Status::Deadlock
  };
  Kind kind = Kind::kNone;
  // The key whose lock or validation failed, and its column family; empty if the failure
  // names no single key (commits the conflict table no longer tracks).
  uint32_t cf_id = 0;
  std::string key;
  // For a scanned-range conflict: the range, key to range_limit inclusive (an empty one of
  // either: unbounded on that side).
  bool is_range = false;
  std::string range_limit;
  // For lock failures: ids (Transaction::id) of the other transactions holding the key's
  // lock or queued for it just after the request failed (for a deadlock, these include the
  // next transaction on the cycle).
  std::vector<uint64_t> blockers;
  std::string message;  // the status' message
};

// One lock of the lock manager: held (granted) or requested and waiting (TransactionDB::
// GetLockStatus). Keys are column family keys, as passed to Put / GetForUpdate.
struct LockStatus {
  uint64_t txn_id = 0;
  uint32_t cf_id = 0;
  std::string key;
  bool exclusive = false;
  bool granted = false;
};

class Transaction {
 public:
  Transaction() = default;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  virtual ~Transaction() = default;

  // --- Writes (buffered until Commit). Pessimistic mode: X-locks the key first (the
  // key need not exist). Busy / TimedOut / Deadlock as described above.
  virtual Status Put(ColumnFamilyHandle* cf, Slice key, Slice value) = 0;
  virtual Status Delete(ColumnFamilyHandle* cf, Slice key) = 0;

  // --- Reads. The transaction's own writes first, then the database as the isolation
  // level says (docs/TRANSACTIONS.md). NotFound if absent or deleted.
  virtual Status Get(ColumnFamilyHandle* cf, Slice key, std::string* value) = 0;
  // A read that announces a write: pessimistic mode X-locks the key (then checks, above
  // kReadCommitted, that nobody committed it after the snapshot: Busy if so); optimistic
  // mode adds the key to the set validated at commit (lost-update protection at every
  // level). Reads the latest committed value under kReadCommitted / kReadUncommitted,
  // the snapshot otherwise.
  virtual Status GetForUpdate(ColumnFamilyHandle* cf, Slice key, std::string* value) = 0;
  // A read that keeps the row from changing until the transaction ends, without
  // announcing a write (SELECT ... LOCK IN SHARE MODE): pessimistic mode S-locks the key
  // (other sharers proceed, writers wait); optimistic mode validates at commit that the
  // key is unchanged since the read. Reads like GetForUpdate.
  virtual Status GetForShare(ColumnFamilyHandle* cf, Slice key, std::string* value) = 0;
  // Iterates the database at the transaction's read view merged with its write set.
  // Honors options.lower_bound / upper_bound (options.snapshot is ignored). Under
  // kSerializable the range the iterator walks is validated at commit (phantoms). The
  // iterator sees the write set as it is whenever it moves.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, ColumnFamilyHandle* cf) = 0;

  // --- Referential checks (a SQL engine's foreign keys): reads of the latest committed
  // state merged with the write set at every isolation level, as InnoDB checks its
  // foreign keys, whatever snapshot the transaction reads through otherwise.
  // The key's latest value; pessimistic mode S-locks the key first, with no snapshot check
  // (a key committed after the snapshot is what the check wants to see); optimistic mode
  // validates at commit that the key is unchanged since the read (Busy if not).
  virtual Status GetReferenced(ColumnFamilyHandle* cf, Slice key, std::string* value) = 0;
  // Iterates the latest committed state merged with the write set. The commit validates,
  // as kSerializable does for its scans, that nobody committed a key inside the range the
  // iterator walked after it read it (Busy if so: a child row inserted beside a parent's
  // delete), in both modes: a pessimistic caller's locks (the parent row's X lock, which
  // pessimistic child inserts S-lock through GetReferenced) do not stop an optimistic
  // writer, which locks nothing until its commit.
  virtual std::unique_ptr<Iterator> NewReferenceIterator(const ReadOptions& options,
                                                         ColumnFamilyHandle* cf) = 0;

  // --- Savepoints (nested). RollbackToSavepoint undoes the writes made since the most
  // recent savepoint and removes it; ReleaseSavepoint removes it and keeps the writes.
  // Locks taken since a savepoint are kept after rolling back to it. NotFound if no
  // savepoint is set.
  virtual void SetSavepoint() = 0;
  virtual Status RollbackToSavepoint() = 0;
  virtual Status ReleaseSavepoint() = 0;

  // --- Completion.
  // Two-phase commit, phase one: validates the transaction, then logs its write set as
  // prepared under `xid` (synced unless the sync mode says otherwise). After OK the transaction is durable as
  // prepared, keeps its locks (optimistic transactions take theirs here), is invisible to readers, and Commit
  // cannot fail on a conflict. xid: 1..65535 bytes, unique among prepared transactions.
  virtual Status Prepare(Slice xid) = 0;
  // Commits (the second phase if prepared). A failure leaves an active transaction
  // rolled back; a prepared one stays prepared (retry, or resolve by xid).
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
  // Changes the sync mode of what follows (TransactionOptions::sync_mode), e.g. a second
  // phase whose decision the coordinator has already logged durably commits with kNone.
  virtual void SetSyncMode(SyncMode mode) = 0;

  // --- Introspection.
  enum class State : uint8_t { kActive, kPrepared, kCommitted, kRolledBack };
  virtual State state() const = 0;
  // Unique within the TransactionDB's lifetime (also the lock owner id).
  virtual uint64_t id() const = 0;
  // The sequence the transaction reads at (0 until the snapshot is taken; always 0 under
  // kReadCommitted / kReadUncommitted, which read the latest state).
  virtual uint64_t snapshot_sequence() const = 0;
  // Whether locking reads and writes act on the latest committed state
  // (TransactionOptions::locking_reads_latest, in effect at this level and mode).
  virtual bool locks_latest() const = 0;
  // The last sequence of the committed write set (0 before commit, or if it was empty).
  virtual uint64_t commit_sequence() const = 0;
  virtual const std::string& xid() const = 0;  // "" unless prepared
  // These two may also be read from another thread while the object lives (a list of
  // open transactions); the values may be a moment old.
  virtual size_t write_set_bytes() const = 0;
  virtual size_t write_set_count() const = 0;
  // The most recent Busy / TimedOut / Deadlock of this transaction's operations (kind
  // kNone if none), kept after the failure rolled the transaction back, until the object
  // is deleted. Owner thread only.
  virtual TransactionFailure last_failure() const { return {}; }
};

class TransactionDB {
 public:
  // Opens the database like DB::Open, then restores the prepared transactions recovery
  // found (their write-set keys X-locked again).
  static Status Open(const Options& options, const TransactionDBOptions& txn_options, const std::string& path,
                     std::unique_ptr<TransactionDB>* txn_db);
  static Status Open(const Options& options, const std::string& path,
                     std::unique_ptr<TransactionDB>* txn_db) {
    return Open(options, TransactionDBOptions(), path, txn_db);
  }

  TransactionDB() = default;
  TransactionDB(const TransactionDB&) = delete;
  TransactionDB& operator=(const TransactionDB&) = delete;
  virtual ~TransactionDB() = default;

  // The underlying database for non-transactional access (column families, flush,
  // properties, plain reads). Writes made through it bypass conflict detection: a
  // transaction cannot see that they collide with it. Use Write() below instead.
  virtual DB* db() = 0;

  virtual std::unique_ptr<Transaction> BeginTransaction(const TransactionOptions& options) = 0;

  // A single-batch write that takes part in conflict detection (X locks its keys, is
  // recorded in the commit table), as an autocommit transaction would.
  virtual Status Write(const WriteOptions& options, WriteBatch* batch) = 0;

  // Two-phase commit after a crash: hands over the prepared transactions recovery found
  // and nobody has claimed yet (each with its xid(), state kPrepared; Commit / Rollback
  // resolve them). Calling it again returns only ones not yet handed over.
  virtual std::vector<std::unique_ptr<Transaction>> RecoverPrepared() = 0;
  // The xids of every prepared, unresolved transaction (recovered or live), sorted.
  virtual std::vector<std::string> PreparedXids() const = 0;
  // Resolve a prepared transaction by xid, whoever holds its Transaction object.
  // NotFound if no prepared transaction has that xid.
  virtual Status CommitPrepared(Slice xid) = 0;
  virtual Status RollbackPrepared(Slice xid) = 0;

  // Counters: "tidesdb.txn.stats" (commits, rollbacks, conflicts, timeouts, deadlocks,
  // commit-table entries). False if the name is unknown.
  virtual bool GetProperty(Slice name, std::string* value) = 0;

  // Every lock held and every lock request waiting, at one moment per lock-table stripe
  // (not one moment for all), sorted by (cf_id, key), holders before waiters.
  virtual std::vector<LockStatus> GetLockStatus() const { return {}; }
};

}  // namespace tidesdb
