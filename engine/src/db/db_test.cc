// Behaviour of the public DB API, in both memtable modes.
#include "tidesdb/db.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tidesdb/env.h"

namespace tidesdb {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string base = tmp != nullptr ? tmp : "/tmp";
  std::string clean = name;
  for (char& c : clean) {
    if (c == '/') c = '_';
  }
  std::string dir = base + "/tidesdb_db_test_" + clean + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

class DBTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = TestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.unified_memtable = GetParam();
    options_.sync_mode = SyncMode::kNone;  // durability has its own tests; keep these fast
    options_.unified_memtable_write_buffer_size = 256 << 10;
    options_.default_cf_options.write_buffer_size = 256 << 10;
    Reopen();
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    db_.reset();
    Status open_status = DB::Open(options_, dir_, &db_);
    ASSERT_TRUE(open_status.ok()) << open_status.ToString();
  }
  std::string Get(ColumnFamilyHandle* cf, const std::string& key, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string v;
    Status s = db_->Get(ro, cf, key, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return v;
  }
  std::string Get(const std::string& key) { return Get(db_->DefaultColumnFamily(), key); }
  void Put(const std::string& k, const std::string& v) {
    ASSERT_TRUE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), k, v).ok());
  }
  std::string Scan(ColumnFamilyHandle* cf, ReadOptions ro = ReadOptions()) {
    std::string out;
    auto it = db_->NewIterator(ro, cf);
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out += std::string(it->key()) + "=" + std::string(it->value()) + ",";
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return out;
  }
  std::string ScanBackward(ColumnFamilyHandle* cf, ReadOptions ro = ReadOptions()) {
    std::string out;
    auto it = db_->NewIterator(ro, cf);
    for (it->SeekToLast(); it->Valid(); it->Prev())
      out += std::string(it->key()) + "=" + std::string(it->value()) + ",";
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return out;
  }

  std::string dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_P(DBTest, PutGetDeleteOverwrite) {
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  Put("a", "1");
  Put("b", "2");
  EXPECT_EQ(Get("a"), "1");
  Put("a", "3");
  EXPECT_EQ(Get("a"), "3");
  ASSERT_TRUE(db_->Delete(WriteOptions(), db_->DefaultColumnFamily(), "a").ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "2");
  Put("", "empty-key");
  EXPECT_EQ(Get(""), "empty-key");
}

TEST_P(DBTest, SurvivesReopenFromWalAndFromSSTables) {
  Put("k1", "v1");
  Put("k2", "v2");
  ASSERT_TRUE(db_->Delete(WriteOptions(), db_->DefaultColumnFamily(), "k2").ok());
  Reopen();  // from the WAL
  EXPECT_EQ(Get("k1"), "v1");
  EXPECT_EQ(Get("k2"), "NOT_FOUND");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  Put("k3", "v3");
  Reopen();
  EXPECT_EQ(Get("k1"), "v1");
  EXPECT_EQ(Get("k2"), "NOT_FOUND");
  EXPECT_EQ(Get("k3"), "v3");
  std::string files;
  ASSERT_TRUE(db_->GetProperty(db_->DefaultColumnFamily(), "tidesdb.num-files-at-level0", &files));
  EXPECT_GE(std::stoi(files), 1);
}

TEST_P(DBTest, DeleteHidesOlderVersionsInSSTables) {
  Put("x", "old");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), db_->DefaultColumnFamily(), "x").ok());
  EXPECT_EQ(Get("x"), "NOT_FOUND");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  EXPECT_EQ(Get("x"), "NOT_FOUND");
  EXPECT_EQ(Scan(db_->DefaultColumnFamily()), "");
  Reopen();
  EXPECT_EQ(Get("x"), "NOT_FOUND");
}

