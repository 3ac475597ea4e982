// Histogram: a lock-free latency histogram with log-linear buckets (4 linear sub-buckets
// per power of two), so percentiles are within ~12% of the true value at any scale.
// Add() is a few relaxed atomic increments on the calling thread's stripe (util/striped.h),
// so threads recording at once do not contend for the counters: cheap enough for every
// read and write. Reads sum the stripes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace tidesdb {

class Histogram {
 public:
  static constexpr int kSubBuckets = 4;
  static constexpr int kBuckets = 64 * kSubBuckets;

  void Add(uint64_t value);
  uint64_t Count() const;
  // The value below which `p` percent of the samples lie (upper edge of its bucket).
  uint64_t Percentile(double p) const;
  uint64_t Max() const;
  double Average() const;
  // "count=N avg=A p50=X p99=Y p999=Z max=M" (units are the caller's).
  std::string Summary() const;

  static int BucketFor(uint64_t value);
  static uint64_t BucketUpperBound(int bucket);

 private:
  static constexpr unsigned kStripes = 8;
  struct alignas(64) Stripe {
    std::array<std::atomic<uint64_t>, kBuckets> buckets{};
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> sum{0};
    std::atomic<uint64_t> max{0};
  };
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace tidesdb
