// Status variables (SHOW GLOBAL STATUS LIKE 'tidesdb%') and SHOW ENGINE TIDESDB STATUS.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>
#include <mysql/plugin.h>

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace tidesql {

// A counter bumped by many connections at once (rows_read: once per row): each thread adds
// to one of several slots, each on its own cache line, so two cores counting do not take
// the line from each other at every row; a read sums the slots.
class StripedCounter {
 public:
  void add(unsigned long long n = 1) { slots_[thread_slot()].value.fetch_add(n, std::memory_order_relaxed); }
  unsigned long long load() const {
    unsigned long long sum = 0;
    for (const Slot& s : slots_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  static constexpr unsigned kSlots = 16;
  struct alignas(64) Slot {
    std::atomic<unsigned long long> value{0};
  };
  // A hash of the thread's id (pthread_self reads it from the thread register: no TLS
  // lookup, which in a loaded plugin is a call into the dynamic loader).
  static unsigned thread_slot() {
    const uint64_t id = static_cast<uint64_t>(pthread_self());
    return static_cast<unsigned>((id * 0x9E3779B97F4A7C15ull) >> 60) % kSlots;
  }
  Slot slots_[kSlots];
};

struct StatusCounters {
  StripedCounter rows_read;
  StripedCounter rows_inserted;
  StripedCounter rows_updated;
  StripedCounter rows_deleted;
  StripedCounter off_row_reads;   // off-row BLOB values read
  StripedCounter off_row_writes;  // off-row BLOB values written
  // Rows a secondary index's entries gave whole, without a read of the row by primary key.
  StripedCounter covered_index_reads;
  StripedCounter transactions;
  StripedCounter commits;
  StripedCounter rollbacks;
  StripedCounter conflicts;
  StripedCounter lock_wait_timeouts;
  StripedCounter prepares;            // two-phase commits' first phases
  StripedCounter binlog_checkpoints;  // commit_checkpoint_request answered
  // Errors the library reported from its own threads (a failed flush or compaction: a
  // full disk, a corrupt file), also in the error log.
  StripedCounter background_errors;
};

// Counts a library error message and keeps it as the latest (SHOW ENGINE TIDESDB STATUS).
void note_background_error(std::string_view message);

extern StatusCounters status_counters;

// Null-terminated list for the plugin declaration.
extern SHOW_VAR status_variables[];

// handlerton::show_status: the library's statistics, one row per section.
bool show_engine_status(handlerton* hton, THD* thd, stat_print_fn* print, enum ha_stat_type stat);

}  // namespace tidesql
