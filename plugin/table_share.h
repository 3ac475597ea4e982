// State shared by every handler of one open table (one per TABLE_SHARE, reached through
// the server's Handler_share, so each partition of a partitioned table has its own): the
// table's dictionary record, its column families, and its counters.
//
// The counters (hidden row ids, AUTO_INCREMENT) live outside the share, one set per table
// for the engine's lifetime: the server frees a TABLE_SHARE whenever no TABLE uses it
// (FLUSH TABLES, BACKUP STAGE, table-cache eviction), also between two statements of a
// transaction that has already taken values from them. A new share that reloaded them
// from the committed rows would hand those values out again: duplicate AUTO_INCREMENT
// values, and a hidden row id written twice, one row overwriting the other.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dictionary.h"
#include "tidesdb/db.h"

namespace tidesql {

// Indexes an in-place ALTER is building while writes go on (ha_tidesdb_alter.cc). Every
// write of the table meanwhile logs, in its own transaction, into log_cf: per index being
// built, the primary key of each row it changes and, for a row that existed before, the
// key of that row's old entry in the index. The ALTER's commit (no writer left) brings
// the built index up to date from the log.
struct IndexBuild {
  struct Index {
    KEY key;  // of the new definition; key.key_part points into parts, key.name into name
    std::vector<KEY_PART_INFO> parts;
    std::string name;
  };
  std::vector<Index> indexes;  // by build slot
  tidesdb::ColumnFamilyHandle* log_cf = nullptr;
};

// A table's counters, 0 until loaded from the committed rows at first use, and its index
// build, if any.
struct TableCounters {
  std::atomic<uint64_t> next_row_id{0};          // next hidden row id (no primary key)
  std::atomic<uint64_t> next_auto_increment{0};  // next AUTO_INCREMENT value to hand out
  std::atomic<uint64_t> next_blob_id{0};         // next off-row value's id (row_codec.h)
  std::mutex load_mutex;                         // loading any of them

  std::atomic<bool> building{false};  // whether build is set: the writers' fast path
  std::mutex build_mutex;
  std::shared_ptr<const IndexBuild> build;  // guarded by build_mutex

  std::shared_ptr<const IndexBuild> index_build() {
    if (!building.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard<std::mutex> guard(build_mutex);
    return build;
  }
  void set_index_build(std::shared_ptr<const IndexBuild> b) {
    std::lock_guard<std::mutex> guard(build_mutex);
    build = std::move(b);
    building.store(build != nullptr, std::memory_order_release);
  }
};

// The counters of the table with dictionary id `table_id` (TableDef::table_id, kept by
// RENAME), made on first use; forget_table_counters drops them (DROP TABLE).
std::shared_ptr<TableCounters> table_counters(uint64_t table_id);
void forget_table_counters(uint64_t table_id);

class TableShare : public Handler_share {
 public:
  // The dictionary name ("db/table") of the table.
  std::string name;

  // Guarded by mutex; replaced only by TRUNCATE, while the server holds the table
  // exclusively.
  std::mutex mutex;
  TableDef def;
  // One per def.index_ids.
  std::vector<tidesdb::ColumnFamilyHandle*> cfs;
  // def.blob_id's (off-row BLOB values), or null.
  tidesdb::ColumnFamilyHandle* blob_cf = nullptr;
  // cfs and blob_cf: every column family of the table.
  std::vector<tidesdb::ColumnFamilyHandle*> all_column_families() const {
    std::vector<tidesdb::ColumnFamilyHandle*> all = cfs;
    if (blob_cf != nullptr) all.push_back(blob_cf);
    return all;
  }

  // table_counters(def.table_id).
  std::shared_ptr<TableCounters> counters;

  // Size estimates for info(), refreshed at most every kEstimateRefreshMicros: computing
  // them walks the memtable's upper levels and every file's index, too much per statement.
  static constexpr uint64_t kEstimateRefreshMicros = 2'000'000;
  std::atomic<uint64_t> estimate_at_micros{0};  // 0 = never computed
  std::atomic<uint64_t> estimated_rows{0};
  std::atomic<uint64_t> estimated_data_bytes{0};
  std::atomic<uint64_t> estimated_index_bytes{0};
  // Rows written minus rows deleted since the estimate (statements of any transaction),
  // so that the count follows a table between refreshes.
  std::atomic<int64_t> rows_changed_since_estimate{0};

  // ANALYZE TABLE statistics, loaded at open.
  TableStats stats;
  bool stats_loaded = false;

  // Resolves the column families of def into cfs; false if one is missing.
  bool resolve_column_families();
};

}  // namespace tidesql
