// Open, recovery, close, column families and file lifetime.
#include "db/db_impl.h"

#include <algorithm>
#include <cassert>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "cache/block_cache.h"
#include "db/table_cache.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace tidesdb {

namespace {
constexpr uint8_t kManifestEditRecord = 1;
}  // namespace

// ---------------------------------------------------------------------------- open / close

Status DB::Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db) {
  db->reset();
  auto impl = std::make_unique<DBImpl>(options, path);
  Status s = impl->Recover();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

DBImpl::DBImpl(const Options& options, std::string dbname)
    : options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()),
      dbname_(std::move(dbname)) {
  block_cache_ = std::make_unique<BlockCache>(options_.block_cache_size);
  table_cache_ = std::make_unique<TableCache>(env_, dbname_, block_cache_.get(),
                                              static_cast<size_t>(std::max(options_.max_open_sstables, 16)));
}

DBImpl::~DBImpl() {
  {
    std::lock_guard<std::mutex> l(mutex_);
    shutting_down_ = true;
    bg_cv_.notify_all();
  }
  {
    std::lock_guard<std::mutex> l(syncer_mu_);
    syncer_cv_.notify_all();
  }
  if (db_lock_) Log(LogLevel::kInfo, "closing %s", dbname_.c_str());
  for (auto& t : flush_threads_) t.join();
  for (auto& t : compaction_threads_) t.join();
  if (sync_thread_.joinable()) sync_thread_.join();
  {
    std::lock_guard<std::mutex> l(wal_mu_);
    if (wal_) {
      // A clean close makes every commit durable, whatever the sync mode, and says so in
      // the WAL (a sync mark claiming every record): damage anywhere in it is then
      // corruption, never taken for a write lost at a power loss.
      wal_->Seal();
      wal_->Close();
    }
  }
  if (manifest_) manifest_->Close();
  {
    std::lock_guard<std::mutex> l(obsolete_->mu);
    obsolete_->db_closing = true;  // from here on every file is live: delete nothing
  }
  cfs_.clear();
  dropped_cfs_.clear();
}

std::shared_ptr<MemTableSlot> DBImpl::NewSlot(size_t write_buffer_size) {
  auto slot = std::make_shared<MemTableSlot>();
  slot->write_buffer_size = std::max<size_t>(write_buffer_size, 64 << 10);
  slot->active.mem = NewMemTable(slot->write_buffer_size);
  slot->active.wal_number = wal_number_;
  slot->PublishView();
  slots_.push_back(slot);
  return slot;
}

ColumnFamilyData* DBImpl::CreateCfdLocked(uint32_t id, const std::string& name,
                                          const ColumnFamilyOptions& options) {
  auto cfd = std::make_unique<ColumnFamilyData>(id, name, options);
  if (options_.unified_memtable) {
    cfd->slot = unified_slot_;
  } else {
    cfd->slot = NewSlot(options.write_buffer_size);
  }
  ColumnFamilyData* raw = cfd.get();
  raw->handle.set_owner(this);
  PublishReadViewLocked(raw);
  cf_by_name_[name] = raw;
  cfs_[id] = std::move(cfd);
  max_cf_id_ = std::max(max_cf_id_, id);
  return raw;
}

Status DBImpl::Recover() {
  std::unique_lock<std::mutex> l(mutex_);
  if (options_.create_if_missing) env_->CreateDir(dbname_);
  Status s = env_->LockFile(LockFileName(dbname_), &db_lock_);
  if (!s.ok()) return s;
  if (!env_->FileExists(CurrentFileName(dbname_))) {
    if (!options_.create_if_missing) {
      return Status::InvalidArgument(dbname_, "does not exist (create_if_missing is false)");
    }
    // A directory that holds database files but no CURRENT lost its pointer to the
    // manifest: creating a new database here would delete the old one's files. The first
    // manifest alone is what a crash inside NewDB leaves (it is written before CURRENT, and
    // every open replaces it): that database never existed, so create it afresh.
    std::vector<std::string> children;
    env_->GetChildren(dbname_, &children);
    for (const auto& name : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type) && type != FileType::kLock && type != FileType::kTemp &&
          type != FileType::kInfoLog && !(type == FileType::kManifest && number == 1)) {
        return Status::Corruption(CurrentFileName(dbname_),
                                  "is missing but the directory holds database files (" + name + ")");
      }
    }
    s = NewDB();
    if (!s.ok()) return s;
  } else if (options_.error_if_exists) {
    return Status::InvalidArgument(dbname_, "exists (error_if_exists is true)");
  }
  if (options_.unified_memtable) unified_slot_ = NewSlot(options_.unified_memtable_write_buffer_size);

  uint64_t old_manifest = 0;
  s = ReplayManifest(&old_manifest);
  if (!s.ok()) return s;
  logged_wal_number_ = wal_number_;
  s = CheckRecoveredFilesLocked();
  if (!s.ok()) return s;
  // One listing serves the WAL replay below and this: a crash can leave files whose
  // numbers were allocated but never logged (outputs of an unfinished flush or compaction).
  // New files must not reuse those numbers: an orphan would then share a number with a
  // live file.
  std::vector<std::string> children;
  s = env_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type)) next_file_number_ = std::max(next_file_number_, number + 1);
  }
  uint64_t min_wal = wal_number_;
  // Everything recovered from the WAL is flushed below; write the manifest afresh first so
  // those flushes have somewhere to log their edits.
  {
    ManifestOwner owner(this, l);
    s = WriteSnapshotManifest(l);
  }
  if (!s.ok()) return s;
  if (old_manifest != 0 && old_manifest != manifest_number_)
    env_->RemoveFile(ManifestFileName(dbname_, old_manifest));

  s = ReplayWals(l, children, min_wal);
  if (!s.ok()) return s;
  // Flush what the WAL replay produced, so the old WALs can be deleted.
  for (auto& slot : slots_) {
    if (!slot->active.mem->empty()) {
      MemTableEntry frozen = slot->active;
      frozen.end_sequence = last_sequence_;
      slot->immutables.push_back(frozen);
      slot->active.mem = NewMemTable(slot->write_buffer_size);
    }
    while (!slot->immutables.empty()) {
      s = FlushOneLocked(l, slot.get());
      if (!s.ok()) return s;
    }
    PublishSlotLocked(slot.get());
  }
  s = NewWal();
  if (!s.ok()) return s;
  // Before the edit below lets the old WALs go.
  s = RelogRecoveredPreparedLocked();
  if (!s.ok()) return s;
  for (auto& slot : slots_) slot->active.wal_number = wal_number_;
  VersionEdit edit;
  edit.SetWalNumber(wal_number_);
  edit.SetNextFileNumber(next_file_number_);
  edit.SetLastSequence(last_sequence_);
  {
    ManifestOwner owner(this, l);
    s = LogAndApply(l, &edit);
  }
  if (!s.ok()) return s;
  visible_sequence_.store(last_sequence_.load(), std::memory_order_release);

  l.unlock();
  s = DeleteOrphanFiles();
  if (!s.ok()) return s;
  DeleteObsoleteFiles();
  l.lock();

  for (int i = 0; i < std::max(options_.flush_threads, 1); ++i) {
    flush_threads_.emplace_back([this] { FlushLoop(); });
  }
  UpdateL0StatsLocked();
  for (int i = 0; i < std::max(options_.compaction_threads, 1); ++i) {
    compaction_threads_.emplace_back([this] { CompactionLoop(); });
  }
  if (options_.sync_mode == SyncMode::kInterval) sync_thread_ = std::thread([this] { IntervalSyncLoop(); });
  Log(LogLevel::kInfo, "opened %s: %zu column families, last sequence %llu, %zu prepared transactions",
      dbname_.c_str(), cfs_.size(), static_cast<unsigned long long>(last_sequence_.load()),
      recovered_prepared_.size());
  return Status::OK();
}

