#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cache/block_cache.h"
#include "db/dbformat.h"
#include "sst/compression.h"
#include "sst/format.h"
#include "sst/table_builder.h"
#include "sst/table_reader.h"
#include "sst/value_log.h"
#include "testutil/test_util.h"
#include "tidesdb/env.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace tidesdb {
namespace {

// ---------------------------------------------------------------------------------------
// In-memory files, so that tests can corrupt bytes without touching the disk.

class StringWritableFile final : public WritableFile {
 public:
  explicit StringWritableFile(std::string* dst) : dst_(dst) {}
  Status Append(Slice data) override {
    if (closed_) return Status::IOError("append after close");
    dst_->append(data);
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override {
    ++syncs;
    return Status::OK();
  }
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }
  uint64_t Size() const override { return dst_->size(); }
  int syncs = 0;

 private:
  std::string* dst_;
  bool closed_ = false;
};

class StringRandomAccessFile final : public RandomAccessFile {
 public:
  explicit StringRandomAccessFile(std::string contents) : contents_(std::move(contents)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset > contents_.size()) {
      *result = Slice();
      return Status::OK();
    }
    const size_t len = std::min<uint64_t>(n, contents_.size() - offset);
    std::copy_n(contents_.data() + offset, len, scratch);
    *result = Slice(scratch, len);
    return Status::OK();
  }

 private:
  const std::string contents_;
};

// ---------------------------------------------------------------------------------------

using Entry = std::pair<std::string, std::string>;  // internal key, value

std::string IKey(Slice user_key, SequenceNumber seq, ValueType type) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, type);
  return k;
}

std::string SeekKey(Slice user_key, SequenceNumber seq = kMaxSequence) {
  return IKey(user_key, seq, kValueTypeForSeek);
}

std::string UserKey(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "user%08d", i);
  return buf;
}

std::string EncodedPointer(uint64_t file, uint64_t offset, uint64_t size) {
  std::string s;
  ValuePointer{file, offset, size}.EncodeTo(&s);
  return s;
}

// Entries for user keys 0, 3, 6, ... (so 3i+1 and 3i+2 are absent), each with one to three
// versions of assorted types, newest (highest sequence) first.
std::vector<Entry> MakeEntries(int num_user_keys, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Entry> entries;
  SequenceNumber seq = 10;
  for (int i = 0; i < num_user_keys; ++i) {
    const std::string uk = UserKey(3 * i);
    const int versions = 1 + static_cast<int>(rng() % 3);
    std::vector<Entry> key_entries;
    for (int v = 0; v < versions; ++v) {
      seq += 1 + rng() % 5;
      std::string value;
      ValueType type;
      switch (rng() % 8) {
        case 0:
          type = ValueType::kDeletion;
          break;
        case 1:
          type = ValueType::kValueWithExpiry;
          PutFixed64(&value, 1700000000 + i);
          value += "expiring-" + std::to_string(i);
          break;
        case 2:
          type = ValueType::kValuePointer;
          value = EncodedPointer(7, 1000 + i, 50 + v);
          break;
        case 3:
          type = ValueType::kValuePointerWithExpiry;
          PutFixed64(&value, 1800000000 + i);
          value += EncodedPointer(8, 2000 + i, 60 + v);
          break;
        default:
          type = ValueType::kValue;
          value = "value-" + std::to_string(i) + "-" + std::to_string(v) + std::string(rng() % 40, 'x');
          break;
      }
      key_entries.emplace_back(IKey(uk, seq, type), value);
    }
    std::reverse(key_entries.begin(), key_entries.end());  // newest first
    for (auto& e : key_entries) entries.push_back(std::move(e));
  }
  return entries;
}

struct BuiltTable {
  std::string contents;
  TableProperties props;
};

