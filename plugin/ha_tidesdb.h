// ha_tidesdb: the handler, one instance per TABLE the server opens (and a few with no table
// at all: the server builds one with a null share to drop tables or ask for flags).
//
// The handler is a translation layer: rows and index entries are encoded by key_codec.h
// and row_codec.h, kept in the column families the data dictionary (dictionary.h) records
// for the table, and read and written through the connection's library transaction
// (trx.h). The methods live in three files: ha_tidesdb.cc (flags, open / close, DDL,
// statistics, maintenance), ha_tidesdb_read.cc (scans and index reads),
// ha_tidesdb_write.cc (inserts, updates, deletes, uniqueness, AUTO_INCREMENT).
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "foreign_keys.h"
#include "key_codec.h"
#include "row_codec.h"
#include "table_share.h"
#include "tidesdb/iterator.h"
#include "trx.h"

namespace tidesql {

// The key and value of index `index`'s entry for a row with primary key `pk` (the row's
// key in its column family), from `codecs` (one per key of the row's table; primary_key
// is MAX_KEY for a hidden primary key). True if the entry is keyed by the index's parts
// alone (UNIQUE, no NULL part: a uniqueness check).
bool encode_index_entry(const std::vector<KeyCodec>& codecs, uint primary_key, uint index,
                        const uchar* record, const std::string& pk, std::string* key, std::string* value);
// The same from one index's codec and the primary key's (null for a hidden primary key).
bool encode_entry(const KeyCodec& codec, const KeyCodec* pk_codec, const uchar* record, const std::string& pk,
                  std::string* key, std::string* value);
// A record of an index build's log (IndexBuild): build slot, varint length + primary key,
// then the key of the row's old entry (empty: the row is new, or only its key matters).
std::string index_build_log_key(uint slot, const std::string& pk, const std::string& old_entry);

// Reads the off-row values `values` of a row decoded into `record` (a row buffer of
// `table`) with `get` (key in the blob column family -> bytes) and points their columns at
// the bytes, kept in (*bytes)[i]; (*read)[i] says which were read. `wanted` (null: all)
// says which columns to read. NotFound if a value is missing, Corruption if one has the
// wrong length.
tidesdb::Status read_off_row_values(
    const std::function<tidesdb::Status(const std::string&, std::string*)>& get, TABLE* table, uchar* record,
    const std::vector<OffRowValue>& values, const std::function<bool(uint field)>& wanted,
    std::vector<std::string>* bytes, std::vector<bool>* read);

class ha_tidesdb final : public handler, public TransactionCursor {
 public:
  ha_tidesdb(handlerton* hton, TABLE_SHARE* share);  // share may be null
  ~ha_tidesdb() override;

  // --- flags and limits (ha_tidesdb.cc)
  Table_flags table_flags() const override;
  // Rows are stored packed, each as long as its values (docs/SQL-FORMATS.md).
  enum row_type get_row_type() const override { return ROW_TYPE_DYNAMIC; }
  ulong index_flags(uint index, uint part, bool all_parts) const override;
  uint max_supported_keys() const override { return MAX_KEY; }
  uint max_supported_key_length() const override { return MAX_DATA_LENGTH_FOR_KEY; }
  uint max_supported_key_part_length() const override { return MAX_DATA_LENGTH_FOR_KEY; }
  const char* index_type(uint) override { return "BTREE"; }

  // --- DDL and lifecycle (ha_tidesdb.cc)
  int create(const char* name, TABLE* form, HA_CREATE_INFO* create_info) override;
  int open(const char* name, int mode, uint test_if_locked) override;
  int close() override;
  int delete_table(const char* name) override;
  int rename_table(const char* from, const char* to) override;
  int truncate() override;
  int delete_all_rows() override { return HA_ERR_WRONG_COMMAND; }  // row by row: rollbackable
  void update_create_info(HA_CREATE_INFO* create_info) override;

