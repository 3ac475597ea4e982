#include "sst/format.h"

#include <memory>

#include "sst/compression.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace tidesdb {

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset_);
  PutVarint64(dst, size_);
}

bool BlockHandle::DecodeFrom(Slice* input) {
  return GetVarint64(input, &offset_) && GetVarint64(input, &size_);
}

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  filter_handle.EncodeTo(dst);
  index_handle.EncodeTo(dst);
  properties_handle.EncodeTo(dst);
  dst->resize(start + kHandlesSize, '\0');
  PutFixed32(dst, format_version);
  PutFixed32(dst, crc32c::Mask(crc32c::Value(dst->data() + start, kHandlesSize + 4)));
  PutFixed64(dst, kTableMagic);
}

Status Footer::DecodeFrom(Slice input, const std::string& fname, uint64_t offset) {
  if (input.size() != kEncodedLength) return TableCorruption(fname, offset, "truncated footer");
  const char* p = input.data();
  if (DecodeFixed64(p + kHandlesSize + 8) != kTableMagic) {
    return TableCorruption(fname, offset, "bad magic number (not a klog file, or truncated)");
  }
  const uint32_t stored_crc = crc32c::Unmask(DecodeFixed32(p + kHandlesSize + 4));
  if (stored_crc != crc32c::Value(p, kHandlesSize + 4)) {
    return TableCorruption(fname, offset, "footer checksum mismatch");
  }
  format_version = DecodeFixed32(p + kHandlesSize);
  if (format_version > kFormatVersion) {
    // Not damage: a newer TideSQL wrote it (the checksum above holds), and this build
    // cannot read it. Refused like a WAL or manifest of a newer version.
    return Status::NotSupported(fname, "key log format version " + std::to_string(format_version) +
                                           " was written by a newer TideSQL; this build reads version " +
                                           std::to_string(kFormatVersion));
  }
  if (format_version != kFormatVersion) {
    return TableCorruption(fname, offset, "unknown format version " + std::to_string(format_version));
  }
  Slice handles(p, kHandlesSize);
  if (!filter_handle.DecodeFrom(&handles) || !index_handle.DecodeFrom(&handles) ||
      !properties_handle.DecodeFrom(&handles)) {
    return TableCorruption(fname, offset, "bad block handle in footer");
  }
  return Status::OK();
}

namespace {

void PutProperty(std::string* dst, uint32_t tag, Slice bytes) {
  PutVarint32(dst, tag);
  PutLengthPrefixedSlice(dst, bytes);
}

void PutNumberProperty(std::string* dst, uint32_t tag, uint64_t v) {
  std::string buf;
  PutVarint64(&buf, v);
  PutProperty(dst, tag, buf);
}

bool ParseNumber(Slice bytes, uint64_t* v) { return GetVarint64(&bytes, v) && bytes.empty(); }

}  // namespace

void TableProperties::EncodeTo(std::string* dst) const {
  PutNumberProperty(dst, kPropCfId, cf_id);
  PutProperty(dst, kPropSmallestKey, smallest_key);
  PutProperty(dst, kPropLargestKey, largest_key);
  PutNumberProperty(dst, kPropMinSequence, min_sequence);
  PutNumberProperty(dst, kPropMaxSequence, max_sequence);
  PutNumberProperty(dst, kPropNumEntries, num_entries);
  PutNumberProperty(dst, kPropNumDeletions, num_deletions);
  PutNumberProperty(dst, kPropNumValuePointers, num_value_pointers);
  PutNumberProperty(dst, kPropRawKeyBytes, raw_key_bytes);
  PutNumberProperty(dst, kPropRawValueBytes, raw_value_bytes);
  PutNumberProperty(dst, kPropDataSize, data_size);
  PutNumberProperty(dst, kPropIndexSize, index_size);
  PutNumberProperty(dst, kPropFilterSize, filter_size);
  PutNumberProperty(dst, kPropCreationTime, creation_time);
  if (filter_prefix_length != 0) PutNumberProperty(dst, kPropFilterPrefixLength, filter_prefix_length);
}

