// RecentCommitIndex: recent commits in key order, so that a serializable transaction can
// check that nobody committed a key inside a range it scanned (a phantom) after its
// snapshot. The CommitTable answers the same question for single keys by hash; ranges
// need order.
//
// For each (cf id, key) it remembers the newest commit sequence. Memory is bounded by
// capacity_bytes: past it the oldest records are forgotten and a low-water mark rises to
// the newest sequence forgotten; a validation with a snapshot below the mark fails
// conservatively (Busy), so a conflict is never missed. Prune(oldest active snapshot)
// forgets what no active transaction can conflict with. Thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "db/dbformat.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

// A closed key range [lo, hi] of one column family; either end may be unbounded.
struct KeyRange {
  uint32_t cf_id = 0;
  std::string lo, hi;
  bool lo_unbounded = true;
  bool hi_unbounded = true;
  // Validated against commits after this sequence; 0: after the transaction's snapshot.
  uint64_t read_seq = 0;

  bool Contains(uint32_t cf, Slice key) const {
    return cf == cf_id && (lo_unbounded || key >= Slice(lo)) && (hi_unbounded || key <= Slice(hi));
  }
};

class RecentCommitIndex {
 public:
  // Bookkeeping charged per record besides the key bytes.
  static constexpr size_t kEntryOverheadBytes = 96;

  explicit RecentCommitIndex(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  void Record(uint32_t cf_id, Slice key, SequenceNumber commit_seq);
  // OK if no key of the range was committed after snapshot_seq (as far as the index can
  // tell); Busy otherwise.
  Status Validate(const KeyRange& range, SequenceNumber snapshot_seq) const;
  void Prune(SequenceNumber oldest_active_snapshot);
  // Commits up to seq may not have been recorded (nobody needed them): validations from
  // below it fail conservatively.
  void ForgetThrough(SequenceNumber seq);

  size_t NumKeys() const;
  SequenceNumber LowWaterMark() const;

 private:
  void ForgetOldestLocked();

  const size_t capacity_;
  mutable std::mutex mu_;
  // Big-endian cf id + user key -> newest commit sequence; big-endian so that the map's
  // order is (cf id, key) order.
  std::map<std::string, SequenceNumber, std::less<>> latest_;
  // Records in the order they were made (sequences roughly ascending).
  std::deque<std::pair<SequenceNumber, std::string>> order_;
  size_t bytes_ = 0;
  SequenceNumber low_water_mark_ = 0;
  SequenceNumber max_recorded_ = 0;
};

}  // namespace tidesdb
