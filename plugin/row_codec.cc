#include "row_codec.h"

#include <field.h>
#include <mysqld_error.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "coding.h"
#include "engine.h"

namespace tidesql {

std::string blob_key(uint64_t id) {
  std::string key;
  put_big_endian64(&key, id);
  return key;
}

void encode_row(TABLE* table, const uchar* record, uint32_t schema_version,
                const std::vector<OffRowValue>& off_row, std::string* out) {
  TABLE_SHARE* share = table->s;
  // Upper bound of the packed size: the record plus every inline BLOB's data.
  size_t bound = share->reclength + 16;
  for (uint* b = share->blob_field; b < share->blob_field + share->blob_fields; b++) {
    Field_blob* blob = static_cast<Field_blob*>(table->field[*b]);
    bound += blob->get_length(record + blob->offset(table->record[0]));
  }
  auto off_row_of = [&off_row](uint field) -> const OffRowValue* {
    for (const OffRowValue& v : off_row)
      if (v.field == field) return &v;
    return nullptr;
  };
  out->clear();
  out->push_back(static_cast<char>(off_row.empty() ? 1 : 2));
  put_varint(out, schema_version);
  if (!off_row.empty()) {
    put_varint(out, off_row.size());
    uint position = 0;
    for (Field** fp = table->field; *fp; fp++) {
      if (!(*fp)->stored_in_db()) continue;
      if (const OffRowValue* v = off_row_of(static_cast<uint>(fp - table->field)); v != nullptr) {
        put_varint(out, position);
        put_varint(out, v->id);
        put_varint(out, v->length);
      }
      position++;
    }
  }
  out->append(reinterpret_cast<const char*>(record), share->null_bytes);
  size_t header = out->size();
  out->resize(header + bound);
  uchar* start = reinterpret_cast<uchar*>(&(*out)[0]);
  uchar* to = start + header;
  for (Field** fp = table->field; *fp; fp++) {
    Field* f = *fp;
    if (!f->stored_in_db()) continue;
    if (f->real_maybe_null() && f->is_null_in_record(record)) continue;
    if (!off_row.empty() && off_row_of(static_cast<uint>(fp - table->field)) != nullptr) {
      // An empty value: the length bytes, all zero.
      const uint length_bytes = static_cast<Field_blob*>(f)->pack_length_no_ptr();
      memset(to, 0, length_bytes);
      to += length_bytes;
      continue;
    }
    to = f->pack(to, record + f->offset(table->record[0]));
  }
  out->resize(to - start);
}

namespace {

// The size of a column's packed bytes at `from` (packed_form's description); 0 if they do
// not fit before `end`.
size_t packed_length(uint8_t length_bytes, uint32_t skip_length, const uchar* from, const uchar* end) {
  const size_t available = static_cast<size_t>(end - from);
  if (length_bytes == 0) return skip_length <= available ? skip_length : 0;
  if (available < length_bytes) return 0;
  size_t length = 0;
  for (uint i = 0; i < length_bytes; i++) length |= static_cast<size_t>(from[i]) << (8 * i);
  length += length_bytes;
  return length <= available ? length : 0;
}

struct StoredRef {
  uint64_t position, id, length;
};

// Reads version 2's list of off-row values; false if malformed.
bool get_refs(std::string_view* value, std::vector<StoredRef>* refs) {
  uint64_t count;
  if (!get_varint(value, &count) || count > 65536) return false;
  refs->resize(count);
  for (StoredRef& r : *refs)
    if (!get_varint(value, &r.position) || !get_varint(value, &r.id) || !get_varint(value, &r.length))
      return false;
  return true;
}

// Fills `f` (pointed at the target row) from a column added since the row was written:
// the value recorded when it was added. False if none was recorded.
bool fill_added_column(Field* f, const TableDef& def, uint stored_index) {
  const TableDef::AddedColumn* added = def.added_column(stored_index);
  if (added == nullptr) return false;
  if (f->real_maybe_null()) {
    if (added->is_null)
      f->set_null();
    else
      f->set_notnull();
  }
  if (added->is_null) {
    f->reset();
    return true;
  }
  const uchar* source = reinterpret_cast<const uchar*>(added->packed.data());
  const uchar* end = source + added->packed.size();
  const uchar* next = f->unpack(f->ptr, source, end);
  return next != nullptr && next <= end;
}

// A row of a mapped schema version: its stored columns in its own order, each moved to
// where it is today (or stepped over, dropped since), its null bits read from where that
// version kept them; today's columns it does not hold take the values recorded for them.
int decode_mapped_row(TABLE* table, const TableDef& def, const TableDef::SchemaVersion& version,
                      std::string_view value, uchar* record) {
  TABLE_SHARE* share = table->s;
  if (value.size() < version.null_bytes) return HA_ERR_CRASHED;
  const uchar* bitmap = reinterpret_cast<const uchar*>(value.data());
  const uchar* from = bitmap + version.null_bytes;
  const uchar* end = reinterpret_cast<const uchar*>(value.data()) + value.size();
  memcpy(record, share->default_values, share->null_bytes);
  std::vector<Field*> stored;
  for (Field** fp = table->field; *fp; fp++)
    if ((*fp)->stored_in_db()) stored.push_back(*fp);
  std::vector<bool> filled(stored.size(), false);
  const my_ptrdiff_t diff = record - table->record[0];
  for (const TableDef::SchemaVersion::Column& c : version.columns) {
    const bool is_null = c.null_bit >= 0 && static_cast<uint>(c.null_bit / 8) < version.null_bytes &&
                         (bitmap[c.null_bit / 8] & (1u << (c.null_bit % 8))) != 0;
    if (c.stored < 0) {
      if (is_null) continue;
      const size_t length = packed_length(c.length_bytes, c.skip_length, from, end);
      if (length == 0 && (c.length_bytes != 0 || c.skip_length != 0)) return HA_ERR_CRASHED;
      from += length;
      continue;
    }
    if (static_cast<size_t>(c.stored) >= stored.size() || filled[c.stored]) return HA_ERR_CRASHED;
    Field* f = stored[c.stored];
    filled[c.stored] = true;
    if (diff != 0) f->move_field_offset(diff);
    if (f->real_maybe_null()) {
      if (is_null)
        f->set_null();
      else
        f->set_notnull();
    }
    const uchar* next = from;
    if (is_null)
      f->reset();
    else
      next = f->unpack(f->ptr, from, end);
    if (diff != 0) f->move_field_offset(-diff);
    if (next == nullptr || next > end) return HA_ERR_CRASHED;
    from = next;
  }
  for (size_t i = 0; i < stored.size(); i++) {
    if (filled[i]) continue;
    Field* f = stored[i];
    if (diff != 0) f->move_field_offset(diff);
    const bool ok = fill_added_column(f, def, static_cast<uint>(i));
    if (diff != 0) f->move_field_offset(-diff);
    if (!ok) return HA_ERR_CRASHED;
  }
  return 0;
}

}  // namespace

bool off_row_ids(std::string_view value, std::vector<uint64_t>* ids) {
  ids->clear();
  if (value.empty()) return false;
  const uint8_t format = static_cast<uint8_t>(value[0]);
  if (format == 1) return true;
  if (format != 2) return false;
  value.remove_prefix(1);
  uint64_t schema_version;
  std::vector<StoredRef> refs;
  if (!get_varint(&value, &schema_version) || !get_refs(&value, &refs)) return false;
  for (const StoredRef& r : refs) ids->push_back(r.id);
  return true;
}

bool packed_form(const Field* f, uint8_t* length_bytes, uint32_t* skip_length) {
  *length_bytes = 0;
  *skip_length = 0;
  if (f->compression_method() != nullptr) return false;
  if (const auto* blob = dynamic_cast<const Field_blob*>(f)) {
    *length_bytes = static_cast<uint8_t>(blob->pack_length_no_ptr());
    return true;
  }
  if (const auto* var = dynamic_cast<const Field_varstring*>(f)) {
    *length_bytes = static_cast<uint8_t>(var->length_bytes);
    return true;
  }
  switch (f->real_type()) {
    case MYSQL_TYPE_STRING:  // CHAR: a length (2 bytes past 255), the value without its padding
      *length_bytes = f->field_length > 255 ? 2 : 1;
      return true;
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE:
    case MYSQL_TYPE_NEWDECIMAL:
    case MYSQL_TYPE_YEAR:
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
    case MYSQL_TYPE_TIME:
    case MYSQL_TYPE_TIME2:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_DATETIME2:
    case MYSQL_TYPE_TIMESTAMP:
    case MYSQL_TYPE_TIMESTAMP2:
    case MYSQL_TYPE_ENUM:
    case MYSQL_TYPE_SET:
    case MYSQL_TYPE_BIT:  // the odd bits' byte, then the whole bytes
      *skip_length = f->pack_length();
      return true;
    default:
      return false;
  }
}

std::vector<ColumnSkip> column_skips(TABLE* table) {
  TABLE_SHARE* share = table->s;
  std::vector<ColumnSkip> skips(share->fields);
  // A row of the table's defaults, where a string column also takes a short value.
  std::unique_ptr<uchar[]> row(new uchar[share->reclength]);
  const my_ptrdiff_t diff = row.get() - table->record[0];
  std::vector<uchar> packed;
  // True if `rule` steps exactly over what Field::pack writes for f's value in `row`.
  auto steps_over = [&](Field* f, const ColumnSkip& rule) {
    packed.assign(f->pack_length() + f->max_data_length() + 16, 0);
    const uchar* end = f->pack(packed.data(), row.get() + f->offset(table->record[0]));
    const size_t length =
        packed_length(rule.length_bytes, rule.skip_length, packed.data(), packed.data() + packed.size());
    return length != 0 && length == static_cast<size_t>(end - packed.data());
  };
  for (uint i = 0; i < share->fields; i++) {
    Field* f = table->field[i];
    if (!f->stored_in_db() || (f->flags & (BLOB_FLAG | PRI_KEY_FLAG | PART_KEY_FLAG))) continue;
    ColumnSkip rule;
    if (!packed_form(f, &rule.length_bytes, &rule.skip_length)) continue;
    memcpy(row.get(), share->default_values, share->reclength);
    bool ok = steps_over(f, rule);
    const size_t sample = std::min<size_t>(3, f->char_length());
    if (ok && rule.length_bytes != 0 && sample > 0) {
      f->move_field_offset(diff);
      f->set_notnull();
      f->store("abc", sample, &my_charset_latin1);
      f->move_field_offset(-diff);
      ok = steps_over(f, rule);
    }
    rule.skippable = ok;
    skips[i] = rule;
  }
  return skips;
}

int decode_row(TABLE* table, const TableDef& def, std::string_view value, uchar* record,
               std::vector<OffRowValue>* off_row, const std::vector<ColumnSkip>* skips,
               const MY_BITMAP* read_set) {
  TABLE_SHARE* share = table->s;
  off_row->clear();
  if (value.empty()) return HA_ERR_CRASHED;
  const uint8_t format = static_cast<uint8_t>(value[0]);
  if (format != 1 && format != 2) {
    // Named here, where the table and the version are known; the server's own message for
    // the code says only "wrong record".
    my_printf_error(ER_GET_ERRMSG,
                    "TidesDB: a row of table %s.%s has row format version %u, which this build does "
                    "not read (it reads versions up to %u): written by a newer TideSQL, or damaged",
                    MYF(0), share->db.str, share->table_name.str, format, kRowFormatVersion);
    return HA_ERR_TIDESDB_REPORTED;
  }
  value.remove_prefix(1);
  uint64_t schema_version;
  if (!get_varint(&value, &schema_version)) return HA_ERR_CRASHED;
  std::vector<StoredRef> refs;
  if (format == 2 && (!get_refs(&value, &refs) || refs.empty())) return HA_ERR_CRASHED;
  // Today's field of each stored-column position of today's layout (an unmapped earlier
  // version's positions are a prefix of it).
  std::vector<uint> stored_fields;
  if (!refs.empty())
    for (Field** fp = table->field; *fp; fp++)
      if ((*fp)->stored_in_db()) stored_fields.push_back(static_cast<uint>(fp - table->field));
  // Lists the row's off-row values, each with its column today (`mapped`: the row's
  // layout is that version's).
  auto list_refs = [&](const TableDef::SchemaVersion* mapped) {
    for (const StoredRef& r : refs) {
      OffRowValue v;
      v.id = r.id;
      v.length = r.length;
      int64_t stored = static_cast<int64_t>(r.position);
      if (mapped != nullptr)
        stored = r.position < mapped->columns.size() ? mapped->columns[r.position].stored : -2;
      if (stored == -2 || stored >= static_cast<int64_t>(stored_fields.size())) return false;
      if (stored >= 0) {
        v.field = stored_fields[stored];
        if (!(table->field[v.field]->flags & BLOB_FLAG)) return false;
      }
      off_row->push_back(v);
    }
    return true;
  };
  // The row's layout: today's, or an earlier version's (fewer columns, maybe a shorter
  // null bitmap; the bits of the columns it has are where they are today), or an earlier
  // mapped one (decode_mapped_row).
  uint stored_columns = ~0u, null_bytes = share->null_bytes;
  if (schema_version != def.schema_version) {
    const TableDef::SchemaVersion* old = def.old_version(static_cast<uint32_t>(schema_version));
    if (old != nullptr && old->mapped) {
      if (!list_refs(old)) return HA_ERR_CRASHED;
      return decode_mapped_row(table, def, *old, value, record);
    }
    if (old != nullptr) {
      stored_columns = old->stored_columns;
      null_bytes = old->null_bytes;
    } else if (!def.old_versions.empty()) {
      return HA_ERR_CRASHED;
    }
  }
  if (value.size() < null_bytes || null_bytes > share->null_bytes) return HA_ERR_CRASHED;
  if (!list_refs(nullptr)) return HA_ERR_CRASHED;
  if (null_bytes < share->null_bytes)
    memcpy(record + null_bytes, share->default_values + null_bytes, share->null_bytes - null_bytes);
  memcpy(record, value.data(), null_bytes);
  const uchar* from = reinterpret_cast<const uchar*>(value.data()) + null_bytes;
  const uchar* end = reinterpret_cast<const uchar*>(value.data()) + value.size();
  // Some Field::unpack overrides (BLOB) write through the field's own pointer rather than
  // `to`: point each field at the target row while it is filled.
  const my_ptrdiff_t diff = record - table->record[0];
  uint stored_index = 0;
  for (Field** fp = table->field; *fp; fp++) {
    Field* f = *fp;
    if (!f->stored_in_db()) continue;
    if (diff != 0) f->move_field_offset(diff);
    const bool is_null = f->real_maybe_null() && f->is_null();
    if (stored_index >= stored_columns) {
      // Added after the row was written: the value recorded when it was added.
      const bool ok = fill_added_column(f, def, stored_index++);
      if (diff != 0) f->move_field_offset(-diff);
      if (!ok) return HA_ERR_CRASHED;
      continue;
    }
    stored_index++;
    const uint index = static_cast<uint>(fp - table->field);
    if (skips != nullptr && (*skips)[index].skippable && !bitmap_is_set(read_set, index)) {
      if (diff != 0) f->move_field_offset(-diff);
      if (is_null) continue;
      const ColumnSkip& rule = (*skips)[index];
      const size_t length = packed_length(rule.length_bytes, rule.skip_length, from, end);
      if (length == 0) return HA_ERR_CRASHED;
      from += length;
      continue;
    }
    if (is_null) {
      // A NULL column holds the field's empty value (spaces for CHAR, no BLOB pointer), as
      // the server leaves it when it sets NULL: whole-record comparisons then see no change.
      f->reset();
      if (diff != 0) f->move_field_offset(-diff);
      continue;
    }
    const uchar* next = f->unpack(f->ptr, from, end);
    if (diff != 0) f->move_field_offset(-diff);
    if (next == nullptr || next > end) return HA_ERR_CRASHED;
    from = next;
  }
  return 0;
}

}  // namespace tidesql