Status TableProperties::DecodeFrom(Slice input) {
  *this = TableProperties();
  while (!input.empty()) {
    uint32_t tag;
    Slice bytes;
    if (!GetVarint32(&input, &tag) || !GetLengthPrefixedSlice(&input, &bytes)) {
      return Status::Corruption("malformed properties record");
    }
    uint64_t v = 0;
    uint64_t* target = nullptr;
    switch (tag) {
      case kPropSmallestKey:
        smallest_key.assign(bytes);
        continue;
      case kPropLargestKey:
        largest_key.assign(bytes);
        continue;
      case kPropCfId:
        if (!ParseNumber(bytes, &v) || v > UINT32_MAX) return Status::Corruption("bad cf_id property");
        cf_id = static_cast<uint32_t>(v);
        continue;
      case kPropMinSequence:
        target = &min_sequence;
        break;
      case kPropMaxSequence:
        target = &max_sequence;
        break;
      case kPropNumEntries:
        target = &num_entries;
        break;
      case kPropNumDeletions:
        target = &num_deletions;
        break;
      case kPropNumValuePointers:
        target = &num_value_pointers;
        break;
      case kPropRawKeyBytes:
        target = &raw_key_bytes;
        break;
      case kPropRawValueBytes:
        target = &raw_value_bytes;
        break;
      case kPropDataSize:
        target = &data_size;
        break;
      case kPropIndexSize:
        target = &index_size;
        break;
      case kPropFilterSize:
        target = &filter_size;
        break;
      case kPropCreationTime:
        target = &creation_time;
        break;
      case kPropFilterPrefixLength:
        target = &filter_prefix_length;
        break;
      default:
        continue;  // written by a newer version; not needed here
    }
    if (!ParseNumber(bytes, target)) return Status::Corruption("bad property " + std::to_string(tag));
  }
  return Status::OK();
}

void AppendBlockTrailer(std::string* dst, Slice stored, CompressionType type) {
  const char type_byte = static_cast<char>(type);
  uint32_t crc = crc32c::Value(stored.data(), stored.size());
  crc = crc32c::Extend(crc, &type_byte, 1);
  dst->push_back(type_byte);
  PutFixed32(dst, crc32c::Mask(crc));
}

Status TableCorruption(const std::string& fname, uint64_t offset, Slice what) {
  return Status::Corruption(fname + ": offset " + std::to_string(offset) + ": " + std::string(what));
}

Status ReadBlock(const RandomAccessFile* file, const std::string& fname, const BlockHandle& handle,
                 bool verify_checksum, std::string* contents) {
  contents->clear();
  // Callers check handles against the file size; this guards the arithmetic below.
  if (handle.size() > (uint64_t{1} << 40)) return TableCorruption(fname, handle.offset(), "bad block handle");
  const size_t n = static_cast<size_t>(handle.size());
  std::unique_ptr<char[]> scratch(new char[n + kBlockTrailerSize]);
  Slice stored;
  Status s = file->Read(handle.offset(), n + kBlockTrailerSize, &stored, scratch.get());
  if (!s.ok()) return s;
  if (stored.size() != n + kBlockTrailerSize)
    return TableCorruption(fname, handle.offset(), "truncated block");

  const char* data = stored.data();
  const uint8_t type = static_cast<uint8_t>(data[n]);
  if (verify_checksum) {
    const uint32_t expected = crc32c::Unmask(DecodeFixed32(data + n + 1));
    const uint32_t actual = crc32c::Value(data, n + 1);  // block bytes and type byte
    if (expected != actual) return TableCorruption(fname, handle.offset(), "block checksum mismatch");
  }
  if (type == static_cast<uint8_t>(CompressionType::kNone)) {
    contents->assign(data, n);
    return Status::OK();
  }
  if (type > static_cast<uint8_t>(CompressionType::kZstd)) {
    return TableCorruption(fname, handle.offset(), "unknown block compression type " + std::to_string(type));
  }
  s = UncompressBlock(static_cast<CompressionType>(type), Slice(data, n), contents);
  if (!s.ok()) {
    contents->clear();
    return TableCorruption(fname, handle.offset(), "cannot uncompress block: " + s.ToString());
  }
  return Status::OK();
}

}  // namespace tidesdb
