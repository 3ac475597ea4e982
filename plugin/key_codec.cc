#include "key_codec.h"

#include <key.h>

#include <algorithm>
#include <cstring>

namespace tidesql {
namespace {

constexpr uchar kNullMarker = 0x00;
constexpr uchar kValueMarker = 0x01;
constexpr size_t kGroupBytes = 8;
constexpr uchar kMoreGroups = 9;

void invert(std::string* out, size_t from) {
  for (size_t i = from; i < out->size(); i++) (*out)[i] = static_cast<char>(~static_cast<uchar>((*out)[i]));
}

}  // namespace

// The bytes of a string column in a row buffer.
void KeyCodec::string_value(const Part& part, const uchar* ptr, const uchar** data, size_t* length) {
  Field* field = part.field;
  if (part.form == Form::kVarstring) {
    auto* var = static_cast<Field_varstring*>(field);
    *length = var->length_bytes == 1 ? ptr[0] : uint2korr(ptr);
    *data = ptr + var->length_bytes;
  } else if (part.form == Form::kBlob) {
    auto* blob = static_cast<Field_blob*>(field);
    uint packlength = blob->pack_length_no_ptr();
    *length = blob->get_length(ptr, packlength);
    memcpy(data, ptr + packlength, sizeof(uchar*));
  } else {
    *length = field->pack_length();
    *data = ptr;
  }
}

std::string prefix_successor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    uchar last = static_cast<uchar>(s.back());
    if (last != 0xff) {
      s.back() = static_cast<char>(last + 1);
      return s;
    }
    s.pop_back();
  }
  return s;
}

KeyCodec::Part KeyCodec::describe_part(TABLE* table, const KEY_PART_INFO& kp) {
  Part part{};
  // key_part->field is the TABLE's own field (share fields are not bound to rows).
  part.field = table->field[kp.fieldnr - 1];
  part.nullable = part.field->real_maybe_null();
  part.desc = (kp.key_part_flag & HA_REVERSE_SORT) != 0;
  part.field_offset = part.field->offset(table->record[0]);
  Field* f = part.field;
  part.form = dynamic_cast<Field_varstring*>(f) ? Form::kVarstring
              : dynamic_cast<Field_blob*>(f)    ? Form::kBlob
              : dynamic_cast<Field_bit*>(f)     ? Form::kBit
                                                : Form::kPlain;
  part.full_length = f->key_length() == kp.length && part.form != Form::kBlob;
  CHARSET_INFO* cs = f->charset();
  bool is_string =
      part.form == Form::kVarstring || part.form == Form::kBlob || dynamic_cast<Field_string*>(f);
  switch (f->real_type()) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR:
      part.kind = Kind::kInt;
      part.image_length = f->pack_length();
      break;
    default:
      if (is_string && cs == &my_charset_bin) {
        part.kind = dynamic_cast<Field_string*>(f) ? Kind::kBinaryFixed : Kind::kBinaryVar;
        part.prefix_chars = kp.length;
        part.image_length = kp.length;
      } else if (is_string) {
        part.kind = Kind::kText;
        part.prefix_chars = kp.length / cs->mbmaxlen;
        part.image_length = static_cast<uint>(cs->strnxfrmlen(kp.length));
      } else {
        part.kind = Kind::kSortImage;
        part.image_length = f->sort_length();
      }
      break;
  }
  // Prefix parts are packed too (their prefix): the server compares a covering read's
  // key columns with the range bounds, prefix parts included.
  part.packed = part.kind != Kind::kInt;
  return part;
}

void KeyCodec::init_foreign(TABLE* table, const KEY* key) {
  table_ = table;
  key_ = key;
  unique_ = (key->flags & HA_NOSAME) != 0 && key->algorithm != HA_KEY_ALG_LONG_HASH;
  parts_.clear();
  ext_parts_.clear();
  pk_parts_.clear();
  for (uint i = 0; i < key->user_defined_key_parts; i++)
    parts_.push_back(describe_part(table, key->key_part[i]));
}

