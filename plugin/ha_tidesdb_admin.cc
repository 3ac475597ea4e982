// Maintenance statements: ANALYZE (row count and rec_per_key, persisted), OPTIMIZE
// (flush + compact the table's column families), CHECK (each index agrees with the rows)
// and REPAIR (rebuilds the secondary indexes from the rows). Each reports its progress to
// SHOW PROCESSLIST (the Progress column) and to clients that ask for progress reports:
// one stage per pass, and in each the rows or entries done of the table's estimate.
#include "ha_tidesdb.h"

#include <mysqld_error.h>
#include <sql_class.h>

#include <algorithm>

#include "dictionary.h"
#include "engine.h"
#include "row_codec.h"
#include "sysvars.h"

namespace tidesql {

namespace {

// thd_progress_* for one maintenance statement on one table (a statement naming several
// tables reports each in turn).
class Progress {
 public:
  Progress(THD* thd, uint stages, uint64_t estimate) : thd_(thd), estimate_(estimate) {
    thd_progress_init(thd, stages);
    thd_progress_report(thd, 0, std::max<uint64_t>(estimate_, 1));
  }
  ~Progress() { thd_progress_end(thd_); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void next_stage(uint64_t estimate) {
    thd_progress_next_stage(thd_);
    estimate_ = estimate;
    done_ = 0;
    thd_progress_report(thd_, 0, std::max<uint64_t>(estimate_, 1));
  }
  // One more row or entry; reported every kEvery (the report takes a mutex).
  void step() {
    if (++done_ % kEvery != 0) return;
    thd_progress_report(thd_, done_, std::max(estimate_, done_));
    // Tests only: hold here, with progress shown, until the variable is OFF again.
    while (sysvars.debug_pause_admin_progress && !thd_killed(thd_)) my_sleep(10000);
  }
  // Sets the count outright (OPTIMIZE: column families done).
  void reached(uint64_t done) {
    done_ = done;
    thd_progress_report(thd_, done_, std::max(estimate_, done_));
  }

 private:
  static constexpr uint64_t kEvery = 1024;
  THD* thd_;
  uint64_t estimate_;
  uint64_t done_ = 0;
};

}  // namespace

bool ha_tidesdb::decode_for_indexes(const std::string& stored, const tidesdb::ReadOptions& ro) {
  if (decode_row(table, share_->def, stored, table->record[0], &row_off_row_) != 0) return false;
  if (!row_off_row_.empty()) {
    // Every off-row value, so that CHECK TABLE finds one that is missing.
    if (share_->blob_cf == nullptr) return false;
    tidesdb::Status s =
        read_off_row_values([&](const std::string& key,
                                std::string* out) { return base_db()->Get(ro, share_->blob_cf, key, out); },
                            table, table->record[0], row_off_row_, nullptr, &row_blobs_, &row_blob_read_);
    if (!s.ok()) {
      sql_print_error("TidesDB: table %s: %s", share_->name.c_str(), s.ToString().c_str());
      return false;
    }
  }
  if (table->vfield != nullptr) table->update_virtual_fields(this, VCOL_UPDATE_INDEXED);
  return true;
}

int ha_tidesdb::analyze(THD* thd, HA_CHECK_OPT* check_opt) {
  TableStats st;
  tidesdb::ReadOptions ro;
  ro.fill_cache = false;
  info(HA_STATUS_VARIABLE);
  // Stages: the rows, then each index.
  Progress progress(thd, 1 + table->s->keys, stats.records);
  {
    auto it = base_db()->NewIterator(ro, data_cf());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      st.rows++;
      progress.step();
    }
    if (!it->status().ok()) return HA_ADMIN_FAILED;
  }
  st.rec_per_key.resize(table->s->keys);
  for (uint i = 0; i < table->s->keys; i++) {
    progress.next_stage(st.rows);
    const KeyCodec& codec = codecs_[i];
    uint parts = codec.parts();
    std::vector<uint64_t> distinct(parts, 0);
    std::vector<std::string> previous(parts);
    uint64_t entries = 0;
    auto it = base_db()->NewIterator(ro, index_cf(i));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view key(it->key().data(), it->key().size());
      entries++;
      progress.step();
      for (uint j = 0; j < parts; j++) {
        bool any_null;
        size_t n = codec.parts_length(key, j + 1, &any_null);
        std::string_view prefix = key.substr(0, n);
        if (entries == 1 || prefix != previous[j]) {
          distinct[j]++;
          previous[j].assign(prefix);
        }
      }
    }
    if (!it->status().ok()) return HA_ADMIN_FAILED;
    st.rec_per_key[i].resize(table->key_info[i].ext_key_parts, 1);
    for (uint j = 0; j < parts; j++)
      st.rec_per_key[i][j] = distinct[j] ? (entries + distinct[j] - 1) / distinct[j] : 1;
  }
  tidesdb::Status s = dictionary_save_stats(share_->def.table_id, st);
  if (!s.ok()) return HA_ADMIN_FAILED;
  {
    std::lock_guard<std::mutex> guard(share_->mutex);
    share_->stats = st;
    share_->stats_loaded = true;
  }
  info(HA_STATUS_CONST);
  return HA_ADMIN_OK;
}

