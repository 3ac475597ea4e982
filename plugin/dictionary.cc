#include "dictionary.h"

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <log.h>
#include <mysqld.h>

#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "coding.h"
#include "engine.h"
#include "sysvars.h"
#include "tidesdb/transaction.h"

namespace tidesql {
namespace {

// Dictionary keys (docs/SQL-FORMATS.md):
//   "V"            format version of the dictionary, varint (kDictionaryVersion)
//   "N"            next id for tables and index column families, varint
//   "T" + name     TableDef of the table called name
//   "S" + id       TableStats of table id (big-endian 8 bytes)
//   "R" + parent + "\0" + child
//                  child (a table name) has a foreign key whose parent is the table
//                  called parent; empty value
constexpr char kVersionKey[] = "V";
constexpr char kNextIdKey[] = "N";
constexpr char kTablePrefix = 'T';
constexpr char kStatsPrefix = 'S';
constexpr char kChildPrefix = 'R';
constexpr uint64_t kDictionaryVersion = 1;
// 2: the .frm version follows the AUTO_INCREMENT start. 3: then the schema history
// (instant ADD COLUMN). 4: then the foreign keys. 5: mapped layouts in the schema history
// (instant DROP COLUMN, ADD COLUMN anywhere).
constexpr uint64_t kTableDefVersion = 6;
constexpr uint64_t kTableStatsVersion = 1;
constexpr char kDictionaryCf[] = "tidesql-dictionary";
constexpr char kIndexCfPrefix[] = "idx-";

tidesdb::ColumnFamilyHandle* dictionary_cf = nullptr;
// Serializes DDL in this process: the server's metadata locks already keep DDL on one
// table apart, this also keeps the id counter and column-family creation simple.
std::mutex ddl_mutex;

std::string table_key(const std::string& name) { return std::string(1, kTablePrefix) + name; }

std::atomic<uint64_t> fk_generation{1};

std::string child_key(const std::string& parent, const std::string& child) {
  std::string k(1, kChildPrefix);
  k.append(parent);
  k.push_back('\0');
  k.append(child);
  return k;
}

void put_string(std::string* v, const std::string& s) {
  put_varint(v, s.size());
  v->append(s);
}

bool get_string(std::string_view* v, std::string* s) {
  uint64_t length;
  if (!get_varint(v, &length) || length > v->size()) return false;
  s->assign(v->substr(0, length));
  v->remove_prefix(length);
  return true;
}

// The reverse entries of def's foreign keys replaced by those of `fks`, which become def's.
tidesdb::Status replace_foreign_keys(tidesdb::Transaction* txn, const std::string& name,
                                     const std::vector<ForeignKeyDef>& fks, TableDef* def);

std::string stats_key(uint64_t table_id) {
  std::string k(1, kStatsPrefix);
  put_big_endian64(&k, table_id);
  return k;
}

std::string encode_table_def(const TableDef& def) {
  std::string v;
  const bool newer = current_thd != nullptr && debug_newer_format(current_thd) == kNewerFormatTable;
  // Version 6 adds only blob_id: a table without one is written as version 5, which
  // earlier builds read.
  put_varint(&v, newer ? kTableDefVersion + 1 : def.blob_id != 0 ? kTableDefVersion : 5);
  put_varint(&v, def.table_id);
  put_varint(&v, def.schema_version);
  put_varint(&v, (def.hidden_pk ? 1u : 0u) | (def.temporary ? 2u : 0u));
  put_varint(&v, def.index_ids.size());
  for (uint64_t id : def.index_ids) put_varint(&v, id);
  put_varint(&v, def.auto_increment_start);
  put_varint(&v, def.frm_version.size());
  v.append(def.frm_version);
  put_varint(&v, def.old_versions.size());
  for (const TableDef::SchemaVersion& o : def.old_versions) {
    put_varint(&v, o.version);
    put_varint(&v, o.stored_columns);
    put_varint(&v, o.null_bytes);
    v.push_back(o.mapped ? 1 : 0);
    if (!o.mapped) continue;
    put_varint(&v, o.columns.size());
    for (const TableDef::SchemaVersion::Column& c : o.columns) {
      put_varint(&v, static_cast<uint64_t>(c.stored + 1));
      put_varint(&v, static_cast<uint64_t>(c.null_bit + 1));
      v.push_back(static_cast<char>(c.length_bytes));
      put_varint(&v, c.skip_length);
    }
  }
  put_varint(&v, def.added_columns.size());
  for (const TableDef::AddedColumn& a : def.added_columns) {
    put_varint(&v, a.stored_index);
    v.push_back(a.is_null ? 1 : 0);
    put_varint(&v, a.packed.size());
    v.append(a.packed);
  }
  put_varint(&v, def.foreign_keys.size());
  for (const ForeignKeyDef& fk : def.foreign_keys) {
    put_string(&v, fk.name);
    put_varint(&v, fk.columns.size());
    for (const std::string& c : fk.columns) put_string(&v, c);
    put_string(&v, fk.ref_db);
    put_string(&v, fk.ref_table);
    put_string(&v, fk.ref_name);
    put_varint(&v, fk.ref_columns.size());
    for (const std::string& c : fk.ref_columns) put_string(&v, c);
    v.push_back(static_cast<char>(fk.on_delete));
    v.push_back(static_cast<char>(fk.on_update));
  }
  if (def.blob_id != 0) put_varint(&v, def.blob_id);
  return v;
}

// `name` is the table's, for the messages.
tidesdb::Status decode_table_def(std::string_view v, const std::string& name, TableDef* def) {
  auto malformed = [&name]() {
    return tidesdb::Status::Corruption("dictionary: malformed entry of table " + name);
  };
  uint64_t version, table_id, schema_version, flags, count;
  if (!get_varint(&v, &version)) return malformed();
  if (version > kTableDefVersion)
    return tidesdb::Status::NotSupported(
        "the dictionary entry of table " + name + " has format version " + std::to_string(version) +
        ", written by a newer TideSQL; this build reads versions up to " + std::to_string(kTableDefVersion));
  if (!get_varint(&v, &table_id) || !get_varint(&v, &schema_version) || !get_varint(&v, &flags) ||
      !get_varint(&v, &count) || count > 65536)
    return malformed();
  def->table_id = table_id;
  def->schema_version = static_cast<uint32_t>(schema_version);
  def->hidden_pk = flags & 1;
  def->temporary = flags & 2;
  def->index_ids.resize(count);
  for (auto& id : def->index_ids)
    if (!get_varint(&v, &id)) return malformed();
  if (!get_varint(&v, &def->auto_increment_start)) return malformed();
  def->frm_version.clear();
  if (version >= 2) {
    uint64_t length;
    if (!get_varint(&v, &length) || length > v.size()) return malformed();
    def->frm_version.assign(v.substr(0, length));
    v.remove_prefix(length);
  }
  def->old_versions.clear();
  def->added_columns.clear();
  if (version >= 3) {
    const auto malformed = tidesdb::Status::Corruption("dictionary: malformed table record (schema history)");
    uint64_t n, a, b, c;
    if (!get_varint(&v, &n) || n > 65536) return malformed;
    for (uint64_t i = 0; i < n; i++) {
      if (!get_varint(&v, &a) || !get_varint(&v, &b) || !get_varint(&v, &c)) return malformed;
      TableDef::SchemaVersion o;
      o.version = static_cast<uint32_t>(a);
      o.stored_columns = static_cast<uint32_t>(b);
      o.null_bytes = static_cast<uint32_t>(c);
      if (version >= 5) {
        if (v.empty()) return malformed;
        o.mapped = v[0] != 0;
        v.remove_prefix(1);
        uint64_t count = 0;
        if (o.mapped && (!get_varint(&v, &count) || count > 65536)) return malformed;
        for (uint64_t k = 0; k < count; k++) {
          uint64_t stored, null_bit, skip;
          if (!get_varint(&v, &stored) || !get_varint(&v, &null_bit) || v.empty()) return malformed;
          TableDef::SchemaVersion::Column col;
          col.stored = static_cast<int32_t>(stored) - 1;
          col.null_bit = static_cast<int32_t>(null_bit) - 1;
          col.length_bytes = static_cast<uint8_t>(v[0]);
          v.remove_prefix(1);
          if (col.length_bytes > 4 || !get_varint(&v, &skip)) return malformed;
          col.skip_length = static_cast<uint32_t>(skip);
          o.columns.push_back(col);
        }
      }
      def->old_versions.push_back(std::move(o));
    }
    if (!get_varint(&v, &n) || n > 65536) return malformed;
    for (uint64_t i = 0; i < n; i++) {
      TableDef::AddedColumn col;
      if (!get_varint(&v, &a) || v.empty()) return malformed;
      col.stored_index = static_cast<uint32_t>(a);
      col.is_null = v[0] != 0;
      v.remove_prefix(1);
      if (!get_varint(&v, &b) || b > v.size()) return malformed;
      col.packed.assign(v.substr(0, b));
      v.remove_prefix(b);
      def->added_columns.push_back(std::move(col));
    }
  }
  def->foreign_keys.clear();
  if (version >= 4) {
    const auto malformed = tidesdb::Status::Corruption("dictionary: malformed table record (foreign keys)");
    uint64_t n, columns;
    if (!get_varint(&v, &n) || n > 65536) return malformed;
    for (uint64_t i = 0; i < n; i++) {
      ForeignKeyDef fk;
      if (!get_string(&v, &fk.name) || !get_varint(&v, &columns) || columns > 4096) return malformed;
      fk.columns.resize(columns);
      for (std::string& c : fk.columns)
        if (!get_string(&v, &c)) return malformed;
      if (!get_string(&v, &fk.ref_db) || !get_string(&v, &fk.ref_table) || !get_string(&v, &fk.ref_name) ||
          !get_varint(&v, &columns) || columns > 4096)
        return malformed;
      fk.ref_columns.resize(columns);
      for (std::string& c : fk.ref_columns)
        if (!get_string(&v, &c)) return malformed;
      if (v.size() < 2) return malformed;
      fk.on_delete = static_cast<uint8_t>(v[0]);
      fk.on_update = static_cast<uint8_t>(v[1]);
      v.remove_prefix(2);
      def->foreign_keys.push_back(std::move(fk));
    }
  }
  def->blob_id = 0;
  if (version >= 6 && !get_varint(&v, &def->blob_id)) return malformed();
  return tidesdb::Status::OK();
}

// Reads (and locks, for the DDL transaction) the TableDef of `name`.
tidesdb::Status lock_table_def(tidesdb::Transaction* txn, const std::string& name, TableDef* def) {
  std::string value;
  tidesdb::Status s = txn->GetForUpdate(dictionary_cf, table_key(name), &value);
  if (!s.ok()) return s;
  return decode_table_def(value, name, def);
}

std::unique_ptr<tidesdb::Transaction> begin_ddl_transaction() {
  tidesdb::TransactionOptions options;
  options.isolation = tidesdb::IsolationLevel::kReadCommitted;
  options.mode = tidesdb::ConcurrencyMode::kPessimistic;
  options.sync_mode = tidesdb::SyncMode::kFull;  // a DDL is durable when it returns
  return transaction_db()->BeginTransaction(options);
}

// Reserves `count` consecutive ids in the transaction.
tidesdb::Status allocate_ids(tidesdb::Transaction* txn, uint64_t count, uint64_t* first) {
  std::string value;
  tidesdb::Status s = txn->GetForUpdate(dictionary_cf, kNextIdKey, &value);
  uint64_t next = 1;
  if (s.ok()) {
    std::string_view v = value;
    if (!get_varint(&v, &next)) return tidesdb::Status::Corruption("dictionary: malformed id counter");
  } else if (!s.IsNotFound()) {
    return s;
  }
  *first = next;
  std::string updated;
  put_varint(&updated, next + count);
  return txn->Put(dictionary_cf, kNextIdKey, updated);
}

// Column family ids[i] gets `options` with filter_prefix_length filter_prefixes[i] (0 past
// the end of filter_prefixes).
tidesdb::Status create_index_cfs(const std::vector<uint64_t>& ids,
                                 const tidesdb::ColumnFamilyOptions& options,
                                 const std::vector<size_t>& filter_prefixes) {
  for (size_t i = 0; i < ids.size(); i++) {
    tidesdb::ColumnFamilyOptions cf_options = options;
    cf_options.filter_prefix_length = i < filter_prefixes.size() ? filter_prefixes[i] : 0;
    tidesdb::ColumnFamilyHandle* handle = nullptr;
    tidesdb::Status s = base_db()->CreateColumnFamily(cf_options, index_cf_name(ids[i]), &handle);
    if (!s.ok()) return s;
  }
  return tidesdb::Status::OK();
}

void drop_index_cfs(const std::vector<uint64_t>& ids) {
  for (uint64_t id : ids) {
    tidesdb::ColumnFamilyHandle* handle = index_column_family(id);
    if (handle == nullptr) continue;
    tidesdb::Status s = base_db()->DropColumnFamily(handle);
    // The dictionary no longer names it: a failure here leaves an orphan that the next
    // startup drops.
    if (!s.ok())
      sql_print_warning("TidesDB: dropping column family %s failed (%s); it is dropped at the next start",
                        index_cf_name(id).c_str(), s.ToString().c_str());
  }
}

}  // namespace

std::string index_cf_name(uint64_t index_id) { return kIndexCfPrefix + std::to_string(index_id); }

std::string dictionary_name(const char* path) {
  if (path[0] == '.' && path[1] == '/') return std::string(path + 2);
  return std::string(path);
}

tidesdb::ColumnFamilyHandle* index_column_family(uint64_t index_id) {
  return base_db()->GetColumnFamily(index_cf_name(index_id));
}

void crash_point(const char* point) {
  const char* wanted = sysvars.debug_crash_point;
  if (wanted != nullptr && wanted[0] != '\0' && strcmp(wanted, point) == 0) {
    sql_print_information("TidesDB: crash point %s reached: the server stops now", point);
    _exit(9);
  }
}

tidesdb::Status dictionary_startup_recovery() {
  tidesdb::DB* db = base_db();
  dictionary_cf = db->GetColumnFamily(kDictionaryCf);
  if (dictionary_cf == nullptr) {
    tidesdb::Status s = db->CreateColumnFamily(column_family_options(), kDictionaryCf, &dictionary_cf);
    if (!s.ok()) return s;
  }
  std::string value;
  tidesdb::Status s = db->Get(tidesdb::ReadOptions(), dictionary_cf, kVersionKey, &value);
  if (s.IsNotFound()) {
    std::string v;
    put_varint(&v, kDictionaryVersion);
    tidesdb::WriteOptions wo;
    wo.sync_mode = tidesdb::SyncMode::kFull;
    tidesdb::WriteBatch batch;
    batch.Put(dictionary_cf, kVersionKey, v);
    s = transaction_db()->Write(wo, &batch);
    if (!s.ok()) return s;
  } else if (!s.ok()) {
    return s;
  } else {
    std::string_view v = value;
    uint64_t version = 0;
    if (!get_varint(&v, &version)) return tidesdb::Status::Corruption("dictionary: malformed version record");
    if (version > kDictionaryVersion)
      return tidesdb::Status::NotSupported(
          "the data dictionary was written by a newer TideSQL (format version " + std::to_string(version) +
          ")");
  }

  // Every table; temporary ones are dropped.
  std::set<uint64_t> live;
  size_t unreadable = 0;
  std::vector<std::pair<std::string, TableDef>> temporary;
  {
    auto it = db->NewIterator(tidesdb::ReadOptions(), dictionary_cf);
    for (it->Seek(std::string(1, kTablePrefix)); it->Valid(); it->Next()) {
      tidesdb::Slice k = it->key();
      if (k.size() == 0 || k[0] != kTablePrefix) break;
      TableDef def;
      std::string name(k.data() + 1, k.size() - 1);
      // A table this build cannot read (a newer format, a damaged entry) stays as it is:
      // opening it fails with the reason, the other tables work.
      s = decode_table_def(std::string_view(it->value().data(), it->value().size()), name, &def);
      if (!s.ok()) {
        sql_print_error("TidesDB: table %s cannot be opened by this build: %s", name.c_str(),
                        s.ToString().c_str());
        unreadable++;
        continue;
      }
      if (def.temporary)
        temporary.emplace_back(name, def);
      else
        for (uint64_t id : def.column_family_ids()) live.insert(id);
    }
    if (!it->status().ok()) return it->status();
  }
  for (auto& [name, def] : temporary) {
    auto txn = begin_ddl_transaction();
    s = txn->Delete(dictionary_cf, table_key(name));
    if (s.ok()) s = txn->Delete(dictionary_cf, stats_key(def.table_id));
    if (s.ok()) s = txn->Commit();
    if (!s.ok()) return s;
    sql_print_information("TidesDB: dropped temporary table %s left by the previous server", name.c_str());
  }
  // Column families no table names: leftovers of a DDL interrupted by a crash. Kept while a
  // table cannot be read: its column families cannot be told from leftovers.
  if (unreadable != 0) {
    sql_print_warning(
        "TidesDB: %zu table(s) could not be read; column families no other table names are kept", unreadable);
    return tidesdb::Status::OK();
  }
  for (const std::string& cf_name : db->ListColumnFamilies()) {
    if (cf_name.compare(0, strlen(kIndexCfPrefix), kIndexCfPrefix) != 0) continue;
    uint64_t id = strtoull(cf_name.c_str() + strlen(kIndexCfPrefix), nullptr, 10);
    if (live.count(id)) continue;
    tidesdb::ColumnFamilyHandle* handle = db->GetColumnFamily(cf_name);
    if (handle == nullptr) continue;
    s = db->DropColumnFamily(handle);
    if (!s.ok()) return s;
    sql_print_information(
        "TidesDB: dropped column family %s, which no table names (left by an interrupted DDL)",
        cf_name.c_str());
  }
  return tidesdb::Status::OK();
}

void dictionary_shutdown() { dictionary_cf = nullptr; }

tidesdb::Status dictionary_create_table(const std::string& name, unsigned keys, const TableDef& shape,
                                        const tidesdb::ColumnFamilyOptions& options,
                                        const std::vector<size_t>& filter_prefixes, TableDef* created) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  std::string existing;
  tidesdb::Status s = txn->GetForUpdate(dictionary_cf, table_key(name), &existing);
  if (s.ok()) return tidesdb::Status::InvalidArgument("table exists in the TidesDB dictionary", name);
  if (!s.IsNotFound()) return s;
  TableDef def = shape;
  uint64_t cfs = keys + (def.hidden_pk ? 1 : 0);
  const bool blobs = shape.blob_id != 0;
  uint64_t first = 0;
  s = allocate_ids(txn.get(), cfs + 1 + (blobs ? 1 : 0), &first);
  if (!s.ok()) return s;
  def.table_id = first;
  def.index_ids.clear();
  for (uint64_t i = 0; i < cfs; i++) def.index_ids.push_back(first + 1 + i);
  def.blob_id = blobs ? first + 1 + cfs : 0;
  s = create_index_cfs(def.column_family_ids(), options, filter_prefixes);
  if (s.ok()) {
    crash_point("create_table_after_column_families");
    s = txn->Put(dictionary_cf, table_key(name), encode_table_def(def));
  }
  for (const ForeignKeyDef& fk : def.foreign_keys)
    if (s.ok()) s = txn->Put(dictionary_cf, child_key(fk.ref_name, name), "");
  if (s.ok()) s = txn->Commit();
  if (!s.ok()) {
    txn->Rollback();
    drop_index_cfs(def.column_family_ids());
    return s;
  }
  crash_point("create_table_after_commit");
  if (!def.foreign_keys.empty()) fk_generation.fetch_add(1);
  *created = def;
  return tidesdb::Status::OK();
}

