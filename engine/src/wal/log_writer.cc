#include "wal/log_writer.h"

#include <algorithm>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace tidesdb {

namespace {
// A buffer grown for one huge record is released afterwards, so a writer's steady-state
// memory does not stay at its largest record.
constexpr size_t kMaxRetainedBuffer = 4 << 20;

void EncodeFileHeader(LogKind kind, uint64_t log_number, char* dst) {
  std::memcpy(dst, LogMagic(kind), kLogMagicSize);
  EncodeFixed32(dst + kLogMagicSize, LogFormatVersion(kind));
  EncodeFixed64(dst + kLogMagicSize + 4, log_number);
  const size_t covered = kFileHeaderSize - 4;
  EncodeFixed32(dst + covered, crc32c::Mask(crc32c::Value(dst, covered)));
}
}  // namespace

LogWriter::LogWriter(std::unique_ptr<WritableFile> file, LogKind kind, uint64_t log_number, bool write_header)
    : file_(std::move(file)),
      kind_(kind),
      log_number_(log_number),
      header_pending_(write_header),
      size_(file_->Size() + (write_header ? kFileHeaderSize : 0)),
      preallocate_(kind == LogKind::kWal) {}

LogWriter::~LogWriter() { Close(); }

Status LogWriter::Validate(uint8_t type, Slice payload) const {
  if (type == 0 || type == kSyncMarkType) {
    return Status::InvalidArgument("log record type " + std::to_string(type) + " is reserved");
  }
  if (payload.size() > kMaxRecordPayload) {
    return Status::InvalidArgument("log record too large", std::to_string(payload.size()) + " bytes");
  }
  return Status::OK();
}

void LogWriter::AppendFrame(uint8_t type, Slice payload) {
  char header[kRecordHeaderSize];
  const char type_byte = static_cast<char>(type);
  uint32_t crc = crc32c::Extend(crc32c::Value(&type_byte, 1), payload.data(), payload.size());
  EncodeFixed32(header, crc32c::Mask(crc));
  EncodeFixed32(header + 4, static_cast<uint32_t>(payload.size()));
  header[8] = type_byte;
  buf_.append(header, kRecordHeaderSize);
  buf_.append(payload);
}

// Hands buf_ to the file in one Append; a failure is sticky (see log_writer.h).
Status LogWriter::Write() {
  Status s = file_->Append(buf_);
  if (s.ok()) {
    header_pending_ = false;
  } else {
    error_ = s;
  }
  if (buf_.capacity() > kMaxRetainedBuffer) {
    std::string().swap(buf_);
  } else {
    buf_.clear();
  }
  return s;
}

uint64_t LogWriter::MarkDue() const {
  if (kind_ != LogKind::kWal) return 0;
  const uint64_t durable = durable_end_.load(std::memory_order_acquire);
  return durable > marked_end_ ? durable : 0;
}

Status LogWriter::AddRecord(uint8_t type, Slice payload) {
  const Record record{type, payload};
  return AddRecords(std::span<const Record>(&record, 1));
}

Status LogWriter::AddRecords(std::span<const Record> records) {
  if (closed_) return Status::IOError("log writer is closed");
  if (!error_.ok()) return error_;
  size_t total = header_pending_ ? kFileHeaderSize : 0;
  for (const Record& r : records) {
    Status s = Validate(r.type, r.payload);
    if (!s.ok()) return s;
    total += kRecordHeaderSize + r.payload.size();
  }
  const uint64_t mark = MarkDue();
  if (mark != 0) total += kRecordHeaderSize + kSyncMarkPayloadSize;
  if (total == 0) return Status::OK();
  buf_.clear();
  buf_.reserve(total);
  uint64_t new_size = size_;
  if (header_pending_) {
    char header[kFileHeaderSize];
    EncodeFileHeader(kind_, log_number_, header);
    buf_.append(header, kFileHeaderSize);
  }
  if (mark != 0) {
    char claim[kSyncMarkPayloadSize];
    EncodeFixed64(claim, mark);
    AppendFrame(kSyncMarkType, Slice(claim, sizeof(claim)));
    new_size += kRecordHeaderSize + kSyncMarkPayloadSize;
  }
  for (const Record& r : records) {
    AppendFrame(r.type, r.payload);
    new_size += kRecordHeaderSize + r.payload.size();
  }
  if (preallocate_ && new_size > reserved_end_) ReserveFor(new_size);
  Status s = Write();
  if (s.ok()) {
    size_ = new_size;
    if (mark != 0) marked_end_ = mark;
  }
  return s;
}

Status LogWriter::Sync() {
  if (closed_) return Status::IOError("log writer is closed");
  if (!error_.ok()) return error_;
  if (header_pending_) {
    Status s = AddRecords({});
    if (!s.ok()) return s;
  }
  const uint64_t end = size_;
  Status s = SyncFile(end);
  if (!s.ok()) error_ = s;
  return s;
}

Status LogWriter::SyncFile(uint64_t covered_end) {
  Status s = file_->Sync();
  if (!s.ok()) return s;
  uint64_t durable = durable_end_.load(std::memory_order_relaxed);
  while (durable < covered_end &&
         !durable_end_.compare_exchange_weak(durable, covered_end, std::memory_order_acq_rel)) {
  }
  return s;
}

void LogWriter::ReserveFor(uint64_t new_size) {
  const uint64_t end = (new_size / kWalPreallocateBytes + 1) * kWalPreallocateBytes;
  // A failure (NotSupported, or a full disk) only means appending as without it; the
  // append that follows reports a real I/O problem itself.
  if (file_->Preallocate(end).ok()) {
    reserved_end_ = end;
  } else {
    preallocate_ = false;
    reserved_end_ = std::max(reserved_end_, new_size);  // a failed call may still have extended the file
  }
}

Status LogWriter::DropReserve(bool* dropped) {
  *dropped = false;
  if (reserved_end_ == 0) return Status::OK();
  Status s = file_->TruncateToSize();
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  reserved_end_ = 0;
  preallocate_ = false;  // the log is complete: nothing is appended after this
  *dropped = true;
  return s;
}

Status LogWriter::Seal() {
  Status s = Sync();
  if (s.ok() && MarkDue() != 0) s = AddRecords({});
  bool dropped = false;
  if (s.ok()) s = DropReserve(&dropped);
  if (s.ok() && (dropped || size_ > durable_end_.load(std::memory_order_acquire))) s = Sync();
  return s;
}

Status LogWriter::Finish() {
  if (closed_) return Status::IOError("log writer is closed");
  if (!error_.ok()) return error_;
  bool dropped = false;
  Status s = DropReserve(&dropped);
  if (s.ok()) s = Sync();
  return s;
}

void LogWriter::StartWriteback(uint64_t min_bytes) {
  if (closed_ || !error_.ok() || size_ < writeback_offset_ + min_bytes) return;
  file_->StartWriteback(writeback_offset_, size_ - writeback_offset_);
  writeback_offset_ = size_;
}

Status LogWriter::Close() {
  if (closed_) return error_;
  Status s;
  if (error_.ok() && header_pending_) s = AddRecords({});
  // Tidy, not durable (Finish and Seal are): zeros left behind would only read as the
  // end of the log.
  if (error_.ok() && reserved_end_ != 0) file_->TruncateToSize();
  closed_ = true;
  Status cs = file_->Close();
  if (!error_.ok()) return error_;
  if (!s.ok()) return s;
  if (!cs.ok()) error_ = cs;
  return cs;
}

}  // namespace tidesdb
