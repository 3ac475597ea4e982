#include "db/version_edit.h"

#include <bit>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "util/coding.h"

namespace tidesdb {

namespace {

// Field tags of a manifest record (format in version_edit.h). Never reuse or renumber.
enum Tag : uint32_t {
  kEnd = 0,
  kNextFileNumber = 1,
  kLastSequence = 2,
  kWalNumber = 3,
  kAddColumnFamily = 4,
  kDropColumnFamily = 5,
  kFlushedSequence = 6,
  kNewFile = 7,
  kDeletedFile = 8,
  kNewValueLog = 9,
  kDeletedValueLog = 10,
  kMaxColumnFamily = 11,
  kNewFileWithValueLogRefs = 12,
};

// Calls f(tag, name, field) for every field of ColumnFamilyOptions; the one list behind
// encoding, decoding and printing. Tags are part of the format: never reuse or renumber.
template <typename Options, typename F>
void ForEachOption(Options& o, F&& f) {
  f(1, "write_buffer_size", o.write_buffer_size);
  f(2, "block_size", o.block_size);
  f(3, "block_restart_interval", o.block_restart_interval);
  f(4, "bloom_fpr", o.bloom_fpr);
  f(5, "value_threshold", o.value_threshold);
  f(6, "compression", o.compression);
  f(7, "use_btree", o.use_btree);
  f(8, "l1_file_count_trigger", o.l1_file_count_trigger);
  f(9, "l0_queue_stall_threshold", o.l0_queue_stall_threshold);
  f(10, "level_size_base", o.level_size_base);
  f(11, "level_size_multiplier", o.level_size_multiplier);
  f(12, "max_levels", o.max_levels);
  f(13, "tombstone_density_trigger", o.tombstone_density_trigger);
  f(14, "tombstone_density_min_entries", o.tombstone_density_min_entries);
  f(15, "default_ttl_seconds", o.default_ttl_seconds);
  f(16, "target_file_size", o.target_file_size);
  f(17, "value_log_gc_threshold", o.value_log_gc_threshold);
  f(18, "filter_prefix_length", o.filter_prefix_length);
  f(19, "l0_compaction_size_ratio", o.l0_compaction_size_ratio);
}

template <typename T>
void EncodeOptionValue(const T& v, std::string* dst) {
  if constexpr (std::is_same_v<T, bool>) {
    PutVarint32(dst, v ? 1 : 0);
  } else if constexpr (std::is_same_v<T, double>) {
    PutFixed64(dst, std::bit_cast<uint64_t>(v));
  } else if constexpr (std::is_same_v<T, CompressionType>) {
    PutVarint32(dst, static_cast<uint8_t>(v));
  } else if constexpr (std::is_same_v<T, int>) {
    PutVarint32(dst, static_cast<uint32_t>(v));
  } else {
    static_assert(std::is_unsigned_v<T> && sizeof(T) <= 8, "unsupported option type");
    PutVarint64(dst, v);
  }
}

template <typename T>
bool DecodeOptionValue(Slice* input, T* v) {
  if constexpr (std::is_same_v<T, bool>) {
    uint32_t x;
    if (!GetVarint32(input, &x) || x > 1) return false;
    *v = x == 1;
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t x;
    if (!GetFixed64(input, &x)) return false;
    *v = std::bit_cast<double>(x);
  } else if constexpr (std::is_same_v<T, CompressionType>) {
    uint32_t x;
    if (!GetVarint32(input, &x) || x > static_cast<uint8_t>(CompressionType::kZstd)) return false;
    *v = static_cast<CompressionType>(x);
  } else if constexpr (std::is_same_v<T, int>) {
    uint32_t x;
    if (!GetVarint32(input, &x)) return false;
    *v = static_cast<int>(x);  // two's complement (C++20)
  } else {
    uint64_t x;
    if (!GetVarint64(input, &x) || x > std::numeric_limits<T>::max()) return false;
    *v = static_cast<T>(x);
  }
  return true;
}

template <typename T>
void AppendOptionValue(const T& v, std::string* out) {
  if constexpr (std::is_same_v<T, bool>) {
    out->append(v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, double>) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    out->append(buf);
  } else if constexpr (std::is_same_v<T, CompressionType>) {
    switch (v) {
      case CompressionType::kNone:
        out->append("none");
        break;
      case CompressionType::kSnappy:
        out->append("snappy");
        break;
      case CompressionType::kLZ4:
        out->append("lz4");
        break;
      case CompressionType::kZstd:
        out->append("zstd");
        break;
    }
  } else {
    out->append(std::to_string(v));
  }
}

// Bytes as a quoted string; printable ASCII as is, the rest as \xNN.
void AppendEscaped(Slice s, std::string* out) {
  out->push_back('\'');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\'' && c != '\\') {
      out->push_back(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out->append(buf);
    }
  }
  out->push_back('\'');
}

void AppendReadableInternalKey(Slice key, std::string* out) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(key, &parsed)) {
    out->append("(bad internal key) ");
    AppendEscaped(key, out);
    return;
  }
  AppendEscaped(parsed.user_key, out);
  out->append(" @ " + std::to_string(parsed.sequence) + " : " +
              std::to_string(static_cast<int>(parsed.type)));
}

