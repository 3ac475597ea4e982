// ALTER TABLE in place: instant changes of the definition alone, and ADD / DROP INDEX
// without copying the table. Everything else goes through the server's copy path.
//
// An in-place ALTER that changes indexes commits its new column-family list together with
// the new .frm's version (TableDef::frm_version) in one dictionary transaction, so that
// after a crash DDL recovery (tidesdb_check_version) keeps whichever .frm matches what
// the dictionary committed. docs/SQL-ENGINE.md, "ALTER".
#include "ha_tidesdb.h"

#include <mysqld_error.h>
#include <sql_class.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "coding.h"
#include "dictionary.h"
#include "row_codec.h"
#include "status.h"
#include "sysvars.h"
#include "table_options.h"

namespace tidesql {

namespace {

// ALTERs that change the table's definition (.frm) but not one stored byte: rows are
// encoded by column position and type, index entries by key position and key parts, and
// the engine keeps nothing by column or index name.
constexpr alter_table_operations kMetadataOnlyAlters =
    ALTER_COLUMN_NAME | ALTER_RENAME_INDEX | ALTER_COLUMN_DEFAULT | ALTER_CHANGE_INDEX_COMMENT |
    ALTER_RENAME | ALTER_DROP_CHECK_CONSTRAINT | ALTER_INDEX_IGNORABILITY | ALTER_PARTITIONED |
    ALTER_COLUMN_TYPE_CHANGE_BY_ENGINE | ALTER_CHANGE_CREATE_OPTION;

// Secondary indexes added or dropped: each has column families of its own, built from the
// rows (added) or dropped at the commit.
constexpr alter_table_operations kIndexAlters = ALTER_ADD_NON_UNIQUE_NON_PRIM_INDEX | ALTER_ADD_UNIQUE_INDEX |
                                                ALTER_DROP_NON_UNIQUE_NON_PRIM_INDEX |
                                                ALTER_DROP_UNIQUE_INDEX | ALTER_INDEX_ORDER;

// Foreign keys added or dropped: definitions in the dictionary only.
constexpr alter_table_operations kForeignKeyAlters = ALTER_ADD_FOREIGN_KEY | ALTER_DROP_FOREIGN_KEY;

// Columns added at the end: old rows keep their bytes and read the added columns from
// the values recorded for them (TableDef's schema history).
constexpr alter_table_operations kColumnAdds = ALTER_ADD_STORED_BASE_COLUMN | ALTER_ADD_VIRTUAL_COLUMN;

// Columns dropped or moved (and added anywhere): old rows keep their bytes too, read
// through their version's mapped layout.
constexpr alter_table_operations kColumnRemaps = ALTER_DROP_STORED_COLUMN | ALTER_DROP_VIRTUAL_COLUMN |
                                                 ALTER_STORED_COLUMN_ORDER | ALTER_VIRTUAL_COLUMN_ORDER;

// The null bit of `f` as a bit number of its record's null bitmap; -1 if NOT NULL.
int32_t null_bit_number(const Field* f, const uchar* record) {
  if (!f->real_maybe_null()) return -1;
  return static_cast<int32_t>((f->null_ptr - record) * 8 + __builtin_ctz(f->null_bit));
}

// A constant default that one recorded value gives every existing row (an expression,
// CURRENT_TIMESTAMP or AUTO_INCREMENT give each row its own value, which only a copy
// writes; a BLOB's value would point outside the record).
bool constant_default(const Field* added) {
  return added->default_value == nullptr && !added->has_default_now_unireg_check() &&
         !(added->flags & AUTO_INCREMENT_FLAG) && !added->vers_sys_field() &&
         dynamic_cast<const Field_blob*>(added) == nullptr;
}

// Index entries written per library write while an index is built, and gathered (then
// sorted) before they are written.
constexpr size_t kBuildBatchBytes = 4 << 20;
constexpr size_t kBuildSortBytes = 32 << 20;

// What prepare_inplace_alter_table decided, for the build and the commit.
struct InplaceAlter : public inplace_alter_handler_ctx {
  bool changes_indexes = false;
  // The new definition's column families: one per key in its key order (then the rows'
  // when the primary key is hidden).
  std::vector<uint64_t> index_ids;
  std::vector<uint> built_keys;   // keys of the new definition to build (by build slot)
  std::vector<uint64_t> created;  // their column families (dropped if the ALTER fails)
  std::vector<uint64_t> dropped;  // column families of dropped indexes
  // The log the table's writers fill while the indexes are built (IndexBuild), and the
  // table's runtime state it is registered in.
  uint64_t log_id = 0;
  std::shared_ptr<TableCounters> counters;
  // The commit runs with the table held exclusively: no writer can still hold the log.
  bool exclusive = false;
  // Foreign keys: the table's new list (ADD / DROP FOREIGN KEY), or its columns renamed.
  bool changes_foreign_keys = false;
  std::vector<ForeignKeyDef> foreign_keys;
  std::vector<std::pair<std::string, std::string>> renamed_columns;
};

std::string frm_version_of(const TABLE_SHARE* share) {
  return std::string(reinterpret_cast<const char*>(share->tabledef_version.str),
                     share->tabledef_version.length);
}

}  // namespace

bool ha_tidesdb::columns_appended(const TABLE* altered_table) const {
  // Partitions would each commit their own schema history: a crash between two of them
  // would leave partitions that read today's rows with yesterday's layout.
  if (table->part_info != nullptr || altered_table->s->fields <= table->s->fields) return false;
  const uchar* old_record = table->record[0];
  const uchar* new_record = altered_table->record[0];
  for (uint i = 0; i < table->s->fields; i++) {
    const Field* was = table->field[i];
    const Field* now = altered_table->field[i];
    // The kept columns in place, with their null bits (and BIT columns' odd bits) where
    // they were, so that an old row's bitmap reads the same.
    if (was->real_type() != now->real_type() || was->pack_length() != now->pack_length() ||
        was->stored_in_db() != now->stored_in_db() || was->real_maybe_null() != now->real_maybe_null())
      return false;
    if (was->real_maybe_null() &&
        (was->null_bit != now->null_bit || was->null_ptr - old_record != now->null_ptr - new_record))
      return false;
    if (was->real_type() == MYSQL_TYPE_BIT) {
      const auto* old_bit = static_cast<const Field_bit*>(was);
      const auto* new_bit = static_cast<const Field_bit*>(now);
      if (old_bit->bit_len != new_bit->bit_len ||
          (old_bit->bit_len != 0 && (old_bit->bit_ofs != new_bit->bit_ofs ||
                                     old_bit->bit_ptr - old_record != new_bit->bit_ptr - new_record)))
        return false;
    }
  }
  for (uint i = table->s->fields; i < altered_table->s->fields; i++) {
    const Field* added = altered_table->field[i];
    if (added->stored_in_db() && !constant_default(added)) return false;
  }
  return true;
}

bool ha_tidesdb::columns_remapped(const TABLE* altered_table, const Alter_inplace_info* info) const {
  if (table->part_info != nullptr) return false;
  std::vector<bool> kept(table->s->fields, false);
  uint j = 0;
  for (const Create_field& cf : const_cast<Alter_info*>(info->alter_info)->create_list) {
    if (j >= altered_table->s->fields) return false;
    const Field* now = altered_table->field[j++];
    if (cf.field == nullptr) {
      if (now->stored_in_db() && !constant_default(now)) return false;
      continue;
    }
    const Field* was = cf.field;
    if (was->table != table) return false;
    kept[was->field_index] = true;
    // Kept columns keep their packed form.
    if (was->real_type() != now->real_type() || was->pack_length() != now->pack_length() ||
        was->stored_in_db() != now->stored_in_db() || was->real_maybe_null() != now->real_maybe_null() ||
        was->charset() != now->charset() || was->decimals() != now->decimals() ||
        was->field_length != now->field_length)
      return false;
  }
  if (j != altered_table->s->fields) return false;
  // Dropped columns must be skippable in old rows, and named by no foreign key (the
  // server refuses that, on the copy path).
  std::vector<std::vector<std::string>> fk_columns;
  if (fk_ != nullptr) {
    refresh_foreign_keys();
    for (const ForeignKeyDef& fk : fk_->fks) fk_columns.push_back(fk.columns);
    if (fk_->has_children) return false;
  }
  for (uint i = 0; i < table->s->fields; i++) {
    if (kept[i] || !table->field[i]->stored_in_db()) continue;
    TableDef::SchemaVersion::Column c;
    if (!packed_form(table->field[i], &c.length_bytes, &c.skip_length)) return false;
    for (const auto& columns : fk_columns)
      for (const std::string& name : columns)
        if (my_strcasecmp(system_charset_info, name.c_str(), table->field[i]->field_name.str) == 0)
          return false;
  }
  return true;
}

TableDef ha_tidesdb::schema_with_remapped_columns(const TABLE* altered_table,
                                                  const Alter_inplace_info* info) const {
  TableDef def = share_->def;
  const uchar* record = table->record[0];
  // Today's stored index of each column, and where each goes.
  std::vector<int> old_stored(table->s->fields, -1), stored_field;
  for (uint i = 0; i < table->s->fields; i++) {
    if (!table->field[i]->stored_in_db()) continue;
    old_stored[i] = static_cast<int>(stored_field.size());
    stored_field.push_back(static_cast<int>(i));
  }
  std::vector<int> new_stored_of_new(altered_table->s->fields, -1);
  int count = 0;
  for (uint j = 0; j < altered_table->s->fields; j++)
    if (altered_table->field[j]->stored_in_db()) new_stored_of_new[j] = count++;
  std::vector<int> remap(stored_field.size(), -1);  // today's stored index -> the new one
  uint j = 0;
  for (const Create_field& cf : const_cast<Alter_info*>(info->alter_info)->create_list) {
    if (cf.field != nullptr && old_stored[cf.field->field_index] >= 0)
      remap[old_stored[cf.field->field_index]] = new_stored_of_new[j];
    j++;
  }
  // Column i of today's table as an earlier version holds it: where it goes, how to skip
  // it if it is dropped.
  auto column_of = [&](int stored_index, int32_t null_bit) {
    TableDef::SchemaVersion::Column c;
    c.stored = remap[stored_index];
    c.null_bit = null_bit;
    if (c.stored < 0) packed_form(table->field[stored_field[stored_index]], &c.length_bytes, &c.skip_length);
    return c;
  };
  for (TableDef::SchemaVersion& o : def.old_versions) {
    if (!o.mapped) {
      // A prefix of today's stored columns with today's null bits.
      o.columns.clear();
      for (uint k = 0; k < o.stored_columns && k < stored_field.size(); k++)
        o.columns.push_back(column_of(k, null_bit_number(table->field[stored_field[k]], record)));
      o.mapped = true;
      continue;
    }
    for (TableDef::SchemaVersion::Column& c : o.columns) {
      if (c.stored < 0) continue;
      TableDef::SchemaVersion::Column moved = column_of(c.stored, c.null_bit);
      c = moved;
    }
  }
  TableDef::SchemaVersion current;
  current.version = def.schema_version;
  current.stored_columns = static_cast<uint32_t>(stored_field.size());
  current.null_bytes = table->s->null_bytes;
  current.mapped = true;
  for (size_t k = 0; k < stored_field.size(); k++)
    current.columns.push_back(
        column_of(static_cast<int>(k), null_bit_number(table->field[stored_field[k]], record)));
  def.old_versions.push_back(std::move(current));
  def.schema_version++;
  // Defaults recorded for columns added earlier follow them (or go with them).
  std::vector<TableDef::AddedColumn> added_columns;
  for (TableDef::AddedColumn& a : def.added_columns) {
    if (a.stored_index >= remap.size() || remap[a.stored_index] < 0) continue;
    a.stored_index = static_cast<uint32_t>(remap[a.stored_index]);
    added_columns.push_back(std::move(a));
  }
  // And those of the columns this ALTER adds.
  const uchar* defaults = altered_table->s->default_values;
  std::vector<uchar> buffer;
  j = 0;
  for (const Create_field& cf : const_cast<Alter_info*>(info->alter_info)->create_list) {
    Field* f = altered_table->field[j];
    const int stored_index = new_stored_of_new[j++];
    if (cf.field != nullptr || stored_index < 0) continue;
    TableDef::AddedColumn added;
    added.stored_index = static_cast<uint32_t>(stored_index);
    added.is_null = f->real_maybe_null() && f->is_null_in_record(defaults);
    if (!added.is_null) {
      buffer.resize(f->pack_length() + 16);
      uchar* end = f->pack(buffer.data(), defaults + f->offset(altered_table->record[0]));
      added.packed.assign(reinterpret_cast<const char*>(buffer.data()), end - buffer.data());
    }
    added_columns.push_back(std::move(added));
  }
  def.added_columns = std::move(added_columns);
  return def;
}

enum_alter_inplace_result ha_tidesdb::check_if_supported_inplace_alter(TABLE* altered_table,
                                                                       Alter_inplace_info* info) {
  const alter_table_operations flags = info->handler_flags;
  if (flags & ~(kMetadataOnlyAlters | kIndexAlters | kColumnAdds | kColumnRemaps | kForeignKeyAlters))
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  // Foreign keys: a dropped index a key needs is refused (as InnoDB); renamed columns a key
  // names and added or dropped keys are metadata (the dictionary's definitions), when
  // nothing else changes. A key added in place is not checked against the rows: only with
  // foreign_key_checks=OFF, as InnoDB.
  if (flags & (ALTER_COLUMN_NAME | kIndexAlters)) {
    if (const char* index = index_needed_by_foreign_key(altered_table, info)) {
      my_error(ER_DROP_INDEX_FK, MYF(0), index);
      return HA_ALTER_ERROR;
    }
  }
  const bool renames_fk_columns = !foreign_key_column_renames(info).empty();
  if (flags & kForeignKeyAlters) {
    // (The server reorders the keys of a table that gains a foreign key: ALTER_INDEX_ORDER.)
    if ((flags & ((kIndexAlters & ~ALTER_INDEX_ORDER) | kColumnAdds | kColumnRemaps)) || renames_fk_columns)
      return HA_ALTER_INPLACE_NOT_SUPPORTED;
    if ((flags & ALTER_ADD_FOREIGN_KEY) &&
        !(ha_thd()->variables.option_bits & OPTION_NO_FOREIGN_KEY_CHECKS)) {
      info->unsupported_reason = "Adding foreign keys needs foreign_key_checks=OFF";
      return HA_ALTER_INPLACE_NOT_SUPPORTED;
    }
  }
  if (renames_fk_columns && (flags & (kIndexAlters | kColumnAdds | kColumnRemaps)))
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  // A column family's options cannot change once it is made: a changed table option
  // (COMPRESSION=, BLOOM_FPR=, ...) rebuilds the table through the copy path.
  if ((flags & ALTER_CHANGE_CREATE_OPTION) && table_options_differ(table->s, info->create_info))
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  // Of the table options only the comment is metadata alone (AUTO_INCREMENT= sets the
  // engine's counter, ENGINE= and ROW_FORMAT= ask for a rebuild).
  if ((flags & ALTER_CHANGE_CREATE_OPTION) && (info->create_info->used_fields & ~HA_CREATE_USED_COMMENT))
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  if (flags & (kColumnAdds | kColumnRemaps)) {
    if (flags & kIndexAlters) return HA_ALTER_INPLACE_NOT_SUPPORTED;
    if (!(flags & kColumnRemaps) && columns_appended(altered_table)) return HA_ALTER_INPLACE_INSTANT;
    if (columns_remapped(altered_table, info)) return HA_ALTER_INPLACE_INSTANT;
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  }
  if (!(flags & kIndexAlters)) return HA_ALTER_INPLACE_INSTANT;

  // Index changes. Kept indexes are matched to their column families by name; partitions
  // (whose dictionary entries the server's DDL recovery does not name) copy; an index on a
  // virtual column would need the server to compute it for every row.
  if ((flags & ALTER_RENAME_INDEX) || table->part_info != nullptr) return HA_ALTER_INPLACE_NOT_SUPPORTED;
  if ((altered_table->s->primary_key == MAX_KEY) != has_hidden_pk()) return HA_ALTER_INPLACE_NOT_SUPPORTED;
  for (uint i = 0; i < info->index_add_count; i++) {
    // altered_table's keys are in key_info_buffer's order, with their fields resolved.
    const KEY& key = altered_table->key_info[info->index_add_buffer[i]];
    if ((key.flags & (HA_FULLTEXT | HA_SPATIAL)) || key.algorithm == HA_KEY_ALG_LONG_HASH)
      return HA_ALTER_INPLACE_NOT_SUPPORTED;
    for (uint p = 0; p < key.user_defined_key_parts; p++)
      if (!key.key_part[p].field->stored_in_db()) return HA_ALTER_INPLACE_NOT_SUPPORTED;
  }
  // Writes go on: the old definition's writers keep a dropped index up to date until the
  // commit, and log what they change for an index being built (IndexBuild).
  return HA_ALTER_INPLACE_NOCOPY_NO_LOCK;
}

bool ha_tidesdb::can_convert_nocopy(const Field& field, const Column_definition& new_field) const {
  // A longer VARCHAR (or VARBINARY) of the same character set whose length still takes as
  // many length bytes: Field::pack writes its values unchanged. Not in a key, where
  // non-binary strings are stored at their full width (docs/SQL-FORMATS.md).
  if (field.real_type() != MYSQL_TYPE_VARCHAR || new_field.type_handler() != field.type_handler())
    return false;
  if (new_field.charset != field.charset() || !new_field.compression_method() != !field.compression_method())
    return false;
  const auto& varchar = static_cast<const Field_varstring&>(field);
  if (new_field.length < varchar.field_length || (new_field.length > 255 ? 2U : 1U) != varchar.length_bytes)
    return false;
  for (uint k = 0; k < table->s->keys; k++) {
    const KEY& key = table->key_info[k];
    for (uint p = 0; p < key.user_defined_key_parts; p++)
      if (key.key_part[p].fieldnr == field.field_index + 1) return false;
  }
  return true;
}

bool ha_tidesdb::check_if_incompatible_data(HA_CREATE_INFO* info, uint table_changes) {
  // Asked only whether stored data would read the same under the new definition (ALTER
  // asks check_if_supported_inplace_alter): EXCHANGE PARTITION, for a table and a partition
  // whose definitions the server found equal. Rows and keys are encoded from the column
  // and index definitions alone, so equal definitions read each other's data; what else
  // the engine keeps per table (column families, AUTO_INCREMENT and row-id counters)
  // follows the table through the renames that swap the two.
  if (table_changes != IS_EQUAL_YES) return COMPATIBLE_DATA_NO;
  if ((info->used_fields & HA_CREATE_USED_AUTO) && info->auto_increment_value != 0) return COMPATIBLE_DATA_NO;
  return COMPATIBLE_DATA_YES;
}

bool ha_tidesdb::prepare_inplace_alter_table(TABLE* altered_table, Alter_inplace_info* info) {
  auto* alter = new InplaceAlter;
  info->handler_ctx = alter;
  alter->renamed_columns = foreign_key_column_renames(info);
  if (info->handler_flags & kForeignKeyAlters) {
    alter->changes_foreign_keys = true;
    int error = foreign_keys_for(altered_table, info->alter_info, false, share_->name, share_->name,
                                 std::string(table->s->table_name.str, table->s->table_name.length), false,
                                 &alter->foreign_keys);
    if (error != 0) {
      if (error != HA_ERR_TIDESDB_REPORTED) print_error(error, MYF(0));
      return true;
    }
  }
  if (!(info->handler_flags & kIndexAlters)) return false;
  alter->changes_indexes = true;

  const uint keys = altered_table->s->keys;
  std::vector<bool> added(keys, false);
  for (uint i = 0; i < info->index_add_count; i++) added[info->index_add_buffer[i]] = true;
  std::vector<uint64_t> fresh;
  if (info->index_add_count != 0) {
    // One more for the log of the writes made while the indexes are built.
    // The table's options (a changed one would have sent the ALTER to the copy path), and
    // the new keys' filter prefixes in key order (the order they take the fresh ids in).
    const std::vector<size_t> all_prefixes = index_filter_prefixes(altered_table);
    std::vector<size_t> prefixes;
    for (uint k = 0; k < keys; k++)
      if (added[k]) prefixes.push_back(all_prefixes[k]);
    tidesdb::Status s = dictionary_reserve_index_cfs(
        info->index_add_count + 1,
        table_column_family_options(info->create_info->option_list, info->create_info->option_struct),
        prefixes, &fresh);
    if (!s.ok()) {
      ha_error_from_status(s, "ALTER TABLE", ha_thd());
      return true;
    }
    alter->log_id = fresh.back();
    fresh.pop_back();
  }
  alter->created = fresh;
  std::vector<bool> kept(table->s->keys, false);
  size_t next_fresh = 0;
  for (uint k = 0; k < keys; k++) {
    if (added[k]) {
      alter->index_ids.push_back(fresh[next_fresh++]);
      alter->built_keys.push_back(k);
      continue;
    }
    uint old = 0;
    while (old < table->s->keys &&
           strcmp(table->key_info[old].name.str, altered_table->key_info[k].name.str) != 0)
      old++;
    if (old == table->s->keys) {
      // The server kept a key this table does not have: not an index change after all.
      dictionary_drop_index_cfs(alter->created);
      my_error(ER_INTERNAL_ERROR, MYF(0), "TidesDB: ALTER TABLE kept an index the table does not have");
      return true;
    }
    kept[old] = true;
    alter->index_ids.push_back(share_->def.index_ids[old]);
  }
  if (has_hidden_pk()) alter->index_ids.push_back(share_->def.index_ids[data_slot()]);
  for (uint old = 0; old < table->s->keys; old++)
    if (!kept[old]) alter->dropped.push_back(share_->def.index_ids[old]);

  if (!alter->built_keys.empty()) {
    // From now on (the server holds the table exclusively: no statement writes it, no
    // transaction that wrote it is open) every write of the table logs what the build
    // must revisit.
    auto build = std::make_shared<IndexBuild>();
    build->log_cf = index_column_family(alter->log_id);
    build->indexes.resize(alter->built_keys.size());
    for (size_t b = 0; b < alter->built_keys.size(); b++) {
      const KEY& key = altered_table->key_info[alter->built_keys[b]];
      IndexBuild::Index& index = build->indexes[b];
      index.name.assign(key.name.str, key.name.length);
      index.parts.assign(key.key_part, key.key_part + key.user_defined_key_parts);
      index.key = key;
      index.key.key_part = index.parts.data();
      index.key.name = {index.name.c_str(), index.name.size()};
      index.key.ext_key_parts = key.user_defined_key_parts;
    }
    alter->counters = share_->counters;
    alter->counters->set_index_build(std::move(build));
  }
  return false;
}

bool ha_tidesdb::inplace_alter_table(TABLE* altered_table, Alter_inplace_info* info) {
  auto* alter = static_cast<InplaceAlter*>(info->handler_ctx);
  if (alter == nullptr || alter->built_keys.empty()) return false;
  THD* thd = ha_thd();
  // The rows committed now, through a snapshot. Writes go on meanwhile: each logs the rows
  // it changes (IndexBuild), and the commit revisits those, so an entry written here for a
  // row changed since is corrected there.
  std::vector<KeyCodec> codecs(altered_table->s->keys);
  for (uint k = 0; k < altered_table->s->keys; k++) codecs[k].init(altered_table, k);
  const uint primary_key = altered_table->s->primary_key;
  std::vector<tidesdb::ColumnFamilyHandle*> cfs;
  for (uint k : alter->built_keys) cfs.push_back(index_column_family(alter->index_ids[k]));
  // UNIQUE entries keyed by their parts alone, per built key: two rows of one value write
  // one library key, so fewer such keys in the column family than entries written means a
  // duplicate (counted once the rows are read, rather than looked up row by row).
  std::vector<uint64_t> alone_written(alter->built_keys.size(), 0);

  tidesdb::WriteBatch batch;
  // Straight to the database, past the transaction layer's locks and commit records (nobody
  // else writes these column families, nor reads them, until the commit), and past the
  // WAL: the column families are flushed to synced files before the commit names them, and
  // a crash before that leaves them to the startup, which drops what no table names.
  tidesdb::WriteOptions unlogged;
  unlogged.disable_wal = true;
  // Entries are gathered and sorted before they are written: runs in key order go into
  // the memtable (and its flushed files) far faster than entries in row order.
  std::vector<std::vector<std::pair<std::string, std::string>>> gathered(alter->built_keys.size());
  size_t gathered_bytes = 0;
  auto flush = [&]() {
    tidesdb::Status s;
    for (size_t b = 0; b < gathered.size() && s.ok(); b++) {
      std::sort(gathered[b].begin(), gathered[b].end());
      for (const auto& [k, v] : gathered[b]) {
        batch.Put(cfs[b], k, v);
        if (batch.ApproximateSize() >= kBuildBatchBytes) {
          s = base_db()->Write(unlogged, &batch);
          batch.Clear();
          if (!s.ok()) break;
        }
      }
      gathered[b].clear();
    }
    if (s.ok() && batch.Count() != 0) s = base_db()->Write(unlogged, &batch);
    batch.Clear();
    gathered_bytes = 0;
    crash_point("alter_indexes_during_build");
    return s;
  };
  const tidesdb::Snapshot* snapshot = base_db()->GetSnapshot();
  struct Release {
    const tidesdb::Snapshot* snapshot;
    ~Release() { base_db()->ReleaseSnapshot(snapshot); }
  } release{snapshot};
  auto fail = [&](const tidesdb::Status& s) {
    ha_error_from_status(s, "ALTER TABLE", thd);
    return true;
  };
  tidesdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.snapshot = snapshot;
  const ha_rows estimate = std::max<ha_rows>(1, stats.records);
  ha_rows done = 0;
  std::string pk, key, value, found;
  uchar* record = altered_table->record[0];
  std::vector<OffRowValue> off_row;
  std::vector<std::string> blob_bytes;
  std::vector<bool> blob_read;
  auto read_blob = [&](const std::string& blob, std::string* out) {
    return base_db()->Get(ro, share_->blob_cf, blob, out);
  };
  // Calls fn(slot, parts_alone) for each built index's entry of each row, in key order.
  auto for_each_entry = [&](const std::function<bool(size_t, bool)>& fn) -> bool {
    auto it = base_db()->NewIterator(ro, data_cf());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (decode_row(altered_table, share_->def, std::string_view(it->value().data(), it->value().size()),
                     record, &off_row) != 0 ||
          !read_off_row_values(read_blob, altered_table, record, off_row, nullptr, &blob_bytes, &blob_read)
               .ok()) {
        my_error(ER_INTERNAL_ERROR, MYF(0), "TidesDB: ALTER TABLE found a row it cannot decode");
        return true;
      }
      pk.assign(it->key().data(), it->key().size());
      for (size_t b = 0; b < alter->built_keys.size(); b++) {
        const bool alone =
            tidesql::encode_index_entry(codecs, primary_key, alter->built_keys[b], record, pk, &key, &value);
        if (fn(b, alone)) return true;
      }
      if (++done % 1024 == 0) {
        thd_progress_report(thd, done, std::max(estimate, done));
        if (thd_killed(thd)) {
          thd->send_kill_message();
          return true;
        }
      }
    }
    if (!it->status().ok()) return fail(it->status());
    return false;
  };

