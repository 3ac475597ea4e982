#include "util/histogram.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tidesdb {

TEST(Histogram, BucketsAreOrderedAndContainTheirValues) {
  for (uint64_t v : {0ull, 1ull, 3ull, 4ull, 5ull, 7ull, 8ull, 100ull, 1000ull, 123456789ull, ~0ull >> 2}) {
    int b = Histogram::BucketFor(v);
    EXPECT_LE(v, Histogram::BucketUpperBound(b)) << v;
    if (b > 0) {
      EXPECT_GT(v, Histogram::BucketUpperBound(b - 1)) << v;
    }
  }
}

TEST(Histogram, PercentilesOfAUniformSpread) {
  Histogram h;
  for (uint64_t v = 1; v <= 10000; ++v) h.Add(v);
  EXPECT_EQ(h.Count(), 10000u);
  EXPECT_NEAR(static_cast<double>(h.Percentile(50)), 5000, 5000 * 0.13);
  EXPECT_NEAR(static_cast<double>(h.Percentile(99)), 9900, 9900 * 0.13);
  EXPECT_EQ(h.Max(), 10000u);
  EXPECT_NEAR(h.Average(), 5000.5, 0.01);
  EXPECT_NE(h.Summary().find("count=10000"), std::string::npos);
}

TEST(Histogram, ConcurrentAddsAreAllCounted) {
  Histogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < 10000; ++i) h.Add(static_cast<uint64_t>(i));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(h.Count(), 40000u);
  EXPECT_EQ(h.Max(), 9999u);
}

// Threads record on their own stripes: the percentiles, the maximum and the average are
// those of all their samples together.
TEST(Histogram, SamplesOfManyThreadsMergeIntoOneDistribution) {
  Histogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&h, t] {
      for (uint64_t v = 1; v <= 1000; ++v) h.Add(static_cast<uint64_t>(t) * 1000 + v);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(h.Count(), 8000u);
  EXPECT_EQ(h.Max(), 8000u);
  EXPECT_NEAR(h.Average(), 4000.5, 0.01);
  EXPECT_NEAR(static_cast<double>(h.Percentile(50)), 4000, 4000 * 0.13);
  EXPECT_NEAR(static_cast<double>(h.Percentile(99)), 7920, 7920 * 0.13);
}

TEST(Histogram, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.Percentile(99), 0u);
  EXPECT_EQ(h.Average(), 0.0);
}

}  // namespace tidesdb
