// TableCache: open key-log and value-log readers, bounded by Options::max_open_sstables.
// Readers are shared: an evicted reader stays usable by whoever still holds it, and its
// file descriptor closes when the last holder lets go.
//
// Values read from value logs are kept in the block cache too, keyed by (value-log file
// number, record offset): a hot large value then costs a memory copy instead of a pread, a
// checksum and maybe a decompression. The block cache's contract holds: a value-log number
// is never a key-log number, and all entries under it are values (std::string).
//
// Thread-safe. The readers are split over up to kMaxShards shards (of at least kMinPerShard
// readers; the default 512 makes 16 of 32) by file number, each
// with its own mutex and LRU list, so concurrent reads of different files do not queue
// on one lock; a hit holds its shard's mutex for a hash lookup and a list splice. The
// capacity is split between the shards (the total never exceeds it), so a shard may
// evict while another has room.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/dbformat.h"
#include "tidesdb/env.h"
#include "tidesdb/status.h"

namespace tidesdb {

class BlockCache;
class TableReader;
class ValueLogReader;

class TableCache {
 public:
  TableCache(Env* env, std::string dbname, BlockCache* block_cache, size_t capacity);
  ~TableCache();

  Status GetTable(uint64_t file_number, uint64_t file_size, std::shared_ptr<TableReader>* table);
  Status GetValueLog(uint64_t file_number, std::shared_ptr<ValueLogReader>* vlog);
  // The value ptr points at, from the block cache or read (and verified) from its value
  // log; a read value is cached when fill_cache is set. With `pinned`, a cached (or newly
  // cached) value is handed over as *pinned instead of being copied into *value.
  Status GetValue(const ValuePointer& ptr, bool fill_cache, std::string* value,
                  std::shared_ptr<const std::string>* pinned = nullptr);
  // Forgets a deleted file (and its cached blocks).
  void Evict(uint64_t file_number);
  size_t size() const;
  size_t capacity() const { return capacity_; }  // readers kept open, over all shards

  static constexpr size_t kMaxShards = 16, kMinPerShard = 32;

 private:
  struct Entry {
    std::shared_ptr<TableReader> table;
    std::shared_ptr<ValueLogReader> vlog;
    std::list<uint64_t>::iterator lru_pos;
  };
  // Key space: table files and value-log files have distinct numbers (one counter).
  struct Shard {
    mutable std::mutex mu;
    size_t capacity = 1;
    std::unordered_map<uint64_t, Entry> map;
    std::list<uint64_t> lru;  // front = most recently used
    // The entry's reader if cached (moved to the LRU front), else nullptr. mu held.
    Entry* FindLocked(uint64_t file_number);
    void InsertLocked(uint64_t file_number, Entry entry);
  };
  Shard& ShardOf(uint64_t file_number) const { return *shards_[file_number % shards_.size()]; }

  Env* const env_;
  const std::string dbname_;
  BlockCache* const block_cache_;
  size_t capacity_ = 0;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace tidesdb