TEST_P(DBTest, ColumnFamiliesAreIsolatedAndDropIsReal) {
  ColumnFamilyHandle* a;
  ColumnFamilyHandle* b;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "a", &a).ok());
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "b", &b).ok());
  ColumnFamilyHandle* dup;
  EXPECT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "a", &dup).IsInvalidArgument());
  ASSERT_TRUE(db_->Put(WriteOptions(), a, "k", "in-a").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), b, "k", "in-b").ok());
  EXPECT_EQ(Get(a, "k"), "in-a");
  EXPECT_EQ(Get(b, "k"), "in-b");
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  ASSERT_TRUE(db_->Flush(FlushOptions(), a).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), a, "k2", "mem").ok());
  ASSERT_TRUE(db_->DropColumnFamily(a).ok());
  EXPECT_TRUE(db_->Put(WriteOptions(), a, "k", "x").IsInvalidArgument());
  EXPECT_EQ(db_->GetColumnFamily("a"), nullptr);
  // Same name again: a new, empty CF, before and after reopen and flush.
  ColumnFamilyHandle* a2;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "a", &a2).ok());
  EXPECT_NE(a2->id(), a->id());
  EXPECT_EQ(Get(a2, "k"), "NOT_FOUND");
  EXPECT_EQ(Scan(a2), "");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  Reopen();
  a2 = db_->GetColumnFamily("a");
  ASSERT_NE(a2, nullptr);
  EXPECT_EQ(Scan(a2), "");
  EXPECT_EQ(Get(db_->GetColumnFamily("b"), "k"), "in-b");
  auto names = db_->ListColumnFamilies();
  EXPECT_EQ(names.size(), 3u);
}

TEST_P(DBTest, DroppedColumnFamilyFilesAreDeleted) {
  ColumnFamilyHandle* cf;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "t", &cf).ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf, "k" + std::to_string(i), std::string(2000, 'v')).ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), cf).ok());
  auto count_files = [&] {
    int n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir_)) {
      auto ext = e.path().extension();
      n += ext == ".klog" || ext == ".vlog";
    }
    return n;
  };
  EXPECT_GE(count_files(), 2);  // a key log and a value log
  ASSERT_TRUE(db_->DropColumnFamily(cf).ok());
  EXPECT_EQ(count_files(), 0);
}

TEST_P(DBTest, WriteBatchIsAtomicAcrossColumnFamilies) {
  ColumnFamilyHandle* a;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "a", &a).ok());
  WriteBatch batch;
  batch.Put(a, "k", "1");
  batch.Put(db_->DefaultColumnFamily(), "k", "2");
  batch.Delete(a, "missing");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(Get(a, "k"), "1");
  EXPECT_EQ(Get("k"), "2");
  // A batch naming a dropped CF is refused whole.
  ColumnFamilyHandle* gone;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "gone", &gone).ok());
  uint32_t gone_id = gone->id();
  ASSERT_TRUE(db_->DropColumnFamily(gone).ok());
  WriteBatch bad;
  bad.Put(a, "k", "changed");
  bad.Put(gone_id, "k", "x");
  EXPECT_TRUE(db_->Write(WriteOptions(), &bad).IsInvalidArgument());
  EXPECT_EQ(Get(a, "k"), "1");
}

TEST_P(DBTest, IteratorsMergeMemtablesAndSSTablesBothWays) {
  std::map<std::string, std::string> model;
  for (int round = 0; round < 3; ++round) {
    for (int i = round; i < 60; i += 2) {
      std::string k = "key" + std::to_string(100 + i);
      std::string v = "r" + std::to_string(round) + "_" + std::to_string(i);
      Put(k, v);
      model[k] = v;
    }
    for (int i = round; i < 60; i += 7) {
      std::string k = "key" + std::to_string(100 + i);
      ASSERT_TRUE(db_->Delete(WriteOptions(), db_->DefaultColumnFamily(), k).ok());
      model.erase(k);
    }
    if (round < 2) {
      ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
    }
  }
  std::string forward, backward;
  for (auto& [k, v] : model) forward += k + "=" + v + ",";
  for (auto it = model.rbegin(); it != model.rend(); ++it) backward += it->first + "=" + it->second + ",";
  EXPECT_EQ(Scan(db_->DefaultColumnFamily()), forward);
  EXPECT_EQ(ScanBackward(db_->DefaultColumnFamily()), backward);

  auto it = db_->NewIterator(ReadOptions(), db_->DefaultColumnFamily());
  it->Seek("key130");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(std::string(it->key()), model.lower_bound("key130")->first);
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(std::string(it->key()), std::prev(model.lower_bound("key130"))->first);
  it->Next();
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(std::string(it->key()), std::next(model.lower_bound("key130"))->first);
  it->SeekForPrev("key130");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(std::string(it->key()), std::prev(model.upper_bound("key130"))->first);
}

