// dump-manifest: every record of a manifest, each edit as its DebugString.
#include "db/version_edit.h"
#include "files.h"
#include "log_scan.h"
#include "manifest_state.h"
#include "tool.h"

namespace tidesdb::tool {

int DumpManifestCommand(const std::string& file, const ToolOptions& options, std::ostream& out) {
  if (!IsRegularFile(file)) {
    out << "tidesdb-tool: no such file: " << file << "\n";
    return kExitUsage;
  }
  ProblemSink problems(&out);
  uint64_t edits = 0;
  auto print_header = [&](const LogScanResult& h) {
    out << "manifest " << file << ": log number " << h.log_number << ", " << h.file_size << " bytes\n";
  };
  auto print_record = [&](uint64_t offset, uint8_t type, const std::string& payload) {
    const std::string where = file + ": offset " + std::to_string(offset);
    out << "offset " << offset << ": type " << int{type};
    if (type != kManifestEditRecord) {
      out << " (unknown), " << payload.size() << " bytes " << FormatPrefix(payload, options.bytes) << "\n";
      problems.Error(where + ": unknown manifest record type " + std::to_string(type));
      return;
    }
    out << " (version edit), " << payload.size() << " bytes\n";
    VersionEdit edit;
    Status s = edit.DecodeFrom(payload);
    if (!s.ok()) {
      problems.Error(where + ": " + s.message());
      return;
    }
    ++edits;
    out << edit.DebugString();
  };
  const LogScanResult r = ScanLog(file, LogKind::kManifest, print_record, print_header);
  if (!r.status.ok()) problems.Error(r.status);
  if (r.status.ok() && r.torn_tail && r.file_size > 0) problems.Warning(DescribeTornTail(file, r));
  out << "summary: " << r.records << " records, " << edits << " edits, " << problems.errors() << " errors, "
      << problems.warnings() << " warnings\n";
  return problems.errors() == 0 ? kExitOk : kExitDamaged;
}

}  // namespace tidesdb::tool