  // --- ALTER TABLE in place (ha_tidesdb_alter.cc)
  enum_alter_inplace_result check_if_supported_inplace_alter(TABLE* altered_table,
                                                             Alter_inplace_info* ha_alter_info) override;
  bool can_convert_nocopy(const Field& field, const Column_definition& new_field) const override;
  bool check_if_incompatible_data(HA_CREATE_INFO* info, uint table_changes) override;
  bool prepare_inplace_alter_table(TABLE* altered_table, Alter_inplace_info* ha_alter_info) override;
  bool inplace_alter_table(TABLE* altered_table, Alter_inplace_info* ha_alter_info) override;
  bool commit_inplace_alter_table(TABLE* altered_table, Alter_inplace_info* ha_alter_info,
                                  bool commit) override;
  // At the commit of an index build: the built indexes brought up to date with the rows
  // the writers logged meanwhile. True (error reported) on failure.
  bool apply_index_build_log(TABLE* altered_table, inplace_alter_handler_ctx* ctx);
  // Instant ADD COLUMN: whether altered_table only appends columns, the kept ones laid out
  // as before; and the TableDef that records the change (the rows keep their bytes).
  bool columns_appended(const TABLE* altered_table) const;
  TableDef schema_with_added_columns(const TABLE* altered_table) const;
  // Instant DROP COLUMN, ADD COLUMN anywhere, reordered columns: whether the kept columns
  // keep their packed forms, the dropped ones can be stepped over in old rows and the
  // added ones have constant defaults; and the TableDef that records the change (every
  // earlier version's layout mapped onto the new columns).
  bool columns_remapped(const TABLE* altered_table, const Alter_inplace_info* info) const;
  TableDef schema_with_remapped_columns(const TABLE* altered_table, const Alter_inplace_info* info) const;

  // --- statistics (ha_tidesdb.cc)
  int info(uint flag) override;
  ha_rows records_in_range(uint index, const key_range* min_key, const key_range* max_key,
                           page_range* pages) override;
  // The server's own cost model, with the ranges' estimates made in one batch first
  // (estimate_ranges_together), which its records_in_range calls then answer from.
  ha_rows multi_range_read_info_const(uint keyno, RANGE_SEQ_IF* seq, void* seq_init_param, uint n_ranges,
                                      uint* bufsz, uint* mrr_mode, Cost_estimate* cost) override;
  double scan_time() override;
  int extra(enum ha_extra_function operation) override;
  int reset() override;

  // --- maintenance (ha_tidesdb.cc)
  int analyze(THD* thd, HA_CHECK_OPT* check_opt) override;
  int optimize(THD* thd, HA_CHECK_OPT* check_opt) override;
  int check(THD* thd, HA_CHECK_OPT* check_opt) override;
  int repair(THD* thd, HA_CHECK_OPT* check_opt) override;

  // --- locking and statements (ha_tidesdb.cc)
  uint lock_count() const override { return 0; }  // no THR_LOCK: row locks and MVCC
  THR_LOCK_DATA** store_lock(THD* thd, THR_LOCK_DATA** to, enum thr_lock_type lock_type) override;
  int external_lock(THD* thd, int lock_type) override;
  int start_stmt(THD* thd, thr_lock_type lock_type) override;
  bool get_error_message(int error, String* buf) override;

  // --- maintenance (ha_tidesdb_admin.cc)
  // Decodes a stored row into record[0], every off-row value read with `ro`, with its
  // indexed virtual columns computed, as the index entries are made from it; false if the
  // row cannot be decoded or an off-row value is missing.
  bool decode_for_indexes(const std::string& stored, const tidesdb::ReadOptions& ro);