TEST_P(DBTest, IteratorsAndEstimatesOfACfTheMemtablesHoldNothingOf) {
  // In unified mode b's writes fill the memtable that a's iterators and estimates look at
  // (and skip, holding nothing of a); a's entries are all in SSTables until it is written.
  ColumnFamilyHandle* a;
  ColumnFamilyHandle* b;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "a", &a).ok());
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "b", &b).ok());
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(db_->Put(WriteOptions(), a, "k" + std::to_string(10 + i), "a").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE(db_->Put(WriteOptions(), b, "k" + std::to_string(10 + i), "b").ok());
  std::string expected;
  for (int i = 0; i < 20; ++i) expected += "k" + std::to_string(10 + i) + "=a,";
  EXPECT_EQ(Scan(a), expected);
  EXPECT_EQ(db_->EstimateRange(a, Range{"k10", "k20"}).keys, 10u);
  EXPECT_EQ(db_->EstimateRange(b, Range{"k10", "k20"}).keys, 10u);

  // An iterator made now does not see a's first memtable entries (newer than its
  // snapshot); one made after them does, and so does the estimate.
  auto before = db_->NewIterator(ReadOptions(), a);
  ASSERT_TRUE(db_->Put(WriteOptions(), a, "k15", "new").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), a, "k155", "new").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), a, "k16").ok());
  before->Seek("k15");
  ASSERT_TRUE(before->Valid());
  EXPECT_EQ(std::string(before->value()), "a");
  before->Next();
  ASSERT_TRUE(before->Valid());
  EXPECT_EQ(std::string(before->key()), "k16");
  auto after = db_->NewIterator(ReadOptions(), a);
  after->Seek("k15");
  ASSERT_TRUE(after->Valid());
  EXPECT_EQ(std::string(after->value()), "new");
  after->Next();
  ASSERT_TRUE(after->Valid());
  EXPECT_EQ(std::string(after->key()), "k155");
  after->Next();
  ASSERT_TRUE(after->Valid());
  EXPECT_EQ(std::string(after->key()), "k17");
  // 10 in the SSTable and the 3 memtable entries (the estimate counts every version).
  EXPECT_EQ(db_->EstimateRange(a, Range{"k10", "k20"}).keys, 13u);
}

TEST_P(DBTest, IteratorBounds) {
  for (char c = 'a'; c <= 'h'; ++c) Put(std::string(1, c), std::string(1, c));
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  Slice lo("c"), hi("f");
  ReadOptions ro;
  ro.lower_bound = &lo;
  ro.upper_bound = &hi;
  EXPECT_EQ(Scan(db_->DefaultColumnFamily(), ro), "c=c,d=d,e=e,");
  EXPECT_EQ(ScanBackward(db_->DefaultColumnFamily(), ro), "e=e,d=d,c=c,");
  auto it = db_->NewIterator(ro, db_->DefaultColumnFamily());
  it->Seek("a");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->SeekForPrev("z");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "e");
  it->Seek("f");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("b");
  EXPECT_FALSE(it->Valid());
}

TEST_P(DBTest, SnapshotsSeeAConsistentPast) {
  Put("a", "1");
  Put("b", "1");
  const Snapshot* snap = db_->GetSnapshot();
  Put("a", "2");
  ASSERT_TRUE(db_->Delete(WriteOptions(), db_->DefaultColumnFamily(), "b").ok());
  Put("c", "2");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  EXPECT_EQ(Get(db_->DefaultColumnFamily(), "a", snap), "1");
  EXPECT_EQ(Get(db_->DefaultColumnFamily(), "b", snap), "1");
  EXPECT_EQ(Get(db_->DefaultColumnFamily(), "c", snap), "NOT_FOUND");
  ReadOptions ro;
  ro.snapshot = snap;
  EXPECT_EQ(Scan(db_->DefaultColumnFamily(), ro), "a=1,b=1,");
  EXPECT_EQ(Scan(db_->DefaultColumnFamily()), "a=2,c=2,");
  db_->ReleaseSnapshot(snap);
}

TEST_P(DBTest, LargeValuesLiveInTheValueLog) {
  auto big = [](int i) { return std::to_string(i) + std::string(100000, static_cast<char>('a' + i)); };
  for (int i = 0; i < 20; ++i) Put("big" + std::to_string(i), big(i));
  Put("small", "s");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  bool vlog = false;
  for (auto& e : std::filesystem::directory_iterator(dir_)) {
    vlog |= e.path().extension() == ".vlog";
  }
  EXPECT_TRUE(vlog);
  Reopen();
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(Get("big" + std::to_string(i)) == big(i)) << i;
  }
  auto it = db_->NewIterator(ReadOptions(), db_->DefaultColumnFamily());
  it->Seek("big1");
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(it->value() == big(1));
  EXPECT_EQ(Get("small"), "s");
}

