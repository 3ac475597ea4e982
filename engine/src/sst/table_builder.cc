#include "sst/table_builder.h"

#include <chrono>

#include "db/dbformat.h"
#include "sst/compression.h"
#include "sst/value_log.h"
#include "util/coding.h"

namespace tidesdb {

std::string IndexSeparator(Slice a, Slice b) {
  const Slice ua = ExtractUserKey(a);
  const Slice ub = ExtractUserKey(b);
  const size_t limit = std::min(ua.size(), ub.size());
  size_t diff = 0;
  while (diff < limit && ua[diff] == ub[diff]) ++diff;
  if (diff < limit) {
    const auto byte = static_cast<unsigned char>(ua[diff]);
    if (byte < 0xff && byte + 1 < static_cast<unsigned char>(ub[diff])) {
      // ua[0, diff) + (byte + 1) sorts after ua and before ub; with the
      // smallest trailer it is > a (larger user key) and < b (smaller user
      // key).
      std::string sep(ua.substr(0, diff));
      sep.push_back(static_cast<char>(byte + 1));
      PutFixed64(&sep, PackSequenceAndType(kMaxSequence, kValueTypeForSeek));
      return sep;
    }
  }
  return std::string(a);
}

TableBuilder::TableBuilder(const ColumnFamilyOptions& options, uint32_t cf_id,
                           std::unique_ptr<WritableFile> file, ValueLogWriter* vlog)
    : options_(options),
      file_(std::move(file)),
      vlog_(vlog),
      data_block_(options.block_restart_interval),
      index_block_(1) {  // few entries, searched often: no prefix runs to walk
  props_.cf_id = cf_id;
  if (options.bloom_fpr > 0 && options.bloom_fpr < 1) {
    filter_ = std::make_unique<FilterBuilder>(options.bloom_fpr);
    props_.filter_prefix_length = options.filter_prefix_length;
  }
}

TableBuilder::~TableBuilder() {
  if (!closed_) Abandon();
}

void TableBuilder::Abandon() {
  if (closed_) return;
  closed_ = true;
  if (file_ != nullptr) file_->Close();
  if (status_.ok()) status_ = Status::Aborted("table builder abandoned");
}

Status TableBuilder::WriteRaw(Slice data) {
  Status s = file_->Append(data);
  if (!s.ok()) {
    status_ = s;
    return s;
  }
  offset_ += data.size();
  return s;
}

Status TableBuilder::WriteBlock(Slice contents, bool allow_compression, BlockHandle* handle) {
  Slice stored = contents;
  CompressionType type = CompressionType::kNone;
  if (allow_compression && options_.compression != CompressionType::kNone) {
    // A codec failure is not fatal: the block is then stored raw, which is
    // always valid.
    if (CompressBlock(options_.compression, contents, &compressed_).ok() &&
        CompressionWorthIt(contents.size(), compressed_.size())) {
      stored = compressed_;
      type = options_.compression;
    }
  }
  handle->set_offset(offset_);
  handle->set_size(stored.size());
  std::string trailer;
  AppendBlockTrailer(&trailer, stored, type);
  Status s = WriteRaw(stored);
  if (s.ok()) s = WriteRaw(trailer);
  return s;
}

Status TableBuilder::FlushDataBlock() {
  if (data_block_.empty()) return Status::OK();
  Status s = WriteBlock(data_block_.Finish(), /*allow_compression=*/true, &pending_handle_);
  data_block_.Reset();
  if (s.ok()) pending_index_entry_ = true;
  return s;
}

void TableBuilder::AddIndexEntry(Slice next_key) {
  const std::string separator = next_key.empty() ? last_key_ : IndexSeparator(last_key_, next_key);
  std::string handle;
  pending_handle_.EncodeTo(&handle);
  index_block_.Add(separator, handle);
  pending_index_entry_ = false;
}

Status TableBuilder::Add(Slice internal_key, Slice value) {
  if (closed_) return Status::InvalidArgument("table builder already finished or abandoned");
  if (!status_.ok()) return status_;
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) return Status::InvalidArgument("malformed internal key");

