#include "engine.h"

#include <log.h>
#include <mysqld.h>
#include <mysqld_error.h>

#include <memory>

#include "cf_catalog.h"
#include "dictionary.h"
#include "status.h"
#include "sysvars.h"

// Declared by no 10.11 header; exported by mariadbd (MyRocks uses it the same way).
bool ignore_db_dirs_append(const char* dirname_arg);

namespace tidesql {

const char kDatabaseDirectory[] = "#tidesdb";

namespace {

std::unique_ptr<tidesdb::TransactionDB> the_db;

void log_library_message(tidesdb::LogLevel level, std::string_view message) {
  int length = static_cast<int>(message.size());
  switch (level) {
    case tidesdb::LogLevel::kDebug:
    case tidesdb::LogLevel::kInfo:
      sql_print_information("TidesDB: %.*s", length, message.data());
      break;
    case tidesdb::LogLevel::kWarn:
      sql_print_warning("TidesDB: %.*s", length, message.data());
      break;
    default:
      sql_print_error("TidesDB: %.*s", length, message.data());
      note_background_error(message);
      break;
  }
}

// The table (and index) holding the damaged column family a status names ("column family
// 'idx-12' is damaged: ..."), or "" for another status or a column family no table owns.
std::string damaged_table(THD* thd, const std::string& message) {
  static const char kMarker[] = "column family '";
  const size_t at = message.find(kMarker);
  if (at == std::string::npos) return "";
  const size_t begin = at + sizeof(kMarker) - 1;
  const std::string cf_name = message.substr(begin, message.find('\'', begin) - begin);
  for (const ColumnFamilyOwner& o : column_family_owners(thd != nullptr ? thd : current_thd)) {
    if (o.cf_name == cf_name && !o.table.empty()) return o.table_label() + " (index " + o.index + ")";
  }
  return "";
}

}  // namespace

bool open_engine() {
  tidesdb::Options options = database_options();
  options.logger = log_library_message;
  // A table whose files are damaged must not keep the others from opening.
  options.open_damaged_column_families = true;
  tidesdb::TransactionDBOptions txn_options;
  txn_options.lock_timeout_micros = static_cast<int64_t>(lock_wait_timeout_seconds(nullptr)) * 1000000;
  txn_options.max_write_set_bytes = sysvars.max_write_set_bytes;
  // The directory must not show up as a database in SHOW DATABASES.
  ignore_db_dirs_append(kDatabaseDirectory);
  tidesdb::Status s = tidesdb::TransactionDB::Open(options, txn_options, kDatabaseDirectory, &the_db);
  if (!s.ok()) {
    sql_print_error(
        "TidesDB: cannot open the database in %s/%s: %s. The engine is not started; "
        "nothing in that directory was changed by this attempt.",
        mysql_real_data_home, kDatabaseDirectory, s.ToString().c_str());
    the_db.reset();
    return false;
  }
  s = dictionary_startup_recovery();
  if (!s.ok()) {
    sql_print_error("TidesDB: the data dictionary in %s/%s cannot be read: %s. The engine is not started.",
                    mysql_real_data_home, kDatabaseDirectory, s.ToString().c_str());
    dictionary_shutdown();
    the_db.reset();
    return false;
  }
  return true;
}

void close_engine() {
  dictionary_shutdown();
  the_db.reset();
}

tidesdb::TransactionDB* transaction_db() { return the_db.get(); }

tidesdb::DB* base_db() { return the_db ? the_db->db() : nullptr; }

int ha_error_from_status(const tidesdb::Status& status, const char* what, THD* thd, const char* table) {
  if (status.IsBusy() || status.IsDeadlock()) return HA_ERR_LOCK_DEADLOCK;
  if (status.IsTimedOut()) return HA_ERR_LOCK_WAIT_TIMEOUT;
  // A lock wait ended by KILL QUERY or max_statement_time: the server reports the kill.
  if (status.IsAborted() && thd != nullptr && thd_kill_level(thd) != THD_IS_NOT_KILLED) {
    return HA_ERR_QUERY_INTERRUPTED;
  }
  if (status.IsNotFound()) return HA_ERR_KEY_NOT_FOUND;
  std::string message = status.ToString();
  // The library reports the write set bound as NotSupported, as it does files and records
  // of a newer format; only the message tells them apart.
  if (status.IsNotSupported() && message.find("max_write_set_bytes") != std::string::npos) {
    // The write set bound (tidesdb_max_write_set_bytes): the statement fails whole.
    my_printf_error(ER_GET_ERRMSG,
                    "TidesDB: %s: the transaction is larger than tidesdb_max_write_set_bytes (%s); "
                    "nothing of the failed statement was applied",
                    MYF(0), what, message.c_str());
    return HA_ERR_TIDESDB_REPORTED;
  }
  if (status.IsNoSpace()) {
    sql_print_error("TidesDB: %s: %s", what, message.c_str());
    my_printf_error(ER_DISK_FULL, "TidesDB: %s: the disk is full (%s)", MYF(0), what, message.c_str());
    return HA_ERR_TIDESDB_REPORTED;
  }
  if (status.IsCorruption()) {
    const std::string owner = table != nullptr ? std::string(table) : damaged_table(thd, message);
    if (!owner.empty()) {
      sql_print_error("TidesDB: %s: table %s is damaged: %s", what, owner.c_str(), message.c_str());
      my_printf_error(ER_GET_ERRMSG,
                      "TidesDB: %s: table %s is damaged: %s. Its other rows can still be read; "
                      "restore it from a backup, or rebuild or drop it (docs/OPERATIONS.md)",
                      MYF(0), what, owner.c_str(), message.c_str());
      return HA_ERR_TIDESDB_REPORTED;
    }
  }
  sql_print_error("TidesDB: %s: %s", what, message.c_str());
  my_printf_error(ER_GET_ERRMSG, "TidesDB: %s: %s", MYF(0), what, message.c_str());
  return HA_ERR_TIDESDB_REPORTED;
}

}  // namespace tidesql