  if (for_each_entry([&](size_t b, bool alone) {
        if (alone) alone_written[b]++;
        gathered_bytes += key.size() + value.size() + 64;
        gathered[b].emplace_back(key, value);
        if (gathered_bytes < kBuildSortBytes) return false;
        tidesdb::Status s = flush();
        return !s.ok() && fail(s);
      }))
    return true;
  tidesdb::Status s = flush();
  if (!s.ok()) return fail(s);

  for (size_t b = 0; b < alter->built_keys.size(); b++) {
    if (alone_written[b] == 0) continue;
    const KeyCodec& codec = codecs[alter->built_keys[b]];
    uint64_t keys = 0;
    // The entries as written (after the snapshot the rows are read at).
    tidesdb::ReadOptions latest;
    latest.fill_cache = false;
    auto it = base_db()->NewIterator(latest, cfs[b]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      bool any_null = false;
      std::string_view k(it->key().data(), it->key().size());
      if (codec.parts_length(k, codec.parts(), &any_null) == k.size()) keys++;
    }
    if (!it->status().ok()) return fail(it->status());
    if (keys == alone_written[b]) continue;
    // A duplicate: find a row whose value's entry names another row, to report it.
    done = 0;
    bool reported = false;
    if (for_each_entry([&](size_t slot, bool alone) {
          if (slot != b || !alone) return false;
          tidesdb::Status st = base_db()->Get(latest, cfs[b], key, &found);
          if (!st.ok()) return !st.IsNotFound() && fail(st);
          std::string_view v = found;
          uint64_t length;
          if (get_varint(&v, &length) && length <= v.size() && v.substr(0, length) == pk) return false;
          print_keydup_error(altered_table, &altered_table->key_info[alter->built_keys[b]], MYF(0));
          reported = true;
          return true;
        }))
      return true;
    if (!reported)
      my_error(ER_DUP_ENTRY, MYF(0), "?", altered_table->key_info[alter->built_keys[b]].name.str);
    return true;
  }
  for (tidesdb::ColumnFamilyHandle* cf : cfs) {
    s = base_db()->Flush(tidesdb::FlushOptions(), cf);
    if (!s.ok()) return fail(s);
  }
  while (sysvars.debug_pause_index_build && !thd_killed(thd)) my_sleep(10000);
  return false;
}

