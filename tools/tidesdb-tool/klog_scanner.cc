#include "klog_scanner.h"

#include "files.h"
#include "sst/block.h"

namespace tidesdb::tool {

namespace {

// True if the block at h and its trailer lie inside [0, limit).
bool Within(const BlockHandle& h, uint64_t limit) {
  return h.offset() <= limit && h.size() <= limit - h.offset() &&
         kBlockTrailerSize <= limit - h.offset() - h.size();
}

}  // namespace

Status KlogScanner::Open(const std::string& path, std::unique_ptr<KlogScanner>* out) {
  std::unique_ptr<KlogScanner> k(new KlogScanner());
  k->path_ = path;
  Status s = OpenForReading(path, &k->file_, &k->file_size_);
  if (!s.ok()) return s;
  if (k->file_size_ < kFooterSize) return TableCorruption(path, 0, "file too short to be a klog");
  const uint64_t footer_offset = k->file_size_ - kFooterSize;
  char buf[kFooterSize];
  Slice input;
  s = k->file_->Read(footer_offset, kFooterSize, &input, buf);
  if (!s.ok()) return s;
  s = k->footer_.DecodeFrom(input, path, footer_offset);
  if (!s.ok()) return s;
  const Footer& f = k->footer_;
  const bool has_filter = !f.filter_handle.IsNull();
  if (!Within(f.index_handle, footer_offset))
    return TableCorruption(path, footer_offset, "bad index handle in footer");
  if (has_filter && !Within(f.filter_handle, footer_offset)) {
    return TableCorruption(path, footer_offset, "bad filter handle in footer");
  }
  k->data_end_ = has_filter ? f.filter_handle.offset() : f.index_handle.offset();

  std::string contents;
  if (!Within(f.properties_handle, footer_offset)) {
    k->props_status_ = TableCorruption(path, footer_offset, "bad properties handle in footer");
  } else {
    k->props_status_ =
        ReadBlock(k->file_.get(), path, f.properties_handle, /*verify_checksum=*/true, &contents);
    if (k->props_status_.ok()) {
      Status p = k->props_.DecodeFrom(contents);
      if (!p.ok()) k->props_status_ = TableCorruption(path, f.properties_handle.offset(), p.message());
    }
  }

  s = ReadBlock(k->file_.get(), path, f.index_handle, /*verify_checksum=*/true, &contents);
  if (!s.ok()) return s;
  Block index(std::move(contents));
  if (!index.ok()) return TableCorruption(path, f.index_handle.offset(), "bad index block restart array");
  std::unique_ptr<InternalIterator> it = index.NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    KlogBlock b;
    Slice v = it->value();
    if (!b.handle.DecodeFrom(&v) || !v.empty()) {
      return TableCorruption(path, f.index_handle.offset(),
                             "bad block handle in index entry " + std::to_string(k->blocks_.size()));
    }
    b.index_key.assign(it->key());
    k->blocks_.push_back(std::move(b));
  }
  if (!it->status().ok()) return TableCorruption(path, f.index_handle.offset(), it->status().message());
  *out = std::move(k);
  return Status::OK();
}

Status KlogScanner::ScanBlock(size_t i, const EntryFn& fn, uint8_t* compression) const {
  const BlockHandle& h = blocks_[i].handle;
  *compression = 0;
  if (!Within(h, data_end_)) return TableCorruption(path_, h.offset(), "block lies outside the data area");
  char type;
  Slice type_byte;
  Status s = file_->Read(h.offset() + h.size(), 1, &type_byte, &type);
  if (!s.ok()) return s;
  if (type_byte.size() == 1) *compression = static_cast<uint8_t>(type_byte[0]);
  std::string contents;
  s = ReadBlock(file_.get(), path_, h, /*verify_checksum=*/true, &contents);
  if (!s.ok()) return s;
  Block block(std::move(contents));
  if (!block.ok()) return TableCorruption(path_, h.offset(), "bad data block restart array");
  std::unique_ptr<InternalIterator> it = block.NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) fn(it->key(), it->value());
  if (!it->status().ok()) return TableCorruption(path_, h.offset(), it->status().message());
  return Status::OK();
}

}  // namespace tidesdb::tool
