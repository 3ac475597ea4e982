// In-memory state of column families: their live SSTables (Version), their memtables
// (MemTableSlot, shared by every CF in unified-memtable mode) and their handles.
//
// Concurrency: everything here is guarded by DBImpl::mutex_ unless noted. Readers take
// neither the mutex nor any lock an fsync is done under: they load the CF's ReadView (a
// shared_ptr copy under the CF's own small lock), which holds the memtables and the Version it was published
// with, both immutable once published.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
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

// What a read sees of one CF: the memtables and the SSTables that hold every entry
// published so far, as one pair. A flush publishes its new Version together with the
// memtable list that no longer holds the flushed memtable (one new ReadView), so no
// reader can see the memtable gone and the file not yet there. Immutable once published.
struct ReadView {
  std::shared_ptr<const MemView> mems;
  std::shared_ptr<const Version> version;
};

// The published ReadView of a CF. Load takes a reference under a mutex of its own, held
// for a pointer copy and a reference-count increment, never shared with I/O or with any
// other lock; Store swaps the pointer under it and drops the old view after unlocking.
// (std::atomic<std::shared_ptr> in libstdc++ 12 does the same with a lock bit, but its
// load unlocks with a relaxed store, which is a data race by the memory model and is
// reported by TSan.)
class PublishedReadView {
 public:
  std::shared_ptr<const ReadView> Load() const {
    std::lock_guard<std::mutex> l(mu_);
    return view_;
  }
  void Store(std::shared_ptr<const ReadView> view) {
    {
      std::lock_guard<std::mutex> l(mu_);
      view_.swap(view);
    }
    // The old view (now in `view`) is released here, outside the lock.
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ReadView> view_;
};

struct ColumnFamilyData;
struct CompactionInputs;

// The compactions running in one CF, so that more than one can run at once: a new one may
// start only if it shares no input file with them, writes no key range another one writes
// at the same level, and, from L0, only while no other L0 compaction runs (L0 files are
// ordered by age, and all of L0 is one input). Picking checks this (compaction_picker.h).
class RunningCompactions {
 public:
  bool empty() const { return jobs_.empty(); }
  size_t size() const { return jobs_.size(); }
  // True if c may run alongside every running compaction.
  bool Admits(const CompactionInputs& c) const;
  // True if file `number` is an input of a running compaction.
  bool IsInput(uint64_t number) const;
  // Registers c as running; returns the id Remove takes.
  uint64_t Add(const CompactionInputs& c);
  void Remove(uint64_t id);

 private:
  struct Job {
    uint64_t id = 0;
    int level = 0, output_level = 0;
    std::set<uint64_t> files;       // its inputs
    std::string smallest, largest;  // the user-key range of its inputs, which its output stays in
  };
  std::vector<Job> jobs_;
  uint64_t next_id_ = 1;
};

class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  ColumnFamilyHandleImpl(uint32_t id, std::string name, ColumnFamilyData* cfd)
      : id_(id), name_(std::move(name)), cfd_(cfd) {}
  const std::string& name() const override { return name_; }
  uint32_t id() const override { return id_; }
  // The CF this handle names and the DB that owns it (set once, before the handle is
  // handed out): reads find their CF from the handle without the DB's map and mutex.
  ColumnFamilyData* cfd() const { return cfd_; }
  const DBImpl* owner() const { return owner_; }
  void set_owner(const DBImpl* owner) { owner_ = owner; }

 private:
  const uint32_t id_;
  const std::string name_;
  ColumnFamilyData* const cfd_;
  const DBImpl* owner_ = nullptr;
};

struct ColumnFamilyData {
  ColumnFamilyData(uint32_t id_in, std::string name_in, ColumnFamilyOptions options_in)
      : id(id_in), name(name_in), options(std::move(options_in)), handle(id_in, std::move(name_in), this) {}

  const uint32_t id;
  const std::string name;
  const ColumnFamilyOptions options;
  ColumnFamilyHandleImpl handle;

  std::shared_ptr<MemTableSlot> slot;  // shared by all CFs in unified mode
  std::shared_ptr<const Version> version = std::make_shared<Version>();
  // What readers use: (slot->view, version) as last published by DBImpl's
  // PublishReadViewLocked / PublishSlotLocked; null once the CF is dropped (its files go
  // when the last reader lets go). Written under mutex_; read without any lock.
  PublishedReadView read_view;
  SequenceNumber flushed_sequence = 0;  // all entries <= this are in SSTables
  std::atomic<bool> dropped{false};
  RunningCompactions compactions;  // background and manual compactions running now
  // A manual compaction (CompactRange) runs alone: it waits until none runs, and none
  // starts while it does.
  bool manual_compaction = false;
  std::vector<std::string> compact_cursors;  // round-robin position per level
  // Value logs in which relocation met a damaged record: they are not collected again
  // while the DB is open (the damaged value stays where it is, readable as Corruption).
  std::set<uint64_t> gc_skip;
  // Not ok: the CF is damaged (a missing or short file at open, or a damaged block met by
  // compaction). Writes are refused with this status and compaction leaves the CF alone.
  Status damage;
};

}  // namespace tidesdb
