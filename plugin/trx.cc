#include "trx.h"

#include <mysqld_error.h>
#include <sql_class.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "conflicts.h"
#include "engine.h"
#include "handlerton.h"
#include "status.h"
#include "sysvars.h"

// The server's report of a lock wait (sql_class.cc; not in a public header).
extern "C" int thd_need_wait_reports(const MYSQL_THD thd);
extern "C" int thd_rpl_deadlock_check(MYSQL_THD thd, MYSQL_THD other_thd);

namespace tidesql {
namespace {

// X/Open XA return codes (the server ignores them; InnoDB returns the same).
constexpr int XA_OK = 0;
constexpr int XAER_RMERR = -3;
constexpr int XAER_NOTA = -4;

bool in_multi_statement_transaction(THD* thd) {
  return thd_test_options(thd, OPTION_NOT_AUTOCOMMIT | OPTION_BEGIN);
}

tidesdb::IsolationLevel isolation_of(THD* thd) {
  switch (thd_tx_isolation(thd)) {
    case ISO_READ_UNCOMMITTED:
    case ISO_READ_COMMITTED:
      return tidesdb::IsolationLevel::kReadCommitted;
    case ISO_SERIALIZABLE:
      return tidesdb::IsolationLevel::kSerializable;
    default:
      return tidesdb::IsolationLevel::kRepeatableRead;
  }
}

// The connection of each live library transaction (by Transaction::id()), so that a lock
// wait can be reported to the server as "this connection waits for that one": parallel
// replication then kills and retries a replicated transaction that holds what an earlier
// one (in the commit order it must keep) waits for, instead of both waiting until the
// lock timeout, and with the binary log on the server marks the waiting transaction so
// that replicas do not run it in parallel with the one it waited for. Only transactions
// whose reports can matter are here (thd_need_wait_reports: the binary log is on, or the
// connection is a parallel replication worker); elsewhere the server ignores them, and
// the map would cost every transaction a global mutex.
std::mutex connections_mu;
std::unordered_map<uint64_t, THD*> connections;

void forget_connection(TrxContext* trx) {
  if (!trx->reports_lock_waits || !trx->txn) return;
  std::lock_guard<std::mutex> g(connections_mu);
  connections.erase(trx->txn->id());
  trx->reports_lock_waits = false;
}

void report_lock_wait(THD* waiter, uint64_t holder_id) {
  std::lock_guard<std::mutex> g(connections_mu);
  auto it = connections.find(holder_id);
  if (it != connections.end() && it->second != waiter) thd_rpl_deadlock_check(waiter, it->second);
}

// Every connection that has used the engine, for open_transactions(). A context joins at
// its first use and leaves at close_connection: one global lock per connection, none per
// transaction (a transaction's begin and end take only its own context's view_mutex).
std::mutex contexts_mu;
std::vector<TrxContext*> contexts;

uint64_t wall_clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string current_query(THD* thd) {
  char buffer[1024];
  size_t length = thd_query_safe(thd, buffer, sizeof(buffer));
  return std::string(buffer, length);
}

void begin_transaction(THD* thd, TrxContext* trx, bool snapshot_at_begin) {
  tidesdb::TransactionOptions options;
  options.isolation = isolation_of(thd);
  options.mode = pessimistic_locking(thd) ? tidesdb::ConcurrencyMode::kPessimistic
                                          : tidesdb::ConcurrencyMode::kOptimistic;
  options.locking_reads_latest = locking_reads_latest(thd);
  options.lock_timeout_micros = static_cast<int64_t>(lock_wait_timeout_seconds(thd)) * 1000000;
  // Prepare follows tidesdb's sync mode too (the library syncs every prepare by default):
  // at NONE the binary log, or nothing, is the durable record (docs/SQL-ENGINE.md).
  options.sync_mode = configured_sync_mode();
  options.snapshot_at_begin =
      snapshot_at_begin && options.isolation != tidesdb::IsolationLevel::kReadCommitted;
  // KILL QUERY / KILL CONNECTION / max_statement_time end a lock wait within the
  // library's poll interval (asked from the waiting thread, as InnoDB does).
  options.interrupted = [thd] { return thd_kill_level(thd) != THD_IS_NOT_KILLED; };
  const bool report_waits = thd_need_wait_reports(thd);
  if (report_waits) options.waiting_for = [thd](uint64_t holder_id) { report_lock_wait(thd, holder_id); };
  forget_connection(trx);  // an ended transaction not reset yet (on_row_error)
  std::unique_ptr<tidesdb::Transaction> txn = transaction_db()->BeginTransaction(options);
  {
    std::lock_guard<std::mutex> g(trx->view_mutex);
    trx->txn = std::move(txn);
    trx->open = true;
    trx->prepared = false;
    trx->isolation = options.isolation;
    trx->pessimistic = options.mode == tidesdb::ConcurrencyMode::kPessimistic;
    trx->locks_latest = trx->txn->locks_latest();
    trx->began_micros = wall_clock_micros();
  }
  trx->reports_lock_waits = report_waits;
  if (report_waits) {
    std::lock_guard<std::mutex> g(connections_mu);
    connections[trx->txn->id()] = thd;
  }
  trx->savepoint_depth = 0;
  trx->statement_savepoint = false;
  status_counters.transactions.add();
}

void end_transaction(TrxContext* trx) {
  trx->release_cursors();
  forget_connection(trx);
  std::unique_ptr<tidesdb::Transaction> ended;
  {
    std::lock_guard<std::mutex> g(trx->view_mutex);
    ended = std::move(trx->txn);
    trx->open = false;
    trx->prepared = false;
  }
  ended.reset();
  trx->statement_open = false;
  trx->statement_savepoint = false;
  trx->savepoint_depth = 0;
  trx->internal_xid = false;
  trx->committed_in_order = false;
  trx->ordered_status = tidesdb::Status::OK();
}

bool active(const TrxContext* trx) {
  return trx != nullptr && trx->txn && trx->txn->state() == tidesdb::Transaction::State::kActive;
}

bool prepared(const TrxContext* trx) {
  return trx != nullptr && trx->txn && trx->txn->state() == tidesdb::Transaction::State::kPrepared;
}

// The library's xid of a server XID: formatID (8 bytes little-endian), gtrid length,
// bqual length (1 byte each), then the gtrid and bqual bytes.
std::string library_xid(const XID& xid) {
  std::string s;
  uint64_t format = static_cast<uint64_t>(xid.formatID);
  for (int i = 0; i < 8; i++) s.push_back(static_cast<char>((format >> (8 * i)) & 0xff));
  s.push_back(static_cast<char>(xid.gtrid_length));
  s.push_back(static_cast<char>(xid.bqual_length));
  s.append(xid.data, xid.gtrid_length + xid.bqual_length);
  return s;
}

bool server_xid(const std::string& s, XID* xid) {
  if (s.size() < 10) return false;
  uint64_t format = 0;
  for (int i = 7; i >= 0; i--) format = (format << 8) | static_cast<unsigned char>(s[i]);
  long gtrid = static_cast<unsigned char>(s[8]), bqual = static_cast<unsigned char>(s[9]);
  if (gtrid + bqual > XIDDATASIZE || s.size() != static_cast<size_t>(10 + gtrid + bqual)) return false;
  xid->formatID = static_cast<long>(format);
  xid->gtrid_length = gtrid;
  xid->bqual_length = bqual;
  memcpy(xid->data, s.data() + 10, gtrid + bqual);
  return true;
}

void report_completion_error(THD* thd, int error) {
  // Reported here, or the client would see ER_ERROR_DURING_COMMIT (1180).
  if (error == HA_ERR_QUERY_INTERRUPTED) {
    thd->send_kill_message();  // KILL QUERY or max_statement_time during the commit's lock wait
  } else if (error == HA_ERR_LOCK_DEADLOCK) {
    status_counters.conflicts.add();
    my_error(ER_LOCK_DEADLOCK, MYF(0));
  } else if (error == HA_ERR_LOCK_WAIT_TIMEOUT) {
    my_error(ER_LOCK_WAIT_TIMEOUT, MYF(0));
  }
}

int tidesdb_commit(handlerton*, THD* thd, bool all) {
  TrxContext* trx = existing_trx_context(thd);
  if (trx == nullptr || !trx->txn) return 0;
  if (!all && in_multi_statement_transaction(thd)) {
    // The statement succeeded: its savepoint is no longer needed.
    if (trx->statement_savepoint && active(trx)) {
      trx->txn->ReleaseSavepoint();
      trx->savepoint_depth--;
    }
    trx->statement_savepoint = false;
    trx->statement_open = false;
    return 0;
  }
  trx->release_cursors();
  // After prepare() the library's Commit cannot fail on a conflict: validation happened
  // there, before the binary log holds the transaction.
  tidesdb::Status s;
  if (trx->committed_in_order) {
    s = trx->ordered_status;
  } else if (active(trx) || prepared(trx)) {
    s = trx->txn->Commit();
    if (!s.ok()) note_transaction_failure(thd, *trx->txn, s);
  }
  end_transaction(trx);
  if (s.ok()) {
    status_counters.commits.add();
    return 0;
  }
  status_counters.rollbacks.add();
  int error = ha_error_from_status(s, "commit", thd);
  report_completion_error(thd, error);
  return error;
}

int tidesdb_rollback(handlerton*, THD* thd, bool all) {
  TrxContext* trx = existing_trx_context(thd);
  if (trx == nullptr || !trx->txn) return 0;
  if (!all && in_multi_statement_transaction(thd)) {
    // The statement failed: undo just its changes.
    if (trx->statement_savepoint && active(trx)) {
      trx->release_cursors();
      trx->txn->RollbackToSavepoint();
      trx->savepoint_depth--;
    }
    trx->statement_savepoint = false;
    trx->statement_open = false;
    return 0;
  }
  trx->release_cursors();
  if (active(trx) || prepared(trx)) trx->txn->Rollback();
  end_transaction(trx);
  status_counters.rollbacks.add();
  return 0;
}

// Two-phase commit, phase one (the binary log's group commit, XA PREPARE): validates the
// transaction and logs its write set as prepared under the server's XID.
int tidesdb_prepare(handlerton*, THD* thd, bool all) {
  TrxContext* trx = existing_trx_context(thd);
  if (!active(trx)) return 0;
  if (!all && in_multi_statement_transaction(thd)) return 0;  // a statement's end
  XID xid;
  thd_get_xid(thd, reinterpret_cast<MYSQL_XID*>(&xid));
  trx->internal_xid = xid.get_my_xid() != 0;
  trx->release_cursors();
  tidesdb::Status s = trx->txn->Prepare(library_xid(xid));
  if (s.ok()) {
    status_counters.prepares.add();
    std::lock_guard<std::mutex> g(trx->view_mutex);
    trx->prepared = true;
    return 0;
  }
  note_transaction_failure(thd, *trx->txn, s);
  // A failed Prepare leaves the library transaction rolled back.
  end_transaction(trx);
  status_counters.rollbacks.add();
  int error = ha_error_from_status(s, "prepare", thd);
  report_completion_error(thd, error);
  return error;
}

// The binary log's group commit, once the binlog holds the transaction (durably at
// sync_binlog=1): the library commit happens here, in the binlog's order and under the
// server's LOCK_commit_ordered, so a snapshot taken under that mutex (START TRANSACTION
// WITH CONSISTENT SNAPSHOT, which records binlog_snapshot_file/position) sees exactly the
// transactions before its binlog position. It runs on the group leader's thread: the
// outcome waits for commit() to report it. Without the binary log (the coordinator is
// the tc.log of several XA engines) commit() commits, with the configured sync.
void tidesdb_commit_ordered(handlerton*, THD* thd, bool all) {
  TrxContext* trx = existing_trx_context(thd);
  if (!opt_bin_log || !prepared(trx) || !trx->internal_xid) return;
  if (!all && in_multi_statement_transaction(thd)) return;
  // The binlog holds the decision, and commit_checkpoint_request syncs the WAL before
  // the server stops scanning that binlog at recovery: the second phase need not sync.
  trx->txn->SetSyncMode(tidesdb::SyncMode::kNone);
  trx->ordered_status = trx->txn->Commit();
  trx->committed_in_order = true;
}

// The binary log asks (at rotation) to be told once every transaction commit_ordered()
// committed is durable: they are all in the WAL, so one sync does it.
void tidesdb_commit_checkpoint_request(void* cookie) {
  tidesdb::Status s = transaction_db()->db()->SyncWAL();
  if (s.ok()) {
    status_counters.binlog_checkpoints.add();
    commit_checkpoint_notify_ha(cookie);
    return;
  }
  // The WAL refuses writes from now on; the binlog keeps the files recovery needs.
  sql_print_error("TidesDB: WAL sync for a binary log checkpoint failed: %s", s.ToString().c_str());
}

// Prepared transactions for crash recovery and XA RECOVER (each pass returns them from
// the start; the server resolves what it gets before asking again).
int tidesdb_recover(handlerton*, XID* list, uint len) {
  uint n = 0;
  for (const std::string& xid : transaction_db()->PreparedXids()) {
    if (n >= len) break;
    if (server_xid(xid, &list[n])) n++;
  }
  return static_cast<int>(n);
}

int resolve_by_xid(XID* xid, bool commit) {
  std::string key = library_xid(*xid);
  tidesdb::Status s =
      commit ? transaction_db()->CommitPrepared(key) : transaction_db()->RollbackPrepared(key);
  if (s.IsNotFound()) return XAER_NOTA;
  return s.ok() ? XA_OK : XAER_RMERR;
}

int tidesdb_commit_by_xid(handlerton*, XID* xid) { return resolve_by_xid(xid, true); }

int tidesdb_rollback_by_xid(handlerton*, XID* xid) { return resolve_by_xid(xid, false); }

// The savepoint area holds the depth of the library's savepoint stack with this
// savepoint on top.
int tidesdb_savepoint_set(handlerton*, THD* thd, void* sv) {
  TrxContext* trx = trx_context(thd);
  if (!active(trx)) begin_transaction(thd, trx, false);
  trx->txn->SetSavepoint();
  trx->savepoint_depth++;
  *static_cast<uint64_t*>(sv) = trx->savepoint_depth;
  return 0;
}

int tidesdb_savepoint_rollback(handlerton*, THD* thd, void* sv) {
  TrxContext* trx = existing_trx_context(thd);
  if (!active(trx)) return 0;
  uint64_t target = *static_cast<uint64_t*>(sv);
  trx->release_cursors();
  while (trx->savepoint_depth >= target && trx->savepoint_depth > 0) {
    trx->txn->RollbackToSavepoint();
    trx->savepoint_depth--;
  }
  // The savepoint stays after ROLLBACK TO SAVEPOINT.
  trx->txn->SetSavepoint();
  trx->savepoint_depth++;
  return 0;
}

int tidesdb_savepoint_release(handlerton*, THD* thd, void* sv) {
  TrxContext* trx = existing_trx_context(thd);
  if (!active(trx)) return 0;
  uint64_t target = *static_cast<uint64_t*>(sv);
  // Only the top of the stack can be merged into the one below. The server also releases
  // savepoints that are not on top (a savepoint name set again drops the old one while
  // later savepoints stay): those stay on the library's stack, unreferenced; rolling back
  // to a savepoint below them undoes their writes too, as it must.
  if (trx->savepoint_depth == target && target > 0) {
    trx->txn->ReleaseSavepoint();
    trx->savepoint_depth--;
  }
  return 0;
}

bool tidesdb_savepoint_rollback_can_release_mdl(handlerton*, THD*) { return true; }

int tidesdb_start_consistent_snapshot(handlerton* hton, THD* thd) {
  TrxContext* trx = trx_context(thd);
  if (active(trx)) return 0;
  begin_transaction(thd, trx, true);
  trans_register_ha(thd, true, hton, 0);
  return 0;
}

int tidesdb_close_connection(handlerton* hton, THD* thd) {
  TrxContext* trx = existing_trx_context(thd);
  if (trx == nullptr) return 0;
  // A client that disconnects mid-transaction has it rolled back; an XA transaction it
  // prepared stays prepared (deleting the library transaction detaches it), to be
  // committed or rolled back by xid from another connection.
  if (active(trx)) trx->txn->Rollback();
  end_transaction(trx);
  {
    std::lock_guard<std::mutex> g(contexts_mu);
    std::erase(contexts, trx);
  }
  delete trx;
  thd_set_ha_data(thd, hton, nullptr);
  return 0;
}

}  // namespace

void TrxContext::add_cursor(TransactionCursor* c) {
  if (std::find(cursors.begin(), cursors.end(), c) == cursors.end()) cursors.push_back(c);
}

void TrxContext::remove_cursor(TransactionCursor* c) {
  auto it = std::find(cursors.begin(), cursors.end(), c);
  if (it != cursors.end()) cursors.erase(it);
}

void TrxContext::release_cursors() {
  // release_cursor() calls remove_cursor(): work on a copy.
  std::vector<TransactionCursor*> open;
  open.swap(cursors);
  for (TransactionCursor* c : open) c->release_cursor();
  // Keep the buffer for the next statement's cursors (one allocation per connection, not
  // one per statement).
  open.clear();
  if (cursors.empty()) cursors.swap(open);
}

TrxContext* existing_trx_context(THD* thd) {
  return static_cast<TrxContext*>(thd_get_ha_data(thd, tidesdb_hton));
}

TrxContext* trx_context(THD* thd) {
  TrxContext* trx = existing_trx_context(thd);
  if (trx == nullptr) {
    trx = new TrxContext();
    trx->thd = thd;
    // Through thd_set_ha_data, so that close_connection is called.
    thd_set_ha_data(thd, tidesdb_hton, trx);
    std::lock_guard<std::mutex> g(contexts_mu);
    contexts.push_back(trx);
  }
  return trx;
}

int begin_statement(THD* thd, TrxContext* trx) {
  if (trx->statement_open && active(trx)) return 0;
  bool multi = in_multi_statement_transaction(thd);
  if (!active(trx)) {
    trx->release_cursors();
    begin_transaction(thd, trx, false);
  }
  trans_register_ha(thd, false, tidesdb_hton, 0);
  if (multi) {
    trans_register_ha(thd, true, tidesdb_hton, 0);
    trx->txn->SetSavepoint();
    trx->savepoint_depth++;
    trx->statement_savepoint = true;
  }
  trx->statement_open = true;
  return 0;
}

size_t copy_chunk_bytes() { return std::min<size_t>(32 << 20, sysvars.max_write_set_bytes / 2); }

int commit_copy_chunk(THD* thd, TrxContext* trx) {
  if (!active(trx)) return 0;
  trx->release_cursors();
  tidesdb::Status s = trx->txn->Commit();
  end_transaction(trx);
  if (!s.ok()) return ha_error_from_status(s, "ALTER TABLE copy", thd);
  begin_transaction(thd, trx, false);
  trx->statement_open = true;
  return 0;
}

void on_row_error(THD* thd, TrxContext* trx, int error) {
  if ((error == HA_ERR_LOCK_DEADLOCK || error == HA_ERR_LOCK_WAIT_TIMEOUT) && trx->txn)
    note_transaction_failure(thd, *trx->txn, tidesdb::Status::OK());
  if (error != HA_ERR_LOCK_DEADLOCK) return;
  status_counters.conflicts.add();
  // InnoDB's rule: a deadlock (here also a write conflict) rolls back the whole
  // transaction. The library transaction goes now, releasing its locks; the server rolls
  // back the rest at the statement's end.
  if (active(trx)) {
    trx->release_cursors();
    trx->txn->Rollback();
    std::lock_guard<std::mutex> g(trx->view_mutex);
    trx->open = false;
  }
  thd->mark_transaction_to_rollback(true);
}

void install_transaction_hooks(handlerton* hton) {
  hton->commit = tidesdb_commit;
  hton->rollback = tidesdb_rollback;
  hton->savepoint_offset = sizeof(uint64_t);
  hton->savepoint_set = tidesdb_savepoint_set;
  hton->savepoint_rollback = tidesdb_savepoint_rollback;
  hton->savepoint_release = tidesdb_savepoint_release;
  hton->savepoint_rollback_can_release_mdl = tidesdb_savepoint_rollback_can_release_mdl;
  hton->start_consistent_snapshot = tidesdb_start_consistent_snapshot;
  hton->close_connection = tidesdb_close_connection;
  hton->prepare = tidesdb_prepare;
  hton->commit_ordered = tidesdb_commit_ordered;
  hton->commit_checkpoint_request = tidesdb_commit_checkpoint_request;
  hton->recover = tidesdb_recover;
  hton->commit_by_xid = tidesdb_commit_by_xid;
  hton->rollback_by_xid = tidesdb_rollback_by_xid;
}

}  // namespace tidesql

