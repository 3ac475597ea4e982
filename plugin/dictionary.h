// The engine's data dictionary: which column families hold each table's rows and indexes.
//
// It lives in the column family "tidesql-dictionary" and is changed only by library
// transactions committed with a synced WAL record, so every DDL's dictionary change is
// atomic. Column families are created before the transaction that names them commits and
// dropped after the one that forgets them: a crash in between leaves column families that
// no table names, and startup recovery drops those (and every temporary table's, which
// never outlive the server). So after any crash a table is either as before the DDL or as
// after it. The format (keys, values, versions) is documented in docs/SQL-FORMATS.md.
//
// Table names are the server's paths without "./" (e.g. "test/t1", "db/#sql-alter-1a2b"),
// absolute paths for temporary tables (tmpdir).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tidesdb/db.h"
#include "tidesdb/status.h"

namespace tidesql {

// A FOREIGN KEY of a table (the child), kept in the child's TableDef; the parent names it
// by a reverse entry (dictionary_children). Names are as the server spells them.
struct ForeignKeyDef {
  std::string name;                  // the constraint's (given, or <table>_ibfk_<n>)
  std::vector<std::string> columns;  // the child's
  std::string ref_db, ref_table;     // the parent's SQL names
  std::string ref_name;              // the parent's dictionary name ("db/table")
  std::vector<std::string> ref_columns;
  uint8_t on_delete = 0, on_update = 0;  // enum_fk_option
};

// Table definition record, format version kTableDefVersion.
struct TableDef {
  uint64_t table_id = 0;        // unique for the database's lifetime
  uint32_t schema_version = 1;  // the row format's schema version (rows carry it)
  bool hidden_pk = false;       // rows are keyed by an 8-byte hidden row id
  bool temporary = false;       // CREATE TEMPORARY TABLE: dropped at startup
  // Column family id numbers ("idx-<id>"): one per key of the table in the server's key
  // order, then, when hidden_pk, one for the rows.
  std::vector<uint64_t> index_ids;
  // The column family of the table's off-row BLOB / TEXT values (docs/SQL-FORMATS.md,
  // "Off-row values"); 0 = none (a table made without BLOB columns, or by a TideSQL before
  // format version 6): every value stays in its row.
  uint64_t blob_id = 0;
  uint64_t auto_increment_start = 0;  // CREATE / ALTER ... AUTO_INCREMENT=; 0 = none given
  // The tabledef_version (16 bytes) of the .frm this entry describes, recorded by CREATE and
  // by an in-place ALTER's commit; empty when not known (entries of format version 1). DDL
  // recovery compares it with an interrupted ALTER's new .frm (handlerton::check_version).
  std::string frm_version;

  // Instant ADD COLUMN (ha_tidesdb_alter.cc) appends stored columns without rewriting the
  // rows: a row written at an earlier schema version holds only that version's columns.
  // Per earlier version, its stored columns (a prefix of today's, in column order) and its
  // null bitmap's length; per column added since, the value rows written before it hold.
  struct SchemaVersion {
    uint32_t version = 0;
    uint32_t stored_columns = 0;
    uint32_t null_bytes = 0;
    // Mapped layouts (instant DROP COLUMN, ADD COLUMN FIRST / AFTER, column reordering):
    // the version's stored columns in their order, each with where it is today and where
    // its null bit was. A version that is not mapped holds the first stored_columns of
    // today's stored columns, their null bits where they are today (instant ADD COLUMN at
    // the end); the first mapping ALTER converts those.
    struct Column {
      int32_t stored = -1;    // today's stored-column index; -1: dropped since
      int32_t null_bit = -1;  // bit number in this version's null bitmap; -1: NOT NULL
      // A dropped column's packed value: skip_length bytes (length_bytes 0), or a
      // little-endian length of length_bytes bytes and that many bytes (Field::pack).
      uint8_t length_bytes = 0;
      uint32_t skip_length = 0;
    };
    bool mapped = false;
    std::vector<Column> columns;
  };
  std::vector<SchemaVersion> old_versions;
  struct AddedColumn {
    uint32_t stored_index = 0;  // among today's stored columns, in column order
    bool is_null = false;
    std::string packed;  // Field::pack of the value, unless is_null
  };
  std::vector<AddedColumn> added_columns;

  std::vector<ForeignKeyDef> foreign_keys;  // this table's, as the child

  // index_ids and, when there is one, blob_id: every column family of the table.
  std::vector<uint64_t> column_family_ids() const {
    std::vector<uint64_t> ids = index_ids;
    if (blob_id != 0) ids.push_back(blob_id);
    return ids;
  }

