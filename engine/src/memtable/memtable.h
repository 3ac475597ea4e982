// MemTable: the in-memory write buffer. Every write lands here (after the WAL) and stays
// until the memtable is frozen and flushed to SSTables.
//
// One class serves both memtable modes: in unified mode one memtable holds the entries of
// every column family (split into per-CF SSTables at flush); in per-CF mode each CF has
// its own and only that CF's id ever appears in it.
//
// Entry format, version 1 (one per Add, in the arena, inside its skip-list node):
//
//   varint32  cf_key_length
//   char[]    cf_key  = fixed32 BIG-ENDIAN cf_id  +  internal key (db/dbformat.h:
//                       user key + fixed64 trailer of (sequence << 8 | type))
//   varint32  value_length
//   char[]    value
//
// Order: cf_id ascending (big-endian bytes sort numerically), then CompareInternalKey.
// So each CF's entries are one contiguous run, in internal-key order.
//
// Thread safety: Add may run in many threads at once, and concurrently with Get,
// iterators and every accessor. Nothing is ever removed. Entries added by a thread are
// visible to any read that starts after its Add returns; a read running concurrently
// with an Add may or may not see that entry, never a part of it.
//
// The DB holds memtables by std::shared_ptr; a memtable must outlive every iterator it
// created and every value Slice that Get returned.
//
// Point lookups (Get) of keys the memtable does not hold mostly skip the skip list: a
// blocked bloom filter over (cf_id, user key), one 64-bit word per key with 4 bits set in it,
// set by Add before the entry is inserted (so a Get that can see the entry sees its bits).
// A CF whose SSTables filter key prefixes (ColumnFamilyOptions::filter_prefix_length) also
// has each entry's prefix in that filter, under its own seed: a seek or a range estimate
// bounded inside a few prefixes the memtable never saw (RangeMayMatch) skips the skip list
// too.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "db/dbformat.h"
#include "memtable/arena.h"
#include "memtable/skiplist.h"
#include "tidesdb/slice.h"
#include "util/internal_iterator.h"

namespace tidesdb {

class MemTable {
 public:
  // arena_block_size: see Arena. A smaller block suits many small per-CF memtables.
  // bloom_bytes: the size of the point-lookup filter (rounded up to 8-byte words); 0: no
  // filter, every Get searches the skip list.
  explicit MemTable(size_t arena_block_size = Arena::kDefaultBlockSize, size_t bloom_bytes = 0);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  // Adds an entry. Requires seq <= kMaxSequence, and user key and value each shorter than
  // 4 GiB - 16 bytes (the DB bounds both long before). (cf_id, user_key, seq, type) must
  // be new: internal keys are unique; re-adding an existing one is ignored (the first
  // value stays and the counters do not change).
  // filter_prefix_length: the CF's ColumnFamilyOptions::filter_prefix_length (0: none);
  // RangeMayMatch answers for the CF only while every Add of it passed the same length.
  void Add(uint32_t cf_id, SequenceNumber seq, ValueType type, Slice user_key, Slice value,
           size_t filter_prefix_length = 0);

  // False only if no entry of cf_id with a user key in [start, limit) was ever added: the
  // range spans a few key prefixes (util/filter_key.h, RangeMayMatchFilter, with the CF's
  // filter_prefix_length) that the filter holds none of. True when it cannot tell (no
  // filter, no prefix length, the range spans many prefixes or is unbounded).
  bool RangeMayMatch(uint32_t cf_id, Slice start, Slice limit) const;

  // Finds the newest entry of (cf_id, user_key) with sequence <= snapshot. Returns true if
  // there is one, whatever its type (a deletion too); then *type is its type and *value
  // its value, pointing into the memtable, and *seq (if given) its sequence. Returns false
  // if this memtable knows nothing of the key at that snapshot (the caller then looks
  // further down).
  bool Get(uint32_t cf_id, Slice user_key, SequenceNumber snapshot, ValueType* type, Slice* value,
           SequenceNumber* seq = nullptr) const;

  // Iterates the entries of one CF in internal-key order; key() is the internal key
  // (without the cf prefix), value() the value. Every position is inside the CF: moving
  // past either end, Seek past its last key or SeekForPrev before its first key leaves
  // the iterator invalid. Seek / SeekForPrev take internal keys; a target shorter than a
  // trailer is taken as a bare user key (Seek: its newest version, SeekForPrev: its
  // oldest). status() is always OK.
  std::unique_ptr<InternalIterator> NewIterator(uint32_t cf_id) const;

  // Approximate number of entries of one CF with user keys in [start, limit) (empty
  // limit: no upper bound), deletions and every version included, and their bytes
  // (internal key + value). Exact for ranges of up to kExactRangeEntries entries, within
  // about 15 % beyond (typically); the cost does not grow with the range (SkipList::
  // ApproximateRangeSize), so it suits query planning on a full memtable. 64, not more:
  // the SQL optimizer asks once per range of every query, and a walk of 1,024 nodes per
  // level was 15 % of sysbench oltp_read_only's CPU.
  static constexpr uint64_t kExactRangeEntries = 64;
  struct RangeSize {
    uint64_t entries = 0;
    uint64_t bytes = 0;
  };
  RangeSize ApproximateRangeSize(uint32_t cf_id, Slice start, Slice limit) const;
  // The same for n ranges of one CF, sizes[i] for ranges[i], with the skip-list walks of
  // the ranges taking turns so that their cache misses overlap (SkipList::
  // ApproximateRangeSizes): the optimizer asks about every range of a query in one go.
  struct KeyRange {
    Slice start;
    Slice limit;  // empty: no upper bound
  };
  // At most kMaxRangesAtOnce ranges per call.
  static constexpr size_t kMaxRangesAtOnce = 16;
  void ApproximateRangeSizes(uint32_t cf_id, const KeyRange* ranges, size_t n, RangeSize* sizes) const;

