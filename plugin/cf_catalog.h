// Which SQL table and index each column family holds, for the views into the engine
// (SHOW ENGINE TIDESDB STATUS, the INFORMATION_SCHEMA tables, the conflict log).
//
// The data dictionary names each table's column families ("idx-<id>", one per key in the
// server's key order, then the hidden-key rows); the key names come from the table's .frm
// (read with the server's own reader, cached by table id while the .frm is unchanged: an
// instant ALTER renames an index in place). Names are the SQL names, decoded from the
// server's file names; a partition's column families belong to its table and partition.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

class THD;

namespace tidesql {

struct ColumnFamilyOwner {
  std::string cf_name;  // the library's name ("idx-12", "tidesql-dictionary", "default")
  uint32_t cf_id = 0;
  // Empty for column families no table names (the dictionary, "default", an orphan).
  std::string database, table, partition;  // partition: "" if the table is not partitioned
  std::string index;  // the key's name ("PRIMARY", a secondary key), or "(hidden primary key)"
  bool temporary = false;

  // "db.table", "db.table PARTITION p0", or the column family's name when no table owns it.
  std::string table_label() const;
};

// Every column family of the database, ordered by database, table, key order, then the
// ones no table names. `thd` reads the .frm files (its diagnostics stay clean).
std::vector<ColumnFamilyOwner> column_family_owners(THD* thd);

// The same, by library id.
using ColumnFamilyOwners = std::map<uint32_t, ColumnFamilyOwner>;
ColumnFamilyOwners column_family_owners_by_id(THD* thd);
// The owner of cf_id in `owners`, or one with cf_name "cf <id>" and no table when the
// column family no longer exists.
ColumnFamilyOwner column_family_owner(const ColumnFamilyOwners& owners, uint32_t cf_id);
// The same from a fresh list (meant for rare events: a conflict).
ColumnFamilyOwner column_family_owner(THD* thd, uint32_t cf_id);

// "6B6579" for "key"; at most max_bytes bytes are shown, then "..." .
std::string hex_bytes(const std::string& bytes, size_t max_bytes = 64);

}  // namespace tidesql
