// Corruption: damaged bytes in the WAL, SSTables, value logs, the manifest and CURRENT give
// clear errors (Corruption naming file and offset) or are repaired where the design allows
// it (a torn WAL tail); never a crash, a wrong value, or a database that opens with data
// silently missing.
//
// One database is built per suite: a default and a second CF, several flushed SSTables
// with value logs, and a WAL tail of single-key batches. Every test damages its own copy.
// Byte positions and files are a seeded sample; rerun with TIDESDB_CORRUPTION_SEED=<seed>;
// TIDESDB_CORRUPTION_FILES=<n> damages n SSTables and n value logs (default 4).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "testutil/test_util.h"
#include "tidesdb/db.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"

namespace tidesdb {
namespace {

struct RecordSpan {
  uint64_t offset = 0;  // of the record header
  uint64_t size = 0;    // header + payload
};

// The records of a WAL or manifest file.
std::vector<RecordSpan> ListRecords(const std::string& path, LogKind kind) {
  std::vector<RecordSpan> out;
  std::unique_ptr<LogReader> reader;
  EXPECT_TRUE(LogReader::Open(Env::Default(), path, &reader).ok());
  if (!reader) return out;
  uint64_t number;
  EXPECT_TRUE(reader->ReadHeader(kind, &number).ok());
  while (true) {
    uint8_t type;
    std::string payload;
    bool eof = false;
    Status s = reader->ReadRecord(&type, &payload, &eof);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok() || eof) break;
    out.push_back({reader->last_record_offset(), kRecordHeaderSize + payload.size()});
  }
  return out;
}

std::string ValueFor(const std::string& key) {
  std::mt19937_64 rng(std::hash<std::string>()(key));
  const size_t len = rng() % 5 == 0 ? 1100 + rng() % 900 : 20 + rng() % 200;  // some in value logs
  std::string v;
  while (v.size() < len) v += static_cast<char>('a' + rng() % 26);
  return v;
}

using Model = std::map<std::string, std::string>;

class CorruptionTest : public ::testing::Test {
 protected:
  static Options MakeOptions() {
    Options o;
    o.sync_mode = SyncMode::kNone;
    o.unified_memtable_write_buffer_size = 64 << 10;
    o.default_cf_options.block_size = 2 << 10;
    // No compaction: the files damaged are the files read.
    o.default_cf_options.l1_file_count_trigger = 1000;
    o.default_cf_options.l0_queue_stall_threshold = 1000;
    o.log_level = LogLevel::kError;
    return o;
  }

