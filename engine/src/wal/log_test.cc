// Log framing: round trips, reopen, torn tails at every byte, corruption classification,
// group-commit batching, bounded reader memory, and power loss through FaultInjectionEnv.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "env/fault_injection_env.h"
#include "tidesdb/env.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace tidesdb {
namespace {

constexpr uint64_t kSeed = 20240611;  // fixed: every test here is deterministic

struct Rec {
  uint8_t type;
  std::string payload;
};

std::string RandomBytes(std::mt19937_64* rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>((*rng)() & 0xff);
  return s;
}

// Counts Appends, to check that one AddRecords is one Append.
class CountingFile final : public WritableFile {
 public:
  CountingFile(std::unique_ptr<WritableFile> base, int* appends)
      : base_(std::move(base)), appends_(appends) {}
  Status Append(Slice data) override {
    ++*appends_;
    return base_->Append(data);
  }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override { return base_->Sync(); }
  Status StartWriteback(uint64_t offset, uint64_t nbytes) override {
    writebacks.emplace_back(offset, nbytes);
    return base_->StartWriteback(offset, nbytes);
  }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

  std::vector<std::pair<uint64_t, uint64_t>> writebacks;

 private:
  std::unique_ptr<WritableFile> base_;
  int* appends_;
};

// The file's length on disk (0 if it cannot be read).
uint64_t DiskSize(const std::string& path) {
  uint64_t size = 0;
  return Env::Default()->GetFileSize(path, &size).ok() ? size : 0;
}

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string tmpl = std::string(tmp != nullptr ? tmp : "/tmp") + "/tidesdb_log_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/000001.log";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<LogWriter> NewWriter(const std::string& path, LogKind kind = LogKind::kWal,
                                       uint64_t number = 7, Env* env = Env::Default()) {
    std::unique_ptr<WritableFile> file;
    EnvOptions options;
    options.buffered_writes = false;
    Status s = env->NewWritableFile(path, options, &file);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::make_unique<LogWriter>(std::move(file), kind, number);
  }

