// Bloom filter over the distinct user keys of one table (the klog's filter block).
//
// Layout (format version 1 of the klog, format.h):
//
//   bits[n]   n >= 8 bytes; bit i is bit (i % 8) of byte i / 8
//   u8        num_probes (k), 1..30
//
// A plain (not cache-line blocked) filter: it meets the configured false-positive rate
// without extra bits. Probe i of key sets bit (h1 + i * h2) mod (8n), where h = XXH3_64bits
// (user key), h1 = h and h2 = (h >> 32 | h << 32) | 1 (double hashing). Bits per key
// b = -ln(fpr) / ln(2)^2, k = round(b * ln 2).
//
// A filter that is too short or has an out-of-range probe count answers "may match" for
// every key, so a damaged filter costs reads, never a false negative.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/filter_key.h"

#include "tidesdb/slice.h"

namespace tidesdb {

class FilterBuilder {
 public:
  // 0 < fpr < 1; out-of-range values are clamped to [1e-9, 0.5].
  explicit FilterBuilder(double fpr);

  // Adding the same key twice in a row counts it once (versions of one user key).
  void Add(Slice user_key);
  // The filter bytes for the keys added so far.
  std::string Finish() const;
  size_t num_keys() const { return hashes_.size(); }

 private:
  double bits_per_key_;
  int num_probes_;
  std::vector<uint64_t> hashes_;
};

class FilterReader {
 public:
  // Keeps a view of filter; the bytes must outlive the reader.
  explicit FilterReader(Slice filter);

  // False only if user_key was certainly not added.
  bool KeyMayMatch(Slice user_key) const;

 private:
  Slice bits_;
  int num_probes_ = 0;  // 0: the filter is unusable, every key may match
};

}  // namespace tidesdb
