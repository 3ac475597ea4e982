// The database's state as the manifest describes it: CURRENT names the manifest, whose
// VersionEdit records (db/version_edit.h; record type 1 in the log framing of
// wal/log_format.h, LogKind::kManifest) are replayed in order, applying each edit the way
// DBImpl recovery does. Problems are reported to a ProblemSink, so a damaged manifest
// still yields whatever its readable records describe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/version_edit.h"
#include "files.h"
#include "log_scan.h"
#include "tidesdb/options.h"

namespace tidesdb::tool {

// The only manifest record type (db/db_impl.cc).
inline constexpr uint8_t kManifestEditRecord = 1;

struct ValueLogInfo {
  uint64_t number = 0;
  uint64_t size = 0;
};

struct ColumnFamilyState {
  uint32_t id = 0;
  std::string name;
  ColumnFamilyOptions options;
  SequenceNumber flushed_sequence = 0;
  // levels[n]: the key-log files of level n; L0 newest first, deeper levels by smallest key.
  std::vector<std::vector<FileMetaData>> levels;
  std::vector<ValueLogInfo> value_logs;
};

struct DroppedColumnFamily {
  uint32_t id = 0;
  std::string name;
};

struct ManifestState {
  std::string manifest_path;
  LogScanResult scan;
  uint64_t edits = 0;  // edits decoded and applied
  uint64_t next_file_number = 0;
  SequenceNumber last_sequence = 0;
  uint64_t wal_number = 0;  // WALs numbered below this are no longer needed
  uint32_t max_column_family = 0;
  std::map<uint32_t, ColumnFamilyState> cfs;  // live column families by id
  std::vector<DroppedColumnFamily> dropped;
};

// Reads dir/CURRENT and sets *manifest_name to the manifest it names. Corruption naming
// CURRENT if the file is malformed; the Env's error if it cannot be read.
Status ReadCurrent(const std::string& dir, std::string* manifest_name);

// Replays the manifest at path into *state. Errors: unreadable file, damaged records (the
// torn tail is a warning), unknown record types, edits that do not decode, a column family
// added twice, no default column family. Returns false if no edit could be read at all.
bool ReplayManifest(const std::string& path, ManifestState* state, ProblemSink* problems);

}  // namespace tidesdb::tool
