#include "sysvars.h"

#include <climits>

#include "backup.h"
#include "tidesdb/transaction.h"

namespace tidesql {
namespace {

const tidesdb::Options kLibraryDefaults;
const tidesdb::ColumnFamilyOptions& kCfDefaults = kLibraryDefaults.default_cf_options;

const char* sync_mode_names[] = {"NONE", "INTERVAL", "FULL", nullptr};
const char* compression_names[] = {"NONE", "SNAPPY", "LZ4", "ZSTD", nullptr};
const char* log_level_names[] = {"DEBUG", "INFO", "WARN", "ERROR", "FATAL", "NONE", nullptr};
const char* newer_format_names[] = {"OFF", "ROW", "TABLE", nullptr};

TYPELIB sync_mode_typelib = {array_elements(sync_mode_names) - 1, "sync_mode_typelib", sync_mode_names,
                             nullptr};
TYPELIB compression_typelib = {array_elements(compression_names) - 1, "compression_typelib",
                               compression_names, nullptr};
TYPELIB log_level_typelib = {array_elements(log_level_names) - 1, "log_level_typelib", log_level_names,
                             nullptr};
TYPELIB newer_format_typelib = {array_elements(newer_format_names) - 1, "newer_format_typelib",
                                newer_format_names, nullptr};

static_assert(kSyncModeNone == static_cast<unsigned long>(tidesdb::SyncMode::kNone) &&
              kSyncModeInterval == static_cast<unsigned long>(tidesdb::SyncMode::kInterval) &&
              kSyncModeFull == static_cast<unsigned long>(tidesdb::SyncMode::kFull));
static_assert(kCompressionNone == static_cast<unsigned long>(tidesdb::CompressionType::kNone) &&
              kCompressionSnappy == static_cast<unsigned long>(tidesdb::CompressionType::kSnappy) &&
              kCompressionLz4 == static_cast<unsigned long>(tidesdb::CompressionType::kLZ4) &&
              kCompressionZstd == static_cast<unsigned long>(tidesdb::CompressionType::kZstd));
static_assert(kLogLevelDebug == static_cast<unsigned long>(tidesdb::LogLevel::kDebug) &&
              kLogLevelNone == static_cast<unsigned long>(tidesdb::LogLevel::kNone));

constexpr unsigned long long kMiB = 1ULL << 20;
// Unit of the ratio variables: parts per 10,000, as in the configuration files written for
// the engine this project implements (tidesdb_default_bloom_fpr = 100 means 1 %).
constexpr unsigned int kPartsPer = 10000;
constexpr unsigned long long kGiB = 1ULL << 30;

constexpr int kStartupOnly = PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_READONLY;
constexpr int kDynamic = PLUGIN_VAR_RQCMDARG;
// Booleans: a bare --tidesdb-use-btree means ON.
constexpr int kStartupOnlyBool = PLUGIN_VAR_OPCMDARG | PLUGIN_VAR_READONLY;
constexpr int kDynamicBool = PLUGIN_VAR_OPCMDARG;

// --- startup only ---------------------------------------------------------------------------

MYSQL_SYSVAR_ULONGLONG(block_cache_size, sysvars.block_cache_size, kStartupOnly,
                       "Bytes of memory for the block cache (decompressed SSTable blocks, index and "
                       "filter partitions); a hard bound",
                       nullptr, nullptr, kLibraryDefaults.block_cache_size, kMiB, ULLONG_MAX, 0);

MYSQL_SYSVAR_BOOL(unified_memtable, sysvars.unified_memtable, kStartupOnlyBool,
                  "One memtable for all tables and indexes, split into per-column-family SSTables "
                  "at flush",
                  nullptr, nullptr, kLibraryDefaults.unified_memtable);

MYSQL_SYSVAR_ULONGLONG(unified_memtable_write_buffer_size, sysvars.unified_memtable_write_buffer_size,
                       kStartupOnly, "Size in bytes at which the unified memtable is frozen and flushed",
                       nullptr, nullptr, kLibraryDefaults.unified_memtable_write_buffer_size, kMiB, 4 * kGiB,
                       0);

MYSQL_SYSVAR_ENUM(unified_memtable_sync_mode, sysvars.unified_memtable_sync_mode, kStartupOnly,
                  "When a commit's write-ahead log record is fsynced while the unified memtable is on: "
                  "NONE (never on commit), INTERVAL (by a background thread), FULL (before the commit "
                  "returns)",
                  nullptr, nullptr, static_cast<unsigned long>(kLibraryDefaults.sync_mode),
                  &sync_mode_typelib);

MYSQL_SYSVAR_ENUM(default_sync_mode, sysvars.default_sync_mode, kStartupOnly,
                  "When a commit's write-ahead log record is fsynced while the unified memtable is off: "
                  "NONE, INTERVAL or FULL",
                  nullptr, nullptr, static_cast<unsigned long>(kLibraryDefaults.sync_mode),
                  &sync_mode_typelib);

MYSQL_SYSVAR_UINT(flush_threads, sysvars.flush_threads, kStartupOnly,
                  "Background threads that flush memtables to SSTables", nullptr, nullptr,
                  static_cast<unsigned int>(kLibraryDefaults.flush_threads), 1, 64, 0);

MYSQL_SYSVAR_UINT(compaction_threads, sysvars.compaction_threads, kStartupOnly,
                  "Background threads that compact SSTables", nullptr, nullptr,
                  static_cast<unsigned int>(kLibraryDefaults.compaction_threads), 1, 64, 0);

MYSQL_SYSVAR_UINT(max_open_sstables, sysvars.max_open_sstables, kStartupOnly,
                  "Most SSTable files (key logs and value logs) kept open at once", nullptr, nullptr,
                  static_cast<unsigned int>(kLibraryDefaults.max_open_sstables), 16, 1 << 20, 0);

MYSQL_SYSVAR_ENUM(log_level, sysvars.log_level, kStartupOnly,
                  "Least severe library message written to the server's error log: DEBUG, INFO, WARN, "
                  "ERROR, FATAL or NONE",
                  nullptr, nullptr, static_cast<unsigned long>(kLibraryDefaults.log_level),
                  &log_level_typelib);

MYSQL_SYSVAR_ULONGLONG(max_total_wal_size, sysvars.max_total_wal_size, kStartupOnly,
                       "With tidesdb_unified_memtable=OFF: bytes of older write-ahead logs past which "
                       "the memtables holding the oldest one are flushed so it can be deleted; 0 = four "
                       "times the sum of the write buffers",
                       nullptr, nullptr, kLibraryDefaults.max_total_wal_size, 0, ULLONG_MAX, 0);

MYSQL_SYSVAR_ULONGLONG(max_memory_usage, sysvars.max_memory_usage, kStartupOnly,
                       "Bytes that memtables (active and immutable) may use before writers are slowed "
                       "while flushes catch up; 0 = no bound beyond the write buffers",
                       nullptr, nullptr, kLibraryDefaults.max_memory_usage, 0, ULLONG_MAX, 0);

MYSQL_SYSVAR_ULONGLONG(max_write_set_bytes, sysvars.max_write_set_bytes, kStartupOnly,
                       "Largest write set (keys + values + 64 bytes per entry) one transaction may buffer; "
                       "a statement that would exceed it fails whole with a clear error",
                       nullptr, nullptr, tidesdb::TransactionDBOptions().max_write_set_bytes, kMiB,
                       ULLONG_MAX, 0);

// --- dynamic: read when a table is created --------------------------------------------------

MYSQL_SYSVAR_ENUM(default_compression, sysvars.default_compression, kDynamic,
                  "Block compression of tables created from now on: NONE, SNAPPY, LZ4 or ZSTD", nullptr,
                  nullptr, static_cast<unsigned long>(kCfDefaults.compression), &compression_typelib);

MYSQL_SYSVAR_UINT(default_bloom_fpr, sysvars.default_bloom_fpr, kDynamic,
                  "Bloom filter false-positive rate of tables created from now on, in parts per 10,000 "
                  "(100 = 1 %); 0 = no filter",
                  nullptr, nullptr, static_cast<unsigned int>(kCfDefaults.bloom_fpr* kPartsPer + 0.5), 0,
                  kPartsPer / 2, 0);

MYSQL_SYSVAR_UINT(default_l0_queue_stall_threshold, sysvars.default_l0_queue_stall_threshold, kDynamic,
                  "Level-0 files plus immutable memtables of a table at which its writers stall "
                  "(tables created from now on)",
                  nullptr, nullptr, static_cast<unsigned int>(kCfDefaults.l0_queue_stall_threshold), 1, 1024,
                  0);

MYSQL_SYSVAR_UINT(default_l1_file_count_trigger, sysvars.default_l1_file_count_trigger, kDynamic,
                  "Level-0 files of a table that trigger a compaction into level 1 (tables created "
                  "from now on)",
                  nullptr, nullptr, static_cast<unsigned int>(kCfDefaults.l1_file_count_trigger), 1, 1024, 0);

MYSQL_SYSVAR_UINT(default_l0_compaction_size_ratio, sysvars.default_l0_compaction_size_ratio, kDynamic,
                  "Level 0 of a table is also compacted into level 1 once the level-1 files it "
                  "overlaps hold at most this many times its bytes, so that a table or index small "
                  "beside its flushes keeps one sorted run below its memtables; 0 = only the file "
                  "count (tables created from now on)",
                  nullptr, nullptr, kDefaultL0CompactionSizeRatio, 0, 1024, 0);

MYSQL_SYSVAR_UINT(default_tombstone_density_trigger, sysvars.default_tombstone_density_trigger, kDynamic,
                  "Share of tombstones in an SSTable that forces its compaction, in parts per 10,000 "
                  "(5000 = 0.50); 0 = off (tables created from now on)",
                  nullptr, nullptr,
                  static_cast<unsigned int>(kCfDefaults.tombstone_density_trigger* kPartsPer + 0.5), 0,
                  kPartsPer, 0);

MYSQL_SYSVAR_ULONGLONG(default_tombstone_density_min_entries, sysvars.default_tombstone_density_min_entries,
                       kDynamic,
                       "Entries an SSTable must hold before its tombstone density is considered (tables "
                       "created from now on)",
                       nullptr, nullptr, kCfDefaults.tombstone_density_min_entries, 0, ULLONG_MAX, 0);

MYSQL_SYSVAR_BOOL(use_btree, sysvars.use_btree, kDynamicBool,
                  "Multi-level B+tree index in the key logs of tables created from now on, instead of "
                  "a single index block",
                  nullptr, nullptr, kCfDefaults.use_btree);

MYSQL_SYSVAR_BOOL(index_filter_prefixes, sysvars.index_filter_prefixes, kDynamicBool,
                  "The bloom filters of secondary keys of tables created from now on hold the prefix of "
                  "their leading fixed-length columns, so that the optimizer's estimate of an equality "
                  "on them passes over the SSTables without it; OFF = whole keys",
                  nullptr, nullptr, true);

MYSQL_SYSVAR_STR(debug_crash_point, sysvars.debug_crash_point, PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_MEMALLOC,
                 "Tests only: the server process exits at once when a DDL reaches the named crash point "
                 "(e.g. create_table_after_column_families); empty = none",
                 nullptr, nullptr, "");

MYSQL_SYSVAR_BOOL(debug_pause_index_build, sysvars.debug_pause_index_build, kDynamicBool,
                  "Tests only: an in-place ADD INDEX waits after reading the rows while this is ON", nullptr,
                  nullptr, false);

MYSQL_SYSVAR_BOOL(debug_pause_admin_progress, sysvars.debug_pause_admin_progress, kDynamicBool,
                  "Tests only: CHECK, ANALYZE and REPAIR TABLE wait at each progress report while this is ON",
                  nullptr, nullptr, false);

// --- dynamic: diagnostics -------------------------------------------------------------------
MYSQL_SYSVAR_BOOL(print_all_conflicts, sysvars.print_all_conflicts, kDynamicBool,
                  "Write every write conflict, deadlock and lock wait timeout of a TidesDB transaction to "
                  "the error log, with the key (table and index), the statement and the transactions "
                  "waited for (like innodb_print_all_deadlocks)",
                  nullptr, nullptr, false);
// --- dynamic: an action -------------------------------------------------------------------

// Setting it writes a checkpoint (the work is in the check function, backup.cc); the value
// is then the directory of the last checkpoint written. Not an option: a value given at
// startup would name a checkpoint that was never written.
MYSQL_SYSVAR_STR(checkpoint_dir, sysvars.checkpoint_dir,
                 PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_MEMALLOC | PLUGIN_VAR_NOCMDOPT,
                 "Setting it writes a consistent copy of every TidesDB table, taken online, into the "
                 "named directory (absolute path, created; must not exist); shows the last one written",
                 check_checkpoint_dir, nullptr, "");

// --- session --------------------------------------------------------------------------------

MYSQL_THDVAR_BOOL(skip_unique_check, kDynamicBool,
                  "Skip the uniqueness checks of INSERT and UPDATE in this session (for bulk loads of "
                  "data known to be unique)",
                  nullptr, nullptr, false);

MYSQL_THDVAR_BOOL(debug_skip_index_writes, kDynamicBool,
                  "Tests only: INSERT and DELETE in this session leave the secondary indexes (and the "
                  "off-row values) alone, so that CHECK TABLE and REPAIR TABLE can be tested on indexes "
                  "that disagree with their table",
                  nullptr, nullptr, false);

MYSQL_THDVAR_ENUM(debug_newer_format, PLUGIN_VAR_RQCMDARG,
                  "Tests only: the rows this session inserts (ROW) or the table definitions it writes "
                  "(TABLE) carry "
                  "the next format version, as a newer TideSQL would write them, so that the refusal "
                  "of a newer format can be tested",
                  nullptr, nullptr, kNewerFormatOff, &newer_format_typelib);

MYSQL_THDVAR_ULONG(off_row_blob_size, PLUGIN_VAR_RQCMDARG,
                   "BLOB, TEXT, JSON and GEOMETRY values longer than this many bytes are stored off the row, "
                   "under their own key, and read only by statements that use the column; 4294967295 = "
                   "never (a table created before this variable existed keeps every value in its rows)",
                   nullptr, nullptr, 8192, 0, 4294967295UL, 0);

MYSQL_THDVAR_BOOL(pessimistic_locking, kDynamicBool,
                  "Transactions of this session lock rows as they write them (row-lock manager, lock "
                  "waits) instead of validating optimistically at commit",
                  nullptr, nullptr, false);

MYSQL_THDVAR_BOOL(locking_reads_latest, kDynamicBool,
                  "With tidesdb_pessimistic_locking, REPEATABLE READ as InnoDB has it: locking reads "
                  "(SELECT ... FOR UPDATE or LOCK IN SHARE MODE, and the rows UPDATE and DELETE change) "
                  "read the latest committed row and writes apply to it, instead of failing with "
                  "ER_LOCK_DEADLOCK when the row was committed after the transaction's snapshot; plain "
                  "SELECTs keep the snapshot. OFF: first committer wins (snapshot isolation). Takes "
                  "effect at the next transaction",
                  nullptr, nullptr, false);

MYSQL_THDVAR_ULONG(lock_wait_timeout, PLUGIN_VAR_RQCMDARG,
                   "Seconds a transaction waits for a row lock before it fails with "
                   "ER_LOCK_WAIT_TIMEOUT (1205); the statement is rolled back, the transaction stays open",
                   nullptr, nullptr, 50, 0, 1024 * 1024 * 1024, 0);

}  // namespace

SystemVariables sysvars;

st_mysql_sys_var* system_variables[] = {
    MYSQL_SYSVAR(block_cache_size),
    MYSQL_SYSVAR(unified_memtable),
    MYSQL_SYSVAR(unified_memtable_write_buffer_size),
    MYSQL_SYSVAR(unified_memtable_sync_mode),
    MYSQL_SYSVAR(default_sync_mode),
    MYSQL_SYSVAR(flush_threads),
    MYSQL_SYSVAR(compaction_threads),
    MYSQL_SYSVAR(max_open_sstables),
    MYSQL_SYSVAR(log_level),
    MYSQL_SYSVAR(max_memory_usage),
    MYSQL_SYSVAR(max_total_wal_size),
    MYSQL_SYSVAR(max_write_set_bytes),
    MYSQL_SYSVAR(default_compression),
    MYSQL_SYSVAR(default_bloom_fpr),
    MYSQL_SYSVAR(default_l0_queue_stall_threshold),
    MYSQL_SYSVAR(default_l1_file_count_trigger),
    MYSQL_SYSVAR(default_l0_compaction_size_ratio),
    MYSQL_SYSVAR(default_tombstone_density_trigger),
    MYSQL_SYSVAR(default_tombstone_density_min_entries),
    MYSQL_SYSVAR(use_btree),
    MYSQL_SYSVAR(index_filter_prefixes),
    MYSQL_SYSVAR(debug_crash_point),
    MYSQL_SYSVAR(debug_pause_index_build),
    MYSQL_SYSVAR(debug_pause_admin_progress),
    MYSQL_SYSVAR(print_all_conflicts),
    MYSQL_SYSVAR(checkpoint_dir),
    MYSQL_SYSVAR(skip_unique_check),
    MYSQL_SYSVAR(debug_skip_index_writes),
    MYSQL_SYSVAR(off_row_blob_size),
    MYSQL_SYSVAR(debug_newer_format),
    MYSQL_SYSVAR(pessimistic_locking),
    MYSQL_SYSVAR(locking_reads_latest),
    MYSQL_SYSVAR(lock_wait_timeout),
    nullptr,
};

bool skip_unique_check(THD* thd) { return THDVAR(thd, skip_unique_check); }

bool debug_skip_index_writes(THD* thd) { return THDVAR(thd, debug_skip_index_writes); }

unsigned long debug_newer_format(THD* thd) { return THDVAR(thd, debug_newer_format); }

bool pessimistic_locking(THD* thd) { return THDVAR(thd, pessimistic_locking); }

bool locking_reads_latest(THD* thd) { return THDVAR(thd, locking_reads_latest); }

unsigned long lock_wait_timeout_seconds(THD* thd) { return THDVAR(thd, lock_wait_timeout); }

uint64_t off_row_blob_size(THD* thd) { return THDVAR(thd, off_row_blob_size); }

tidesdb::SyncMode configured_sync_mode() {
  return static_cast<tidesdb::SyncMode>(sysvars.unified_memtable ? sysvars.unified_memtable_sync_mode
                                                                 : sysvars.default_sync_mode);
}

tidesdb::Options database_options() {
  tidesdb::Options options;
  options.block_cache_size = sysvars.block_cache_size;
  options.unified_memtable = sysvars.unified_memtable;
  options.unified_memtable_write_buffer_size = sysvars.unified_memtable_write_buffer_size;
  options.sync_mode = configured_sync_mode();
  options.flush_threads = static_cast<int>(sysvars.flush_threads);
  options.compaction_threads = static_cast<int>(sysvars.compaction_threads);
  options.max_open_sstables = static_cast<int>(sysvars.max_open_sstables);
  options.log_level = static_cast<tidesdb::LogLevel>(sysvars.log_level);
  options.max_memory_usage = sysvars.max_memory_usage;
  options.max_total_wal_size = sysvars.max_total_wal_size;
  options.default_cf_options = column_family_options();
  return options;
}

tidesdb::ColumnFamilyOptions column_family_options() {
  tidesdb::ColumnFamilyOptions cf;
  cf.compression = static_cast<tidesdb::CompressionType>(sysvars.default_compression);
  cf.bloom_fpr = static_cast<double>(sysvars.default_bloom_fpr) / kPartsPer;
  cf.l0_queue_stall_threshold = static_cast<int>(sysvars.default_l0_queue_stall_threshold);
  cf.l1_file_count_trigger = static_cast<int>(sysvars.default_l1_file_count_trigger);
  cf.l0_compaction_size_ratio = static_cast<int>(sysvars.default_l0_compaction_size_ratio);
  cf.tombstone_density_trigger = static_cast<double>(sysvars.default_tombstone_density_trigger) / kPartsPer;
  cf.tombstone_density_min_entries = sysvars.default_tombstone_density_min_entries;
  cf.use_btree = sysvars.use_btree;
  return cf;
}

}  // namespace tidesql