tidesdb::Status dictionary_load_table(const std::string& name, TableDef* def) {
  std::string value;
  tidesdb::Status s = base_db()->Get(tidesdb::ReadOptions(), dictionary_cf, table_key(name), &value);
  if (!s.ok()) return s;
  return decode_table_def(value, name, def);
}

tidesdb::Status dictionary_drop_table(const std::string& name) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  TableDef def;
  tidesdb::Status s = lock_table_def(txn.get(), name, &def);
  if (s.IsNotSupported()) {
    // A table of a newer format: its entry goes; its column families, which this build
    // cannot name, are dropped by the next startup as leftovers.
    s = txn->Delete(dictionary_cf, table_key(name));
    if (s.ok()) s = txn->Commit();
    if (s.ok())
      sql_print_warning("TidesDB: dropped table %s of a newer format; its files go at the next start",
                        name.c_str());
    return s;
  }
  if (!s.ok()) return s;
  s = txn->Delete(dictionary_cf, table_key(name));
  if (s.ok()) s = txn->Delete(dictionary_cf, stats_key(def.table_id));
  for (const ForeignKeyDef& fk : def.foreign_keys)
    if (s.ok()) s = txn->Delete(dictionary_cf, child_key(fk.ref_name, name));
  if (s.ok()) s = txn->Commit();
  if (!s.ok()) return s;
  if (!def.foreign_keys.empty()) fk_generation.fetch_add(1);
  crash_point("drop_table_after_commit");
  drop_index_cfs(def.column_family_ids());
  return tidesdb::Status::OK();
}

