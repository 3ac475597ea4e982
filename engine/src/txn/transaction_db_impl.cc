// TransactionDB: open, the commit-time validation run by the commit leader, two-phase
// commit resolution, recovery of prepared transactions.
#include "txn/transaction_db_impl.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace tidesdb {

namespace {

// Calls fn(cf_id, key) for every entry of a batch.
template <typename Fn>
Status ForEachKey(const WriteBatch& batch, Fn fn) {
  struct Visitor : WriteBatch::Handler {
    Fn* fn;
    Status Put(uint32_t cf_id, Slice key, Slice, uint64_t) override { return (*fn)(cf_id, key); }
    Status Delete(uint32_t cf_id, Slice key) override { return (*fn)(cf_id, key); }
  } visitor;
  visitor.fn = &fn;
  return batch.Iterate(&visitor);
}

// Commits between prunes of the commit table and the range index, or keys recorded,
// whichever comes first: a few large transactions (a bulk INSERT records every row) would
// otherwise fill the table to its capacity between prunes, and every lookup in a table of
// hundreds of thousands of entries misses the CPU cache (9 % of the server's CPU in the
// sysbench load, bench/results/2026-12-07-s27).
constexpr uint64_t kPruneInterval = 256;
constexpr uint64_t kPruneKeys = 8192;

}  // namespace

Status TransactionDB::Open(const Options& options, const TransactionDBOptions& txn_options,
                           const std::string& path, std::unique_ptr<TransactionDB>* txn_db) {
  txn_db->reset();
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, path, &db);
  if (!s.ok()) return s;
  auto impl = std::make_unique<TransactionDBImpl>(std::move(db), txn_options);
  s = impl->RestoreRecoveredPrepared();
  if (!s.ok()) return s;
  *txn_db = std::move(impl);
  return Status::OK();
}

TransactionDBImpl::TransactionDBImpl(std::unique_ptr<DB> db, const TransactionDBOptions& options)
    : options_(options),
      db_(std::move(db)),
      impl_(static_cast<DBImpl*>(db_.get())),
      locks_(LockManager::Options{64, options.lock_timeout_micros, 64}),
      commit_table_(CommitTable::Options{options.commit_table_bytes, 16}),
      range_index_(options.range_index_bytes) {}

TransactionDBImpl::~TransactionDBImpl() = default;

Status TransactionDBImpl::RestoreRecoveredPrepared() {
  for (auto& [xid, data] : impl_->RecoveredPrepared()) {
    auto rec = std::make_shared<PreparedTxn>();
    rec->xid = xid;
    rec->txn_id = next_txn_id_++;
    rec->handed_over = false;
    Status s = WriteBatch::FromData(data, &rec->batch);
    if (!s.ok()) return s;
    // Prepared transactions keep their write locks across the crash. Two prepared
    // transactions never held X locks on one key, so nothing here waits.
    s = ForEachKey(rec->batch, [&](uint32_t cf_id, Slice key) {
      return locks_.Lock(rec->txn_id, cf_id, key, LockMode::kExclusive, 0);
    });
    if (!s.ok()) return Status::Corruption("recovered prepared transactions lock the same key", xid);
    {
      // The ranges it scanned are not in its record: only its writes are kept out of
      // other transactions' scanned ranges from now on.
      std::lock_guard<std::mutex> g(validate_mu_);
      if (rec->batch.Count() > 0) prepared_writes_.push_back(PreparedWrites{rec->txn_id, &rec->batch});
    }
    std::lock_guard<std::mutex> l(prepared_mu_);
    prepared_[xid] = std::move(rec);
  }
  return Status::OK();
}

std::unique_ptr<Transaction> TransactionDBImpl::BeginTransaction(const TransactionOptions& options) {
  return std::make_unique<TransactionImpl>(this, options, next_txn_id_++);
}

