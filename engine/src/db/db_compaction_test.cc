// Compaction behaviour through the public API: space reclamation, tombstones, snapshots,
// TTL, manual compaction, back-pressure and trivial moves.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "db/db_impl.h"
#include "tidesdb/db.h"

namespace tidesdb {
namespace {

// Holds the first compaction of a column family (from one level, or any) as it starts,
// until Release or this object's end, which frees it so that the DB can close after an
// assertion returns early. The state is shared with the DB's hook, which outlives a test.
class CompactionHold {
 public:
  explicit CompactionHold(DB* db) : state_(std::make_shared<State>()) {
    static_cast<DBImpl*>(db)->SetCompactionStartForTest([s = state_](uint32_t cf, int level, int) {
      std::unique_lock<std::mutex> l(s->mu);
      if (!s->armed || cf != s->cf_id || (s->level >= 0 && level != s->level) || s->held) return;
      s->held = true;
      s->cv.notify_all();
      s->cv.wait(l, [&] { return s->release; });
    });
  }
  ~CompactionHold() { Release(); }
  // From now on, hold the next compaction of cf_id from `level` (-1: any level).
  void Arm(uint32_t cf_id, int level) {
    std::lock_guard<std::mutex> l(state_->mu);
    state_->cf_id = cf_id;
    state_->level = level;
    state_->armed = true;
  }
  bool WaitUntilHeld() {
    std::unique_lock<std::mutex> l(state_->mu);
    return state_->cv.wait_for(l, std::chrono::seconds(60), [&] { return state_->held; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(state_->mu);
    state_->release = true;
    state_->cv.notify_all();
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool armed = false, held = false, release = false;
    uint32_t cf_id = 0;
    int level = -1;
  };
  std::shared_ptr<State> state_;
};

class CompactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/tidesdb_compaction_test_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    options_.sync_mode = SyncMode::kNone;
    options_.unified_memtable_write_buffer_size = 128 << 10;
    ColumnFamilyOptions& o = options_.default_cf_options;
    o.write_buffer_size = 128 << 10;
    o.l1_file_count_trigger = 3;
    o.target_file_size = 64 << 10;
    o.level_size_base = 256 << 10;
    o.level_size_multiplier = 4;
    o.max_levels = 4;
    o.compression = CompressionType::kNone;
    Open();
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    db_.reset();
    ASSERT_TRUE(DB::Open(options_, dir_, &db_).ok());
  }
  ColumnFamilyHandle* cf() { return db_->DefaultColumnFamily(); }
  uint64_t DiskBytes() {
    uint64_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.path().extension() == ".klog" || e.path().extension() == ".vlog") n += e.file_size();
    }
    return n;
  }
  int FilesAt(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(cf(), "tidesdb.num-files-at-level" + std::to_string(level), &v));
    return std::stoi(v);
  }
  std::string Key(int i) {
    char k[16];
    std::snprintf(k, sizeof(k), "key%08d", i);
    return k;
  }
  // A CF with 5-byte prefix filters, for keys as an index holds them: a value prefix (the
  // indexed column) and a row suffix (key()).
  ColumnFamilyHandle* PrefixedColumnFamily() {
    ColumnFamilyOptions options = options_.default_cf_options;
    options.filter_prefix_length = 5;
    ColumnFamilyHandle* h = nullptr;
    EXPECT_TRUE(db_->CreateColumnFamily(options, "prefixed", &h).ok());
    return h;
  }
  static std::string key(int value, int row) {
    char k[16];
    std::snprintf(k, sizeof(k), "v%04d%03d", value, row);
    return k;
  }
  // The end of a value's keys: its prefix's successor (as the plugin bounds an equality).
  static std::string end(int value) {
    std::string p = key(value, 0).substr(0, 5);
    p.back()++;
    return p;
  }
  // A counter of GetProperty("tidesdb.stats").
  uint64_t Stat(const std::string& name) {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty(cf(), "tidesdb.stats", &stats));
    size_t at = stats.find(" " + name + "=");
    EXPECT_NE(at, std::string::npos) << name;
    return at == std::string::npos ? 0 : std::stoull(stats.substr(at + name.size() + 2));
  }
  // Point reads and a full scan (at `snap`, or the present) see exactly `model`.
  void ExpectContents(const std::map<std::string, std::string>& model, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    for (const auto& [k, v] : model) {
      std::string got;
      ASSERT_TRUE(db_->Get(ro, cf(), k, &got).ok()) << k;
      ASSERT_EQ(got, v) << k;
    }
    auto it = db_->NewIterator(ro, cf());
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end()) << "extra key " << std::string(it->key());
      ASSERT_EQ(std::string(it->key()), m->first);
      ASSERT_EQ(it->value(), m->second);
    }
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(m, model.end()) << "missing key " << m->first;
  }
  int CountKeys() {
    int n = 0;
    auto it = db_->NewIterator(ReadOptions(), cf());
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    EXPECT_TRUE(it->status().ok());
    return n;
  }

  std::string dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(CompactionTest, BackgroundCompactionKeepsL0SmallAndDataIntact) {
  std::map<std::string, std::string> model;
  std::mt19937 rng(7);
  for (int i = 0; i < 30000; ++i) {
    std::string k = Key(static_cast<int>(rng() % 5000));
    std::string v = std::to_string(i) + std::string(60, 'v');
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), k, v).ok());
    model[k] = v;
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_LT(FilesAt(0), 3);
  int deeper = FilesAt(1) + FilesAt(2) + FilesAt(3);
  EXPECT_GT(deeper, 0);
  std::string stats;
  ASSERT_TRUE(db_->GetProperty(cf(), "tidesdb.stats", &stats));
  EXPECT_EQ(stats.find("compactions=0 "), std::string::npos) << stats;
  for (auto& [k, v] : model) {
    std::string got;
    ASSERT_TRUE(db_->Get(ReadOptions(), cf(), k, &got).ok()) << k;
    ASSERT_EQ(got, v);
  }
  Open();
  EXPECT_EQ(CountKeys(), static_cast<int>(model.size()));
}

