// ls: what the manifest says the database holds, and what the directory holds.
#include <map>
#include <set>

#include "files.h"
#include "manifest_state.h"
#include "tool.h"

namespace tidesdb::tool {

namespace {

// " (missing)" or " (N bytes on disk)" when the directory disagrees with the manifest.
std::string DiskNote(const std::map<std::string, uint64_t>& sizes, const std::string& name,
                     uint64_t recorded) {
  auto it = sizes.find(name);
  if (it == sizes.end()) return " (missing)";
  if (it->second != recorded) return " (" + std::to_string(it->second) + " bytes on disk)";
  return "";
}

}  // namespace

int LsCommand(const std::string& dir, const ToolOptions& options, std::ostream& out) {
  if (!IsDirectory(dir)) {
    out << "tidesdb-tool: not a directory: " << dir << "\n";
    return kExitUsage;
  }
  ProblemSink problems(&out);
  std::vector<DirEntry> entries;
  Status s = ListDbDir(dir, &entries);
  if (!s.ok()) {
    problems.Error(s);
    return kExitDamaged;
  }
  std::map<std::string, uint64_t> sizes;
  for (const DirEntry& e : entries) sizes[e.name] = e.size;

  out << "database " << dir << "\n";
  std::string manifest_name;
  s = ReadCurrent(dir, &manifest_name);
  ManifestState state;
  std::set<std::string> listed;  // names the manifest accounts for
  listed.insert("CURRENT");
  if (!s.ok()) {
    problems.Error(s);
  } else {
    listed.insert(manifest_name);
    out << "CURRENT names " << manifest_name << "\n";
    ReplayManifest(JoinPath(dir, manifest_name), &state, &problems);
    out << "manifest " << manifest_name << ": " << state.scan.file_size << " bytes, " << state.edits
        << " edits\n"
        << "next_file_number " << state.next_file_number << ", last_sequence " << state.last_sequence
        << ", wal_number " << state.wal_number << ", max_column_family " << state.max_column_family << "\n";
  }

  for (const auto& [id, cf] : state.cfs) {
    out << "\ncolumn family " << id << " " << FormatBytes(cf.name, ByteFormat{}) << "\n"
        << "  options: " << FormatKeyOptions(cf.options) << "\n"
        << "  flushed_sequence " << cf.flushed_sequence << "\n";
    for (size_t level = 0; level < cf.levels.size(); ++level) {
      const auto& files = cf.levels[level];
      if (files.empty()) continue;
      uint64_t bytes = 0;
      for (const FileMetaData& f : files) bytes += f.file_size;
      out << "  L" << level << ": " << files.size() << (files.size() == 1 ? " file, " : " files, ") << bytes
          << " bytes\n";
      for (const FileMetaData& f : files) {
        const std::string name = BaseName(KeyLogFileName(dir, f.file_number));
        listed.insert(name);
        out << "    " << name << " " << f.file_size << " bytes" << DiskNote(sizes, name, f.file_size) << "\n"
            << "      keys " << FormatInternalKey(f.smallest, options.bytes) << " .. "
            << FormatInternalKey(f.largest, options.bytes) << "\n"
            << "      seqs " << f.smallest_seq << ".." << f.largest_seq << ", entries " << f.num_entries
            << ", tombstones " << f.num_deletions << "\n";
      }
    }
    if (!cf.value_logs.empty()) {
      uint64_t bytes = 0;
      for (const ValueLogInfo& v : cf.value_logs) bytes += v.size;
      out << "  value logs: " << cf.value_logs.size() << (cf.value_logs.size() == 1 ? " file, " : " files, ")
          << bytes << " bytes\n";
      for (const ValueLogInfo& v : cf.value_logs) {
        const std::string name = BaseName(ValueLogFileName(dir, v.number));
        listed.insert(name);
        out << "    " << name << " " << v.size << " bytes" << DiskNote(sizes, name, v.size) << "\n";
      }
    }
  }
  if (!state.dropped.empty()) {
    out << "\ndropped column families:";
    for (const DroppedColumnFamily& d : state.dropped)
      out << " " << d.id << " " << FormatBytes(d.name, ByteFormat{});
    out << "\n";
  }

  out << "\nWAL files:\n";
  bool any_wal = false;
  for (const DirEntry& e : entries) {
    if (e.type != FileType::kWal) continue;
    any_wal = true;
    listed.insert(e.name);
    out << "  " << e.name << " " << e.size << " bytes"
        << (e.number >= state.wal_number ? " (live: replayed at open)" : " (obsolete: below wal_number)")
        << "\n";
  }
  if (!any_wal) out << "  (none)\n";

  bool header = false;
  for (const DirEntry& e : entries) {
    if (listed.count(e.name) != 0) continue;
    if (!header) out << "\nother files:\n";
    header = true;
    std::string note;
    switch (e.type) {
      case FileType::kManifest:
        note = " (stale manifest: CURRENT names another)";
        break;
      case FileType::kKeyLog:
      case FileType::kValueLog:
        note = " (not in the manifest: left over, removed at the next open)";
        break;
      case FileType::kLock:
        note = " (held while the database is open)";
        break;
      default:
        break;
    }
    out << "  " << e.name;
    if (e.is_directory) {
      out << "/";
    } else {
      out << " " << e.size << " bytes";
    }
    out << note << "\n";
  }
  return problems.errors() == 0 ? kExitOk : kExitDamaged;
}

}  // namespace tidesdb::tool
