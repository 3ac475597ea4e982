// VectorIterator: an InternalIterator over an in-memory list of (internal key, value)
// pairs. A building block for tests of anything that consumes InternalIterators (merging,
// DB iterators, compaction); not used by the library itself.
//
// Keys must be internal keys (at least 8 bytes, see db/dbformat.h). The entries are sorted
// by CompareInternalKey on construction (stably, so equal keys keep their given order).
// Errors can be injected: FailAfterMoves(n, s) makes the n-th positioning call from now
// leave the iterator invalid with status s.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "db/dbformat.h"
#include "util/internal_iterator.h"

namespace tidesdb {

class VectorIterator final : public InternalIterator {
 public:
  using Entry = std::pair<std::string, std::string>;

  explicit VectorIterator(std::vector<Entry> entries) : entries_(std::move(entries)) {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return CompareInternalKey(a.first, b.first) < 0; });
    pos_ = entries_.size();
  }

  // The n-th positioning call (Seek*, Next, Prev) from now fails with `status` instead of
  // moving (n == 1: the very next call); every call after it fails as well.
  void FailAfterMoves(int n, Status status) {
    moves_until_failure_ = n;
    injected_ = std::move(status);
  }

  bool Valid() const override { return status_.ok() && pos_ < entries_.size(); }
  void SeekToFirst() override {
    if (Move()) pos_ = 0;
  }
  void SeekToLast() override {
    if (Move()) pos_ = entries_.empty() ? entries_.size() : entries_.size() - 1;
  }
  void Seek(Slice target) override {
    if (!Move()) return;
    auto it = std::lower_bound(entries_.begin(), entries_.end(), target,
                               [](const Entry& e, Slice t) { return CompareInternalKey(e.first, t) < 0; });
    pos_ = static_cast<size_t>(it - entries_.begin());
  }
  void SeekForPrev(Slice target) override {
    if (!Move()) return;
    auto it = std::upper_bound(entries_.begin(), entries_.end(), target,
                               [](Slice t, const Entry& e) { return CompareInternalKey(t, e.first) < 0; });
    // One before the first entry > target; entries_.size() (invalid) when there is none.
    pos_ = it == entries_.begin() ? entries_.size() : static_cast<size_t>(it - entries_.begin()) - 1;
  }
  void Next() override {
    if (Move()) ++pos_;
  }
  void Prev() override {
    if (Move()) pos_ = pos_ == 0 ? entries_.size() : pos_ - 1;
  }
  Slice key() const override { return entries_[pos_].first; }
  Slice value() const override { return entries_[pos_].second; }
  Status status() const override { return status_; }

 private:
  // False (and the error set) if this move is the injected failure or comes after it.
  bool Move() {
    if (!status_.ok()) return false;
    if (moves_until_failure_ > 0 && --moves_until_failure_ == 0) {
      status_ = injected_;
      return false;
    }
    return true;
  }

  std::vector<Entry> entries_;
  size_t pos_;  // entries_.size() when not positioned
  int moves_until_failure_ = 0;
  Status injected_;
  Status status_;
};

}  // namespace tidesdb
