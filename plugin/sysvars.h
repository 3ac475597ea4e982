// The engine's system variables (tidesdb_*): where their values live, how the session ones
// are read, and how they map onto the library's options. Each variable is documented in
// docs/SYSTEM-VARIABLES.md; the defaults are the library's own (tidesdb::Options{}).
//
// Global values are written by the server: at startup from the command line and option
// files, and for dynamic variables by SET GLOBAL, under LOCK_global_system_variables.
// Startup-only (read-only) variables never change after the plugin is initialised.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <mysql/plugin.h>

#include "tidesdb/options.h"

namespace tidesql {

// Values of the ENUM variables are indexes into their lists of names; the lists follow the
// library's enums, so a value converts with a cast (sysvars.cc checks this at compile time).
enum SyncModeValue : unsigned long { kSyncModeNone, kSyncModeInterval, kSyncModeFull };
enum CompressionValue : unsigned long {
  kCompressionNone,
  kCompressionSnappy,
  kCompressionLz4,
  kCompressionZstd
};
enum LogLevelValue : unsigned long {
  kLogLevelDebug,
  kLogLevelInfo,
  kLogLevelWarn,
  kLogLevelError,
  kLogLevelFatal,
  kLogLevelNone
};

// The global tidesdb_* values. Field types are the ones the server's variable macros
// require (BOOL is char, ENUM is unsigned long).
struct SystemVariables {
  // Startup only: they configure the database when it is opened.
  unsigned long long block_cache_size;
  char unified_memtable;
  unsigned long long unified_memtable_write_buffer_size;
  unsigned long unified_memtable_sync_mode;  // SyncModeValue
  unsigned long default_sync_mode;           // SyncModeValue
  unsigned int flush_threads;
  unsigned int compaction_threads;
  unsigned int max_open_sstables;
  unsigned long log_level;  // LogLevelValue
  unsigned long long max_memory_usage;
  unsigned long long max_total_wal_size;
  unsigned long long max_write_set_bytes;

  // Dynamic: read when a table (its column families) is created, so a change applies to
  // tables created afterwards.
  unsigned long default_compression;  // CompressionValue
  unsigned int default_bloom_fpr;     // parts per 10,000 (100 = 1 %)
  unsigned int default_l0_queue_stall_threshold;
  unsigned int default_l1_file_count_trigger;
  unsigned int default_l0_compaction_size_ratio;   // 0 = off
  unsigned int default_tombstone_density_trigger;  // parts per 10,000 (5000 = 0.50); 0 = off
  unsigned long long default_tombstone_density_min_entries;
  char use_btree;
  char index_filter_prefixes;  // secondary keys' column families get a filter_prefix_length

  // Dynamic: every conflict, deadlock and lock wait timeout goes to the error log.
  char print_all_conflicts;

  // The directory of the last checkpoint SET GLOBAL tidesdb_checkpoint_dir wrote.
  char* checkpoint_dir;

  // Tests only: the name of a DDL crash point (dictionary.h) at which the server exits.
  char* debug_crash_point;
  // Tests only: an in-place index build waits, its rows read, while this is ON (writes
  // made meanwhile reach the new index through the build's log).
  char debug_pause_index_build;
  // Tests only: CHECK, ANALYZE and REPAIR TABLE wait at each progress report while this is
  // ON (tidesdb.admin_progress reads PROCESSLIST there).
  char debug_pause_admin_progress;
};

extern SystemVariables sysvars;

// Null-terminated list for the plugin declaration.
extern st_mysql_sys_var* system_variables[];

// Session variables; a null thd reads the global value.
bool skip_unique_check(THD* thd);
// Tests only (tidesdb_debug_skip_index_writes): writes skip the secondary indexes.
bool debug_skip_index_writes(THD* thd);
// The plugin's l0_compaction_size_ratio for its tables (the library's default is 0, off): a
// secondary index or small table is merged into one run below the memtables after each
// flush while that costs at most four times the flushed bytes (docs/SYSTEM-VARIABLES.md).
// It was 10 until session 19: tables of several flushes' worth then rewrote their whole
// L1 at every flush.
constexpr unsigned int kDefaultL0CompactionSizeRatio = 4;
// Tests only (tidesdb_debug_newer_format): which records this session writes in the next
// format version, as a newer build would (rows: write_row; table definitions:
// encode_table_def).
constexpr unsigned long kNewerFormatOff = 0, kNewerFormatRow = 1, kNewerFormatTable = 2;
unsigned long debug_newer_format(THD* thd);
bool pessimistic_locking(THD* thd);
// tidesdb_locking_reads_latest: InnoDB's REPEATABLE READ for pessimistic transactions.
bool locking_reads_latest(THD* thd);
// BLOB values longer than this go off the row (tidesdb_off_row_blob_size).
uint64_t off_row_blob_size(THD* thd);
// Seconds a row-lock wait may last before ER_LOCK_WAIT_TIMEOUT (tidesdb_lock_wait_timeout).
unsigned long lock_wait_timeout_seconds(THD* thd);

// Options for opening the database, from the startup variables. The WAL's sync mode is
// tidesdb_unified_memtable_sync_mode when the unified memtable is on, otherwise
// tidesdb_default_sync_mode.
tidesdb::Options database_options();
// The WAL sync mode database_options() opens with.
tidesdb::SyncMode configured_sync_mode();

// Options for a column family created now, from the current tidesdb_default_* values.
tidesdb::ColumnFamilyOptions column_family_options();

}  // namespace tidesql
