// Background leveled compaction (picking in compaction_picker.h), manual CompactRange, and
// write back-pressure from L0.
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "db/compaction_picker.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/merging_iterator.h"
#include "db/table_cache.h"
#include "sst/table_builder.h"
#include "sst/table_reader.h"
#include "sst/value_log.h"
#include "util/thread_name.h"

namespace tidesdb {

struct DBImpl::CompactionOutput {
  FileMetaData meta;
};

namespace {
// True if some level below `output_level` may hold `user_key` (then a tombstone for it must
// be kept: it still hides older data down there).
bool KeyMayExistBelow(const Version& v, int output_level, Slice user_key) {
  for (size_t level = static_cast<size_t>(output_level) + 1; level < v.levels.size(); ++level) {
    const auto& files = v.levels[level];
    auto it = std::lower_bound(files.begin(), files.end(), user_key,
                               [](const auto& f, Slice k) { return ExtractUserKey(f->largest) < k; });
    if (it != files.end() && ExtractUserKey((*it)->smallest) <= user_key) return true;
  }
  return false;
}
}  // namespace

void DBImpl::UpdateL0StatsLocked() {
  int max_l0 = 0;
  for (const auto& [id, cfd] : cfs_) {
    // A damaged CF is not compacted: its L0 must not stall the others' writes.
    if (cfd->damage.ok() && !cfd->version->levels.empty())
      max_l0 = std::max<int>(max_l0, static_cast<int>(cfd->version->levels[0].size()));
  }
  max_l0_files_ = max_l0;
}

Status DBImpl::ThrottleForCompactionLocked(std::unique_lock<std::mutex>& l) {
  const int stall = L0StallFiles(options_.default_cf_options);
  const int slowdown = L0SlowdownFiles(options_.default_cf_options);
  auto start = std::chrono::steady_clock::now();
  // Graduated: a short sleep per write group that grows with the L0 backlog...
  if (max_l0_files_ >= slowdown && max_l0_files_ < stall) {
    int over = max_l0_files_ - slowdown + 1;
    l.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(over * 1000, 20000)));
    l.lock();
    stat_slowdown_micros_ +=
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count();
  }
  // ...then a wait while the backlog is at the stall threshold. A write fails only if
  // compaction is failing and not making progress (for example the disk is full).
  uint64_t progress = compaction_progress_;
  auto last_progress = std::chrono::steady_clock::now();
  if (max_l0_files_ >= stall && !shutting_down_) {
    Log(LogLevel::kWarn, "writes stalled: %d L0 files (l0_queue_stall_threshold %d); waiting for compaction",
        max_l0_files_, stall);
  }
  while (max_l0_files_ >= stall && !shutting_down_) {
    if (compaction_progress_ != progress) {
      progress = compaction_progress_;
      last_progress = std::chrono::steady_clock::now();
    }
    if (!compaction_error_.ok() &&
        std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10)) {
      return Status::IOError("writes stalled: compaction is failing", compaction_error_.ToString());
    }
    bg_cv_.notify_all();
    bg_cv_.wait_for(l, std::chrono::milliseconds(100));
  }
  stat_stall_micros_ +=
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  return shutting_down_ ? Status::Aborted("database is closing") : Status::OK();
}