  // Decide how the entry is stored before anything is written, so that a
  // rejected entry leaves no value-log record behind.
  ValueType stored_type = parsed.type;
  const size_t threshold = options_.value_threshold;
  switch (parsed.type) {
    case ValueType::kValue:
      if (vlog_ != nullptr && value.size() >= threshold) stored_type = ValueType::kValuePointer;
      break;
    case ValueType::kValueWithExpiry:
      if (value.size() < 8) return Status::InvalidArgument("value with expiry shorter than its expiry time");
      if (vlog_ != nullptr && value.size() - 8 >= threshold) stored_type = ValueType::kValuePointerWithExpiry;
      break;
    case ValueType::kValuePointer:
    case ValueType::kValuePointerWithExpiry: {
      Slice rest = value;
      if (parsed.type == ValueType::kValuePointerWithExpiry) {
        if (rest.size() < 8) return Status::InvalidArgument("value pointer with expiry too short");
        rest.remove_prefix(8);
      }
      ValuePointer ptr;
      if (!ptr.DecodeFrom(&rest) || !rest.empty()) return Status::InvalidArgument("malformed value pointer");
      break;
    }
    case ValueType::kDeletion:
      break;
  }
  Slice key = internal_key;
  if (stored_type != parsed.type) {
    stored_key_.clear();
    AppendInternalKey(&stored_key_, parsed.user_key, parsed.sequence, stored_type);
    key = stored_key_;
  }
  if (props_.num_entries > 0 && CompareInternalKey(key, last_key_) <= 0) {
    return Status::InvalidArgument("keys added to a table out of order");
  }

  Slice stored_value = value;
  if (stored_type != parsed.type) {
    Slice user_value = value;
    stored_value_.clear();
    if (stored_type == ValueType::kValuePointerWithExpiry) {
      stored_value_.assign(value.data(), 8);
      user_value.remove_prefix(8);
    }
    ValuePointer ptr;
    Status s = vlog_->Add(user_value, &ptr);
    if (!s.ok()) {
      status_ = s;
      return s;
    }
    ptr.EncodeTo(&stored_value_);
    stored_value = stored_value_;
  }

  if (pending_index_entry_) AddIndexEntry(key);
  // Keys sharing a prefix are adjacent, so the builder counts each prefix once.
  if (filter_ != nullptr) filter_->Add(FilterKey(parsed.user_key, props_.filter_prefix_length));

  if (props_.num_entries == 0) {
    props_.smallest_key.assign(key);
    props_.min_sequence = parsed.sequence;
    props_.max_sequence = parsed.sequence;
  } else {
    props_.min_sequence = std::min(props_.min_sequence, parsed.sequence);
    props_.max_sequence = std::max(props_.max_sequence, parsed.sequence);
  }
  ++props_.num_entries;
  if (stored_type == ValueType::kDeletion) ++props_.num_deletions;
  if (stored_type == ValueType::kValuePointer || stored_type == ValueType::kValuePointerWithExpiry) {
    ++props_.num_value_pointers;
  }
  props_.raw_key_bytes += key.size();
  props_.raw_value_bytes += stored_value.size();
  last_key_.assign(key);

  data_block_.Add(key, stored_value);
  if (data_block_.CurrentSizeEstimate() >= options_.block_size) return FlushDataBlock();
  return Status::OK();
}

Status TableBuilder::Finish(TableProperties* props) {
  if (closed_) return Status::InvalidArgument("table builder already finished or abandoned");
  if (!status_.ok()) return status_;
  Status s = FlushDataBlock();
  if (!s.ok()) return s;
  if (pending_index_entry_) AddIndexEntry(Slice());
  props_.data_size = offset_;
  props_.largest_key = last_key_;

  Footer footer;
  if (filter_ != nullptr) {
    const std::string filter = filter_->Finish();
    s = WriteBlock(filter, /*allow_compression=*/false, &footer.filter_handle);
    if (!s.ok()) return s;
    props_.filter_size = filter.size() + kBlockTrailerSize;
  }

  const uint64_t index_start = offset_;
  s = WriteBlock(index_block_.Finish(), /*allow_compression=*/true, &footer.index_handle);
  if (!s.ok()) return s;
  props_.index_size = offset_ - index_start;

  props_.creation_time = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  std::string encoded_props;
  props_.EncodeTo(&encoded_props);
  s = WriteBlock(encoded_props, /*allow_compression=*/false, &footer.properties_handle);
  if (!s.ok()) return s;

  std::string encoded_footer;
  footer.EncodeTo(&encoded_footer);
  s = WriteRaw(encoded_footer);
  if (s.ok()) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  if (!s.ok()) {
    status_ = s;
    return s;
  }
  closed_ = true;
  if (props != nullptr) *props = props_;
  return Status::OK();
}

}  // namespace tidesdb