namespace {

std::vector<std::string> children_in(tidesdb::Transaction* txn, const std::string& parent) {
  std::vector<std::string> children;
  const std::string start = child_key(parent, "");
  tidesdb::ReadOptions ro;
  auto it = txn != nullptr ? txn->NewIterator(ro, dictionary_cf) : base_db()->NewIterator(ro, dictionary_cf);
  for (it->Seek(start); it->Valid(); it->Next()) {
    tidesdb::Slice k = it->key();
    if (k.size() < start.size() || memcmp(k.data(), start.data(), start.size()) != 0) break;
    children.emplace_back(k.data() + start.size(), k.size() - start.size());
  }
  return children;
}

// Changes the foreign keys whose parent is `from` to reference `to`; `self` is the
// TableDef of `from` itself when the caller renames it (its entry is written by the
// caller), else null.
tidesdb::Status move_children_in(tidesdb::Transaction* txn, const std::string& from, const std::string& to,
                                 const std::string& to_db, const std::string& to_table, TableDef* self,
                                 bool* moved) {
  for (const std::string& child : children_in(txn, from)) {
    TableDef child_def;
    const bool is_self = self != nullptr && child == from;
    TableDef* target = is_self ? self : &child_def;
    tidesdb::Status s;
    if (!is_self) {
      s = lock_table_def(txn, child, &child_def);
      if (s.IsNotFound()) continue;
      if (!s.ok()) return s;
    }
    for (ForeignKeyDef& fk : target->foreign_keys) {
      if (fk.ref_name != from) continue;
      fk.ref_name = to;
      fk.ref_db = to_db;
      fk.ref_table = to_table;
    }
    s = txn->Delete(dictionary_cf, child_key(from, child));
    if (s.ok() && !is_self) s = txn->Put(dictionary_cf, child_key(to, child), "");
    if (s.ok() && !is_self) s = txn->Put(dictionary_cf, table_key(child), encode_table_def(child_def));
    if (!s.ok()) return s;
    *moved = true;
  }
  return tidesdb::Status::OK();
}

tidesdb::Status replace_foreign_keys(tidesdb::Transaction* txn, const std::string& name,
                                     const std::vector<ForeignKeyDef>& fks, TableDef* def) {
  tidesdb::Status s;
  for (const ForeignKeyDef& fk : def->foreign_keys)
    if (s.ok()) s = txn->Delete(dictionary_cf, child_key(fk.ref_name, name));
  for (const ForeignKeyDef& fk : fks)
    if (s.ok()) s = txn->Put(dictionary_cf, child_key(fk.ref_name, name), "");
  def->foreign_keys = fks;
  return s;
}

}  // namespace

