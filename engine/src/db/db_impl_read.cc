// Read path: point reads, iterators, snapshots, range estimates and properties.
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "cache/block_cache.h"
#include "db/compaction_picker.h"
#include "db/db_impl.h"
#include "db/db_iter.h"
#include "db/level_iterator.h"
#include "db/merging_iterator.h"
#include "db/table_cache.h"
#include "sst/table_reader.h"
#include "sst/value_log.h"

namespace tidesdb {

class DBImpl::SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber seq) : seq_(seq) {}
  uint64_t sequence() const override { return seq_; }

  // Neighbours in DBImpl's list (older, newer), under snapshot_mu_.
  SnapshotImpl* older = nullptr;
  SnapshotImpl* newer = nullptr;

 private:
  const SequenceNumber seq_;
};

const Snapshot* DBImpl::GetSnapshot() {
  // The sequence is read under snapshot_mu_: see oldest_snapshot_.
  std::lock_guard<std::mutex> l(snapshot_mu_);
  auto* snapshot = new SnapshotImpl(visible_sequence_.load(std::memory_order_acquire));
  snapshot->older = newest_snapshot_;
  (newest_snapshot_ != nullptr ? newest_snapshot_->newer : oldest_snapshot_) = snapshot;
  newest_snapshot_ = snapshot;
  return snapshot;
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  const auto* impl = static_cast<const SnapshotImpl*>(snapshot);
  {
    std::lock_guard<std::mutex> l(snapshot_mu_);
    (impl->older != nullptr ? impl->older->newer : oldest_snapshot_) = impl->newer;
    (impl->newer != nullptr ? impl->newer->older : newest_snapshot_) = impl->older;
  }
  delete impl;
}

SequenceNumber DBImpl::OldestSnapshotSequence() const {
  std::lock_guard<std::mutex> l(snapshot_mu_);
  return oldest_snapshot_ == nullptr ? visible_sequence_.load(std::memory_order_acquire)
                                     : oldest_snapshot_->sequence();
}

std::vector<SequenceNumber> DBImpl::SnapshotList() const {
  std::vector<SequenceNumber> list;
  std::lock_guard<std::mutex> l(snapshot_mu_);
  for (const SnapshotImpl* s = oldest_snapshot_; s != nullptr; s = s->newer) list.push_back(s->sequence());
  return list;
}

ColumnFamilyData* DBImpl::ReadableCfd(ColumnFamilyHandle* handle) const {
  if (handle == nullptr) return nullptr;
  // ColumnFamilyHandleImpl is the only handle type; a handle of another DB (or of this
  // one's dropped CF, kept in dropped_cfs_ until close) is refused.
  const auto* impl = static_cast<const ColumnFamilyHandleImpl*>(handle);
  if (impl->owner() != this) return nullptr;
  ColumnFamilyData* cfd = impl->cfd();
  return cfd->dropped.load(std::memory_order_acquire) ? nullptr : cfd;
}

void DBImpl::PublishReadViewLocked(ColumnFamilyData* cfd) {
  if (cfd->dropped) return;  // stays null: e.g. a compaction that finished after the drop
  cfd->read_view.Store(std::make_shared<const ReadView>(ReadView{cfd->slot->view, cfd->version}));
}

void DBImpl::PublishSlotLocked(MemTableSlot* slot) {
  slot->PublishView();
  for (const auto& [id, cfd] : cfs_) {
    if (cfd->slot.get() == slot) PublishReadViewLocked(cfd.get());
  }
}

ValueFetcher DBImpl::MakeValueFetcher(bool fill_cache) {
  TableCache* cache = table_cache_.get();
  return [cache, fill_cache](const ValuePointer& ptr, std::string* value,
                             std::shared_ptr<const std::string>* pinned) -> Status {
    return cache->GetValue(ptr, fill_cache, value, pinned);
  };
}

