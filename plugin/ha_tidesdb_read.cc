// Scans and index reads: rnd_* over the rows' column family, index_* over an index's,
// position / rnd_pos by primary key.
#include "ha_tidesdb.h"

#include <sql_class.h>

#include "coding.h"
#include "row_codec.h"
#include "status.h"

namespace tidesql {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

std::string_view view(const tidesdb::Slice& s) { return std::string_view(s.data(), s.size()); }

}  // namespace

void ha_tidesdb::open_iterator(tidesdb::ColumnFamilyHandle* cf) {
  close_iterator();
  tidesdb::Transaction* t = txn();
  iter_ = t->NewIterator(tidesdb::ReadOptions(), cf);
  iter_cf_ = cf;
  bound_.clear();
  bound_is_range_end_ = false;
  trx_->add_cursor(this);
}

void ha_tidesdb::close_iterator() {
  if (iter_) {
    iter_.reset();
    iter_cf_ = nullptr;
    if (trx_ != nullptr) trx_->remove_cursor(this);
  }
  iter_released_ = false;
}

void ha_tidesdb::release_cursor() {
  // Called by the transaction, which has already forgotten this cursor.
  iter_.reset();
  iter_cf_ = nullptr;
  iter_released_ = scan_ != ScanKind::kNone && !last_key_.empty();
}

bool ha_tidesdb::reposition() {
  if (!iter_released_) return false;
  tidesdb::ColumnFamilyHandle* cf = scan_ == ScanKind::kTable ? data_cf() : index_cf(active_index);
  open_iterator(cf);
  return true;
}

tidesdb::Status read_off_row_values(
    const std::function<tidesdb::Status(const std::string&, std::string*)>& get, TABLE* table, uchar* record,
    const std::vector<OffRowValue>& values, const std::function<bool(uint field)>& wanted,
    std::vector<std::string>* bytes, std::vector<bool>* read) {
  bytes->resize(values.size());
  read->assign(values.size(), false);
  const my_ptrdiff_t diff = record - table->record[0];
  for (size_t i = 0; i < values.size(); i++) {
    const OffRowValue& v = values[i];
    if (v.field == OffRowValue::kDroppedColumn || (wanted && !wanted(v.field))) continue;
    std::string& value = (*bytes)[i];
    tidesdb::Status s = get(blob_key(v.id), &value);
    if (!s.ok()) return s;
    if (value.size() != v.length)
      return tidesdb::Status::Corruption("off-row value " + std::to_string(v.id) + " has " +
                                         std::to_string(value.size()) + " bytes, its row says " +
                                         std::to_string(v.length));
    Field_blob* blob = static_cast<Field_blob*>(table->field[v.field]);
    blob->set_ptr_offset(diff, static_cast<uint32>(value.size()),
                         reinterpret_cast<const uchar*>(value.data()));
    (*read)[i] = true;
  }
  return tidesdb::Status::OK();
}

int ha_tidesdb::decode_stored_row(uchar* buf, bool all) {
  // A SELECT's row read without a lock fills only the columns the statement reads, as
  // InnoDB's non-locking reads do. A locked row is about to be changed, deleted or compared
  // whole; other statements (CHECKSUM TABLE, for one) read every column whatever read_set
  // says.
  const int command = thd_sql_command(ha_thd());
  const bool partial = !all && !want_locking_read() && command == SQLCOM_SELECT;
  int error = decode_row(table, share_->def, row_value_, buf, &row_off_row_,
                         partial ? &column_skips_ : nullptr, table->read_set);
  if (error != 0) {
    sql_print_error("TidesDB: table %s: a stored row cannot be decoded (error %d)", share_->name.c_str(),
                    error);
    return error;
  }
  if (row_off_row_.empty()) return 0;
  if (share_->blob_cf == nullptr) {
    sql_print_error("TidesDB: table %s: a row names off-row values, the table has none",
                    share_->name.c_str());
    return HA_ERR_CRASHED;
  }
  tidesdb::Transaction* t = txn();
  // A writing statement reads every value (its update keeps the unchanged ones by id),
  // except DELETE, which needs only their ids; a reading one reads those of the columns
  // it uses (and of primary key columns: position()).
  all = all || (want_locking_read() && command != SQLCOM_DELETE && command != SQLCOM_DELETE_MULTI);
  std::function<bool(uint)> wanted;
  if (!all)
    wanted = [this](uint field) {
      if (bitmap_is_set(table->read_set, field)) return true;
      if (has_hidden_pk()) return false;
      const KEY& pk = table->key_info[table->s->primary_key];
      for (uint i = 0; i < pk.user_defined_key_parts; i++)
        if (pk.key_part[i].fieldnr == field + 1) return true;
      return false;
    };
  // A row locked at its latest commit (tidesdb_locking_reads_latest) may be newer than
  // the snapshot, and so may its values: read them where the row was read. Only the row's
  // writers write them, and they hold its lock: the shared locks taken here wait for no one.
  const bool latest = row_locked_ && trx_->locks_latest;
  tidesdb::Status s = read_off_row_values(
      [&](const std::string& key, std::string* out) {
        return latest ? t->GetForShare(share_->blob_cf, key, out) : t->Get(share_->blob_cf, key, out);
      },
      table, buf, row_off_row_, wanted, &row_blobs_, &row_blob_read_);
  // Outside a snapshot the row may have been changed since it was read, its old values
  // deleted: the caller reads it again.
  for (bool read : row_blob_read_)
    if (read) status_counters.off_row_reads.add();
  if (s.IsNotFound() && t->snapshot_sequence() == 0) return HA_ERR_KEY_NOT_FOUND;
  if (s.IsNotFound()) s = tidesdb::Status::Corruption("an off-row value of a row is missing");
  if (!s.ok()) return report(s, "read of an off-row value");
  return 0;
}

