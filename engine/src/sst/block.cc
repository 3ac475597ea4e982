#include "sst/block.h"

#include <limits>

#include "db/dbformat.h"
#include "util/coding.h"

namespace tidesdb {

Block::Block(std::string contents) : data_(std::move(contents)) {
  const size_t size = data_.size();
  if (size < sizeof(uint32_t) || size > std::numeric_limits<uint32_t>::max()) return;
  const uint32_t num_restarts = DecodeFixed32(data_.data() + size - 4);
  const size_t max_restarts = (size - 4) / 4;
  if (num_restarts == 0 || num_restarts > max_restarts) return;
  const uint32_t restarts_offset = static_cast<uint32_t>(size - 4 - size_t{4} * num_restarts);
  // Restart offsets must start at 0 and increase strictly inside the entry area, so that
  // iterators may trust them. An empty block has exactly one restart, at 0.
  if (restarts_offset == 0 && num_restarts != 1) return;
  uint32_t prev = 0;
  for (uint32_t i = 0; i < num_restarts; ++i) {
    const uint32_t r = DecodeFixed32(data_.data() + restarts_offset + size_t{4} * i);
    if (i == 0 ? r != 0 : (r <= prev || r >= restarts_offset)) return;
    prev = r;
  }
  restarts_offset_ = restarts_offset;
  num_restarts_ = num_restarts;
  restarts_offset_valid_ = true;
}

namespace {

// Decodes the header of the entry at p; returns a pointer to its key bytes, or nullptr if
// the header is malformed or the entry does not fit before limit.
const char* DecodeEntry(const char* p, const char* limit, uint32_t* shared, uint32_t* unshared,
                        uint32_t* value_length) {
  if (limit - p < 3) return nullptr;
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  if ((u[0] | u[1] | u[2]) < 128) {  // all three varints are one byte (the common case)
    *shared = u[0];
    *unshared = u[1];
    *value_length = u[2];
    p += 3;
  } else {
    if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, unshared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, value_length)) == nullptr) return nullptr;
  }
  if (static_cast<uint64_t>(limit - p) < uint64_t{*unshared} + *value_length) return nullptr;
  return p;
}

// The last restart point whose key is < target (0 if none is), by binary search over the
// restart array at data + restarts; the first entry >= target is in the run that starts
// there or at the next restart point. False if a restart entry is malformed.
bool FindRestartRun(const char* data, uint32_t restarts, uint32_t num_restarts, Slice target, uint32_t* run) {
  uint32_t left = 0;
  uint32_t right = num_restarts - 1;
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    const uint32_t offset = DecodeFixed32(data + restarts + size_t{4} * mid);
    uint32_t shared, unshared, value_length;
    const char* key_ptr = DecodeEntry(data + offset, data + restarts, &shared, &unshared, &value_length);
    if (key_ptr == nullptr || shared != 0 || unshared < 8) return false;
    if (CompareInternalKey(Slice(key_ptr, unshared), target) < 0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  *run = left;
  return true;
}

class BlockIterator final : public InternalIterator {
 public:
  BlockIterator(const char* data, uint32_t restarts_offset, uint32_t num_restarts)
      : data_(data),
        restarts_(restarts_offset),
        num_restarts_(num_restarts),
        current_(restarts_offset),
        restart_index_(num_restarts) {}

  bool Valid() const override { return current_ < restarts_; }
  Slice key() const override { return key_; }
  Slice value() const override { return value_; }
  Status status() const override { return status_; }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    SeekToRestartPoint(0);
    ParseNextKey();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    SeekToRestartPoint(num_restarts_ - 1);
    while (ParseNextKey() && NextEntryOffset() < restarts_) {
    }
  }

  void Seek(Slice target) override {
    if (!status_.ok()) return;
    uint32_t run;
    if (!FindRestartRun(data_, restarts_, num_restarts_, target, &run)) {
      CorruptionError("bad entry at restart point");
      return;
    }
    SeekToRestartPoint(run);
    while (ParseNextKey()) {
      if (CompareInternalKey(key_, target) >= 0) return;
    }
  }

  void SeekForPrev(Slice target) override {
    if (!status_.ok()) return;
    Seek(target);
    if (!status_.ok()) return;
    if (!Valid()) {
      SeekToLast();
    } else if (CompareInternalKey(key_, target) > 0) {
      Prev();
    }
  }

  void Next() override {
    if (!Valid()) return;
    ParseNextKey();
  }

  void Prev() override {
    if (!Valid()) return;
    // Back up to the restart point before the current entry, then walk forward to the
    // entry that ends where the current one begins.
    const uint32_t original = current_;
    while (RestartPoint(restart_index_) >= original) {
      if (restart_index_ == 0) {
        MarkInvalid();
        return;
      }
      --restart_index_;
    }
    SeekToRestartPoint(restart_index_);
    while (ParseNextKey() && NextEntryOffset() < original) {
    }
  }

 private:
  uint32_t RestartPoint(uint32_t index) const { return DecodeFixed32(data_ + restarts_ + size_t{4} * index); }

  uint32_t NextEntryOffset() const { return static_cast<uint32_t>(value_.data() + value_.size() - data_); }

  void SeekToRestartPoint(uint32_t index) {
    key_.clear();
    restart_index_ = index;
    // ParseNextKey starts at NextEntryOffset(), i.e. the end of value_.
    value_ = Slice(data_ + RestartPoint(index), 0);
  }

  void MarkInvalid() {
    current_ = restarts_;
    restart_index_ = num_restarts_;
    key_.clear();
    value_ = Slice();
  }

  void CorruptionError(const char* what) {
    MarkInvalid();
    status_ = Status::Corruption(what);
  }

  // Decodes the entry after the current one. False at the end of the block or on corruption.
  bool ParseNextKey() {
    current_ = NextEntryOffset();
    const char* p = data_ + current_;
    const char* limit = data_ + restarts_;
    if (p >= limit) {
      MarkInvalid();
      return false;
    }
    uint32_t shared, unshared, value_length;
    p = DecodeEntry(p, limit, &shared, &unshared, &value_length);
    if (p == nullptr || key_.size() < shared) {
      CorruptionError("bad entry in block");
      return false;
    }
    while (restart_index_ + 1 < num_restarts_ && RestartPoint(restart_index_ + 1) <= current_) {
      ++restart_index_;
    }
    if (shared != 0 && RestartPoint(restart_index_) == current_) {
      CorruptionError("bad entry at restart point");
      return false;
    }
    key_.resize(shared);
    key_.append(p, unshared);
    if (key_.size() < 8) {
      CorruptionError("block key shorter than an internal key");
      return false;
    }
    value_ = Slice(p + unshared, value_length);
    return true;
  }

  const char* const data_;
  const uint32_t restarts_;  // offset of the restart array; current_ == restarts_ means !Valid()
  const uint32_t num_restarts_;
  uint32_t current_;        // offset of the current entry
  uint32_t restart_index_;  // the restart run that holds current_
  std::string key_;
  Slice value_;
  Status status_;
};

}  // namespace

