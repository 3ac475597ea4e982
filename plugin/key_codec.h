// Memcomparable keys: the byte order of an encoded key is the SQL order of the key under
// the column's collation, so the library's ordered column families serve every index read.
//
// Key part images (docs/SQL-FORMATS.md has the full format, version 1):
//   nullable part:   0x00 for NULL (nothing follows), 0x01 then the value image
//   integers:        big-endian, the sign bit flipped for signed types (decodable)
//   non-binary text: the collation's weight string (strnxfrm, padded to the part's length:
//                    PAD SPACE collations compare 'a' = 'a  '), fixed length
//   binary strings:  BINARY(n): the bytes; VARBINARY / BLOB: groups of 8 bytes each
//                    followed by a marker (9 = more groups follow, else the bytes used)
//   other types:     the server's sort image (Field::sort_string), fixed length
//   DESC parts:      every byte of the part (null marker included) inverted
// Primary key:   the primary key's parts; hidden primary key: the 8-byte big-endian row id.
// Secondary key: its parts followed by the primary key, except for a UNIQUE key with no
//                NULL part, whose key is its parts alone (so that two inserts of the same
//                value write the same library key and conflict); its value then holds the
//                primary key.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <field.h>
#include <table.h>

#include <string>
#include <string_view>
#include <vector>

namespace tidesql {

class KeyCodec {
 public:
  // Describes key `key_nr` of `table` (table->key_info[key_nr]).
  void init(TABLE* table, uint key_nr);
  // Describes `key`, a key of another definition of the same columns (an index an
  // in-place ALTER is building), over `table`'s fields (matched by field number), for
  // encoding entries only: no searches by extended parts. `key` must outlive the codec.
  void init_foreign(TABLE* table, const KEY* key);

  // Describes one side of a foreign key: part i reads `table`'s column fieldnrs[i]
  // (1-based) and is encoded as part i of `key`, a key of the other table, is (its length,
  // direction and nullability), so that a row of `table` yields the prefix of that key's
  // entries holding the same values. The columns' types were checked to match when the
  // foreign key was made; `key` need not outlive the codec.
  void init_reference(TABLE* table, const KEY& key, const std::vector<uint>& fieldnrs);
  // Whether every string part's value in `record` fits the part's length (a longer value
  // cannot equal one of the other table's column).
  bool fits(const uchar* record) const;

  // Appends the images of the key's first `parts` parts, read from `record` (a row buffer
  // of this table). Returns true if any of those parts is NULL.
  bool append_parts(const uchar* record, uint parts, std::string* out) const;
  // Appends the images of the parts present in a server key image (key_copy() layout) with
  // `length` bytes; `record` is scratch row space of the table. Returns the parts encoded,
  // extended parts (the primary key's, after a secondary key's own) included.
  uint append_key_image(const uchar* key, uint length, uchar* record, std::string* out) const;

  // Length of the first `parts` part images at the front of `encoded`; 0 if malformed.
  // *any_null tells whether one of them is NULL.
  size_t parts_length(std::string_view encoded, uint parts, bool* any_null) const;

  // Covering reads: fills the key's full-length columns into `record` from an encoded key
  // (its parts at the front) and the packed column values of the index entry (`packed`,
  // advanced past what was used). Returns false if the entry is malformed.
  // with_prefix_parts = false: prefix parts are neither packed nor filled (the primary
  // key's parts inside a secondary entry: the secondary parts already gave the columns
  // the server may compare).
  bool decode_into_record(std::string_view encoded, std::string_view* packed, uchar* record,
                          bool with_prefix_parts = true) const;
  // Appends the packed values (Field::pack) of the columns decode_into_record() needs
  // from the entry value: full-length parts whose key image cannot be decoded.
  void append_packed_values(const uchar* record, std::string* out, bool with_prefix_parts = true) const;

  // Most bytes the images of all parts can take.
  size_t max_length() const;
  // Bytes of the images of the key's leading parts that have a fixed length (a NULL takes
  // fewer), up to the first variable-length part.
  size_t fixed_prefix_length() const;
  // The value of an integer first part of an encoded key (AUTO_INCREMENT recovery); false
  // if the first part is not an integer or is NULL.
  bool first_part_integer(std::string_view encoded, longlong* value, bool* is_unsigned) const;

  uint parts() const { return static_cast<uint>(parts_.size()); }
  // Whether part i holds the whole column (decode_into_record can fill it).
  bool part_is_full_length(uint i) const { return parts_[i].full_length; }
  bool unique() const { return unique_; }
  const KEY* key() const { return key_; }

 private:
  enum class Kind : uint8_t { kInt, kText, kBinaryFixed, kBinaryVar, kSortImage };
  // How the column is laid out in a row buffer, decided once per part: a dynamic_cast
  // per row costs string compares of type names across the plugin's boundary (2.7 % of
  // the server's CPU in select_random_ranges, bench/results/2026-12-07-s27).
  enum class Form : uint8_t { kPlain, kVarstring, kBlob, kBit };
  struct Part {
    Field* field;
    Kind kind;
    Form form;
    bool nullable;
    bool desc;
    bool full_length;   // the part is the whole column (not a prefix)
    bool packed;        // full length and not decodable: its value is packed in the entry
    uint image_length;  // fixed-length kinds: bytes of the value image
    uint prefix_chars;  // kText / kBinary*: the part's length in characters / bytes
    uint field_offset;  // offset of the column in a row buffer
  };

  // A primary key part, for searches by extended keys: where its value comes from.
  static constexpr uint kInKey = ~0u;            // a part of the key itself
  static constexpr uint kUnavailable = ~0u - 1;  // neither: never searched by
  struct PkPart {
    Part part;
    uint ext_index;  // its position among the extended parts, kInKey or kUnavailable
  };

  static Part describe_part(TABLE* table, const KEY_PART_INFO& kp);
  // The bytes of a string part's column value at `ptr` in a row buffer.
  static void string_value(const Part& part, const uchar* ptr, const uchar** data, size_t* length);
  void append_part(const Part& part, const uchar* record, std::string* out, bool* is_null) const;
  // Writes the first `parts` parts of a key image into `record`'s columns.
  void restore_key_image(const uchar* key, uint parts, uchar* record) const;

  TABLE* table_ = nullptr;
  const KEY* key_ = nullptr;
  bool unique_ = false;
  std::vector<Part> parts_;
  std::vector<Part> ext_parts_;   // the extended parts (key_part[user_defined_key_parts ..])
  std::vector<PkPart> pk_parts_;  // with extended parts: the primary key's parts, in order
};

// The 8-byte key of a row of a table without a primary key.
inline std::string hidden_pk_key(uint64_t row_id) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; i--) {
    k[i] = static_cast<char>(row_id & 0xff);
    row_id >>= 8;
  }
  return k;
}

// The smallest key greater than every key that starts with `prefix` (empty if none: the
// prefix is all 0xff bytes).
std::string prefix_successor(std::string_view prefix);

}  // namespace tidesql