void KeyCodec::init_reference(TABLE* table, const KEY& key, const std::vector<uint>& fieldnrs) {
  table_ = table;
  key_ = nullptr;
  unique_ = false;
  parts_.clear();
  ext_parts_.clear();
  pk_parts_.clear();
  for (uint i = 0; i < fieldnrs.size(); i++) {
    KEY_PART_INFO kp = key.key_part[i];
    const bool other_nullable = kp.field->real_maybe_null();
    kp.fieldnr = static_cast<uint16>(fieldnrs[i]);
    Part part = describe_part(table, kp);
    part.nullable = other_nullable;
    parts_.push_back(part);
  }
}

bool KeyCodec::fits(const uchar* record) const {
  for (const Part& part : parts_) {
    if (part.kind != Kind::kText && part.kind != Kind::kBinaryVar) continue;
    if (part.field->is_null_in_record(record)) continue;
    const uchar* data;
    size_t length;
    string_value(part, record + part.field_offset, &data, &length);
    if (part.kind == Kind::kBinaryVar) {
      if (length > part.prefix_chars) return false;
      continue;
    }
    CHARSET_INFO* cs = part.field->charset();
    const char* begin = reinterpret_cast<const char*>(data);
    // Trailing spaces do not count under PAD SPACE collations ('a' = 'a  ').
    size_t used = cs->state & MY_CS_NOPAD ? length : cs->lengthsp(begin, length);
    if (cs->numchars(begin, begin + used) > part.prefix_chars) return false;
  }
  return true;
}

void KeyCodec::init(TABLE* table, uint key_nr) {
  table_ = table;
  key_ = &table->key_info[key_nr];
  unique_ = (key_->flags & HA_NOSAME) != 0 && key_->algorithm != HA_KEY_ALG_LONG_HASH;
  parts_.clear();
  for (uint i = 0; i < key_->user_defined_key_parts; i++)
    parts_.push_back(describe_part(table, key_->key_part[i]));
  // Extended keys (HTON_SUPPORTS_EXTENDED_KEYS): the server appends to a non-unique
  // secondary key the primary key's parts it does not already hold, and may search by
  // them. The entry itself ends with the whole primary key, so a search key is made of
  // the key's parts and then as many of the primary key's parts, in the primary key's
  // order, as the given parts provide values for.
  ext_parts_.clear();
  pk_parts_.clear();
  const uint pk = table->s->primary_key;
  if (pk == MAX_KEY || pk == key_nr || key_->ext_key_parts <= key_->user_defined_key_parts) return;
  for (uint i = key_->user_defined_key_parts; i < key_->ext_key_parts; i++)
    ext_parts_.push_back(describe_part(table, key_->key_part[i]));
  const KEY& pk_key = table->key_info[pk];
  for (uint j = 0; j < pk_key.user_defined_key_parts; j++) {
    // The server leaves out a primary key part the key already holds; it stops extending
    // at a prefix part or at the key length limit (then the search stops there too).
    PkPart p{describe_part(table, pk_key.key_part[j]), kUnavailable};
    for (uint i = 0; i < key_->ext_key_parts; i++) {
      if (key_->key_part[i].fieldnr != pk_key.key_part[j].fieldnr) continue;
      p.ext_index = i < key_->user_defined_key_parts ? kInKey : i - key_->user_defined_key_parts;
      break;
    }
    pk_parts_.push_back(p);
  }
}

