#include "sst/value_log.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sst/compression.h"
#include "tidesdb/env.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace tidesdb {
namespace {

constexpr uint64_t kSeed = 0x5eed2024;
constexpr uint64_t kFileNumber = 42;
const std::string kFileName = "000042.vlog";

// In-memory files over a shared string, so tests can flip bits and truncate freely.
class MemWritableFile : public WritableFile {
 public:
  MemWritableFile(std::shared_ptr<std::string> data, int fail_after_appends = -1)
      : data_(std::move(data)), appends_left_(fail_after_appends) {}
  Status Append(Slice d) override {
    if (appends_left_ == 0) {
      // A torn append: half the bytes land, then the device fails.
      data_->append(d.data(), d.size() / 2);
      return Status::IOError("injected append failure");
    }
    if (appends_left_ > 0) --appends_left_;
    data_->append(d.data(), d.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override {
    ++syncs;
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }
  uint64_t Size() const override { return data_->size(); }
  int syncs = 0;

 private:
  std::shared_ptr<std::string> data_;
  int appends_left_;
};

class MemRandomAccessFile : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(std::shared_ptr<const std::string> data) : data_(std::move(data)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset > data_->size()) {
      *result = Slice();
      return Status::OK();
    }
    const size_t avail = std::min<uint64_t>(n, data_->size() - offset);
    std::memcpy(scratch, data_->data() + offset, avail);
    *result = Slice(scratch, avail);
    return Status::OK();
  }

