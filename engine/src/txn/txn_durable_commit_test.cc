// Durable commits (SyncMode::kFull) release their locks before their WAL fsync and are
// acknowledged after it: a transaction waiting on a hot row proceeds while the commit
// ahead of it is still on its way to the disk, and every acknowledged commit, including
// one that built on another's not-yet-durable write, survives a power loss.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "env/fault_injection_env.h"
#include "testutil/injecting_env.h"
#include "txn/txn_test_util.h"

namespace tidesdb {
namespace {

using namespace txntest;

class DurableCommitTest : public ScratchTxnDbTest {
 protected:
  DurableCommitTest() : ScratchTxnDbTest("durable_commit") {}
  void SetUp() override {
    ScratchTxnDbTest::SetUp();
    options_.sync_mode = SyncMode::kFull;
  }
};

// Holds every WAL fsync while `held`; `entered` counts the fsyncs that began.
struct FsyncGate {
  std::mutex mu;
  std::condition_variable cv;
  bool held = false;
  int entered = 0;

  Status Before(test::EnvOp op, const std::string& fname) {
    if (op != test::EnvOp::kSync || !test::EndsWith(fname, ".wal")) return Status::OK();
    std::unique_lock<std::mutex> l(mu);
    entered++;
    cv.notify_all();
    cv.wait(l, [&] { return !held; });
    return Status::OK();
  }
  bool WaitEntered(int n) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(20), [&] { return entered >= n; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu);
    held = false;
    cv.notify_all();
  }
};

TEST_F(DurableCommitTest, ACommitReleasesItsLocksBeforeItsFsyncAndIsAcknowledgedAfterIt) {
  test::NoSyncEnv nosync;
  test::InjectingEnv env(&nosync);
  FsyncGate gate;
  env.SetBefore([&](test::EnvOp op, const std::string& fname) { return gate.Before(op, fname); });
  options_.env = &env;
  Open();
  for (ConcurrencyMode mode : {ConcurrencyMode::kPessimistic, ConcurrencyMode::kOptimistic}) {
    SCOPED_TRACE(mode == ConcurrencyMode::kPessimistic ? "pessimistic" : "optimistic");
    const std::string value = mode == ConcurrencyMode::kPessimistic ? "p" : "o";
    {
      std::lock_guard<std::mutex> l(gate.mu);
      gate.held = true;
      gate.entered = 0;
    }
    TransactionOptions first;
    first.mode = mode;
    auto t1 = db_->BeginTransaction(first);
    ASSERT_TRUE(t1->Put(cf_, "hot", value).ok());
    auto commit = Async([&] { return t1->Commit(); });
    ASSERT_TRUE(gate.WaitEntered(1));  // t1 is in its fsync
    EXPECT_FALSE(Ready(commit));

    // Its lock is free and its write visible: a locking reader that may not wait gets both.
    TransactionOptions second;
    second.mode = ConcurrencyMode::kPessimistic;
    second.isolation = IsolationLevel::kReadCommitted;
    second.lock_timeout_micros = 0;
    auto t2 = db_->BeginTransaction(second);
    EXPECT_EQ(Read(t2.get(), cf_, "hot", /*for_update=*/true), value);
    ASSERT_TRUE(t2->Put(cf_, "hot", value + "2").ok());
    EXPECT_FALSE(Ready(commit));  // still not acknowledged

    gate.Release();
    EXPECT_TRUE(commit.get().ok());
    EXPECT_TRUE(t2->Commit().ok());
    EXPECT_EQ(ReadDb(db_.get(), "hot"), value + "2");
  }
  db_.reset();  // before the Env it uses goes
}

TEST_F(DurableCommitTest, AcknowledgedCommitsSurviveAPowerLoss) {
  // Writers increment one hot counter (each increment reads the one before, which may not
  // be durable yet when it is read) and write keys of their own; after a power loss that
  // drops everything unsynced, every acknowledged commit is there, so the counter equals
  // the number of acknowledged increments.
  FaultInjectionEnv fault;
  options_.env = &fault;
  Open();
  {
    auto t = db_->BeginTransaction(TransactionOptions());
    ASSERT_TRUE(t->Put(cf_, "counter", "0").ok());
    ASSERT_TRUE(t->Commit().ok());
  }
  constexpr int kThreads = 4, kPerThread = 40;
  std::atomic<int> increments{0};
  std::vector<std::vector<std::string>> acknowledged(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        TransactionOptions o;
        o.mode = t % 2 == 0 ? ConcurrencyMode::kPessimistic : ConcurrencyMode::kOptimistic;
        o.isolation = IsolationLevel::kReadCommitted;
        auto txn = db_->BeginTransaction(o);
        std::string counter;
        Status s = txn->GetForUpdate(cf_, "counter", &counter);
        const std::string own = "k" + std::to_string(t) + "-" + std::to_string(i);
        if (s.ok()) s = txn->Put(cf_, "counter", std::to_string(std::stoi(counter) + 1));
        if (s.ok()) s = txn->Put(cf_, own, "v");
        if (s.ok()) s = txn->Commit();
        if (s.ok()) {
          increments++;
          acknowledged[t].push_back(own);
        } else {
          ASSERT_TRUE(s.IsBusy() || s.IsTimedOut()) << s.ToString();  // optimistic conflicts
          txn->Rollback();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_GT(increments.load(), 0);

  fault.SetFilesystemActive(false);
  db_.reset();
  ASSERT_TRUE(fault.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 11).ok());
  fault.SetFilesystemActive(true);
  Open();
  EXPECT_EQ(ReadDb(db_.get(), "counter"), std::to_string(increments.load()));
  for (const auto& keys : acknowledged) {
    for (const std::string& k : keys) EXPECT_EQ(ReadDb(db_.get(), k), "v") << k;
  }
  db_.reset();  // before the Env it uses goes
}

}  // namespace
}  // namespace tidesdb
