// Two-phase commit: prepared transactions are durable, invisible, keep their locks,
// survive a SIGKILL between prepare and commit (and further reopens and WAL rotation),
// are listed by xid after recovery and resolved by xid.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "env/fault_injection_env.h"
#include "txn/txn_test_util.h"

namespace tidesdb {
namespace {

using namespace txntest;

class TwoPhaseCommitTest : public ScratchTxnDbTest {
 protected:
  TwoPhaseCommitTest() : ScratchTxnDbTest("2pc") {}
  void SetUp() override {
    ScratchTxnDbTest::SetUp();
    options_.sync_mode = SyncMode::kNone;  // prepare syncs regardless
    options_.flush_threads = 1;
  }
  std::string Db(Slice k) { return ReadDb(db_.get(), k); }
  uint64_t WalSyncs() {
    std::string stats;
    EXPECT_TRUE(db_->db()->GetProperty(nullptr, "tidesdb.stats", &stats));
    return std::stoull(stats.substr(stats.find("wal_syncs=") + 10));
  }
  // A pessimistic transaction's try-lock on key: TimedOut while a prepared one holds it.
  Status TryWrite(Slice key) {
    TransactionOptions o;
    o.mode = ConcurrencyMode::kPessimistic;
    o.lock_timeout_micros = 0;
    auto t = db_->BeginTransaction(o);
    Status s = t->Put(cf_, key, "intruder");
    t->Rollback();
    return s;
  }
};

TEST_F(TwoPhaseCommitTest, SyncModeOfPrepareAndOfTheSecondPhase) {
  options_.sync_mode = SyncMode::kFull;
  Open();
  // Unset: the prepare syncs, and so does the commit (the database's mode).
  uint64_t s0 = WalSyncs();
  auto t = db_->BeginTransaction(TransactionOptions());
  ASSERT_TRUE(t->Put(cf_, "a", "1").ok());
  ASSERT_TRUE(t->Prepare("x1").ok());
  EXPECT_EQ(WalSyncs(), s0 + 1);
  // The coordinator has logged the decision durably: the second phase need not sync.
  t->SetSyncMode(SyncMode::kNone);
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0 + 1);
  EXPECT_EQ(Db("a"), "1");
  // Set to kNone: neither phase syncs.
  TransactionOptions none;
  none.sync_mode = SyncMode::kNone;
  t = db_->BeginTransaction(none);
  ASSERT_TRUE(t->Put(cf_, "b", "1").ok());
  ASSERT_TRUE(t->Prepare("x2").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0 + 1);
  // An explicit kFull on a kNone transaction before it prepares: both phases sync.
  t = db_->BeginTransaction(none);
  t->SetSyncMode(SyncMode::kFull);
  ASSERT_TRUE(t->Put(cf_, "c", "1").ok());
  ASSERT_TRUE(t->Prepare("x3").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0 + 3);
  // Whatever the sync mode, everything written reaches the file: it survives a reopen.
  Open();
  EXPECT_EQ(Db("a"), "1");
  EXPECT_EQ(Db("b"), "1");
  EXPECT_EQ(Db("c"), "1");
  EXPECT_TRUE(db_->PreparedXids().empty());
}

TEST_F(TwoPhaseCommitTest, ConcurrentPreparesShareFsyncsAndSurviveAPowerLoss) {
  // Prepares sync outside the write queue, sharing fsyncs; commits that do not sync (a
  // coordinator's second phases) run meanwhile. Every acknowledged prepare survives a
  // power loss.
  FaultInjectionEnv fault;
  options_.env = &fault;
  options_.sync_mode = SyncMode::kNone;
  Open();
  std::string stats;
  auto wal_syncs = [&] {
    EXPECT_TRUE(db_->db()->GetProperty(nullptr, "tidesdb.stats", &stats));
    return std::stoull(stats.substr(stats.find("wal_syncs=") + 10));
  };
  const uint64_t syncs_before = wal_syncs();
  constexpr int kThreads = 6, kPerThread = 30;
  std::atomic<int> committed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string id = std::to_string(t) + "-" + std::to_string(i);
        auto txn = db_->BeginTransaction(TransactionOptions());
        ASSERT_TRUE(txn->Put(cf_, "k" + id, "v").ok());
        ASSERT_TRUE(txn->Prepare("x" + id).ok());
        if (i % 2 == 0) {  // half are resolved at once, the way a binary log's are
          txn->SetSyncMode(SyncMode::kNone);
          ASSERT_TRUE(txn->Commit().ok());
          committed++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const uint64_t syncs = wal_syncs() - syncs_before;
  std::printf("%d prepares, %llu WAL fsyncs\n", kThreads * kPerThread,
              static_cast<unsigned long long>(syncs));
  EXPECT_LE(syncs, static_cast<uint64_t>(kThreads * kPerThread));

  fault.SetFilesystemActive(false);
  db_.reset();
  ASSERT_TRUE(fault.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 7).ok());
  fault.SetFilesystemActive(true);
  Open();
  // The unresolved ones are prepared; the resolved ones are committed, or (their commit
  // record not synced) prepared again, never lost.
  std::set<std::string> prepared;
  for (const std::string& x : db_->PreparedXids()) prepared.insert(x);
  int present = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      std::string id = std::to_string(t) + "-" + std::to_string(i);
      const bool is_prepared = prepared.count("x" + id) != 0;
      const bool is_committed = Db("k" + id) == "v";
      if (i % 2 == 1) {
        EXPECT_TRUE(is_prepared && !is_committed) << id;
      } else {
        EXPECT_NE(is_prepared, is_committed) << id;
      }
      present += is_committed;
    }
  }
  std::printf("after the power loss: %d of %d second phases kept\n", present, committed.load());
  db_.reset();
}