std::vector<std::string> dictionary_children(const std::string& parent) {
  return children_in(nullptr, parent);
}

tidesdb::Status dictionary_move_children(const std::string& from, const std::string& to,
                                         const std::string& to_db, const std::string& to_table) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  bool moved = false;
  tidesdb::Status s = move_children_in(txn.get(), from, to, to_db, to_table, nullptr, &moved);
  if (s.ok()) s = txn->Commit();
  if (s.ok() && moved) fk_generation.fetch_add(1);
  return s;
}

uint64_t foreign_key_generation() { return fk_generation.load(); }

tidesdb::Status dictionary_rename_table(const std::string& from, const std::string& to, bool parent_moves,
                                        const std::string& to_db, const std::string& to_table) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  std::string existing;
  TableDef def;
  tidesdb::Status s = lock_table_def(txn.get(), from, &def);
  if (!s.ok()) return s;
  s = txn->GetForUpdate(dictionary_cf, table_key(to), &existing);
  if (s.ok()) return tidesdb::Status::InvalidArgument("table exists in the TidesDB dictionary", to);
  if (!s.IsNotFound()) return s;
  s = tidesdb::Status::OK();
  bool fks_changed = !def.foreign_keys.empty();
  // The children of `from` (itself, if self-referencing, among them) now reference `to`.
  if (parent_moves) {
    bool moved = false;
    s = move_children_in(txn.get(), from, to, to_db, to_table, &def, &moved);
    if (!s.ok()) return s;
    fks_changed |= moved;
  }
  // Its own foreign keys move with it.
  for (const ForeignKeyDef& fk : def.foreign_keys) {
    if (s.ok()) s = txn->Delete(dictionary_cf, child_key(fk.ref_name, from));
    if (s.ok()) s = txn->Put(dictionary_cf, child_key(fk.ref_name, to), "");
  }
  if (s.ok()) s = txn->Delete(dictionary_cf, table_key(from));
  if (s.ok()) s = txn->Put(dictionary_cf, table_key(to), encode_table_def(def));
  if (s.ok()) s = txn->Commit();
  if (s.ok() && fks_changed) fk_generation.fetch_add(1);
  return s;
}

