// dump-sst: footer, properties, index and every entry of a key log (format in
// sst/format.h), block by block; a damaged block is reported and the dump goes on with the
// next one.
#include "files.h"
#include "klog_scanner.h"
#include "sst/compression.h"
#include "tool.h"

namespace tidesdb::tool {

namespace {

std::string FormatHandle(const BlockHandle& h) {
  if (h.IsNull()) return "none";
  return "offset " + std::to_string(h.offset()) + " size " + std::to_string(h.size());
}

// Index keys are often separators: a shortened user key with the largest trailer.
std::string FormatIndexKey(Slice key, ByteFormat format) {
  ParsedInternalKey parsed;
  if (ParseInternalKey(key, &parsed) && parsed.sequence == kMaxSequence) {
    return FormatBytes(parsed.user_key, format) + " (separator)";
  }
  return FormatInternalKey(key, format);
}

void PrintProperties(const TableProperties& p, ByteFormat format, std::ostream& out) {
  out << "properties:\n"
      << "  cf_id " << p.cf_id << "\n"
      << "  smallest " << FormatInternalKey(p.smallest_key, format) << "\n"
      << "  largest " << FormatInternalKey(p.largest_key, format) << "\n"
      << "  sequences " << p.min_sequence << ".." << p.max_sequence << "\n"
      << "  entries " << p.num_entries << ", tombstones " << p.num_deletions << ", value pointers "
      << p.num_value_pointers << "\n"
      << "  raw key bytes " << p.raw_key_bytes << ", raw value bytes " << p.raw_value_bytes << "\n"
      << "  data size " << p.data_size << ", index size " << p.index_size << ", filter size " << p.filter_size
      << "\n"
      << "  created " << FormatUnixSeconds(p.creation_time) << "\n";
}

}  // namespace

int DumpSstCommand(const std::string& file, const ToolOptions& options, std::ostream& out) {
  if (!IsRegularFile(file)) {
    out << "tidesdb-tool: no such file: " << file << "\n";
    return kExitUsage;
  }
  ProblemSink problems(&out);
  std::unique_ptr<KlogScanner> klog;
  Status s = KlogScanner::Open(file, &klog);
  if (!s.ok()) {
    problems.Error(s);
    return kExitDamaged;
  }
  const ByteFormat format = options.bytes;
  const Footer& f = klog->footer();
  out << "klog " << file << ": " << klog->file_size() << " bytes\n"
      << "footer: format version " << f.format_version << ", filter " << FormatHandle(f.filter_handle)
      << ", index " << FormatHandle(f.index_handle) << ", properties " << FormatHandle(f.properties_handle)
      << "\n";
  if (klog->properties_status().ok()) {
    PrintProperties(klog->properties(), format, out);
  } else {
    problems.Error(klog->properties_status());
  }
  const auto& blocks = klog->blocks();
  out << "index: " << blocks.size() << " data blocks\n";
  for (size_t i = 0; i < blocks.size(); ++i) {
    out << "  block " << i << ": " << FormatHandle(blocks[i].handle) << ", key "
        << FormatIndexKey(blocks[i].index_key, format) << "\n";
  }
  uint64_t entries = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::string listing;
    uint64_t in_block = 0;
    uint8_t compression = 0;
    s = klog->ScanBlock(
        i,
        [&](Slice key, Slice value) {
          ParsedInternalKey parsed;
          listing += "  " + FormatInternalKey(key, format);
          if (ParseInternalKey(key, &parsed)) {
            const std::string v = FormatStoredValue(parsed.type, value, format);
            if (!v.empty()) listing += " " + v;
          }
          listing += "\n";
          ++in_block;
        },
        &compression);
    out << "block " << i << " (" << FormatHandle(blocks[i].handle) << ", "
        << CompressionTypeName(static_cast<CompressionType>(compression)) << "): " << in_block << " entries\n"
        << listing;
    entries += in_block;
    if (!s.ok()) problems.Error(s);
  }
  if (problems.errors() == 0 && klog->properties_status().ok() && entries != klog->properties().num_entries) {
    problems.Error(file + ": " + std::to_string(entries) + " entries in the blocks, properties say " +
                   std::to_string(klog->properties().num_entries));
  }
  out << "summary: " << entries << " entries in " << blocks.size() << " blocks, " << problems.errors()
      << " errors\n";
  return problems.errors() == 0 ? kExitOk : kExitDamaged;
}

}  // namespace tidesdb::tool