TEST_F(CompactionTest, L0SizeRatioKeepsASmallColumnFamilyInOneRunBelowItsMemtables) {
  // Two alike CFs whose file count would never trigger; one merges its L0 by size ratio.
  ColumnFamilyOptions o = options_.default_cf_options;
  o.l1_file_count_trigger = 100;
  o.l0_compaction_size_ratio = 10;
  ColumnFamilyHandle* merged = nullptr;
  ColumnFamilyHandle* piled = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(o, "merged", &merged).ok());
  o.l0_compaction_size_ratio = 0;
  ASSERT_TRUE(db_->CreateColumnFamily(o, "piled", &piled).ok());
  auto files_at = [&](ColumnFamilyHandle* h, int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(h, "tidesdb.num-files-at-level" + std::to_string(level), &v));
    return std::stoi(v);
  };
  std::map<std::string, std::string> model;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 300; ++i) {
      const std::string k = Key((i * 7 + round * 3) % 500);
      const std::string v = std::to_string(round) + std::string(40, 'v');
      ASSERT_TRUE(db_->Put(WriteOptions(), merged, k, v).ok());
      ASSERT_TRUE(db_->Put(WriteOptions(), piled, k, v).ok());
      model[k] = v;
    }
    ASSERT_TRUE(db_->Flush(FlushOptions(), merged).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), piled).ok());
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
    // Each flush is at least a tenth of what the merged CF holds: down at once.
    EXPECT_EQ(files_at(merged, 0), 0) << "round " << round;
    EXPECT_GE(files_at(merged, 1), 1) << "round " << round;
    EXPECT_EQ(files_at(piled, 0), round + 1) << "round " << round;
  }
  for (ColumnFamilyHandle* h : {merged, piled}) {
    auto it = db_->NewIterator(ReadOptions(), h);
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end());
      ASSERT_EQ(std::string(it->key()), m->first);
      ASSERT_EQ(it->value(), m->second);
    }
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(m, model.end());
  }
  // The ratio is one of the CF's options (persisted with them: version_edit_test).
  std::string options;
  ASSERT_TRUE(db_->GetProperty(merged, "tidesdb.options", &options));
  EXPECT_NE(options.find("l0_compaction_size_ratio=10"), std::string::npos) << options;
}

