#include "txn/write_set.h"

namespace tidesdb {

size_t WriteSet::BytesAfterWrite(uint32_t cf_id, Slice key, size_t value_size) const {
  size_t after = bytes_ + key.size() + value_size + kEntryOverheadBytes;
  if (const WriteEntry* e = Find(cf_id, key)) after -= Charge(key.size(), *e);
  return after;
}

const WriteEntry* WriteSet::Find(uint32_t cf_id, Slice key) const {
  auto cf = cfs_.find(cf_id);
  if (cf == cfs_.end()) return nullptr;
  auto it = cf->second.find(key);
  return it == cf->second.end() ? nullptr : &it->second;
}

const WriteSet::CfMap* WriteSet::ForCf(uint32_t cf_id) const {
  auto cf = cfs_.find(cf_id);
  return cf == cfs_.end() ? nullptr : &cf->second;
}

void WriteSet::Write(uint32_t cf_id, Slice key, WriteEntry entry) {
  CfMap& map = cfs_[cf_id];
  auto it = map.find(key);
  if (it == map.end()) {
    if (!savepoints_.empty()) undo_.push_back(Undo{cf_id, std::string(key), std::nullopt});
    bytes_ += Charge(key.size(), entry);
    count_++;
    map.emplace(std::string(key), std::move(entry));
    return;
  }
  if (!savepoints_.empty()) undo_.push_back(Undo{cf_id, std::string(key), it->second});
  bytes_ -= Charge(key.size(), it->second);
  bytes_ += Charge(key.size(), entry);
  it->second = std::move(entry);
}

Status WriteSet::RollbackToSavepoint() {
  if (savepoints_.empty()) return Status::NotFound("no savepoint is set");
  const size_t mark = savepoints_.back();
  savepoints_.pop_back();
  while (undo_.size() > mark) {
    Undo& u = undo_.back();
    CfMap& map = cfs_[u.cf_id];
    auto it = map.find(u.key);
    // The key is in the map: every undo record describes a write that put it there.
    bytes_ -= Charge(u.key.size(), it->second);
    if (u.previous) {
      bytes_ += Charge(u.key.size(), *u.previous);
      it->second = std::move(*u.previous);
    } else {
      map.erase(it);
      count_--;
      if (map.empty()) cfs_.erase(u.cf_id);
    }
    undo_.pop_back();
  }
  if (savepoints_.empty()) undo_.clear();
  return Status::OK();
}

Status WriteSet::ReleaseSavepoint() {
  if (savepoints_.empty()) return Status::NotFound("no savepoint is set");
  savepoints_.pop_back();
  // An enclosing savepoint still needs the records; without one nothing does.
  if (savepoints_.empty()) undo_.clear();
  return Status::OK();
}

void WriteSet::BuildBatch(WriteBatch* batch) const {
  for (const auto& [cf_id, map] : cfs_) {
    for (const auto& [key, e] : map) {
      if (e.deleted) {
        batch->Delete(cf_id, key);
      } else {
        batch->Put(cf_id, key, e.value);
      }
    }
  }
}

void WriteSet::Clear() {
  cfs_.clear();
  bytes_ = 0;
  count_ = 0;
  undo_.clear();
  savepoints_.clear();
}

}  // namespace tidesdb
