// Transaction API: read-your-writes, atomic multi-CF commit, iterators merged with the
// write set, nested savepoints, per-transaction sync mode, write-set bound, locks on
// absent keys, timeouts and deadlocks, TransactionDB::Write.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <optional>
#include <random>

#include "txn/txn_test_util.h"

namespace tidesdb {
namespace {

using namespace txntest;

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = ScratchDir("txn_" + std::to_string(counter++));
    DestroyDB(dir_, Options());
    options_.sync_mode = SyncMode::kNone;
    options_.flush_threads = 1;
    Reopen();
  }
  void TearDown() override {
    db_.reset();
    DestroyDB(dir_, Options());
  }
  void Reopen() {
    db_.reset();
    TransactionDBOptions to;
    to.lock_timeout_micros = 10'000'000;
    to.max_write_set_bytes = max_write_set_bytes_;
    to.commit_table_bytes = commit_table_bytes_;
    ASSERT_TRUE(TransactionDB::Open(options_, to, dir_, &db_).ok());
    cf_ = db_->db()->DefaultColumnFamily();
  }
  std::unique_ptr<Transaction> Begin(ConcurrencyMode mode = ConcurrencyMode::kOptimistic,
                                     IsolationLevel level = IsolationLevel::kSnapshot) {
    TransactionOptions o;
    o.mode = mode;
    o.isolation = level;
    return db_->BeginTransaction(o);
  }
  std::string Db(Slice k, ColumnFamilyHandle* cf = nullptr) {
    std::string v;
    Status s = db_->db()->Get(ReadOptions(), cf ? cf : cf_, k, &v);
    return s.IsNotFound() ? "<none>" : s.ok() ? v : "<" + s.ToString() + ">";
  }
  uint64_t WalSyncs() {
    std::string stats;
    EXPECT_TRUE(db_->db()->GetProperty(nullptr, "tidesdb.stats", &stats));
    auto pos = stats.find("wal_syncs=");
    return std::stoull(stats.substr(pos + 10));
  }
  // A counter of tidesdb.txn.stats, by name (0 if there is none).
  uint64_t TxnStat(const std::string& name) {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty("tidesdb.txn.stats", &stats));
    auto pos = stats.find(" " + name + "=");
    return pos == std::string::npos ? 0 : std::stoull(stats.substr(pos + name.size() + 2));
  }
  static std::string Scan(Iterator* it, bool reverse = false) {
    std::string out;
    if (reverse) {
      for (it->SeekToLast(); it->Valid(); it->Prev())
        out += std::string(it->key()) + "=" + std::string(it->value()) + " ";
    } else {
      for (it->SeekToFirst(); it->Valid(); it->Next())
        out += std::string(it->key()) + "=" + std::string(it->value()) + " ";
    }
    EXPECT_TRUE(it->status().ok());
    return out;
  }

  std::string dir_;
  Options options_;
  size_t max_write_set_bytes_ = 256 << 20;
  size_t commit_table_bytes_ = 64 << 20;
  std::unique_ptr<TransactionDB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

TEST_F(TransactionTest, ReadsOwnWritesInvisibleToOthersUntilCommit) {
  for (auto mode : {ConcurrencyMode::kOptimistic, ConcurrencyMode::kPessimistic}) {
    auto t = Begin(mode);
    ASSERT_TRUE(t->Put(cf_, "k", "v1").ok());
    EXPECT_EQ(Read(t.get(), cf_, "k"), "v1");
    EXPECT_EQ(Db("k"), "<none>");
    ASSERT_TRUE(t->Put(cf_, "k", "v2").ok());
    ASSERT_TRUE(t->Put(cf_, "gone", "x").ok());
    ASSERT_TRUE(t->Delete(cf_, "gone").ok());
    EXPECT_EQ(Read(t.get(), cf_, "k"), "v2");
    EXPECT_EQ(Read(t.get(), cf_, "gone"), "<none>");
    EXPECT_EQ(t->write_set_count(), 2u);
    ASSERT_TRUE(t->Commit().ok());
    EXPECT_EQ(t->state(), Transaction::State::kCommitted);
    EXPECT_EQ(Db("k"), "v2");
    EXPECT_EQ(Db("gone"), "<none>");
    EXPECT_TRUE(t->Put(cf_, "k", "v3").IsInvalidArgument());  // not active any more
    auto d = Begin(mode);
    ASSERT_TRUE(d->Delete(cf_, "k").ok());
    ASSERT_TRUE(d->Commit().ok());
  }
}

TEST_F(TransactionTest, MultiColumnFamilyCommitIsAtomicAndDurable) {
  ColumnFamilyHandle* idx = nullptr;
  ASSERT_TRUE(db_->db()->CreateColumnFamily(ColumnFamilyOptions(), "index", &idx).ok());
  auto t = Begin();
  ASSERT_TRUE(t->Put(cf_, "row1", "data").ok());
  ASSERT_TRUE(t->Put(idx, "data|row1", "").ok());
  const uint64_t before = db_->db()->LatestSequence();
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(t->commit_sequence(), before + 2);  // one batch, consecutive sequences
  EXPECT_EQ(db_->db()->LatestSequence(), before + 2);
  Reopen();
  idx = db_->db()->GetColumnFamily("index");
  ASSERT_NE(idx, nullptr);
  EXPECT_EQ(Db("row1"), "data");
  EXPECT_EQ(Db("data|row1", idx), "");
}