tidesdb::Status dictionary_rename_foreign_key_columns(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& renames,
    const std::string& frm_version) {
  auto rename = [&](std::string* column) {
    for (const auto& [from, to] : renames)
      if (my_strcasecmp(system_charset_info, from.c_str(), column->c_str()) == 0) *column = to;
  };
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  TableDef def;
  tidesdb::Status s = lock_table_def(txn.get(), name, &def);
  if (!s.ok()) return s;
  for (ForeignKeyDef& fk : def.foreign_keys) {
    for (std::string& c : fk.columns) rename(&c);
    if (fk.ref_name == name)
      for (std::string& c : fk.ref_columns) rename(&c);
  }
  def.frm_version = frm_version;
  s = txn->Put(dictionary_cf, table_key(name), encode_table_def(def));
  for (const std::string& child : children_in(txn.get(), name)) {
    if (!s.ok() || child == name) continue;
    TableDef child_def;
    s = lock_table_def(txn.get(), child, &child_def);
    if (s.IsNotFound()) {
      s = tidesdb::Status::OK();
      continue;
    }
    for (ForeignKeyDef& fk : child_def.foreign_keys)
      if (fk.ref_name == name)
        for (std::string& c : fk.ref_columns) rename(&c);
    if (s.ok()) s = txn->Put(dictionary_cf, table_key(child), encode_table_def(child_def));
  }
  if (s.ok()) s = txn->Commit();
  if (s.ok()) fk_generation.fetch_add(1);
  return s;
}