int ha_tidesdb::decode_current_row(uchar* buf) {
  int error = decode_stored_row(buf, false);
  // An off-row value went away: the row changed after it was read (no snapshot). A
  // locking read (optimistic: validated at commit) then conflicts, as its commit would;
  // a plain read reads the latest version, as a read at this moment would, and skips the
  // row if it is gone.
  if (error == HA_ERR_KEY_NOT_FOUND && row_locked_)
    return report(
        tidesdb::Status::Busy("the row was changed by a transaction that committed after it was read"),
        "read");
  for (int attempt = 0; error == HA_ERR_KEY_NOT_FOUND && attempt < 100; attempt++) {
    tidesdb::Transaction* t = txn();
    tidesdb::Status s = t->Get(data_cf(), row_pk_, &row_value_);
    if (s.IsNotFound()) return HA_ERR_KEY_NOT_FOUND;
    if (!s.ok()) return report(s, "read");
    error = decode_stored_row(buf, false);
  }
  if (error == HA_ERR_KEY_NOT_FOUND)
    return report(tidesdb::Status::Busy("a row's off-row values keep changing while it is read"), "read");
  if (error != 0) return error;
  status_counters.rows_read.add();
  return 0;
}

bool ha_tidesdb::row_has_index_entry(uint index, std::string_view entry_key, const uchar* record) {
  // A DELETE reads no off-row values (only their ids), and the server computes virtual
  // columns only after the row is returned: a key over such a column cannot be encoded
  // from the record here, so its row is taken as it is.
  const KEY& k = table->key_info[index];
  for (uint i = 0; i < k.user_defined_key_parts; i++) {
    const Field* field = k.key_part[i].field;
    if ((field->flags & BLOB_FLAG) || !field->stored_in_db()) return true;
  }
  std::string key, value;
  encode_index_entry(index, record, row_pk_, &key, &value);
  return key == entry_key;
}

tidesdb::Status ha_tidesdb::locking_get(tidesdb::ColumnFamilyHandle* cf, const std::string& key,
                                        std::string* value) {
  // LOCK IN SHARE MODE shares the row; FOR UPDATE and the reads of writing statements
  // take it for update.
  tidesdb::Transaction* t = txn();
  return lock_type_ == TL_READ_WITH_SHARED_LOCKS ? t->GetForShare(cf, key, value)
                                                 : t->GetForUpdate(cf, key, value);
}

int ha_tidesdb::fetch_row(const std::string& pk, uchar* buf) {
  tidesdb::Transaction* t = txn();
  bool locking = want_locking_read();
  tidesdb::Status s = locking ? locking_get(data_cf(), pk, &row_value_) : t->Get(data_cf(), pk, &row_value_);
  if (s.IsNotFound()) return HA_ERR_KEY_NOT_FOUND;
  if (!s.ok()) return report(s, "read");
  row_pk_ = pk;
  row_locked_ = locking;
  return decode_current_row(buf);
}

