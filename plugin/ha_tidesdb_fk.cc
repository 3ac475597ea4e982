// Foreign keys: definitions from CREATE / ALTER TABLE, what the server asks about them
// (SHOW CREATE TABLE, INFORMATION_SCHEMA, prelocking, ALTER, TRUNCATE), and the checks and
// cascading actions of row operations (foreign_keys.h has the model).
#include "foreign_keys.h"

#include <mysqld.h>
#include <mysqld_error.h>
#include <sql_class.h>
#include <sql_table.h>
#include <table_cache.h>

#include <algorithm>

#include "ha_tidesdb.h"
#include "row_codec.h"

namespace tidesql {
namespace {

bool checks_off(THD* thd) { return (thd->variables.option_bits & OPTION_NO_FOREIGN_KEY_CHECKS) != 0; }

std::string quoted(const std::string& name) {
  std::string q = "`";
  for (char c : name) {
    q.push_back(c);
    if (c == '`') q.push_back('`');
  }
  q.push_back('`');
  return q;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out = "(";
  for (size_t i = 0; i < names.size(); i++) {
    if (i > 0) out += ", ";
    out += quoted(names[i]);
  }
  return out + ")";
}

const char* action_name(uint8_t option) {
  switch (option) {
    case FK_OPTION_NO_ACTION:
      return "NO ACTION";
    case FK_OPTION_CASCADE:
      return "CASCADE";
    case FK_OPTION_SET_NULL:
      return "SET NULL";
    case FK_OPTION_SET_DEFAULT:
      return "SET DEFAULT";
    default:
      return "RESTRICT";
  }
}

bool modifies_child(uint8_t option) { return option >= FK_OPTION_CASCADE; }

// 1-based number of the column called `name` among `fields`, 0 if none.
uint field_number(Field** fields, const std::string& name) {
  for (uint i = 0; fields[i] != nullptr; i++)
    if (my_strcasecmp(system_charset_info, fields[i]->field_name.str, name.c_str()) == 0) return i + 1;
  return 0;
}

// The index of `keys` whose leading parts are the whole columns `fieldnrs`, in order: the
// primary key if it is one, else a UNIQUE key of those parts alone, else any. MAX_KEY if
// none.
uint find_index(const KEY* keys, uint count, uint primary, const std::vector<uint>& fieldnrs) {
  uint best = MAX_KEY;
  int best_rank = 0;
  for (uint k = 0; k < count; k++) {
    const KEY& key = keys[k];
    if (key.algorithm == HA_KEY_ALG_LONG_HASH || key.user_defined_key_parts < fieldnrs.size()) continue;
    bool leading = true;
    for (uint i = 0; i < fieldnrs.size() && leading; i++) {
      const KEY_PART_INFO& kp = key.key_part[i];
      leading =
          kp.fieldnr == fieldnrs[i] && kp.length == kp.field->key_length() && !(kp.field->flags & BLOB_FLAG);
    }
    if (!leading) continue;
    const bool alone = key.user_defined_key_parts == fieldnrs.size();
    const int rank = k == primary ? (alone ? 4 : 2) : (key.flags & HA_NOSAME) && alone ? 3 : 1;
    if (rank > best_rank) {
      best = k;
      best_rank = rank;
    }
  }
  return best;
}

// Whether a foreign key column and its referenced column hold values encoded alike in
// keys (key_codec.h): the same type, signedness and collation; strings may differ in
// length (and CHAR / VARCHAR), as InnoDB allows.
bool compatible(const Field* a, const Field* b) {
  if ((a->flags & BLOB_FLAG) || (b->flags & BLOB_FLAG)) return false;
  const enum_field_types ta = a->real_type(), tb = b->real_type();
  const bool a_text = ta == MYSQL_TYPE_VARCHAR || ta == MYSQL_TYPE_STRING;
  const bool b_text = tb == MYSQL_TYPE_VARCHAR || tb == MYSQL_TYPE_STRING;
  if (a_text && b_text) {
    if (a->charset() != b->charset()) return false;
    if (a->charset() == &my_charset_bin)
      return ta == tb && (ta == MYSQL_TYPE_VARCHAR || a->pack_length() == b->pack_length());
    return true;
  }
  if (ta != tb || a->pack_length() != b->pack_length() || a->decimals() != b->decimals()) return false;
  if ((a->flags & UNSIGNED_FLAG) != (b->flags & UNSIGNED_FLAG)) return false;
  return a->charset() == b->charset();
}

// Keeps the errors of a lookup that may find nothing out of the statement's diagnostics.
class QuietErrors : public Internal_error_handler {
 public:
  bool handle_condition(THD*, uint, const char*, Sql_condition::enum_warning_level* level, const char*,
                        Sql_condition**) override {
    return *level == Sql_condition::WARN_LEVEL_ERROR;
  }
};

// The definition of table db.table from the server's table definition cache, or null.
TABLE_SHARE* acquire_share(THD* thd, const std::string& db, const std::string& table) {
  TABLE_LIST tl;
  LEX_CSTRING d{db.c_str(), db.size()}, t{table.c_str(), table.size()};
  tl.init_one_table(&d, &t, &t, TL_READ);
  QuietErrors quiet;
  thd->push_internal_handler(&quiet);
  TABLE_SHARE* share = tdc_acquire_share(thd, &tl, GTS_TABLE);
  thd->pop_internal_handler();
  return share;
}

class ShareGuard {
 public:
  explicit ShareGuard(TABLE_SHARE* share) : share_(share) {}
  ~ShareGuard() {
    if (share_ != nullptr) tdc_release_share(share_);
  }
  ShareGuard(const ShareGuard&) = delete;
  ShareGuard& operator=(const ShareGuard&) = delete;

