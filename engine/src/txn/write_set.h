// WriteSet: a transaction's buffered writes, indexed by (column family, key) so that the
// transaction reads its own writes, with an undo log for nested savepoints.
//
// One entry per key: a later write of the same key replaces the earlier one (the commit
// batch holds the final state of each key, in (cf id, key) order). Not thread-safe: a
// transaction is used by one thread at a time; only bytes() and count() may be read from
// other threads (diagnostics: a SQL engine's list of open transactions).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "tidesdb/write_batch.h"

namespace tidesdb {

struct WriteEntry {
  bool deleted = false;
  std::string value;  // empty for a delete
};

class WriteSet {
 public:
  using CfMap = std::map<std::string, WriteEntry, std::less<>>;
  // Bookkeeping charged per entry on top of its key and value bytes.
  static constexpr size_t kEntryOverheadBytes = 64;

  // The bytes the set would hold after writing (cf_id, key) with a value of value_size.
  size_t BytesAfterWrite(uint32_t cf_id, Slice key, size_t value_size) const;

  void Put(uint32_t cf_id, Slice key, Slice value) {
    Write(cf_id, key, WriteEntry{false, std::string(value)});
  }
  void Delete(uint32_t cf_id, Slice key) { Write(cf_id, key, WriteEntry{true, {}}); }

  // nullptr if the set holds nothing for the key.
  const WriteEntry* Find(uint32_t cf_id, Slice key) const;
  // nullptr if the set holds nothing for the column family.
  const CfMap* ForCf(uint32_t cf_id) const;

  void SetSavepoint() { savepoints_.push_back(undo_.size()); }
  // NotFound if no savepoint is set.
  Status RollbackToSavepoint();
  Status ReleaseSavepoint();
  size_t NumSavepoints() const { return savepoints_.size(); }

  // Every entry in (cf id, key) order.
  void BuildBatch(WriteBatch* batch) const;
  const std::map<uint32_t, CfMap>& cfs() const { return cfs_; }

  size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  size_t count() const { return count_.load(std::memory_order_relaxed); }
  bool empty() const { return count() == 0; }
  void Clear();

 private:
  struct Undo {
    uint32_t cf_id;
    std::string key;
    std::optional<WriteEntry> previous;  // nullopt: the key was not in the set
  };

  static size_t Charge(size_t key_size, const WriteEntry& e) {
    return key_size + e.value.size() + kEntryOverheadBytes;
  }
  void Write(uint32_t cf_id, Slice key, WriteEntry entry);

  std::map<uint32_t, CfMap> cfs_;
  // Written by the owning thread only; atomic so that other threads may read them.
  std::atomic<size_t> bytes_{0};
  std::atomic<size_t> count_{0};
  // Undo records are kept only while a savepoint is set; savepoints_ holds undo_ sizes.
  std::vector<Undo> undo_;
  std::vector<size_t> savepoints_;
};

}  // namespace tidesdb