  // Writes recs to path_; returns the offset of each record.
  std::vector<uint64_t> WriteLog(const std::vector<Rec>& recs, LogKind kind = LogKind::kWal) {
    std::vector<uint64_t> offsets;
    auto writer = NewWriter(path_, kind);
    for (const Rec& r : recs) {
      offsets.push_back(writer->size());
      Status s = writer->AddRecord(r.type, r.payload);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    EXPECT_TRUE(writer->Close().ok());
    return offsets;
  }

  // Writes recs to path_ as a WAL with one Sync, after record synced_through; returns the
  // offset of each record (of the sync mark in front of it, for record synced_through + 1).
  std::vector<uint64_t> WriteLogSyncedThrough(const std::vector<Rec>& recs, size_t synced_through) {
    std::vector<uint64_t> offsets;
    auto writer = NewWriter(path_);
    for (size_t i = 0; i < recs.size(); ++i) {
      offsets.push_back(writer->size());
      EXPECT_TRUE(writer->AddRecord(recs[i].type, recs[i].payload).ok());
      if (i == synced_through) {
        EXPECT_TRUE(writer->Sync().ok());
      }
    }
    EXPECT_TRUE(writer->Close().ok());
    return offsets;
  }

  struct ReadResult {
    Status status;
    std::vector<Rec> recs;
    bool torn = false;
    bool lost_write = false;  // LogReader::lost_unsynced_write
    bool zero_tail = false;   // LogReader::zero_tail
    uint64_t valid_end = 0;
    uint64_t log_number = 0;
    size_t peak_buffer = 0;
  };

  static ReadResult ReadLog(const std::string& path, LogKind kind = LogKind::kWal,
                            size_t chunk = LogReader::kDefaultChunkSize, bool allow_lost_writes = false) {
    ReadResult r;
    std::unique_ptr<LogReader> reader;
    r.status = LogReader::Open(Env::Default(), path, &reader, chunk);
    if (!r.status.ok()) return r;
    if (allow_lost_writes) reader->AllowLostUnsyncedWrites();
    r.status = reader->ReadHeader(kind, &r.log_number);
    while (r.status.ok()) {
      Rec rec;
      bool eof = false;
      r.status = reader->ReadRecord(&rec.type, &rec.payload, &eof);
      if (!r.status.ok() || eof) break;
      r.recs.push_back(std::move(rec));
    }
    r.torn = reader->torn_tail();
    r.lost_write = reader->lost_unsynced_write();
    r.zero_tail = reader->zero_tail();
    r.valid_end = reader->valid_end_offset();
    r.peak_buffer = reader->peak_buffer_size();
    return r;
  }

  std::string Contents(const std::string& path) {
    std::string data;
    EXPECT_TRUE(ReadFileToString(Env::Default(), path, &data).ok());
    return data;
  }
  void SetContents(const std::string& path, const std::string& data) {
    ASSERT_TRUE(WriteStringToFile(Env::Default(), data, path, false).ok());
  }

  static void ExpectPrefix(const std::vector<Rec>& got, const std::vector<Rec>& want, size_t n) {
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i].type, want[i].type) << "record " << i;
      ASSERT_EQ(got[i].payload, want[i].payload) << "record " << i;
    }
  }

  std::vector<Rec> SmallRecords(size_t n, size_t size, uint64_t seed = kSeed) {
    std::mt19937_64 rng(seed);
    std::vector<Rec> recs;
    for (size_t i = 0; i < n; ++i)
      recs.push_back({static_cast<uint8_t>(1 + i % 200), RandomBytes(&rng, size)});
    return recs;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(LogTest, RoundTripThousandsOfRecordsUpTo1MiB) {
  std::mt19937_64 rng(kSeed);
  std::vector<Rec> recs;
  for (size_t size : {size_t{0}, size_t{1}, size_t{(1 << 20) - 1}, size_t{1} << 20}) {
    recs.push_back({1, RandomBytes(&rng, size)});
  }
  for (int i = 0; i < 3000; ++i) {
    // Mostly small records, with a tail of large ones up to 1 MiB.
    const int max_bits = (rng() % 20 == 0) ? 20 : 12;
    const size_t size = rng() % ((size_t{1} << (rng() % (max_bits + 1))) + 1);
    recs.push_back({static_cast<uint8_t>(1 + rng() % 254), RandomBytes(&rng, size)});  // not kSyncMarkType
  }
  auto offsets = WriteLog(recs);
  EXPECT_EQ(offsets[0], kFileHeaderSize);
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_FALSE(r.torn);
  EXPECT_EQ(r.log_number, 7u);
  ExpectPrefix(r.recs, recs, recs.size());
  uint64_t size = 0;
  ASSERT_TRUE(Env::Default()->GetFileSize(path_, &size).ok());
  EXPECT_EQ(r.valid_end, size);
}

TEST_F(LogTest, ManifestKindRoundTripAndKindMismatch) {
  auto recs = SmallRecords(10, 30);
  WriteLog(recs, LogKind::kManifest);
  ReadResult r = ReadLog(path_, LogKind::kManifest);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ExpectPrefix(r.recs, recs, recs.size());

  r = ReadLog(path_, LogKind::kWal);
  ASSERT_TRUE(r.status.IsCorruption()) << r.status.ToString();
  EXPECT_NE(r.status.message().find("MANIFEST"), std::string::npos) << r.status.ToString();
}

TEST_F(LogTest, ReopenAndAppend) {
  auto first = SmallRecords(50, 100, 1);
  auto second = SmallRecords(30, 70, 2);
  WriteLog(first);

  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(Env::Default()->NewAppendableFile(path_, options, &file).ok());
  LogWriter writer(std::move(file), LogKind::kWal, 7, /*write_header=*/false);
  for (const Rec& r : second) ASSERT_TRUE(writer.AddRecord(r.type, r.payload).ok());
  ASSERT_TRUE(writer.Sync().ok());
  uint64_t size = 0;
  ASSERT_TRUE(Env::Default()->GetFileSize(path_, &size).ok());
  EXPECT_EQ(writer.size(), size);
  ASSERT_TRUE(writer.Close().ok());

  std::vector<Rec> all = first;
  all.insert(all.end(), second.begin(), second.end());
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_FALSE(r.torn);
  ExpectPrefix(r.recs, all, all.size());
}

TEST_F(LogTest, HeaderOnlyLogAndLazyHeader) {
  auto writer = NewWriter(path_, LogKind::kWal, 42);
  EXPECT_EQ(writer->size(), kFileHeaderSize);
  uint64_t size = 1;
  ASSERT_TRUE(Env::Default()->GetFileSize(path_, &size).ok());
  EXPECT_EQ(size, 0u);  // the header goes out with the first write
  ASSERT_TRUE(writer->Sync().ok());
  ASSERT_TRUE(Env::Default()->GetFileSize(path_, &size).ok());
  EXPECT_TRUE(size == kFileHeaderSize || size == kWalPreallocateBytes)
      << size;  // zeros past it, if preallocated
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_EQ(DiskSize(path_), kFileHeaderSize);
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.log_number, 42u);
  EXPECT_TRUE(r.recs.empty());
  EXPECT_FALSE(r.torn);
  EXPECT_EQ(r.valid_end, kFileHeaderSize);
}

TEST_F(LogTest, TruncatedLastRecordAtEveryOffsetIsTornTail) {
  auto recs = SmallRecords(5, 40);
  recs.back().payload = std::string(150, 'x');
  auto offsets = WriteLog(recs);
  const std::string full = Contents(path_);
  const uint64_t last = offsets.back();
  const std::string cut_path = dir_ + "/cut.log";
  for (uint64_t cut = last; cut < full.size(); ++cut) {
    SetContents(cut_path, full.substr(0, cut));
    ReadResult r = ReadLog(cut_path);
    ASSERT_TRUE(r.status.ok()) << "cut " << cut << ": " << r.status.ToString();
    ASSERT_EQ(r.torn, cut != last) << "cut " << cut;  // cutting exactly at a boundary is clean
    ASSERT_EQ(r.valid_end, last) << "cut " << cut;
    ExpectPrefix(r.recs, recs, recs.size() - 1);
  }
  ReadResult whole = ReadLog(path_);
  ASSERT_TRUE(whole.status.ok());
  EXPECT_FALSE(whole.torn);
  ExpectPrefix(whole.recs, recs, recs.size());
}

