// LogReader: reads the records of one WAL or manifest file (format in log_format.h) and
// tells a torn tail (recover by truncating) from corruption (stop with an error).
//
// Usage:
//   std::unique_ptr<LogReader> reader;
//   Status s = LogReader::Open(env, path, &reader);
//   if (s.ok()) s = reader->ReadHeader(LogKind::kWal, &log_number);
//   while (s.ok()) {
//     s = reader->ReadRecord(&type, &payload, &eof);
//     if (!s.ok() || eof) break;
//     ... apply payload ...
//   }
//   if (s.ok() && reader->torn_tail()) env->TruncateFile(path, reader->valid_end_offset());
//
// Memory: the reader keeps one buffer of chunk_size bytes, plus the payload handed to the
// caller; never the file. Resynchronisation after a bad record (to decide torn tail vs corruption) scans
// forward byte by byte for a frame whose length fits and whose checksum matches; a frame
// embedded inside another record's payload would be taken for a valid record, so payloads
// that contain framed logs are reported as corruption if the record around them is damaged.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tidesdb/env.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "wal/log_format.h"

namespace tidesdb {

class LogReader {
 public:
  static constexpr size_t kDefaultChunkSize = 64 * 1024;

  // Reads file (path is used in messages only) whose size is file_size. Bytes past
  // file_size are never read. chunk_size (at least kFileHeaderSize) is the read size.
  LogReader(std::unique_ptr<RandomAccessFile> file, std::string path, uint64_t file_size,
            size_t chunk_size = kDefaultChunkSize);

  // Opens path through env and takes its current size.
  static Status Open(Env* env, const std::string& path, std::unique_ptr<LogReader>* reader,
                     size_t chunk_size = kDefaultChunkSize);

  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // For the newest WAL at recovery: a bad record followed by valid ones in a version 2
  // file is a lost unsynced write unless a sync mark covers it (log_format.h), read as a
  // torn tail. Call before ReadRecord. Without it (older WALs, manifests), such damage is
  // always corruption.
  void AllowLostUnsyncedWrites() { allow_lost_writes_ = true; }

  // Checks the file header; must succeed before ReadRecord. Corruption for a bad or
  // truncated header or a log of the other kind, NotSupported for a newer format version.
  // An empty or all-zero file is an empty log: OK, *log_number = 0, torn_tail() true,
  // valid_end_offset() 0, and ReadRecord reports eof.
  Status ReadHeader(LogKind expected, uint64_t* log_number);

  // Reads the next record into *type and *payload, skipping sync marks. At the end of the
  // log (clean or torn) returns OK with *eof = true. Corruption ("<path>: offset <n>:
  // <what>") when a bad record is followed by a valid one (and is not a lost unsynced
  // write, see AllowLostUnsyncedWrites), or for a sync mark that claims more than its own
  // offset; the reader then stays at that error.
  Status ReadRecord(uint8_t* type, std::string* payload, bool* eof);

  // True once the reader has found a torn tail (see log_format.h).
  bool torn_tail() const { return torn_tail_; }
  // True if that torn tail is a lost unsynced write: valid records follow the damage and
  // are dropped with it. damage() says what was wrong at valid_end_offset().
  bool lost_unsynced_write() const { return lost_write_; }
  // True if that torn tail is zeros to the end of the file: a WAL's preallocated space
  // left by a crash (log_writer.h), or pages that never reached the disk. No record in it
  // was torn.
  bool zero_tail() const { return zero_tail_; }
  const char* damage() const { return damage_; }
  // The largest offset a sync mark read so far claims durable (0 if none).
  uint64_t synced_claim() const { return synced_claim_; }
  uint32_t format_version() const { return version_; }
  // Where the last good record read so far ends (the header end before any record).
  // After a torn tail, the offset to truncate the file to.
  uint64_t valid_end_offset() const { return valid_end_; }
  // Offset of the record last returned by ReadRecord.
  uint64_t last_record_offset() const { return last_record_offset_; }
  const std::string& path() const { return path_; }
  uint64_t file_size() const { return file_size_; }
  // Largest buffer the reader has held, in bytes (tests check the memory bound).
  size_t peak_buffer_size() const { return peak_buffer_; }

 private:
  enum class FrameCheck { kValid, kShortHeader, kZeroType, kLengthTooLarge, kPastEof, kBadChecksum };
  static const char* Describe(FrameCheck check);

  // Makes file bytes [offset, offset + n) available in *out; offset + n <= file_size_ and
  // n <= chunk_size_, so the buffer never outgrows one chunk.
  Status Fetch(uint64_t offset, size_t n, Slice* out);
  // Checks the frame at offset; on kValid sets *type, *payload_len and, if payload is not
  // null, *payload. The checksum is computed chunk by chunk, so a bogus length met while
  // resynchronising costs time, not memory.
  Status CheckFrame(uint64_t offset, FrameCheck* result, uint8_t* type, uint32_t* payload_len,
                    std::string* payload);
  // *next = where the first valid frame in (offset, file_size_) starts, or file_size_.
  Status FindValidFrameAfter(uint64_t offset, uint64_t* next);
  // Walks every valid record after the bad one at offset, resynchronising past further
  // damage: *found if there is any, *claim the largest sync mark claim among them.
  Status ScanPastDamage(uint64_t offset, bool* found, uint64_t* claim);
  // Checks a sync mark's payload (the frame at offset) and takes its claim.
  Status TakeSyncMark(uint64_t offset, Slice payload);
  Status AllZero(uint64_t offset, bool* zero);
  Status CorruptionAt(uint64_t offset, const std::string& what) const;

  std::unique_ptr<RandomAccessFile> file_;
  const std::string path_;
  const uint64_t file_size_;
  const size_t chunk_size_;

  std::string buf_;  // file bytes [buf_offset_, buf_offset_ + buf_len_)
  uint64_t buf_offset_ = 0;
  size_t buf_len_ = 0;
  size_t peak_buffer_ = 0;

  bool header_ok_ = false;
  bool eof_ = false;
  bool torn_tail_ = false;
  bool allow_lost_writes_ = false;
  bool lost_write_ = false;
  bool zero_tail_ = false;
  const char* damage_ = "";
  uint32_t version_ = 0;
  uint64_t synced_claim_ = 0;
  Status error_;
  uint64_t offset_ = 0;  // next record
  uint64_t valid_end_ = 0;
  uint64_t last_record_offset_ = 0;
};

}  // namespace tidesdb
