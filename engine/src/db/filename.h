// Names of the files in a database directory:
//
//   CURRENT            name of the live manifest (replaced atomically by rename)
//   MANIFEST-NNNNNN    log of VersionEdits: the set of live files and column families
//   NNNNNN.wal         write-ahead log (one live at a time for the whole database)
//   NNNNNN.klog        SSTable key log
//   NNNNNN.vlog        value log (large values)
//   LOCK               held while the database is open
//   LOG                the library's messages, when Options::logger is not set
//
// File numbers come from one counter, so a number names exactly one file.
#pragma once

#include <cstdint>
#include <string>

#include "tidesdb/slice.h"

namespace tidesdb {

enum class FileType { kWal, kKeyLog, kValueLog, kManifest, kCurrent, kLock, kInfoLog, kTemp, kUnknown };

std::string WalFileName(const std::string& dbname, uint64_t number);
std::string KeyLogFileName(const std::string& dbname, uint64_t number);
std::string ValueLogFileName(const std::string& dbname, uint64_t number);
std::string ManifestFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string LockFileName(const std::string& dbname);
std::string InfoLogFileName(const std::string& dbname);
std::string TempFileName(const std::string& dbname, uint64_t number);

// Parses a name (not a path) produced above; false for anything else.
bool ParseFileName(Slice name, uint64_t* number, FileType* type);

}  // namespace tidesdb
