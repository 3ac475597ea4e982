// Reads and snapshots never wait for I/O: a Get, an iterator, an estimate and a snapshot
// complete while an fsync that the write path or background work does (WAL rotation, a
// manifest edit, a checkpoint's copies) is held on a latch. Commits do not wait for a
// manifest edit's fsync either (it runs without the DB mutex), and edits that queue behind
// a held one are applied in order. And a stress test: readers, snapshot readers and
// iterators check every answer against what must be visible while writers, flushes and
// compactions publish new views underneath them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "testutil/injecting_env.h"
#include "testutil/test_util.h"
#include "tidesdb/db.h"

namespace tidesdb {
namespace {

// Holds the next Sync or SyncDir whose file name contains `part` until Release().
class SyncLatch {
 public:
  void Arm(const std::string& part) {
    std::lock_guard<std::mutex> l(mu_);
    part_ = part;
    armed_ = true;
  }
  // The InjectingEnv hook.
  Status Before(test::EnvOp op, const std::string& fname) {
    if (op != test::EnvOp::kSync && op != test::EnvOp::kSyncDir) return Status::OK();
    std::unique_lock<std::mutex> l(mu_);
    if (!armed_ || fname.find(part_) == std::string::npos) return Status::OK();
    armed_ = false;
    held_ = true;
    held_name_ = fname;
    cv_.notify_all();
    cv_.wait(l, [this] { return released_; });
    held_ = false;
    return Status::OK();
  }
  // Waits (up to a minute, a hang guard rather than a timing assertion) until a matching
  // sync is being held.
  bool WaitHeld() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(60), [this] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::string held_name() {
    std::lock_guard<std::mutex> l(mu_);
    return held_name_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::string part_, held_name_;
  bool armed_ = false, held_ = false, released_ = false;
};

class ReadConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<test::ScratchDir>(
        std::string("readconc_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    inject_.SetBefore([this](test::EnvOp op, const std::string& f) { return latch_.Before(op, f); });
    options_.env = &inject_;
    options_.sync_mode = SyncMode::kNone;
    options_.unified_memtable_write_buffer_size = 64 << 10;
    options_.default_cf_options.write_buffer_size = 64 << 10;
    options_.default_cf_options.block_size = 4 << 10;
    options_.log_level = LogLevel::kWarn;
    options_.logger = [](LogLevel, std::string_view) {};
  }
  void TearDown() override {
    latch_.Release();
    db_.reset();
    dir_.reset();
  }
  void Open() {
    ASSERT_TRUE(DB::Open(options_, dir_->path(), &db_).ok());
    cf_ = db_->DefaultColumnFamily();
  }

  // With a sync matching `part` held on the latch (started by `trigger` on its own
  // thread), `work` runs on another thread and must finish; `what` names it in a failure.
  void ExpectFinishesWhileSyncHeld(const std::string& part, const std::function<void()>& trigger,
                                   const std::function<void()>& work, const char* what) {
    latch_.Arm(part);
    std::thread t(trigger);
    ASSERT_TRUE(latch_.WaitHeld()) << "no sync of " << part << " happened";
    std::atomic<bool> done{false};
    std::thread worker([&] {
      work();
      done = true;
    });
    // The hang guard: work that waited for the held fsync would never finish.
    for (int i = 0; i < 6000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(done.load()) << what << " waited for the held sync of " << latch_.held_name();
    latch_.Release();
    worker.join();
    t.join();
  }

  // Point reads, an iterator, a range estimate and a snapshot all complete while a sync
  // matching `part` is held.
  void ExpectReadsDoNotWaitFor(const std::string& part, const std::function<void()>& trigger) {
    WriteOptions wo;
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(db_->Put(wo, cf_, Key(i), "v" + std::to_string(i)).ok());
    ExpectFinishesWhileSyncHeld(
        part, trigger,
        [&] {
          std::string v;
          for (int i = 0; i < 200; ++i) {
            EXPECT_TRUE(db_->Get(ReadOptions(), cf_, Key(i), &v).ok());
            EXPECT_EQ(v, "v" + std::to_string(i));
          }
          const Snapshot* snap = db_->GetSnapshot();
          ReadOptions ro;
          ro.snapshot = snap;
          auto it = db_->NewIterator(ro, cf_);
          int n = 0;
          for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
          EXPECT_TRUE(it->status().ok());
          EXPECT_EQ(n, 200);
          it.reset();
          db_->ReleaseSnapshot(snap);
          const std::string start = Key(0), limit = Key(100);
          EXPECT_GT(db_->EstimateRange(cf_, Range{start, limit}).keys, 0u);
        },
        "reads");
  }

  // Commits of single puts and of a multi-key batch complete, and read back, while a sync
  // matching `part` is held.
  void ExpectWritesDoNotWaitFor(const std::string& part, const std::function<void()>& trigger) {
    ExpectFinishesWhileSyncHeld(
        part, trigger,
        [&] {
          for (int i = 0; i < 100; ++i) EXPECT_TRUE(db_->Put(WriteOptions(), cf_, Key(1000 + i), "w").ok());
          WriteBatch batch;
          for (int i = 100; i < 200; ++i) batch.Put(cf_, Key(1000 + i), "w");
          EXPECT_TRUE(db_->Write(WriteOptions(), &batch).ok());
          std::string v;
          EXPECT_TRUE(db_->Get(ReadOptions(), cf_, Key(1199), &v).ok());
        },
        "commits");
  }

  static std::string Key(int i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "k%06d", i);
    return buf;
  }

  std::unique_ptr<test::ScratchDir> dir_;
  test::NoSyncEnv nosync_;
  test::InjectingEnv inject_{&nosync_};
  SyncLatch latch_;
  Options options_;
  std::unique_ptr<DB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

// A flush rotates the WAL first: the old WAL's fsync runs under the DB mutex.
TEST_F(ReadConcurrencyTest, ReadsDoNotWaitForTheWalRotationFsync) {
  Open();
  ExpectReadsDoNotWaitFor(".wal", [&] { EXPECT_TRUE(db_->Flush(FlushOptions(), cf_).ok()); });
}

// The flush's manifest edit is synced under the DB mutex.
TEST_F(ReadConcurrencyTest, ReadsDoNotWaitForTheManifestFsync) {
  Open();
  ExpectReadsDoNotWaitFor("MANIFEST", [&] { EXPECT_TRUE(db_->Flush(FlushOptions(), cf_).ok()); });
}

// A checkpoint copies the live WALs (and syncs them) as the commit leader, under the mutex.
TEST_F(ReadConcurrencyTest, ReadsDoNotWaitForACheckpointCopy) {
  Open();
  const std::string ckpt = dir_->path() + "/ckpt";
  ExpectReadsDoNotWaitFor("/ckpt/", [&] { EXPECT_TRUE(db_->Checkpoint(ckpt).ok()); });
}

// A flush's manifest edit is written and synced without the DB mutex, which every commit
// group's leader takes.
TEST_F(ReadConcurrencyTest, CommitsDoNotWaitForAFlushsManifestFsync) {
  Open();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(i), "v").ok());
  ExpectWritesDoNotWaitFor("MANIFEST", [&] { EXPECT_TRUE(db_->Flush(FlushOptions(), cf_).ok()); });
}

// The same for a compaction's edit (the memtable is empty, so no flush logs one first).
TEST_F(ReadConcurrencyTest, CommitsDoNotWaitForACompactionsManifestFsync) {
  options_.default_cf_options.l1_file_count_trigger = 100;  // no automatic compaction
  Open();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(i), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
  }
  ExpectWritesDoNotWaitFor("MANIFEST", [&] { EXPECT_TRUE(db_->CompactRange(cf_, nullptr).ok()); });
  std::string l0;
  ASSERT_TRUE(db_->GetProperty(cf_, "tidesdb.num-files-at-level0", &l0));
  EXPECT_EQ(l0, "0");
}

// Edits that wait while another one's fsync is held (a column family dropped, another
// created) are applied after it, in order: after a reopen the flush's rows, the drop and the
// creation are all in force. (A DDL is an exclusive commit: commits queue behind it while it
// waits for the manifest, as they did when the manifest was synced under the DB mutex.)
TEST_F(ReadConcurrencyTest, EditsQueuedBehindAHeldManifestFsyncApplyInOrder) {
  Open();
  ColumnFamilyHandle* doomed = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "doomed", &doomed).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), doomed, "k", "v").ok());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(i), "v").ok());
  latch_.Arm("MANIFEST");
  std::thread flusher([&] { EXPECT_TRUE(db_->Flush(FlushOptions(), cf_).ok()); });
  ASSERT_TRUE(latch_.WaitHeld());
  // Commits go on while the flush's edit is being synced.
  for (int i = 200; i < 300; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(i), "v").ok());
  std::thread ddl([&] {
    EXPECT_TRUE(db_->DropColumnFamily(doomed).ok());
    ColumnFamilyHandle* born = nullptr;
    EXPECT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "born", &born).ok());
    EXPECT_TRUE(db_->Put(WriteOptions(), born, "b", "1").ok());
  });
  // Give the drop time to queue for the manifest (the outcome must be the same either way).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  latch_.Release();
  flusher.join();
  ddl.join();
  db_.reset();
  Open();
  EXPECT_EQ(db_->GetColumnFamily("doomed"), nullptr);
  ColumnFamilyHandle* born = db_->GetColumnFamily("born");
  ASSERT_NE(born, nullptr);
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), born, "b", &v).ok());
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(db_->Get(ReadOptions(), cf_, Key(i), &v).ok()) << Key(i);
}

