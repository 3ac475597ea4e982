#include "memtable/memtable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "db/dbformat.h"
#include "util/filter_key.h"

namespace tidesdb {

namespace {

// Random seed of a test: TIDESDB_TEST_SEED if set (to replay a failure), else fresh.
// Printed either way.
uint32_t TestSeed(const char* test) {
  const char* env = std::getenv("TIDESDB_TEST_SEED");
  uint32_t seed =
      env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : std::random_device()();
  std::printf("%s seed %u (replay with TIDESDB_TEST_SEED=%u)\n", test, seed, seed);
  return seed;
}

std::string IKey(Slice user_key, SequenceNumber seq, ValueType type) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, type);
  return k;
}

struct Row {
  std::string user_key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
  bool operator==(const Row&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << "(" << r.user_key << "," << r.seq << "," << static_cast<int>(r.type) << "," << r.value << ")";
}

Row RowAt(const InternalIterator& it) {
  ParsedInternalKey parsed;
  EXPECT_TRUE(ParseInternalKey(it.key(), &parsed));
  return Row{std::string(parsed.user_key), parsed.sequence, parsed.type, std::string(it.value())};
}

std::vector<Row> ScanForward(const MemTable& mem, uint32_t cf) {
  std::vector<Row> rows;
  auto it = mem.NewIterator(cf);
  for (it->SeekToFirst(); it->Valid(); it->Next()) rows.push_back(RowAt(*it));
  EXPECT_TRUE(it->status().ok());
  return rows;
}

std::vector<Row> ScanBackward(const MemTable& mem, uint32_t cf) {
  std::vector<Row> rows;
  auto it = mem.NewIterator(cf);
  for (it->SeekToLast(); it->Valid(); it->Prev()) rows.push_back(RowAt(*it));
  return rows;
}

}  // namespace

TEST(MemTable, Empty) {
  MemTable mem;
  EXPECT_TRUE(mem.empty());
  EXPECT_EQ(mem.num_entries(), 0u);
  EXPECT_EQ(mem.smallest_sequence(), 0u);
  EXPECT_EQ(mem.largest_sequence(), 0u);
  EXPECT_TRUE(mem.ColumnFamilies().empty());
  EXPECT_EQ(mem.NumEntries(0), 0u);
  ValueType type;
  Slice value;
  EXPECT_FALSE(mem.Get(0, "a", kMaxSequence, &type, &value));
  auto it = mem.NewIterator(0);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek(IKey("a", kMaxSequence, kValueTypeForSeek));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("a", 0, ValueType::kDeletion));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST(MemTable, GetSeesNewestVersionAtSnapshot) {
  MemTable mem(Arena::kDefaultBlockSize, 4096);
  mem.Add(1, 10, ValueType::kValue, "k", "v10");
  mem.Add(1, 20, ValueType::kValue, "k", "v20");
  mem.Add(1, 30, ValueType::kDeletion, "k", "");
  mem.Add(1, 40, ValueType::kValue, "k", "v40");
  mem.Add(1, 15, ValueType::kValue, "other", "o15");

  ValueType type;
  Slice value;
  EXPECT_FALSE(mem.Get(1, "k", 9, &type, &value));  // older than every version

  ASSERT_TRUE(mem.Get(1, "k", 10, &type, &value));
  EXPECT_EQ(type, ValueType::kValue);
  EXPECT_EQ(value, "v10");
  ASSERT_TRUE(mem.Get(1, "k", 19, &type, &value));
  EXPECT_EQ(value, "v10");
  ASSERT_TRUE(mem.Get(1, "k", 20, &type, &value));
  EXPECT_EQ(value, "v20");
  ASSERT_TRUE(mem.Get(1, "k", 35, &type, &value));  // the deletion hides v20
  EXPECT_EQ(type, ValueType::kDeletion);
  ASSERT_TRUE(mem.Get(1, "k", kMaxSequence, &type, &value));
  EXPECT_EQ(type, ValueType::kValue);
  EXPECT_EQ(value, "v40");
  ASSERT_TRUE(mem.Get(1, "k", UINT64_MAX, &type, &value));  // clamped to kMaxSequence
  EXPECT_EQ(value, "v40");

  EXPECT_FALSE(mem.Get(1, "j", kMaxSequence, &type, &value));
  EXPECT_FALSE(mem.Get(1, Slice("k\0", 2), kMaxSequence, &type, &value));
  EXPECT_FALSE(mem.Get(1, "ka", kMaxSequence, &type, &value));
  EXPECT_FALSE(mem.Get(1, "", kMaxSequence, &type, &value));
  EXPECT_FALSE(mem.Get(0, "k", kMaxSequence, &type, &value));  // other CFs know nothing
  EXPECT_FALSE(mem.Get(2, "k", kMaxSequence, &type, &value));
  EXPECT_FALSE(mem.Get(1, "other", 14, &type, &value));
  ASSERT_TRUE(mem.Get(1, "other", 15, &type, &value));
  EXPECT_EQ(value, "o15");

  EXPECT_EQ(mem.smallest_sequence(), 10u);
  EXPECT_EQ(mem.largest_sequence(), 40u);
  EXPECT_EQ(mem.num_entries(), 5u);
  EXPECT_EQ(mem.NumEntries(1), 5u);
  EXPECT_EQ(mem.NumDeletions(1), 1u);
}

