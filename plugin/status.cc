#include "status.h"

#include <mutex>
#include <string>

#include "engine.h"
#include "tidesdb/db.h"
#include "tidesdb/transaction.h"

namespace tidesql {

StatusCounters status_counters;

namespace {

// Library counters copied out of the properties when SHOW STATUS asks.
struct LibraryCounters {
  unsigned long long block_cache_hits = 0, block_cache_misses = 0, block_cache_usage = 0;
  unsigned long long flushes = 0, compactions = 0, trivial_moves = 0, slowdown_micros = 0, stall_micros = 0;
  unsigned long long wal_syncs = 0, wal_bytes = 0, commit_groups = 0;
  unsigned long long lock_timeouts = 0, deadlocks = 0;
};

LibraryCounters library;
std::mutex library_mutex;
// Copies of the connection-side counters, so the array below holds plain values.
unsigned long long rows_read, rows_inserted, rows_updated, rows_deleted, transactions, commits, rollbacks,
    conflicts, prepares, binlog_checkpoints;

unsigned long long field_of(const std::string& text, const char* name) {
  std::string key = std::string(name) + "=";
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n')
      return strtoull(text.c_str() + at + key.size(), nullptr, 10);
    at += key.size();
  }
  return 0;
}

void refresh() {
  rows_read = status_counters.rows_read.load();
  rows_inserted = status_counters.rows_inserted.load();
  rows_updated = status_counters.rows_updated.load();
  rows_deleted = status_counters.rows_deleted.load();
  transactions = status_counters.transactions.load();
  commits = status_counters.commits.load();
  rollbacks = status_counters.rollbacks.load();
  conflicts = status_counters.conflicts.load();
  prepares = status_counters.prepares.load();
  binlog_checkpoints = status_counters.binlog_checkpoints.load();
  tidesdb::DB* db = base_db();
  if (db == nullptr) return;
  std::string stats, cache, txn;
  db->GetProperty(nullptr, "tidesdb.stats", &stats);
  db->GetProperty(nullptr, "tidesdb.block-cache", &cache);
  transaction_db()->GetProperty("tidesdb.txn.stats", &txn);
  library.block_cache_hits = field_of(cache, "hits");
  library.block_cache_misses = field_of(cache, "misses");
  library.block_cache_usage = field_of(cache, "usage");
  library.flushes = field_of(stats, "flushes");
  library.compactions = field_of(stats, "compactions");
  library.trivial_moves = field_of(stats, "compaction_trivial_moves");
  library.slowdown_micros = field_of(stats, "slowdown_micros");
  library.stall_micros = field_of(stats, "stall_micros");
  library.wal_syncs = field_of(stats, "wal_syncs");
  library.wal_bytes = field_of(stats, "wal_bytes");
  library.commit_groups = field_of(stats, "commit_groups");
  library.lock_timeouts = field_of(txn, "lock_timeouts");
  library.deadlocks = field_of(txn, "deadlocks");
}

SHOW_VAR exported[] = {
    {"rows_read", reinterpret_cast<char*>(&rows_read), SHOW_ULONGLONG},
    {"rows_inserted", reinterpret_cast<char*>(&rows_inserted), SHOW_ULONGLONG},
    {"rows_updated", reinterpret_cast<char*>(&rows_updated), SHOW_ULONGLONG},
    {"rows_deleted", reinterpret_cast<char*>(&rows_deleted), SHOW_ULONGLONG},
    {"transactions", reinterpret_cast<char*>(&transactions), SHOW_ULONGLONG},
    {"commits", reinterpret_cast<char*>(&commits), SHOW_ULONGLONG},
    {"rollbacks", reinterpret_cast<char*>(&rollbacks), SHOW_ULONGLONG},
    {"conflicts", reinterpret_cast<char*>(&conflicts), SHOW_ULONGLONG},
    {"prepares", reinterpret_cast<char*>(&prepares), SHOW_ULONGLONG},
    {"binlog_checkpoints", reinterpret_cast<char*>(&binlog_checkpoints), SHOW_ULONGLONG},
    {"lock_wait_timeouts", reinterpret_cast<char*>(&library.lock_timeouts), SHOW_ULONGLONG},
    {"deadlocks", reinterpret_cast<char*>(&library.deadlocks), SHOW_ULONGLONG},
    {"block_cache_hits", reinterpret_cast<char*>(&library.block_cache_hits), SHOW_ULONGLONG},
    {"block_cache_misses", reinterpret_cast<char*>(&library.block_cache_misses), SHOW_ULONGLONG},
    {"block_cache_usage", reinterpret_cast<char*>(&library.block_cache_usage), SHOW_ULONGLONG},
    {"flushes", reinterpret_cast<char*>(&library.flushes), SHOW_ULONGLONG},
    {"compactions", reinterpret_cast<char*>(&library.compactions), SHOW_ULONGLONG},
    // Files moved down a level by a manifest edit instead of a rewrite (not in compactions).
    {"compaction_trivial_moves", reinterpret_cast<char*>(&library.trivial_moves), SHOW_ULONGLONG},
    {"write_slowdown_micros", reinterpret_cast<char*>(&library.slowdown_micros), SHOW_ULONGLONG},
    {"write_stall_micros", reinterpret_cast<char*>(&library.stall_micros), SHOW_ULONGLONG},
    {"wal_bytes", reinterpret_cast<char*>(&library.wal_bytes), SHOW_ULONGLONG},
    {"wal_syncs", reinterpret_cast<char*>(&library.wal_syncs), SHOW_ULONGLONG},
    {"wal_commit_groups", reinterpret_cast<char*>(&library.commit_groups), SHOW_ULONGLONG},
    {NullS, NullS, SHOW_LONG},
};

int show_vars(THD*, SHOW_VAR* var, void*, system_status_var*, enum_var_type) {
  std::lock_guard<std::mutex> guard(library_mutex);
  refresh();
  var->type = SHOW_ARRAY;
  var->value = reinterpret_cast<char*>(exported);
  return 0;
}

}  // namespace

SHOW_VAR status_variables[] = {
    {"Tidesdb", reinterpret_cast<char*>(&show_vars), SHOW_FUNC},
    {NullS, NullS, SHOW_LONG},
};

bool show_engine_status(handlerton* hton, THD* thd, stat_print_fn* print, enum ha_stat_type stat) {
  if (stat != HA_ENGINE_STATUS || base_db() == nullptr) return false;
  static const char* const kProperties[] = {"tidesdb.stats", "tidesdb.block-cache", "tidesdb.latency",
                                            "tidesdb.read-sources"};
  for (const char* property : kProperties) {
    std::string value;
    if (!base_db()->GetProperty(nullptr, property, &value)) continue;
    if (print(thd, "TidesDB", 7, property, strlen(property), value.data(), value.size())) return true;
  }
  std::string txn;
  if (transaction_db()->GetProperty("tidesdb.txn.stats", &txn) &&
      print(thd, "TidesDB", 7, "tidesdb.txn.stats", 17, txn.data(), txn.size()))
    return true;
  return false;
}

}  // namespace tidesql
