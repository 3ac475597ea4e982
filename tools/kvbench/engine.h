// The engine interface kvbench drives: one implementation per storage library
// (tidesdb_engine.cc, rocksdb_engine.cc). Both are configured from the same EngineConfig;
// docs/BENCHMARKS.md lists how each field maps onto each library's options.
//
// Thread safety: Put/Get/Delete/Write/NewIterator may be called from many threads at once
// (both libraries allow it). A batch or an iterator is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kvbench {

enum class Compression { kNone, kLZ4, kZstd, kSnappy };
enum class Sync { kNone, kFull };

struct EngineConfig {
  size_t write_buffer_bytes = 64 << 20;
  size_t block_cache_bytes = 64 << 20;
  size_t block_size = 16 << 10;
  int bloom_bits_per_key = 10;  // ~1% false positives
  Compression compression = Compression::kLZ4;
  Sync sync = Sync::kNone;
  bool unified_memtable = true;     // TidesDB only
  size_t value_threshold = 1024;    // TidesDB value log; RocksDB blob files if rocksdb_blob_files
  bool rocksdb_blob_files = false;  // RocksDB only: integrated BlobDB with min_blob_size
  int background_threads = 2;       // TidesDB flush threads = compaction threads; RocksDB jobs = 2x
};

// The outcome of one engine call. Cheap when OK (no allocation).
struct OpStatus {
  enum class Code : uint8_t { kOk, kNotFound, kError };
  Code code = Code::kOk;
  std::string message;

  static OpStatus Ok() { return {}; }
  static OpStatus NotFound() { return {Code::kNotFound, {}}; }
  static OpStatus Error(std::string msg) { return {Code::kError, std::move(msg)}; }
  bool ok() const { return code == Code::kOk; }
  bool not_found() const { return code == Code::kNotFound; }
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
