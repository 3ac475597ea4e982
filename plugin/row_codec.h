// Row values: how a table's row is stored under its primary key.
//
// Format (version 1, docs/SQL-FORMATS.md):
//   u8      row format version (1)
//   varint  schema version of the table when the row was written (instant ADD COLUMN:
//           an earlier version's rows are read through that version's layout)
//   bytes   the row's null bitmap (TABLE_SHARE::null_bytes; also holds BIT columns' odd bits)
//   then, for every stored column that is not NULL, in column order, Field::pack()
//   (the server's own portable column format: integers little-endian, strings with their
//   length, BLOB / TEXT values inline).
// Version 2 is a row with off-row values: long BLOB / TEXT values kept under their own
// keys in the table's blob column family, read only by the statements that use them.
// After the schema version it lists them (varint count; per value: varint stored-column
// position in the row's layout, varint id, varint length); the rest is version 1's, each
// off-row column packed as an empty value. A row without off-row values is version 1.
// Virtual columns are not stored; the server computes them after each read.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <table.h>

#include <string>
#include <string_view>
#include <vector>

#include "dictionary.h"

namespace tidesql {

constexpr uint8_t kRowFormatVersion = 2;  // the newest this build reads and writes

// An off-row value of a row: its BLOB column (index in TABLE::field; kDroppedColumn for a
// column dropped since the row was written), its id (the key in the table's blob column
// family: 8 bytes, big-endian) and its length.
struct OffRowValue {
  static constexpr uint kDroppedColumn = ~0u;
  uint field = kDroppedColumn;
  uint64_t id = 0;
  uint64_t length = 0;
};

std::string blob_key(uint64_t id);

// Replaces *out with the stored form of `record` (a row buffer of `table`). The BLOB
// columns `off_row` names are written as references (their values are the caller's to
// store under their ids).
void encode_row(TABLE* table, const uchar* record, uint32_t schema_version,
                const std::vector<OffRowValue>& off_row, std::string* out);

// Fills `record` (a row buffer of `table`) from a stored row. BLOB / TEXT columns point into
// `value`, which must stay unchanged while the record is used; off-row ones are left empty
// and listed in *off_row, for the caller to read. A row written at an earlier schema
// version of `def` (instant ADD COLUMN) holds fewer columns: those added since take the
// values def recorded for them. Returns 0, or HA_ERR_CRASHED for a malformed row and
// HA_ERR_TIDESDB_REPORTED for a row of an unknown format version (the error, naming the
// table and the version, is reported).
//
// With `skips` (from column_skips) and `read_set`, a column outside read_set that skips
// says can be stepped over is not filled: its bytes in `record` are left as they were (the
// server reads only read_set's columns of a row it did not lock). nullptr: every column.
struct ColumnSkip;
int decode_row(TABLE* table, const TableDef& def, std::string_view value, uchar* record,
               std::vector<OffRowValue>* off_row, const std::vector<ColumnSkip>* skips = nullptr,
               const MY_BITMAP* read_set = nullptr);

// How a column's Field::pack() bytes are stepped over without unpacking them: a fixed
// size (length_bytes 0), or a little-endian length of length_bytes bytes followed by that
// many bytes. False if this engine does not know the column's packed form.
bool packed_form(const Field* f, uint8_t* length_bytes, uint32_t* skip_length);

// decode_row's rule for one column: `skippable` is false for a column always filled
// (primary key and other key parts, BLOBs: their off-row references) or of unknown form.
struct ColumnSkip {
  bool skippable = false;
  uint8_t length_bytes = 0;
  uint32_t skip_length = 0;
};

// One entry per TABLE::field. Each rule is checked against the packed form of the
// column's default value (and of a short string), and dropped if it disagrees.
std::vector<ColumnSkip> column_skips(TABLE* table);

// The ids of a stored row's off-row values (none for a version 1 row); false if the row
// is malformed.
bool off_row_ids(std::string_view value, std::vector<uint64_t>* ids);

}  // namespace tidesql
