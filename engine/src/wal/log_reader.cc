#include "wal/log_reader.h"

#include <algorithm>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace tidesdb {

const char* LogReader::Describe(FrameCheck check) {
  switch (check) {
    case FrameCheck::kValid:
      return "valid record";
    case FrameCheck::kShortHeader:
      return "truncated record header";
    case FrameCheck::kZeroType:
      return "zero record type";
    case FrameCheck::kLengthTooLarge:
      return "impossible record length";
    case FrameCheck::kPastEof:
      return "record length past end of file";
    case FrameCheck::kBadChecksum:
      return "checksum mismatch";
  }
  return "bad record";
}

LogReader::LogReader(std::unique_ptr<RandomAccessFile> file, std::string path, uint64_t file_size,
                     size_t chunk_size)
    : file_(std::move(file)),
      path_(std::move(path)),
      file_size_(file_size),
      chunk_size_(std::max<size_t>(chunk_size, kFileHeaderSize)) {}

Status LogReader::Open(Env* env, const std::string& path, std::unique_ptr<LogReader>* reader,
                       size_t chunk_size) {
  reader->reset();
  uint64_t size = 0;
  Status s = env->GetFileSize(path, &size);
  if (!s.ok()) return s;
  std::unique_ptr<RandomAccessFile> file;
  s = env->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  *reader = std::make_unique<LogReader>(std::move(file), path, size, chunk_size);
  return Status::OK();
}

Status LogReader::CorruptionAt(uint64_t offset, const std::string& what) const {
  return Status::Corruption(path_ + ": offset " + std::to_string(offset), what);
}

Status LogReader::Fetch(uint64_t offset, size_t n, Slice* out) {
  if (offset >= buf_offset_ && offset + n <= buf_offset_ + buf_len_) {
    *out = Slice(buf_.data() + (offset - buf_offset_), n);
    return Status::OK();
  }
  const size_t want = static_cast<size_t>(std::min<uint64_t>(std::max(n, chunk_size_), file_size_ - offset));
  if (buf_.size() < want) buf_.resize(want);
  peak_buffer_ = std::max(peak_buffer_, buf_.capacity());
  buf_len_ = 0;
  Slice got;
  Status s = file_->Read(offset, want, &got, buf_.data());
  if (!s.ok()) return s;
  if (got.size() < want) {
    return Status::IOError(path_ + ": offset " + std::to_string(offset + got.size()),
                           "file is shorter than its size at open");
  }
  if (got.data() != buf_.data()) std::memmove(buf_.data(), got.data(), want);
  buf_offset_ = offset;
  buf_len_ = want;
  *out = Slice(buf_.data(), n);
  return Status::OK();
}

Status LogReader::CheckFrame(uint64_t offset, FrameCheck* result, uint8_t* type, uint32_t* payload_len,
                             std::string* payload) {
  const uint64_t remaining = file_size_ - offset;
  if (remaining < kRecordHeaderSize) {
    *result = FrameCheck::kShortHeader;
    return Status::OK();
  }
  Slice header;
  Status s = Fetch(offset, kRecordHeaderSize, &header);
  if (!s.ok()) return s;
  const uint32_t stored_crc = DecodeFixed32(header.data());
  const uint32_t length = DecodeFixed32(header.data() + 4);
  const auto record_type = static_cast<uint8_t>(header[8]);
  if (record_type == 0) {
    *result = FrameCheck::kZeroType;
    return Status::OK();
  }
  if (length > kMaxRecordPayload) {
    *result = FrameCheck::kLengthTooLarge;
    return Status::OK();
  }
  if (length > remaining - kRecordHeaderSize) {
    *result = FrameCheck::kPastEof;
    return Status::OK();
  }
  // The crc covers the type byte and then the payload.
  const char type_byte = static_cast<char>(record_type);
  uint32_t crc = crc32c::Value(&type_byte, 1);
  if (payload != nullptr) {
    payload->clear();
    payload->reserve(length);
  }
  uint64_t pos = offset + kRecordHeaderSize;
  const uint64_t end = pos + length;
  while (pos < end) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_size_, end - pos));
    Slice piece;
    s = Fetch(pos, n, &piece);
    if (!s.ok()) return s;
    crc = crc32c::Extend(crc, piece.data(), piece.size());
    if (payload != nullptr) payload->append(piece);
    pos += n;
  }
  if (crc32c::Unmask(stored_crc) != crc) {
    *result = FrameCheck::kBadChecksum;
    if (payload != nullptr) payload->clear();
    return Status::OK();
  }
  *result = FrameCheck::kValid;
  *type = record_type;
  *payload_len = length;
  return Status::OK();
}

