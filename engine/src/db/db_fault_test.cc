// I/O faults: each failure reaches the caller as a clear error, nothing already
// acknowledged is lost, and the database recovers (at once or after reopening, as each
// test states).
//
// Files go through InjectingEnv (fail chosen files or operations) over FaultInjectionEnv
// (failing sync, failing append, disk full, power loss) over NoSyncEnv (durability is
// simulated, so real fsyncs are skipped). The workload is testutil/batch_workload.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "env/fault_injection_env.h"
#include "testutil/batch_workload.h"
#include "testutil/injecting_env.h"
#include "testutil/test_util.h"
#include "tidesdb/db.h"

namespace tidesdb {
namespace {

using test::BatchState;
using test::BatchWorkload;
using test::EnvOp;

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // parameterized: "Test/Mode"
    dir_ = std::make_unique<test::ScratchDir>("fault_" + name);
    options_.env = &inject_;
    options_.sync_mode = SyncMode::kFull;
    options_.unified_memtable_write_buffer_size = 64 << 10;
    options_.default_cf_options.write_buffer_size = 64 << 10;
    options_.default_cf_options.block_size = 4 << 10;
    options_.flush_threads = 1;
    options_.compaction_threads = 1;
    options_.log_level = LogLevel::kWarn;
    options_.logger = [this](LogLevel level, std::string_view m) {
      std::lock_guard<std::mutex> l(log_mu_);
      log_.emplace_back(level, std::string(m));
    };
  }
  // True if a message at `level` starting with `prefix` was reported.
  bool Logged(LogLevel level, const std::string& prefix) {
    std::lock_guard<std::mutex> l(log_mu_);
    for (const auto& [lv, m] : log_) {
      if (lv == level && m.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
  void TearDown() override {
    db_.reset();
    dir_.reset();
  }

  void Open() {
    db_.reset();
    Status s = DB::Open(options_, dir_->path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = BatchWorkload::OpenColumnFamilies(db_.get(), &cfs_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Writes the next batch; records it as acknowledged or failed.
  Status WriteNext() {
    const uint64_t id = BatchWorkload::MakeId(1, 0, next_n_++);
    WriteBatch batch;
    BatchWorkload::Build(id, cfs_, &batch);
    Status s = db_->Write(WriteOptions(), &batch);
    (s.ok() ? acked_ : failed_).insert(id);
    return s;
  }
  void WriteOk(int n) {
    for (int i = 0; i < n; ++i) {
      Status s = WriteNext();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
  // Retries until a write succeeds (a failing background flush retries every 200 ms).
  void WriteEventuallyOk() {
    Status s;
    for (int i = 0; i < 100; ++i) {
      s = WriteNext();
      if (s.ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "writes still fail after the fault was cleared: " << s.ToString();
  }

  // Everything acknowledged is present and consistent; returns the applied set.
  std::set<uint64_t> CheckAll() {
    if (!db_) {
      ADD_FAILURE() << "database is not open";
      return {};
    }
    BatchState st = test::CheckBatches(db_.get(), cfs_);
    EXPECT_TRUE(st.ok()) << st.ErrorText();
    for (uint64_t id : acked_) {
      EXPECT_EQ(st.applied.count(id), 1u) << "acknowledged batch " << BatchWorkload::Key(id) << " is missing";
    }
    return st.applied;
  }
  // Batches whose write failed without anything reaching the WAL must stay invisible.
  void CheckFailedAbsent(const std::set<uint64_t>& applied, const std::set<uint64_t>& ids) {
    for (uint64_t id : ids) EXPECT_EQ(applied.count(id), 0u) << "failed batch " << BatchWorkload::Key(id);
  }

  // Cuts the power: nothing more reaches the disk, the DB object goes away, unsynced data
  // is dropped, and the machine comes back.
  void PowerLoss() {
    fault_.SetFilesystemActive(false);
    db_.reset();
    ASSERT_TRUE(fault_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
    fault_.SetFilesystemActive(true);
  }

  std::unique_ptr<test::ScratchDir> dir_;
  test::NoSyncEnv nosync_;
  FaultInjectionEnv fault_{&nosync_};
  test::InjectingEnv inject_{&fault_};
  Options options_;
  std::mutex log_mu_;
  std::vector<std::pair<LogLevel, std::string>> log_;
  std::unique_ptr<DB> db_;
  std::vector<ColumnFamilyHandle*> cfs_;
  std::set<uint64_t> acked_, failed_;
  uint64_t next_n_ = 0;
};

// A failed fsync leaves the WAL's durable state unknown: the write fails, and so does
// every later one (never a silent success) until the database is reopened.
// Group commit, proved: with a slow fsync (2 ms) and 8 threads committing durably at once,
// the committers queued behind one fsync share the next one, so the WAL is synced far
// fewer times than there are commits, and every commit is there after a reopen.
TEST_F(FaultTest, ConcurrentDurableCommitsShareFsyncs) {
  options_.unified_memtable_write_buffer_size = 64 << 20;  // no flush during the run
  options_.default_cf_options.write_buffer_size = 64 << 20;
  Open();
  auto stat = [&](const std::string& name) {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &stats));
    auto pos = stats.find(" " + name + "=");  // none is the first field
    EXPECT_NE(pos, std::string::npos) << name;
    return std::stoull(stats.substr(pos + name.size() + 2));
  };
  const uint64_t syncs_before = stat("wal_syncs"), commits_before = stat("commits");
  // A slow device: every WAL fsync takes 2 ms.
  inject_.SetBefore([](test::EnvOp op, const std::string& fname) {
    if (op == test::EnvOp::kSync && test::EndsWith(fname, ".wal")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return Status::OK();
  });
  constexpr int kThreads = 8, kPerThread = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string k = "t" + std::to_string(t) + "_" + std::to_string(i);
        ASSERT_TRUE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), k, "v").ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  inject_.SetBefore(nullptr);
  const uint64_t commits = stat("commits") - commits_before;
  const uint64_t syncs = stat("wal_syncs") - syncs_before;
  std::printf("%llu durable commits, %llu WAL fsyncs (%.1f commits per fsync)\n",
              static_cast<unsigned long long>(commits), static_cast<unsigned long long>(syncs),
              syncs ? static_cast<double>(commits) / syncs : 0.0);
  EXPECT_EQ(commits, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_GT(syncs, 0u);
  EXPECT_LT(syncs * 3, commits);  // at least three commits per fsync on average
  Open();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      std::string v;
      ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(),
                           "t" + std::to_string(t) + "_" + std::to_string(i), &v)
                      .ok());
    }
  }
}

TEST_F(FaultTest, SyncWalRunsOutsideTheWriteQueueAndIsShared) {
  Open();
  auto stat = [&](const std::string& name) {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &stats));
    return std::stoull(stats.substr(stats.find(" " + name + "=") + name.size() + 2));
  };
  WriteOptions no_sync;
  no_sync.sync_mode = SyncMode::kNone;
  ASSERT_TRUE(db_->Put(no_sync, db_->DefaultColumnFamily(), "before", "1").ok());
  // A slow device: a WAL fsync takes a second.
  std::atomic<bool> syncing{false}, synced{false};
  inject_.SetBefore([&](test::EnvOp op, const std::string& fname) {
    if (op == test::EnvOp::kSync && test::EndsWith(fname, ".wal")) {
      syncing = true;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return Status::OK();
  });
  std::thread syncer([&] {
    EXPECT_TRUE(db_->SyncWAL().ok());
    synced = true;
  });
  while (!syncing) std::this_thread::yield();
  // Writes that do not sync go through while the fsync runs: it holds no lock they need.
  ASSERT_TRUE(db_->Put(no_sync, db_->DefaultColumnFamily(), "during", "1").ok());
  EXPECT_FALSE(synced.load()) << "a write waited for a SyncWAL of another thread";
  syncer.join();
  inject_.SetBefore(nullptr);

  // Callers that wait at the same time share fsyncs.
  inject_.SetBefore([](test::EnvOp op, const std::string& fname) {
    if (op == test::EnvOp::kSync && test::EndsWith(fname, ".wal")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return Status::OK();
  });
  const uint64_t syncs_before = stat("wal_syncs");
  constexpr int kThreads = 8, kPerThread = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string k = "s" + std::to_string(t) + "_" + std::to_string(i);
        ASSERT_TRUE(db_->Put(no_sync, db_->DefaultColumnFamily(), k, "v").ok());
        ASSERT_TRUE(db_->SyncWAL().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  inject_.SetBefore(nullptr);
  const uint64_t syncs = stat("wal_syncs") - syncs_before;
  std::printf("%d SyncWAL calls, %llu fsyncs\n", kThreads * kPerThread,
              static_cast<unsigned long long>(syncs));
  EXPECT_LT(syncs * 2, static_cast<uint64_t>(kThreads * kPerThread));

  // What a SyncWAL covered survives a power loss; so does what a durable commit covered.
  PowerLoss();
  Open();
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "before", &v).ok());
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(),
                           "s" + std::to_string(t) + "_" + std::to_string(i), &v)
                      .ok());
    }
  }
}

