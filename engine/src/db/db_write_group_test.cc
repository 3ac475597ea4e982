// Commit groups whose members insert their own batches into the memtables (after the
// leader's WAL write), concurrently, and groups that log while the one before them still
// inserts: readers never see a group's sequences before all of the group and every
// earlier group is inserted, a memtable switch waits for the groups still inserting, a
// failed WAL write inserts nothing and fails every member, and two-phase commit records go
// through such groups. Each in both memtable modes; the stress test in every sync mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "db/db_impl.h"
#include "env/fault_injection_env.h"
#include "testutil/injecting_env.h"
#include "testutil/test_util.h"
#include "tidesdb/db.h"
#include "tidesdb/write_batch.h"

namespace tidesdb {
namespace {

// The first key of a batch: how the tests below tell batches apart in the insert hook.
std::string FirstKey(const WriteBatch& batch) {
  struct First : WriteBatch::Handler {
    std::string key;
    bool seen = false;
    Status Put(uint32_t, Slice k, Slice, uint64_t) override { return Take(k); }
    Status Delete(uint32_t, Slice k) override { return Take(k); }
    Status Take(Slice k) {
      if (!seen) key = std::string(k);
      seen = true;
      return Status::OK();
    }
  } first;
  batch.Iterate(&first);
  return first.key;
}

uint64_t StatField(DB* db, const std::string& field) {
  std::string stats;
  if (!db->GetProperty(db->DefaultColumnFamily(), "tidesdb.stats", &stats)) return ~uint64_t{0};
  const std::string name = " " + field + "=";
  const size_t at = (" " + stats).find(name);
  if (at == std::string::npos) return ~uint64_t{0};
  return std::stoull(stats.substr(at + name.size() - 1));
}

// Holds the insert of chosen batches (by first key) until released, and records which
// thread inserted each batch.
class InsertGate {
 public:
  void Hold(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    held_.insert(key);
  }
  void Release(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    held_.erase(key);
    cv_.notify_all();
  }
  void ReleaseAll() {
    std::lock_guard<std::mutex> l(mu_);
    held_.clear();
    cv_.notify_all();
  }
  // The hook.
  void Before(const WriteBatch& batch) {
    const std::string key = FirstKey(batch);
    std::unique_lock<std::mutex> l(mu_);
    inserted_by_[key] = std::this_thread::get_id();
    cv_.notify_all();
    cv_.wait(l, [&] { return held_.count(key) == 0; });
  }
  // Until the batch starting with key reached the hook (a minute: a hang guard).
  bool WaitReached(const std::string& key) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(60), [&] { return inserted_by_.count(key) != 0; });
  }
  bool Reached(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    return inserted_by_.count(key) != 0;
  }
  std::thread::id InsertedBy(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = inserted_by_.find(key);
    return it == inserted_by_.end() ? std::thread::id() : it->second;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> held_;
  std::map<std::string, std::thread::id> inserted_by_;
};

// A write on its own thread, which records its thread id and result.
struct AsyncWrite {
  std::thread thread;
  std::thread::id id;
  Status status;
  std::atomic<bool> done{false};

  void Start(std::function<Status()> write) {
    thread = std::thread([this, write] {
      id = std::this_thread::get_id();
      status = write();
      done = true;
    });
  }
  void Join() {
    if (thread.joinable()) thread.join();
  }
};

// Holds the front of the write queue with an exclusive operation, so that writers
// started meanwhile queue behind it and then commit as one group.
class QueueHold {
 public:
  void Start(DBImpl* impl) {
    write_.Start([this, impl] {
      return impl->RunExclusiveForTest([this] {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return released_; });
        return Status::OK();
      });
    });
  }
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      released_ = true;
    }
    cv_.notify_all();
    write_.Join();
  }
  ~QueueHold() {
    if (!released_) Release();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  AsyncWrite write_;
};

