#include "cache/block_cache.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tidesdb {

namespace {

struct CacheKey {
  uint64_t file_number;
  uint64_t offset;
  bool operator==(const CacheKey& o) const { return file_number == o.file_number && offset == o.offset; }
};

// Mixes both halves of the key into 64 well-distributed bits: the top bits pick the shard,
// the map uses the rest. (Block offsets are multiples of nothing in particular but share
// low bits often, and file numbers are small, so neither may be used raw.)
uint64_t HashKey(uint64_t file_number, uint64_t offset) {
  uint64_t h = file_number * 0x9e3779b97f4a7c15ull ^ offset;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

constexpr uint32_t kNoSlot = UINT32_MAX;

// Key -> slot index of one shard: open addressing with linear probing over a power-of-two
// table of (key, slot) pairs, at most half full. Erasing shifts the rest of the probe run
// back, so there are no tombstones. A lookup usually touches one table entry: one cache
// miss, where a node-based map costs several (bucket, node), which dominated iterators
// that look up every value they step over.
class SlotIndex {
 public:
  uint32_t Find(const CacheKey& key) const {
    if (table_.empty()) return kNoSlot;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.slot == kNoSlot) return kNoSlot;
      if (e.key == key) return e.slot;
    }
  }

  // `key` must not be present.
  void Insert(const CacheKey& key, uint32_t slot) {
    if ((size_ + 1) * 2 > table_.size()) Grow();
    size_t i = Home(key);
    while (table_[i].slot != kNoSlot) i = (i + 1) & mask_;
    table_[i] = Entry{key, slot};
    ++size_;
  }

  void Erase(const CacheKey& key) {
    if (table_.empty()) return;
    size_t hole = Home(key);
    for (;; hole = (hole + 1) & mask_) {
      if (table_[hole].slot == kNoSlot) return;  // absent
      if (table_[hole].key == key) break;
    }
    // Move back every later entry of the run whose home is not in (hole, j]: it could not
    // be found past the hole otherwise.
    for (size_t j = (hole + 1) & mask_; table_[j].slot != kNoSlot; j = (j + 1) & mask_) {
      const size_t home = Home(table_[j].key);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        table_[hole] = table_[j];
        hole = j;
      }
    }
    table_[hole].slot = kNoSlot;
    --size_;
  }

  size_t size() const { return size_; }

 private:
  struct Entry {
    CacheKey key{0, 0};
    uint32_t slot = kNoSlot;
  };

  size_t Home(const CacheKey& key) const { return HashKey(key.file_number, key.offset) & mask_; }

  void Grow() {
    std::vector<Entry> old = std::move(table_);
    table_.assign(std::max<size_t>(old.size() * 2, 64), Entry{});
    mask_ = table_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (e.slot != kNoSlot) Insert(e.key, e.slot);
    }
  }

  std::vector<Entry> table_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// Values released outside the shard mutex.
using Garbage = std::vector<std::shared_ptr<const void>>;

}  // namespace

class BlockCache::Shard {
 public:
  void SetCapacity(size_t capacity) { capacity_ = capacity; }
  size_t capacity() const { return capacity_; }

