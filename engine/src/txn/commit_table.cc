#include "txn/commit_table.h"

#include <xxhash.h>

#include <algorithm>
#include <deque>
#include <vector>

namespace tidesdb {

namespace {

size_t RoundUpToPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// A key is known by a 64-bit hash of its column family and bytes: two keys that share one
// are one entry, which can only add a spurious conflict (a retry), never hide one.
uint64_t HashOf(uint32_t cf_id, Slice key) { return XXH3_64bits_withSeed(key.data(), key.size(), cf_id); }

// What an entry is charged: the fixed32 cf id and the key, as the table's keys were once
// stored, plus the fixed overhead.
uint32_t Charge(Slice key) {
  return static_cast<uint32_t>(4 + key.size() + CommitTable::kEntryOverheadBytes);
}

constexpr size_t kMinSlots = 64;

}  // namespace

// A shard is a FIFO of commit records in the order they were recorded, and an open-
// addressing index (linear probing) from a key's hash to its newest record. A key
// recorded again with a newer sequence gets a new record at the back; its old one stays
// in the FIFO, stale, until it reaches the front, where it goes without raising the
// low-water mark. Nothing is allocated per entry: a lookup touches one or two slots of
// one array, where a node-based map missed the CPU cache at every step (9 % of the
// server's CPU in the sysbench load, bench/results/2026-12-07-s27).
struct alignas(64) CommitTable::Shard {
  struct Record {
    uint64_t hash;
    SequenceNumber seq;
    uint32_t charge;
  };
  struct Slot {
    uint64_t hash;
    SequenceNumber seq;
    uint64_t pos;  // absolute FIFO position of the key's newest record, plus one; 0: empty
  };

  mutable std::mutex mu;
  std::deque<Record> order;
  uint64_t front_pos = 0;  // absolute position of order.front()
  std::vector<Slot> slots = std::vector<Slot>(kMinSlots);
  size_t live = 0;  // slots in use: keys the shard knows
  size_t bytes = 0;
  size_t capacity = 0;
  // Highest sequence of any entry this shard has forgotten.
  SequenceNumber low_water_mark = 0;

  size_t Mask() const { return slots.size() - 1; }

  // The slot holding hash, or nullptr.
  Slot* Find(uint64_t hash) {
    for (size_t i = hash & Mask();; i = (i + 1) & Mask()) {
      if (slots[i].pos == 0) return nullptr;
      if (slots[i].hash == hash) return &slots[i];
    }
  }
  const Slot* Find(uint64_t hash) const { return const_cast<Shard*>(this)->Find(hash); }

  void Place(const Slot& slot) {
    size_t i = slot.hash & Mask();
    while (slots[i].pos != 0) i = (i + 1) & Mask();
    slots[i] = slot;
  }

  void Resize(size_t n) {
    std::vector<Slot> old(n);
    old.swap(slots);
    for (const Slot& slot : old) {
      if (slot.pos != 0) Place(slot);
    }
  }

  // Removes the slot at index i, shifting later members of its probe run back so that
  // every key stays reachable from its home slot without tombstones.
  void Erase(size_t i) {
    for (size_t j = (i + 1) & Mask(); slots[j].pos != 0; j = (j + 1) & Mask()) {
      const size_t home = slots[j].hash & Mask();
      // slots[j] may move to i unless its home lies cyclically in (i, j].
      const bool home_between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (home_between) continue;
      slots[i] = slots[j];
      i = j;
    }
    slots[i].pos = 0;
    --live;
    if (slots.size() > kMinSlots && live * 8 < slots.size()) Resize(slots.size() / 2);
  }

  void Append(uint64_t hash, SequenceNumber seq, uint32_t charge) {
    order.push_back(Record{hash, seq, charge});
    bytes += charge;
  }

  void Insert(uint64_t hash, SequenceNumber seq, uint32_t charge) {
    if ((live + 1) * 2 > slots.size()) Resize(slots.size() * 2);
    Append(hash, seq, charge);
    Place(Slot{hash, seq, front_pos + order.size()});
    ++live;
  }