TEST_F(CompactionTest, OverwritesAreReclaimed) {
  // No background compaction: measure six flushed versions, then one manual compaction.
  db_.reset();
  std::filesystem::remove_all(dir_);
  options_.default_cf_options.l1_file_count_trigger = 100;
  Open();
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(
          db_->Put(WriteOptions(), cf(), Key(i), std::string(100, static_cast<char>('a' + round))).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  }
  uint64_t before = DiskBytes();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  uint64_t after = DiskBytes();
  // Six versions of every key became one.
  EXPECT_LT(after * 3, before) << before << " -> " << after;
  std::string v;
  ASSERT_TRUE(db_->Get(ReadOptions(), cf(), Key(5), &v).ok());
  EXPECT_EQ(v, std::string(100, 'f'));
}

TEST_F(CompactionTest, TombstonesAreDroppedAtTheBottom) {
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), std::string(50, 'x')).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  for (int i = 0; i < 3000; ++i) {
    if (i % 10 != 0) {
      ASSERT_TRUE(db_->Delete(WriteOptions(), cf(), Key(i)).ok());
    }
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(CountKeys(), 300);
  RangeEstimate e = db_->EstimateRange(cf(), Range{"", ""});
  // Neither the deleted values nor their tombstones remain.
  EXPECT_LT(e.keys, 1000u) << e.keys;
  EXPECT_EQ(FilesAt(0), 0);
}

TEST_F(CompactionTest, SnapshotsKeepTheVersionsTheyNeed) {
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "old").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "gone", "was-here").ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "new").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf(), "gone").ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ReadOptions at;
  at.snapshot = snap;
  std::string v;
  ASSERT_TRUE(db_->Get(at, cf(), "k", &v).ok());
  EXPECT_EQ(v, "old");
  ASSERT_TRUE(db_->Get(at, cf(), "gone", &v).ok());
  EXPECT_EQ(v, "was-here");
  ASSERT_TRUE(db_->Get(ReadOptions(), cf(), "k", &v).ok());
  EXPECT_EQ(v, "new");
  EXPECT_TRUE(db_->Get(ReadOptions(), cf(), "gone", &v).IsNotFound());
  db_->ReleaseSnapshot(snap);
  // Without the snapshot, the old version and the tombstone go.
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  RangeEstimate e = db_->EstimateRange(cf(), Range{"", ""});
  EXPECT_EQ(e.keys, 1u);
}

// Only the versions some snapshot (or the present) sees survive, also between snapshots.
TEST_F(CompactionTest, VersionsBetweenSnapshotsThatNoneSeesAreDropped) {
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "a").ok());
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "b").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "c").ok());
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "d").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "e").ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  RangeEstimate e = db_->EstimateRange(cf(), Range{"", ""});
  EXPECT_EQ(e.keys, 3u) << "a (s1), c (s2) and e (now); b and d are seen by nobody";
  ReadOptions r1, r2;
  r1.snapshot = s1;
  r2.snapshot = s2;
  std::string v;
  ASSERT_TRUE(db_->Get(r1, cf(), "k", &v).ok());
  EXPECT_EQ(v, "a");
  ASSERT_TRUE(db_->Get(r2, cf(), "k", &v).ok());
  EXPECT_EQ(v, "c");
  ASSERT_TRUE(db_->Get(ReadOptions(), cf(), "k", &v).ok());
  EXPECT_EQ(v, "e");
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
}

TEST_F(CompactionTest, ExpiredEntriesAreDropped) {
  WriteBatch b;
  for (int i = 0; i < 500; ++i) b.PutWithExpiry(cf(), Key(i), "v", 1);  // long expired
  for (int i = 500; i < 600; ++i) b.Put(cf(), Key(i), "v");
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(CountKeys(), 100);
  RangeEstimate e = db_->EstimateRange(cf(), Range{"", ""});
  EXPECT_LE(e.keys, 100u);
}

