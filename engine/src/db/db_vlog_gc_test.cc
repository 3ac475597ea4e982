// Value-log garbage collection through the public API: dead value logs are deleted, logs
// whose garbage ratio reaches value_log_gc_threshold have their live values relocated, and
// nothing a reader (or a snapshot) can still see is lost, across reopen too.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <vector>

#include "testutil/test_util.h"
#include "tidesdb/db.h"

namespace tidesdb {
namespace {

struct VlogTotals {
  uint64_t files = 0, size = 0, live = 0;
};

class ValueLogGcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.sync_mode = SyncMode::kNone;
    options_.unified_memtable_write_buffer_size = 256 << 10;
    options_.log_level = LogLevel::kWarn;
    ColumnFamilyOptions& o = options_.default_cf_options;
    o.write_buffer_size = 256 << 10;
    o.l1_file_count_trigger = 3;
    o.target_file_size = 64 << 10;
    o.level_size_base = 256 << 10;
    o.level_size_multiplier = 4;
    o.max_levels = 4;
    o.compression = CompressionType::kNone;
    o.value_threshold = 1024;
    o.value_log_gc_threshold = 0.5;
  }
  void TearDown() override { db_.reset(); }
  void Open() {
    db_.reset();
    Status s = DB::Open(options_, dir_.path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ColumnFamilyHandle* cf() { return db_->DefaultColumnFamily(); }
  static std::string Key(int i) {
    char k[16];
    std::snprintf(k, sizeof(k), "key%06d", i);
    return k;
  }
  // Distinct per (key, version) and incompressible enough not to matter with kNone.
  static std::string Value(int i, int version, size_t size = 2000) {
    std::string v = Key(i) + "/" + std::to_string(version) + "/";
    std::mt19937 rng(static_cast<uint32_t>(i * 131 + version));
    while (v.size() < size) v.push_back(static_cast<char>('a' + rng() % 26));
    return v;
  }
  void WriteVersion(int keys, int version, std::map<std::string, std::string>* model) {
    for (int i = 0; i < keys; ++i) {
      std::string v = Value(i, version);
      ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), v).ok());
      (*model)[Key(i)] = v;
    }
  }
  // Writes `version` of every step-th key from `first` (below `keys`).
  void Overwrite(int first, int keys, int step, int version, std::map<std::string, std::string>* model) {
    for (int i = first; i < keys; i += step) {
      std::string v = Value(i, version);
      ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), v).ok());
      (*model)[Key(i)] = v;
    }
  }
  void ExpectModel(const std::map<std::string, std::string>& model, const ReadOptions& ro = ReadOptions()) {
    for (const auto& [k, v] : model) {
      std::string got;
      Status s = db_->Get(ro, cf(), k, &got);
      ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
      ASSERT_EQ(got, v) << k;
    }
    size_t n = 0;
    auto it = db_->NewIterator(ro, cf());
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
      auto m = model.find(std::string(it->key()));
      ASSERT_NE(m, model.end()) << it->key();
      ASSERT_EQ(it->value(), m->second);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(n, model.size());
  }
  VlogTotals Totals() {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(cf(), "tidesdb.value-logs", &v));
    VlogTotals t;
    size_t pos = v.rfind("total ");
    EXPECT_NE(pos, std::string::npos) << v;
    if (pos != std::string::npos) {
      std::sscanf(v.c_str() + pos, "total files=%" SCNu64 " size=%" SCNu64 " live=%" SCNu64, &t.files,
                  &t.size, &t.live);
    }
    return t;
  }
  // The garbage ratio of every value log, from tidesdb.value-logs.
  std::vector<double> GarbageRatios() {
    std::string detail;
    EXPECT_TRUE(db_->GetProperty(cf(), "tidesdb.value-logs", &detail));
    std::vector<double> ratios;
    for (size_t pos = detail.find("garbage="); pos != std::string::npos;
         pos = detail.find("garbage=", pos + 1))
      ratios.push_back(std::stod(detail.substr(pos + 8)));
    return ratios;
  }
  uint64_t Stat(const std::string& name) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(cf(), "tidesdb.stats", &v));
    size_t pos = v.find(" " + name + "=");
    EXPECT_NE(pos, std::string::npos) << name << " in " << v;
    return pos == std::string::npos ? 0 : std::stoull(v.substr(pos + name.size() + 2));
  }
  uint64_t VlogBytesOnDisk() {
    uint64_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir_.path())) {
      if (e.path().extension() == ".vlog") n += e.file_size();
    }
    return n;
  }

  test::ScratchDir dir_{"vlog_gc"};
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(ValueLogGcTest, OverwrittenValuesAreReclaimed) {
  options_.default_cf_options.l1_file_count_trigger = 100;  // all six versions stay until compacted
  Open();
  std::map<std::string, std::string> model;
  const int keys = 400;  // ~800 KB of live values; each version spans several flushes
  for (int version = 0; version < 6; ++version) WriteVersion(keys, version, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  const uint64_t before = VlogBytesOnDisk();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const VlogTotals t = Totals();
  const uint64_t live_values = keys * 2000;
  // Only the newest version is referenced, and no value log is left at or above the 50%
  // garbage threshold, so the logs hold at most about twice the live bytes.
  EXPECT_GE(t.live, live_values);
  EXPECT_LT(t.live, live_values + keys * 64) << "live bytes are the records of one version";
  EXPECT_LE(t.size, 2 * t.live + t.files * 64) << "files=" << t.files << " size=" << t.size;
  EXPECT_EQ(VlogBytesOnDisk(), t.size) << "dead value logs are removed from disk";
  EXPECT_LT(t.size * 4, before) << before << " -> " << t.size;
  EXPECT_GT(Stat("vlog_files_deleted"), 0u);
  ExpectModel(model);
  Open();
  EXPECT_EQ(Totals().size, t.size);
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, LiveValuesAreRelocatedOutOfMostlyDeadLogs) {
  // Every flush holds keys 0..N; later only odd keys are overwritten, so each old log keeps
  // half its values alive: it can only be reclaimed by moving those values.
  options_.default_cf_options.l1_file_count_trigger = 100;  // compaction only by hand
  Open();
  std::map<std::string, std::string> model;
  const int keys = 300;
  WriteVersion(keys, 0, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  for (int version = 1; version <= 3; ++version) {
    Overwrite(1, keys, 2, version, &model);
    ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(Stat("vlog_relocated_bytes"), 0u);
  const VlogTotals t = Totals();
  EXPECT_LE(t.size, 2 * t.live + t.files * 64) << "files=" << t.files << " size=" << t.size;
  // No log is left at or above the threshold.
  for (double ratio : GarbageRatios()) EXPECT_LT(ratio, 0.5);
  ExpectModel(model);
  Open();
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, ManualCompactionCollectsGarbageBelowTheThreshold) {
  // Every fifth key overwritten: each old log is 20 % garbage, below the 50 % threshold, so
  // background GC keeps it; CompactRange (OPTIMIZE TABLE) must not.
  options_.default_cf_options.l1_file_count_trigger = 100;  // compaction only by hand
  Open();
  std::map<std::string, std::string> model;
  const int keys = 300;
  WriteVersion(keys, 0, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  Overwrite(0, keys, 5, 1, &model);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(Stat("vlog_relocated_bytes"), 0u);
  const VlogTotals t = Totals();
  EXPECT_LE(t.size, t.live + t.files * 64) << "only live records and the logs' headers are left";
  for (double ratio : GarbageRatios()) EXPECT_EQ(ratio, 0.0);
  EXPECT_EQ(VlogBytesOnDisk(), t.size);
  ExpectModel(model);
  Open();
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, ManualCompactionOfValueLogsWithoutGarbageRelocatesNothing) {
  options_.default_cf_options.l1_file_count_trigger = 100;
  Open();
  std::map<std::string, std::string> model;
  WriteVersion(300, 0, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  const VlogTotals before = Totals();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Stat("vlog_relocated_bytes"), 0u);
  EXPECT_EQ(Totals().size, before.size);
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, RelocationCutsItsValueLogsAtTheWriteBufferSize) {
  // One big L1 file: whichever compaction collects, one sub-range moves every live value.
  options_.default_cf_options.l1_file_count_trigger = 100;
  options_.default_cf_options.target_file_size = 64 << 20;
  options_.default_cf_options.value_log_gc_threshold = 0.3;  // every half-dead log qualifies
  Open();
  std::map<std::string, std::string> model;
  const int keys = 400;
  WriteVersion(keys, 0, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  for (int i = 1; i < keys; i += 2) {
    std::string v = Value(i, 1);
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), v).ok());
    model[Key(i)] = v;
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  // About 200 values of 2000 bytes (400 KB) were moved: more than one 256 KiB log's worth.
  EXPECT_GT(Stat("vlog_relocated_bytes"), 256u << 10);
  std::string detail;
  ASSERT_TRUE(db_->GetProperty(cf(), "tidesdb.value-logs", &detail));
  for (size_t pos = detail.find(" size="); pos != std::string::npos; pos = detail.find(" size=", pos + 1)) {
    if (detail.compare(detail.rfind('\n', pos) + 1, 5, "total") == 0) continue;
    EXPECT_LE(std::stoull(detail.substr(pos + 6)), (256u << 10) + 4096) << detail;
  }
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, SnapshotsAndOpenIteratorsKeepTheirValues) {
  options_.default_cf_options.l1_file_count_trigger = 100;
  Open();
  std::map<std::string, std::string> old_model, model;
  const int keys = 200;
  WriteVersion(keys, 0, &old_model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  const Snapshot* snap = db_->GetSnapshot();
  ReadOptions at;
  at.snapshot = snap;
  // An iterator on the old state, positioned before any GC.
  auto old_it = db_->NewIterator(ReadOptions(), cf());
  old_it->SeekToFirst();
  ASSERT_TRUE(old_it->Valid());
  model = old_model;
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < keys; i += 2) {
      std::string v = Value(i, round);
      ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), v).ok());
      model[Key(i)] = v;
    }
    ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ExpectModel(model);
  ExpectModel(old_model, at);  // the snapshot's versions were kept (and may have moved)
  size_t n = 0;
  for (; old_it->Valid(); old_it->Next(), ++n)
    ASSERT_EQ(old_it->value(), old_model[std::string(old_it->key())]);
  ASSERT_TRUE(old_it->status().ok());
  EXPECT_EQ(n, old_model.size());
  old_it.reset();
  const uint64_t with_snapshot = Totals().size;
  db_->ReleaseSnapshot(snap);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_LT(Totals().size, with_snapshot) << "released versions are reclaimed";
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, RelocatedValuesKeepTheirExpiry) {
  options_.default_cf_options.l1_file_count_trigger = 100;
  Open();
  const uint64_t far = 4000000000ull;  // year 2096
  WriteBatch b;
  for (int i = 0; i < 100; ++i) b.PutWithExpiry(cf(), Key(i), Value(i, 0), i % 2 == 0 ? far : 1);
  ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  // Half the values are long expired: compaction drops them, the log is half garbage and its
  // other half moves.
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_GT(Stat("vlog_relocated_bytes"), 0u);
  Open();
  for (int i = 0; i < 100; ++i) {
    std::string v;
    Status s = db_->Get(ReadOptions(), cf(), Key(i), &v);
    if (i % 2 == 0) {
      ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
      EXPECT_EQ(v, Value(i, 0));
    } else {
      EXPECT_TRUE(s.IsNotFound()) << i << ": " << s.ToString();
    }
  }
}

