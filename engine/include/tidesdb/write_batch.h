// WriteBatch: puts and deletes across any column families, applied atomically: after a
// crash either all of a batch is visible or none of it. A batch is one WAL record.
//
// Serialized form (also the WAL record payload, see docs/FORMATS.md):
//   count: fixed32, then count entries of
//     type: u8 (1 = put, 0 = delete, 2 = put with expiry)
//     cf_id: varint32
//     key: varint32 length + bytes
//     value: varint32 length + bytes        (put only)
//     expire_at_unix_seconds: fixed64       (put with expiry only)
#pragma once

#include <cstdint>
#include <string>

#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

class ColumnFamilyHandle;

class WriteBatch {
 public:
  WriteBatch();

  void Put(ColumnFamilyHandle* cf, Slice key, Slice value);
  // An entry that reads treat as deleted once the wall clock passes expire_at_unix_seconds.
  void PutWithExpiry(ColumnFamilyHandle* cf, Slice key, Slice value, uint64_t expire_at_unix_seconds);
  void Delete(ColumnFamilyHandle* cf, Slice key);
  // The same by column family id (ColumnFamilyHandle::id()).
  void Put(uint32_t cf_id, Slice key, Slice value);
  void PutWithExpiry(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at_unix_seconds);
  void Delete(uint32_t cf_id, Slice key);

  void Clear();
  uint32_t Count() const;
  // Bytes of the serialized form.
  size_t ApproximateSize() const { return rep_.size(); }

  // Receives the entries in the order they were added.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status Put(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at) = 0;  // 0 = none
    virtual Status Delete(uint32_t cf_id, Slice key) = 0;
  };
  // Returns Corruption if the serialized form is malformed.
  Status Iterate(Handler* handler) const;

  // The serialized form, and a batch rebuilt from one (WAL replay).
  const std::string& Data() const { return rep_; }
  static Status FromData(Slice data, WriteBatch* batch);

 private:
  std::string rep_;
};

}  // namespace tidesdb
