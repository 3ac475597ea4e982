#include "sst/table_reader.h"

#include <algorithm>
#include <utility>

#include "cache/block_cache.h"
#include "db/dbformat.h"

namespace tidesdb {

namespace {

// True if the block at handle (plus its trailer) lies inside [0, limit).
bool HandleWithin(const BlockHandle& h, uint64_t limit) {
  return h.offset() <= limit && h.size() <= limit - h.offset() &&
         kBlockTrailerSize <= limit - h.offset() - h.size();
}

bool DecodeHandleValue(Slice value, BlockHandle* handle) {
  return handle->DecodeFrom(&value) && value.empty();
}

// Where key falls between the user keys lower < upper, as a fraction in [0, 1]: the bytes
// after the two bounds' common prefix are read as the digits of a number. The digits'
// alphabet is the bytes of the bounds, widened to whole ASCII classes (digits, upper and
// lower case letters; printable ASCII if that is still under ten symbols), or all 256
// byte values when a bound is not printable text. So between "k0120" and "k0130", "k0123"
// sits at 0.3, as in decimal, and big-endian binary integers interpolate as numbers. A
// key byte outside the alphabet saturates the rest of the digits (to the lowest or the
// highest), which keeps the result non-decreasing as key grows. 0.5 when the bounds'
// first digits do not differ.
double KeyFraction(Slice lower, Slice upper, Slice key) {
  if (key <= lower) return 0;
  if (key >= upper) return 1;
  size_t prefix = 0;
  while (prefix < lower.size() && prefix < upper.size() && lower[prefix] == upper[prefix]) ++prefix;
  // lower < key < upper, so key has that prefix too. Twelve digits exhaust a double.
  constexpr size_t kDigits = 12;
  lower = lower.substr(prefix, kDigits);
  upper = upper.substr(prefix, kDigits);
  key = key.substr(prefix, kDigits);

  unsigned lo = 0xff, hi = 0;
  bool text = true;
  for (Slice bound : {lower, upper}) {
    for (char c : bound) {
      const auto b = static_cast<unsigned char>(c);
      lo = std::min<unsigned>(lo, b);
      hi = std::max<unsigned>(hi, b);
      text = text && b >= ' ' && b <= '~';
    }
  }
  if (!text) {
    lo = 0;
    hi = 0xff;
  } else {
    for (auto [first, last] : {std::pair<unsigned, unsigned>{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}) {
      if (lo <= last && hi >= first) {
        lo = std::min(lo, first);
        hi = std::max(hi, last);
      }
    }
    if (hi - lo < 9) {
      lo = ' ';
      hi = '~';
    }
  }
  const double base = hi - lo + 1;
  auto value = [&](Slice s) {
    double v = 0, scale = 1;
    int saturated = 0;  // -1: the rest are lowest digits, +1: highest
    for (size_t i = 0; i < kDigits; ++i) {
      scale /= base;
      if (saturated == 0 && i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < lo) {
          saturated = -1;
        } else if (b > hi) {
          saturated = 1;
        } else {
          v += (b - lo) * scale;
        }
      }
      if (saturated > 0) v += (base - 1) * scale;
    }
    return v;
  };
  const double v_lower = value(lower), v_upper = value(upper);
  if (v_upper <= v_lower) return 0.5;
  return std::clamp((value(key) - v_lower) / (v_upper - v_lower), 0.0, 1.0);
}

}  // namespace

TableReader::TableReader(std::string fname, uint64_t file_number, std::unique_ptr<RandomAccessFile> file,
                         uint64_t file_size, BlockCache* cache)
    : fname_(std::move(fname)),
      file_number_(file_number),
      file_(std::move(file)),
      file_size_(file_size),
      cache_(cache) {}

TableReader::~TableReader() = default;

Status TableReader::Open(const std::string& fname, uint64_t file_number,
                         std::unique_ptr<RandomAccessFile> file, uint64_t file_size, BlockCache* cache,
                         std::unique_ptr<TableReader>* out) {
  out->reset();
  if (file_size < kFooterSize) return TableCorruption(fname, 0, "file too short to be a klog");
  std::unique_ptr<TableReader> t(new TableReader(fname, file_number, std::move(file), file_size, cache));

  const uint64_t footer_offset = file_size - kFooterSize;
  char footer_buf[kFooterSize];
  Slice footer_input;
  Status s = t->file_->Read(footer_offset, kFooterSize, &footer_input, footer_buf);
  if (!s.ok()) return s;
  s = t->footer_.DecodeFrom(footer_input, fname, footer_offset);
  if (!s.ok()) return s;

  const Footer& f = t->footer_;
  const bool has_filter = !f.filter_handle.IsNull();
  if ((has_filter && !HandleWithin(f.filter_handle, footer_offset)) ||
      !HandleWithin(f.index_handle, footer_offset) || !HandleWithin(f.properties_handle, footer_offset)) {
    return TableCorruption(fname, footer_offset, "bad block handle in footer");
  }

  std::string contents;
  s = ReadBlock(t->file_.get(), fname, f.properties_handle,
                /*verify_checksum=*/true, &contents);
  if (!s.ok()) return s;
  s = t->props_.DecodeFrom(contents);
  if (!s.ok()) return TableCorruption(fname, f.properties_handle.offset(), s.message());
  if (t->props_.num_entries > 0 && (t->props_.smallest_key.size() < 8 || t->props_.largest_key.size() < 8)) {
    return TableCorruption(fname, f.properties_handle.offset(), "bad key range in properties");
  }

  if (has_filter) {
    std::string filter;
    s = ReadBlock(t->file_.get(), fname, f.filter_handle, /*verify_checksum=*/true, &filter);
    if (!s.ok()) return s;
    t->filter_ = std::make_unique<FilterReader>(std::move(filter));
  }

  s = ReadBlock(t->file_.get(), fname, f.index_handle, /*verify_checksum=*/true, &contents);
  if (!s.ok()) return s;
  t->index_block_ = std::make_unique<Block>(std::move(contents));
  if (!t->index_block_->ok()) return TableCorruption(fname, f.index_handle.offset(), "bad index block");
  // Data blocks end where the first meta block begins.
  const uint64_t data_end = has_filter ? f.filter_handle.offset() : f.index_handle.offset();
  s = t->ValidateIndex(data_end);
  if (!s.ok()) return s;

  *out = std::move(t);
  return Status::OK();
}

// The index must describe data blocks that tile [0, data_end) in order, under
// strictly increasing keys, so that later reads can trust every handle in it.
Status TableReader::ValidateIndex(uint64_t data_end) {
  const uint64_t index_offset = footer_.index_handle.offset();
  std::unique_ptr<InternalIterator> it = index_block_->NewIterator();
  uint64_t expected_offset = 0;
  std::string prev_key;
  uint32_t blocks = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    BlockHandle h;
    if (!DecodeHandleValue(it->value(), &h) || h.offset() != expected_offset || !HandleWithin(h, data_end)) {
      return TableCorruption(fname_, index_offset,
                             "bad block handle in index entry " + std::to_string(blocks));
    }
    if (blocks > 0 && CompareInternalKey(prev_key, it->key()) >= 0) {
      return TableCorruption(fname_, index_offset, "index keys out of order");
    }
    // Lookups search the index in place (FindDataBlock): each entry must be a restart point.
    Slice key, value;
    if (!index_block_->RestartEntry(blocks, &key, &value) || key != it->key() || value != it->value()) {
      return TableCorruption(fname_, index_offset,
                             "index entry " + std::to_string(blocks) + " is not a restart point");
    }
    prev_key.assign(it->key());
    expected_offset = h.offset() + h.size() + kBlockTrailerSize;
    ++blocks;
  }
  if (!it->status().ok()) return TableCorruption(fname_, index_offset, it->status().message());
  if (expected_offset != data_end)
    return TableCorruption(fname_, index_offset, "index does not cover the data blocks");
  // An empty block has one restart point and no entries.
  if (blocks != index_block_->num_restarts() && !(blocks == 0 && index_block_->num_restarts() == 1))
    return TableCorruption(fname_, index_offset, "index restart points are not its entries");
  num_data_blocks_ = blocks;
  if ((blocks == 0) != (props_.num_entries == 0)) {
    return TableCorruption(fname_, index_offset, "index disagrees with the entry count");
  }
  return Status::OK();
}

