#include "db/table_cache.h"

#include "cache/block_cache.h"
#include "db/filename.h"
#include "sst/table_reader.h"
#include "sst/value_log.h"

namespace tidesdb {

TableCache::TableCache(Env* env, std::string dbname, BlockCache* block_cache, size_t capacity)
    : env_(env),
      dbname_(std::move(dbname)),
      block_cache_(block_cache),
      capacity_(capacity < 1 ? 1 : capacity) {}

TableCache::~TableCache() = default;

void TableCache::InsertLocked(uint64_t file_number, Entry entry) {
  // Two threads may have opened the same file at once: the later insert replaces.
  auto existing = map_.find(file_number);
  if (existing != map_.end()) {
    lru_.erase(existing->second.lru_pos);
    map_.erase(existing);
  }
  lru_.push_front(file_number);
  entry.lru_pos = lru_.begin();
  map_[file_number] = std::move(entry);
  while (map_.size() > capacity_) {
    uint64_t victim = lru_.back();
    lru_.pop_back();
    map_.erase(victim);
  }
}

namespace {
// Callers ask only for files live in the manifest: one that is gone is damage, never a key
// that is not found.
Status LiveFileStatus(const std::string& fname, Status s) {
  if (s.IsNotFound()) return Status::Corruption(fname, "is live in the manifest but missing");
  return s;
}
}  // namespace

Status TableCache::GetTable(uint64_t file_number, uint64_t file_size, std::shared_ptr<TableReader>* table) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = map_.find(file_number);
    if (it != map_.end() && it->second.table) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      *table = it->second.table;
      return Status::OK();
    }
  }
  // Open outside the lock: it does I/O.
  std::string fname = KeyLogFileName(dbname_, file_number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = LiveFileStatus(fname, env_->NewRandomAccessFile(fname, &file));
  if (!s.ok()) return s;
  std::unique_ptr<TableReader> reader;
  s = TableReader::Open(fname, file_number, std::move(file), file_size, block_cache_, &reader);
  if (!s.ok()) return s;
  std::shared_ptr<TableReader> shared(std::move(reader));
  std::lock_guard<std::mutex> l(mu_);
  Entry e;
  e.table = shared;
  InsertLocked(file_number, std::move(e));
  *table = std::move(shared);
  return Status::OK();
}

Status TableCache::GetValueLog(uint64_t file_number, std::shared_ptr<ValueLogReader>* vlog) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = map_.find(file_number);
    if (it != map_.end() && it->second.vlog) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      *vlog = it->second.vlog;
      return Status::OK();
    }
  }
  std::string fname = ValueLogFileName(dbname_, file_number);
  uint64_t size = 0;
  Status s = LiveFileStatus(fname, env_->GetFileSize(fname, &size));
  if (!s.ok()) return s;
  std::unique_ptr<RandomAccessFile> file;
  s = LiveFileStatus(fname, env_->NewRandomAccessFile(fname, &file));
  if (!s.ok()) return s;
  std::unique_ptr<ValueLogReader> reader;
  s = ValueLogReader::Open(fname, file_number, std::move(file), size, &reader);
  if (!s.ok()) return s;
  std::shared_ptr<ValueLogReader> shared(std::move(reader));
  std::lock_guard<std::mutex> l(mu_);
  Entry e;
  e.vlog = shared;
  InsertLocked(file_number, std::move(e));
  *vlog = std::move(shared);
  return Status::OK();
}

Status TableCache::GetValue(const ValuePointer& ptr, bool fill_cache, std::string* value,
                            std::shared_ptr<const std::string>* pinned) {
  if (block_cache_ != nullptr) {
    if (auto cached = block_cache_->Lookup<std::string>(ptr.file_number, ptr.offset)) {
      if (pinned != nullptr) {
        *pinned = std::move(cached);
      } else {
        value->assign(*cached);
      }
      return Status::OK();
    }
  }
  std::shared_ptr<ValueLogReader> reader;
  Status s = GetValueLog(ptr.file_number, &reader);
  if (s.ok()) s = reader->Get(ptr, value);
  if (!s.ok() || !fill_cache || block_cache_ == nullptr) return s;
  std::shared_ptr<const std::string> shared;
  if (pinned != nullptr) {
    shared = std::make_shared<const std::string>(std::move(*value));
    *pinned = shared;
  } else {
    shared = std::make_shared<const std::string>(*value);
  }
  block_cache_->Insert(ptr.file_number, ptr.offset, shared, shared->capacity() + sizeof(std::string) + 64);
  return s;
}

void TableCache::Evict(uint64_t file_number) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = map_.find(file_number);
    if (it != map_.end()) {
      lru_.erase(it->second.lru_pos);
      map_.erase(it);
    }
  }
  if (block_cache_ != nullptr) block_cache_->EraseFile(file_number);
}

size_t TableCache::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return map_.size();
}

}  // namespace tidesdb
