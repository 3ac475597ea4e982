#include "sst/value_log.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "sst/compression.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace tidesdb {

namespace {

// Fields of a record in front of its payload.
struct RecordHeader {
  uint32_t payload_length = 0;
  uint8_t type = 0;
  uint32_t uncompressed_length = 0;
  size_t header_length = 0;  // bytes before the payload
};

// Parses the header fields from the front of bytes; false if bytes end inside them.
bool ParseRecordHeader(Slice bytes, RecordHeader* h) {
  if (bytes.size() < kValueLogMinRecordSize) return false;
  h->payload_length = DecodeFixed32(bytes.data() + 4);
  h->type = static_cast<uint8_t>(bytes[8]);
  const char* end = bytes.data() + bytes.size();
  const char* p = GetVarint32Ptr(bytes.data() + 9, end, &h->uncompressed_length);
  if (p == nullptr) return false;
  h->header_length = static_cast<size_t>(p - bytes.data());
  return true;
}

// The checksum of the record at offset whose bytes after the crc field are rest.
uint32_t RecordCrc(uint64_t offset, const char* rest, size_t n) {
  char buf[8];
  EncodeFixed64(buf, offset);
  return crc32c::Extend(crc32c::Value(buf, 8), rest, n);
}

}  // namespace

ValueLogWriter::ValueLogWriter(std::unique_ptr<WritableFile> file, uint64_t file_number,
                               CompressionType compression)
    : file_(std::move(file)), file_number_(file_number), compression_(compression) {}

Status ValueLogWriter::WriteHeaderIfNeeded() {
  if (header_written_) return Status::OK();
  std::string header;
  PutFixed64(&header, kValueLogMagic);
  PutFixed32(&header, kValueLogFormatVersion);
  PutFixed64(&header, file_number_);
  PutFixed32(&header, crc32c::Mask(crc32c::Value(header.data(), header.size())));
  status_ = file_->Append(header);
  if (status_.ok()) header_written_ = true;
  return status_;
}

Status ValueLogWriter::Add(Slice value, ValuePointer* ptr) {
  if (!status_.ok()) return status_;
  if (finished_) return Status::InvalidArgument("value log writer already finished");
  if (value.size() > kValueLogMaxValueSize) {
    return Status::InvalidArgument("value too large for the value log", std::to_string(value.size()));
  }
  Status s = WriteHeaderIfNeeded();
  if (!s.ok()) return s;

  CompressionType type = CompressionType::kNone;
  Slice payload = value;
  if (compression_ != CompressionType::kNone && value.size() <= kMaxUncompressedBlockSize) {
    s = CompressBlock(compression_, value, &compressed_);
    if (!s.ok()) return s;  // nothing written yet: not sticky
    if (CompressionWorthIt(value.size(), compressed_.size())) {
      type = compression_;
      payload = compressed_;
    }
  }

  char header[kValueLogMaxRecordHeaderSize];
  EncodeFixed32(header + 4, static_cast<uint32_t>(payload.size()));
  header[8] = static_cast<char>(type);
  char* end = EncodeVarint32(header + 9, static_cast<uint32_t>(value.size()));
  const size_t header_length = static_cast<size_t>(end - header);
  uint32_t crc = RecordCrc(offset_, header + 4, header_length - 4);
  crc = crc32c::Extend(crc, payload.data(), payload.size());
  EncodeFixed32(header, crc32c::Mask(crc));

  status_ = file_->Append(Slice(header, header_length));
  if (status_.ok()) status_ = file_->Append(payload);
  if (!status_.ok()) return status_;

  const uint64_t record_size = header_length + payload.size();
  *ptr = ValuePointer{file_number_, offset_, record_size};
  offset_ += record_size;
  ++num_records_;
  raw_value_bytes_ += value.size();
  return Status::OK();
}

Status ValueLogWriter::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) return Status::OK();
  Status s = WriteHeaderIfNeeded();
  if (s.ok()) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  status_ = s;
  finished_ = true;
  return s;
}