TEST(MemTable, EmptyKeysAndValuesAndBinaryBytes) {
  MemTable mem;
  std::string binary("\0\xff\x00z", 4);
  std::string big_value(100000, 'x');  // larger than a quarter arena block
  mem.Add(7, 1, ValueType::kValue, "", "empty-key");
  mem.Add(7, 2, ValueType::kValue, binary, "");
  mem.Add(7, 3, ValueType::kValue, "big", big_value);
  ValueType type;
  Slice value;
  ASSERT_TRUE(mem.Get(7, "", kMaxSequence, &type, &value));
  EXPECT_EQ(value, "empty-key");
  ASSERT_TRUE(mem.Get(7, binary, kMaxSequence, &type, &value));
  EXPECT_EQ(value, "");
  ASSERT_TRUE(mem.Get(7, "big", kMaxSequence, &type, &value));
  EXPECT_EQ(value, big_value);
  std::vector<Row> rows = ScanForward(mem, 7);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].user_key, "");
  EXPECT_EQ(rows[1].user_key, binary);
  EXPECT_EQ(rows[2].user_key, "big");
}

TEST(MemTable, DuplicateInternalKeyIsIgnored) {
  MemTable mem;
  mem.Add(1, 5, ValueType::kValue, "k", "first");
  mem.Add(1, 5, ValueType::kValue, "k", "second");
  mem.Add(1, 5, ValueType::kDeletion, "k", "");  // same seq, other type: a distinct key
  EXPECT_EQ(mem.num_entries(), 2u);
  EXPECT_EQ(mem.NumEntries(1), 2u);
  EXPECT_EQ(mem.NumDeletions(1), 1u);
  std::vector<Row> rows = ScanForward(mem, 1);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (Row{"k", 5, ValueType::kValue, "first"}));  // higher type first
  EXPECT_EQ(rows[1], (Row{"k", 5, ValueType::kDeletion, ""}));
}

// Iterators of neighbouring CFs, including the smallest and largest ids, never cross
// into each other, in either direction and from any seek.
TEST(MemTable, ColumnFamilyIsolation) {
  MemTable mem(Arena::kDefaultBlockSize, 4096);
  const std::vector<uint32_t> cfs = {0, 1, 2, 0x00FFFFFF, 0x01000000, 0xFFFFFFFE, 0xFFFFFFFF};
  SequenceNumber seq = 1;
  for (uint32_t cf : cfs) {
    for (const char* k : {"b", "d", "f"}) {
      mem.Add(cf, seq++, ValueType::kValue, k, std::to_string(cf) + k);
    }
  }
  mem.Add(2, seq++, ValueType::kDeletion, "d", "");
  EXPECT_EQ(mem.ColumnFamilies(), cfs);

  for (uint32_t cf : cfs) {
    SCOPED_TRACE("cf " + std::to_string(cf));
    std::vector<Row> forward = ScanForward(mem, cf);
    ASSERT_EQ(forward.size(), cf == 2 ? 4u : 3u);
    for (const Row& r : forward) {
      if (r.type == ValueType::kValue) {
        EXPECT_EQ(r.value, std::to_string(cf) + r.user_key);
      }
    }
    EXPECT_EQ(forward.front().user_key, "b");
    EXPECT_EQ(forward.back().user_key, "f");
    std::vector<Row> backward = ScanBackward(mem, cf);
    ASSERT_EQ(backward.size(), forward.size());
    EXPECT_TRUE(std::equal(backward.begin(), backward.end(), forward.rbegin()));

    EXPECT_EQ(mem.NumEntries(cf), forward.size());
    EXPECT_EQ(mem.NumDeletions(cf), cf == 2 ? 1u : 0u);

    auto it = mem.NewIterator(cf);
    // Seek past the CF's last key: invalid, never the next CF's first key.
    it->Seek(IKey("g", kMaxSequence, kValueTypeForSeek));
    EXPECT_FALSE(it->Valid());
    it->Seek(IKey("f", 0, ValueType::kDeletion));  // after every version of "f"
    EXPECT_FALSE(it->Valid());
    // SeekForPrev before the CF's first key: invalid, never the previous CF's last key.
    it->SeekForPrev(IKey("a", 0, ValueType::kDeletion));
    EXPECT_FALSE(it->Valid());
    it->SeekForPrev(IKey("b", kMaxSequence, kValueTypeForSeek));  // before every "b"
    EXPECT_FALSE(it->Valid());
    // Stepping off either end is invalid too.
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    it->Prev();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    ASSERT_TRUE(it->Valid());
    it->Next();
    EXPECT_FALSE(it->Valid());

    // Seek at and between keys.
    it->Seek(IKey("c", kMaxSequence, kValueTypeForSeek));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractUserKey(it->key()), "d");
    it->SeekForPrev(IKey("e", kMaxSequence, kValueTypeForSeek));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractUserKey(it->key()), "d");
    it->SeekForPrev(IKey("z", 0, ValueType::kDeletion));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractUserKey(it->key()), "f");
    it->Seek(IKey("", kMaxSequence, kValueTypeForSeek));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractUserKey(it->key()), "b");
    // Short targets are bare user keys.
    it->Seek("d");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractUserKey(it->key()), "d");
    it->SeekForPrev("d");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractUserKey(it->key()), "d");
    it->SeekForPrev("a");
    EXPECT_FALSE(it->Valid());
  }

  // CFs without entries see nothing, wherever they fall between used ids.
  for (uint32_t cf : {3u, 0x00FFFFFEu, 0x01000001u, 0xFFFFFFFDu}) {
    EXPECT_TRUE(ScanForward(mem, cf).empty()) << cf;
    EXPECT_TRUE(ScanBackward(mem, cf).empty()) << cf;
    auto it = mem.NewIterator(cf);
    it->Seek(IKey("", kMaxSequence, kValueTypeForSeek));
    EXPECT_FALSE(it->Valid());
    it->SeekForPrev(IKey("zzz", 0, ValueType::kDeletion));
    EXPECT_FALSE(it->Valid());
    EXPECT_EQ(mem.NumEntries(cf), 0u);
  }
}

