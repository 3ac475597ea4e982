// The plugin declaration and the handlerton: what the server learns about the engine when
// it loads ha_tidesdb.so (name, version, maturity, system variables, entry points).
#include "handlerton.h"

#include <mysql/plugin.h>

#include "ha_tidesdb.h"
#include "sysvars.h"

namespace tidesql {

handlerton* tidesdb_hton = nullptr;

namespace {

int init(void* p) {
  auto* hton = static_cast<handlerton*>(p);
  hton->create = create_handler;
  // Partitioning wraps the engine's handler in ha_partition; this build does not offer it.
  hton->flags = HTON_NO_PARTITION;
  tidesdb_hton = hton;
  return 0;
}

int deinit(void*) {
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
    "Transactional, log-structured storage engine (this build cannot create tables yet)",
    PLUGIN_LICENSE_GPL,
    tidesql::init,
    tidesql::deinit,
    (TIDESQL_VERSION_MAJOR << 8) | TIDESQL_VERSION_MINOR,
    nullptr,
    tidesql::system_variables,
    TIDESQL_VERSION_STRING,
    // Tables cannot be created yet; a stable server loads the engine only with
    // plugin_maturity=experimental.
    MariaDB_PLUGIN_MATURITY_EXPERIMENTAL,
} maria_declare_plugin_end;
