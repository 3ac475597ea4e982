// The plugin declaration and the handlerton: what the server learns about the engine when
// it loads ha_tidesdb.so (name, version, maturity, system variables, entry points).
#include "handlerton.h"

#include <mysql/plugin.h>

#include "dictionary.h"
#include "engine.h"
#include "ha_tidesdb.h"
#include "information_schema.h"
#include "status.h"
#include "sysvars.h"
#include "table_options.h"
#include "trx.h"

namespace tidesql {

handlerton* tidesdb_hton = nullptr;

namespace {

// DROP DATABASE has dropped each table through the handler already; what is left in the
// dictionary under the database's name are leftovers of interrupted DDL.
void drop_database(handlerton*, char* path) {
  std::string prefix = path;
  if (prefix.compare(0, 2, "./") == 0) prefix.erase(0, 2);
  if (!prefix.empty() && prefix.back() != '/') prefix.push_back('/');
  for (const std::string& name : dictionary_table_names(prefix)) dictionary_drop_table(name);
}

// DDL recovery of an in-place ALTER interrupted by a crash: whether the dictionary
// committed the new definition (0: use the new .frm) or not (keep the old one). Tables the
// dictionary does not know by this name (partitioned ones: it names their partitions)
// changed their definition alone (index changes of partitions copy), which either .frm
// reads.
int check_version(handlerton*, const char* path, const LEX_CUSTRING* version, ulonglong) {
  TableDef def;
  if (!dictionary_load_table(dictionary_name(path), &def).ok()) return 0;
  const bool same = def.frm_version.size() == version->length &&
                    memcmp(def.frm_version.data(), version->str, version->length) == 0;
  return same ? 0 : 1;
}

int init(void* p) {
  auto* hton = static_cast<handlerton*>(p);
  if (!open_engine()) return 1;
  hton->create = create_handler;
  // Secondary entries end with the primary key, so the optimizer may search them by it too.
  hton->flags = HTON_SUPPORTS_EXTENDED_KEYS;
  hton->drop_database = drop_database;
  hton->check_version = check_version;
  hton->show_status = show_engine_status;
  hton->table_options = table_option_rules;
  install_transaction_hooks(hton);
  tidesdb_hton = hton;
  return 0;
}

int deinit(void*) {
  close_engine();
  tidesdb_hton = nullptr;
  return 0;
}

st_mysql_storage_engine storage_engine = {MYSQL_HANDLERTON_INTERFACE_VERSION};

}  // namespace
}  // namespace tidesql

maria_declare_plugin(tidesdb){
    MYSQL_STORAGE_ENGINE_PLUGIN,
    &tidesql::storage_engine,
    "TidesDB",
    "TideSQL developers",
    "Transactional, log-structured storage engine",
    PLUGIN_LICENSE_GPL,
    tidesql::init,
    tidesql::deinit,
    (TIDESQL_VERSION_MAJOR << 8) | TIDESQL_VERSION_MINOR,
    tidesql::status_variables,
    tidesql::system_variables,
    TIDESQL_VERSION_STRING,
    // docs/SQL-ENGINE.md (Maturity) says on what evidence.
    MariaDB_PLUGIN_MATURITY_GAMMA,
},
    // The INFORMATION_SCHEMA tables (information_schema.h).
    tidesql::i_s_column_families, tidesql::i_s_sst_files, tidesql::i_s_compactions, tidesql::i_s_transactions,
    tidesql::i_s_locks maria_declare_plugin_end;