Status LogReader::FindValidFrameAfter(uint64_t offset, uint64_t* next) {
  *next = file_size_;
  for (uint64_t pos = offset + 1; pos + kRecordHeaderSize <= file_size_; ++pos) {
    FrameCheck check;
    uint8_t type;
    uint32_t len;
    Status s = CheckFrame(pos, &check, &type, &len, nullptr);
    if (!s.ok()) return s;
    if (check == FrameCheck::kValid) {
      *next = pos;
      return Status::OK();
    }
  }
  return Status::OK();
}

Status LogReader::ScanPastDamage(uint64_t offset, bool* found, uint64_t* claim) {
  *found = false;
  *claim = 0;
  uint64_t pos = offset;
  while (true) {
    Status s = FindValidFrameAfter(pos, &pos);
    if (!s.ok()) return s;
    if (pos == file_size_) return Status::OK();
    *found = true;
    // Follow the chain of valid frames from there; stop at the next bad one.
    while (pos < file_size_) {
      FrameCheck check;
      uint8_t type = 0;
      uint32_t len = 0;
      s = CheckFrame(pos, &check, &type, &len, nullptr);
      if (!s.ok()) return s;
      if (check != FrameCheck::kValid) break;
      if (type == kSyncMarkType && len == kSyncMarkPayloadSize) {
        Slice payload;
        s = Fetch(pos + kRecordHeaderSize, kSyncMarkPayloadSize, &payload);
        if (!s.ok()) return s;
        *claim = std::max(*claim, DecodeFixed64(payload.data()));
      }
      pos += kRecordHeaderSize + len;
    }
  }
}

Status LogReader::TakeSyncMark(uint64_t offset, Slice payload) {
  if (payload.size() != kSyncMarkPayloadSize) return CorruptionAt(offset, "bad sync mark length");
  const uint64_t claim = DecodeFixed64(payload.data());
  if (claim > offset) {
    return CorruptionAt(offset, "sync mark claims offset " + std::to_string(claim) + ", past itself");
  }
  synced_claim_ = std::max(synced_claim_, claim);
  return Status::OK();
}

Status LogReader::AllZero(uint64_t offset, bool* zero) {
  *zero = true;
  while (offset < file_size_) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_size_, file_size_ - offset));
    Slice bytes;
    Status s = Fetch(offset, n, &bytes);
    if (!s.ok()) return s;
    for (char c : bytes) {
      if (c != 0) {
        *zero = false;
        return Status::OK();
      }
    }
    offset += n;
  }
  return Status::OK();
}

