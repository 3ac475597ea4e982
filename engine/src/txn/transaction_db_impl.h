// TransactionDBImpl and TransactionImpl: the transaction layer over DBImpl.
//
// Commit path: a transaction's write set becomes one WriteBatch, written through the DB's
// group commit (DBImpl::WriteTxn) with a validation callback that the commit leader runs
// in queue order after assigning the batch's sequences and before the WAL write. The
// callback validates (optimistic conflicts, serializable reads and scanned ranges,
// prepared ranges) and records the commit in the CommitTable / RecentCommitIndex, under
// validate_mu_. So validation is atomic with respect to other committers while commits
// stay group-committed (no mutex is held across the WAL write or fsync).
//
// Every committer X-locks its write set in the LockManager (pessimistic transactions as
// they write, optimistic ones at commit in key order), so a key locked by a pessimistic
// or prepared transaction is never committed by anybody else meanwhile. Details and the
// isolation guarantees: docs/TRANSACTIONS.md.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "db/db_impl.h"
#include "tidesdb/transaction.h"
#include "txn/commit_table.h"
#include "txn/lock_manager.h"
#include "txn/recent_commit_index.h"
#include "txn/write_set.h"

namespace tidesdb {

class TransactionImpl;

// A prepared transaction, shared by its Transaction object (if any) and the TransactionDB
// (which resolves it by xid). Everything needed to commit or roll it back.
struct PreparedTxn {
  std::string xid;
  uint64_t txn_id = 0;  // lock owner
  WriteBatch batch;
  std::optional<SyncMode> sync_mode;
  std::atomic<Transaction::State> state{Transaction::State::kPrepared};
  std::atomic<uint64_t> commit_sequence{0};
  // Guarded by TransactionDBImpl::prepared_mu_.
  bool reserving = false;   // the xid is taken by a Prepare still writing its record
  bool resolving = false;   // a Commit / Rollback is writing its record
  bool handed_over = true;  // false for recovered ones not yet returned by RecoverPrepared
};

class TransactionDBImpl final : public TransactionDB {
 public:
  TransactionDBImpl(std::unique_ptr<DB> db, const TransactionDBOptions& options);
  ~TransactionDBImpl() override;

  Status RestoreRecoveredPrepared();  // at open

  DB* db() override { return db_.get(); }
  std::unique_ptr<Transaction> BeginTransaction(const TransactionOptions& options) override;
  Status Write(const WriteOptions& options, WriteBatch* batch) override;
  std::vector<std::unique_ptr<Transaction>> RecoverPrepared() override;
  std::vector<std::string> PreparedXids() const override;
  Status CommitPrepared(Slice xid) override;
  Status RollbackPrepared(Slice xid) override;
  bool GetProperty(Slice name, std::string* value) override;
  std::vector<LockStatus> GetLockStatus() const override { return locks_.AllLocks(); }

  // For tests: lock requests currently waiting.
  size_t NumLockWaiters() const { return locks_.NumWaiters(); }

 private:
  friend class TransactionImpl;

  // Runs in the commit leader's callback. With `prepared_batch` (the transaction's write
  // set as its PreparedTxn holds it): validate and register the transaction's ranges and
  // writes as prepared, record nothing; otherwise validate and record at commit_seq.
  Status ValidateLocked(const TransactionImpl& txn, const WriteBatch* prepared_batch,
                        SequenceNumber commit_seq);
  void RecordCommitLocked(const WriteBatch& batch, SequenceNumber commit_seq);
  // Records a committed key in the commit table, and in the range index while a
  // serializable transaction may validate ranges against it. Requires validate_mu_.
  void RecordKeyLocked(uint32_t cf_id, Slice key, SequenceNumber commit_seq);
  // A serializable transaction begins / ends. The range index records commits only while
  // one is active (otherwise every commit would pay an ordered insert in the commit
  // leader's critical section for nobody). Begin returns the sequence up to which commits
  // may be missing from the index: the transaction's snapshot must not be older.
  SequenceNumber BeginSerializable();
  void EndSerializable();
  // Busy if (cf, key) lies in a range scanned by a prepared transaction other than txn_id.
  Status CheckPreparedRangesLocked(uint64_t txn_id, uint32_t cf_id, Slice key) const;
  // Busy if a prepared transaction other than txn_id writes a key inside one of ranges.
  // A transaction that prepares commits later, possibly after such a writer, whose commit
  // cannot fail: it must not have scanned past that writer's uncommitted key.
  Status CheckPreparedWritesLocked(uint64_t txn_id, const std::vector<KeyRange>& ranges) const;
  void ForgetPreparedLocked(uint64_t txn_id);
  Status ResolvePrepared(const std::shared_ptr<PreparedTxn>& txn, bool commit);
  std::shared_ptr<PreparedTxn> FindPrepared(Slice xid) const;
  void MaybePrune();
  // Whether anyone committed (cf_id, key) after `since`: asks the commit table, and where
  // it has forgotten that far back, the database (the key's newest version). OK with
  // *checked_to = the sequence up to which the key is known clean (`since`, or the
  // database's visible sequence when it answered: validations from then on can start
  // there); Busy on a commit after `since`.
  Status ValidateKey(uint32_t cf_id, Slice key, SequenceNumber since, SequenceNumber* checked_to);
  int64_t LockTimeout(const TransactionOptions& o) const {
    return o.lock_timeout_micros >= 0 ? o.lock_timeout_micros : options_.lock_timeout_micros;
  }

