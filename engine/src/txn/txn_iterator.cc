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
  Slice key() const override { return key_; }
  Slice value() const override { return value_; }
  Status status() const override { return base_->status(); }

  void SeekToFirst() override {
    if (lower_) {
      Seek(*lower_);
      return;
    }
    StartRange(std::nullopt);
    base_->SeekToFirst();
    forward_ = true;
    SettleForward(Delta() ? Delta()->begin() : WriteSet::CfMap::const_iterator());
  }

  void SeekToLast() override {
    StartReverseRange(std::nullopt);
    if (upper_) {
      base_->SeekForPrev(*upper_);
      if (base_->Valid() && base_->key() == Slice(*upper_)) base_->Prev();
    } else {
      base_->SeekToLast();
    }
    forward_ = false;
    SettleReverse(upper_ ? DeltaBefore(*upper_) : DeltaLast());
  }

  void Seek(Slice target) override {
    if (lower_ && target < Slice(*lower_)) target = *lower_;
    StartRange(std::string(target));
    base_->Seek(target);
    forward_ = true;
    SettleForward(DeltaAtOrAfter(target));
  }

  void SeekForPrev(Slice target) override {
    if (upper_ && target >= Slice(*upper_)) {
      SeekToLast();
      return;
    }
    StartReverseRange(std::string(target));
    base_->SeekForPrev(target);
    forward_ = false;
    SettleReverse(DeltaAtOrBefore(target));
  }

  void Next() override {
    if (!valid_) return;
    if (!forward_) {
      base_->Seek(key_);  // base at the first key >= key_
      forward_ = true;
    }
    if (base_->Valid() && base_->key() == Slice(key_)) base_->Next();
    SettleForward(DeltaAfter(key_));
  }

  void Prev() override {
    if (!valid_) return;
    if (forward_) {
      base_->SeekForPrev(key_);  // base at the last key <= key_
      forward_ = false;
    }
    if (base_->Valid() && base_->key() == Slice(key_)) base_->Prev();
    SettleReverse(DeltaBefore(key_));
  }

 private:
  using DeltaIt = WriteSet::CfMap::const_iterator;

  const WriteSet::CfMap* Delta() const { return ws_->ForCf(cf_id_); }
  bool DeltaEnd(DeltaIt it) const { return Delta() == nullptr || it == Delta()->end(); }
  DeltaIt DeltaAtOrAfter(Slice k) const { return Delta() ? Delta()->lower_bound(k) : DeltaIt(); }
  DeltaIt DeltaAfter(Slice k) const { return Delta() ? Delta()->upper_bound(k) : DeltaIt(); }
  // Reverse positions: end() means "none".
  DeltaIt DeltaBefore(Slice k) const {
    if (!Delta()) return DeltaIt();
    auto it = Delta()->lower_bound(k);
    return it == Delta()->begin() ? Delta()->end() : std::prev(it);
  }
  DeltaIt DeltaAtOrBefore(Slice k) const {
    if (!Delta()) return DeltaIt();
    auto it = Delta()->upper_bound(k);
    return it == Delta()->begin() ? Delta()->end() : std::prev(it);
  }
  DeltaIt DeltaLast() const {
    if (!Delta() || Delta()->empty()) return Delta() ? Delta()->end() : DeltaIt();
    return std::prev(Delta()->end());
  }
  bool InBounds(Slice k) const { return (!lower_ || k >= Slice(*lower_)) && (!upper_ || k < Slice(*upper_)); }

  // Forward: the smaller of the base's key and the write set's; on a tie the write set's
  // entry wins and the base's is skipped. Deleted entries are stepped over.
  void SettleForward(DeltaIt d) {
    while (true) {
      const bool has_delta = !DeltaEnd(d) && InBounds(d->first);
      const bool has_base = base_->Valid();
      if (!has_delta && !has_base) {
        valid_ = false;
        ExtendHi(std::nullopt);
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
      } else {
        key_ = std::string(base_->key());
        value_ = std::string(base_->value());
      }
      valid_ = true;
      ExtendHi(key_);
      return;
    }
  }

  void SettleReverse(DeltaIt d) {
    while (true) {
      const bool has_delta = !DeltaEnd(d) && InBounds(d->first);
      const bool has_base = base_->Valid();
      if (!has_delta && !has_base) {
        valid_ = false;
        ExtendLo(std::nullopt);
        return;
      }
      if (has_delta && (!has_base || Slice(d->first) >= base_->key())) {
        if (has_base && base_->key() == Slice(d->first) && d->second.deleted) base_->Prev();
        if (d->second.deleted) {
          d = d == Delta()->begin() ? Delta()->end() : std::prev(d);
          continue;
        }
        key_ = d->first;
        value_ = d->second.value;
      } else {
        key_ = std::string(base_->key());
        value_ = std::string(base_->value());
      }
      valid_ = true;
      ExtendLo(key_);
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
  // Extends the current range up to `k`, or to the end of the iterator's bounds.
  void ExtendHi(const std::optional<std::string>& k) {
    if (ranges_ == nullptr) return;
    KeyRange& r = range();
    if (!k) {
      if (upper_) {
        if (!r.hi_unbounded && Slice(r.hi) < Slice(*upper_)) r.hi = *upper_;
      } else {
        r.hi_unbounded = true;
      }
    } else if (!r.hi_unbounded && Slice(*k) > Slice(r.hi)) {
      r.hi = *k;
    }
    if (!r.lo_unbounded && k && Slice(*k) < Slice(r.lo)) r.lo = *k;
  }
  void ExtendLo(const std::optional<std::string>& k) {
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
    if (!r.lo_unbounded && (pending || Slice(*k) < Slice(r.lo))) r.lo = *k;
    if (!r.hi_unbounded && Slice(*k) > Slice(r.hi)) r.hi = *k;
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
  std::string key_, value_;
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