  // --- reads (ha_tidesdb_read.cc)
  int rnd_init(bool scan) override;
  int rnd_end() override;
  int rnd_next(uchar* buf) override;
  int rnd_pos(uchar* buf, uchar* pos) override;
  void position(const uchar* record) override;
  int rnd_pos_by_record(uchar* record) override;
  int index_init(uint index, bool sorted) override;
  void column_bitmaps_signal() override;
  int index_end() override;
  int index_read_map(uchar* buf, const uchar* key, key_part_map keypart_map,
                     enum ha_rkey_function find_flag) override;
  int index_read_last_map(uchar* buf, const uchar* key, key_part_map keypart_map) override;
  // A range's end bounds its seek (range_end_), so SSTables and memtables whose prefix
  // filters rule the range out are passed over, and its scan ends at the bound.
  int read_range_first(const key_range* start_key, const key_range* end_key, bool eq_range,
                       bool sorted) override;
  int read_range_next() override;
  int index_next(uchar* buf) override;
  int index_prev(uchar* buf) override;
  int index_first(uchar* buf) override;
  int index_last(uchar* buf) override;
  int index_next_same(uchar* buf, const uchar* key, uint keylen) override;
  // Index condition pushdown on secondary indexes: checked on the index entry before the
  // row is read.
  Item* idx_cond_push(uint keyno, Item* idx_cond) override;

  // --- writes (ha_tidesdb_write.cc)
  int write_row(const uchar* buf) override;
  int update_row(const uchar* old_data, const uchar* new_data) override;
  int delete_row(const uchar* buf) override;
  void get_auto_increment(ulonglong offset, ulonglong increment, ulonglong nb_desired_values,
                          ulonglong* first_value, ulonglong* nb_reserved_values) override;
  int reset_auto_increment(ulonglong value) override;

  // --- foreign keys (ha_tidesdb_fk.cc)
  char* get_foreign_key_create_info() override;
  void free_foreign_key_create_info(char* str) override;
  int get_foreign_key_list(THD* thd, List<FOREIGN_KEY_INFO>* list) override;
  int get_parent_foreign_key_list(THD* thd, List<FOREIGN_KEY_INFO>* list) override;
  bool referenced_by_foreign_key() const noexcept override;
  bool can_switch_engines() override;

  // TransactionCursor: the connection's transaction ends; drop the iterator.
  void release_cursor() override;

 private:
  // Which column family the open scan walks and how rows come out of it.
  enum class ScanKind : uint8_t { kNone, kTable, kIndex };

  // --- helpers (ha_tidesdb.cc)
  int load_share(const char* name);
  bool has_hidden_pk() const { return table->s->primary_key == MAX_KEY; }
  uint data_slot() const { return has_hidden_pk() ? table->s->keys : table->s->primary_key; }
  tidesdb::ColumnFamilyHandle* data_cf() const { return share_->cfs[data_slot()]; }
  tidesdb::ColumnFamilyHandle* index_cf(uint key) const { return share_->cfs[key]; }
  bool is_primary(uint key) const { return key == table->s->primary_key; }
  // The connection's transaction, begun if needed (a read outside external_lock).
  tidesdb::Transaction* txn();
  int report(const tidesdb::Status& status, const char* what);
  uint64_t estimated_rows(tidesdb::ColumnFamilyHandle* cf);