ValueLogReader::ValueLogReader(std::string fname, uint64_t file_number,
                               std::unique_ptr<RandomAccessFile> file, uint64_t file_size)
    : fname_(std::move(fname)), file_number_(file_number), file_(std::move(file)), file_size_(file_size) {}

Status ValueLogReader::CorruptionAt(uint64_t offset, const std::string& what) const {
  return Status::Corruption(fname_ + ": offset " + std::to_string(offset) + ": " + what);
}

Status ValueLogReader::BadHeader(const ValuePointer& ptr) const {
  // Which it is decides the message: a damaged length field fails the checksum too, which
  // covers the whole record whatever its fields say.
  std::string record(ptr.size, '\0');
  Slice bytes;
  Status s = file_->Read(ptr.offset, record.size(), &bytes, record.data());
  if (!s.ok()) return s;
  if (bytes.size() != record.size()) return ShortRead(ptr.offset, bytes.size(), record.size());
  if (RecordCrc(ptr.offset, bytes.data() + 4, bytes.size() - 4) !=
      crc32c::Unmask(DecodeFixed32(bytes.data()))) {
    return CorruptionAt(ptr.offset, "value record checksum mismatch");
  }
  return CorruptionAt(ptr.offset, "value record length mismatch");
}

Status ValueLogReader::ShortRead(uint64_t offset, size_t got, size_t size) const {
  return CorruptionAt(offset, "short read of value record (" + std::to_string(got) + " of " +
                                  std::to_string(size) + " bytes)");
}

Status ValueLogReader::Open(const std::string& fname, uint64_t file_number,
                            std::unique_ptr<RandomAccessFile> file, uint64_t file_size,
                            std::unique_ptr<ValueLogReader>* result) {
  std::unique_ptr<ValueLogReader> reader(new ValueLogReader(fname, file_number, std::move(file), file_size));
  if (file_size < kValueLogHeaderSize) {
    return reader->CorruptionAt(
        0, "value log shorter than its header (" + std::to_string(file_size) + " bytes)");
  }
  char scratch[kValueLogHeaderSize];
  Slice header;
  Status s = reader->file_->Read(0, kValueLogHeaderSize, &header, scratch);
  if (!s.ok()) return s;
  if (header.size() != kValueLogHeaderSize) return reader->CorruptionAt(0, "short read of value log header");
  if (DecodeFixed64(header.data()) != kValueLogMagic)
    return reader->CorruptionAt(0, "not a value log (bad magic)");
  const uint32_t stored_crc = crc32c::Unmask(DecodeFixed32(header.data() + 20));
  if (crc32c::Value(header.data(), 20) != stored_crc) {
    return reader->CorruptionAt(0, "value log header checksum mismatch");
  }
  const uint32_t version = DecodeFixed32(header.data() + 8);
  if (version > kValueLogFormatVersion) {
    // Not damage (the header checksum holds): a newer TideSQL wrote it.
    return Status::NotSupported(fname, "value log format version " + std::to_string(version) +
                                           " was written by a newer TideSQL; this build reads version " +
                                           std::to_string(kValueLogFormatVersion));
  }
  if (version != kValueLogFormatVersion) {
    return reader->CorruptionAt(0, "unknown value log format version " + std::to_string(version));
  }
  const uint64_t stored_number = DecodeFixed64(header.data() + 12);
  if (stored_number != file_number) {
    return reader->CorruptionAt(0, "value log header names file " + std::to_string(stored_number) +
                                       ", expected " + std::to_string(file_number));
  }
  *result = std::move(reader);
  return Status::OK();
}