TEST_F(FaultTest, FailedSyncRefusesWritesUntilReopenAndKeepsWhatWasAcked) {
  Open();
  WriteOk(30);
  fault_.SetFailSync(true);
  Status s = WriteNext();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  fault_.SetFailSync(false);
  std::set<uint64_t> refused;
  for (int i = 0; i < 5; ++i) {
    const uint64_t id = BatchWorkload::MakeId(1, 0, next_n_);
    s = WriteNext();
    EXPECT_TRUE(s.IsIOError()) << "write " << i << " after the failed sync: " << s.ToString();
    EXPECT_NE(s.message().find("reopen"), std::string::npos) << s.ToString();
    refused.insert(id);
  }
  // Refused writes are not visible, not even in this process.
  std::string v;
  for (uint64_t id : refused)
    EXPECT_TRUE(db_->Get(ReadOptions(), cfs_[1], BatchWorkload::Key(id), &v).IsNotFound());
  // The power fails too: every batch acknowledged before the failed sync is durable.
  PowerLoss();
  Open();
  CheckFailedAbsent(CheckAll(), refused);
  WriteOk(10);
  CheckAll();
}

TEST_F(FaultTest, FailedIntervalSyncRefusesLaterWrites) {
  options_.sync_mode = SyncMode::kInterval;
  options_.sync_interval_micros = 1000;
  Open();
  WriteOk(20);
  fault_.SetFailSync(true);
  Status s;
  for (int i = 0; i < 400 && s.ok(); ++i) {
    s = WriteNext();
    if (s.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(s.IsIOError()) << "writes kept succeeding while every WAL sync failed: " << s.ToString();
  fault_.SetFailSync(false);
  EXPECT_FALSE(WriteNext().ok());
  Open();  // no power loss: a reopen finds every acknowledged batch
  CheckAll();
}

// A failed DB::SyncWAL is a failed fsync like a commit's own: writes refuse until reopen.
TEST_F(FaultTest, FailedSyncWalRefusesWritesUntilReopen) {
  options_.sync_mode = SyncMode::kNone;
  Open();
  WriteOk(10);
  fault_.SetFailSync(true);
  EXPECT_TRUE(db_->SyncWAL().IsIOError());
  fault_.SetFailSync(false);
  Status s = WriteNext();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("reopen"), std::string::npos) << s.ToString();
  Open();
  CheckFailedAbsent(CheckAll(), failed_);
  WriteOk(5);
  CheckAll();
}

// The faults below behave the same in every sync mode; with kInterval the syncer runs
// throughout (every millisecond), also while the write path recovers from the fault.
class SyncModeFaultTest : public FaultTest, public ::testing::WithParamInterface<SyncMode> {
 protected:
  void SetUp() override {
    FaultTest::SetUp();
    options_.sync_mode = GetParam();
    options_.sync_interval_micros = 1000;
  }
};

INSTANTIATE_TEST_SUITE_P(AllSyncModes, SyncModeFaultTest,
                         ::testing::Values(SyncMode::kNone, SyncMode::kInterval, SyncMode::kFull),
                         [](const auto& info) { return std::string(test::SyncModeName(info.param)); });

// A failed append writes nothing: the write fails, the database stays usable, and once
// appends work again writes succeed without a reopen.
TEST_P(SyncModeFaultTest, FailedAppendIsAnErrorAndTheDatabaseStaysUsable) {
  Open();
  WriteOk(25);
  fault_.SetFailAppend(true);
  std::set<uint64_t> failed;
  for (int i = 0; i < 3; ++i) {
    failed.insert(BatchWorkload::MakeId(1, 0, next_n_));
    Status s = WriteNext();
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
  }
  fault_.SetFailAppend(false);
  WriteOk(60);  // enough to switch memtables and flush
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  WriteOk(10);
  CheckFailedAbsent(CheckAll(), failed);
  // Durable as its mode promises: FULL survives a power loss with every ack.
  if (GetParam() == SyncMode::kFull) {
    PowerLoss();
  }
  Open();
  CheckFailedAbsent(CheckAll(), failed);
}

// Disk full while writing: NoSpace (not a generic error), reads keep working, nothing
// acknowledged is lost, and once space is freed writes succeed again without a reopen.
// Opening while the disk is still full is NoSpace too.
TEST_P(SyncModeFaultTest, DiskFullIsNoSpaceAndLosesNothing) {
  Open();
  WriteOk(20);
  fault_.SetNoSpaceAfterBytes(fault_.bytes_appended() + (150 << 10));
  Status s;
  int written = 0;
  while (written < 2000 && (s = WriteNext()).ok()) ++written;
  ASSERT_TRUE(s.IsNoSpace()) << "after " << written << " writes: " << s.ToString();
  for (int i = 0; i < 3; ++i) {
    s = WriteNext();
    EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  }
  CheckAll();  // reads work on a full disk
  fault_.ClearNoSpace();
  WriteEventuallyOk();
  WriteOk(20);
  CheckAll();

  // Reopening on a full disk: a clear NoSpace, and the database is intact afterwards.
  db_.reset();
  fault_.SetNoSpaceAfterBytes(fault_.bytes_appended());
  std::unique_ptr<DB> db;
  s = DB::Open(options_, dir_->path(), &db);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  db.reset();
  fault_.ClearNoSpace();
  Open();
  CheckAll();
}

// Flushes fail (no space for SSTables, or a manifest that cannot be written) while the WAL
// still works: writes go on into the memtable queue, then fail with the flush's error
// instead of waiting forever; the failed flush is retried, and nothing is lost. A failed
// manifest write stops writes at once (its edit may take effect at the next open; see
// FailedManifestSyncOfAFlushOrCompactionKeepsItsOutputs) until a new manifest is written.
TEST_F(FaultTest, FailingFlushBacksUpThenReportsAndRecovers) {
  struct Case {
    const char* name;
    std::function<bool(EnvOp, const std::string&)> hits;
    bool no_space;
  };
  const std::vector<Case> cases = {
      {"sstable disk full",
       [](EnvOp op, const std::string& f) {
         return (test::EndsWith(f, ".klog") || test::EndsWith(f, ".vlog")) &&
                (op == EnvOp::kAppend || op == EnvOp::kFlush || op == EnvOp::kSync || op == EnvOp::kClose);
       },
       true},
      {"manifest write error",
       [](EnvOp op, const std::string& f) {
         return f.find("MANIFEST-") != std::string::npos && f.find(".tmp") == std::string::npos &&
                (op == EnvOp::kAppend || op == EnvOp::kSync || op == EnvOp::kCreateFile);
       },
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Open();
    WriteOk(10);
    std::atomic<bool> failing{true};
    std::atomic<int> injected{0};
    inject_.SetBefore([&](EnvOp op, const std::string& f) -> Status {
      if (!failing.load() || !c.hits(op, f)) return Status::OK();
      injected++;
      return c.no_space ? Status::NoSpace(f, "injected: no space for SSTables")
                        : Status::IOError(f, "injected manifest write error");
    });
    Status s;
    int written = 0;
    while (written < 3000 && (s = WriteNext()).ok()) ++written;
    EXPECT_FALSE(s.ok()) << "writes never stopped while every flush failed";
    if (c.no_space) {
      EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
      // The queue of memtables filled before writes failed: well over two write buffers'
      // worth of batches (~1.4 KiB each) were accepted.
      EXPECT_GT(written, 100) << s.ToString();
    } else {
      // Writes stop at the first failed manifest write: a flush's, or a compaction's of
      // the files the earlier case left (its timing varies), so no count is promised.
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      const std::string message = s.ToString();
      EXPECT_TRUE(message.find("manifest write failed") != std::string::npos ||
                  message.find("MANIFEST-") != std::string::npos)
          << message;
    }
    EXPECT_GT(injected.load(), 0);
    EXPECT_TRUE(Logged(LogLevel::kError, "flush failed (retrying in 200 ms): ")) << "the failure is reported";
    CheckAll();  // everything acknowledged is readable from the memtables
    failing = false;
    // A flush or compaction whose manifest write was refused just before the fault cleared
    // may report it after a write has already succeeded again (writes then refuse until
    // its retry rewrites the manifest): each write is retried, not only the first.
    for (int i = 0; i < 31; ++i) WriteEventuallyOk();
    Status fs = db_->Flush(FlushOptions(), nullptr);
    ASSERT_TRUE(fs.ok()) << fs.ToString();
    inject_.SetBefore(nullptr);
    CheckAll();
    PowerLoss();  // the flushed state is durable
    Open();
    CheckAll();
    db_.reset();
  }
}

// The WAL cannot be rotated (no space for a new WAL file) when a memtable fills: the write
// fails with NoSpace and succeeds once space is back.
TEST_F(FaultTest, WalRotationFailureIsRetried) {
  Open();
  WriteOk(5);
  std::atomic<bool> failing{true};
  inject_.SetBefore([&](EnvOp op, const std::string& f) -> Status {
    if (failing.load() && op == EnvOp::kCreateFile && test::EndsWith(f, ".wal"))
      return Status::NoSpace(f, "injected: no space for a new WAL");
    return Status::OK();
  });
  Status s;
  int written = 0;
  while (written < 2000 && (s = WriteNext()).ok()) ++written;
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_TRUE(WriteNext().IsNoSpace());
  failing = false;
  WriteOk(40);
  inject_.SetBefore(nullptr);
  CheckAll();
  PowerLoss();
  Open();
  CheckAll();
}

// A manifest edit whose fsync failed may still be in force at the next open: its bytes
// were written, and closing the manifest keeps them. A failed drop must therefore not
// leave a column family that takes writes a replayed drop would discard. Writes are
// refused (saying why) until a new manifest is durable; then they go on, and after a
// reopen every acknowledged write is there.
TEST_F(FaultTest, FailedManifestSyncOfADropLosesNoAcknowledgedWrite) {
  options_.sync_mode = SyncMode::kNone;
  Open();
  ColumnFamilyHandle* x = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "x", &x).ok());
  std::set<int> acked_rows, refused_rows;
  auto put = [&](int i) {
    Status s = db_->Put(WriteOptions(), x, "row" + std::to_string(i), "value" + std::to_string(i));
    (s.ok() ? acked_rows : refused_rows).insert(i);
    return s;
  };
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(put(i).ok());
  fault_.SetFailSyncOf("MANIFEST-");
  Status s = db_->DropColumnFamily(x);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  s = put(5);
  EXPECT_TRUE(s.IsIOError()) << "a write while the drop's outcome is unknown: " << s.ToString();
  EXPECT_NE(s.message().find("manifest write failed"), std::string::npos) << s.ToString();
  EXPECT_TRUE(WriteNext().IsIOError()) << "other column families refuse writes too";
  fault_.SetFailSyncOf("");
  for (int i = 6; i < 16; ++i) {
    s = put(i);
    EXPECT_TRUE(s.ok()) << "a new manifest can be written, so writes go on: " << s.ToString();
  }
  WriteOk(5);
  db_.reset();
  Open();
  ColumnFamilyHandle* reopened = db_->GetColumnFamily("x");
  ASSERT_NE(reopened, nullptr) << "writes to x were acknowledged after the failed drop";
  for (int i : acked_rows) {
    std::string v;
    s = db_->Get(ReadOptions(), reopened, "row" + std::to_string(i), &v);
    EXPECT_TRUE(s.ok()) << "acknowledged row " << i << ": " << s.ToString();
    EXPECT_EQ(v, "value" + std::to_string(i));
  }
  for (int i : refused_rows) {
    std::string v;
    EXPECT_TRUE(db_->Get(ReadOptions(), reopened, "row" + std::to_string(i), &v).IsNotFound()) << i;
  }
  CheckFailedAbsent(CheckAll(), failed_);
}