TEST_F(TransactionTest, GetForShareLetsSharersInAndKeepsWritersOut) {
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "k", "v0").ok());
  auto a = Begin(ConcurrencyMode::kPessimistic, IsolationLevel::kReadCommitted);
  auto b = Begin(ConcurrencyMode::kPessimistic, IsolationLevel::kRepeatableRead);
  std::string v;
  ASSERT_TRUE(a->GetForShare(cf_, "k", &v).ok());
  EXPECT_EQ(v, "v0");
  ASSERT_TRUE(b->GetForShare(cf_, "k", &v).ok());  // a second sharer does not wait
  EXPECT_EQ(v, "v0");
  TransactionOptions o;
  o.mode = ConcurrencyMode::kPessimistic;
  o.lock_timeout_micros = 20'000;
  auto writer = db_->BeginTransaction(o);
  Status s = writer->Put(cf_, "k", "w");
  EXPECT_TRUE(s.IsTimedOut()) << s.ToString();  // a writer does
  ASSERT_TRUE(a->Commit().ok());
  ASSERT_TRUE(b->Commit().ok());
  ASSERT_TRUE(writer->Put(cf_, "k", "w").ok());
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(Db("k"), "w");
}

TEST_F(TransactionTest, OptimisticGetForShareIsValidatedAtCommit) {
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "k", "v0").ok());
  for (IsolationLevel level : {IsolationLevel::kReadCommitted, IsolationLevel::kRepeatableRead}) {
    auto a = Begin(ConcurrencyMode::kOptimistic, level);
    std::string v;
    ASSERT_TRUE(a->GetForShare(cf_, "k", &v).ok());
    ASSERT_TRUE(a->Put(cf_, "other", "x").ok());
    WriteBatch batch;
    batch.Put(cf_, "k", "changed");
    ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    Status s = a->Commit();
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    // Unchanged, it commits.
    auto c = Begin(ConcurrencyMode::kOptimistic, level);
    ASSERT_TRUE(c->GetForShare(cf_, "k", &v).ok());
    ASSERT_TRUE(c->Put(cf_, "other", "y").ok());
    EXPECT_TRUE(c->Commit().ok());
  }
}

TEST_F(TransactionTest, RollbackDiscardsEverything) {
  auto t = Begin(ConcurrencyMode::kPessimistic);
  ASSERT_TRUE(t->Put(cf_, "a", "1").ok());
  ASSERT_TRUE(t->Rollback().ok());
  EXPECT_EQ(t->state(), Transaction::State::kRolledBack);
  EXPECT_EQ(Db("a"), "<none>");
  // Its lock went with it.
  auto u = Begin(ConcurrencyMode::kPessimistic);
  TransactionOptions o;
  ASSERT_TRUE(u->Put(cf_, "a", "2").ok());
  ASSERT_TRUE(u->Commit().ok());
  // Deleting an active transaction rolls it back.
  {
    auto v = Begin();
    ASSERT_TRUE(v->Put(cf_, "a", "3").ok());
  }
  EXPECT_EQ(Db("a"), "2");
}

TEST_F(TransactionTest, IteratorMergesWriteSet) {
  WriteBatch b;
  for (const char* k : {"b", "d", "f", "h"}) b.Put(cf_, k, std::string("db") + k);
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  auto t = Begin();
  ASSERT_TRUE(t->Put(cf_, "a", "ta").ok());  // before every base key
  ASSERT_TRUE(t->Put(cf_, "d", "td").ok());  // overrides a base key
  ASSERT_TRUE(t->Delete(cf_, "f").ok());     // hides a base key
  ASSERT_TRUE(t->Put(cf_, "g", "tg").ok());  // between base keys
  ASSERT_TRUE(t->Delete(cf_, "zz").ok());    // deletes an absent key
  ASSERT_TRUE(t->Put(cf_, "z", "tz").ok());  // after every base key
  auto it = t->NewIterator(ReadOptions(), cf_);
  EXPECT_EQ(Scan(it.get()), "a=ta b=dbb d=td g=tg h=dbh z=tz ");
  EXPECT_EQ(Scan(it.get(), true), "z=tz h=dbh g=tg d=td b=dbb a=ta ");
  it->Seek("e");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "g");
  it->Prev();
  EXPECT_EQ(it->key(), "d");
  it->Next();
  EXPECT_EQ(it->key(), "g");
  it->SeekForPrev("f");
  EXPECT_EQ(it->key(), "d");
  it->Next();
  it->Next();
  EXPECT_EQ(it->key(), "h");
  // A write made while the iterator is open is seen from its next move.
  ASSERT_TRUE(t->Put(cf_, "i", "ti").ok());
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "i");

  Slice lo("c"), hi("h");
  ReadOptions ro;
  ro.lower_bound = &lo;
  ro.upper_bound = &hi;
  auto bounded = t->NewIterator(ro, cf_);
  EXPECT_EQ(Scan(bounded.get()), "d=td g=tg ");
  EXPECT_EQ(Scan(bounded.get(), true), "g=tg d=td ");
  bounded->Seek("a");
  EXPECT_EQ(bounded->key(), "d");
  bounded->SeekForPrev("zz");
  EXPECT_EQ(bounded->key(), "g");
  bounded.reset();
  it.reset();
  ASSERT_TRUE(t->Commit().ok());
}

