// Foreign keys (ha_tidesdb_fk.cc; docs/SQL-ENGINE.md, "Foreign keys").
//
// Definitions: CREATE and ALTER TABLE hand the engine the table's FOREIGN KEY clauses
// (a copying ALTER also the ones it keeps, flagged `old`); they are checked against the
// parent's definition and kept in the child's TableDef, and the parent finds its children
// through reverse dictionary entries (dictionary_children).
//
// Checks, inside the row operation, in its transaction, as InnoDB makes them (against the
// latest committed rows merged with the transaction's own writes, at every isolation
// level, through the library's reference reads):
//   * child side (insert, or an update changing the columns): the parent row must exist;
//     its index entry is read with Transaction::GetReferenced, which S-locks it
//     (pessimistic) or validates it unchanged at commit (optimistic).
//   * parent side (delete, or an update changing the referenced columns), after the
//     row's own writes (which X-lock it): the child index is walked over the old values
//     with a reference iterator, whose range an optimistic commit validates; a child found
//     fails RESTRICT / NO ACTION, or is deleted / updated / set to NULL / to its default
//     through a second handler of the child table, recursively, at most
//     kMaxCascadeDepth deep. So a child insert and a concurrent parent delete never both
//     commit, in either mode.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

#include <memory>
#include <string>
#include <vector>

#include "dictionary.h"
#include "key_codec.h"
#include "tidesdb/db.h"

namespace tidesql {

// InnoDB's limit of nested cascading actions (FK_MAX_CASCADE_DEL).
constexpr uint kMaxCascadeDepth = 15;

// A foreign key of this table (it is the child), resolved for one statement.
struct ParentLink {
  ForeignKeyDef def;
  std::vector<uint> fieldnrs;  // this table's columns, 1-based
  // The parent table exists and has an index on the referenced columns: cf is that
  // index's column family, codec makes its entries' prefix from a row of this table, and
  // point says the entries are keyed by the referenced columns alone (one lookup).
  bool resolved = false;
  tidesdb::ColumnFamilyHandle* cf = nullptr;
  bool point = false;
  KeyCodec codec;
};

// A foreign key whose parent is this table, resolved for one statement.
struct ChildLink {
  ForeignKeyDef def;
  std::string child_name;           // dictionary name
  std::string child_db, child_sql;  // SQL names
  // Open in the statement (this TABLE if self-referencing) when the server opened it: for
  // cascading actions only.
  TABLE* child = nullptr;
  bool resolved = false;  // index, cf and codec are set
  uint index = MAX_KEY;   // the child's index on its foreign key columns
  tidesdb::ColumnFamilyHandle* cf = nullptr;
  std::vector<uint> child_fields;   // 1-based, of the child
  std::vector<uint> parent_fields;  // 1-based, of this table, in the same order
  KeyCodec codec;                   // makes that index's prefix from a row of this table
};

struct ForeignKeyState {
  uint64_t generation = 0;  // foreign_key_generation() when fks / has_children were read
  std::vector<ForeignKeyDef> fks;
  bool has_children = false;
  // parents / children are resolved for statement resolved_for (until reset()).
  bool resolved = false;
  query_id_t resolved_for = 0;
  std::vector<ParentLink> parents;
  std::vector<ChildLink> children;
  // Second handlers of child tables (cascading actions), for the statement.
  std::vector<std::pair<TABLE*, handler*>> clones;
  MEM_ROOT mem_root;
  bool mem_root_ready = false;

  ~ForeignKeyState();
  void drop_clones();
};

// The dictionary name of table `table` of database `db` (SQL names, lower-cased as
// lower_case_table_names says), and the SQL names of the table called `name` there.
std::string dictionary_name_of(std::string db, std::string table);
void sql_names(const std::string& name, std::string* db, std::string* table);
// Whether `name` (a dictionary name) is one of a copying ALTER's temporary tables (#sql-...).
bool is_alter_temporary(const std::string& name);

// The SQL clause of a foreign key, as SHOW CREATE TABLE and the error messages show it:
// CONSTRAINT `n` FOREIGN KEY (`a`) REFERENCES `t` (`b`) ON DELETE CASCADE. The parent is
// qualified by its database when that is not child_db.
std::string foreign_key_clause(const ForeignKeyDef& fk, const std::string& child_db);

}  // namespace tidesql