void KeyCodec::append_part(const Part& part, const uchar* record, std::string* out, bool* is_null) const {
  size_t start = out->size();
  Field* f = part.field;
  if (part.nullable && f->is_null_in_record(record)) {
    out->push_back(static_cast<char>(kNullMarker));
    *is_null = true;
    if (part.desc) invert(out, start);
    return;
  }
  if (part.nullable) out->push_back(static_cast<char>(kValueMarker));
  const uchar* ptr = record + part.field_offset;
  switch (part.kind) {
    case Kind::kInt: {
      uint n = part.image_length;
      size_t at = out->size();
      out->resize(at + n);
      for (uint i = 0; i < n; i++) (*out)[at + i] = static_cast<char>(ptr[n - 1 - i]);
      if (!(f->flags & UNSIGNED_FLAG)) (*out)[at] = static_cast<char>(static_cast<uchar>((*out)[at]) ^ 0x80);
      break;
    }
    case Kind::kText: {
      const uchar* data;
      size_t length;
      string_value(part, ptr, &data, &length);
      CHARSET_INFO* cs = f->charset();
      length = std::min(length, cs->charpos(reinterpret_cast<const char*>(data),
                                            reinterpret_cast<const char*>(data) + length, part.prefix_chars));
      size_t at = out->size();
      out->resize(at + part.image_length);
      uchar* dst = reinterpret_cast<uchar*>(&(*out)[at]);
      size_t n = cs->strnxfrm(dst, part.image_length, part.prefix_chars * cs->strxfrm_multiply, data, length,
                              MY_STRXFRM_PAD_WITH_SPACE | MY_STRXFRM_PAD_TO_MAXLEN);
      if (n < part.image_length) memset(dst + n, 0, part.image_length - n);
      break;
    }
    case Kind::kBinaryFixed: {
      out->append(reinterpret_cast<const char*>(ptr), std::min<size_t>(part.image_length, f->pack_length()));
      break;
    }
    case Kind::kBinaryVar: {
      const uchar* data;
      size_t length;
      string_value(part, ptr, &data, &length);
      length = std::min<size_t>(length, part.prefix_chars);
      size_t pos = 0;
      do {
        size_t n = std::min(kGroupBytes, length - pos);
        out->append(reinterpret_cast<const char*>(data + pos), n);
        out->append(kGroupBytes - n, '\0');
        pos += n;
        bool more = pos < length;
        out->push_back(static_cast<char>(more ? kMoreGroups : n));
        if (!more) break;
      } while (true);
      break;
    }
    case Kind::kSortImage: {
      size_t at = out->size();
      out->resize(at + part.image_length);
      my_ptrdiff_t diff = record - table_->record[0];
      f->move_field_offset(diff);
      f->sort_string(reinterpret_cast<uchar*>(&(*out)[at]), part.image_length);
      f->move_field_offset(-diff);
      break;
    }
  }
  if (part.desc) invert(out, start);
}

bool KeyCodec::append_parts(const uchar* record, uint parts, std::string* out) const {
  bool any_null = false;
  parts = std::min<uint>(parts, parts_.size());
  for (uint i = 0; i < parts; i++) append_part(parts_[i], record, out, &any_null);
  return any_null;
}

uint KeyCodec::append_key_image(const uchar* key, uint length, uchar* record, std::string* out) const {
  uint parts = 0, used = 0;
  while (parts < parts_.size() + ext_parts_.size() && used < length) {
    used += key_->key_part[parts].store_length;
    parts++;
  }
  if (parts == 0) return 0;
  restore_key_image(key, parts, record);
  append_parts(record, parts, out);
  if (parts > parts_.size()) {
    // Extended parts given: the primary key follows in its own order, up to the first of
    // its parts with no value given (one the key holds always has one).
    const uint ext_given = parts - static_cast<uint>(parts_.size());
    bool any_null = false;
    for (const PkPart& p : pk_parts_) {
      if (p.ext_index == kUnavailable || (p.ext_index != kInKey && p.ext_index >= ext_given)) break;
      append_part(p.part, record, out, &any_null);
    }
  }
  return parts;
}

void KeyCodec::restore_key_image(const uchar* key, uint parts, uchar* record) const {
  // Not key_restore(): it stores strings through Field::store, which checks lengths and
  // warns (an error in strict UPDATEs) for the padded bounds of a LIKE range.
  const uchar* p = key;
  for (uint i = 0; i < parts; i++) {
    const KEY_PART_INFO& kp = key_->key_part[i];
    const Part& part = i < parts_.size() ? parts_[i] : ext_parts_[i - parts_.size()];
    Field* f = part.field;
    const uchar* next = p + kp.store_length;
    bool is_null = false;
    if (kp.null_bit) {
      is_null = *p != 0;
      uchar* null_byte = record + f->null_offset();
      if (is_null)
        *null_byte |= f->null_bit;
      else
        *null_byte &= static_cast<uchar>(~f->null_bit);
      p++;
    }
    if (!is_null) {
      uchar* to = record + part.field_offset;
      if (part.form == Form::kBlob) {
        uint length = uint2korr(p);
        uint packlength = static_cast<Field_blob*>(f)->pack_length_no_ptr();
        store_lowendian(length, to, packlength);
        const uchar* data = p + HA_KEY_BLOB_LENGTH;
        memcpy(to + packlength, &data, sizeof(data));
      } else if (part.form == Form::kVarstring) {
        auto* var = static_cast<Field_varstring*>(f);
        uint length = std::min<uint>(uint2korr(p), var->field_length);
        if (var->length_bytes == 1)
          to[0] = static_cast<uchar>(length);
        else
          int2store(to, length);
        memcpy(to + var->length_bytes, p + HA_KEY_BLOB_LENGTH, length);
      } else if (part.form == Form::kBit) {
        my_ptrdiff_t diff = record - table_->record[0];
        f->move_field_offset(diff);
        f->set_key_image(p, kp.length);
        f->move_field_offset(-diff);
      } else {
        memcpy(to, p, kp.length);
      }
    }
    p = next;
  }
}

