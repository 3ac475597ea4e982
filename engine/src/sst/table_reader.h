// TableReader: reads one klog (format.h). Open validates the footer, the properties block,
// the index block (kept in memory; every block handle in it is checked against the file
// layout) and the filter block (kept in memory). Data blocks are read on demand, through
// the block cache when one is given, and every block read is checksum-verified.
//
// Values are returned as stored: an entry of type kValuePointer(WithExpiry) carries the
// encoded ValuePointer, which the caller resolves with the value log.
//
// Thread safety: after Open, every method may be called from many threads at once. An
// iterator is used by one thread at a time and must not outlive its TableReader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sst/block.h"
#include "sst/bloom.h"
#include "sst/format.h"
#include "tidesdb/env.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "util/internal_iterator.h"

namespace tidesdb {

class BlockCache;

class TableReader {
 public:
  // fname names the file in error messages; file_number and block offsets key the cache.
  // cache may be null; it must outlive the reader. Errors are Corruption naming fname and
  // the offset of the bad structure (or the I/O error of the file).
  static Status Open(const std::string& fname, uint64_t file_number, std::unique_ptr<RandomAccessFile> file,
                     uint64_t file_size, BlockCache* cache, std::unique_ptr<TableReader>* out);

  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;
  ~TableReader();

  // Point lookup. target is an internal key (e.g. user key + (snapshot sequence,
  // kValueTypeForSeek)). Finds the first entry >= target; if its user key equals target's,
  // sets *found and copies its internal key and value. *found = false otherwise (including
  // when the bloom filter rules the user key out, which costs no I/O).
  Status Get(Slice target, bool* found, std::string* found_key, std::string* value) const;
  // The same without copying the value: *value points into the data block, which *pin
  // keeps alive. *found_key is also the search's scratch, so it changes when nothing is
  // found too.
  Status Get(Slice target, bool* found, std::string* found_key, Slice* value,
             std::shared_ptr<const Block>* pin) const;

  // False only if the table certainly holds no user key in [start, limit) (user keys; an
  // empty limit is unbounded): its filter holds prefixes (TableProperties::
  // filter_prefix_length) and it holds none of the few prefixes every key of the range
  // would have (RangeMayMatchFilter).
  bool RangeMayMatch(Slice start, Slice limit) const;

  // Iterates every entry in internal-key order. fill_cache = false reads blocks that are
  // not cached without inserting them (scans that should not evict the working set).
  std::unique_ptr<InternalIterator> NewIterator(bool fill_cache) const;

  const TableProperties& properties() const { return props_; }
  uint64_t file_number() const { return file_number_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& file_name() const { return fname_; }

  // Approximate file offset where entries >= internal_key begin: inside the data block
  // that would hold the key, at the key's place between the block's bounds (its index key
  // and the previous block's) interpolated as numbers; the file size when the key is past
  // the last entry. Non-decreasing in the key; reads nothing (the index is in memory).
  uint64_t ApproximateOffsetOf(Slice internal_key) const;
  // ApproximateOffsetOf(start) and ApproximateOffsetOf(limit) (empty limit: the file size),
  // with one index search when both keys fall in the same data block (a range of a few
  // keys: the optimizer's estimates). Requires start <= limit.
  void ApproximateRange(Slice start, Slice limit, uint64_t* begin, uint64_t* end) const;

 private:
  class TableIterator;

  TableReader(std::string fname, uint64_t file_number, std::unique_ptr<RandomAccessFile> file,
              uint64_t file_size, BlockCache* cache);

  Status ValidateIndex(uint64_t data_end);
  // The first data block whose index key is >= target: its place in the index and its
  // handle, or kPastLastBlock if every key in the file is smaller.
  static constexpr uint32_t kPastLastBlock = UINT32_MAX;
  Status FindDataBlock(Slice target, uint32_t* index, BlockHandle* handle) const;
  // The bounds of data block `index` (the previous block's index key, or the table's
  // smallest key, and its own), as ApproximateOffsetOf interpolates between them.
  bool BlockBounds(uint32_t index, Slice* lower, Slice* upper) const;
  // The offset of `internal_key` inside block `index` (at `handle`, between lower and upper).
  uint64_t OffsetInBlock(const BlockHandle& handle, Slice lower, Slice upper, Slice internal_key) const;
  // The decoded data block at handle, from the cache or the file.
  Status GetDataBlock(const BlockHandle& handle, bool fill_cache, std::shared_ptr<const Block>* block) const;

  const std::string fname_;
  const uint64_t file_number_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
  BlockCache* const cache_;

  Footer footer_;
  TableProperties props_;
  std::unique_ptr<Block> index_block_;
  uint32_t num_data_blocks_ = 0;          // entries of the index block
  std::unique_ptr<FilterReader> filter_;  // null when the table has no filter
};

}  // namespace tidesdb
