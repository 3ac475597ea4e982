#include "util/filter_key.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tidesdb {
namespace {

TEST(FilterKey, RangeFilterKeyOnlyForRangesInsideOnePrefix) {
  Slice key;
  // Inside one 3-byte prefix: the limit starts with it, or is its successor.
  EXPECT_TRUE(RangeFilterKey("abc", "abd", 3, &key));
  EXPECT_EQ("abc", key);
  EXPECT_TRUE(RangeFilterKey("abc12", "abc9", 3, &key));
  EXPECT_EQ("abc", key);
  // The key views start, so start must outlive it.
  const std::string all_ones_tail("a\xff\xff", 3);
  EXPECT_TRUE(RangeFilterKey(all_ones_tail, "b", 3, &key));
  EXPECT_EQ(all_ones_tail, key);
  const std::string carry("a\x01\xffz", 4);
  EXPECT_TRUE(RangeFilterKey(carry, std::string("a\x02", 2), 3, &key));
  EXPECT_EQ(std::string("a\x01\xff", 3), key);
  // Not inside one: limits past the successor, a start shorter than the prefix, no limit,
  // a prefix without a successor (all 0xff), no prefix configured.
  EXPECT_FALSE(RangeFilterKey("abc", "abe", 3, &key));
  EXPECT_FALSE(RangeFilterKey("abc", std::string("abd\0", 4), 3, &key));
  EXPECT_FALSE(RangeFilterKey("ab", "ac", 3, &key));
  EXPECT_FALSE(RangeFilterKey("abc", "", 3, &key));
  EXPECT_FALSE(RangeFilterKey(std::string("\xff\xff\xff", 3), std::string("\xff\xff", 2), 3, &key));
  EXPECT_FALSE(RangeFilterKey("abc", "abd", 0, &key));
  EXPECT_FALSE(RangeFilterKey("abc", "b", 3, &key));
}

TEST(FilterKey, FilterKeyIsThePrefixOfLongEnoughKeys) {
  EXPECT_EQ("abc", FilterKey("abcdef", 3));
  EXPECT_EQ("abc", FilterKey("abc", 3));
  EXPECT_EQ("ab", FilterKey("ab", 3));
  EXPECT_EQ("abcdef", FilterKey("abcdef", 0));
}

// A filter that holds exactly the filter keys of `keys`, and counts its probes.
struct ExactFilter {
  std::set<std::string> held;
  size_t probes = 0;
  ExactFilter(const std::vector<std::string>& keys, size_t prefix_length) {
    for (const std::string& k : keys) held.insert(std::string(FilterKey(k, prefix_length)));
  }
  bool May(Slice start, Slice limit, size_t prefix_length) {
    return RangeMayMatchFilter(start, limit, prefix_length, [this](Slice key) {
      ++probes;
      return held.count(std::string(key)) != 0;
    });
  }
};

TEST(FilterKey, RangeMayMatchFilterProbesEachPrefixOfASmallRange) {
  const std::vector<std::string> keys = {std::string("\x80\x00\x00\x0a", 4) + "pk1",
                                         std::string("\x80\x00\x00\x14", 4) + "pk2"};
  ExactFilter filter(keys, 4);
  // k BETWEEN 11 AND 15 (limit: the successor of 15's prefix): five prefixes, none held.
  EXPECT_FALSE(filter.May(std::string("\x80\x00\x00\x0b", 4), std::string("\x80\x00\x00\x10", 4), 4));
  EXPECT_EQ(5u, filter.probes);
  // k BETWEEN 8 AND 12 holds 10.
  EXPECT_TRUE(filter.May(std::string("\x80\x00\x00\x08", 4), std::string("\x80\x00\x00\x0d", 4), 4));
  // Past kMaxRangeFilterPrefixes prefixes: no probe, "may match".
  filter.probes = 0;
  EXPECT_TRUE(filter.May(std::string("\x80\x00\x00\x30", 4), std::string("\x80\x00\x00\x60", 4), 4));
  EXPECT_EQ(0u, filter.probes);
  // Across a carry: 0x..ff, then 0x..01 00, whose shorter forms (held whole) are probed too.
  filter.probes = 0;
  EXPECT_FALSE(filter.May(std::string("\x80\x00\x00\xfe", 4), std::string("\x80\x00\x01\x02", 4), 4));
  EXPECT_EQ(4u + 1u, filter.probes);
  // No limit, or no prefix: cannot tell.
  EXPECT_TRUE(filter.May(std::string("\x80\x00\x00\x0b", 4), "", 4));
  EXPECT_TRUE(filter.May("a", "b", 0));
}

// A key of up to max_length bytes drawn from `alphabet` (a byte may repeat in it to be
// drawn more often).
std::string RandomKey(std::mt19937& rng, std::string_view alphabet, size_t max_length) {
  std::string k(std::uniform_int_distribution<size_t>(0, max_length)(rng), '\0');
  for (char& c : k) c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
  return k;
}

// Randomized against the definition: whenever a key of the set lies in [start, limit),
// the filter must not rule the range out. Short keys, zero and 0xff bytes, and bounds
// shorter or longer than the prefix are all common in this key space.
TEST(FilterKey, RangeMayMatchFilterNeverRulesOutAKeyInTheRange) {
  std::mt19937 rng(20261206);
  auto random_key = [&](size_t max_length) {
    return RandomKey(rng, std::string_view("\0\x01\x7f\xfe\xff", 5), max_length);
  };
  size_t ruled_out = 0;
  for (int round = 0; round < 3000; ++round) {
    const size_t prefix_length = std::uniform_int_distribution<size_t>(1, 3)(rng);
    std::vector<std::string> keys;
    for (int i = 0; i < 6; ++i) keys.push_back(random_key(5));
    ExactFilter filter(keys, prefix_length);
    for (int q = 0; q < 20; ++q) {
      std::string start = random_key(4), limit = random_key(4);
      if (limit.empty() || limit <= start) continue;
      bool any = false;
      for (const std::string& k : keys) any = any || (k >= start && k < limit);
      const bool may = filter.May(start, limit, prefix_length);
      if (any) {
        ASSERT_TRUE(may) << "prefix " << prefix_length;
      }
      ruled_out += may ? 0 : 1;
    }
  }
  EXPECT_GT(ruled_out, 1000u);  // and it does rule ranges out
}

// The prefetching form answers as the plain one does, on ranges of few and of many probes
// (long prefixes of zero bytes overflow what it collects), and prefetches every hash it
// tests before testing the first.
TEST(FilterKey, RangeMayMatchFilterPrefetchedAnswersAsThePlainFilter) {
  std::mt19937 rng(20261207);
  auto random_key = [&](size_t max_length) {
    return RandomKey(rng, std::string_view("\0\0\x01\x02\xff", 5), max_length);
  };
  size_t overflows = 0, ruled_out = 0;
  for (int round = 0; round < 2000; ++round) {
    const size_t prefix_length = std::uniform_int_distribution<size_t>(1, 24)(rng);
    std::vector<std::string> keys;
    for (int i = 0; i < 8; ++i) keys.push_back(random_key(prefix_length + 2));
    ExactFilter filter(keys, prefix_length);
    std::set<uint64_t> held;
    for (const std::string& k : filter.held) held.insert(std::hash<std::string>()(k));
    for (int q = 0; q < 10; ++q) {
      std::string start = random_key(prefix_length + 1), limit = random_key(prefix_length + 1);
      if (limit.empty() || limit <= start) continue;
      std::set<uint64_t> prefetched;
      bool tested = false, prefetched_after_test = false;
      const bool may = RangeMayMatchFilterPrefetched(
          start, limit, prefix_length, [](Slice key) { return std::hash<std::string>()(std::string(key)); },
          [&](uint64_t h) {
            prefetched_after_test = prefetched_after_test || tested;
            prefetched.insert(h);
          },
          [&](uint64_t h) {
            tested = true;
            if (prefetched.count(h) == 0) ++overflows;  // the walk ran out of room: plain probes
            return held.count(h) != 0;
          });
      ASSERT_EQ(filter.May(start, limit, prefix_length), may) << "prefix " << prefix_length;
      ASSERT_FALSE(prefetched_after_test);
      ruled_out += may ? 0 : 1;
    }
  }
  EXPECT_GT(overflows, 0u) << "no range overflowed what the walk collects";
  EXPECT_GT(ruled_out, 50u) << "ruled out " << ruled_out;
}

}  // namespace
}  // namespace tidesdb