bool ha_tidesdb::entry_primary_key(uint index, std::string_view key, std::string_view value, std::string* pk,
                                   std::string_view* packed) const {
  const KeyCodec& codec = codecs_[index];
  bool any_null = false;
  size_t n = codec.parts_length(key, codec.parts(), &any_null);
  if (n == 0 && codec.parts() > 0) return false;
  if (codec.unique() && !any_null) {
    uint64_t length;
    if (!get_varint(&value, &length) || length > value.size()) return false;
    pk->assign(value.data(), length);
    value.remove_prefix(length);
  } else {
    pk->assign(key.data() + n, key.size() - n);
  }
  *packed = value;
  return true;
}

int ha_tidesdb::entry_into_record(std::string_view key, std::string_view packed, uchar* buf) {
  bool pushed = pushed_idx_cond != nullptr && pushed_idx_cond_keyno == active_index;
  if (!pushed && !covering_read()) return 0;
  bool ok = codecs_[active_index].decode_into_record(key, &packed, buf);
  if (ok && !has_hidden_pk())
    ok = codecs_[table->s->primary_key].decode_into_record(pk_buf_, &packed, buf, false);
  if (!ok) {
    sql_print_error("TidesDB: table %s: malformed entry in index %s", share_->name.c_str(),
                    table->key_info[active_index].name.str);
    return HA_ERR_CRASHED;
  }
  if (!pushed) return 0;
  switch (handler_index_cond_check(this)) {
    case CHECK_POS:
      return 0;
    case CHECK_NEG:
      return HA_ERR_KEY_NOT_FOUND;
    case CHECK_OUT_OF_RANGE:
      return HA_ERR_END_OF_FILE;
    default:
      return HA_ERR_QUERY_INTERRUPTED;
  }
}

int ha_tidesdb::deliver_from_iterator(uchar* buf, bool forward, bool past_bound) {
  while (true) {
    if (!iter_->Valid()) {
      if (!iter_->status().ok()) return report(iter_->status(), "scan");
      if (past_bound && forward && !bound_.empty()) {
        // The bounded seek's range is done (the iterator may know nothing past it): seek
        // on from the bound, unbounded.
        iter_->Seek(bound_);
        bound_.clear();
        bound_is_range_end_ = false;
        continue;
      }
      return HA_ERR_END_OF_FILE;
    }
    std::string_view key = view(iter_->key());
    last_key_.assign(key);
    int error;
    if (scan_ == ScanKind::kTable || is_primary(active_index)) {
      if (want_locking_read()) {
        // A locking read returns the latest committed row (and locks or registers it).
        error = fetch_row(last_key_, buf);
      } else {
        row_pk_.assign(key);
        row_value_.assign(iter_->value().data(), iter_->value().size());
        row_locked_ = false;
        error = decode_current_row(buf);
      }
    } else {
      std::string_view packed;
      if (!entry_primary_key(active_index, key, view(iter_->value()), &pk_buf_, &packed)) {
        sql_print_error("TidesDB: table %s: malformed entry in index %s", share_->name.c_str(),
                        table->key_info[active_index].name.str);
        return HA_ERR_CRASHED;
      }
      int verdict = entry_into_record(key, packed, buf);
      if (verdict == HA_ERR_KEY_NOT_FOUND) {  // the pushed condition rejects the entry
        if (forward)
          iter_->Next();
        else
          iter_->Prev();
        continue;
      }
      if (verdict != 0) return verdict;
      // A locking read locks (or registers) the row even when the index covers the
      // columns: FOR UPDATE through a covering index must not skip its lock.
      if (covering_read() && !want_locking_read()) {
        row_pk_ = pk_buf_;
        row_locked_ = false;
        status_counters.rows_read.add();
        status_counters.covered_index_reads.add();
        error = 0;
      } else {
        error = fetch_row(pk_buf_, buf);
        if (error == 0 && row_locked_ && trx_->locks_latest &&
            !row_has_index_entry(active_index, last_key_, buf))
          error = HA_ERR_KEY_NOT_FOUND;
      }
    }
    if (error != HA_ERR_KEY_NOT_FOUND) return error;
    // The row went away after the index entry was read (READ COMMITTED): skip it.
    if (forward)
      iter_->Next();
    else
      iter_->Prev();
  }
}

// --- table scans -----------------------------------------------------------------------------

int ha_tidesdb::rnd_init(bool scan) {
  close_iterator();
  scan_ = ScanKind::kTable;
  last_key_.clear();
  return 0;
}

int ha_tidesdb::rnd_end() {
  close_iterator();
  scan_ = ScanKind::kNone;
  return 0;
}