class WriteGroupTest : public ::testing::TestWithParam<bool> {  // param: unified memtable
 protected:
  void SetUp() override {
    dir_ = std::make_unique<test::ScratchDir>(
        std::string("writegroup_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.env = &fault_;
    options_.unified_memtable = GetParam();
    options_.sync_mode = SyncMode::kNone;
    options_.log_level = LogLevel::kWarn;
    options_.logger = [](LogLevel, std::string_view) {};
  }
  void TearDown() override {
    gate_.ReleaseAll();
    db_.reset();
    dir_.reset();
  }
  void Open() {
    DB* raw = nullptr;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir_->path(), &db).ok());
    db_ = std::move(db);
    raw = db_.get();
    impl_ = static_cast<DBImpl*>(raw);
    cf_ = db_->DefaultColumnFamily();
    impl_->SetBeforeMemtableInsertForTest([this](const WriteBatch& b) { gate_.Before(b); });
  }
  void Reopen() {
    db_.reset();
    impl_ = nullptr;
    Open();
  }
  // Waits until n writers are in the queue (a minute: a hang guard).
  bool WaitQueued(size_t n) {
    for (int i = 0; i < 60000; ++i) {
      if (impl_->WriteQueueLengthForTest() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  // A batch of `entries` puts, the first of key: large enough by default for its writer
  // to insert it itself when it is a follower.
  WriteBatch BatchOf(const std::string& key, uint32_t entries = DBImpl::kMinEntriesForOwnInsert) {
    WriteBatch batch;
    batch.Put(cf_, key, "v-" + key);
    for (uint32_t i = 1; i < entries; ++i) batch.Put(cf_, key + "/" + std::to_string(i), "v");
    return batch;
  }
  // Starts writing BatchOf(key, entries) on its own thread and waits until it is queued as
  // the n-th writer.
  void StartQueuedWrite(AsyncWrite* w, const std::string& key, size_t n,
                        uint32_t entries = DBImpl::kMinEntriesForOwnInsert) {
    w->Start([this, key, entries] {
      WriteBatch batch = BatchOf(key, entries);
      return db_->Write(WriteOptions(), &batch);
    });
    ASSERT_TRUE(WaitQueued(n)) << key;
  }
  // Starts a non-waiting Flush (a memtable switch) while a group is still inserting: it
  // reaches the front of the queue, and 50 ms later has frozen nothing yet.
  void StartFlushThatWaits(AsyncWrite* flush) {
    flush->Start([this] {
      FlushOptions fo;
      fo.wait = false;
      return db_->Flush(fo, cf_);
    });
    ASSERT_TRUE(WaitQueued(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(flush->done);
    std::string v;
    EXPECT_EQ(impl_->GetProperty(cf_, "tidesdb.num-immutable-mem-tables", &v) ? v : "", "0");
  }
  bool Has(const std::string& key) {
    std::string v;
    Status s = db_->Get(ReadOptions(), cf_, key, &v);
    EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
    return s.ok();
  }

  std::unique_ptr<test::ScratchDir> dir_;
  FaultInjectionEnv fault_;
  Options options_;
  std::unique_ptr<DB> db_;
  DBImpl* impl_ = nullptr;
  ColumnFamilyHandle* cf_ = nullptr;
  InsertGate gate_;
};

INSTANTIATE_TEST_SUITE_P(MemtableMode, WriteGroupTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Unified" : "PerCf";
                         });

// A's insert is held after its WAL write. B still logs and inserts (A's group left the
// queue before inserting), but neither is visible or acknowledged until A is in: groups
// publish in sequence order. A memtable switch (a non-waiting Flush) waits for both.
TEST_P(WriteGroupTest, AGroupInsertsWhileTheOneBeforeItStillDoes) {
  Open();
  const SequenceNumber before = db_->LatestSequence();
  gate_.Hold("a");
  AsyncWrite a, b, flush;
  auto write = [this](const std::string& key) {
    WriteBatch batch = BatchOf(key);
    return db_->Write(WriteOptions(), &batch);
  };
  a.Start([&] { return write("a"); });
  ASSERT_TRUE(gate_.WaitReached("a"));
  b.Start([&] { return write("b"); });
  ASSERT_TRUE(gate_.WaitReached("b"));
  EXPECT_EQ(gate_.InsertedBy("b"), b.id);
  StartFlushThatWaits(&flush);
  EXPECT_EQ(db_->LatestSequence(), before);
  EXPECT_FALSE(Has("a"));
  EXPECT_FALSE(Has("b"));
  EXPECT_FALSE(a.done || b.done || flush.done);

  gate_.Release("a");
  for (AsyncWrite* w : {&a, &b, &flush}) {
    w->Join();
    EXPECT_TRUE(w->status.ok()) << w->status.ToString();
  }
  constexpr SequenceNumber kLarge = DBImpl::kMinEntriesForOwnInsert;
  EXPECT_EQ(db_->LatestSequence(), before + 2 * kLarge);
  EXPECT_TRUE(Has("a"));
  EXPECT_TRUE(Has("b"));
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  Reopen();
  EXPECT_TRUE(Has("a"));
  EXPECT_TRUE(Has("b"));
}

// B, C and D queue behind an exclusive operation and become one group. C's insert is then
// held: B (the leader) and D have inserted, yet nothing of the group is visible, and a
// memtable switch (a non-waiting Flush) waits at the front of the queue. Releasing C
// publishes the group, and the switch freezes a memtable holding all of it. C's batch is
// large enough to be inserted on C's own thread; D's single put is inserted by the leader.
TEST_P(WriteGroupTest, MembersInsertTheirOwnBatchesAndASwitchWaitsForThem) {
  Open();
  const SequenceNumber before = db_->LatestSequence();
  gate_.Hold("c");
  QueueHold hold;
  hold.Start(impl_);
  ASSERT_TRUE(WaitQueued(1));
  AsyncWrite b, c, d;
  StartQueuedWrite(&b, "b", 2);
  StartQueuedWrite(&c, "c", 3);
  StartQueuedWrite(&d, "d", 4, 1);
  const uint64_t member_inserts = StatField(db_.get(), "member_inserts");
  hold.Release();

  ASSERT_TRUE(gate_.WaitReached("b"));
  ASSERT_TRUE(gate_.WaitReached("c"));
  ASSERT_TRUE(gate_.WaitReached("d"));
  EXPECT_EQ(gate_.InsertedBy("b"), b.id);
  EXPECT_EQ(gate_.InsertedBy("c"), c.id);  // its own
  EXPECT_EQ(gate_.InsertedBy("d"), b.id);  // too small for a hand-off: the leader's

  AsyncWrite flush;
  StartFlushThatWaits(&flush);
  // B and D are in the memtable but not visible while C is still inserting; nobody was
  // acknowledged.
  EXPECT_EQ(db_->LatestSequence(), before);
  EXPECT_FALSE(Has("b"));
  EXPECT_FALSE(Has("d"));
  EXPECT_FALSE(b.done || c.done || d.done || flush.done);

  gate_.Release("c");
  b.Join();
  c.Join();
  d.Join();
  flush.Join();
  for (AsyncWrite* w : {&b, &c, &d, &flush}) EXPECT_TRUE(w->status.ok()) << w->status.ToString();
  constexpr SequenceNumber kLarge = DBImpl::kMinEntriesForOwnInsert;
  EXPECT_EQ(db_->LatestSequence(), before + 2 * kLarge + 1);  // b, c and d
  for (const char* k : {"b", "c", "d"}) EXPECT_TRUE(Has(k)) << k;
  EXPECT_EQ(StatField(db_.get(), "member_inserts"), member_inserts + 1);  // c
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  Reopen();
  for (const char* k : {"b", "c", "d"}) EXPECT_TRUE(Has(k)) << k;
}

// A thread keeps the vectors and WAL payloads of the groups it leads for the next one:
// groups from large to small and back, one thread leading each, log exactly their own
// batches (a payload kept from a larger group must not leave its tail in a smaller one's
// record, and one past the kept capacity is given back and grown again). The WAL alone
// answers after the reopen: nothing was flushed.
TEST_P(WriteGroupTest, ALeaderReusesItsScratchAcrossGroupsOfEverySize) {
  Open();
  const std::vector<size_t> sizes = {300000, 7000, 10, 1, 5000, 200000, 3, 0};
  SequenceNumber expected = db_->LatestSequence();
  for (size_t i = 0; i < sizes.size(); ++i) {
    WriteBatch batch;
    const std::string key = "k" + std::to_string(i);
    batch.Put(cf_, key, std::string(sizes[i], static_cast<char>('a' + i)));
    if (i % 2 == 1) batch.Delete(cf_, key + "/gone");
    ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    expected += batch.Count();
  }
  Reopen();
  EXPECT_EQ(db_->LatestSequence(), expected);
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string v;
    ASSERT_TRUE(db_->Get(ReadOptions(), cf_, "k" + std::to_string(i), &v).ok()) << i;
    EXPECT_EQ(v, std::string(sizes[i], static_cast<char>('a' + i))) << i;
  }
}

// The group's WAL write fails: no member's batch reaches a memtable, every member gets the
// error, no sequence becomes visible, and the next write goes on in a new WAL.
TEST_P(WriteGroupTest, FailedWalAppendInsertsNothingAndFailsEveryMember) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "a", "v-a").ok());
  const SequenceNumber after_a = db_->LatestSequence();
  QueueHold hold;
  hold.Start(impl_);
  ASSERT_TRUE(WaitQueued(1));
  AsyncWrite b, c, d;
  StartQueuedWrite(&b, "b", 2);
  StartQueuedWrite(&c, "c", 3);
  StartQueuedWrite(&d, "d", 4);
  fault_.SetFailAppend(true);
  hold.Release();
  for (AsyncWrite* w : {&b, &c, &d}) w->Join();
  fault_.SetFailAppend(false);
  for (AsyncWrite* w : {&b, &c, &d}) EXPECT_TRUE(w->status.IsIOError()) << w->status.ToString();
  for (const char* k : {"b", "c", "d"}) {
    EXPECT_FALSE(gate_.Reached(k)) << k << " was inserted";
    EXPECT_FALSE(Has(k)) << k;
  }
  EXPECT_TRUE(Has("a"));
  EXPECT_EQ(db_->LatestSequence(), after_a);

  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "e", "v-e").ok());
  EXPECT_EQ(db_->LatestSequence(), after_a + 1);
  Reopen();
  EXPECT_TRUE(Has("a"));
  EXPECT_TRUE(Has("e"));
  for (const char* k : {"b", "c", "d"}) EXPECT_FALSE(Has(k)) << k;
}

