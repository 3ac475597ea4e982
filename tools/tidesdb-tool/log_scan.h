// Reads a WAL or manifest (framing in wal/log_format.h) record by record with LogReader,
// and says how the scan ended: clean end, torn tail (recovery truncates there) or
// corruption in the middle (recovery fails there).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tidesdb/status.h"
#include "wal/log_format.h"

namespace tidesdb::tool {

struct LogScanResult {
  // OK, or what stopped the scan: an unreadable file, a bad header, or a damaged record
  // followed by a valid one ("<path>: offset <n>: <what>").
  Status status;
  bool header_ok = false;
  uint64_t log_number = 0;  // from the header (0 for an empty log)
  uint64_t file_size = 0;
  uint64_t records = 0;    // records handed to the callback
  bool torn_tail = false;  // the log ends in a damaged or zeroed record with nothing valid after it
  // (or, with allow_lost_writes, that torn tail is an unsynced write lost at a power loss,
  // with valid records after it that recovery drops: wal/log_format.h)
  bool lost_write = false;
  bool zero_tail = false;  // that torn tail is zeros to the end (a live WAL's preallocated space)
  uint64_t valid_end = 0;  // where the last good record ends (the truncation point of a torn tail)
};

// Called for every good record; offset is where its frame starts.
using LogRecordFn = std::function<void(uint64_t offset, uint8_t type, const std::string& payload)>;

// Called once the header has been read (log_number and file_size are set).
using LogHeaderFn = std::function<void(const LogScanResult& header)>;

// allow_lost_writes: read as recovery reads the newest WAL (LogReader::AllowLostUnsyncedWrites).
LogScanResult ScanLog(const std::string& path, LogKind kind, const LogRecordFn& fn,
                      const LogHeaderFn& on_header = nullptr, bool allow_lost_writes = false);

// "<path>: offset <valid_end>: torn tail: <n> bytes after the last complete record (recovery
// truncates the log here)", or for a lost write "...: lost unsynced write: <n> bytes ...".
std::string DescribeTornTail(const std::string& path, const LogScanResult& r);

}  // namespace tidesdb::tool
