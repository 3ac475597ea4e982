// Write path: group commit through one WAL, memtable insertion, memtable switching and
// write back-pressure.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <thread>

#include "db/db_impl.h"
#include "db/filename.h"
#include "util/coding.h"
#include "util/thread_name.h"
#include "wal/log_writer.h"

namespace tidesdb {

namespace {
// A leader stops adding followers' batches to its group past this many bytes.
constexpr size_t kMaxGroupBytes = 4 << 20;
// Frozen memtables a slot may hold before writers wait for a flush.
constexpr size_t kMaxImmutablesPerSlot = 4;
// Unsynced WAL bytes after which the leader starts their writeback (LogWriter::StartWriteback).
constexpr uint64_t kWalWritebackBytes = 1 << 20;
}  // namespace

struct DBImpl::Writer {
  WriteBatch* batch = nullptr;
  const std::function<Status()>* exclusive = nullptr;
  TxnWrite* txn = nullptr;
  SyncMode sync = SyncMode::kFull;
  bool disable_wal = false;
  bool done = false;
  // Set by the leader (write_mu_ held) once this writer's record is in the WAL: insert the
  // batch at first_seq into the memtables, then finish `group` or wait for it.
  bool insert = false;
  SequenceNumber first_seq = 0;
  WriteGroup* group = nullptr;
  // Set (after done or insert, or when this writer became the front of the queue) by
  // whoever holds write_mu_ and is about to notify cv: lets a waiting writer notice
  // without sleeping.
  std::atomic<bool> ready{false};
  Status status;
  std::condition_variable cv;
};

// A commit group after its WAL write, while its members insert their own batches. Lives
// on the leader's stack; the leader returns only after the group is finished.
struct DBImpl::WriteGroup {
  explicit WriteGroup(std::vector<Writer*>& members) : members(members) {}
  std::vector<Writer*>& members;  // queue order: the front members of writers_ it took
  bool publish = false;           // the group's sequences went to the memtables
  // The group's sequences are (first_sequence - 1, last_sequence]; it publishes once the
  // group before it published first_sequence - 1.
  SequenceNumber first_sequence = 0, last_sequence = 0;
  // Members still inserting. The one that brings it to zero finishes the group (its
  // decrement acquires every other member's inserts, then its release store publishes).
  std::atomic<size_t> inserting{0};
};

namespace {
// How long a writer that is not at the front of the queue watches for its turn (or for
// its batch to be committed by the leader) before it sleeps on its condition variable. A
// commit group takes tens of microseconds; sleeping and being woken costs about as much
// again in context switches, which on few cores is most of a small transaction's time.
constexpr auto kWriterSpin = std::chrono::microseconds(50);

// Spins (yielding the CPU) until done() or the spin time has passed.
template <typename Done>
void SpinUntil(Done done) {
  const auto until = std::chrono::steady_clock::now() + kWriterSpin;
  for (int i = 0; !done(); ++i) {
    if ((i & 15) == 15 && std::chrono::steady_clock::now() >= until) return;
    std::this_thread::yield();
  }
}

void SpinUntilReady(const std::atomic<bool>& ready) {
  SpinUntil([&] { return ready.load(std::memory_order_acquire); });
}

// A leader keeps at most this many WAL payloads between groups, each of at most this
// capacity (an OLTP commit's batch fits; at most 128 KiB per thread).
constexpr size_t kKeptPayloads = 16;
constexpr size_t kKeptPayloadBytes = 8 << 10;
}  // namespace

// The vectors a commit group's leader works with. Each thread keeps its own from one
// group it leads to the next, so that leading a group allocates none of them once the
// thread has led one as large: they were about 9 of the 33 allocations per autocommit
// DELETE in the server (bench/results/2026-12-06-s23/delete-profile).
struct DBImpl::LeaderScratch {
  std::vector<Writer*> members, accepted, written, inserters, own;
  std::vector<WriteBatch*> batches;
  std::vector<MemTableSlot*> slots;
  std::vector<SequenceNumber> first_seqs;
  std::vector<std::string> payloads;
  std::vector<LogWriter::Record> records;
  bool in_use = false;

