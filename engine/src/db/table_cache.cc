#include "db/table_cache.h"

#include <algorithm>

#include "cache/block_cache.h"
#include "db/filename.h"
#include "sst/table_reader.h"
#include "sst/value_log.h"

namespace tidesdb {

TableCache::TableCache(Env* env, std::string dbname, BlockCache* block_cache, size_t capacity)
    : env_(env), dbname_(std::move(dbname)), block_cache_(block_cache) {
  capacity = std::max<size_t>(capacity, 1);
  capacity_ = capacity;
  // At least kMinPerShard readers a shard, so that a few hot files that hash to one shard
  // do not evict each other while other shards have room (a small cache is one shard).
  const size_t n = std::clamp<size_t>(capacity / kMinPerShard, 1, kMaxShards);
  for (size_t i = 0; i < n; ++i) {
    shards_.push_back(std::make_unique<Shard>());
    shards_.back()->capacity = capacity / n + (i < capacity % n ? 1 : 0);
  }
}

TableCache::~TableCache() = default;

TableCache::Entry* TableCache::Shard::FindLocked(uint64_t file_number) {
  auto it = map.find(file_number);
  if (it == map.end()) return nullptr;
  lru.splice(lru.begin(), lru, it->second.lru_pos);
  return &it->second;
}

void TableCache::Shard::InsertLocked(uint64_t file_number, Entry entry) {
  // Two threads may have opened the same file at once: the later insert replaces.
  auto existing = map.find(file_number);
  if (existing != map.end()) {
    lru.erase(existing->second.lru_pos);
    map.erase(existing);
  }
  lru.push_front(file_number);
  entry.lru_pos = lru.begin();
  map[file_number] = std::move(entry);
  while (map.size() > capacity) {
    uint64_t victim = lru.back();
    lru.pop_back();
    map.erase(victim);
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
  Shard& shard = ShardOf(file_number);
  {
    std::lock_guard<std::mutex> l(shard.mu);
    Entry* e = shard.FindLocked(file_number);
    if (e != nullptr && e->table) {
      *table = e->table;
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
  std::lock_guard<std::mutex> l(shard.mu);
  Entry e;
  e.table = shared;
  shard.InsertLocked(file_number, std::move(e));
  *table = std::move(shared);
  return Status::OK();
}

Status TableCache::GetValueLog(uint64_t file_number, std::shared_ptr<ValueLogReader>* vlog) {
  Shard& shard = ShardOf(file_number);
  {
    std::lock_guard<std::mutex> l(shard.mu);
    Entry* e = shard.FindLocked(file_number);
    if (e != nullptr && e->vlog) {
      *vlog = e->vlog;
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
  std::lock_guard<std::mutex> l(shard.mu);
  Entry e;
  e.vlog = shared;
  shard.InsertLocked(file_number, std::move(e));
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
    Shard& shard = ShardOf(file_number);
    std::lock_guard<std::mutex> l(shard.mu);
    auto it = shard.map.find(file_number);
    if (it != shard.map.end()) {
      shard.lru.erase(it->second.lru_pos);
      shard.map.erase(it);
    }
  }
  if (block_cache_ != nullptr) block_cache_->EraseFile(file_number);
}

size_t TableCache::size() const {
  size_t n = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> l(shard->mu);
    n += shard->map.size();
  }
  return n;
}

}  // namespace tidesdb
