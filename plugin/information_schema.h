// The engine's INFORMATION_SCHEMA tables, each a plugin of ha_tidesdb.so (declared with
// the storage engine in handlerton.cc):
//   TIDESDB_COLUMN_FAMILIES  per table and index: entries, bytes, files and levels
//   TIDESDB_SST_FILES        per SSTable: level, key range (hex), sizes, entries, tombstones
//   TIDESDB_COMPACTIONS      running and recent compactions
//   TIDESDB_TRANSACTIONS     open transactions: age, write set, isolation, mode, connection
//   TIDESDB_LOCKS            row locks held and waited for (pessimistic mode, commit locks)
// Reading them requires the PROCESS privilege (as InnoDB's do). Columns are documented in
// docs/OPERATIONS.md.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <mysql/plugin.h>

namespace tidesql {

extern st_maria_plugin i_s_column_families;
extern st_maria_plugin i_s_sst_files;
extern st_maria_plugin i_s_compactions;
extern st_maria_plugin i_s_transactions;
extern st_maria_plugin i_s_locks;

}  // namespace tidesql