TEST_F(LogTest, TruncationInsideEveryRecordKeepsEarlierOnes) {
  auto recs = SmallRecords(20, 25);
  auto offsets = WriteLog(recs);
  const std::string full = Contents(path_);
  const std::string cut_path = dir_ + "/cut.log";
  for (size_t i = 0; i < recs.size(); ++i) {
    const uint64_t cut = offsets[i] + 1 + (i * 7) % (kRecordHeaderSize + 25 - 1);
    SetContents(cut_path, full.substr(0, cut));
    ReadResult r = ReadLog(cut_path);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_EQ(r.valid_end, offsets[i]);
    ExpectPrefix(r.recs, recs, i);
  }
}

TEST_F(LogTest, GarbageTailIsTornTail) {
  auto recs = SmallRecords(10, 60);
  WriteLog(recs);
  const std::string full = Contents(path_);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    SetContents(path_, full + RandomBytes(&rng, 1 + rng() % 5000));
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.ok()) << "seed " << seed << ": " << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_EQ(r.valid_end, full.size());
    ExpectPrefix(r.recs, recs, recs.size());
  }
}

TEST_F(LogTest, ZeroTailIsTornTail) {
  auto recs = SmallRecords(10, 60);
  WriteLog(recs);
  const std::string full = Contents(path_);
  for (size_t zeros : {size_t{1}, size_t{8}, size_t{9}, size_t{4096}, size_t{1} << 20}) {
    SetContents(path_, full + std::string(zeros, '\0'));
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_EQ(r.valid_end, full.size());
    ExpectPrefix(r.recs, recs, recs.size());
  }
}

// A WAL's file is preallocated ahead of its records (kWalPreallocateBytes steps): read
// while it is being written, or after a crash, the zeros past the last record are the end
// of the log (a zero tail, found without walking them byte by byte). Finish cuts them off
// durably; a manifest is never preallocated.
TEST_F(LogTest, WalIsPreallocatedAndItsZeroTailIsTheEndOfTheLog) {
  auto probe = NewWriter(dir_ + "/probe");
  ASSERT_TRUE(probe->AddRecord(1, "x").ok());
  if (DiskSize(dir_ + "/probe") == probe->size()) GTEST_SKIP() << "no fallocate here";
  ASSERT_TRUE(probe->Close().ok());
  EXPECT_EQ(DiskSize(dir_ + "/probe"), probe->size());  // Close tidies up too

  auto recs = SmallRecords(2000, 700);  // 1.4 MB: a second step
  auto writer = NewWriter(path_);
  for (size_t i = 0; i < recs.size(); ++i) {
    ASSERT_TRUE(writer->AddRecord(recs[i].type, recs[i].payload).ok());
    if (i == 100) {
      ASSERT_TRUE(writer->Sync().ok());
      EXPECT_EQ(DiskSize(path_), kWalPreallocateBytes);
    }
  }
  EXPECT_EQ(DiskSize(path_), 2 * kWalPreallocateBytes);
  for (bool allow_lost_writes : {false, true}) {
    std::unique_ptr<LogReader> reader;
    ASSERT_TRUE(LogReader::Open(Env::Default(), path_, &reader).ok());
    if (allow_lost_writes) reader->AllowLostUnsyncedWrites();
    uint64_t number = 0;
    ASSERT_TRUE(reader->ReadHeader(LogKind::kWal, &number).ok());
    size_t n = 0;
    for (;; ++n) {
      Rec rec;
      bool eof = false;
      ASSERT_TRUE(reader->ReadRecord(&rec.type, &rec.payload, &eof).ok());
      if (eof) break;
      ASSERT_EQ(rec.payload, recs[n].payload);
    }
    EXPECT_EQ(n, recs.size());
    EXPECT_TRUE(reader->torn_tail());
    EXPECT_TRUE(reader->zero_tail());
    EXPECT_FALSE(reader->lost_unsynced_write());
    EXPECT_EQ(reader->valid_end_offset(), writer->size());
  }
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(DiskSize(path_), writer->size());
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_FALSE(r.torn);
  ExpectPrefix(r.recs, recs, recs.size());
  ASSERT_TRUE(writer->Close().ok());

  // Seal cuts them off as well, before its last sync.
  writer = NewWriter(path_);
  ASSERT_TRUE(writer->AddRecord(1, "y").ok());
  EXPECT_EQ(DiskSize(path_), kWalPreallocateBytes);
  ASSERT_TRUE(writer->Seal().ok());
  EXPECT_EQ(DiskSize(path_), writer->size());
  ASSERT_TRUE(writer->Close().ok());

  auto manifest = NewWriter(dir_ + "/manifest", LogKind::kManifest);
  ASSERT_TRUE(manifest->AddRecord(1, "z").ok());
  EXPECT_EQ(DiskSize(dir_ + "/manifest"), manifest->size());
  ASSERT_TRUE(manifest->Close().ok());
}

