#include "table_share.h"

#include <unordered_map>

namespace tidesql {
namespace {

std::mutex counters_mutex;
std::unordered_map<uint64_t, std::shared_ptr<TableCounters>> counters_by_table;

}  // namespace

std::shared_ptr<TableCounters> table_counters(uint64_t table_id) {
  std::lock_guard<std::mutex> guard(counters_mutex);
  std::shared_ptr<TableCounters>& counters = counters_by_table[table_id];
  if (!counters) counters = std::make_shared<TableCounters>();
  return counters;
}

void forget_table_counters(uint64_t table_id) {
  std::lock_guard<std::mutex> guard(counters_mutex);
  counters_by_table.erase(table_id);
}

bool TableShare::resolve_column_families() {
  cfs.clear();
  for (uint64_t id : def.index_ids) {
    tidesdb::ColumnFamilyHandle* cf = index_column_family(id);
    if (cf == nullptr) return false;
    cfs.push_back(cf);
  }
  blob_cf = nullptr;
  if (def.blob_id != 0) {
    blob_cf = index_column_family(def.blob_id);
    if (blob_cf == nullptr) return false;
  }
  return true;
}

}  // namespace tidesql
