#include "sst/bloom.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

namespace tidesdb {

namespace {

constexpr int kMaxProbes = 30;
constexpr size_t kMinBytes = 8;  // the plain layout's
constexpr size_t kBlockBytes = 64;
constexpr unsigned char kBlockedTag = 0x80;
// A blocked filter's keys do not spread evenly over its blocks, and a crowded block answers
// "may match" more often: with the plain layout's bits per key, bloom_test's
// FalsePositiveRateNearTargetWithoutFalseNegatives measured 1.17 % for 1 % and 0.16 % for
// 0.1 %. A tenth more bits brings them to 0.78 % and 0.093 %.
constexpr double kBlockedBitsFactor = 1.1;
constexpr uint32_t kProbeMultiplier = 0x9E3779B9;

uint64_t HashKey(Slice key) { return XXH3_64bits(key.data(), key.size()); }

uint64_t SecondHash(uint64_t h) { return ((h >> 32) | (h << 32)) | 1; }

uint64_t BlockOf(uint64_t h, uint64_t num_blocks) { return ((h >> 32) * num_blocks) >> 32; }

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
  const double wanted_bits =
      std::ceil(static_cast<double>(hashes_.size()) * bits_per_key_ * kBlockedBitsFactor);
  const uint64_t num_blocks =
      std::max<uint64_t>(1, static_cast<uint64_t>((wanted_bits + kBlockBytes * 8 - 1) / (kBlockBytes * 8)));
  std::string filter(num_blocks * kBlockBytes, '\0');
  for (uint64_t h : hashes_) {
    char* block = &filter[BlockOf(h, num_blocks) * kBlockBytes];
    uint32_t x = static_cast<uint32_t>(h);
    for (int i = 0; i < num_probes_; ++i) {
      const uint32_t bit = x >> 23;
      block[bit / 8] = static_cast<char>(block[bit / 8] | (1 << (bit % 8)));
      x *= kProbeMultiplier;
    }
  }
  filter.push_back(static_cast<char>(kBlockedTag | num_probes_));
  return filter;
}

void FilterReader::AlignedFree::operator()(char* p) const {
  ::operator delete[](p, std::align_val_t(kBlockBytes));
}

FilterReader::FilterReader(std::string filter) {
  if (filter.empty()) return;
  const unsigned char last = static_cast<unsigned char>(filter.back());
  const int probes = last & ~kBlockedTag;
  if (probes < 1 || probes > kMaxProbes) return;
  const size_t bytes = filter.size() - 1;
  if ((last & kBlockedTag) != 0) {
    if (bytes == 0 || bytes % kBlockBytes != 0) return;
    blocks_.reset(static_cast<char*>(::operator new[](bytes, std::align_val_t(kBlockBytes))));
    std::memcpy(blocks_.get(), filter.data(), bytes);
    num_blocks_ = bytes / kBlockBytes;
  } else {
    if (bytes < kMinBytes) return;
    filter.pop_back();
    plain_ = std::move(filter);
  }
  num_probes_ = probes;
}

bool FilterReader::KeyMayMatch(Slice user_key) const {
  if (num_probes_ == 0) return true;
  const uint64_t h = HashKey(user_key);
  if (blocks_ != nullptr) {
    const char* block = blocks_.get() + BlockOf(h, num_blocks_) * kBlockBytes;
    uint32_t x = static_cast<uint32_t>(h);
    for (int i = 0; i < num_probes_; ++i) {
      const uint32_t bit = x >> 23;
      if ((static_cast<unsigned char>(block[bit / 8]) & (1 << (bit % 8))) == 0) return false;
      x *= kProbeMultiplier;
    }
    return true;
  }
  const uint64_t num_bits = uint64_t{plain_.size()} * 8;
  const uint64_t delta = SecondHash(h);
  uint64_t probe = h;
  for (int i = 0; i < num_probes_; ++i) {
    const uint64_t bit = probe % num_bits;
    if ((static_cast<unsigned char>(plain_[bit / 8]) & (1 << (bit % 8))) == 0) return false;
    probe += delta;
  }
  return true;
}

}  // namespace tidesdb
