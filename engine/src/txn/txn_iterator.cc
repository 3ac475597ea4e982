#include "txn/txn_iterator.h"

namespace tidesdb {

namespace {

class TxnIterator final : public Iterator {
 public:
  TxnIterator(std::unique_ptr<Iterator> base, const WriteSet* ws, uint32_t cf_id,
              std::optional<std::string> lower, std::optional<std::string> upper,
              std::vector<KeyRange>* ranges, uint64_t range_read_seq)
      : base_(std::move(base)),
        ws_(ws),
        cf_id_(cf_id),
        lower_(std::move(lower)),
        upper_(std::move(upper)),
        ranges_(ranges),
        range_read_seq_(range_read_seq) {}

  bool Valid() const override { return valid_; }
  // A base entry is read in place (valid until the base moves); a write-set entry is a
  // copy (the transaction may overwrite it while the iterator stands on it).
  Slice key() const override { return from_base_ ? base_->key() : Slice(key_); }
  Slice value() const override { return from_base_ ? base_->value() : Slice(value_); }
  Status status() const override { return base_->status(); }

  void SeekToFirst() override {
    if (lower_) {
      Seek(*lower_);
      return;
    }
    limit_.clear();
    StartRange(std::nullopt);
    base_->SeekToFirst();
    forward_ = true;
    const WriteSet::CfMap* delta = Delta();
    SettleForward(delta, delta ? delta->begin() : DeltaIt());
  }

  void SeekToLast() override {
    limit_.clear();
    StartReverseRange(std::nullopt);
    if (upper_) {
      base_->SeekForPrev(*upper_);
      if (base_->Valid() && base_->key() == Slice(*upper_)) base_->Prev();
    } else {
      base_->SeekToLast();
    }
    forward_ = false;
    const WriteSet::CfMap* delta = Delta();
    SettleReverse(delta, upper_ ? DeltaBefore(delta, *upper_) : DeltaLast(delta));
  }

  void Seek(Slice target) override { SeekBounded(target, Slice()); }

  // The base stops at the limit, so the write set's entries stop there too (what follows
  // would be a merge with an incomplete base).
  void SeekBounded(Slice target, Slice limit) override {
    if (lower_ && target < Slice(*lower_)) target = *lower_;
    limit_.assign(limit.data(), limit.size());
    StartRange(std::string(target));
    if (limit.empty()) {
      base_->Seek(target);
    } else {
      base_->SeekBounded(target, limit);
    }
    forward_ = true;
    const WriteSet::CfMap* delta = Delta();
    SettleForward(delta, DeltaAtOrAfter(delta, target));
  }

  void SeekForPrev(Slice target) override {
    if (upper_ && target >= Slice(*upper_)) {
      SeekToLast();
      return;
    }
    limit_.clear();
    StartReverseRange(std::string(target));
    base_->SeekForPrev(target);
    forward_ = false;
    const WriteSet::CfMap* delta = Delta();
    SettleReverse(delta, DeltaAtOrBefore(delta, target));
  }

  void Next() override {
    if (!valid_) return;
    const WriteSet::CfMap* delta = Delta();
    if (forward_ && from_base_) {
      // The base stands on the current key and the write set holds nothing at it.
      DeltaIt d = DeltaAfter(delta, base_->key());
      base_->Next();
      SettleForward(delta, d);
      return;
    }
    SaveCurrent();
    if (!forward_) {
      base_->Seek(key_);  // base at the first key >= key_
      forward_ = true;
    }
    if (base_->Valid() && base_->key() == Slice(key_)) base_->Next();
    SettleForward(delta, DeltaAfter(delta, key_));
  }

  void Prev() override {
    if (!valid_) return;
    // Going forward, Prev seeks the base again (below), which ends a bound.
    limit_.clear();
    const WriteSet::CfMap* delta = Delta();
    if (!forward_ && from_base_) {
      DeltaIt d = DeltaBefore(delta, base_->key());
      base_->Prev();
      SettleReverse(delta, d);
      return;
    }
    SaveCurrent();
    if (forward_) {
      base_->SeekForPrev(key_);  // base at the last key <= key_
      forward_ = false;
    }
    if (base_->Valid() && base_->key() == Slice(key_)) base_->Prev();
    SettleReverse(delta, DeltaBefore(delta, key_));
  }