// Every manifest edit writes a whole snapshot manifest (the size limit is one byte) while
// writers commit and flushes and compactions run: the snapshot records the last sequence
// without the write queue (TSan checks that read), and a reopen finds every write.
TEST_F(ReadConcurrencyTest, SnapshotManifestsWrittenUnderLoadKeepEveryWrite) {
  options_.default_cf_options.level_size_base = 256 << 10;
  options_.default_cf_options.l1_file_count_trigger = 2;
  Open();
  static_cast<DBImpl*>(db_.get())->SetMaxManifestBytesForTest(1);
  constexpr int kKeys = 300, kWriters = 2;
  std::vector<std::atomic<uint64_t>> last(kKeys);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(w + 7);
      while (!stop) {
        const int k = static_cast<int>(rng() % (kKeys / kWriters)) * kWriters + w;  // this writer's keys
        const uint64_t v = last[k].load() + 1;
        ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(k), std::to_string(v) + std::string(200, 'x')).ok());
        last[k].store(v);
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop) {
      EXPECT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(test::IntFromEnv("TIDESDB_STRESS_SECONDS", 2)));
  stop = true;
  for (auto& t : threads) t.join();
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  std::string stats;
  db_->GetProperty(cf_, "tidesdb.stats", &stats);
  std::printf("%s\n", stats.c_str());
  db_.reset();
  Open();
  std::string v;
  for (int k = 0; k < kKeys; ++k) {
    if (last[k].load() == 0) continue;
    ASSERT_TRUE(db_->Get(ReadOptions(), cf_, Key(k), &v).ok()) << Key(k);
    EXPECT_EQ(std::stoull(v), last[k].load()) << Key(k);
  }
}

