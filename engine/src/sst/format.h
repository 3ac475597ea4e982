// On-disk format of an SSTable key log ("klog", file NNNNNN.klog), format version 1.
//
// File layout:
//
//   [data block 0][trailer] ... [data block N-1][trailer]
//   [filter block][trailer]          absent (null handle) when bloom_fpr disables it
//   [index block][trailer]
//   [properties block][trailer]
//   [footer]                         kFooterSize bytes, always the last bytes of the file
//
// Block trailer (kBlockTrailerSize = 5 bytes, after every block):
//
//   u8       type       CompressionType of the stored block bytes (0 = none)
//   fixed32  crc        crc32c::Mask(crc32c of the stored block bytes followed by the type byte)
//
// A BlockHandle (offset, size) addresses the stored (possibly compressed) bytes of a block,
// without its trailer; it is encoded as two varint64s.
//
// Data blocks (block_builder.h) hold internal keys (db/dbformat.h) in CompareInternalKey
// order with their values; entries of type kValuePointer / kValuePointerWithExpiry hold an
// encoded ValuePointer into a value log instead of the value. A data block is stored
// compressed with the column family's compression when that saves at least 1/8 of its size,
// raw otherwise; the trailer's type byte says which.
//
// Index block: the same block format. One entry per data block, in order; key = an internal
// key K with  last key of the block <= K < first key of the next block  (a shortened user
// key with the (kMaxSequence, kValueTypeForSeek) trailer where possible, else the block's
// last key; the last block's entry is its last key), value = the block's encoded
// BlockHandle. Every index entry is a restart point (restart interval 1, no prefix sharing):
// readers binary-search the restart array in place, and a file whose index is otherwise is
// Corruption at open. The index block is compressed like a data block. This single-level
// index of fence pointers is the layout for both values of ColumnFamilyOptions::use_btree:
// the flag is accepted and currently selects the same layout (a multi-level index would add
// a new format version).
//
// Filter block: a bloom filter over the distinct user keys of the table (bloom.h), stored
// raw; with a filter_prefix_length property N > 0, over the distinct N-byte prefixes of its
// user keys of at least N bytes and its shorter user keys whole. Its last byte tells its
// layout: blocked (written since session 30, one cache line per key) or plain (before);
// both are read. A build from before session 30 reads a blocked filter as unusable (every
// key may match), so a newer file costs it reads, never a wrong answer.
//
// Properties block: stored raw. A sequence of records
//   varint32 tag, varint32 length, length bytes
// with tags from TablePropertyTag below; numbers are varint64 inside their record, keys are raw
// bytes. Readers skip unknown tags, so properties can be added without a version bump.
//
// Footer (kFooterSize = 76 bytes):
//
//   filter handle, index handle, properties handle   varint64 pairs, zero-padded to 60 bytes
//   fixed32  format_version                          = kFormatVersion
//   fixed32  crc                                     crc32c::Mask(crc32c of the 64 bytes above)
//   fixed64  magic                                   = kTableMagic
//
// All integers are little-endian.
#pragma once

#include <cstdint>
#include <string>

#include "tidesdb/env.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kTableMagic = 0x676f6c6b53656469ull;  // "ideSklog" little-endian
inline constexpr size_t kBlockTrailerSize = 5;

class BlockHandle {
 public:
  // Longest encoding: two varint64s.
  static constexpr size_t kMaxEncodedLength = 20;

  BlockHandle() = default;
  BlockHandle(uint64_t offset, uint64_t size) : offset_(offset), size_(size) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  void set_size(uint64_t size) { size_ = size; }
  // A handle of (0, 0) means "no such block" (the filter block when filters are off).
  bool IsNull() const { return offset_ == 0 && size_ == 0; }

  void EncodeTo(std::string* dst) const;
  // Consumes the handle from the front of *input; false if malformed.
  bool DecodeFrom(Slice* input);

 private:
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
};

class Footer {
 public:
  static constexpr size_t kHandlesSize = 3 * BlockHandle::kMaxEncodedLength;  // 60
  static constexpr size_t kEncodedLength = kHandlesSize + 4 + 4 + 8;          // 76

  BlockHandle filter_handle;
  BlockHandle index_handle;
  BlockHandle properties_handle;
  uint32_t format_version = kFormatVersion;

  void EncodeTo(std::string* dst) const;
  // input must be exactly kEncodedLength bytes. Checks magic, crc and version; fname and
  // offset only name the place in error messages.
  Status DecodeFrom(Slice input, const std::string& fname, uint64_t offset);
};

inline constexpr size_t kFooterSize = Footer::kEncodedLength;

// Tags of the properties block records. Never reuse a number; add new ones at the end.
enum TablePropertyTag : uint32_t {
  kPropCfId = 1,         // varint64 (fits 32 bits)
  kPropSmallestKey = 2,  // raw internal key
  kPropLargestKey = 3,   // raw internal key
  kPropMinSequence = 4,  // varint64, like all the rest
  kPropMaxSequence = 5,
  kPropNumEntries = 6,
  kPropNumDeletions = 7,
  kPropNumValuePointers = 8,
  kPropRawKeyBytes = 9,
  kPropRawValueBytes = 10,
  kPropDataSize = 11,
  kPropIndexSize = 12,
  kPropFilterSize = 13,
  kPropCreationTime = 14,
  kPropFilterPrefixLength = 15,
};

// Facts about one table, written in its properties block and kept in memory by readers.
struct TableProperties {
  uint32_t cf_id = 0;
  std::string smallest_key;  // internal keys, as stored
  std::string largest_key;
  uint64_t min_sequence = 0;
  uint64_t max_sequence = 0;
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;       // entries of type kDeletion (tombstones)
  uint64_t num_value_pointers = 0;  // entries whose value lives in a value log
  uint64_t raw_key_bytes = 0;       // sum of internal key sizes
  uint64_t raw_value_bytes = 0;     // sum of value sizes as stored in the klog (pointers, not
                                    // the values they point to)
  uint64_t data_size = 0;           // bytes of all data blocks on disk, trailers included
  uint64_t index_size = 0;          // bytes of the index block on disk, trailer included
  uint64_t filter_size = 0;         // bytes of the filter block on disk (0 = no filter)
  uint64_t creation_time = 0;       // seconds since the Unix epoch
  // What the filter holds: 0 whole user keys, N the first N bytes of every key of at least
  // N bytes and shorter keys whole (ColumnFamilyOptions::filter_prefix_length). Absent in
  // tables written before the option existed: 0.
  uint64_t filter_prefix_length = 0;

  void EncodeTo(std::string* dst) const;
  // Unknown tags are skipped; a truncated or malformed record is an error.
  Status DecodeFrom(Slice input);
};

// Appends the block trailer (type byte + masked crc of block + type) for stored bytes.
void AppendBlockTrailer(std::string* dst, Slice stored, CompressionType type);

// Reads the block at handle from file, verifies its checksum (when verify_checksum) and
// uncompresses it into *contents. A damaged or short block is Corruption("<fname>: offset
// <n>: block checksum mismatch" / "truncated block" / ...); errors of the file's Read are
// returned as they are. Callers check the handle against the file size first.
Status ReadBlock(const RandomAccessFile* file, const std::string& fname, const BlockHandle& handle,
                 bool verify_checksum, std::string* contents);

// "<fname>: offset <offset>: <what>" as a Corruption status.
Status TableCorruption(const std::string& fname, uint64_t offset, Slice what);

}  // namespace tidesdb
