// Striping for counters that many threads bump at once: each thread writes one of several
// slots, each on its own cache line, so two cores counting do not take the line from each
// other at every event; a read sums the slots.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace tidesdb {

// The calling thread's stripe among `n` (a power of two, at most 2^32): a hash of its
// id. pthread_self reads the thread register, unlike a thread_local, which in a library
// loaded with dlopen (the MariaDB plugin) is a call into the dynamic loader.
inline unsigned ThreadStripe(unsigned n) {
  const uint64_t id = static_cast<uint64_t>(pthread_self());
  return static_cast<unsigned>((id * 0x9E3779B97F4A7C15ull) >> 32) & (n - 1);
}

// A relaxed event counter striped over kStripes cache lines.
class StripedCounter {
 public:
  static constexpr unsigned kStripes = 16;
  void Add(uint64_t n = 1) { slots_[ThreadStripe(kStripes)].value.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Load() const {
    uint64_t sum = 0;
    for (const Slot& s : slots_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> value{0};
  };
  Slot slots_[kStripes];
};

}  // namespace tidesdb