// A prepare takes no sequences. Behind a held insert, a group of only a prepare and the
// write group after it wait for the same predecessor; the prepare must not publish after
// the write and take the visible sequence back below an acknowledged commit (seen in the
// SQL crash test with the binlog). Repeated: which of the two goes first is a race.
TEST_P(WriteGroupTest, AGroupOfOnlyAPrepareNeverLowersTheVisibleSequence) {
  Open();
  for (int i = 0; i < 20; ++i) {
    const std::string a = "a" + std::to_string(i), b = "b" + std::to_string(i);
    gate_.Hold(a);
    AsyncWrite first, prepare, second;
    first.Start([&] {
      WriteBatch batch = BatchOf(a);
      return db_->Write(WriteOptions(), &batch);
    });
    ASSERT_TRUE(gate_.WaitReached(a));
    WriteBatch txn = BatchOf("t" + std::to_string(i));
    DBImpl::TxnWrite prepared;
    prepared.type = kWalPrepare;
    prepared.xid = "x" + std::to_string(i);
    prepare.Start([&] { return impl_->WriteTxn(WriteOptions(), &txn, &prepared); });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // logged first, mostly
    second.Start([&] {
      WriteBatch batch = BatchOf(b);
      return db_->Write(WriteOptions(), &batch);
    });
    ASSERT_TRUE(gate_.WaitReached(b));
    gate_.Release(a);
    for (AsyncWrite* w : {&first, &prepare, &second}) {
      w->Join();
      ASSERT_TRUE(w->status.ok()) << w->status.ToString();
    }
    ASSERT_TRUE(Has(b)) << i;  // acknowledged, so visible
    DBImpl::TxnWrite rollback;
    rollback.type = kWalRollbackPrepared;
    rollback.xid = prepared.xid;
    ASSERT_TRUE(impl_->WriteTxn(WriteOptions(), &txn, &rollback).ok());
    ASSERT_TRUE(Has(b)) << i;
  }
}

