// MergingIterator: one sorted InternalIterator over many (memtables, L0 files, levels).
//
// Order: the merged sequence is every entry of every child, ordered by CompareInternalKey
// and, among equal internal keys, by child index (lower index first; a child's own equal
// keys keep the child's order). Moving backward visits exactly that sequence in reverse, so
// after any mix of Seek / SeekForPrev / SeekToFirst / SeekToLast / Next / Prev the iterator
// is where a cursor over the merged sequence would be.
//
// Errors: if a child reports a non-OK status, Valid() is false and status() returns it
// (the first error seen; on a repositioning call, the lowest-index child's). Each Seek*
// call starts over and clears an earlier error when the children recover.
//
// Cost: a move is O(log n) child comparisons (binary heap: a min-heap moving forward, a
// max-heap moving backward); a change of direction repositions all n children.
#pragma once

#include <memory>
#include <vector>

#include "util/internal_iterator.h"

namespace tidesdb {

// Takes ownership of the children (none may be null). With no children the result is
// empty; with one it is that child.
std::unique_ptr<InternalIterator> NewMergingIterator(std::vector<std::unique_ptr<InternalIterator>> children);

}  // namespace tidesdb