  // The calling thread's scratch, released (emptied, capacity kept) by ~Lease. A thread
  // leads one group at a time: a write from inside its own group would queue behind it.
  class Lease {
   public:
    Lease() {
      thread_local LeaderScratch mine;
      assert(!mine.in_use);
      s_ = &mine;
      s_->in_use = true;
    }
    ~Lease() {
      for (auto* v : {&s_->members, &s_->accepted, &s_->written, &s_->inserters, &s_->own}) v->clear();
      s_->batches.clear();
      s_->slots.clear();
      s_->first_seqs.clear();
      s_->records.clear();
      if (s_->payloads.size() > kKeptPayloads) s_->payloads.resize(kKeptPayloads);
      for (std::string& p : s_->payloads) {
        if (p.capacity() > kKeptPayloadBytes) std::string().swap(p);
      }
      s_->in_use = false;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    LeaderScratch* operator->() const { return s_; }

   private:
    LeaderScratch* s_;
  };
};

void DBImpl::Wake(Writer* w) {
  w->ready.store(true, std::memory_order_release);
  w->cv.notify_one();
}

SyncMode DBImpl::EffectiveSyncMode(const WriteOptions& options) const {
  return options.sync_mode.value_or(options_.sync_mode);
}

Status DBImpl::Put(const WriteOptions& options, ColumnFamilyHandle* cf, Slice key, Slice value) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  WriteBatch batch;
  batch.Put(cf, key, value);
  return Write(options, &batch);
}

Status DBImpl::Delete(const WriteOptions& options, ColumnFamilyHandle* cf, Slice key) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  WriteBatch batch;
  batch.Delete(cf, key);
  return Write(options, &batch);
}

Status DBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  if (batch == nullptr) return Status::InvalidArgument("null write batch");
  if (batch->Count() == 0) return Status::OK();
  static const std::function<Status()> kNone;
  const uint64_t start = env_->NowMicros();
  Status s = WriteImpl(options, batch, kNone);
  write_micros_.Add(env_->NowMicros() - start);
  return s;
}

Status DBImpl::WriteTxn(const WriteOptions& options, WriteBatch* batch, TxnWrite* txn) {
  if (batch == nullptr || txn == nullptr)
    return Status::InvalidArgument("null write batch or transaction write");
  static const std::function<Status()> kNone;
  return WriteImpl(options, batch, kNone, txn);
}

Status DBImpl::ValidateBatch(const WriteBatch& batch) const {
  struct Checker : WriteBatch::Handler {
    const DBImpl* db;
    Status Check(uint32_t cf_id) {
      auto it = db->cfs_.find(cf_id);
      if (it == db->cfs_.end()) return Status::InvalidArgument("write to a dropped or unknown column family");
      return it->second->damage;
    }
    Status Put(uint32_t cf_id, Slice, Slice, uint64_t) override { return Check(cf_id); }
    Status Delete(uint32_t cf_id, Slice) override { return Check(cf_id); }
  } checker;
  checker.db = this;
  return batch.Iterate(&checker);
}

Status DBImpl::ApplyBatchToMemtables(const WriteBatch& batch, SequenceNumber first_seq) {
  // Runs for a commit group that holds the front of the write queue (its leader or its
  // members, concurrently); slots' active memtables and the CF map change only in the
  // write queue, so they are stable here without mutex_.
  struct Inserter : WriteBatch::Handler {
    DBImpl* db;
    SequenceNumber seq;
    std::string scratch;
    void Add(uint32_t cf_id, ValueType type, Slice key, Slice value) {
      const ColumnFamilyData& cfd = *db->cfs_.at(cf_id);
      MemTable* mem = db->unified_slot_ ? db->unified_slot_->active.mem.get() : cfd.slot->active.mem.get();
      mem->Add(cf_id, seq++, type, key, value, cfd.options.filter_prefix_length);
    }
    Status Put(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at) override {
      if (expire_at == 0) {
        Add(cf_id, ValueType::kValue, key, value);
      } else {
        scratch.clear();
        PutFixed64(&scratch, expire_at);
        scratch.append(value.data(), value.size());
        Add(cf_id, ValueType::kValueWithExpiry, key, scratch);
      }
      return Status::OK();
    }
    Status Delete(uint32_t cf_id, Slice key) override {
      Add(cf_id, ValueType::kDeletion, key, Slice());
      return Status::OK();
    }
  } inserter;
  inserter.db = this;
  inserter.seq = first_seq;
  if (before_memtable_insert_) before_memtable_insert_(batch);
  return batch.Iterate(&inserter);
}

size_t DBImpl::WriteQueueLengthForTest() {
  std::lock_guard<std::mutex> wl(write_mu_);
  return writers_.size();
}

