#include <gtest/gtest.h>

#include <cstdio>
#include <string>

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
      std::string(), filter.substr(0, 5),
      filter.substr(0, filter.size() - 1) + std::string(1, '\0'),    // zero probes
      filter.substr(0, filter.size() - 1) + std::string(1, '\x7f'),  // too many probes
  };
  for (const std::string& bad : bad_filters) {
    FilterReader reader(bad);
    for (int i = 0; i < 200; ++i) EXPECT_TRUE(reader.KeyMayMatch(Key(i, 'z')));
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
