// verify: checks every checksum of every file of a database directory, and that the files
// the manifest lists are there with the recorded sizes and contents.
//
//   CURRENT        ends with a newline and names a manifest that exists
//   manifest       every record (checksum, type, VersionEdit decoding); torn tail = warning
//   key logs       footer, properties, index and every data block (checksum, decoding, key
//                  order, counts and ranges against the properties and the manifest), then
//                  the whole table once more through the engine's TableReader; every value
//                  pointer names a record of one of the column family's value logs
//   value logs     header and every record (ValueLogReader::ForEach)
//   WALs           every record (checksum, type, write-batch decoding). A torn tail of the
//                  newest WAL is a warning (recovery truncates it), and so is damage past
//                  its last claimed sync with records after it (a write lost at a power
//                  loss, wal/log_format.h); damage anywhere else in a
//                  live WAL is an error, as recovery would fail there. Problems in WALs below
//                  the manifest's wal_number (never replayed) are warnings.
//   stale manifests  records checked; problems are warnings (the next open removes them)
//
// Without a readable manifest every WAL, key log and value log in the directory is still
// checked on its own.
#include <algorithm>
#include <map>
#include <set>

#include "files.h"
#include "klog_scanner.h"
#include "log_scan.h"
#include "manifest_state.h"
#include "sst/table_reader.h"
#include "sst/value_log.h"
#include "tool.h"
#include "wal_record.h"

namespace tidesdb::tool {

namespace {

// Dangling value pointers reported per key log before the rest are only counted.
constexpr uint64_t kMaxPointerErrorsPerFile = 10;

// What verify learned of one value log: the records it holds, when the scan got through
// the whole file.
struct ValueLogRecords {
  bool complete = false;
  std::vector<std::pair<uint64_t, uint64_t>> records;  // (offset, size), ascending
};

enum class WalRole {
  kNewest,    // the newest live WAL (or a WAL checked on its own): a torn tail is expected
  kOlder,     // a live WAL with a newer one after it: a torn tail fails recovery
  kObsolete,  // below the manifest's wal_number: never replayed
};

class Verifier {
 public:
  Verifier(const ToolOptions& options, std::ostream& out) : options_(options), out_(out), problems_(&out) {}

  void VerifyDirectory(const std::string& dir);
  // One file, its kind taken from its name. False if the name is not a database file's.
  bool VerifySingleFile(const std::string& path);

  int Finish() {
    const uint64_t unsupported = problems_.unsupported();
    const bool damaged = problems_.errors() != 0;
    out_ << "summary: " << files_ << " files checked, " << problems_.errors() << " errors, "
         << problems_.warnings() << " warnings";
    // Files of a newer format are not damage, but they were not checked either.
    if (unsupported != 0) out_ << ", " << unsupported << " of a newer format not checked";
    out_ << ": "
         << (damaged            ? "DAMAGED"
             : unsupported != 0 ? "NOT VERIFIED (newer TideSQL)"
                                : "clean")
         << "\n";
    return damaged || unsupported != 0 ? kExitDamaged : kExitOk;
  }

 private:
  // Counts the file and prints "ok <path>: <detail>" if no problem was reported since
  // `errors_before` / `warnings_before`.
  void Done(const std::string& path, uint64_t errors_before, uint64_t warnings_before,
            const std::string& detail) {
    ++files_;
    if (problems_.errors() == errors_before && problems_.warnings() == warnings_before)
      out_ << "ok " << path << ": " << detail << "\n";
  }
  void Report(bool as_error, const std::string& message) {
    as_error ? problems_.Error(message) : problems_.Warning(message);
  }

  // number: from the file name; the header must name the same log.
  void VerifyWal(const std::string& path, uint64_t number, WalRole role);
  void VerifyManifest(const std::string& path, ManifestState* state);
  // A manifest CURRENT does not name. stale: CURRENT names another one (problems are
  // warnings); otherwise CURRENT is unreadable and this may be the live one (errors).
  void VerifyOtherManifest(const std::string& path, bool stale);
  void VerifyValueLog(const std::string& path, uint64_t number, ValueLogRecords* records);
  // cf_id and meta are null for a key log checked without the manifest; vlogs null skips
  // the value-pointer check.
  void VerifyKeyLog(const std::string& path, uint64_t number, const uint32_t* cf_id, const FileMetaData* meta,
                    const std::map<uint64_t, ValueLogRecords>* vlogs);
  // True if the file exists with the recorded size; reports otherwise.
  bool CheckListedFile(const std::string& path, const std::map<std::string, uint64_t>& sizes,
                       uint64_t recorded);

