// Transaction: buffered writes, reads through the write set, locking (pessimistic),
// savepoints, commit and prepare.
#include <algorithm>
#include <chrono>
#include <thread>

#include "db/db_iter.h"
#include "txn/transaction_db_impl.h"
#include "txn/txn_iterator.h"

namespace tidesdb {

namespace {

// An iterator that is never valid and reports `s` (the DB's own error iterator).
std::unique_ptr<Iterator> ErrorIterator(Status s) {
  return NewDBIterator(std::unique_ptr<InternalIterator>(NewEmptyInternalIterator(std::move(s))),
                       DBIterOptions(), nullptr);
}

}  // namespace

TransactionImpl::TransactionImpl(TransactionDBImpl* db, const TransactionOptions& options, uint64_t id)
    : db_(db), options_(options), sync_mode_(options.sync_mode), id_(id) {
  if (Serializable()) {
    range_floor_ = db_->BeginSerializable();
    serializable_registered_ = true;
  }
  if (options_.snapshot_at_begin && ReadsSnapshot()) EnsureSnapshot();
}

TransactionImpl::TransactionImpl(TransactionDBImpl* db, std::shared_ptr<PreparedTxn> prepared)
    : db_(db), options_(), id_(prepared->txn_id), state_(State::kPrepared), prepared_(std::move(prepared)) {}

TransactionImpl::~TransactionImpl() {
  // A prepared transaction outlives its object: it is durable and resolvable by xid.
  if (state_ == State::kActive) Rollback();
}

Transaction::State TransactionImpl::state() const {
  if (state_ == State::kPrepared && prepared_) return prepared_->state.load();
  return state_;
}

uint64_t TransactionImpl::commit_sequence() const {
  return prepared_ ? prepared_->commit_sequence.load() : commit_seq_;
}

const std::string& TransactionImpl::xid() const {
  static const std::string kNone;
  return prepared_ ? prepared_->xid : kNone;
}

Status TransactionImpl::CheckActive() const {
  if (state_ != State::kActive) return Status::InvalidArgument("transaction is not active");
  return Status::OK();
}

void TransactionImpl::EnsureSnapshot() {
  if (snapshot_ != nullptr) return;
  // A serializable snapshot below range_floor_ would fail every range validation (the
  // index did not record the commits up to there). Commits up to the floor have passed
  // validation and become visible within a commit group's latency: wait for that, a
  // bounded while (a failed WAL write may never publish them; then validations of this
  // transaction's ranges conservatively fail).
  for (int i = 0; i < 2000 && db_->db_->LatestSequence() < range_floor_; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  snapshot_ = db_->db_->GetSnapshot();
}

Status TransactionImpl::CountFailure(const Status& s, uint32_t cf_id, const Slice* key) {
  using Kind = TransactionFailure::Kind;
  const Kind kind = s.IsBusy()       ? Kind::kConflict
                    : s.IsTimedOut() ? Kind::kLockTimeout
                    : s.IsDeadlock() ? Kind::kDeadlock
                                     : Kind::kNone;
  // A failure already recorded by this Commit / Prepare with its key is the same one,
  // seen again on its way out: counted once, and its key kept.
  if (kind == Kind::kNone || (key == nullptr && failure_.kind == kind)) return s;
  if (kind == Kind::kConflict) db_->stat_conflicts_++;
  if (kind == Kind::kLockTimeout) db_->stat_timeouts_++;
  if (kind == Kind::kDeadlock) db_->stat_deadlocks_++;
  failure_ = TransactionFailure();
  failure_.kind = kind;
  failure_.message = s.ToString();
  if (key != nullptr) {
    failure_.cf_id = cf_id;
    failure_.key = std::string(*key);
    if (kind != Kind::kConflict) failure_.blockers = db_->locks_.OthersOn(id_, cf_id, *key);
  } else if (kind == Kind::kConflict) {
    DescribeConflict(&failure_);
  }
  return s;
}

void TransactionImpl::DescribeConflict(TransactionFailure* failure) const {
  const SequenceNumber snap = snapshot_ != nullptr ? snapshot_->sequence() : 0;
  auto found = [&](uint32_t cf_id, Slice key) {
    failure->cf_id = cf_id;
    failure->key = std::string(key);
  };
  if (!Pessimistic() && ReadsSnapshot()) {
    for (const auto& [cf_id, map] : ws_.cfs()) {
      for (const auto& [key, e] : map) {
        if (db_->commit_table_.CheckKey(cf_id, key, std::max(snap, ValidateWriteFrom(cf_id, key))) ==
            CommitTable::Check::kConflict) {
          return found(cf_id, key);
        }
      }
    }
  }
  for (const ReadKey& r : reads_) {
    if (db_->commit_table_.CheckKey(r.cf_id, r.key, r.read_seq) == CommitTable::Check::kConflict) {
      return found(r.cf_id, r.key);
    }
  }
  for (const KeyRange& r : ranges_) {
    if (!db_->range_index_.Validate(r, r.read_seq != 0 ? r.read_seq : snap).ok()) {
      failure->is_range = true;
      failure->cf_id = r.cf_id;
      if (!r.lo_unbounded) failure->key = r.lo;
      if (!r.hi_unbounded) failure->range_limit = r.hi;
      return;
    }
  }
}

Status TransactionImpl::LockKey(uint32_t cf_id, Slice key, LockMode mode) {
  holds_locks_ = true;
  Status s = db_->locks_.Lock(id_, cf_id, key, mode, db_->LockTimeout(options_), &options_.interrupted,
                              &options_.waiting_for);
  if (!s.ok()) return CountFailure(s, cf_id, &key);
  if (ReadsSnapshot()) {
    // Taken after the first lock, so that the first key cannot conflict.
    EnsureSnapshot();
    // Locking reads and writes on the latest state: nothing to check (the lock holds it).
    if (LocksLatest()) return Status::OK();
    // The lock keeps new commits of the key out; one that landed after the snapshot
    // would be a lost update (writes) or a value the snapshot cannot see (serializable
    // reads).
    SequenceNumber checked_to;
    s = db_->ValidateKey(cf_id, key, snapshot_->sequence(), &checked_to);
    if (!s.ok()) return CountFailure(s, cf_id, &key);
  }
  return Status::OK();
}

// ------------------------------------------------------------------------------- writes

Status TransactionImpl::Put(ColumnFamilyHandle* cf, Slice key, Slice value) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  return WriteById(cf->id(), key, value, false);
}

Status TransactionImpl::Delete(ColumnFamilyHandle* cf, Slice key) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  return WriteById(cf->id(), key, Slice(), true);
}

