// VersionEdit: one manifest record. The manifest is a log of encoded VersionEdits (framed
// and checksummed by the WAL record format); replaying every edit from the start rebuilds
// the current set of column families and live files. An edit is applied atomically: a
// crash leaves either all of it or none of it in the manifest.
//
// Manifest record format, version 1 (all integers little-endian / LEB128 varints as in
// util/coding.h). A record is a sequence of fields, each a varint32 tag and a payload,
// closed by the end tag 0 as its last byte (so a record cut at a field boundary is still
// detected as truncated):
//
//   tag  field                payload
//   0    end of record        none; must be the record's last byte
//   1    next_file_number     varint64
//   2    last_sequence        varint64
//   3    wal_number           varint64   oldest WAL still needed; lower ones may be deleted
//   4    add column family    varint32 cf_id, length-prefixed name,
//                             length-prefixed ColumnFamilyOptions (below)
//   5    drop column family   varint32 cf_id
//   6    flushed sequence     varint32 cf_id, varint64 seq: every entry of the CF with
//                             sequence <= seq is in its SSTables
//   7    new key-log file     varint32 cf_id, varint32 level, varint64 file_number,
//                             varint64 file_size, length-prefixed smallest internal key,
//                             length-prefixed largest internal key, varint64 smallest_seq,
//                             varint64 largest_seq, varint64 num_entries,
//                             varint64 num_deletions
//   8    deleted key-log file varint32 cf_id, varint32 level, varint64 file_number
//   9    new value-log file   varint32 cf_id, varint64 file_number, varint64 file_size
//   10   deleted value-log    varint32 cf_id, varint64 file_number
//   11   max_column_family    varint64   highest CF id ever assigned (ids are never reused,
//                             so WAL entries of a dropped CF can never reach a new one)
//   12   new key-log file     the payload of tag 7, then varint32 n and n pairs (varint64
//        with value-log refs  value-log file_number, varint64 bytes): the value logs the
//                             file's pointers point into and the bytes of the records they
//                             point at, file numbers strictly ascending, bytes > 0. Written
//                             for every new file since value-log GC; a file logged with tag
//                             7 has unknown references (FileMetaData::value_log_refs_known).
//
// Fields 1-3 and 11 appear at most once (a repeat is corruption); the others may repeat and keep
// their order within their kind. Decoding also checks the invariants of a new key-log file
// (both keys parse as internal keys, smallest <= largest, smallest_seq <= largest_seq,
// num_deletions <= num_entries) and level < VersionEdit::kMaxLevelLimit. An unknown tag is corruption: a
// reader must not guess at a field it does not understand. Tags are never reused or redefined; a change of a
// payload gets a new tag.
//
// Replay applies an edit's deleted files before its new ones. A file deleted at one level and
// added with the same metadata at another by one edit has moved there unchanged (a trivial
// move, compaction_picker.h) and stays live.
//
// ColumnFamilyOptions payload: a sequence of (varint32 tag, value) pairs, one per field of
// struct ColumnFamilyOptions. Unsigned integers are varint64, int fields varint32 of their
// two's complement bits, bools varint32 0/1, doubles fixed64 of their IEEE-754 bits, the
// compression type varint32 of its enum value. EncodeTo writes every field; a field
// missing on decode (written before that option existed) takes the reader's default, so a
// new option's default must reproduce the behaviour from before it existed. An unknown
// option tag is corruption.
//
//   1 write_buffer_size  2 block_size  3 block_restart_interval  4 bloom_fpr
//   5 value_threshold  6 compression  7 use_btree  8 l1_file_count_trigger
//   9 l0_queue_stall_threshold  10 level_size_base  11 level_size_multiplier
//   12 max_levels  13 tombstone_density_trigger  14 tombstone_density_min_entries
//   15 default_ttl_seconds  16 target_file_size  17 value_log_gc_threshold
//   18 filter_prefix_length  19 l0_compaction_size_ratio
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

class TableReader;

