#include "util/filter_key.h"

namespace tidesdb {

bool RangeFilterKey(Slice start, Slice limit, size_t prefix_length, Slice* key) {
  if (prefix_length == 0 || start.size() < prefix_length || limit.empty()) return false;
  const Slice prefix(start.data(), prefix_length);
  // Every key in the range starts with prefix iff limit <= the prefix's successor, i.e.
  // limit starts with prefix, or limit's first prefix_length bytes are the successor's.
  if (limit.starts_with(prefix)) {
    *key = prefix;
    return true;
  }
  // The successor: drop trailing 0xff bytes, then add one to the last byte left.
  size_t n = prefix_length;
  while (n > 0 && static_cast<unsigned char>(prefix[n - 1]) == 0xff) --n;
  if (n == 0) return false;  // no successor: the range runs to the end of the key space
  if (limit.size() != n) return false;
  for (size_t i = 0; i + 1 < n; ++i)
    if (limit[i] != prefix[i]) return false;
  if (static_cast<unsigned char>(limit[n - 1]) != static_cast<unsigned char>(prefix[n - 1]) + 1) return false;
  *key = prefix;
  return true;
}

}  // namespace tidesdb
