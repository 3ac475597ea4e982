// Options: every tunable of the library, each default written beside its field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tidesdb/slice.h"

namespace tidesdb {

class Env;
class Snapshot;

// When a commit's WAL record becomes durable. In every mode the record has reached the
// operating system (write(2)) before the commit returns, so a killed process loses nothing
// acknowledged; only a power loss can cost the unsynced suffix in kNone / kInterval.
enum class SyncMode : uint8_t {
  kNone = 0,      // never fsync on commit (the OS writes back when it likes)
  kInterval = 1,  // a background thread fsyncs the WAL every sync_interval_micros
  kFull = 2,      // fsync (group-committed) before the commit is acknowledged
};

enum class CompressionType : uint8_t {
  kNone = 0,
  kSnappy = 1,
  kLZ4 = 2,
  kZstd = 3,
};

enum class LogLevel : uint8_t { kDebug = 0, kInfo, kWarn, kError, kFatal, kNone };

// Per column family. Stored in the manifest when the CF is created; Open does not need
// them again.
struct ColumnFamilyOptions {
  // Memtable size at which this CF's memtable is frozen and flushed, when the database
  // runs per-CF memtables (Options::unified_memtable == false).
  size_t write_buffer_size = 64 << 20;
  // Target uncompressed size of a key-log data block.
  size_t block_size = 16 << 10;
  // Keys between restart points inside a block (prefix compression resets there).
  int block_restart_interval = 16;
  // Bloom filter false-positive rate per SSTable; 0 disables the filter.
  double bloom_fpr = 0.01;
  // 0: the filter holds whole user keys. N > 0: it holds the first N bytes of every key of
  // at least N bytes (shorter keys whole), so it also answers for a range whose keys all
  // share one N-byte prefix (an equality on an index's leading fixed-length columns) or
  // one of a few consecutive ones (a small range of such values, probed one by one), and
  // EstimateRange and iterators seeking inside such a range pass over the files it rules
  // out. A point lookup probes its key's prefix: less selective when many keys share one.
  // Each SSTable records the length its filter was built with, so changing this is safe.
  size_t filter_prefix_length = 0;
  // Values of at least this many bytes are written to the value log; the key log keeps a
  // pointer, so compaction moves keys and never these values.
  size_t value_threshold = 1024;
  CompressionType compression = CompressionType::kLZ4;
  // Key-log index layout. false: a single sorted index block of fence pointers (one entry
  // per data block). true is reserved for a multi-level B+tree index; see ARCHITECTURE.md.
  bool use_btree = false;

  // Compaction and back-pressure (used by the compaction scheduler).
  int l1_file_count_trigger = 4;  // L0 files that trigger a compaction into L1
  // 0: only the file count above compacts L0 into L1. N > 0: so does an L0 holding at least
  // 1/N of the bytes of the L1 files it overlaps (any L0 over an L1 it does not overlap), so
  // a column family that is small beside its flushes (a secondary index, a small table)
  // keeps one sorted run below its memtables, for a rewrite of at most N times the L0 bytes.
  // Reads of such a CF then seek two runs (memtable, L1) instead of up to
  // l1_file_count_trigger + 1.
  int l0_compaction_size_ratio = 0;
  int l0_queue_stall_threshold = 20;        // L0 files + immutable memtables before writes stall
  uint64_t level_size_base = 256ull << 20;  // target size of the first non-L0 level
  int level_size_multiplier = 10;
  int max_levels = 7;
  double tombstone_density_trigger = 0.5;  // fraction of tombstones that forces compaction
  uint64_t tombstone_density_min_entries = 10000;
  // Default time-to-live for entries of this CF, seconds; 0 = never expire.
  uint64_t default_ttl_seconds = 0;
  // Compaction cuts its output into SSTables of about this size (never inside one user
  // key's versions, so levels >= 1 stay disjoint by user key).
  uint64_t target_file_size = 64ull << 20;
  // A value log whose dead (overwritten or deleted) bytes reach this fraction of its size is
  // garbage collected: compaction rewrites its live values into a new value log.
  double value_log_gc_threshold = 0.5;
};

// Per database.
struct Options {
  Env* env = nullptr;  // nullptr means Env::Default()
  bool create_if_missing = true;
  bool error_if_exists = false;
  // Verify every checksum of every block read (always on for recovery).
  bool paranoid_checks = true;
  // A column family whose key log or value log is missing, or shorter than the manifest
  // records, opens as damaged instead of failing Open (Corruption naming the file). A
  // damaged column family (also one in which compaction met a damaged block) refuses
  // writes with its damage, is not compacted, and fails reads where they meet the damage;
  // the other column families work as before. Dropping it clears the mark.
  bool open_damaged_column_families = false;

  // One memtable for all column families, split into per-CF SSTables at flush. Best when
  // there are many small column families (SQL tables and indexes).
  bool unified_memtable = true;
  size_t unified_memtable_write_buffer_size = 64 << 20;
  // Per-CF memtables (unified_memtable == false): a column family written rarely keeps its
  // small memtable, and with it every WAL from its oldest unflushed write on. When the WALs
  // before the current one exceed this many bytes, the memtables holding the oldest WAL are
  // frozen and flushed so it can go. 0: four times the sum of the write buffers. (The
  // unified memtable pins only what it holds: no cap needed.)
  uint64_t max_total_wal_size = 0;

  // WAL sync mode of commits that do not override it (WriteOptions::sync_mode).
  SyncMode sync_mode = SyncMode::kFull;
  uint64_t sync_interval_micros = 128000;  // kInterval: WAL fsync period

  size_t block_cache_size = 64 << 20;  // bytes; hard bound on cached (decompressed) blocks
  int max_open_sstables = 512;         // open-file cache bound (key logs + value logs)
  int flush_threads = 2;
  int compaction_threads = 2;
  // Memtables (active + immutable) may use at most this much; writers are slowed, then
  // briefly stalled, while flushes catch up. 0 = no bound beyond the write buffers.
  uint64_t max_memory_usage = 0;
  // Least severe message the library reports: recovery, flushes, compactions, value-log
  // GC, write stalls and background errors, one line each.
  LogLevel log_level = LogLevel::kInfo;
  // Receives those messages (without a trailing newline). Called from whichever thread did
  // the work, possibly several at once; must not call into the database. When empty, the
  // messages are appended to the file LOG in the database directory, each prefixed with a
  // UTC timestamp and the level; a LOG that cannot be written is ignored.
  std::function<void(LogLevel level, std::string_view message)> logger;

  // Column family options for the "default" CF and for CreateColumnFamily callers that
  // pass none.
  ColumnFamilyOptions default_cf_options;
};

struct ReadOptions {
  // Read as of this snapshot; nullptr = the latest committed state when the read starts.
  const Snapshot* snapshot = nullptr;
  // Iterator bounds, user keys. Keys < lower_bound or >= upper_bound are never returned,
  // and the iterator does not read past them. Empty pointer = unbounded. The bytes must
  // outlive the iterator.
  const Slice* lower_bound = nullptr;
  const Slice* upper_bound = nullptr;
  bool verify_checksums = true;
  bool fill_cache = true;  // false for scans that should not evict the working set
};

struct WriteOptions {
  // Overrides the database's sync mode (Options::sync_mode) for this commit when set.
  std::optional<SyncMode> sync_mode;
  // Skip the WAL entirely (data is lost on crash until flushed). For bulk loads only.
  bool disable_wal = false;
};

struct FlushOptions {
  bool wait = true;  // return after the flush is durable in the manifest
};

}  // namespace tidesdb
