// Iterator: ordered access to the keys of one column family (or of a transaction's view).
//
// An iterator sees one consistent state: the snapshot it was created with (or the latest
// committed state at creation). It is used by one thread at a time, and must be destroyed
// before the DB. key()/value() stay valid until the next move of the iterator.
#pragma once

#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

class Iterator {
 public:
  virtual ~Iterator() = default;
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;

  // True while positioned at an entry. False after running off either end, and on error
  // (check status()).
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // First key >= target.
  virtual void Seek(Slice target) = 0;
  // Seek(target) for a caller that reads on only while keys are < limit (empty: no limit):
  // the iterator may pass over the SSTables whose prefix filters
  // (ColumnFamilyOptions::filter_prefix_length) rule out [target, limit) (a range inside one
  // prefix, or over a few), and may stop
  // (Valid() false, status OK) at the first key >= limit. Next() goes on up to the limit;
  // Prev() (which sees every key before) and the Seek* calls end the bound. The default is
  // Seek(target).
  virtual void SeekBounded(Slice target, Slice limit) {
    (void)limit;
    Seek(target);
  }
  // Last key <= target.
  virtual void SeekForPrev(Slice target) = 0;
  virtual void Next() = 0;          // requires Valid()
  virtual void Prev() = 0;          // requires Valid()
  virtual Slice key() const = 0;    // requires Valid()
  virtual Slice value() const = 0;  // requires Valid()
  // Not OK if the iterator hit an error (corruption, I/O). Valid() is then false.
  virtual Status status() const = 0;
};

}  // namespace tidesdb