size_t KeyCodec::parts_length(std::string_view encoded, uint parts, bool* any_null) const {
  size_t pos = 0;
  *any_null = false;
  parts = std::min<uint>(parts, parts_.size());
  for (uint i = 0; i < parts; i++) {
    const Part& part = parts_[i];
    uchar flip = part.desc ? 0xff : 0x00;
    if (part.nullable) {
      if (pos >= encoded.size()) return 0;
      uchar marker = static_cast<uchar>(encoded[pos]) ^ flip;
      pos++;
      if (marker == kNullMarker) {
        *any_null = true;
        continue;
      }
    }
    if (part.kind == Kind::kBinaryVar) {
      while (true) {
        if (pos + kGroupBytes + 1 > encoded.size()) return 0;
        uchar marker = static_cast<uchar>(encoded[pos + kGroupBytes]) ^ flip;
        pos += kGroupBytes + 1;
        if (marker != kMoreGroups) break;
      }
    } else {
      pos += part.image_length;
      if (pos > encoded.size()) return 0;
    }
  }
  return pos;
}

bool KeyCodec::decode_into_record(std::string_view encoded, std::string_view* packed, uchar* record,
                                  bool with_prefix_parts) const {
  size_t pos = 0;
  for (const Part& part : parts_) {
    Field* f = part.field;
    uchar flip = part.desc ? 0xff : 0x00;
    bool is_null = false;
    if (part.nullable) {
      if (pos >= encoded.size()) return false;
      is_null = (static_cast<uchar>(encoded[pos]) ^ flip) == kNullMarker;
      pos++;
      uchar* null_byte = record + f->null_offset();
      if (is_null)
        *null_byte |= f->null_bit;
      else
        *null_byte &= static_cast<uchar>(~f->null_bit);
    }
    if (is_null) continue;
    size_t image = part.image_length;
    if (part.kind == Kind::kBinaryVar) {
      size_t p = pos;
      while (true) {
        if (p + kGroupBytes + 1 > encoded.size()) return false;
        uchar marker = static_cast<uchar>(encoded[p + kGroupBytes]) ^ flip;
        p += kGroupBytes + 1;
        if (marker != kMoreGroups) break;
      }
      image = p - pos;
    }
    if (pos + image > encoded.size()) return false;
    if (part.kind == Kind::kInt) {
      uchar* dst = record + part.field_offset;
      uint n = part.image_length;
      for (uint i = 0; i < n; i++) dst[n - 1 - i] = static_cast<uchar>(encoded[pos + i]) ^ flip;
      if (!(f->flags & UNSIGNED_FLAG)) dst[n - 1] ^= 0x80;
    } else if (part.packed && (part.full_length || with_prefix_parts)) {
      const uchar* from = reinterpret_cast<const uchar*>(packed->data());
      const uchar* end = from + packed->size();
      // As in decode_row: BLOB-like unpack writes through the field's own pointer.
      my_ptrdiff_t diff = record - table_->record[0];
      if (diff != 0) f->move_field_offset(diff);
      const uchar* next = f->unpack(f->ptr, from, end);
      if (diff != 0) f->move_field_offset(-diff);
      if (next == nullptr || next > end) return false;
      packed->remove_prefix(next - from);
    }
    pos += image;
  }
  return true;
}

size_t KeyCodec::max_length() const {
  size_t n = 0;
  for (const Part& part : parts_) {
    n += part.nullable ? 1 : 0;
    n += part.kind == Kind::kBinaryVar ? (part.prefix_chars / kGroupBytes + 1) * (kGroupBytes + 1)
                                       : part.image_length;
  }
  return n;
}