BuiltTable BuildTable(const ColumnFamilyOptions& options, const std::vector<Entry>& entries,
                      ValueLogWriter* vlog = nullptr) {
  BuiltTable t;
  auto file = std::make_unique<StringWritableFile>(&t.contents);
  StringWritableFile* raw_file = file.get();
  TableBuilder builder(options, 42, std::move(file), vlog);
  for (const auto& [k, v] : entries) {
    Status s = builder.Add(k, v);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(entries.size(), builder.NumEntries());
  Status s = builder.Finish(&t.props);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(t.contents.size(), builder.FileSize());
  EXPECT_EQ(1, raw_file->syncs);
  return t;
}

Status OpenTable(const std::string& contents, BlockCache* cache, std::unique_ptr<TableReader>* reader,
                 uint64_t file_number = 5) {
  return TableReader::Open("000005.klog", file_number, std::make_unique<StringRandomAccessFile>(contents),
                           contents.size(), cache, reader);
}

size_t LowerBound(const std::vector<Entry>& entries, Slice target) {
  auto it = std::lower_bound(entries.begin(), entries.end(), target,
                             [](const Entry& e, Slice t) { return CompareInternalKey(e.first, t) < 0; });
  return static_cast<size_t>(it - entries.begin());
}

// Index of the last entry <= target, or -1.
long LastAtOrBefore(const std::vector<Entry>& entries, Slice target) {
  auto it = std::upper_bound(entries.begin(), entries.end(), target,
                             [](Slice t, const Entry& e) { return CompareInternalKey(t, e.first) < 0; });
  return static_cast<long>(it - entries.begin()) - 1;
}

ColumnFamilyOptions SmallBlockOptions(CompressionType compression) {
  ColumnFamilyOptions options;
  options.block_size = 4096;
  options.compression = compression;
  return options;
}

// ---------------------------------------------------------------------------------------

struct TableParam {
  CompressionType compression;
  bool with_cache;
};

class TableRoundTripTest : public ::testing::TestWithParam<TableParam> {};

TEST_P(TableRoundTripTest, HundredThousandEntries) {
  const uint32_t seed = 20240601;
  std::printf("seed %u\n", seed);
  const std::vector<Entry> entries = MakeEntries(50000, seed);
  ASSERT_GE(entries.size(), 100000u);
  BuiltTable t = BuildTable(SmallBlockOptions(GetParam().compression), entries);

  uint64_t deletions = 0, pointers = 0, key_bytes = 0, value_bytes = 0;
  SequenceNumber min_seq = kMaxSequence, max_seq = 0;
  for (const auto& [k, v] : entries) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(k, &p));
    deletions += p.type == ValueType::kDeletion;
    pointers += p.type == ValueType::kValuePointer || p.type == ValueType::kValuePointerWithExpiry;
    key_bytes += k.size();
    value_bytes += v.size();
    min_seq = std::min(min_seq, p.sequence);
    max_seq = std::max(max_seq, p.sequence);
  }

  std::unique_ptr<BlockCache> cache;
  if (GetParam().with_cache) cache = std::make_unique<BlockCache>(size_t{8} << 20);
  std::unique_ptr<TableReader> reader;
  Status s = OpenTable(t.contents, cache.get(), &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const TableProperties& props = reader->properties();
  EXPECT_EQ(42u, props.cf_id);
  EXPECT_EQ(entries.size(), props.num_entries);
  EXPECT_EQ(deletions, props.num_deletions);
  EXPECT_EQ(pointers, props.num_value_pointers);
  EXPECT_EQ(key_bytes, props.raw_key_bytes);
  EXPECT_EQ(value_bytes, props.raw_value_bytes);
  EXPECT_EQ(min_seq, props.min_sequence);
  EXPECT_EQ(max_seq, props.max_sequence);
  EXPECT_EQ(entries.front().first, props.smallest_key);
  EXPECT_EQ(entries.back().first, props.largest_key);
  EXPECT_GT(props.filter_size, 0u);
  EXPECT_GT(props.index_size, 0u);
  EXPECT_LT(props.data_size, t.contents.size());
  EXPECT_EQ(t.props.creation_time, props.creation_time);
  EXPECT_GT(props.creation_time, 1600000000u);

  // Forward and backward scans.
  auto it = reader->NewIterator(/*fill_cache=*/true);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, entries.size());
    ASSERT_EQ(entries[i].first, it->key()) << i;
    ASSERT_EQ(entries[i].second, it->value()) << i;
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(entries.size(), i);
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    --i;
    ASSERT_EQ(entries[i].first, it->key()) << i;
    ASSERT_EQ(entries[i].second, it->value()) << i;
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_EQ(0u, i);

  // Seeks at, before and between keys, on a seeded sample.
  std::mt19937 rng(seed + 1);
  for (int round = 0; round < 4000; ++round) {
    const int k = static_cast<int>(rng() % 150010);  // past the last user key (149997) too
    std::string target;
    switch (rng() % 3) {
      case 0:
        target = SeekKey(UserKey(k));
        break;
      case 1:
        target = SeekKey(UserKey(k), rng() % (max_seq + 10));
        break;
      default:
        target = entries[rng() % entries.size()].first;
        break;
    }
    const size_t lb = LowerBound(entries, target);
    it->Seek(target);
    if (lb == entries.size()) {
      EXPECT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(entries[lb].first, it->key());
      EXPECT_EQ(entries[lb].second, it->value());
      // Step back and forth across the seek position (block boundaries included).
      it->Prev();
      if (lb == 0) {
        EXPECT_FALSE(it->Valid());
      } else {
        ASSERT_TRUE(it->Valid());
        EXPECT_EQ(entries[lb - 1].first, it->key());
        it->Next();
        ASSERT_TRUE(it->Valid());
        EXPECT_EQ(entries[lb].first, it->key());
      }
    }
    const long prev = LastAtOrBefore(entries, target);
    it->SeekForPrev(target);
    if (prev < 0) {
      EXPECT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(entries[prev].first, it->key());
      it->Next();
      if (static_cast<size_t>(prev + 1) == entries.size()) {
        EXPECT_FALSE(it->Valid());
      } else {
        ASSERT_TRUE(it->Valid());
        EXPECT_EQ(entries[prev + 1].first, it->key());
      }
    }
    ASSERT_TRUE(it->status().ok());

    // Get: the first version at or below the target's sequence, if the user key matches.
    bool found = false;
    std::string found_key, value;
    s = reader->Get(target, &found, &found_key, &value);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const bool expect_found =
        lb < entries.size() && ExtractUserKey(entries[lb].first) == ExtractUserKey(target);
    ASSERT_EQ(expect_found, found) << "target user key " << ExtractUserKey(target);
    if (found) {
      EXPECT_EQ(entries[lb].first, found_key);
      EXPECT_EQ(entries[lb].second, value);
    }
  }

  // Get every present key at the latest sequence, and absent keys.
  for (size_t e = 0; e < entries.size(); e += 1 + rng() % 5) {
    const Slice uk = ExtractUserKey(entries[e].first);
    bool found = false;
    std::string found_key, value;
    ASSERT_TRUE(reader->Get(SeekKey(uk), &found, &found_key, &value).ok());
    ASSERT_TRUE(found);
    EXPECT_EQ(uk, ExtractUserKey(found_key));
  }
  int absent_found = 0;
  for (int k = 0; k < 150000; k += 3) {
    bool found = true;
    std::string found_key, value;
    ASSERT_TRUE(reader->Get(SeekKey(UserKey(k + 1)), &found, &found_key, &value).ok());
    absent_found += found ? 1 : 0;
  }
  EXPECT_EQ(0, absent_found);

  // ApproximateOffsetOf: 0 at the start, non-decreasing, data-sized near the end, the file
  // size past the last key.
  EXPECT_EQ(0u, reader->ApproximateOffsetOf(SeekKey("")));
  uint64_t last = 0;
  for (int k = 0; k < 150000; k += 1500) {
    const uint64_t off = reader->ApproximateOffsetOf(SeekKey(UserKey(k)));
    EXPECT_GE(off, last);
    last = off;
  }
  EXPECT_GT(last, props.data_size / 2);
  EXPECT_LT(last, props.data_size);
  EXPECT_EQ(t.contents.size(), reader->ApproximateOffsetOf(SeekKey("zzz")));
}