// With filter_prefix_length, EstimateRange passes over the files whose filter rules out the
// one prefix of an equality range (an index lookup), where a file spanning the range would
// otherwise count at least one entry.
TEST_F(CompactionTest, EstimateRangeSkipsFilesWhosePrefixFilterRulesTheRangeOut) {
  ColumnFamilyHandle* prefixed = PrefixedColumnFamily();
  // Two L0 files of both CFs spanning the same keys: values 4k in one, 4k + 1 in the other.
  for (int residue : {0, 1}) {
    WriteBatch b;
    for (int value = residue; value < 400; value += 4)
      for (int row = 0; row < 3; ++row) {
        b.Put(cf(), key(value, row), "x");
        b.Put(prefixed, key(value, row), "x");
      }
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  }
  ASSERT_EQ(2, FilesAt(0));
  auto estimate = [&](ColumnFamilyHandle* h, int value) {
    return db_->EstimateRange(h, Range{key(value, 0).substr(0, 5), end(value)}).keys;
  };
  int absent_ruled_out = 0;
  // Values inside both files' key spans (the last keys are 396 and 397).
  for (int value = 2; value < 396; value += 4) {
    EXPECT_GE(estimate(cf(), value), 2u) << value << ": whole-key filters: each overlapping file counts";
    absent_ruled_out += estimate(prefixed, value) == 0 ? 1 : 0;
    // A present value: its file counts it, the other file (nearly always) does not.
    EXPECT_GE(estimate(prefixed, value - 2), 1u) << value - 2;
    EXPECT_LE(estimate(prefixed, value - 2), estimate(cf(), value - 2)) << value - 2;
  }
  EXPECT_GE(absent_ruled_out, 94) << "of 99 absent values, at a 1 % false-positive rate per file";
  // A range over a few values (`k BETWEEN a AND b`) probes each one's prefix: two values
  // neither file holds (4k + 2, 4k + 3) count nothing; with one held, its file counts.
  int pairs_ruled_out = 0;
  for (int value = 2; value < 396; value += 4) {
    const std::string start = key(value, 0).substr(0, 5);
    pairs_ruled_out += db_->EstimateRange(prefixed, Range{start, end(value + 1)}).keys == 0 ? 1 : 0;
    EXPECT_GE(db_->EstimateRange(prefixed, Range{key(value - 1, 0).substr(0, 5), end(value)}).keys, 1u)
        << value;
  }
  EXPECT_GE(pairs_ruled_out, 90) << "of 99 pairs of absent values";
  // Ranges across prefixes are estimated as before.
  EXPECT_EQ(db_->EstimateRange(prefixed, Range{"", ""}).keys, db_->EstimateRange(cf(), Range{"", ""}).keys);
}

// The memtable keeps the prefixes of a filter_prefix_length CF's entries in its filter too,
// so that an equality range on a prefix it never held passes over its skip list; the
// estimates and bounded seeks of the prefixes it holds stay exact.
TEST_F(CompactionTest, EstimateRangeOfPrefixesInTheMemtableStaysExact) {
  ColumnFamilyHandle* prefixed = PrefixedColumnFamily();
  WriteBatch b;
  for (int value = 0; value < 400; value += 2)
    for (int row = 0; row < 3; ++row) b.Put(prefixed, key(value, row), "x");
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  std::string files;
  ASSERT_TRUE(db_->GetProperty(prefixed, "tidesdb.num-files-at-level0", &files));
  ASSERT_EQ("0", files) << "all in the memtable";
  for (int value = 0; value < 400; ++value) {
    const std::string start = key(value, 0).substr(0, 5);
    EXPECT_EQ(db_->EstimateRange(prefixed, Range{start, end(value)}).keys, value % 2 == 0 ? 3u : 0u) << value;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions(), prefixed);
    int found = 0;
    for (it->SeekBounded(start, end(value)); it->Valid(); it->Next()) ++found;
    EXPECT_EQ(found, value % 2 == 0 ? 3 : 0) << value;
  }
}

