#include "util/internal_iterator.h"

namespace tidesdb {

namespace {
class EmptyIterator final : public InternalIterator {
 public:
  explicit EmptyIterator(Status s) : status_(std::move(s)) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(Slice) override {}
  void SeekForPrev(Slice) override {}
  void Next() override {}
  void Prev() override {}
  Slice key() const override { return {}; }
  Slice value() const override { return {}; }
  Status status() const override { return status_; }

 private:
  Status status_;
};
}  // namespace

InternalIterator* NewEmptyInternalIterator(Status status) { return new EmptyIterator(std::move(status)); }

}  // namespace tidesdb
