#include "status.h"

#include <map>
#include <mutex>
#include <string>

#include "cf_catalog.h"
#include "conflicts.h"
#include "engine.h"
#include "library_views.h"
#include "sysvars.h"
#include "tidesdb/db.h"
#include "tidesdb/transaction.h"
#include "trx.h"

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
unsigned long long rows_read, rows_inserted, rows_updated, rows_deleted, off_row_reads, off_row_writes,
    covered_index_reads, transactions, commits, rollbacks, conflicts, prepares, binlog_checkpoints,
    background_errors;

// The latest background error and when it came (wall clock, microseconds).
std::mutex background_error_mutex;
std::string latest_background_error;
uint64_t latest_background_error_micros = 0;

void refresh() {
  rows_read = status_counters.rows_read.load();
  rows_inserted = status_counters.rows_inserted.load();
  rows_updated = status_counters.rows_updated.load();
  rows_deleted = status_counters.rows_deleted.load();
  off_row_reads = status_counters.off_row_reads.load();
  off_row_writes = status_counters.off_row_writes.load();
  covered_index_reads = status_counters.covered_index_reads.load();
  transactions = status_counters.transactions.load();
  commits = status_counters.commits.load();
  rollbacks = status_counters.rollbacks.load();
  conflicts = status_counters.conflicts.load();
  prepares = status_counters.prepares.load();
  binlog_checkpoints = status_counters.binlog_checkpoints.load();
  background_errors = status_counters.background_errors.load();
  tidesdb::DB* db = base_db();
  if (db == nullptr) return;
  std::string stats, cache, txn;
  db->GetProperty(nullptr, "tidesdb.stats", &stats);
  db->GetProperty(nullptr, "tidesdb.block-cache", &cache);
  transaction_db()->GetProperty("tidesdb.txn.stats", &txn);
  library.block_cache_hits = property_field(cache, "hits");
  library.block_cache_misses = property_field(cache, "misses");
  library.block_cache_usage = property_field(cache, "usage");
  library.flushes = property_field(stats, "flushes");
  library.compactions = property_field(stats, "compactions");
  library.trivial_moves = property_field(stats, "compaction_trivial_moves");
  library.slowdown_micros = property_field(stats, "slowdown_micros");
  library.stall_micros = property_field(stats, "stall_micros");
  library.wal_syncs = property_field(stats, "wal_syncs");
  library.wal_bytes = property_field(stats, "wal_bytes");
  library.commit_groups = property_field(stats, "commit_groups");
  library.lock_timeouts = property_field(txn, "lock_timeouts");
  library.deadlocks = property_field(txn, "deadlocks");
}

