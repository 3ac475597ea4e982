#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sst/bloom.h"

namespace tidesdb {
namespace {

std::string Key(int i, char tag) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%c-user-%09d", tag, i);
  return buf;
}

double MeasureFalsePositiveRate(double fpr, int n, std::string* filter_out = nullptr) {
  FilterBuilder builder(fpr);
  for (int i = 0; i < n; ++i) builder.Add(Key(i, 'a'));
  const std::string filter = builder.Finish();
  FilterReader reader(filter);
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(reader.KeyMayMatch(Key(i, 'a'))) << "false negative for key " << i;
  }
  int false_positives = 0;
  const int probes = 200000;
  for (int i = 0; i < probes; ++i) false_positives += reader.KeyMayMatch(Key(i, 'b')) ? 1 : 0;
  if (filter_out != nullptr) *filter_out = filter;
  return static_cast<double>(false_positives) / probes;
}

TEST(BloomTest, FalsePositiveRateNearTargetWithoutFalseNegatives) {
  for (double target : {0.01, 0.001, 0.1}) {
    std::string filter;
    const double rate = MeasureFalsePositiveRate(target, 100000, &filter);
    std::printf("target fpr %.4f: measured %.5f, %.2f bits/key\n", target, rate,
                filter.size() * 8.0 / 100000);
    EXPECT_LT(rate, target * 1.3) << "target " << target;
    EXPECT_GT(rate, target * 0.5) << "target " << target;  // the filter is not oversized
  }
}

TEST(BloomTest, RepeatedKeysCountOnce) {
  FilterBuilder once(0.01);
  FilterBuilder repeated(0.01);
  for (int i = 0; i < 1000; ++i) {
    once.Add(Key(i, 'a'));
    for (int v = 0; v < 5; ++v) repeated.Add(Key(i, 'a'));
  }
  EXPECT_EQ(1000u, repeated.num_keys());
  EXPECT_EQ(once.Finish(), repeated.Finish());
}

TEST(BloomTest, EmptyFilterRejectsEverything) {
  FilterBuilder builder(0.01);
  const std::string filter = builder.Finish();
  FilterReader reader(filter);
  int matches = 0;
  for (int i = 0; i < 1000; ++i) matches += reader.KeyMayMatch(Key(i, 'a')) ? 1 : 0;
  EXPECT_EQ(0, matches);
}

TEST(BloomTest, DamagedFilterMayMatchEverything) {
  FilterBuilder builder(0.01);
  for (int i = 0; i < 100; ++i) builder.Add(Key(i, 'a'));
  std::string filter = builder.Finish();
  const std::string bad_filters[] = {
      std::string(),
      filter.substr(0, 5),
      filter.substr(0, filter.size() - 1) + std::string(1, '\0'),    // zero probes
      filter.substr(0, filter.size() - 1) + std::string(1, '\x7f'),  // too many probes
      filter.substr(0, filter.size() - 1) + std::string(1, '\x80'),  // blocked, zero probes
      filter.substr(0, filter.size() - 1) + std::string(1, '\xff'),  // blocked, too many
      filter.substr(0, filter.size() - 2) + std::string(1, '\x87'),  // blocked, not whole blocks
      std::string(1, '\x87'),                                        // blocked, no block
  };
  for (const std::string& bad : bad_filters) {
    FilterReader reader(bad);
    for (int i = 0; i < 200; ++i) EXPECT_TRUE(reader.KeyMayMatch(Key(i, 'z')));
  }
}

// The plain layout written down in bloom.h (tables from before session 30): whether key's
// probes are all set in bits, setting them first when set is true.
bool PlainReference(std::string* bits, int num_probes, const std::string& key, bool set) {
  const uint64_t n = uint64_t{bits->size()} * 8;
  const uint64_t h = XXH3_64bits(key.data(), key.size());
  const uint64_t delta = ((h >> 32) | (h << 32)) | 1;
  uint64_t probe = h;
  for (int i = 0; i < num_probes; ++i) {
    const uint64_t bit = probe % n;
    char& byte = (*bits)[bit / 8];
    if (set) byte = static_cast<char>(byte | (1 << (bit % 8)));
    if ((byte & (1 << (bit % 8))) == 0) return false;
    probe += delta;  // wraps past 2^64 for about half of the keys
  }
  return true;
}

