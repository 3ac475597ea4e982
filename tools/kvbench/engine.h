// The engine interface kvbench drives: one implementation per storage library
// (tidesdb_engine.cc, rocksdb_engine.cc). Both are configured from the same EngineConfig;
// docs/BENCHMARKS.md lists how each field maps onto each library's options.
//
// Thread safety: Put/Get/Delete/Write/NewIterator/NewTransaction may be called from many
// threads at once (both libraries allow it). A batch, an iterator or a transaction is used
// by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kvbench {

enum class Compression { kNone, kLZ4, kZstd, kSnappy };
enum class Sync { kNone, kFull };

// How the engine is opened for transactions. RocksDB needs the kind of database to match
// the mode (TransactionDB for pessimistic, OptimisticTransactionDB for optimistic), so the
// mode is fixed per run; TidesDB's one TransactionDB serves both (per transaction).
enum class TxnMode { kNone, kOptimistic, kPessimistic };
// Isolation of the transaction workloads. kReadCommitted: reads see the latest committed
// state, GetForUpdate protects the keys read (RocksDB's default: no snapshot).
// kSnapshot: one snapshot per transaction, first committer wins (RocksDB: set_snapshot).
enum class TxnIsolation { kReadCommitted, kSnapshot };

struct EngineConfig {
  size_t write_buffer_bytes = 64 << 20;
  size_t level_base_bytes = 256 << 20;  // TidesDB level_size_base, RocksDB max_bytes_for_level_base
  size_t block_cache_bytes = 64 << 20;
  size_t block_size = 16 << 10;
  int block_restart_interval = 16;  // keys between restart points in a data block
  int bloom_bits_per_key = 10;      // ~1% false positives
  Compression compression = Compression::kLZ4;
  Sync sync = Sync::kNone;
  bool unified_memtable = true;       // TidesDB only
  size_t value_threshold = 1024;      // TidesDB value log; RocksDB blob files if rocksdb_blob_files
  double vlog_gc_threshold = 0.5;     // TidesDB only: value_log_gc_threshold
  bool rocksdb_blob_files = false;    // RocksDB only: integrated BlobDB with min_blob_size
  int background_threads = 2;         // TidesDB flush threads = compaction threads; RocksDB jobs = 2x
  TxnMode txn_mode = TxnMode::kNone;  // set by the workload (txn_*); kNone = plain DB
  TxnIsolation txn_isolation = TxnIsolation::kReadCommitted;
  int64_t lock_timeout_ms = 1000;  // lock wait bound, both engines (RocksDB's default)
};

// The outcome of one engine call. Cheap when OK (no allocation).
// kBusy, kTimedOut and kDeadlock are the retryable outcomes of transactions: a conflict
// with a transaction that committed first, a lock wait over the lock timeout, and being
// chosen as a deadlock victim. The caller rolls back and runs the transaction again.
struct OpStatus {
  enum class Code : uint8_t { kOk, kNotFound, kError, kBusy, kTimedOut, kDeadlock };
  Code code = Code::kOk;
  std::string message;

  static OpStatus Ok() { return {}; }
  static OpStatus NotFound() { return {Code::kNotFound, {}}; }
  static OpStatus Error(std::string msg) { return {Code::kError, std::move(msg)}; }
  bool ok() const { return code == Code::kOk; }
  bool not_found() const { return code == Code::kNotFound; }
  bool retryable() const { return code == Code::kBusy || code == Code::kTimedOut || code == Code::kDeadlock; }
};

class KvBatch {
 public:
  virtual ~KvBatch() = default;
  virtual void Put(std::string_view key, std::string_view value) = 0;
  virtual void Delete(std::string_view key) = 0;
  virtual void Clear() = 0;
};

class KvIterator {
 public:
  virtual ~KvIterator() = default;
  virtual void SeekToFirst() = 0;
  virtual void Seek(std::string_view target) = 0;
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual OpStatus status() const = 0;
};

// One transaction handle, reused for many transactions one after the other (Begin after
// Commit or Rollback); each engine reuses what its library lets it reuse. Reads see the
// transaction's own writes. A failed Commit leaves the transaction rolled back; after a
// failed GetForUpdate or Put the caller calls Rollback.
class KvTransaction {
 public:
  virtual ~KvTransaction() = default;  // rolls back an active transaction
  virtual void Begin() = 0;
  // Reads the key and announces a write of it: pessimistic mode locks it, optimistic mode
  // has it validated at commit.
  virtual OpStatus GetForUpdate(std::string_view key, std::string* value) = 0;
  virtual OpStatus Put(std::string_view key, std::string_view value) = 0;
  virtual OpStatus Commit() = 0;
  virtual OpStatus Rollback() = 0;
};

class KvEngine {
 public:
  virtual ~KvEngine() = default;  // closes the database if open

  virtual const char* name() const = 0;
  // Opens (creating) the database in dir, which must not hold another engine's files.
  virtual OpStatus Open(const std::string& dir, const EngineConfig& config) = 0;
  // Closes the database; every call below requires an open database.
  virtual OpStatus Close() = 0;

  // Writes use the configured sync mode, except Write with no_sync = true (unmeasured
  // preloads, which are flushed afterwards anyway).
  virtual OpStatus Put(std::string_view key, std::string_view value) = 0;
  virtual OpStatus Delete(std::string_view key) = 0;
  virtual std::unique_ptr<KvBatch> NewBatch() = 0;
  virtual OpStatus Write(KvBatch* batch, bool no_sync) = 0;
  virtual OpStatus Get(std::string_view key, std::string* value) = 0;
  // fill_cache = false for scans that should not evict the working set.
  virtual std::unique_ptr<KvIterator> NewIterator(bool fill_cache) = 0;
  // A transaction handle in `mode`. Error if the engine was not opened for that mode
  // (EngineConfig::txn_mode), or mode is kNone.
  virtual OpStatus NewTransaction(TxnMode mode, std::unique_ptr<KvTransaction>* txn) = 0;

  // Writes the memtable(s) to files and waits for that.
  virtual OpStatus Flush() = 0;
  // Waits until background work the engine started on its own (compactions) is idle, so a
  // measured phase does not pay for the load phase's leftovers.
  virtual OpStatus WaitForBackgroundWork() = 0;
  // One line of engine-specific numbers for the report (files per level, own stats).
  virtual std::string StatsLine() = 0;
};

std::unique_ptr<KvEngine> NewTidesdbEngine();
// nullptr when kvbench was built without the RocksDB side.
std::unique_ptr<KvEngine> NewRocksdbEngine();
bool RocksdbAvailable();
std::string RocksdbVersion();  // "7.8.3"; "" without the RocksDB side

}  // namespace kvbench
