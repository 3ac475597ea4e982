// The anomaly catalogue (Adya's G0 ... G2, plus OTV, PMP, P4, the read-only anomaly),
// run at every isolation level in both concurrency modes. Each test asserts exactly the
// behaviour docs/TRANSACTIONS.md documents for the combination: which steps block,
// which fail and with what status, and what every read returns.
//
// Conventions: keys "1" = 10 and "2" = 20 exist before each test. Snapshots are taken
// at a transaction's first operation (pessimistic: after its first lock is granted).
#include <gtest/gtest.h>

#include <atomic>
#include <tuple>

#include "txn/txn_test_util.h"

namespace tidesdb {
namespace {

using namespace txntest;
using Param = std::tuple<IsolationLevel, ConcurrencyMode>;

class IsolationTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = ScratchDir("isolation_" + std::to_string(counter++));
    DestroyDB(dir_, Options());
    Options o;
    o.sync_mode = SyncMode::kNone;
    o.flush_threads = 1;
    TransactionDBOptions to;
    to.lock_timeout_micros = 30'000'000;  // waits in these tests end by commit / rollback
    ASSERT_TRUE(TransactionDB::Open(o, to, dir_, &db_).ok());
    cf_ = db_->db()->DefaultColumnFamily();
    Seed({{"1", "10"}, {"2", "20"}});
  }
  void TearDown() override {
    db_.reset();
    DestroyDB(dir_, Options());
  }

  void Seed(std::vector<std::pair<std::string, std::string>> kvs) {
    WriteBatch b;
    for (auto& [k, v] : kvs) b.Put(cf_, k, v);
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  }

  std::unique_ptr<Transaction> Begin() {
    TransactionOptions o;
    o.isolation = std::get<0>(GetParam());
    o.mode = std::get<1>(GetParam());
    return db_->BeginTransaction(o);
  }
  bool Snap() const { return std::get<0>(GetParam()) >= IsolationLevel::kRepeatableRead; }
  bool Ser() const { return std::get<0>(GetParam()) == IsolationLevel::kSerializable; }
  bool Pess() const { return std::get<1>(GetParam()) == ConcurrencyMode::kPessimistic; }
  bool Waiting(size_t n) { return WaitForWaiters(db_.get(), n); }
  std::string Db(Slice k) { return ReadDb(db_.get(), k); }

  // Number of keys whose value satisfies pred, read through txn's iterator.
  int Count(Transaction* t, const std::function<bool(int)>& pred) {
    int n = 0;
    auto it = t->NewIterator(ReadOptions(), cf_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) n += pred(std::stoi(std::string(it->value()))) ? 1 : 0;
    EXPECT_TRUE(it->status().ok());
    return n;
  }

