// DBIter: the user's view of one column family — turns a merged InternalIterator (every
// version, every tombstone, from memtables and SSTables) into the newest live value of each
// user key visible at a snapshot, within optional [lower, upper) bounds.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "db/dbformat.h"
#include "db/entry_value.h"
#include "tidesdb/iterator.h"
#include "util/internal_iterator.h"

namespace tidesdb {

struct DBIterOptions {
  SequenceNumber snapshot = kMaxSequence;
  std::optional<std::string> lower_bound;  // inclusive
  std::optional<std::string> upper_bound;  // exclusive
  uint64_t now_seconds = 0;                // for expiry
  ValueFetcher fetch;                      // resolves value-log pointers
};

// `keepalive` is destroyed after the internal iterator (it holds what the iterator reads:
// memtables, table readers, the version).
std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<InternalIterator> internal, DBIterOptions options,
                                        std::shared_ptr<void> keepalive);

}  // namespace tidesdb