// The manifest sync of a flush or a compaction fails and stays failing until the database
// is closed, cleanly or by a power loss. The edit may be in force at the next open, so its
// output files must still be there: the database opens and holds every acknowledged write.
TEST_F(FaultTest, FailedManifestSyncOfAFlushOrCompactionKeepsItsOutputs) {
  for (const char* op : {"flush", "compaction"}) {
    for (bool power_loss : {false, true}) {
      SCOPED_TRACE(std::string(op) + (power_loss ? ", power loss" : ", clean close"));
      Open();
      for (int i = 0; i < 3; ++i) {
        WriteOk(20);
        if (std::string(op) == "compaction") {
          ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
        }
      }
      fault_.SetFailSyncOf("MANIFEST-");
      Status s = std::string(op) == "flush" ? db_->Flush(FlushOptions(), nullptr)
                                            : db_->CompactRange(nullptr, nullptr);
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      s = WriteNext();
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      EXPECT_NE(s.message().find("manifest write failed"), std::string::npos) << s.ToString();
      EXPECT_TRUE(Logged(LogLevel::kError, "IOError: manifest write failed"));
      if (power_loss) {
        PowerLoss();
      } else {
        db_.reset();
      }
      fault_.SetFailSyncOf("");
      Open();
      CheckFailedAbsent(CheckAll(), failed_);
      WriteOk(10);
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      CheckAll();
      db_.reset();
    }
  }
}