// The opened reader of one file, kept with the file's metadata once pinned, so that a read
// reaches it without the table cache's lock and reference count (DBImpl::FindTable pins a
// file's reader only while the DB's files all fit in the table cache). A cache, not part
// of the file's description: a copy starts empty and it never affects equality.
class PinnedTableReader {
 public:
  PinnedTableReader() = default;
  PinnedTableReader(const PinnedTableReader&) {}
  PinnedTableReader& operator=(const PinnedTableReader&) { return *this; }
  ~PinnedTableReader() { delete pinned_.load(std::memory_order_acquire); }
  bool operator==(const PinnedTableReader&) const { return true; }

  // The pinned reader, or nullptr.
  TableReader* get() const {
    const std::shared_ptr<TableReader>* p = pinned_.load(std::memory_order_acquire);
    return p != nullptr ? p->get() : nullptr;
  }
  // Pins `table` unless a reader is pinned already; returns the pinned one.
  TableReader* Pin(std::shared_ptr<TableReader> table) const {
    auto* fresh = new std::shared_ptr<TableReader>(std::move(table));
    std::shared_ptr<TableReader>* expected = nullptr;
    if (pinned_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return fresh->get();
    delete fresh;
    return expected->get();
  }

 private:
  mutable std::atomic<std::shared_ptr<TableReader>*> pinned_{nullptr};
};

// Metadata of one key-log file (one SSTable), independent of the CF and level it lives in.
struct FileMetaData {
  uint64_t file_number = 0;
  uint64_t file_size = 0;  // bytes of the key-log file
  std::string smallest;    // smallest internal key in the file
  std::string largest;     // largest internal key in the file
  SequenceNumber smallest_seq = 0;
  SequenceNumber largest_seq = 0;
  uint64_t num_entries = 0;    // entries of every type, tombstones included
  uint64_t num_deletions = 0;  // tombstones
  // The value logs this file points into, ascending by file number, each with the bytes of
  // the records this file's pointers reference (the sum of their ValuePointer::size). The
  // live bytes of a value log are the sum over all files; a value log no file references
  // is dead. False only for files logged before references were recorded (tag 7).
  struct ValueLogRef {
    uint64_t file_number = 0;
    uint64_t bytes = 0;
    bool operator==(const ValueLogRef&) const = default;
  };
  std::vector<ValueLogRef> value_log_refs;
  bool value_log_refs_known = true;
  PinnedTableReader reader;  // filled by reads (DBImpl::FindTable)

  bool operator==(const FileMetaData&) const = default;
};

// Serializes options in the tagged form described above (exposed for tools and tests).
void EncodeColumnFamilyOptions(const ColumnFamilyOptions& options, std::string* dst);
// Starts from default ColumnFamilyOptions and overwrites the fields present in `input`.
// On error returns Corruption and leaves *options unchanged.
Status DecodeColumnFamilyOptions(Slice input, ColumnFamilyOptions* options);
// Every field as "name=value", separated by `separator` (in tag order; compression as
// none / snappy / lz4 / zstd, booleans as true / false). DebugString and the property
// "tidesdb.options" use it.
std::string ColumnFamilyOptionsToString(const ColumnFamilyOptions& options, const char* separator);

class VersionEdit {
 public:
  // Levels decoded from a record must be below this; a larger level is corruption (it would
  // otherwise size arrays from untrusted input).
  static constexpr int kMaxLevelLimit = 64;

  struct AddedColumnFamily {
    uint32_t cf_id = 0;
    std::string name;
    ColumnFamilyOptions options;
  };
  struct FlushedSequence {
    uint32_t cf_id = 0;
    SequenceNumber sequence = 0;
    bool operator==(const FlushedSequence&) const = default;
  };
  struct NewFile {
    uint32_t cf_id = 0;
    int level = 0;
    FileMetaData meta;
    bool operator==(const NewFile&) const = default;
  };
  struct DeletedFile {
    uint32_t cf_id = 0;
    int level = 0;
    uint64_t file_number = 0;
    bool operator==(const DeletedFile&) const = default;
  };
  struct NewValueLog {
    uint32_t cf_id = 0;
    uint64_t file_number = 0;
    uint64_t file_size = 0;
    bool operator==(const NewValueLog&) const = default;
  };
  struct DeletedValueLog {
    uint32_t cf_id = 0;
    uint64_t file_number = 0;
    bool operator==(const DeletedValueLog&) const = default;
  };