// The point-lookup filter: every key added is found (in its CF only), and keys never
// added are answered without a skip-list search in all but a few percent of lookups (the
// filter's false positives), here measured as how many absent keys pass it.
TEST(MemTable, BloomFilterNeverHidesAKeyAndSkipsMostAbsentOnes) {
  MemTable mem(Arena::kDefaultBlockSize, 20000 * 10 / 8);  // 10 bits per key
  for (int i = 0; i < 20000; ++i) mem.Add(7, i + 1, ValueType::kValue, "key" + std::to_string(i), "v");
  ValueType type;
  Slice value;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE(mem.Get(7, "key" + std::to_string(i), kMaxSequence, &type, &value)) << i;
    ASSERT_FALSE(mem.Get(8, "key" + std::to_string(i), kMaxSequence, &type, &value)) << i;
  }
  for (int i = 20000; i < 40000; ++i)
    ASSERT_FALSE(mem.Get(7, "key" + std::to_string(i), kMaxSequence, &type, &value));
  EXPECT_LT(mem.BloomPassesForTest(7, "key", 20000, 40000), 20000 / 20);  // under 5 %
}

namespace {
std::string FilterPrefix(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "p%04d|", i);
  return buf;
}
std::string Successor(std::string prefix) {
  prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}
}  // namespace

