// InternalIterator: ordered iteration over internal keys (user key + trailer, see
// db/dbformat.h), as produced by memtables, SSTable blocks, whole SSTables and the merge of
// many of them. Unlike the public Iterator it shows every version and every tombstone;
// db/db_iter.h turns it into the user's view at a snapshot.
//
// Contract: key() and value() stay valid until the next move. Seek/SeekForPrev take an
// internal key. After an error Valid() is false and status() says why.
#pragma once

#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

class InternalIterator {
 public:
  InternalIterator() = default;
  InternalIterator(const InternalIterator&) = delete;
  InternalIterator& operator=(const InternalIterator&) = delete;
  virtual ~InternalIterator() = default;

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // First entry whose internal key is >= target.
  virtual void Seek(Slice target) = 0;
  // Seek(target) for a caller that reads on only while user keys are < limit (a user key;
  // empty: no limit). The iterator may pass over sources holding nothing in [target's user
  // key, limit) (SSTables whose prefix filter rules the range out, left exhausted), so Next
  // may miss entries from limit on. Prev from a valid position is complete: every source
  // was sought at target or exhausted, and a merge seeks its sources again when it turns.
  // The default is Seek(target).
  virtual void SeekBounded(Slice target, Slice limit) {
    (void)limit;
    Seek(target);
  }
  // Last entry whose internal key is <= target.
  virtual void SeekForPrev(Slice target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual Slice key() const = 0;
  virtual Slice value() const = 0;
  virtual Status status() const = 0;
};

// An iterator over nothing, or one that only reports an error.
InternalIterator* NewEmptyInternalIterator(Status status = Status::OK());

}  // namespace tidesdb