// Under the FaultInjectionEnv's power loss: the synced records survive, the file keeps
// the length reserved at the last sync, and the zeros read as the end of the log in the
// newest WAL whatever became of the unsynced records.
TEST_F(LogTest, PowerLossInAPreallocatedWalLeavesAZeroTail) {
  for (PowerLossMode mode :
       {PowerLossMode::kDropUnsynced, PowerLossMode::kTornUnsynced, PowerLossMode::kLoseUnsyncedPages}) {
    SCOPED_TRACE(static_cast<int>(mode));
    FaultInjectionEnv env;
    auto recs = SmallRecords(60, 300);
    auto writer = NewWriter(path_, LogKind::kWal, 7, &env);
    ASSERT_TRUE(env.SyncDir(dir_).ok());
    for (size_t i = 0; i < 30; ++i) ASSERT_TRUE(writer->AddRecord(recs[i].type, recs[i].payload).ok());
    ASSERT_TRUE(writer->Sync().ok());
    const uint64_t synced = writer->size();
    if (DiskSize(path_) == synced) GTEST_SKIP() << "no fallocate here";
    for (size_t i = 30; i < recs.size(); ++i)
      ASSERT_TRUE(writer->AddRecord(recs[i].type, recs[i].payload).ok());
    env.SetFilesystemActive(false);
    writer.reset();
    ASSERT_TRUE(env.SimulatePowerLoss(mode, 11).ok());
    env.SetFilesystemActive(true);
    EXPECT_EQ(DiskSize(path_), kWalPreallocateBytes);
    ReadResult r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_GE(r.valid_end, synced);
    ASSERT_GE(r.recs.size(), 30u);
    ExpectPrefix(r.recs, recs, r.recs.size());
  }
}

TEST_F(LogTest, BitFlipInMiddleRecordIsCorruptionNamingFileAndOffset) {
  auto recs = SmallRecords(10, 60);
  auto offsets = WriteLog(recs);
  const std::string full = Contents(path_);
  // A payload byte, then the length field, then the crc field of record 4.
  for (uint64_t pos : {offsets[4] + kRecordHeaderSize + 10, offsets[4] + 5, offsets[4] + 1}) {
    std::string bad = full;
    bad[pos] ^= 0x10;
    SetContents(path_, bad);
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.IsCorruption()) << r.status.ToString();
    const std::string msg = r.status.ToString();
    EXPECT_NE(msg.find(path_), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset " + std::to_string(offsets[4])), std::string::npos) << msg;
    ExpectPrefix(r.recs, recs, 4);
    EXPECT_FALSE(r.torn);
  }
  std::string bad = full;
  bad[offsets[4] + kRecordHeaderSize + 3] ^= 0x01;
  SetContents(path_, bad);
  ReadResult r = ReadLog(path_);
  EXPECT_EQ(r.status.ToString(),
            "Corruption: " + path_ + ": offset " + std::to_string(offsets[4]) + ": checksum mismatch");
}

TEST_F(LogTest, CorruptionIsStickyAndZeroTypeInMiddleIsCorruption) {
  auto recs = SmallRecords(6, 30);
  auto offsets = WriteLog(recs);
  std::string bad = Contents(path_);
  bad[offsets[2] + 8] = 0;  // type byte
  SetContents(path_, bad);
  std::unique_ptr<LogReader> reader;
  ASSERT_TRUE(LogReader::Open(Env::Default(), path_, &reader).ok());
  uint64_t number;
  ASSERT_TRUE(reader->ReadHeader(LogKind::kWal, &number).ok());
  uint8_t type;
  std::string payload;
  bool eof;
  ASSERT_TRUE(reader->ReadRecord(&type, &payload, &eof).ok());
  ASSERT_TRUE(reader->ReadRecord(&type, &payload, &eof).ok());
  EXPECT_EQ(reader->last_record_offset(), offsets[1]);
  Status s = reader->ReadRecord(&type, &payload, &eof);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("zero record type"), std::string::npos) << s.ToString();
  EXPECT_TRUE(reader->ReadRecord(&type, &payload, &eof).IsCorruption());
}

TEST_F(LogTest, BitFlipInLastRecordIsTornTail) {
  auto recs = SmallRecords(10, 60);
  auto offsets = WriteLog(recs);
  std::string bad = Contents(path_);
  for (uint64_t pos = offsets.back(); pos < bad.size(); ++pos) {
    std::string b = bad;
    b[pos] ^= 0x04;
    SetContents(path_, b);
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.ok()) << "pos " << pos << ": " << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_EQ(r.valid_end, offsets.back());
    ExpectPrefix(r.recs, recs, recs.size() - 1);
  }
}

// ------------------------------------------------------------------------- sync marks