  // --- reads (ha_tidesdb_read.cc)
  // Positions a new iterator over cf; the caller then seeks.
  void open_iterator(tidesdb::ColumnFamilyHandle* cf);
  void close_iterator();
  // Re-creates an iterator released at a transaction boundary at the entry last returned.
  bool reposition();
  // Delivers the entry the iterator is at (or END_OF_FILE / the error). Run into the bound
  // of a bounded seek (bound_), it ends there, or with past_bound seeks on unbounded.
  int deliver_from_iterator(uchar* buf, bool forward, bool past_bound = false);
  // Whether `record` (a row of this table, primary key row_pk_) has `entry_key` as its
  // entry in secondary index `index`. A row locked at its latest commit
  // (tidesdb_locking_reads_latest) through an entry a snapshot iterator found may have
  // moved away from that entry since: the statement then skips it, as a scan of the
  // latest index would.
  bool row_has_index_entry(uint index, std::string_view entry_key, const uchar* record);
  // A locking read of `key`: GetForShare under LOCK IN SHARE MODE, else GetForUpdate.
  tidesdb::Status locking_get(tidesdb::ColumnFamilyHandle* cf, const std::string& key, std::string* value);
  // Reads the row of primary key `pk` into buf (locking read when the statement asks).
  int fetch_row(const std::string& pk, uchar* buf);
  int decode_current_row(uchar* buf);
  // Decodes row_value_ into buf and reads its off-row values: every one when `all` or
  // the statement writes, else those of the columns it reads and of the primary key.
  // 0, HA_ERR_KEY_NOT_FOUND (a value is gone: the row changed after it was read, outside
  // a snapshot; read it again) or an error (reported).
  int decode_stored_row(uchar* buf, bool all);
  // Fills the index's (and the primary key's) columns from an entry of active_index when
  // a covering read or a pushed index condition needs them, and checks the condition:
  // 0, HA_ERR_KEY_NOT_FOUND (rejected), HA_ERR_END_OF_FILE (out of range) or an error.
  int entry_into_record(std::string_view key, std::string_view packed, uchar* buf);
  // Primary key bytes of an index entry of key `index`.
  bool entry_primary_key(uint index, std::string_view key, std::string_view value, std::string* pk,
                         std::string_view* packed) const;
  int seek_index(uchar* buf, const std::string& target, enum ha_rkey_function find_flag);
  // index_next; within_bound: an index_next_same, which ends at the bound of an exact or
  // prefix read instead of seeking on past it.
  int next_in_index(uchar* buf, bool within_bound);
  // ref / dup_ref layout: 2-byte length + primary key, zero-padded (hidden: 8-byte row id).
  void store_ref(uchar* to, const std::string& pk) const;

  // --- foreign keys (ha_tidesdb_fk.cc)
  // The foreign keys of the table `form` being created as `dict` (CREATE TABLE, or the new
  // table of a copying ALTER), checked against their parents. 0 or a handler error (a
  // warning says why).
  int foreign_keys_for_create(TABLE* form, HA_CREATE_INFO* create_info, const std::string& dict,
                              std::vector<ForeignKeyDef>* out);
  // The same from the keys of alter_info for the table `form` defines, called `dict` (the
  // table being altered is `original`, SQL name table_name; altering: a copying ALTER's
  // new table).
  int foreign_keys_for(TABLE* form, Alter_info* alter_info, bool temporary, const std::string& dict,
                       const std::string& original, const std::string& table_name, bool altering,
                       std::vector<ForeignKeyDef>* out);
  // In-place ALTER: the columns it renames that a foreign key (either side) names, old
  // name -> new name.
  std::vector<std::pair<std::string, std::string>> foreign_key_column_renames(const Alter_inplace_info* info);
  // In-place ALTER: the index a foreign key of the table (either side) needs that
  // altered_table no longer has (null if none).
  const char* index_needed_by_foreign_key(const TABLE* altered_table, const Alter_inplace_info* info);
  // DROP TABLE of `dict`: HA_ERR_ROW_IS_REFERENCED if another table's foreign key
  // references it (and the checks are on).
  int check_drop_referenced(const std::string& dict);
  // Re-reads this table's foreign keys and whether it has children when the dictionary's
  // foreign keys changed.
  void refresh_foreign_keys() const;
  // Resolves parents and children for the statement.
  int resolve_foreign_keys();
  // Child side: the parents of new_row's foreign key values exist (old_row: the update's
  // old row, whose unchanged values are not checked again).
  int check_parents(const uchar* old_row, const uchar* new_row);
  // Parent side, after old_row is deleted (new_row null) or updated into new_row: the
  // children of the changed referenced values, refused or changed as each key says.
  int act_on_children(const uchar* old_row, const uchar* new_row);
  int cascade(const ChildLink& link, ha_tidesdb* child,
              const std::vector<std::pair<std::string, std::string>>& entries, uint8_t option,
              const uchar* new_row);
  handler* clone_for(TABLE* child);
  int foreign_key_violation(int error, const std::string& child_db, const std::string& child_table,
                            const ForeignKeyDef& fk);