  static void SetUpTestSuite() {
    seed_ = test::SeedFromEnv("TIDESDB_CORRUPTION_SEED");
    pristine_ = std::make_unique<test::ScratchDir>("corruption_pristine");
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(MakeOptions(), pristine_->path(), &db).ok());
    ColumnFamilyHandle* b = nullptr;
    ASSERT_TRUE(db->CreateColumnFamily(MakeOptions().default_cf_options, "b", &b).ok());
    models_ = {{}, {}};
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 150; ++i) {
        char key[32];
        std::snprintf(key, sizeof(key), "r%d-key%04d", round, i);
        WriteBatch batch;
        batch.Put(db->DefaultColumnFamily(), key, ValueFor(key));
        models_[0][key] = ValueFor(key);
        if (i % 3 == 0) {
          batch.Put(b, key, ValueFor(std::string(key) + "b"));
          models_[1][key] = ValueFor(std::string(key) + "b");
        }
        ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
      }
      ASSERT_TRUE(db->Flush(FlushOptions(), nullptr).ok());
    }
    // The WAL tail: one key per batch, so each WAL record is one key.
    tail_keys_.clear();
    for (int i = 0; i < 40; ++i) {
      char key[32];
      std::snprintf(key, sizeof(key), "tail-key%04d", i);
      ASSERT_TRUE(db->Put(WriteOptions(), db->DefaultColumnFamily(), key, ValueFor(key)).ok());
      models_[0][key] = ValueFor(key);
      tail_keys_.push_back(key);
    }
    db.reset();
    ASSERT_EQ(test::FilesWithSuffix(pristine_->path(), ".wal").size(), 1u);
    ASSERT_GE(test::FilesWithSuffix(pristine_->path(), ".klog").size(), 3u);
    ASSERT_GE(test::FilesWithSuffix(pristine_->path(), ".vlog").size(), 3u);
    std::printf("built: %zu key logs, %zu value logs, a WAL of %zu records\n",
                test::FilesWithSuffix(pristine_->path(), ".klog").size(),
                test::FilesWithSuffix(pristine_->path(), ".vlog").size(), tail_keys_.size());
  }
  static void TearDownTestSuite() { pristine_.reset(); }

  void SetUp() override {
    work_ = std::make_unique<test::ScratchDir>(
        std::string("corruption_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    rng_.seed(seed_ ^
              std::hash<std::string>()(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    Restore();
  }
  void TearDown() override {
    db_.reset();
    work_.reset();
  }

  // Back to the pristine copy.
  void Restore() {
    db_.reset();
    ASSERT_TRUE(test::CopyDirFiles(pristine_->path(), work_->path()).ok());
  }
  std::string Path(const std::string& name) const { return work_->Sub(name); }
  std::string OnlyFile(const std::string& suffix) const {
    auto files = test::FilesWithSuffix(work_->path(), suffix);
    EXPECT_EQ(files.size(), 1u) << suffix;
    return files.empty() ? "" : files[0];
  }
  std::string ManifestName() const {
    auto files = test::FilesWithSuffix(work_->path(), "");
    for (const auto& f : files) {
      if (f.rfind("MANIFEST-", 0) == 0) return f;
    }
    ADD_FAILURE() << "no manifest";
    return "";
  }
  // A seeded sample of the files with this suffix (TIDESDB_CORRUPTION_FILES of them).
  std::vector<std::string> SampleFiles(const std::string& suffix) {
    auto files = test::FilesWithSuffix(work_->path(), suffix);
    std::shuffle(files.begin(), files.end(), rng_);
    files.resize(std::min<size_t>(files.size(), test::IntFromEnv("TIDESDB_CORRUPTION_FILES", 4)));
    return files;
  }
  void Flip(const std::string& name, uint64_t offset) {
    ASSERT_TRUE(test::XorByte(Path(name), offset, static_cast<uint8_t>(1 + rng_() % 255)).ok());
  }
  Status Open() {
    db_.reset();
    Status s = DB::Open(MakeOptions(), work_->path(), &db_);
    if (s.ok()) {
      cfs_ = {db_->DefaultColumnFamily(), db_->GetColumnFamily("b")};
      if (cfs_[1] == nullptr) return Status::Corruption("column family b is gone");
    }
    return s;
  }

  // Reads every key of the models with Get and every CF with a forward scan. Each answer
  // must be right, or Corruption whose message contains file_hint; counts Corruptions.
  // `missing` keys must be NotFound instead (a dropped torn tail).
  int VerifyReads(const std::string& file_hint, const std::set<std::string>& missing = {}) {
    int corruptions = 0;
    for (size_t c = 0; c < 2; ++c) {
      for (const auto& [key, value] : models_[c]) {
        std::string got;
        Status s = db_->Get(ReadOptions(), cfs_[c], key, &got);
        const bool gone = c == 0 && missing.count(key) != 0;
        if (s.IsCorruption()) {
          ++corruptions;
          EXPECT_NE(s.ToString().find(file_hint), std::string::npos) << s.ToString();
        } else if (gone) {
          EXPECT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
        } else {
          EXPECT_TRUE(s.ok()) << key << ": " << s.ToString();
          EXPECT_TRUE(got == value) << "wrong value for " << key;
        }
      }
      // A scan returns the model's keys in order, each right, until it stops; it stops
      // early only with Corruption.
      auto it = db_->NewIterator(ReadOptions(), cfs_[c]);
      auto expect = models_[c].begin();
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        while (expect != models_[c].end() && c == 0 && missing.count(expect->first) != 0) ++expect;
        if (expect == models_[c].end()) {
          ADD_FAILURE() << "scan returned an extra key " << std::string(it->key());
          break;
        }
        if (it->key() != Slice(expect->first) || it->value() != Slice(expect->second)) {
          ADD_FAILURE() << "scan returned " << std::string(it->key()) << " where " << expect->first
                        << " (with its value) belongs";
          break;
        }
        ++expect;
      }
      while (expect != models_[c].end() && c == 0 && missing.count(expect->first) != 0) ++expect;
      if (it->status().ok()) {
        EXPECT_TRUE(expect == models_[c].end()) << "scan ended early without an error at " << expect->first;
      } else {
        EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
        EXPECT_NE(it->status().ToString().find(file_hint), std::string::npos) << it->status().ToString();
        ++corruptions;
      }
    }
    return corruptions;
  }

  static uint64_t seed_;
  static std::unique_ptr<test::ScratchDir> pristine_;
  static std::vector<Model> models_;  // default CF, CF "b"
  static std::vector<std::string> tail_keys_;

  std::unique_ptr<test::ScratchDir> work_;
  std::mt19937_64 rng_;
  std::unique_ptr<DB> db_;
  std::vector<ColumnFamilyHandle*> cfs_;
};

uint64_t CorruptionTest::seed_ = 0;
std::unique_ptr<test::ScratchDir> CorruptionTest::pristine_;
std::vector<Model> CorruptionTest::models_;
std::vector<std::string> CorruptionTest::tail_keys_;

TEST_F(CorruptionTest, PristineCopyOpensWithEverything) {
  Status s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(VerifyReads("none"), 0);
}

// ------------------------------------------------------------------------------------ WAL

TEST_F(CorruptionTest, WalMiddleRecordIsCorruptionNamingFileAndOffset) {
  const std::string wal = OnlyFile(".wal");
  auto records = ListRecords(Path(wal), LogKind::kWal);
  ASSERT_EQ(records.size(), tail_keys_.size());
  const RecordSpan r = records[records.size() / 2];
  Flip(wal, r.offset + r.size / 2);
  Status s = Open();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("offset " + std::to_string(r.offset)), std::string::npos) << s.ToString();
  // A failed open repairs nothing by dropping data: the second attempt fails the same way.
  Status again = Open();
  EXPECT_TRUE(again.IsCorruption()) << again.ToString();
}

