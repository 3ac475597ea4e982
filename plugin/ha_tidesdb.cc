#include "ha_tidesdb.h"

#include <mysqld_error.h>
#include <sql_class.h>

#include <algorithm>

#include "backup.h"
#include "dictionary.h"
#include "row_codec.h"
#include "status.h"
#include "table_options.h"

namespace tidesql {

ha_tidesdb::ha_tidesdb(handlerton* hton, TABLE_SHARE* share) : handler(hton, share) {}

ha_tidesdb::~ha_tidesdb() { close_iterator(); }

handler::Table_flags ha_tidesdb::table_flags() const {
  Table_flags flags = HA_BINLOG_ROW_CAPABLE | HA_NULL_IN_KEY | HA_CAN_INDEX_BLOBS | HA_REC_NOT_IN_SEQ |
                      HA_PRIMARY_KEY_IN_READ_INDEX | HA_CAN_VIRTUAL_COLUMNS | HA_CAN_SQL_HANDLER |
                      HA_TABLE_SCAN_ON_INDEX | HA_CAN_GEOMETRY | HA_CAN_BIT_FIELD | HA_CONCURRENT_OPTIMIZE |
                      HA_CAN_TABLES_WITHOUT_ROLLBACK | HA_DUPLICATE_POS | HA_CAN_REPAIR |
                      // BACKUP STAGE treats the tables as transactional: writes go on until
                      // BLOCK_COMMIT, where commits wait (the checkpoint's moment).
                      HA_CAN_ONLINE_BACKUPS |
                      // Old index entries are computed from the row the server passes, so
                      // every key column (virtual ones too) must be in it.
                      HA_REQUIRES_KEY_COLUMNS_FOR_DELETE;
  if (table_share != nullptr && table_share->primary_key != MAX_KEY)
    flags |= HA_PRIMARY_KEY_REQUIRED_FOR_POSITION;
  // No HA_BINLOG_STMT_CAPABLE, at any isolation level (as MyRocks): a replica replaying a
  // statement must find the rows the primary's statement found, and here UPDATE and DELETE
  // read the transaction's snapshot (REPEATABLE READ is snapshot isolation; InnoDB reads
  // the latest committed rows for them instead), so a row another transaction committed
  // after the snapshot is skipped on the primary and hit on the replica. With MIXED the
  // server logs TidesDB's changes as rows; STATEMENT is refused (ER_BINLOG_STMT_MODE_AND_
  // ROW_ENGINE) rather than replicated wrongly. docs/SQL-ENGINE.md, "Replication".
  return flags;
}

ulong ha_tidesdb::index_flags(uint index, uint part, bool all_parts) const {
  ulong flags = HA_READ_NEXT | HA_READ_PREV | HA_READ_ORDER | HA_READ_RANGE | HA_KEYREAD_ONLY;
  if (table_share != nullptr && index == table_share->primary_key)
    flags |= HA_CLUSTERED_INDEX;
  else
    flags |= HA_DO_INDEX_COND_PUSHDOWN;
  return flags;
}

int ha_tidesdb::report(const tidesdb::Status& status, const char* what) {
  std::string label;  // only corruption names the table
  if (status.IsCorruption() && table_share != nullptr)
    label = std::string(table_share->db.str) + "." + table_share->table_name.str;
  int error = ha_error_from_status(status, what, ha_thd(), label.empty() ? nullptr : label.c_str());
  on_row_error(ha_thd(), trx_context(ha_thd()), error);
  return error;
}

tidesdb::Transaction* ha_tidesdb::txn() {
  // The TABLE (and so this handler) outlives connections in the table cache: always the
  // current connection's context.
  trx_ = trx_context(ha_thd());
  if (!trx_->txn || trx_->txn->state() != tidesdb::Transaction::State::kActive)
    begin_statement(ha_thd(), trx_);
  return trx_->txn.get();
}

// --- DDL -------------------------------------------------------------------------------------

int ha_tidesdb::create(const char* name, TABLE* form, HA_CREATE_INFO* create_info) {
  if (transaction_db() == nullptr) return HA_ERR_INTERNAL_ERROR;
  // The server checked names, enumerations and ranges; a number given as a word it reads as 0.
  if (!check_table_options(form->s->option_list)) return HA_ERR_TIDESDB_REPORTED;
  const tidesdb::ColumnFamilyOptions options = table_column_family_options(form->s);
  std::string dict = dictionary_name(name);
  TableDef shape;
  if (int error = foreign_keys_for_create(form, create_info, dict, &shape.foreign_keys); error != 0)
    return error;
  shape.hidden_pk = form->s->primary_key == MAX_KEY;
  // A table with a stored BLOB column gets a column family for its off-row values (any
  // nonzero id asks for one).
  for (uint i = 0; i < form->s->blob_fields && shape.blob_id == 0; i++)
    if (form->field[form->s->blob_field[i]]->stored_in_db()) shape.blob_id = 1;
  shape.temporary = (create_info->options & HA_LEX_CREATE_TMP_TABLE) != 0;
  shape.auto_increment_start = create_info->auto_increment_value;
  shape.frm_version.assign(reinterpret_cast<const char*>(form->s->tabledef_version.str),
                           form->s->tabledef_version.length);
  TableDef created;
  const std::vector<size_t> filter_prefixes = index_filter_prefixes(form);
  tidesdb::Status s = dictionary_create_table(dict, form->s->keys, shape, options, filter_prefixes, &created);
  if (s.IsInvalidArgument()) {
    // The server has no table of this name (it checked its .frm files), so the dictionary
    // entry is a leftover of a DROP that did not finish: the new table must start empty.
    sql_print_warning("TidesDB: replacing the stale dictionary entry of %s", dict.c_str());
    s = dictionary_drop_table(dict);
    if (s.ok()) s = dictionary_create_table(dict, form->s->keys, shape, options, filter_prefixes, &created);
  }
  if (!s.ok()) return ha_error_from_status(s, "CREATE TABLE");
  return 0;
}

int ha_tidesdb::load_share(const char* name) {
  lock_shared_ha_data();
  share_ = static_cast<TableShare*>(get_ha_share_ptr());
  if (share_ == nullptr) {
    auto share = std::make_unique<TableShare>();
    share->name = dictionary_name(name);
    tidesdb::Status s = dictionary_load_table(share->name, &share->def);
    int error = 0;
    if (s.IsNotFound()) {
      error = HA_ERR_NO_SUCH_TABLE;
    } else if (!s.ok()) {
      error = ha_error_from_status(s, "open table");
    } else if (share->def.index_ids.size() != table->s->keys + (has_hidden_pk() ? 1u : 0u) ||
               share->def.hidden_pk != has_hidden_pk()) {
      sql_print_error(
          "TidesDB: the dictionary entry of %s does not match its .frm (%zu column families "
          "for %u keys)",
          share->name.c_str(), share->def.index_ids.size(), table->s->keys);
      error = HA_ERR_TABLE_DEF_CHANGED;
    } else if (!share->resolve_column_families()) {
      sql_print_error("TidesDB: a column family of table %s is missing", share->name.c_str());
      error = HA_ERR_CRASHED_ON_USAGE;
    }
    if (error != 0) {
      unlock_shared_ha_data();
      return error;
    }
    tidesdb::Status stats = dictionary_load_stats(share->def.table_id, &share->stats);
    share->stats_loaded = stats.ok();
    // The table works without them (the optimizer then estimates); ANALYZE TABLE writes
    // them anew.
    if (!stats.ok() && !stats.IsNotFound())
      sql_print_warning("TidesDB: the optimizer statistics of %s are not used: %s", share->name.c_str(),
                        stats.ToString().c_str());
    share->counters = table_counters(share->def.table_id);
    share_ = share.release();
    set_ha_share_ptr(share_);
  }
  unlock_shared_ha_data();
  return 0;
}

int ha_tidesdb::open(const char* name, int mode, uint test_if_locked) {
  if (transaction_db() == nullptr) return HA_ERR_INTERNAL_ERROR;
  int error = load_share(name);
  if (error != 0) return error;
  codecs_.resize(table->s->keys);
  for (uint i = 0; i < table->s->keys; i++) codecs_[i].init(table, i);
  // ref: 2-byte length + the primary key (or the 8-byte hidden row id).
  ref_length = has_hidden_pk() ? 8 : 2 + static_cast<uint>(codecs_[table->s->primary_key].max_length());
  scratch_record_.reset(new uchar[table->s->reclength + 8]);
  column_skips_ = column_skips(table);
  // A table scan walks the rows in primary-key order: an UPDATE of primary-key columns
  // through a scan must buffer the rows first, or it would meet the rows it moved.
  key_used_on_scan = table->s->primary_key;
  old_keys_.resize(table->s->keys);
  new_keys_.resize(table->s->keys);
  new_values_.resize(table->s->keys);
  fk_ = std::make_unique<ForeignKeyState>();
  return 0;
}

int ha_tidesdb::close() {
  close_iterator();
  fk_.reset();
  return 0;
}

int ha_tidesdb::delete_table(const char* name) {
  if (transaction_db() == nullptr) return HA_ERR_INTERNAL_ERROR;
  std::string dict = dictionary_name(name);
  TableDef def;
  bool known = dictionary_load_table(dict, &def).ok();
  if (known && !def.temporary)
    if (int error = check_drop_referenced(dict); error != 0) return error;
  tidesdb::Status s = dictionary_drop_table(dict);
  if (s.ok() && known) forget_table_counters(def.table_id);
  // Not ours: the server counts that as dropped (with a note), and its "drop from every
  // engine" pass for a table without .frm must not think TidesDB had it.
  if (s.IsNotFound()) return HA_ERR_NO_SUCH_TABLE;
  if (!s.ok()) return ha_error_from_status(s, "DROP TABLE");
  return 0;
}

int ha_tidesdb::rename_table(const char* from, const char* to) {
  if (transaction_db() == nullptr) return HA_ERR_INTERNAL_ERROR;
  // The children of a renamed table follow it (RENAME TABLE, ALTER TABLE ... RENAME), but
  // not through the renames of a copying ALTER, which end with the table's own name.
  THD* thd = ha_thd();
  std::string from_name = dictionary_name(from), to_name = dictionary_name(to);
  std::string moved_from = from_name;
  const auto temporary = [](const std::string& n) { return is_alter_temporary(n); };
  if (temporary(from_name) && thd_sql_command(thd) == SQLCOM_ALTER_TABLE &&
      thd->lex->query_tables != nullptr) {
    const TABLE_LIST* tl = thd->lex->query_tables;
    // The table this ALTER started from.
    moved_from = dictionary_name_of(std::string(tl->db.str, tl->db.length),
                                    std::string(tl->table_name.str, tl->table_name.length));
  }
  std::string to_db, to_table;
  if (!temporary(to_name)) sql_names(to_name, &to_db, &to_table);
  tidesdb::Status s;
  if (temporary(to_name) || (temporary(from_name) && moved_from == to_name)) {
    s = dictionary_rename_table(from_name, to_name);
  } else if (!temporary(from_name)) {
    s = dictionary_rename_table(from_name, to_name, true, to_db, to_table);
  } else {
    // ALTER TABLE ... RENAME that copied: the new table takes the name, then the children
    // of the original follow it.
    s = dictionary_rename_table(from_name, to_name);
    if (s.ok()) s = dictionary_move_children(moved_from, to_name, to_db, to_table);
  }
  if (s.IsNotFound()) return HA_ERR_NO_SUCH_TABLE;
  if (s.IsInvalidArgument()) return HA_ERR_TABLE_EXIST;
  if (!s.ok()) return ha_error_from_status(s, "RENAME TABLE");
  return 0;
}

int ha_tidesdb::truncate() {
  close_iterator();
  if (trx_ != nullptr) trx_->release_cursors();
  std::lock_guard<std::mutex> guard(share_->mutex);
  TableDef renewed;
  tidesdb::Status s = dictionary_truncate_table(share_->name, 0, table_column_family_options(table->s),
                                                index_filter_prefixes(table), &renewed);
  if (!s.ok()) return ha_error_from_status(s, "TRUNCATE TABLE");
  share_->def = renewed;
  if (!share_->resolve_column_families()) return HA_ERR_CRASHED_ON_USAGE;
  // The server holds the table exclusively: nobody takes values meanwhile.
  share_->counters->next_row_id = 0;
  share_->counters->next_auto_increment = 0;
  share_->stats = TableStats();
  share_->stats_loaded = false;
  return 0;
}

int ha_tidesdb::reset_auto_increment(ulonglong value) {
  share_->counters->next_auto_increment = value == 0 ? 1 : value;
  return 0;
}

void ha_tidesdb::update_create_info(HA_CREATE_INFO* create_info) {
  if (!(create_info->used_fields & HA_CREATE_USED_AUTO)) {
    info(HA_STATUS_AUTO);
    create_info->auto_increment_value = stats.auto_increment_value;
  }
}

// --- statistics ------------------------------------------------------------------------------

uint64_t ha_tidesdb::estimated_rows(tidesdb::ColumnFamilyHandle* cf) {
  return base_db()->EstimateRange(cf, tidesdb::Range{"", ""}).keys;
}

int ha_tidesdb::info(uint flag) {
  if (share_ == nullptr) return 0;
  if (flag & HA_STATUS_VARIABLE) {
    uint64_t now = microsecond_interval_timer();
    uint64_t at = share_->estimate_at_micros.load(std::memory_order_relaxed);
    if (at == 0 || now - at > TableShare::kEstimateRefreshMicros || (flag & HA_STATUS_TIME)) {
      tidesdb::RangeEstimate data = base_db()->EstimateRange(data_cf(), tidesdb::Range{"", ""});
      uint64_t index_bytes = 0;
      for (uint i = 0; i < table->s->keys; i++)
        if (!is_primary(i)) index_bytes += base_db()->EstimateRange(index_cf(i), {"", ""}).bytes;
      share_->estimated_rows = data.keys;
      // DATA_LENGTH counts the off-row values too, as InnoDB's counts its overflow pages.
      uint64_t blob_bytes = 0;
      if (share_->blob_cf != nullptr) blob_bytes = base_db()->EstimateRange(share_->blob_cf, {"", ""}).bytes;
      share_->estimated_data_bytes = data.bytes + blob_bytes;
      share_->estimated_index_bytes = index_bytes;
      share_->estimate_at_micros = now;
      share_->rows_changed_since_estimate = 0;
    }
    int64_t rows = static_cast<int64_t>(share_->estimated_rows.load(std::memory_order_relaxed)) +
                   share_->rows_changed_since_estimate.load(std::memory_order_relaxed);
    // Like InnoDB, never 0 (the count is an estimate, and a table the optimizer believes
    // empty is not read at all); 0 only when asked at open.
    if (rows <= 0) rows = (flag & (HA_STATUS_TIME | HA_STATUS_OPEN)) ? 0 : 1;
    stats.records = static_cast<ha_rows>(rows);
    stats.deleted = 0;
    stats.data_file_length = share_->estimated_data_bytes.load(std::memory_order_relaxed);
    stats.index_file_length = share_->estimated_index_bytes.load(std::memory_order_relaxed);
    stats.mean_rec_length = stats.records ? static_cast<ulong>(stats.data_file_length / stats.records) : 0;
  }
  if (flag & HA_STATUS_CONST) {
    const TableStats& st = share_->stats;
    for (uint i = 0; i < table->s->keys; i++) {
      KEY& key = table->key_info[i];
      for (uint j = 0; j < key.ext_key_parts; j++) {
        ulong value = 0;
        if (share_->stats_loaded && i < st.rec_per_key.size() && j < st.rec_per_key[i].size())
          value = static_cast<ulong>(std::max<uint64_t>(1, st.rec_per_key[i][j]));
        if ((key.flags & HA_NOSAME) && j + 1 >= key.user_defined_key_parts) value = 1;
        key.rec_per_key[j] = value;
      }
    }
    stats.block_size = 16384;
  }
  if (flag & HA_STATUS_ERRKEY) {
    const TrxContext* trx = existing_trx_context(ha_thd());
    if (trx != nullptr && trx->last_dup_key != MAX_KEY) errkey = trx->last_dup_key;
  }
  if (flag & HA_STATUS_AUTO) {
    if (table->found_next_number_field != nullptr && load_auto_increment() == 0)
      stats.auto_increment_value = share_->counters->next_auto_increment.load();
    else
      stats.auto_increment_value = 0;
  }
  return 0;
}

bool ha_tidesdb::estimate_bounds(uint index, const key_range* min_key, const key_range* max_key,
                                 std::string* start, std::string* limit, ha_rows* rows) {
  const KeyCodec& codec = codecs_[index];
  start->clear();
  limit->clear();
  uint start_parts = 0;
  if (min_key != nullptr) {
    start_parts = codec.append_key_image(min_key->key, min_key->length, scratch_record_.get(), start);
    if (min_key->flag == HA_READ_AFTER_KEY) *start = prefix_successor(*start);
  }
  if (max_key != nullptr) {
    codec.append_key_image(max_key->key, max_key->length, scratch_record_.get(), limit);
    // AFTER_KEY: every entry with the prefix is inside; BEFORE_KEY: those are outside.
    if (max_key->flag == HA_READ_AFTER_KEY) *limit = prefix_successor(*limit);
  }
  *rows = 1;
  // An equality on a whole UNIQUE (or primary) key with no NULL holds one row at most.
  if (min_key != nullptr && min_key->flag == HA_READ_KEY_EXACT && start_parts == codec.parts() &&
      (codec.unique() || is_primary(index)) && *limit == prefix_successor(*start)) {
    bool any_null = false;
    codec.parts_length(*start, start_parts, &any_null);
    if (!any_null) return false;
  }
  return limit->empty() || *start < *limit;
}

ha_rows ha_tidesdb::records_in_range(uint index, const key_range* min_key, const key_range* max_key,
                                     page_range* pages) {
  if (const ha_rows* rows = batched_estimate(index, min_key, max_key)) return *rows;
  std::string start, limit;
  ha_rows rows;
  if (!estimate_bounds(index, min_key, max_key, &start, &limit, &rows)) return rows;
  tidesdb::RangeEstimate e = base_db()->EstimateRange(index_cf(index), tidesdb::Range{start, limit});
  return std::max<ha_rows>(1, e.keys);
}

ha_rows ha_tidesdb::multi_range_read_info_const(uint keyno, RANGE_SEQ_IF* seq, void* seq_init_param,
                                                uint n_ranges, uint* bufsz, uint* mrr_mode,
                                                Cost_estimate* cost) {
  estimate_ranges_together(keyno, seq, seq_init_param, n_ranges);
  // The server walks the sequence again (it may do so any number of times: it restarts it
  // itself to count equality ranges), asking records_in_range about each range.
  const ha_rows rows =
      handler::multi_range_read_info_const(keyno, seq, seq_init_param, n_ranges, bufsz, mrr_mode, cost);
  batched_estimates_.clear();
  batched_keys_.clear();
  return rows;
}

void ha_tidesdb::estimate_ranges_together(uint keyno, RANGE_SEQ_IF* seq, void* seq_init_param,
                                          uint n_ranges) {
  batched_index_ = keyno;
  batched_estimates_.clear();
  batched_keys_.clear();
  next_batched_estimate_ = 0;
  // The ranges handler::multi_range_read_info_const calls records_in_range for: not those
  // on a whole unique key (one row), nor spatial ones; and with eq_range_index_dive_limit
  // or more equalities, not the equalities it takes from the index statistics instead.
  uint equalities = 0;
  KEY_MULTI_RANGE range;
  range_seq_t it = seq->init(seq_init_param, n_ranges, 0);
  while (!seq->next(it, &range)) {
    if ((range.range_flag & UNIQUE_RANGE) && !(range.range_flag & NULL_RANGE)) continue;
    if (range.range_flag & GEOM_FLAG) continue;
    BatchedEstimate b;
    const bool equality = (range.range_flag & EQ_RANGE) && !(range.range_flag & NULL_RANGE);
    equalities += equality;
    const uint parts = my_count_bits(range.start_key.keypart_map);
    b.from_statistics = equality && parts > 0 && table->key_info[keyno].actual_rec_per_key(parts - 1) > 0.5;
    auto keep = [this](const key_range& k, BatchedEstimate::Bound* bound) {
      if (k.length == 0) return;
      bound->present = true;
      bound->flag = k.flag;
      bound->offset = batched_keys_.size();
      bound->length = k.length;
      batched_keys_.append(reinterpret_cast<const char*>(k.key), k.length);
    };
    keep(range.start_key, &b.min);
    keep(range.end_key, &b.max);
    batched_estimates_.push_back(b);
  }
  const uint dive_limit = ha_thd()->variables.eq_range_index_dive_limit;
  if (dive_limit != 0 && equalities >= dive_limit) {
    batched_estimates_.erase(std::remove_if(batched_estimates_.begin(), batched_estimates_.end(),
                                            [](const BatchedEstimate& b) { return b.from_statistics; }),
                             batched_estimates_.end());
  }
  // One range: nothing to overlap; records_in_range estimates it alone.
  if (batched_estimates_.size() < 2) {
    batched_estimates_.clear();
    return;
  }
  // Each range's bounds in the index's CF, then one call for those that need an estimate.
  if (batched_bounds_.size() < 2 * batched_estimates_.size())
    batched_bounds_.resize(2 * batched_estimates_.size());
  batched_ranges_.clear();
  batched_asked_.clear();
  for (size_t i = 0; i < batched_estimates_.size(); ++i) {
    BatchedEstimate& b = batched_estimates_[i];
    key_range min_key{}, max_key{};
    auto restore = [this](const BatchedEstimate::Bound& bound, key_range* k) -> const key_range* {
      if (!bound.present) return nullptr;
      k->key = reinterpret_cast<const uchar*>(batched_keys_.data() + bound.offset);
      k->length = static_cast<uint>(bound.length);
      k->flag = bound.flag;
      return k;
    };
    std::string* start = &batched_bounds_[2 * i];
    std::string* limit = &batched_bounds_[2 * i + 1];
    if (!estimate_bounds(keyno, restore(b.min, &min_key), restore(b.max, &max_key), start, limit, &b.rows))
      continue;
    batched_ranges_.push_back(tidesdb::Range{*start, *limit});
    batched_asked_.push_back(i);
  }
  batched_results_.resize(batched_ranges_.size());
  base_db()->EstimateRanges(index_cf(keyno), batched_ranges_.data(), batched_ranges_.size(),
                            batched_results_.data());
  for (size_t j = 0; j < batched_ranges_.size(); ++j)
    batched_estimates_[batched_asked_[j]].rows = std::max<ha_rows>(1, batched_results_[j].keys);
  // A long IN list's bounds are not worth keeping for the next query.
  if (batched_bounds_.size() > 256) std::vector<std::string>().swap(batched_bounds_);
}

const ha_rows* ha_tidesdb::batched_estimate(uint index, const key_range* min_key, const key_range* max_key) {
  if (index != batched_index_ || next_batched_estimate_ >= batched_estimates_.size()) return nullptr;
  const BatchedEstimate& b = batched_estimates_[next_batched_estimate_];
  auto same = [this](const BatchedEstimate::Bound& bound, const key_range* k) {
    if (k == nullptr) return !bound.present;
    return bound.present && bound.flag == k->flag && bound.length == k->length &&
           std::memcmp(batched_keys_.data() + bound.offset, k->key, k->length) == 0;
  };
  if (!same(b.min, min_key) || !same(b.max, max_key)) return nullptr;
  ++next_batched_estimate_;
  return &b.rows;
}

double ha_tidesdb::scan_time() {
  // About one I/O unit per 16 KiB of data, as a B-tree engine's page count.
  return static_cast<double>(stats.data_file_length) / 16384.0 + 2;
}

int ha_tidesdb::extra(enum ha_extra_function operation) {
  switch (operation) {
    case HA_EXTRA_KEYREAD:
      keyread_ = true;
      break;
    case HA_EXTRA_NO_KEYREAD:
      keyread_ = false;
      break;
    case HA_EXTRA_IGNORE_DUP_KEY:
      ignore_dup_key_ = true;
      break;
    case HA_EXTRA_NO_IGNORE_DUP_KEY:
      ignore_dup_key_ = false;
      break;
    case HA_EXTRA_BEGIN_COPY:
    case HA_EXTRA_BEGIN_ALTER_IGNORE_COPY:
      copying_ = true;
      break;
    case HA_EXTRA_END_COPY:
    case HA_EXTRA_ABORT_COPY:
      copying_ = false;
      break;
    default:
      break;
  }
  return 0;
}

int ha_tidesdb::reset() {
  close_iterator();
  if (fk_ != nullptr) {
    fk_->drop_clones();
    fk_->resolved = false;
    fk_->parents.clear();
    fk_->children.clear();
  }
  keyread_ = false;
  ignore_dup_key_ = false;
  copying_ = false;
  lock_type_ = TL_READ;
  return 0;
}

// --- locking ---------------------------------------------------------------------------------

THR_LOCK_DATA** ha_tidesdb::store_lock(THD* thd, THR_LOCK_DATA** to, enum thr_lock_type lock_type) {
  if (lock_type != TL_IGNORE) lock_type_ = lock_type;
  return to;
}

int ha_tidesdb::external_lock(THD* thd, int lock_type) {
  if (lock_type == F_UNLCK) return 0;
  if (refuse_export(thd)) return HA_ERR_TIDESDB_REPORTED;
  trx_ = trx_context(thd);
  return begin_statement(thd, trx_);
}

int ha_tidesdb::start_stmt(THD* thd, thr_lock_type lock_type) {
  lock_type_ = lock_type;
  trx_ = trx_context(thd);
  return begin_statement(thd, trx_);
}

bool ha_tidesdb::want_locking_read() const {
  return lock_type_ >= TL_WRITE_ALLOW_WRITE || lock_type_ == TL_READ_WITH_SHARED_LOCKS;
}

bool ha_tidesdb::get_error_message(int error, String* buf) {
  // Foreign key violations name the constraint, as InnoDB's.
  if (error == HA_ERR_NO_REFERENCED_ROW || error == HA_ERR_ROW_IS_REFERENCED ||
      error == HA_ERR_FK_DEPTH_EXCEEDED) {
    const TrxContext* trx = existing_trx_context(ha_thd());
    if (trx != nullptr) buf->copy(trx->fk_error.data(), trx->fk_error.size(), system_charset_info);
    return false;
  }
  // handler::print_error() adds no message for a code it does not know when the message
  // is empty and flagged temporary: right for HA_ERR_TIDESDB_REPORTED.
  return error == HA_ERR_TIDESDB_REPORTED;
}

handler* create_handler(handlerton* hton, TABLE_SHARE* share, MEM_ROOT* mem_root) {
  return new (mem_root) ha_tidesdb(hton, share);
}

}  // namespace tidesql
