#include "db/db_iter.h"

namespace tidesdb {

namespace {

// Invariants (the same scheme as LevelDB's DBIter):
//   forward: iter_ is at the newest visible entry of key(); saved_key_/value_ hold it.
//   reverse: iter_ is just before every entry of key() (at a smaller user key, or invalid).
class DBIter final : public Iterator {
 public:
  DBIter(std::unique_ptr<InternalIterator> iter, DBIterOptions options, std::shared_ptr<void> keepalive)
      : keepalive_(std::move(keepalive)), iter_(std::move(iter)), opt_(std::move(options)) {}

  ~DBIter() override {
    iter_.reset();  // before keepalive_
  }

  bool Valid() const override { return valid_; }
  Slice key() const override { return saved_key_; }
  Slice value() const override {
    if (in_place_) return in_place_value_;
    return pinned_ ? Slice(*pinned_) : Slice(value_);
  }
  Status status() const override {
    if (!status_.ok()) return status_;
    return iter_->status();
  }

  void SeekToFirst() override {
    if (opt_.lower_bound) {
      Seek(*opt_.lower_bound);
      return;
    }
    direction_ = kForward;
    ClearState();
    iter_->SeekToFirst();
    FindNextUserEntry(false);
  }

  void SeekToLast() override {
    direction_ = kReverse;
    ClearState();
    if (opt_.upper_bound) {
      SeekBeforeUpperBound();
    } else {
      iter_->SeekToLast();
    }
    FindPrevUserEntry();
  }

  void Seek(Slice target) override { SeekBounded(target, Slice()); }

  void SeekBounded(Slice target, Slice limit) override {
    direction_ = kForward;
    ClearState();
    if (opt_.lower_bound && target < Slice(*opt_.lower_bound)) target = *opt_.lower_bound;
    seek_key_.clear();
    AppendInternalKey(&seek_key_, target, opt_.snapshot, kValueTypeForSeek);
    seek_limit_.assign(limit.data(), limit.size());
    if (limit.empty()) {
      iter_->Seek(seek_key_);
    } else {
      iter_->SeekBounded(seek_key_, limit);
    }
    FindNextUserEntry(false);
  }

  void SeekForPrev(Slice target) override {
    direction_ = kReverse;
    ClearState();
    if (opt_.upper_bound && target >= Slice(*opt_.upper_bound)) {
      SeekBeforeUpperBound();
    } else {
      // The last internal key of `target` is (target, sequence 0, type 0).
      seek_key_.clear();
      AppendInternalKey(&seek_key_, target, 0, ValueType::kDeletion);
      iter_->SeekForPrev(seek_key_);
    }
    FindPrevUserEntry();
  }

  void Next() override {
    if (!valid_) return;
    if (direction_ == kReverse) {
      direction_ = kForward;
      // iter_ is before all entries of saved_key_: step onto them, then past them.
      if (!iter_->Valid()) {
        iter_->SeekToFirst();
      } else {
        iter_->Next();
      }
    } else {
      iter_->Next();
    }
    FindNextUserEntry(true);
  }

  void Prev() override {
    if (!valid_) return;
    seek_limit_.clear();  // backward, the bound is over (what lies before is complete)
    if (direction_ == kForward) {
      // Move iter_ before every entry of the current key.
      while (true) {
        iter_->Prev();
        if (!iter_->Valid()) break;
        if (ExtractUserKey(iter_->key()) < Slice(saved_key_)) break;
      }
      direction_ = kReverse;
    }
    FindPrevUserEntry();
  }

 private:
  enum Direction { kForward, kReverse };

  void ClearState() {
    valid_ = false;
    status_ = Status::OK();
    seek_limit_.clear();
  }

  void SeekBeforeUpperBound() {
    seek_key_.clear();
    AppendInternalKey(&seek_key_, *opt_.upper_bound, kMaxSequence, kValueTypeForSeek);
    iter_->SeekForPrev(seek_key_);
    // SeekForPrev may land on an entry of the bound itself only if its sequence were
    // kMaxSequence, which no write uses; step back once more to be safe.
    while (iter_->Valid() && ExtractUserKey(iter_->key()) >= Slice(*opt_.upper_bound)) iter_->Prev();
  }

