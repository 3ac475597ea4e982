// In-memory state of column families: their live SSTables (Version), their memtables
// (MemTableSlot, shared by every CF in unified-memtable mode) and their handles.
//
// Concurrency: everything here is guarded by DBImpl::mutex_ unless noted. Readers copy the
// shared_ptrs they need (MemView, Version) under the mutex and then read without it:
// both are immutable once published.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "db/version_edit.h"
#include "memtable/memtable.h"
#include "tidesdb/db.h"
#include "tidesdb/options.h"

namespace tidesdb {

class DBImpl;

struct ValueLogMeta {
  uint64_t file_number = 0;
  uint64_t file_size = 0;
};

// The SSTables and value logs of one CF at one moment. Immutable once published.
struct Version {
  // levels[0] is newest first (files may overlap); levels >= 1 sorted by smallest key and
  // disjoint.
  std::vector<std::vector<std::shared_ptr<const FileMetaData>>> levels;
  // Live value-log files.
  std::vector<std::shared_ptr<const ValueLogMeta>> value_logs;

  uint64_t NumFiles() const {
    uint64_t n = 0;
    for (const auto& l : levels) n += l.size();
    return n;
  }
};

// A memtable with the bookkeeping the DB needs for it.
struct MemTableEntry {
  std::shared_ptr<MemTable> mem;
  uint64_t wal_number = 0;          // oldest WAL that may hold its entries
  SequenceNumber end_sequence = 0;  // last sequence assigned when it was frozen
};

// What readers see of a slot: immutable once published.
struct MemView {
  std::shared_ptr<MemTable> active;
  std::vector<std::shared_ptr<MemTable>> immutables;  // newest first
};

// A write buffer: one active memtable plus frozen ones waiting for flush (oldest first).
struct MemTableSlot {
  MemTableEntry active;
  std::deque<MemTableEntry> immutables;
  size_t write_buffer_size = 0;
  bool flush_in_progress = false;
  std::shared_ptr<const MemView> view;

  void PublishView() {
    auto v = std::make_shared<MemView>();
    v->active = active.mem;
    for (auto it = immutables.rbegin(); it != immutables.rend(); ++it) v->immutables.push_back(it->mem);
    view = std::move(v);
  }
};

class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  ColumnFamilyHandleImpl(uint32_t id, std::string name) : id_(id), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  uint32_t id() const override { return id_; }

 private:
  const uint32_t id_;
  const std::string name_;
};

struct ColumnFamilyData {
  ColumnFamilyData(uint32_t id_in, std::string name_in, ColumnFamilyOptions options_in)
      : id(id_in), name(name_in), options(std::move(options_in)), handle(id_in, std::move(name_in)) {}

  const uint32_t id;
  const std::string name;
  const ColumnFamilyOptions options;
  ColumnFamilyHandleImpl handle;

  std::shared_ptr<MemTableSlot> slot;  // shared by all CFs in unified mode
  std::shared_ptr<const Version> version = std::make_shared<Version>();
  SequenceNumber flushed_sequence = 0;  // all entries <= this are in SSTables
  std::atomic<bool> dropped{false};
  bool compacting = false;                   // one compaction per CF at a time
  std::vector<std::string> compact_cursors;  // round-robin position per level
  // Value logs in which relocation met a damaged record: they are not collected again
  // while the DB is open (the damaged value stays where it is, readable as Corruption).
  std::set<uint64_t> gc_skip;
  // Not ok: the CF is damaged (a missing or short file at open, or a damaged block met by
  // compaction). Writes are refused with this status and compaction leaves the CF alone.
  Status damage;
};

}  // namespace tidesdb