// SeekBounded on a transaction's iterator over a CF with prefix filters: the write set's
// entries and the base's up to the limit, none past it (the base stops there); Next at the
// limit ends; Prev reaches what lies before; a plain Seek afterwards is unbounded again.
TEST_F(TransactionTest, IteratorSeekBoundedStopsAtTheLimitWithTheWriteSet) {
  ColumnFamilyOptions options;
  options.filter_prefix_length = 2;
  ColumnFamilyHandle* cf = nullptr;
  ASSERT_TRUE(db_->db()->CreateColumnFamily(options, "prefixed", &cf).ok());
  WriteBatch b;
  for (const char* k : {"a1", "b1", "b3", "c1", "d1"}) b.Put(cf, k, std::string("db") + k);
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(db_->db()->Flush(FlushOptions(), cf).ok());
  auto t = Begin();
  ASSERT_TRUE(t->Put(cf, "b2", "tb2").ok());
  ASSERT_TRUE(t->Delete(cf, "b3").ok());
  ASSERT_TRUE(t->Put(cf, "c0", "tc0").ok());  // past the limit of "b"
  auto it = t->NewIterator(ReadOptions(), cf);
  std::string seen;
  for (it->SeekBounded("b", "c"); it->Valid(); it->Next()) seen += std::string(it->key()) + " ";
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ("b1 b2 ", seen);
  it->SeekBounded("b2", "c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("b2", it->key());
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("b1", it->key());
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("a1", it->key());
  // An absent prefix: nothing, though keys follow.
  it->SeekBounded("bz", "c");
  EXPECT_FALSE(it->Valid());
  it->Seek("bz");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("c0", it->key());
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("c1", it->key());
  it.reset();
  ASSERT_TRUE(t->Commit().ok());
}

// The merged iterator against a model, over random writes, deletes and bounds.
TEST_F(TransactionTest, IteratorMatchesModelRandomized) {
  uint32_t seed = std::random_device()();
  if (const char* e = std::getenv("TIDESDB_TEST_SEED")) seed = static_cast<uint32_t>(std::stoul(e));
  std::printf("seed %u (TIDESDB_TEST_SEED)\n", seed);
  std::mt19937 rng(seed);
  auto key = [&] { return std::string(1, static_cast<char>('a' + rng() % 20)); };
  std::map<std::string, std::string> model;
  WriteBatch b;
  for (int i = 0; i < 12; ++i) {
    std::string k = key();
    model[k] = "db" + k;
    b.Put(cf_, k, model[k]);
  }
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  for (int round = 0; round < 30; ++round) {
    auto t = Begin();
    auto m = model;
    for (int i = 0; i < 10; ++i) {
      std::string k = key();
      if (rng() % 3 == 0) {
        ASSERT_TRUE(t->Delete(cf_, k).ok());
        m.erase(k);
      } else {
        std::string v = "t" + std::to_string(rng() % 100);
        ASSERT_TRUE(t->Put(cf_, k, v).ok());
        m[k] = v;
      }
    }
    std::string lo = key(), hi = key();
    if (hi < lo) std::swap(lo, hi);
    Slice los(lo), his(hi);
    ReadOptions ro;
    ro.lower_bound = &los;
    ro.upper_bound = &his;
    std::string expect_fwd, expect_rev;
    for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) {
      expect_fwd += it->first + "=" + it->second + " ";
      expect_rev = it->first + "=" + it->second + " " + expect_rev;
    }
    auto it = t->NewIterator(ro, cf_);
    EXPECT_EQ(Scan(it.get()), expect_fwd) << "round " << round;
    EXPECT_EQ(Scan(it.get(), true), expect_rev) << "round " << round;
    it.reset();
    if (rng() % 2 == 0) {
      ASSERT_TRUE(t->Commit().ok());
      model = m;
    }
  }
}

// Moves in both directions mixed with the transaction's own writes while the iterator
// stands on an entry (a base entry is read in place, a write-set entry is a copy): every
// move lands where the model says, over data in an SSTable, the memtable and the write
// set. A write is seen from the iterator's next move on.
TEST_F(TransactionTest, IteratorMovesInterleavedWithWritesMatchModel) {
  uint32_t seed = std::random_device()();
  if (const char* e = std::getenv("TIDESDB_TEST_SEED")) seed = static_cast<uint32_t>(std::stoul(e));
  std::printf("seed %u (TIDESDB_TEST_SEED)\n", seed);
  std::mt19937 rng(seed);
  auto key = [&] { return std::string(1, static_cast<char>('a' + rng() % 26)); };
  std::map<std::string, std::string> model;
  for (int part = 0; part < 2; ++part) {  // one part flushed to an SSTable, one in the memtable
    WriteBatch b;
    for (int i = 0; i < 10; ++i) {
      std::string k = key();
      model[k] = "db" + std::to_string(part) + k;
      b.Put(cf_, k, model[k]);
    }
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
    if (part == 0) {
      ASSERT_TRUE(db_->db()->Flush(FlushOptions(), cf_).ok());
    }
  }
  for (int round = 0; round < 40; ++round) {
    auto t = Begin();
    auto m = model;
    auto it = t->NewIterator(ReadOptions(), cf_);
    std::optional<std::string> at;  // the model's position
    for (int step = 0; step < 60; ++step) {
      const std::string trace = "round " + std::to_string(round) + " step " + std::to_string(step);
      switch (rng() % 7) {
        case 0: {
          std::string k = key();
          it->Seek(k);
          auto p = m.lower_bound(k);
          at = p == m.end() ? std::nullopt : std::optional<std::string>(p->first);
          break;
        }
        case 1: {
          std::string k = key();
          it->SeekForPrev(k);
          auto p = m.upper_bound(k);
          at = p == m.begin() ? std::nullopt : std::optional<std::string>(std::prev(p)->first);
          break;
        }
        case 2:
        case 3:
          if (!at) continue;
          it->Next();
          if (auto p = m.upper_bound(*at); p != m.end())
            at = p->first;
          else
            at.reset();
          break;
        case 4:
          if (!at) continue;
          it->Prev();
          if (auto p = m.lower_bound(*at); p != m.begin())
            at = std::prev(p)->first;
          else
            at.reset();
          break;
        default: {
          // A write, possibly at the key the iterator stands on; the current entry
          // keeps what it showed until the next move.
          std::string k = rng() % 2 == 0 && at ? *at : key();
          if (rng() % 3 == 0) {
            ASSERT_TRUE(t->Delete(cf_, k).ok());
            m.erase(k);
          } else {
            std::string v = "t" + std::to_string(step);
            ASSERT_TRUE(t->Put(cf_, k, v).ok());
            m[k] = v;
          }
          continue;
        }
      }
      ASSERT_EQ(it->Valid(), at.has_value()) << trace;
      if (!at) continue;
      ASSERT_EQ(std::string(it->key()), *at) << trace;
      ASSERT_EQ(std::string(it->value()), m[*at]) << trace;
    }
    it.reset();
    if (rng() % 2 == 0) {
      ASSERT_TRUE(t->Commit().ok());
      model = m;
    }
  }
}

