#include "util/histogram.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>

#include "util/striped.h"

namespace tidesdb {

int Histogram::BucketFor(uint64_t value) {
  if (value < kSubBuckets) return static_cast<int>(value);
  const int msb = 63 - std::countl_zero(value);                                // value in [2^msb, 2^(msb+1))
  const int sub = static_cast<int>((value >> (msb - 2)) & (kSubBuckets - 1));  // next 2 bits
  return (msb - 1) * kSubBuckets + sub;
}

uint64_t Histogram::BucketUpperBound(int bucket) {
  if (bucket < kSubBuckets) return static_cast<uint64_t>(bucket);
  const int msb = bucket / kSubBuckets + 1;
  const uint64_t sub = static_cast<uint64_t>(bucket % kSubBuckets);
  const uint64_t base = uint64_t{1} << msb;
  const uint64_t step = base / kSubBuckets;
  return base + (sub + 1) * step - 1;
}

void Histogram::Add(uint64_t value) {
  Stripe& s = stripes_[ThreadStripe(kStripes)];
  s.buckets[BucketFor(value)].fetch_add(1, std::memory_order_relaxed);
  s.count.fetch_add(1, std::memory_order_relaxed);
  s.sum.fetch_add(value, std::memory_order_relaxed);
  uint64_t prev = s.max.load(std::memory_order_relaxed);
  while (value > prev && !s.max.compare_exchange_weak(prev, value, std::memory_order_relaxed)) {
  }
}

uint64_t Histogram::Count() const {
  uint64_t n = 0;
  for (const Stripe& s : stripes_) n += s.count.load(std::memory_order_relaxed);
  return n;
}

uint64_t Histogram::Max() const {
  uint64_t m = 0;
  for (const Stripe& s : stripes_) m = std::max(m, s.max.load(std::memory_order_relaxed));
  return m;
}

uint64_t Histogram::Percentile(double p) const {
  const uint64_t total = Count();
  if (total == 0) return 0;
  const double want = p / 100.0 * static_cast<double>(total);
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    for (const Stripe& s : stripes_) seen += s.buckets[b].load(std::memory_order_relaxed);
    if (static_cast<double>(seen) >= want) return std::min(BucketUpperBound(b), Max());
  }
  return Max();
}

double Histogram::Average() const {
  const uint64_t n = Count();
  uint64_t sum = 0;
  for (const Stripe& s : stripes_) sum += s.sum.load(std::memory_order_relaxed);
  return n == 0 ? 0.0 : static_cast<double>(sum) / static_cast<double>(n);
}

std::string Histogram::Summary() const {
  char buf[192];
  std::snprintf(buf, sizeof(buf),
                "count=%" PRIu64 " avg=%.1f p50=%" PRIu64 " p99=%" PRIu64 " p999=%" PRIu64 " max=%" PRIu64,
                Count(), Average(), Percentile(50), Percentile(99), Percentile(99.9), Max());
  return buf;
}

}  // namespace tidesdb
