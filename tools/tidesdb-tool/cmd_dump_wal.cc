// dump-wal: every record of a write-ahead log and every entry of its write batches
// (record layouts in wal_record.h). Entries of a committed batch take consecutive
// sequences from the record's first sequence; a prepared batch has none yet.
#include "files.h"
#include "log_scan.h"
#include "tool.h"
#include "wal_record.h"

namespace tidesdb::tool {

namespace {

class BatchPrinter : public WriteBatch::Handler {
 public:
  BatchPrinter(std::ostream* out, ByteFormat format, bool has_sequence, SequenceNumber first)
      : out_(out), format_(format), has_sequence_(has_sequence), seq_(first) {}

  Status Put(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at) override {
    Prefix();
    *out_ << (expire_at == 0 ? "put" : "put-with-expiry") << " cf " << cf_id << " key "
          << FormatBytes(key, format_);
    if (expire_at != 0) *out_ << " expire_at " << FormatUnixSeconds(expire_at);
    *out_ << " value " << value.size() << " bytes " << FormatPrefix(value, format_) << "\n";
    return Status::OK();
  }
  Status Delete(uint32_t cf_id, Slice key) override {
    Prefix();
    *out_ << "del cf " << cf_id << " key " << FormatBytes(key, format_) << "\n";
    return Status::OK();
  }

 private:
  void Prefix() {
    *out_ << "  ";
    if (has_sequence_) *out_ << "seq " << seq_++ << " ";
  }

  std::ostream* out_;
  ByteFormat format_;
  bool has_sequence_;
  SequenceNumber seq_;
};

}  // namespace

int DumpWalCommand(const std::string& file, const ToolOptions& options, std::ostream& out) {
  if (!IsRegularFile(file)) {
    out << "tidesdb-tool: no such file: " << file << "\n";
    return kExitUsage;
  }
  ProblemSink problems(&out);
  uint64_t entries = 0, sequenced = 0;
  SequenceNumber min_seq = kMaxSequence, max_seq = 0;
  auto print_header = [&](const LogScanResult& h) {
    out << "WAL " << file << ": log number " << h.log_number << ", " << h.file_size << " bytes\n";
  };
  auto print_record = [&](uint64_t offset, uint8_t type, const std::string& payload) {
    out << "offset " << offset << ": type " << int{type} << " (" << WalRecordTypeName(type) << "), "
        << payload.size() << " bytes";
    WalRecord rec;
    Status s = DecodeWalRecord(type, payload, &rec);
    if (rec.has_xid) out << ", xid " << FormatBytes(rec.xid, options.bytes);
    if (rec.has_sequence) out << ", first seq " << rec.first_sequence;
    if (rec.has_batch) out << ", " << rec.batch.Count() << " entries";
    if (rec.has_unlogged)
      out << ", sequences " << rec.unlogged_first << ".." << rec.unlogged_last << " not logged";
    out << "\n";
    if (!s.ok()) {
      if (type != kWalWriteBatchRecord && !rec.has_xid)
        out << "  payload " << FormatPrefix(payload, options.bytes) << "\n";
      problems.Error(file + ": offset " + std::to_string(offset) + ": " + s.message());
      return;
    }
    if (!rec.has_batch) return;
    BatchPrinter printer(&out, options.bytes, rec.has_sequence, rec.first_sequence);
    rec.batch.Iterate(&printer);  // FromData validated the whole batch
    entries += rec.batch.Count();
    if (rec.has_sequence && rec.batch.Count() > 0) {
      sequenced += rec.batch.Count();
      min_seq = std::min(min_seq, rec.first_sequence);
      max_seq = std::max(max_seq, rec.first_sequence + rec.batch.Count() - 1);
    }
  };
  const LogScanResult r = ScanLog(file, LogKind::kWal, print_record, print_header);
  if (!r.status.ok()) problems.Error(r.status);
  if (r.status.ok() && r.torn_tail && r.file_size > 0) problems.Warning(DescribeTornTail(file, r));
  out << "summary: " << r.records << " records, " << entries << " entries";
  if (sequenced > 0) out << ", sequences " << min_seq << ".." << max_seq;
  out << ", " << problems.errors() << " errors, " << problems.warnings() << " warnings\n";
  return problems.errors() == 0 ? kExitOk : kExitDamaged;
}

}  // namespace tidesdb::tool