INSTANTIATE_TEST_SUITE_P(
    Compression, TableRoundTripTest,
    ::testing::Values(TableParam{CompressionType::kNone, false}, TableParam{CompressionType::kSnappy, false},
                      TableParam{CompressionType::kLZ4, true}, TableParam{CompressionType::kZstd, true}),
    [](const ::testing::TestParamInfo<TableParam>& info) {
      return CompressionTypeName(info.param.compression) + (info.param.with_cache ? "_cache" : "_nocache");
    });

// ---------------------------------------------------------------------------------------

TEST(TableTest, CompressionSavesSpaceOnlyWhenWorthIt) {
  std::vector<Entry> compressible, random_values;
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    compressible.emplace_back(IKey(UserKey(i), 100 + i, ValueType::kValue), std::string(100, 'a' + i % 3));
    std::string noise(100, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    random_values.emplace_back(IKey(UserKey(i), 100 + i, ValueType::kValue), noise);
  }
  for (CompressionType type : {CompressionType::kSnappy, CompressionType::kLZ4, CompressionType::kZstd}) {
    SCOPED_TRACE(CompressionTypeName(type));
    const BuiltTable raw = BuildTable(SmallBlockOptions(CompressionType::kNone), compressible);
    const BuiltTable packed = BuildTable(SmallBlockOptions(type), compressible);
    EXPECT_LT(packed.props.data_size * 4, raw.props.data_size);
    const BuiltTable raw_noise = BuildTable(SmallBlockOptions(CompressionType::kNone), random_values);
    const BuiltTable packed_noise = BuildTable(SmallBlockOptions(type), random_values);
    // Random bytes do not compress by 1/8: the blocks are stored raw, byte for byte.
    EXPECT_EQ(raw_noise.props.data_size, packed_noise.props.data_size);
    for (const BuiltTable* t : {&packed, &packed_noise}) {
      std::unique_ptr<TableReader> reader;
      ASSERT_TRUE(OpenTable(t->contents, nullptr, &reader).ok());
      const std::vector<Entry>& expected = t == &packed ? compressible : random_values;
      auto it = reader->NewIterator(false);
      size_t i = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
        ASSERT_EQ(expected[i].first, it->key());
        ASSERT_EQ(expected[i].second, it->value());
      }
      EXPECT_EQ(expected.size(), i);
      EXPECT_TRUE(it->status().ok());
    }
  }
}

// Inside a block an offset is interpolated between the block's bounds, so the share of
// the data between two keys follows the share of the entries even for ranges much smaller
// than a block (range estimates for query planning), for decimal text keys and for
// big-endian binary keys alike. Offsets never decrease, whatever bytes a probe holds.
TEST(TableTest, ApproximateRangeMatchesTheOffsetsOfItsBounds) {
  std::vector<Entry> entries;
  for (int i = 0; i < 5000; ++i) {
    entries.emplace_back(IKey(UserKey(i * 3), 100 + i, ValueType::kValue), std::string(60, 'v'));
  }
  const BuiltTable t = BuildTable(ColumnFamilyOptions(), entries);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(t.contents, nullptr, &reader).ok());
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  // Bounds before, inside and past the file, a few keys apart (one block) or far apart;
  // the empty limit means the end of the file, a bound shorter than a trailer the start.
  auto bound = [&](int k) { return k < 0 ? std::string() : SeekKey(UserKey(k)); };
  for (int round = 0; round < 5000; ++round) {
    const int from = static_cast<int>(rng() % 16000) - 200;
    const int width = round % 3 == 0 ? static_cast<int>(rng() % 10) : static_cast<int>(rng() % 16000);
    const std::string start = from < 0 && round % 2 ? std::string("x") : bound(from);
    const std::string limit = round % 11 == 0 ? std::string() : bound(std::max(from, 0) + width);
    uint64_t begin = 0, end = 0;
    reader->ApproximateRange(start, limit, &begin, &end);
    EXPECT_EQ(reader->ApproximateOffsetOf(start), begin) << from << " +" << width;
    EXPECT_EQ(limit.empty() ? t.contents.size() : reader->ApproximateOffsetOf(limit), end)
        << from << " +" << width;
  }
}