Status TableReader::GetDataBlock(const BlockHandle& handle, bool fill_cache,
                                 std::shared_ptr<const Block>* block) const {
  if (cache_ != nullptr) {
    *block = cache_->Lookup<Block>(file_number_, handle.offset());
    if (*block != nullptr) return Status::OK();
  }
  std::string contents;
  Status s = ReadBlock(file_.get(), fname_, handle, /*verify_checksum=*/true, &contents);
  if (!s.ok()) return s;
  auto b = std::make_shared<const Block>(std::move(contents));
  if (!b->ok()) return TableCorruption(fname_, handle.offset(), "bad data block restart array");
  if (cache_ != nullptr && fill_cache) cache_->Insert(file_number_, handle.offset(), b, b->size());
  *block = std::move(b);
  return Status::OK();
}

bool TableReader::RangeMayMatch(Slice start, Slice limit) const {
  if (filter_ == nullptr) return true;
  return RangeMayMatchFilter(start, limit, props_.filter_prefix_length,
                             [this](Slice key) { return filter_->KeyMayMatch(key); });
}

Status TableReader::Get(Slice target, bool* found, std::string* found_key, std::string* value) const {
  Slice pinned;
  std::shared_ptr<const Block> pin;
  Status s = Get(target, found, found_key, &pinned, &pin);
  if (s.ok() && *found) value->assign(pinned.data(), pinned.size());
  return s;
}