// A clean close seals the WAL (a sync mark claiming every record, log_format.h): damage in
// its last record is corruption too, not a torn tail, since that record was synced.
TEST_F(CorruptionTest, WalLastRecordOfACleanCloseIsCorruption) {
  const std::string wal = OnlyFile(".wal");
  auto records = ListRecords(Path(wal), LogKind::kWal);
  ASSERT_EQ(records.size(), tail_keys_.size());
  const RecordSpan r = records.back();
  Flip(wal, r.offset + r.size - 3);
  Status s = Open();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal + ": offset " + std::to_string(r.offset)), std::string::npos)
      << s.ToString();
}

// Damage in the seal mark itself is a torn tail that costs nothing.
TEST_F(CorruptionTest, WalSealMarkIsATornTailAndEverythingSurvives) {
  const std::string wal = OnlyFile(".wal");
  auto records = ListRecords(Path(wal), LogKind::kWal);
  const uint64_t seal = records.back().offset + records.back().size;
  ASSERT_EQ(test::FileSizeOrZero(Path(wal)), seal + kRecordHeaderSize + kSyncMarkPayloadSize);
  Flip(wal, seal + 3);
  Status s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(VerifyReads("none"), 0);
  // The tail was cut off for good: the next open is clean and sees the same.
  s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(VerifyReads("none"), 0);
}

// A byte flipped anywhere: in the header or any record, Corruption; in the seal mark that
// ends the cleanly closed WAL, a torn tail that costs nothing.
TEST_F(CorruptionTest, WalSampledBytes) {
  const std::string wal = OnlyFile(".wal");
  const auto records = ListRecords(Path(wal), LogKind::kWal);
  ASSERT_EQ(records.size(), tail_keys_.size());
  const uint64_t size = test::FileSizeOrZero(Path(wal));
  const uint64_t seal = records.back().offset + records.back().size;
  std::vector<uint64_t> positions = {
      0, 10, kFileHeaderSize - 1, records[0].offset, records.back().offset, seal, size - 1};
  for (int i = 0; i < 22; ++i) positions.push_back(rng_() % size);
  for (uint64_t pos : positions) {
    SCOPED_TRACE("seed " + std::to_string(seed_) + ", WAL byte " + std::to_string(pos));
    Restore();
    Flip(wal, pos);
    Status s = Open();
    if (pos >= seal) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(VerifyReads("none"), 0);
    } else {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.ToString().find(wal), std::string::npos) << s.ToString();
    }
  }
}