 private:
  std::shared_ptr<const std::string> data_;
};

Status OpenReader(std::shared_ptr<const std::string> data, std::unique_ptr<ValueLogReader>* reader,
                  uint64_t file_size = UINT64_MAX) {
  if (file_size == UINT64_MAX) file_size = data->size();
  return ValueLogReader::Open(kFileName, kFileNumber, std::make_unique<MemRandomAccessFile>(std::move(data)),
                              file_size, reader);
}

// Value i of a run: mostly 1..4 KiB, every 200th one large (up to 1 MiB; value 0 is exactly
// 1 MiB); even values compress well, odd ones are random bytes.
std::string ValueFor(uint64_t seed, size_t i) {
  std::mt19937_64 rng(seed * 1000003 + i);
  size_t size;
  if (i == 0) {
    size = size_t{1} << 20;
  } else if (i % 200 == 0) {
    size = (256u << 10) + rng() % (768u << 10);
  } else {
    size = 1024 + rng() % 3072;
  }
  std::string v(size, '\0');
  if (i % 2 == 0) {
    for (size_t p = 0; p < size; ++p) v[p] = "key-value separated "[(p + i) % 20];
    for (int k = 0; k < 8; ++k) v[rng() % size] = static_cast<char>(rng());
  } else {
    for (size_t p = 0; p < size; p += 8) {
      const uint64_t r = rng();
      std::memcpy(&v[p], &r, std::min<size_t>(8, size - p));
    }
  }
  return v;
}

struct WrittenLog {
  std::shared_ptr<std::string> data = std::make_shared<std::string>();
  std::vector<ValuePointer> ptrs;
};

WrittenLog WriteLog(CompressionType type, size_t n, uint64_t seed) {
  WrittenLog log;
  ValueLogWriter writer(std::make_unique<MemWritableFile>(log.data), kFileNumber, type);
  for (size_t i = 0; i < n; ++i) {
    ValuePointer ptr;
    Status s = writer.Add(ValueFor(seed, i), &ptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    log.ptrs.push_back(ptr);
  }
  EXPECT_TRUE(writer.Finish().ok());
  EXPECT_EQ(writer.FileSize(), log.data->size());
  EXPECT_EQ(writer.num_records(), n);
  return log;
}

void ExpectCorruptionAt(const Status& s, uint64_t offset, const std::string& what = "") {
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  const std::string prefix = kFileName + ": offset " + std::to_string(offset) + ": ";
  EXPECT_EQ(s.message().rfind(prefix, 0), 0u) << s.ToString();
  if (!what.empty()) {
    EXPECT_NE(s.message().find(what), std::string::npos) << s.ToString();
  }
}

TEST(ValueLog, RoundTripTenThousandValuesReopenAndForEach) {
  const size_t kCount = 10000;
  WrittenLog log = WriteLog(CompressionType::kLZ4, kCount, kSeed);

  size_t compressed = 0, raw = 0;
  uint64_t expected_offset = kValueLogHeaderSize;
  for (size_t i = 0; i < kCount; ++i) {
    const ValuePointer& p = log.ptrs[i];
    ASSERT_EQ(p.file_number, kFileNumber);
    ASSERT_EQ(p.offset, expected_offset);
    expected_offset += p.size;
    const size_t value_size = ValueFor(kSeed, i).size();
    if (p.size < value_size) ++compressed;
    if (p.size > value_size) ++raw;
  }
  EXPECT_EQ(expected_offset, log.data->size());
  // Even values compress; odd (random) values are stored raw, never bigger than value +
  // header.
  EXPECT_GT(compressed, kCount / 3);
  EXPECT_GT(raw, kCount / 3);

  // "Reopen": a fresh reader over the finished bytes, as after a restart.
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(log.data, &reader).ok());
  std::string value;
  for (size_t i = 0; i < kCount; ++i) {
    Status s = reader->Get(log.ptrs[i], &value);
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
    ASSERT_TRUE(value == ValueFor(kSeed, i)) << i;
  }

  size_t seen = 0;
  Status s = reader->ForEach([&](uint64_t offset, uint64_t size, Slice v) {
    EXPECT_EQ(offset, log.ptrs[seen].offset);
    EXPECT_EQ(size, log.ptrs[seen].size);
    EXPECT_TRUE(v == ValueFor(kSeed, seen)) << seen;
    ++seen;
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen, kCount);
}

TEST(ValueLog, EveryCompressionTypeRoundTrips) {
  for (CompressionType type :
       {CompressionType::kNone, CompressionType::kSnappy, CompressionType::kLZ4, CompressionType::kZstd}) {
    SCOPED_TRACE(CompressionTypeName(type));
    WrittenLog log = WriteLog(type, 401, kSeed + 1);
    std::unique_ptr<ValueLogReader> reader;
    ASSERT_TRUE(OpenReader(log.data, &reader).ok());
    std::string value;
    for (size_t i = 0; i < log.ptrs.size(); ++i) {
      ASSERT_TRUE(reader->Get(log.ptrs[i], &value).ok()) << i;
      ASSERT_TRUE(value == ValueFor(kSeed + 1, i)) << i;
      if (type == CompressionType::kNone) {
        EXPECT_GT(log.ptrs[i].size, value.size());
      }
    }
  }
}

TEST(ValueLog, OnDiskThroughDefaultEnv) {
  Env* env = Env::Default();
  char dir_template[] = "/tmp/value_log_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string fname = dir + "/000007.vlog";
  std::vector<ValuePointer> ptrs;
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env->NewWritableFile(fname, EnvOptions(), &file).ok());
    ValueLogWriter writer(std::move(file), 7, CompressionType::kZstd);
    for (size_t i = 0; i < 300; ++i) {
      ValuePointer p;
      ASSERT_TRUE(writer.Add(ValueFor(kSeed + 2, i), &p).ok());
      ptrs.push_back(p);
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  uint64_t size = 0;
  ASSERT_TRUE(env->GetFileSize(fname, &size).ok());
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(env->NewRandomAccessFile(fname, &file).ok());
  std::unique_ptr<ValueLogReader> reader;
  Status s = ValueLogReader::Open(fname, 7, std::move(file), size, &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string value;
  for (size_t i = 0; i < ptrs.size(); ++i) {
    ASSERT_TRUE(reader->Get(ptrs[i], &value).ok()) << i;
    ASSERT_TRUE(value == ValueFor(kSeed + 2, i)) << i;
  }
  // Opened under another file number: the header disagrees.
  ASSERT_TRUE(env->NewRandomAccessFile(fname, &file).ok());
  std::unique_ptr<ValueLogReader> wrong;
  EXPECT_TRUE(ValueLogReader::Open(fname, 8, std::move(file), size, &wrong).IsCorruption());
  reader.reset();
  EXPECT_TRUE(env->RemoveFile(fname).ok());
  EXPECT_TRUE(env->RemoveDir(dir).ok());
}

TEST(ValueLog, EmptyLogAndEmptyValue) {
  auto data = std::make_shared<std::string>();
  {
    ValueLogWriter writer(std::make_unique<MemWritableFile>(data), kFileNumber, CompressionType::kLZ4);
    ASSERT_TRUE(writer.Finish().ok());
    ValuePointer p;
    EXPECT_TRUE(writer.Add("late", &p).IsInvalidArgument());
  }
  ASSERT_EQ(data->size(), kValueLogHeaderSize);
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(data, &reader).ok());
  int calls = 0;
  ASSERT_TRUE(reader
                  ->ForEach([&](uint64_t, uint64_t, Slice) {
                    ++calls;
                    return Status::OK();
                  })
                  .ok());
  EXPECT_EQ(calls, 0);

  data = std::make_shared<std::string>();
  ValueLogWriter writer(std::make_unique<MemWritableFile>(data), kFileNumber, CompressionType::kZstd);
  ValuePointer empty, small;
  ASSERT_TRUE(writer.Add("", &empty).ok());
  ASSERT_TRUE(writer.Add("x", &small).ok());
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(empty.size, kValueLogMinRecordSize);
  ASSERT_TRUE(OpenReader(data, &reader).ok());
  std::string v = "junk";
  ASSERT_TRUE(reader->Get(empty, &v).ok());
  EXPECT_EQ(v, "");
  ASSERT_TRUE(reader->Get(small, &v).ok());
  EXPECT_EQ(v, "x");
}

TEST(ValueLog, ForEachStopsAtCallbackError) {
  WrittenLog log = WriteLog(CompressionType::kNone, 10, kSeed);
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(log.data, &reader).ok());
  int calls = 0;
  Status s = reader->ForEach(
      [&](uint64_t, uint64_t, Slice) { return ++calls == 3 ? Status::Aborted("enough") : Status::OK(); });
  EXPECT_TRUE(s.IsAborted());
  EXPECT_EQ(calls, 3);
}

TEST(ValueLog, WriteErrorIsSticky) {
  auto data = std::make_shared<std::string>();
  // Header + 2 records (2 appends each) succeed; the 6th append tears.
  ValueLogWriter writer(std::make_unique<MemWritableFile>(data, 5), kFileNumber, CompressionType::kNone);
  ValuePointer p;
  ASSERT_TRUE(writer.Add(std::string(2000, 'a'), &p).ok());
  ASSERT_TRUE(writer.Add(std::string(2000, 'b'), &p).ok());
  EXPECT_TRUE(writer.Add(std::string(2000, 'c'), &p).IsIOError());
  EXPECT_TRUE(writer.Add("d", &p).IsIOError());
  EXPECT_TRUE(writer.Finish().IsIOError());
}

// Small log with three records: compressible, random, compressible.
WrittenLog SmallLog() {
  WrittenLog log;
  ValueLogWriter writer(std::make_unique<MemWritableFile>(log.data), kFileNumber, CompressionType::kLZ4);
  for (size_t i : {2, 3, 4}) {
    ValuePointer p;
    EXPECT_TRUE(writer.Add(ValueFor(kSeed, i), &p).ok());
    log.ptrs.push_back(p);
  }
  EXPECT_TRUE(writer.Finish().ok());
  return log;
}

TEST(ValueLog, EveryBitFlipInARecordIsCorruptionNamingFileAndOffset) {
  WrittenLog log = SmallLog();
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(log.data, &reader).ok());
  std::string value;
  for (const ValuePointer& p : log.ptrs) {
    for (uint64_t pos = p.offset; pos < p.offset + p.size; ++pos) {
      const char mask = static_cast<char>(1 << (pos % 8));
      (*log.data)[pos] ^= mask;
      Status s = reader->Get(p, &value);
      ExpectCorruptionAt(s, p.offset, "value record checksum mismatch");
      if (pos % 97 == 0) {
        ExpectCorruptionAt(reader->ForEach([](uint64_t, uint64_t, Slice) { return Status::OK(); }), p.offset);
      }
      (*log.data)[pos] ^= mask;
    }
    ASSERT_TRUE(reader->Get(p, &value).ok());
  }
}

