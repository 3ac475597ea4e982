#include "sst/bloom.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>

namespace tidesdb {

namespace {

constexpr int kMaxProbes = 30;
constexpr size_t kMinBytes = 8;

uint64_t HashKey(Slice key) { return XXH3_64bits(key.data(), key.size()); }

uint64_t SecondHash(uint64_t h) { return ((h >> 32) | (h << 32)) | 1; }

}  // namespace

FilterBuilder::FilterBuilder(double fpr) {
  if (!(fpr >= 1e-9)) fpr = 1e-9;  // also catches NaN
  if (fpr > 0.5) fpr = 0.5;
  const double ln2 = std::log(2.0);
  bits_per_key_ = -std::log(fpr) / (ln2 * ln2);
  num_probes_ = std::clamp(static_cast<int>(std::lround(bits_per_key_ * ln2)), 1, kMaxProbes);
}

void FilterBuilder::Add(Slice user_key) {
  const uint64_t h = HashKey(user_key);
  if (!hashes_.empty() && hashes_.back() == h) return;
  hashes_.push_back(h);
}

std::string FilterBuilder::Finish() const {
  const double wanted_bits = std::ceil(static_cast<double>(hashes_.size()) * bits_per_key_);
  const size_t bytes = std::max(kMinBytes, static_cast<size_t>((wanted_bits + 7) / 8));
  const uint64_t num_bits = uint64_t{bytes} * 8;
  std::string filter(bytes, '\0');
  for (uint64_t h : hashes_) {
    const uint64_t delta = SecondHash(h);
    uint64_t probe = h;
    for (int i = 0; i < num_probes_; ++i) {
      const uint64_t bit = probe % num_bits;
      filter[bit / 8] = static_cast<char>(filter[bit / 8] | (1 << (bit % 8)));
      probe += delta;
    }
  }
  filter.push_back(static_cast<char>(num_probes_));
  return filter;
}

FilterReader::FilterReader(Slice filter) {
  if (filter.size() < kMinBytes + 1) return;
  const int probes = static_cast<unsigned char>(filter.back());
  if (probes < 1 || probes > kMaxProbes) return;
  bits_ = filter.substr(0, filter.size() - 1);
  num_probes_ = probes;
}

bool FilterReader::KeyMayMatch(Slice user_key) const {
  if (num_probes_ == 0) return true;
  const uint64_t num_bits = uint64_t{bits_.size()} * 8;
  const uint64_t h = HashKey(user_key);
  const uint64_t delta = SecondHash(h);
  uint64_t probe = h;
  for (int i = 0; i < num_probes_; ++i) {
    const uint64_t bit = probe % num_bits;
    if ((static_cast<unsigned char>(bits_[bit / 8]) & (1 << (bit % 8))) == 0) return false;
    probe += delta;
  }
  return true;
}

}  // namespace tidesdb