TEST_F(TransactionTest, NestedSavepoints) {
  auto t = Begin(ConcurrencyMode::kPessimistic);
  EXPECT_TRUE(t->RollbackToSavepoint().IsNotFound());
  EXPECT_TRUE(t->ReleaseSavepoint().IsNotFound());
  ASSERT_TRUE(t->Put(cf_, "a", "1").ok());
  t->SetSavepoint();  // sp1
  ASSERT_TRUE(t->Put(cf_, "a", "2").ok());
  ASSERT_TRUE(t->Put(cf_, "b", "1").ok());
  t->SetSavepoint();  // sp2
  ASSERT_TRUE(t->Delete(cf_, "a").ok());
  ASSERT_TRUE(t->Put(cf_, "c", "1").ok());
  t->SetSavepoint();  // sp3
  ASSERT_TRUE(t->Put(cf_, "d", "1").ok());
  ASSERT_TRUE(t->ReleaseSavepoint().ok());  // sp3 released: d stays, undone with sp2
  EXPECT_EQ(Read(t.get(), cf_, "d"), "1");
  ASSERT_TRUE(t->RollbackToSavepoint().ok());  // back to sp2
  EXPECT_EQ(Read(t.get(), cf_, "a"), "2");
  EXPECT_EQ(Read(t.get(), cf_, "c"), "<none>");
  EXPECT_EQ(Read(t.get(), cf_, "d"), "<none>");
  EXPECT_EQ(Read(t.get(), cf_, "b"), "1");
  t->SetSavepoint();  // sp2'
  ASSERT_TRUE(t->Put(cf_, "e", "1").ok());
  ASSERT_TRUE(t->RollbackToSavepoint().ok());
  EXPECT_EQ(Read(t.get(), cf_, "e"), "<none>");
  ASSERT_TRUE(t->RollbackToSavepoint().ok());  // back to sp1
  EXPECT_EQ(Read(t.get(), cf_, "a"), "1");
  EXPECT_EQ(Read(t.get(), cf_, "b"), "<none>");
  EXPECT_EQ(t->write_set_count(), 1u);
  EXPECT_TRUE(t->RollbackToSavepoint().IsNotFound());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(Db("a"), "1");
  EXPECT_EQ(Db("b"), "<none>");
  EXPECT_EQ(Db("c"), "<none>");
}