// Readers check every answer against what must be visible, while writers overwrite,
// memtables rotate, flushes and compactions publish new views, and snapshots come and go.
// Each key has one writer, which writes increasing versions and then publishes the
// version as acknowledged; so a read may never return less than what was acknowledged
// before it started (a view that lost data across a flush would), nor more than was
// written, and a snapshot must read the same values every time.
TEST_F(ReadConcurrencyTest, ConcurrentReadsSeeEveryAcknowledgedWrite) {
  options_.default_cf_options.level_size_base = 256 << 10;
  options_.flush_threads = 1;
  options_.compaction_threads = 1;
  Open();
  constexpr int kKeys = 400, kWriters = 2;
  const int seconds = test::IntFromEnv("TIDESDB_STRESS_SECONDS", 3);
  auto value = [](int key, uint64_t version) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%06d:%012llu:", key, static_cast<unsigned long long>(version));
    return std::string(buf) + std::string(100, 'x');
  };
  auto version_of = [](const std::string& v) { return std::stoull(v.substr(7, 12)); };
  std::vector<std::atomic<uint64_t>> acked(kKeys), written(kKeys);
  for (int k = 0; k < kKeys; ++k) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(k), value(k, 0)).ok());
  }

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, scans{0}, snapshot_checks{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(w + 1);
      while (!stop) {
        const int k = static_cast<int>(rng() % (kKeys / kWriters)) * kWriters + w;  // this writer's keys
        const uint64_t v = written[k].load() + 1;
        written[k].store(v);
        ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(k), value(k, v)).ok());
        acked[k].store(v);
      }
    });
  }
  threads.emplace_back([&] {  // flushes and compactions on top of the automatic ones
    for (int i = 0; !stop; ++i) {
      EXPECT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
      if (i % 4 == 3) {
        EXPECT_TRUE(db_->CompactRange(cf_, nullptr).ok());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  threads.emplace_back([&] {  // point reads
    std::mt19937 rng(100);
    std::string v;
    while (!stop) {
      const int k = static_cast<int>(rng() % kKeys);
      const uint64_t lo = acked[k].load();
      ASSERT_TRUE(db_->Get(ReadOptions(), cf_, Key(k), &v).ok()) << Key(k);
      const uint64_t got = version_of(v), hi = written[k].load();
      ASSERT_GE(got, lo) << Key(k) << ": a read lost an acknowledged write";
      ASSERT_LE(got, hi) << Key(k);
      ASSERT_EQ(v, value(k, got));
      reads++;
    }
  });
  threads.emplace_back([&] {  // snapshots: the same answers before and after background work
    std::mt19937 rng(200);
    std::string v;
    while (!stop) {
      std::vector<uint64_t> lo(kKeys);
      for (int k = 0; k < kKeys; ++k) lo[k] = acked[k].load();
      const Snapshot* snap = db_->GetSnapshot();
      ReadOptions ro;
      ro.snapshot = snap;
      std::vector<uint64_t> first(kKeys);
      for (int k = 0; k < kKeys; ++k) {
        ASSERT_TRUE(db_->Get(ro, cf_, Key(k), &v).ok());
        first[k] = version_of(v);
        ASSERT_GE(first[k], lo[k]) << Key(k);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(rng() % 30)));
      auto it = db_->NewIterator(ro, cf_);
      int k = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++k) {
        ASSERT_LT(k, kKeys);
        ASSERT_EQ(std::string(it->key()), Key(k));
        ASSERT_EQ(version_of(std::string(it->value())), first[k]) << Key(k) << ": a snapshot changed";
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      ASSERT_EQ(k, kKeys);
      it.reset();
      for (int j = 0; j < kKeys; j += 7) {
        ASSERT_TRUE(db_->Get(ro, cf_, Key(j), &v).ok());
        ASSERT_EQ(version_of(v), first[j]) << Key(j) << ": a snapshot changed";
      }
      db_->ReleaseSnapshot(snap);
      snapshot_checks++;
    }
  });
  threads.emplace_back([&] {  // scans without a snapshot: every key, each at least as acknowledged
    while (!stop) {
      std::vector<uint64_t> lo(kKeys);
      for (int k = 0; k < kKeys; ++k) lo[k] = acked[k].load();
      auto it = db_->NewIterator(ReadOptions(), cf_);
      int k = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++k) {
        ASSERT_LT(k, kKeys);
        ASSERT_EQ(std::string(it->key()), Key(k));
        ASSERT_GE(version_of(std::string(it->value())), lo[k]) << Key(k);
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      ASSERT_EQ(k, kKeys);
      scans++;
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  std::string stats;
  db_->GetProperty(cf_, "tidesdb.stats", &stats);
  std::printf("%llu reads, %llu scans, %llu snapshot checks\n%s",
              static_cast<unsigned long long>(reads.load()), static_cast<unsigned long long>(scans.load()),
              static_cast<unsigned long long>(snapshot_checks.load()), stats.c_str());
  EXPECT_GT(reads.load(), 0u);
  EXPECT_GT(snapshot_checks.load(), 0u);
  // Every snapshot was released: none holds compaction back.
  EXPECT_EQ(static_cast<DBImpl*>(db_.get())->OldestSnapshotSequence(), db_->LatestSequence());
}

// The registered snapshots, taken between writes and released in random order, against a
// model: the oldest (what compaction keeps versions for) and the ascending list flush and
// compaction copy are always those of the snapshots still held.
TEST_F(ReadConcurrencyTest, SnapshotsReleasedInAnyOrderLeaveTheOldestHeld) {
  Open();
  auto* impl = static_cast<DBImpl*>(db_.get());
  std::mt19937 rng(static_cast<uint32_t>(test::SeedFromEnv("TIDESDB_TEST_SEED")));
  std::vector<const Snapshot*> held;
  for (int step = 0; step < 2000; ++step) {
    if (rng() % 2 == 0) {
      ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "k" + std::to_string(step % 7), "v").ok());
    }
    if (held.empty() || rng() % 5 < 3) {
      held.push_back(db_->GetSnapshot());
    } else {
      const size_t i = rng() % held.size();
      db_->ReleaseSnapshot(held[i]);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::vector<SequenceNumber> model;
    for (const Snapshot* snap : held) model.push_back(snap->sequence());
    std::sort(model.begin(), model.end());
    ASSERT_EQ(model, impl->SnapshotListForTest()) << "step " << step;
    ASSERT_EQ(model.empty() ? db_->LatestSequence() : model.front(), impl->OldestSnapshotSequence());
  }
  for (const Snapshot* snap : held) db_->ReleaseSnapshot(snap);
  EXPECT_TRUE(impl->SnapshotListForTest().empty());
  EXPECT_EQ(db_->LatestSequence(), impl->OldestSnapshotSequence());
}

// Reads pin the readers of the files they open while the DB's live files fit in the table
// cache (max_open_sstables), and reads through pinned readers return what the files hold,
// after the files they were pinned with are compacted away too.
TEST_F(ReadConcurrencyTest, ReadsPinTableReadersWhileTheFilesFitInTheTableCache) {
  options_.default_cf_options.l1_file_count_trigger = 100;  // the flushes stay in L0
  Open();
  auto* impl = static_cast<DBImpl*>(db_.get());
  for (int file = 0; file < 3; ++file) {
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(file * 100 + i), "f" + std::to_string(file)).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
  }
  EXPECT_EQ(impl->PinnedTableReadersForTest(), 0u);
  std::string v;
  for (int file = 0; file < 3; ++file) {
    ASSERT_TRUE(db_->Get(ReadOptions(), cf_, Key(file * 100 + 7), &v).ok());
    EXPECT_EQ(v, "f" + std::to_string(file));
  }
  EXPECT_EQ(impl->PinnedTableReadersForTest(), 3u);
  // An iterator held across the compaction reads the files it started with.
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions(), cf_);
  ASSERT_TRUE(db_->CompactRange(cf_, nullptr).ok());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(n, 150);
  it.reset();
  EXPECT_EQ(impl->PinnedTableReadersForTest(), 0u);  // the compacted file is not read yet
  for (int file = 0; file < 3; ++file) {
    ASSERT_TRUE(db_->Get(ReadOptions(), cf_, Key(file * 100 + 49), &v).ok());
    EXPECT_EQ(v, "f" + std::to_string(file));
  }
  EXPECT_EQ(impl->PinnedTableReadersForTest(), 1u);
}

// Once the DB has more files than the table cache keeps open, reads pin nothing (pinning
// would keep more files open than max_open_sstables allows) and still find every key.
TEST_F(ReadConcurrencyTest, NoReaderIsPinnedOnceTheFilesOutgrowTheTableCache) {
  options_.max_open_sstables = 16;
  options_.default_cf_options.l1_file_count_trigger = 100;
  options_.default_cf_options.l0_queue_stall_threshold = 100;
  Open();
  auto* impl = static_cast<DBImpl*>(db_.get());
  constexpr int kFiles = 20;
  for (int file = 0; file < kFiles; ++file) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(file), "v" + std::to_string(file)).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
  }
  std::string v;
  for (int file = 0; file < kFiles; ++file) {
    ASSERT_TRUE(db_->Get(ReadOptions(), cf_, Key(file), &v).ok());
    EXPECT_EQ(v, "v" + std::to_string(file));
  }
  EXPECT_EQ(impl->PinnedTableReadersForTest(), 0u);
}

}  // namespace
}  // namespace tidesdb