int ha_tidesdb::optimize(THD* thd, HA_CHECK_OPT* check_opt) {
  // One stage: the column families compacted (each compaction runs to its end).
  const std::vector<tidesdb::ColumnFamilyHandle*> cfs = share_->all_column_families();
  Progress progress(thd, 1, cfs.size());
  uint64_t done = 0;
  for (tidesdb::ColumnFamilyHandle* cf : cfs) {
    tidesdb::Status s = base_db()->CompactRange(cf, nullptr);
    if (!s.ok()) {
      ha_error_from_status(s, "OPTIMIZE TABLE");
      return HA_ADMIN_FAILED;
    }
    progress.reached(++done);
  }
  return HA_ADMIN_OK;
}

int ha_tidesdb::check(THD* thd, HA_CHECK_OPT* check_opt) {
  // Every index must hold exactly one entry per row, and each entry the row's key.
  tidesdb::ReadOptions ro;
  ro.fill_cache = false;
  const tidesdb::Snapshot* snapshot = base_db()->GetSnapshot();
  ro.snapshot = snapshot;
  uint64_t rows = 0, missing = 0, off_row_values = 0;
  std::vector<uint64_t> entries(table->s->keys, 0);
  int result = HA_ADMIN_OK;
  // A read that fails (a damaged file) says why in a row of CHECK TABLE's output.
  auto unreadable = [&](const tidesdb::Status& s, const char* what) {
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_GET_ERRMSG, "TidesDB: %s of %s.%s: %s", what,
                        table_share->db.str, table_share->table_name.str, s.ToString().c_str());
    result = HA_ADMIN_CORRUPT;
  };
  // Column families the library marked damaged (a missing file, a damaged block that
  // compaction met) are named first.
  for (tidesdb::ColumnFamilyHandle* cf : share_->all_column_families()) {
    std::string damage;
    if (base_db()->GetProperty(cf, "tidesdb.damage", &damage) && !damage.empty()) {
      push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_GET_ERRMSG,
                          "TidesDB: table %s.%s is damaged: %s", table_share->db.str,
                          table_share->table_name.str, damage.c_str());
      result = HA_ADMIN_CORRUPT;
    }
  }
  info(HA_STATUS_VARIABLE);
  // Stages: the rows (each looked up in every secondary index), then each secondary index.
  uint secondary = 0;
  for (uint i = 0; i < table->s->keys; i++) secondary += is_primary(i) ? 0 : 1;
  Progress progress(thd, 1 + secondary, stats.records);
  {
    auto it = base_db()->NewIterator(ro, data_cf());
    std::string value, key, entry_value;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rows++;
      progress.step();
      value.assign(it->value().data(), it->value().size());
      if (!decode_for_indexes(value, ro)) {
        missing++;
        continue;
      }
      off_row_values += row_off_row_.size();
      std::string pk(it->key().data(), it->key().size());
      for (uint i = 0; i < table->s->keys; i++) {
        if (is_primary(i)) continue;
        encode_index_entry(i, table->record[0], pk, &key, &entry_value);
        std::string found;
        if (!base_db()->Get(ro, index_cf(i), key, &found).ok()) missing++;
      }
    }
    if (!it->status().ok()) unreadable(it->status(), "the rows");
  }
  for (uint i = 0; i < table->s->keys && result == HA_ADMIN_OK; i++) {
    if (is_primary(i)) continue;
    progress.next_stage(rows);
    auto it = base_db()->NewIterator(ro, index_cf(i));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      entries[i]++;
      progress.step();
    }
    if (!it->status().ok()) unreadable(it->status(), table->key_info[i].name.str);
    if (entries[i] != rows) {
      sql_print_error("TidesDB: CHECK TABLE %s: index %s has %llu entries for %llu rows",
                      share_->name.c_str(), table->key_info[i].name.str,
                      static_cast<unsigned long long>(entries[i]), static_cast<unsigned long long>(rows));
      result = HA_ADMIN_CORRUPT;
    }
  }
  if (share_->blob_cf != nullptr && result == HA_ADMIN_OK) {
    // Every off-row value is named by one row (a value no row names is lost space).
    uint64_t stored = 0;
    auto it = base_db()->NewIterator(ro, share_->blob_cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) stored++;
    if (!it->status().ok()) unreadable(it->status(), "the off-row values");
    if (stored != off_row_values) {
      sql_print_error("TidesDB: CHECK TABLE %s: %llu off-row values stored, the rows name %llu",
                      share_->name.c_str(), static_cast<unsigned long long>(stored),
                      static_cast<unsigned long long>(off_row_values));
      result = HA_ADMIN_CORRUPT;
    }
  }
  base_db()->ReleaseSnapshot(snapshot);
  if (missing != 0) {
    sql_print_error("TidesDB: CHECK TABLE %s: %llu index entries or rows are missing or unreadable",
                    share_->name.c_str(), static_cast<unsigned long long>(missing));
    result = HA_ADMIN_CORRUPT;
  }
  return result;
}