 private:
  TABLE_SHARE* share_;
};

LEX_CSTRING* lex_string(THD* thd, const std::string& s) {
  return thd_make_lex_string(thd, nullptr, s.c_str(), s.size(), 1);
}

}  // namespace

std::string dictionary_name_of(std::string db, std::string table) {
  if (lower_case_table_names) {
    my_casedn_str(files_charset_info, db.data());
    my_casedn_str(files_charset_info, table.data());
  }
  char path[FN_REFLEN + 1];
  build_table_filename(path, sizeof(path) - 1, db.c_str(), table.c_str(), "", 0);
  return dictionary_name(path);
}

void sql_names(const std::string& name, std::string* db, std::string* table) {
  size_t slash = name.find('/');
  char buf[NAME_LEN + 1];
  filename_to_tablename(name.substr(0, slash).c_str(), buf, sizeof(buf), true);
  *db = buf;
  filename_to_tablename(name.substr(slash + 1).c_str(), buf, sizeof(buf), true);
  *table = buf;
}

bool is_alter_temporary(const std::string& name) {
  return name.find("/" + std::string(tmp_file_prefix)) != std::string::npos;
}

std::string foreign_key_clause(const ForeignKeyDef& fk, const std::string& child_db) {
  std::string out =
      "CONSTRAINT " + quoted(fk.name) + " FOREIGN KEY " + quoted_list(fk.columns) + " REFERENCES ";
  if (fk.ref_db != child_db) out += quoted(fk.ref_db) + ".";
  out += quoted(fk.ref_table) + " " + quoted_list(fk.ref_columns);
  if (fk.on_delete != FK_OPTION_UNDEF && fk.on_delete != FK_OPTION_RESTRICT)
    out += std::string(" ON DELETE ") + action_name(fk.on_delete);
  if (fk.on_update != FK_OPTION_UNDEF && fk.on_update != FK_OPTION_RESTRICT)
    out += std::string(" ON UPDATE ") + action_name(fk.on_update);
  return out;
}

ForeignKeyState::~ForeignKeyState() {
  drop_clones();
  if (mem_root_ready) free_root(&mem_root, MYF(0));
}

void ForeignKeyState::drop_clones() {
  for (auto& [child, h] : clones) {
    h->ha_close();
    delete h;
  }
  clones.clear();
  if (mem_root_ready) free_root(&mem_root, MYF(MY_MARK_BLOCKS_FREE));
}

// --- definitions (CREATE / ALTER TABLE) -------------------------------------------------------

int ha_tidesdb::foreign_keys_for_create(TABLE* form, HA_CREATE_INFO* create_info, const std::string& dict,
                                        std::vector<ForeignKeyDef>* out) {
  out->clear();
  if (create_info->alter_info == nullptr) return 0;
  THD* thd = ha_thd();
  // A copying ALTER TABLE creates the new table under a temporary name; the foreign keys
  // it keeps are handed over flagged `old`, and its table is still the original.
  const enum_sql_command command = static_cast<enum_sql_command>(thd_sql_command(thd));
  const bool altering =
      (command == SQLCOM_ALTER_TABLE || command == SQLCOM_CREATE_INDEX || command == SQLCOM_DROP_INDEX) &&
      dict.find("/" + std::string(tmp_file_prefix)) != std::string::npos && thd->lex->query_tables != nullptr;
  std::string table_name(form->s->table_name.str, form->s->table_name.length);
  std::string original = dict;
  if (altering) {
    const TABLE_LIST* tl = thd->lex->query_tables;
    table_name.assign(tl->table_name.str, tl->table_name.length);
    original = dictionary_name_of(std::string(tl->db.str, tl->db.length), table_name);
  }
  return foreign_keys_for(form, create_info->alter_info,
                          (create_info->options & HA_LEX_CREATE_TMP_TABLE) != 0, dict, original, table_name,
                          altering, out);
}

int ha_tidesdb::foreign_keys_for(TABLE* form, Alter_info* alter_info, bool temporary, const std::string& dict,
                                 const std::string& original, const std::string& table_name, bool altering,
                                 std::vector<ForeignKeyDef>* out) {
  out->clear();
  THD* thd = ha_thd();
  const bool checks = !checks_off(thd);
  const std::string db(form->s->db.str, form->s->db.length);
  const char* operation = altering ? "Alter table" : "Create table";
  // The index of the table being altered that served the key on `columns` (ER_DROP_INDEX_FK).
  auto old_index_name = [&](const std::vector<std::string>& columns, const std::string& otherwise) {
    const TABLE* old_table = altering ? thd->lex->query_tables->table : nullptr;
    if (old_table == nullptr) return otherwise.c_str();
    std::vector<uint> old_fields;
    for (const std::string& c : columns) old_fields.push_back(field_number(old_table->field, c));
    uint k = find_index(old_table->key_info, old_table->s->keys, old_table->s->primary_key, old_fields);
    return k != MAX_KEY ? old_table->key_info[k].name.str : otherwise.c_str();
  };
  auto refuse = [&](const ForeignKeyDef& fk, const std::string& why) {
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, HA_ERR_CANNOT_ADD_FOREIGN,
                        "%s %s.%s with foreign key %s constraint failed. %s", operation, quoted(db).c_str(),
                        quoted(table_name).c_str(), quoted(fk.name).c_str(), why.c_str());
    return HA_ERR_CANNOT_ADD_FOREIGN;
  };