// A WAL cut short (a crash mid-write) always recovers, to a prefix of the commits.
TEST_F(CorruptionTest, WalTruncatedAnywhereRecoversAPrefix) {
  const std::string wal = OnlyFile(".wal");
  const auto records = ListRecords(Path(wal), LogKind::kWal);
  const uint64_t size = test::FileSizeOrZero(Path(wal));
  ASSERT_GT(size, kFileHeaderSize);
  for (int i = 0; i < 8; ++i) {
    // Past the file header, which is synced before any record is written: a crash tears
    // records, never the header (a file cut inside it is corruption, checked below).
    const uint64_t cut = kFileHeaderSize + rng_() % (size - kFileHeaderSize);
    SCOPED_TRACE("WAL cut to " + std::to_string(cut) + " bytes");
    Restore();
    std::filesystem::resize_file(Path(wal), cut);
    Status s = Open();
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::set<std::string> lost;
    for (size_t k = 0; k < records.size(); ++k) {
      if (records[k].offset + records[k].size > cut) lost.insert(tail_keys_[k]);
    }
    EXPECT_EQ(VerifyReads("none", lost), 0);
  }
  // Cut inside the header: not a crash shape (see log_format.h), so Corruption naming the
  // WAL, not a silent empty log.
  Restore();
  std::filesystem::resize_file(Path(wal), kFileHeaderSize / 2);
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal), std::string::npos) << s.ToString();
}

TEST_F(CorruptionTest, MissingWalIsCorruption) {
  ASSERT_TRUE(Env::Default()->RemoveFile(Path(OnlyFile(".wal"))).ok());
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

// ------------------------------------------------------------------------------- SSTables

// Any flipped byte of a key log is detected on read (every part of the file is checksummed)
// and reported as Corruption naming the file; every other answer stays right.
TEST_F(CorruptionTest, SstSampledBytesAreDetectedAndNeverReadWrong) {
  for (const auto& klog : SampleFiles(".klog")) {
    const uint64_t size = test::FileSizeOrZero(Path(klog));
    std::vector<uint64_t> positions = {0, size / 2, size - 1};
    for (int i = 0; i < 6; ++i) positions.push_back(rng_() % size);
    for (uint64_t pos : positions) {
      SCOPED_TRACE("seed " + std::to_string(seed_) + ", " + klog + " byte " + std::to_string(pos));
      Restore();
      Flip(klog, pos);
      Status s = Open();
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_GT(VerifyReads(klog), 0) << "a damaged key log read back without any error";
    }
  }
}

TEST_F(CorruptionTest, MissingOrTruncatedSstIsCorruptionAtOpen) {
  const std::string klog = test::FilesWithSuffix(work_->path(), ".klog")[0];
  ASSERT_TRUE(Env::Default()->RemoveFile(Path(klog)).ok());
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(klog), std::string::npos) << s.ToString();

  Restore();
  std::filesystem::resize_file(Path(klog), test::FileSizeOrZero(Path(klog)) - 10);
  s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(klog), std::string::npos) << s.ToString();
}

// A compaction that meets a damaged table fails; it never writes a result without the
// damaged entries.
TEST_F(CorruptionTest, CompactionOfADamagedSstFailsWithoutLosingData) {
  const std::string klog = test::FilesWithSuffix(work_->path(), ".klog")[0];
  Flip(klog, 64);  // inside the first data block
  ASSERT_TRUE(Open().ok());
  Status s = db_->CompactRange(nullptr, nullptr);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_GT(VerifyReads(klog), 0);
  // Still detected after a reopen (nothing replaced the damaged file).
  ASSERT_TRUE(Open().ok());
  EXPECT_GT(VerifyReads(klog), 0);
}

// ---------------------------------------------------------------- damaged column families

// The key logs of CF "b" (file names), from its sst-files property.
std::vector<std::string> KeyLogsOf(DB* db, ColumnFamilyHandle* cf) {
  std::string listing;
  EXPECT_TRUE(db->GetProperty(cf, "tidesdb.sst-files", &listing));
  std::vector<std::string> out;
  for (size_t at = listing.find(" file="); at != std::string::npos; at = listing.find(" file=", at + 1)) {
    char name[32];
    std::snprintf(name, sizeof(name), "%06llu.klog", std::stoull(listing.substr(at + 6)));
    out.push_back(name);
  }
  return out;
}