Status LogReader::ReadHeader(LogKind expected, uint64_t* log_number) {
  *log_number = 0;
  header_ok_ = false;
  bool zero = false;
  Slice header;
  if (file_size_ >= kFileHeaderSize) {
    Status s = Fetch(0, kFileHeaderSize, &header);
    if (!s.ok()) return s;
    if (std::all_of(header.begin(), header.end(), [](char c) { return c == 0; })) {
      s = AllZero(kFileHeaderSize, &zero);
      if (!s.ok()) return s;
      if (!zero) return CorruptionAt(0, "zeroed file header");
    }
  } else {
    Status s = AllZero(0, &zero);
    if (!s.ok()) return s;
    if (!zero) return CorruptionAt(0, "truncated file header (" + std::to_string(file_size_) + " bytes)");
  }
  if (zero) {
    // The crash came before the header reached the disk: an empty log.
    header_ok_ = true;
    eof_ = true;
    torn_tail_ = true;
    offset_ = valid_end_ = 0;
    return Status::OK();
  }

  const Slice magic = header.substr(0, kLogMagicSize);
  if (magic != Slice(LogMagic(expected), kLogMagicSize)) {
    const LogKind other = expected == LogKind::kWal ? LogKind::kManifest : LogKind::kWal;
    if (magic == Slice(LogMagic(other), kLogMagicSize)) {
      return CorruptionAt(
          0, std::string("file is a ") + LogKindName(other) + ", expected a " + LogKindName(expected));
    }
    return CorruptionAt(0, "bad magic (not a TideSQL log file)");
  }
  const size_t covered = kFileHeaderSize - 4;
  if (crc32c::Unmask(DecodeFixed32(header.data() + covered)) != crc32c::Value(header.data(), covered)) {
    return CorruptionAt(0, "file header checksum mismatch");
  }
  const uint32_t version = DecodeFixed32(header.data() + kLogMagicSize);
  if (version == 0 || version > kLogFormatVersion) {
    return Status::NotSupported(path_, "log format version " + std::to_string(version) +
                                           ", this build reads versions up to " +
                                           std::to_string(kLogFormatVersion));
  }
  version_ = version;
  *log_number = DecodeFixed64(header.data() + kLogMagicSize + 4);
  header_ok_ = true;
  offset_ = valid_end_ = kFileHeaderSize;
  return Status::OK();
}

Status LogReader::ReadRecord(uint8_t* type, std::string* payload, bool* eof) {
  *eof = false;
  payload->clear();
  if (!header_ok_) return Status::InvalidArgument(path_, "ReadHeader must succeed before ReadRecord");
  if (!error_.ok()) return error_;
  while (true) {
    if (eof_ || offset_ == file_size_) {
      eof_ = true;
      *eof = true;
      return Status::OK();
    }
    FrameCheck check;
    uint32_t len = 0;
    Status s = CheckFrame(offset_, &check, type, &len, payload);
    if (!s.ok()) return s;
    if (check == FrameCheck::kValid) {
      const bool mark = *type == kSyncMarkType && version_ >= kLogSyncMarkVersion;
      if (mark) {
        s = TakeSyncMark(offset_, *payload);
        if (!s.ok()) {
          error_ = s;
          return error_;
        }
      }
      last_record_offset_ = offset_;
      offset_ += kRecordHeaderSize + len;
      valid_end_ = offset_;
      if (mark) continue;
      return Status::OK();
    }
    payload->clear();
    // Zeros from here to the end: a WAL's preallocated space (log_writer.h), or pages
    // never written. Nothing valid can follow, so this is the end of the log; told apart
    // only so that the byte-by-byte search below need not walk a megabyte of zeros.
    if (check == FrameCheck::kZeroType) {
      bool zero = false;
      s = AllZero(offset_, &zero);
      if (!s.ok()) return s;
      if (zero) {
        torn_tail_ = true;
        zero_tail_ = true;
        damage_ = "zero-filled tail";
        eof_ = true;
        *eof = true;
        return Status::OK();
      }
    }
    // A bad record: a torn tail if nothing valid follows it (or, when unsynced writes may
    // have been lost, if no sync mark after it covers it), corruption otherwise.
    const bool lost_writes_possible = allow_lost_writes_ && version_ >= kLogSyncMarkVersion;
    bool found = false;
    uint64_t claim = 0;
    if (lost_writes_possible) {
      s = ScanPastDamage(offset_, &found, &claim);
    } else {
      uint64_t next = 0;
      s = FindValidFrameAfter(offset_, &next);
      found = next < file_size_;
    }
    if (!s.ok()) return s;
    if (found && (!lost_writes_possible || claim > offset_)) {
      std::string what = Describe(check);
      if (lost_writes_possible)
        what += " (a later sync mark says the file was durable through offset " + std::to_string(claim) + ")";
      error_ = CorruptionAt(offset_, what);
      return error_;
    }
    torn_tail_ = true;
    lost_write_ = found;
    damage_ = Describe(check);
    eof_ = true;
    *eof = true;
    return Status::OK();
  }
}

}  // namespace tidesdb