bool Block::RestartEntry(uint32_t i, Slice* key, Slice* value) const {
  if (!ok() || i >= num_restarts_) return false;
  const char* base = data_.data();
  const uint32_t offset = DecodeFixed32(base + restarts_offset_ + size_t{4} * i);
  uint32_t shared, unshared, value_length;
  const char* p = DecodeEntry(base + offset, base + restarts_offset_, &shared, &unshared, &value_length);
  if (p == nullptr || shared != 0 || unshared < 8) return false;
  *key = Slice(p, unshared);
  *value = Slice(p + unshared, value_length);
  return true;
}

uint32_t Block::LowerBoundRestart(Slice target) const {
  uint32_t left = 0;
  uint32_t right = num_restarts_;
  while (left < right) {
    const uint32_t mid = left + (right - left) / 2;
    Slice key, value;
    // A malformed entry (excluded by the caller's check) sorts as past the end.
    if (RestartEntry(mid, &key, &value) && CompareInternalKey(key, target) < 0) {
      left = mid + 1;
    } else {
      right = mid;
    }
  }
  return left;
}

Status Block::SeekEntry(Slice target, std::string* key, Slice* value, bool* found) const {
  *found = false;
  if (!ok()) return Status::Corruption("bad block restart array");
  const char* base = data_.data();
  uint32_t run;
  if (!FindRestartRun(base, restarts_offset_, num_restarts_, target, &run)) {
    return Status::Corruption("bad entry at restart point");
  }
  // The run's entries in order, each key rebuilt from its predecessor's (the first of a
  // run shares nothing), as far as the first one >= target: the runs after this one start
  // with keys >= target, so the scan ends within the next run at the latest.
  const char* limit = base + restarts_offset_;
  const char* p = base + DecodeFixed32(base + restarts_offset_ + size_t{4} * run);
  key->clear();
  for (bool first = true; p < limit; first = false) {
    uint32_t shared, unshared, value_length;
    const char* key_ptr = DecodeEntry(p, limit, &shared, &unshared, &value_length);
    if (key_ptr == nullptr || key->size() < shared || (first && shared != 0)) {
      return Status::Corruption("bad entry in block");
    }
    key->resize(shared);
    key->append(key_ptr, unshared);
    if (key->size() < 8) return Status::Corruption("block key shorter than an internal key");
    p = key_ptr + unshared + value_length;
    if (CompareInternalKey(*key, target) >= 0) {
      *value = Slice(key_ptr + unshared, value_length);
      *found = true;
      return Status::OK();
    }
  }
  return Status::OK();
}

std::unique_ptr<InternalIterator> Block::NewIterator() const {
  if (!ok())
    return std::unique_ptr<InternalIterator>(
        NewEmptyInternalIterator(Status::Corruption("bad block restart array")));
  return std::make_unique<BlockIterator>(data_.data(), restarts_offset_, num_restarts_);
}

}  // namespace tidesdb