void DBImpl::CompactionLoop() {
  SetCurrentThreadName("tdb-compact");
  std::unique_lock<std::mutex> l(mutex_);
  uint32_t rotate = 0;
  while (!shutting_down_) {
    ColumnFamilyData* pick = nullptr;
    std::optional<CompactionInputs> c;
    // Start the scan at a rotating CF so that one busy CF does not starve the others.
    std::vector<ColumnFamilyData*> order;
    for (auto& [id, cfd] : cfs_) order.push_back(cfd.get());
    for (size_t i = 0; i < order.size() && pick == nullptr; ++i) {
      ColumnFamilyData* cfd = order[(rotate + i) % order.size()];
      if (cfd->manual_compaction || !cfd->damage.ok()) continue;
      c = PickCompaction(*cfd->version, cfd->options, &cfd->compact_cursors, cfd->gc_skip, &cfd->compactions);
      if (c) pick = cfd;
    }
    rotate++;
    if (pick == nullptr) {
      bg_cv_.wait(l);
      continue;
    }
    const uint64_t job = pick->compactions.Add(*c);
    compactions_running_++;
    Status s = RunTrackedCompactionLocked(l, pick, *c, false);
    // A column family dropped while its compaction ran (DROP TABLE, ALTER): the work is
    // moot, not a failure to report, back off from, or hand to WaitForBackgroundWork.
    if (s.IsAborted() && pick->dropped) s = Status::OK();
    compactions_running_--;
    pick->compactions.Remove(job);
    bg_cv_.notify_all();
    c.reset();
    l.unlock();
    // A damaged input marked the CF damaged (logged there); it is not picked again.
    const bool damaged = s.IsCorruption();
    if (!s.ok() && !damaged && !shutting_down_) {
      Log(LogLevel::kError, "compaction of cf %u failed (retrying in 500 ms): %s", pick->id,
          s.ToString().c_str());
    }
    DeleteObsoleteFiles();
    l.lock();
    if (s.ok()) {
      compaction_error_ = Status::OK();
    } else if (!shutting_down_ && !damaged) {
      compaction_error_ = s;
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      while (!shutting_down_ && std::chrono::steady_clock::now() < until) bg_cv_.wait_until(l, until);
    }
  }
}