// SeekBounded over a CF with prefix filters: exactly the keys of the range, from every
// source (L1, L0, memtable), while SSTables whose filters rule the prefix out are passed
// over (fewer data blocks read); Next stops at the limit, and Prev after a bounded seek
// reaches the keys before it in sources the seek passed over.
TEST_F(CompactionTest, SeekBoundedPassesOverFilesWhosePrefixFilterRulesTheRangeOut) {
  ColumnFamilyHandle* prefixed = PrefixedColumnFamily();
  auto prefix = [&](int value) { return key(value, 0).substr(0, 5); };
  std::set<std::string> model;
  // Values 5k + 2 in L1, 5k and 5k + 1 in two L0 files, 5k + 3 in the memtable; 5k + 4
  // nowhere.
  for (int residue : {2, 0, 1, 3}) {
    WriteBatch b;
    for (int value = residue; value < 500; value += 5)
      for (int row = 0; row < 3; ++row) {
        b.Put(prefixed, key(value, row), "x");
        model.insert(key(value, row));
      }
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
    if (residue == 2) {
      ASSERT_TRUE(db_->CompactRange(prefixed, nullptr).ok());
    } else if (residue != 3) {
      ASSERT_TRUE(db_->Flush(FlushOptions(), prefixed).ok());
    }
  }
  std::string files;
  ASSERT_TRUE(db_->GetProperty(prefixed, "tidesdb.num-files-at-level0", &files));
  ASSERT_EQ("2", files);
  auto block_reads = [&] {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(nullptr, "tidesdb.block-cache", &v));
    auto number = [&](const std::string& name) {
      return std::stoull(v.substr(v.find(name + "=") + name.size() + 1));
    };
    return number("hits") + number("misses");
  };
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions(), prefixed);
  for (int value = 0; value < 500; ++value) {
    const std::string start = prefix(value), limit = end(value);
    std::vector<std::string> expected(model.lower_bound(start), model.lower_bound(limit));
    std::vector<std::string> got;
    for (it->SeekBounded(start, limit); it->Valid(); it->Next()) {
      got.emplace_back(it->key());
      ASSERT_LE(got.size(), 3u) << value << ": past the limit";
    }
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(expected, got) << value;
    // A range over this value and the next two (prefixes the filters probe one by one).
    if (value % 10 < 8) {
      const std::string wide_limit = end(value + 2);
      std::vector<std::string> wide_expected(model.lower_bound(start), model.lower_bound(wide_limit));
      std::vector<std::string> wide;
      for (it->SeekBounded(start, wide_limit); it->Valid(); it->Next()) {
        if (std::string(it->key()) >= wide_limit) break;  // may run on past the limit
        wide.emplace_back(it->key());
      }
      ASSERT_TRUE(it->status().ok());
      EXPECT_EQ(wide_expected, wide) << value;
    }
    // From inside the range.
    it->SeekBounded(key(value, 1), limit);
    EXPECT_EQ(expected.size() > 1, it->Valid()) << value;
    // Prev reaches the key before the range, wherever it is.
    auto before = model.lower_bound(start);
    if (!expected.empty() && before != model.begin()) {
      it->SeekBounded(start, limit);
      ASSERT_TRUE(it->Valid());
      it->Prev();
      ASSERT_TRUE(it->Valid()) << value;
      EXPECT_EQ(*std::prev(before), it->key()) << value;
      it->Next();
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(expected.front(), it->key()) << value;
    }
  }
  // Absent values: a plain seek reads a block of each SSTable, a bounded one (nearly) none.
  uint64_t reads = block_reads();
  // (A new iterator per seek: one that stays in a block reads it once for every seek.)
  for (int value = 4; value < 495; value += 5) {  // 499: nothing follows
    it = db_->NewIterator(ReadOptions(), prefixed);
    it->Seek(prefix(value));
    ASSERT_TRUE(it->Valid());
  }
  const uint64_t unbounded = block_reads() - reads;
  reads = block_reads();
  for (int value = 4; value < 495; value += 5) {
    it = db_->NewIterator(ReadOptions(), prefixed);
    it->SeekBounded(prefix(value), end(value));
    ASSERT_FALSE(it->Valid());
  }
  const uint64_t bounded = block_reads() - reads;
  EXPECT_GE(unbounded, 3u * 99) << "one block of each of the three SSTables per seek";
  EXPECT_LE(bounded * 20, unbounded) << bounded;
  // A whole-key filter CF: the same keys, with no skipping.
  WriteBatch b;
  for (const std::string& k : model) b.Put(cf(), k, "x");
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), cf()).ok());
  std::unique_ptr<Iterator> plain = db_->NewIterator(ReadOptions(), cf());
  plain->SeekBounded(prefix(7), end(7));
  ASSERT_TRUE(plain->Valid());
  EXPECT_EQ(key(7, 0), plain->key());
}