Status TransactionImpl::WriteById(uint32_t cf_id, Slice key, Slice value, bool deleted) {
  Status s = CheckActive();
  if (!s.ok()) return s;
  const size_t limit =
      options_.max_write_set_bytes != 0 ? options_.max_write_set_bytes : db_->options_.max_write_set_bytes;
  if (ws_.BytesAfterWrite(cf_id, key, value.size()) > limit) {
    return Status::NotSupported("transaction write set would exceed max_write_set_bytes",
                                std::to_string(limit));
  }
  if (Pessimistic()) {
    s = LockKey(cf_id, key, LockMode::kExclusive);
    if (!s.ok()) return s;
  } else if (ReadsSnapshot()) {
    EnsureSnapshot();
  }
  if (deleted) {
    ws_.Delete(cf_id, key);
  } else {
    ws_.Put(cf_id, key, value);
  }
  return Status::OK();
}

// -------------------------------------------------------------------------------- reads

Status TransactionImpl::Get(ColumnFamilyHandle* cf, Slice key, std::string* value) {
  Status s = CheckActive();
  if (!s.ok()) return s;
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  if (const WriteEntry* e = ws_.Find(cf->id(), key)) {
    if (e->deleted) return Status::NotFound();
    *value = e->value;
    return Status::OK();
  }
  if (Pessimistic() && Serializable()) {
    s = LockKey(cf->id(), key, LockMode::kShared);
    if (!s.ok()) return s;
  }
  ReadOptions ro;
  if (ReadsSnapshot()) {
    EnsureSnapshot();
    ro.snapshot = snapshot_;
  }
  s = db_->db_->Get(ro, cf, key, value);
  if (!Pessimistic() && Serializable() && (s.ok() || s.IsNotFound())) {
    reads_.push_back(ReadKey{cf->id(), std::string(key), snapshot_->sequence(), false});
  }
  return s;
}