// A group led by a two-phase prepare (which inserts nothing) with a plain write and a
// commit of an earlier prepare: the two inserting members insert on their own threads, the
// leader waits for them, and recovery finds the committed transaction and the prepared one.
TEST_P(WriteGroupTest, TwoPhaseRecordsInAGroupOfInsertingMembers) {
  Open();
  WriteBatch txn1 = BatchOf("t1");
  DBImpl::TxnWrite prepare1;
  prepare1.type = kWalPrepare;
  prepare1.xid = "x1";
  ASSERT_TRUE(impl_->WriteTxn(WriteOptions(), &txn1, &prepare1).ok());

  QueueHold hold;
  hold.Start(impl_);
  ASSERT_TRUE(WaitQueued(1));
  AsyncWrite prepare, plain, commit;
  WriteBatch txn2 = BatchOf("t2");
  DBImpl::TxnWrite prepare2;
  prepare2.type = kWalPrepare;
  prepare2.xid = "x2";
  prepare.Start([&] { return impl_->WriteTxn(WriteOptions(), &txn2, &prepare2); });
  ASSERT_TRUE(WaitQueued(2));
  StartQueuedWrite(&plain, "p", 3);
  DBImpl::TxnWrite commit1;
  commit1.type = kWalCommitPrepared;
  commit1.xid = "x1";
  commit.Start([&] { return impl_->WriteTxn(WriteOptions(), &txn1, &commit1); });
  ASSERT_TRUE(WaitQueued(4));
  const uint64_t member_inserts = StatField(db_.get(), "member_inserts");
  hold.Release();
  for (AsyncWrite* w : {&prepare, &plain, &commit}) {
    w->Join();
    EXPECT_TRUE(w->status.ok()) << w->status.ToString();
  }
  EXPECT_EQ(gate_.InsertedBy("p"), plain.id);
  EXPECT_EQ(gate_.InsertedBy("t1"), commit.id);
  EXPECT_FALSE(gate_.Reached("t2"));  // prepared, not committed
  EXPECT_EQ(StatField(db_.get(), "member_inserts"), member_inserts + 2);
  EXPECT_TRUE(Has("p"));
  EXPECT_TRUE(Has("t1"));
  EXPECT_FALSE(Has("t2"));
  EXPECT_EQ(commit1.last_sequence, db_->LatestSequence());
  Reopen();
  EXPECT_TRUE(Has("p"));
  EXPECT_TRUE(Has("t1"));
  EXPECT_FALSE(Has("t2"));
  EXPECT_EQ(impl_->RecoveredPrepared().count("x2"), 1u);
}