Status DBImpl::RunSubcompaction(ColumnFamilyData* cfd, const CompactionInputs& c, const Version& version,
                                const std::vector<SequenceNumber>& snapshots, const std::string* start,
                                const std::string* end, std::vector<CompactionOutput>* outputs,
                                std::vector<ValueLogMeta>* relocated, std::set<uint64_t>* unreadable) {
  std::vector<std::shared_ptr<TableReader>> tables;
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (const auto* files : {&c.upper, &c.lower}) {
    for (const auto& f : *files) {
      std::shared_ptr<TableReader> t;
      Status s = table_cache_->GetTable(f->file_number, f->file_size, &t);
      if (!s.ok()) return s;
      children.push_back(t->NewIterator(/*fill_cache=*/false));
      tables.push_back(std::move(t));
    }
  }
  std::unique_ptr<InternalIterator> iter = NewMergingIterator(std::move(children));
  if (start != nullptr) {
    std::string seek;
    AppendInternalKey(&seek, *start, kMaxSequence, kValueTypeForSeek);
    iter->Seek(seek);
  } else {
    iter->SeekToFirst();
  }

  const uint64_t now = env_->NowMicros() / 1000000;
  std::unique_ptr<TableBuilder> builder;
  uint64_t number = 0;
  std::map<uint64_t, uint64_t> refs;  // value-log references of the current output
  // Values moved out of value logs being collected (c.relocate) go to new value logs, each
  // cut at about write_buffer_size (the size of a flush's value log), so a log written by
  // GC is as cheap to collect again as any other. Finished ones are in *relocated.
  std::unique_ptr<ValueLogWriter> gc_vlog;
  const uint64_t gc_vlog_limit = std::max<uint64_t>(cfd->options.write_buffer_size, 64 << 10);
  auto finish_gc_vlog = [&]() -> Status {
    Status s = gc_vlog->Finish();
    if (!s.ok()) return s;
    relocated->push_back(ValueLogMeta{gc_vlog->file_number(), gc_vlog->FileSize()});
    gc_vlog.reset();
    return Status::OK();
  };
  std::string value_buf, pointer_buf;
  auto finish_output = [&]() -> Status {
    if (!builder) return Status::OK();
    TableProperties props;
    Status s = builder->Finish(&props);
    if (!s.ok()) return s;
    CompactionOutput out;
    out.meta.file_number = number;
    out.meta.file_size = builder->FileSize();
    out.meta.smallest = props.smallest_key;
    out.meta.largest = props.largest_key;
    out.meta.smallest_seq = props.min_sequence;
    out.meta.largest_seq = props.max_sequence;
    out.meta.num_entries = props.num_entries;
    out.meta.num_deletions = props.num_deletions;
    for (const auto& [vlog, bytes] : refs) out.meta.value_log_refs.push_back({vlog, bytes});
    refs.clear();
    stat_compaction_bytes_written_ += out.meta.file_size;
    outputs->push_back(std::move(out));
    builder.reset();
    return Status::OK();
  };
  auto abandon = [&]() {
    if (builder) {
      builder->Abandon();
      env_->RemoveFile(KeyLogFileName(dbname_, number));
    }
    if (gc_vlog) env_->RemoveFile(ValueLogFileName(dbname_, gc_vlog->file_number()));
  };
  // For a kept entry: moves its value if it points into a log being collected and counts
  // the reference; *value is replaced by the rewritten entry value when moved.
  auto track_pointer = [&](const ParsedInternalKey& ikey, Slice* value) -> Status {
    if (ikey.type != ValueType::kValuePointer && ikey.type != ValueType::kValuePointerWithExpiry)
      return Status::OK();
    const size_t prefix = ikey.type == ValueType::kValuePointerWithExpiry ? 8 : 0;
    Slice encoded = *value;
    ValuePointer ptr;
    if (encoded.size() < prefix)
      return Status::Corruption("compaction input holds a malformed value pointer");
    encoded.remove_prefix(prefix);
    if (!ptr.DecodeFrom(&encoded))
      return Status::Corruption("compaction input holds a malformed value pointer");
    if (std::binary_search(c.relocate.begin(), c.relocate.end(), ptr.file_number)) {
      Status s = table_cache_->GetValue(ptr, /*fill_cache=*/false, &value_buf);
      if (s.IsCorruption()) {
        // A damaged record must not stop compaction: leave the pointer (a read of it reports
        // the damage) and stop collecting that log.
        Log(LogLevel::kError, "value-log GC: damaged record left in place, log not collected: %s",
            s.ToString().c_str());
        unreadable->insert(ptr.file_number);
        stat_vlog_relocation_errors_++;
        refs[ptr.file_number] += ptr.size;
        return Status::OK();
      }
      if (!s.ok()) return s;
      if (gc_vlog && gc_vlog->FileSize() >= gc_vlog_limit) {
        s = finish_gc_vlog();
        if (!s.ok()) return s;
      }
      if (!gc_vlog) {
        uint64_t vnumber;
        {
          std::lock_guard<std::mutex> g(mutex_);
          vnumber = next_file_number_++;
        }
        std::unique_ptr<WritableFile> vfile;
        s = env_->NewWritableFile(ValueLogFileName(dbname_, vnumber), EnvOptions{}, &vfile);
        if (!s.ok()) return s;
        gc_vlog = std::make_unique<ValueLogWriter>(std::move(vfile), vnumber, cfd->options.compression);
      }
      stat_vlog_relocated_bytes_ += ptr.size;
      s = gc_vlog->Add(value_buf, &ptr);
      if (!s.ok()) return s;
      pointer_buf.assign(value->data(), prefix);
      ptr.EncodeTo(&pointer_buf);
      *value = pointer_buf;
    }
    refs[ptr.file_number] += ptr.size;
    return Status::OK();
  };

  std::string current_user_key;
  bool has_current = false;
  // Oldest sequence a reader may read at: registered snapshots, else the newest.
  const SequenceNumber smallest_snapshot =
      snapshots.empty() ? visible_sequence_.load(std::memory_order_acquire) : snapshots.front();
  ShadowedVersionFilter shadow(snapshots);
  Status s;
  uint64_t dropped = 0;
  for (; iter->Valid(); iter->Next()) {
    if (shutting_down_) {
      s = Status::Aborted("database is closing");
      break;
    }
    ParsedInternalKey ikey;
    if (!ParseInternalKey(iter->key(), &ikey)) {
      s = Status::Corruption("compaction input holds a malformed key");
      break;
    }
    if (end != nullptr && ikey.user_key >= Slice(*end)) break;
    bool new_user_key = !has_current || ikey.user_key != Slice(current_user_key);
    if (new_user_key) {
      // Cut the output only between user keys, so levels >= 1 stay disjoint by user key.
      if (builder && builder->FileSize() >= cfd->options.target_file_size) {
        s = finish_output();
        if (!s.ok()) break;
      }
      current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
      has_current = true;
    }
    bool drop = false;
    const bool deleted = EntryIsDeleted(ikey.type, iter->value(), now);
    if (shadow.Shadowed(ikey)) {
      drop = true;  // a newer entry of this key is visible to every reader
    } else if (deleted && ikey.sequence <= smallest_snapshot &&
               !KeyMayExistBelow(version, c.output_level, ikey.user_key)) {
      drop = true;  // a tombstone (or expired entry) with nothing left to hide
    }
    if (drop) {
      dropped++;  // a value it points to becomes garbage: no output references it
      continue;
    }
    if (!builder) {
      {
        std::lock_guard<std::mutex> g(mutex_);
        number = next_file_number_++;
      }
      std::unique_ptr<WritableFile> file;
      s = env_->NewWritableFile(KeyLogFileName(dbname_, number), EnvOptions{}, &file);
      if (!s.ok()) break;
      builder = std::make_unique<TableBuilder>(cfd->options, cfd->id, std::move(file), nullptr);
    }
    if (deleted && ikey.type != ValueType::kDeletion) {
      // An expired entry that must stay as a marker: keep it as a plain tombstone.
      std::string tomb;
      AppendInternalKey(&tomb, ikey.user_key, ikey.sequence, ValueType::kDeletion);
      s = builder->Add(tomb, Slice());
    } else {
      Slice value = iter->value();
      s = track_pointer(ikey, &value);
      if (s.ok()) s = builder->Add(iter->key(), value);
    }
    if (!s.ok()) break;
  }
  if (s.ok()) s = iter->status();
  // The new value logs must be durable before the key logs that point into them are live.
  if (s.ok() && gc_vlog) s = finish_gc_vlog();
  if (s.ok()) s = finish_output();
  if (!s.ok()) abandon();  // the finished new value logs are removed by the caller
  stat_compaction_entries_dropped_ += dropped;
  return s;
}

