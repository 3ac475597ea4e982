#include "manifest_state.h"

#include <algorithm>

#include "db/filename.h"

namespace tidesdb::tool {

Status ReadCurrent(const std::string& dir, std::string* manifest_name) {
  const std::string path = CurrentFileName(dir);
  std::string current;
  Status s = ReadFileToString(ToolEnv(), path, &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(path, "CURRENT does not end with a newline");
  }
  current.pop_back();
  uint64_t number = 0;
  FileType type;
  if (!ParseFileName(current, &number, &type) || type != FileType::kManifest) {
    return Status::Corruption(path, "CURRENT does not name a manifest");
  }
  *manifest_name = current;
  return Status::OK();
}

namespace {

// Applies one edit as DBImpl::ApplyRecoveredEdit does: edits naming an unknown column
// family are ignored there, and so here.
void ApplyEdit(const VersionEdit& edit, const std::string& where, ManifestState* state,
               ProblemSink* problems) {
  if (edit.next_file_number())
    state->next_file_number = std::max(state->next_file_number, *edit.next_file_number());
  if (edit.last_sequence()) state->last_sequence = std::max(state->last_sequence, *edit.last_sequence());
  if (edit.wal_number()) state->wal_number = std::max(state->wal_number, *edit.wal_number());
  if (edit.max_column_family())
    state->max_column_family = std::max(state->max_column_family, *edit.max_column_family());
  for (const auto& add : edit.added_column_families()) {
    const bool name_taken = std::any_of(state->cfs.begin(), state->cfs.end(),
                                        [&](const auto& kv) { return kv.second.name == add.name; });
    if (state->cfs.count(add.cf_id) != 0 || name_taken) {
      problems->Error(where + ": column family added twice: id " + std::to_string(add.cf_id) + " name '" +
                      add.name + "'");
      continue;
    }
    ColumnFamilyState& cf = state->cfs[add.cf_id];
    cf.id = add.cf_id;
    cf.name = add.name;
    cf.options = add.options;
    state->max_column_family = std::max(state->max_column_family, add.cf_id);
  }
  auto cf_of = [&](uint32_t id) -> ColumnFamilyState* {
    auto it = state->cfs.find(id);
    return it == state->cfs.end() ? nullptr : &it->second;
  };
  for (const auto& f : edit.flushed_sequences()) {
    if (ColumnFamilyState* cf = cf_of(f.cf_id))
      cf->flushed_sequence = std::max(cf->flushed_sequence, f.sequence);
  }
  for (const auto& d : edit.deleted_files()) {
    ColumnFamilyState* cf = cf_of(d.cf_id);
    if (cf == nullptr || static_cast<size_t>(d.level) >= cf->levels.size()) continue;
    std::erase_if(cf->levels[d.level], [&](const FileMetaData& f) { return f.file_number == d.file_number; });
  }
  for (const auto& n : edit.new_files()) {
    ColumnFamilyState* cf = cf_of(n.cf_id);
    if (cf == nullptr) continue;
    if (cf->levels.size() <= static_cast<size_t>(n.level)) cf->levels.resize(n.level + 1);
    auto& files = cf->levels[n.level];
    if (n.level == 0) {
      files.insert(files.begin(), n.meta);  // later flushes are newer
    } else {
      auto pos = std::lower_bound(files.begin(), files.end(), n.meta, [](const auto& a, const auto& b) {
        return CompareInternalKey(a.smallest, b.smallest) < 0;
      });
      files.insert(pos, n.meta);
    }
    state->last_sequence = std::max(state->last_sequence, n.meta.largest_seq);
    state->next_file_number = std::max(state->next_file_number, n.meta.file_number + 1);
  }
  for (const auto& d : edit.deleted_value_logs()) {
    if (ColumnFamilyState* cf = cf_of(d.cf_id))
      std::erase_if(cf->value_logs, [&](const ValueLogInfo& v) { return v.number == d.file_number; });
  }
  for (const auto& n : edit.new_value_logs()) {
    if (ColumnFamilyState* cf = cf_of(n.cf_id)) cf->value_logs.push_back({n.file_number, n.file_size});
    state->next_file_number = std::max(state->next_file_number, n.file_number + 1);
  }
  for (uint32_t id : edit.dropped_column_families()) {
    auto it = state->cfs.find(id);
    if (it == state->cfs.end()) continue;
    state->dropped.push_back({id, it->second.name});
    state->cfs.erase(it);
  }
}

}  // namespace

bool ReplayManifest(const std::string& path, ManifestState* state, ProblemSink* problems) {
  state->manifest_path = path;
  state->scan =
      ScanLog(path, LogKind::kManifest, [&](uint64_t offset, uint8_t type, const std::string& payload) {
        const std::string where = path + ": offset " + std::to_string(offset);
        if (type != kManifestEditRecord) {
          problems->Error(where + ": unknown manifest record type " + std::to_string(type));
          return;
        }
        VersionEdit edit;
        Status s = edit.DecodeFrom(payload);
        if (!s.ok()) {
          problems->Error(where + ": " + s.message());
          return;
        }
        ApplyEdit(edit, where, state, problems);
        ++state->edits;
      });
  const LogScanResult& r = state->scan;
  if (!r.status.ok()) problems->Error(r.status);
  if (r.status.ok() && r.torn_tail) problems->Warning(DescribeTornTail(path, r));
  if (r.header_ok && r.status.ok() && state->cfs.count(0) == 0) {
    problems->Error(path + ": manifest holds no default column family");
  }
  return state->edits > 0;
}

}  // namespace tidesdb::tool