TEST_F(TransactionTest, PerTransactionSyncModeOverride) {
  // The database does not sync (kNone); a transaction asking for kFull syncs its commit.
  uint64_t s0 = WalSyncs();
  auto t = Begin();
  ASSERT_TRUE(t->Put(cf_, "a", "1").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0);
  TransactionOptions full;
  full.sync_mode = SyncMode::kFull;
  t = db_->BeginTransaction(full);
  ASSERT_TRUE(t->Put(cf_, "a", "2").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0 + 1);
  // And back: a kFull database, a kNone transaction.
  options_.sync_mode = SyncMode::kFull;
  Reopen();
  s0 = WalSyncs();
  TransactionOptions none;
  none.sync_mode = SyncMode::kNone;
  t = db_->BeginTransaction(none);
  ASSERT_TRUE(t->Put(cf_, "a", "3").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0);
  t = Begin();
  ASSERT_TRUE(t->Put(cf_, "a", "4").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(WalSyncs(), s0 + 1);
}

TEST_F(TransactionTest, WriteSetBoundIsAClearErrorNeverAPartialCommit) {
  max_write_set_bytes_ = 64 << 10;
  Reopen();
  auto t = Begin();
  std::string value(1000, 'v');
  Status s;
  int written = 0;
  for (; written < 1000; ++written) {
    s = t->Put(cf_, "k" + std::to_string(written), value);
    if (!s.ok()) break;
  }
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_GT(written, 10);
  EXPECT_LT(written, 100);
  EXPECT_LE(t->write_set_bytes(), size_t{64} << 10);
  EXPECT_EQ(Db("k0"), "<none>");  // nothing was committed on the way
  // The transaction is still usable: overwriting within the bound works.
  ASSERT_TRUE(t->Put(cf_, "k0", "small").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(Db("k0"), "small");
  EXPECT_EQ(Db("k" + std::to_string(written - 1)), value);
  EXPECT_EQ(Db("k" + std::to_string(written)), "<none>");
}

// A long transaction outlives the table of recent commits: once it has forgotten the
// commits after the transaction's snapshot, the database answers (the key's newest
// version, in the memtable or in a file), so the transaction conflicts only on the keys
// really committed after its snapshot, in both modes. Before, every write of such a
// transaction failed with Busy.
TEST_F(TransactionTest, LongTransactionConflictsOnlyOnKeysCommittedAfterItsSnapshot) {
  commit_table_bytes_ = 16 << 10;  // a few hundred entries
  Reopen();
  auto commit = [&](const std::string& key, const std::string& value) {
    WriteBatch b;
    b.Put(cf_, key, value);
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  };
  int round = 0;
  for (ConcurrencyMode mode : {ConcurrencyMode::kOptimistic, ConcurrencyMode::kPessimistic}) {
    for (bool flushed : {false, true}) {
      SCOPED_TRACE(std::string(mode == ConcurrencyMode::kOptimistic ? "optimistic" : "pessimistic") +
                   (flushed ? ", flushed" : ", in the memtable"));
      const std::string r = std::to_string(round++);
      commit("hot" + r, "0");
      commit("read" + r, "0");
      auto clean = Begin(mode, IsolationLevel::kRepeatableRead);
      auto dirty = Begin(mode, IsolationLevel::kRepeatableRead);
      // Optimistic serializable: a read validated at commit. (A pessimistic one holds a
      // shared lock instead, which would keep the commit below out.)
      const bool optimistic = mode == ConcurrencyMode::kOptimistic;
      auto reader = Begin(mode, IsolationLevel::kSerializable);
      EXPECT_EQ(Read(clean.get(), cf_, "hot" + r), "0");  // takes the snapshots
      EXPECT_EQ(Read(dirty.get(), cf_, "hot" + r), "0");
      if (optimistic) {
        EXPECT_EQ(Read(reader.get(), cf_, "read" + r), "0");
      }
      commit("hot" + r, "1");
      commit("read" + r, "1");
      // Far more commits than the table holds: "hot" and "read" are forgotten.
      for (int i = 0; i < 2000; ++i) commit("filler" + r + "." + std::to_string(i), "x");
      if (flushed) {
        ASSERT_TRUE(db_->db()->Flush(FlushOptions(), nullptr).ok());
      }
      const uint64_t checks = TxnStat("forgotten_checks");

      // A key nobody touched since the snapshot: no conflict (the table alone would say
      // Busy: it no longer covers the snapshot).
      ASSERT_TRUE(clean->Put(cf_, "untouched" + r, "c").ok());
      EXPECT_TRUE(clean->Commit().ok());
      EXPECT_EQ(Db("untouched" + r), "c");
      EXPECT_GT(TxnStat("forgotten_checks"), checks);

      // A key committed after the snapshot: still a conflict, found in the database.
      Status s = dirty->Put(cf_, "hot" + r, "2");
      if (s.ok()) s = dirty->Commit();
      EXPECT_TRUE(s.IsBusy()) << s.ToString();
      EXPECT_EQ(Db("hot" + r), "1");

      // A read whose key was committed after it was read fails the commit, although the
      // table forgot that commit.
      if (optimistic) {
        s = reader->Put(cf_, "other" + r, "o");
        if (s.ok()) s = reader->Commit();
        EXPECT_TRUE(s.IsBusy()) << s.ToString();
        EXPECT_EQ(Db("other" + r), "<none>");
      }
    }
  }
}

// The ordered index of recent commits serves only serializable range validation, so
// commits record into it only while a serializable transaction is active. One that
// begins after unrecorded commits still sees a phantom committed after its snapshot, and
// is not failed by the commits it was not there for.
TEST_F(TransactionTest, RangeIndexRecordsOnlyWhileASerializableTransactionIsActive) {
  auto commit = [&](const std::string& key) {
    WriteBatch b;
    b.Put(cf_, key, "v");
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  };
  for (int i = 0; i < 100; ++i) commit("r" + std::to_string(i));
  EXPECT_EQ(TxnStat("range_index_keys"), 0u);
  EXPECT_GT(TxnStat("commit_table_entries"), 0u);

  for (ConcurrencyMode mode : {ConcurrencyMode::kOptimistic, ConcurrencyMode::kPessimistic}) {
    SCOPED_TRACE(mode == ConcurrencyMode::kOptimistic ? "optimistic" : "pessimistic");
    // Nobody writes its range: it commits.
    auto quiet = Begin(mode, IsolationLevel::kSerializable);
    {
      std::unique_ptr<Iterator> it(quiet->NewIterator(ReadOptions(), cf_));
      EXPECT_FALSE(Scan(it.get()).empty());
    }
    ASSERT_TRUE(quiet->Put(cf_, "q", "1").ok());
    EXPECT_TRUE(quiet->Commit().ok());

    // A phantom in its scanned range after its snapshot: refused (optimistic at commit;
    // pessimistic too, the range is validated at commit in both modes).
    auto scanner = Begin(mode, IsolationLevel::kSerializable);
    {
      std::unique_ptr<Iterator> it(scanner->NewIterator(ReadOptions(), cf_));
      for (it->Seek("r"); it->Valid() && it->key().starts_with("r"); it->Next()) {
      }
    }
    commit("r50x");
    EXPECT_GT(TxnStat("range_index_keys"), 0u);
    ASSERT_TRUE(scanner->Put(cf_, "total", "100").ok());
    EXPECT_TRUE(scanner->Commit().IsBusy());
  }
}

// The commit table is pruned after every kPruneKeys keys recorded, not only every 256
// commits: a few bulk transactions would otherwise fill it to its capacity, where each of
// its lookups misses the CPU cache. Entries an active snapshot may conflict with stay.
TEST_F(TransactionTest, BulkCommitsPruneTheCommitTableEarly) {
  auto bulk = [&](const std::string& prefix) {
    WriteBatch b;
    for (int i = 0; i < 10000; ++i) b.Put(cf_, prefix + std::to_string(i), "v");
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  };
  // An active transaction's snapshot keeps what was committed after it.
  auto old = Begin(ConcurrencyMode::kOptimistic, IsolationLevel::kSnapshot);
  ASSERT_TRUE(old->Put(cf_, "a5", "mine").ok());
  bulk("a");
  EXPECT_GE(TxnStat("commit_table_entries"), 10000u);
  EXPECT_TRUE(old->Commit().IsBusy());
  old.reset();
  // With no snapshot older than them, the next bulk commit's prune forgets both, well
  // before 256 commits.
  bulk("b");
  EXPECT_LT(TxnStat("commit_table_entries"), 10000u);
}

TEST_F(TransactionTest, PessimisticLocksAbsentKeysTimeoutAndDeadlock) {
  TransactionOptions o;
  o.mode = ConcurrencyMode::kPessimistic;
  o.isolation = IsolationLevel::kReadCommitted;
  o.lock_timeout_micros = 20'000;
  auto t1 = db_->BeginTransaction(o), t2 = db_->BeginTransaction(o);
  ASSERT_TRUE(t1->Put(cf_, "new", "1").ok());  // an insert: the key does not exist
  Status s = t2->Put(cf_, "new", "2");
  EXPECT_TRUE(s.IsTimedOut()) << s.ToString();
  ASSERT_TRUE(t2->Put(cf_, "other", "2").ok());  // still active after a timeout
  o.lock_timeout_micros = 10'000'000;
  auto t3 = db_->BeginTransaction(o), t4 = db_->BeginTransaction(o);
  ASSERT_TRUE(t3->Put(cf_, "x", "3").ok());
  ASSERT_TRUE(t4->Put(cf_, "y", "4").ok());
  auto f = Async([&] { return t3->Put(cf_, "y", "3"); });
  ASSERT_TRUE(WaitForWaiters(db_.get(), 1));
  s = t4->Put(cf_, "x", "4");
  EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
  ASSERT_TRUE(t4->Rollback().ok());
  ASSERT_TRUE(f.get().ok());
  ASSERT_TRUE(t3->Commit().ok());
  ASSERT_TRUE(t1->Commit().ok());
  ASSERT_TRUE(t2->Commit().ok());
  EXPECT_EQ(Db("new") + Db("other") + Db("x") + Db("y"), "1233");
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("tidesdb.txn.stats", &stats));
  EXPECT_NE(stats.find("lock_timeouts=1"), std::string::npos) << stats;
  EXPECT_NE(stats.find("deadlocks=1"), std::string::npos) << stats;
}

TEST_F(TransactionTest, OptimisticCommitWaitsForPessimisticLock) {
  auto p = Begin(ConcurrencyMode::kPessimistic);
  ASSERT_TRUE(p->Put(cf_, "k", "p").ok());
  auto o = Begin(ConcurrencyMode::kOptimistic, IsolationLevel::kReadCommitted);
  ASSERT_TRUE(o->Put(cf_, "k", "o").ok());
  auto f = Async([&] { return o->Commit(); });
  ASSERT_TRUE(WaitForWaiters(db_.get(), 1));
  EXPECT_EQ(Db("k"), "<none>");
  ASSERT_TRUE(p->Commit().ok());
  ASSERT_TRUE(f.get().ok());
  EXPECT_EQ(Db("k"), "o");
}

TEST_F(TransactionTest, TransactionDBWriteTakesPartInConflicts) {
  auto t = Begin();
  EXPECT_EQ(Read(t.get(), cf_, "k"), "<none>");
  WriteBatch b;
  b.Put(cf_, "k", "plain");
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(t->Put(cf_, "k", "txn").ok());
  EXPECT_TRUE(t->Commit().IsBusy());
  EXPECT_EQ(Db("k"), "plain");
}

TEST_F(TransactionTest, SnapshotTakenAtFirstOperationOrAtBegin) {
  WriteBatch seed;
  seed.Put(cf_, "seed", "1");
  ASSERT_TRUE(db_->Write(WriteOptions(), &seed).ok());
  auto lazy = Begin();
  TransactionOptions o;
  o.snapshot_at_begin = true;
  auto eager = db_->BeginTransaction(o);
  EXPECT_EQ(lazy->snapshot_sequence(), 0u);
  EXPECT_EQ(eager->snapshot_sequence(), db_->db()->LatestSequence());
  WriteBatch b;
  b.Put(cf_, "k", "v");
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  EXPECT_EQ(Read(lazy.get(), cf_, "k"), "v");
  EXPECT_EQ(Read(eager.get(), cf_, "k"), "<none>");
  EXPECT_EQ(lazy->snapshot_sequence(), db_->db()->LatestSequence());
}

// Foreign keys: a child insert reads its parent, a parent delete scans its children; both
// at the latest committed state, and they never both commit.
TEST_F(TransactionTest, ReferenceReadsSeeTheLatestStateAtEveryLevel) {
  for (ConcurrencyMode mode : {ConcurrencyMode::kOptimistic, ConcurrencyMode::kPessimistic}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto t = Begin(mode, IsolationLevel::kRepeatableRead);
    std::string v;
    EXPECT_TRUE(t->Get(cf_, "p", &v).IsNotFound());  // the snapshot is taken
    ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "p", "parent").ok());
    ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "c1", "child").ok());
    EXPECT_TRUE(t->Get(cf_, "p", &v).IsNotFound());    // not in the snapshot
    ASSERT_TRUE(t->GetReferenced(cf_, "p", &v).ok());  // but the latest state has it
    EXPECT_EQ(v, "parent");
    ASSERT_TRUE(t->Put(cf_, "c2", "mine").ok());
    ReadOptions ro;
    auto it = t->NewReferenceIterator(ro, cf_);
    it->Seek("c");
    std::string seen;
    for (; it->Valid() && it->key().starts_with("c"); it->Next()) seen += std::string(it->key()) + " ";
    EXPECT_EQ(seen, "c1 c2 ");  // committed after the snapshot, and its own write
    it.reset();
    EXPECT_TRUE(t->Commit().ok());  // nobody changed what it read
    ASSERT_TRUE(db_->db()->Delete(WriteOptions(), cf_, "p").ok());
    ASSERT_TRUE(db_->db()->Delete(WriteOptions(), cf_, "c1").ok());
    ASSERT_TRUE(db_->db()->Delete(WriteOptions(), cf_, "c2").ok());
  }
}

