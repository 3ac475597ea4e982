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
// Virtual columns are not stored; the server computes them after each read.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <table.h>

#include <string>
#include <string_view>

#include "dictionary.h"

namespace tidesql {

constexpr uint8_t kRowFormatVersion = 1;

// Replaces *out with the stored form of `record` (a row buffer of `table`).
void encode_row(TABLE* table, const uchar* record, uint32_t schema_version, std::string* out);

// Fills `record` (a row buffer of `table`) from a stored row. BLOB / TEXT columns point into
// `value`, which must stay unchanged while the record is used. A row written at an earlier
// schema version of `def` (instant ADD COLUMN) holds fewer columns: those added since take
// the values def recorded for them. Returns 0, or HA_ERR_CRASHED for a malformed row and
// HA_ERR_TIDESDB_REPORTED for a row of an unknown format version (the error, naming the
// table and the version, is reported).
int decode_row(TABLE* table, const TableDef& def, std::string_view value, uchar* record);

}  // namespace tidesql