TEST_F(ValueLogGcTest, ThresholdOutsideTheRangeTurnsRelocationOff) {
  options_.default_cf_options.value_log_gc_threshold = 0;
  options_.default_cf_options.l1_file_count_trigger = 100;
  Open();
  std::map<std::string, std::string> model;
  WriteVersion(200, 0, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  for (int i = 0; i < 200; i += 2) ASSERT_TRUE(db_->Delete(WriteOptions(), cf(), Key(i)).ok());
  for (int i = 0; i < 200; i += 2) model.erase(Key(i));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Stat("vlog_relocated_bytes"), 0u);
  ExpectModel(model);
  // A log whose every value is dead is still deleted.
  for (int i = 1; i < 200; i += 2) ASSERT_TRUE(db_->Delete(WriteOptions(), cf(), Key(i)).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Totals().files, 0u);
  EXPECT_EQ(VlogBytesOnDisk(), 0u);
}

TEST_F(ValueLogGcTest, BackgroundCompactionBoundsSpaceUnderOverwrites) {
  Open();
  std::map<std::string, std::string> model;
  const int keys = 300;
  for (int version = 0; version < 10; ++version) WriteVersion(keys, version, &model);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  // Ten versions were written; without GC every one would still be on disk.
  const VlogTotals t = Totals();
  EXPECT_LT(t.size, uint64_t{keys} * 2000 * 5) << "files=" << t.files << " live=" << t.live;
  EXPECT_GT(Stat("vlog_files_deleted"), 0u);
  ExpectModel(model);
}

