// Filter keys: what a filter built over key prefixes holds for a user key, and the one key
// that rules a whole range in or out. Shared by the SSTables' filter blocks (sst/bloom.h)
// and the memtable's filter (memtable/memtable.h), which must agree on both.
#pragma once

#include <cstddef>

#include "tidesdb/slice.h"

namespace tidesdb {

// What a filter built with prefix_length holds for user_key (format.h, the filter block):
// its first prefix_length bytes, or the whole key when prefix_length is 0 or the key is
// shorter.
inline Slice FilterKey(Slice user_key, size_t prefix_length) {
  if (prefix_length == 0 || user_key.size() < prefix_length) return user_key;
  return Slice(user_key.data(), prefix_length);
}

// The filter key shared by every user key in [start, limit) when they all begin with
// start's first prefix_length bytes (limit is at most the successor of that prefix), so
// that one probe rules the whole range in or out; false otherwise (an empty limit is
// unbounded).
bool RangeFilterKey(Slice start, Slice limit, size_t prefix_length, Slice* key);

}  // namespace tidesdb