void AppendNumber(std::string* out, const char* label, uint64_t v, const char* suffix = "") {
  out->append(label);
  out->append(std::to_string(v));
  out->append(suffix);
}

Status Corrupt(Slice what) { return Status::Corruption("version edit", what); }

bool GetLevel(Slice* input, int* level) {
  uint32_t v;
  if (!GetVarint32(input, &v) || v >= static_cast<uint32_t>(VersionEdit::kMaxLevelLimit)) return false;
  *level = static_cast<int>(v);
  return true;
}

bool GetInternalKey(Slice* input, std::string* key) {
  Slice s;
  ParsedInternalKey parsed;
  if (!GetLengthPrefixedSlice(input, &s) || !ParseInternalKey(s, &parsed)) return false;
  key->assign(s.data(), s.size());
  return true;
}

}  // namespace

void EncodeColumnFamilyOptions(const ColumnFamilyOptions& options, std::string* dst) {
  // Does not compile once ColumnFamilyOptions gains or loses a field: a new option must be
  // added to ForEachOption (with a new tag) or it would silently not be persisted.
  [[maybe_unused]] const auto& [f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
                                f18, f19] = options;
  ForEachOption(options, [dst](uint32_t tag, const char*, const auto& value) {
    PutVarint32(dst, tag);
    EncodeOptionValue(value, dst);
  });
}

Status DecodeColumnFamilyOptions(Slice input, ColumnFamilyOptions* options) {
  ColumnFamilyOptions result;
  while (!input.empty()) {
    uint32_t tag;
    if (!GetVarint32(&input, &tag)) return Status::Corruption("column family options", "truncated tag");
    bool known = false;
    bool parsed = false;
    ForEachOption(result, [&](uint32_t field_tag, const char*, auto& value) {
      if (field_tag != tag) return;
      known = true;
      parsed = DecodeOptionValue(&input, &value);
    });
    if (!known) return Status::Corruption("column family options", "unknown tag " + std::to_string(tag));
    if (!parsed) {
      return Status::Corruption("column family options", "bad value for tag " + std::to_string(tag));
    }
  }
  *options = result;
  return Status::OK();
}