Status TransactionDBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  if (batch == nullptr) return Status::InvalidArgument("null write batch");
  if (options.disable_wal) return Status::NotSupported("transactional writes always use the WAL");
  TransactionOptions to;
  to.isolation = IsolationLevel::kReadCommitted;
  to.mode = ConcurrencyMode::kOptimistic;
  to.sync_mode = options.sync_mode;
  to.max_write_set_bytes = std::max(options_.max_write_set_bytes, batch->ApproximateSize() * 2 + 4096);
  TransactionImpl txn(this, to, next_txn_id_++);
  struct Loader : WriteBatch::Handler {
    TransactionImpl* txn;
    Status Put(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at) override {
      if (expire_at != 0) return Status::NotSupported("TransactionDB::Write does not take expiring entries");
      return txn->WriteById(cf_id, key, value, false);
    }
    Status Delete(uint32_t cf_id, Slice key) override { return txn->WriteById(cf_id, key, Slice(), true); }
  } loader;
  loader.txn = &txn;
  Status s = batch->Iterate(&loader);
  if (!s.ok()) return s;  // the destructor rolls back
  return txn.Commit();
}

// ------------------------------------------------------------------ commit-time validation

Status TransactionDBImpl::CheckPreparedRangesLocked(uint64_t txn_id, uint32_t cf_id, Slice key) const {
  for (const PreparedRange& p : prepared_ranges_) {
    if (p.txn_id != txn_id && p.range.Contains(cf_id, key)) {
      return Status::Busy("write conflict: key lies in a range read by a prepared transaction");
    }
  }
  return Status::OK();
}

Status TransactionDBImpl::CheckPreparedWritesLocked(uint64_t txn_id,
                                                    const std::vector<KeyRange>& ranges) const {
  for (const PreparedWrites& p : prepared_writes_) {
    if (p.txn_id == txn_id) continue;
    Status s = ForEachKey(*p.batch, [&](uint32_t cf_id, Slice key) {
      for (const KeyRange& r : ranges) {
        if (r.Contains(cf_id, key)) {
          return Status::Busy("serialization conflict: a prepared transaction writes into a scanned range");
        }
      }
      return Status::OK();
    });
    if (!s.ok()) return s;
  }
  return Status::OK();
}

void TransactionDBImpl::ForgetPreparedLocked(uint64_t txn_id) {
  std::erase_if(prepared_ranges_, [&](const PreparedRange& p) { return p.txn_id == txn_id; });
  std::erase_if(prepared_writes_, [&](const PreparedWrites& p) { return p.txn_id == txn_id; });
}