int ha_tidesdb::rnd_next(uchar* buf) {
  if (iter_) {
    iter_->Next();
  } else if (reposition()) {
    iter_->Seek(last_key_);
    if (iter_->Valid() && view(iter_->key()) == last_key_) iter_->Next();
  } else {
    open_iterator(data_cf());
    iter_->SeekToFirst();
  }
  return deliver_from_iterator(buf, true);
}

void ha_tidesdb::store_ref(uchar* to, const std::string& pk) const {
  if (has_hidden_pk()) {
    memset(to, 0, 8);
    memcpy(to, pk.data(), std::min<size_t>(8, pk.size()));
    return;
  }
  size_t n = std::min<size_t>(pk.size(), ref_length - 2);
  int2store(to, static_cast<uint16>(n));
  memcpy(to + 2, pk.data(), n);
  memset(to + 2 + n, 0, ref_length - 2 - n);
}

void ha_tidesdb::position(const uchar* record) {
  // The key of the row last read: a covering read (index merge) cannot rebuild a primary
  // key with prefix parts from the record.
  if (has_hidden_pk() || !row_pk_.empty()) {
    store_ref(ref, row_pk_);
    return;
  }
  pk_buf_.clear();
  encode_primary_key(record, &pk_buf_);
  store_ref(ref, pk_buf_);
}

int ha_tidesdb::rnd_pos_by_record(uchar* record) {
  // The record comes from elsewhere (a replicated row event), not from the last read.
  if (has_hidden_pk()) return handler::rnd_pos_by_record(record);
  pk_buf_.clear();
  encode_primary_key(record, &pk_buf_);
  std::string pk = pk_buf_;
  return fetch_row(pk, record);
}

int ha_tidesdb::rnd_pos(uchar* buf, uchar* pos) {
  std::string pk;
  if (has_hidden_pk())
    pk.assign(reinterpret_cast<char*>(pos), 8);
  else
    pk.assign(reinterpret_cast<char*>(pos) + 2, uint2korr(pos));
  int error = fetch_row(pk, buf);
  // REPLACE / ON DUPLICATE KEY UPDATE reading the row its insert collided with: the check
  // saw it (reading this transaction's own writes), so it is gone because another
  // transaction committed its delete since (optimistic mode takes no lock): a conflict,
  // which the client retries, not a missing row.
  if (error == HA_ERR_KEY_NOT_FOUND && !dup_pk_.empty() && pk == dup_pk_)
    error = report(tidesdb::Status::Busy("the row an insert collided with was deleted by a transaction that "
                                         "committed since"),
                   "read of a duplicate row");
  return error;
}

// --- index reads -----------------------------------------------------------------------------

bool ha_tidesdb::read_set_in_index(uint index) const {
  if (index >= table->s->keys) return false;
  for (uint i = 0; i < table->s->fields; i++) {
    const Field* field = table->field[i];
    if (!bitmap_is_set(table->read_set, i)) continue;
    // A virtual column is computed by the server after the read, from its base columns.
    if (!field->stored_in_db() || !field->part_of_key.is_set(index)) return false;
  }
  return true;
}

void ha_tidesdb::column_bitmaps_signal() {
  handler::column_bitmaps_signal();
  if (active_index != MAX_KEY) read_set_in_index_ = read_set_in_index(active_index);
}

int ha_tidesdb::index_init(uint index, bool sorted) {
  close_iterator();
  active_index = index;
  read_set_in_index_ = read_set_in_index(index);
  scan_ = ScanKind::kIndex;
  last_key_.clear();
  prefix_.clear();
  return 0;
}

int ha_tidesdb::index_end() {
  close_iterator();
  scan_ = ScanKind::kNone;
  active_index = MAX_KEY;
  read_set_in_index_ = false;
  return 0;
}