void VersionEdit::EncodeTo(std::string* dst) const {
  if (next_file_number_) {
    PutVarint32(dst, kNextFileNumber);
    PutVarint64(dst, *next_file_number_);
  }
  if (last_sequence_) {
    PutVarint32(dst, kLastSequence);
    PutVarint64(dst, *last_sequence_);
  }
  if (wal_number_) {
    PutVarint32(dst, kWalNumber);
    PutVarint64(dst, *wal_number_);
  }
  if (max_column_family_) {
    PutVarint32(dst, kMaxColumnFamily);
    PutVarint64(dst, *max_column_family_);
  }
  for (const AddedColumnFamily& cf : added_cfs_) {
    PutVarint32(dst, kAddColumnFamily);
    PutVarint32(dst, cf.cf_id);
    PutLengthPrefixedSlice(dst, cf.name);
    std::string options;
    EncodeColumnFamilyOptions(cf.options, &options);
    PutLengthPrefixedSlice(dst, options);
  }
  for (uint32_t cf_id : dropped_cfs_) {
    PutVarint32(dst, kDropColumnFamily);
    PutVarint32(dst, cf_id);
  }
  for (const FlushedSequence& f : flushed_sequences_) {
    PutVarint32(dst, kFlushedSequence);
    PutVarint32(dst, f.cf_id);
    PutVarint64(dst, f.sequence);
  }
  for (const NewFile& f : new_files_) {
    PutVarint32(dst, f.meta.value_log_refs_known ? kNewFileWithValueLogRefs : kNewFile);
    PutVarint32(dst, f.cf_id);
    PutVarint32(dst, static_cast<uint32_t>(f.level));
    PutVarint64(dst, f.meta.file_number);
    PutVarint64(dst, f.meta.file_size);
    PutLengthPrefixedSlice(dst, f.meta.smallest);
    PutLengthPrefixedSlice(dst, f.meta.largest);
    PutVarint64(dst, f.meta.smallest_seq);
    PutVarint64(dst, f.meta.largest_seq);
    PutVarint64(dst, f.meta.num_entries);
    PutVarint64(dst, f.meta.num_deletions);
    if (f.meta.value_log_refs_known) {
      PutVarint32(dst, static_cast<uint32_t>(f.meta.value_log_refs.size()));
      for (const auto& ref : f.meta.value_log_refs) {
        PutVarint64(dst, ref.file_number);
        PutVarint64(dst, ref.bytes);
      }
    }
  }
  for (const DeletedFile& f : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, f.cf_id);
    PutVarint32(dst, static_cast<uint32_t>(f.level));
    PutVarint64(dst, f.file_number);
  }
  for (const NewValueLog& v : new_value_logs_) {
    PutVarint32(dst, kNewValueLog);
    PutVarint32(dst, v.cf_id);
    PutVarint64(dst, v.file_number);
    PutVarint64(dst, v.file_size);
  }
  for (const DeletedValueLog& v : deleted_value_logs_) {
    PutVarint32(dst, kDeletedValueLog);
    PutVarint32(dst, v.cf_id);
    PutVarint64(dst, v.file_number);
  }
  PutVarint32(dst, kEnd);
}