// Sync marks are written once a sync moved the durable end, never returned to the caller,
// and never claim more than was synced before them.
TEST_F(LogTest, SyncMarksAreInvisibleAndClaimWhatWasSynced) {
  auto recs = SmallRecords(6, 40);
  auto writer = NewWriter(path_);
  std::vector<uint64_t> ends;
  for (size_t i = 0; i < recs.size(); ++i) {
    ASSERT_TRUE(writer->AddRecord(recs[i].type, recs[i].payload).ok());
    ends.push_back(writer->size());
    if (i == 1 || i == 3) {
      ASSERT_TRUE(writer->Sync().ok());
    }
  }
  EXPECT_TRUE(writer->AddRecord(kSyncMarkType, "x").IsInvalidArgument());
  ASSERT_TRUE(writer->Close().ok());
  // Two marks (after the syncs at records 1 and 3), each a 17-byte frame.
  const uint64_t mark_size = kRecordHeaderSize + kSyncMarkPayloadSize;
  EXPECT_EQ(ends[2] - ends[1], mark_size + kRecordHeaderSize + recs[2].payload.size());
  EXPECT_EQ(Contents(path_).size(), kFileHeaderSize + 2 * mark_size + 6 * (kRecordHeaderSize + 40));
  std::unique_ptr<LogReader> reader;
  ASSERT_TRUE(LogReader::Open(Env::Default(), path_, &reader).ok());
  uint64_t number;
  ASSERT_TRUE(reader->ReadHeader(LogKind::kWal, &number).ok());
  EXPECT_EQ(reader->format_version(), kLogFormatVersion);
  std::vector<Rec> got;
  while (true) {
    Rec rec;
    bool eof = false;
    ASSERT_TRUE(reader->ReadRecord(&rec.type, &rec.payload, &eof).ok());
    if (eof) break;
    if (got.size() == 3) {
      EXPECT_EQ(reader->synced_claim(), ends[1]);
    }
    got.push_back(std::move(rec));
  }
  ExpectPrefix(got, recs, recs.size());
  EXPECT_EQ(reader->synced_claim(), ends[3]);
  // Manifests carry no marks and stay format version 1.
  const std::string manifest = dir_ + "/MANIFEST-000001";
  auto m = NewWriter(manifest, LogKind::kManifest);
  ASSERT_TRUE(m->AddRecord(1, "a").ok());
  ASSERT_TRUE(m->Sync().ok());
  ASSERT_TRUE(m->AddRecord(1, "b").ok());
  ASSERT_TRUE(m->Close().ok());
  EXPECT_EQ(Contents(manifest).size(), kFileHeaderSize + 2 * (kRecordHeaderSize + 1));
  EXPECT_EQ(DecodeFixed32(Contents(manifest).data() + kLogMagicSize), 1u);
}

// A power loss kept a later unsynced page and lost an earlier one: with lost writes
// allowed (the newest WAL), the damage is a torn tail that drops the records after it,
// and every record up to the last sync survives. Without (an older WAL), corruption.
TEST_F(LogTest, DamagePastTheLastSyncIsALostWriteInTheNewestLog) {
  auto recs = SmallRecords(10, 60);
  // Records 0-3 durable; 4 carries the mark.
  const std::vector<uint64_t> offsets = WriteLogSyncedThrough(recs, 3);
  const std::string full = Contents(path_);
  // Record 4 starts after the mark in front of it.
  const uint64_t r4 = offsets[4] + kRecordHeaderSize + kSyncMarkPayloadSize;
  for (uint64_t pos : {r4 + 1, r4 + kRecordHeaderSize + 20, offsets[6] + 30}) {
    std::string bad = full;
    bad[pos] ^= 0x20;
    SetContents(path_, bad);
    const size_t first_bad = pos < offsets[5] ? 4 : 6;
    const uint64_t bad_offset = first_bad == 4 ? r4 : offsets[6];
    ReadResult r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
    ASSERT_TRUE(r.status.ok()) << "pos " << pos << ": " << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_TRUE(r.lost_write);
    EXPECT_EQ(r.valid_end, bad_offset);
    ExpectPrefix(r.recs, recs, first_bad);
    ReadResult strict = ReadLog(path_);
    ASSERT_TRUE(strict.status.IsCorruption()) << strict.status.ToString();
    EXPECT_NE(strict.status.ToString().find("offset " + std::to_string(bad_offset)), std::string::npos);
  }
  // A zeroed (lost) page between valid records reads the same way.
  std::string zeroed = full;
  std::fill(zeroed.begin() + static_cast<ptrdiff_t>(offsets[6]),
            zeroed.begin() + static_cast<ptrdiff_t>(offsets[8]), '\0');
  SetContents(path_, zeroed);
  ReadResult r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_TRUE(r.lost_write);
  ExpectPrefix(r.recs, recs, 6);
}

// Damage below an offset that a later mark claims durable is corruption even in the
// newest log; so is damage in a version 1 file, which has no marks to tell.
TEST_F(LogTest, DamageInsideTheSyncedRegionIsCorruption) {
  auto recs = SmallRecords(10, 60);
  const std::vector<uint64_t> offsets = WriteLogSyncedThrough(recs, 5);
  const std::string full = Contents(path_);
  std::string bad = full;
  bad[offsets[2] + kRecordHeaderSize + 7] ^= 0x01;
  SetContents(path_, bad);
  ReadResult r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
  ASSERT_TRUE(r.status.IsCorruption()) << r.status.ToString();
  EXPECT_EQ(r.status.ToString(),
            "Corruption: " + path_ + ": offset " + std::to_string(offsets[2]) +
                ": checksum mismatch (a later sync mark says the file was durable through "
                "offset " +
                std::to_string(offsets[6]) + ")");
  ExpectPrefix(r.recs, recs, 2);

  // A version 1 WAL (as TideSQL 0.2 wrote): made from a manifest, which has no marks and
  // version 1, by giving it the WAL magic.
  auto plain = WriteLog(recs, LogKind::kManifest);
  std::string m = Contents(path_);
  m[plain[2] + kRecordHeaderSize + 7] ^= 0x01;
  std::memcpy(m.data(), kWalMagic, kLogMagicSize);
  EncodeFixed32(m.data() + kFileHeaderSize - 4, crc32c::Mask(crc32c::Value(m.data(), kFileHeaderSize - 4)));
  SetContents(path_, m);
  r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
  ASSERT_TRUE(r.status.IsCorruption()) << r.status.ToString();
  EXPECT_EQ(r.status.ToString(),
            "Corruption: " + path_ + ": offset " + std::to_string(plain[2]) + ": checksum mismatch");
}

