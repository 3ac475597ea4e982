// Deterministic keys, values and random streams. Every generator is a pure function of
// (seed, stream, index), so the two engines see byte-identical data in the same order
// without the parent process holding any of it (each run is a forked child).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kvbench {

// splitmix64's finalizer: a bijective mix of 64 bits.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A small, fast pseudo-random stream (xorshift64*), seeded through Mix64.
class Random64 {
 public:
  Random64(uint64_t seed, uint64_t stream) : state_(Mix64(seed ^ Mix64(stream)) | 1) {}

  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545f4914f6cdd1dull;
  }

  // Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for our n).
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

// Keys are 16 bytes: the index big-endian (so key order is index order and fillseq is
// sequential), then 8 bytes derived from the index (so keys do not share a 14-byte prefix,
// which would flatter prefix compression).
constexpr size_t kKeySize = 16;

inline void EncodeKey(uint64_t index, char* out) {
  const uint64_t tail = Mix64(index);
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(index >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(tail >> (56 - 8 * i));
  }
}

inline uint64_t DecodeKeyIndex(std::string_view key) {
  uint64_t index = 0;
  for (size_t i = 0; i < 8 && i < key.size(); ++i) index = (index << 8) | static_cast<unsigned char>(key[i]);
  return index;
}

// Values: windows of a 1 MiB pool in which each 64-byte run is 32 random bytes followed by
// the same 32 bytes again, so a block compresses to about half (like db_bench's default
// compression ratio of 0.5). The value of key index i is always the same window, so reads
// can check every byte they get back.
class ValuePool {
 public:
  ValuePool(size_t value_size, uint64_t seed) : value_size_(value_size) {
    size_t size = 1 << 20;
    if (size < 4 * value_size) size = 4 * value_size;
    pool_.resize(size);
    Random64 rng(seed, 0x76616c7565ull);
    for (size_t off = 0; off < size; off += 64) {
      char run[32];
      for (size_t i = 0; i < 32; i += 8) {
        const uint64_t r = rng.Next();
        std::memcpy(run + i, &r, 8);
      }
      for (size_t i = 0; i < 64 && off + i < size; ++i) pool_[off + i] = run[i % 32];
    }
  }

  size_t value_size() const { return value_size_; }

  std::string_view ValueFor(uint64_t index) const {
    const size_t windows = pool_.size() - value_size_ + 1;
    return std::string_view(pool_.data() + Mix64(index ^ 0x5eed) % windows, value_size_);
  }

 private:
  size_t value_size_;
  std::string pool_;
};

}  // namespace kvbench