Status DBImpl::RelogRecoveredPreparedLocked() {
  if (recovered_prepared_.empty()) return Status::OK();
  std::vector<std::string> payloads;
  for (const auto& [xid, data] : recovered_prepared_) {
    std::string& p = payloads.emplace_back();
    PutLengthPrefixedSlice(&p, xid);
    p.append(data);
  }
  std::vector<LogWriter::Record> records;
  for (const auto& p : payloads) records.push_back(LogWriter::Record{kWalPrepare, p});
  std::lock_guard<std::mutex> g(wal_mu_);
  Status s = wal_->AddRecords(records);
  if (s.ok()) s = wal_->Sync();
  if (!s.ok()) return s;
  for (const auto& [xid, data] : recovered_prepared_) prepared_wal_[xid] = wal_number_;
  return Status::OK();
}

std::map<std::string, std::string> DBImpl::RecoveredPrepared() const {
  std::lock_guard<std::mutex> l(mutex_);
  return recovered_prepared_;
}

Status DBImpl::NewDB() {
  VersionEdit edit;
  edit.AddColumnFamily(0, "default", options_.default_cf_options);
  edit.SetNextFileNumber(2);
  edit.SetLastSequence(0);
  edit.SetWalNumber(0);
  const std::string manifest = ManifestFileName(dbname_, 1);
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(manifest, EnvOptions{}, &file);
  if (!s.ok()) return s;
  LogWriter writer(std::move(file), LogKind::kManifest, 1);
  std::string record;
  edit.EncodeTo(&record);
  s = writer.AddRecord(kManifestEditRecord, record);
  if (s.ok()) s = writer.Sync();
  Status c = writer.Close();
  if (s.ok()) s = c;
  if (s.ok()) s = WriteStringToFile(env_, "MANIFEST-000001\n", CurrentFileName(dbname_) + ".tmp", true);
  if (s.ok()) s = env_->RenameFile(CurrentFileName(dbname_) + ".tmp", CurrentFileName(dbname_));
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (!s.ok()) env_->RemoveFile(manifest);
  return s;
}

Status DBImpl::ReplayManifest(uint64_t* manifest_number) {
  std::string current;
  Status s = ReadFileToString(env_, CurrentFileName(dbname_), &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(CurrentFileName(dbname_), "CURRENT does not end with a newline");
  }
  current.pop_back();
  uint64_t number = 0;
  FileType type;
  if (!ParseFileName(current, &number, &type) || type != FileType::kManifest) {
    return Status::Corruption(CurrentFileName(dbname_), "CURRENT does not name a manifest");
  }
  *manifest_number = number;
  if (!env_->FileExists(dbname_ + "/" + current)) {
    return Status::Corruption(CurrentFileName(dbname_), "names " + current + ", which does not exist");
  }
  std::unique_ptr<LogReader> reader;
  s = LogReader::Open(env_, dbname_ + "/" + current, &reader);
  if (!s.ok()) return s;
  uint64_t log_number = 0;
  s = reader->ReadHeader(LogKind::kManifest, &log_number);
  if (!s.ok()) return s;
  bool any = false;
  while (true) {
    uint8_t rtype;
    std::string payload;
    bool eof = false;
    s = reader->ReadRecord(&rtype, &payload, &eof);
    if (!s.ok()) return s;
    if (eof) break;
    if (rtype != kManifestEditRecord) {
      return Status::Corruption(reader->path(), "offset " + std::to_string(reader->last_record_offset()) +
                                                    ": unknown manifest record type");
    }
    VersionEdit edit;
    s = edit.DecodeFrom(payload);
    if (!s.ok()) {
      return Status::Corruption(
          reader->path(), "offset " + std::to_string(reader->last_record_offset()) + ": " + s.message());
    }
    s = ApplyRecoveredEdit(edit);
    if (!s.ok()) return s;
    any = true;
  }
  if (!any || cfs_.find(0) == cfs_.end()) {
    return Status::Corruption(reader->path(), "manifest holds no default column family");
  }
  return Status::OK();
}