  std::string dir_;
  std::unique_ptr<TransactionDB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

#define OK(expr) ASSERT_TRUE((expr).ok())

// G0, write cycles: two transactions write x and y in opposite interleavings. Never a
// mix of the two in the final state (no dirty writes).
TEST_P(IsolationTest, G0WriteCycles) {
  auto t1 = Begin(), t2 = Begin();
  OK(t1->Put(cf_, "1", "11"));
  if (!Pess()) {
    OK(t2->Put(cf_, "1", "12"));
    OK(t1->Put(cf_, "2", "21"));
    OK(t1->Commit());
    OK(t2->Put(cf_, "2", "22"));
    Status s = t2->Commit();
    if (Snap()) {
      EXPECT_TRUE(s.IsBusy()) << s.ToString();  // first committer wins
      EXPECT_EQ(Db("1") + Db("2"), "1121");
    } else {
      OK(s);
      EXPECT_EQ(Db("1") + Db("2"), "1222");
    }
    return;
  }
  // Pessimistic: t2 waits for t1's X lock; its snapshot is taken once the lock is granted,
  // after t1 committed, so at every level it then proceeds.
  auto f = Async([&] { return t2->Put(cf_, "1", "12"); });
  ASSERT_TRUE(Waiting(1));
  OK(t1->Put(cf_, "2", "21"));
  OK(t1->Commit());
  OK(f.get());
  OK(t2->Put(cf_, "2", "22"));
  OK(t2->Commit());
  EXPECT_EQ(Db("1") + Db("2"), "1222");
}

// G1a, aborted reads: a rolled-back write is never seen.
TEST_P(IsolationTest, G1aAbortedReads) {
  auto t1 = Begin(), t2 = Begin();
  OK(t1->Put(cf_, "1", "101"));
  if (Pess() && Ser()) {
    std::string v;
    auto f = Async([&] { return t2->Get(cf_, "1", &v); });  // S waits for t1's X
    ASSERT_TRUE(Waiting(1));
    OK(t1->Rollback());
    OK(f.get());
    EXPECT_EQ(v, "10");
  } else {
    EXPECT_EQ(Read(t2.get(), cf_, "1"), "10");
    OK(t1->Rollback());
  }
  EXPECT_EQ(Read(t2.get(), cf_, "1"), "10");
  OK(t2->Commit());
}

// G1b, intermediate reads: only a transaction's final write is ever seen.
TEST_P(IsolationTest, G1bIntermediateReads) {
  auto t1 = Begin(), t2 = Begin();
  OK(t1->Put(cf_, "1", "101"));
  if (Pess() && Ser()) {
    std::string v;
    auto f = Async([&] { return t2->Get(cf_, "1", &v); });
    ASSERT_TRUE(Waiting(1));
    OK(t1->Put(cf_, "1", "11"));
    OK(t1->Commit());
    OK(f.get());
    EXPECT_EQ(v, "11");
    EXPECT_EQ(Read(t2.get(), cf_, "1"), "11");
  } else {
    EXPECT_EQ(Read(t2.get(), cf_, "1"), "10");
    OK(t1->Put(cf_, "1", "11"));
    OK(t1->Commit());
    EXPECT_EQ(Read(t2.get(), cf_, "1"), Snap() ? "10" : "11");
  }
  OK(t2->Commit());
}

// G1c, circular information flow: neither transaction sees the other's write.
TEST_P(IsolationTest, G1cCircularInformationFlow) {
  auto t1 = Begin(), t2 = Begin();
  OK(t1->Put(cf_, "1", "11"));
  OK(t2->Put(cf_, "2", "22"));
  if (Pess() && Ser()) {
    std::string v;
    auto f = Async([&] { return t1->Get(cf_, "2", &v); });  // waits for t2's X
    ASSERT_TRUE(Waiting(1));
    EXPECT_TRUE(Read(t2.get(), cf_, "1").starts_with("<Deadlock")) << "t2 closes the cycle";
    OK(t2->Rollback());
    OK(f.get());
    EXPECT_EQ(v, "20");
    OK(t1->Commit());
    EXPECT_EQ(Db("1") + Db("2"), "1120");
    return;
  }
  EXPECT_EQ(Read(t1.get(), cf_, "2"), "20");
  EXPECT_EQ(Read(t2.get(), cf_, "1"), "10");
  OK(t1->Commit());
  Status s = t2->Commit();
  if (Ser()) {
    // Each read what the other wrote (an anti-dependency cycle): the second committer's
    // read of "1" is stale.
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    EXPECT_EQ(Db("1") + Db("2"), "1120");
  } else {
    OK(s);
    EXPECT_EQ(Db("1") + Db("2"), "1122");
  }
}

// OTV, observed transaction vanishes (three transactions).
TEST_P(IsolationTest, OTVObservedTransactionVanishes) {
  auto t1 = Begin(), t2 = Begin(), t3 = Begin();
  OK(t1->Put(cf_, "1", "11"));
  OK(t1->Put(cf_, "2", "19"));
  if (!Pess()) {
    OK(t2->Put(cf_, "1", "12"));
    OK(t1->Commit());
    EXPECT_EQ(Read(t3.get(), cf_, "1"), "11");
    OK(t2->Put(cf_, "2", "18"));
    EXPECT_EQ(Read(t3.get(), cf_, "2"), "19");
    Status s = t2->Commit();
    if (Snap()) {
      EXPECT_TRUE(s.IsBusy()) << s.ToString();
      EXPECT_EQ(Read(t3.get(), cf_, "1") + Read(t3.get(), cf_, "2"), "1119");
    } else {
      OK(s);
      EXPECT_EQ(Read(t3.get(), cf_, "1") + Read(t3.get(), cf_, "2"), "1218");
    }
    OK(t3->Commit());
    return;
  }
  auto f = Async([&] { return t2->Put(cf_, "1", "12"); });
  ASSERT_TRUE(Waiting(1));
  OK(t1->Commit());
  OK(f.get());
  if (Ser()) {
    std::string v;
    auto f3 = Async([&] { return t3->Get(cf_, "1", &v); });  // S waits for t2's X
    ASSERT_TRUE(Waiting(1));
    OK(t2->Put(cf_, "2", "18"));
    OK(t2->Commit());
    OK(f3.get());
    EXPECT_EQ(v, "12");
    EXPECT_EQ(Read(t3.get(), cf_, "2"), "18");
  } else {
    EXPECT_EQ(Read(t3.get(), cf_, "1"), "11");
    OK(t2->Put(cf_, "2", "18"));
    EXPECT_EQ(Read(t3.get(), cf_, "2"), "19");
    OK(t2->Commit());
    EXPECT_EQ(Read(t3.get(), cf_, "1") + Read(t3.get(), cf_, "2"), Snap() ? "1119" : "1218");
  }
  OK(t3->Commit());
}

// PMP, predicate-many-preceders: a predicate read repeated after an insert.
TEST_P(IsolationTest, PMPPredicateManyPreceders) {
  auto t1 = Begin(), t2 = Begin();
  EXPECT_EQ(Count(t1.get(), [](int v) { return v == 30; }), 0);
  OK(t2->Put(cf_, "3", "30"));
  OK(t2->Commit());
  EXPECT_EQ(Count(t1.get(), [](int v) { return v == 30; }), Snap() ? 0 : 1);
  OK(t1->Commit());  // read-only: serializable before t2
}

// P4, lost update, with plain reads.
TEST_P(IsolationTest, P4LostUpdate) {
  auto t1 = Begin(), t2 = Begin();
  EXPECT_EQ(Read(t1.get(), cf_, "1"), "10");
  EXPECT_EQ(Read(t2.get(), cf_, "1"), "10");
  if (!Pess()) {
    OK(t1->Put(cf_, "1", "11"));
    OK(t2->Put(cf_, "1", "11"));
    OK(t1->Commit());
    Status s = t2->Commit();
    if (Snap()) {
      EXPECT_TRUE(s.IsBusy()) << s.ToString();
    } else {
      OK(s);  // read committed: the lost update happens
    }
  } else if (!Ser()) {
    OK(t1->Put(cf_, "1", "11"));
    auto f = Async([&] { return t2->Put(cf_, "1", "11"); });
    ASSERT_TRUE(Waiting(1));
    OK(t1->Commit());
    Status s = f.get();
    if (Snap()) {
      EXPECT_TRUE(s.IsBusy()) << s.ToString();  // the key changed after t2's snapshot
      OK(t2->Rollback());
    } else {
      OK(s);
      OK(t2->Commit());
    }
  } else {
    // Both hold S locks: the upgrades deadlock and t2, closing the cycle, is the victim.
    auto f = Async([&] { return t1->Put(cf_, "1", "11"); });
    ASSERT_TRUE(Waiting(1));
    Status s = t2->Put(cf_, "1", "11");
    EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
    OK(t2->Rollback());
    OK(f.get());
    OK(t1->Commit());
  }
  EXPECT_EQ(Db("1"), "11");
}

// P4 with GetForUpdate: prevented at every level.
TEST_P(IsolationTest, P4LostUpdateGetForUpdate) {
  auto t1 = Begin(), t2 = Begin();
  EXPECT_EQ(Read(t1.get(), cf_, "1", true), "10");
  if (!Pess()) {
    EXPECT_EQ(Read(t2.get(), cf_, "1", true), "10");
    OK(t1->Put(cf_, "1", "11"));
    OK(t2->Put(cf_, "1", "11"));
    OK(t1->Commit());
    Status s = t2->Commit();
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    EXPECT_EQ(Db("1"), "11");
    return;
  }
  std::string v;
  auto f = Async([&] { return t2->GetForUpdate(cf_, "1", &v); });
  ASSERT_TRUE(Waiting(1));
  OK(t1->Put(cf_, "1", "11"));
  OK(t1->Commit());
  OK(f.get());
  EXPECT_EQ(v, "11");  // granted after t1's commit; t2's snapshot starts there
  OK(t2->Put(cf_, "1", "12"));
  OK(t2->Commit());
  EXPECT_EQ(Db("1"), "12");
}

// G-single, read skew: t1 reads x before and y after t2 changed both.
TEST_P(IsolationTest, GSingleReadSkew) {
  auto t1 = Begin(), t2 = Begin();
  EXPECT_EQ(Read(t1.get(), cf_, "1"), "10");
  auto t2_body = [&]() -> Status {
    std::string v;
    Status s = t2->Get(cf_, "1", &v);
    if (s.ok()) s = t2->Get(cf_, "2", &v);
    if (s.ok()) s = t2->Put(cf_, "1", "12");
    if (s.ok()) s = t2->Put(cf_, "2", "18");
    if (s.ok()) s = t2->Commit();
    return s;
  };
  if (Pess() && Ser()) {
    auto f = Async(t2_body);  // its X on "1" waits for t1's S
    ASSERT_TRUE(Waiting(1));
    EXPECT_EQ(Read(t1.get(), cf_, "2"), "20");
    OK(t1->Commit());
    OK(f.get());
  } else {
    OK(t2_body());
    EXPECT_EQ(Read(t1.get(), cf_, "2"), Snap() ? "20" : "18");
    OK(t1->Commit());
  }
  EXPECT_EQ(Db("1") + Db("2"), "1218");
}

// G2-item, write skew on two keys read by both.
TEST_P(IsolationTest, G2ItemWriteSkew) {
  auto t1 = Begin(), t2 = Begin();
  for (auto* t : {t1.get(), t2.get()}) {
    EXPECT_EQ(Read(t, cf_, "1"), "10");
    EXPECT_EQ(Read(t, cf_, "2"), "20");
  }
  if (Pess() && Ser()) {
    auto f = Async([&] { return t1->Put(cf_, "1", "11"); });
    ASSERT_TRUE(Waiting(1));
    Status s = t2->Put(cf_, "2", "21");
    EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
    OK(t2->Rollback());
    OK(f.get());
    OK(t1->Commit());
    EXPECT_EQ(Db("1") + Db("2"), "1120");
    return;
  }
  OK(t1->Put(cf_, "1", "11"));
  OK(t2->Put(cf_, "2", "21"));
  OK(t1->Commit());
  Status s = t2->Commit();
  if (Ser()) {
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    EXPECT_EQ(Db("1") + Db("2"), "1120");
  } else {
    OK(s);  // write skew allowed below serializable
    EXPECT_EQ(Db("1") + Db("2"), "1121");
  }
}

// G2, anti-dependency cycles over a predicate (phantom write skew).
TEST_P(IsolationTest, G2PredicateAntiDependency) {
  auto t1 = Begin(), t2 = Begin();
  EXPECT_EQ(Count(t1.get(), [](int v) { return v % 3 == 0; }), 0);
  EXPECT_EQ(Count(t2.get(), [](int v) { return v % 3 == 0; }), 0);
  OK(t1->Put(cf_, "3", "30"));
  OK(t2->Put(cf_, "4", "42"));
  OK(t1->Commit());
  Status s = t2->Commit();
  if (Ser()) {
    EXPECT_TRUE(s.IsBusy()) << s.ToString();  // "3" landed in t2's scanned range
    EXPECT_EQ(Db("4"), "<none>");
  } else {
    OK(s);
    EXPECT_EQ(Db("4"), "42");
  }
}

// A phantom from a prepared writer: t2 prepared an insert into the range t1 scans. If t1
// commits at once it precedes t2 (it did not see the row, and t2 has not committed); if
// it prepares, t2 may commit first (a prepared transaction's commit cannot fail), so at
// serializable t1's prepare fails. Once t2 has committed, t1's retry sees the row.
TEST_P(IsolationTest, PhantomFromAPreparedWriter) {
  for (bool two_phase : {false, true}) {
    SCOPED_TRACE(two_phase ? "t1 prepares" : "t1 commits in one phase");
    const std::string key = two_phase ? "4" : "3", value = key + "0";
    auto is_new = [&](int v) { return v == std::stoi(value); };
    auto t1 = Begin(), t2 = Begin();
    OK(t2->Put(cf_, key, value));
    OK(t2->Prepare("w"));
    EXPECT_EQ(Count(t1.get(), is_new), 0);
    OK(t1->Put(cf_, "9", "90"));
    Status s = two_phase ? t1->Prepare("r") : t1->Commit();
    if (two_phase && Ser()) {
      EXPECT_TRUE(s.IsBusy()) << s.ToString();
      OK(db_->CommitPrepared("w"));
      auto retry = Begin();
      EXPECT_EQ(Count(retry.get(), is_new), 1);
      OK(retry->Put(cf_, "9", "90"));
      OK(retry->Prepare("r"));
      OK(db_->CommitPrepared("r"));
    } else {
      OK(s);
      OK(db_->CommitPrepared("w"));
      if (two_phase) {
        OK(db_->CommitPrepared("r"));
      }
    }
    EXPECT_EQ(Db(key) + Db("9"), value + "90");
  }
}

// The read-only transaction anomaly under snapshot isolation (Fekete, O'Neil, O'Neil
// 2004), three transactions: x = checking, y = savings; t2 withdraws 10 from x with a
// 1 penalty if x + y would go negative; t3 deposits 20 into y; t1 only reads.
TEST_P(IsolationTest, ReadOnlyAnomalyThreeTransactions) {
  Seed({{"x", "0"}, {"y", "0"}});
  auto t1 = Begin(), t2 = Begin(), t3 = Begin();
  EXPECT_EQ(Read(t2.get(), cf_, "x") + "," + Read(t2.get(), cf_, "y"), "0,0");
  if (Pess() && Ser()) {
    auto f3 = Async([&] {  // the X upgrade on y waits for t2's S
      std::string v;
      Status s = t3->Get(cf_, "y", &v);
      if (s.ok()) s = t3->Put(cf_, "y", "20");
      if (s.ok()) s = t3->Commit();
      return s;
    });
    ASSERT_TRUE(Waiting(1));
    std::string x1, y1;
    auto f1 = Async([&] {  // S on y queues behind t3's upgrade
      Status s = t1->Get(cf_, "x", &x1);
      if (s.ok()) s = t1->Get(cf_, "y", &y1);
      return s;
    });
    ASSERT_TRUE(Waiting(2));
    Status s = t2->Put(cf_, "x", "-11");  // waits for t1's S on x: t2 -> t1 -> t3 -> t2
    EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
    OK(t2->Rollback());
    OK(f3.get());
    s = f1.get();
    // t1's snapshot predates t3's commit of y: its S lock finds y changed.
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    OK(t1->Rollback());
    EXPECT_EQ(Db("x") + "," + Db("y"), "0,20");
    return;
  }
  EXPECT_EQ(Read(t3.get(), cf_, "y"), "0");
  OK(t3->Put(cf_, "y", "20"));
  OK(t3->Commit());
  EXPECT_EQ(Read(t1.get(), cf_, "x") + "," + Read(t1.get(), cf_, "y"), "0,20");
  OK(t1->Commit());
  OK(t2->Put(cf_, "x", "-11"));
  Status s = t2->Commit();
  if (Ser() && !Pess()) {
    EXPECT_TRUE(s.IsBusy()) << s.ToString();  // y, read by t2, changed after its snapshot
    EXPECT_EQ(Db("x"), "0");
  } else {
    OK(s);  // the anomaly: t1 saw the deposit but not the penalised withdrawal
    EXPECT_EQ(Db("x"), "-11");
  }
}

// Write skew among three transactions over the constraint a + b + c >= 1.
TEST_P(IsolationTest, WriteSkewThreeTransactions) {
  Seed({{"a", "1"}, {"b", "1"}, {"c", "1"}});
  std::unique_ptr<Transaction> t[3] = {Begin(), Begin(), Begin()};
  const char* keys[3] = {"a", "b", "c"};
  for (auto& tx : t) {
    for (const char* k : keys) EXPECT_EQ(Read(tx.get(), cf_, k), "1");
  }
  auto sum = [&] { return std::stoi(Db("a")) + std::stoi(Db("b")) + std::stoi(Db("c")); };
  if (Pess() && Ser()) {
    auto f = Async([&] { return t[0]->Put(cf_, "a", "0"); });
    ASSERT_TRUE(Waiting(1));
    Status s = t[1]->Put(cf_, "b", "0");  // waits for t0 (S on b), which waits for t1
    EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
    OK(t[1]->Rollback());
    s = t[2]->Put(cf_, "c", "0");
    EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
    OK(t[2]->Rollback());
    OK(f.get());
    OK(t[0]->Commit());
    EXPECT_EQ(sum(), 2);
    return;
  }
  for (int i = 0; i < 3; ++i) OK(t[i]->Put(cf_, keys[i], "0"));
  OK(t[0]->Commit());
  for (int i = 1; i < 3; ++i) {
    Status s = t[i]->Commit();
    if (Ser()) {
      EXPECT_TRUE(s.IsBusy()) << s.ToString();
    } else {
      OK(s);
    }
  }
  EXPECT_EQ(sum(), Ser() ? 2 : 0);
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  static const char* levels[] = {"ReadUncommitted", "ReadCommitted", "RepeatableRead", "Snapshot",
                                 "Serializable"};
  return std::string(levels[static_cast<int>(std::get<0>(info.param))]) +
         (std::get<1>(info.param) == ConcurrencyMode::kOptimistic ? "Optimistic" : "Pessimistic");
}

INSTANTIATE_TEST_SUITE_P(
    AllLevelsBothModes, IsolationTest,
    ::testing::Combine(::testing::Values(IsolationLevel::kReadUncommitted, IsolationLevel::kReadCommitted,
                                         IsolationLevel::kRepeatableRead, IsolationLevel::kSnapshot,
                                         IsolationLevel::kSerializable),
                       ::testing::Values(ConcurrencyMode::kOptimistic, ConcurrencyMode::kPessimistic)),
    ParamName);

}  // namespace
}  // namespace tidesdb