int ha_tidesdb::seek_index(uchar* buf, const std::string& target, enum ha_rkey_function find_flag) {
  // The scan's next range (index_init .. index_end lies within one statement) seeks the
  // iterator it already has: same view, and it sees the transaction's writes made since.
  if (!iter_ || iter_cf_ != index_cf(active_index)) open_iterator(index_cf(active_index));
  prefix_ = target;
  std::string successor = prefix_successor(target);
  bound_.clear();
  bound_is_range_end_ = false;
  // Inside a range with an end, a seek to its start is bounded by it.
  auto seek_in_range = [&](const std::string& from) {
    if (in_range_read_ && !range_end_.empty()) {
      bound_ = range_end_;
      bound_is_range_end_ = true;
      iter_->SeekBounded(from, range_end_);
    } else {
      iter_->Seek(from);
    }
  };
  int error;
  switch (find_flag) {
    case HA_READ_KEY_EXACT:
    case HA_READ_PREFIX:
      // Only keys with the prefix are wanted: SSTables whose prefix filters rule it out
      // are passed over.
      bound_ = successor;
      iter_->SeekBounded(target, successor);
      error = deliver_from_iterator(buf, true);
      if (error == 0 && !starts_with(last_key_, target)) error = HA_ERR_KEY_NOT_FOUND;
      break;
    case HA_READ_KEY_OR_NEXT:
      seek_in_range(target);
      error = deliver_from_iterator(buf, true);
      break;
    case HA_READ_AFTER_KEY:
      if (successor.empty() && !target.empty()) return HA_ERR_KEY_NOT_FOUND;
      seek_in_range(successor);
      error = deliver_from_iterator(buf, true);
      break;
    case HA_READ_BEFORE_KEY:
      if (target.empty()) {
        iter_->SeekToLast();
      } else {
        iter_->SeekForPrev(target);
        if (iter_->Valid() && starts_with(view(iter_->key()), target)) iter_->Prev();
      }
      error = deliver_from_iterator(buf, false);
      break;
    case HA_READ_KEY_OR_PREV:
    case HA_READ_PREFIX_LAST:
    case HA_READ_PREFIX_LAST_OR_PREV:
      if (successor.empty()) {
        iter_->SeekToLast();
      } else {
        iter_->SeekForPrev(successor);
        if (iter_->Valid() && view(iter_->key()) == successor) iter_->Prev();
      }
      error = deliver_from_iterator(buf, false);
      if (error == 0 && find_flag == HA_READ_PREFIX_LAST && !starts_with(last_key_, target))
        error = HA_ERR_KEY_NOT_FOUND;
      break;
    default:
      return HA_ERR_UNSUPPORTED;
  }
  if (error == HA_ERR_END_OF_FILE) error = HA_ERR_KEY_NOT_FOUND;
  return error;
}

int ha_tidesdb::index_read_map(uchar* buf, const uchar* key, key_part_map keypart_map,
                               enum ha_rkey_function find_flag) {
  const KeyCodec& codec = codecs_[active_index];
  uint length = calculate_key_len(table, active_index, key, keypart_map);
  key_buf_.clear();
  uint parts = codec.append_key_image(key, length, scratch_record_.get(), &key_buf_);
  if (find_flag == HA_READ_KEY_EXACT && parts == codec.parts()) {
    bool any_null = false;
    codec.parts_length(key_buf_, parts, &any_null);
    if (is_primary(active_index)) {
      // A point read by the whole primary key: Get (bloom filters), no iterator.
      close_iterator();
      prefix_ = key_buf_;
      last_key_ = key_buf_;
      int error = fetch_row(key_buf_, buf);
      iter_released_ = error == 0;  // index_next continues from here
      return error;
    }
    if (codec.unique() && !any_null) {
      close_iterator();
      prefix_ = key_buf_;
      tidesdb::Transaction* t = txn();
      // Latest-row locking reads lock the entry too, so that the row it leads to is the
      // one it names now.
      tidesdb::Status s = want_locking_read() && trx_->locks_latest
                              ? locking_get(index_cf(active_index), key_buf_, &value_buf_)
                              : t->Get(index_cf(active_index), key_buf_, &value_buf_);
      if (s.IsNotFound()) return HA_ERR_KEY_NOT_FOUND;
      if (!s.ok()) return report(s, "read");
      last_key_ = key_buf_;
      std::string_view packed;
      if (!entry_primary_key(active_index, key_buf_, value_buf_, &pk_buf_, &packed)) return HA_ERR_CRASHED;
      int error = entry_into_record(key_buf_, packed, buf);
      if (error == HA_ERR_END_OF_FILE) error = HA_ERR_KEY_NOT_FOUND;
      if (error == 0 && covering_read() && !want_locking_read()) {
        row_pk_ = pk_buf_;
        status_counters.rows_read.add();
        status_counters.covered_index_reads.add();
      } else if (error == 0)
        error = fetch_row(pk_buf_, buf);
      iter_released_ = error == 0;
      return error;
    }
  }
  return seek_index(buf, key_buf_, find_flag);
}