Status DBImpl::ApplyRecoveredEdit(const VersionEdit& edit) {
  if (edit.next_file_number()) next_file_number_ = std::max(next_file_number_, *edit.next_file_number());
  if (edit.last_sequence()) last_sequence_ = std::max(last_sequence_.load(), *edit.last_sequence());
  if (edit.wal_number()) wal_number_ = std::max(wal_number_, *edit.wal_number());
  if (edit.max_column_family()) max_cf_id_ = std::max(max_cf_id_, *edit.max_column_family());
  for (const auto& add : edit.added_column_families()) {
    if (cfs_.count(add.cf_id) != 0 || cf_by_name_.count(add.name) != 0) {
      return Status::Corruption("manifest: column family added twice: " + add.name);
    }
    CreateCfdLocked(add.cf_id, add.name, add.options);
  }
  auto cfd_of = [&](uint32_t cf_id) -> ColumnFamilyData* {
    auto it = cfs_.find(cf_id);
    return it == cfs_.end() ? nullptr : it->second.get();
  };
  for (const auto& f : edit.flushed_sequences()) {
    if (ColumnFamilyData* cfd = cfd_of(f.cf_id))
      cfd->flushed_sequence = std::max(cfd->flushed_sequence, f.sequence);
  }
  std::map<uint32_t, std::shared_ptr<Version>> changed;
  auto version_of = [&](ColumnFamilyData* cfd) {
    auto& v = changed[cfd->id];
    if (!v) v = std::make_shared<Version>(*cfd->version);
    return v;
  };
  // A file deleted and added by one edit moved between levels (a trivial move). It keeps its
  // tracked metadata: releasing that would queue the live file for deletion.
  std::map<std::pair<uint32_t, uint64_t>, std::shared_ptr<const FileMetaData>> removed;
  for (const auto& d : edit.deleted_files()) {
    ColumnFamilyData* cfd = cfd_of(d.cf_id);
    if (cfd == nullptr) continue;
    auto v = version_of(cfd);
    if (static_cast<size_t>(d.level) < v->levels.size()) {
      std::erase_if(v->levels[d.level], [&](const auto& f) {
        if (f->file_number != d.file_number) return false;
        removed[{d.cf_id, d.file_number}] = f;
        return true;
      });
    }
  }
  for (const auto& n : edit.new_files()) {
    ColumnFamilyData* cfd = cfd_of(n.cf_id);
    if (cfd == nullptr) continue;
    auto v = version_of(cfd);
    if (v->levels.size() <= static_cast<size_t>(n.level)) v->levels.resize(n.level + 1);
    auto& files = v->levels[n.level];
    std::shared_ptr<const FileMetaData> meta;
    if (auto moved = removed.find({n.cf_id, n.meta.file_number}); moved != removed.end()) {
      if (!(*moved->second == n.meta)) {
        return Status::Corruption("manifest: file " + std::to_string(n.meta.file_number) +
                                  " moved between levels with different metadata");
      }
      meta = moved->second;
    } else {
      meta = TrackFile(n.meta);
    }
    if (n.level == 0) {
      files.insert(files.begin(), meta);  // newer flushes are logged later
    } else {
      auto pos = std::lower_bound(files.begin(), files.end(), meta, [](const auto& a, const auto& b) {
        return CompareInternalKey(a->smallest, b->smallest) < 0;
      });
      files.insert(pos, meta);
    }
    last_sequence_ = std::max(last_sequence_.load(), n.meta.largest_seq);
    next_file_number_ = std::max(next_file_number_, n.meta.file_number + 1);
  }
  for (const auto& d : edit.deleted_value_logs()) {
    ColumnFamilyData* cfd = cfd_of(d.cf_id);
    if (cfd == nullptr) continue;
    auto v = version_of(cfd);
    std::erase_if(v->value_logs, [&](const auto& vl) { return vl->file_number == d.file_number; });
  }
  for (const auto& n : edit.new_value_logs()) {
    ColumnFamilyData* cfd = cfd_of(n.cf_id);
    if (cfd == nullptr) continue;
    version_of(cfd)->value_logs.push_back(TrackValueLog(n.file_number, n.file_size));
    next_file_number_ = std::max(next_file_number_, n.file_number + 1);
  }
  for (auto& [id, v] : changed) {
    cfs_[id]->version = std::move(v);
    PublishReadViewLocked(cfs_[id].get());
  }
  for (uint32_t id : edit.dropped_column_families()) {
    auto it = cfs_.find(id);
    if (it == cfs_.end()) continue;
    it->second->dropped = true;
    it->second->version = std::make_shared<Version>();
    it->second->read_view.Store(nullptr);
    cf_by_name_.erase(it->second->name);
    dropped_cfs_.push_back(std::move(it->second));
    cfs_.erase(it);
  }
  return Status::OK();
}

