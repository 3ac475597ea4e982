#include "txn/commit_table.h"

#include <algorithm>
#include <cstring>
#include <list>
#include <string>
#include <unordered_map>

#include "util/coding.h"

namespace tidesdb {

namespace {

size_t RoundUpToPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Table key: fixed32 cf_id followed by the user key.
std::string MakeTableKey(uint32_t cf_id, Slice key) {
  std::string k(4 + key.size(), '\0');
  EncodeFixed32(k.data(), cf_id);
  std::memcpy(k.data() + 4, key.data(), key.size());
  return k;
}

size_t Charge(const std::string& table_key) { return table_key.size() + CommitTable::kEntryOverheadBytes; }

}  // namespace

struct alignas(64) CommitTable::Shard {
  struct Node {
    const std::string* key;  // points at the map's own key (stable: map nodes never move)
    SequenceNumber seq;
  };

  mutable std::mutex mu;
  // Oldest recorded first; an entry moves to the back when it is recorded again with a
  // newer sequence, so the front is the first to go.
  std::list<Node> order;
  std::unordered_map<std::string, std::list<Node>::iterator> entries;
  size_t bytes = 0;
  size_t capacity = 0;
  // Highest sequence of any entry this shard has forgotten.
  SequenceNumber low_water_mark = 0;

  void ForgetOldest() {
    const Node& node = order.front();
    low_water_mark = std::max(low_water_mark, node.seq);
    auto it = entries.find(*node.key);
    bytes -= Charge(it->first);
    order.pop_front();
    entries.erase(it);
  }
};

CommitTable::CommitTable(const Options& options)
    : shard_mask_(RoundUpToPowerOfTwo(std::max<size_t>(options.num_shards, 1)) - 1),
      shards_(new Shard[shard_mask_ + 1]) {
  for (size_t i = 0; i <= shard_mask_; ++i) shards_[i].capacity = options.capacity_bytes / (shard_mask_ + 1);
}

CommitTable::~CommitTable() = default;

CommitTable::Shard& CommitTable::ShardFor(const std::string& table_key) const {
  return shards_[std::hash<std::string>()(table_key) & shard_mask_];
}

void CommitTable::RecordCommit(uint32_t cf_id, Slice key, SequenceNumber commit_seq) {
  std::string table_key = MakeTableKey(cf_id, key);
  Shard& shard = ShardFor(table_key);
  std::lock_guard<std::mutex> g(shard.mu);
  auto it = shard.entries.find(table_key);
  if (it != shard.entries.end()) {
    auto node = it->second;
    if (commit_seq > node->seq) {
      node->seq = commit_seq;
      shard.order.splice(shard.order.end(), shard.order, node);
    }
    return;
  }
  shard.bytes += Charge(table_key);
  auto inserted = shard.entries.emplace(std::move(table_key), shard.order.end()).first;
  inserted->second = shard.order.insert(shard.order.end(), Shard::Node{&inserted->first, commit_seq});
  // The new entry is at the back, so it goes last (and only if it alone exceeds the
  // capacity, in which case the low-water mark covers it).
  while (shard.bytes > shard.capacity && !shard.order.empty()) shard.ForgetOldest();
  RaiseMaxLowWaterMark(shard.low_water_mark);
}

CommitTable::Check CommitTable::CheckKey(uint32_t cf_id, Slice key, SequenceNumber snapshot_seq) const {
  const std::string table_key = MakeTableKey(cf_id, key);
  const Shard& shard = ShardFor(table_key);
  std::lock_guard<std::mutex> g(shard.mu);
  if (snapshot_seq < shard.low_water_mark) return Check::kForgotten;
  auto it = shard.entries.find(table_key);
  return it != shard.entries.end() && it->second->seq > snapshot_seq ? Check::kConflict : Check::kClean;
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
    n += shards_[i].entries.size();
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