TEST_F(TwoPhaseCommitTest, PreparedIsInvisibleKeepsLocksAndCommits) {
  Open();
  TransactionOptions o;
  o.mode = ConcurrencyMode::kOptimistic;  // optimistic transactions lock at prepare
  auto t = db_->BeginTransaction(o);
  ASSERT_TRUE(t->Put(cf_, "a", "1").ok());
  ASSERT_TRUE(t->Prepare("xid-a").ok());
  EXPECT_EQ(t->state(), Transaction::State::kPrepared);
  EXPECT_EQ(t->xid(), "xid-a");
  EXPECT_EQ(Db("a"), "<none>");
  EXPECT_TRUE(TryWrite("a").IsTimedOut());
  EXPECT_TRUE(t->Put(cf_, "b", "1").IsInvalidArgument());  // no more work once prepared
  EXPECT_EQ(db_->PreparedXids(), std::vector<std::string>{"xid-a"});
  auto dup = db_->BeginTransaction(o);
  EXPECT_TRUE(dup->Prepare("xid-a").IsInvalidArgument());
  // An optimistic committer of the same key waits for the prepared transaction.
  auto other = db_->BeginTransaction(o);
  ASSERT_TRUE(other->Put(cf_, "a", "2").ok());
  auto f = Async([&] { return other->Commit(); });
  ASSERT_TRUE(WaitForWaiters(db_.get(), 1));
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(t->state(), Transaction::State::kCommitted);
  // other's snapshot predates the prepared commit of "a": first committer wins.
  EXPECT_TRUE(f.get().IsBusy());
  EXPECT_EQ(Db("a"), "1");
  EXPECT_TRUE(db_->PreparedXids().empty());
  EXPECT_TRUE(TryWrite("a").ok());
}