// A flush writes only the versions some reader can still see: overwrites inside one
// memtable leave one version per key, plus what registered snapshots need.
TEST_P(DBTest, FlushKeepsOnlyVersionsSnapshotsNeed) {
  ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
  const Snapshot* snap = nullptr;
  auto big = [](int i) { return std::to_string(i) + std::string(1200, 'b'); };
  for (int i = 0; i < 1000; ++i) {  // ~150 KB: one memtable
    Put("hot", "v" + std::to_string(i));
    if (i % 10 == 0) Put("big", big(i));
    if (i == 499) snap = db_->GetSnapshot();
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf, "gone").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  std::string stats;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &stats));
  // Per key, the newest version and the one the snapshot sees are kept (and the tombstone):
  // 5 of 1101 entries.
  EXPECT_NE(stats.find(" flushes=1 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" flush_entries_dropped=1096 "), std::string::npos) << stats;
  EXPECT_EQ(Get(cf, "hot"), "v999");
  EXPECT_EQ(Get(cf, "hot", snap), "v499");
  EXPECT_EQ(Get(cf, "big"), big(990));
  EXPECT_EQ(Get(cf, "big", snap), big(490));
  EXPECT_EQ(Get(cf, "gone"), "NOT_FOUND");
  // Only the two kept large values went to the value log.
  std::string vlogs;
  ASSERT_TRUE(db_->GetProperty(cf, "tidesdb.value-logs", &vlogs));
  EXPECT_NE(vlogs.find("total files=1 "), std::string::npos) << vlogs;
  const uint64_t size = std::stoull(vlogs.substr(vlogs.find("total files=1 size=") + 19));
  EXPECT_LT(size, 3 * 1300u) << vlogs;
  db_->ReleaseSnapshot(snap);
  Reopen();
  EXPECT_EQ(Get("hot"), "v999");
}

// "tidesdb.options" names the options a CF was created with, also after a reopen (they
// come from the manifest, not from the Options the database is opened with).
TEST_P(DBTest, OptionsPropertyShowsTheColumnFamilysOwnOptions) {
  ColumnFamilyOptions options;
  options.compression = CompressionType::kZstd;
  options.bloom_fpr = 0.001;
  options.use_btree = true;
  options.block_size = 4096;
  ColumnFamilyHandle* cf = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(options, "tuned", &cf).ok());
  auto check = [&](ColumnFamilyHandle* handle) {
    std::string v;
    ASSERT_TRUE(db_->GetProperty(handle, "tidesdb.options", &v));
    EXPECT_NE(v.find("compression=zstd "), std::string::npos) << v;
    EXPECT_NE(v.find("bloom_fpr=0.001 "), std::string::npos) << v;
    EXPECT_NE(v.find("use_btree=true "), std::string::npos) << v;
    EXPECT_NE(v.find("block_size=4096 "), std::string::npos) << v;
    EXPECT_EQ(v.back(), '\n');
  };
  check(cf);
  std::string defaults;
  ASSERT_TRUE(db_->GetProperty(db_->DefaultColumnFamily(), "tidesdb.options", &defaults));
  EXPECT_EQ(defaults.find("compression=zstd"), std::string::npos) << defaults;
  Reopen();
  check(db_->GetColumnFamily("tuned"));
}