Status VersionEdit::DecodeFrom(Slice src) {
  Clear();
  VersionEdit e;
  Slice input = src;
  auto set_once = [&input](std::optional<uint64_t>* field) {
    uint64_t v;
    if (field->has_value() || !GetVarint64(&input, &v)) return false;
    *field = v;
    return true;
  };
  bool ended = false;
  while (!ended) {
    uint32_t tag;
    if (input.empty()) return Corrupt("truncated record (no end tag)");
    if (!GetVarint32(&input, &tag)) return Corrupt("truncated tag");
    switch (tag) {
      case kEnd:
        if (!input.empty()) return Corrupt("bytes after the end tag");
        ended = true;
        break;
      case kNextFileNumber:
        if (!set_once(&e.next_file_number_)) return Corrupt("bad or repeated next_file_number");
        break;
      case kLastSequence:
        if (!set_once(&e.last_sequence_)) return Corrupt("bad or repeated last_sequence");
        break;
      case kWalNumber:
        if (!set_once(&e.wal_number_)) return Corrupt("bad or repeated wal_number");
        break;
      case kMaxColumnFamily:
        if (!set_once(&e.max_column_family_) || *e.max_column_family_ > UINT32_MAX) {
          return Corrupt("bad or repeated max_column_family");
        }
        break;
      case kAddColumnFamily: {
        AddedColumnFamily cf;
        Slice name;
        Slice options;
        if (!GetVarint32(&input, &cf.cf_id) || !GetLengthPrefixedSlice(&input, &name) ||
            !GetLengthPrefixedSlice(&input, &options)) {
          return Corrupt("bad add column family");
        }
        cf.name.assign(name.data(), name.size());
        Status s = DecodeColumnFamilyOptions(options, &cf.options);
        if (!s.ok()) return Corrupt("add column family: " + s.message());
        e.added_cfs_.push_back(std::move(cf));
        break;
      }
      case kDropColumnFamily: {
        uint32_t cf_id;
        if (!GetVarint32(&input, &cf_id)) return Corrupt("bad drop column family");
        e.dropped_cfs_.push_back(cf_id);
        break;
      }
      case kFlushedSequence: {
        FlushedSequence f;
        if (!GetVarint32(&input, &f.cf_id) || !GetVarint64(&input, &f.sequence)) {
          return Corrupt("bad flushed sequence");
        }
        e.flushed_sequences_.push_back(f);
        break;
      }
      case kNewFile:
      case kNewFileWithValueLogRefs: {
        NewFile f;
        FileMetaData& m = f.meta;
        if (!GetVarint32(&input, &f.cf_id) || !GetLevel(&input, &f.level) ||
            !GetVarint64(&input, &m.file_number) || !GetVarint64(&input, &m.file_size) ||
            !GetInternalKey(&input, &m.smallest) || !GetInternalKey(&input, &m.largest) ||
            !GetVarint64(&input, &m.smallest_seq) || !GetVarint64(&input, &m.largest_seq) ||
            !GetVarint64(&input, &m.num_entries) || !GetVarint64(&input, &m.num_deletions)) {
          return Corrupt("bad new file");
        }
        if (CompareInternalKey(m.smallest, m.largest) > 0 || m.smallest_seq > m.largest_seq ||
            m.num_deletions > m.num_entries) {
          return Corrupt("new file with inconsistent metadata");
        }
        m.value_log_refs_known = tag == kNewFileWithValueLogRefs;
        if (m.value_log_refs_known) {
          uint32_t n;
          // Each pair takes at least two bytes: a count beyond that is corrupt, not a reason
          // to reserve memory.
          if (!GetVarint32(&input, &n) || n > input.size() / 2) return Corrupt("bad value-log references");
          m.value_log_refs.reserve(n);
          for (uint32_t i = 0; i < n; ++i) {
            FileMetaData::ValueLogRef ref;
            if (!GetVarint64(&input, &ref.file_number) || !GetVarint64(&input, &ref.bytes) ||
                ref.bytes == 0 ||
                (!m.value_log_refs.empty() && ref.file_number <= m.value_log_refs.back().file_number)) {
              return Corrupt("bad value-log references");
            }
            m.value_log_refs.push_back(ref);
          }
        }
        e.new_files_.push_back(std::move(f));
        break;
      }
      case kDeletedFile: {
        DeletedFile f;
        if (!GetVarint32(&input, &f.cf_id) || !GetLevel(&input, &f.level) ||
            !GetVarint64(&input, &f.file_number)) {
          return Corrupt("bad deleted file");
        }
        e.deleted_files_.push_back(f);
        break;
      }
      case kNewValueLog: {
        NewValueLog v;
        if (!GetVarint32(&input, &v.cf_id) || !GetVarint64(&input, &v.file_number) ||
            !GetVarint64(&input, &v.file_size)) {
          return Corrupt("bad new value log");
        }
        e.new_value_logs_.push_back(v);
        break;
      }
      case kDeletedValueLog: {
        DeletedValueLog v;
        if (!GetVarint32(&input, &v.cf_id) || !GetVarint64(&input, &v.file_number)) {
          return Corrupt("bad deleted value log");
        }
        e.deleted_value_logs_.push_back(v);
        break;
      }
      default:
        return Corrupt("unknown tag " + std::to_string(tag));
    }
  }
  *this = std::move(e);
  return Status::OK();
}