TEST_F(TransactionTest, OptimisticReferenceRangeIsValidatedAtCommit) {
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "p", "parent").ok());
  for (IsolationLevel level : {IsolationLevel::kReadCommitted, IsolationLevel::kRepeatableRead}) {
    SCOPED_TRACE(static_cast<int>(level));
    // The parent's delete finds no child; a child committed meanwhile fails its commit.
    auto parent = Begin(ConcurrencyMode::kOptimistic, level);
    ASSERT_TRUE(parent->Delete(cf_, "p").ok());
    std::string lo = "c", hi = "d";
    Slice lower(lo), upper(hi);
    ReadOptions ro;
    ro.lower_bound = &lower;
    ro.upper_bound = &upper;
    auto it = parent->NewReferenceIterator(ro, cf_);
    it->Seek("c");
    EXPECT_FALSE(it->Valid());
    it.reset();
    auto child = Begin(ConcurrencyMode::kOptimistic, level);
    std::string v;
    ASSERT_TRUE(child->GetReferenced(cf_, "p", &v).ok());
    ASSERT_TRUE(child->Put(cf_, "c1", "child").ok());
    ASSERT_TRUE(child->Commit().ok());
    Status s = parent->Commit();
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    EXPECT_TRUE(parent->last_failure().is_range);
    EXPECT_EQ(Db("p"), "parent");
    // A key outside the range does not conflict.
    parent = Begin(ConcurrencyMode::kOptimistic, level);
    ASSERT_TRUE(parent->Put(cf_, "q", "other parent").ok());
    lo = "x", hi = "y";
    it = parent->NewReferenceIterator(ro, cf_);
    it->Seek("x");
    EXPECT_FALSE(it->Valid());
    it.reset();
    ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "k9", "unrelated").ok());
    EXPECT_TRUE(parent->Commit().ok());
    ASSERT_TRUE(db_->db()->Delete(WriteOptions(), cf_, "c1").ok());
  }
  // The other order: the child read its parent, the parent's delete commits first.
  auto child = Begin(ConcurrencyMode::kOptimistic, IsolationLevel::kRepeatableRead);
  std::string v;
  ASSERT_TRUE(child->GetReferenced(cf_, "p", &v).ok());
  ASSERT_TRUE(child->Put(cf_, "c2", "child").ok());
  WriteBatch batch;
  batch.Delete(cf_, "p");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  Status s = child->Commit();
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_EQ(Db("c2"), "<none>");
}