// The library reports what it does: to Options::logger when set, else to the LOG file.
TEST_P(DBTest, MessagesGoToTheLoggerOrTheLogFile) {
  db_.reset();
  std::filesystem::remove_all(dir_);  // SetUp's open wrote a LOG
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> messages;
  Options o = options_;
  o.logger = [&](LogLevel level, std::string_view m) {
    std::lock_guard<std::mutex> l(mu);
    messages.emplace_back(level, std::string(m));
  };
  ASSERT_TRUE(DB::Open(o, dir_, &db_).ok());
  Put("k", "v");
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  db_.reset();
  auto has = [&](LogLevel level, const std::string& prefix) {
    std::lock_guard<std::mutex> l(mu);
    for (const auto& [lv, m] : messages) {
      if (lv == level && m.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(LogLevel::kInfo, "opened " + dir_));
  EXPECT_TRUE(has(LogLevel::kInfo, "flush: cf 0: L0 #"));
  EXPECT_TRUE(has(LogLevel::kInfo, "compaction (manual) cf 0: L0 1 files"));
  EXPECT_TRUE(has(LogLevel::kInfo, "closing " + dir_));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/LOG")) << "a logger replaces the LOG file";

  // Above the level: nothing at INFO.
  messages.clear();
  o.log_level = LogLevel::kWarn;
  ASSERT_TRUE(DB::Open(o, dir_, &db_).ok());
  Put("k2", "v");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  db_.reset();
  EXPECT_TRUE(messages.empty()) << messages.front().second;

  // No logger: the LOG file, one timestamped line per message.
  ASSERT_TRUE(DB::Open(options_, dir_, &db_).ok());
  Put("k3", "v");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  db_.reset();
  std::ifstream log(dir_ + "/LOG");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Z INFO  opened " + dir_), std::string::npos) << text;
  EXPECT_NE(text.find("Z INFO  flush: cf 0: L0 #"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
  Reopen();  // the LOG does not disturb recovery
  EXPECT_EQ(Get("k3"), "v");
}

// Large values are cached in the block cache after the first read (unless the read asks
// not to fill it), so a hot value does not cost a value-log read each time.
TEST_P(DBTest, LargeValuesAreServedFromTheBlockCache) {
  const std::string big(20000, 'v');
  Put("big", big);
  Put("cold", big + "c");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  auto counter = [&](const char* name) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(nullptr, "tidesdb.block-cache", &v));
    size_t pos = v.find(std::string(name) + "=");
    return pos == std::string::npos ? uint64_t{0} : std::stoull(v.substr(pos + std::strlen(name) + 1));
  };
  EXPECT_EQ(Get("big"), big);
  const uint64_t hits = counter("hits"), misses = counter("misses");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Get("big"), big);
  // Each read looks up the key log's block and the value: all hits now.
  EXPECT_EQ(counter("misses"), misses);
  EXPECT_GE(counter("hits"), hits + 10) << "one hit for the key-log block and one for the value per read";
  // A read that must not fill the cache leaves the value out of it.
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  std::string v;
  ASSERT_TRUE(db_->Get(no_fill, db_->DefaultColumnFamily(), "cold", &v).ok());
  EXPECT_EQ(v, big + "c");
  const uint64_t misses_before = counter("misses");
  ASSERT_TRUE(db_->Get(no_fill, db_->DefaultColumnFamily(), "cold", &v).ok());
  EXPECT_GT(counter("misses"), misses_before) << "the value was cached by a no-fill read";
}

// An iterator hands out a cached large value in place; it stays valid while the iterator
// is positioned on it, even after the cache evicted it.
TEST_P(DBTest, IteratorValuesStayValidWhileTheCacheEvictsThem) {
  options_.block_cache_size = 1 << 20;
  Reopen();
  auto big = [](int i) { return std::to_string(i) + std::string(200000, static_cast<char>('a' + i % 26)); };
  for (int i = 0; i < 20; ++i) Put("k" + std::to_string(10 + i), big(i));
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reads what the first cached
    auto it = db_->NewIterator(ReadOptions(), db_->DefaultColumnFamily());
    int i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      const Slice v = it->value();
      // Churn the cache: the values of other keys evict this one.
      for (int j = 0; j < 20; j += 5) EXPECT_EQ(Get("k" + std::to_string(10 + j)), big(j));
      ASSERT_TRUE(v == big(i)) << "pass " << pass << " key " << i;
      ASSERT_TRUE(it->value() == big(i));
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    EXPECT_EQ(i, 20);
  }
}