  bool Insert(const CacheKey& key, std::shared_ptr<const void> value, size_t charge, Garbage* garbage) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const uint32_t old = index_.Find(key); old != kNoSlot) RemoveSlot(old, garbage);
    if (value == nullptr || charge > capacity_) {
      garbage->push_back(std::move(value));
      return false;
    }
    while (usage_ + charge > capacity_) EvictOne(garbage);

    uint32_t idx;
    if (!free_slots_.empty()) {
      idx = free_slots_.back();
      free_slots_.pop_back();
    } else {
      idx = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& s = slots_[idx];
    s.key = key;
    s.value = std::move(value);
    s.charge = charge;
    s.in_use = true;
    s.referenced = false;
    LinkIntoFile(idx);
    index_.Insert(key, idx);
    SetUsage(usage_ + charge);
    BumpLocked(inserts_);
    return true;
  }

  std::shared_ptr<const void> Lookup(const CacheKey& key) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t idx = index_.Find(key);
    if (idx == kNoSlot) {
      BumpLocked(misses_);
      return nullptr;
    }
    Slot& s = slots_[idx];
    // Written only when it changes: a block that threads on both cores hit keeps its slot's
    // cache line shared between them.
    if (!s.referenced) s.referenced = true;
    BumpLocked(hits_);
    return s.value;
  }

  bool Erase(const CacheKey& key, Garbage* garbage) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t idx = index_.Find(key);
    if (idx == kNoSlot) return false;
    RemoveSlot(idx, garbage);
    return true;
  }

  size_t EraseFile(uint64_t file_number, Garbage* garbage) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (;;) {
      auto it = file_heads_.find(file_number);
      if (it == file_heads_.end()) return n;
      RemoveSlot(it->second, garbage);  // unlinks the head; drops the map entry with the last
      ++n;
    }
  }

  size_t usage() const { return usage_published_.load(std::memory_order_relaxed); }
  size_t entries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return index_.size();
  }
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }
  uint64_t inserts() const { return inserts_.load(std::memory_order_relaxed); }
  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    CacheKey key{0, 0};
    std::shared_ptr<const void> value;
    size_t charge = 0;
    // Neighbours in the chain of slots holding blocks of the same file.
    uint32_t file_prev = kNoSlot;
    uint32_t file_next = kNoSlot;
    bool in_use = false;
    bool referenced = false;
  };

  // A counter written only under mu_ and read without it: a plain load and store, no
  // locked read-modify-write.
  static void BumpLocked(std::atomic<uint64_t>& counter) {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  void SetUsage(size_t usage) {
    usage_ = usage;
    usage_published_.store(usage, std::memory_order_relaxed);
  }

  // Advances the hand until it evicts one entry. Requires usage_ > 0, so some slot is in
  // use; at most two revolutions (the first clears every reference bit).
  void EvictOne(Garbage* garbage) {
    for (;;) {
      if (hand_ >= slots_.size()) hand_ = 0;
      const uint32_t idx = static_cast<uint32_t>(hand_++);
      Slot& s = slots_[idx];
      if (!s.in_use) continue;
      if (s.referenced) {
        s.referenced = false;
        continue;
      }
      RemoveSlot(idx, garbage);
      BumpLocked(evictions_);
      return;
    }
  }

  void LinkIntoFile(uint32_t idx) {
    Slot& s = slots_[idx];
    auto [it, inserted] = file_heads_.try_emplace(s.key.file_number, idx);
    s.file_prev = kNoSlot;
    s.file_next = inserted ? kNoSlot : it->second;
    if (!inserted) {
      slots_[it->second].file_prev = idx;
      it->second = idx;
    }
  }

  void RemoveSlot(uint32_t idx, Garbage* garbage) {
    Slot& s = slots_[idx];
    if (s.file_prev != kNoSlot) {
      slots_[s.file_prev].file_next = s.file_next;
    } else if (s.file_next != kNoSlot) {
      file_heads_[s.key.file_number] = s.file_next;
    } else {
      file_heads_.erase(s.key.file_number);
    }
    if (s.file_next != kNoSlot) slots_[s.file_next].file_prev = s.file_prev;
    index_.Erase(s.key);
    SetUsage(usage_ - s.charge);
    garbage->push_back(std::move(s.value));
    s.value = nullptr;
    s.charge = 0;
    s.file_prev = s.file_next = kNoSlot;
    s.in_use = false;
    s.referenced = false;
    free_slots_.push_back(idx);
  }

  mutable std::mutex mu_;
  size_t capacity_ = 0;
  size_t usage_ = 0;
  std::vector<Slot> slots_;
  // LIFO, so the slot the hand just freed is the next one filled (see the header).
  std::vector<uint32_t> free_slots_;
  SlotIndex index_;
  std::unordered_map<uint64_t, uint32_t> file_heads_;  // file number -> first slot of its chain
  size_t hand_ = 0;

  // Readable without the mutex.
  std::atomic<size_t> usage_published_{0};
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> inserts_{0};
  std::atomic<uint64_t> evictions_{0};
};

BlockCache::BlockCache(size_t capacity_bytes, int num_shard_bits) : capacity_(capacity_bytes) {
  int bits = std::clamp(num_shard_bits, 0, kMaxShardBits);
  while (bits > 0 && (capacity_bytes >> bits) < kMinShardCapacity) --bits;
  shard_bits_ = bits;
  num_shards_ = 1 << bits;
  shards_ = std::make_unique<Shard[]>(static_cast<size_t>(num_shards_));
  // Rounding down: the shards' capacities sum to at most capacity_bytes.
  for (int i = 0; i < num_shards_; ++i) shards_[i].SetCapacity(capacity_bytes >> bits);
}

BlockCache::~BlockCache() = default;

BlockCache::Shard& BlockCache::ShardFor(uint64_t hash) const {
  return shards_[shard_bits_ == 0 ? 0 : static_cast<size_t>(hash >> (64 - shard_bits_))];
}

bool BlockCache::Insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
                        size_t charge) {
  Garbage garbage;
  return ShardFor(HashKey(file_number, offset))
      .Insert(CacheKey{file_number, offset}, std::move(value), std::max<size_t>(charge, 1), &garbage);
}

std::shared_ptr<const void> BlockCache::LookupErased(uint64_t file_number, uint64_t offset) {
  return ShardFor(HashKey(file_number, offset)).Lookup(CacheKey{file_number, offset});
}

bool BlockCache::Erase(uint64_t file_number, uint64_t offset) {
  Garbage garbage;
  return ShardFor(HashKey(file_number, offset)).Erase(CacheKey{file_number, offset}, &garbage);
}

size_t BlockCache::EraseFile(uint64_t file_number) {
  size_t n = 0;
  Garbage garbage;
  for (int i = 0; i < num_shards_; ++i) {
    n += shards_[i].EraseFile(file_number, &garbage);
    garbage.clear();
  }
  return n;
}

size_t BlockCache::usage() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; ++i) total += shards_[i].usage();
  return total;
}

size_t BlockCache::entries() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; ++i) total += shards_[i].entries();
  return total;
}

uint64_t BlockCache::hits() const {
  uint64_t total = 0;
  for (int i = 0; i < num_shards_; ++i) total += shards_[i].hits();
  return total;
}

uint64_t BlockCache::misses() const {
  uint64_t total = 0;
  for (int i = 0; i < num_shards_; ++i) total += shards_[i].misses();
  return total;
}

uint64_t BlockCache::inserts() const {
  uint64_t total = 0;
  for (int i = 0; i < num_shards_; ++i) total += shards_[i].inserts();
  return total;
}

uint64_t BlockCache::evictions() const {
  uint64_t total = 0;
  for (int i = 0; i < num_shards_; ++i) total += shards_[i].evictions();
  return total;
}

}  // namespace tidesdb
