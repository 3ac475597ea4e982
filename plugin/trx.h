// Transactions: one library transaction per MariaDB transaction of a connection
// (autocommit statements included), and the handlerton's transaction entry points.
//
// Mapping (docs/SQL-ENGINE.md has the whole story):
//   * The transaction begins at the first statement that locks a TidesDB table
//     (external_lock / start_stmt) or at START TRANSACTION WITH CONSISTENT SNAPSHOT, and
//     is registered with the server for the statement and, inside BEGIN, the transaction.
//   * Inside BEGIN every statement sets a library savepoint: a failed statement rolls
//     back to it (rollback(all=false)); a successful one releases it.
//   * The session's isolation level maps onto the library's (READ UNCOMMITTED runs as READ
//     COMMITTED); tidesdb_pessimistic_locking picks the concurrency mode.
//   * Conflicts and deadlocks become ER_LOCK_DEADLOCK (1213) and roll the whole
//     transaction back; lock wait timeouts ER_LOCK_WAIT_TIMEOUT (1205) roll back the
//     statement.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tidesdb/transaction.h"

namespace tidesql {

// Something that holds a library iterator into the connection's transaction (a handler's
// open scan); it must drop the iterator before the transaction ends.
class TransactionCursor {
 public:
  virtual void release_cursor() = 0;

 protected:
  ~TransactionCursor() = default;
};

// Per connection (thd_get_ha_data).
struct TrxContext {
  std::unique_ptr<tidesdb::Transaction> txn;
  bool statement_open = false;       // between the statement's first lock and its end
  bool statement_savepoint = false;  // the open statement set a library savepoint
  uint64_t savepoint_depth = 0;      // library savepoints on the transaction's stack
  std::vector<TransactionCursor*> cursors;
  // Two-phase commit: prepare() ran under a server-generated xid (the binary log's or the
  // transaction coordinator log's, not an XA statement's).
  bool internal_xid = false;
  // commit_ordered() committed the library transaction (in the binary log's order); its
  // outcome is what commit() reports.
  bool committed_in_order = false;
  tidesdb::Status ordered_status;
  // The transaction is in the map of connections whose lock waits are reported (trx.cc).
  bool reports_lock_waits = false;
  // Counters of this connection's transactions, for status variables.
  uint64_t conflicts = 0;
  // The index of the connection's last duplicate-key error, for info(HA_STATUS_ERRKEY) of
  // whichever handler the server asks: a partitioned table asks the partition a row was
  // read from, also when the duplicate was found writing it into another one.
  uint last_dup_key = MAX_KEY;
  // Foreign keys (ha_tidesdb_fk.cc): the depth of the cascade running now; the tables its
  // updates changed on the way (an update cascading back into one acts as RESTRICT, as in
  // InnoDB); the constraint the last violation names, for get_error_message.
  uint fk_depth = 0;
  std::vector<std::string> fk_update_chain;
  std::string fk_error;

  // For the views of open transactions (open_transactions()), which read other
  // connections' contexts: the connection, and how and when its transaction began.
  // `view_mutex` guards these and the replacement of txn against those readers; the owner
  // thread reads txn without it.
  THD* thd = nullptr;
  std::mutex view_mutex;
  bool open = false;      // txn is active or prepared
  bool prepared = false;  // txn is prepared
  tidesdb::IsolationLevel isolation = tidesdb::IsolationLevel::kRepeatableRead;
  bool pessimistic = false;
  // txn->locks_latest(), kept for the row paths (tidesdb_locking_reads_latest in effect).
  // The owner thread's alone, not a view.
  bool locks_latest = false;
  uint64_t began_micros = 0;  // wall clock

  void add_cursor(TransactionCursor* c);
  void remove_cursor(TransactionCursor* c);
  void release_cursors();
};

// The connection's context, created on first use.
TrxContext* trx_context(THD* thd);
// The connection's context, or null if it never used the engine.
TrxContext* existing_trx_context(THD* thd);

// Called at the start of each statement that uses a TidesDB table: begins the transaction
// if needed, registers it with the server, and opens the statement (savepoint inside
// BEGIN). Returns 0 or a handler error.
int begin_statement(THD* thd, TrxContext* trx);

// ALTER TABLE's copy into the new (#sql-alter, not yet visible) table commits every
// copy_chunk_bytes() of write set: no other session can see that table before the server
// renames it into place, and a failed or crashed ALTER drops it whole, so the ALTER stays
// atomic while its size is not bounded by tidesdb_max_write_set_bytes. Commits the
// library transaction and begins the next one in its place. Returns 0 or a handler error.
size_t copy_chunk_bytes();  // 32 MiB, or half of tidesdb_max_write_set_bytes if smaller
int commit_copy_chunk(THD* thd, TrxContext* trx);

// A row operation failed with `error` (a handler code): a deadlock or conflict rolls the
// whole transaction back (the library's and, at the statement's end, the server's).
void on_row_error(THD* thd, TrxContext* trx, int error);

// Installs commit, rollback, savepoints, consistent snapshot and close_connection.
void install_transaction_hooks(handlerton* hton);

// One open (active or prepared) transaction of a connection, at one moment.
struct OpenTransaction {
  uint64_t txn_id = 0;  // tidesdb::Transaction::id()
  unsigned long long connection_id = 0;
  bool prepared = false;
  tidesdb::IsolationLevel isolation = tidesdb::IsolationLevel::kRepeatableRead;
  bool pessimistic = false;
  uint64_t began_micros = 0;  // wall clock
  size_t write_set_bytes = 0, write_set_count = 0;
  std::string query;  // the connection's current statement ("" if none)
};

// Every connection's open transaction, by connection id. Prepared transactions whose
// connection has gone (XA) are not listed; XA RECOVER shows them.
std::vector<OpenTransaction> open_transactions();
// The connection and current statement of the connection whose transaction is txn_id;
// false if no connection has it open.
bool transaction_owner(uint64_t txn_id, unsigned long long* connection_id, std::string* query);
// "READ COMMITTED", "REPEATABLE READ", ... (the library level a transaction runs at).
const char* isolation_name(tidesdb::IsolationLevel level);

}  // namespace tidesql