// Seal claims every record: damage in any of them is corruption; damage in the final
// mark itself is a torn tail that costs nothing.
TEST_F(LogTest, SealedLogCallsDamageInItsLastRecordCorruption) {
  auto recs = SmallRecords(5, 60);
  auto writer = NewWriter(path_);
  std::vector<uint64_t> offsets;
  for (const Rec& rec : recs) {
    offsets.push_back(writer->size());
    ASSERT_TRUE(writer->AddRecord(rec.type, rec.payload).ok());
  }
  const uint64_t end = writer->size();
  ASSERT_TRUE(writer->Seal().ok());
  ASSERT_TRUE(writer->Close().ok());
  const std::string full = Contents(path_);
  ASSERT_EQ(full.size(), end + kRecordHeaderSize + kSyncMarkPayloadSize);
  std::string bad = full;
  bad[offsets.back() + kRecordHeaderSize + 5] ^= 0x01;
  SetContents(path_, bad);
  ReadResult r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
  ASSERT_TRUE(r.status.IsCorruption()) << r.status.ToString();
  bad = full;
  bad[end + kRecordHeaderSize + 2] ^= 0x01;
  SetContents(path_, bad);
  r = ReadLog(path_, LogKind::kWal, LogReader::kDefaultChunkSize, true);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_TRUE(r.torn);
  EXPECT_FALSE(r.lost_write);
  EXPECT_EQ(r.valid_end, end);
  ExpectPrefix(r.recs, recs, recs.size());
}

TEST_F(LogTest, BadFileHeader) {
  auto recs = SmallRecords(3, 20);
  WriteLog(recs);
  const std::string full = Contents(path_);

  for (size_t pos = 0; pos < kFileHeaderSize; ++pos) {
    std::string bad = full;
    bad[pos] ^= 0x20;
    SetContents(path_, bad);
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.IsCorruption()) << "pos " << pos << ": " << r.status.ToString();
    EXPECT_NE(r.status.message().find(path_ + ": offset 0"), std::string::npos) << r.status.ToString();
  }

  // Truncated header: corruption unless zero.
  for (size_t n = 1; n < kFileHeaderSize; ++n) {
    SetContents(path_, full.substr(0, n));
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.IsCorruption()) << n << ": " << r.status.ToString();
  }

  // A newer format version (with a valid header crc) is NotSupported, not corruption.
  std::string newer = full;
  EncodeFixed32(newer.data() + kLogMagicSize, kLogFormatVersion + 1);
  EncodeFixed32(newer.data() + kFileHeaderSize - 4,
                crc32c::Mask(crc32c::Value(newer.data(), kFileHeaderSize - 4)));
  SetContents(path_, newer);
  ReadResult r = ReadLog(path_);
  EXPECT_TRUE(r.status.IsNotSupported()) << r.status.ToString();

  // Zeroed header in front of data is corruption.
  std::string zeroed = full;
  std::fill(zeroed.begin(), zeroed.begin() + kFileHeaderSize, '\0');
  SetContents(path_, zeroed);
  r = ReadLog(path_);
  EXPECT_TRUE(r.status.IsCorruption()) << r.status.ToString();
}

TEST_F(LogTest, EmptyOrZeroFileIsEmptyTornLog) {
  for (size_t n : {size_t{0}, size_t{5}, kFileHeaderSize, size_t{4096}}) {
    SetContents(path_, std::string(n, '\0'));
    ReadResult r = ReadLog(path_);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status.ToString();
    EXPECT_TRUE(r.torn);
    EXPECT_EQ(r.valid_end, 0u);
    EXPECT_EQ(r.log_number, 0u);
    EXPECT_TRUE(r.recs.empty());
  }
}

TEST_F(LogTest, ReadRecordBeforeHeaderIsAnError) {
  WriteLog(SmallRecords(2, 5));
  std::unique_ptr<LogReader> reader;
  ASSERT_TRUE(LogReader::Open(Env::Default(), path_, &reader).ok());
  uint8_t type;
  std::string payload;
  bool eof;
  EXPECT_TRUE(reader->ReadRecord(&type, &payload, &eof).IsInvalidArgument());
}