Status TransactionImpl::GetForUpdate(ColumnFamilyHandle* cf, Slice key, std::string* value) {
  return GetLocked(cf, key, value, true);
}

Status TransactionImpl::GetForShare(ColumnFamilyHandle* cf, Slice key, std::string* value) {
  return GetLocked(cf, key, value, false);
}

// GetForUpdate (for_update: X lock, validated and X-locked at an optimistic commit) and
// GetForShare (S lock, validated and S-locked at an optimistic commit).
Status TransactionImpl::GetLocked(ColumnFamilyHandle* cf, Slice key, std::string* value, bool for_update) {
  Status s = CheckActive();
  if (!s.ok()) return s;
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  if (Pessimistic()) {
    s = LockKey(cf->id(), key, for_update ? LockMode::kExclusive : LockMode::kShared);
    if (!s.ok()) return s;
  }
  ReadOptions ro;
  SequenceNumber read_seq = 0;
  if (LocksLatest()) {
    // The latest committed value, which the lock taken above holds still (ro.snapshot
    // stays null; the transaction's snapshot was taken by LockKey for its plain reads).
  } else if (ReadsSnapshot()) {
    EnsureSnapshot();
    ro.snapshot = snapshot_;
    read_seq = snapshot_->sequence();
  } else if (!Pessimistic()) {
    // Read committed: the latest state. The commit validates from read_seq, taken before
    // the read, so a commit that lands in between and is seen by the read only costs a
    // spurious conflict. (Reading at read_seq itself would need it registered: flush and
    // compaction keep only versions some registered snapshot or the present can see.) The
    // registered snapshot is a floor that keeps the commit table from forgetting commits
    // this transaction must see.
    EnsureSnapshot();
    read_seq = db_->db_->LatestSequence();
  }
  if (!Pessimistic()) reads_.push_back(ReadKey{cf->id(), std::string(key), read_seq, for_update});
  if (const WriteEntry* e = ws_.Find(cf->id(), key)) {
    if (e->deleted) return Status::NotFound();
    *value = e->value;
    return Status::OK();
  }
  return db_->db_->Get(ro, cf, key, value);
}

std::unique_ptr<Iterator> TransactionImpl::NewIterator(const ReadOptions& options, ColumnFamilyHandle* cf) {
  Status s = CheckActive();
  if (!s.ok()) return ErrorIterator(s);
  if (cf == nullptr) return ErrorIterator(Status::InvalidArgument("null column family handle"));
  ReadOptions ro = options;
  ro.snapshot = nullptr;
  if (ReadsSnapshot()) {
    EnsureSnapshot();
    ro.snapshot = snapshot_;
  }
  std::optional<std::string> lower, upper;
  if (options.lower_bound != nullptr) lower = std::string(*options.lower_bound);
  if (options.upper_bound != nullptr) upper = std::string(*options.upper_bound);
  return NewTxnIterator(db_->db_->NewIterator(ro, cf), &ws_, cf->id(), std::move(lower), std::move(upper),
                        Serializable() ? &ranges_ : nullptr);
}