Status DBImpl::RunTrackedCompactionLocked(std::unique_lock<std::mutex>& l, ColumnFamilyData* cfd,
                                          const CompactionInputs& c, bool manual) {
  CompactionRecord r;
  r.id = next_compaction_id_++;
  r.cf_id = cfd->id;
  r.reason = c.reason;
  r.manual = manual;
  r.move = c.move;
  r.level = c.level;
  r.output_level = c.output_level;
  r.input_files = c.upper.size() + c.lower.size();
  r.input_bytes = LevelBytes(c.upper) + LevelBytes(c.lower);
  r.start_micros = env_->NowMicros();
  compactions_now_.push_back(r);
  Status s = RunCompactionLocked(l, cfd, c, &r);
  // A damaged input is not transient: retrying would fail again, forever.
  if (s.IsCorruption() && !cfd->dropped) MarkDamagedLocked(cfd, s);
  std::erase_if(compactions_now_, [&](const CompactionRecord& x) { return x.id == r.id; });
  r.end_micros = env_->NowMicros();
  r.status = s.ToString();
  compactions_recent_.push_back(std::move(r));
  if (compactions_recent_.size() > kRecentCompactions) compactions_recent_.pop_front();
  return s;
}

Status DBImpl::MoveFilesLocked(std::unique_lock<std::mutex>& l, ColumnFamilyData* cfd,
                               const CompactionInputs& c, CompactionRecord* record) {
  std::optional<ManifestOwner> owner;
  owner.emplace(this, l);
  if (cfd->dropped) return Status::Aborted("column family dropped before compaction");
  // The same FileMetaData objects move, so the files stay live (their last release deletes
  // them) and their value-log references, sizes and counts come along: no value log gains
  // or loses live bytes. The picker ran on cfd->version as it was before this waited for
  // the manifest; since then flushes may have added newer files to L0 (they stay above the
  // moved ones) and other compactions of the CF may have finished, none of them with these
  // files or writing where they go (RunningCompactions).
  VersionEdit edit;
  auto v = std::make_shared<Version>(*cfd->version);
  if (v->levels.size() <= static_cast<size_t>(c.output_level)) v->levels.resize(c.output_level + 1);
  auto& from = v->levels[c.level];
  auto& to = v->levels[c.output_level];
  uint64_t bytes = 0;
  for (const auto& f : c.upper) {
    std::erase_if(from, [&](const auto& g) { return g->file_number == f->file_number; });
    to.push_back(f);
    edit.DeleteFile(cfd->id, c.level, f->file_number);
    edit.AddFile(cfd->id, c.output_level, *f);
    bytes += f->file_size;
  }
  std::sort(to.begin(), to.end(),
            [](const auto& a, const auto& b) { return CompareInternalKey(a->smallest, b->smallest) < 0; });
  edit.SetNextFileNumber(next_file_number_);
  Status s = LogAndApply(l, &edit);
  if (!s.ok()) return s;
  cfd->version = std::move(v);
  PublishReadViewLocked(cfd);
  stat_trivial_moves_ += c.upper.size();
  stat_trivial_move_bytes_ += bytes;
  record->output_files = c.upper.size();
  record->output_bytes = bytes;
  compaction_progress_++;
  UpdateL0StatsLocked();
  owner.reset();
  l.unlock();
  Log(LogLevel::kInfo, "trivial move (%s) cf %u: L%d %zu files, %llu bytes -> L%d, not rewritten", c.reason,
      cfd->id, c.level, c.upper.size(), static_cast<unsigned long long>(bytes), c.output_level);
  l.lock();
  return Status::OK();
}

