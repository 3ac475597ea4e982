// Conflicts, deadlocks and lock wait timeouts as a DBA sees them: each one described with
// its key (the table and index of its column family, and the key's bytes), the statement
// of the connection that failed, and the transactions it waited for with their
// connections and statements. The latest one is kept for SHOW ENGINE TIDESDB STATUS;
// with tidesdb_print_all_conflicts ON each one also goes to the error log (as
// innodb_print_all_deadlocks does for InnoDB's deadlocks).
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <string>

#include "tidesdb/transaction.h"

class THD;

namespace tidesql {

// Called in the failing connection's thread, while `txn` (whose last_failure() tells what
// happened) still exists. `status` is the failed operation's status when the caller has
// it (Commit, Prepare), OK otherwise. Nothing happens unless the failure was a conflict,
// a deadlock or a lock wait timeout.
void note_transaction_failure(THD* thd, const tidesdb::Transaction& txn, const tidesdb::Status& status);

// The description of the latest one since the engine started, "" if there was none;
// `thd` (the asking connection) reads the names of its table and index.
std::string latest_conflict(THD* thd);

}  // namespace tidesql