namespace tidesql {

std::vector<OpenTransaction> open_transactions() {
  std::vector<OpenTransaction> list;
  std::lock_guard<std::mutex> g(contexts_mu);
  for (TrxContext* trx : contexts) {
    OpenTransaction t;
    {
      std::lock_guard<std::mutex> v(trx->view_mutex);
      if (!trx->open || !trx->txn) continue;
      t.txn_id = trx->txn->id();
      t.prepared = trx->prepared;
      t.isolation = trx->isolation;
      t.pessimistic = trx->pessimistic;
      t.began_micros = trx->began_micros;
      t.write_set_bytes = trx->txn->write_set_bytes();
      t.write_set_count = trx->txn->write_set_count();
    }
    // The THD lives while its context is in the list (close_connection takes it out).
    t.connection_id = thd_get_thread_id(trx->thd);
    t.query = current_query(trx->thd);
    list.push_back(std::move(t));
  }
  std::sort(list.begin(), list.end(), [](const OpenTransaction& a, const OpenTransaction& b) {
    return a.connection_id < b.connection_id;
  });
  return list;
}

bool transaction_owner(uint64_t txn_id, unsigned long long* connection_id, std::string* query) {
  std::lock_guard<std::mutex> g(contexts_mu);
  for (TrxContext* trx : contexts) {
    {
      std::lock_guard<std::mutex> v(trx->view_mutex);
      if (!trx->txn || trx->txn->id() != txn_id) continue;
    }
    *connection_id = thd_get_thread_id(trx->thd);
    *query = current_query(trx->thd);
    return true;
  }
  return false;
}

const char* isolation_name(tidesdb::IsolationLevel level) {
  switch (level) {
    case tidesdb::IsolationLevel::kReadUncommitted:
      return "READ UNCOMMITTED";
    case tidesdb::IsolationLevel::kReadCommitted:
      return "READ COMMITTED";
    case tidesdb::IsolationLevel::kRepeatableRead:
      return "REPEATABLE READ";
    case tidesdb::IsolationLevel::kSnapshot:
      return "SNAPSHOT";
    case tidesdb::IsolationLevel::kSerializable:
      return "SERIALIZABLE";
  }
  return "?";
}

}  // namespace tidesql