// A CF added with a filter prefix length: a range inside one prefix the memtable never held
// is ruled out (a bounded seek and a range estimate pass over the skip list); every range
// inside a prefix it holds passes, and so does every range the filter cannot answer.
TEST(MemTable, PrefixFilterRulesOutRangesInsideAbsentPrefixes) {
  constexpr size_t kPrefix = 6;  // "pNNNN|"
  MemTable mem(Arena::kDefaultBlockSize, 6000 * 16 / 8);
  SequenceNumber seq = 1;
  for (int i = 0; i < 4000; i += 2)  // even prefixes only, two keys each
    for (const char* tail : {"a", "b"})
      mem.Add(5, seq++, ValueType::kValue, FilterPrefix(i) + tail, "v", kPrefix);
  mem.Add(6, seq++, ValueType::kValue, FilterPrefix(1) + "x", "v");  // no prefix length
  int ruled_out = 0;
  std::string absent;  // one odd prefix the filter rules out
  for (int i = 0; i < 4000; ++i) {
    const std::string p = FilterPrefix(i);
    const bool may = mem.RangeMayMatch(5, p, Successor(p));
    if (i % 2 == 0) {
      ASSERT_TRUE(may) << p;
      ASSERT_TRUE(mem.RangeMayMatch(5, p + "a", p + "b")) << p;
    } else if (!may) {
      ++ruled_out;
      if (absent.empty()) absent = p;
    }
  }
  EXPECT_GT(ruled_out, 2000 * 9 / 10);
  ASSERT_FALSE(absent.empty());
  // A range over a few prefixes: ruled out when the filter holds none of them (the two
  // after `absent` are not entries' prefixes: '|' + 1 and + 2), not when it holds one.
  EXPECT_FALSE(mem.RangeMayMatch(5, absent, Successor(Successor(absent))));
  EXPECT_TRUE(mem.RangeMayMatch(5, FilterPrefix(2), Successor(Successor(FilterPrefix(2)))));
  // Every probe of a range counts, the last one too: a held prefix at the end of a range
  // of absent ones.
  mem.Add(7, seq++, ValueType::kValue, std::string("b\x02x", 3), "v", 2);
  EXPECT_TRUE(mem.RangeMayMatch(7, std::string("b\x00", 2), std::string("b\x03", 2)));
  EXPECT_FALSE(mem.RangeMayMatch(7, std::string("b\x03", 2), std::string("b\x06", 2)));
  // Not answerable: more prefixes than kMaxRangeFilterPrefixes, no limit, a start shorter
  // than the prefix, a CF added without a prefix length, a CF with no entries.
  std::string far = absent;
  for (size_t i = 0; i < kMaxRangeFilterPrefixes + 1; ++i) far = Successor(far);
  EXPECT_TRUE(mem.RangeMayMatch(5, absent, far));
  EXPECT_TRUE(mem.RangeMayMatch(5, absent, ""));
  EXPECT_TRUE(mem.RangeMayMatch(5, "p0", "p1"));
  EXPECT_TRUE(mem.RangeMayMatch(6, absent, Successor(absent)));
  EXPECT_TRUE(mem.RangeMayMatch(9, absent, Successor(absent)));

  // The iterator: a bounded seek inside a ruled-out prefix is exhausted at once; inside a
  // held one it finds the prefix's first key; an unbounded one still finds the next key.
  auto it = mem.NewIterator(5);
  it->SeekBounded(absent, Successor(absent));
  EXPECT_FALSE(it->Valid());
  it->SeekBounded(IKey(FilterPrefix(2), kMaxSequence, kValueTypeForSeek), Successor(FilterPrefix(2)));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(RowAt(*it).user_key, FilterPrefix(2) + "a");
  it->SeekBounded(absent, "");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(RowAt(*it).user_key.substr(0, 1), "p");
}

// A range whose probes outnumber what RangeMayMatch collects before testing (a prefix of
// zero bytes, and each shorter key of zero bytes the filter would hold whole) still counts
// its last probe, and still rules the range out when none matches.
TEST(MemTable, PrefixFilterCountsEveryProbeOfALongRangeOfZeroBytes) {
  constexpr size_t kPrefix = 20;
  const std::string zeros(kPrefix, '\0');
  const std::string limit = std::string(kPrefix - 1, '\0') + "\x02";
  MemTable mem(Arena::kDefaultBlockSize, 1 << 16);
  mem.Add(8, 1, ValueType::kValue, "zz", "v", kPrefix);
  EXPECT_FALSE(mem.RangeMayMatch(8, zeros, limit));
  // One zero byte, held whole: the 20th probe of the range's first prefix.
  mem.Add(8, 2, ValueType::kValue, std::string(1, '\0'), "v", kPrefix);
  EXPECT_TRUE(mem.RangeMayMatch(8, zeros, limit));
}

// Adds of one CF with two different prefix lengths: the filter no longer answers for it.
TEST(MemTable, PrefixFilterStopsAnsweringOnceAColumnFamilysLengthsDiffer) {
  MemTable mem(Arena::kDefaultBlockSize, 1 << 16);
  mem.Add(7, 1, ValueType::kValue, FilterPrefix(0) + "a", "v", 6);
  std::string absent;
  for (int i = 1; i < 100 && absent.empty(); ++i)
    if (!mem.RangeMayMatch(7, FilterPrefix(i), Successor(FilterPrefix(i)))) absent = FilterPrefix(i);
  ASSERT_FALSE(absent.empty());
  mem.Add(7, 2, ValueType::kValue, FilterPrefix(0) + "b", "v", 3);
  EXPECT_TRUE(mem.RangeMayMatch(7, absent, Successor(absent)));
  mem.Add(7, 3, ValueType::kValue, FilterPrefix(0) + "c", "v", 6);
  EXPECT_TRUE(mem.RangeMayMatch(7, absent, Successor(absent))) << "mixed stays mixed";
}