  const TransactionDBOptions options_;
  std::unique_ptr<DB> db_;
  DBImpl* const impl_;
  LockManager locks_;
  CommitTable commit_table_;
  RecentCommitIndex range_index_;
  std::atomic<uint64_t> next_txn_id_{1};

  // Held by validation callbacks (which the DB already runs one at a time) and by
  // whoever changes prepared_ranges_.
  mutable std::mutex validate_mu_;
  struct PreparedRange {
    uint64_t txn_id;
    KeyRange range;
  };
  std::vector<PreparedRange> prepared_ranges_;
  // The write sets of prepared transactions (each batch owned by its PreparedTxn, which
  // outlives its entry here), for CheckPreparedWritesLocked.
  struct PreparedWrites {
    uint64_t txn_id;
    const WriteBatch* batch;
  };
  std::vector<PreparedWrites> prepared_writes_;
  size_t serializable_active_ = 0;        // under validate_mu_
  SequenceNumber last_recorded_seq_ = 0;  // under validate_mu_: newest commit recorded

  mutable std::mutex prepared_mu_;
  std::map<std::string, std::shared_ptr<PreparedTxn>, std::less<>> prepared_;

  std::atomic<uint64_t> commits_since_prune_{0};
  std::atomic<uint64_t> keys_since_prune_{0};  // recorded in the commit table since its last prune
  std::atomic<uint64_t> stat_commits_{0}, stat_rollbacks_{0}, stat_conflicts_{0}, stat_timeouts_{0},
      stat_deadlocks_{0}, stat_prepares_{0};
  // Validations the commit table could not answer and the database did (ValidateKey).
  std::atomic<uint64_t> stat_forgotten_checks_{0};
};

class TransactionImpl final : public Transaction {
 public:
  TransactionImpl(TransactionDBImpl* db, const TransactionOptions& options, uint64_t id);
  // A recovered prepared transaction.
  TransactionImpl(TransactionDBImpl* db, std::shared_ptr<PreparedTxn> prepared);
  ~TransactionImpl() override;

  Status Put(ColumnFamilyHandle* cf, Slice key, Slice value) override;
  Status Delete(ColumnFamilyHandle* cf, Slice key) override;
  Status Get(ColumnFamilyHandle* cf, Slice key, std::string* value) override;
  Status GetForUpdate(ColumnFamilyHandle* cf, Slice key, std::string* value) override;
  Status GetLocked(ColumnFamilyHandle* cf, Slice key, std::string* value, bool for_update);
  Status GetForShare(ColumnFamilyHandle* cf, Slice key, std::string* value) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, ColumnFamilyHandle* cf) override;
  Status GetReferenced(ColumnFamilyHandle* cf, Slice key, std::string* value) override;
  std::unique_ptr<Iterator> NewReferenceIterator(const ReadOptions& options, ColumnFamilyHandle* cf) override;
  void SetSavepoint() override;
  Status RollbackToSavepoint() override;
  Status ReleaseSavepoint() override;
  Status Prepare(Slice xid) override;
  Status Commit() override;
  Status Rollback() override;
  void SetSyncMode(SyncMode mode) override;
  State state() const override;
  uint64_t id() const override { return id_; }
  uint64_t snapshot_sequence() const override {
    return snapshot_ != nullptr && ReadsSnapshot() ? snapshot_->sequence() : 0;
  }
  bool locks_latest() const override { return LocksLatest(); }
  uint64_t commit_sequence() const override;
  const std::string& xid() const override;
  size_t write_set_bytes() const override { return ws_.bytes(); }
  size_t write_set_count() const override { return ws_.count(); }
  TransactionFailure last_failure() const override { return failure_; }