SHOW_VAR exported[] = {
    {"rows_read", reinterpret_cast<char*>(&rows_read), SHOW_ULONGLONG},
    {"rows_inserted", reinterpret_cast<char*>(&rows_inserted), SHOW_ULONGLONG},
    {"rows_updated", reinterpret_cast<char*>(&rows_updated), SHOW_ULONGLONG},
    {"rows_deleted", reinterpret_cast<char*>(&rows_deleted), SHOW_ULONGLONG},
    {"off_row_reads", reinterpret_cast<char*>(&off_row_reads), SHOW_ULONGLONG},
    {"off_row_writes", reinterpret_cast<char*>(&off_row_writes), SHOW_ULONGLONG},
    {"covered_index_reads", reinterpret_cast<char*>(&covered_index_reads), SHOW_ULONGLONG},
    {"transactions", reinterpret_cast<char*>(&transactions), SHOW_ULONGLONG},
    {"commits", reinterpret_cast<char*>(&commits), SHOW_ULONGLONG},
    {"rollbacks", reinterpret_cast<char*>(&rollbacks), SHOW_ULONGLONG},
    {"conflicts", reinterpret_cast<char*>(&conflicts), SHOW_ULONGLONG},
    {"prepares", reinterpret_cast<char*>(&prepares), SHOW_ULONGLONG},
    {"binlog_checkpoints", reinterpret_cast<char*>(&binlog_checkpoints), SHOW_ULONGLONG},
    {"background_errors", reinterpret_cast<char*>(&background_errors), SHOW_ULONGLONG},
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

namespace {

void heading(std::string* out, const char* title) {
  std::string rule(strlen(title), '-');
  *out += rule + "\n" + title + "\n" + rule + "\n";
}

std::string percent(unsigned long long part, unsigned long long whole) {
  if (whole == 0) return "-";
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "%.2f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buffer;
}

const char* sync_mode_name(tidesdb::SyncMode mode) {
  switch (mode) {
    case tidesdb::SyncMode::kNone:
      return "NONE";
    case tidesdb::SyncMode::kInterval:
      return "INTERVAL";
    case tidesdb::SyncMode::kFull:
      return "FULL";
  }
  return "?";
}

std::string files(unsigned long long count) {
  return std::to_string(count) + (count == 1 ? " file" : " files");
}

std::string owner_label(const ColumnFamilyOwner& o) {
  if (o.table.empty()) return o.cf_name;
  return o.table_label() + " " + o.index + " (" + o.cf_name + ")";
}

// The report: InnoDB's layout (sections under dashed headings, in one row), TidesDB's
// figures. docs/OPERATIONS.md explains each line.
std::string engine_report(THD* thd) {
  tidesdb::DB* db = base_db();
  std::string stats, cache, txn, out;
  db->GetProperty(nullptr, "tidesdb.stats", &stats);
  db->GetProperty(nullptr, "tidesdb.block-cache", &cache);
  transaction_db()->GetProperty("tidesdb.txn.stats", &txn);
  auto stat = [&stats](const char* name) { return property_field(stats, name); };
  auto n = [](unsigned long long v) { return std::to_string(v); };

  out +=
      "\n=====================================\nTIDESDB ENGINE "
      "STATUS\n=====================================\n";
  std::vector<ColumnFamilyOwner> owners = column_family_owners(thd);
  std::map<uint32_t, std::string> labels;
  heading(&out, "COLUMN FAMILIES");
  for (const ColumnFamilyOwner& o : owners) {
    labels[o.cf_id] = owner_label(o);
    tidesdb::ColumnFamilyHandle* cf = db->GetColumnFamily(o.cf_name);
    if (cf == nullptr) continue;
    tidesdb::RangeEstimate estimate = db->EstimateRange(cf, tidesdb::Range{});
    std::vector<std::pair<uint64_t, uint64_t>> levels;  // files, bytes
    uint64_t tombstones = 0;
    for (const SstFile& f : sst_files(db, cf)) {
      if (levels.size() <= static_cast<size_t>(f.level)) levels.resize(f.level + 1);
      levels[f.level].first++;
      levels[f.level].second += f.file_size;
      tombstones += f.tombstones;
    }
    out += owner_label(o) + ": about " + n(estimate.keys) + " entries, " + n(estimate.bytes) + " bytes";
    if (levels.empty()) out += "; no SSTables";
    for (size_t l = 0; l < levels.size(); l++) {
      if (levels[l].first == 0) continue;
      out += "; L" + n(l) + " " + files(levels[l].first) + " " + n(levels[l].second) + " bytes";
    }
    if (tombstones != 0) out += "; " + n(tombstones) + " tombstones";
    out += "\n";
  }

  heading(&out, "MEMTABLES");
  std::string mem, immutable;
  db->GetProperty(nullptr, "tidesdb.cur-size-all-mem-tables", &mem);
  db->GetProperty(nullptr, "tidesdb.num-immutable-mem-tables", &immutable);
  out += "Memory in memtables " + mem + " bytes; immutable memtables waiting for flush " + immutable + "\n";
  out += "Flushes " + n(stat("flushes")) + ", " + n(stat("flush_bytes")) + " bytes written, " +
         n(stat("flush_entries_dropped")) + " overwritten entries left out\n";

  heading(&out, "BLOCK CACHE");
  const unsigned long long hits = property_field(cache, "hits"), misses = property_field(cache, "misses");
  out += "Capacity " + n(property_field(cache, "capacity")) + " bytes, usage " +
         n(property_field(cache, "usage")) + " bytes\n";
  out += "Hits " + n(hits) + ", misses " + n(misses) + ", hit rate " + percent(hits, hits + misses) +
         ", evictions " + n(property_field(cache, "evictions")) + "\n";

  heading(&out, "COMPACTIONS AND WRITE STALLS");
  std::vector<CompactionRecord> recent = compactions(db);
  size_t running = 0;
  for (const CompactionRecord& c : recent) running += c.state == "running";
  out += "Running " + n(running) + "; completed " + n(stat("compactions")) + " (" +
         n(stat("compaction_bytes_read")) + " bytes read, " + n(stat("compaction_bytes_written")) +
         " written, " + n(stat("compaction_entries_dropped")) + " entries dropped); trivial moves " +
         n(stat("compaction_trivial_moves")) + " files (" + n(stat("compaction_bytes_moved")) + " bytes)\n";
  out += "Value-log GC: " + n(stat("vlog_relocated_bytes")) + " bytes relocated, " +
         n(stat("vlog_files_deleted")) + " logs deleted (" + n(stat("vlog_bytes_deleted")) + " bytes)\n";
  out += "Write slowdowns " + n(stat("slowdown_micros")) + " us, write stalls " + n(stat("stall_micros")) +
         " us (total time writers waited for flushes and compactions)\n";
  size_t shown = 0;
  for (const CompactionRecord& c : recent) {
    if (shown++ == 5) break;
    if (shown == 1) out += "Latest (newest first):\n";
    auto label = labels.find(c.cf_id);
    uint64_t end = c.end_micros != 0 ? c.end_micros : my_hrtime().val;
    out += "  #" + n(c.id) + " " + (label != labels.end() ? label->second : "cf " + n(c.cf_id)) + ": " +
           c.state + ", " + (c.manual ? "manual" : c.reason) + (c.move ? " (trivial move)" : "") + ", L" +
           n(c.level) + " -> L" + n(c.output_level) + ", " + files(c.input_files) + " " + n(c.input_bytes) +
           " bytes -> " + files(c.output_files) + " " + n(c.output_bytes) + " bytes, " +
           n(end > c.start_micros ? (end - c.start_micros) / 1000 : 0) + " ms" +
           (c.state == "failed" ? ", " + c.status : "") + "\n";
  }

  heading(&out, "WRITE-AHEAD LOG");
  const unsigned long long groups = stat("commit_groups"), commits = stat("commits");
  out += "Sync mode " + std::string(sync_mode_name(configured_sync_mode())) + "; " + n(stat("wal_bytes")) +
         " bytes written, " + n(stat("wal_syncs")) + " fsyncs\n";
  out += "Commit groups " + n(groups) + ", commits " + n(commits);
  if (groups != 0) {
    char per[32];
    snprintf(per, sizeof(per), "%.2f", static_cast<double>(commits) / static_cast<double>(groups));
    out += std::string(" (") + per + " per group)";
  }
  out += "; last sequence " + n(stat("last_sequence")) + "\n";

  heading(&out, "TRANSACTIONS");
  out += "Library: " + n(property_field(txn, "commits")) + " commits, " +
         n(property_field(txn, "rollbacks")) + " rollbacks, " + n(property_field(txn, "conflicts")) +
         " conflicts, " + n(property_field(txn, "deadlocks")) + " deadlocks, " +
         n(property_field(txn, "lock_timeouts")) + " lock wait timeouts, " +
         n(property_field(txn, "prepares")) + " prepares\n";
  std::vector<tidesdb::LockStatus> locks = transaction_db()->GetLockStatus();
  std::map<uint64_t, uint64_t> held, waiting;
  size_t granted = 0;
  for (const tidesdb::LockStatus& l : locks) {
    (l.granted ? held : waiting)[l.txn_id]++;
    granted += l.granted;
  }
  out += "Prepared now " + n(property_field(txn, "prepared")) + "; row locks held " + n(granted) +
         ", lock requests waiting " + n(locks.size() - granted) + "\n";
  std::vector<OpenTransaction> open = open_transactions();
  out += "Open transactions " + n(open.size()) + "\n";
  const uint64_t now = my_hrtime().val;
  for (const OpenTransaction& t : open) {
    char age[32];
    snprintf(age, sizeof(age), "%.3f",
             now > t.began_micros ? static_cast<double>(now - t.began_micros) / 1e6 : 0.0);
    out += "---TRANSACTION " + n(t.txn_id) + ", " + (t.prepared ? "PREPARED" : "ACTIVE") + " " + age +
           " s, connection " + n(t.connection_id) + ", " + isolation_name(t.isolation) + ", " +
           (t.pessimistic ? "pessimistic" : "optimistic") + "\n";
    out += "write set " + n(t.write_set_count) + " entries, " + n(t.write_set_bytes) + " bytes; " +
           n(held[t.txn_id]) + " locks held" + (waiting[t.txn_id] != 0 ? ", WAITING FOR A LOCK" : "") + "\n";
    if (!t.query.empty()) out += "statement: " + t.query + "\n";
  }

  heading(&out, "BACKGROUND ERRORS");
  {
    std::lock_guard<std::mutex> guard(background_error_mutex);
    out += n(status_counters.background_errors.load()) + " since the engine started";
    if (!latest_background_error.empty()) {
      char when[32];
      snprintf(when, sizeof(when), "%.0f",
               now > latest_background_error_micros
                   ? static_cast<double>(now - latest_background_error_micros) / 1e6
                   : 0.0);
      out += "; the latest " + std::string(when) + " s ago: " + latest_background_error;
    }
    out += "\n";
  }

  heading(&out, "LATEST CONFLICT OR DEADLOCK");
  std::string latest = latest_conflict(thd);
  out += latest.empty() ? "None since the engine started\n" : latest;

  heading(&out, "READS");
  std::string sources, latency;
  db->GetProperty(nullptr, "tidesdb.read-sources", &sources);
  db->GetProperty(nullptr, "tidesdb.latency", &latency);
  out += "Point reads answered by: " + sources + latency;
  out += "----------------------------\nEND OF TIDESDB ENGINE STATUS\n============================\n";
  return out;
}

}  // namespace

void note_background_error(std::string_view message) {
  status_counters.background_errors.add();
  std::lock_guard<std::mutex> guard(background_error_mutex);
  latest_background_error.assign(message.data(), message.size());
  latest_background_error_micros = my_hrtime().val;
}

bool show_engine_status(handlerton*, THD* thd, stat_print_fn* print, enum ha_stat_type stat) {
  if (stat != HA_ENGINE_STATUS || base_db() == nullptr) return false;
  std::string report = engine_report(thd);
  return print(thd, "TidesDB", 7, "", 0, report.data(), report.size());
}

}  // namespace tidesql