std::string ColumnFamilyOptionsToString(const ColumnFamilyOptions& options, const char* separator) {
  std::string r;
  const char* sep = "";
  ForEachOption(options, [&](uint32_t, const char* name, const auto& value) {
    r += sep;
    r += name;
    r += '=';
    AppendOptionValue(value, &r);
    sep = separator;
  });
  return r;
}

std::string VersionEdit::DebugString() const {
  std::string r = "VersionEdit {\n";
  if (next_file_number_) AppendNumber(&r, "  next_file_number: ", *next_file_number_, "\n");
  if (last_sequence_) AppendNumber(&r, "  last_sequence: ", *last_sequence_, "\n");
  if (wal_number_) AppendNumber(&r, "  wal_number: ", *wal_number_, "\n");
  if (max_column_family_) AppendNumber(&r, "  max_column_family: ", *max_column_family_, "\n");
  for (const AddedColumnFamily& cf : added_cfs_) {
    AppendNumber(&r, "  add_column_family: cf ", cf.cf_id);
    r += " name ";
    AppendEscaped(cf.name, &r);
    r += " options {";
    r += ColumnFamilyOptionsToString(cf.options, ", ");
    r += "}\n";
  }
  for (uint32_t cf_id : dropped_cfs_) AppendNumber(&r, "  drop_column_family: cf ", cf_id, "\n");
  for (const FlushedSequence& f : flushed_sequences_) {
    AppendNumber(&r, "  flushed_sequence: cf ", f.cf_id);
    AppendNumber(&r, " seq ", f.sequence);
    r += '\n';
  }
  for (const NewFile& f : new_files_) {
    AppendNumber(&r, "  new_file: cf ", f.cf_id);
    AppendNumber(&r, " level ", static_cast<uint64_t>(f.level));
    AppendNumber(&r, " #", f.meta.file_number);
    AppendNumber(&r, " size ", f.meta.file_size);
    r += " keys [";
    AppendReadableInternalKey(f.meta.smallest, &r);
    r += " .. ";
    AppendReadableInternalKey(f.meta.largest, &r);
    AppendNumber(&r, "] seqs [", f.meta.smallest_seq);
    AppendNumber(&r, " .. ", f.meta.largest_seq);
    AppendNumber(&r, "] entries ", f.meta.num_entries);
    AppendNumber(&r, " deletions ", f.meta.num_deletions);
    if (!f.meta.value_log_refs_known) {
      r += " vlog-refs unknown";
    } else if (!f.meta.value_log_refs.empty()) {
      r += " vlog-refs";
      for (const auto& ref : f.meta.value_log_refs) {
        AppendNumber(&r, " #", ref.file_number);
        AppendNumber(&r, ":", ref.bytes);
      }
    }
    r += '\n';
  }
  for (const DeletedFile& f : deleted_files_) {
    AppendNumber(&r, "  deleted_file: cf ", f.cf_id);
    AppendNumber(&r, " level ", static_cast<uint64_t>(f.level));
    AppendNumber(&r, " #", f.file_number);
    r += '\n';
  }
  for (const NewValueLog& v : new_value_logs_) {
    AppendNumber(&r, "  new_value_log: cf ", v.cf_id);
    AppendNumber(&r, " #", v.file_number);
    AppendNumber(&r, " size ", v.file_size);
    r += '\n';
  }
  for (const DeletedValueLog& v : deleted_value_logs_) {
    AppendNumber(&r, "  deleted_value_log: cf ", v.cf_id);
    AppendNumber(&r, " #", v.file_number);
    r += '\n';
  }
  r += "}\n";
  return r;
}

}  // namespace tidesdb