tidesdb::Status dictionary_set_foreign_keys(const std::string& name, const std::vector<ForeignKeyDef>& fks,
                                            const std::string& frm_version) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  TableDef def;
  tidesdb::Status s = lock_table_def(txn.get(), name, &def);
  if (!s.ok()) return s;
  s = replace_foreign_keys(txn.get(), name, fks, &def);
  def.frm_version = frm_version;
  if (s.ok()) s = txn->Put(dictionary_cf, table_key(name), encode_table_def(def));
  if (s.ok()) s = txn->Commit();
  if (!s.ok()) return s;
  fk_generation.fetch_add(1);
  crash_point("alter_foreign_keys_after_commit");
  return s;
}

tidesdb::Status dictionary_truncate_table(const std::string& name, uint64_t auto_increment_start,
                                          const tidesdb::ColumnFamilyOptions& options,
                                          const std::vector<size_t>& filter_prefixes, TableDef* renewed) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  TableDef old_def;
  tidesdb::Status s = lock_table_def(txn.get(), name, &old_def);
  if (!s.ok()) return s;
  TableDef def = old_def;
  uint64_t first = 0;
  const size_t count = def.column_family_ids().size();
  s = allocate_ids(txn.get(), count, &first);
  if (!s.ok()) return s;
  for (size_t i = 0; i < def.index_ids.size(); i++) def.index_ids[i] = first + i;
  if (def.blob_id != 0) def.blob_id = first + count - 1;
  def.auto_increment_start = auto_increment_start;
  s = create_index_cfs(def.column_family_ids(), options, filter_prefixes);
  if (s.ok()) s = txn->Put(dictionary_cf, table_key(name), encode_table_def(def));
  if (s.ok()) s = txn->Commit();
  if (!s.ok()) {
    txn->Rollback();
    drop_index_cfs(def.column_family_ids());
    return s;
  }
  crash_point("truncate_table_after_commit");
  drop_index_cfs(old_def.column_family_ids());
  *renewed = def;
  return tidesdb::Status::OK();
}

