// Block: an immutable, decoded (uncompressed) block in the format of block_builder.h. It
// owns its bytes, so one Block can be shared by the block cache and many iterators
// (std::shared_ptr<const Block>).
//
// The constructor checks the restart array (count, bounds, order); a block that fails is
// kept but reports !ok(), and its iterators report Corruption. Entries are checked as they
// are decoded, so a corrupt entry ends iteration with Corruption instead of reading out of
// bounds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "util/internal_iterator.h"

namespace tidesdb {

class Block {
 public:
  explicit Block(std::string contents);

  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // False if the restart array is malformed.
  bool ok() const { return restarts_offset_valid_; }
  // Bytes of the decoded block (the block cache charge).
  size_t size() const { return data_.size(); }

  // Iterates the entries, ordered by CompareInternalKey. The Block must outlive the
  // iterator. Seek/SeekForPrev targets must be internal keys (at least 8 bytes).
  std::unique_ptr<InternalIterator> NewIterator() const;

  // The first entry whose key is >= target (CompareInternalKey, target an internal key),
  // as an iterator's Seek finds it but without an iterator: its key is rebuilt in *key (the
  // caller's buffer, reused across calls) and *value points into the block. *found is
  // false when every entry is < target. Corruption for a malformed entry on the way.
  Status SeekEntry(Slice target, std::string* key, Slice* value, bool* found) const;

  // Blocks whose every entry starts a restart run (index blocks, built with restart
  // interval 1) are searched in place, without an iterator or a key copy:
  uint32_t num_restarts() const { return num_restarts_; }
  // The key and value of the entry at restart point i (< num_restarts()); false if that
  // entry is malformed or shares a prefix.
  bool RestartEntry(uint32_t i, Slice* key, Slice* value) const;
  // The first restart point whose key is >= target (CompareInternalKey), or num_restarts()
  // if none is; for a block whose entries RestartEntry reads (TableReader checks at open).
  uint32_t LowerBoundRestart(Slice target) const;

 private:
  std::string data_;
  uint32_t restarts_offset_ = 0;  // where the restart array begins (= end of entries)
  uint32_t num_restarts_ = 0;
  bool restarts_offset_valid_ = false;
};

}  // namespace tidesdb
