// State shared by every handler of one open table (one per TABLE_SHARE, reached through
// the server's Handler_share, so each partition of a partitioned table has its own): the
// table's dictionary record, its column families, and its counters.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "dictionary.h"
#include "tidesdb/db.h"

namespace tidesql {

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

  // Next hidden row id (tables without a primary key); 0 = not loaded yet.
  std::atomic<uint64_t> next_row_id{0};
  // Next AUTO_INCREMENT value to hand out; 0 = not loaded yet.
  std::atomic<uint64_t> next_auto_increment{0};
  std::mutex auto_increment_mutex;  // loading next_auto_increment

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