TEST(TableTest, ApproximateOffsetsFollowTheEntriesInsideBlocks) {
  for (bool binary : {false, true}) {
    SCOPED_TRACE(binary ? "binary keys" : "text keys");
    auto user_key = [binary](int i) {
      if (!binary) return UserKey(i);
      std::string k = "\x01\x02";  // a fixed prefix, as an index id would be
      const uint64_t n = static_cast<uint64_t>(i) * 7777;
      for (int b = 7; b >= 0; --b) k.push_back(static_cast<char>(n >> (8 * b)));
      return k;
    };
    constexpr int kKeys = 20000;
    std::vector<Entry> entries;
    for (int i = 0; i < kKeys; ++i) {
      entries.emplace_back(IKey(user_key(i), 100 + i, ValueType::kValue), std::string(100, 'v'));
    }
    const BuiltTable t = BuildTable(ColumnFamilyOptions(), entries);
    std::unique_ptr<TableReader> reader;
    ASSERT_TRUE(OpenTable(t.contents, nullptr, &reader).ok());
    auto offset = [&](const std::string& key) { return reader->ApproximateOffsetOf(SeekKey(key)); };

    uint64_t last = 0;
    for (int i = 0; i < kKeys; i += 7) {
      for (const std::string& probe :
           {user_key(i), user_key(i) + "\x01", user_key(i) + "z", user_key(i) + "\xff"}) {
        const uint64_t off = offset(probe);
        ASSERT_GE(off, last) << i;
        last = off;
      }
    }
    for (int width : {5, 50, 500, 5000}) {
      for (int from = 0; from + width <= kKeys; from += 997) {
        const uint64_t begin = offset(user_key(from)), end = offset(user_key(from + width));
        const double estimate =
            static_cast<double>(end - begin) / static_cast<double>(t.props.data_size) * kKeys;
        EXPECT_GE(estimate, width / 2.0) << "[" << from << ", " << from + width << ")";
        EXPECT_LE(estimate, width * 2.0) << "[" << from << ", " << from + width << ")";
      }
    }
  }
}

TEST(FormatTest, PropertiesRoundTripSkippingUnknownTags) {
  TableProperties p;
  p.cf_id = 0xfffffffe;
  p.smallest_key = IKey("a", 1, ValueType::kValue);
  p.largest_key = IKey("z", 2, ValueType::kDeletion);
  p.min_sequence = 1;
  p.max_sequence = kMaxSequence;
  p.num_entries = 10;
  p.num_deletions = 2;
  p.num_value_pointers = 3;
  p.raw_key_bytes = 100;
  p.raw_value_bytes = 1ull << 40;
  p.data_size = 5;
  p.index_size = 6;
  p.filter_size = 7;
  p.creation_time = 1700000000;
  p.filter_prefix_length = 12;
  std::string encoded;
  p.EncodeTo(&encoded);
  PutVarint32(&encoded, 999);  // a property from a newer version
  PutLengthPrefixedSlice(&encoded, "future");
  TableProperties q;
  ASSERT_TRUE(q.DecodeFrom(encoded).ok());
  std::string reencoded;
  q.EncodeTo(&reencoded);
  EXPECT_EQ(encoded.substr(0, reencoded.size()), reencoded);
  EXPECT_EQ(p.largest_key, q.largest_key);
  EXPECT_EQ(p.raw_value_bytes, q.raw_value_bytes);
  EXPECT_EQ(12u, q.filter_prefix_length);
  EXPECT_TRUE(q.DecodeFrom(encoded.substr(0, encoded.size() - 1)).IsCorruption());
  std::string bad_number;
  PutVarint32(&bad_number, kPropNumEntries);
  PutLengthPrefixedSlice(&bad_number, "\x80");
  EXPECT_TRUE(q.DecodeFrom(bad_number).IsCorruption());
}

TEST(FormatTest, FooterRoundTripAndChecks) {
  Footer f;
  f.filter_handle = BlockHandle(100, 20);
  f.index_handle = BlockHandle(125, uint64_t{1} << 62);
  f.properties_handle = BlockHandle(~uint64_t{0}, ~uint64_t{0});  // longest encodings fit
  std::string encoded;
  f.EncodeTo(&encoded);
  ASSERT_EQ(kFooterSize, encoded.size());
  Footer g;
  ASSERT_TRUE(g.DecodeFrom(encoded, "f.klog", 10).ok());
  EXPECT_EQ(f.index_handle.size(), g.index_handle.size());
  EXPECT_EQ(f.properties_handle.offset(), g.properties_handle.offset());
  std::string bad_version = encoded;
  EncodeFixed32(bad_version.data() + Footer::kHandlesSize, 2);
  Status s = g.DecodeFrom(bad_version, "f.klog", 10);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ("f.klog: offset 10: footer checksum mismatch", s.message());
  // A newer format version under a matching checksum is refused as such: not damage, a
  // file this build cannot read.
  EncodeFixed32(bad_version.data() + Footer::kHandlesSize + 4,
                crc32c::Mask(crc32c::Value(bad_version.data(), Footer::kHandlesSize + 4)));
  s = g.DecodeFrom(bad_version, "f.klog", 10);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_EQ("f.klog: key log format version 2 was written by a newer TideSQL; this build reads version 1",
            s.message());
  // Version 0 never existed: damage.
  EncodeFixed32(bad_version.data() + Footer::kHandlesSize, 0);
  EncodeFixed32(bad_version.data() + Footer::kHandlesSize + 4,
                crc32c::Mask(crc32c::Value(bad_version.data(), Footer::kHandlesSize + 4)));
  s = g.DecodeFrom(bad_version, "f.klog", 10);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ("f.klog: offset 10: unknown format version 0", s.message());
  EXPECT_TRUE(g.DecodeFrom(encoded.substr(1), "f.klog", 10).IsCorruption());
}