namespace {
uint64_t NowSeconds(Env* env) { return env->NowMicros() / 1000000; }

bool UserKeyInFile(Slice user_key, const FileMetaData& f) {
  return user_key >= ExtractUserKey(f.smallest) && user_key <= ExtractUserKey(f.largest);
}
}  // namespace

Status DBImpl::Get(const ReadOptions& options, ColumnFamilyHandle* cf, Slice key, std::string* value) {
  const uint64_t start = env_->NowMicros();
  int source = kMaxReadLevels;  // where the answer came from (statistics)
  Status s = GetImpl(options, cf, key, value, &source, start / 1000000);
  get_micros_.Add(env_->NowMicros() - start);
  stat_reads_[std::min(source, kMaxReadLevels)].Add();
  return s;
}

Status DBImpl::GetImpl(const ReadOptions& options, ColumnFamilyHandle* cf, Slice key, std::string* value,
                       int* source, uint64_t now_seconds) {
  const ColumnFamilyData* cfd = ReadableCfd(cf);
  if (cfd == nullptr) return Status::InvalidArgument("column family was dropped or is unknown");
  // The view before the sequence. Every entry in the view's files was visible when the
  // compaction that wrote them read the snapshots, so the sequence read afterwards is at
  // least as new and the newest version at or below it was kept. (The other order could
  // miss a version that a compaction finishing in between dropped under a newer write.)
  // Commits after the view landed in memtables the view does not hold: the read is
  // ordered before them.
  const std::shared_ptr<const ReadView> view = GetReadView(cfd);
  if (view == nullptr) return Status::InvalidArgument("column family was dropped or is unknown");
  const SequenceNumber snap = options.snapshot != nullptr ? options.snapshot->sequence()
                                                          : visible_sequence_.load(std::memory_order_acquire);
  return FindInView(*view, cfd->id, key, snap, now_seconds, options.fill_cache, value, source, nullptr);
}

Status DBImpl::NewestSequence(uint32_t cf_id, Slice key, SequenceNumber* seq, SequenceNumber* visible) {
  // Read before the view: every commit up to it is then in the view's memtables or files.
  *visible = visible_sequence_.load(std::memory_order_acquire);
  std::shared_ptr<const ReadView> view;
  {
    std::lock_guard<std::mutex> l(mutex_);
    auto it = cfs_.find(cf_id);
    if (it == cfs_.end() || it->second->dropped) {
      return Status::InvalidArgument("column family was dropped or is unknown");
    }
    view = GetReadView(it->second.get());
  }
  if (view == nullptr) return Status::InvalidArgument("column family was dropped or is unknown");
  int source = 0;
  *seq = 0;
  Status s = FindInView(*view, cf_id, key, *visible, NowSeconds(env_), false, nullptr, &source, seq);
  return s.IsNotFound() ? Status::OK() : s;
}