TEST_F(LogTest, WritebackCoversEachAppendedRangeOnceItIsBigEnough) {
  int appends = 0;
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(Env::Default()->NewWritableFile(path_, options, &file).ok());
  auto counting = std::make_unique<CountingFile>(std::move(file), &appends);
  CountingFile* f = counting.get();
  LogWriter writer(std::move(counting), LogKind::kWal, 3);
  const std::string payload(1000, 'p');
  ASSERT_TRUE(writer.AddRecord(1, payload).ok());
  writer.StartWriteback(4096);
  EXPECT_TRUE(f->writebacks.empty()) << "less than min_bytes appended";
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer.AddRecord(1, payload).ok());
  writer.StartWriteback(4096);
  ASSERT_EQ(f->writebacks.size(), 1u);
  EXPECT_EQ(f->writebacks[0], std::make_pair(uint64_t{0}, writer.size()));
  const uint64_t first_end = writer.size();
  writer.StartWriteback(1);
  EXPECT_EQ(f->writebacks.size(), 1u) << "nothing new since the last call";
  ASSERT_TRUE(writer.AddRecord(1, payload).ok());
  writer.StartWriteback(1);
  ASSERT_EQ(f->writebacks.size(), 2u);
  EXPECT_EQ(f->writebacks[1], std::make_pair(first_end, writer.size() - first_end));
  ASSERT_TRUE(writer.Close().ok());
  writer.StartWriteback(1);  // after Close: ignored
  EXPECT_EQ(f->writebacks.size(), 2u);
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.recs.size(), 7u);
}

TEST_F(LogTest, AddRecordsIsOneAppend) {
  int appends = 0;
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(Env::Default()->NewWritableFile(path_, options, &file).ok());
  LogWriter writer(std::make_unique<CountingFile>(std::move(file), &appends), LogKind::kWal, 3);

  auto recs = SmallRecords(100, 33);
  std::vector<LogWriter::Record> batch;
  for (const Rec& r : recs) batch.push_back({r.type, r.payload});
  ASSERT_TRUE(writer.AddRecords(batch).ok());
  EXPECT_EQ(appends, 1);  // header + 100 records
  ASSERT_TRUE(writer.AddRecord(9, "single").ok());
  EXPECT_EQ(appends, 2);
  ASSERT_TRUE(writer.AddRecords(batch).ok());
  EXPECT_EQ(appends, 3);
  ASSERT_TRUE(writer.AddRecords({}).ok());
  EXPECT_EQ(appends, 3);

  // A bad record rejects the whole batch and appends nothing.
  batch[50].type = 0;
  EXPECT_TRUE(writer.AddRecords(batch).IsInvalidArgument());
  EXPECT_EQ(appends, 3);
  EXPECT_TRUE(writer.AddRecord(0, "x").IsInvalidArgument());
  EXPECT_TRUE(writer.status().ok());  // validation errors are not sticky
  ASSERT_TRUE(writer.Close().ok());

  std::vector<Rec> want = recs;
  want.push_back({9, "single"});
  want.insert(want.end(), recs.begin(), recs.end());
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.log_number, 3u);
  ExpectPrefix(r.recs, want, want.size());
}

TEST_F(LogTest, ReaderMemoryDoesNotGrowWithFileSize) {
  constexpr size_t kChunk = 4096;
  auto recs = SmallRecords(20000, 200);
  WriteLog(recs);
  ReadResult r = ReadLog(path_, LogKind::kWal, kChunk);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ExpectPrefix(r.recs, recs, recs.size());
  EXPECT_GT(Contents(path_).size(), 1000 * kChunk);
  EXPECT_LE(r.peak_buffer, 2 * kChunk);

  // One large record: the payload handed out is large, the read buffer is not.
  std::mt19937_64 rng(kSeed);
  recs.insert(recs.begin() + 10000, Rec{5, RandomBytes(&rng, 300000)});
  WriteLog(recs);
  r = ReadLog(path_, LogKind::kWal, kChunk);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ExpectPrefix(r.recs, recs, recs.size());
  EXPECT_LE(r.peak_buffer, 2 * kChunk);

  // Resynchronisation scans through a long zero tail with a small buffer, too.
  SetContents(path_, Contents(path_) + std::string(2 << 20, '\0'));
  r = ReadLog(path_, LogKind::kWal, kChunk);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_TRUE(r.torn);
  EXPECT_LE(r.peak_buffer, 2 * kChunk);

  // A damaged length that still fits in the file is checked chunk by chunk, not loaded.
  auto offsets = WriteLog(recs);
  std::string bad = Contents(path_);
  EncodeFixed32(bad.data() + offsets[100] + 4, 3 << 20);
  SetContents(path_, bad);
  r = ReadLog(path_, LogKind::kWal, kChunk);
  ASSERT_TRUE(r.status.IsCorruption()) << r.status.ToString();
  EXPECT_NE(r.status.message().find("offset " + std::to_string(offsets[100])), std::string::npos);
  EXPECT_LE(r.peak_buffer, 2 * kChunk);
}