// A crash can leave files numbered past what the manifest logged (an unfinished compaction's
// outputs). Open must delete them and never hand their numbers to new files: a stale value
// log sharing its number with a live key log was once kept forever.
TEST_P(DBTest, OrphansOfACrashAreDeletedAndTheirNumbersNotReused) {
  Put("a", std::string(5000, 'a'));
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  Put("b", std::string(5000, 'b'));  // only in the WAL: reopen flushes it
  db_.reset();
  std::set<std::string> before;
  for (auto& e : std::filesystem::directory_iterator(dir_)) before.insert(e.path().filename());
  for (const char* name : {"/000090.vlog", "/000090.klog", "/000091.vlog"}) {
    std::ofstream(dir_ + name) << "left by a crash";
  }
  Reopen();
  int created = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_)) {
    const std::string name = e.path().filename();
    EXPECT_NE(name, "000090.vlog");
    EXPECT_NE(name, "000090.klog");
    EXPECT_NE(name, "000091.vlog");
    if (before.count(name) != 0 || name[0] < '0' || name[0] > '9') continue;
    created++;
    EXPECT_GT(std::stoull(name), 91u) << name << ": a new file reused an orphan's number range";
  }
  EXPECT_GE(created, 2) << "the recovery flush and the new WAL";
  EXPECT_EQ(Get("a"), std::string(5000, 'a'));
  EXPECT_EQ(Get("b"), std::string(5000, 'b'));
}

TEST_P(DBTest, ExpiredEntriesAreInvisible) {
  WriteBatch batch;
  batch.PutWithExpiry(db_->DefaultColumnFamily(), "old", "v", 1);              // 1970
  batch.PutWithExpiry(db_->DefaultColumnFamily(), "future", "v", 4102444800);  // 2100
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(Get("old"), "NOT_FOUND");
  EXPECT_EQ(Get("future"), "v");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  EXPECT_EQ(Get("old"), "NOT_FOUND");
  EXPECT_EQ(Scan(db_->DefaultColumnFamily()), "future=v,");
}

TEST_P(DBTest, ManyColumnFamiliesAreCheap) {
  std::vector<ColumnFamilyHandle*> cfs;
  for (int i = 0; i < 1000; ++i) {
    ColumnFamilyHandle* cf;
    ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "cf" + std::to_string(i), &cf).ok());
    cfs.push_back(cf);
  }
  for (int i = 0; i < 1000; i += 10) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cfs[i], "k", std::to_string(i)).ok());
  }
  Reopen();
  for (int i = 0; i < 1000; i += 10) {
    EXPECT_EQ(Get(db_->GetColumnFamily("cf" + std::to_string(i)), "k"), std::to_string(i));
  }
  EXPECT_EQ(db_->ListColumnFamilies().size(), 1001u);
}

TEST_P(DBTest, ConcurrentWritersAllLand) {
  options_.sync_mode = SyncMode::kFull;
  Reopen();
  constexpr int kThreads = 4, kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string k = "t" + std::to_string(t) + "_" + std::to_string(i);
        ASSERT_TRUE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), k, std::string(200, 'v')).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  Reopen();
  int n = 0;
  auto it = db_->NewIterator(ReadOptions(), db_->DefaultColumnFamily());
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, kThreads * kPerThread);
  std::string stats;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &stats));
}

// kInterval syncs the WAL once per interval, not once per background event: flushes wake
// the same condition variable the syncer sleeps on, and it used to sync at every wake-up.
TEST_P(DBTest, IntervalModeSyncsOncePerInterval) {
  options_.sync_mode = SyncMode::kInterval;
  options_.sync_interval_micros = 200'000;
  options_.unified_memtable_write_buffer_size = 64 << 10;  // a flush every ~500 writes
  options_.default_cf_options.write_buffer_size = 64 << 10;
  Reopen();
  auto stat = [&](const std::string& name) {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &stats));
    auto pos = stats.find(" " + name + "=");
    return std::stoull(stats.substr(pos + name.size() + 2));
  };
  const auto start = std::chrono::steady_clock::now();
  const uint64_t syncs_before = stat("wal_syncs");
  for (int i = 0; i < 60000; ++i) Put("k" + std::to_string(i), std::string(100, 'v'));
  const uint64_t syncs = stat("wal_syncs") - syncs_before;
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const uint64_t intervals = static_cast<uint64_t>(elapsed / std::chrono::milliseconds(200));
  EXPECT_GT(stat("flushes"), 5u);  // background events happened
  EXPECT_LE(syncs, intervals + 2) << syncs << " syncs in " << intervals << " intervals";
}