TEST_F(TwoPhaseCommitTest, ResolveByXidWhileObjectIsHeldOrDeleted) {
  Open();
  TransactionOptions o;
  o.mode = ConcurrencyMode::kPessimistic;
  auto t1 = db_->BeginTransaction(o);
  ASSERT_TRUE(t1->Put(cf_, "k1", "v1").ok());
  ASSERT_TRUE(t1->Prepare("x1").ok());
  {
    auto t2 = db_->BeginTransaction(o);
    ASSERT_TRUE(t2->Put(cf_, "k2", "v2").ok());
    ASSERT_TRUE(t2->Prepare("x2").ok());
  }  // deleting a prepared transaction leaves it prepared
  EXPECT_EQ(db_->PreparedXids(), (std::vector<std::string>{"x1", "x2"}));
  EXPECT_TRUE(TryWrite("k2").IsTimedOut());
  ASSERT_TRUE(db_->CommitPrepared("x1").ok());
  EXPECT_EQ(t1->state(), Transaction::State::kCommitted);
  EXPECT_NE(t1->commit_sequence(), 0u);
  EXPECT_TRUE(t1->Commit().IsInvalidArgument());
  ASSERT_TRUE(db_->RollbackPrepared("x2").ok());
  EXPECT_TRUE(db_->CommitPrepared("x2").IsNotFound());
  EXPECT_EQ(Db("k1") + "," + Db("k2"), "v1,<none>");
  EXPECT_TRUE(TryWrite("k2").ok());
}

// The child prepares three transactions (and commits / rolls back two other prepared
// ones), then dies by SIGKILL between prepare and commit.
TEST_F(TwoPhaseCommitTest, CrashBetweenPrepareAndCommitThenRecoverAndResolve) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::unique_ptr<TransactionDB> db;
    TransactionDBOptions to;
    if (!TransactionDB::Open(options_, to, dir_, &db).ok()) _exit(2);
    ColumnFamilyHandle* cf = db->db()->DefaultColumnFamily();
    auto prep = [&](const char* xid, const char* key, ConcurrencyMode mode) {
      TransactionOptions o;
      o.mode = mode;
      auto t = db->BeginTransaction(o);
      if (!t->Put(cf, key, xid).ok() || !t->Put(cf, std::string(key) + "2", xid).ok()) _exit(3);
      if (!t->Prepare(xid).ok()) _exit(4);
      return t;
    };
    auto p1 = prep("xa", "a", ConcurrencyMode::kPessimistic);
    auto p2 = prep("xb", "b", ConcurrencyMode::kOptimistic);
    auto p3 = prep("xc", "c", ConcurrencyMode::kPessimistic);
    auto p4 = prep("xd", "d", ConcurrencyMode::kOptimistic);
    auto p5 = prep("xe", "e", ConcurrencyMode::kOptimistic);
    if (!p4->Commit().ok() || !p5->Rollback().ok()) _exit(5);
    // Plain commits after the prepares, and a WAL rotation by flush.
    WriteBatch b;
    b.Put(cf, "plain", "1");
    if (!db->Write(WriteOptions(), &b).ok()) _exit(6);
    if (!db->db()->Flush(FlushOptions(), nullptr).ok()) _exit(7);
    raise(SIGKILL);
    _exit(8);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child exit " << WEXITSTATUS(status);

  Open();
  EXPECT_EQ(db_->PreparedXids(), (std::vector<std::string>{"xa", "xb", "xc"}));
  EXPECT_EQ(Db("a") + Db("b") + Db("c"), "<none><none><none>");  // invisible
  EXPECT_EQ(Db("d") + Db("d2") + Db("e") + Db("plain"), "xdxd<none>1");
  EXPECT_TRUE(TryWrite("a").IsTimedOut());  // locks re-acquired at recovery
  EXPECT_TRUE(TryWrite("b2").IsTimedOut());

  // Reopen once more without resolving: still prepared (re-logged into the new WAL).
  Open();
  auto recovered = db_->RecoverPrepared();
  ASSERT_EQ(recovered.size(), 3u);
  EXPECT_TRUE(db_->RecoverPrepared().empty());  // handed over once
  std::map<std::string, Transaction*> by_xid;
  for (auto& t : recovered) {
    EXPECT_EQ(t->state(), Transaction::State::kPrepared);
    by_xid[t->xid()] = t.get();
  }
  ASSERT_TRUE(by_xid["xa"]->Commit().ok());
  ASSERT_TRUE(by_xid["xb"]->Rollback().ok());
  ASSERT_TRUE(db_->CommitPrepared("xc").ok());  // by xid, object held elsewhere
  EXPECT_EQ(by_xid["xc"]->state(), Transaction::State::kCommitted);
  EXPECT_EQ(Db("a") + Db("a2") + Db("b") + Db("c") + Db("c2"), "xaxa<none>xcxc");
  EXPECT_TRUE(TryWrite("b").ok());
  recovered.clear();
  Open();
  EXPECT_TRUE(db_->PreparedXids().empty());
  EXPECT_EQ(Db("a") + Db("a2") + Db("b") + Db("c") + Db("c2") + Db("d"), "xaxa<none>xcxcxd");
}