TEST_F(LogTest, WriterErrorsAreStickyAndSizeMarksLastGoodRecord) {
  FaultInjectionEnv env;
  auto writer = NewWriter(path_, LogKind::kWal, 1, &env);
  auto recs = SmallRecords(10, 50);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer->AddRecord(recs[i].type, recs[i].payload).ok());
  const uint64_t good_end = writer->size();
  env.SetNoSpaceAfterBytes(env.bytes_appended() + 20);  // the next record is written partly
  Status s = writer->AddRecord(recs[5].type, recs[5].payload);
  ASSERT_TRUE(s.IsNoSpace()) << s.ToString();
  env.ClearNoSpace();
  EXPECT_TRUE(writer->AddRecord(recs[6].type, recs[6].payload).IsNoSpace());
  EXPECT_TRUE(writer->Sync().IsNoSpace());
  EXPECT_EQ(writer->size(), good_end);
  EXPECT_TRUE(writer->Close().IsNoSpace());
  uint64_t size = 0;
  ASSERT_TRUE(env.GetFileSize(path_, &size).ok());
  // The partial record, then the zeros preallocated past it (a failed writer leaves them).
  EXPECT_TRUE(size == good_end + 20 || size == kWalPreallocateBytes) << size;

  // The partial record reads as a torn tail ending at size().
  ReadResult r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_TRUE(r.torn);
  EXPECT_EQ(r.valid_end, good_end);
  ExpectPrefix(r.recs, recs, 5);

  // Recovery: truncate to size(), continue the log.
  ASSERT_TRUE(env.TruncateFile(path_, good_end).ok());
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env.NewAppendableFile(path_, options, &file).ok());
  LogWriter again(std::move(file), LogKind::kWal, 1, false);
  for (int i = 5; i < 10; ++i) ASSERT_TRUE(again.AddRecord(recs[i].type, recs[i].payload).ok());
  ASSERT_TRUE(again.Close().ok());
  r = ReadLog(path_);
  ASSERT_TRUE(r.status.ok());
  EXPECT_FALSE(r.torn);
  ExpectPrefix(r.recs, recs, 10);
}

TEST_F(LogTest, FailedSyncIsSticky) {
  FaultInjectionEnv env;
  auto writer = NewWriter(path_, LogKind::kWal, 1, &env);
  ASSERT_TRUE(writer->AddRecord(1, "a").ok());
  env.SetFailSync(true);
  EXPECT_TRUE(writer->Sync().IsIOError());
  env.SetFailSync(false);
  EXPECT_TRUE(writer->Sync().IsIOError());
  EXPECT_TRUE(writer->AddRecord(1, "b").IsIOError());
}

// Power loss at random points: recovery always reads a prefix of what was written, and
// everything synced survives.
TEST_F(LogTest, PowerLossLeavesReadablePrefix) {
  for (PowerLossMode mode : {PowerLossMode::kDropUnsynced, PowerLossMode::kTornUnsynced}) {
    int torn_tails = 0;
    int kept_unsynced = 0;
    for (uint64_t seed = 1; seed <= 16; ++seed) {
      std::mt19937_64 rng(seed);
      FaultInjectionEnv env;
      std::vector<Rec> recs;
      size_t synced = 0;
      {
        auto writer = NewWriter(path_, LogKind::kWal, seed, &env);
        ASSERT_TRUE(writer->Sync().ok());  // header durable
        ASSERT_TRUE(env.SyncDir(dir_).ok());
        const int n = 20 + static_cast<int>(rng() % 50);
        for (int i = 0; i < n; ++i) {
          recs.push_back({static_cast<uint8_t>(1 + rng() % 9), RandomBytes(&rng, rng() % 3000)});
          if (rng() % 4 == 0) {
            std::vector<LogWriter::Record> batch{{recs.back().type, recs.back().payload}};
            recs.push_back({2, RandomBytes(&rng, rng() % 100)});
            batch.push_back({recs.back().type, recs.back().payload});
            ASSERT_TRUE(writer->AddRecords(batch).ok());
          } else {
            ASSERT_TRUE(writer->AddRecord(recs.back().type, recs.back().payload).ok());
          }
          if (rng() % 8 == 0) {
            ASSERT_TRUE(writer->Sync().ok());
            synced = recs.size();
          }
        }
        env.SetFilesystemActive(false);  // the process dies with the writer open
      }
      ASSERT_TRUE(env.SimulatePowerLoss(mode, seed).ok());
      ReadResult r = ReadLog(path_);
      ASSERT_TRUE(r.status.ok()) << "seed " << seed << ": " << r.status.ToString();
      EXPECT_EQ(r.log_number, seed);
      ASSERT_GE(r.recs.size(), synced) << "seed " << seed;
      ASSERT_LE(r.recs.size(), recs.size());
      ExpectPrefix(r.recs, recs, r.recs.size());
      if (mode == PowerLossMode::kDropUnsynced) {
        EXPECT_EQ(r.recs.size(), synced);
        EXPECT_TRUE(!r.torn || r.zero_tail);  // only the preallocated zeros follow
      }
      torn_tails += r.torn ? 1 : 0;
      kept_unsynced += r.recs.size() > synced ? 1 : 0;
    }
    if (mode == PowerLossMode::kTornUnsynced) {
      EXPECT_GT(torn_tails, 0);  // the seeds do exercise torn writes
      EXPECT_GT(kept_unsynced, 0);
    }
  }
}

}  // namespace
}  // namespace tidesdb