TEST(ValueLog, DamagedFileHeaderFailsOpen) {
  WrittenLog log = SmallLog();
  for (size_t pos = 0; pos < kValueLogHeaderSize; ++pos) {
    auto copy = std::make_shared<std::string>(*log.data);
    (*copy)[pos] ^= 0x10;
    std::unique_ptr<ValueLogReader> reader;
    Status s = OpenReader(copy, &reader);
    ExpectCorruptionAt(s, 0);
    EXPECT_EQ(reader, nullptr);
  }
  for (size_t len = 0; len < kValueLogHeaderSize; ++len) {
    std::unique_ptr<ValueLogReader> reader;
    ExpectCorruptionAt(OpenReader(std::make_shared<std::string>(log.data->substr(0, len)), &reader), 0);
  }
}

// A value log of a newer format version, its header otherwise intact, is refused as such
// (NotSupported, not Corruption: nothing is damaged, this build cannot read it).
TEST(ValueLog, NewerFormatVersionFailsOpen) {
  WrittenLog log = SmallLog();
  auto copy = std::make_shared<std::string>(*log.data);
  EncodeFixed32(copy->data() + 8, kValueLogFormatVersion + 1);
  EncodeFixed32(copy->data() + 20, crc32c::Mask(crc32c::Value(copy->data(), 20)));
  std::unique_ptr<ValueLogReader> reader;
  Status s = OpenReader(copy, &reader);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("value log format version 2 was written by a newer TideSQL; this build reads "
                             "version 1"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(reader, nullptr);
  // Version 0 never existed: damage.
  EncodeFixed32(copy->data() + 8, 0);
  EncodeFixed32(copy->data() + 20, crc32c::Mask(crc32c::Value(copy->data(), 20)));
  ExpectCorruptionAt(OpenReader(copy, &reader), 0, "unknown value log format version 0");
}

TEST(ValueLog, TruncatedFile) {
  WrittenLog log = SmallLog();
  const ValuePointer& last = log.ptrs.back();
  std::string value;
  // Cut inside the last record, at its start, and one byte into it.
  for (uint64_t cut :
       {last.offset + last.size / 2, last.offset, last.offset + 1, last.offset + last.size - 1}) {
    SCOPED_TRACE(cut);
    auto data = std::make_shared<std::string>(log.data->substr(0, cut));
    std::unique_ptr<ValueLogReader> reader;
    ASSERT_TRUE(OpenReader(data, &reader).ok());
    for (size_t i = 0; i + 1 < log.ptrs.size(); ++i) {
      ASSERT_TRUE(reader->Get(log.ptrs[i], &value).ok());
      EXPECT_TRUE(value == ValueFor(kSeed, i + 2));
    }
    ExpectCorruptionAt(reader->Get(last, &value), last.offset, "outside the file");
    int calls = 0;
    Status s = reader->ForEach([&](uint64_t, uint64_t, Slice) {
      ++calls;
      return Status::OK();
    });
    if (cut == last.offset) {
      EXPECT_TRUE(s.ok()) << s.ToString();  // a clean cut between records: just fewer records
    } else {
      ExpectCorruptionAt(s, last.offset, "truncated value record");
    }
    EXPECT_EQ(calls, 2);
  }
  // The reader was told a size larger than the bytes that are there (file shrank under it).
  auto data = std::make_shared<std::string>(log.data->substr(0, last.offset + 5));
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(data, &reader, log.data->size()).ok());
  ExpectCorruptionAt(reader->Get(last, &value), last.offset, "short read");
}

