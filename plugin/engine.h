// The engine's one database: a tidesdb::TransactionDB under the server's data directory
// (DATADIR/#tidesdb), opened at plugin init and closed at shutdown; and the mapping of the
// library's statuses onto the server's handler error codes.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <my_base.h>

#include <string>

#include "tidesdb/status.h"
#include "tidesdb/transaction.h"

class THD;

namespace tidesql {

// Handler-private error code: the handler has already reported the error to the client
// (my_error), so the server's print_error() must add nothing. Engine codes start above
// HA_ERR_LAST.
constexpr int HA_ERR_TIDESDB_REPORTED = HA_ERR_LAST + 1;

// Directory of the database, relative to the server's working directory (its datadir).
extern const char kDatabaseDirectory[];

// Opens the database with the options of the tidesdb_* startup variables, runs the data
// dictionary's startup recovery, and routes library messages to the server's error log.
// On failure writes a clear message to the error log and returns false: the plugin then
// fails to initialise (and with --tidesdb=FORCE the server refuses to start).
bool open_engine();
// Closes the database (after every connection has ended). Safe to call when not open.
void close_engine();

// The database; valid between open_engine() and close_engine().
tidesdb::TransactionDB* transaction_db();
tidesdb::DB* base_db();

// Handler error code for a library status that is not OK. Conflicts and deadlocks become
// HA_ERR_LOCK_DEADLOCK (1213), lock waits HA_ERR_LOCK_WAIT_TIMEOUT (1205); a full write set
// or disk, I/O errors and corruption are reported to the client (and I/O errors and
// corruption to the error log) with the library's message and return
// HA_ERR_TIDESDB_REPORTED. `what` names the operation for the messages. A lock wait that
// `thd`'s kill (KILL QUERY, max_statement_time) interrupted becomes
// HA_ERR_QUERY_INTERRUPTED, which the server reports as that kill. Corruption names the
// damaged table: `table` ("db.t1") when the caller knows it, else the owner of the damaged
// column family the message names (a write refused at commit).
int ha_error_from_status(const tidesdb::Status& status, const char* what, THD* thd = nullptr,
                         const char* table = nullptr);

}  // namespace tidesql