Status TransactionImpl::GetReferenced(ColumnFamilyHandle* cf, Slice key, std::string* value) {
  Status s = CheckActive();
  if (!s.ok()) return s;
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  if (Pessimistic()) {
    holds_locks_ = true;
    s = db_->locks_.Lock(id_, cf->id(), key, LockMode::kShared, db_->LockTimeout(options_),
                         &options_.interrupted, &options_.waiting_for);
    if (!s.ok()) return CountFailure(s, cf->id(), &key);
  } else {
    // As GetForShare under read committed: validated from a sequence taken before the read.
    EnsureSnapshot();
    reads_.push_back(ReadKey{cf->id(), std::string(key), db_->db_->LatestSequence(), false});
  }
  if (const WriteEntry* e = ws_.Find(cf->id(), key)) {
    if (e->deleted) return Status::NotFound();
    *value = e->value;
    return Status::OK();
  }
  return db_->db_->Get(ReadOptions(), cf, key, value);
}

std::unique_ptr<Iterator> TransactionImpl::NewReferenceIterator(const ReadOptions& options,
                                                                ColumnFamilyHandle* cf) {
  Status s = CheckActive();
  if (!s.ok()) return ErrorIterator(s);
  if (cf == nullptr) return ErrorIterator(Status::InvalidArgument("null column family handle"));
  ReadOptions ro = options;
  // The range index records commits only while someone needs them: register, and read at
  // a sequence it covers (as EnsureSnapshot does for serializable snapshots). In
  // pessimistic mode too: a writer into the range may be an optimistic transaction, which
  // holds no lock until its commit. The iterator's snapshot, held to the end, keeps the
  // commits after it recorded.
  if (!serializable_registered_) {
    range_floor_ = db_->BeginSerializable();
    serializable_registered_ = true;
  }
  if (!Pessimistic()) EnsureSnapshot();
  for (int i = 0; i < 2000 && db_->db_->LatestSequence() < range_floor_; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  const Snapshot* snap = db_->db_->GetSnapshot();
  reference_snapshots_.push_back(snap);
  ro.snapshot = snap;
  std::optional<std::string> lower, upper;
  if (options.lower_bound != nullptr) lower = std::string(*options.lower_bound);
  if (options.upper_bound != nullptr) upper = std::string(*options.upper_bound);
  return NewTxnIterator(db_->db_->NewIterator(ro, cf), &ws_, cf->id(), std::move(lower), std::move(upper),
                        &ranges_, snap->sequence());
}

// --------------------------------------------------------------------------- savepoints

void TransactionImpl::SetSavepoint() {
  if (state_ == State::kActive) ws_.SetSavepoint();
}

Status TransactionImpl::RollbackToSavepoint() {
  Status s = CheckActive();
  if (!s.ok()) return s;
  return ws_.RollbackToSavepoint();
}

Status TransactionImpl::ReleaseSavepoint() {
  Status s = CheckActive();
  if (!s.ok()) return s;
  return ws_.ReleaseSavepoint();
}

// --------------------------------------------------------------------------- completion

void TransactionImpl::Finish(State final_state) {
  state_ = final_state;
  if (serializable_registered_) {
    db_->EndSerializable();
    serializable_registered_ = false;
  }
  ws_.Clear();
  reads_.clear();
  ranges_.clear();
  for (const Snapshot* snap : reference_snapshots_) db_->db_->ReleaseSnapshot(snap);
  reference_snapshots_.clear();
  checked_to_.clear();
  if (snapshot_ != nullptr) {
    db_->db_->ReleaseSnapshot(snapshot_);
    snapshot_ = nullptr;
  }
  if (holds_locks_) {
    db_->locks_.UnlockAll(id_);
    holds_locks_ = false;
  }
}

Status TransactionImpl::LockForCommit(bool prepare) {
  // Key order (the write set's order) among optimistic committers; waits on pessimistic
  // and prepared holders, with deadlock detection.
  holds_locks_ = true;
  const int64_t timeout = db_->LockTimeout(options_);
  for (const auto& [cf_id, map] : ws_.cfs()) {
    for (const auto& [key, e] : map) {
      Status s = db_->locks_.Lock(id_, cf_id, key, LockMode::kExclusive, timeout, &options_.interrupted,
                                  &options_.waiting_for);
      if (!s.ok()) {
        const Slice k(key);
        return CountFailure(s, cf_id, &k);
      }
    }
  }
  if (prepare) {
    // Between Prepare and Commit nobody may change what the transaction read either.
    for (const ReadKey& r : reads_) {
      Status s =
          db_->locks_.Lock(id_, r.cf_id, r.key, r.for_update ? LockMode::kExclusive : LockMode::kShared,
                           timeout, &options_.interrupted, &options_.waiting_for);
      if (!s.ok()) {
        const Slice k(r.key);
        return CountFailure(s, r.cf_id, &k);
      }
    }
  }
  return Status::OK();
}

Status TransactionImpl::PrevalidateForgotten() {
  // Nothing forgotten from where this transaction validates: the usual case, no lookups.
  const SequenceNumber forgotten = db_->commit_table_.MaxLowWaterMark();
  if (ReadsSnapshot() && snapshot_->sequence() < forgotten) {
    const SequenceNumber snap = snapshot_->sequence();
    for (const auto& [cf_id, map] : ws_.cfs()) {
      for (const auto& [key, e] : map) {
        SequenceNumber checked_to;
        Status s = db_->ValidateKey(cf_id, key, snap, &checked_to);
        if (!s.ok()) {
          const Slice k(key);
          return CountFailure(s, cf_id, &k);
        }
        if (checked_to > snap) checked_to_[{cf_id, key}] = checked_to;
      }
    }
  }
  for (ReadKey& r : reads_) {
    if (r.read_seq >= forgotten) continue;
    Status s = db_->ValidateKey(r.cf_id, r.key, r.read_seq, &r.read_seq);
    if (!s.ok()) {
      const Slice k(r.key);
      return CountFailure(s, r.cf_id, &k);
    }
  }
  return Status::OK();
}

SequenceNumber TransactionImpl::ValidateWriteFrom(uint32_t cf_id, const std::string& key) const {
  if (checked_to_.empty()) return 0;
  auto it = checked_to_.find({cf_id, key});
  return it == checked_to_.end() ? 0 : it->second;
}

Status TransactionImpl::Commit() {
  if (state_ == State::kPrepared) return db_->ResolvePrepared(prepared_, true);
  Status s = CheckActive();
  if (!s.ok()) return s;
  failure_ = TransactionFailure();
  if (ws_.empty()) {
    // Read-only: its reads came from one consistent state (or, at read committed, from
    // committed states); there is nothing to validate or log.
    Finish(State::kCommitted);
    db_->stat_commits_++;
    return Status::OK();
  }
  if (!Pessimistic()) {
    s = LockForCommit(false);
    if (s.ok()) s = PrevalidateForgotten();
    if (!s.ok()) {
      Finish(State::kRolledBack);
      return s;
    }
  }
  WriteBatch batch;
  ws_.BuildBatch(&batch);
  DBImpl::TxnWrite tw;
  tw.validate = [this](SequenceNumber, SequenceNumber last) {
    std::lock_guard<std::mutex> g(db_->validate_mu_);
    return db_->ValidateLocked(*this, nullptr, last);
  };
  // A durable commit goes through the write queue unsynced: it is logged, inserted and
  // visible, and its locks are released, before its fsync, which runs outside the queue
  // (SyncWalThrough, shared with every commit waiting at the same time). Commit returns
  // only after that fsync, so nothing acknowledged can be lost; but no lock is held across
  // an fsync, so a transaction queued on a hot row waits for the commit ahead of it, not
  // for the disk (InnoDB, too, releases row locks before its log flush). A reader may see
  // the commit before it is durable; a durable commit that builds on it makes it durable
  // too, as its WAL record comes later.
  WriteOptions wo;
  wo.sync_mode = sync_mode_;
  const bool sync_after = db_->impl_->EffectiveSyncMode(wo) == SyncMode::kFull;
  if (sync_after) wo.sync_mode = SyncMode::kNone;
  s = db_->impl_->WriteTxn(wo, &batch, &tw);
  if (!s.ok()) {
    CountFailure(s);
    Finish(State::kRolledBack);
    return s;
  }
  commit_seq_ = tw.last_sequence;
  Finish(State::kCommitted);
  db_->stat_commits_++;
  db_->MaybePrune();
  // A failed fsync is sticky (the database refuses writes until it is reopened): the
  // commit is then visible here but may not survive a crash, and Commit says so.
  if (sync_after) return db_->impl_->SyncWalThrough(tw.wal_number, tw.wal_end);
  return Status::OK();
}

Status TransactionImpl::Prepare(Slice xid) {
  Status s = CheckActive();
  if (!s.ok()) return s;
  failure_ = TransactionFailure();
  if (xid.empty() || xid.size() > 65535) return Status::InvalidArgument("xid must be 1..65535 bytes");
  auto rec = std::make_shared<PreparedTxn>();
  rec->xid = std::string(xid);
  rec->txn_id = id_;
  rec->sync_mode = sync_mode_;
  rec->reserving = true;
  {
    std::lock_guard<std::mutex> l(db_->prepared_mu_);
    if (!db_->prepared_.try_emplace(rec->xid, rec).second) {
      return Status::InvalidArgument("a prepared transaction with this xid exists");
    }
  }
  auto fail = [&](const Status& st) {
    {
      std::lock_guard<std::mutex> l(db_->prepared_mu_);
      db_->prepared_.erase(rec->xid);
    }
    {
      std::lock_guard<std::mutex> g(db_->validate_mu_);
      db_->ForgetPreparedLocked(id_);
    }
    CountFailure(st);
    Finish(State::kRolledBack);
    return st;
  };
  if (!Pessimistic()) {
    s = LockForCommit(true);
    if (s.ok()) s = PrevalidateForgotten();
    if (!s.ok()) return fail(s);
  }
  ws_.BuildBatch(&rec->batch);
  DBImpl::TxnWrite tw;
  tw.type = kWalPrepare;
  tw.xid = rec->xid;
  tw.validate = [this, batch = &rec->batch](SequenceNumber, SequenceNumber) {
    std::lock_guard<std::mutex> g(db_->validate_mu_);
    return db_->ValidateLocked(*this, batch, 0);
  };
  // A prepared transaction must survive a power loss, unless the caller chose otherwise.
  // Its fsync runs outside the write queue (SyncWalThrough), shared with the prepares that
  // wait at the same time, so commits queued behind (a binary log's second phases, which
  // do not sync) are not held up by it.
  const SyncMode sync = sync_mode_.value_or(SyncMode::kFull);
  WriteOptions wo;
  wo.sync_mode = sync == SyncMode::kFull ? SyncMode::kNone : sync;
  s = db_->impl_->WriteTxn(wo, &rec->batch, &tw);
  if (s.ok() && sync == SyncMode::kFull) s = db_->impl_->SyncWalThrough(tw.wal_number, tw.wal_end);
  if (!s.ok()) return fail(s);
  {
    std::lock_guard<std::mutex> l(db_->prepared_mu_);
    rec->reserving = false;
  }
  db_->stat_prepares_++;
  prepared_ = std::move(rec);
  // The locks now belong to the prepared transaction (same owner id); the rest goes.
  holds_locks_ = false;
  Finish(State::kPrepared);
  return Status::OK();
}

void TransactionImpl::SetSyncMode(SyncMode mode) {
  sync_mode_ = mode;
  if (state_ == State::kPrepared && prepared_) prepared_->sync_mode = mode;
}

Status TransactionImpl::Rollback() {
  if (state_ == State::kPrepared) return db_->ResolvePrepared(prepared_, false);
  Status s = CheckActive();
  if (!s.ok()) return s;
  Finish(State::kRolledBack);
  db_->stat_rollbacks_++;
  return Status::OK();
}

}  // namespace tidesdb
