// Bloom filter over the distinct user keys of one table (the klog's filter block).
//
// Two layouts (format version 1 of the klog, format.h), told apart by the last byte. In
// both, h = XXH3_64bits(user key), bit i is bit (i % 8) of byte i / 8, bits per key
// b = -ln(fpr) / ln(2)^2 and k = round(b * ln 2).
//
//   blocked (written since session 30):
//     bits[64 m]  m >= 1 blocks of 512 bits
//     u8          0x80 | num_probes (k), k in 1..30
//   A key's probes all fall in one block, so a lookup reads one cache line whatever k is:
//   block ((h >> 32) * m) >> 32; probe i is bit x_i >> 23 of that block, where x_0 is the low
//   32 bits of h and x_{i+1} = x_i * 0x9E3779B9 mod 2^32. The blocks hold b * 1.1 bits per
//   key (kBlockedBitsFactor), which keeps the false-positive rate at or below the configured
//   one.
//
//   plain (written before session 30; still read):
//     bits[n]     n >= 8 bytes
//     u8          num_probes (k), 1..30
//   Probe i of key is bit (h1 + i * h2) mod 2^64 mod (8n), where h1 = h and
//   h2 = (h >> 32 | h << 32) | 1 (double hashing): up to k cache lines per lookup.
//
// A filter that is too short, is not whole blocks or has an out-of-range probe count answers
// "may match" for every key, so a damaged filter costs reads, never a false negative. A
// reader from before session 30 takes the blocked layout's last byte for such a count: it
// reads newer tables without their filters, never wrongly.
#pragma once

#include <cstdint>
#include <memory>
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
  // Reads either layout; a blocked filter's bits are kept aligned to cache lines.
  explicit FilterReader(std::string filter);

  // False only if user_key was certainly not added.
  bool KeyMayMatch(Slice user_key) const;

 private:
  struct AlignedFree {
    void operator()(char* p) const;
  };

  std::string plain_;                            // a plain filter's bits
  std::unique_ptr<char[], AlignedFree> blocks_;  // a blocked filter's bits, 64-byte aligned
  uint64_t num_blocks_ = 0;
  int num_probes_ = 0;  // 0: the filter is unusable, every key may match
};

}  // namespace tidesdb