  // Generated names continue the table's <table>_ibfk_<n> series, as InnoDB's.
  const std::string generated_prefix = table_name + "_ibfk_";
  uint next_number = 1;
  for (const Key& key : alter_info->key_list) {
    if (key.type != Key::FOREIGN_KEY) continue;
    const auto& fk = static_cast<const Foreign_key&>(key);
    if (fk.constraint_name.str == nullptr) continue;
    std::string name(fk.constraint_name.str, fk.constraint_name.length);
    if (name.compare(0, generated_prefix.size(), generated_prefix) == 0)
      next_number = std::max<uint>(next_number, atoi(name.c_str() + generated_prefix.size()) + 1);
  }

  for (const Key& key : alter_info->key_list) {
    if (key.type != Key::FOREIGN_KEY) continue;
    const auto& spec = static_cast<const Foreign_key&>(key);
    ForeignKeyDef fk;
    if (spec.constraint_name.str != nullptr && spec.constraint_name.length > 0)
      fk.name.assign(spec.constraint_name.str, spec.constraint_name.length);
    else
      fk.name = generated_prefix + std::to_string(next_number++);
    for (const Key_part_spec& part : const_cast<Foreign_key&>(spec).columns)
      fk.columns.emplace_back(part.field_name.str, part.field_name.length);
    for (const Key_part_spec& part : const_cast<Foreign_key&>(spec).ref_columns)
      fk.ref_columns.emplace_back(part.field_name.str, part.field_name.length);
    fk.ref_db = spec.ref_db.str != nullptr ? std::string(spec.ref_db.str, spec.ref_db.length) : db;
    fk.ref_table.assign(spec.ref_table.str, spec.ref_table.length);
    if (lower_case_table_names == 1) {
      my_casedn_str(files_charset_info, fk.ref_db.data());
      my_casedn_str(files_charset_info, fk.ref_table.data());
    }
    fk.ref_name = dictionary_name_of(fk.ref_db, fk.ref_table);
    fk.on_delete = static_cast<uint8_t>(spec.delete_opt);
    fk.on_update = static_cast<uint8_t>(spec.update_opt);
    for (const ForeignKeyDef& other : *out)
      if (my_strcasecmp(system_charset_info, other.name.c_str(), fk.name.c_str()) == 0)
        return refuse(fk, "A foreign key of that name exists.");
    if (temporary) return refuse(fk, "Temporary tables can't have foreign key constraints.");
    if (fk.columns.size() != fk.ref_columns.size() || fk.columns.empty())
      return refuse(fk, "The foreign key and the referenced key have different numbers of columns.");

    // This table's columns, and an index that starts with them.
    std::vector<uint> child_fields;
    for (const std::string& c : fk.columns) {
      uint nr = field_number(form->field, c);
      if (nr == 0) return refuse(fk, "Column " + quoted(c) + " was not found.");
      if (!form->field[nr - 1]->stored_in_db() || form->field[nr - 1]->vcol_info != nullptr)
        return refuse(fk, "Column " + quoted(c) + " is a generated column.");
      child_fields.push_back(nr);
    }
    if (find_index(form->key_info, form->s->keys, form->s->primary_key, child_fields) == MAX_KEY) {
      if (key.old) {
        my_error(ER_DROP_INDEX_FK, MYF(0), old_index_name(fk.columns, fk.name));
        return HA_ERR_TIDESDB_REPORTED;
      }
      return refuse(fk, "There is no index on the foreign key columns.");
    }
    if (modifies_child(fk.on_delete) || modifies_child(fk.on_update)) {
      // Cascading actions change rows through a second handler, from stored values:
      // indexed virtual columns would need computing there.
      for (uint k = 0; k < form->s->keys; k++)
        for (uint p = 0; p < form->key_info[k].user_defined_key_parts; p++)
          if (!form->key_info[k].key_part[p].field->stored_in_db())
            return refuse(fk, "Cascading actions on a table with indexed virtual columns are not supported.");
    }
    if (fk.on_delete == FK_OPTION_SET_NULL || fk.on_update == FK_OPTION_SET_NULL) {
      for (uint nr : child_fields)
        if (!form->field[nr - 1]->real_maybe_null())
          return refuse(fk, "You have defined a SET NULL condition but column " +
                                quoted(form->field[nr - 1]->field_name.str) + " is defined as NOT NULL.");
    }
    if (fk.on_delete == FK_OPTION_SET_DEFAULT || fk.on_update == FK_OPTION_SET_DEFAULT) {
      for (uint nr : child_fields)
        if (form->field[nr - 1]->default_value != nullptr)
          return refuse(fk, "SET DEFAULT needs constant defaults; column " +
                                quoted(form->field[nr - 1]->field_name.str) + " has an expression default.");
    }

    // The parent: this table itself, or another TidesDB table.
    const bool self = fk.ref_name == dict || fk.ref_name == original;
    TABLE_SHARE* parent = nullptr;
    TABLE_SHARE* acquired = nullptr;
    if (self) {
      parent = form->s;
    } else {
      TableDef parent_def;
      tidesdb::Status s = dictionary_load_table(fk.ref_name, &parent_def);
      if (s.ok()) parent = acquired = acquire_share(thd, fk.ref_db, fk.ref_table);
      if (parent == nullptr) {
        if (!checks) {
          out->push_back(std::move(fk));
          continue;
        }
        return refuse(fk, "Referenced table " + quoted(fk.ref_db) + "." + quoted(fk.ref_table) +
                              " not found in the TidesDB data dictionary.");
      }
    }
    ShareGuard guard(acquired);
    if (parent->db_type() != ht) return refuse(fk, "The referenced table is not a TidesDB table.");
    if (parent->partition_info_str_len > 0) return refuse(fk, "The referenced table is partitioned.");
    Field** parent_fields = self ? form->field : parent->field;
    std::vector<uint> ref_fields;
    for (size_t i = 0; i < fk.ref_columns.size(); i++) {
      uint nr = field_number(parent_fields, fk.ref_columns[i]);
      if (nr == 0) return refuse(fk, "Column " + quoted(fk.ref_columns[i]) + " was not found.");
      if (!compatible(form->field[child_fields[i] - 1], parent_fields[nr - 1]))
        return refuse(fk, "Field type or character set for column " + quoted(fk.columns[i]) +
                              " does not match referenced column " + quoted(fk.ref_columns[i]) + ".");
      ref_fields.push_back(nr);
    }
    const KEY* keys = self ? form->key_info : parent->key_info;
    if (find_index(keys, parent->keys, parent->primary_key, ref_fields) == MAX_KEY)
      return refuse(fk,
                    "There is no index in the referenced table where the referenced columns appear as the "
                    "first columns.");
    out->push_back(std::move(fk));
  }