Status DBImpl::FindInView(const ReadView& view, uint32_t cf_id, Slice key, SequenceNumber snap,
                          uint64_t now_seconds, bool fill_cache, std::string* value, int* source,
                          SequenceNumber* found_seq) {
  const ValueFetcher fetch = MakeValueFetcher(fill_cache);

  auto finish = [&](ValueType type, Slice raw) -> Status {
    if (found_seq != nullptr) return Status::OK();
    EntryState state;
    Status s = DecodeEntry(type, raw, now_seconds, fetch, &state, value);
    if (!s.ok()) return s;
    return state == EntryState::kLive ? Status::OK() : Status::NotFound();
  };

  ValueType type;
  Slice raw;
  *source = 0;
  if (view.mems->active->Get(cf_id, key, snap, &type, &raw, found_seq)) return finish(type, raw);
  for (const auto& mem : view.mems->immutables) {
    if (mem->Get(cf_id, key, snap, &type, &raw, found_seq)) return finish(type, raw);
  }
  std::string target;
  AppendInternalKey(&target, key, snap, kValueTypeForSeek);
  std::string found_key;
  Slice found_value;  // in found_block
  std::shared_ptr<const Block> found_block;
  auto probe = [&](const FileMetaData& f, bool* found) -> Status {
    std::shared_ptr<TableReader> held;
    TableReader* table = nullptr;
    Status s = FindTable(f, &held, &table);
    if (!s.ok()) return s;
    return table->Get(target, found, &found_key, &found_value, &found_block);
  };
  const Version& v = *view.version;
  for (size_t level = 0; level < v.levels.size(); ++level) {
    const auto& files = v.levels[level];
    if (level == 0) {
      for (const auto& f : files) {
        if (!UserKeyInFile(key, *f) || f->smallest_seq > snap) continue;
        bool found = false;
        Status s = probe(*f, &found);
        if (!s.ok()) return s;
        if (found) {
          ParsedInternalKey ikey;
          if (!ParseInternalKey(found_key, &ikey)) return Status::Corruption("malformed key in SSTable");
          *source = 1;
          if (found_seq != nullptr) *found_seq = ikey.sequence;
          return finish(ikey.type, found_value);
        }
      }
      continue;
    }
    // Sorted, disjoint files: the only candidate is the first whose largest key >= key.
    auto it = std::lower_bound(files.begin(), files.end(), key,
                               [](const auto& f, Slice k) { return ExtractUserKey(f->largest) < k; });
    if (it == files.end() || !UserKeyInFile(key, **it)) continue;
    bool found = false;
    Status s = probe(**it, &found);
    if (!s.ok()) return s;
    if (found) {
      ParsedInternalKey ikey;
      if (!ParseInternalKey(found_key, &ikey)) return Status::Corruption("malformed key in SSTable");
      *source = static_cast<int>(1 + level);
      if (found_seq != nullptr) *found_seq = ikey.sequence;
      return finish(ikey.type, found_value);
    }
  }
  *source = kMaxReadLevels;
  return Status::NotFound();
}

Status DBImpl::FindTable(const FileMetaData& f, std::shared_ptr<TableReader>* held, TableReader** table) {
  *table = f.reader.get();
  if (*table != nullptr) return Status::OK();
  Status s = table_cache_->GetTable(f.file_number, f.file_size, held);
  if (!s.ok()) return s;
  *table = held->get();
  if (obsolete_->live.load(std::memory_order_relaxed) <= table_cache_->capacity())
    *table = f.reader.Pin(*held);
  return Status::OK();
}