// With open_damaged_column_families, a missing key log damages only its column family: the
// database opens, the other CF reads and writes as before, the damaged CF refuses writes
// with a Corruption naming its file, its reads fail only where they need the file (never
// a wrong value), it is not compacted, and dropping it clears the damage for good.
TEST_F(CorruptionTest, MissingSstDamagesOnlyItsColumnFamily) {
  ASSERT_TRUE(Open().ok());
  const std::vector<std::string> b_logs = KeyLogsOf(db_.get(), cfs_[1]);
  ASSERT_FALSE(b_logs.empty());
  db_.reset();
  ASSERT_TRUE(Env::Default()->RemoveFile(Path(b_logs[0])).ok());

  Options o = MakeOptions();
  o.open_damaged_column_families = true;
  o.default_cf_options.l1_file_count_trigger = 2;  // compaction runs: it must skip "b"
  ASSERT_TRUE(DB::Open(o, work_->path(), &db_).ok());
  cfs_ = {db_->DefaultColumnFamily(), db_->GetColumnFamily("b")};
  ASSERT_NE(cfs_[1], nullptr);
  std::string damage;
  ASSERT_TRUE(db_->GetProperty(cfs_[1], "tidesdb.damage", &damage));
  EXPECT_NE(damage.find(b_logs[0]), std::string::npos) << damage;
  EXPECT_NE(damage.find("column family 'b' is damaged"), std::string::npos) << damage;
  ASSERT_TRUE(db_->GetProperty(cfs_[0], "tidesdb.damage", &damage));
  EXPECT_EQ(damage, "");

  // Reads: everything right, or Corruption naming the missing file (in CF "b" only).
  const int corruptions = VerifyReads(b_logs[0]);
  EXPECT_GT(corruptions, 0);

  // Writes: the healthy CF takes them, the damaged one refuses them whole (a batch with
  // both is refused: nothing of it is applied).
  ASSERT_TRUE(db_->Put(WriteOptions(), cfs_[0], "after-damage", "ok").ok());
  Status s = db_->Put(WriteOptions(), cfs_[1], "after-damage", "no");
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(b_logs[0]), std::string::npos) << s.ToString();
  WriteBatch both;
  both.Put(cfs_[0], "both", "x");
  both.Put(cfs_[1], "both", "x");
  EXPECT_TRUE(db_->Write(WriteOptions(), &both).IsCorruption());
  std::string got;
  EXPECT_TRUE(db_->Get(ReadOptions(), cfs_[0], "both", &got).IsNotFound());

  // Compaction: the healthy CF compacts (and a whole-database CompactRange reports the
  // damage after compacting it); the damaged CF's own CompactRange reports the damage.
  s = db_->CompactRange(nullptr, nullptr);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::string l0;
  ASSERT_TRUE(db_->GetProperty(cfs_[0], "tidesdb.num-files-at-level0", &l0));
  EXPECT_EQ(l0, "0");
  EXPECT_TRUE(db_->CompactRange(cfs_[1], nullptr).IsCorruption());
  ASSERT_TRUE(db_->Get(ReadOptions(), cfs_[0], "after-damage", &got).ok());
  EXPECT_EQ(got, "ok");
  for (const auto& [key, value] : models_[0]) {
    ASSERT_TRUE(db_->Get(ReadOptions(), cfs_[0], key, &got).ok()) << key;
    ASSERT_EQ(got, value) << key;
  }

  // Dropping the damaged CF: gone for good, and the next open is clean without the option.
  ASSERT_TRUE(db_->DropColumnFamily(cfs_[1]).ok());
  db_.reset();
  ASSERT_TRUE(DB::Open(MakeOptions(), work_->path(), &db_).ok());
  EXPECT_EQ(db_->GetColumnFamily("b"), nullptr);
  ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "after-damage", &got).ok());
}

// A damaged block met by a background compaction marks the CF damaged: it is not retried
// (the other CF keeps compacting and taking writes), and the damage is reported.
TEST_F(CorruptionTest, CompactionMeetingADamagedBlockMarksTheColumnFamily) {
  ASSERT_TRUE(Open().ok());
  const std::vector<std::string> b_logs = KeyLogsOf(db_.get(), cfs_[1]);
  ASSERT_FALSE(b_logs.empty());
  db_.reset();
  Flip(b_logs[0], 64);  // inside the first data block

  Options o = MakeOptions();
  o.open_damaged_column_families = true;
  ASSERT_TRUE(DB::Open(o, work_->path(), &db_).ok());
  cfs_ = {db_->DefaultColumnFamily(), db_->GetColumnFamily("b")};
  Status s = db_->CompactRange(cfs_[1], nullptr);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::string damage;
  ASSERT_TRUE(db_->GetProperty(cfs_[1], "tidesdb.damage", &damage));
  EXPECT_NE(damage.find("column family 'b' is damaged"), std::string::npos) << damage;
  EXPECT_GT(VerifyReads(b_logs[0]), 0);
  EXPECT_TRUE(db_->Put(WriteOptions(), cfs_[1], "k", "v").IsCorruption());
  ASSERT_TRUE(db_->Put(WriteOptions(), cfs_[0], "k", "v").ok());
  ASSERT_TRUE(db_->CompactRange(cfs_[0], nullptr).ok());
}