TEST(MemTable, ColumnFamiliesAndCounts) {
  MemTable mem;
  mem.Add(9, 1, ValueType::kValue, "a", "1");
  mem.Add(3, 2, ValueType::kDeletion, "a", "");
  mem.Add(9, 3, ValueType::kDeletion, "b", "");
  mem.Add(3, 4, ValueType::kValue, "b", "2");
  mem.Add(9, 5, ValueType::kValueWithExpiry, "c", "12345678v");
  EXPECT_EQ(mem.ColumnFamilies(), (std::vector<uint32_t>{3, 9}));
  EXPECT_EQ(mem.NumEntries(3), 2u);
  EXPECT_EQ(mem.NumDeletions(3), 1u);
  EXPECT_EQ(mem.NumEntries(9), 3u);
  EXPECT_EQ(mem.NumDeletions(9), 1u);
  EXPECT_EQ(mem.num_entries(), 5u);
  EXPECT_FALSE(mem.empty());
  EXPECT_GT(mem.ApproximateMemoryUsage(), 0u);
}

TEST(MemTable, ApproximateRangeSizeCountsOneColumnFamily) {
  MemTable mem;
  // CF 5 holds a0000..a4999 (two versions of the even ones); CFs 4 and 6, on both sides of
  // it in the list, hold the same user keys and more, which must never count.
  uint64_t bytes_of_a0100_to_a0140 = 0;
  SequenceNumber seq = 1;
  for (int i = 0; i < 5000; ++i) {
    char k[16];
    std::snprintf(k, sizeof(k), "a%04d", i);
    for (int v = 0; v < (i % 2 == 0 ? 2 : 1); ++v) {
      mem.Add(5, seq++, ValueType::kValue, k, "value");
      if (i >= 100 && i < 140) bytes_of_a0100_to_a0140 += std::strlen(k) + 8 + 5;
    }
    mem.Add(4, seq++, ValueType::kValue, k, "x");
    mem.Add(6, seq++, ValueType::kValue, k, "x");
    mem.Add(6, seq++, ValueType::kDeletion, std::string(k) + "b", "");
  }
  // Up to kExactRangeEntries (64) entries the count is exact.
  MemTable::RangeSize small = mem.ApproximateRangeSize(5, "a0100", "a0140");
  EXPECT_EQ(small.entries, 60u);  // every version counts
  EXPECT_EQ(small.bytes, bytes_of_a0100_to_a0140);
  // Beyond, it is sampled from a sparser level.
  MemTable::RangeSize larger = mem.ApproximateRangeSize(5, "a0100", "a0200");
  EXPECT_GT(larger.entries, 150u / 2);
  EXPECT_LT(larger.entries, 150u * 2);
  EXPECT_EQ(mem.ApproximateRangeSize(5, "a4990", "").entries, 15u);  // stops at CF 6
  EXPECT_EQ(mem.ApproximateRangeSize(5, "", "a0004").entries, 6u);   // starts at CF 5
  EXPECT_EQ(mem.ApproximateRangeSize(5, "b", "").entries, 0u);
  EXPECT_EQ(mem.ApproximateRangeSize(5, "a0200", "a0100").entries, 0u);
  EXPECT_EQ(mem.ApproximateRangeSize(7, "", "").entries, 0u);
  // A whole CF of 7,500 entries, estimated from a sparse level.
  MemTable::RangeSize all = mem.ApproximateRangeSize(5, "", "");
  EXPECT_GT(all.entries, 7500u / 2);
  EXPECT_LT(all.entries, 7500u * 2);
  // The largest CF id has no next CF to stop at.
  mem.Add(UINT32_MAX, seq++, ValueType::kValue, "z", "1");
  mem.Add(UINT32_MAX, seq++, ValueType::kValue, "zz", "1");
  EXPECT_EQ(mem.ApproximateRangeSize(UINT32_MAX, "z", "").entries, 2u);
  EXPECT_EQ(mem.ApproximateRangeSize(UINT32_MAX, "", "zz").entries, 1u);
}

TEST(MemTable, SequenceRangeIsOrderIndependent) {
  MemTable mem;
  mem.Add(1, 50, ValueType::kValue, "a", "");
  mem.Add(1, 7, ValueType::kValue, "b", "");
  mem.Add(2, 99, ValueType::kValue, "c", "");
  mem.Add(2, 20, ValueType::kValue, "d", "");
  EXPECT_EQ(mem.smallest_sequence(), 7u);
  EXPECT_EQ(mem.largest_sequence(), 99u);
}

TEST(MemTable, MemoryUsageGrows) {
  MemTable mem(4096);
  size_t before = mem.ApproximateMemoryUsage();
  std::string value(100, 'v');
  for (int i = 0; i < 1000; ++i) mem.Add(1, i + 1, ValueType::kValue, "key" + std::to_string(i), value);
  size_t after = mem.ApproximateMemoryUsage();
  EXPECT_GE(after - before, 1000u * (value.size() + 8));
  EXPECT_LT(after, 1000u * 400);
}