  // --- writes (ha_tidesdb_write.cc)
  void encode_primary_key(const uchar* record, std::string* out) const;
  // The key and value of key `index`'s entry for a row with primary key `pk`; true if the
  // entry is keyed by the index's parts alone (UNIQUE, no NULL part: a uniqueness check).
  bool encode_index_entry(uint index, const uchar* record, const std::string& pk, std::string* key,
                          std::string* value) const;
  int check_unique(tidesdb::ColumnFamilyHandle* cf, const std::string& key, uint errkey_index);
  // Logs a row change for the indexes an in-place ALTER is building (IndexBuild); old_row
  // or new_row is null for an insert or a delete.
  int log_for_index_build(tidesdb::Transaction* t, const uchar* old_row, const std::string& old_pk,
                          const uchar* new_row, const std::string& new_pk);
  int check_row_unchanged(const std::string& pk);
  // The BLOB columns of `record` that go off the row (longer than tidesdb_off_row_blob_size),
  // in *values: a value unchanged since the row last read (`carry`) keeps its id, the others
  // get new ids and are written by store_off_row_values.
  void plan_off_row_values(const uchar* record, bool carry, std::vector<OffRowValue>* values);
  // Writes the new values plan_off_row_values chose and deletes those of the row's old
  // stored form (old_value, null for an insert) that it no longer names.
  int store_off_row_values(tidesdb::Transaction* t, const std::vector<OffRowValue>& values,
                           const std::string* old_value);
  // The stored row of primary key pk as this statement last read it, or read again.
  int stored_row(const std::string& pk, const std::string** value);
  uint64_t next_blob_id();
  void bump_auto_increment(const uchar* record);
  int load_auto_increment();
  bool want_locking_read() const;

  // records_in_range's key range of the index's entries, [*start, *limit) (limit empty: no
  // end). False when the answer needs no estimate: then *rows is it.
  bool estimate_bounds(uint index, const key_range* min_key, const key_range* max_key, std::string* start,
                       std::string* limit, ha_rows* rows);
  // Estimates every range of seq that the server's multi_range_read_info_const will ask
  // records_in_range about, in one EstimateRanges call, into batched_estimates_.
  void estimate_ranges_together(uint keyno, RANGE_SEQ_IF* seq, void* seq_init_param, uint n_ranges);
  // The batched answer for this records_in_range call (it asks in the sequence's order),
  // or nullptr: then the caller estimates the range alone.
  const ha_rows* batched_estimate(uint index, const key_range* min_key, const key_range* max_key);

  TableShare* share_ = nullptr;
  std::vector<KeyCodec> codecs_;  // one per key of the table
  // One multi_range_read_info_const call's ranges, as the server passes them (their key
  // bytes in batched_keys_), with their estimates; the next one records_in_range gets.
  struct BatchedEstimate {
    struct Bound {
      bool present = false;
      ha_rkey_function flag = HA_READ_KEY_EXACT;
      size_t offset = 0, length = 0;  // in batched_keys_
    };
    Bound min, max;
    bool from_statistics = false;  // the server may take it from rec_per_key instead
    ha_rows rows = 0;
  };
  uint batched_index_ = MAX_KEY;
  std::vector<BatchedEstimate> batched_estimates_;
  std::string batched_keys_;
  size_t next_batched_estimate_ = 0;
  // estimate_ranges_together's scratch, kept between calls for its capacity.
  std::vector<std::string> batched_bounds_;
  std::vector<tidesdb::Range> batched_ranges_;
  std::vector<size_t> batched_asked_;
  std::vector<tidesdb::RangeEstimate> batched_results_;
  std::unique_ptr<uchar[]> scratch_record_;
  // decode_row's rules for stepping over columns a plain read does not need.
  std::vector<ColumnSkip> column_skips_;
  // The primary key of the row the last write_row collided with (dup_ref), until the next.
  std::string dup_pk_;
  TrxContext* trx_ = nullptr;
  thr_lock_type lock_type_ = TL_READ;