Status DBImpl::ReplayWals(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& children,
                          uint64_t min_wal_number) {
  std::vector<uint64_t> wals;
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kWal) {
      uint64_t bytes = 0;
      env_->GetFileSize(WalFileName(dbname_, number), &bytes);  // left 0 if unreadable
      AddWalFileLocked(number, bytes);
      if (number >= min_wal_number) wals.push_back(number);
    }
  }
  std::sort(wals.begin(), wals.end());
  SequenceCursor cursor;
  cursor.next = last_sequence_ + 1;  // what the manifest holds
  for (size_t i = 0; i < wals.size(); ++i) {
    Status s = ReplayWal(lock, wals[i], i + 1 == wals.size(), &cursor);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status DBImpl::ReplayWal(std::unique_lock<std::mutex>& lock, uint64_t number, bool is_last,
                         SequenceCursor* cursor) {
  const std::string fname = WalFileName(dbname_, number);
  std::unique_ptr<LogReader> reader;
  Status s = LogReader::Open(env_, fname, &reader);
  if (!s.ok()) return s;
  // Only the newest WAL can have lost unsynced writes: every older one was synced whole
  // before its successor was created (NewWal).
  if (is_last) reader->AllowLostUnsyncedWrites();
  uint64_t header_number = 0;
  s = reader->ReadHeader(LogKind::kWal, &header_number);
  if (!s.ok()) return s;
  if (header_number != 0 && header_number != number) {
    return Status::Corruption(fname, "WAL header names log " + std::to_string(header_number));
  }
  for (auto& slot : slots_) slot->active.wal_number = std::min(slot->active.wal_number, number);

  struct Inserter : WriteBatch::Handler {
    DBImpl* db;
    SequenceNumber seq;
    std::string scratch;
    Status Put(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at) override {
      if (cf_id > db->max_cf_id_) return UnknownCf(cf_id);
      if (const ColumnFamilyData* cfd = Target(cf_id)) {
        MemTable* mem = cfd->slot->active.mem.get();
        if (expire_at == 0) {
          mem->Add(cf_id, seq, ValueType::kValue, key, value, cfd->options.filter_prefix_length);
        } else {
          scratch.clear();
          PutFixed64(&scratch, expire_at);
          scratch.append(value.data(), value.size());
          mem->Add(cf_id, seq, ValueType::kValueWithExpiry, key, scratch, cfd->options.filter_prefix_length);
        }
      }
      seq++;
      return Status::OK();
    }
    Status Delete(uint32_t cf_id, Slice key) override {
      if (cf_id > db->max_cf_id_) return UnknownCf(cf_id);
      if (const ColumnFamilyData* cfd = Target(cf_id))
        cfd->slot->active.mem->Add(cf_id, seq, ValueType::kDeletion, key, Slice(),
                                   cfd->options.filter_prefix_length);
      seq++;
      return Status::OK();
    }
    // Writes go only to CFs the manifest recorded first: a larger id means the manifest
    // lost the edit that created it, and skipping its entries would lose them silently.
    Status UnknownCf(uint32_t cf_id) const {
      return Status::Corruption("column family " + std::to_string(cf_id) +
                                " is unknown to the manifest (edits lost from the manifest?)");
    }
    // Entries of dropped CFs, and entries already in SSTables, are skipped.
    const ColumnFamilyData* Target(uint32_t cf_id) {
      auto it = db->cfs_.find(cf_id);
      if (it == db->cfs_.end() || seq <= it->second->flushed_sequence) return nullptr;
      return it->second.get();
    }
  };

  // Takes the sequences [first, first + count) of the record at `where`.
  auto take_sequences = [&](const std::string& where, SequenceNumber first, SequenceNumber count) -> Status {
    if (cursor->started ? first != cursor->next : first > cursor->next) {
      return Status::Corruption(fname, where + ": sequence gap: expected sequence " +
                                           std::to_string(cursor->next) + ", found " + std::to_string(first) +
                                           " (WAL records or files lost)");
    }
    cursor->started = true;
    cursor->next = first + count;
    return Status::OK();
  };

  while (true) {
    uint8_t type;
    std::string payload;
    bool eof = false;
    s = reader->ReadRecord(&type, &payload, &eof);
    if (!s.ok()) return s;
    if (eof) break;
    const std::string where = "offset " + std::to_string(reader->last_record_offset());
    Slice in(payload);
    if (type == kWalUnloggedSequences) {
      uint64_t first = 0, last = 0;
      if (!GetFixed64(&in, &first) || !GetFixed64(&in, &last) || last < first)
        return Status::Corruption(fname, where + ": bad unlogged-sequences record");
      s = take_sequences(where, first, last - first + 1);
      if (!s.ok()) return s;
      last_sequence_ = std::max(last_sequence_.load(), last);
      continue;
    }
    if (type == kWalPrepare || type == kWalCommitPrepared || type == kWalRollbackPrepared) {
      // Two-phase commit: a prepare is remembered until a later record resolves its xid;
      // a commit-prepared carries its batch again, so it applies whether or not the WAL
      // holding the prepare still exists.
      Slice xid_slice;
      if (!GetLengthPrefixedSlice(&in, &xid_slice)) return Status::Corruption(fname, where + ": short xid");
      std::string xid(xid_slice);
      if (type == kWalPrepare) {
        WriteBatch batch;
        s = WriteBatch::FromData(in, &batch);
        if (!s.ok()) return Status::Corruption(fname, where + ": " + s.message());
        recovered_prepared_[xid] = std::string(in);
        continue;
      }
      recovered_prepared_.erase(xid);
      if (type == kWalRollbackPrepared) continue;
    } else if (type != kWalWriteBatch) {
      return Status::Corruption(fname, where + ": unknown WAL record type");
    }
    uint64_t first_seq = 0;
    if (!GetFixed64(&in, &first_seq)) return Status::Corruption(fname, where + ": short WAL record");
    WriteBatch batch;
    s = WriteBatch::FromData(in, &batch);
    if (!s.ok()) return Status::Corruption(fname, where + ": " + s.message());
    s = take_sequences(where, first_seq, batch.Count());
    if (!s.ok()) return s;
    Inserter inserter;
    inserter.db = this;
    inserter.seq = first_seq;
    s = batch.Iterate(&inserter);
    if (!s.ok()) return Status::Corruption(fname, where + ": " + s.message());
    if (batch.Count() > 0) {
      last_sequence_ = std::max(last_sequence_.load(), first_seq + batch.Count() - 1);
      replayed_sequence_ = std::max(replayed_sequence_, first_seq + batch.Count() - 1);
    }
    // Keep recovery's memory bounded: flush a memtable that filled up. Its end is what has
    // been replayed so far, not last_sequence_: the manifest may record a later sequence
    // whose entries are still ahead in the WAL (they must not count as flushed).
    for (auto& slot : slots_) {
      if (slot->active.mem->ApproximateMemoryUsage() >= slot->write_buffer_size) {
        MemTableEntry frozen = slot->active;
        frozen.end_sequence = replayed_sequence_;
        slot->immutables.push_back(frozen);
        slot->active.mem = NewMemTable(slot->write_buffer_size);
        slot->active.wal_number = number;
        s = FlushOneLocked(lock, slot.get());
        if (!s.ok()) return s;
      }
    }
  }
  if (reader->torn_tail()) {
    if (!is_last) {
      return Status::Corruption(fname, "offset " + std::to_string(reader->valid_end_offset()) +
                                           ": damaged record in a WAL that is not the newest");
    }
    // The tail was being written when the process or machine died, or (lost unsynced
    // write) a power loss kept a later unsynced page and lost an earlier one. Either way no
    // sync covered it, so no commit in it was acknowledged as durable. Cut it off, so the
    // records past the damage can never come back after the commits that follow.
    const uint64_t cut = reader->valid_end_offset();
    // Durably: this WAL stops being the newest once recovery starts the next one, and the
    // manifest keeps naming it until recovery's last edit is durable; a tail coming back
    // after a power loss in between (preallocated zeros, say) would then be a damaged
    // tail in an older WAL: Corruption at every later open.
    s = CutWalDurably(fname, cut);
    if (!s.ok()) return s;
    if (reader->zero_tail()) {
      Log(LogLevel::kInfo, "recovery: %s: %llu zero bytes (preallocated, never written) cut at offset %llu",
          fname.c_str(), static_cast<unsigned long long>(reader->file_size() - cut),
          static_cast<unsigned long long>(cut));
    } else if (reader->lost_unsynced_write()) {
      Log(LogLevel::kWarn,
          "recovery: %s: offset %llu: %s, followed by %llu bytes of records that were never synced (lost at "
          "a power loss); cut at offset %llu, keeping every commit synced before it",
          fname.c_str(), static_cast<unsigned long long>(cut), reader->damage(),
          static_cast<unsigned long long>(reader->file_size() - cut), static_cast<unsigned long long>(cut));
    } else {
      Log(LogLevel::kWarn, "recovery: %s ended in a torn record; cut at offset %llu", fname.c_str(),
          static_cast<unsigned long long>(cut));
    }
  }
  return Status::OK();
}

// ------------------------------------------------------------------------------- manifest

void DBImpl::BuildSnapshotEditLocked(VersionEdit* edit) const {
  edit->SetNextFileNumber(next_file_number_);
  edit->SetLastSequence(last_sequence_);
  edit->SetWalNumber(MinLiveWalNumberLocked());
  edit->SetMaxColumnFamily(max_cf_id_);
  for (const auto& [id, cfd] : cfs_) {
    edit->AddColumnFamily(id, cfd->name, cfd->options);
    edit->SetFlushedSequence(id, cfd->flushed_sequence);
    const Version& v = *cfd->version;
    for (size_t level = 0; level < v.levels.size(); ++level) {
      // L0 is newest first in memory and replayed by prepending: log oldest first.
      const auto& files = v.levels[level];
      for (size_t i = 0; i < files.size(); ++i) {
        const auto& f = level == 0 ? files[files.size() - 1 - i] : files[i];
        edit->AddFile(id, static_cast<int>(level), *f);
      }
    }
    for (const auto& vl : v.value_logs) edit->AddValueLog(id, vl->file_number, vl->file_size);
  }
}

Status DBImpl::WriteManifestFile(const std::string& dir, uint64_t number, const VersionEdit& edit,
                                 std::unique_ptr<LogWriter>* out) {
  const std::string fname = ManifestFileName(dir, number);
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(fname, EnvOptions{}, &file);
  if (!s.ok()) return s;
  auto writer = std::make_unique<LogWriter>(std::move(file), LogKind::kManifest, number);
  std::string record;
  edit.EncodeTo(&record);
  s = writer->AddRecord(kManifestEditRecord, record);
  if (s.ok()) s = writer->Sync();
  // CURRENT is replaced atomically: a crash leaves the old or the new manifest in force.
  const std::string tmp = CurrentFileName(dir) + ".tmp";
  char name[64];
  std::snprintf(name, sizeof(name), "MANIFEST-%06llu\n", static_cast<unsigned long long>(number));
  if (s.ok()) s = WriteStringToFile(env_, name, tmp, true);
  if (s.ok()) s = env_->RenameFile(tmp, CurrentFileName(dir));
  // Once renamed, CURRENT names the new manifest (durably or not): it must stay.
  const bool installed = s.ok();
  if (s.ok()) s = env_->SyncDir(dir);
  if (!s.ok()) {
    writer->Close();
    if (!installed) env_->RemoveFile(fname);
    return s;
  }
  *out = std::move(writer);
  return Status::OK();
}

DBImpl::ManifestOwner::ManifestOwner(DBImpl* db, std::unique_lock<std::mutex>& l) : db_(db), l_(l) {
  db->manifest_cv_.wait(l, [db] { return !db->manifest_owned_; });
  db->manifest_owned_ = true;
}

DBImpl::ManifestOwner::~ManifestOwner() {
  std::unique_lock<std::mutex> relock(db_->mutex_, std::defer_lock);
  if (!l_.owns_lock()) relock.lock();
  db_->manifest_owned_ = false;
  db_->manifest_cv_.notify_all();
}

Status DBImpl::WriteSnapshotManifest(std::unique_lock<std::mutex>& l) {
  const uint64_t number = next_file_number_++;
  VersionEdit edit;
  BuildSnapshotEditLocked(&edit);
  std::unique_ptr<LogWriter> writer;
  l.unlock();
  Status s = WriteManifestFile(dbname_, number, edit, &writer);
  l.lock();
  if (!s.ok()) {
    // CURRENT may already name the new manifest: the old one must get no more edits. The
    // next edit writes a fresh snapshot.
    if (manifest_) manifest_->Close();
    manifest_.reset();
    return s;
  }
  if (edit.wal_number()) logged_wal_number_ = *edit.wal_number();
  // The manifest in force now holds exactly the in-memory state (as the owner, nothing it
  // records has changed since it was built): an edit that failed earlier is settled as
  // never applied, and the files kept for it may go.
  if (!manifest_error_.ok()) Log(LogLevel::kInfo, "manifest rewritten; writes accepted again");
  manifest_error_ = Status::OK();
  unresolved_files_.clear();
  uint64_t old = manifest_number_;
  if (manifest_) manifest_->Close();
  manifest_ = std::move(writer);
  manifest_number_ = number;
  manifest_size_ = manifest_->size();
  if (old != 0) env_->RemoveFile(ManifestFileName(dbname_, old));
  return Status::OK();
}

Status DBImpl::LogAndApply(std::unique_lock<std::mutex>& l, VersionEdit* edit, bool* outcome_unknown) {
  assert(manifest_owned_);
  if (outcome_unknown != nullptr) *outcome_unknown = false;
  Status s;
  if (!manifest_ || !manifest_->status().ok() || manifest_size_ > max_manifest_bytes_) {
    s = WriteSnapshotManifest(l);
    if (!s.ok()) return s;
  }
  edit->SetMaxColumnFamily(max_cf_id_);
  std::string record;
  edit->EncodeTo(&record);
  // Only the owner touches manifest_, so its I/O needs no mutex_.
  l.unlock();
  s = manifest_->AddRecord(kManifestEditRecord, record);
  if (s.ok()) s = manifest_->Sync();
  l.lock();
  if (!s.ok()) {
    // The manifest may now end in a partial record, or in the whole edit (a failed fsync
    // follows a successful write, and closing writes out what was buffered). Either may be
    // what the next open reads: the next edit starts a new manifest, and until one is
    // durable nothing may depend on the edit having failed.
    manifest_->Close();
    manifest_.reset();
    if (outcome_unknown != nullptr) *outcome_unknown = true;
    // A full disk stays NoSpace: writes succeed again once space is freed.
    const char* what =
        "manifest write failed, so a change may or may not take effect at the next open; writes are refused "
        "until a new manifest is written (or the database is reopened)";
    manifest_error_ =
        s.IsNoSpace() ? Status::NoSpace(what, s.ToString()) : Status::IOError(what, s.ToString());
    Log(LogLevel::kError, "%s", manifest_error_.ToString().c_str());
    return s;
  }
  manifest_size_ = manifest_->size();
  if (edit->wal_number()) logged_wal_number_ = std::max(logged_wal_number_, *edit->wal_number());
  return Status::OK();
}

Status DBImpl::ResolveManifestErrorLocked(std::unique_lock<std::mutex>& l) {
  if (manifest_error_.ok()) return Status::OK();
  ManifestOwner owner(this, l);
  if (manifest_error_.ok()) return Status::OK();  // settled while this waited
  const Status error = manifest_error_;
  Status s = WriteSnapshotManifest(l);  // clears manifest_error_ when durable
  return s.ok() ? Status::OK() : error;
}

// ------------------------------------------------------------------------- file lifetime

std::shared_ptr<const FileMetaData> DBImpl::TrackFile(const FileMetaData& meta) {
  std::shared_ptr<ObsoleteFiles> obsolete = obsolete_;
  obsolete->live.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<const FileMetaData>(new FileMetaData(meta), [obsolete](const FileMetaData* f) {
    obsolete->live.fetch_sub(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> l(obsolete->mu);
      if (!obsolete->db_closing) obsolete->files.emplace_back(f->file_number, FileType::kKeyLog);
    }
    delete f;
  });
}

std::shared_ptr<const ValueLogMeta> DBImpl::TrackValueLog(uint64_t number, uint64_t size) {
  std::shared_ptr<ObsoleteFiles> obsolete = obsolete_;
  obsolete->live.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<const ValueLogMeta>(
      new ValueLogMeta{number, size}, [obsolete](const ValueLogMeta* v) {
        obsolete->live.fetch_sub(1, std::memory_order_relaxed);
        {
          std::lock_guard<std::mutex> l(obsolete->mu);
          if (!obsolete->db_closing) obsolete->files.emplace_back(v->file_number, FileType::kValueLog);
        }
        delete v;
      });
}

void DBImpl::AddWalFileLocked(uint64_t number, uint64_t bytes) {
  auto [it, added] = wal_files_.emplace(number, bytes);
  if (!added) {
    closed_wal_bytes_ -= it->second;
    it->second = bytes;
  }
  closed_wal_bytes_ += bytes;
}

void DBImpl::RemoveWalFileLocked(std::map<uint64_t, uint64_t>::iterator it) {
  closed_wal_bytes_ -= it->second;
  wal_files_.erase(it);
}

uint64_t DBImpl::MinLiveWalNumberLocked() const {
  uint64_t min = wal_number_;
  for (const auto& [xid, number] : prepared_wal_) min = std::min(min, number);
  for (const auto& slot : slots_) {
    if (!slot->active.mem->empty()) min = std::min(min, slot->active.wal_number);
    for (const auto& imm : slot->immutables) min = std::min(min, imm.wal_number);
  }
  return min;
}

void DBImpl::DeleteObsoleteFiles() {
  std::vector<std::pair<uint64_t, FileType>> files;
  {
    std::lock_guard<std::mutex> l(obsolete_->mu);
    files.swap(obsolete_->files);
  }
  for (const auto& [number, type] : files) {
    table_cache_->Evict(number);
    env_->RemoveFile(type == FileType::kKeyLog ? KeyLogFileName(dbname_, number)
                                               : ValueLogFileName(dbname_, number));
  }
  std::vector<uint64_t> wals;
  {
    std::lock_guard<std::mutex> l(mutex_);
    uint64_t min = std::min({MinLiveWalNumberLocked(), logged_wal_number_, checkpoint_wal_pin_});
    while (!wal_files_.empty() && wal_files_.begin()->first < min) {
      wals.push_back(wal_files_.begin()->first);
      RemoveWalFileLocked(wal_files_.begin());
    }
  }
  for (uint64_t n : wals) env_->RemoveFile(WalFileName(dbname_, n));
}

void DBImpl::MarkDamagedLocked(ColumnFamilyData* cfd, const Status& status) {
  if (!cfd->damage.ok()) return;
  cfd->damage = Status::Corruption("column family '" + cfd->name + "' is damaged", status.ToString());
  Log(LogLevel::kError, "%s; it refuses writes and is not compacted until it is dropped",
      cfd->damage.ToString().c_str());
  UpdateL0StatsLocked();
}

Status DBImpl::CheckRecoveredFilesLocked() {
  auto check = [&](const std::string& fname, uint64_t expected_size) -> Status {
    if (!env_->FileExists(fname)) return Status::Corruption(fname, "is live in the manifest but missing");
    uint64_t size = 0;
    Status s = env_->GetFileSize(fname, &size);
    if (!s.ok()) return s;
    if (size < expected_size) {
      return Status::Corruption(fname, "is " + std::to_string(size) + " bytes, shorter than the " +
                                           std::to_string(expected_size) + " the manifest records");
    }
    return Status::OK();
  };
  for (const auto& [id, cfd] : cfs_) {
    Status s;
    for (const auto& level : cfd->version->levels) {
      for (const auto& f : level) {
        if (s.ok()) s = check(KeyLogFileName(dbname_, f->file_number), f->file_size);
      }
    }
    for (const auto& vl : cfd->version->value_logs) {
      if (s.ok()) s = check(ValueLogFileName(dbname_, vl->file_number), vl->file_size);
    }
    if (s.ok()) continue;
    if (!s.IsCorruption() || !options_.open_damaged_column_families) return s;
    MarkDamagedLocked(cfd.get(), s);
  }
  // A WAL is deleted only after a durable manifest edit moved past it, so the oldest WAL the
  // manifest needs exists, unless the manifest lost its last edits (a damaged final record
  // read as a torn tail) or the WAL was removed by hand.
  if (wal_number_ != 0 && !env_->FileExists(WalFileName(dbname_, wal_number_))) {
    return Status::Corruption(WalFileName(dbname_, wal_number_),
                              "is missing, but the manifest needs it (edits lost from the manifest?)");
  }
  return Status::OK();
}

Status DBImpl::DeleteOrphanFiles() {
  std::vector<std::string> children;
  Status s = env_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  std::set<uint64_t> live_klogs, live_vlogs;
  uint64_t min_wal;
  {
    std::lock_guard<std::mutex> l(mutex_);
    for (const auto& [id, cfd] : cfs_) {
      for (const auto& level : cfd->version->levels) {
        for (const auto& f : level) live_klogs.insert(f->file_number);
      }
      for (const auto& vl : cfd->version->value_logs) live_vlogs.insert(vl->file_number);
    }
    min_wal = std::min(MinLiveWalNumberLocked(), logged_wal_number_);
  }
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool remove = false;
    switch (type) {
      case FileType::kKeyLog:
        remove = live_klogs.count(number) == 0;
        break;
      case FileType::kValueLog:
        remove = live_vlogs.count(number) == 0;
        break;
      case FileType::kWal:
        remove = number < min_wal;
        break;
      case FileType::kManifest:
        remove = number != manifest_number_;
        break;
      case FileType::kTemp:
        remove = true;
        break;
      default:
        break;
    }
    if (remove) {
      env_->RemoveFile(dbname_ + "/" + name);
      if (type == FileType::kWal) {
        std::lock_guard<std::mutex> l(mutex_);
        auto it = wal_files_.find(number);
        if (it != wal_files_.end()) RemoveWalFileLocked(it);
      }
    }
  }
  return Status::OK();
}

