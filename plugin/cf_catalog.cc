#include "cf_catalog.h"

#include <sql_class.h>
#include <sql_table.h>
#include <table.h>

#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "dictionary.h"
#include "engine.h"

namespace tidesql {
namespace {

// Key names per table id, with the .frm version the dictionary recorded and the .frm's
// modification time they were read at: an in-place ALTER (RENAME, ADD or DROP INDEX) keeps
// the table id, rewrites the .frm and records its new version (the modification time alone
// misses two ALTERs within the file system's time granularity). Bounded by forgetting the
// ids a full listing no longer finds.
struct KeyNames {
  std::string frm_version;
  int64_t frm_mtime_ns = 0;
  std::vector<std::string> names;
};
std::mutex key_names_mutex;
std::unordered_map<uint64_t, KeyNames> key_names_by_table;

// Modification time of the .frm of the dictionary table `file_path` ("db/t", the
// server's file names, relative to the data directory, which is the server's working
// directory); 0 if it cannot be read.
int64_t frm_mtime_ns(const std::string& file_path) {
  struct stat st;
  if (stat((file_path + ".frm").c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Swallows the errors of reading a .frm (a table dropped meanwhile, a name the server
// cannot open): the views then show key numbers instead, and the statement succeeds.
class QuietErrors : public Internal_error_handler {
 public:
  bool handle_condition(THD*, uint, const char*, Sql_condition::enum_warning_level*, const char*,
                        Sql_condition**) override {
    return true;
  }
};

std::string decoded(const std::string& file_name) {
  char buffer[NAME_LEN * 2 + 1];
  uint length = filename_to_tablename(file_name.c_str(), buffer, sizeof(buffer), true);
  return std::string(buffer, length);
}

// The key names in the .frm of db/table (SQL names), or nothing if it cannot be read.
std::vector<std::string> read_key_names(THD* thd, const std::string& db, const std::string& table) {
  std::vector<std::string> names;
  char key[NAME_LEN * 2 + 2];
  size_t db_len = std::min<size_t>(db.size(), NAME_LEN), table_len = std::min<size_t>(table.size(), NAME_LEN);
  memcpy(key, db.data(), db_len);
  key[db_len] = '\0';
  memcpy(key + db_len + 1, table.data(), table_len);
  key[db_len + 1 + table_len] = '\0';
  std::string db_z(db, 0, db_len), table_z(table, 0, table_len);
  TABLE_SHARE* share = alloc_table_share(db_z.c_str(), table_z.c_str(), key, db_len + table_len + 2);
  if (share == nullptr) return names;
  QuietErrors quiet;
  thd->push_internal_handler(&quiet);
  if (open_table_def(thd, share, GTS_TABLE) == OPEN_FRM_OK) {
    for (uint i = 0; i < share->keys; i++)
      names.emplace_back(share->key_info[i].name.str, share->key_info[i].name.length);
  }
  thd->pop_internal_handler();
  free_table_share(share);
  return names;
}

std::vector<std::string> key_names(THD* thd, const TableDef& def, const std::string& file_path,
                                   const std::string& db, const std::string& table) {
  const int64_t mtime = frm_mtime_ns(file_path);
  {
    std::lock_guard<std::mutex> guard(key_names_mutex);
    auto it = key_names_by_table.find(def.table_id);
    if (it != key_names_by_table.end() && it->second.frm_version == def.frm_version &&
        it->second.frm_mtime_ns == mtime && mtime != 0)
      return it->second.names;
  }
  std::vector<std::string> names = read_key_names(thd, db, table);
  if (!names.empty()) {
    std::lock_guard<std::mutex> guard(key_names_mutex);
    key_names_by_table[def.table_id] = KeyNames{def.frm_version, mtime, names};
  }
  return names;
}

}  // namespace

std::string ColumnFamilyOwner::table_label() const {
  if (table.empty()) return cf_name;
  std::string label = database + "." + table;
  if (!partition.empty()) label += " PARTITION " + partition;
  return label;
}

std::vector<ColumnFamilyOwner> column_family_owners(THD* thd) {
  std::vector<ColumnFamilyOwner> owners;
  tidesdb::DB* db = base_db();
  if (db == nullptr) return owners;
  std::map<std::string, uint32_t> unowned;  // name -> id, until a table claims it
  for (const std::string& name : db->ListColumnFamilies()) {
    if (tidesdb::ColumnFamilyHandle* cf = db->GetColumnFamily(name)) unowned[name] = cf->id();
  }
  std::vector<uint64_t> live_tables;
  for (const std::string& name : dictionary_table_names("")) {
    TableDef def;
    if (!dictionary_load_table(name, &def).ok()) continue;
    live_tables.push_back(def.table_id);
    ColumnFamilyOwner base;
    base.temporary = def.temporary;
    // "db/table", "db/table#P#p0" (a partition, "#SP#" for a subpartition); temporary
    // tables are absolute paths in tmpdir, shown as they are.
    size_t slash = name.rfind('/');
    std::string file_table = slash == std::string::npos ? name : name.substr(slash + 1);
    base.database = def.temporary || slash == std::string::npos ? "" : decoded(name.substr(0, slash));
    size_t part = file_table.find("#P#");
    if (part == std::string::npos) part = file_table.find("#p#");
    if (part != std::string::npos) {
      base.partition = decoded(file_table.substr(part + 3));
      file_table.resize(part);
    }
    base.table = def.temporary ? name : decoded(file_table);
    std::vector<std::string> keys;
    if (!def.temporary && thd != nullptr && slash != std::string::npos) {
      keys = key_names(thd, def, name.substr(0, slash + 1) + file_table, base.database, base.table);
    }
    for (size_t i = 0; i < def.index_ids.size(); i++) {
      ColumnFamilyOwner owner = base;
      owner.cf_name = index_cf_name(def.index_ids[i]);
      auto it = unowned.find(owner.cf_name);
      if (it == unowned.end()) continue;
      owner.cf_id = it->second;
      unowned.erase(it);
      if (def.hidden_pk && i + 1 == def.index_ids.size())
        owner.index = "(hidden primary key)";
      else if (i < keys.size())
        owner.index = keys[i];
      else
        owner.index = "key #" + std::to_string(i + 1);
      owners.push_back(std::move(owner));
    }
    if (def.blob_id != 0) {
      ColumnFamilyOwner owner = base;
      owner.cf_name = index_cf_name(def.blob_id);
      auto it = unowned.find(owner.cf_name);
      if (it != unowned.end()) {
        owner.cf_id = it->second;
        unowned.erase(it);
        owner.index = "(off-row values)";
        owners.push_back(std::move(owner));
      }
    }
  }
  std::stable_sort(owners.begin(), owners.end(), [](const ColumnFamilyOwner& a, const ColumnFamilyOwner& b) {
    return std::tie(a.database, a.table, a.partition) < std::tie(b.database, b.table, b.partition);
  });
  for (const auto& [name, id] : unowned) {
    ColumnFamilyOwner owner;
    owner.cf_name = name;
    owner.cf_id = id;
    owners.push_back(std::move(owner));
  }
  {
    std::sort(live_tables.begin(), live_tables.end());
    std::lock_guard<std::mutex> guard(key_names_mutex);
    for (auto it = key_names_by_table.begin(); it != key_names_by_table.end();) {
      if (std::binary_search(live_tables.begin(), live_tables.end(), it->first))
        ++it;
      else
        it = key_names_by_table.erase(it);
    }
  }
  return owners;
}

ColumnFamilyOwners column_family_owners_by_id(THD* thd) {
  ColumnFamilyOwners owners;
  for (ColumnFamilyOwner& owner : column_family_owners(thd)) owners[owner.cf_id] = std::move(owner);
  return owners;
}

ColumnFamilyOwner column_family_owner(const ColumnFamilyOwners& owners, uint32_t cf_id) {
  auto it = owners.find(cf_id);
  if (it != owners.end()) return it->second;
  ColumnFamilyOwner none;
  none.cf_name = "cf " + std::to_string(cf_id);
  none.cf_id = cf_id;
  return none;
}

ColumnFamilyOwner column_family_owner(THD* thd, uint32_t cf_id) {
  return column_family_owner(column_family_owners_by_id(thd), cf_id);
}

std::string hex_bytes(const std::string& bytes, size_t max_bytes) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  size_t n = std::min(bytes.size(), max_bytes);
  out.reserve(n * 2 + 3);
  for (size_t i = 0; i < n; i++) {
    auto c = static_cast<unsigned char>(bytes[i]);
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  if (n < bytes.size()) out += "...";
  return out;
}

}  // namespace tidesql
