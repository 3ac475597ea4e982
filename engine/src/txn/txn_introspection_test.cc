// What the transaction layer tells about itself: last_failure() (the key and the other
// transactions behind a conflict, lock timeout or deadlock), GetLockStatus() (held and
// waited-for locks) and write-set sizes read from another thread.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "txn/txn_test_util.h"

namespace tidesdb {
namespace {

using namespace txntest;
using Kind = TransactionFailure::Kind;

class TxnIntrospectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = ScratchDir("txn_introspection_" + std::to_string(counter++));
    DestroyDB(dir_, Options());
    Options options;
    options.sync_mode = SyncMode::kNone;
    TransactionDBOptions to;
    to.lock_timeout_micros = 10'000'000;
    ASSERT_TRUE(TransactionDB::Open(options, to, dir_, &db_).ok());
    cf_ = db_->db()->DefaultColumnFamily();
  }
  void TearDown() override {
    db_.reset();
    DestroyDB(dir_, Options());
  }
  std::unique_ptr<Transaction> Begin(ConcurrencyMode mode, IsolationLevel level = IsolationLevel::kSnapshot,
                                     int64_t timeout = -1) {
    TransactionOptions o;
    o.mode = mode;
    o.isolation = level;
    o.lock_timeout_micros = timeout;
    return db_->BeginTransaction(o);
  }

