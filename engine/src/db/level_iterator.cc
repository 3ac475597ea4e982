#include "db/level_iterator.h"

#include <algorithm>
#include <utility>

#include "db/dbformat.h"

namespace tidesdb {

namespace {

class LevelIterator final : public InternalIterator {
 public:
  LevelIterator(std::vector<LevelFile> files, LevelFileOpener open)
      : files_(std::move(files)), open_(std::move(open)), index_(files_.size()) {}

  ~LevelIterator() override { iter_.reset(); }  // before keepalive_

  bool Valid() const override { return iter_ != nullptr && iter_->Valid(); }
  Slice key() const override { return iter_->key(); }
  Slice value() const override { return iter_->value(); }
  Status status() const override {
    if (!status_.ok()) return status_;
    return iter_ != nullptr ? iter_->status() : Status::OK();
  }

  void SeekToFirst() override {
    status_ = Status::OK();
    if (!Open(0)) return;
    iter_->SeekToFirst();
    SkipEmptyForward();
  }

  void SeekToLast() override {
    status_ = Status::OK();
    if (files_.empty() || !Open(files_.size() - 1)) return;
    iter_->SeekToLast();
    SkipEmptyBackward();
  }

  void Seek(Slice target) override { SeekBounded(target, Slice()); }

  // The file holding target is sought within the bound (its filter may rule the range
  // out); the files after it are read from their start, and none that begins at or past
  // the limit is opened.
  void SeekBounded(Slice target, Slice limit) override {
    status_ = Status::OK();
    // The first file whose largest key is >= target.
    auto it = std::partition_point(files_.begin(), files_.end(), [&](const LevelFile& f) {
      return CompareInternalKey(f.largest, target) < 0;
    });
    if (!Open(static_cast<size_t>(it - files_.begin()))) return;
    if (limit.empty()) {
      iter_->Seek(target);
    } else {
      iter_->SeekBounded(target, limit);
    }
    SkipEmptyForward(limit);
  }

  void SeekForPrev(Slice target) override {
    status_ = Status::OK();
    // The last file whose smallest key is <= target.
    auto it = std::partition_point(files_.begin(), files_.end(), [&](const LevelFile& f) {
      return CompareInternalKey(f.smallest, target) <= 0;
    });
    if (it == files_.begin()) {
      Close();
      return;
    }
    if (!Open(static_cast<size_t>(it - files_.begin()) - 1)) return;
    iter_->SeekForPrev(target);
    SkipEmptyBackward();
  }

  void Next() override {
    iter_->Next();
    SkipEmptyForward();
  }

  void Prev() override {
    iter_->Prev();
    SkipEmptyBackward();
  }

 private:
  void Close() {
    iter_.reset();
    keepalive_.reset();
    index_ = files_.size();
  }

  // Positions on file i (keeping it if it is the open one); false, closed, past the end.
  bool Open(size_t i) {
    if (i >= files_.size()) {
      Close();
      return false;
    }
    if (i == index_ && iter_ != nullptr) return true;
    Close();
    iter_ = open_(i, &keepalive_);
    index_ = i;
    return true;
  }

  // Stops on an error; otherwise moves on to the next files while the current one has
  // nothing more, but not to a file that starts at or past limit (a user key; empty: none).
  void SkipEmptyForward(Slice limit = Slice()) {
    while (iter_ != nullptr && !iter_->Valid()) {
      if (!iter_->status().ok()) {
        status_ = iter_->status();
        Close();
        return;
      }
      if (!limit.empty() && index_ + 1 < files_.size() &&
          ExtractUserKey(files_[index_ + 1].smallest) >= limit) {
        Close();
        return;
      }
      if (!Open(index_ + 1)) return;
      iter_->SeekToFirst();
    }
  }

  void SkipEmptyBackward() {
    while (iter_ != nullptr && !iter_->Valid()) {
      if (!iter_->status().ok()) {
        status_ = iter_->status();
        Close();
        return;
      }
      if (index_ == 0) {
        Close();
        return;
      }
      Open(index_ - 1);
      iter_->SeekToLast();
    }
  }

  const std::vector<LevelFile> files_;
  const LevelFileOpener open_;
  size_t index_;  // the open file, files_.size() for none
  std::shared_ptr<void> keepalive_;
  std::unique_ptr<InternalIterator> iter_;  // declared after keepalive_: destroyed first
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewLevelIterator(std::vector<LevelFile> files, LevelFileOpener open) {
  return std::make_unique<LevelIterator>(std::move(files), std::move(open));
}

}  // namespace tidesdb
