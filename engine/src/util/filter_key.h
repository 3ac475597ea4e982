// Filter keys: what a filter built over key prefixes holds for a user key, and the one key
// that rules a whole range in or out. Shared by the SSTables' filter blocks (sst/bloom.h)
// and the memtable's filter (memtable/memtable.h), which must agree on both.
#pragma once

#include <cstddef>
#include <cstring>

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

// The most prefixes RangeMayMatchFilter probes for one range.
constexpr size_t kMaxRangeFilterPrefixes = 8;

// Whether a filter built with prefix_length (FilterKey) may hold a user key in [start,
// limit), asking may_match(Slice filter_key) -> bool. A range inside one prefix is one
// probe (RangeFilterKey). A range over a few prefixes (at most kMaxRangeFilterPrefixes,
// e.g. `k BETWEEN 10 AND 14` on an index whose filter holds k) probes each of them: every
// key of at least prefix_length bytes in the range has one of the prefixes from start's
// to limit's (both cut or padded with zero bytes to prefix_length; fixed-length byte
// strings order as big-endian numbers, so they are consecutive). A key shorter than the
// prefix is held whole and sorts just before the prefix it would be with zero bytes
// appended, so for each prefix ending in zero bytes the keys it is with some of them cut
// off are probed too. True when any probe may match, or when the filter cannot tell (no
// prefix, no limit, too many prefixes).
template <typename MayMatch>
bool RangeMayMatchFilter(Slice start, Slice limit, size_t prefix_length, MayMatch may_match) {
  Slice one;
  if (RangeFilterKey(start, limit, prefix_length, &one)) return may_match(one);
  constexpr size_t kMaxPrefixBytes = 64;
  if (prefix_length == 0 || prefix_length > kMaxPrefixBytes || limit.empty()) return true;
  char first[kMaxPrefixBytes] = {}, last[kMaxPrefixBytes] = {};
  std::memcpy(first, start.data(), start.size() < prefix_length ? start.size() : prefix_length);
  std::memcpy(last, limit.data(), limit.size() < prefix_length ? limit.size() : prefix_length);
  // Adds one to a prefix as a big-endian number; false when it has no successor.
  auto increment = [prefix_length](char* p) {
    for (size_t i = prefix_length; i > 0; --i) {
      unsigned char& b = reinterpret_cast<unsigned char&>(p[i - 1]);
      if (++b != 0) return true;
    }
    return false;
  };
  // Count first, so that a range over many prefixes costs no probe.
  // An inline byte loop, not memcmp: prefixes are a few bytes, and this runs for every
  // range of every estimate and bounded seek (memcmp called from here was 1.8 % of the
  // server's CPU in a profile of sysbench select_random_ranges).
  auto compare = [prefix_length](const char* a, const char* b) {
    for (size_t i = 0; i < prefix_length; ++i) {
      if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
    }
    return 0;
  };
  char p[kMaxPrefixBytes];
  std::memcpy(p, first, prefix_length);
  size_t count = 1;
  int order;
  while ((order = compare(p, last)) < 0) {
    if (count == kMaxRangeFilterPrefixes || !increment(p)) return true;
    ++count;
  }
  if (order != 0) return true;  // start's prefix after limit's
  // A limit no longer than the prefix is at most the last prefix (padded): keys with that
  // prefix are past the range, only the shorter keys before it are in.
  const bool last_outside = limit.size() <= prefix_length;
  std::memcpy(p, first, prefix_length);
  for (size_t i = 0; i < count; ++i) {
    if (!(last_outside && i + 1 == count) && may_match(Slice(p, prefix_length))) return true;
    for (size_t n = prefix_length; n > 0 && p[n - 1] == 0; --n) {
      if (may_match(Slice(p, n - 1))) return true;
    }
    if (i + 1 < count) increment(p);
  }
  return false;
}

// RangeMayMatchFilter for a filter whose probes are cache misses (a filter of hundreds of
// kilobytes or more, read at random): a range of a few prefixes probed one after another
// waits for each miss in turn. This computes every probe's hash(Slice filter_key) ->
// uint64_t first, calling prefetch(hash) for each so that their loads overlap, then asks
// may_match_hash(hash) in the same order. Same answer as RangeMayMatchFilter with
// may_match_hash(hash(key)).
template <typename Hash, typename Prefetch, typename MayMatchHash>
bool RangeMayMatchFilterPrefetched(Slice start, Slice limit, size_t prefix_length, Hash hash,
                                   Prefetch prefetch, MayMatchHash may_match_hash) {
  // A range of prefixes ending in zero bytes probes more keys (the shorter keys above)
  // than this holds; then the walk stops and the range is probed the plain way.
  constexpr size_t kMaxCollected = 2 * kMaxRangeFilterPrefixes;
  uint64_t hashes[kMaxCollected];
  size_t collected = 0;
  bool overflow = false;
  // Saying no to every key visits them all: true back means the filter cannot tell (or
  // the walk stopped for lack of room).
  const bool cannot_tell = RangeMayMatchFilter(start, limit, prefix_length, [&](Slice key) {
    if (collected == kMaxCollected) {
      overflow = true;
      return true;
    }
    hashes[collected] = hash(key);
    prefetch(hashes[collected]);
    ++collected;
    return false;
  });
  if (overflow) {
    return RangeMayMatchFilter(start, limit, prefix_length,
                               [&](Slice key) { return may_match_hash(hash(key)); });
  }
  if (cannot_tell) return true;
  for (size_t i = 0; i < collected; ++i)
    if (may_match_hash(hashes[i])) return true;
  return false;
}

}  // namespace tidesdb