  std::string dir_;
  std::unique_ptr<TransactionDB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

TEST_F(TxnIntrospectionTest, NoFailureRecordedForASuccessfulTransaction) {
  auto t = Begin(ConcurrencyMode::kOptimistic);
  ASSERT_TRUE(t->Put(cf_, "a", "1").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(t->last_failure().kind, Kind::kNone);
  EXPECT_TRUE(t->last_failure().key.empty());
}

TEST_F(TxnIntrospectionTest, OptimisticWriteConflictNamesTheKey) {
  auto loser = Begin(ConcurrencyMode::kOptimistic);
  std::string v;
  ASSERT_TRUE(loser->Get(cf_, "x", &v).IsNotFound());  // takes the snapshot
  ASSERT_TRUE(loser->Put(cf_, "a", "mine").ok());
  ASSERT_TRUE(loser->Put(cf_, "k2", "mine").ok());
  auto winner = Begin(ConcurrencyMode::kOptimistic);
  ASSERT_TRUE(winner->Put(cf_, "k2", "theirs").ok());
  ASSERT_TRUE(winner->Commit().ok());
  Status s = loser->Commit();
  ASSERT_TRUE(s.IsBusy()) << s.ToString();
  const TransactionFailure f = loser->last_failure();
  EXPECT_EQ(f.kind, Kind::kConflict);
  EXPECT_EQ(f.cf_id, cf_->id());
  EXPECT_EQ(f.key, "k2");
  EXPECT_FALSE(f.is_range);
  EXPECT_NE(f.message.find("write conflict"), std::string::npos) << f.message;
}

// A conflict found by an optimistic Prepare is one conflict in the counters (it was counted
// where it was found and again on Prepare's way out).
TEST_F(TxnIntrospectionTest, OptimisticPrepareConflictIsCountedOnce) {
  auto conflicts = [&] {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty("tidesdb.txn.stats", &stats));
    const size_t at = stats.find("conflicts=");
    return at == std::string::npos ? -1 : std::stoi(stats.substr(at + 10));
  };
  const int before = conflicts();
  auto loser = Begin(ConcurrencyMode::kOptimistic);
  std::string v;
  ASSERT_TRUE(loser->Get(cf_, "x", &v).IsNotFound());  // takes the snapshot
  ASSERT_TRUE(loser->Put(cf_, "k", "mine").ok());
  auto winner = Begin(ConcurrencyMode::kOptimistic);
  ASSERT_TRUE(winner->Put(cf_, "k", "theirs").ok());
  ASSERT_TRUE(winner->Commit().ok());
  Status s = loser->Prepare("xid-1");
  ASSERT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_EQ(loser->last_failure().key, "k");
  EXPECT_EQ(conflicts(), before + 1);
}

TEST_F(TxnIntrospectionTest, ReadConflictOfGetForUpdateNamesTheKey) {
  auto loser = Begin(ConcurrencyMode::kOptimistic, IsolationLevel::kReadCommitted);
  std::string v;
  ASSERT_TRUE(loser->GetForUpdate(cf_, "r", &v).IsNotFound());
  ASSERT_TRUE(loser->Put(cf_, "other", "1").ok());
  auto winner = Begin(ConcurrencyMode::kOptimistic);
  ASSERT_TRUE(winner->Put(cf_, "r", "2").ok());
  ASSERT_TRUE(winner->Commit().ok());
  ASSERT_TRUE(loser->Commit().IsBusy());
  EXPECT_EQ(loser->last_failure().kind, Kind::kConflict);
  EXPECT_EQ(loser->last_failure().key, "r");
}

TEST_F(TxnIntrospectionTest, SerializableRangeConflictNamesTheRange) {
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "b1", "v").ok());
  auto loser = Begin(ConcurrencyMode::kOptimistic, IsolationLevel::kSerializable);
  const Slice lower("b"), upper("c");
  ReadOptions ro;
  ro.lower_bound = &lower;
  ro.upper_bound = &upper;
  {
    auto it = loser->NewIterator(ro, cf_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
  ASSERT_TRUE(loser->Put(cf_, "z", "1").ok());
  auto winner = Begin(ConcurrencyMode::kOptimistic);
  ASSERT_TRUE(winner->Put(cf_, "b5", "new").ok());
  ASSERT_TRUE(winner->Commit().ok());
  ASSERT_TRUE(loser->Commit().IsBusy());
  const TransactionFailure f = loser->last_failure();
  EXPECT_EQ(f.kind, Kind::kConflict);
  EXPECT_TRUE(f.is_range);
  EXPECT_LE(f.key, "b5");
  EXPECT_TRUE(f.range_limit.empty() || f.range_limit >= "b5") << f.range_limit;
}

TEST_F(TxnIntrospectionTest, LockTimeoutNamesTheKeyAndTheHolder) {
  auto holder = Begin(ConcurrencyMode::kPessimistic);
  ASSERT_TRUE(holder->Put(cf_, "row", "h").ok());
  auto waiter = Begin(ConcurrencyMode::kPessimistic, IsolationLevel::kSnapshot, 20'000);
  Status s = waiter->Put(cf_, "row", "w");
  ASSERT_TRUE(s.IsTimedOut()) << s.ToString();
  TransactionFailure f = waiter->last_failure();
  EXPECT_EQ(f.kind, Kind::kLockTimeout);
  EXPECT_EQ(f.key, "row");
  EXPECT_EQ(f.cf_id, cf_->id());
  ASSERT_EQ(f.blockers.size(), 1u);
  EXPECT_EQ(f.blockers[0], holder->id());
  // The transaction is still active; the failure stays until a new commit begins.
  ASSERT_TRUE(waiter->Put(cf_, "free", "w").ok());
  EXPECT_EQ(waiter->last_failure().kind, Kind::kLockTimeout);
  ASSERT_TRUE(waiter->Commit().ok());
  EXPECT_EQ(waiter->last_failure().kind, Kind::kNone);
}

TEST_F(TxnIntrospectionTest, DeadlockNamesTheKeyAndTheOtherTransaction) {
  auto a = Begin(ConcurrencyMode::kPessimistic);
  auto b = Begin(ConcurrencyMode::kPessimistic);
  ASSERT_TRUE(a->Put(cf_, "1", "a").ok());
  ASSERT_TRUE(b->Put(cf_, "2", "b").ok());
  auto blocked = Async([&] { return a->Put(cf_, "2", "a"); });
  ASSERT_TRUE(WaitForWaiters(db_.get(), 1));
  Status s = b->Put(cf_, "1", "b");
  ASSERT_TRUE(s.IsDeadlock()) << s.ToString();
  const TransactionFailure f = b->last_failure();
  EXPECT_EQ(f.kind, Kind::kDeadlock);
  EXPECT_EQ(f.key, "1");
  ASSERT_EQ(f.blockers.size(), 1u);
  EXPECT_EQ(f.blockers[0], a->id());
  ASSERT_TRUE(b->Rollback().ok());
  EXPECT_TRUE(blocked.get().ok());
  ASSERT_TRUE(a->Commit().ok());
}

TEST_F(TxnIntrospectionTest, LockStatusListsHoldersAndWaiters) {
  EXPECT_TRUE(db_->GetLockStatus().empty());
  auto a = Begin(ConcurrencyMode::kPessimistic);
  auto b = Begin(ConcurrencyMode::kPessimistic);
  ASSERT_TRUE(a->Put(cf_, "k", "a").ok());
  std::string v;
  ASSERT_TRUE(a->GetForShare(cf_, "s", &v).IsNotFound());
  auto blocked = Async([&] { return b->Put(cf_, "k", "b"); });
  ASSERT_TRUE(WaitForWaiters(db_.get(), 1));
  const std::vector<LockStatus> locks = db_->GetLockStatus();
  ASSERT_EQ(locks.size(), 3u);
  EXPECT_EQ(locks[0].key, "k");
  EXPECT_EQ(locks[0].txn_id, a->id());
  EXPECT_TRUE(locks[0].exclusive);
  EXPECT_TRUE(locks[0].granted);
  EXPECT_EQ(locks[1].key, "k");
  EXPECT_EQ(locks[1].txn_id, b->id());
  EXPECT_TRUE(locks[1].exclusive);
  EXPECT_FALSE(locks[1].granted);
  EXPECT_EQ(locks[2].key, "s");
  EXPECT_FALSE(locks[2].exclusive);
  EXPECT_TRUE(locks[2].granted);
  EXPECT_EQ(locks[2].cf_id, cf_->id());
  ASSERT_TRUE(a->Commit().ok());
  EXPECT_TRUE(blocked.get().ok());
  ASSERT_TRUE(b->Commit().ok());
  EXPECT_TRUE(db_->GetLockStatus().empty());
}

TEST_F(TxnIntrospectionTest, WriteSetSizeIsReadableFromAnotherThread) {
  auto t = Begin(ConcurrencyMode::kOptimistic);
  std::atomic<bool> done{false};
  size_t seen = 0;
  std::thread reader([&] {
    while (!done.load()) seen = std::max(seen, t->write_set_count());
  });
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(t->Put(cf_, "key" + std::to_string(i), "v").ok());
  done = true;
  reader.join();
  EXPECT_LE(seen, 1000u);
  EXPECT_EQ(t->write_set_count(), 1000u);
  EXPECT_GT(t->write_set_bytes(), 1000u * WriteSet::kEntryOverheadBytes);
  ASSERT_TRUE(t->Rollback().ok());
  EXPECT_EQ(t->write_set_count(), 0u);
}

}  // namespace
}  // namespace tidesdb