  // A copying ALTER of a parent: its children still need an index on their columns.
  if (altering && checks) {
    for (const std::string& child : dictionary_children(original)) {
      TableDef child_def;
      if (!dictionary_load_table(child, &child_def).ok()) continue;
      for (const ForeignKeyDef& fk : child == original ? *out : child_def.foreign_keys) {
        if (fk.ref_name != original) continue;
        std::vector<uint> ref_fields;
        for (const std::string& c : fk.ref_columns) ref_fields.push_back(field_number(form->field, c));
        if (std::find(ref_fields.begin(), ref_fields.end(), 0u) != ref_fields.end() ||
            find_index(form->key_info, form->s->keys, form->s->primary_key, ref_fields) == MAX_KEY) {
          my_error(ER_DROP_INDEX_FK, MYF(0), old_index_name(fk.ref_columns, fk.name));
          return HA_ERR_TIDESDB_REPORTED;
        }
      }
    }
  }
  return 0;
}

namespace {

// The column lists the foreign keys of table `name` (its own, and its children's that
// reference it) need an index on.
std::vector<std::vector<std::string>> foreign_key_column_lists(const std::vector<ForeignKeyDef>& own,
                                                               const std::string& name) {
  std::vector<std::vector<std::string>> lists;
  for (const ForeignKeyDef& fk : own) lists.push_back(fk.columns);
  for (const std::string& child : dictionary_children(name)) {
    TableDef def;
    if (!dictionary_load_table(child, &def).ok()) continue;
    for (const ForeignKeyDef& fk : def.foreign_keys)
      if (fk.ref_name == name) lists.push_back(fk.ref_columns);
  }
  return lists;
}

}  // namespace

