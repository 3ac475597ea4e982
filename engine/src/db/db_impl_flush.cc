// Background flush: an immutable memtable becomes one L0 SSTable (key log, plus a value
// log when it holds large values) per column family with entries in it; then one manifest
// edit makes them live, advances each CF's flushed sequence and releases old WALs.
#include <chrono>
#include <cstdio>
#include <optional>

#include "db/db_impl.h"
#include "db/filename.h"
#include "sst/table_builder.h"
#include "sst/value_log.h"
#include "util/thread_name.h"

namespace tidesdb {

void DBImpl::MaybeScheduleFlushLocked() { bg_cv_.notify_all(); }

void DBImpl::FlushLoop() {
  SetCurrentThreadName("tdb-flush");
  std::unique_lock<std::mutex> l(mutex_);
  while (!shutting_down_) {
    MemTableSlot* pick = nullptr;
    for (auto& slot : slots_) {
      if (!slot->immutables.empty() && !slot->flush_in_progress) {
        pick = slot.get();
        break;
      }
    }
    if (pick == nullptr) {
      bg_cv_.wait(l);
      continue;
    }
    Status s = FlushOneLocked(l, pick);
    flush_attempts_++;
    if (s.ok()) {
      bg_error_ = Status::OK();
    } else {
      Log(LogLevel::kError, "flush failed (retrying in 200 ms): %s", s.ToString().c_str());
      // Keep the memtable and retry after a pause (e.g. the disk was full); writers see
      // the error only if they would otherwise have to wait for this flush.
      bg_error_ = s;
      bg_cv_.notify_all();
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      while (!shutting_down_ && std::chrono::steady_clock::now() < until) bg_cv_.wait_until(l, until);
    }
  }
}

Status DBImpl::BuildTable(ColumnFamilyData* cfd, MemTable* mem, const std::vector<SequenceNumber>& snapshots,
                          FileMetaData* meta, uint64_t* vlog_number, uint64_t* vlog_size) {
  uint64_t number, vnumber;
  {
    std::lock_guard<std::mutex> l(mutex_);
    number = next_file_number_++;
    vnumber = next_file_number_++;
  }
  std::unique_ptr<InternalIterator> iter = mem->NewIterator(cfd->id);
  // Versions overwritten within this memtable that no snapshot can see are not written
  // (their large values never reach a value log). Large values go to a value log; open one
  // only if a kept entry has one.
  bool has_large = false;
  ShadowedVersionFilter scan_filter(snapshots);
  for (iter->SeekToFirst(); iter->Valid() && !has_large; iter->Next()) {
    ParsedInternalKey ikey;
    if (!ParseInternalKey(iter->key(), &ikey)) return Status::Corruption("memtable holds a malformed key");
    if (scan_filter.Shadowed(ikey)) continue;
    size_t len = iter->value().size();
    if (ikey.type == ValueType::kValueWithExpiry) len -= std::min<size_t>(len, 8);
    has_large = (ikey.type == ValueType::kValue || ikey.type == ValueType::kValueWithExpiry) &&
                len >= cfd->options.value_threshold;
  }

  const std::string fname = KeyLogFileName(dbname_, number);
  const std::string vname = ValueLogFileName(dbname_, vnumber);
  auto cleanup = [&] {
    env_->RemoveFile(fname);
    if (has_large) env_->RemoveFile(vname);
  };
  std::unique_ptr<ValueLogWriter> vlog;
  Status s;
  if (has_large) {
    std::unique_ptr<WritableFile> vfile;
    s = env_->NewWritableFile(vname, EnvOptions{}, &vfile);
    if (!s.ok()) return s;
    vlog = std::make_unique<ValueLogWriter>(std::move(vfile), vnumber, cfd->options.compression);
  }
  std::unique_ptr<WritableFile> file;
  s = env_->NewWritableFile(fname, EnvOptions{}, &file);
  if (!s.ok()) {
    cleanup();
    return s;
  }
  TableBuilder builder(cfd->options, cfd->id, std::move(file), vlog.get());
  ShadowedVersionFilter filter(snapshots);
  uint64_t dropped = 0;
  for (iter->SeekToFirst(); iter->Valid() && s.ok(); iter->Next()) {
    ParsedInternalKey ikey;
    if (!ParseInternalKey(iter->key(), &ikey)) {
      s = Status::Corruption("memtable holds a malformed key");
    } else if (filter.Shadowed(ikey)) {
      dropped++;
    } else {
      s = builder.Add(iter->key(), iter->value());
    }
  }
  stat_flush_entries_dropped_ += dropped;
  if (s.ok()) s = iter->status();
  // The value log must be durable before a key log that points into it.
  if (s.ok() && vlog) s = vlog->Finish();
  TableProperties props;
  if (s.ok()) {
    s = builder.Finish(&props);
  } else {
    builder.Abandon();
  }
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (!s.ok()) {
    cleanup();
    return s;
  }
  meta->file_number = number;
  meta->file_size = builder.FileSize();
  meta->smallest = props.smallest_key;
  meta->largest = props.largest_key;
  meta->smallest_seq = props.min_sequence;
  meta->largest_seq = props.max_sequence;
  meta->num_entries = props.num_entries;
  meta->num_deletions = props.num_deletions;
  // Every record of the new value log is referenced by exactly one entry of this table.
  if (has_large && vlog->FileSize() > kValueLogHeaderSize)
    meta->value_log_refs.push_back({vnumber, vlog->FileSize() - kValueLogHeaderSize});
  *vlog_number = has_large ? vnumber : 0;
  *vlog_size = has_large ? vlog->FileSize() : 0;
  stat_flush_bytes_ += meta->file_size + *vlog_size;
  return Status::OK();
}

Status DBImpl::FlushOneLocked(std::unique_lock<std::mutex>& l, MemTableSlot* slot) {
  MemTableEntry entry = slot->immutables.front();
  slot->flush_in_progress = true;
  flushes_running_++;
  std::vector<ColumnFamilyData*> cfds;
  for (uint32_t cf_id : entry.mem->ColumnFamilies()) {
    auto it = cfs_.find(cf_id);
    if (it != cfs_.end()) cfds.push_back(it->second.get());  // dropped CFs: nothing to keep
  }

  struct Output {
    ColumnFamilyData* cfd;
    FileMetaData meta;
    uint64_t vlog_number = 0, vlog_size = 0;
  };
  std::vector<Output> outputs;
  Status s;
  // Snapshots taken after this point see at least the memtable's last sequence, so they
  // never need a version it overwrote.
  const std::vector<SequenceNumber> snapshots = SnapshotList();
  l.unlock();
  for (ColumnFamilyData* cfd : cfds) {
    Output out{cfd, {}, 0, 0};
    s = BuildTable(cfd, entry.mem.get(), snapshots, &out.meta, &out.vlog_number, &out.vlog_size);
    if (!s.ok()) break;
    outputs.push_back(std::move(out));
  }
  l.lock();
  // From here until the new versions are published, this flush owns the manifest.
  std::optional<ManifestOwner> owner;
  owner.emplace(this, l);

  auto remove_outputs = [&] {
    for (const Output& o : outputs) {
      env_->RemoveFile(KeyLogFileName(dbname_, o.meta.file_number));
      if (o.vlog_number != 0) env_->RemoveFile(ValueLogFileName(dbname_, o.vlog_number));
    }
  };
  if (s.ok()) {
    VersionEdit edit;
    for (const Output& o : outputs) {
      if (o.cfd->dropped) continue;
      edit.AddFile(o.cfd->id, 0, o.meta);
      if (o.vlog_number != 0) edit.AddValueLog(o.cfd->id, o.vlog_number, o.vlog_size);
      edit.SetFlushedSequence(o.cfd->id, entry.end_sequence);
    }
    // WALs older than every memtable still unflushed can go once this edit is durable.
    slot->immutables.pop_front();
    edit.SetWalNumber(MinLiveWalNumberLocked());
    slot->immutables.push_front(entry);
    edit.SetNextFileNumber(next_file_number_);
    edit.SetLastSequence(entry.end_sequence);
    bool outcome_unknown = false;
    s = LogAndApply(l, &edit, &outcome_unknown);
    if (outcome_unknown) {
      // The next open may find the edit: its files must be there. Until a new manifest
      // settles it, a version no reader sees holds them; the memtable stays and is
      // flushed again.
      auto pinned = std::make_shared<Version>();
      pinned->levels.resize(1);
      for (const Output& o : outputs) {
        pinned->levels[0].push_back(TrackFile(o.meta));
        if (o.vlog_number != 0) pinned->value_logs.push_back(TrackValueLog(o.vlog_number, o.vlog_size));
      }
      unresolved_files_.push_back(std::move(pinned));
      outputs.clear();
    }
  }
  if (!s.ok()) {
    remove_outputs();
    slot->flush_in_progress = false;
    flushes_running_--;
    return s;
  }
  std::vector<std::string> done;  // logged once mutex_ is released
  for (const Output& o : outputs) {
    if (o.cfd->dropped) {
      env_->RemoveFile(KeyLogFileName(dbname_, o.meta.file_number));
      if (o.vlog_number != 0) env_->RemoveFile(ValueLogFileName(dbname_, o.vlog_number));
      continue;
    }
    char line[256];
    std::snprintf(
        line, sizeof(line), "cf %u: L0 #%llu, %llu bytes, %llu entries; value log #%llu, %llu bytes",
        o.cfd->id, static_cast<unsigned long long>(o.meta.file_number),
        static_cast<unsigned long long>(o.meta.file_size),
        static_cast<unsigned long long>(o.meta.num_entries), static_cast<unsigned long long>(o.vlog_number),
        static_cast<unsigned long long>(o.vlog_size));
    done.emplace_back(line);
    auto v = std::make_shared<Version>(*o.cfd->version);
    if (v->levels.empty()) v->levels.resize(1);
    v->levels[0].insert(v->levels[0].begin(), TrackFile(o.meta));
    if (o.vlog_number != 0) v->value_logs.push_back(TrackValueLog(o.vlog_number, o.vlog_size));
    o.cfd->version = std::move(v);
    o.cfd->flushed_sequence = entry.end_sequence;
  }
  slot->immutables.pop_front();
  // One new ReadView per CF of the slot: its new version with the list that no longer
  // holds the flushed memtable.
  PublishSlotLocked(slot);
  slot->flush_in_progress = false;
  UpdateL0StatsLocked();
  flushes_running_--;
  stat_flushes_++;
  bg_cv_.notify_all();
  owner.reset();
  l.unlock();
  for (const std::string& line : done) Log(LogLevel::kInfo, "flush: %s", line.c_str());
  DeleteObsoleteFiles();
  l.lock();
  return Status::OK();
}

Status DBImpl::FlushSlotAndWait(std::shared_ptr<MemTableSlot> slot) {
  // Freeze the active memtable as an exclusive operation, so no commit group is between
  // its WAL write and its memtable insert.
  std::shared_ptr<MemTable> target;
  Status s = WriteImpl(WriteOptions(), nullptr, [&]() -> Status {
    std::lock_guard<std::mutex> l(mutex_);
    if (!slot->active.mem->empty()) {
      target = slot->active.mem;
      return SwitchMemtableLocked(slot.get());
    }
    if (!slot->immutables.empty()) target = slot->immutables.back().mem;
    return Status::OK();
  });
  if (!s.ok() || !target) return s;
  std::unique_lock<std::mutex> l(mutex_);
  // An error left by an attempt that ended before this call is stale: the flush thread
  // retries, so report an error only once an attempt made since then has failed too.
  const uint64_t attempts = flush_attempts_;
  while (true) {
    bool pending = false;
    for (const auto& e : slot->immutables) pending |= e.mem == target;
    if (!pending) return Status::OK();
    if (shutting_down_) return Status::Aborted("database is closing");
    if (!bg_error_.ok() && !slot->flush_in_progress && flush_attempts_ != attempts) return bg_error_;
    bg_cv_.wait_for(l, std::chrono::milliseconds(100));
  }
}

Status DBImpl::Flush(const FlushOptions& options, ColumnFamilyHandle* cf) {
  std::vector<std::shared_ptr<MemTableSlot>> targets;
  {
    std::lock_guard<std::mutex> l(mutex_);
    if (cf == nullptr || unified_slot_) {
      targets = slots_;
    } else {
      ColumnFamilyData* cfd = LiveCfd(cf);
      if (cfd == nullptr) return Status::InvalidArgument("column family was dropped");
      targets.push_back(cfd->slot);
    }
  }
  for (auto& slot : targets) {
    if (!options.wait) {
      Status s = WriteImpl(WriteOptions(), nullptr, [&]() -> Status {
        std::lock_guard<std::mutex> l(mutex_);
        return SwitchMemtableLocked(slot.get());
      });
      if (!s.ok()) return s;
      continue;
    }
    Status s = FlushSlotAndWait(slot);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace tidesdb