// A CF's estimated bytes count the values it keeps in value logs (a table of large values
// is nearly all value-log bytes), not only its key logs.
TEST_F(CompactionTest, EstimatedBytesIncludeValuesInValueLogs) {
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(
        db_->Put(WriteOptions(), cf(), Key(i), std::string(8192, static_cast<char>('a' + i % 26))).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  RangeEstimate all = db_->EstimateRange(cf(), Range{"", ""});
  EXPECT_GE(all.bytes, 200u * 8192 * 9 / 10) << all.bytes;
  EXPECT_LE(all.bytes, 200u * 8192 * 12 / 10) << all.bytes;
  RangeEstimate half = db_->EstimateRange(cf(), Range{"", Key(100)});
  EXPECT_GT(half.bytes, all.bytes / 4) << half.bytes;
  EXPECT_LT(half.bytes, all.bytes * 3 / 4) << half.bytes;
}

TEST_F(CompactionTest, LargeValuesAreNotRewrittenByCompaction) {
  // Values in the value log: compaction moves pointers, so value-log files keep their names.
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(
        db_->Put(WriteOptions(), cf(), Key(i), std::string(4096, static_cast<char>('a' + i % 26))).ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  std::set<std::string> vlogs_before;
  for (auto& e : std::filesystem::directory_iterator(dir_)) {
    if (e.path().extension() == ".vlog") vlogs_before.insert(e.path().filename());
  }
  ASSERT_FALSE(vlogs_before.empty());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::set<std::string> vlogs_after;
  for (auto& e : std::filesystem::directory_iterator(dir_)) {
    if (e.path().extension() == ".vlog") vlogs_after.insert(e.path().filename());
  }
  EXPECT_EQ(vlogs_before, vlogs_after);
  std::string v;
  ASSERT_TRUE(db_->Get(ReadOptions(), cf(), Key(3), &v).ok());
  EXPECT_EQ(v, std::string(4096, 'd'));
  Open();
  ASSERT_TRUE(db_->Get(ReadOptions(), cf(), Key(3), &v).ok());
  EXPECT_EQ(v, std::string(4096, 'd'));
}

TEST_F(CompactionTest, ManyColumnFamiliesCompactIndependently) {
  std::vector<ColumnFamilyHandle*> cfs;
  for (int c = 0; c < 4; ++c) {
    ColumnFamilyHandle* h;
    ASSERT_TRUE(db_->CreateColumnFamily(options_.default_cf_options, "cf" + std::to_string(c), &h).ok());
    cfs.push_back(h);
  }
  for (int i = 0; i < 8000; ++i) {
    WriteBatch b;
    for (auto* h : cfs) b.Put(h, Key(i % 3000), std::to_string(i) + std::string(40, 'x'));
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  for (auto* h : cfs) {
    int n = 0;
    auto it = db_->NewIterator(ReadOptions(), h);
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    EXPECT_EQ(n, 3000);
  }
}

// Trivial moves: a file that overlaps nothing below moves down by a manifest edit.
TEST_F(CompactionTest, SequentialKeysMoveDownWithoutBeingRewritten) {
  std::map<std::string, std::string> model, at_snapshot;
  const Snapshot* snap = nullptr;
  for (int i = 0; i < 20000; ++i) {
    std::string v = std::to_string(i) + std::string(60, 'v');
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), v).ok());
    model[Key(i)] = v;
    if (i == 9999) {
      snap = db_->GetSnapshot();
      at_snapshot = model;
    }
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(Stat("compaction_trivial_moves"), 0u);
  EXPECT_GT(Stat("compaction_bytes_moved"), 0u);
  EXPECT_EQ(Stat("compaction_bytes_written"), 0u) << "every compaction of ascending keys is a move";
  EXPECT_LT(FilesAt(0), 3);
  EXPECT_GT(FilesAt(2) + FilesAt(3), 0) << "files moved past L1";
  ExpectContents(model);
  ExpectContents(at_snapshot, snap);
  db_->ReleaseSnapshot(snap);
  // The manifest replays the moves: every moved file is still there and live.
  Open();
  ExpectContents(model);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  Open();
  ExpectContents(model);
}

TEST_F(CompactionTest, FilesOverlappingTheNextLevelAreStillRewritten) {
  std::map<std::string, std::string> model;
  for (int i = 0; i < 20000; ++i) {
    std::string v = std::to_string(i) + std::string(60, 'v');
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), v).ok());
    model[Key(i)] = v;
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_EQ(Stat("compaction_bytes_written"), 0u);
  // Overwrites and deletes all over the key range: every new file overlaps older ones.
  std::mt19937 rng(11);
  const Snapshot* snap = db_->GetSnapshot();
  std::map<std::string, std::string> at_snapshot = model;
  for (int i = 0; i < 20000; ++i) {
    std::string k = Key(static_cast<int>(rng() % 20000));
    if (i % 3 == 0) {
      ASSERT_TRUE(db_->Delete(WriteOptions(), cf(), k).ok());
      model.erase(k);
    } else {
      std::string v = "new" + std::to_string(i) + std::string(60, 'n');
      ASSERT_TRUE(db_->Put(WriteOptions(), cf(), k, v).ok());
      model[k] = v;
    }
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(Stat("compaction_bytes_written"), 0u);
  ExpectContents(model);
  ExpectContents(at_snapshot, snap);
  db_->ReleaseSnapshot(snap);
  Open();
  ExpectContents(model);
}