TEST(TableTest, DataBlocksGoThroughTheCache) {
  const std::vector<Entry> entries = MakeEntries(3000, 17);
  const BuiltTable t = BuildTable(SmallBlockOptions(CompressionType::kLZ4), entries);
  BlockCache cache(size_t{8} << 20);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(t.contents, &cache, &reader, /*file_number=*/77).ok());

  // A scan that must not fill the cache leaves it empty.
  auto scan = reader->NewIterator(/*fill_cache=*/false);
  size_t n = 0;
  for (scan->SeekToFirst(); scan->Valid(); scan->Next()) ++n;
  EXPECT_EQ(entries.size(), n);
  EXPECT_EQ(0u, cache.entries());

  // Point reads fill it; repeating one is a hit.
  bool found = false;
  std::string k, v;
  ASSERT_TRUE(reader->Get(entries[100].first, &found, &k, &v).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(1u, cache.entries());
  const uint64_t hits = cache.hits();
  ASSERT_TRUE(reader->Get(entries[100].first, &found, &k, &v).ok());
  EXPECT_EQ(hits + 1, cache.hits());
  EXPECT_EQ(entries[100].second, v);

  // A filling scan caches every data block, and a second reader of the same file number
  // reads them from the cache.
  auto fill = reader->NewIterator(/*fill_cache=*/true);
  for (fill->SeekToFirst(); fill->Valid(); fill->Next()) {
  }
  const size_t blocks = cache.entries();
  EXPECT_GT(blocks, 10u);
  const uint64_t misses = cache.misses();
  std::unique_ptr<TableReader> again;
  ASSERT_TRUE(OpenTable(t.contents, &cache, &again, /*file_number=*/77).ok());
  auto it = again->NewIterator(true);
  n = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) ++n;
  EXPECT_EQ(entries.size(), n);
  EXPECT_EQ(misses, cache.misses());
  EXPECT_EQ(blocks, cache.entries());
}

TEST(TableTest, EmptyTable) {
  const BuiltTable t = BuildTable(ColumnFamilyOptions(), {});
  std::unique_ptr<TableReader> reader;
  Status s = OpenTable(t.contents, nullptr, &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(0u, reader->properties().num_entries);
  auto it = reader->NewIterator(true);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek(SeekKey("a"));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(SeekKey("a"));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  bool found = true;
  std::string k, v;
  EXPECT_TRUE(reader->Get(SeekKey("a"), &found, &k, &v).ok());
  EXPECT_FALSE(found);
}

TEST(TableTest, NoFilterWhenBloomDisabled) {
  ColumnFamilyOptions options = SmallBlockOptions(CompressionType::kLZ4);
  options.bloom_fpr = 0;
  const std::vector<Entry> entries = MakeEntries(2000, 3);
  const BuiltTable t = BuildTable(options, entries);
  EXPECT_EQ(0u, t.props.filter_size);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(t.contents, nullptr, &reader).ok());
  for (const auto& [key, value] : entries) {
    bool found = false;
    std::string k, v;
    ASSERT_TRUE(reader->Get(key, &found, &k, &v).ok());
    ASSERT_TRUE(found);
    EXPECT_EQ(key, k);
    EXPECT_EQ(value, v);
  }
}

// Keys as a secondary index stores them: a 4-byte indexed value, then a 4-byte row id;
// values 0, 2, 4, ... (even) are present, each with three rows.
std::string IndexKey(uint32_t value, uint32_t row) {
  std::string k;
  for (uint32_t x : {value, row})
    for (int shift = 24; shift >= 0; shift -= 8) k.push_back(static_cast<char>((x >> shift) & 0xff));
  return k;
}

TEST(TableTest, PrefixFilterAnswersForRangesInsideOnePrefix) {
  std::vector<Entry> entries;
  for (uint32_t value = 0; value < 4000; value += 2)
    for (uint32_t row = 0; row < 3; ++row)
      entries.emplace_back(IKey(IndexKey(value, value * 3 + row), 7, ValueType::kValue), "v");
  entries.emplace_back(IKey(std::string("\xff\xff", 2), 7, ValueType::kValue),
                       "short");  // shorter than the prefix
  ColumnFamilyOptions options = SmallBlockOptions(CompressionType::kNone);
  options.filter_prefix_length = 4;
  const BuiltTable t = BuildTable(options, entries);
  EXPECT_EQ(4u, t.props.filter_prefix_length);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(t.contents, nullptr, &reader).ok());
  EXPECT_EQ(4u, reader->properties().filter_prefix_length);
  // No false negatives: every key's point lookup and every present value's range.
  for (const auto& [key, value] : entries) {
    bool found = false;
    std::string k, v;
    ASSERT_TRUE(reader->Get(key, &found, &k, &v).ok());
    ASSERT_TRUE(found) << ExtractUserKey(key).size();
  }
  auto value_range = [](uint32_t value) {
    std::string start = IndexKey(value, 0).substr(0, 4), limit = IndexKey(value + 1, 0).substr(0, 4);
    return std::make_pair(start, limit);
  };
  int ruled_out = 0;
  for (uint32_t value = 0; value < 4000; ++value) {
    const auto [start, limit] = value_range(value);
    const bool may = reader->RangeMayMatch(start, limit);
    if (value % 2 == 0) {
      ASSERT_TRUE(may) << value;
    }
    ruled_out += may ? 0 : 1;
    // A range starting inside the prefix (from one row on) is answered the same way.
    EXPECT_EQ(may, reader->RangeMayMatch(IndexKey(value, 1), limit)) << value;
  }
  // 2000 absent values at the 1 % rate: nearly all ruled out.
  EXPECT_GT(ruled_out, 1900);
  // Ranges across prefixes, or without a limit, may always match.
  EXPECT_TRUE(reader->RangeMayMatch(IndexKey(1, 0), IndexKey(3, 0)));
  EXPECT_TRUE(reader->RangeMayMatch(IndexKey(5001, 0), ""));
  // A point lookup of an absent key with a present prefix passes the filter (and misses
  // in the block); one with an absent prefix is ruled out without touching a block.
  bool found = true;
  std::string k, v;
  ASSERT_TRUE(reader->Get(SeekKey(IndexKey(2, 99)), &found, &k, &v).ok());
  EXPECT_FALSE(found);
}