TEST_F(TransactionTest, PessimisticReferenceReadSharesTheLockWithoutSnapshotCheck) {
  TransactionOptions o;
  o.mode = ConcurrencyMode::kPessimistic;
  o.isolation = IsolationLevel::kRepeatableRead;
  o.lock_timeout_micros = 20'000;
  auto child = db_->BeginTransaction(o);
  std::string v;
  EXPECT_TRUE(child->Get(cf_, "p", &v).IsNotFound());  // the snapshot is taken
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "p", "parent").ok());
  // Committed after the snapshot: GetForShare reports a conflict, a reference read not.
  ASSERT_TRUE(child->GetReferenced(cf_, "p", &v).ok());
  auto other = db_->BeginTransaction(o);
  ASSERT_TRUE(other->GetReferenced(cf_, "p", &v).ok());  // sharers proceed
  auto parent = db_->BeginTransaction(o);
  Status s = parent->Delete(cf_, "p");
  EXPECT_TRUE(s.IsTimedOut()) << s.ToString();  // a writer waits for both
  ASSERT_TRUE(child->Put(cf_, "c1", "child").ok());
  ASSERT_TRUE(child->Commit().ok());
  ASSERT_TRUE(other->Commit().ok());
  ASSERT_TRUE(parent->Delete(cf_, "p").ok());
  auto it = parent->NewReferenceIterator(ReadOptions(), cf_);
  it->Seek("c");
  ASSERT_TRUE(it->Valid());  // the child committed after the parent's snapshot
  EXPECT_EQ(std::string(it->key()), "c1");
  it.reset();
  ASSERT_TRUE(parent->Rollback().ok());
}