bool ha_tidesdb::commit_inplace_alter_table(TABLE* altered_table, Alter_inplace_info* info, bool commit) {
  auto* alter = static_cast<InplaceAlter*>(info->handler_ctx);
  if (alter == nullptr) return false;
  if (!commit) {
    if (alter->counters != nullptr) alter->counters->set_index_build(nullptr);
    dictionary_drop_index_cfs(alter->created);
    alter->created.clear();
    // Writers may still hold the log (a failed build ends without the table held
    // exclusively): it is then left to the next startup, which drops what no table names.
    if (alter->exclusive && alter->log_id != 0) dictionary_drop_index_cfs({alter->log_id});
    return false;
  }
  alter->exclusive = true;
  if (alter->log_id != 0) {
    // No writer is left (the server upgraded to an exclusive lock): bring the new indexes
    // up to date with the rows the log names, then stop logging.
    if (apply_index_build_log(altered_table, alter)) return true;
    alter->counters->set_index_build(nullptr);
  }
  // A partition's entry records its table's .frm version too (DDL recovery asks by the
  // table's name, which has no entry, but the views key their caches by it).
  const std::string version = frm_version_of(altered_table->s);
  tidesdb::Status s;
  if (alter->changes_indexes) {
    s = dictionary_replace_indexes(share_->name, alter->index_ids, version, alter->dropped,
                                   alter->changes_foreign_keys ? &alter->foreign_keys : nullptr);
  } else if (info->handler_flags & (kColumnAdds | kColumnRemaps)) {
    const bool appended = !(info->handler_flags & kColumnRemaps) && columns_appended(altered_table);
    s = dictionary_set_schema(share_->name,
                              appended ? schema_with_added_columns(altered_table)
                                       : schema_with_remapped_columns(altered_table, info),
                              version);
  } else if (alter->changes_foreign_keys) {
    s = dictionary_set_foreign_keys(share_->name, alter->foreign_keys, version);
  } else if (!alter->renamed_columns.empty()) {
    s = dictionary_rename_foreign_key_columns(share_->name, alter->renamed_columns, version);
  } else {
    s = dictionary_set_frm_version(share_->name, version);
  }
  if (!s.ok()) {
    if (alter->changes_indexes) dictionary_drop_index_cfs(alter->created);
    alter->created.clear();
    ha_error_from_status(s, "ALTER TABLE", ha_thd());
    return true;
  }
  alter->created.clear();
  if (alter->log_id != 0) dictionary_drop_index_cfs({alter->log_id});
  return false;
}