TEST_P(DBTest, MemtableSwitchesAndBackgroundFlushesKeepEverything) {
  // 256 KiB write buffers: this writes ~12 memtables' worth.
  std::map<std::string, std::string> model;
  for (int i = 0; i < 20000; ++i) {
    std::string k = "k" + std::to_string((i * 7919) % 5000);
    std::string v = std::to_string(i) + std::string(100, 'p');
    Put(k, v);
    model[k] = v;
  }
  for (auto& [k, v] : model) {
    ASSERT_EQ(Get(k), v);
  }
  Reopen();
  std::string expect;
  for (auto& [k, v] : model) expect += k + "=" + v + ",";
  EXPECT_EQ(Scan(db_->DefaultColumnFamily()), expect);
}

TEST_P(DBTest, RangeEstimatesGrowWithTheRange) {
  for (int i = 0; i < 10000; ++i) {
    char k[16];
    std::snprintf(k, sizeof(k), "k%06d", i);
    Put(k, std::string(100, 'v'));
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  auto small = db_->EstimateRange(db_->DefaultColumnFamily(), Range{"k000000", "k001000"});
  auto large = db_->EstimateRange(db_->DefaultColumnFamily(), Range{"k000000", "k009000"});
  auto none = db_->EstimateRange(db_->DefaultColumnFamily(), Range{"z", ""});
  EXPECT_GT(small.keys, 0u);
  EXPECT_GT(large.bytes, small.bytes);
  EXPECT_GT(large.keys, small.keys);
  EXPECT_EQ(none.keys, 0u);
}

// The optimizer picks index ranges by these estimates, so they must follow the range, not
// the size of the memtable or of the file it falls in: each within 2x of the truth, in the
// memtable and after a flush, with another CF's keys interleaved in the same key space
// (in unified mode they share the memtable).
TEST_P(DBTest, RangeEstimatesStayNearTheTrueCount) {
  // Room for everything in one memtable; the default CF keeps the write buffer it was
  // created with, so start a new database.
  db_.reset();
  std::filesystem::remove_all(dir_);
  options_.unified_memtable_write_buffer_size = 256 << 20;
  options_.default_cf_options.write_buffer_size = 256 << 20;
  Reopen();
  ColumnFamilyHandle* other;
  ASSERT_TRUE(db_->CreateColumnFamily(options_.default_cf_options, "other", &other).ok());
  auto key = [](int i, const char* suffix) {
    char k[24];
    std::snprintf(k, sizeof(k), "k%06d%s", i, suffix);
    return std::string(k);
  };
  constexpr int kKeys = 100000;
  for (int i = 0; i < kKeys; ++i) {
    Put(key(i, ""), std::string(100, 'v'));
    // Twice as many keys in the other CF, none of them in the default CF.
    ASSERT_TRUE(db_->Put(WriteOptions(), other, key(i, "a"), "o").ok());
    ASSERT_TRUE(db_->Put(WriteOptions(), other, key(i, "b"), "o").ok());
  }
  struct Case {
    std::string start, limit;
    uint64_t truth;
  };
  const std::vector<Case> cases = {
      {key(20000, ""), key(25000, ""), 5000},
      {key(61234, ""), key(61284, ""), 50},
      {key(95000, ""), "", 5000},
      {"", key(5000, ""), 5000},
      {key(40000, ""), key(40050, "a"), 51},
      {"", "", kKeys},
  };
  auto check = [&](const char* when) {
    for (const auto& c : cases) {
      RangeEstimate e = db_->EstimateRange(db_->DefaultColumnFamily(), Range{c.start, c.limit});
      EXPECT_GE(e.keys, c.truth / 2) << when << " [" << c.start << ", " << c.limit << ")";
      EXPECT_LE(e.keys, c.truth * 2) << when << " [" << c.start << ", " << c.limit << ")";
    }
    // Asked together (three times over: more ranges than the memtable estimates at once),
    // each range gets the answer it gets alone.
    std::vector<Range> ranges;
    for (int round = 0; round < 3; ++round) {
      for (const auto& c : cases) ranges.push_back(Range{c.start, c.limit});
    }
    std::vector<RangeEstimate> together(ranges.size());
    db_->EstimateRanges(db_->DefaultColumnFamily(), ranges.data(), ranges.size(), together.data());
    for (size_t i = 0; i < ranges.size(); ++i) {
      const RangeEstimate alone = db_->EstimateRange(db_->DefaultColumnFamily(), ranges[i]);
      EXPECT_EQ(together[i].keys, alone.keys) << when << " range " << i;
      EXPECT_EQ(together[i].bytes, alone.bytes) << when << " range " << i;
    }
  };
  std::string files;
  ASSERT_TRUE(db_->GetProperty(db_->DefaultColumnFamily(), "tidesdb.num-files-at-level0", &files));
  ASSERT_EQ(files, "0");  // all 100,000 still in the memtable
  check("memtable");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  check("flushed");
}

TEST_P(DBTest, StatisticsAreReported) {
  for (int i = 0; i < 100; ++i) {
    Put("k" + std::to_string(i), "v");
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  Put("mem", "v");
  EXPECT_EQ(Get("k5"), "v");   // from L0
  EXPECT_EQ(Get("mem"), "v");  // from the memtable
  EXPECT_EQ(Get("nope"), "NOT_FOUND");
  std::string v;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.read-sources", &v));
  EXPECT_NE(v.find("memtable=1 "), std::string::npos) << v;
  EXPECT_NE(v.find("L0=1 "), std::string::npos) << v;
  EXPECT_NE(v.find("not_found=1"), std::string::npos) << v;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.latency", &v));
  EXPECT_NE(v.find("get_micros: count=3 "), std::string::npos) << v;
  EXPECT_NE(v.find("write_micros: count=101 "), std::string::npos) << v;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.block-cache", &v));
  EXPECT_NE(v.find("misses="), std::string::npos) << v;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &v));
  EXPECT_NE(v.find("flushes=1 "), std::string::npos) << v;
  EXPECT_FALSE(db_->GetProperty(nullptr, "tidesdb.no-such-property", &v));
}

