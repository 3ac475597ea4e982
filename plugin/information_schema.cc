#include "information_schema.h"

#include <sql_acl.h>
#include <sql_class.h>
#include <sql_i_s.h>
#include <sql_show.h>
#include <tztime.h>

#include <algorithm>
#include <map>
#include <set>

#include "cf_catalog.h"
#include "engine.h"
#include "library_views.h"
#include "trx.h"

namespace tidesql {
namespace {

// A row being filled: fields by position, then store() writes it.
class Row {
 public:
  Row(THD* thd, TABLE* table) : thd_(thd), table_(table) {}
  Row& text(const std::string& value) {
    Field* f = next();
    f->set_notnull();
    f->store(value.data(), value.size(), system_charset_info);
    return *this;
  }
  // An empty value is NULL.
  Row& text_or_null(const std::string& value) {
    if (value.empty()) {
      next()->set_null();
      return *this;
    }
    return text(value);
  }
  Row& number(unsigned long long value) {
    Field* f = next();
    f->set_notnull();
    f->store(static_cast<longlong>(value), true);
    return *this;
  }
  Row& null() {
    next()->set_null();
    return *this;
  }
  // Microseconds since the epoch, in the session's time zone.
  Row& time(uint64_t micros) {
    if (micros == 0) return null();
    MYSQL_TIME ltime;
    thd_->variables.time_zone->gmt_sec_to_TIME(&ltime, static_cast<my_time_t>(micros / 1000000));
    ltime.second_part = micros % 1000000;
    Field* f = next();
    f->set_notnull();
    f->store_time(&ltime);
    return *this;
  }
  bool store() {
    column_ = 0;
    return schema_table_store_record(thd_, table_);
  }

 private:
  Field* next() { return table_->field[column_++]; }