// A prepare record stays recoverable while many later WALs come and go.
// A recovered prepared transaction's writes stay out of the ranges that serializable
// transactions scan and then prepare (its own scanned ranges are not in its record).
TEST_F(TwoPhaseCommitTest, RecoveredPreparedWritesConflictWithScannedRanges) {
  Open();
  {
    auto w = db_->BeginTransaction(TransactionOptions());
    ASSERT_TRUE(w->Put(cf_, "k5", "w").ok());
    ASSERT_TRUE(w->Prepare("w").ok());
  }
  Open();
  ASSERT_EQ(db_->PreparedXids(), std::vector<std::string>{"w"});
  TransactionOptions o;
  o.isolation = IsolationLevel::kSerializable;
  auto scan = [&](const std::string& lo, const std::string& xid) {
    auto r = db_->BeginTransaction(o);
    auto it = r->NewIterator(ReadOptions(), cf_);
    for (it->Seek(lo); it->Valid() && std::string(it->key()) < lo + "z"; it->Next()) {
    }
    EXPECT_TRUE(it->status().ok());
    it.reset();
    EXPECT_TRUE(r->Put(cf_, "a" + xid, "r").ok());
    return r->Prepare(xid);
  };
  EXPECT_TRUE(scan("k", "r1").IsBusy());  // [k, kz] holds k5
  ASSERT_TRUE(scan("m", "r2").ok());      // [m, mz] does not
  ASSERT_TRUE(db_->CommitPrepared("w").ok());
  ASSERT_TRUE(scan("k", "r3").ok());
  ASSERT_TRUE(db_->CommitPrepared("r2").ok());
  ASSERT_TRUE(db_->CommitPrepared("r3").ok());
  EXPECT_EQ(Db("k5") + Db("ar2") + Db("ar3"), "wrr");
}

TEST_F(TwoPhaseCommitTest, PreparedPinsItsWalAcrossRotation) {
  options_.unified_memtable_write_buffer_size = 64 << 10;
  Open();
  TransactionOptions o;
  auto t = db_->BeginTransaction(o);
  ASSERT_TRUE(t->Put(cf_, "pinned", "yes").ok());
  ASSERT_TRUE(t->Prepare("pin").ok());
  t.reset();
  std::string value(1000, 'x');
  for (int i = 0; i < 400; ++i) {  // ~400 KB through 64 KB memtables: several rotations
    WriteBatch b;
    b.Put(cf_, "fill" + std::to_string(i), value);
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  }
  ASSERT_TRUE(db_->db()->Flush(FlushOptions(), nullptr).ok());
  Open();
  EXPECT_EQ(db_->PreparedXids(), std::vector<std::string>{"pin"});
  ASSERT_TRUE(db_->CommitPrepared("pin").ok());
  EXPECT_EQ(Db("pinned"), "yes");
  EXPECT_EQ(Db("fill399"), value);
}

}  // namespace
}  // namespace tidesdb