Status DBImpl::WriteImpl(const WriteOptions& options, WriteBatch* batch,
                         const std::function<Status()>& exclusive, TxnWrite* txn) {
  Writer w;
  w.batch = batch;
  w.txn = txn;
  w.exclusive = batch == nullptr ? &exclusive : nullptr;
  w.sync = EffectiveSyncMode(options);
  w.disable_wal = options.disable_wal;

  std::unique_lock<std::mutex> wl(write_mu_);
  writers_.push_back(&w);
  if (&w != writers_.front()) {
    wl.unlock();
    SpinUntilReady(w.ready);
    // Re-locking also waits until whoever set `ready` has finished notifying w.cv, so w
    // (and its cv) may be destroyed once this returns.
    wl.lock();
    // A member of a group that left the queue is in it no more.
    while (!w.done && !w.insert && (writers_.empty() || &w != writers_.front())) w.cv.wait(wl);
  }
  if (w.done) return w.status;
  if (w.insert) {
    // The leader logged this writer's record: insert it beside the group's other members.
    w.ready.store(false, std::memory_order_relaxed);
    wl.unlock();
    return InsertAsGroupMember(&w);
  }

  // This writer leads. An exclusive operation (DDL, manual flush) runs alone, once the
  // groups still inserting are published.
  if (w.exclusive != nullptr) {
    wl.unlock();
    DrainWriteGroups();
    Status s = (*w.exclusive)();
    wl.lock();
    writers_.pop_front();
    if (!writers_.empty()) Wake(writers_.front());
    return s;
  }

  LeaderScratch::Lease scratch;
  WriteGroup group(scratch->members);
  size_t group_bytes = 0;
  for (Writer* x : writers_) {
    if (x->exclusive != nullptr || x->disable_wal != w.disable_wal) break;
    size_t sz = x->batch->ApproximateSize();
    if (!group.members.empty() && group_bytes + sz > kMaxGroupBytes) break;
    group.members.push_back(x);
    group_bytes += sz;
  }
  wl.unlock();

  std::vector<Writer*>& accepted = scratch->accepted;
  Status s;
  {
    std::unique_lock<std::mutex> l(mutex_);
    if (shutting_down_) s = Status::Aborted("database is closing");
    if (s.ok() && !wal_error_.ok()) s = wal_error_;
    if (s.ok()) s = ResolveManifestErrorLocked(l);
    if (s.ok() && wal_rotate_pending_) s = NewWal();
    // Refused before validation: every writer of the group gets the error (their status is
    // OK by default, so leaving it would acknowledge writes that were never logged).
    if (!s.ok()) {
      for (Writer* x : group.members) x->status = s;
    }
    if (s.ok()) {
      for (Writer* x : group.members) {
        x->status = ValidateBatch(*x->batch);
        if (x->status.ok() && x->txn != nullptr && x->txn->type == kWalPrepare &&
            prepared_wal_.count(x->txn->xid) != 0) {
          x->status = Status::InvalidArgument("a transaction with this xid is already prepared");
        }
        if (x->status.ok()) accepted.push_back(x);
      }
      std::vector<WriteBatch*>& batches = scratch->batches;
      for (Writer* x : accepted) batches.push_back(x->batch);
      if (!accepted.empty()) s = MakeRoomForWrite(l, batches, &scratch->slots);
    }
  }

  // The writers whose records go to the WAL: accepted ones that also passed their
  // transaction validation. first_seqs[i] is written[i]'s first sequence. Of those, the
  // ones whose batches go to the memtables (not a prepare or a rollback): inserters.
  std::vector<Writer*>& written = scratch->written;
  std::vector<SequenceNumber>& first_seqs = scratch->first_seqs;
  std::vector<Writer*>& inserters = scratch->inserters;
  if (s.ok() && !accepted.empty()) {
    SequenceNumber first = last_sequence_ + 1;
    SequenceNumber next = first;
    std::vector<std::string>& payloads = scratch->payloads;
    if (payloads.size() < accepted.size()) payloads.resize(accepted.size());
    std::vector<LogWriter::Record>& records = scratch->records;
    bool need_sync = false;
    for (Writer* x : accepted) {
      const WalRecordType type = x->txn != nullptr ? x->txn->type : kWalWriteBatch;
      const bool consumes = type == kWalWriteBatch || type == kWalCommitPrepared;
      const SequenceNumber count = consumes ? x->batch->Count() : 0;
      if (x->txn != nullptr && x->txn->validate) {
        x->status = x->txn->validate(next, next + count - 1);
        if (!x->status.ok()) continue;
      }
      std::string& payload = payloads[written.size()];
      payload.clear();
      if (type != kWalWriteBatch) PutLengthPrefixedSlice(&payload, x->txn->xid);
      if (consumes) PutFixed64(&payload, next);
      if (type != kWalRollbackPrepared) payload.append(x->batch->Data());
      records.push_back(LogWriter::Record{static_cast<uint8_t>(type), payload});
      written.push_back(x);
      first_seqs.push_back(next);
      next += count;
      need_sync |= x->sync == SyncMode::kFull;
    }
    if (next - 1 > kMaxSequence) s = Status::NotSupported("sequence numbers exhausted");
    std::string unlogged;
    if (unlogged_first_ != 0 && !w.disable_wal && !written.empty()) {
      PutFixed64(&unlogged, unlogged_first_);
      PutFixed64(&unlogged, unlogged_last_);
      records.insert(records.begin(), LogWriter::Record{kWalUnloggedSequences, unlogged});
    }
    if (written.empty()) {
      // Every writer failed its validation: nothing to log.
    } else if (s.ok() && !w.disable_wal) {
      bool append_failed = false, sync_failed = false;
      Status cut;              // after a failed append: cutting the WAL back to its last whole record
      uint64_t logged_in = 0;  // the WAL the records went to
      {
        // The syncer thread may fsync this WAL too; LogWriter is not thread-safe.
        std::lock_guard<std::mutex> g(wal_mu_);
        const uint64_t before = wal_->size();
        logged_in = wal_number_;
        s = wal_->AddRecords(records);
        append_failed = !s.ok();
        if (append_failed) cut = CutFailedWalLocked(before);
        if (s.ok()) {
          unlogged_first_ = 0;
          const uint64_t end = wal_->size();
          stat_wal_bytes_ += end - before;
          wal_dirty_.store(true, std::memory_order_release);
          for (Writer* x : written) {
            if (x->txn == nullptr) continue;
            x->txn->wal_number = logged_in;
            x->txn->wal_end = end;
          }
          if (need_sync) {
            s = wal_->Sync();
            stat_wal_syncs_++;
            sync_failed = !s.ok();
            if (s.ok()) {
              wal_dirty_.store(false, std::memory_order_release);
              NoteSynced(logged_in, end);
            }
          } else {
            // Keep the device busy with the WAL as it grows, so the sync at rotation
            // (which every mode does) does not stall the leader for a whole memtable.
            wal_->StartWriteback(kWalWritebackBytes);
          }
        }
      }
      if (append_failed) {
        // Continue in a new WAL, so a later record never follows garbage (which recovery
        // would call corruption). If the new WAL cannot be created now (disk still full),
        // the next commit tries again.
        std::lock_guard<std::mutex> l(mutex_);
        if (cut.ok()) {
          wal_rotate_pending_ = true;
          NewWal();
        } else {
          wal_error_ = Status::IOError("WAL unusable after a failed write; reopen", cut.ToString());
          Log(LogLevel::kError, "%s", wal_error_.ToString().c_str());
        }
      } else if (sync_failed) {
        // After a failed fsync the durable state of the WAL is unknown: refuse further
        // writes until the database is reopened and recovers from what is on disk.
        NoteSyncFailed(s);
        std::lock_guard<std::mutex> l(mutex_);
        wal_error_ = Status::IOError("WAL sync failed; reopen the database", s.ToString());
        Log(LogLevel::kError, "%s", wal_error_.ToString().c_str());
      }
      if (s.ok()) {
        // Two-phase commit bookkeeping: a prepare pins the WAL that holds it until its
        // transaction is resolved (MinLiveWalNumberLocked).
        std::lock_guard<std::mutex> l(mutex_);
        for (Writer* x : written) {
          if (x->txn == nullptr) continue;
          if (x->txn->type == kWalPrepare) {
            prepared_wal_[x->txn->xid] = logged_in;
          } else if (x->txn->type != kWalWriteBatch) {
            prepared_wal_.erase(x->txn->xid);
          }
        }
      }
    }
    if (s.ok() && !written.empty()) {
      // The group is logged: its sequences are taken. Readers see none of them until every
      // batch is in the memtables (FinishWriteGroup publishes).
      for (size_t i = 0; i < written.size(); ++i) {
        Writer* x = written[i];
        const WalRecordType type = x->txn != nullptr ? x->txn->type : kWalWriteBatch;
        if (type == kWalWriteBatch || type == kWalCommitPrepared) {
          x->first_seq = first_seqs[i];
          inserters.push_back(x);
          if (x->txn != nullptr) x->txn->last_sequence = first_seqs[i] + x->batch->Count() - 1;
        }
      }
      if (w.disable_wal && next > first_seqs.front()) {
        if (unlogged_first_ == 0) unlogged_first_ = first_seqs.front();
        unlogged_last_ = next - 1;
      }
      // A group that took no sequences (prepares, rollbacks of prepared transactions) has
      // nothing to publish: it would tie with the next group, which may publish first.
      group.publish = next > first;
      group.first_sequence = last_sequence_ + 1;
      last_sequence_ = next - 1;
      group.last_sequence = last_sequence_;
      stat_commit_groups_++;
      stat_commits_ += written.size();
    }
  }
  if (!s.ok()) {
    // A failure before the WAL write fails every accepted writer; one after it, every
    // writer whose record was in that write. Nothing reaches a memtable.
    for (Writer* x : first_seqs.empty() ? accepted : written) x->status = s;
  }

  // Members with batches worth a hand-off insert their own, all at once (MemTable::Add is
  // safe concurrently); the leader inserts the rest. The group leaves the queue first, so
  // the next group logs while this one inserts; the memtables cannot be switched meanwhile,
  // since a switch first waits for every group to publish (SwitchMemtablesLocked).
  std::vector<Writer*>& own = scratch->own;
  for (Writer* x : inserters) {
    if (x != &w && x->batch->Count() >= kMinEntriesForOwnInsert) own.push_back(x);
  }
  if (!own.empty()) group.inserting.store(own.size() + 1, std::memory_order_relaxed);  // the leader too
  wl.lock();
  for (size_t i = 0; i < group.members.size(); ++i) writers_.pop_front();
  w.ready.store(false, std::memory_order_relaxed);  // from here: set when the group is done
  for (Writer* x : own) {
    x->group = &group;
    x->insert = true;
    Wake(x);
  }
  if (!writers_.empty()) Wake(writers_.front());
  wl.unlock();
  if (own.empty()) {
    // Nothing worth handing off (a group of one, small batches): no coordination at all.
    for (Writer* x : inserters) x->status = ApplyBatchToMemtables(*x->batch, x->first_seq);
    FinishWriteGroup(&group, &w);
    return w.status;
  }
  stat_member_inserts_ += own.size();
  w.group = &group;
  for (Writer* x : inserters) {
    if (x->insert) continue;
    x->status = ApplyBatchToMemtables(*x->batch, x->first_seq);
  }
  return LeaveWriteGroup(&w);
}