// The blocked layout written down in bloom.h, the same way.
bool BlockedReference(std::string* bits, int num_probes, const std::string& key, bool set) {
  const uint64_t blocks = bits->size() / 64;
  const uint64_t h = XXH3_64bits(key.data(), key.size());
  char* block = &(*bits)[((h >> 32) * blocks >> 32) * 64];
  uint32_t x = static_cast<uint32_t>(h);
  for (int i = 0; i < num_probes; ++i) {
    const uint32_t bit = x >> 23;
    if (set) block[bit / 8] = static_cast<char>(block[bit / 8] | (1 << (bit % 8)));
    if ((block[bit / 8] & (1 << (bit % 8))) == 0) return false;
    x *= 0x9E3779B9u;
  }
  return true;
}

// New filters are blocked: the builder's bytes and the reader's answers must be exactly
// those of the documented layout, for every size (tables written now stay readable).
TEST(BloomTest, BlockedFiltersFollowTheDocumentedLayout) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 60; ++round) {
    const double fpr = round % 3 == 0 ? 0.01 : round % 3 == 1 ? 0.2 : 0.0005;
    const int n = static_cast<int>(rng() % 3000);
    FilterBuilder builder(fpr);
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) {
      keys.push_back(Key(static_cast<int>(rng() % 1000000), 'a'));
      builder.Add(keys.back());
    }
    const std::string filter = builder.Finish();
    const unsigned char last = static_cast<unsigned char>(filter.back());
    ASSERT_EQ(0x80, last & 0x80) << "round " << round;
    const int num_probes = last & 0x7f;
    ASSERT_EQ(0u, (filter.size() - 1) % 64);
    std::string expected(filter.size() - 1, '\0');
    for (const std::string& k : keys) BlockedReference(&expected, num_probes, k, /*set=*/true);
    ASSERT_EQ(expected, filter.substr(0, filter.size() - 1)) << "round " << round << ", " << n << " keys";
    FilterReader reader(filter);
    for (int i = 0; i < 2000; ++i) {
      const std::string k = Key(static_cast<int>(rng() % 1000000), i % 2 == 0 ? 'a' : 'b');
      ASSERT_EQ(BlockedReference(&expected, num_probes, k, /*set=*/false), reader.KeyMayMatch(k)) << k;
    }
  }
}

// Tables written before session 30 have plain filters: they are read as before (the same
// answers as the documented layout, no false negatives, the rate they were built for).
TEST(BloomTest, PlainFiltersOfOlderTablesAreStillRead) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 30; ++round) {
    const int n = 1 + static_cast<int>(rng() % 5000);
    const int num_probes = 7;  // the default 1 %: 9.6 bits per key
    std::string bits(std::max<size_t>(8, (n * 96 / 10 + 7) / 8), '\0');
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) {
      keys.push_back(Key(i, 'a'));
      PlainReference(&bits, num_probes, keys.back(), /*set=*/true);
    }
    FilterReader reader(bits + std::string(1, static_cast<char>(num_probes)));
    for (const std::string& k : keys) ASSERT_TRUE(reader.KeyMayMatch(k)) << k;
    int false_positives = 0;
    for (int i = 0; i < 2000; ++i) {
      const std::string k = Key(static_cast<int>(rng() % 1000000), 'b');
      const bool expected = PlainReference(&bits, num_probes, k, /*set=*/false);
      ASSERT_EQ(expected, reader.KeyMayMatch(k)) << k;
      false_positives += expected ? 1 : 0;
    }
    if (n >= 1000) {
      EXPECT_LT(false_positives, 2000 * 0.03) << "round " << round;
    }
  }
}

TEST(BloomTest, OutOfRangeRatesAreClamped) {
  for (double fpr : {0.0, -1.0, 2.0, 1e-20}) {
    FilterBuilder builder(fpr);
    for (int i = 0; i < 100; ++i) builder.Add(Key(i, 'a'));
    const std::string filter = builder.Finish();
    FilterReader reader(filter);
    for (int i = 0; i < 100; ++i) EXPECT_TRUE(reader.KeyMayMatch(Key(i, 'a')));
  }
}

}  // namespace
}  // namespace tidesdb