Status DBImpl::RunCompactionLocked(std::unique_lock<std::mutex>& l, ColumnFamilyData* cfd,
                                   const CompactionInputs& c, CompactionRecord* record) {
  if (compaction_start_) {
    l.unlock();
    compaction_start_(cfd->id, c.level, c.output_level);
    l.lock();
  }
  if (c.move) return MoveFilesLocked(l, cfd, c, record);
  // A snapshot registered later reads at a sequence at least as new as every input entry.
  const std::vector<SequenceNumber> snapshots = SnapshotList();
  std::shared_ptr<const Version> version = cfd->version;
  uint64_t input_bytes = LevelBytes(c.upper) + LevelBytes(c.lower);
  // Large compactions run as parallel sub-ranges split at the lower level's file boundaries.
  std::vector<std::string> bounds;
  const size_t max_subs = static_cast<size_t>(std::max(options_.compaction_threads, 1));
  if (max_subs > 1 && c.lower.size() >= 2 && input_bytes >= 2 * cfd->options.target_file_size) {
    size_t subs = std::min(max_subs, c.lower.size());
    for (size_t i = 1; i < subs; ++i) {
      Slice k = ExtractUserKey(c.lower[i * c.lower.size() / subs]->smallest);
      if (bounds.empty() || k > Slice(bounds.back())) bounds.emplace_back(k);
    }
  }
  l.unlock();
  stat_compaction_bytes_read_ += input_bytes;

  const size_t n = bounds.size() + 1;
  std::vector<std::vector<CompactionOutput>> outputs(n);
  std::vector<std::vector<ValueLogMeta>> relocated(n);  // value logs written by each sub-range
  std::vector<std::set<uint64_t>> unreadable(n);
  std::vector<Status> statuses(n);
  auto run = [&](size_t i) {
    const std::string* start = i == 0 ? nullptr : &bounds[i - 1];
    const std::string* end = i + 1 == n ? nullptr : &bounds[i];
    statuses[i] =
        RunSubcompaction(cfd, c, *version, snapshots, start, end, &outputs[i], &relocated[i], &unreadable[i]);
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) {
    threads.emplace_back([&run, i] {
      SetCurrentThreadName("tdb-subcompact");
      run(i);
    });
  }
  run(0);
  for (auto& t : threads) t.join();
  Status s;
  for (const Status& st : statuses) {
    if (s.ok() && !st.ok()) s = st;
  }
  if (s.ok()) s = env_->SyncDir(dbname_);

  l.lock();
  // From here until the new version is published, this compaction owns the manifest.
  std::optional<ManifestOwner> owner;
  owner.emplace(this, l);
  for (const auto& u : unreadable) cfd->gc_skip.insert(u.begin(), u.end());
  auto remove_outputs = [&] {
    for (const auto& outs : outputs) {
      for (const auto& o : outs) env_->RemoveFile(KeyLogFileName(dbname_, o.meta.file_number));
    }
    for (const auto& logs : relocated) {
      for (const auto& r : logs) env_->RemoveFile(ValueLogFileName(dbname_, r.file_number));
    }
  };
  if (s.ok() && cfd->dropped) s = Status::Aborted("column family dropped during compaction");
  if (!s.ok()) {
    remove_outputs();
    return s;
  }
  // The new version: the current one (which may have gained L0 files from flushes
  // meanwhile) without the inputs, with the outputs and new value logs, and without the
  // value logs no file references any more. One edit logs all of it.
  VersionEdit edit;
  auto v = std::make_shared<Version>(*cfd->version);
  if (v->levels.size() <= static_cast<size_t>(c.output_level)) v->levels.resize(c.output_level + 1);
  auto remove_inputs = [](std::vector<std::shared_ptr<const FileMetaData>>* files,
                          const std::vector<std::shared_ptr<const FileMetaData>>& gone) {
    std::erase_if(*files, [&](const auto& f) {
      for (const auto& g : gone) {
        if (g->file_number == f->file_number) return true;
      }
      return false;
    });
  };
  remove_inputs(&v->levels[c.level], c.upper);
  remove_inputs(&v->levels[c.output_level], c.lower);
  for (const auto& f : c.upper) edit.DeleteFile(cfd->id, c.level, f->file_number);
  for (const auto& f : c.lower) edit.DeleteFile(cfd->id, c.output_level, f->file_number);
  auto& out_level = v->levels[c.output_level];
  for (const auto& outs : outputs) {
    for (const auto& o : outs) {
      edit.AddFile(cfd->id, c.output_level, o.meta);
      out_level.push_back(TrackFile(o.meta));
    }
  }
  std::sort(out_level.begin(), out_level.end(),
            [](const auto& a, const auto& b) { return CompareInternalKey(a->smallest, b->smallest) < 0; });
  for (const auto& logs : relocated) {
    for (const auto& r : logs) {
      edit.AddValueLog(cfd->id, r.file_number, r.file_size);
      v->value_logs.push_back(TrackValueLog(r.file_number, r.file_size));
    }
  }
  uint64_t dead_bytes = 0;
  const std::vector<uint64_t> dead = DeadValueLogs(*v);
  for (uint64_t number : dead) {
    edit.DeleteValueLog(cfd->id, number);
    std::erase_if(v->value_logs, [&](const auto& vl) {
      if (vl->file_number != number) return false;
      dead_bytes += vl->file_size;
      return true;
    });
  }
  edit.SetNextFileNumber(next_file_number_);
  bool outcome_unknown = false;
  s = LogAndApply(l, &edit, &outcome_unknown);
  if (outcome_unknown) {
    // The next open may find the edit, so its outputs must stay: v holds them (and files
    // the current version holds anyway) until a new manifest settles it.
    unresolved_files_.push_back(std::move(v));
    return s;
  }
  if (!s.ok()) {
    // v was never published: dropping it releases only the outputs (which its deleters
    // would also remove) and references to files the current version still holds.
    remove_outputs();
    return s;
  }
  cfd->version = std::move(v);
  PublishReadViewLocked(cfd);
  stat_compactions_++;
  stat_vlog_files_deleted_ += dead.size();
  stat_vlog_bytes_deleted_ += dead_bytes;
  compaction_progress_++;
  UpdateL0StatsLocked();
  uint64_t out_files = 0, out_bytes = 0, relocated_bytes = 0;
  for (const auto& outs : outputs) {
    for (const auto& o : outs) {
      out_files++;
      out_bytes += o.meta.file_size;
    }
  }
  for (const auto& logs : relocated) {
    for (const auto& r : logs) relocated_bytes += r.file_size;
  }
  record->output_files = out_files;
  record->output_bytes = out_bytes;
  owner.reset();
  l.unlock();
  Log(LogLevel::kInfo,
      "compaction (%s) cf %u: L%d %zu files + L%d %zu files, %llu bytes -> L%d %llu files, %llu bytes; "
      "%llu bytes of values moved to new value logs, %zu dead value logs (%llu bytes) deleted",
      c.reason, cfd->id, c.level, c.upper.size(), c.output_level, c.lower.size(),
      static_cast<unsigned long long>(input_bytes), c.output_level,
      static_cast<unsigned long long>(out_files), static_cast<unsigned long long>(out_bytes),
      static_cast<unsigned long long>(relocated_bytes), dead.size(),
      static_cast<unsigned long long>(dead_bytes));
  l.lock();
  // The input files (and dead value logs) are deleted once the caller drops `c` and
  // readers let go of them.
  return Status::OK();
}