// Every operation of an open fails in turn: Open returns the error (never crashes or
// reports success), and the database opens intact once the fault is gone.
TEST_F(FaultTest, OpenFailsCleanlyAtEveryOperation) {
  Open();
  WriteOk(40);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  WriteOk(15);  // left in the WAL for recovery
  db_.reset();
  int ops = 0;
  inject_.SetAfter([&](EnvOp, const std::string&, const Status&) { ops++; });
  Open();
  db_.reset();
  inject_.SetAfter(nullptr);
  ASSERT_GT(ops, 5);
  for (int fail_at = 1; fail_at <= ops; ++fail_at) {
    SCOPED_TRACE("failing operation " + std::to_string(fail_at));
    std::atomic<int> n{0};
    inject_.SetBefore([&](EnvOp, const std::string& f) -> Status {
      return ++n == fail_at ? Status::IOError(f, "injected failure") : Status::OK();
    });
    std::unique_ptr<DB> db;
    Status s = DB::Open(options_, dir_->path(), &db);
    db.reset();
    inject_.SetBefore(nullptr);
    // A failure in a best-effort step (removing an obsolete file) may leave Open OK.
    EXPECT_TRUE(s.ok() || s.IsIOError()) << s.ToString();
    Open();
    ASSERT_FALSE(HasFatalFailure());
    CheckAll();
    db_.reset();
  }
}

}  // namespace
}  // namespace tidesdb