  // Ids of the CFs that have entries, ascending. Kept at insert time (no scan).
  std::vector<uint32_t> ColumnFamilies() const;
  // Entries of one CF (deletions included), and of those the deletions (kDeletion).
  uint64_t NumEntries(uint32_t cf_id) const;
  uint64_t NumDeletions(uint32_t cf_id) const;

  // Bytes the memtable holds (its arena's blocks and its filter): the measure of "full".
  size_t ApproximateMemoryUsage() const { return arena_.MemoryUsage() + bloom_words_ * sizeof(uint64_t); }
  // Entries of all CFs.
  uint64_t num_entries() const { return num_entries_.load(std::memory_order_relaxed); }
  bool empty() const { return num_entries() == 0; }
  // Tests: how many of the keys prefix + i, i in [from, to), pass the point-lookup filter.
  int BloomPassesForTest(uint32_t cf_id, const std::string& prefix, int from, int to) const {
    int passes = 0;
    for (int i = from; i < to; ++i)
      passes += BloomMayContain(BloomHash(cf_id, prefix + std::to_string(i))) ? 1 : 0;
    return passes;
  }
  // Smallest / largest sequence added so far; both 0 while empty.
  SequenceNumber smallest_sequence() const;
  SequenceNumber largest_sequence() const { return largest_sequence_.load(std::memory_order_relaxed); }

 private:
  // Orders entries as stated at the top of this file. A search key is an entry's cf key
  // decoded once, with the first 8 user-key bytes as one integer: most comparisons are
  // decided by comparing the cf id and that integer with the entry's own, both loaded from
  // fixed offsets of its cf key, without a memcmp call. Only keys equal in those 12 bytes
  // compare the rest of the user key, then the trailer.
  struct EntryComparator {
    struct DecodedKey {
      uint32_t cf_id;
      // The first min(8, size) user-key bytes, big-endian, the rest zero: a strict
      // inequality between two prefixes is the user keys' order; equality leaves it open
      // (a key shorter than 8 bytes ties with itself followed by zero bytes).
      uint64_t prefix;
      Slice user_key;    // the caller's bytes (MakeKey) or the entry's (Decode)
      uint64_t trailer;  // sequence << 8 | type; compared descending
    };
    static DecodedKey MakeKey(uint32_t cf_id, Slice user_key, uint64_t trailer);
    DecodedKey Decode(const char* entry) const;
    int operator()(const char* entry, const DecodedKey& key) const;
    static int Compare(const DecodedKey& a, const DecodedKey& b);
  };
  static constexpr uint32_t kPrefixUnset = UINT32_MAX;
  static constexpr uint32_t kPrefixMixed = UINT32_MAX - 1;
  // Per-CF counters, one per CF, kept in their own small skip list (also in the arena),
  // so finding a CF's counters takes no lock and ColumnFamilies() comes out sorted.
  struct CfStats {
    uint32_t cf_id;  // first member: CfStatsComparator reads it from the entry's start
    std::atomic<uint64_t> entries{0};
    std::atomic<uint64_t> deletions{0};
    // The filter_prefix_length every Add of the CF passed so far; kPrefixUnset before the
    // first, kPrefixMixed once two differed (then RangeMayMatch always says true).
    std::atomic<uint32_t> filter_prefix{kPrefixUnset};
  };
  struct CfStatsComparator {
    using DecodedKey = uint32_t;  // the cf id
    DecodedKey Decode(const char* entry) const;
    int operator()(const char* entry, DecodedKey cf_id) const;
  };
  using Table = SkipList<EntryComparator>;
  using CfStatsList = SkipList<CfStatsComparator>;
  class Iterator;

  CfStats* FindCfStats(uint32_t cf_id) const;
  CfStats* FindOrAddCfStats(uint32_t cf_id);

  static uint64_t BloomHash(uint32_t cf_id, Slice user_key);
  // The filter's hash of a key prefix: a seed apart from BloomHash's.
  static uint64_t PrefixBloomHash(uint32_t cf_id, Slice prefix);
  static void NotePrefixLength(CfStats* stats, size_t filter_prefix_length);
  static uint64_t BloomMask(uint64_t h);
  std::atomic<uint64_t>* BloomWord(uint64_t h) const;  // nullptr: no filter
  // Starts fetching h's word: to set bits in it (Add) or only to read it.
  void BloomPrefetch(uint64_t h, bool for_write) const;
  void BloomAdd(uint64_t h);
  bool BloomMayContain(uint64_t h) const;

  const size_t bloom_words_;
  const std::unique_ptr<std::atomic<uint64_t>[]> bloom_;  // bloom_words_ words
  Arena arena_;
  Table table_;
  CfStatsList cf_stats_;
  std::atomic<uint64_t> num_entries_{0};
  // UINT64_MAX while empty (smallest_sequence() then reports 0).
  std::atomic<SequenceNumber> smallest_sequence_{UINT64_MAX};
  std::atomic<SequenceNumber> largest_sequence_{0};
};

}  // namespace tidesdb
