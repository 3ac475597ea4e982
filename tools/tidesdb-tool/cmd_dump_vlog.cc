// dump-vlog: the header and every record of a value log (format in sst/value_log.h).
#include "db/filename.h"
#include "files.h"
#include "sst/compression.h"
#include "sst/value_log.h"
#include "tool.h"
#include "util/coding.h"

namespace tidesdb::tool {

namespace {

// The file number a value log should carry: from its name, else from its header (so a
// renamed copy can still be dumped).
uint64_t ExpectedFileNumber(const std::string& path, const RandomAccessFile& file, uint64_t size) {
  uint64_t number = 0;
  FileType type;
  if (ParseFileName(BaseName(path), &number, &type) && type == FileType::kValueLog) return number;
  char buf[kValueLogHeaderSize];
  Slice header;
  if (size >= kValueLogHeaderSize && file.Read(0, kValueLogHeaderSize, &header, buf).ok() &&
      header.size() == kValueLogHeaderSize) {
    return DecodeFixed64(header.data() + 12);
  }
  return 0;
}

}  // namespace

int DumpVlogCommand(const std::string& file, const ToolOptions& options, std::ostream& out) {
  if (!IsRegularFile(file)) {
    out << "tidesdb-tool: no such file: " << file << "\n";
    return kExitUsage;
  }
  ProblemSink problems(&out);
  std::unique_ptr<RandomAccessFile> raw;
  uint64_t size = 0;
  Status s = OpenForReading(file, &raw, &size);
  if (!s.ok()) {
    problems.Error(s);
    return kExitDamaged;
  }
  const uint64_t number = ExpectedFileNumber(file, *raw, size);
  std::unique_ptr<RandomAccessFile> file_for_reader;
  s = ToolEnv()->NewRandomAccessFile(file, &file_for_reader);
  std::unique_ptr<ValueLogReader> reader;
  if (s.ok()) s = ValueLogReader::Open(file, number, std::move(file_for_reader), size, &reader);
  if (!s.ok()) {
    problems.Error(s);
    return kExitDamaged;
  }
  out << "value log " << file << ": file number " << number << ", " << size << " bytes\n";
  uint64_t records = 0, value_bytes = 0;
  s = reader->ForEach([&](uint64_t offset, uint64_t record_size, Slice value) {
    // The record header (crc, payload length, compression type) for the listing; ForEach
    // has verified the whole record already.
    char buf[kValueLogMaxRecordHeaderSize];
    Slice header;
    std::string compression = "?";
    uint32_t payload = 0;
    if (raw->Read(offset, std::min<uint64_t>(record_size, sizeof(buf)), &header, buf).ok() &&
        header.size() >= 9) {
      payload = DecodeFixed32(header.data() + 4);
      compression = CompressionTypeName(static_cast<CompressionType>(header[8]));
    }
    out << "offset " << offset << ": record " << record_size << " bytes, compression " << compression
        << ", payload " << payload << " bytes, value " << value.size() << " bytes "
        << FormatPrefix(value, options.bytes) << "\n";
    ++records;
    value_bytes += value.size();
    return Status::OK();
  });
  if (!s.ok()) problems.Error(s);
  out << "summary: " << records << " records, " << value_bytes << " value bytes, " << problems.errors()
      << " errors\n";
  return problems.errors() == 0 ? kExitOk : kExitDamaged;
}

}  // namespace tidesdb::tool
