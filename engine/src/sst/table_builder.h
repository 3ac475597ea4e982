// TableBuilder: writes one klog (format.h) from entries added in order, separating large
// values into a value log.
//
// Value separation (only when a ValueLogWriter is given):
//   kValue with value.size() >= value_threshold
//       -> the value is appended to the value log; the entry is stored as kValuePointer
//          with the encoded ValuePointer as its value.
//   kValueWithExpiry whose user value (after the fixed64 expiry) is >= value_threshold
//       -> likewise, stored as kValuePointerWithExpiry: fixed64 expiry + encoded pointer.
//   kValuePointer / kValuePointerWithExpiry entries are stored unchanged, so compaction
//   moves keys and never the values they point to.
// The stored key keeps the user key and sequence and changes only the type byte.
//
// Not thread-safe: one thread builds a table. After an error every later call returns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sst/block_builder.h"
#include "sst/bloom.h"
#include "sst/format.h"
#include "tidesdb/env.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

class ValueLogWriter;

class TableBuilder {
 public:
  // Writes to file (owned). vlog may be null (values are then always stored inline); it
  // must outlive the builder, and the caller syncs it before the table is made live.
  TableBuilder(const ColumnFamilyOptions& options, uint32_t cf_id, std::unique_ptr<WritableFile> file,
               ValueLogWriter* vlog);
  ~TableBuilder();

  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  // Adds an entry. internal_key must be a valid internal key, greater (CompareInternalKey)
  // than every key added before; InvalidArgument otherwise.
  Status Add(Slice internal_key, Slice value);

  // Writes the last data block, the filter, index and properties blocks and the footer,
  // then syncs and closes the file. On success *props (if not null) describes the table.
  Status Finish(TableProperties* props);

  // Stops building: closes the file without finishing it. The caller deletes the file.
  void Abandon();

  Status status() const { return status_; }
  // Bytes written to the file so far (the final size after Finish).
  uint64_t FileSize() const { return offset_; }
  uint64_t NumEntries() const { return props_.num_entries; }

 private:
  // Writes block contents (compressed if allowed and worth it) plus trailer; sets *handle.
  Status WriteBlock(Slice contents, bool allow_compression, BlockHandle* handle);
  Status WriteRaw(Slice data);
  Status FlushDataBlock();
  // Adds the index entry for the last flushed data block; next_key is the first key of
  // the following block (empty for the last block).
  void AddIndexEntry(Slice next_key);

  const ColumnFamilyOptions options_;
  std::unique_ptr<WritableFile> file_;
  ValueLogWriter* const vlog_;
  Status status_;
  uint64_t offset_ = 0;
  bool closed_ = false;  // finished or abandoned

  BlockBuilder data_block_;
  BlockBuilder index_block_;
  std::unique_ptr<FilterBuilder> filter_;  // null when bloom_fpr disables the filter
  TableProperties props_;
  std::string last_key_;  // last stored internal key

  // Set after a data block is flushed until its index entry is added: the separator is
  // chosen once the next block's first key is known.
  bool pending_index_entry_ = false;
  BlockHandle pending_handle_;

  std::string compressed_;  // scratch for WriteBlock
  std::string stored_key_;  // scratch for Add
  std::string stored_value_;
};

// The shortest internal key K with a <= K < b (a < b), used as an index separator: a
// shortened user key with the smallest trailer when that fits, else a itself.
std::string IndexSeparator(Slice a, Slice b);

}  // namespace tidesdb
