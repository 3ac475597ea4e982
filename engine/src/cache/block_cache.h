// BlockCache: a sharded CLOCK cache of decoded blocks (key-log data, index and filter
// blocks), keyed by (file number, offset of the block in the file), with a hard bound on
// the bytes it holds.
//
// Values are type-erased (std::shared_ptr<const void>) so the cache does not depend on the
// block classes; callers use the typed Lookup<T>. Contract: a key always maps to values of
// one type T (a block at one offset of one file is always the same kind of block), and a
// file number is never reused, so a cached value never goes stale.
//
// Memory bound: each shard admits an entry only after evicting until its usage plus the
// entry's charge fits its capacity (capacity / number of shards), and an entry whose charge
// exceeds a shard's capacity is not cached at all. So usage() <= capacity() at every
// moment. A value that a reader still holds (a shared_ptr returned by Lookup, or the one it
// passed to Insert) stays alive after eviction until the reader drops it, but from the
// moment of eviction it no longer counts against the cache: the bound is on what the cache
// keeps alive, not on what readers hold.
//
// Replacement (CLOCK): every entry has a reference bit, set by a hit. To make room, the
// hand sweeps the shard's slots, clearing set bits and evicting the first entry whose bit
// is already clear. An entry enters with its bit clear, so a block read once by a scan is
// evicted on the hand's next pass, while a block hit at least once per revolution of the
// hand stays resident. In steady state an insert reuses the slot just freed behind the
// hand, so a new entry gets a full revolution before it is considered.
//
// Index: each shard finds a key's slot through an open-addressing table (linear probing,
// at most half full, back-shift deletion), so a lookup usually costs one cache miss.
//
// Thread safety: every method may be called from many threads at once. Each shard has a
// mutex, held briefly by Lookup and Insert; evicted values are released after it is
// dropped, so freeing a large block never happens under the lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tidesdb {

class BlockCache {
 public:
  // Each shard gets at least kMinShardCapacity bytes when capacity allows: num_shard_bits
  // is lowered until it does (it is an upper bound, at most kMaxShardBits).
  static constexpr size_t kMinShardCapacity = size_t{512} << 10;
  static constexpr int kMaxShardBits = 8;

  explicit BlockCache(size_t capacity_bytes, int num_shard_bits = 4);
  ~BlockCache();

  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // Caches value under (file_number, offset), replacing any entry with that key, and
  // evicts by the CLOCK hand until it fits. charge is the bytes the value holds (at least
  // 1 is counted). Returns false, caching nothing (and dropping any old entry of the key),
  // when charge exceeds a shard's capacity or value is null.
  bool Insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value, size_t charge);

  // The cached value, or null. A hit sets the entry's reference bit.
  std::shared_ptr<const void> LookupErased(uint64_t file_number, uint64_t offset);
  template <class T>
  std::shared_ptr<const T> Lookup(uint64_t file_number, uint64_t offset) {
    return std::static_pointer_cast<const T>(LookupErased(file_number, offset));
  }

  // Drops the entry; true if there was one.
  bool Erase(uint64_t file_number, uint64_t offset);

  // Drops every entry of a deleted file; returns how many. Each shard chains the entries
  // of a file through their slots (two slot indices per entry, one map entry per file per
  // shard), so this costs one lookup per shard plus one step per dropped entry rather than
  // a scan of the cache.
  size_t EraseFile(uint64_t file_number);

  // Sum of the charges of the cached entries; never more than capacity().
  size_t usage() const;
  // The capacity passed to the constructor.
  size_t capacity() const { return capacity_; }
  size_t entries() const;
  int num_shards() const { return num_shards_; }

  // Counters since construction.
  uint64_t hits() const;
  uint64_t misses() const;
  uint64_t inserts() const;    // entries admitted (not those rejected as too large)
  uint64_t evictions() const;  // entries dropped by the CLOCK hand (not by Erase/EraseFile)

 private:
  class Shard;

  Shard& ShardFor(uint64_t hash) const;

  const size_t capacity_;
  int shard_bits_ = 0;
  int num_shards_ = 1;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace tidesdb