Item* ha_tidesdb::idx_cond_push(uint keyno, Item* idx_cond) {
  // Indexed virtual columns are computed by the server only after the row is read.
  const KEY& key = table->key_info[keyno];
  // Nor can a prefix part's column be filled from the entry.
  for (uint i = 0; i < key.user_defined_key_parts; i++) {
    Field* field = table->field[key.key_part[i].fieldnr - 1];
    if (!field->stored_in_db() || !codecs_[keyno].part_is_full_length(i)) return idx_cond;
  }
  if (!has_hidden_pk()) {
    const KeyCodec& pk = codecs_[table->s->primary_key];
    for (uint i = 0; i < pk.parts(); i++)
      if (!pk.part_is_full_length(i)) return idx_cond;
  }
  pushed_idx_cond = idx_cond;
  pushed_idx_cond_keyno = keyno;
  in_range_check_pushed_down = true;
  return nullptr;
}

int ha_tidesdb::index_read_last_map(uchar* buf, const uchar* key, key_part_map keypart_map) {
  return index_read_map(buf, key, keypart_map, HA_READ_PREFIX_LAST);
}

int ha_tidesdb::read_range_first(const key_range* start_key, const key_range* end_key, bool eq_range_arg,
                                 bool sorted) {
  range_end_.clear();
  if (end_key != nullptr && active_index != MAX_KEY) {
    codecs_[active_index].append_key_image(end_key->key, end_key->length, scratch_record_.get(), &range_end_);
    // BEFORE_KEY (<): no entry with the end's prefix is inside; AFTER_KEY (<=), and any
    // other flag (the server then counts an entry equal to the end as inside), all are.
    if (end_key->flag != HA_READ_BEFORE_KEY) range_end_ = prefix_successor(range_end_);
  }
  in_range_read_ = true;
  int error = handler::read_range_first(start_key, end_key, eq_range_arg, sorted);
  in_range_read_ = false;
  return error;
}

int ha_tidesdb::read_range_next() {
  in_range_read_ = true;
  int error = handler::read_range_next();
  in_range_read_ = false;
  return error;
}

int ha_tidesdb::index_next(uchar* buf) { return next_in_index(buf, false); }

int ha_tidesdb::next_in_index(uchar* buf, bool within_bound) {
  if (iter_) {
    iter_->Next();
  } else if (reposition()) {
    iter_->Seek(last_key_);
    if (iter_->Valid() && view(iter_->key()) == last_key_) iter_->Next();
  } else {
    return HA_ERR_END_OF_FILE;
  }
  // Past a range's end the range is done (the server would stop at the first entry past it).
  const bool range_done = bound_is_range_end_ && in_range_read_;
  return deliver_from_iterator(buf, true, !within_bound && !range_done);
}

int ha_tidesdb::index_prev(uchar* buf) {
  bound_.clear();  // the iterator's Prev ends its bound
  bound_is_range_end_ = false;
  if (iter_) {
    iter_->Prev();
  } else if (reposition()) {
    iter_->SeekForPrev(last_key_);
    if (iter_->Valid() && view(iter_->key()) == last_key_) iter_->Prev();
  } else {
    return HA_ERR_END_OF_FILE;
  }
  return deliver_from_iterator(buf, false);
}

int ha_tidesdb::index_first(uchar* buf) {
  open_iterator(index_cf(active_index));
  prefix_.clear();
  iter_->SeekToFirst();
  return deliver_from_iterator(buf, true);
}

int ha_tidesdb::index_last(uchar* buf) {
  open_iterator(index_cf(active_index));
  prefix_.clear();
  iter_->SeekToLast();
  return deliver_from_iterator(buf, false);
}

int ha_tidesdb::index_next_same(uchar* buf, const uchar* key, uint keylen) {
  const KeyCodec& codec = codecs_[active_index];
  // After a point read by a whole unique key there is nothing more with that key.
  if (!iter_ && prefix_.size() == last_key_.size() && prefix_ == last_key_ &&
      (is_primary(active_index) || codec.unique())) {
    bool any_null = false;
    if (codec.parts_length(prefix_, codec.parts(), &any_null) == prefix_.size() && !any_null)
      return HA_ERR_END_OF_FILE;
  }
  // A bound (the successor of prefix_) ends the entries with the prefix: no seek past it.
  int error = next_in_index(buf, true);
  if (error == 0 && !starts_with(last_key_, prefix_)) error = HA_ERR_END_OF_FILE;
  return error;
}

}  // namespace tidesql