TEST(ValueLog, BadPointersAreCorruption) {
  WrittenLog log = SmallLog();
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(log.data, &reader).ok());
  const ValuePointer a = log.ptrs[0], b = log.ptrs[1];
  const uint64_t file_size = log.data->size();
  std::vector<ValuePointer> bad = {
      {kFileNumber, a.offset + 1, a.size},
      {kFileNumber, a.offset - 1, a.size},
      {kFileNumber, a.offset, a.size + 1},
      {kFileNumber, a.offset, a.size - 1},
      {kFileNumber, b.offset, a.size},
      {kFileNumber, a.offset, b.size},
      {kFileNumber, a.offset + a.size / 2, 100},
      {kFileNumber + 1, a.offset, a.size},
      {kFileNumber, 0, a.size},
      {kFileNumber, kValueLogHeaderSize - 1, a.size},
      {kFileNumber, a.offset, 0},
      {kFileNumber, a.offset, 3},
      {kFileNumber, a.offset, UINT64_MAX},
      {kFileNumber, UINT64_MAX, a.size},
      {kFileNumber, UINT64_MAX - 5, 10},
      {kFileNumber, file_size, 10},
      {kFileNumber, file_size - 5, 10},
  };
  std::string value;
  for (const ValuePointer& p : bad) {
    Status s = reader->Get(p, &value);
    ExpectCorruptionAt(s, p.offset);
  }
  ExpectCorruptionAt(reader->Get({kFileNumber, b.offset, a.size}, &value), b.offset, "checksum mismatch");
}

// A record copied byte for byte to another record's place (same length) is caught because
// the checksum covers the record's offset.
TEST(ValueLog, RecordMovedToAnotherOffsetIsCorruption) {
  auto data = std::make_shared<std::string>();
  ValueLogWriter writer(std::make_unique<MemWritableFile>(data), kFileNumber, CompressionType::kNone);
  ValuePointer a, b;
  ASSERT_TRUE(writer.Add(std::string(1500, 'a'), &a).ok());
  ASSERT_TRUE(writer.Add(std::string(1500, 'b'), &b).ok());
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_EQ(a.size, b.size);
  data->replace(b.offset, b.size, data->substr(a.offset, a.size));
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(data, &reader).ok());
  std::string value;
  ASSERT_TRUE(reader->Get(a, &value).ok());
  ExpectCorruptionAt(reader->Get(b, &value), b.offset, "value record checksum mismatch");
}

TEST(ValueLog, ConcurrentGets) {
  WrittenLog log = WriteLog(CompressionType::kZstd, 400, kSeed + 3);
  std::unique_ptr<ValueLogReader> reader;
  ASSERT_TRUE(OpenReader(log.data, &reader).ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string value;
      for (size_t i = t; i < log.ptrs.size(); i += 2) {
        if (!reader->Get(log.ptrs[i], &value).ok() || value != ValueFor(kSeed + 3, i)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace tidesdb