// Random adds to a few CFs (with deletions and repeated keys) against a std::map model;
// then scans, Gets at random snapshots, Seeks and SeekForPrevs compared with the model.
namespace {

// Adds `adds` random versions of keys from random_key(rng) to CFs from `cfs`, then checks
// scans in both directions, counts, Get, Seek and SeekForPrev (probes from random_key
// too) against a std::map model.
template <typename RandomKey>
void CheckAgainstModel(uint32_t seed, const std::vector<uint32_t>& cfs, int adds, RandomKey random_key) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);

  // Model key: (cf, user key, -seq) so that std::map order is the memtable's order
  // (types differ per seq here, each sequence is used once).
  using ModelKey = std::tuple<uint32_t, std::string, int64_t>;
  struct ModelValue {
    ValueType type;
    std::string value;
  };
  std::map<ModelKey, ModelValue> model;

  MemTable mem(8192, 256);  // a tiny filter: most lookups pass it, some are cut short
  SequenceNumber seq = 0;
  for (int i = 0; i < adds; ++i) {
    uint32_t cf = cfs[rng() % cfs.size()];
    std::string k = random_key(rng);
    ++seq;
    bool del = rng() % 4 == 0;
    std::string v = del ? "" : "v" + std::to_string(seq);
    ValueType type = del ? ValueType::kDeletion : ValueType::kValue;
    mem.Add(cf, seq, type, k, v);
    model[{cf, k, -static_cast<int64_t>(seq)}] = {type, v};
  }

  for (uint32_t cf : cfs) {
    SCOPED_TRACE("cf " + std::to_string(cf));
    std::vector<Row> expected;
    uint64_t deletions = 0;
    for (const auto& [mk, mv] : model) {
      if (std::get<0>(mk) != cf) continue;
      expected.push_back(
          Row{std::get<1>(mk), static_cast<SequenceNumber>(-std::get<2>(mk)), mv.type, mv.value});
      if (mv.type == ValueType::kDeletion) ++deletions;
    }
    EXPECT_EQ(ScanForward(mem, cf), expected);
    std::vector<Row> backward = ScanBackward(mem, cf);
    EXPECT_TRUE(std::equal(backward.begin(), backward.end(), expected.rbegin(), expected.rend()));
    EXPECT_EQ(mem.NumEntries(cf), expected.size());
    EXPECT_EQ(mem.NumDeletions(cf), deletions);

    auto it = mem.NewIterator(cf);
    for (int probe = 0; probe < 300; ++probe) {
      std::string k = random_key(rng);
      SequenceNumber snap = rng() % (seq + 2);

      // Get: newest version of k with sequence <= snap.
      auto lb = model.lower_bound({cf, k, -static_cast<int64_t>(snap)});
      bool model_found = lb != model.end() && std::get<0>(lb->first) == cf && std::get<1>(lb->first) == k;
      ValueType type;
      Slice value;
      ASSERT_EQ(mem.Get(cf, k, snap, &type, &value), model_found) << k << "@" << snap;
      if (model_found) {
        EXPECT_EQ(type, lb->second.type);
        EXPECT_EQ(value, lb->second.value);
      }

      // Seek(k@snap) = first entry >= it, within cf.
      std::string target = IKey(k, snap, kValueTypeForSeek);
      it->Seek(target);
      if (lb == model.end() || std::get<0>(lb->first) != cf) {
        EXPECT_FALSE(it->Valid());
      } else {
        ASSERT_TRUE(it->Valid());
        EXPECT_EQ(ExtractUserKey(it->key()), std::get<1>(lb->first));
        ParsedInternalKey parsed;
        ASSERT_TRUE(ParseInternalKey(it->key(), &parsed));
        EXPECT_EQ(parsed.sequence, static_cast<SequenceNumber>(-std::get<2>(lb->first)));
      }

      // SeekForPrev(k@snap, kDeletion) = last entry <= it, within cf: the model's last key
      // <= (cf, k, -snap).
      it->SeekForPrev(IKey(k, snap, ValueType::kDeletion));
      auto ub = model.upper_bound({cf, k, -static_cast<int64_t>(snap)});
      bool model_has_prev = ub != model.begin() && std::get<0>(std::prev(ub)->first) == cf;
      ASSERT_EQ(it->Valid(), model_has_prev);
      if (model_has_prev) {
        auto le = std::prev(ub);
        EXPECT_EQ(ExtractUserKey(it->key()), std::get<1>(le->first));
        EXPECT_EQ(it->value(), le->second.value);
      }
    }
  }
}

}  // namespace

