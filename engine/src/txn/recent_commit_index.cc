#include "txn/recent_commit_index.h"

#include <algorithm>

#include "util/coding.h"

namespace tidesdb {

namespace {
std::string IndexKey(uint32_t cf_id, Slice key) {
  std::string k(4, '\0');
  EncodeBigEndian32(k.data(), cf_id);
  k.append(key.data(), key.size());
  return k;
}
}  // namespace

void RecentCommitIndex::Record(uint32_t cf_id, Slice key, SequenceNumber commit_seq) {
  std::string k = IndexKey(cf_id, key);
  std::lock_guard<std::mutex> g(mu_);
  auto [it, inserted] = latest_.try_emplace(k, commit_seq);
  if (!inserted) it->second = std::max(it->second, commit_seq);
  max_recorded_ = std::max(max_recorded_, commit_seq);
  bytes_ += k.size() + kEntryOverheadBytes;
  order_.emplace_back(commit_seq, std::move(k));
  while (bytes_ > capacity_ && !order_.empty()) ForgetOldestLocked();
}

void RecentCommitIndex::ForgetOldestLocked() {
  auto& [seq, k] = order_.front();
  low_water_mark_ = std::max(low_water_mark_, seq);
  auto it = latest_.find(k);
  if (it != latest_.end() && it->second <= seq) latest_.erase(it);
  bytes_ -= k.size() + kEntryOverheadBytes;
  order_.pop_front();
}

Status RecentCommitIndex::Validate(const KeyRange& range, SequenceNumber snapshot_seq) const {
  std::lock_guard<std::mutex> g(mu_);
  if (snapshot_seq < low_water_mark_) {
    return Status::Busy("range conflict: commits newer than the snapshot are no longer tracked");
  }
  if (max_recorded_ <= snapshot_seq) return Status::OK();  // nothing newer at all
  std::string start = range.lo_unbounded ? IndexKey(range.cf_id, "") : IndexKey(range.cf_id, range.lo);
  for (auto it = latest_.lower_bound(start); it != latest_.end(); ++it) {
    Slice k(it->first);
    if (DecodeBigEndian32(k.data()) != range.cf_id) break;
    if (!range.hi_unbounded && k.substr(4) > Slice(range.hi)) break;
    if (it->second > snapshot_seq) {
      return Status::Busy("range conflict: a key in a scanned range was committed after the snapshot");
    }
  }
  return Status::OK();
}

void RecentCommitIndex::Prune(SequenceNumber oldest_active_snapshot) {
  std::lock_guard<std::mutex> g(mu_);
  while (!order_.empty() && order_.front().first <= oldest_active_snapshot) {
    // Nobody can conflict with these: the low-water mark may rise to the oldest snapshot.
    ForgetOldestLocked();
  }
}

void RecentCommitIndex::ForgetThrough(SequenceNumber seq) {
  std::lock_guard<std::mutex> g(mu_);
  low_water_mark_ = std::max(low_water_mark_, seq);
}

size_t RecentCommitIndex::NumKeys() const {
  std::lock_guard<std::mutex> g(mu_);
  return latest_.size();
}

SequenceNumber RecentCommitIndex::LowWaterMark() const {
  std::lock_guard<std::mutex> g(mu_);
  return low_water_mark_;
}

}  // namespace tidesdb