size_t KeyCodec::fixed_prefix_length() const {
  size_t n = 0;
  for (const Part& part : parts_) {
    if (part.kind == Kind::kBinaryVar) break;
    n += (part.nullable ? 1 : 0) + part.image_length;
  }
  return n;
}

bool KeyCodec::first_part_integer(std::string_view encoded, longlong* value, bool* is_unsigned) const {
  if (parts_.empty() || parts_[0].kind != Kind::kInt) return false;
  const Part& part = parts_[0];
  uchar flip = part.desc ? 0xff : 0x00;
  size_t pos = 0;
  if (part.nullable) {
    if (encoded.empty() || (static_cast<uchar>(encoded[0]) ^ flip) == kNullMarker) return false;
    pos = 1;
  }
  if (encoded.size() < pos + part.image_length) return false;
  *is_unsigned = (part.field->flags & UNSIGNED_FLAG) != 0;
  ulonglong v = 0;
  for (uint i = 0; i < part.image_length; i++) v = (v << 8) | (static_cast<uchar>(encoded[pos + i]) ^ flip);
  if (!*is_unsigned) {
    uint bits = part.image_length * 8;
    v ^= 1ULL << (bits - 1);
    if (bits < 64 && (v & (1ULL << (bits - 1)))) v |= ~0ULL << bits;  // sign-extend
  }
  *value = static_cast<longlong>(v);
  return true;
}

void KeyCodec::append_packed_values(const uchar* record, std::string* out, bool with_prefix_parts) const {
  for (const Part& part : parts_) {
    if (!part.packed || (!part.full_length && !with_prefix_parts)) continue;
    Field* f = part.field;
    if (part.nullable && f->is_null_in_record(record)) continue;
    const uchar* ptr = record + part.field_offset;
    uint max_length = UINT_MAX;
    size_t bound = f->max_packed_col_length(f->pack_length()) + 8;
    if (!part.full_length) {
      // A prefix part keeps the prefix: whole characters for text.
      const uchar* data;
      size_t length;
      string_value(part, ptr, &data, &length);
      if (part.kind == Kind::kText) {
        CHARSET_INFO* cs = f->charset();
        length =
            std::min(length, cs->charpos(reinterpret_cast<const char*>(data),
                                         reinterpret_cast<const char*>(data) + length, part.prefix_chars));
      } else {
        length = std::min<size_t>(length, part.prefix_chars);
      }
      max_length = static_cast<uint>(length);
      bound = length + 8;
    }
    size_t at = out->size();
    if (part.form == Form::kVarstring && !part.full_length) {
      auto* var = static_cast<Field_varstring*>(f);
      // Field_varstring::pack with a small max_length writes one length byte where unpack
      // expects the field's two: write the field's own form here.
      const uchar* data;
      size_t length;
      string_value(part, ptr, &data, &length);
      length = std::min<size_t>(length, max_length);
      out->push_back(static_cast<char>(length & 0xff));
      if (var->length_bytes == 2) out->push_back(static_cast<char>((length >> 8) & 0xff));
      out->append(reinterpret_cast<const char*>(data), length);
      continue;
    }
    if (part.form == Form::kBlob && !part.full_length) {
      auto* blob = static_cast<Field_blob*>(f);
      // Field_blob::pack with a max_length stores the shortened length but the whole value:
      // write the packed form (length bytes + data) here.
      uint packlength = blob->pack_length_no_ptr();
      const uchar* data;
      size_t length;
      string_value(part, ptr, &data, &length);
      length = std::min<size_t>(length, max_length);
      out->resize(at + packlength);
      store_lowendian(length, reinterpret_cast<uchar*>(&(*out)[at]), packlength);
      out->append(reinterpret_cast<const char*>(data), length);
      continue;
    }
    // Field::pack writes at most the column's packed length plus its length bytes.
    out->resize(at + bound);
    uchar* to = reinterpret_cast<uchar*>(&(*out)[at]);
    uchar* end = f->pack(to, ptr, max_length);
    out->resize(at + (end - to));
  }
}

}  // namespace tidesql