// ------------------------------------------------------------------------ column families

ColumnFamilyData* DBImpl::LiveCfd(ColumnFamilyHandle* handle) const {
  if (handle == nullptr) return nullptr;
  auto it = cfs_.find(handle->id());
  if (it == cfs_.end() || &it->second->handle != handle) return nullptr;
  return it->second.get();
}

ColumnFamilyHandle* DBImpl::DefaultColumnFamily() const {
  std::lock_guard<std::mutex> l(mutex_);
  return &cfs_.at(0)->handle;
}

ColumnFamilyHandle* DBImpl::GetColumnFamily(const std::string& name) const {
  std::lock_guard<std::mutex> l(mutex_);
  auto it = cf_by_name_.find(name);
  return it == cf_by_name_.end() ? nullptr : &it->second->handle;
}

std::vector<std::string> DBImpl::ListColumnFamilies() const {
  std::lock_guard<std::mutex> l(mutex_);
  std::vector<std::string> names;
  for (const auto& [id, cfd] : cfs_) names.push_back(cfd->name);
  return names;
}

Status DBImpl::CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                                  ColumnFamilyHandle** handle) {
  if (handle == nullptr) return Status::InvalidArgument("null handle pointer");
  *handle = nullptr;
  if (name.empty() || name.size() > 1024)
    return Status::InvalidArgument("column family name must be 1..1024 bytes");
  return WriteImpl(WriteOptions(), nullptr, [&]() -> Status {
    std::unique_lock<std::mutex> l(mutex_);
    ManifestOwner owner(this, l);
    if (cf_by_name_.count(name) != 0) return Status::InvalidArgument("column family exists", name);
    if (max_cf_id_ == UINT32_MAX) return Status::NotSupported("column family ids exhausted");
    const uint32_t id = max_cf_id_ + 1;
    VersionEdit edit;
    edit.AddColumnFamily(id, name, options);
    max_cf_id_ = id;  // never reused, even if the edit fails
    Status s = LogAndApply(l, &edit);
    if (!s.ok()) return s;
    ColumnFamilyData* cfd = CreateCfdLocked(id, name, options);
    cfd->flushed_sequence = last_sequence_;  // it has no entries in any older WAL
    *handle = &cfd->handle;
    return Status::OK();
  });
}