TEST(TableTest, WholeKeyFilterNeverRulesOutARange) {
  std::vector<Entry> entries;
  for (uint32_t value = 0; value < 100; value += 2)
    entries.emplace_back(IKey(IndexKey(value, value), 7, ValueType::kValue), "v");
  const BuiltTable t = BuildTable(SmallBlockOptions(CompressionType::kNone), entries);
  EXPECT_EQ(0u, t.props.filter_prefix_length);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(t.contents, nullptr, &reader).ok());
  for (uint32_t value = 0; value < 100; ++value)
    EXPECT_TRUE(reader->RangeMayMatch(IndexKey(value, 0).substr(0, 4), IndexKey(value + 1, 0).substr(0, 4)));
}

TEST(TableTest, UseBtreeSelectsTheSameLayout) {
  ColumnFamilyOptions options = SmallBlockOptions(CompressionType::kNone);
  const std::vector<Entry> entries = MakeEntries(3000, 11);
  BuiltTable a = BuildTable(options, entries);
  options.use_btree = true;
  BuiltTable b = BuildTable(options, entries);
  // Identical except the creation time in the properties block.
  EXPECT_EQ(a.contents.size(), b.contents.size());
  EXPECT_EQ(a.props.index_size, b.props.index_size);
  EXPECT_EQ(a.contents.substr(0, a.props.data_size), b.contents.substr(0, b.props.data_size));
}

TEST(TableTest, RejectsBadInput) {
  std::string contents;
  TableBuilder builder(ColumnFamilyOptions(), 1, std::make_unique<StringWritableFile>(&contents), nullptr);
  EXPECT_TRUE(builder.Add("short", "v").IsInvalidArgument());
  std::string bad_type = "key";
  PutFixed64(&bad_type, (uint64_t{5} << 8) | 9);
  EXPECT_TRUE(builder.Add(bad_type, "v").IsInvalidArgument());
  EXPECT_TRUE(builder.Add(IKey("k", 5, ValueType::kValueWithExpiry), "1234").IsInvalidArgument());
  EXPECT_TRUE(builder.Add(IKey("k", 5, ValueType::kValuePointer), "\xff").IsInvalidArgument());
  ASSERT_TRUE(builder.Add(IKey("b", 5, ValueType::kValue), "v").ok());
  EXPECT_TRUE(builder.Add(IKey("a", 6, ValueType::kValue), "v").IsInvalidArgument());
  EXPECT_TRUE(builder.Add(IKey("b", 5, ValueType::kValue), "v").IsInvalidArgument());
  EXPECT_TRUE(builder.Add(IKey("b", 6, ValueType::kValue), "v").IsInvalidArgument());  // newer sorts first
  ASSERT_TRUE(builder.Add(IKey("b", 4, ValueType::kDeletion), "").ok());
  TableProperties props;
  ASSERT_TRUE(builder.Finish(&props).ok());
  EXPECT_EQ(2u, props.num_entries);
  EXPECT_TRUE(builder.Add(IKey("c", 1, ValueType::kValue), "v").IsInvalidArgument());
  EXPECT_TRUE(builder.Finish(&props).IsInvalidArgument());

  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(contents, nullptr, &reader).ok());
  bool found = true;
  std::string k, v;
  EXPECT_TRUE(reader->Get("short", &found, &k, &v).IsInvalidArgument());
}

TEST(TableTest, IndexSeparators) {
  const std::string a = IKey("abcdef", 5, ValueType::kValue);
  const std::string b = IKey("abzzz", 9, ValueType::kValue);
  const std::string sep = IndexSeparator(a, b);
  EXPECT_EQ("abd", ExtractUserKey(sep));
  EXPECT_LT(CompareInternalKey(a, sep), 0);
  EXPECT_LT(CompareInternalKey(sep, b), 0);
  // Same user key across the boundary, a prefix of the next key, adjacent bytes: a itself.
  EXPECT_EQ(a, IndexSeparator(a, IKey("abcdef", 4, ValueType::kValue)));
  EXPECT_EQ(a, IndexSeparator(a, IKey("abcdefg", 4, ValueType::kValue)));
  EXPECT_EQ(a, IndexSeparator(a, IKey("abcdeg", 4, ValueType::kValue)));
  const std::string c = IKey(std::string("a\xff\x01", 3), 1, ValueType::kValue);
  const std::string sep2 = IndexSeparator(c, IKey(std::string("a\xff\x05", 3), 1, ValueType::kValue));
  EXPECT_EQ(std::string("a\xff\x02", 3), ExtractUserKey(sep2));
}