TEST_F(TransactionTest, PessimisticLockingReadsLatestActOnTheLatestCommit) {
  TransactionOptions o;
  o.mode = ConcurrencyMode::kPessimistic;
  o.isolation = IsolationLevel::kRepeatableRead;
  o.lock_timeout_micros = 20'000;
  o.locking_reads_latest = true;
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "k", "1").ok());
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "j", "1").ok());
  auto t = db_->BeginTransaction(o);
  EXPECT_TRUE(t->locks_latest());
  std::string v;
  ASSERT_TRUE(t->Get(cf_, "j", &v).ok());  // the snapshot is taken
  auto other = db_->BeginTransaction(o);
  ASSERT_TRUE(other->Put(cf_, "k", "2").ok());
  ASSERT_TRUE(other->Put(cf_, "j", "2").ok());
  ASSERT_TRUE(other->Commit().ok());
  auto writer = Begin();
  ASSERT_TRUE(writer->Put(cf_, "m", "db").ok());
  ASSERT_TRUE(writer->Commit().ok());
  // Locking reads see the commits after the snapshot, plain reads do not.
  ASSERT_TRUE(t->GetForUpdate(cf_, "k", &v).ok());
  EXPECT_EQ(v, "2");
  ASSERT_TRUE(t->Get(cf_, "j", &v).ok());
  EXPECT_EQ(v, "1");
  ASSERT_TRUE(t->GetForShare(cf_, "j", &v).ok());
  EXPECT_EQ(v, "2");
  // The lock holds the row read: another writer waits.
  auto waiter = db_->BeginTransaction(o);
  EXPECT_TRUE(waiter->Put(cf_, "k", "3").IsTimedOut());
  ASSERT_TRUE(waiter->Rollback().ok());
  // Writes of keys committed after the snapshot do not fail either.
  ASSERT_TRUE(t->Put(cf_, "k", "2+t").ok());
  ASSERT_TRUE(t->Put(cf_, "m", "t").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(Db("k") + " " + Db("m"), "2+t t");

  // The same history fails without the option (first committer wins), at SERIALIZABLE, and
  // in optimistic mode (where the option is ignored).
  struct Case {
    ConcurrencyMode mode;
    IsolationLevel isolation;
    bool latest;
  };
  int round = 0;
  for (const Case& c : {Case{ConcurrencyMode::kPessimistic, IsolationLevel::kRepeatableRead, false},
                        Case{ConcurrencyMode::kPessimistic, IsolationLevel::kSerializable, true},
                        Case{ConcurrencyMode::kOptimistic, IsolationLevel::kRepeatableRead, true}}) {
    o.mode = c.mode;
    o.isolation = c.isolation;
    o.locking_reads_latest = c.latest;
    SCOPED_TRACE(std::string(c.mode == ConcurrencyMode::kPessimistic ? "pessimistic" : "optimistic") +
                 (c.isolation == IsolationLevel::kSerializable ? " serializable" : " repeatable read") +
                 (c.latest ? " latest" : ""));
    auto u = db_->BeginTransaction(o);
    EXPECT_FALSE(u->locks_latest());
    ASSERT_TRUE(u->Get(cf_, "j", &v).ok());
    const std::string committed = "db" + std::to_string(++round);
    auto writer = Begin();
    ASSERT_TRUE(writer->Put(cf_, "k", committed).ok());
    ASSERT_TRUE(writer->Commit().ok());
    Status s = u->GetForUpdate(cf_, "k", &v);
    if (s.ok()) {
      EXPECT_NE(v, committed);  // the snapshot's value; the commit then fails
      ASSERT_TRUE(u->Put(cf_, "k", "u").ok());
      s = u->Commit();
    }
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    EXPECT_EQ(Db("k"), committed);
  }
}

// A pessimistic parent's locks do not stop an optimistic child, which locks nothing until
// its commit: the pessimistic side's walked range is validated too.
TEST_F(TransactionTest, PessimisticReferenceRangeIsValidatedAgainstOptimisticWriters) {
  ASSERT_TRUE(db_->db()->Put(WriteOptions(), cf_, "p", "parent").ok());
  TransactionOptions o;
  o.mode = ConcurrencyMode::kPessimistic;
  o.isolation = IsolationLevel::kReadCommitted;
  auto parent = db_->BeginTransaction(o);
  ASSERT_TRUE(parent->Delete(cf_, "p").ok());
  auto child = Begin(ConcurrencyMode::kOptimistic, IsolationLevel::kReadCommitted);
  std::string v;
  ASSERT_TRUE(child->GetReferenced(cf_, "p", &v).ok());  // the delete is not committed
  ASSERT_TRUE(child->Put(cf_, "c1", "child").ok());
  auto it = parent->NewReferenceIterator(ReadOptions(), cf_);
  it->Seek("c");
  EXPECT_FALSE(it->Valid());  // the child is not committed either
  it.reset();
  ASSERT_TRUE(child->Commit().ok());
  Status s = parent->Commit();
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_EQ(Db("p"), "parent");
}

}  // namespace
}  // namespace tidesdb