TEST_F(ValueLogGcTest, DamagedValueMetByRelocationStaysReportedAndDoesNotStopCompaction) {
  options_.default_cf_options.l1_file_count_trigger = 100;
  Open();
  std::map<std::string, std::string> model;
  WriteVersion(100, 0, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  for (int i = 0; i < 100; i += 2) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(i), "small").ok());
    model[Key(i)] = "small";
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  db_.reset();
  // Damage the last record of the (only) value log: key99's value, still live.
  std::string vlog;
  for (auto& e : std::filesystem::directory_iterator(dir_.path())) {
    if (e.path().extension() == ".vlog") vlog = e.path();
  }
  ASSERT_FALSE(vlog.empty());
  {
    std::fstream f(vlog, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-100, std::ios::end);
    f.put('#');
  }
  Open();
  // The log is half garbage, so compaction relocates its values; the damaged one stays.
  Status s = db_->CompactRange(nullptr, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Stat("vlog_relocation_errors"), 1u);
  EXPECT_GT(Stat("vlog_relocated_bytes"), 0u);
  std::string detail;
  ASSERT_TRUE(db_->GetProperty(cf(), "tidesdb.value-logs", &detail));
  EXPECT_NE(detail.find("damaged (not collected)"), std::string::npos) << detail;
  for (const auto& [k, v] : model) {
    std::string got;
    Status g = db_->Get(ReadOptions(), cf(), k, &got);
    if (k == Key(99)) {
      EXPECT_TRUE(g.IsCorruption()) << g.ToString();
      EXPECT_NE(g.ToString().find(".vlog"), std::string::npos) << g.ToString();
    } else {
      ASSERT_TRUE(g.ok()) << k << ": " << g.ToString();
      EXPECT_EQ(got, v);
    }
  }
  // Background compaction does not spin on the damaged log.
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  // Overwriting the damaged key frees its record; the log then dies whole.
  ASSERT_TRUE(db_->Put(WriteOptions(), cf(), Key(99), "fixed").ok());
  model[Key(99)] = "fixed";
  s = db_->CompactRange(nullptr, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectModel(model);
  EXPECT_FALSE(std::filesystem::exists(vlog));
}

}  // namespace
}  // namespace tidesdb