  bool ParseCurrent(ParsedInternalKey* ikey) {
    if (!ParseInternalKey(iter_->key(), ikey)) {
      status_ = Status::Corruption("malformed internal key in iterator");
      valid_ = false;
      return false;
    }
    return true;
  }

  // Forward: from iter_'s position, find the first user key whose newest visible entry is
  // live. With skipping, entries of user keys <= saved_key_ are hidden.
  void FindNextUserEntry(bool skipping) {
    valid_ = false;
    for (; iter_->Valid(); iter_->Next()) {
      ParsedInternalKey ikey;
      if (!ParseCurrent(&ikey)) return;
      if (opt_.upper_bound && ikey.user_key >= Slice(*opt_.upper_bound)) return;
      if (!seek_limit_.empty() && ikey.user_key >= Slice(seek_limit_)) return;
      if (ikey.sequence > opt_.snapshot) continue;
      if (skipping && ikey.user_key <= Slice(saved_key_)) continue;
      // The newest visible entry of this user key decides; older ones are hidden.
      saved_key_.assign(ikey.user_key.data(), ikey.user_key.size());
      skipping = true;
      // A value held in the entry is read in place: iter_ stays on it until the next move.
      if (LiveInlineValue(ikey.type, iter_->value(), opt_.now_seconds, &in_place_value_)) {
        in_place_ = true;
        pinned_.reset();
        valid_ = true;
        return;
      }
      in_place_ = false;
      EntryState state;
      Status s =
          DecodeEntry(ikey.type, iter_->value(), opt_.now_seconds, opt_.fetch, &state, &value_, &pinned_);
      if (!s.ok()) {
        status_ = s;
        return;
      }
      if (state == EntryState::kLive) {
        valid_ = true;
        return;
      }
    }
  }

  // Reverse: walk backward collecting the newest visible entry of the user key before
  // iter_; stop when the key changes and the collected entry is live.
  void FindPrevUserEntry() {
    valid_ = false;
    bool have_live = false;
    ValueType last_type = ValueType::kDeletion;
    while (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!ParseCurrent(&ikey)) return;
      if (opt_.lower_bound && ikey.user_key < Slice(*opt_.lower_bound)) break;
      if (ikey.sequence <= opt_.snapshot) {
        if (have_live && ikey.user_key < Slice(saved_key_)) break;  // saved_key_ complete
        // Entries of one key arrive oldest first going backward: the last seen wins.
        bool deleted = EntryIsDeleted(ikey.type, iter_->value(), opt_.now_seconds);
        if (deleted) {
          have_live = false;
          saved_key_.assign(ikey.user_key.data(), ikey.user_key.size());
        } else {
          have_live = true;
          last_type = ikey.type;
          saved_key_.assign(ikey.user_key.data(), ikey.user_key.size());
          raw_value_.assign(iter_->value().data(), iter_->value().size());
        }
      }
      iter_->Prev();
    }
    if (!iter_->status().ok()) return;
    if (!have_live) return;
    // iter_ has moved past the entry: its value is read in place from the copy taken.
    if (LiveInlineValue(last_type, raw_value_, opt_.now_seconds, &in_place_value_)) {
      in_place_ = true;
      pinned_.reset();
      valid_ = true;
      return;
    }
    in_place_ = false;
    EntryState state;
    Status s = DecodeEntry(last_type, raw_value_, opt_.now_seconds, opt_.fetch, &state, &value_, &pinned_);
    if (!s.ok()) {
      status_ = s;
      return;
    }
    valid_ = state == EntryState::kLive;
  }

  std::shared_ptr<void> keepalive_;
  std::unique_ptr<InternalIterator> iter_;
  DBIterOptions opt_;
  Direction direction_ = kForward;
  bool valid_ = false;
  Status status_;
  std::string saved_key_;
  std::string raw_value_;
  std::string value_;
  // A value-log value held in the block cache: value() reads it in place (no copy).
  std::shared_ptr<const std::string> pinned_;
  // The current value lies in iter_'s entry (forward) or in raw_value_ (reverse).
  bool in_place_ = false;
  Slice in_place_value_;
  std::string seek_key_;
  // The limit of the last SeekBounded (empty: none): Next stops at it.
  std::string seek_limit_;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<InternalIterator> internal, DBIterOptions options,
                                        std::shared_ptr<void> keepalive) {
  return std::make_unique<DBIter>(std::move(internal), std::move(options), std::move(keepalive));
}

}  // namespace tidesdb