  void Clear() { *this = VersionEdit(); }

  void SetNextFileNumber(uint64_t n) { next_file_number_ = n; }
  void SetLastSequence(SequenceNumber seq) { last_sequence_ = seq; }
  void SetWalNumber(uint64_t n) { wal_number_ = n; }
  void SetMaxColumnFamily(uint32_t id) { max_column_family_ = id; }
  void AddColumnFamily(uint32_t cf_id, std::string name, const ColumnFamilyOptions& options) {
    added_cfs_.push_back(AddedColumnFamily{cf_id, std::move(name), options});
  }
  void DropColumnFamily(uint32_t cf_id) { dropped_cfs_.push_back(cf_id); }
  void SetFlushedSequence(uint32_t cf_id, SequenceNumber seq) { flushed_sequences_.push_back({cf_id, seq}); }
  void AddFile(uint32_t cf_id, int level, FileMetaData meta) {
    new_files_.push_back(NewFile{cf_id, level, std::move(meta)});
  }
  void DeleteFile(uint32_t cf_id, int level, uint64_t file_number) {
    deleted_files_.push_back({cf_id, level, file_number});
  }
  void AddValueLog(uint32_t cf_id, uint64_t file_number, uint64_t file_size) {
    new_value_logs_.push_back({cf_id, file_number, file_size});
  }
  void DeleteValueLog(uint32_t cf_id, uint64_t file_number) {
    deleted_value_logs_.push_back({cf_id, file_number});
  }

  const std::optional<uint64_t>& next_file_number() const { return next_file_number_; }
  const std::optional<SequenceNumber>& last_sequence() const { return last_sequence_; }
  const std::optional<uint64_t>& wal_number() const { return wal_number_; }
  std::optional<uint32_t> max_column_family() const {
    return max_column_family_ ? std::optional<uint32_t>(static_cast<uint32_t>(*max_column_family_))
                              : std::nullopt;
  }
  const std::vector<AddedColumnFamily>& added_column_families() const { return added_cfs_; }
  const std::vector<uint32_t>& dropped_column_families() const { return dropped_cfs_; }
  const std::vector<FlushedSequence>& flushed_sequences() const { return flushed_sequences_; }
  const std::vector<NewFile>& new_files() const { return new_files_; }
  const std::vector<DeletedFile>& deleted_files() const { return deleted_files_; }
  const std::vector<NewValueLog>& new_value_logs() const { return new_value_logs_; }
  const std::vector<DeletedValueLog>& deleted_value_logs() const { return deleted_value_logs_; }

  // Appends the record (format above) to *dst.
  void EncodeTo(std::string* dst) const;
  // Replaces this edit with the one encoded in `src`. On error returns
  // Corruption("version edit: ...") and leaves this edit cleared; never reads outside src.
  Status DecodeFrom(Slice src);
  // Human-readable, one field a line (for the manifest dump tool and test failures).
  std::string DebugString() const;

 private:
  std::optional<uint64_t> next_file_number_;
  std::optional<SequenceNumber> last_sequence_;
  std::optional<uint64_t> wal_number_;
  std::optional<uint64_t> max_column_family_;
  std::vector<AddedColumnFamily> added_cfs_;
  std::vector<uint32_t> dropped_cfs_;
  std::vector<FlushedSequence> flushed_sequences_;
  std::vector<NewFile> new_files_;
  std::vector<DeletedFile> deleted_files_;
  std::vector<NewValueLog> new_value_logs_;
  std::vector<DeletedValueLog> deleted_value_logs_;
};

}  // namespace tidesdb