size_t DBImpl::PinnedTableReadersForTest() {
  std::lock_guard<std::mutex> l(mutex_);
  size_t n = 0;
  for (const auto& [id, cfd] : cfs_) {
    for (const auto& level : cfd->version->levels)
      for (const auto& f : level) n += f->reader.get() != nullptr ? 1 : 0;
  }
  return n;
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options, ColumnFamilyHandle* cf) {
  struct IterState {
    std::shared_ptr<const ReadView> view;
    std::vector<std::shared_ptr<TableReader>> tables;
  };
  const ColumnFamilyData* cfd = ReadableCfd(cf);
  auto state = std::make_shared<IterState>();
  if (cfd != nullptr) state->view = GetReadView(cfd);  // the view before the sequence, as in GetImpl
  if (state->view == nullptr) {
    return NewDBIterator(std::unique_ptr<InternalIterator>(NewEmptyInternalIterator(
                             Status::InvalidArgument("column family was dropped or is unknown"))),
                         DBIterOptions(), nullptr);
  }
  const uint32_t cf_id = cfd->id;
  DBIterOptions dbo;
  dbo.snapshot = options.snapshot != nullptr ? options.snapshot->sequence()
                                             : visible_sequence_.load(std::memory_order_acquire);
  if (options.lower_bound != nullptr) dbo.lower_bound = std::string(*options.lower_bound);
  if (options.upper_bound != nullptr) dbo.upper_bound = std::string(*options.upper_bound);
  dbo.now_seconds = NowSeconds(env_);
  dbo.fetch = MakeValueFetcher(options.fill_cache);

  std::vector<std::unique_ptr<InternalIterator>> children;
  // A memtable holding nothing of this CF (unified memtables filled by other tables'
  // writes) is no child: every seek would search its skip list for nothing. Entries the
  // CF gets later are newer than the snapshot (a writer counts its entries before it
  // publishes their sequence), so the iterator could never show them anyway.
  if (state->view->mems->active->NumEntries(cf_id) > 0)
    children.push_back(state->view->mems->active->NewIterator(cf_id));
  for (const auto& mem : state->view->mems->immutables)
    if (mem->NumEntries(cf_id) > 0) children.push_back(mem->NewIterator(cf_id));
  const bool fill_cache = options.fill_cache;
  const auto& levels = state->view->version->levels;
  for (size_t level = 0; level < levels.size(); ++level) {
    std::vector<const FileMetaData*> files;
    for (const auto& f : levels[level]) {
      // Files wholly outside the bounds cannot contribute.
      if (dbo.lower_bound && ExtractUserKey(f->largest) < Slice(*dbo.lower_bound)) continue;
      if (dbo.upper_bound && ExtractUserKey(f->smallest) >= Slice(*dbo.upper_bound)) continue;
      if (f->smallest_seq > dbo.snapshot) continue;
      files.push_back(f.get());
    }
    if (level > 0 && files.size() > 1) {
      // Sorted, disjoint files: one child for the level, opening one file at a time (the
      // Version the view holds keeps the files' metadata alive).
      std::vector<LevelFile> bounds;
      for (const FileMetaData* f : files) bounds.push_back(LevelFile{f->smallest, f->largest});
      children.push_back(NewLevelIterator(
          std::move(bounds), [this, files, fill_cache](size_t i, std::shared_ptr<void>* keepalive) {
            std::shared_ptr<TableReader> held;
            TableReader* table = nullptr;
            Status s = FindTable(*files[i], &held, &table);
            if (!s.ok()) return std::unique_ptr<InternalIterator>(NewEmptyInternalIterator(s));
            std::unique_ptr<InternalIterator> it = table->NewIterator(fill_cache);
            *keepalive = std::move(held);
            return it;
          }));
      continue;
    }
    for (const FileMetaData* f : files) {
      std::shared_ptr<TableReader> held;
      TableReader* table = nullptr;
      Status s = FindTable(*f, &held, &table);
      if (!s.ok()) {
        children.emplace_back(NewEmptyInternalIterator(s));
        continue;
      }
      children.push_back(table->NewIterator(fill_cache));
      if (held) state->tables.push_back(std::move(held));
    }
  }
  return NewDBIterator(NewMergingIterator(std::move(children)), std::move(dbo), state);
}