TableDef ha_tidesdb::schema_with_added_columns(const TABLE* altered_table) const {
  TableDef def = share_->def;
  uint stored = 0;
  for (uint i = 0; i < table->s->fields; i++) stored += table->field[i]->stored_in_db() ? 1 : 0;
  def.old_versions.push_back({def.schema_version, stored, table->s->null_bytes});
  def.schema_version++;
  // The added columns' defaults, as the rows already there read them from now on (a later
  // SET DEFAULT changes what new rows get, not these).
  const uchar* defaults = altered_table->s->default_values;
  std::vector<uchar> buffer;
  for (uint i = table->s->fields; i < altered_table->s->fields; i++) {
    Field* f = altered_table->field[i];
    if (!f->stored_in_db()) continue;
    TableDef::AddedColumn added;
    added.stored_index = stored++;
    const uchar* value = defaults + f->offset(altered_table->record[0]);
    added.is_null = f->real_maybe_null() && f->is_null_in_record(defaults);
    if (!added.is_null) {
      buffer.resize(f->pack_length() + 16);
      uchar* end = f->pack(buffer.data(), value);
      added.packed.assign(reinterpret_cast<const char*>(buffer.data()), end - buffer.data());
    }
    def.added_columns.push_back(std::move(added));
  }
  return def;
}

