// WriteBatch: the serialized form is documented in tidesdb/write_batch.h. rep_ always holds
// at least the 4-byte count header.
#include "tidesdb/write_batch.h"

#include "tidesdb/db.h"
#include "util/coding.h"

namespace tidesdb {

namespace {

constexpr size_t kHeaderSize = 4;  // fixed32 count

// Entry type bytes of the serialized form.
enum EntryType : uint8_t {
  kTypeDelete = 0,
  kTypePut = 1,
  kTypePutWithExpiry = 2,
};

// Parses every entry of `data`. With handler == nullptr it only validates; otherwise it
// hands each entry to the handler and stops at the first non-OK handler status.
Status ParseBatch(Slice data, WriteBatch::Handler* handler) {
  if (data.size() < kHeaderSize) return Status::Corruption("write batch: shorter than its header");
  const uint32_t count = DecodeFixed32(data.data());
  Slice input = data.substr(kHeaderSize);
  uint32_t found = 0;
  while (!input.empty()) {
    if (found == count) return Status::Corruption("write batch: more entries than the count says");
    const uint8_t type = static_cast<uint8_t>(input[0]);
    input.remove_prefix(1);
    uint32_t cf_id = 0;
    Slice key;
    Slice value;
    uint64_t expire_at = 0;
    if (!GetVarint32(&input, &cf_id)) return Status::Corruption("write batch: truncated column family id");
    if (!GetLengthPrefixedSlice(&input, &key)) return Status::Corruption("write batch: truncated key");
    switch (type) {
      case kTypeDelete:
        break;
      case kTypePut:
        if (!GetLengthPrefixedSlice(&input, &value))
          return Status::Corruption("write batch: truncated value");
        break;
      case kTypePutWithExpiry:
        if (!GetLengthPrefixedSlice(&input, &value))
          return Status::Corruption("write batch: truncated value");
        if (!GetFixed64(&input, &expire_at)) return Status::Corruption("write batch: truncated expiry");
        break;
      default:
        return Status::Corruption("write batch: unknown entry type");
    }
    ++found;
    if (handler != nullptr) {
      Status s =
          type == kTypeDelete ? handler->Delete(cf_id, key) : handler->Put(cf_id, key, value, expire_at);
      if (!s.ok()) return s;
    }
  }
  if (found != count) return Status::Corruption("write batch: fewer entries than the count says");
  return Status::OK();
}

}  // namespace

WriteBatch::WriteBatch() { Clear(); }

void WriteBatch::Clear() { rep_.assign(kHeaderSize, '\0'); }

uint32_t WriteBatch::Count() const { return DecodeFixed32(rep_.data()); }

void WriteBatch::Put(ColumnFamilyHandle* cf, Slice key, Slice value) { Put(cf->id(), key, value); }

void WriteBatch::PutWithExpiry(ColumnFamilyHandle* cf, Slice key, Slice value,
                               uint64_t expire_at_unix_seconds) {
  PutWithExpiry(cf->id(), key, value, expire_at_unix_seconds);
}

void WriteBatch::Delete(ColumnFamilyHandle* cf, Slice key) { Delete(cf->id(), key); }

void WriteBatch::Put(uint32_t cf_id, Slice key, Slice value) {
  EncodeFixed32(rep_.data(), Count() + 1);
  rep_.push_back(static_cast<char>(kTypePut));
  PutVarint32(&rep_, cf_id);
  PutLengthPrefixedSlice(&rep_, key);
  PutLengthPrefixedSlice(&rep_, value);
}

void WriteBatch::PutWithExpiry(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at_unix_seconds) {
  EncodeFixed32(rep_.data(), Count() + 1);
  rep_.push_back(static_cast<char>(kTypePutWithExpiry));
  PutVarint32(&rep_, cf_id);
  PutLengthPrefixedSlice(&rep_, key);
  PutLengthPrefixedSlice(&rep_, value);
  PutFixed64(&rep_, expire_at_unix_seconds);
}

void WriteBatch::Delete(uint32_t cf_id, Slice key) {
  EncodeFixed32(rep_.data(), Count() + 1);
  rep_.push_back(static_cast<char>(kTypeDelete));
  PutVarint32(&rep_, cf_id);
  PutLengthPrefixedSlice(&rep_, key);
}

Status WriteBatch::Iterate(Handler* handler) const {
  // Validate the whole batch before the handler sees any entry, so a malformed batch is
  // never half applied.
  Status s = ParseBatch(rep_, nullptr);
  if (!s.ok()) return s;
  return ParseBatch(rep_, handler);
}

Status WriteBatch::FromData(Slice data, WriteBatch* batch) {
  Status s = ParseBatch(data, nullptr);
  if (!s.ok()) return s;  // *batch is left unchanged
  batch->rep_.assign(data.data(), data.size());
  return Status::OK();
}

}  // namespace tidesdb