namespace {

// Changes the TableDef of `name` in one dictionary transaction; `change` may refuse (a
// status other than OK), which ends it unchanged.
tidesdb::Status update_table_def(const std::string& name,
                                 const std::function<tidesdb::Status(TableDef*)>& change) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  TableDef def;
  tidesdb::Status s = lock_table_def(txn.get(), name, &def);
  if (s.ok()) s = change(&def);
  if (s.ok()) s = txn->Put(dictionary_cf, table_key(name), encode_table_def(def));
  if (s.ok()) s = txn->Commit();
  return s;
}

}  // namespace

tidesdb::Status dictionary_set_auto_increment(const std::string& name, uint64_t auto_increment_start) {
  return update_table_def(name, [&](TableDef* def) {
    def->auto_increment_start = auto_increment_start;
    return tidesdb::Status::OK();
  });
}

tidesdb::Status dictionary_reserve_index_cfs(size_t count, std::vector<uint64_t>* ids) {
  return dictionary_reserve_index_cfs(count, column_family_options(), {}, ids);
}

tidesdb::Status dictionary_reserve_index_cfs(size_t count, const tidesdb::ColumnFamilyOptions& options,
                                             const std::vector<size_t>& filter_prefixes,
                                             std::vector<uint64_t>* ids) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  uint64_t first = 0;
  tidesdb::Status s = allocate_ids(txn.get(), count, &first);
  if (s.ok()) s = txn->Commit();
  if (!s.ok()) return s;
  ids->clear();
  for (size_t i = 0; i < count; i++) ids->push_back(first + i);
  s = create_index_cfs(*ids, options, filter_prefixes);
  if (!s.ok()) drop_index_cfs(*ids);
  return s;
}