  // Internal writes by column family id (TransactionDB::Write).
  Status WriteById(uint32_t cf_id, Slice key, Slice value, bool deleted);

 private:
  friend class TransactionDBImpl;

  // A key read from the database whose value the commit depends on: validated at commit
  // (optimistic) against commits after read_seq.
  struct ReadKey {
    uint32_t cf_id;
    std::string key;
    SequenceNumber read_seq;
    bool for_update;
  };

  bool ReadsSnapshot() const { return options_.isolation >= IsolationLevel::kRepeatableRead; }
  bool Serializable() const { return options_.isolation == IsolationLevel::kSerializable; }
  bool Pessimistic() const { return options_.mode == ConcurrencyMode::kPessimistic; }
  // TransactionOptions::locking_reads_latest in effect: locking reads and writes act on the
  // latest committed state, without the snapshot check.
  bool LocksLatest() const {
    return Pessimistic() && options_.locking_reads_latest && ReadsSnapshot() && !Serializable();
  }
  Status CheckActive() const;
  void EnsureSnapshot();
  // Pessimistic: lock (cf, key) in mode and, above read committed, check that nobody
  // committed it after the snapshot.
  Status LockKey(uint32_t cf_id, Slice key, LockMode mode);
  // Counts a retryable failure and records it for last_failure(): with the key whose lock
  // or validation failed when the caller knows it (`key` not null), otherwise, for a
  // conflict at commit, the first write-set key, read or range found conflicting now.
  Status CountFailure(const Status& s, uint32_t cf_id = 0, const Slice* key = nullptr);
  // The conflicting key of a Busy validation, looked up again (diagnostics, after the fact).
  void DescribeConflict(TransactionFailure* failure) const;
  // Ends the transaction locally: drops the write set, locks and snapshot.
  void Finish(State final_state);
  // Optimistic commit / prepare: X locks on the write set (and, for prepare, the keys read).
  Status LockForCommit(bool prepare);
  // Optimistic commit / prepare, before the commit leader validates: the keys whose
  // commits the commit table no longer covers are checked in the database here, outside
  // the leader's critical section, and their validation then starts where that check
  // ended (checked_to_, read_seq). So a long transaction conflicts only on keys really
  // committed after its snapshot, however many other commits the table has forgotten.
  Status PrevalidateForgotten();
  // The sequence from which the commit leader validates write-set key (cf_id, key).
  SequenceNumber ValidateWriteFrom(uint32_t cf_id, const std::string& key) const;

  TransactionDBImpl* const db_;
  const TransactionOptions options_;
  std::optional<SyncMode> sync_mode_;  // options_.sync_mode until SetSyncMode
  const uint64_t id_;
  State state_ = State::kActive;
  const Snapshot* snapshot_ = nullptr;  // registered with the DB
  WriteSet ws_;
  std::vector<ReadKey> reads_;
  std::vector<KeyRange> ranges_;  // scanned by iterators (serializable, reference iterators)
  // The snapshots reference iterators read at (optimistic): held until the end, so that
  // the commits their ranges are validated against stay recorded.
  std::vector<const Snapshot*> reference_snapshots_;
  // Write-set keys checked clean in the database up to a sequence above the snapshot
  // (PrevalidateForgotten); usually empty.
  std::map<std::pair<uint32_t, std::string>, SequenceNumber> checked_to_;
  // Registered with BeginSerializable (serializable, or a reference iterator of an
  // optimistic transaction); the snapshot is not taken below this.
  bool serializable_registered_ = false;
  SequenceNumber range_floor_ = 0;
  bool holds_locks_ = false;
  uint64_t commit_seq_ = 0;
  std::shared_ptr<PreparedTxn> prepared_;
  TransactionFailure failure_;  // last_failure(); reset when Commit or Prepare begins
};

}  // namespace tidesdb
