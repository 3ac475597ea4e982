// Value log (file NNNNNN.vlog): holds the values too large for the key log. The key log
// stores a ValuePointer {file_number, offset, size} (db/dbformat.h) instead of the value,
// so compaction rewrites pointers and never moves these bytes. A value log is written once
// by the flush or compaction that creates it, synced, and then only read (and eventually
// deleted whole by garbage collection).
//
// On-disk format, version 1. All integers little-endian (util/coding.h).
//
//   file header (24 bytes)
//     fixed64  magic        kValueLogMagic
//     fixed32  version      kValueLogFormatVersion (1)
//     fixed64  file_number  must match the number in the file name
//     fixed32  masked crc32c of the 20 bytes above
//   records, back to back, until end of file
//     fixed32  masked crc32c of: fixed64 offset of this record in the file, followed by
//              every byte of the record after this field
//     fixed32  payload length
//     u8       compression type (CompressionType; kNone = payload is the value)
//     varint32 uncompressed length (the value's length)
//     payload  the value, or CompressBlock(type, value) (sst/compression.h)
//
// Folding the record's offset into its checksum binds the record to its place: a pointer
// whose offset is wrong, or a record copied to another offset, fails the check instead of
// returning some other key's value.
//
// A value is compressed only when that saves at least 1/8 of its size, and only values of
// at most kMaxUncompressedBlockSize bytes are candidates; others are stored raw.
// ValuePointer::size is the whole record (9 bytes + varint + payload).
//
// Errors from the reader are Status::Corruption("<fname>: offset <n>: <what>").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "db/dbformat.h"
#include "tidesdb/env.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

inline constexpr uint64_t kValueLogMagic = 0x474f4c5642444954ull;  // "TIDBVLOG" in file byte order
inline constexpr uint32_t kValueLogFormatVersion = 1;
inline constexpr size_t kValueLogHeaderSize = 24;
// crc + payload length + type + shortest varint; a record is never smaller.
inline constexpr size_t kValueLogMinRecordSize = 4 + 4 + 1 + 1;
inline constexpr size_t kValueLogMaxRecordHeaderSize = 4 + 4 + 1 + 5;
// Largest value Add accepts: the payload length must fit its fixed32 field.
inline constexpr size_t kValueLogMaxValueSize = UINT32_MAX - kValueLogMaxRecordHeaderSize;

// Writes one value log front to back. Not thread-safe: one flush or compaction owns it.
class ValueLogWriter {
 public:
  // Takes ownership of file (empty, freshly created). The file header is written by the
  // first Add or by Finish. compression applies per value, when worth it (see above).
  ValueLogWriter(std::unique_ptr<WritableFile> file, uint64_t file_number, CompressionType compression);

  ValueLogWriter(const ValueLogWriter&) = delete;
  ValueLogWriter& operator=(const ValueLogWriter&) = delete;

  // Appends one record holding value and sets *ptr to {file_number, record offset, record
  // size}. The pointer is valid once Finish has succeeded. After a write error every later
  // call returns that error (the file may hold a partial record and must be discarded).
  // InvalidArgument if value is longer than kValueLogMaxValueSize.
  Status Add(Slice value, ValuePointer* ptr);

  // Syncs and closes the file. Further Add calls fail.
  Status Finish();

  // The size the file has after Finish with nothing more added (header included even
  // before it is written).
  uint64_t FileSize() const { return offset_; }
  uint64_t file_number() const { return file_number_; }
  uint64_t num_records() const { return num_records_; }
  // Sum of the lengths of the values added (before compression).
  uint64_t raw_value_bytes() const { return raw_value_bytes_; }

 private:
  Status WriteHeaderIfNeeded();

  const std::unique_ptr<WritableFile> file_;
  const uint64_t file_number_;
  const CompressionType compression_;
  uint64_t offset_ = kValueLogHeaderSize;
  uint64_t num_records_ = 0;
  uint64_t raw_value_bytes_ = 0;
  bool header_written_ = false;
  bool finished_ = false;
  Status status_;           // first write error; sticky
  std::string compressed_;  // scratch for CompressBlock
};

// Reads values of one finished value log by pointer. Thread-safe: Get and ForEach may run
// from many threads at once (positioned reads; no shared mutable state).
class ValueLogReader {
 public:
  // Validates the file header (magic, checksum, version, file number). fname is used only
  // in error messages; file_size is the file's size (records past it are unreadable).
  static Status Open(const std::string& fname, uint64_t file_number, std::unique_ptr<RandomAccessFile> file,
                     uint64_t file_size, std::unique_ptr<ValueLogReader>* result);

  ValueLogReader(const ValueLogReader&) = delete;
  ValueLogReader& operator=(const ValueLogReader&) = delete;

  // Reads the record ptr points at into *value. The pointer is checked against this file
  // (number, bounds) and the record against its checksum, its length fields and its
  // decompressed length; any mismatch is Corruption naming the file and offset, e.g.
  // "<fname>: offset <n>: value record checksum mismatch".
  Status Get(const ValuePointer& ptr, std::string* value) const;

  // Reads every record in file order and calls fn(offset, record size, value) for each;
  // stops at the first non-OK status from fn and returns it. A truncated or corrupt record
  // stops the scan with Corruption naming its offset. For verification tools and garbage
  // collection.
  using RecordCallback = std::function<Status(uint64_t offset, uint64_t size, Slice value)>;
  Status ForEach(const RecordCallback& fn) const;

  uint64_t file_number() const { return file_number_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& file_name() const { return fname_; }

 private:
  ValueLogReader(std::string fname, uint64_t file_number, std::unique_ptr<RandomAccessFile> file,
                 uint64_t file_size);

  Status CorruptionAt(uint64_t offset, const std::string& what) const;
  Status ShortRead(uint64_t offset, size_t got, size_t size) const;
  // The error for a record whose header does not parse or disagrees with the pointer.
  Status BadHeader(const ValuePointer& ptr) const;

  const std::string fname_;
  const uint64_t file_number_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
};

}  // namespace tidesdb