  const SchemaVersion* old_version(uint32_t v) const {
    for (const SchemaVersion& o : old_versions)
      if (o.version == v) return &o;
    return nullptr;
  }
  const AddedColumn* added_column(uint32_t stored_index) const {
    for (const AddedColumn& a : added_columns)
      if (a.stored_index == stored_index) return &a;
    return nullptr;
  }
};

// Persistent optimizer statistics of a table (ANALYZE TABLE), keyed by table id.
struct TableStats {
  uint64_t rows = 0;
  // Per key, per key part: average rows per distinct prefix of that many parts.
  std::vector<std::vector<uint64_t>> rec_per_key;
};

std::string index_cf_name(uint64_t index_id);

// Dictionary name of a table path: "./db/t1" -> "db/t1"; temporary tables keep their
// absolute path.
std::string dictionary_name(const char* path);

// Startup: opens (or creates) the dictionary column family, refuses a newer format, drops
// temporary tables and every index column family that no table names.
tidesdb::Status dictionary_startup_recovery();
void dictionary_shutdown();

// Creates the column families of a new table, each with `options` (the table's:
// table_options.h) and key i's with filter_prefix_length filter_prefixes[i]
// (index_filter_prefixes()), and records it. `keys` is the number of keys; one more column
// family is made for the rows when hidden_pk, and one for off-row values when
// shape.blob_id is not 0 (the table has BLOB columns). AlreadyExists-like InvalidArgument
// if the name is taken.
tidesdb::Status dictionary_create_table(const std::string& name, unsigned keys, const TableDef& shape,
                                        const tidesdb::ColumnFamilyOptions& options,
                                        const std::vector<size_t>& filter_prefixes, TableDef* created);
// NotFound if the dictionary has no table of that name; NotSupported (naming the table) if
// a newer TideSQL wrote its entry.
tidesdb::Status dictionary_load_table(const std::string& name, TableDef* def);
// Forgets the table and drops its column families (their files are deleted).
tidesdb::Status dictionary_drop_table(const std::string& name);
// A rename moves the table's foreign keys with it; unless parent_moves is false (the
// renames inside a copying ALTER TABLE, whose children keep naming the table by its
// name), the children referencing `from` are changed to reference `to` (SQL names
// to_db / to_table).
tidesdb::Status dictionary_rename_table(const std::string& from, const std::string& to,
                                        bool parent_moves = false, const std::string& to_db = "",
                                        const std::string& to_table = "");
// The foreign keys whose parent is `from` now reference `to` (SQL names to_db / to_table):
// a copying ALTER TABLE ... RENAME, whose new table took the new name.
tidesdb::Status dictionary_move_children(const std::string& from, const std::string& to,
                                         const std::string& to_db, const std::string& to_table);
// The foreign keys of table `name` become `fks` (in-place ADD / DROP FOREIGN KEY, column
// renames).
tidesdb::Status dictionary_set_foreign_keys(const std::string& name, const std::vector<ForeignKeyDef>& fks,
                                            const std::string& frm_version);
// Columns of table `name` renamed (old -> new name, compared case-insensitively) in the
// foreign keys that name them: its own and its children's, in one dictionary transaction
// that also records the .frm version.
tidesdb::Status dictionary_rename_foreign_key_columns(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& renames,
    const std::string& frm_version);
// Every table with a foreign key whose parent is `parent` (dictionary names), itself
// included for a self-referencing table.
std::vector<std::string> dictionary_children(const std::string& parent);
// Moves forward with every dictionary change of foreign keys: handlers re-read the ones
// they resolved when it differs from what they saw.
uint64_t foreign_key_generation();
// Gives the table new, empty column families (made with `options` and filter_prefixes, as
// dictionary_create_table) in one dictionary transaction and drops the old ones.
// `auto_increment_start` replaces the recorded one.
tidesdb::Status dictionary_truncate_table(const std::string& name, uint64_t auto_increment_start,
                                          const tidesdb::ColumnFamilyOptions& options,
                                          const std::vector<size_t>& filter_prefixes, TableDef* renewed);
tidesdb::Status dictionary_set_auto_increment(const std::string& name, uint64_t auto_increment_start);
// In-place ALTER: column families for new indexes, made with `options` (the table's:
// table_column_family_options(altered_table->s)) under fresh ids that no table names yet
// (startup recovery drops them if the ALTER never commits); the i-th with
// filter_prefix_length filter_prefixes[i] (0 past its end).
tidesdb::Status dictionary_reserve_index_cfs(size_t count, const tidesdb::ColumnFamilyOptions& options,
                                             const std::vector<size_t>& filter_prefixes,
                                             std::vector<uint64_t>* ids);
// The same with the tidesdb_default_* options (column_family_options()), for column
// families that belong to no table's options (an index build's log).
tidesdb::Status dictionary_reserve_index_cfs(size_t count, std::vector<uint64_t>* ids);
// In-place ALTER's commit: the table's column families become `index_ids` (the new key
// order) and its .frm version `frm_version`, in one dictionary transaction; its optimizer
// statistics (per key position) are forgotten. Then `dropped` (indexes the ALTER removed)
// are dropped.
tidesdb::Status dictionary_replace_indexes(const std::string& name, const std::vector<uint64_t>& index_ids,
                                           const std::string& frm_version,
                                           const std::vector<uint64_t>& dropped,
                                           const std::vector<ForeignKeyDef>* foreign_keys = nullptr);
// Drops column families no table names (a failed in-place ALTER's new indexes).
void dictionary_drop_index_cfs(const std::vector<uint64_t>& ids);
tidesdb::Status dictionary_set_frm_version(const std::string& name, const std::string& frm_version);
// Instant ADD COLUMN's commit: the table's TableDef becomes `def` (its schema version and
// history changed) with `frm_version`, in one dictionary transaction.
tidesdb::Status dictionary_set_schema(const std::string& name, const TableDef& def,
                                      const std::string& frm_version);
// Every table name that starts with `prefix` (DROP DATABASE leftovers, tests).
std::vector<std::string> dictionary_table_names(const std::string& prefix);

tidesdb::Status dictionary_save_stats(uint64_t table_id, const TableStats& stats);
// NotFound if none were saved; NotSupported if a newer TideSQL wrote them.
tidesdb::Status dictionary_load_stats(uint64_t table_id, TableStats* stats);

// The column family of an index id (nullptr if it does not exist).
tidesdb::ColumnFamilyHandle* index_column_family(uint64_t index_id);

// Crash points for DDL tests: when tidesdb_debug_crash_point names `point`, the server
// process ends at once (as if killed) when it gets there.
void crash_point(const char* point);

}  // namespace tidesql