void DBImpl::EstimateRanges(ColumnFamilyHandle* cf, const Range* ranges, size_t n, RangeEstimate* estimates) {
  std::fill(estimates, estimates + n, RangeEstimate{});
  const ColumnFamilyData* cfd = ReadableCfd(cf);
  if (cfd == nullptr) return;
  const uint32_t cf_id = cfd->id;
  const std::shared_ptr<const ReadView> view_ptr = GetReadView(cfd);
  if (view_ptr == nullptr) return;
  const ReadView& view = *view_ptr;
  // Memtables: the skip list counts a big range on a sparse level, so the cost does not
  // grow with the range and other CFs' entries (unified mode) never count. The ranges the
  // filter leaves are estimated together, their searches overlapping.
  auto add_memtable = [&](const MemTable& mem) {
    if (mem.NumEntries(cf_id) == 0) return;
    constexpr size_t kChunk = MemTable::kMaxRangesAtOnce;
    for (size_t first = 0; first < n; first += kChunk) {
      MemTable::KeyRange asked[kChunk];
      size_t which[kChunk];
      size_t count = 0;
      for (size_t i = first; i < std::min(n, first + kChunk); ++i) {
        // A range inside one key prefix the memtable's filter does not hold: nothing here.
        if (!mem.RangeMayMatch(cf_id, ranges[i].start, ranges[i].limit)) continue;
        asked[count] = MemTable::KeyRange{ranges[i].start, ranges[i].limit};
        which[count++] = i;
      }
      MemTable::RangeSize sizes[kChunk];
      mem.ApproximateRangeSizes(cf_id, asked, count, sizes);
      for (size_t j = 0; j < count; ++j) {
        estimates[which[j]].keys += sizes[j].entries;
        estimates[which[j]].bytes += sizes[j].bytes;
      }
    }
  };
  add_memtable(*view.mems->active);
  for (const auto& mem : view.mems->immutables) add_memtable(*mem);

  // SSTables: the share of a file's data bytes between the range's bounds, with its share
  // of the file's entries. Offsets are interpolated inside blocks (ApproximateOffsetOf),
  // so a range much smaller than a block still counts about what it holds.
  std::string start_key, limit_key;
  const auto& levels = view.version->levels;
  for (size_t i = 0; i < n; ++i) {
    const Range& range = ranges[i];
    RangeEstimate& est = estimates[i];
    start_key.clear();
    limit_key.clear();
    AppendInternalKey(&start_key, range.start, kMaxSequence, kValueTypeForSeek);
    if (!range.limit.empty()) AppendInternalKey(&limit_key, range.limit, kMaxSequence, kValueTypeForSeek);
    for (size_t level = 0; level < levels.size(); ++level) {
      const auto& files = levels[level];
      // Sorted, disjoint files past L0: start at the first that can overlap.
      auto first = files.begin();
      if (level > 0) {
        first = std::lower_bound(files.begin(), files.end(), range.start,
                                 [](const auto& f, Slice k) { return ExtractUserKey(f->largest) < k; });
      }
      for (auto it = first; it != files.end(); ++it) {
        const FileMetaData* f = it->get();
        if (ExtractUserKey(f->largest) < range.start) continue;
        if (!range.limit.empty() && ExtractUserKey(f->smallest) >= range.limit) {
          if (level > 0) break;  // every later file starts later still
          continue;
        }
        std::shared_ptr<TableReader> held;
        TableReader* table = nullptr;
        if (!FindTable(*f, &held, &table).ok()) continue;
        // A prefix filter that rules the range out: nothing here (not even the one entry a
        // file overlapping the range counts below).
        if (!table->RangeMayMatch(range.start, range.limit)) continue;
        // Past the last entry ApproximateOffsetOf is the file size; the metadata blocks
        // after the data hold no entries.
        const uint64_t data = table->properties().data_size;
        uint64_t begin = 0, end = 0;
        table->ApproximateRange(start_key, limit_key, &begin, &end);
        begin = std::min(begin, data);
        end = std::min(end, data);
        const uint64_t bytes = end > begin ? end - begin : 0;
        const double share = data > 0 ? static_cast<double>(bytes) / static_cast<double>(data) : 0;
        // The values the file points to in value logs are the CF's bytes too (for a table of
        // large values, nearly all of them): the same share of them.
        uint64_t value_log_bytes = 0;
        for (const auto& r : f->value_log_refs) value_log_bytes += r.bytes;
        est.bytes += bytes + static_cast<uint64_t>(share * static_cast<double>(value_log_bytes) + 0.5);
        // The file overlaps the range, so count at least one entry.
        est.keys +=
            std::max<uint64_t>(1, static_cast<uint64_t>(share * static_cast<double>(f->num_entries) + 0.5));
      }
    }
  }
}