bool ha_tidesdb::apply_index_build_log(TABLE* altered_table, inplace_alter_handler_ctx* ctx) {
  auto* alter = static_cast<InplaceAlter*>(ctx);
  THD* thd = ha_thd();
  tidesdb::ColumnFamilyHandle* log_cf = index_column_family(alter->log_id);
  std::vector<KeyCodec> codecs(altered_table->s->keys);
  for (uint k = 0; k < altered_table->s->keys; k++) codecs[k].init(altered_table, k);
  const uint primary_key = altered_table->s->primary_key;
  uchar* record = altered_table->record[0];
  tidesdb::ReadOptions ro;
  ro.fill_cache = false;
  tidesdb::WriteBatch batch;
  auto fail = [&](const tidesdb::Status& s) {
    ha_error_from_status(s, "ALTER TABLE", thd);
    return true;
  };
  auto flush = [&]() {
    tidesdb::Status s;
    if (batch.Count() != 0) s = base_db()->Write(tidesdb::WriteOptions(), &batch);
    batch.Clear();
    return s;
  };
  // The row's current entry in built index `slot`; false if the row is gone.
  std::string row, key, value;
  std::vector<OffRowValue> off_row;
  std::vector<std::string> blob_bytes;
  std::vector<bool> blob_read;
  auto read_blob = [&](const std::string& blob, std::string* out) {
    return base_db()->Get(ro, share_->blob_cf, blob, out);
  };
  auto current_entry = [&](uint slot, const std::string& pk, bool* exists, bool* parts_alone) {
    tidesdb::Status s = base_db()->Get(ro, data_cf(), pk, &row);
    *exists = s.ok();
    if (s.IsNotFound()) return tidesdb::Status::OK();
    if (!s.ok()) return s;
    if (decode_row(altered_table, share_->def, row, record, &off_row) != 0)
      return tidesdb::Status::Corruption("a row cannot be decoded");
    s = read_off_row_values(read_blob, altered_table, record, off_row, nullptr, &blob_bytes, &blob_read);
    if (!s.ok()) return s;
    *parts_alone =
        tidesql::encode_index_entry(codecs, primary_key, alter->built_keys[slot], record, pk, &key, &value);
    return tidesdb::Status::OK();
  };
  // A log record: slot, varint length + primary key, then an old entry's key (or nothing).
  auto parse = [](std::string_view record_key, uint* slot, std::string* pk, std::string* old_entry) {
    if (record_key.empty()) return false;
    *slot = static_cast<uchar>(record_key[0]);
    record_key.remove_prefix(1);
    uint64_t length;
    if (!get_varint(&record_key, &length) || length > record_key.size()) return false;
    pk->assign(record_key.substr(0, length));
    old_entry->assign(record_key.substr(length));
    return true;
  };

  // The primary key a UNIQUE entry keyed by its parts alone names; empty if none.
  auto entry_owner = [](std::string_view entry_value) {
    uint64_t length;
    if (!get_varint(&entry_value, &length) || length > entry_value.size()) return std::string();
    return std::string(entry_value.substr(0, length));
  };

  // Pass 1: a row's old entries that are not its entry now are gone. (All of them first: a
  // UNIQUE value may have moved from one logged row to another.) A UNIQUE entry keyed by
  // its value alone goes only while it still names this row.
  uint slot = 0;
  bool exists = false, parts_alone = false;
  std::string pk, old_entry, last_group, found;
  uint64_t revisited = 0;
  {
    auto it = base_db()->NewIterator(ro, log_cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!parse(std::string_view(it->key().data(), it->key().size()), &slot, &pk, &old_entry) ||
          slot >= alter->built_keys.size())
        return fail(tidesdb::Status::Corruption("a malformed index build log record"));
      if (old_entry.empty()) continue;
      tidesdb::Status s = current_entry(slot, pk, &exists, &parts_alone);
      if (!s.ok()) return fail(s);
      if (exists && key == old_entry) continue;
      const KeyCodec& codec = codecs[alter->built_keys[slot]];
      tidesdb::ColumnFamilyHandle* cf = index_column_family(alter->index_ids[alter->built_keys[slot]]);
      bool any_null = false;
      if (codec.unique() && codec.parts_length(old_entry, codec.parts(), &any_null) == old_entry.size()) {
        s = base_db()->Get(ro, cf, old_entry, &found);
        if (s.IsNotFound()) continue;
        if (!s.ok()) return fail(s);
        if (entry_owner(found) != pk) continue;
      }
      batch.Delete(cf, old_entry);
      if (batch.ApproximateSize() >= kBuildBatchBytes) {
        s = flush();
        if (!s.ok()) return fail(s);
      }
    }
    if (!it->status().ok()) return fail(it->status());
  }
  tidesdb::Status s = flush();
  if (!s.ok()) return fail(s);

  // Pass 2: each logged row that exists has its current entry (UNIQUE values checked).
  std::vector<std::unordered_map<std::string, std::string>> pending(alter->built_keys.size());
  {
    auto it = base_db()->NewIterator(ro, log_cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view record_key(it->key().data(), it->key().size());
      parse(record_key, &slot, &pk, &old_entry);
      const std::string group(record_key.substr(0, record_key.size() - old_entry.size()));
      if (group == last_group) continue;  // one visit per row and index
      last_group = group;
      s = current_entry(slot, pk, &exists, &parts_alone);
      if (!s.ok()) return fail(s);
      if (!exists) continue;
      revisited++;
      tidesdb::ColumnFamilyHandle* cf = index_column_family(alter->index_ids[alter->built_keys[slot]]);
      if (parts_alone) {
        s = base_db()->Get(ro, cf, key, &found);
        if (!s.ok() && !s.IsNotFound()) return fail(s);
        auto p = pending[slot].find(key);
        const bool taken =
            (p != pending[slot].end() && p->second != pk) || (s.ok() && entry_owner(found) != pk);
        if (taken) {
          print_keydup_error(altered_table, &altered_table->key_info[alter->built_keys[slot]], MYF(0));
          return true;
        }
        pending[slot][key] = pk;
      }
      batch.Put(cf, key, value);
      if (batch.ApproximateSize() >= kBuildBatchBytes) {
        s = flush();
        if (!s.ok()) return fail(s);
        for (auto& p : pending) p.clear();
      }
    }
    if (!it->status().ok()) return fail(it->status());
  }
  s = flush();
  if (!s.ok()) return fail(s);
  if (revisited != 0)
    sql_print_information("TidesDB: ALTER TABLE %s: %llu rows written during the index build revisited",
                          share_->name.c_str(), static_cast<unsigned long long>(revisited));
  return false;
}

}  // namespace tidesql