// ---------------------------------------------------------------------------------------
// Value separation, with real files.

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/table_test_XXXXXX";
    char* dir = mkdtemp(tmpl.data());
    EXPECT_NE(nullptr, dir);
    path_ = tmpl;
  }
  ~TempDir() {
    std::vector<std::string> children;
    Env* env = Env::Default();
    if (env->GetChildren(path_, &children).ok()) {
      for (const auto& c : children) env->RemoveFile(path_ + "/" + c);
    }
    env->RemoveDir(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TableTest, LargeValuesGoToTheValueLog) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string vlog_name = dir.path() + "/000009.vlog";
  const std::string klog_name = dir.path() + "/000009.klog";
  std::unique_ptr<WritableFile> vlog_file, klog_file;
  ASSERT_TRUE(env->NewWritableFile(vlog_name, EnvOptions(), &vlog_file).ok());
  ASSERT_TRUE(env->NewWritableFile(klog_name, EnvOptions(), &klog_file).ok());
  ValueLogWriter vlog(std::move(vlog_file), 9, CompressionType::kNone);

  ColumnFamilyOptions options;
  options.value_threshold = 100;
  options.block_size = 1024;
  std::vector<Entry> input;
  for (int i = 0; i < 300; ++i) {
    const std::string uk = UserKey(i);
    std::string value(i % 2 == 0 ? 100 + i : 99, static_cast<char>('a' + i % 26));  // at / below threshold
    switch (i % 4) {
      case 0:
      case 1:
        input.emplace_back(IKey(uk, 1000 + i, ValueType::kValue), value);
        break;
      case 2: {
        std::string v;
        PutFixed64(&v, 1900000000 + i);
        input.emplace_back(IKey(uk, 1000 + i, ValueType::kValueWithExpiry), v + value);
        break;
      }
      default:
        input.emplace_back(IKey(uk, 1000 + i, ValueType::kValuePointer), EncodedPointer(3, 77, 12));
        break;
    }
  }
  TableBuilder builder(options, 2, std::move(klog_file), &vlog);
  for (const auto& [k, v] : input) ASSERT_TRUE(builder.Add(k, v).ok());
  TableProperties props;
  ASSERT_TRUE(builder.Finish(&props).ok());
  ASSERT_TRUE(vlog.Finish().ok());
  EXPECT_EQ(150u, vlog.num_records());  // the even i below 300 with kValue / kValueWithExpiry
  EXPECT_EQ(225u, props.num_value_pointers);

  std::unique_ptr<RandomAccessFile> vfile, kfile;
  uint64_t vsize, ksize;
  ASSERT_TRUE(env->NewRandomAccessFile(vlog_name, &vfile).ok());
  ASSERT_TRUE(env->GetFileSize(vlog_name, &vsize).ok());
  ASSERT_TRUE(env->NewRandomAccessFile(klog_name, &kfile).ok());
  ASSERT_TRUE(env->GetFileSize(klog_name, &ksize).ok());
  std::unique_ptr<ValueLogReader> vreader;
  ASSERT_TRUE(ValueLogReader::Open(vlog_name, 9, std::move(vfile), vsize, &vreader).ok());
  std::unique_ptr<TableReader> reader;
  Status s = TableReader::Open(klog_name, 9, std::move(kfile), ksize, nullptr, &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();

  auto it = reader->NewIterator(true);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, input.size());
    ParsedInternalKey in, out;
    ASSERT_TRUE(ParseInternalKey(input[i].first, &in));
    ASSERT_TRUE(ParseInternalKey(it->key(), &out));
    EXPECT_EQ(in.user_key, out.user_key);
    EXPECT_EQ(in.sequence, out.sequence);
    const bool large = i % 2 == 0;
    Slice stored = it->value();
    switch (i % 4) {
      case 0:
      case 1:
        if (large) {
          ASSERT_EQ(ValueType::kValuePointer, out.type);
          ValuePointer ptr;
          ASSERT_TRUE(ptr.DecodeFrom(&stored));
          EXPECT_EQ(9u, ptr.file_number);
          std::string value;
          ASSERT_TRUE(vreader->Get(ptr, &value).ok());
          EXPECT_EQ(input[i].second, value);
        } else {
          EXPECT_EQ(ValueType::kValue, out.type);
          EXPECT_EQ(input[i].second, it->value());
        }
        break;
      case 2: {
        ASSERT_EQ(ValueType::kValuePointerWithExpiry, out.type);  // i % 4 == 2 is even: large
        EXPECT_EQ(Slice(input[i].second).substr(0, 8), stored.substr(0, 8));
        stored.remove_prefix(8);
        ValuePointer ptr;
        ASSERT_TRUE(ptr.DecodeFrom(&stored));
        std::string value;
        ASSERT_TRUE(vreader->Get(ptr, &value).ok());
        EXPECT_EQ(Slice(input[i].second).substr(8), value);
        break;
      }
      default:  // pointers pass through unchanged
        EXPECT_EQ(input[i].first, it->key());
        EXPECT_EQ(input[i].second, it->value());
        break;
    }
  }
  EXPECT_EQ(input.size(), i);
  EXPECT_TRUE(it->status().ok());

  // Get finds a converted key by its user key.
  bool found = false;
  std::string k, v;
  ASSERT_TRUE(reader->Get(SeekKey(UserKey(0)), &found, &k, &v).ok());
  ASSERT_TRUE(found);
  ParsedInternalKey parsed;
  ASSERT_TRUE(ParseInternalKey(k, &parsed));
  EXPECT_EQ(ValueType::kValuePointer, parsed.type);
}