Status TableReader::Get(Slice target, bool* found, std::string* found_key, Slice* value,
                        std::shared_ptr<const Block>* pin) const {
  *found = false;
  if (target.size() < 8) return Status::InvalidArgument("Get target is not an internal key");
  const Slice user_key = ExtractUserKey(target);
  if (filter_ != nullptr && !filter_->KeyMayMatch(FilterKey(user_key, props_.filter_prefix_length)))
    return Status::OK();

  uint32_t index;
  BlockHandle handle;
  Status s = FindDataBlock(target, &index, &handle);
  if (!s.ok() || index == kPastLastBlock) return s;
  s = GetDataBlock(handle, /*fill_cache=*/true, pin);
  if (!s.ok()) return s;
  // The index key of this block is >= target and < the next block's first key,
  // so the first entry >= target is in this block or has a larger user key: no
  // need to look on.
  bool valid = false;
  s = (*pin)->SeekEntry(target, found_key, value, &valid);
  if (!s.ok()) return TableCorruption(fname_, handle.offset(), s.message());
  *found = valid && ExtractUserKey(*found_key) == user_key;
  return Status::OK();
}

Status TableReader::FindDataBlock(Slice target, uint32_t* index, BlockHandle* handle) const {
  *index = num_data_blocks_ == 0 ? 0 : index_block_->LowerBoundRestart(target);
  if (*index == num_data_blocks_) {
    *index = kPastLastBlock;
    return Status::OK();
  }
  Slice key, value;
  // Every entry was checked at open (ValidateIndex); a failure here is memory damage.
  if (!index_block_->RestartEntry(*index, &key, &value) || !DecodeHandleValue(value, handle)) {
    return TableCorruption(fname_, footer_.index_handle.offset(), "bad block handle in index");
  }
  return Status::OK();
}

bool TableReader::BlockBounds(uint32_t index, Slice* lower, Slice* upper) const {
  // The block holds the keys after the previous block's index key (or from the table's
  // smallest key) up to its own index key.
  Slice unused;
  if (!index_block_->RestartEntry(index, upper, &unused)) return false;
  if (index == 0 || !index_block_->RestartEntry(index - 1, lower, &unused)) *lower = props_.smallest_key;
  return true;
}

uint64_t TableReader::OffsetInBlock(const BlockHandle& handle, Slice lower, Slice upper,
                                    Slice internal_key) const {
  // Place the key by where it falls between the block's bounds.
  const double fraction =
      KeyFraction(ExtractUserKey(lower), ExtractUserKey(upper), ExtractUserKey(internal_key));
  return handle.offset() +
         static_cast<uint64_t>(fraction * static_cast<double>(handle.size() + kBlockTrailerSize));
}

uint64_t TableReader::ApproximateOffsetOf(Slice internal_key) const {
  if (internal_key.size() < 8) return 0;
  uint32_t index;
  BlockHandle handle;
  if (!FindDataBlock(internal_key, &index, &handle).ok() || index == kPastLastBlock) return file_size_;
  Slice lower, upper;
  if (!BlockBounds(index, &lower, &upper)) return file_size_;
  return OffsetInBlock(handle, lower, upper, internal_key);
}

void TableReader::ApproximateRange(Slice start, Slice limit, uint64_t* begin, uint64_t* end) const {
  uint32_t index = kPastLastBlock;
  BlockHandle handle;
  Slice lower, upper;
  const bool found = start.size() >= 8 && FindDataBlock(start, &index, &handle).ok() &&
                     index != kPastLastBlock && BlockBounds(index, &lower, &upper);
  if (start.size() < 8) {
    *begin = 0;
  } else {
    *begin = found ? OffsetInBlock(handle, lower, upper, start) : file_size_;
  }
  if (limit.empty()) {
    *end = file_size_;
  } else if (found && limit.size() >= 8 && CompareInternalKey(limit, upper) <= 0) {
    // FindDataBlock picks the first block whose index key is >= the key: a limit not
    // past the start block's index key falls in that block too.
    *end = OffsetInBlock(handle, lower, upper, limit);
  } else {
    *end = ApproximateOffsetOf(limit);
  }
}

// Two-level iteration: the index iterator picks a data block, a block iterator
// walks it. Errors are sticky: after one, the iterator stays invalid and
// status() names the file and the offset of the bad block.
class TableReader::TableIterator final : public InternalIterator {
 public:
  TableIterator(const TableReader* table, bool fill_cache)
      : table_(table), fill_cache_(fill_cache), index_it_(table->index_block_->NewIterator()) {}