Status TransactionDBImpl::ValidateKey(uint32_t cf_id, Slice key, SequenceNumber since,
                                      SequenceNumber* checked_to) {
  *checked_to = since;
  const CommitTable::Check check = commit_table_.CheckKey(cf_id, key, since);
  if (check != CommitTable::Check::kForgotten) return CommitTable::StatusOf(check);
  SequenceNumber newest = 0;
  Status s = impl_->NewestSequence(cf_id, key, &newest, checked_to);
  if (!s.ok()) return s;
  if (newest > since) return CommitTable::StatusOf(CommitTable::Check::kConflict);
  stat_forgotten_checks_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status TransactionDBImpl::ValidateLocked(const TransactionImpl& txn, const WriteBatch* prepared_batch,
                                         SequenceNumber commit_seq) {
  const SequenceNumber snap = txn.snapshot_ != nullptr ? txn.snapshot_->sequence() : 0;
  if (!txn.Pessimistic()) {
    // First committer wins on the write set (snapshot levels), and every key whose read
    // the commit depends on must be unchanged since it was read.
    if (txn.ReadsSnapshot()) {
      for (const auto& [cf_id, map] : txn.ws_.cfs()) {
        for (const auto& [key, e] : map) {
          Status s = commit_table_.Validate(cf_id, key, std::max(snap, txn.ValidateWriteFrom(cf_id, key)));
          if (!s.ok()) return s;
        }
      }
    }
    for (const auto& r : txn.reads_) {
      Status s = commit_table_.Validate(r.cf_id, r.key, r.read_seq);
      if (!s.ok()) return s;
    }
  }
  if (!txn.ranges_.empty()) {
    // Phantoms: nobody committed a key inside a range this transaction scanned
    // (serializable) or checked (reference iterators).
    for (const KeyRange& r : txn.ranges_) {
      Status s = range_index_.Validate(r, r.read_seq != 0 ? r.read_seq : snap);
      if (!s.ok()) return s;
    }
    // Nor will anybody who is prepared now, and so may commit before this transaction's
    // second phase. (Committing now, in one phase, this transaction precedes them.)
    if (prepared_batch != nullptr && !txn.ranges_.empty()) {
      Status s = CheckPreparedWritesLocked(txn.id_, txn.ranges_);
      if (!s.ok()) return s;
    }
  }
  if (!prepared_ranges_.empty()) {
    for (const auto& [cf_id, map] : txn.ws_.cfs()) {
      for (const auto& [key, e] : map) {
        Status s = CheckPreparedRangesLocked(txn.id_, cf_id, key);
        if (!s.ok()) return s;
      }
    }
  }
  if (prepared_batch != nullptr) {
    for (const KeyRange& r : txn.ranges_) prepared_ranges_.push_back(PreparedRange{txn.id_, r});
    if (prepared_batch->Count() > 0) prepared_writes_.push_back(PreparedWrites{txn.id_, prepared_batch});
    return Status::OK();
  }
  for (const auto& [cf_id, map] : txn.ws_.cfs()) {
    for (const auto& [key, e] : map) RecordKeyLocked(cf_id, key, commit_seq);
  }
  return Status::OK();
}

void TransactionDBImpl::RecordCommitLocked(const WriteBatch& batch, SequenceNumber commit_seq) {
  ForEachKey(batch, [&](uint32_t cf_id, Slice key) {
    RecordKeyLocked(cf_id, key, commit_seq);
    return Status::OK();
  });
}

void TransactionDBImpl::RecordKeyLocked(uint32_t cf_id, Slice key, SequenceNumber commit_seq) {
  commit_table_.RecordCommit(cf_id, key, commit_seq);
  if (serializable_active_ != 0) range_index_.Record(cf_id, key, commit_seq);
  last_recorded_seq_ = std::max(last_recorded_seq_, commit_seq);
  keys_since_prune_.fetch_add(1, std::memory_order_relaxed);
}

SequenceNumber TransactionDBImpl::BeginSerializable() {
  std::lock_guard<std::mutex> g(validate_mu_);
  // Commits validated while nobody was serializable were not recorded: the index must
  // not vouch for them. Every later commit's callback runs after this and is recorded.
  if (serializable_active_++ == 0) range_index_.ForgetThrough(last_recorded_seq_);
  return last_recorded_seq_;
}

void TransactionDBImpl::EndSerializable() {
  std::lock_guard<std::mutex> g(validate_mu_);
  --serializable_active_;
}

void TransactionDBImpl::MaybePrune() {
  const bool by_commits =
      commits_since_prune_.fetch_add(1, std::memory_order_relaxed) % kPruneInterval == kPruneInterval - 1;
  if (!by_commits && keys_since_prune_.load(std::memory_order_relaxed) < kPruneKeys) return;
  keys_since_prune_.store(0, std::memory_order_relaxed);
  // Every transaction that validates anything holds a registered snapshot at or below
  // the sequences it validates from, so commits at or below the oldest one can go.
  const SequenceNumber oldest = impl_->OldestSnapshotSequence();
  commit_table_.Prune(oldest);
  range_index_.Prune(oldest);
}

// ------------------------------------------------------------------------ two-phase commit

std::shared_ptr<PreparedTxn> TransactionDBImpl::FindPrepared(Slice xid) const {
  std::lock_guard<std::mutex> l(prepared_mu_);
  auto it = prepared_.find(xid);
  return it == prepared_.end() || it->second->reserving ? nullptr : it->second;
}

Status TransactionDBImpl::ResolvePrepared(const std::shared_ptr<PreparedTxn>& rec, bool commit) {
  {
    std::lock_guard<std::mutex> l(prepared_mu_);
    if (rec->state.load() != Transaction::State::kPrepared) {
      return Status::InvalidArgument("the transaction is no longer prepared");
    }
    if (rec->resolving)
      return Status::TryAgain("the prepared transaction is being resolved by another caller");
    rec->resolving = true;
  }
  DBImpl::TxnWrite tw;
  tw.type = commit ? kWalCommitPrepared : kWalRollbackPrepared;
  tw.xid = rec->xid;
  if (commit) {
    // Nothing to validate: the locks held since Prepare kept every conflict out.
    tw.validate = [this, &rec](SequenceNumber, SequenceNumber last) {
      std::lock_guard<std::mutex> g(validate_mu_);
      RecordCommitLocked(rec->batch, last);
      return Status::OK();
    };
  }
  WriteOptions wo;
  wo.sync_mode = rec->sync_mode;
  WriteBatch empty;
  Status s = impl_->WriteTxn(wo, commit ? &rec->batch : &empty, &tw);
  if (!s.ok()) {
    std::lock_guard<std::mutex> l(prepared_mu_);
    rec->resolving = false;
    return s;
  }
  {
    std::lock_guard<std::mutex> g(validate_mu_);
    ForgetPreparedLocked(rec->txn_id);
  }
  {
    std::lock_guard<std::mutex> l(prepared_mu_);
    prepared_.erase(rec->xid);
    rec->resolving = false;
    rec->commit_sequence = commit && rec->batch.Count() > 0 ? tw.last_sequence : 0;
    rec->state = commit ? Transaction::State::kCommitted : Transaction::State::kRolledBack;
  }
  locks_.UnlockAll(rec->txn_id);
  if (commit) {
    stat_commits_++;
    MaybePrune();
  } else {
    stat_rollbacks_++;
  }
  return Status::OK();
}

std::vector<std::unique_ptr<Transaction>> TransactionDBImpl::RecoverPrepared() {
  std::vector<std::unique_ptr<Transaction>> out;
  std::lock_guard<std::mutex> l(prepared_mu_);
  for (auto& [xid, rec] : prepared_) {
    if (rec->handed_over) continue;
    rec->handed_over = true;
    out.push_back(std::make_unique<TransactionImpl>(this, rec));
  }
  return out;
}

std::vector<std::string> TransactionDBImpl::PreparedXids() const {
  std::lock_guard<std::mutex> l(prepared_mu_);
  std::vector<std::string> xids;
  for (const auto& [xid, rec] : prepared_) {
    // A reservation by a Prepare still writing its record is not prepared yet.
    if (!rec->reserving) xids.push_back(xid);
  }
  return xids;
}

Status TransactionDBImpl::CommitPrepared(Slice xid) {
  auto rec = FindPrepared(xid);
  if (!rec) return Status::NotFound("no prepared transaction with this xid");
  return ResolvePrepared(rec, true);
}

Status TransactionDBImpl::RollbackPrepared(Slice xid) {
  auto rec = FindPrepared(xid);
  if (!rec) return Status::NotFound("no prepared transaction with this xid");
  return ResolvePrepared(rec, false);
}

bool TransactionDBImpl::GetProperty(Slice name, std::string* value) {
  if (name != "tidesdb.txn.stats") return false;
  size_t prepared;
  {
    std::lock_guard<std::mutex> l(prepared_mu_);
    prepared = prepared_.size();
  }
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "commits=%" PRIu64 " rollbacks=%" PRIu64 " conflicts=%" PRIu64 " lock_timeouts=%" PRIu64
                " deadlocks=%" PRIu64 " prepares=%" PRIu64
                " prepared=%zu commit_table_entries=%zu"
                " range_index_keys=%zu locks=%zu forgotten_checks=%" PRIu64 "\n",
                stat_commits_.load(), stat_rollbacks_.load(), stat_conflicts_.load(), stat_timeouts_.load(),
                stat_deadlocks_.load(), stat_prepares_.load(), prepared, commit_table_.NumEntries(),
                range_index_.NumKeys(), locks_.NumLocks(), stat_forgotten_checks_.load());
  *value = buf;
  return true;
}

}  // namespace tidesdb