 private:
  using DeltaIt = WriteSet::CfMap::const_iterator;

  // Looked up at every move: the transaction may have written (or rolled back to a
  // savepoint) since the last one.
  const WriteSet::CfMap* Delta() const { return ws_->ForCf(cf_id_); }
  static bool DeltaEnd(const WriteSet::CfMap* delta, DeltaIt it) {
    return delta == nullptr || it == delta->end();
  }
  static DeltaIt DeltaAtOrAfter(const WriteSet::CfMap* delta, Slice k) {
    return delta ? delta->lower_bound(k) : DeltaIt();
  }
  static DeltaIt DeltaAfter(const WriteSet::CfMap* delta, Slice k) {
    return delta ? delta->upper_bound(k) : DeltaIt();
  }
  // Reverse positions: end() means "none".
  static DeltaIt DeltaBefore(const WriteSet::CfMap* delta, Slice k) {
    if (!delta) return DeltaIt();
    auto it = delta->lower_bound(k);
    return it == delta->begin() ? delta->end() : std::prev(it);
  }
  static DeltaIt DeltaAtOrBefore(const WriteSet::CfMap* delta, Slice k) {
    if (!delta) return DeltaIt();
    auto it = delta->upper_bound(k);
    return it == delta->begin() ? delta->end() : std::prev(it);
  }
  static DeltaIt DeltaLast(const WriteSet::CfMap* delta) {
    if (!delta || delta->empty()) return delta ? delta->end() : DeltaIt();
    return std::prev(delta->end());
  }
  bool InBounds(Slice k) const {
    return (!lower_ || k >= Slice(*lower_)) && (!upper_ || k < Slice(*upper_)) &&
           (limit_.empty() || k < Slice(limit_));
  }

  // Copies the current entry's key out of the base before the base is repositioned.
  void SaveCurrent() {
    if (!from_base_) return;
    key_.assign(base_->key().data(), base_->key().size());
    from_base_ = false;
  }

  // Forward: the smaller of the base's key and the write set's; on a tie the write set's
  // entry wins and the base's is skipped. Deleted entries are stepped over.
  void SettleForward(const WriteSet::CfMap* delta, DeltaIt d) {
    while (true) {
      const bool has_delta = !DeltaEnd(delta, d) && InBounds(d->first);
      const bool has_base = base_->Valid();
      if (!has_delta && !has_base) {
        valid_ = false;
        from_base_ = false;
        ExtendHi(nullptr);
        return;
      }
      if (has_delta && (!has_base || Slice(d->first) <= base_->key())) {
        if (has_base && base_->key() == Slice(d->first)) {
          if (d->second.deleted) base_->Next();  // hidden by the delete
        }
        if (d->second.deleted) {
          ++d;
          continue;
        }
        key_ = d->first;
        value_ = d->second.value;
        from_base_ = false;
      } else {
        from_base_ = true;
      }
      valid_ = true;
      const Slice k = key();
      ExtendHi(&k);
      return;
    }
  }

  void SettleReverse(const WriteSet::CfMap* delta, DeltaIt d) {
    while (true) {
      const bool has_delta = !DeltaEnd(delta, d) && InBounds(d->first);
      const bool has_base = base_->Valid();
      if (!has_delta && !has_base) {
        valid_ = false;
        from_base_ = false;
        ExtendLo(nullptr);
        return;
      }
      if (has_delta && (!has_base || Slice(d->first) >= base_->key())) {
        if (has_base && base_->key() == Slice(d->first) && d->second.deleted) base_->Prev();
        if (d->second.deleted) {
          d = d == delta->begin() ? delta->end() : std::prev(d);
          continue;
        }
        key_ = d->first;
        value_ = d->second.value;
        from_base_ = false;
      } else {
        from_base_ = true;
      }
      valid_ = true;
      const Slice k = key();
      ExtendLo(&k);
      return;
    }
  }