  // Drops the oldest record; if it is its key's newest, the key is forgotten.
  void ForgetOldest() {
    const Record& record = order.front();
    if (Slot* slot = Find(record.hash); slot != nullptr && slot->pos == front_pos + 1) {
      low_water_mark = std::max(low_water_mark, record.seq);
      Erase(static_cast<size_t>(slot - slots.data()));
    }
    bytes -= record.charge;
    order.pop_front();
    ++front_pos;
  }
};

CommitTable::CommitTable(const Options& options)
    : shard_mask_(RoundUpToPowerOfTwo(std::max<size_t>(options.num_shards, 1)) - 1),
      shards_(new Shard[shard_mask_ + 1]) {
  for (size_t i = 0; i <= shard_mask_; ++i) shards_[i].capacity = options.capacity_bytes / (shard_mask_ + 1);
}

CommitTable::~CommitTable() = default;

CommitTable::Shard& CommitTable::ShardFor(uint64_t hash) const {
  // The high bits: the low ones pick the slot inside the shard.
  return shards_[(hash >> 40) & shard_mask_];
}

void CommitTable::RecordCommit(uint32_t cf_id, Slice key, SequenceNumber commit_seq) {
  const uint64_t hash = HashOf(cf_id, key);
  Shard& shard = ShardFor(hash);
  std::lock_guard<std::mutex> g(shard.mu);
  if (Shard::Slot* slot = shard.Find(hash); slot != nullptr) {
    if (commit_seq > slot->seq) {
      // The newer record goes to the back; the older one is stale from now on.
      shard.Append(hash, commit_seq, Charge(key));
      slot->seq = commit_seq;
      slot->pos = shard.front_pos + shard.order.size();
    } else {
      return;
    }
  } else {
    shard.Insert(hash, commit_seq, Charge(key));
  }
  // The new record is at the back, so it goes last (and only if it alone exceeds the
  // capacity, in which case the low-water mark covers it).
  while (shard.bytes > shard.capacity && !shard.order.empty()) shard.ForgetOldest();
  RaiseMaxLowWaterMark(shard.low_water_mark);
}

CommitTable::Check CommitTable::CheckKey(uint32_t cf_id, Slice key, SequenceNumber snapshot_seq) const {
  const uint64_t hash = HashOf(cf_id, key);
  const Shard& shard = ShardFor(hash);
  std::lock_guard<std::mutex> g(shard.mu);
  if (snapshot_seq < shard.low_water_mark) return Check::kForgotten;
  const Shard::Slot* slot = shard.Find(hash);
  return slot != nullptr && slot->seq > snapshot_seq ? Check::kConflict : Check::kClean;
}

Status CommitTable::StatusOf(Check check) {
  switch (check) {
    case Check::kClean:
      return Status::OK();
    case Check::kConflict:
      return Status::Busy("write conflict: key was committed after the snapshot");
    case Check::kForgotten:
      break;
  }
  return Status::Busy("write conflict: commits newer than the snapshot are no longer tracked");
}

Status CommitTable::ValidateAndRecord(std::span<const KeyRef> keys, SequenceNumber snapshot_seq,
                                      const std::function<SequenceNumber()>& allocate_commit_seq,
                                      SequenceNumber* commit_seq) {
  std::lock_guard<std::mutex> g(commit_mu_);
  for (const KeyRef& k : keys) {
    Status s = Validate(k.cf_id, k.key, snapshot_seq);
    if (!s.ok()) return s;
  }
  const SequenceNumber seq = allocate_commit_seq();
  for (const KeyRef& k : keys) RecordCommit(k.cf_id, k.key, seq);
  *commit_seq = seq;
  return Status::OK();
}

void CommitTable::Prune(SequenceNumber oldest_active_snapshot) {
  for (size_t i = 0; i <= shard_mask_; ++i) {
    Shard& shard = shards_[i];
    std::lock_guard<std::mutex> g(shard.mu);
    while (!shard.order.empty() && shard.order.front().seq <= oldest_active_snapshot) shard.ForgetOldest();
    RaiseMaxLowWaterMark(shard.low_water_mark);
  }
}

void CommitTable::RaiseMaxLowWaterMark(SequenceNumber mark) {
  SequenceNumber seen = max_low_water_mark_.load(std::memory_order_relaxed);
  while (seen < mark && !max_low_water_mark_.compare_exchange_weak(seen, mark, std::memory_order_relaxed)) {
  }
}

size_t CommitTable::NumEntries() const {
  size_t n = 0;
  for (size_t i = 0; i <= shard_mask_; ++i) {
    std::lock_guard<std::mutex> g(shards_[i].mu);
    n += shards_[i].live;
  }
  return n;
}

size_t CommitTable::ApproximateMemoryUsage() const {
  size_t n = 0;
  for (size_t i = 0; i <= shard_mask_; ++i) {
    std::lock_guard<std::mutex> g(shards_[i].mu);
    n += shards_[i].bytes;
  }
  return n;
}

SequenceNumber CommitTable::MaxLowWaterMark() const {
  return max_low_water_mark_.load(std::memory_order_relaxed);
}

}  // namespace tidesdb
