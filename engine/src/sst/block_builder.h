// BlockBuilder: builds one block of sorted key/value entries with prefix compression. Used
// for data blocks and the index block of a klog (format.h).
//
// Block format:
//
//   entry*        varint32 shared      bytes shared with the previous entry's key
//                 varint32 unshared    bytes of key that follow
//                 varint32 value_len
//                 char[unshared]       key bytes after the shared prefix
//                 char[value_len]      value
//   fixed32[num_restarts]  restart offsets: entries stored with shared = 0, every
//                          block_restart_interval entries, the first at offset 0
//   fixed32  num_restarts  >= 1
//
// Keys are internal keys (db/dbformat.h) added in strictly increasing CompareInternalKey
// order; the builder does not check the order (TableBuilder does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tidesdb/slice.h"

namespace tidesdb {

class BlockBuilder {
 public:
  // restart_interval < 1 is treated as 1.
  explicit BlockBuilder(int restart_interval);

  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  void Reset();
  void Add(Slice key, Slice value);
  // Appends the restart array; the returned bytes stay valid until Reset().
  Slice Finish();

  // Size of the block Finish() would return now.
  size_t CurrentSizeEstimate() const;
  bool empty() const { return num_entries_ == 0; }
  uint64_t num_entries() const { return num_entries_; }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  int counter_ = 0;  // entries since the last restart
  uint64_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace tidesdb
