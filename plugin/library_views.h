// The library's text properties as typed records, for the views into the engine: the
// SSTables of a column family ("tidesdb.sst-files"), the running and recent compactions
// ("tidesdb.compactions"), and single counters of the "name=value" properties.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tidesdb/db.h"

namespace tidesql {

struct SstFile {
  int level = 0;
  uint64_t file_number = 0, file_size = 0, entries = 0, tombstones = 0, value_log_bytes = 0;
  uint64_t smallest_sequence = 0, largest_sequence = 0;
  std::string smallest_key_hex, largest_key_hex;  // user keys, as the library prints them
};

struct CompactionRecord {
  uint64_t id = 0;
  uint32_t cf_id = 0;
  std::string state;   // "running", "done", "failed"
  std::string reason;  // the picker's reason ("l0", "size", "tombstones", "manual", ...)
  bool manual = false, move = false;
  int level = 0, output_level = 0;
  uint64_t input_files = 0, input_bytes = 0, output_files = 0, output_bytes = 0;
  uint64_t start_micros = 0, end_micros = 0;  // wall clock; end 0 while running
  std::string status;                         // "OK" or the error
};

std::vector<SstFile> sst_files(tidesdb::DB* db, tidesdb::ColumnFamilyHandle* cf);
// Running first, then finished ones newest first.
std::vector<CompactionRecord> compactions(tidesdb::DB* db);

// The value of "name=<number>" in a property's text (0 if absent).
unsigned long long property_field(const std::string& text, const char* name);

}  // namespace tidesql