  // --- Scanned-range recording (serializable transactions).
  KeyRange& range() { return (*ranges_)[range_index_]; }
  void StartRange(std::optional<std::string> lo) {
    if (ranges_ == nullptr) return;
    KeyRange r;
    r.cf_id = cf_id_;
    r.read_seq = range_read_seq_;
    r.lo_unbounded = !lo.has_value();
    if (lo) r.lo = std::move(*lo);
    r.hi_unbounded = false;
    r.hi = r.lo;
    ranges_->push_back(std::move(r));
    range_index_ = ranges_->size() - 1;
    lo_pending_ = false;
  }
  // A range read downwards from `hi` (nullopt: from the end of the bounds); its low end
  // is set by the first key reached.
  void StartReverseRange(std::optional<std::string> hi) {
    if (ranges_ == nullptr) return;
    KeyRange r;
    r.cf_id = cf_id_;
    r.read_seq = range_read_seq_;
    r.lo_unbounded = false;
    r.hi_unbounded = !hi && !upper_;
    if (hi) {
      r.hi = std::move(*hi);
    } else if (upper_) {
      r.hi = *upper_;
    }
    ranges_->push_back(std::move(r));
    range_index_ = ranges_->size() - 1;
    lo_pending_ = true;
  }
  // Extends the current range up to `k`, or to the end of the iterator's bounds (of a
  // bounded seek: its limit).
  void ExtendHi(const Slice* k) {
    if (ranges_ == nullptr) return;
    KeyRange& r = range();
    if (!k && !limit_.empty()) {
      if (!r.hi_unbounded && Slice(r.hi) < Slice(limit_)) r.hi = limit_;
    } else if (!k) {
      if (upper_) {
        if (!r.hi_unbounded && Slice(r.hi) < Slice(*upper_)) r.hi = *upper_;
      } else {
        r.hi_unbounded = true;
      }
    } else if (!r.hi_unbounded && *k > Slice(r.hi)) {
      r.hi.assign(k->data(), k->size());
    }
    if (!r.lo_unbounded && k && *k < Slice(r.lo)) r.lo.assign(k->data(), k->size());
  }
  void ExtendLo(const Slice* k) {
    if (ranges_ == nullptr) return;
    KeyRange& r = range();
    const bool pending = lo_pending_;
    lo_pending_ = false;
    if (!k) {
      if (lower_) {
        if (!r.lo_unbounded && (pending || Slice(r.lo) > Slice(*lower_))) r.lo = *lower_;
      } else {
        r.lo_unbounded = true;
      }
      return;
    }
    if (!r.lo_unbounded && (pending || *k < Slice(r.lo))) r.lo.assign(k->data(), k->size());
    if (!r.hi_unbounded && *k > Slice(r.hi)) r.hi.assign(k->data(), k->size());
  }

  std::unique_ptr<Iterator> base_;
  const WriteSet* ws_;
  const uint32_t cf_id_;
  const std::optional<std::string> lower_, upper_;
  std::vector<KeyRange>* ranges_;
  const uint64_t range_read_seq_;
  size_t range_index_ = 0;
  bool lo_pending_ = false;
  bool forward_ = true;
  bool valid_ = false;
  bool from_base_ = false;   // the current entry is the base's (read in place)
  std::string key_, value_;  // the current entry when it is the write set's
  std::string limit_;        // of the last SeekBounded (empty: none)
};

}  // namespace

std::unique_ptr<Iterator> NewTxnIterator(std::unique_ptr<Iterator> base, const WriteSet* ws, uint32_t cf_id,
                                         std::optional<std::string> lower_bound,
                                         std::optional<std::string> upper_bound,
                                         std::vector<KeyRange>* ranges, uint64_t range_read_seq) {
  return std::make_unique<TxnIterator>(std::move(base), ws, cf_id, std::move(lower_bound),
                                       std::move(upper_bound), ranges, range_read_seq);
}

}  // namespace tidesdb