namespace {
// REPAIR commits its index changes in batches of about this many bytes (the server holds
// the table against writers meanwhile, so no batch can conflict with anyone).
constexpr size_t kRepairBatchBytes = 4 << 20;
}  // namespace

// Two idempotent passes over a consistent view: (1) every row's entry in each secondary
// index is written where it is missing or differs; (2) every entry that no row produces
// (no row for its primary key, or the row's entry has another key) is deleted. Each batch
// is its own commit, so a REPAIR killed in the middle leaves no index worse than it was,
// and running it again finishes the job. Rows that cannot be decoded cannot be repaired
// from: REPAIR then reports the table corrupt and changes nothing.
int ha_tidesdb::repair(THD* thd, HA_CHECK_OPT* check_opt) {
  tidesdb::WriteBatch batch;
  uint64_t written = 0, removed = 0;
  auto flush = [&]() -> tidesdb::Status {
    if (batch.Count() == 0) return tidesdb::Status::OK();
    tidesdb::Status s = transaction_db()->Write(tidesdb::WriteOptions(), &batch);
    batch.Clear();
    return s;
  };
  auto fail = [&](const tidesdb::Status& s) {
    ha_error_from_status(s, "REPAIR TABLE", thd);
    return HA_ADMIN_FAILED;
  };
  tidesdb::ReadOptions ro;
  ro.fill_cache = false;
  std::string key, value, found, pk, row;
  info(HA_STATUS_VARIABLE);
  uint secondary = 0;
  for (uint i = 0; i < table->s->keys; i++) secondary += is_primary(i) ? 0 : 1;
  // Stages: the rows, then the entries of every secondary index.
  Progress progress(thd, 2, stats.records);
  uint64_t rows = 0;
  {
    auto it = base_db()->NewIterator(ro, data_cf());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rows++;
      progress.step();
      row.assign(it->value().data(), it->value().size());
      if (!decode_for_indexes(row, ro)) {
        sql_print_error("TidesDB: REPAIR TABLE %s: a row cannot be decoded; the indexes were not rebuilt",
                        share_->name.c_str());
        return HA_ADMIN_CORRUPT;
      }
      pk.assign(it->key().data(), it->key().size());
      for (uint i = 0; i < table->s->keys; i++) {
        if (is_primary(i)) continue;
        encode_index_entry(i, table->record[0], pk, &key, &value);
        tidesdb::Status s = base_db()->Get(ro, index_cf(i), key, &found);
        if (s.ok() && found == value) continue;
        if (!s.ok() && !s.IsNotFound()) return fail(s);
        batch.Put(index_cf(i), key, value);
        written++;
      }
      if (batch.ApproximateSize() >= kRepairBatchBytes) {
        tidesdb::Status s = flush();
        if (!s.ok()) return fail(s);
      }
      if (thd_killed(thd)) return HA_ADMIN_FAILED;
    }
    if (!it->status().ok()) return fail(it->status());
  }
  tidesdb::Status s = flush();
  if (!s.ok()) return fail(s);

  // Pass 2 reads what pass 1 wrote.
  progress.next_stage(rows * secondary);
  for (uint i = 0; i < table->s->keys; i++) {
    if (is_primary(i)) continue;
    auto it = base_db()->NewIterator(ro, index_cf(i));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      progress.step();
      std::string_view entry_key(it->key().data(), it->key().size());
      std::string_view entry_value(it->value().data(), it->value().size());
      std::string_view packed;
      bool produced = false;
      if (entry_primary_key(i, entry_key, entry_value, &pk, &packed)) {
        s = base_db()->Get(ro, data_cf(), pk, &row);
        if (!s.ok() && !s.IsNotFound()) return fail(s);
        if (s.ok() && decode_for_indexes(row, ro)) {
          encode_index_entry(i, table->record[0], pk, &key, &value);
          produced = key == entry_key;
        }
      }
      if (!produced) {
        batch.Delete(index_cf(i), it->key());
        removed++;
      }
      if (batch.ApproximateSize() >= kRepairBatchBytes) {
        s = flush();
        if (!s.ok()) return fail(s);
      }
      if (thd_killed(thd)) return HA_ADMIN_FAILED;
    }
    if (!it->status().ok()) return fail(it->status());
  }
  s = flush();
  if (!s.ok()) return fail(s);
  if (written != 0 || removed != 0) {
    sql_print_information("TidesDB: REPAIR TABLE %s: %llu index entries written, %llu removed",
                          share_->name.c_str(), static_cast<unsigned long long>(written),
                          static_cast<unsigned long long>(removed));
  }
  return HA_ADMIN_OK;
}

}  // namespace tidesql