tidesdb::Status dictionary_replace_indexes(const std::string& name, const std::vector<uint64_t>& index_ids,
                                           const std::string& frm_version,
                                           const std::vector<uint64_t>& dropped,
                                           const std::vector<ForeignKeyDef>* foreign_keys) {
  std::lock_guard<std::mutex> guard(ddl_mutex);
  auto txn = begin_ddl_transaction();
  TableDef def;
  tidesdb::Status s = lock_table_def(txn.get(), name, &def);
  if (!s.ok()) return s;
  def.index_ids = index_ids;
  def.frm_version = frm_version;
  if (foreign_keys != nullptr) s = replace_foreign_keys(txn.get(), name, *foreign_keys, &def);
  if (s.ok()) s = txn->Put(dictionary_cf, table_key(name), encode_table_def(def));
  if (s.ok()) s = txn->Delete(dictionary_cf, stats_key(def.table_id));
  if (s.ok()) s = txn->Commit();
  if (!s.ok()) return s;
  crash_point("alter_indexes_after_commit");
  if (foreign_keys != nullptr) fk_generation.fetch_add(1);
  drop_index_cfs(dropped);
  return tidesdb::Status::OK();
}

void dictionary_drop_index_cfs(const std::vector<uint64_t>& ids) { drop_index_cfs(ids); }

tidesdb::Status dictionary_set_frm_version(const std::string& name, const std::string& frm_version) {
  return update_table_def(name, [&](TableDef* def) {
    def->frm_version = frm_version;
    return tidesdb::Status::OK();
  });
}

tidesdb::Status dictionary_set_schema(const std::string& name, const TableDef& def,
                                      const std::string& frm_version) {
  tidesdb::Status s = update_table_def(name, [&](TableDef* current) {
    if (current->table_id != def.table_id)
      return tidesdb::Status::InvalidArgument("the table changed meanwhile", name);
    current->schema_version = def.schema_version;
    current->old_versions = def.old_versions;
    current->added_columns = def.added_columns;
    current->frm_version = frm_version;
    return tidesdb::Status::OK();
  });
  if (s.ok()) crash_point("alter_columns_after_commit");
  return s;
}

std::vector<std::string> dictionary_table_names(const std::string& prefix) {
  std::vector<std::string> names;
  std::string start = table_key(prefix);
  auto it = base_db()->NewIterator(tidesdb::ReadOptions(), dictionary_cf);
  for (it->Seek(start); it->Valid(); it->Next()) {
    tidesdb::Slice k = it->key();
    if (k.size() < start.size() || memcmp(k.data(), start.data(), start.size()) != 0) break;
    names.emplace_back(k.data() + 1, k.size() - 1);
  }
  return names;
}

tidesdb::Status dictionary_save_stats(uint64_t table_id, const TableStats& stats) {
  std::string v;
  put_varint(&v, kTableStatsVersion);
  put_varint(&v, stats.rows);
  put_varint(&v, stats.rec_per_key.size());
  for (const auto& key : stats.rec_per_key) {
    put_varint(&v, key.size());
    for (uint64_t n : key) put_varint(&v, n);
  }
  tidesdb::WriteBatch batch;
  batch.Put(dictionary_cf, stats_key(table_id), v);
  return transaction_db()->Write(tidesdb::WriteOptions(), &batch);
}

tidesdb::Status dictionary_load_stats(uint64_t table_id, TableStats* stats) {
  std::string value;
  tidesdb::Status s = base_db()->Get(tidesdb::ReadOptions(), dictionary_cf, stats_key(table_id), &value);
  if (!s.ok()) return s;
  std::string_view v = value;
  uint64_t version, keys;
  if (!get_varint(&v, &version))
    return tidesdb::Status::Corruption("dictionary: malformed statistics record");
  if (version > kTableStatsVersion)
    return tidesdb::Status::NotSupported("the statistics have format version " + std::to_string(version) +
                                         ", written by a newer TideSQL; this build reads versions up to " +
                                         std::to_string(kTableStatsVersion) +
                                         " (ANALYZE TABLE rewrites them)");
  if (!get_varint(&v, &stats->rows) || !get_varint(&v, &keys) || keys > 65536)
    return tidesdb::Status::Corruption("dictionary: malformed statistics record");
  stats->rec_per_key.resize(keys);
  for (auto& key : stats->rec_per_key) {
    uint64_t parts;
    if (!get_varint(&v, &parts) || parts > 4096)
      return tidesdb::Status::Corruption("dictionary: malformed statistics record");
    key.resize(parts);
    for (auto& n : key)
      if (!get_varint(&v, &n)) return tidesdb::Status::Corruption("dictionary: malformed statistics record");
  }
  return tidesdb::Status::OK();
}

}  // namespace tidesql