TEST(TableTest, WithoutValueLogValuesStayInline) {
  ColumnFamilyOptions options;
  options.value_threshold = 10;
  std::vector<Entry> entries;
  for (int i = 0; i < 100; ++i)
    entries.emplace_back(IKey(UserKey(i), 5, ValueType::kValue), std::string(500, 'v'));
  const BuiltTable t = BuildTable(options, entries);
  EXPECT_EQ(0u, t.props.num_value_pointers);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(OpenTable(t.contents, nullptr, &reader).ok());
  auto it = reader->NewIterator(true);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) EXPECT_EQ(entries[i].first, it->key());
  EXPECT_EQ(entries.size(), i);
}

// ---------------------------------------------------------------------------------------
// Corruption: every damaged file is reported as Corruption or reads back correctly; it
// never crashes, reads out of bounds (ASan) or returns wrong data.

// Opens contents and reads everything back every way. Returns false with *error set if any
// step reported an error (which must be Corruption); true if everything matched entries.
bool ReadBackOrReport(const std::string& contents, const std::vector<Entry>& entries, Status* error) {
  std::unique_ptr<TableReader> reader;
  Status s = OpenTable(contents, nullptr, &reader);
  if (!s.ok()) {
    *error = s;
    return false;
  }
  auto it = reader->NewIterator(false);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    EXPECT_LT(i, entries.size());
    if (i >= entries.size()) return true;
    EXPECT_EQ(entries[i].first, it->key());
    EXPECT_EQ(entries[i].second, it->value());
  }
  if (!it->status().ok()) {
    *error = it->status();
    return false;
  }
  EXPECT_EQ(entries.size(), i);
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    if (i == 0) break;
    --i;
    EXPECT_EQ(entries[i].first, it->key());
  }
  if (!it->status().ok()) {
    *error = it->status();
    return false;
  }
  for (const auto& [key, value] : entries) {
    bool found = false;
    std::string k, v;
    s = reader->Get(key, &found, &k, &v);
    if (!s.ok()) {
      *error = s;
      return false;
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(key, k);
    EXPECT_EQ(value, v);
  }
  return true;
}

class TableCorruptionTest : public ::testing::TestWithParam<CompressionType> {};

TEST_P(TableCorruptionTest, EveryByteFlippedInSmallTable) {
  ColumnFamilyOptions options = SmallBlockOptions(GetParam());
  options.block_size = 256;
  options.block_restart_interval = 4;
  const std::vector<Entry> entries = MakeEntries(60, 99);
  const BuiltTable t = BuildTable(options, entries);
  Status s;
  ASSERT_TRUE(ReadBackOrReport(t.contents, entries, &s)) << s.ToString();
  size_t detected = 0;
  for (size_t pos = 0; pos < t.contents.size(); ++pos) {
    for (uint8_t pattern : {0x01, 0x80}) {
      std::string bad = t.contents;
      bad[pos] = static_cast<char>(bad[pos] ^ pattern);
      Status error;
      if (!ReadBackOrReport(bad, entries, &error)) {
        ASSERT_TRUE(error.IsCorruption()) << "position " << pos << ": " << error.ToString();
        EXPECT_NE(std::string::npos, error.message().find("000005.klog: offset ")) << error.ToString();
        ++detected;
      }
      if (HasFailure()) {
        ADD_FAILURE() << "first failure at byte " << pos << " of " << t.contents.size();
        return;
      }
    }
  }
  // Every byte is covered by a block checksum, the footer checksum or the magic number.
  EXPECT_EQ(2 * t.contents.size(), detected);
}

TEST_P(TableCorruptionTest, SampledBytesFlippedInLargerTable) {
  const uint32_t seed = 4242;
  std::printf("seed %u\n", seed);
  const std::vector<Entry> entries = MakeEntries(1500, seed);
  const BuiltTable t = BuildTable(SmallBlockOptions(GetParam()), entries);
  std::mt19937 rng(seed);
  for (int round = 0; round < 150; ++round) {
    const size_t pos = rng() % t.contents.size();
    std::string bad = t.contents;
    bad[pos] = static_cast<char>(bad[pos] ^ (1 + rng() % 255));
    Status error;
    if (!ReadBackOrReport(bad, entries, &error)) {
      ASSERT_TRUE(error.IsCorruption()) << "position " << pos << ": " << error.ToString();
    }
    ASSERT_FALSE(HasFailure()) << "position " << pos;
  }
}

TEST_P(TableCorruptionTest, TruncatedFiles) {
  ColumnFamilyOptions options = SmallBlockOptions(GetParam());
  options.block_size = 256;
  const std::vector<Entry> entries = MakeEntries(60, 5);
  const BuiltTable t = BuildTable(options, entries);
  for (size_t len = 0; len < t.contents.size(); ++len) {
    std::unique_ptr<TableReader> reader;
    Status s = OpenTable(t.contents.substr(0, len), nullptr, &reader);
    ASSERT_TRUE(s.IsCorruption()) << "length " << len << ": " << s.ToString();
  }
  // Trailing garbage after the footer hides it, too.
  std::unique_ptr<TableReader> reader;
  EXPECT_TRUE(OpenTable(t.contents + "xx", nullptr, &reader).IsCorruption());
}

INSTANTIATE_TEST_SUITE_P(Compression, TableCorruptionTest,
                         ::testing::Values(CompressionType::kNone, CompressionType::kLZ4,
                                           CompressionType::kZstd),
                         [](const ::testing::TestParamInfo<CompressionType>& info) {
                           return CompressionTypeName(info.param);
                         });

}  // namespace
}  // namespace tidesdb