  THD* thd_;
  TABLE* table_;
  unsigned column_ = 0;
};

// The tables describe other sessions and the server's files: PROCESS, as InnoDB's.
bool denied(THD* thd) { return check_global_access(thd, PROCESS_ACL, true); }

// Owner columns shared by several tables: schema, table, partition, index, column family.
Row& owner_columns(Row& row, const ColumnFamilyOwner& o) {
  return row.text_or_null(o.database)
      .text_or_null(o.table)
      .text_or_null(o.partition)
      .text_or_null(o.index)
      .text(o.cf_name);
}

#define OWNER_FIELDS                                                    \
  Show::Column("TABLE_SCHEMA", Show::Varchar(NAME_CHAR_LEN), NULLABLE), \
      Show::Column("TABLE_NAME", Show::Varchar(FN_REFLEN), NULLABLE),   \
      Show::Column("PARTITION_NAME", Show::Name(), NULLABLE),           \
      Show::Column("INDEX_NAME", Show::Name(), NULLABLE),               \
      Show::Column("COLUMN_FAMILY", Show::Name(), NOT_NULL)

// --- TIDESDB_COLUMN_FAMILIES

// OPTIONS: the options the library made the column family with ("tidesdb.options":
// "name=value" fields separated by spaces).
ST_FIELD_INFO column_families_fields[] = {OWNER_FIELDS,
                                          Show::Column("COLUMN_FAMILY_ID", Show::ULonglong(), NOT_NULL),
                                          Show::Column("ENTRIES", Show::ULonglong(), NOT_NULL),
                                          Show::Column("BYTES", Show::ULonglong(), NOT_NULL),
                                          Show::Column("SST_FILES", Show::ULonglong(), NOT_NULL),
                                          Show::Column("SST_BYTES", Show::ULonglong(), NOT_NULL),
                                          Show::Column("SST_ENTRIES", Show::ULonglong(), NOT_NULL),
                                          Show::Column("TOMBSTONES", Show::ULonglong(), NOT_NULL),
                                          Show::Column("LEVELS", Show::ULonglong(), NOT_NULL),
                                          Show::Column("FILES_PER_LEVEL", Show::Varchar(64), NOT_NULL),
                                          Show::Column("OPTIONS", Show::Varchar(1024), NOT_NULL),
                                          Show::CEnd()};

int fill_column_families(THD* thd, TABLE_LIST* tables, Item*) {
  if (denied(thd)) return 0;
  tidesdb::DB* db = base_db();
  if (db == nullptr) return 0;
  Row row(thd, tables->table);
  for (const ColumnFamilyOwner& o : column_family_owners(thd)) {
    tidesdb::ColumnFamilyHandle* cf = db->GetColumnFamily(o.cf_name);
    if (cf == nullptr) continue;  // dropped meanwhile
    tidesdb::RangeEstimate estimate = db->EstimateRange(cf, tidesdb::Range{});
    uint64_t files = 0, bytes = 0, entries = 0, tombstones = 0;
    std::vector<uint64_t> per_level;
    for (const SstFile& f : sst_files(db, cf)) {
      files++;
      bytes += f.file_size;
      entries += f.entries;
      tombstones += f.tombstones;
      if (per_level.size() <= static_cast<size_t>(f.level)) per_level.resize(f.level + 1);
      per_level[f.level]++;
    }
    std::string levels;
    for (size_t i = 0; i < per_level.size(); i++) levels += (i ? "," : "") + std::to_string(per_level[i]);
    std::string options;
    if (db->GetProperty(cf, "tidesdb.options", &options) && !options.empty() && options.back() == '\n')
      options.pop_back();
    owner_columns(row, o)
        .number(o.cf_id)
        .number(estimate.keys)
        .number(estimate.bytes)
        .number(files)
        .number(bytes)
        .number(entries)
        .number(tombstones)
        .number(per_level.size())
        .text(levels)
        .text(options);
    if (row.store()) return 1;
  }
  return 0;
}

// --- TIDESDB_SST_FILES

ST_FIELD_INFO sst_files_fields[] = {OWNER_FIELDS,
                                    Show::Column("LEVEL", Show::ULonglong(), NOT_NULL),
                                    Show::Column("FILE_NUMBER", Show::ULonglong(), NOT_NULL),
                                    Show::Column("FILE_SIZE", Show::ULonglong(), NOT_NULL),
                                    Show::Column("ENTRIES", Show::ULonglong(), NOT_NULL),
                                    Show::Column("TOMBSTONES", Show::ULonglong(), NOT_NULL),
                                    Show::Column("VALUE_LOG_BYTES", Show::ULonglong(), NOT_NULL),
                                    Show::Column("SMALLEST_KEY", Show::Varchar(512), NOT_NULL),
                                    Show::Column("LARGEST_KEY", Show::Varchar(512), NOT_NULL),
                                    Show::Column("SMALLEST_SEQUENCE", Show::ULonglong(), NOT_NULL),
                                    Show::Column("LARGEST_SEQUENCE", Show::ULonglong(), NOT_NULL),
                                    Show::CEnd()};

std::string shortened_hex(const std::string& hex) {
  return hex.size() <= 512 ? hex : hex.substr(0, 509) + "...";
}

int fill_sst_files(THD* thd, TABLE_LIST* tables, Item*) {
  if (denied(thd)) return 0;
  tidesdb::DB* db = base_db();
  if (db == nullptr) return 0;
  Row row(thd, tables->table);
  for (const ColumnFamilyOwner& o : column_family_owners(thd)) {
    tidesdb::ColumnFamilyHandle* cf = db->GetColumnFamily(o.cf_name);
    if (cf == nullptr) continue;
    for (const SstFile& f : sst_files(db, cf)) {
      owner_columns(row, o)
          .number(f.level)
          .number(f.file_number)
          .number(f.file_size)
          .number(f.entries)
          .number(f.tombstones)
          .number(f.value_log_bytes)
          .text(shortened_hex(f.smallest_key_hex))
          .text(shortened_hex(f.largest_key_hex))
          .number(f.smallest_sequence)
          .number(f.largest_sequence);
      if (row.store()) return 1;
    }
  }
  return 0;
}

// --- TIDESDB_COMPACTIONS

ST_FIELD_INFO compactions_fields[] = {Show::Column("COMPACTION_ID", Show::ULonglong(), NOT_NULL),
                                      OWNER_FIELDS,
                                      Show::Column("STATE", Show::Varchar(16), NOT_NULL),
                                      Show::Column("REASON", Show::Varchar(32), NOT_NULL),
                                      Show::Column("MANUAL", Show::Varchar(3), NOT_NULL),
                                      Show::Column("TRIVIAL_MOVE", Show::Varchar(3), NOT_NULL),
                                      Show::Column("INPUT_LEVEL", Show::ULonglong(), NOT_NULL),
                                      Show::Column("OUTPUT_LEVEL", Show::ULonglong(), NOT_NULL),
                                      Show::Column("INPUT_FILES", Show::ULonglong(), NOT_NULL),
                                      Show::Column("INPUT_BYTES", Show::ULonglong(), NOT_NULL),
                                      Show::Column("OUTPUT_FILES", Show::ULonglong(), NOT_NULL),
                                      Show::Column("OUTPUT_BYTES", Show::ULonglong(), NOT_NULL),
                                      Show::Column("START_TIME", Show::Datetime(6), NULLABLE),
                                      Show::Column("DURATION_MS", Show::ULonglong(), NOT_NULL),
                                      Show::Column("STATUS", Show::Varchar(512), NOT_NULL),
                                      Show::CEnd()};

int fill_compactions(THD* thd, TABLE_LIST* tables, Item*) {
  if (denied(thd)) return 0;
  tidesdb::DB* db = base_db();
  if (db == nullptr) return 0;
  const ColumnFamilyOwners owners = column_family_owners_by_id(thd);
  Row row(thd, tables->table);
  const uint64_t now = my_hrtime().val;
  for (const CompactionRecord& c : compactions(db)) {
    const ColumnFamilyOwner o = column_family_owner(owners, c.cf_id);
    const uint64_t end = c.end_micros != 0 ? c.end_micros : std::max(now, c.start_micros);
    row.number(c.id);
    owner_columns(row, o)
        .text(c.state == "running" ? "RUNNING"
              : c.state == "done"  ? "DONE"
                                   : "FAILED")
        .text(c.reason)
        .text(c.manual ? "YES" : "NO")
        .text(c.move ? "YES" : "NO")
        .number(c.level)
        .number(c.output_level)
        .number(c.input_files)
        .number(c.input_bytes)
        .number(c.output_files)
        .number(c.output_bytes)
        .time(c.start_micros)
        .number((end - c.start_micros) / 1000)
        .text(c.status.substr(0, 512));
    if (row.store()) return 1;
  }
  return 0;
}

// --- TIDESDB_TRANSACTIONS

ST_FIELD_INFO transactions_fields[] = {Show::Column("TRANSACTION_ID", Show::ULonglong(), NOT_NULL),
                                       Show::Column("PROCESSLIST_ID", Show::ULonglong(), NOT_NULL),
                                       Show::Column("STATE", Show::Varchar(16), NOT_NULL),
                                       Show::Column("ISOLATION_LEVEL", Show::Varchar(20), NOT_NULL),
                                       Show::Column("MODE", Show::Varchar(16), NOT_NULL),
                                       Show::Column("STARTED", Show::Datetime(6), NOT_NULL),
                                       Show::Column("AGE_MS", Show::ULonglong(), NOT_NULL),
                                       Show::Column("WRITE_SET_BYTES", Show::ULonglong(), NOT_NULL),
                                       Show::Column("WRITE_SET_ENTRIES", Show::ULonglong(), NOT_NULL),
                                       Show::Column("LOCKS_HELD", Show::ULonglong(), NOT_NULL),
                                       Show::Column("LOCK_WAITS", Show::ULonglong(), NOT_NULL),
                                       Show::Column("QUERY", Show::Varchar(1024), NULLABLE),
                                       Show::CEnd()};

int fill_transactions(THD* thd, TABLE_LIST* tables, Item*) {
  if (denied(thd)) return 0;
  if (transaction_db() == nullptr) return 0;
  std::map<uint64_t, uint64_t> held, waiting;
  for (const tidesdb::LockStatus& l : transaction_db()->GetLockStatus())
    (l.granted ? held : waiting)[l.txn_id]++;
  Row row(thd, tables->table);
  const uint64_t now = my_hrtime().val;
  for (const OpenTransaction& t : open_transactions()) {
    row.number(t.txn_id)
        .number(t.connection_id)
        .text(t.prepared ? "PREPARED" : "ACTIVE")
        .text(isolation_name(t.isolation))
        .text(t.pessimistic ? "PESSIMISTIC" : "OPTIMISTIC")
        .time(t.began_micros)
        .number(now > t.began_micros ? (now - t.began_micros) / 1000 : 0)
        .number(t.write_set_bytes)
        .number(t.write_set_count)
        .number(held[t.txn_id])
        .number(waiting[t.txn_id])
        .text_or_null(t.query);
    if (row.store()) return 1;
  }
  return 0;
}

// --- TIDESDB_LOCKS

ST_FIELD_INFO locks_fields[] = {Show::Column("TRANSACTION_ID", Show::ULonglong(), NOT_NULL),
                                Show::Column("PROCESSLIST_ID", Show::ULonglong(), NULLABLE),
                                OWNER_FIELDS,
                                Show::Column("LOCK_KEY", Show::Varchar(512), NOT_NULL),
                                Show::Column("LOCK_MODE", Show::Varchar(16), NOT_NULL),
                                Show::Column("LOCK_STATE", Show::Varchar(16), NOT_NULL),
                                Show::CEnd()};

int fill_locks(THD* thd, TABLE_LIST* tables, Item*) {
  if (denied(thd)) return 0;
  if (transaction_db() == nullptr) return 0;
  std::vector<tidesdb::LockStatus> locks = transaction_db()->GetLockStatus();
  if (locks.empty()) return 0;
  const ColumnFamilyOwners owners = column_family_owners_by_id(thd);
  std::map<uint64_t, unsigned long long> connections;
  for (const OpenTransaction& t : open_transactions()) connections[t.txn_id] = t.connection_id;
  Row row(thd, tables->table);
  for (const tidesdb::LockStatus& l : locks) {
    const ColumnFamilyOwner o = column_family_owner(owners, l.cf_id);
    row.number(l.txn_id);
    auto c = connections.find(l.txn_id);
    if (c != connections.end())
      row.number(c->second);
    else
      row.null();  // a prepared transaction whose connection has gone
    owner_columns(row, o)
        .text(hex_bytes(l.key, 255))
        .text(l.exclusive ? "EXCLUSIVE" : "SHARED")
        .text(l.granted ? "GRANTED" : "WAITING");
    if (row.store()) return 1;
  }
  return 0;
}

template <ST_FIELD_INFO* fields, int (*fill)(THD*, TABLE_LIST*, Item*)>
int init_table(void* p) {
  auto* schema = static_cast<ST_SCHEMA_TABLE*>(p);
  schema->fields_info = fields;
  schema->fill_table = fill;
  return 0;
}

st_mysql_information_schema i_s_interface = {MYSQL_INFORMATION_SCHEMA_INTERFACE_VERSION};

// constexpr, so that the plugins below are constant-initialized: the plugin declaration
// array (handlerton.cc) copies them during dynamic initialization, in another file.
constexpr st_maria_plugin table_plugin(const char* name, const char* description, int (*init)(void*)) {
  return {MYSQL_INFORMATION_SCHEMA_PLUGIN,
          &i_s_interface,
          name,
          "TideSQL developers",
          description,
          PLUGIN_LICENSE_GPL,
          init,
          nullptr,
          (TIDESQL_VERSION_MAJOR << 8) | TIDESQL_VERSION_MINOR,
          nullptr,
          nullptr,
          TIDESQL_VERSION_STRING,
          MariaDB_PLUGIN_MATURITY_GAMMA};
}

}  // namespace

constinit st_maria_plugin i_s_column_families =
    table_plugin("TIDESDB_COLUMN_FAMILIES", "TidesDB column families: one per table index",
                 init_table<column_families_fields, fill_column_families>);
constinit st_maria_plugin i_s_sst_files =
    table_plugin("TIDESDB_SST_FILES", "TidesDB SSTables of every column family",
                 init_table<sst_files_fields, fill_sst_files>);
constinit st_maria_plugin i_s_compactions =
    table_plugin("TIDESDB_COMPACTIONS", "TidesDB running and recent compactions",
                 init_table<compactions_fields, fill_compactions>);
constinit st_maria_plugin i_s_transactions = table_plugin("TIDESDB_TRANSACTIONS", "TidesDB open transactions",
                                                          init_table<transactions_fields, fill_transactions>);
constinit st_maria_plugin i_s_locks = table_plugin("TIDESDB_LOCKS", "TidesDB row locks held and waited for",
                                                   init_table<locks_fields, fill_locks>);

}  // namespace tidesql
