// Inserts, updates and deletes: the row under its primary key and one entry per secondary
// index, all in the connection's transaction; uniqueness checks; AUTO_INCREMENT and hidden
// row ids.
#include "ha_tidesdb.h"

#include <sql_class.h>

#include "coding.h"
#include "row_codec.h"
#include "status.h"
#include "sysvars.h"

namespace tidesql {

void ha_tidesdb::encode_primary_key(const uchar* record, std::string* out) const {
  const KeyCodec& codec = codecs_[table->s->primary_key];
  codec.append_parts(record, codec.parts(), out);
}

bool encode_index_entry(const std::vector<KeyCodec>& codecs, uint primary_key, uint index,
                        const uchar* record, const std::string& pk, std::string* key, std::string* value) {
  return encode_entry(codecs[index], primary_key == MAX_KEY ? nullptr : &codecs[primary_key], record, pk, key,
                      value);
}

bool encode_entry(const KeyCodec& codec, const KeyCodec* pk_codec, const uchar* record, const std::string& pk,
                  std::string* key, std::string* value) {
  key->clear();
  value->clear();
  bool any_null = codec.append_parts(record, codec.parts(), key);
  bool parts_alone = codec.unique() && !any_null;
  if (parts_alone) {
    put_varint(value, pk.size());
    value->append(pk);
  } else {
    key->append(pk);
  }
  codec.append_packed_values(record, value);
  if (pk_codec != nullptr) pk_codec->append_packed_values(record, value, false);
  return parts_alone;
}

std::string index_build_log_key(uint slot, const std::string& pk, const std::string& old_entry) {
  std::string key(1, static_cast<char>(slot));
  put_varint(&key, pk.size());
  key.append(pk);
  key.append(old_entry);
  return key;
}

int ha_tidesdb::log_for_index_build(tidesdb::Transaction* t, const uchar* old_row, const std::string& old_pk,
                                    const uchar* new_row, const std::string& new_pk) {
  std::shared_ptr<const IndexBuild> build = share_->counters->index_build();
  if (build == nullptr) {
    if (build_ != nullptr) {
      build_.reset();
      build_codecs_.clear();
    }
    return 0;
  }
  if (build != build_) {
    build_ = build;
    build_codecs_.resize(build->indexes.size());
    for (size_t i = 0; i < build->indexes.size(); i++)
      build_codecs_[i].init_foreign(table, &build->indexes[i].key);
  }
  const KeyCodec* pk_codec = has_hidden_pk() ? nullptr : &codecs_[table->s->primary_key];
  tidesdb::Status s;
  for (uint slot = 0; slot < build_codecs_.size() && s.ok(); slot++) {
    if (old_row != nullptr) {
      encode_entry(build_codecs_[slot], pk_codec, old_row, old_pk, &build_key_buf_, &build_value_buf_);
      s = t->Put(build->log_cf, index_build_log_key(slot, old_pk, build_key_buf_), "");
    }
    if (s.ok() && new_row != nullptr && (old_row == nullptr || new_pk != old_pk))
      s = t->Put(build->log_cf, index_build_log_key(slot, new_pk, ""), "");
  }
  if (!s.ok()) return report(s, "index build log");
  return 0;
}

bool ha_tidesdb::encode_index_entry(uint index, const uchar* record, const std::string& pk, std::string* key,
                                    std::string* value) const {
  return tidesql::encode_index_entry(codecs_, has_hidden_pk() ? MAX_KEY : table->s->primary_key, index,
                                     record, pk, key, value);
}

int ha_tidesdb::check_unique(tidesdb::ColumnFamilyHandle* cf, const std::string& key, uint errkey_index) {
  std::string existing;
  // GetForUpdate: a concurrent insert of the same key conflicts (optimistic: at commit;
  // pessimistic: on the lock), so two rows with one unique value never both commit.
  tidesdb::Status s = txn()->GetForUpdate(cf, key, &existing);
  if (s.IsNotFound()) return 0;
  if (!s.ok()) return report(s, "uniqueness check");
  errkey = errkey_index;
  trx_context(ha_thd())->last_dup_key = errkey_index;
  // HA_DUPLICATE_POS: REPLACE and ON DUPLICATE KEY UPDATE read the conflicting row by
  // dup_ref. A unique entry's value starts with the row's primary key.
  if (is_primary(errkey_index)) {
    dup_pk_ = key;
    store_ref(dup_ref, key);
  } else {
    std::string_view value = existing;
    uint64_t length = 0;
    if (get_varint(&value, &length) && length <= value.size()) {
      dup_pk_.assign(value.data(), length);
      store_ref(dup_ref, dup_pk_);
    }
  }
  return HA_ERR_FOUND_DUPP_KEY;
}

// READ COMMITTED reads the latest committed row, which may change before the write: the
// row being changed must still be the one that was read, or the change would be lost.
int ha_tidesdb::check_row_unchanged(const std::string& pk) {
  tidesdb::Transaction* t = txn();
  if (row_locked_ || t->snapshot_sequence() != 0) return 0;  // locked read, or a snapshot level
  std::string current;
  tidesdb::Status s = t->GetForUpdate(data_cf(), pk, &current);
  if (s.ok() && current == row_value_) return 0;
  if (!s.ok() && !s.IsNotFound()) return report(s, "read for update");
  return report(
      tidesdb::Status::Busy("the row was changed by a transaction that committed after it was read"),
      "update");
}

int ha_tidesdb::load_auto_increment() {
  TableCounters& counters = *share_->counters;
  if (counters.next_auto_increment.load() != 0) return 0;
  std::lock_guard<std::mutex> guard(counters.load_mutex);
  if (counters.next_auto_increment.load() != 0) return 0;
  uint64_t next = 1;
  uint index = table->s->next_number_index;
  if (table->found_next_number_field != nullptr && index < table->s->keys &&
      table->s->next_number_key_offset == 0) {
    // The largest value any committed row holds is the first part of the index's last
    // entry (first, for a descending part).
    const KeyCodec& codec = codecs_[index];
    auto it = base_db()->NewIterator(tidesdb::ReadOptions(), index_cf(index));
    bool desc = table->key_info[index].key_part[0].key_part_flag & HA_REVERSE_SORT;
    if (desc)
      it->SeekToFirst();
    else
      it->SeekToLast();
    longlong value = 0;
    bool is_unsigned = false;
    if (it->Valid() &&
        codec.first_part_integer(std::string_view(it->key().data(), it->key().size()), &value,
                                 &is_unsigned) &&
        (is_unsigned || value > 0))
      next = static_cast<uint64_t>(value) + 1;
    if (!it->status().ok()) return ha_error_from_status(it->status(), "AUTO_INCREMENT");
  }
  next = std::max<uint64_t>(next, share_->def.auto_increment_start);
  counters.next_auto_increment = std::max<uint64_t>(next, 1);
  return 0;
}

void ha_tidesdb::get_auto_increment(ulonglong offset, ulonglong increment, ulonglong nb_desired_values,
                                    ulonglong* first_value, ulonglong* nb_reserved_values) {
  if (load_auto_increment() != 0) {
    *first_value = ULONGLONG_MAX;
    return;
  }
  if (increment == 0) increment = 1;
  ulonglong count = std::max<ulonglong>(nb_desired_values, 1);
  std::atomic<uint64_t>& counter = share_->counters->next_auto_increment;
  uint64_t current = counter.load();
  ulonglong first, next;
  do {
    // The server's series (compute_next_insert_id: the first value after current - 1;
    // with increment 1 the offset does not matter, as the server ignores an offset above
    // the increment).
    ulonglong last = current - 1;
    if (increment == 1)
      first = last + 1;
    else
      first = ((last + increment - offset) / increment) * increment + offset;
    next = first + count * increment;
    if (next < first) next = ULONGLONG_MAX;  // overflow: the server reports it at insert
  } while (!counter.compare_exchange_weak(current, next));
  *first_value = first;
  *nb_reserved_values = count;
}

void ha_tidesdb::bump_auto_increment(const uchar* record) {
  Field* field = table->found_next_number_field;
  if (field == nullptr || record != table->record[0] || field->is_null()) return;
  longlong value = field->val_int();
  bool is_unsigned = (field->flags & UNSIGNED_FLAG) != 0;
  if (!is_unsigned && value <= 0) return;
  uint64_t wanted = static_cast<uint64_t>(value) + 1;
  if (wanted == 0) wanted = ULONGLONG_MAX;
  if (load_auto_increment() != 0) return;
  std::atomic<uint64_t>& counter = share_->counters->next_auto_increment;
  uint64_t current = counter.load();
  while (current < wanted && !counter.compare_exchange_weak(current, wanted)) {
  }
}

uint64_t ha_tidesdb::next_blob_id() {
  TableCounters& counters = *share_->counters;
  if (counters.next_blob_id.load() == 0) {
    std::lock_guard<std::mutex> guard(counters.load_mutex);
    if (counters.next_blob_id.load() == 0) {
      auto it = base_db()->NewIterator(tidesdb::ReadOptions(), share_->blob_cf);
      it->SeekToLast();
      uint64_t last = 0;
      if (it->Valid() && it->key().size() == 8)
        last = get_big_endian64(reinterpret_cast<const unsigned char*>(it->key().data()));
      counters.next_blob_id = last + 1;
    }
  }
  return counters.next_blob_id.fetch_add(1);
}

void ha_tidesdb::plan_off_row_values(const uchar* record, bool carry, std::vector<OffRowValue>* values) {
  values->clear();
  new_off_row_bytes_.clear();
  if (share_->blob_cf == nullptr) return;
  const uint64_t limit = off_row_blob_size(ha_thd());
  const my_ptrdiff_t diff = record - table->record[0];
  TABLE_SHARE* ts = table->s;
  for (uint* b = ts->blob_field; b < ts->blob_field + ts->blob_fields; b++) {
    Field_blob* blob = static_cast<Field_blob*>(table->field[*b]);
    if (!blob->stored_in_db() || (blob->real_maybe_null() && blob->is_null_in_record(record))) continue;
    const uint64_t length = blob->get_length(diff);
    const uchar* data = blob->get_ptr(blob->ptr + diff);
    bool kept = false;
    // Unchanged since it was read: the record still points at the bytes read for it.
    for (size_t i = 0; carry && i < row_off_row_.size() && !kept; i++) {
      const OffRowValue& v = row_off_row_[i];
      if (v.field == *b && i < row_blob_read_.size() && row_blob_read_[i] && v.length == length &&
          data == reinterpret_cast<const uchar*>(row_blobs_[i].data())) {
        values->push_back(v);
        new_off_row_bytes_.emplace_back(nullptr, 0);
        kept = true;
      }
    }
    if (kept || length <= limit) continue;
    OffRowValue v;
    v.field = *b;
    v.id = next_blob_id();
    v.length = length;
    values->push_back(v);
    new_off_row_bytes_.emplace_back(data, length);
  }
}

int ha_tidesdb::store_off_row_values(tidesdb::Transaction* t, const std::vector<OffRowValue>& values,
                                     const std::string* old_value) {
  if (share_->blob_cf == nullptr) return 0;
  tidesdb::Status s;
  for (size_t i = 0; i < values.size() && s.ok(); i++) {
    const auto& [data, length] = new_off_row_bytes_[i];
    if (data == nullptr) continue;
    s = t->Put(share_->blob_cf, blob_key(values[i].id),
               tidesdb::Slice(reinterpret_cast<const char*>(data), length));
    status_counters.off_row_writes.add();
  }
  if (s.ok() && old_value != nullptr) {
    std::vector<uint64_t> old_ids;
    if (!off_row_ids(*old_value, &old_ids))
      return report(tidesdb::Status::Corruption("a malformed row"), "write");
    for (uint64_t id : old_ids) {
      bool kept = false;
      for (const OffRowValue& v : values) kept = kept || v.id == id;
      if (!kept && s.ok()) s = t->Delete(share_->blob_cf, blob_key(id));
    }
  }
  if (!s.ok()) return report(s, "write of an off-row value");
  return 0;
}

int ha_tidesdb::stored_row(const std::string& pk, const std::string** value) {
  if (row_pk_ == pk && !row_value_.empty()) {
    *value = &row_value_;
    return 0;
  }
  tidesdb::Status s = txn()->Get(data_cf(), pk, &old_row_buf_);
  if (s.IsNotFound()) {
    *value = nullptr;
    return 0;
  }
  if (!s.ok()) return report(s, "read");
  *value = &old_row_buf_;
  return 0;
}

int ha_tidesdb::write_row(const uchar* buf) {
  THD* thd = ha_thd();
  dup_pk_.clear();
  tidesdb::Transaction* t = txn();
  if (table->next_number_field != nullptr && buf == table->record[0]) {
    int error = update_auto_increment();
    if (error != 0) return error;
  }
  std::string& pk = pk_buf_;
  pk.clear();
  bool check = !skip_unique_check(thd);
  if (has_hidden_pk()) {
    TableCounters& counters = *share_->counters;
    if (counters.next_row_id.load() == 0) {
      std::lock_guard<std::mutex> guard(counters.load_mutex);
      if (counters.next_row_id.load() == 0) {
        auto it = base_db()->NewIterator(tidesdb::ReadOptions(), data_cf());
        it->SeekToLast();
        uint64_t last = 0;
        if (it->Valid() && it->key().size() == 8)
          last = get_big_endian64(reinterpret_cast<const unsigned char*>(it->key().data()));
        counters.next_row_id = last + 1;
      }
    }
    pk = hidden_pk_key(counters.next_row_id.fetch_add(1));
  } else {
    encode_primary_key(buf, &pk);
    if (check) {
      int error = check_unique(data_cf(), pk, table->s->primary_key);
      if (error != 0) return error;
    }
  }
  for (uint i = 0; i < table->s->keys; i++) {
    if (is_primary(i)) continue;
    // A UNIQUE entry with no NULL part is keyed by its parts alone: one lookup checks it.
    if (encode_index_entry(i, buf, pk, &new_keys_[i], &new_values_[i]) && check) {
      int error = check_unique(index_cf(i), new_keys_[i], i);
      if (error != 0) return error;
    }
  }
  plan_off_row_values(buf, false, &new_off_row_);
  encode_row(table, buf, share_->def.schema_version, new_off_row_, &value_buf_);
  // Tests only (tidesdb_debug_skip_index_writes): the row names values that were never
  // written.
  if (!debug_skip_index_writes(thd))
    if (int error = store_off_row_values(t, new_off_row_, nullptr); error != 0) return error;
  // Tests only: the row as a newer TideSQL would write it (its format version byte).
  if (debug_newer_format(thd) == kNewerFormatRow) value_buf_[0] = static_cast<char>(kRowFormatVersion + 1);
  tidesdb::Status s = t->Put(data_cf(), pk, value_buf_);
  const bool skip_indexes = debug_skip_index_writes(thd);
  for (uint i = 0; i < table->s->keys && s.ok() && !skip_indexes; i++) {
    if (is_primary(i)) continue;
    s = t->Put(index_cf(i), new_keys_[i], new_values_[i]);
  }
  if (!s.ok()) return report(s, "write");
  if (int error = log_for_index_build(t, nullptr, pk, buf, pk); error != 0) return error;
  // After the row's own writes: a row may reference itself.
  if (int error = check_parents(nullptr, buf); error != 0) return error;
  bump_auto_increment(buf);
  // position() after an insert names the new row, and an update of it in the same
  // statement (ON DUPLICATE KEY UPDATE, triggers) finds its stored form.
  row_pk_ = pk;
  row_value_.swap(value_buf_);
  row_off_row_.clear();
  share_->rows_changed_since_estimate.fetch_add(1, std::memory_order_relaxed);
  status_counters.rows_inserted.add();
  if (copying_ && t->write_set_bytes() > copy_chunk_bytes()) return commit_copy_chunk(thd, trx_context(thd));
  return 0;
}

int ha_tidesdb::update_row(const uchar* old_data, const uchar* new_data) {
  THD* thd = ha_thd();
  tidesdb::Transaction* t = txn();
  bool check = !skip_unique_check(thd);
  std::string& old_pk = pk_buf_;
  std::string& new_pk = new_pk_buf_;
  old_pk.clear();
  new_pk.clear();
  if (has_hidden_pk()) {
    old_pk = row_pk_;
    new_pk = row_pk_;
  } else {
    encode_primary_key(old_data, &old_pk);
    encode_primary_key(new_data, &new_pk);
  }
  int error = check_row_unchanged(old_pk);
  if (error != 0) return error;
  bool pk_changed = old_pk != new_pk;
  // REPLACE and ON DUPLICATE KEY UPDATE call update_row without comparing the rows
  // first: an identical row is not written (and counts as unchanged, as in InnoDB).
  // The row last read is normally the old row, and its stored value is at hand.
  // Off-row values the update leaves alone keep their ids (only when the row last read is
  // the old row: the record then points at the bytes read for them).
  const bool last_read = row_pk_ == old_pk;
  plan_off_row_values(new_data, last_read, &new_off_row_);
  encode_row(table, new_data, share_->def.schema_version, new_off_row_, &new_row_buf_);
  if (!pk_changed) {
    // A value with a new id may still equal the old one: then the values are compared
    // (both rows encoded inline), not the references. Otherwise the encodings compare.
    bool fresh = false;
    for (const auto& bytes : new_off_row_bytes_) fresh = fresh || bytes.first != nullptr;
    const std::string* old_row = &row_value_;
    const std::string* new_row = &new_row_buf_;
    if (!last_read || fresh) {
      encode_row(table, old_data, share_->def.schema_version, {}, &value_buf_);
      old_row = &value_buf_;
    }
    if (fresh) {
      encode_row(table, new_data, share_->def.schema_version, {}, &old_row_buf_);
      new_row = &old_row_buf_;
    }
    if (*old_row == *new_row) return HA_ERR_RECORD_IS_THE_SAME;
  }
  if (pk_changed && check) {
    error = check_unique(data_cf(), new_pk, table->s->primary_key);
    if (error != 0) return error;
  }
  std::vector<bool> changed(table->s->keys, false);
  for (uint i = 0; i < table->s->keys; i++) {
    if (is_primary(i)) continue;
    encode_index_entry(i, old_data, old_pk, &old_keys_[i], &value_buf_);
    bool parts_alone = encode_index_entry(i, new_data, new_pk, &new_keys_[i], &new_values_[i]);
    // Only indexes whose entry changes are rewritten.
    changed[i] = old_keys_[i] != new_keys_[i] || value_buf_ != new_values_[i];
    if (parts_alone && check && old_keys_[i] != new_keys_[i]) {
      error = check_unique(index_cf(i), new_keys_[i], i);
      if (error != 0) return error;
    }
  }
  if (share_->blob_cf != nullptr) {
    const std::string* old_stored = nullptr;
    if (int error = stored_row(old_pk, &old_stored); error != 0) return error;
    if (int error = store_off_row_values(t, new_off_row_, old_stored); error != 0) return error;
  }
  tidesdb::Status s;
  if (pk_changed) s = t->Delete(data_cf(), old_pk);
  if (s.ok()) s = t->Put(data_cf(), new_pk, new_row_buf_);
  for (uint i = 0; i < table->s->keys && s.ok(); i++) {
    if (is_primary(i) || !changed[i]) continue;
    if (old_keys_[i] != new_keys_[i]) s = t->Delete(index_cf(i), old_keys_[i]);
    if (s.ok()) s = t->Put(index_cf(i), new_keys_[i], new_values_[i]);
  }
  if (!s.ok()) return report(s, "update");
  if (int error = log_for_index_build(t, old_data, old_pk, new_data, new_pk); error != 0) return error;
  // Children first (a cascade may change what the row references, on a self-referencing
  // table), then the row's own references. The scratch buffers are not used after this:
  // a cascade may come back into this handler.
  if (int error = act_on_children(old_data, new_data); error != 0) return error;
  if (int error = check_parents(old_data, new_data); error != 0) return error;
  bump_auto_increment(new_data);
  status_counters.rows_updated.add();
  return 0;
}

int ha_tidesdb::delete_row(const uchar* buf) {
  tidesdb::Transaction* t = txn();
  std::string& pk = pk_buf_;
  pk.clear();
  if (has_hidden_pk())
    pk = row_pk_;
  else
    encode_primary_key(buf, &pk);
  int error = check_row_unchanged(pk);
  if (error != 0) return error;
  // Tests only (tidesdb_debug_skip_index_writes): the row's values stay, named by nothing.
  if (share_->blob_cf != nullptr && !debug_skip_index_writes(ha_thd())) {
    const std::string* stored = nullptr;
    if (int error = stored_row(pk, &stored); error != 0) return error;
    new_off_row_.clear();
    if (stored != nullptr)
      if (int error = store_off_row_values(t, new_off_row_, stored); error != 0) return error;
  }
  tidesdb::Status s = t->Delete(data_cf(), pk);
  const bool skip_indexes = debug_skip_index_writes(ha_thd());
  for (uint i = 0; i < table->s->keys && s.ok() && !skip_indexes; i++) {
    if (is_primary(i)) continue;
    encode_index_entry(i, buf, pk, &key_buf_, &value_buf_);
    s = t->Delete(index_cf(i), key_buf_);
  }
  if (!s.ok()) return report(s, "delete");
  if (int error = log_for_index_build(t, buf, pk, nullptr, pk); error != 0) return error;
  if (int error = act_on_children(buf, nullptr); error != 0) return error;
  share_->rows_changed_since_estimate.fetch_sub(1, std::memory_order_relaxed);
  status_counters.rows_deleted.add();
  return 0;
}

}  // namespace tidesql
