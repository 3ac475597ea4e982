// DB: a log-structured key-value store with column families.
//
// Thread safety: every DB method may be called from many threads at once. Writes are
// group-committed: concurrent writers share one WAL write (and one fsync in SyncMode::kFull).
//
// Ownership: DB::Open returns a DB the caller deletes (which closes it). Column family
// handles are owned by the DB; they stay valid until the CF is dropped or the DB closed.
// Iterators and snapshots must be released before the DB is deleted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tidesdb/iterator.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "tidesdb/write_batch.h"

namespace tidesdb {

class ColumnFamilyHandle {
 public:
  virtual ~ColumnFamilyHandle() = default;
  virtual const std::string& name() const = 0;
  // Stable for the life of the CF; never reused for another CF in the same database.
  virtual uint32_t id() const = 0;
};

// A consistent point-in-time view. While registered (between GetSnapshot and
// ReleaseSnapshot) compaction keeps every version the snapshot can see.
class Snapshot {
 public:
  virtual uint64_t sequence() const = 0;

 protected:
  virtual ~Snapshot() = default;
};

// Half-open user-key range [start, limit); an empty limit means "to the end".
struct Range {
  Slice start;
  Slice limit;
};

// Estimates for a key range (query planning). Never exact, never I/O-heavy.
struct RangeEstimate {
  uint64_t keys = 0;   // approximate number of entries (versions and tombstones included)
  uint64_t bytes = 0;  // approximate bytes on disk and in memtables
};

class DB {
 public:
  // Opens (creating if allowed) the database in directory `path`. Replays the WAL: every
  // commit acknowledged before a crash is present afterwards. A torn WAL tail is truncated;
  // any other corruption fails Open with a Corruption status naming file and offset.
  static Status Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB() = default;

  // --- Column families. "default" (id 0) always exists.
  virtual ColumnFamilyHandle* DefaultColumnFamily() const = 0;
  virtual Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                                    ColumnFamilyHandle** handle) = 0;
  // Removes the CF and, once no iterator uses them, its files. A CF created later under the
  // same name is a new, empty CF. The handle is invalid after this returns.
  virtual Status DropColumnFamily(ColumnFamilyHandle* handle) = 0;
  // nullptr if there is no CF of that name.
  virtual ColumnFamilyHandle* GetColumnFamily(const std::string& name) const = 0;
  virtual std::vector<std::string> ListColumnFamilies() const = 0;

  // --- Writes.
  virtual Status Put(const WriteOptions& options, ColumnFamilyHandle* cf, Slice key, Slice value) = 0;
  virtual Status Delete(const WriteOptions& options, ColumnFamilyHandle* cf, Slice key) = 0;
  // Applies the batch atomically (one WAL record, one sequence range).
  virtual Status Write(const WriteOptions& options, WriteBatch* batch) = 0;

  // --- Reads.
  // NotFound if the key is absent (or deleted, or expired) in the view.
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* cf, Slice key, std::string* value) = 0;
  // Caller deletes the iterator. Honors options.snapshot and the bounds.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, ColumnFamilyHandle* cf) = 0;

  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // --- Maintenance.
  // Freezes the memtable(s) holding data of cf (nullptr: every CF) and writes them to
  // SSTables.
  virtual Status Flush(const FlushOptions& options, ColumnFamilyHandle* cf) = 0;
  // fsyncs the WAL now (useful with SyncMode::kNone / kInterval).
  virtual Status SyncWAL() = 0;
  // Compacts every file of cf (nullptr: every CF) overlapping the range (nullptr: all keys)
  // down to the last level, dropping overwritten versions no snapshot needs, tombstones and
  // expired entries; then moves the live values out of every value log left with garbage
  // that only the range's files reference (below value_log_gc_threshold too; unless that
  // threshold turns relocation off), so those logs are deleted. Flushes the memtables first.
  // Returns when done.
  virtual Status CompactRange(ColumnFamilyHandle* cf, const Range* range) = 0;
  // Writes a consistent copy of the database, taken online, into the new directory `dir`
  // (on the same file system, SSTables and value logs are hard links; WAL tails are copied).
  // The copy opens as a database holding exactly the commits acknowledged before the call
  // took effect; writes may go on meanwhile.
  virtual Status Checkpoint(const std::string& dir) = 0;
  // Blocks until no flush or compaction is pending or running (tests, benchmarks).
  virtual Status WaitForBackgroundWork() = 0;

  // --- Introspection.
  // Estimates of n ranges of one CF, estimates[i] for ranges[i], from one view of the CF.
  // Asking for all ranges of a query at once is cheaper than one at a time: the memtable's
  // searches for them overlap their cache misses.
  virtual void EstimateRanges(ColumnFamilyHandle* cf, const Range* ranges, size_t n,
                              RangeEstimate* estimates) = 0;
  RangeEstimate EstimateRange(ColumnFamilyHandle* cf, const Range& range) {
    RangeEstimate estimate;
    EstimateRanges(cf, &range, 1, &estimate);
    return estimate;
  }
  // Named properties, e.g. "tidesdb.stats", "tidesdb.num-files-at-level<N>",
  // "tidesdb.cur-size-all-mem-tables", "tidesdb.value-logs" (per value log of the CF: size,
  // live bytes, garbage ratio). False if the name is unknown. docs/ARCHITECTURE.md lists all.
  virtual bool GetProperty(ColumnFamilyHandle* cf, Slice name, std::string* value) = 0;
  // The sequence number of the most recent committed write.
  virtual uint64_t LatestSequence() const = 0;
};

// Removes a database directory and everything in it.
Status DestroyDB(const std::string& path, const Options& options);

}  // namespace tidesdb