// A move keeps what a rewrite would have dropped (here a version kept for a snapshot since
// released); a manual compaction (OPTIMIZE TABLE in the SQL engine) rewrites and drops it.
TEST_F(CompactionTest, ManualCompactionRewritesFilesThatCouldMove) {
  db_.reset();
  std::filesystem::remove_all(dir_);
  options_.default_cf_options.write_buffer_size = 1024;  // L0 files of a few entries may move
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "old").ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), "k", "new").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  db_->ReleaseSnapshot(snap);
  for (const char* k : {"l", "m"}) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), k, "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());  // three L0 files: the trigger
  EXPECT_EQ(FilesAt(0), 0);
  EXPECT_EQ(Stat("compaction_trivial_moves"), 3u);
  EXPECT_EQ(Stat("compaction_bytes_written"), 0u);
  EXPECT_EQ(db_->EstimateRange(cf(), Range{"", ""}).keys, 4u) << "the old version of k moved along";
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_GT(Stat("compaction_bytes_written"), 0u);
  EXPECT_EQ(db_->EstimateRange(cf(), Range{"", ""}).keys, 3u);
  ExpectContents({{"k", "new"}, {"l", "v"}, {"m", "v"}});
  Open();
  ExpectContents({{"k", "new"}, {"l", "v"}, {"m", "v"}});
}