Status ValueLogReader::Get(const ValuePointer& ptr, std::string* value) const {
  const uint64_t offset = ptr.offset;
  if (ptr.file_number != file_number_) {
    return CorruptionAt(offset, "value pointer names value log " + std::to_string(ptr.file_number));
  }
  if (offset < kValueLogHeaderSize || ptr.size < kValueLogMinRecordSize || ptr.size > file_size_ ||
      offset > file_size_ - ptr.size) {
    return CorruptionAt(offset, "value pointer (size " + std::to_string(ptr.size) +
                                    ") outside the file (size " + std::to_string(file_size_) + ")");
  }
  if (ptr.size > kValueLogMaxValueSize + kValueLogMaxRecordHeaderSize) {
    return CorruptionAt(offset, "value pointer size " + std::to_string(ptr.size) + " too large");
  }

  // The header first, into scratch; then the payload straight into the caller's string
  // (reusing its buffer), so a large value is neither copied twice nor shifted over its
  // header, and no fresh allocation is faulted in per read.
  const size_t size = static_cast<size_t>(ptr.size);
  char scratch[kValueLogMaxRecordHeaderSize];
  const size_t head_size = std::min(size, kValueLogMaxRecordHeaderSize);
  Slice head;
  Status s = file_->Read(offset, head_size, &head, scratch);
  if (!s.ok()) return s;
  if (head.size() != head_size) return ShortRead(offset, head.size(), size);
  RecordHeader h;
  if (!ParseRecordHeader(head, &h) || h.header_length + h.payload_length != size) return BadHeader(ptr);
  const bool stored_plain = h.type == static_cast<uint8_t>(CompressionType::kNone);
  std::string compressed;
  std::string* payload = stored_plain ? value : &compressed;
  payload->resize(h.payload_length);
  const size_t in_head = head_size - h.header_length;  // payload bytes the header read got
  if (in_head > 0) memcpy(payload->data(), head.data() + h.header_length, in_head);
  if (h.payload_length > in_head) {
    Slice rest;
    const size_t want = h.payload_length - in_head;
    s = file_->Read(offset + head_size, want, &rest, payload->data() + in_head);
    if (!s.ok()) return s;
    if (rest.size() != want) return ShortRead(offset, head_size + rest.size(), size);
    if (rest.data() != payload->data() + in_head) memcpy(payload->data() + in_head, rest.data(), want);
  }

  // The checksum before any field is trusted further: it covers them all, so any damage (or
  // a pointer to the wrong offset) reports as a checksum mismatch rather than as some
  // derived symptom.
  uint32_t actual_crc = RecordCrc(offset, head.data() + 4, h.header_length - 4);
  actual_crc = crc32c::Extend(actual_crc, payload->data(), payload->size());
  if (actual_crc != crc32c::Unmask(DecodeFixed32(head.data()))) {
    return CorruptionAt(offset, "value record checksum mismatch");
  }
  if (stored_plain) {
    if (h.uncompressed_length != h.payload_length)
      return CorruptionAt(offset, "value record length mismatch");
    return Status::OK();
  }
  if (h.type > static_cast<uint8_t>(CompressionType::kZstd)) {
    return CorruptionAt(offset, "unknown value compression type " + std::to_string(h.type));
  }
  s = UncompressBlock(static_cast<CompressionType>(h.type), compressed, value);
  if (!s.ok()) return CorruptionAt(offset, s.message());
  if (value->size() != h.uncompressed_length) return CorruptionAt(offset, "value length mismatch");
  return Status::OK();
}

Status ValueLogReader::ForEach(const RecordCallback& fn) const {
  uint64_t offset = kValueLogHeaderSize;
  std::string value;
  while (offset < file_size_) {
    const uint64_t remaining = file_size_ - offset;
    char scratch[kValueLogMaxRecordHeaderSize];
    const size_t want = remaining < kValueLogMaxRecordHeaderSize ? static_cast<size_t>(remaining)
                                                                 : kValueLogMaxRecordHeaderSize;
    Slice bytes;
    Status s = file_->Read(offset, want, &bytes, scratch);
    if (!s.ok()) return s;
    RecordHeader h;
    if (!ParseRecordHeader(bytes, &h)) return CorruptionAt(offset, "truncated value record header");
    const uint64_t size = h.header_length + uint64_t{h.payload_length};
    if (size > remaining) {
      return CorruptionAt(offset, "truncated value record (" + std::to_string(size) + " bytes, " +
                                      std::to_string(remaining) + " left in file)");
    }
    s = Get(ValuePointer{file_number_, offset, size}, &value);
    if (!s.ok()) return s;
    s = fn(offset, size, value);
    if (!s.ok()) return s;
    offset += size;
  }
  return Status::OK();
}

}  // namespace tidesdb