  const ToolOptions options_;
  std::ostream& out_;
  ProblemSink problems_;
  uint64_t files_ = 0;
};

void Verifier::VerifyWal(const std::string& path, uint64_t number, WalRole role) {
  const uint64_t e0 = problems_.errors(), w0 = problems_.warnings();
  const bool damage_is_error = role != WalRole::kObsolete;
  const std::string suffix = role == WalRole::kObsolete ? " (obsolete WAL, never replayed)" : "";
  uint64_t entries = 0;
  const LogScanResult r = ScanLog(
      path, LogKind::kWal,
      [&](uint64_t offset, uint8_t type, const std::string& payload) {
        WalRecord rec;
        Status s = DecodeWalRecord(type, payload, &rec);
        if (!s.ok()) {
          Report(damage_is_error, path + ": offset " + std::to_string(offset) + ": " + s.message() + suffix);
          return;
        }
        if (rec.has_batch) entries += rec.batch.Count();
      },
      nullptr, role == WalRole::kNewest);
  if (r.status.IsNotSupported()) {
    problems_.Unsupported(r.status.message());
  } else if (!r.status.ok()) {
    Report(damage_is_error, r.status.message() + suffix);
  }
  if (r.header_ok && r.log_number != 0 && r.log_number != number) {
    Report(damage_is_error, path + ": offset 0: header names log " + std::to_string(r.log_number) + suffix);
  }
  if (r.status.ok() && r.torn_tail) {
    if (role == WalRole::kOlder) {
      problems_.Error(DescribeTornTail(path, r) +
                      "; a damaged record in a WAL that is not the newest fails recovery");
    } else if (r.file_size > 0) {  // a 0-byte newest WAL: opened, nothing written yet
      problems_.Warning(DescribeTornTail(path, r) + suffix);
    }
  }
  Done(path, e0, w0,
       std::to_string(r.records) + " records, " + std::to_string(entries) + " entries" + suffix);
}

void Verifier::VerifyManifest(const std::string& path, ManifestState* state) {
  const uint64_t e0 = problems_.errors(), w0 = problems_.warnings();
  ReplayManifest(path, state, &problems_);
  uint64_t files = 0;
  for (const auto& [id, cf] : state->cfs) {
    for (const auto& level : cf.levels) files += level.size();
    files += cf.value_logs.size();
  }
  Done(path, e0, w0,
       std::to_string(state->edits) + " edits, " + std::to_string(state->cfs.size()) + " column families, " +
           std::to_string(files) + " files listed");
}

void Verifier::VerifyOtherManifest(const std::string& path, bool stale) {
  const uint64_t e0 = problems_.errors(), w0 = problems_.warnings();
  const std::string suffix = stale ? " (stale manifest; removed at the next open)" : "";
  const LogScanResult r =
      ScanLog(path, LogKind::kManifest, [&](uint64_t offset, uint8_t type, const std::string& p) {
        VersionEdit edit;
        Status s = type == kManifestEditRecord ? edit.DecodeFrom(p)
                                               : Status::Corruption("unknown manifest record type");
        if (!s.ok())
          Report(!stale, path + ": offset " + std::to_string(offset) + ": " + s.message() + suffix);
      });
  if (!r.status.ok()) Report(!stale, r.status.message() + suffix);
  if (r.status.ok() && r.torn_tail && r.file_size > 0) problems_.Warning(DescribeTornTail(path, r) + suffix);
  Done(path, e0, w0, std::to_string(r.records) + " records" + suffix);
}

void Verifier::VerifyValueLog(const std::string& path, uint64_t number, ValueLogRecords* records) {
  const uint64_t e0 = problems_.errors(), w0 = problems_.warnings();
  std::unique_ptr<RandomAccessFile> file;
  uint64_t size = 0;
  Status s = OpenForReading(path, &file, &size);
  std::unique_ptr<ValueLogReader> reader;
  if (s.ok()) s = ValueLogReader::Open(path, number, std::move(file), size, &reader);
  uint64_t bytes = 0;
  if (s.ok()) {
    s = reader->ForEach([&](uint64_t offset, uint64_t record_size, Slice value) {
      if (records != nullptr) records->records.emplace_back(offset, record_size);
      bytes += value.size();
      return Status::OK();
    });
  }
  if (!s.ok()) {
    problems_.Error(s);
  } else if (records != nullptr) {
    records->complete = true;
  }
  const size_t n = records != nullptr ? records->records.size() : 0;
  Done(path, e0, w0,
       (records != nullptr ? std::to_string(n) + " records, " : std::string()) + std::to_string(bytes) +
           " value bytes");
}

void Verifier::VerifyKeyLog(const std::string& path, uint64_t number, const uint32_t* cf_id,
                            const FileMetaData* meta, const std::map<uint64_t, ValueLogRecords>* vlogs) {
  const uint64_t e0 = problems_.errors(), w0 = problems_.warnings();
  std::unique_ptr<KlogScanner> klog;
  Status s = KlogScanner::Open(path, &klog);
  if (!s.ok()) {
    problems_.Error(s);
    Done(path, e0, w0, "");
    return;
  }
  if (!klog->properties_status().ok()) problems_.Error(klog->properties_status());

  // Walk every block; totals count only blocks that decoded.
  uint64_t entries = 0, deletions = 0, pointers = 0, bad_blocks = 0, pointer_errors = 0;
  SequenceNumber min_seq = kMaxSequence, max_seq = 0;
  std::string first_key, prev_key;  // prev_key empty: no trustworthy previous entry
  const auto& blocks = klog->blocks();
  for (size_t i = 0; i < blocks.size(); ++i) {
    const uint64_t block_offset = blocks[i].handle.offset();
    const std::string where = path + ": offset " + std::to_string(block_offset);
    std::string block_problem;
    uint64_t n = 0, dels = 0, ptrs = 0;
    std::string block_first, block_last;
    SequenceNumber bmin = kMaxSequence, bmax = 0;
    uint8_t compression = 0;
    s = klog->ScanBlock(
        i,
        [&](Slice key, Slice value) {
          ParsedInternalKey parsed;
          if (!ParseInternalKey(key, &parsed)) {
            if (block_problem.empty()) block_problem = "bad internal key " + FormatBytes(key, options_.bytes);
            return;
          }
          if (!block_last.empty() && CompareInternalKey(block_last, key) >= 0 && block_problem.empty()) {
            block_problem = "keys out of order at " + FormatInternalKey(key, options_.bytes);
          }
          if (n == 0) block_first.assign(key);
          block_last.assign(key);
          ++n;
          bmin = std::min(bmin, parsed.sequence);
          bmax = std::max(bmax, parsed.sequence);
          if (parsed.type == ValueType::kDeletion) ++dels;
          if (parsed.type == ValueType::kValuePointer || parsed.type == ValueType::kValuePointerWithExpiry) {
            ++ptrs;
            Slice in = value;
            if (parsed.type == ValueType::kValuePointerWithExpiry && in.size() >= 8) in.remove_prefix(8);
            ValuePointer ptr;
            std::string dangling;
            if (!ptr.DecodeFrom(&in) || !in.empty()) {
              dangling = "malformed value pointer";
            } else if (vlogs != nullptr) {
              auto v = vlogs->find(ptr.file_number);
              if (v == vlogs->end()) {
                dangling = "points into value log #" + std::to_string(ptr.file_number) +
                           ", which the manifest does not list for this column family";
              } else if (v->second.complete) {
                const auto& recs = v->second.records;
                auto r = std::lower_bound(recs.begin(), recs.end(), std::make_pair(ptr.offset, uint64_t{0}));
                if (r == recs.end() || r->first != ptr.offset || r->second != ptr.size) {
                  dangling = "points at offset " + std::to_string(ptr.offset) + " size " +
                             std::to_string(ptr.size) + " of value log #" + std::to_string(ptr.file_number) +
                             ", where no record starts";
                }
              }
            }
            if (!dangling.empty() && ++pointer_errors <= kMaxPointerErrorsPerFile) {
              problems_.Error(where + ": entry " + FormatInternalKey(key, options_.bytes) + " " + dangling);
            }
          }
        },
        &compression);
    if (s.ok() && !block_problem.empty()) s = TableCorruption(path, block_offset, block_problem);
    if (s.ok() && n == 0) s = TableCorruption(path, block_offset, "empty data block");
    if (s.ok() && CompareInternalKey(block_last, blocks[i].index_key) > 0) {
      s = TableCorruption(path, block_offset, "block's last key is past its index key");
    }
    if (s.ok() && !prev_key.empty() && CompareInternalKey(prev_key, block_first) >= 0) {
      s = TableCorruption(path, block_offset, "block's first key is not after the previous block's last key");
    }
    if (s.ok() && i > 0 && CompareInternalKey(block_first, blocks[i - 1].index_key) <= 0) {
      s = TableCorruption(path, block_offset, "block's first key is not after the previous index key");
    }
    if (!s.ok()) {
      problems_.Error(s);
      ++bad_blocks;
      prev_key.clear();
      continue;
    }
    if (i == 0) first_key = block_first;
    prev_key = block_last;
    entries += n;
    deletions += dels;
    pointers += ptrs;
    min_seq = std::min(min_seq, bmin);
    max_seq = std::max(max_seq, bmax);
  }
  if (pointer_errors > kMaxPointerErrorsPerFile) {
    problems_.Error(path + ": " + std::to_string(pointer_errors - kMaxPointerErrorsPerFile) +
                    " more entries with dangling value pointers");
  }

  // Totals against the properties and the manifest, when every block could be read.
  const TableProperties& p = klog->properties();
  auto mismatch = [&](const std::string& what, const std::string& found, const std::string& recorded,
                      const char* source) {
    if (found != recorded) {
      problems_.Error(path + ": " + what + " " + found + " in the blocks, " + recorded + " in the " + source);
    }
  };
  const std::string last_key = prev_key;
  const bool complete = bad_blocks == 0;
  if (complete && klog->properties_status().ok()) {
    mismatch("entries", std::to_string(entries), std::to_string(p.num_entries), "properties");
    mismatch("tombstones", std::to_string(deletions), std::to_string(p.num_deletions), "properties");
    mismatch("value pointers", std::to_string(pointers), std::to_string(p.num_value_pointers), "properties");
    if (entries > 0) {
      mismatch("smallest key", FormatInternalKey(first_key, options_.bytes),
               FormatInternalKey(p.smallest_key, options_.bytes), "properties");
      mismatch("largest key", FormatInternalKey(last_key, options_.bytes),
               FormatInternalKey(p.largest_key, options_.bytes), "properties");
      mismatch("sequences", std::to_string(min_seq) + ".." + std::to_string(max_seq),
               std::to_string(p.min_sequence) + ".." + std::to_string(p.max_sequence), "properties");
    }
  }
  if (klog->properties_status().ok() && cf_id != nullptr && p.cf_id != *cf_id) {
    problems_.Error(path + ": properties name column family " + std::to_string(p.cf_id) +
                    ", the manifest lists the file under column family " + std::to_string(*cf_id));
  }
  if (complete && meta != nullptr) {
    mismatch("entries", std::to_string(entries), std::to_string(meta->num_entries), "manifest");
    mismatch("tombstones", std::to_string(deletions), std::to_string(meta->num_deletions), "manifest");
    if (entries > 0) {
      mismatch("smallest key", FormatInternalKey(first_key, options_.bytes),
               FormatInternalKey(meta->smallest, options_.bytes), "manifest");
      mismatch("largest key", FormatInternalKey(last_key, options_.bytes),
               FormatInternalKey(meta->largest, options_.bytes), "manifest");
      mismatch("sequences", std::to_string(min_seq) + ".." + std::to_string(max_seq),
               std::to_string(meta->smallest_seq) + ".." + std::to_string(meta->largest_seq), "manifest");
    }
  }

  // The engine's own reader must accept the file and iterate all of it. Its first error is
  // reported only if the walk above found nothing (it would be the same damage).
  std::unique_ptr<RandomAccessFile> file;
  uint64_t size = 0;
  s = OpenForReading(path, &file, &size);
  std::unique_ptr<TableReader> table;
  if (s.ok()) s = TableReader::Open(path, number, std::move(file), size, /*cache=*/nullptr, &table);
  uint64_t iterated = 0;
  if (s.ok()) {
    std::unique_ptr<InternalIterator> it = table->NewIterator(/*fill_cache=*/false);
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++iterated;
    s = it->status();
  }
  if (problems_.errors() == e0) {
    if (!s.ok()) {
      problems_.Error(s);
    } else if (iterated != entries) {
      problems_.Error(path + ": the table reader iterates " + std::to_string(iterated) +
                      " entries, the blocks hold " + std::to_string(entries));
    }
  }
  Done(path, e0, w0,
       std::to_string(entries) + " entries in " + std::to_string(blocks.size()) + " blocks, " +
           std::to_string(pointers) + " value pointers");
}

bool Verifier::CheckListedFile(const std::string& path, const std::map<std::string, uint64_t>& sizes,
                               uint64_t recorded) {
  auto it = sizes.find(BaseName(path));
  if (it == sizes.end()) {
    problems_.Error(path + ": listed in the manifest but missing");
    ++files_;
    return false;
  }
  if (it->second != recorded) {
    problems_.Error(path + ": " + std::to_string(it->second) + " bytes on disk, the manifest records " +
                    std::to_string(recorded));
  }
  return true;
}

void Verifier::VerifyDirectory(const std::string& dir) {
  out_ << "verifying " << dir << "\n";
  std::vector<DirEntry> entries;
  Status s = ListDbDir(dir, &entries);
  if (!s.ok()) {
    problems_.Error(s);
    return;
  }
  std::map<std::string, uint64_t> sizes;
  for (const DirEntry& e : entries) sizes[e.name] = e.size;

  // CURRENT and the manifest it names.
  std::string manifest_name;
  ManifestState state;
  bool have_state = false;
  ++files_;
  s = ReadCurrent(dir, &manifest_name);
  if (!s.ok()) {
    problems_.Error(s);
  } else if (sizes.count(manifest_name) == 0) {
    problems_.Error(CurrentFileName(dir) + ": names " + manifest_name + ", which does not exist");
  } else {
    out_ << "ok " << CurrentFileName(dir) << ": names " << manifest_name << "\n";
    VerifyManifest(JoinPath(dir, manifest_name), &state);
    have_state = state.scan.header_ok;
  }

  std::set<std::string> checked;
  if (have_state) {
    for (const auto& [id, cf] : state.cfs) {
      std::map<uint64_t, ValueLogRecords> vlogs;
      for (const ValueLogInfo& v : cf.value_logs) {
        const std::string path = ValueLogFileName(dir, v.number);
        checked.insert(BaseName(path));
        ValueLogRecords& records = vlogs[v.number];
        if (CheckListedFile(path, sizes, v.size)) VerifyValueLog(path, v.number, &records);
      }
      for (const auto& level : cf.levels) {
        for (const FileMetaData& f : level) {
          const std::string path = KeyLogFileName(dir, f.file_number);
          checked.insert(BaseName(path));
          if (CheckListedFile(path, sizes, f.file_size)) VerifyKeyLog(path, f.file_number, &id, &f, &vlogs);
        }
      }
    }
  }

  uint64_t newest_live_wal = 0;
  bool any_live_wal = false;
  for (const DirEntry& e : entries) {
    if (e.type == FileType::kWal && (!have_state || e.number >= state.wal_number)) {
      newest_live_wal = std::max(newest_live_wal, e.number);
      any_live_wal = true;
    }
  }
  for (const DirEntry& e : entries) {
    const std::string path = JoinPath(dir, e.name);
    if (e.is_directory || checked.count(e.name) != 0) continue;
    switch (e.type) {
      case FileType::kWal: {
        WalRole role = WalRole::kOlder;
        if (have_state && e.number < state.wal_number) {
          role = WalRole::kObsolete;
        } else if (any_live_wal && e.number == newest_live_wal) {
          role = WalRole::kNewest;
        }
        VerifyWal(path, e.number, role);
        break;
      }
      case FileType::kManifest:
        if (e.name != manifest_name) VerifyOtherManifest(path, /*stale=*/!manifest_name.empty());
        break;
      case FileType::kKeyLog:
      case FileType::kValueLog:
        if (have_state) {
          problems_.Warning(path + ": not listed in the manifest (left over; removed at the next open)");
        } else if (e.type == FileType::kKeyLog) {
          VerifyKeyLog(path, e.number, nullptr, nullptr, nullptr);
        } else {
          VerifyValueLog(path, e.number, nullptr);
        }
        break;
      default:
        break;
    }
  }
}

bool Verifier::VerifySingleFile(const std::string& path) {
  uint64_t number = 0;
  FileType type;
  if (!ParseFileName(BaseName(path), &number, &type)) return false;
  out_ << "verifying " << path << "\n";
  switch (type) {
    case FileType::kWal:
      VerifyWal(path, number, WalRole::kNewest);
      return true;
    case FileType::kManifest: {
      ManifestState state;
      VerifyManifest(path, &state);
      return true;
    }
    case FileType::kKeyLog:
      VerifyKeyLog(path, number, nullptr, nullptr, nullptr);
      return true;
    case FileType::kValueLog:
      VerifyValueLog(path, number, nullptr);
      return true;
    default:
      return false;
  }
}

}  // namespace

int VerifyCommand(const std::string& path, const ToolOptions& options, std::ostream& out) {
  Verifier verifier(options, out);
  if (IsDirectory(path)) {
    verifier.VerifyDirectory(path);
  } else if (IsRegularFile(path)) {
    if (!verifier.VerifySingleFile(path)) {
      out << "tidesdb-tool: cannot tell what kind of file " << path
          << " is from its name (NNNNNN.wal, NNNNNN.klog, NNNNNN.vlog or MANIFEST-NNNNNN)\n";
      return kExitUsage;
    }
  } else {
    out << "tidesdb-tool: no such file or directory: " << path << "\n";
    return kExitUsage;
  }
  return verifier.Finish();
}

}  // namespace tidesdb::tool