Status DBImpl::CompactRange(ColumnFamilyHandle* cf, const Range* range) {
  Status s = Flush(FlushOptions(), cf);
  if (!s.ok()) return s;
  std::vector<ColumnFamilyData*> targets;
  std::unique_lock<std::mutex> l(mutex_);
  if (cf == nullptr) {
    for (auto& [id, cfd] : cfs_) targets.push_back(cfd.get());
  } else {
    ColumnFamilyData* cfd = LiveCfd(cf);
    if (cfd == nullptr) return Status::InvalidArgument("column family was dropped or is unknown");
    targets.push_back(cfd);
  }
  const Slice start = range != nullptr ? range->start : Slice();
  const Slice limit = range != nullptr ? range->limit : Slice();
  Status damage;  // of a damaged CF among all of them: the others are compacted
  // Waits for the CF's background compactions (and another manual one): false if the CF
  // went away meanwhile (then *s says why, or stays OK for a dropped CF).
  auto wait_alone = [&](ColumnFamilyData* cfd, Status* s) {
    while ((!cfd->compactions.empty() || cfd->manual_compaction) && !shutting_down_) bg_cv_.wait(l);
    if (shutting_down_) *s = Status::Aborted("database is closing");
    return s->ok() && !cfd->dropped;
  };
  // Runs c alone in the CF, then deletes the files it made obsolete.
  auto run = [&](ColumnFamilyData* cfd, std::optional<CompactionInputs>& c) {
    cfd->manual_compaction = true;
    const uint64_t job = cfd->compactions.Add(*c);
    Status r = RunTrackedCompactionLocked(l, cfd, *c, true);
    cfd->compactions.Remove(job);
    cfd->manual_compaction = false;
    bg_cv_.notify_all();
    c.reset();
    l.unlock();
    DeleteObsoleteFiles();
    l.lock();
    return r;
  };
  for (ColumnFamilyData* cfd : targets) {
    if (!cfd->damage.ok()) {
      if (cf != nullptr) return cfd->damage;
      if (damage.ok()) damage = cfd->damage;
      continue;
    }
    const int max_levels = std::max(cfd->options.max_levels, 2);
    for (int level = 0; level < max_levels; ++level) {
      if (!wait_alone(cfd, &s)) break;
      // The last non-empty level is rewritten in place only when it is level >= 1 and the
      // only level left; otherwise push data down one level at a time.
      int deepest = 0;
      for (int i = 0; i < static_cast<int>(cfd->version->levels.size()); ++i) {
        if (!cfd->version->levels[i].empty()) deepest = i;
      }
      if (level > deepest) break;
      std::optional<CompactionInputs> c;
      if (level < deepest || level == 0) {
        c = PickRangeCompaction(*cfd->version, cfd->options, level, start, limit, cfd->gc_skip);
      } else if (level == max_levels - 1 || level == deepest) {
        // Bottom level: rewrite in place to drop tombstones and stale versions.
        c = PickRangeCompaction(*cfd->version, cfd->options, level, start, limit, cfd->gc_skip);
        if (c && c->output_level != level) {
          c->output_level = level;
          c->upper.insert(c->upper.end(), c->lower.begin(), c->lower.end());
          c->lower.clear();
        }
      }
      if (!c) continue;
      s = run(cfd, c);
      if (!s.ok()) return s;
    }
    if (!s.ok()) return s;
    // Then the value logs those passes left garbage in, below the GC threshold.
    if (!wait_alone(cfd, &s)) {
      if (!s.ok()) return s;
      continue;
    }
    std::optional<CompactionInputs> c =
        PickValueLogCleanup(*cfd->version, cfd->options, start, limit, cfd->gc_skip);
    if (c) s = run(cfd, c);
    if (!s.ok()) return s;
  }
  return damage;
}

Status DBImpl::WaitForBackgroundWork() {
  std::unique_lock<std::mutex> l(mutex_);
  while (!shutting_down_) {
    bool busy = flushes_running_ > 0 || compactions_running_ > 0;
    for (const auto& slot : slots_) busy |= !slot->immutables.empty();
    if (!busy) {
      // Anything left to pick?
      for (auto& [id, cfd] : cfs_) {
        std::vector<std::string> cursors = cfd->compact_cursors;
        if (!cfd->manual_compaction &&
            PickCompaction(*cfd->version, cfd->options, &cursors, cfd->gc_skip, &cfd->compactions))
          busy = true;
      }
      if (!busy) return bg_error_.ok() ? compaction_error_ : bg_error_;
      if (!compaction_error_.ok()) return compaction_error_;
    }
    if (!bg_error_.ok()) return bg_error_;
    bg_cv_.notify_all();
    bg_cv_.wait_for(l, std::chrono::milliseconds(50));
  }
  return Status::Aborted("database is closing");
}

}  // namespace tidesdb