  // The open scan.
  ScanKind scan_ = ScanKind::kNone;
  std::unique_ptr<tidesdb::Iterator> iter_;
  tidesdb::ColumnFamilyHandle* iter_cf_ = nullptr;  // what iter_ reads
  bool iter_released_ = false;                      // iter_ was dropped at a transaction end; reposition()
  std::string last_key_;                            // the key the scan last returned (its own column family)
  std::string prefix_;                              // index_next_same: the prefix of the last index_read
  // The limit iter_ was sought with (SeekBounded: an exact or prefix read stops at the
  // prefix's successor); empty when unbounded. index_next past it seeks on unbounded.
  std::string bound_;
  // While the server reads one range (read_range_first / read_range_next): the index key
  // every entry of the range is below (empty: no end), and whether bound_ is it (then the
  // scan ends at the bound instead of seeking on past it).
  std::string range_end_;
  bool in_range_read_ = false;
  bool bound_is_range_end_ = false;
  bool keyread_ = false;
  // The active index's entries hold every column the statement reads (table->read_set):
  // a plain read of a secondary index then takes the row from the entry, as with keyread,
  // even when the server did not ask for keyread. It does not always ask: a table instance
  // taken from the table cache can come with covering_keys cleared by the statement that
  // used it before (seen with prepared statements: select_random_ranges read 26 rows per
  // query through the primary key). InnoDB and MyRocks decide this from the read set too.
  // Set at index_init and when the server changes the bitmaps.
  bool read_set_in_index_ = false;
  // The row can come from the active index's entry alone.
  bool covering_read() const { return keyread_ || read_set_in_index_; }
  // Whether every column in table->read_set is stored whole in the entries of `index`
  // (Field::part_of_key, the server's own rule for keyread; primary key columns are in
  // every index's entries).
  bool read_set_in_index(uint index) const;

  // The row last read: its primary key, its stored value (BLOB columns point into it),
  // and whether it was read with a locking read.
  std::string row_pk_;
  std::string row_value_;
  bool row_locked_ = false;
  // Its off-row values, their bytes where read (BLOB columns point into them).
  std::vector<OffRowValue> row_off_row_;
  std::vector<std::string> row_blobs_;
  std::vector<bool> row_blob_read_;
  // A write's off-row values, and for each new one its bytes (in the written record).
  std::vector<OffRowValue> new_off_row_;
  std::vector<std::pair<const uchar*, uint64_t>> new_off_row_bytes_;
  std::string old_row_buf_;

  // Scratch buffers.
  std::string key_buf_, value_buf_, pk_buf_, new_pk_buf_, new_row_buf_;
  // The index build this handler logs for (IndexBuild), and its codecs over this TABLE.
  std::shared_ptr<const IndexBuild> build_;
  std::vector<KeyCodec> build_codecs_;
  std::string build_key_buf_, build_value_buf_;
  std::vector<std::string> old_keys_, new_keys_, new_values_;

  // Foreign keys: made at open; mutable for referenced_by_foreign_key().
  mutable std::unique_ptr<ForeignKeyState> fk_;

  // HA_EXTRA flags of the statement.
  bool ignore_dup_key_ = false;
  bool copying_ = false;  // ALTER TABLE's copy into this (new) table: trx.h, commit_copy_chunk
};

// handlerton::create. Called with a null share too (hton->drop_table, flag queries).
handler* create_handler(handlerton* hton, TABLE_SHARE* share, MEM_ROOT* mem_root);

}  // namespace tidesql