TEST(MemTable, RandomizedAgainstModel) {
  CheckAgainstModel(TestSeed("MemTable.RandomizedAgainstModel"), {0, 5, 6, 0xFFFFFFFF}, 3000,
                    [](std::mt19937_64& rng) {
                      std::string k(1 + rng() % 3, 'a');
                      for (char& c : k) c = static_cast<char>('a' + rng() % 4);
                      return k;
                    });
}

// The comparator decides most comparisons on the cf id and the first 8 user-key bytes
// (zero-padded) and reads the cf key at fixed offsets only when its length takes one
// varint byte. Keys here sit on every edge of that: lengths 0-12 around the 8-byte prefix,
// 112-120 around the 116-byte user key whose cf key length takes two bytes, bytes 0x00
// (which padding must not confuse with "end of key"), 0x7f/0x80/0xff (signedness), half
// of them sharing an 8-byte start, and cf ids on both sides of the sign bit.
TEST(MemTable, RandomizedAgainstModelAtPrefixEdges) {
  CheckAgainstModel(TestSeed("MemTable.RandomizedAgainstModelAtPrefixEdges"),
                    {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF}, 4000, [](std::mt19937_64& rng) {
                      static const char kBytes[] = {'\x00', '\x01', '\x7f', '\x80', '\xff'};
                      const size_t size = rng() % 4 == 0 ? 112 + rng() % 9 : rng() % 13;
                      std::string k(size, '\0');
                      for (char& c : k) c = kBytes[rng() % sizeof(kBytes)];
                      if (rng() % 2 == 0)
                        k.replace(0, std::min<size_t>(8, size),
                                  std::string("\x80\x00\x01\xff\x00\x00\x7f\x01", std::min<size_t>(8, size)));
                      return k;
                    });
}

// The order at the prefix's edges, spelled out.
TEST(MemTable, OrdersKeysAcrossThePrefixBoundary) {
  const std::string longer(120, 'x');  // a cf key length of two varint bytes
  // Ascending. Each version list is newest first.
  const std::vector<std::string> keys = {
      std::string(),
      std::string("\0", 1),
      std::string("\0\0", 2),
      "a",
      std::string("a\0", 2),
      std::string("a\0\0\0\0\0\0\0", 8),
      std::string("a\0\0\0\0\0\0\0\0", 9),
      "abcdefg",
      std::string("abcdefg\0", 8),
      "abcdefgh",
      std::string("abcdefgh\0", 9),
      "abcdefghx",
      "abcdefgh" + longer,
      "abcdefghy" + longer,
      "abcdefgi",
      longer,
      "\x7f",
      "\x80",
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff",
  };
  MemTable mem;
  SequenceNumber seq = 0;
  // Added out of order: every other key first, then the rest; three versions of each,
  // to one CF on either side of the sign bit.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = pass; i < keys.size(); i += 2) {
      for (uint32_t cf : {0x7FFFFFFFu, 0x80000000u}) {
        for (int v = 0; v < 3; ++v) {
          ++seq;
          mem.Add(cf, seq, ValueType::kValue, keys[i], std::to_string(seq));
        }
      }
    }
  }
  EXPECT_EQ(mem.ColumnFamilies(), (std::vector<uint32_t>{0x7FFFFFFF, 0x80000000}));
  for (uint32_t cf : {0x7FFFFFFFu, 0x80000000u}) {
    SCOPED_TRACE("cf " + std::to_string(cf));
    std::vector<Row> rows = ScanForward(mem, cf);
    ASSERT_EQ(rows.size(), 3 * keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      for (int v = 0; v < 3; ++v) {
        const Row& r = rows[3 * i + v];
        EXPECT_EQ(r.user_key, keys[i]) << i;
        if (v > 0) {
          EXPECT_LT(r.seq, rows[3 * i + v - 1].seq);  // newest first
        }
      }
      ValueType type;
      Slice value;
      SequenceNumber found_seq;
      ASSERT_TRUE(mem.Get(cf, keys[i], kMaxSequence, &type, &value, &found_seq)) << i;
      EXPECT_EQ(found_seq, rows[3 * i].seq);
      // The oldest version, seen from just before the middle one.
      ASSERT_TRUE(mem.Get(cf, keys[i], rows[3 * i + 1].seq - 1, &type, &value, &found_seq)) << i;
      EXPECT_EQ(found_seq, rows[3 * i + 2].seq);
      // Exactly the keys added, nothing that differs only past the prefix or in length.
      EXPECT_FALSE(mem.Get(cf, keys[i] + '\x01', kMaxSequence, &type, &value)) << i;
    }
    std::vector<Row> backward = ScanBackward(mem, cf);
    EXPECT_TRUE(std::equal(backward.begin(), backward.end(), rows.rbegin(), rows.rend()));
  }
}

