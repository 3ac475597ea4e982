#include "db/merging_iterator.h"

#include <string>
#include <utility>

#include "db/dbformat.h"

namespace tidesdb {

namespace {

// Invariant while Valid(): heap_ holds exactly the valid children; in kForward every child
// is at its first entry after the current position of the merged sequence (or exhausted),
// in kReverse at its last entry before it. The heap top is the current entry.
class MergingIterator final : public InternalIterator {
 public:
  explicit MergingIterator(std::vector<std::unique_ptr<InternalIterator>> children)
      : children_(std::move(children)) {
    heap_.reserve(children_.size());
  }

  bool Valid() const override { return status_.ok() && !heap_.empty(); }

  void SeekToFirst() override {
    for (auto& c : children_) c->SeekToFirst();
    Restart(Direction::kForward);
  }
  void SeekToLast() override {
    for (auto& c : children_) c->SeekToLast();
    Restart(Direction::kReverse);
  }
  void Seek(Slice target) override {
    for (auto& c : children_) c->Seek(target);
    Restart(Direction::kForward);
  }
  void SeekBounded(Slice target, Slice limit) override {
    for (auto& c : children_) c->SeekBounded(target, limit);
    Restart(Direction::kForward);
  }
  void SeekForPrev(Slice target) override {
    for (auto& c : children_) c->SeekForPrev(target);
    Restart(Direction::kReverse);
  }

  void Next() override {
    if (!Valid()) return;
    if (direction_ == Direction::kForward) {
      StepTop();
    } else {
      SwitchDirection(Direction::kForward);
    }
  }
  void Prev() override {
    if (!Valid()) return;
    if (direction_ == Direction::kReverse) {
      StepTop();
    } else {
      SwitchDirection(Direction::kReverse);
    }
  }

  Slice key() const override { return heap_.front().key; }
  Slice value() const override { return children_[heap_.front().child]->value(); }
  Status status() const override { return status_; }

 private:
  enum class Direction { kForward, kReverse };

  struct HeapEntry {
    size_t child;
    Slice key;  // children_[child]->key(), cached: valid until that child moves
  };

  // True if a comes before b in the current direction: (key, child index) ascending going
  // forward, descending going backward. Entries of one heap never share a child.
  bool Before(const HeapEntry& a, const HeapEntry& b) const {
    int r = CompareInternalKey(a.key, b.key);
    if (r == 0) r = a.child < b.child ? -1 : 1;
    return direction_ == Direction::kForward ? r < 0 : r > 0;
  }

  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    HeapEntry moving = heap_[i];
    while (true) {
      size_t first = 2 * i + 1;
      if (first >= n) break;
      if (first + 1 < n && Before(heap_[first + 1], heap_[first])) ++first;
      if (!Before(heap_[first], moving)) break;
      heap_[i] = heap_[first];
      i = first;
    }
    heap_[i] = moving;
  }

  void NoteError(const Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }

  // Rebuilds the heap from the children's positions after all of them moved.
  void RebuildHeap() {
    runner_up_ = 0;
    heap_.clear();
    for (size_t i = 0; i < children_.size(); ++i) {
      InternalIterator* c = children_[i].get();
      if (c->Valid()) {
        heap_.push_back(HeapEntry{i, c->key()});
      } else {
        NoteError(c->status());
      }
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
  }

  void Restart(Direction direction) {
    status_ = Status::OK();
    direction_ = direction;
    RebuildHeap();
  }

  // Moves the child at the top one step in the current direction.
  void StepTop() {
    HeapEntry& top = heap_.front();
    InternalIterator* c = children_[top.child].get();
    if (direction_ == Direction::kForward) {
      c->Next();
    } else {
      c->Prev();
    }
    if (c->Valid()) {
      top.key = c->key();
      // A scan usually reads on in one child: if it still comes before the runner-up (the
      // smaller of the top's two heap children, which did not move), the heap is in order.
      if (heap_.size() < 2) return;
      if (runner_up_ == 0) runner_up_ = heap_.size() > 2 && Before(heap_[2], heap_[1]) ? 2 : 1;
      if (Before(top, heap_[runner_up_])) return;
      runner_up_ = 0;
      SiftDown(0);
      return;
    }
    NoteError(c->status());
    runner_up_ = 0;
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0);
  }

  // The current entry is (k, cur). Going forward, every other child must be at its first
  // entry after (k, cur) in the merged order: a child with a lower index skips its entries
  // equal to k, a higher one keeps them. Going backward, symmetrically, at its last entry
  // before (k, cur). The current child itself is exactly at (k, cur) and just steps.
  void SwitchDirection(Direction direction) {
    const size_t cur = heap_.front().child;
    current_key_.assign(heap_.front().key);
    const Slice k = current_key_;
    for (size_t i = 0; i < children_.size(); ++i) {
      if (i == cur) continue;
      InternalIterator* c = children_[i].get();
      if (direction == Direction::kForward) {
        c->Seek(k);
        if (i < cur) {
          while (c->Valid() && CompareInternalKey(c->key(), k) == 0) c->Next();
        }
      } else {
        c->SeekForPrev(k);
        if (i > cur) {
          while (c->Valid() && CompareInternalKey(c->key(), k) == 0) c->Prev();
        }
      }
    }
    InternalIterator* c = children_[cur].get();
    if (direction == Direction::kForward) {
      c->Next();
    } else {
      c->Prev();
    }
    direction_ = direction;
    RebuildHeap();
  }

  std::vector<std::unique_ptr<InternalIterator>> children_;
  std::vector<HeapEntry> heap_;
  // Index (1 or 2) in heap_ of the smaller child of the top; 0 when not known.
  size_t runner_up_ = 0;
  Direction direction_ = Direction::kForward;
  std::string current_key_;  // copy of the current key across a direction switch
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewMergingIterator(
    std::vector<std::unique_ptr<InternalIterator>> children) {
  if (children.empty()) return std::unique_ptr<InternalIterator>(NewEmptyInternalIterator());
  if (children.size() == 1) return std::move(children.front());
  return std::make_unique<MergingIterator>(std::move(children));
}

}  // namespace tidesdb
