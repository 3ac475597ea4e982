// Per-table options: CREATE TABLE ... ENGINE=TidesDB COMPRESSION=ZSTD BLOOM_FPR=10 ...
//
// What the library keeps per column family, set per table: every column family of the
// table (its rows and each index, also those made later by TRUNCATE or an in-place ADD
// INDEX) is created with them. The server parses them (table_option_rules), stores them in
// the .frm and prints them in SHOW CREATE TABLE; ALTER keeps them. An option a table does
// not give follows the tidesdb_default_* variable (or the library's default) at the time a
// column family is created. The library stores each column family's options in its
// manifest when it creates it, so the .frm is not needed to open the files.
//
// Not offered: TTL (the library's per-CF default_ttl_seconds is recorded but not applied
// to writes, and transactions cannot write expiring entries) and SYNC_MODE (the WAL is
// shared by every column family; its sync mode is per database: tidesdb_*_sync_mode).
// docs/SQL-ENGINE.md, "Table options".
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>
#include <table.h>

#include <vector>

#include "tidesdb/options.h"

// The server's name for the struct it fills from the options (TABLE_SHARE::option_struct,
// HA_CREATE_INFO::option_struct). A field's value counts only if the table gives the
// option (table_option_given); otherwise it holds the rule's placeholder default.
struct ha_table_option_struct {
  uint compression;                     // index into "NONE,SNAPPY,LZ4,ZSTD" (CompressionValue)
  ulonglong bloom_fpr;                  // parts per 10,000 (100 = 1 %); 0 = no bloom filter
  bool use_btree;                       // reserved index layout (docs/ARCHITECTURE.md)
  ulonglong block_size;                 // bytes of a key-log data block, uncompressed
  ulonglong value_threshold;            // values this long or longer go to the value log
  ulonglong write_buffer_size;          // per-CF memtable size (tidesdb_unified_memtable=OFF)
  ulonglong l0_queue_stall_threshold;   // level-0 files + frozen memtables that stall writes
  ulonglong l1_file_count_trigger;      // level-0 files that trigger a compaction into L1
  ulonglong l0_compaction_size_ratio;   // level 0 merges once overlapped L1 <= this x its bytes; 0 = off
  ulonglong tombstone_density_trigger;  // parts per 10,000 of tombstones; 0 = off
};

namespace tidesql {

// handlerton::table_options.
extern ha_create_table_option table_option_rules[];

// Whether the option list (TABLE_SHARE::option_list, or an ALTER's merged
// HA_CREATE_INFO::option_list) gives option `name` a value (not DEFAULT).
bool table_option_given(const engine_option_value* list, const char* name);

// The options for a column family of the table whose option list and parsed values these
// are: the tidesdb_default_* values now, overridden by what the table gives.
tidesdb::ColumnFamilyOptions table_column_family_options(const engine_option_value* list,
                                                         const ha_table_option_struct* values);
inline tidesdb::ColumnFamilyOptions table_column_family_options(const TABLE_SHARE* share) {
  return table_column_family_options(share->option_list, share->option_struct);
}

// ColumnFamilyOptions::filter_prefix_length of each key's column family, in key order: for
// a secondary key its leading fixed-length parts' image length (an equality on them is a
// range inside one prefix, which the column family's bloom filters then answer), for the
// primary key 0 (its filters keep whole keys for point lookups); all 0 when
// tidesdb_index_filter_prefixes is OFF.
std::vector<size_t> index_filter_prefixes(TABLE* table);

// CREATE: the values the server accepts but the engine refuses (a number option given as a
// word, which the server reads as 0). False after reporting ER_BAD_OPTION_VALUE.
bool check_table_options(const engine_option_value* list);

// Whether an ALTER changes the options: one given on one side only, or given both with
// different values. Such an ALTER must rebuild the table (copy), since the library cannot
// change the options of an existing column family.
bool table_options_differ(const TABLE_SHARE* share, const HA_CREATE_INFO* create_info);

}  // namespace tidesql