namespace {

std::string HexString(Slice bytes) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace

bool DBImpl::GetProperty(ColumnFamilyHandle* cf, Slice name, std::string* value) {
  std::lock_guard<std::mutex> l(mutex_);
  ColumnFamilyData* cfd = cf != nullptr ? LiveCfd(cf) : cfs_.at(0).get();
  if (cfd == nullptr) return false;
  const Slice level_prefix = "tidesdb.num-files-at-level";
  if (name.starts_with(level_prefix)) {
    std::string rest(name.substr(level_prefix.size()));
    if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos) return false;
    size_t level = std::stoul(rest);
    const auto& levels = cfd->version->levels;
    *value = std::to_string(level < levels.size() ? levels[level].size() : 0);
    return true;
  }
  if (name == "tidesdb.cur-size-all-mem-tables") {
    uint64_t total = 0;
    for (const auto& slot : slots_) {
      total += slot->active.mem->ApproximateMemoryUsage();
      for (const auto& imm : slot->immutables) total += imm.mem->ApproximateMemoryUsage();
    }
    *value = std::to_string(total);
    return true;
  }
  if (name == "tidesdb.latency") {
    *value = "get_micros: " + get_micros_.Summary() + "\nwrite_micros: " + write_micros_.Summary() + "\n";
    return true;
  }
  if (name == "tidesdb.read-sources") {
    std::string out = "memtable=" + std::to_string(stat_reads_[0].Load());
    for (int l = 0; l + 1 < kMaxReadLevels; ++l)
      out += " L" + std::to_string(l) + "=" + std::to_string(stat_reads_[1 + l].Load());
    out += " not_found=" + std::to_string(stat_reads_[kMaxReadLevels].Load()) + "\n";
    *value = out;
    return true;
  }
  if (name == "tidesdb.block-cache") {
    *value = "capacity=" + std::to_string(block_cache_->capacity()) +
             " usage=" + std::to_string(block_cache_->usage()) +
             " hits=" + std::to_string(block_cache_->hits()) +
             " misses=" + std::to_string(block_cache_->misses()) +
             " evictions=" + std::to_string(block_cache_->evictions()) + "\n";
    return true;
  }
  if (name == "tidesdb.damage") {
    *value = cfd->damage.ok() ? "" : cfd->damage.ToString();
    return true;
  }
  if (name == "tidesdb.num-column-families") {
    *value = std::to_string(cfs_.size());
    return true;
  }
  if (name == "tidesdb.num-immutable-mem-tables") {
    *value = std::to_string(cfd->slot->immutables.size());
    return true;
  }
  if (name == "tidesdb.stats") {
    char buf[2048];
    std::snprintf(
        buf, sizeof(buf),
        "wal_bytes=%" PRIu64 " wal_syncs=%" PRIu64 " commit_groups=%" PRIu64 " commits=%" PRIu64
        " flushes=%" PRIu64 " flush_bytes=%" PRIu64 " flush_entries_dropped=%" PRIu64 " compactions=%" PRIu64
        " compaction_bytes_read=%" PRIu64 " compaction_bytes_written=%" PRIu64
        " compaction_entries_dropped=%" PRIu64 " compaction_trivial_moves=%" PRIu64
        " compaction_bytes_moved=%" PRIu64 " vlog_relocated_bytes=%" PRIu64 " vlog_files_deleted=%" PRIu64
        " vlog_bytes_deleted=%" PRIu64 " vlog_relocation_errors=%" PRIu64 " slowdown_micros=%" PRIu64
        " stall_micros=%" PRIu64 " last_sequence=%" PRIu64 " column_families=%zu wal_size_flushes=%" PRIu64
        " member_inserts=%" PRIu64 "\n",
        stat_wal_bytes_.load(), stat_wal_syncs_.load(), stat_commit_groups_.load(), stat_commits_.load(),
        stat_flushes_.load(), stat_flush_bytes_.load(), stat_flush_entries_dropped_.load(),
        stat_compactions_.load(), stat_compaction_bytes_read_.load(), stat_compaction_bytes_written_.load(),
        stat_compaction_entries_dropped_.load(), stat_trivial_moves_.load(), stat_trivial_move_bytes_.load(),
        stat_vlog_relocated_bytes_.load(), stat_vlog_files_deleted_.load(), stat_vlog_bytes_deleted_.load(),
        stat_vlog_relocation_errors_.load(), stat_slowdown_micros_.load(), stat_stall_micros_.load(),
        visible_sequence_.load(), cfs_.size(), stat_wal_size_flushes_.load(), stat_member_inserts_.load());
    *value = buf;
    return true;
  }
  if (name == "tidesdb.sst-files") {
    // One line per SSTable of the CF, by level, then by smallest key.
    std::string out;
    const auto& levels = cfd->version->levels;
    for (size_t level = 0; level < levels.size(); ++level) {
      for (const auto& f : levels[level]) {
        uint64_t vlog_bytes = 0;
        for (const auto& r : f->value_log_refs) vlog_bytes += r.bytes;
        char line[256];
        std::snprintf(line, sizeof(line),
                      "level=%zu file=%" PRIu64 " size=%" PRIu64 " entries=%" PRIu64 " tombstones=%" PRIu64
                      " smallest_seq=%" PRIu64 " largest_seq=%" PRIu64 " value_log_bytes=%" PRIu64,
                      level, f->file_number, f->file_size, f->num_entries, f->num_deletions, f->smallest_seq,
                      f->largest_seq, vlog_bytes);
        out += line;
        out += " smallest=" + HexString(ExtractUserKey(f->smallest));
        out += " largest=" + HexString(ExtractUserKey(f->largest)) + "\n";
      }
    }
    *value = out;
    return true;
  }
  if (name == "tidesdb.compactions") {
    // Running compactions, then the finished ones newest first; the status ends the line.
    std::string out;
    auto append = [&out](const CompactionRecord& r, const char* state) {
      char line[384];
      std::snprintf(line, sizeof(line),
                    "id=%" PRIu64
                    " cf=%u state=%s reason=%s manual=%d move=%d level=%d output_level=%d"
                    " input_files=%" PRIu64 " input_bytes=%" PRIu64 " output_files=%" PRIu64
                    " output_bytes=%" PRIu64 " start_micros=%" PRIu64 " end_micros=%" PRIu64 " status=",
                    r.id, r.cf_id, state, r.reason, r.manual ? 1 : 0, r.move ? 1 : 0, r.level, r.output_level,
                    r.input_files, r.input_bytes, r.output_files, r.output_bytes, r.start_micros,
                    r.end_micros);
      out += line;
      out += r.status + "\n";
    };
    for (const auto& r : compactions_now_) append(r, "running");
    for (auto it = compactions_recent_.rbegin(); it != compactions_recent_.rend(); ++it) {
      append(*it, it->status == "OK" ? "done" : "failed");
    }
    *value = out;
    return true;
  }
  if (name == "tidesdb.options") {
    // The options the CF was created with (kept in the manifest), one line.
    *value = ColumnFamilyOptionsToString(cfd->options, " ") + "\n";
    return true;
  }
  if (name == "tidesdb.value-logs") {
    // One line per value log of the CF, then a total line.
    std::vector<ValueLogUsage> usages;
    const bool known = ValueLogUsages(*cfd->version, &usages);
    std::string out;
    uint64_t size = 0, live = 0;
    for (const auto& u : usages) {
      char line[160];
      std::snprintf(line, sizeof(line), "#%" PRIu64 " size=%" PRIu64 " live=%" PRIu64 " garbage=%.3f%s\n",
                    u.file_number, u.file_size, u.live_bytes, u.GarbageRatio(),
                    cfd->gc_skip.count(u.file_number) != 0 ? " damaged (not collected)" : "");
      out += line;
      size += u.file_size;
      live += u.live_bytes;
    }
    if (!known) {
      for (const auto& vl : cfd->version->value_logs) size += vl->file_size;
      out += "references unknown (files logged before value-log GC)\n";
    }
    out += "total files=" + std::to_string(cfd->version->value_logs.size()) +
           " size=" + std::to_string(size) + " live=" + std::to_string(live) + "\n";
    *value = out;
    return true;
  }
  return false;
}

}  // namespace tidesdb