TEST_P(DBTest, MissingCurrentIsCorruptionNotANewDatabase) {
  Put("k", "v");
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  db_.reset();
  std::filesystem::remove(dir_ + "/CURRENT");
  std::unique_ptr<DB> db;
  Status s = DB::Open(options_, dir_, &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  bool klog = false;
  for (auto& e : std::filesystem::directory_iterator(dir_)) {
    klog |= e.path().extension() == ".klog";
  }
  EXPECT_TRUE(klog);  // nothing was deleted
}

TEST_P(DBTest, SecondOpenOfTheSameDirectoryIsRefused) {
  std::unique_ptr<DB> other;
  Status s = DB::Open(options_, dir_, &other);
  EXPECT_FALSE(s.ok());
}

// Per-CF memtables: a CF written once keeps its memtable, and would keep every WAL after
// its write. Past max_total_wal_size its memtable is flushed and the old WALs go; its row
// stays.
TEST_P(DBTest, IdleColumnFamilyDoesNotPinEveryWal) {
  options_.max_total_wal_size = 512 << 10;
  options_.default_cf_options.write_buffer_size = 64 << 10;
  Reopen();
  ColumnFamilyHandle* idle = nullptr;
  ColumnFamilyOptions small;
  small.write_buffer_size = 64 << 10;
  ASSERT_TRUE(db_->CreateColumnFamily(small, "idle", &idle).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), idle, "once", "kept").ok());
  auto wal_files = [&] {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      n += entry.path().extension() == ".wal" ? 1 : 0;
    return n;
  };
  const std::string value(1000, 'v');
  size_t most_wals = 0;
  for (int i = 0; i < 8000; ++i) {  // 8 MB through 64 KiB memtables: a WAL per switch
    Put("busy" + std::to_string(i), value);
    if (i % 500 == 0) {
      ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
      most_wals = std::max(most_wals, wal_files());
    }
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  std::string stats;
  ASSERT_TRUE(db_->GetProperty(nullptr, "tidesdb.stats", &stats));
  if (GetParam()) {
    // Unified: the one memtable pins only what it holds.
    EXPECT_NE(stats.find(" wal_size_flushes=0"), std::string::npos) << stats;
  } else {
    EXPECT_EQ(stats.find(" wal_size_flushes=0"), std::string::npos) << stats;
  }
  // Measured: at most 3 WAL files with the cap, 34 without it.
  EXPECT_LE(most_wals, 12u);
  EXPECT_EQ("kept", Get(idle, "once"));
  Reopen();
  ColumnFamilyHandle* again = db_->GetColumnFamily("idle");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ("kept", Get(again, "once"));
  EXPECT_EQ(value, Get("busy7999"));
}

INSTANTIATE_TEST_SUITE_P(MemtableModes, DBTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Unified" : "PerColumnFamily"; });

}  // namespace
}  // namespace tidesdb