Status DBImpl::DropColumnFamily(ColumnFamilyHandle* handle) {
  Status s = WriteImpl(WriteOptions(), nullptr, [&]() -> Status {
    std::unique_lock<std::mutex> l(mutex_);
    ManifestOwner owner(this, l);
    ColumnFamilyData* cfd = LiveCfd(handle);
    if (cfd == nullptr) return Status::InvalidArgument("column family was dropped or is unknown");
    if (cfd->id == 0) return Status::InvalidArgument("the default column family cannot be dropped");
    VersionEdit edit;
    edit.DropColumnFamily(cfd->id);
    Status st = LogAndApply(l, &edit);
    if (!st.ok()) return st;
    cfd->dropped = true;
    // Its files go once no iterator reads them; its memtable entries are never flushed.
    cfd->version = std::make_shared<Version>();
    cfd->read_view.Store(nullptr);  // a read that loads it sees the drop
    if (!unified_slot_) std::erase(slots_, cfd->slot);
    cf_by_name_.erase(cfd->name);
    auto it = cfs_.find(cfd->id);
    dropped_cfs_.push_back(std::move(it->second));
    cfs_.erase(it);
    return Status::OK();
  });
  if (s.ok()) DeleteObsoleteFiles();
  return s;
}

Status DestroyDB(const std::string& path, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<std::string> children;
  Status s = env->GetChildren(path, &children);
  if (!s.ok()) return s.IsNotFound() ? Status::OK() : s;
  std::unique_ptr<FileLock> lock;
  s = env->LockFile(LockFileName(path), &lock);
  if (!s.ok()) return s;
  for (const auto& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type != FileType::kLock) env->RemoveFile(path + "/" + name);
    if (name == "CURRENT.tmp") env->RemoveFile(path + "/" + name);
  }
  lock.reset();
  env->RemoveFile(LockFileName(path));
  env->RemoveDir(path);
  return Status::OK();
}

// ------------------------------------------------------------------------------- logging

void DBImpl::Log(LogLevel level, const char* format, ...) {
  if (level < options_.log_level || level == LogLevel::kNone) return;
  char buf[1024];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(buf, sizeof(buf), format, ap);
  va_end(ap);
  if (n < 0) return;
  const std::string_view message(buf, std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
  if (options_.logger) {
    options_.logger(level, message);
    return;
  }
  static const char* const kNames[] = {"DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
  const uint64_t micros = env_->NowMicros();
  const std::time_t secs = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ %-5s ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<unsigned>(micros % 1000000), kNames[static_cast<int>(level)]);
  std::string line = prefix;
  line.append(message);
  line.push_back('\n');
  std::lock_guard<std::mutex> l(log_mu_);
  if (log_unavailable_) return;
  if (!log_file_) {
    EnvOptions eo;
    eo.buffered_writes = false;
    if (!env_->NewAppendableFile(InfoLogFileName(dbname_), eo, &log_file_).ok()) {
      log_file_.reset();
      log_unavailable_ = true;  // e.g. a read-only directory: the database still works
      return;
    }
  }
  if (!log_file_->Append(line).ok()) log_unavailable_ = true;
}

}  // namespace tidesdb