const char* ha_tidesdb::index_needed_by_foreign_key(const TABLE* altered_table,
                                                    const Alter_inplace_info* info) {
  refresh_foreign_keys();
  if (fk_ == nullptr || (fk_->fks.empty() && !fk_->has_children)) return nullptr;
  const auto renames = foreign_key_column_renames(info);
  for (const std::vector<std::string>& columns : foreign_key_column_lists(fk_->fks, share_->name)) {
    std::vector<uint> fieldnrs;
    for (std::string c : columns) {
      for (const auto& [from, to] : renames)
        if (my_strcasecmp(system_charset_info, from.c_str(), c.c_str()) == 0) c = to;
      fieldnrs.push_back(field_number(altered_table->field, c));
    }
    if (std::find(fieldnrs.begin(), fieldnrs.end(), 0u) != fieldnrs.end() ||
        find_index(altered_table->key_info, altered_table->s->keys, altered_table->s->primary_key,
                   fieldnrs) == MAX_KEY)
      return info->index_drop_count > 0 ? info->index_drop_buffer[0]->name.str : columns[0].c_str();
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> ha_tidesdb::foreign_key_column_renames(
    const Alter_inplace_info* info) {
  std::vector<std::pair<std::string, std::string>> renames;
  refresh_foreign_keys();
  if (fk_ == nullptr || (fk_->fks.empty() && !fk_->has_children) ||
      !(info->handler_flags & ALTER_COLUMN_NAME))
    return renames;
  const auto lists = foreign_key_column_lists(fk_->fks, share_->name);
  for (const Create_field& field : const_cast<Alter_info*>(info->alter_info)->create_list) {
    if (field.field == nullptr ||
        my_strcasecmp(system_charset_info, field.field->field_name.str, field.field_name.str) == 0)
      continue;
    bool named = false;
    for (const auto& columns : lists)
      for (const std::string& c : columns)
        named |= my_strcasecmp(system_charset_info, c.c_str(), field.field->field_name.str) == 0;
    if (named) renames.emplace_back(field.field->field_name.str, field.field_name.str);
  }
  return renames;
}

// --- what the server asks ----------------------------------------------------------------------

void ha_tidesdb::refresh_foreign_keys() const {
  const uint64_t generation = foreign_key_generation();
  if (fk_ == nullptr || share_ == nullptr || fk_->generation == generation) return;
  TableDef def;
  fk_->fks.clear();
  if (dictionary_load_table(share_->name, &def).ok()) fk_->fks = def.foreign_keys;
  fk_->has_children = !dictionary_children(share_->name).empty();
  fk_->generation = generation;
}

bool ha_tidesdb::referenced_by_foreign_key() const noexcept {
  refresh_foreign_keys();
  return fk_ != nullptr && fk_->has_children;
}

bool ha_tidesdb::can_switch_engines() {
  refresh_foreign_keys();
  return fk_ == nullptr || (fk_->fks.empty() && !fk_->has_children);
}

char* ha_tidesdb::get_foreign_key_create_info() {
  refresh_foreign_keys();
  if (fk_ == nullptr || fk_->fks.empty()) return nullptr;
  std::string text;
  const std::string db(table->s->db.str, table->s->db.length);
  for (const ForeignKeyDef& fk : fk_->fks) text += ",\n  " + foreign_key_clause(fk, db);
  char* out = static_cast<char*>(my_malloc(PSI_NOT_INSTRUMENTED, text.size() + 1, MYF(0)));
  if (out != nullptr) memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

void ha_tidesdb::free_foreign_key_create_info(char* str) { my_free(str); }

namespace {

// One FOREIGN_KEY_INFO; `parent` (may be null) is the referenced table's definition.
FOREIGN_KEY_INFO* key_info_of(THD* thd, const ForeignKeyDef& fk, const std::string& child_db,
                              const std::string& child_table, TABLE_SHARE* child, TABLE_SHARE* parent) {
  // Placement in memory of the statement (FOREIGN_KEY_INFO has no MEM_ROOT operator new).
  auto* info = new (thd_alloc(thd, sizeof(FOREIGN_KEY_INFO))) FOREIGN_KEY_INFO();
  info->foreign_id = lex_string(thd, fk.name);
  info->foreign_db = lex_string(thd, child_db);
  info->foreign_table = lex_string(thd, child_table);
  info->referenced_db = lex_string(thd, fk.ref_db);
  info->referenced_table = lex_string(thd, fk.ref_table);
  // Not given means RESTRICT, as InnoDB reports it.
  auto method = [](uint8_t option) {
    return option == FK_OPTION_UNDEF ? FK_OPTION_RESTRICT : static_cast<enum_fk_option>(option);
  };
  info->update_method = method(fk.on_update);
  info->delete_method = method(fk.on_delete);
  info->referenced_key_name = nullptr;
  const unsigned n = static_cast<unsigned>(fk.columns.size());
  for (unsigned i = 0; i < n; i++) {
    info->foreign_fields.push_back(lex_string(thd, fk.columns[i]), thd->mem_root);
    info->referenced_fields.push_back(lex_string(thd, fk.ref_columns[i]), thd->mem_root);
    if (child != nullptr) {
      uint nr = field_number(child->field, fk.columns[i]);
      if (nr != 0 && child->field[nr - 1]->real_maybe_null()) info->set_nullable(thd, false, i, n);
    }
  }
  if (parent != nullptr) {
    std::vector<uint> ref_fields;
    for (unsigned i = 0; i < n; i++) {
      uint nr = field_number(parent->field, fk.ref_columns[i]);
      ref_fields.push_back(nr);
      if (nr != 0 && parent->field[nr - 1]->real_maybe_null()) info->set_nullable(thd, true, i, n);
    }
    uint k = find_index(parent->key_info, parent->keys, parent->primary_key, ref_fields);
    if (k != MAX_KEY)
      info->referenced_key_name =
          thd_make_lex_string(thd, nullptr, parent->key_info[k].name.str, parent->key_info[k].name.length, 1);
  }
  return info;
}

}  // namespace

int ha_tidesdb::get_foreign_key_list(THD* thd, List<FOREIGN_KEY_INFO>* list) {
  if (share_ == nullptr) return 0;
  TableDef def;
  if (!dictionary_load_table(share_->name, &def).ok()) return 0;
  const std::string db(table->s->db.str, table->s->db.length);
  const std::string name(table->s->table_name.str, table->s->table_name.length);
  for (const ForeignKeyDef& fk : def.foreign_keys) {
    const bool self = fk.ref_name == share_->name;
    TABLE_SHARE* parent = self ? table->s : acquire_share(thd, fk.ref_db, fk.ref_table);
    ShareGuard guard(self ? nullptr : parent);
    if (parent != nullptr && parent->db_type() != ht) parent = nullptr;
    list->push_back(key_info_of(thd, fk, db, name, table->s, parent), thd->mem_root);
  }
  return 0;
}

int ha_tidesdb::get_parent_foreign_key_list(THD* thd, List<FOREIGN_KEY_INFO>* list) {
  if (share_ == nullptr) return 0;
  for (const std::string& child : dictionary_children(share_->name)) {
    TableDef def;
    if (!dictionary_load_table(child, &def).ok()) continue;
    std::string child_db, child_table;
    sql_names(child, &child_db, &child_table);
    for (const ForeignKeyDef& fk : def.foreign_keys) {
      if (fk.ref_name != share_->name) continue;
      list->push_back(key_info_of(thd, fk, child_db, child_table, nullptr, table->s), thd->mem_root);
    }
  }
  return 0;
}

int ha_tidesdb::check_drop_referenced(const std::string& dict) {
  THD* thd = ha_thd();
  if (checks_off(thd)) return 0;
  const bool drop_database = thd_sql_command(thd) == SQLCOM_DROP_DB;
  const std::string db_prefix = dict.substr(0, dict.find('/') + 1);
  for (const std::string& child : dictionary_children(dict)) {
    if (child == dict || (drop_database && child.compare(0, db_prefix.size(), db_prefix) == 0)) continue;
    // A dictionary entry whose table the server does not have (a leftover of an
    // interrupted DDL) references nothing.
    std::string child_db, child_table;
    sql_names(child, &child_db, &child_table);
    TABLE_SHARE* share = acquire_share(thd, child_db, child_table);
    if (share == nullptr) continue;
    tdc_release_share(share);
    // The server's message, with no foreign key named (as InnoDB's).
    trx_context(thd)->fk_error.clear();
    return HA_ERR_ROW_IS_REFERENCED;
  }
  return 0;
}

// --- checks of row operations ------------------------------------------------------------------

namespace {

// Whether the columns `fieldnrs` of `table` hold the same bytes in rows a and b.
bool same_values(TABLE* table, const std::vector<uint>& fieldnrs, const uchar* a, const uchar* b) {
  for (uint nr : fieldnrs) {
    Field* f = table->field[nr - 1];
    const bool a_null = f->is_null_in_record(a), b_null = f->is_null_in_record(b);
    if (a_null != b_null) return false;
    if (a_null) continue;
    const my_ptrdiff_t offset = f->offset(table->record[0]);
    if (f->cmp_binary(a + offset, b + offset) != 0) return false;
  }
  return true;
}

bool any_null(TABLE* table, const std::vector<uint>& fieldnrs, const uchar* row) {
  for (uint nr : fieldnrs)
    if (table->field[nr - 1]->is_null_in_record(row)) return true;
  return false;
}

TABLE* open_table_named(THD* thd, handlerton* hton, const std::string& name) {
  for (TABLE* t = thd->open_tables; t != nullptr; t = t->next)
    if (t->s->db_type() == hton && t->file != nullptr && dictionary_name(t->s->normalized_path.str) == name)
      return t;
  return nullptr;
}

}  // namespace

int ha_tidesdb::resolve_foreign_keys() {
  THD* thd = ha_thd();
  // Once per statement: the links stay put while cascades walk them.
  if (fk_->resolved && fk_->resolved_for == thd->query_id) return 0;
  refresh_foreign_keys();
  fk_->parents.clear();
  fk_->children.clear();
  for (const ForeignKeyDef& fk : fk_->fks) {
    ParentLink& link = fk_->parents.emplace_back();
    link.def = fk;
    for (const std::string& c : fk.columns) link.fieldnrs.push_back(field_number(table->field, c));
    if (std::find(link.fieldnrs.begin(), link.fieldnrs.end(), 0u) != link.fieldnrs.end()) {
      fk_->parents.pop_back();  // a definition the .frm no longer matches: nothing to check
      continue;
    }
    const bool self = fk.ref_name == share_->name;
    TableDef parent_def;
    TABLE_SHARE* parent = nullptr;
    if (self) {
      parent = table->s;
      parent_def = share_->def;
    } else if (dictionary_load_table(fk.ref_name, &parent_def).ok()) {
      parent = acquire_share(thd, fk.ref_db, fk.ref_table);
    }
    ShareGuard guard(self ? nullptr : parent);
    if (parent == nullptr || parent->db_type() != ht) continue;
    std::vector<uint> ref_fields;
    for (const std::string& c : fk.ref_columns) ref_fields.push_back(field_number(parent->field, c));
    const KEY* keys = self ? table->key_info : parent->key_info;
    uint k = find_index(keys, parent->keys, parent->primary_key, ref_fields);
    if (k == MAX_KEY || std::find(ref_fields.begin(), ref_fields.end(), 0u) != ref_fields.end() ||
        k >= parent_def.index_ids.size())
      continue;
    link.cf = self ? share_->cfs[k] : index_column_family(parent_def.index_ids[k]);
    if (link.cf == nullptr) continue;
    link.point = keys[k].user_defined_key_parts == ref_fields.size() &&
                 (k == parent->primary_key || (keys[k].flags & HA_NOSAME));
    link.codec.init_reference(table, keys[k], link.fieldnrs);
    link.resolved = true;
  }
  if (fk_->has_children) {
    for (const std::string& child : dictionary_children(share_->name)) {
      TableDef child_def;
      if (!dictionary_load_table(child, &child_def).ok()) continue;
      for (const ForeignKeyDef& fk : child_def.foreign_keys) {
        if (fk.ref_name != share_->name) continue;
        ChildLink& link = fk_->children.emplace_back();
        link.def = fk;
        link.child_name = child;
        sql_names(child, &link.child_db, &link.child_sql);
        for (const std::string& c : fk.ref_columns)
          link.parent_fields.push_back(field_number(table->field, c));
        // The server opens a child only for cascading actions (TL_WRITE); for the others
        // it takes the metadata lock, and the child's definition comes from its share.
        const bool self = child == share_->name;
        link.child = self ? table : open_table_named(thd, ht, child);
        TABLE_SHARE* child_share =
            link.child != nullptr ? link.child->s : acquire_share(thd, link.child_db, link.child_sql);
        ShareGuard guard(link.child != nullptr ? nullptr : child_share);
        if (child_share == nullptr) {
          // No such table for the server: a leftover entry of an interrupted DDL.
          fk_->children.pop_back();
          continue;
        }
        if (child_share->db_type() != ht) continue;  // reported if a row needs it
        for (const std::string& c : fk.columns)
          link.child_fields.push_back(field_number(child_share->field, c));
        if (std::find(link.child_fields.begin(), link.child_fields.end(), 0u) != link.child_fields.end() ||
            std::find(link.parent_fields.begin(), link.parent_fields.end(), 0u) != link.parent_fields.end())
          continue;
        const KEY* keys = link.child != nullptr ? link.child->key_info : child_share->key_info;
        link.index = find_index(keys, child_share->keys, child_share->primary_key, link.child_fields);
        if (link.index == MAX_KEY || link.index >= child_def.index_ids.size()) continue;
        link.cf = self ? share_->cfs[link.index] : index_column_family(child_def.index_ids[link.index]);
        if (link.cf == nullptr) continue;
        link.codec.init_reference(table, keys[link.index], link.parent_fields);
        link.resolved = true;
      }
    }
  }
  fk_->resolved = true;
  fk_->resolved_for = thd->query_id;
  return 0;
}

int ha_tidesdb::foreign_key_violation(int error, const std::string& child_db, const std::string& child_table,
                                      const ForeignKeyDef& fk) {
  trx_context(ha_thd())->fk_error =
      quoted(child_db) + "." + quoted(child_table) + ", " + foreign_key_clause(fk, child_db);
  return error;
}

int ha_tidesdb::check_parents(const uchar* old_row, const uchar* new_row) {
  if (fk_ == nullptr) return 0;
  refresh_foreign_keys();
  THD* thd = ha_thd();
  if (fk_->fks.empty() || checks_off(thd)) return 0;
  resolve_foreign_keys();
  tidesdb::Transaction* t = txn();
  const std::string db(table->s->db.str, table->s->db.length);
  const std::string name(table->s->table_name.str, table->s->table_name.length);
  for (ParentLink& link : fk_->parents) {
    // A NULL in any column references nothing (MATCH SIMPLE).
    if (any_null(table, link.fieldnrs, new_row)) continue;
    if (old_row != nullptr && same_values(table, link.fieldnrs, old_row, new_row)) continue;
    if (!link.resolved || !link.codec.fits(new_row))
      return foreign_key_violation(HA_ERR_NO_REFERENCED_ROW, db, name, link.def);
    std::string prefix, value;
    link.codec.append_parts(new_row, link.codec.parts(), &prefix);
    if (link.point) {
      tidesdb::Status s = t->GetReferenced(link.cf, prefix, &value);
      if (s.ok()) continue;
      if (!s.IsNotFound()) return report(s, "foreign key check");
      return foreign_key_violation(HA_ERR_NO_REFERENCED_ROW, db, name, link.def);
    }
    // The referenced columns lead a longer key: the first entry that still exists.
    const std::string limit = prefix_successor(prefix);
    tidesdb::Slice lower(prefix), upper(limit);
    tidesdb::ReadOptions ro;
    ro.lower_bound = &lower;
    ro.upper_bound = limit.empty() ? nullptr : &upper;
    auto it = t->NewReferenceIterator(ro, link.cf);
    bool found = false;
    for (it->Seek(prefix); it->Valid() && !found; it->Next()) {
      tidesdb::Status s = t->GetReferenced(link.cf, it->key(), &value);
      if (s.ok())
        found = true;
      else if (!s.IsNotFound())
        return report(s, "foreign key check");
    }
    if (!it->status().ok()) return report(it->status(), "foreign key check");
    if (!found) return foreign_key_violation(HA_ERR_NO_REFERENCED_ROW, db, name, link.def);
  }
  return 0;
}

handler* ha_tidesdb::clone_for(TABLE* child) {
  for (auto& [t, h] : fk_->clones)
    if (t == child) return h;
  if (!fk_->mem_root_ready) {
    init_alloc_root(PSI_NOT_INSTRUMENTED, &fk_->mem_root, 4096, 0, MYF(0));
    fk_->mem_root_ready = true;
  }
  handler* h = child->file->clone(child->s->normalized_path.str, &fk_->mem_root);
  if (h != nullptr) fk_->clones.emplace_back(child, h);
  return h;
}

int ha_tidesdb::act_on_children(const uchar* old_row, const uchar* new_row) {
  if (fk_ == nullptr) return 0;
  refresh_foreign_keys();
  THD* thd = ha_thd();
  if (!fk_->has_children || checks_off(thd)) return 0;
  resolve_foreign_keys();
  TrxContext* trx = trx_context(thd);
  const bool top = trx->fk_depth == 0;
  if (top) {
    trx->fk_update_chain.clear();
    if (new_row != nullptr) trx->fk_update_chain.push_back(share_->name);
  }
  tidesdb::Transaction* t = txn();
  for (ChildLink& link : fk_->children) {
    // Children hold the old values; a NULL in them is referenced by nobody.
    if (any_null(table, link.parent_fields, old_row)) continue;
    if (new_row != nullptr && same_values(table, link.parent_fields, old_row, new_row)) continue;
    const uint8_t option = new_row != nullptr ? link.def.on_update : link.def.on_delete;
    if (!link.resolved || (modifies_child(option) && link.child == nullptr)) {
      my_printf_error(ER_UNKNOWN_ERROR, "TidesDB: the foreign key %s of %s.%s cannot be checked: %s", MYF(0),
                      quoted(link.def.name).c_str(), quoted(link.child_db).c_str(),
                      quoted(link.child_sql).c_str(),
                      link.resolved ? "the table is not open in this statement"
                                    : "the table or its index on the foreign key columns is missing");
      return HA_ERR_TIDESDB_REPORTED;
    }
    if (!link.codec.fits(old_row)) continue;  // too long for any child's column
    std::string prefix;
    link.codec.append_parts(old_row, link.codec.parts(), &prefix);
    const std::string limit = prefix_successor(prefix);
    tidesdb::Slice lower(prefix), upper(limit);
    tidesdb::ReadOptions ro;
    ro.lower_bound = &lower;
    ro.upper_bound = limit.empty() ? nullptr : &upper;
    std::vector<std::pair<std::string, std::string>> entries;
    {
      auto it = t->NewReferenceIterator(ro, link.cf);
      for (it->Seek(prefix); it->Valid(); it->Next()) {
        entries.emplace_back(std::string(it->key().data(), it->key().size()),
                             std::string(it->value().data(), it->value().size()));
        if (!modifies_child(option)) break;
      }
      if (!it->status().ok()) return report(it->status(), "foreign key check");
    }
    if (entries.empty()) continue;
    // An update that cascades back into a table it already changed acts as RESTRICT (as
    // in InnoDB): the cascade could go on for ever.
    const bool cycle = new_row != nullptr &&
                       std::find(trx->fk_update_chain.begin(), trx->fk_update_chain.end(), link.child_name) !=
                           trx->fk_update_chain.end();
    if (!modifies_child(option) || cycle)
      return foreign_key_violation(HA_ERR_ROW_IS_REFERENCED, link.child_db, link.child_sql, link.def);
    if (trx->fk_depth >= kMaxCascadeDepth) {
      push_warning_printf(
          thd, Sql_condition::WARN_LEVEL_WARN, HA_ERR_FK_DEPTH_EXCEEDED,
          "TidesDB: Cannot delete/update rows with cascading foreign key constraints that exceed "
          "max depth of %u. Please drop extra constraints and try again",
          kMaxCascadeDepth);
      return foreign_key_violation(HA_ERR_FK_DEPTH_EXCEEDED, link.child_db, link.child_sql, link.def);
    }
    auto* child = static_cast<ha_tidesdb*>(clone_for(link.child));
    if (child == nullptr) return HA_ERR_OUT_OF_MEM;
    trx->fk_depth++;
    if (new_row != nullptr) trx->fk_update_chain.push_back(link.child_name);
    int error = cascade(link, child, entries, option, new_row);
    if (new_row != nullptr) trx->fk_update_chain.pop_back();
    trx->fk_depth--;
    if (error != 0) return error;
  }
  return 0;
}

int ha_tidesdb::cascade(const ChildLink& link, ha_tidesdb* child,
                        const std::vector<std::pair<std::string, std::string>>& entries, uint8_t option,
                        const uchar* new_row) {
  TABLE* ct = link.child;
  tidesdb::Transaction* t = txn();
  const size_t length = ct->s->rec_buff_length;
  std::unique_ptr<uchar[]> old_rec(new uchar[length]), new_rec(new uchar[length]);
  for (const auto& [key, value] : entries) {
    std::string pk;
    std::string_view packed;
    if (!child->entry_primary_key(link.index, key, value, &pk, &packed))
      return report(tidesdb::Status::Corruption("a malformed index entry"), "foreign key cascade");
    std::string stored;
    // The latest row (the entry was found in the latest state), S-locked or validated.
    tidesdb::Status s = t->GetReferenced(child->data_cf(), pk, &stored);
    if (s.IsNotFound()) continue;  // gone meanwhile, or by this cascade already
    if (!s.ok()) return report(s, "foreign key cascade");
    memcpy(old_rec.get(), ct->s->default_values, ct->s->reclength);
    child->row_pk_ = pk;
    child->row_value_ = stored;
    child->row_locked_ = true;
    if (int error = child->decode_stored_row(old_rec.get(), true); error != 0) return error;
    int error;
    if (new_row == nullptr && option == FK_OPTION_CASCADE) {
      error = child->delete_row(old_rec.get());
    } else {
      memcpy(new_rec.get(), old_rec.get(), ct->s->reclength);
      for (size_t i = 0; i < link.child_fields.size(); i++) {
        Field* cf = ct->field[link.child_fields[i] - 1];
        const my_ptrdiff_t cd = new_rec.get() - ct->record[0];
        if (option == FK_OPTION_SET_DEFAULT) {
          const my_ptrdiff_t offset = cf->offset(ct->record[0]);
          memcpy(new_rec.get() + offset, ct->s->default_values + offset, cf->pack_length());
          if (cf->real_maybe_null()) {
            const my_ptrdiff_t at = cf->null_ptr - ct->record[0];
            new_rec[at] = static_cast<uchar>((new_rec[at] & ~cf->null_bit) |
                                             (ct->s->default_values[at] & cf->null_bit));
          }
          continue;
        }
        cf->move_field_offset(cd);
        if (option == FK_OPTION_SET_NULL) {
          cf->set_null();
        } else {
          Field* pf = table->field[link.parent_fields[i] - 1];
          const my_ptrdiff_t pd = new_row - table->record[0];
          if (pf != cf) {
            pf->move_field_offset(pd);
            if (pf->is_null()) {
              cf->set_null();
            } else {
              cf->set_notnull();
              cf->store_field(pf);
            }
            pf->move_field_offset(-pd);
          }
        }
        cf->move_field_offset(-cd);
      }
      error = child->update_row(old_rec.get(), new_rec.get());
      if (error == HA_ERR_RECORD_IS_THE_SAME) error = 0;
    }
    if (error != 0) return error;
  }
  return 0;
}

}  // namespace tidesql
