#include "log_scan.h"

#include <memory>

#include "files.h"
#include "wal/log_reader.h"

namespace tidesdb::tool {

LogScanResult ScanLog(const std::string& path, LogKind kind, const LogRecordFn& fn,
                      const LogHeaderFn& on_header, bool allow_lost_writes) {
  LogScanResult r;
  std::unique_ptr<LogReader> reader;
  r.status = LogReader::Open(ToolEnv(), path, &reader);
  if (!r.status.ok()) return r;
  if (allow_lost_writes) reader->AllowLostUnsyncedWrites();
  r.file_size = reader->file_size();
  r.status = reader->ReadHeader(kind, &r.log_number);
  if (!r.status.ok()) return r;
  r.header_ok = true;
  if (on_header) on_header(r);
  while (true) {
    uint8_t type = 0;
    std::string payload;
    bool eof = false;
    r.status = reader->ReadRecord(&type, &payload, &eof);
    if (!r.status.ok() || eof) break;
    ++r.records;
    fn(reader->last_record_offset(), type, payload);
  }
  r.torn_tail = reader->torn_tail();
  r.lost_write = reader->lost_unsynced_write();
  r.zero_tail = reader->zero_tail();
  r.valid_end = reader->valid_end_offset();
  return r;
}

std::string DescribeTornTail(const std::string& path, const LogScanResult& r) {
  if (r.valid_end == 0) {
    return path + ": empty or zero-filled log of " + std::to_string(r.file_size) +
           " bytes (the crash came before its header reached the disk)";
  }
  if (r.lost_write) {
    return path + ": offset " + std::to_string(r.valid_end) +
           ": lost unsynced write: " + std::to_string(r.file_size - r.valid_end) +
           " bytes from a damaged record on, with unsynced records after it (a power loss; recovery "
           "truncates the log here)";
  }
  if (r.zero_tail) {
    return path + ": offset " + std::to_string(r.valid_end) + ": " +
           std::to_string(r.file_size - r.valid_end) +
           " zero bytes after the last complete record (a live or crashed WAL's preallocated space; recovery "
           "truncates the log here)";
  }
  return path + ": offset " + std::to_string(r.valid_end) +
         ": torn tail: " + std::to_string(r.file_size - r.valid_end) +
         " bytes after the last complete record (recovery truncates the log here)";
}

}  // namespace tidesdb::tool