// Stress, in every sync mode and both memtable modes: writers commit batches of 1-24 keys
// (some into a second column family, a second memtable slot in per-CF mode) with small
// write buffers, so memtables switch and flush all the time; a checker repeatedly takes a
// snapshot and scans it. Each writer's keys are w<t>/<i> in commit order, so what a
// snapshot shows of writer t must be a prefix of its keys, at least as long as what was
// acknowledged before the snapshot; and afterwards, with every key's sequence known, each
// prefix must be exactly the keys at or below the snapshot's sequence: no hole, nothing
// past it, across writers.
class WriteGroupStressTest : public ::testing::TestWithParam<std::tuple<SyncMode, bool>> {};

INSTANTIATE_TEST_SUITE_P(SyncAndMemtableMode, WriteGroupStressTest,
                         ::testing::Combine(::testing::Values(SyncMode::kNone, SyncMode::kInterval,
                                                              SyncMode::kFull),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<SyncMode, bool>>& info) {
                           return std::string(test::SyncModeName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "Unified" : "PerCf");
                         });

TEST_P(WriteGroupStressTest, SnapshotsNeverSeeAHole) {
  const auto [sync_mode, unified] = GetParam();
  test::ScratchDir dir(std::string("writegroup_stress_") + test::SyncModeName(sync_mode) +
                       (unified ? "U" : "P"));
  test::NoSyncEnv nosync;  // kFull's fsyncs are the sync calls, not the disk's time
  Options options;
  options.env = &nosync;
  options.unified_memtable = unified;
  options.sync_mode = sync_mode;
  options.sync_interval_micros = 2000;
  options.unified_memtable_write_buffer_size = 64 << 10;
  options.default_cf_options.write_buffer_size = 64 << 10;
  options.default_cf_options.block_size = 4 << 10;
  options.log_level = LogLevel::kWarn;
  options.logger = [](LogLevel, std::string_view) {};
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  auto* impl = static_cast<DBImpl*>(db.get());
  ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  ColumnFamilyHandle* other = nullptr;
  ASSERT_TRUE(db->CreateColumnFamily(options.default_cf_options, "other", &other).ok());

  constexpr int kWriters = 4;
  const int per_writer = test::IntFromEnv("TIDESDB_WRITE_GROUP_WRITES", 2000);
  auto key = [](int t, int i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "w%d/%06d", t, i);
    return std::string(buf);
  };
  std::vector<std::atomic<int>> acked(kWriters);  // writes acknowledged, per writer
  for (auto& a : acked) a = 0;
  std::atomic<int> writers_left{kWriters};
  std::atomic<bool> failed{false};

  struct Check {
    SequenceNumber sequence;
    std::vector<int> visible;  // per writer: length of the visible prefix
  };
  std::vector<Check> checks;
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      const std::string filler(60, 'a' + t);
      for (int i = 0; i < per_writer && !failed; ++i) {
        WriteBatch batch;
        batch.Put(cf, key(t, i), filler);
        // Both sides of the hand-off threshold.
        const int extra = static_cast<int>(rng() % (3 * DBImpl::kMinEntriesForOwnInsert));
        for (int j = 0; j < extra; ++j) {
          batch.Put(j % 2 == 0 ? other : cf, "x" + key(t, i) + "/" + std::to_string(j), filler);
        }
        Status s = db->Write(WriteOptions(), &batch);
        if (!s.ok()) {
          ADD_FAILURE() << s.ToString();
          failed = true;
          break;
        }
        // Read-your-write: acknowledged means visible.
        std::string v;
        s = db->Get(ReadOptions(), cf, key(t, i), &v);
        if (!s.ok()) {
          ADD_FAILURE() << key(t, i) << " acknowledged but not visible: " << s.ToString();
          failed = true;
          break;
        }
        acked[t].store(i + 1, std::memory_order_release);
      }
      writers_left--;
    });
  }
  threads.emplace_back([&] {
    while (writers_left > 0 && !failed) {
      std::vector<int> floor(kWriters);
      for (int t = 0; t < kWriters; ++t) floor[t] = acked[t].load(std::memory_order_acquire);
      const Snapshot* snap = db->GetSnapshot();
      ReadOptions ro;
      ro.snapshot = snap;
      Check check{snap->sequence(), std::vector<int>(kWriters, 0)};
      auto it = db->NewIterator(ro, cf);
      for (it->Seek("w"); it->Valid() && it->key().starts_with("w"); it->Next()) {
        const std::string k(it->key());
        const int t = k[1] - '0';
        const int i = std::stoi(k.substr(3));
        if (i != check.visible[t]) {
          ADD_FAILURE() << "snapshot " << check.sequence << " shows " << k << " but not "
                        << key(t, check.visible[t]);
          failed = true;
        }
        check.visible[t] = i + 1;
      }
      EXPECT_TRUE(it->status().ok()) << it->status().ToString();
      it.reset();
      db->ReleaseSnapshot(snap);
      for (int t = 0; t < kWriters; ++t) {
        if (check.visible[t] < floor[t]) {
          ADD_FAILURE() << "snapshot " << check.sequence << " misses acknowledged "
                        << key(t, check.visible[t]);
          failed = true;
        }
      }
      checks.push_back(std::move(check));
    }
  });
  for (auto& th : threads) th.join();
  ASSERT_FALSE(failed);
  ASSERT_FALSE(checks.empty());

  // Every key's sequence; a writer's keys were committed in order.
  std::vector<std::vector<SequenceNumber>> seqs(kWriters);
  for (int t = 0; t < kWriters; ++t) {
    for (int i = 0; i < per_writer; ++i) {
      SequenceNumber seq = 0, visible = 0;
      ASSERT_TRUE(impl->NewestSequence(cf->id(), key(t, i), &seq, &visible).ok());
      ASSERT_NE(seq, 0u) << key(t, i);
      if (i > 0) {
        ASSERT_GT(seq, seqs[t].back()) << key(t, i);
      }
      seqs[t].push_back(seq);
    }
  }
  for (const Check& check : checks) {
    for (int t = 0; t < kWriters; ++t) {
      const int expected = static_cast<int>(std::upper_bound(seqs[t].begin(), seqs[t].end(), check.sequence) -
                                            seqs[t].begin());
      ASSERT_EQ(check.visible[t], expected) << "writer " << t << " at snapshot " << check.sequence;
    }
  }
  // Groups did form and their members inserted their own batches.
  EXPECT_GT(StatField(db.get(), "member_inserts"), 0u);
  EXPECT_EQ(StatField(db.get(), "commits"), uint64_t{kWriters} * per_writer);
  std::printf("%zu snapshot checks, %llu commit groups, %llu member inserts\n", checks.size(),
              static_cast<unsigned long long>(StatField(db.get(), "commit_groups")),
              static_cast<unsigned long long>(StatField(db.get(), "member_inserts")));
}

}  // namespace
}  // namespace tidesdb