Status DBImpl::InsertAsGroupMember(Writer* w) {
  w->status = ApplyBatchToMemtables(*w->batch, w->first_seq);
  return LeaveWriteGroup(w);
}

Status DBImpl::LeaveWriteGroup(Writer* w) {
  if (w->group->inserting.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    FinishWriteGroup(w->group, w);
    return w->status;
  }
  return WaitForWriteGroup(w);
}

Status DBImpl::WaitForWriteGroup(Writer* w) {
  // Acknowledged only once visible: a writer reads its own write after Write returns.
  SpinUntilReady(w->ready);
  std::unique_lock<std::mutex> wl(write_mu_);
  while (!w->done) w->cv.wait(wl);
  return w->status;
}

void DBImpl::FinishWriteGroup(WriteGroup* group, Writer* self) {
  if (group->publish) PublishInOrder(group->first_sequence - 1, group->last_sequence);
  if (group->members.size() == 1 && group->members.front() == self) return;  // nobody to wake
  // The group (on its leader's stack) and its writers may go away once write_mu_ is
  // released: each woken writer takes it before it returns.
  std::lock_guard<std::mutex> wl(write_mu_);
  for (Writer* x : group->members) {
    if (x != self) {
      x->done = true;
      Wake(x);
    }
  }
}

void DBImpl::WaitVisible(SequenceNumber seq) {
  // seq_cst with the publisher's store and count load: either this thread sees the new
  // visible sequence, or the publisher sees it counted and notifies under publish_mu_.
  auto reached = [&] { return visible_sequence_.load(std::memory_order_seq_cst) >= seq; };
  if (reached()) return;
  // The group before is usually finishing its inserts on the other core: watch briefly.
  SpinUntil(reached);
  if (reached()) return;
  std::unique_lock<std::mutex> pl(publish_mu_);
  publish_waiters_.fetch_add(1, std::memory_order_seq_cst);
  publish_cv_.wait(pl, reached);
  publish_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void DBImpl::PublishInOrder(SequenceNumber after, SequenceNumber last) {
  WaitVisible(after);
  assert(visible_sequence_.load(std::memory_order_relaxed) <= last);  // never backwards
  visible_sequence_.store(last, std::memory_order_seq_cst);
  if (publish_waiters_.load(std::memory_order_seq_cst) == 0) return;  // nobody sleeps
  // A waiter counted itself under publish_mu_ and checks before it sleeps: taking the
  // mutex here means it is either asleep already or will see `last`.
  { std::lock_guard<std::mutex> pl(publish_mu_); }
  publish_cv_.notify_all();
}

void DBImpl::DrainWriteGroups() {
  WaitVisible(last_sequence_.load(std::memory_order_relaxed));  // the front's own
}

Status DBImpl::MakeRoomForWrite(std::unique_lock<std::mutex>& l, const std::vector<WriteBatch*>& group,
                                std::vector<MemTableSlot*>* slots_scratch) {
  std::vector<MemTableSlot*>& slots = *slots_scratch;
  slots.clear();
  if (unified_slot_) {
    slots.push_back(unified_slot_.get());
  } else {
    struct Collector : WriteBatch::Handler {
      DBImpl* db;
      std::vector<MemTableSlot*>* out;
      void Add(uint32_t cf_id) {
        MemTableSlot* s = db->cfs_.at(cf_id)->slot.get();
        if (std::find(out->begin(), out->end(), s) == out->end()) out->push_back(s);
      }
      Status Put(uint32_t cf_id, Slice, Slice, uint64_t) override {
        Add(cf_id);
        return Status::OK();
      }
      Status Delete(uint32_t cf_id, Slice) override {
        Add(cf_id);
        return Status::OK();
      }
    } collector;
    collector.db = this;
    collector.out = &slots;
    for (WriteBatch* b : group) b->Iterate(&collector);
  }
  Status s = ThrottleForCompactionLocked(l);
  if (!s.ok()) return s;
  if (options_.max_memory_usage > 0) {
    // Over the memory bound: freeze the largest active memtable so a flush can free it, and
    // wait for flushes (which always make progress unless they fail).
    auto total = [&] {
      uint64_t t = 0;
      for (const auto& sl : slots_) {
        t += sl->active.mem->ApproximateMemoryUsage();
        for (const auto& imm : sl->immutables) t += imm.mem->ApproximateMemoryUsage();
      }
      return t;
    };
    while (total() > options_.max_memory_usage && !shutting_down_) {
      MemTableSlot* largest = nullptr;
      for (const auto& sl : slots_) {
        if (!sl->active.mem->empty() && sl->immutables.size() < kMaxImmutablesPerSlot &&
            (largest == nullptr ||
             sl->active.mem->ApproximateMemoryUsage() > largest->active.mem->ApproximateMemoryUsage())) {
          largest = sl.get();
        }
      }
      if (largest != nullptr && largest->active.mem->ApproximateMemoryUsage() >= (64u << 10)) {
        s = SwitchMemtableLocked(largest);
        if (!s.ok()) return s;
        continue;
      }
      bool flushing = false;
      for (const auto& sl : slots_) flushing |= !sl->immutables.empty();
      if (!flushing) break;  // nothing left to free: the bound cannot be met, do not wedge
      if (!bg_error_.ok()) return bg_error_;
      bg_cv_.wait_for(l, std::chrono::milliseconds(100));
    }
  }
  if (!options_.unified_memtable) {
    s = CapTotalWalSizeLocked();
    if (!s.ok()) return s;
  }
  for (MemTableSlot* slot : slots) {
    while (slot->active.mem->ApproximateMemoryUsage() >= slot->write_buffer_size) {
      if (slot->immutables.size() < kMaxImmutablesPerSlot) {
        s = SwitchMemtableLocked(slot);
        if (!s.ok()) return s;
        break;
      }
      // Flushes are behind: wait for one. If flushing is failing (disk full), say so
      // instead of waiting forever; the write can be retried once space is freed.
      if (!bg_error_.ok()) return bg_error_;
      if (shutting_down_) return Status::Aborted("database is closing");
      auto start = std::chrono::steady_clock::now();
      bg_cv_.wait_for(l, std::chrono::milliseconds(100));
      stat_stall_micros_ +=
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
              .count();
    }
  }
  return Status::OK();
}

Status DBImpl::SwitchMemtableLocked(MemTableSlot* slot) { return SwitchMemtablesLocked({slot}); }

Status DBImpl::SwitchMemtablesLocked(const std::vector<MemTableSlot*>& slots) {
  // Called by the write queue's front: no group is inserting into what it freezes.
  DrainWriteGroups();
  bool any = false;
  for (MemTableSlot* slot : slots) any |= !slot->active.mem->empty();
  if (!any) return Status::OK();
  Status s = NewWal();
  if (!s.ok()) return s;
  for (MemTableSlot* slot : slots) {
    if (slot->active.mem->empty()) continue;
    MemTableEntry frozen = slot->active;
    frozen.end_sequence = last_sequence_;
    slot->immutables.push_back(std::move(frozen));
    slot->active.mem = NewMemTable(slot->write_buffer_size);
    slot->active.wal_number = wal_number_;
    PublishSlotLocked(slot);
  }
  MaybeScheduleFlushLocked();
  return Status::OK();
}

Status DBImpl::CapTotalWalSizeLocked() {
  if (!wal_cap_check_due_) return Status::OK();
  wal_cap_check_due_ = false;
  uint64_t limit = options_.max_total_wal_size;
  if (limit == 0) {
    for (const auto& slot : slots_) limit += 4 * uint64_t{slot->write_buffer_size};
  }
  if (closed_wal_bytes_ <= limit || wal_files_.empty()) return Status::OK();
  const uint64_t oldest = wal_files_.begin()->first;
  if (oldest >= wal_number_) return Status::OK();
  // Only the active memtables can be frozen; frozen ones are flushing already, and a
  // prepared transaction's WAL stays until it resolves.
  std::vector<MemTableSlot*> holding;
  for (const auto& slot : slots_) {
    if (!slot->active.mem->empty() && slot->active.wal_number <= oldest &&
        slot->immutables.size() < kMaxImmutablesPerSlot) {
      holding.push_back(slot.get());
    }
  }
  if (holding.empty()) return Status::OK();
  stat_wal_size_flushes_ += holding.size();
  return SwitchMemtablesLocked(holding);
}

Status DBImpl::CutFailedWalLocked(uint64_t size) {
  // A partial record may be in the file. Cut it off and make the rest durable through a
  // new handle (the writer's error is sticky). Done under wal_mu_, so the syncer never
  // syncs the failed writer and takes its append error for a failed fsync.
  Status s = CutWalDurably(WalFileName(dbname_, wal_number_), size);
  wal_cut_ = s.ok();
  return s;
}

Status DBImpl::CutWalDurably(const std::string& fname, uint64_t size) {
  Status s = env_->TruncateFile(fname, size);
  std::unique_ptr<WritableFile> file;
  EnvOptions eo;
  eo.buffered_writes = false;
  if (s.ok()) s = env_->NewAppendableFile(fname, eo, &file);
  if (s.ok()) s = file->Sync();
  if (file) file->Close();
  return s;
}

Status DBImpl::NewWal() {
  if (wal_) {
    // Sync the finished log before its successor exists, so that after a power loss what
    // survives is a prefix of the commit order even in SyncMode::kNone: a later log never
    // outlives an earlier one's tail (recovery calls a damaged record in a WAL that is not
    // the newest corruption). Finish also cuts off the file's preallocated zeros, which
    // would read as such a tail. A writer that failed an append and was cut is durable
    // already.
    std::lock_guard<std::mutex> l(wal_mu_);
    Status t = wal_cut_ ? Status::OK() : wal_->Finish();
    if (!t.ok()) {
      NoteSyncFailed(t);
      wal_error_ = Status::IOError("WAL sync at rotation failed; reopen the database", t.ToString());
      Log(LogLevel::kError, "%s", wal_error_.ToString().c_str());
      return wal_error_;
    }
  }
  uint64_t number = next_file_number_++;
  std::string fname = WalFileName(dbname_, number);
  EnvOptions eo;
  eo.buffered_writes = false;  // every commit reaches the OS before it is acknowledged
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(fname, eo, &file);
  if (!s.ok()) return s;
  auto writer = std::make_shared<LogWriter>(std::move(file), LogKind::kWal, number);
  // The header must be durable before records follow it, and the file's name too.
  s = writer->Sync();
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (!s.ok()) {
    writer->Close();
    env_->RemoveFile(fname);
    return s;
  }
  std::shared_ptr<LogWriter> old;
  const uint64_t old_number = wal_number_;
  {
    std::lock_guard<std::mutex> l(wal_mu_);
    old = std::move(wal_);
    wal_ = std::move(writer);
    wal_number_ = number;
    wal_cut_ = false;
  }
  if (old) {
    AddWalFileLocked(old_number, old->size());
    wal_cap_check_due_ = true;
  }
  AddWalFileLocked(number, 0);
  if (old) {
    // A SyncWalThrough that took the old writer before the switch may still be in its
    // fsync: its file stays open until that is over (a new sync takes the new writer).
    std::unique_lock<std::mutex> l(sync_mu_);
    sync_cv_.wait(l, [this] { return !sync_running_; });
  }
  if (old) old->Close();  // synced above (or cut and synced by the caller)
  wal_rotate_pending_ = false;
  wal_dirty_.store(false, std::memory_order_release);
  return Status::OK();
}

Status DBImpl::SyncWAL() {
  uint64_t number, end;
  {
    std::lock_guard<std::mutex> g(wal_mu_);
    // A cut WAL (its last append failed) was synced by the leader; a new one follows.
    if (!wal_ || wal_cut_) return Status::OK();
    number = wal_number_;
    end = wal_->size();
  }
  return SyncWalThrough(number, end);
}

void DBImpl::NoteSyncedLocked(uint64_t number, uint64_t end) {
  if (number > synced_wal_ || (number == synced_wal_ && end > synced_end_)) {
    synced_wal_ = number;
    synced_end_ = end;
  }
}

void DBImpl::NoteSyncFailedLocked(const Status& s) {
  if (sync_error_.ok()) sync_error_ = Status::IOError("WAL sync failed; reopen the database", s.ToString());
}

void DBImpl::NoteSynced(uint64_t number, uint64_t end) {
  std::lock_guard<std::mutex> l(sync_mu_);
  NoteSyncedLocked(number, end);
}

void DBImpl::NoteSyncFailed(const Status& s) {
  std::lock_guard<std::mutex> l(sync_mu_);
  NoteSyncFailedLocked(s);
}

Status DBImpl::SyncWalThrough(uint64_t wal_number, uint64_t wal_end) {
  std::unique_lock<std::mutex> l(sync_mu_);
  for (;;) {
    if (!sync_error_.ok()) return sync_error_;
    if (synced_wal_ > wal_number || (synced_wal_ == wal_number && synced_end_ >= wal_end)) {
      return Status::OK();
    }
    if (!sync_running_) break;
    // Watch for the running fsync to finish before sleeping, as a queued writer does: a
    // durable commit waits here for every fsync, and on a disk whose fsync takes a few
    // hundred microseconds the sleep and wake-up cost about as much again.
    const uint64_t seen = syncs_finished_.load(std::memory_order_relaxed);
    l.unlock();
    SpinUntil([&] { return syncs_finished_.load(std::memory_order_acquire) != seen; });
    l.lock();
    sync_cv_.wait(l,
                  [&] { return syncs_finished_.load(std::memory_order_relaxed) != seen || !sync_running_; });
  }
  // Lead one sync of everything appended so far; whoever asks meanwhile waits for it.
  sync_running_ = true;
  l.unlock();
  std::shared_ptr<LogWriter> wal;
  uint64_t number = 0, end = 0;
  bool rotated = false;
  {
    std::lock_guard<std::mutex> g(wal_mu_);
    // A WAL older than the live one was synced at rotation; a cut one by its leader.
    rotated = !wal_ || wal_number_ > wal_number || wal_cut_;
    if (!rotated) {
      wal = wal_;
      number = wal_number_;
      end = wal_->size();
    }
  }
  Status s;
  if (!rotated) {
    // Without wal_mu_: commit groups append meanwhile (their records may or may not be
    // covered; only [0, end) is claimed durable). NewWal waits for sync_running_ to clear
    // before it closes this file.
    s = wal->SyncFile(end);
    stat_wal_syncs_++;
  }
  l.lock();
  sync_running_ = false;
  if (!s.ok()) {
    NoteSyncFailedLocked(s);
  } else if (!rotated) {
    NoteSyncedLocked(number, end);
  }
  syncs_finished_.fetch_add(1, std::memory_order_release);
  sync_cv_.notify_all();
  s = sync_error_;
  l.unlock();
  if (!s.ok()) {
    // As for a commit's own sync: the durable state of the WAL is now unknown.
    std::lock_guard<std::mutex> m(mutex_);
    if (wal_error_.ok()) {
      wal_error_ = s;
      Log(LogLevel::kError, "%s", wal_error_.ToString().c_str());
    }
  }
  return s;
}

void DBImpl::IntervalSyncLoop() {
  SetCurrentThreadName("tdb-sync");
  const auto interval = std::chrono::microseconds(std::max<uint64_t>(options_.sync_interval_micros, 1000));
  std::unique_lock<std::mutex> l(syncer_mu_);
  auto next = std::chrono::steady_clock::now() + interval;
  while (!shutting_down_) {
    // The destructor sets shutting_down_ and then notifies under syncer_mu_: no lost wake.
    if (syncer_cv_.wait_until(l, next, [this] { return shutting_down_.load(); })) break;
    next = std::chrono::steady_clock::now() + interval;
    if (!wal_dirty_.exchange(false, std::memory_order_acq_rel)) continue;
    l.unlock();
    SyncWAL();  // a failure refuses later writes
    l.lock();
  }
}

}  // namespace tidesdb