// ----------------------------------------------------------------------------- value logs

TEST_F(CorruptionTest, VlogSampledBytesAreDetectedAndNeverReadWrong) {
  for (const auto& vlog : SampleFiles(".vlog")) {
    const uint64_t size = test::FileSizeOrZero(Path(vlog));
    std::vector<uint64_t> positions = {0, 30, size - 1};
    for (int i = 0; i < 5; ++i) positions.push_back(rng_() % size);
    for (uint64_t pos : positions) {
      SCOPED_TRACE("seed " + std::to_string(seed_) + ", " + vlog + " byte " + std::to_string(pos));
      Restore();
      Flip(vlog, pos);
      Status s = Open();
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_GT(VerifyReads(vlog), 0) << "a damaged value log read back without any error";
    }
  }
}

TEST_F(CorruptionTest, MissingVlogIsCorruptionAtOpen) {
  const std::string vlog = test::FilesWithSuffix(work_->path(), ".vlog")[0];
  ASSERT_TRUE(Env::Default()->RemoveFile(Path(vlog)).ok());
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(vlog), std::string::npos) << s.ToString();
}

// ------------------------------------------------------------------------------- manifest

// Every record of the manifest matters: the first ones are followed by valid records
// (Corruption naming the manifest and offset); the last one is the final flush, after which
// the WAL it replaced was deleted, so losing it would lose data: Corruption as well.
TEST_F(CorruptionTest, ManifestFlippedAnywhereIsCorruption) {
  const std::string manifest = ManifestName();
  const auto records = ListRecords(Path(manifest), LogKind::kManifest);
  ASSERT_GE(records.size(), 3u);
  const uint64_t size = test::FileSizeOrZero(Path(manifest));
  std::vector<uint64_t> positions = {0, records[0].offset + records[0].size / 2,
                                     records[1].offset + records[1].size / 2, records.back().offset + 5,
                                     size - 1};
  for (int i = 0; i < 10; ++i) positions.push_back(rng_() % size);
  for (uint64_t pos : positions) {
    SCOPED_TRACE("seed " + std::to_string(seed_) + ", manifest byte " + std::to_string(pos));
    Restore();
    Flip(manifest, pos);
    Status s = Open();
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    if (pos < records.back().offset) {
      EXPECT_NE(s.ToString().find(manifest), std::string::npos) << s.ToString();
    }
  }
}

// The manifest's last record created a CF that the WAL then wrote to: losing that record
// (read as a torn tail) must not drop the CF's data silently.
TEST_F(CorruptionTest, LostColumnFamilyCreationIsCorruption) {
  test::ScratchDir dir("corruption_lost_cf");
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(MakeOptions(), dir.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), db->DefaultColumnFamily(), "a", "1").ok());
  ASSERT_TRUE(db->Flush(FlushOptions(), nullptr).ok());
  ColumnFamilyHandle* x = nullptr;
  ASSERT_TRUE(db->CreateColumnFamily(ColumnFamilyOptions(), "x", &x).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), x, "k", "v").ok());
  db.reset();
  std::string manifest;
  for (const auto& f : test::FilesWithSuffix(dir.path(), "")) {
    if (f.rfind("MANIFEST-", 0) == 0) manifest = f;
  }
  const auto records = ListRecords(dir.Sub(manifest), LogKind::kManifest);
  ASSERT_FALSE(records.empty());
  ASSERT_TRUE(test::XorByte(dir.Sub(manifest), records.back().offset + records.back().size - 2, 0x40).ok());
  Status s = DB::Open(MakeOptions(), dir.path(), &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

// -------------------------------------------------------------------------------- CURRENT

TEST_F(CorruptionTest, CurrentNamingAMissingManifestIsAClearError) {
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "MANIFEST-987654\n", Path("CURRENT"), false).ok());
  Status s = Open();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("MANIFEST-987654"), std::string::npos) << s.ToString();
}

TEST_F(CorruptionTest, DamagedOrMissingCurrentIsCorruption) {
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "garbage", Path("CURRENT"), false).ok());
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // Without CURRENT the directory still holds a database: never a new, empty one.
  ASSERT_TRUE(Env::Default()->RemoveFile(Path("CURRENT")).ok());
  s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  Restore();
  ASSERT_TRUE(Open().ok());
  EXPECT_EQ(VerifyReads("none"), 0);
}

}  // namespace
}  // namespace tidesdb