  bool Valid() const override { return data_it_ != nullptr && data_it_->Valid(); }
  Slice key() const override { return data_it_->key(); }
  Slice value() const override { return data_it_->value(); }
  Status status() const override { return status_; }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    index_it_->SeekToFirst();
    InitDataBlock();
    if (data_it_ != nullptr) data_it_->SeekToFirst();
    SkipEmptyBlocksForward();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    index_it_->SeekToLast();
    InitDataBlock();
    if (data_it_ != nullptr) data_it_->SeekToLast();
    SkipEmptyBlocksBackward();
  }

  void Seek(Slice target) override {
    if (!status_.ok()) return;
    index_it_->Seek(target);
    InitDataBlock();
    if (data_it_ != nullptr) data_it_->Seek(target);
    SkipEmptyBlocksForward();
  }

  void SeekBounded(Slice target, Slice limit) override {
    if (!status_.ok()) return;
    if (target.size() >= 8 && !table_->RangeMayMatch(ExtractUserKey(target), limit)) {
      ClearDataBlock();  // nothing of the range here: exhausted
      return;
    }
    Seek(target);
  }

  void SeekForPrev(Slice target) override {
    if (!status_.ok()) return;
    // The block whose index key is the first >= target holds the last entry <=
    // target, unless all its entries are > target; then it is the previous
    // block's last entry.
    index_it_->Seek(target);
    if (!index_it_->Valid() && index_it_->status().ok()) index_it_->SeekToLast();
    InitDataBlock();
    if (data_it_ != nullptr) data_it_->SeekForPrev(target);
    SkipEmptyBlocksBackward();
  }

  void Next() override {
    if (!Valid()) return;
    data_it_->Next();
    SkipEmptyBlocksForward();
  }

  void Prev() override {
    if (!Valid()) return;
    data_it_->Prev();
    SkipEmptyBlocksBackward();
  }

 private:
  void SetError(Status s) {
    status_ = std::move(s);
    data_it_.reset();
    block_.reset();
  }

  void ClearDataBlock() {
    data_it_.reset();
    block_.reset();
  }

  // Points data_it_ at the block the index iterator is on (unpositioned), or
  // clears it.
  void InitDataBlock() {
    if (!index_it_->Valid()) {
      if (!index_it_->status().ok()) {
        SetError(TableCorruption(table_->fname_, table_->footer_.index_handle.offset(),
                                 index_it_->status().message()));
      } else {
        ClearDataBlock();
      }
      return;
    }
    BlockHandle handle;
    if (!DecodeHandleValue(index_it_->value(), &handle)) {
      SetError(TableCorruption(table_->fname_, table_->footer_.index_handle.offset(),
                               "bad block handle in index"));
      return;
    }
    if (data_it_ != nullptr && handle.offset() == block_offset_) return;  // already loaded
    ClearDataBlock();
    std::shared_ptr<const Block> block;
    Status s = table_->GetDataBlock(handle, fill_cache_, &block);
    if (!s.ok()) {
      SetError(std::move(s));
      return;
    }
    block_ = std::move(block);
    block_offset_ = handle.offset();
    data_it_ = block_->NewIterator();
  }

  // True (and the error recorded) if the data block iterator stopped on
  // corruption.
  bool DataError() {
    if (data_it_ == nullptr || data_it_->status().ok()) return false;
    SetError(TableCorruption(table_->fname_, block_offset_, data_it_->status().message()));
    return true;
  }

  void SkipEmptyBlocksForward() {
    while (status_.ok() && (data_it_ == nullptr || !data_it_->Valid())) {
      if (DataError()) return;
      if (!index_it_->Valid()) {
        ClearDataBlock();
        return;
      }
      index_it_->Next();
      InitDataBlock();
      if (data_it_ != nullptr) data_it_->SeekToFirst();
    }
  }

  void SkipEmptyBlocksBackward() {
    while (status_.ok() && (data_it_ == nullptr || !data_it_->Valid())) {
      if (DataError()) return;
      if (!index_it_->Valid()) {
        ClearDataBlock();
        return;
      }
      index_it_->Prev();
      InitDataBlock();
      if (data_it_ != nullptr) data_it_->SeekToLast();
    }
  }

  const TableReader* const table_;
  const bool fill_cache_;
  std::unique_ptr<InternalIterator> index_it_;
  std::shared_ptr<const Block> block_;         // the block data_it_ walks
  std::unique_ptr<InternalIterator> data_it_;  // declared after block_: destroyed first
  uint64_t block_offset_ = 0;
  Status status_;
};

std::unique_ptr<InternalIterator> TableReader::NewIterator(bool fill_cache) const {
  return std::make_unique<TableIterator>(this, fill_cache);
}

}  // namespace tidesdb