// Four writers add to two CFs while two readers run Gets and scans. Every writer adds
// keys "w<writer>-<i>" with increasing i, one version each; a reader that sees key i of a
// writer must also see every earlier key of the same writer that it saw before, and
// scans must stay ordered and inside their CF. At the end every entry is there.
TEST(MemTable, ConcurrentAddsAndReads) {
  const uint32_t seed = TestSeed("MemTable.ConcurrentAddsAndReads");
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 10000;
  MemTable mem(Arena::kDefaultBlockSize, 16 << 10);
  std::atomic<SequenceNumber> next_seq{1};
  std::atomic<int> done{0};
  std::atomic<uint64_t> failures{0};
  // Highest i per writer whose Add has returned (readers may rely on those being visible).
  std::atomic<int> published[kWriters];
  for (auto& p : published) p.store(-1);

  auto key_of = [](int w, int i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "w%d-%06d", w, i);
    return std::string(buf);
  };

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      uint32_t cf = w % 2 == 0 ? 0 : 0xFFFFFFFF;
      for (int i = 0; i < kPerWriter; ++i) {
        SequenceNumber seq = next_seq.fetch_add(1);
        mem.Add(cf, seq, i % 10 == 9 ? ValueType::kDeletion : ValueType::kValue, key_of(w, i), key_of(w, i));
        published[w].store(i, std::memory_order_release);
      }
      done.fetch_add(1);
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(seed + r);
      while (done.load() < kWriters) {
        // Point reads of published keys always succeed.
        int w = rng() % kWriters;
        int upto = published[w].load(std::memory_order_acquire);
        if (upto >= 0) {
          int i = rng() % (upto + 1);
          ValueType type;
          Slice value;
          uint32_t cf = w % 2 == 0 ? 0 : 0xFFFFFFFF;
          if (!mem.Get(cf, key_of(w, i), kMaxSequence, &type, &value) || value != key_of(w, i)) {
            failures.fetch_add(1);
          }
        }
        // A scan of one CF: ordered, only that CF's writers, and a superset of what was
        // published when it started.
        uint32_t cf = r == 0 ? 0 : 0xFFFFFFFF;
        int before[kWriters];
        for (int x = 0; x < kWriters; ++x) before[x] = published[x].load(std::memory_order_acquire);
        int count[kWriters] = {0, 0, 0, 0};
        std::string last;
        auto it = mem.NewIterator(cf);
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
          std::string user_key(ExtractUserKey(it->key()));
          if (!last.empty() && user_key <= last) failures.fetch_add(1);
          last = user_key;
          int writer = user_key[1] - '0';
          if ((writer % 2 == 0) != (cf == 0)) failures.fetch_add(1);
          ++count[writer];
        }
        for (int x = 0; x < kWriters; ++x) {
          if ((x % 2 == 0) == (cf == 0) && count[x] < before[x] + 1) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ(mem.num_entries(), static_cast<uint64_t>(kWriters * kPerWriter));
  EXPECT_EQ(mem.ColumnFamilies(), (std::vector<uint32_t>{0, 0xFFFFFFFF}));
  EXPECT_EQ(mem.NumEntries(0), static_cast<uint64_t>(2 * kPerWriter));
  EXPECT_EQ(mem.NumDeletions(0xFFFFFFFF), static_cast<uint64_t>(2 * kPerWriter / 10));
  EXPECT_EQ(mem.smallest_sequence(), 1u);
  EXPECT_EQ(mem.largest_sequence(), static_cast<SequenceNumber>(kWriters * kPerWriter));
  EXPECT_EQ(ScanForward(mem, 0).size(), static_cast<size_t>(2 * kPerWriter));
  EXPECT_EQ(ScanBackward(mem, 0xFFFFFFFF).size(), static_cast<size_t>(2 * kPerWriter));
}

// Many writers creating the same new CFs at once: each CF's counters exist once.
TEST(MemTable, ConcurrentFirstWritesToNewColumnFamilies) {
  MemTable mem;
  constexpr int kThreads = 4;
  constexpr int kCfs = 200;
  std::atomic<SequenceNumber> seq{1};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int cf = 0; cf < kCfs; ++cf) {
        mem.Add(static_cast<uint32_t>(cf * 1000), seq.fetch_add(1), ValueType::kValue,
                "t" + std::to_string(t), "");
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<uint32_t> cfs = mem.ColumnFamilies();
  ASSERT_EQ(cfs.size(), static_cast<size_t>(kCfs));
  for (int cf = 0; cf < kCfs; ++cf) {
    EXPECT_EQ(cfs[cf], static_cast<uint32_t>(cf * 1000));
    EXPECT_EQ(mem.NumEntries(cf * 1000), static_cast<uint64_t>(kThreads));
    EXPECT_EQ(ScanForward(mem, cf * 1000).size(), static_cast<size_t>(kThreads));
  }
}

}  // namespace tidesdb
