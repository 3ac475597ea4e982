// LogWriter: appends framed records (log_format.h) to a WAL or manifest file.
//
// Every AddRecord / AddRecords call hands its bytes to the file in exactly one Append, so
// with an unbuffered file (EnvOptions::buffered_writes = false) a record reaches the
// operating system in one write(2): a killed process leaves whole records or a torn tail,
// and a concurrent kill cannot interleave two records.
//
// Errors are sticky: after a failed Append the file may end in a partial record, and after
// a failed Sync the kernel may have dropped dirty pages, so the writer refuses every later
// AddRecord / AddRecords / Sync with the first error. To continue, truncate the file to
// size() (the end of the last record that was written completely) and open a new writer
// with write_header = false, or start a new log.
//
// Preallocation (WALs only): the file is kept up to kWalPreallocateBytes longer than its
// records, zeros past them (WritableFile::Preallocate), so that appends write into space
// the file already has and an fsync after a commit does not also have to make a new file
// size durable (docs/BENCHMARKS.md, "fsync per commit"). Readers see the zeros as the end
// of the log (log_format.h). Finish and Seal cut them off; a crash leaves them, and
// recovery truncates them with the rest of the tail. Where the file system cannot
// preallocate, the writer appends as before.
//
// Not thread-safe: one thread (the group-commit leader) uses a writer at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tidesdb/env.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "wal/log_format.h"

namespace tidesdb {

// How far ahead of its records a WAL's space is allocated, in steps of this size.
constexpr uint64_t kWalPreallocateBytes = 1 << 20;

class LogWriter {
 public:
  struct Record {
    uint8_t type;   // nonzero, not kSyncMarkType
    Slice payload;  // at most kMaxRecordPayload bytes
  };

  // With write_header, the file is new (empty) and the file header is written in front of
  // the first record (or by the first Sync / Close), in the same Append. Call Sync() once
  // right after creating a log if the header must be durable before any record: a torn
  // file header is reported as corruption, a torn record as a torn tail.
  // Without write_header, file continues an existing log (Env::NewAppendableFile) whose
  // header and records end exactly at file->Size() (truncate a torn tail first).
  LogWriter(std::unique_ptr<WritableFile> file, LogKind kind, uint64_t log_number, bool write_header = true);
  ~LogWriter();

  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Frames one record and appends it. InvalidArgument for type 0, kSyncMarkType or an
  // oversized payload (the writer stays usable). In a WAL, a sync mark (log_format.h) goes
  // in front of the record, in the same Append, when a sync has completed since the last
  // mark.
  Status AddRecord(uint8_t type, Slice payload);
  // Frames all records into one buffer and appends it at once (group commit). Either all
  // records are validated and appended, or none is appended.
  Status AddRecords(std::span<const Record> records);

  // Makes everything appended so far durable (WritableFile::Sync).
  Status Sync();
  // The same fsync, touching only an atomic of the writer's, so that it may run on another
  // thread while AddRecords appends (the file unbuffered, and not closed meanwhile).
  // covered_end is size() read before the call (under the caller's lock that orders it
  // with AddRecords): the bytes the fsync is known to cover, which the next sync mark
  // claims; what the other thread appends during the call may or may not be covered. Its
  // failure is not recorded here: the caller must stop using the log.
  Status SyncFile(uint64_t covered_end);
  // Sync, then a sync mark claiming every record, then Sync again: recovery then calls
  // damage anywhere before the mark corruption, even in the newest WAL. For a clean close
  // (two fsyncs). Same as Sync for a manifest. The preallocated zeros are cut off first,
  // so the file ends durably at size().
  Status Seal();
  // Cuts off the preallocated zeros and syncs: the file ends durably at its last record,
  // as a WAL that a newer one follows must (recovery calls a bad tail in it corruption).
  // Append nothing afterwards; Close next.
  Status Finish();
  // Starts writeback of what was appended since the last call, once that is at least
  // min_bytes (WritableFile::StartWriteback), so a Sync later (at WAL rotation even in
  // SyncMode::kNone) waits for little. Promises nothing about durability.
  void StartWriteback(uint64_t min_bytes);
  // Writes a pending header, cuts off preallocated zeros (not durably: see Finish),
  // flushes and closes the file. Idempotent. Returns the sticky error, if any, after
  // closing.
  Status Close();

  // The log's size once everything accepted so far is written: the end offset of the
  // last complete record (including a header not yet written).
  uint64_t size() const { return size_; }
  uint64_t log_number() const { return log_number_; }
  LogKind kind() const { return kind_; }
  // The first error seen (OK while healthy).
  const Status& status() const { return error_; }

 private:
  Status Validate(uint8_t type, Slice payload) const;
  void AppendFrame(uint8_t type, Slice payload);
  // The durable end a new sync mark would claim, or 0 if no mark is due.
  uint64_t MarkDue() const;
  // Preallocates past new_size (a WAL whose file system allows it).
  void ReserveFor(uint64_t new_size);
  // WritableFile::TruncateToSize if anything was preallocated; the error is sticky.
  Status DropReserve(bool* dropped);
  Status Write();

  std::unique_ptr<WritableFile> file_;
  const LogKind kind_;
  const uint64_t log_number_;
  bool header_pending_;
  bool closed_ = false;
  uint64_t size_;
  uint64_t writeback_offset_ = 0;  // StartWriteback has covered [0, writeback_offset_)
  bool preallocate_;               // a WAL, and Preallocate has not failed
  uint64_t reserved_end_ = 0;      // the file is preallocated up to here (0: nothing)
  // Bytes [0, durable_end_) are known synced; written by Sync and SyncFile (the latter on
  // another thread). marked_end_ is what the last sync mark in the file claims.
  std::atomic<uint64_t> durable_end_{0};
  uint64_t marked_end_ = kFileHeaderSize;  // a mark claiming only the file header is never due
  Status error_;
  std::string buf_;  // frames of the current Append; reused between calls
};

}  // namespace tidesdb