// Two compactions of one column family run at once when their files and output ranges are
// disjoint: while an L1 -> L2 compaction of keys "b..." is held (a test hook stops it as it
// starts), flushes of keys "a..." fill L0 up to where writes would slow down, and the
// L0 -> L1 compaction they trigger runs and finishes beside it. Then the held one finishes and every row is
// there. (L0 must hold no "b" file then, or its key range would span the held compaction's: the "b" rows
// settle first, and the two flushes that start the held compaction are compacted together out of L0 before it
// starts.)
TEST_F(CompactionTest, TwoCompactionsOfOneColumnFamilyRunAtOnce) {
  options_.compaction_threads = 2;
  Open();
  ColumnFamilyOptions o = options_.default_cf_options;
  o.l1_file_count_trigger = 2;
  o.l0_queue_stall_threshold = 4;  // L0 goes beside another compaction from 3 files
  o.level_size_base = 16 << 10;    // L1 is soon over its target: L1 -> L2 compactions
  CompactionHold hold(db_.get());
  ColumnFamilyHandle* t = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(o, "t", &t).ok());
  std::map<std::string, std::string> model;
  auto fill = [&](char prefix, int from, int to) {
    WriteBatch batch;
    for (int i = from; i < to; ++i) {
      std::string k = prefix + Key(i), v = std::string(100, prefix) + std::to_string(i);
      batch.Put(t, k, v);
      model[k] = v;
    }
    ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), t).ok());
  };
  for (int round = 0; round < 4; ++round) fill('b', round * 1000, (round + 1) * 1000);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  hold.Arm(t->id(), 1);
  fill('b', 0, 1000);
  fill('b', 1000, 2000);  // L0 -> L1 of both, then L1 is over its target
  ASSERT_TRUE(hold.WaitUntilHeld()) << "no L1 -> L2 compaction started";
  auto files_at = [&](int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(t, "tidesdb.num-files-at-level" + std::to_string(level), &v));
    return std::stoi(v);
  };
  fill('a', 0, 300);
  fill('a', 300, 600);
  fill('a', 600, 900);
  // The hang guard: with one compaction per CF, L0 would wait for the held one for ever.
  bool drained = false;
  for (int i = 0; i < 6000 && !drained; ++i) {
    drained = files_at(0) == 0;
    if (!drained) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(drained) << "L0 was not compacted while an L1 compaction of the CF ran";
  hold.Release();
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ReadOptions ro;
  for (const auto& [k, v] : model) {
    std::string got;
    ASSERT_TRUE(db_->Get(ro, t, k, &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
  auto it = db_->NewIterator(ro, t);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, model.size());
  it.reset();
}

// A column family dropped while its compaction runs (DROP TABLE during a compaction of the
// table): the compaction ends without an error in the log, WaitForBackgroundWork reports
// none, and the other column families go on compacting.
TEST_F(CompactionTest, DroppingAColumnFamilyDuringItsCompactionIsNotAFailure) {
  // Shared with the logger, which the DB may call until TearDown closes it.
  struct Errors {
    std::mutex mu;
    std::vector<std::string> messages;
  };
  auto errors = std::make_shared<Errors>();
  options_.logger = [errors](LogLevel level, std::string_view m) {
    std::lock_guard<std::mutex> l(errors->mu);
    if (level >= LogLevel::kError) errors->messages.emplace_back(m);
  };
  Open();
  ColumnFamilyOptions o = options_.default_cf_options;
  o.l1_file_count_trigger = 2;
  ColumnFamilyHandle* t = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(o, "t", &t).ok());
  CompactionHold hold(db_.get());
  hold.Arm(t->id(), -1);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 200; ++i)
      ASSERT_TRUE(db_->Put(WriteOptions(), t, Key(i), std::string(100, 'a' + round)).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), t).ok());
  }
  ASSERT_TRUE(hold.WaitUntilHeld()) << "no compaction of t started";
  ASSERT_TRUE(db_->DropColumnFamily(t).ok());
  hold.Release();
  EXPECT_TRUE(db_->WaitForBackgroundWork().ok());
  // The default column family still compacts (no back-off after the aborted one).
  for (int round = 0; round < 4; ++round) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(round), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), cf()).ok());
  }
  EXPECT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_LT(FilesAt(0), options_.default_cf_options.l1_file_count_trigger);
  std::lock_guard<std::mutex> l(errors->mu);
  EXPECT_TRUE(errors->messages.empty()) << errors->messages.front();
}

}  // namespace
}  // namespace tidesdb
