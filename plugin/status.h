// Status variables (SHOW GLOBAL STATUS LIKE 'tidesdb%') and SHOW ENGINE TIDESDB STATUS.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>
#include <mysql/plugin.h>

#include <atomic>
#include <string_view>

namespace tidesql {

struct StatusCounters {
  std::atomic<unsigned long long> rows_read{0};
  std::atomic<unsigned long long> rows_inserted{0};
  std::atomic<unsigned long long> rows_updated{0};
  std::atomic<unsigned long long> rows_deleted{0};
  std::atomic<unsigned long long> off_row_reads{0};   // off-row BLOB values read
  std::atomic<unsigned long long> off_row_writes{0};  // off-row BLOB values written
  std::atomic<unsigned long long> transactions{0};
  std::atomic<unsigned long long> commits{0};
  std::atomic<unsigned long long> rollbacks{0};
  std::atomic<unsigned long long> conflicts{0};
  std::atomic<unsigned long long> lock_wait_timeouts{0};
  std::atomic<unsigned long long> prepares{0};            // two-phase commits' first phases
  std::atomic<unsigned long long> binlog_checkpoints{0};  // commit_checkpoint_request answered
  // Errors the library reported from its own threads (a failed flush or compaction: a
  // full disk, a corrupt file), also in the error log.
  std::atomic<unsigned long long> background_errors{0};
};

// Counts a library error message and keeps it as the latest (SHOW ENGINE TIDESDB STATUS).
void note_background_error(std::string_view message);

extern StatusCounters status_counters;

// Null-terminated list for the plugin declaration.
extern SHOW_VAR status_variables[];

// handlerton::show_status: the library's statistics, one row per section.
bool show_engine_status(handlerton* hton, THD* thd, stat_print_fn* print, enum ha_stat_type stat);

}  // namespace tidesql
