#include "conflicts.h"

#include <log.h>
#include <sql_class.h>

#include <ctime>
#include <mutex>

#include "cf_catalog.h"
#include "sysvars.h"
#include "trx.h"

namespace tidesql {
namespace {

// The latest failure, kept raw: naming its key's table and index reads the dictionary,
// which is left to whoever shows it (or to the error log, when that is on).
struct Noted {
  tidesdb::TransactionFailure failure;
  std::string head;  // time, kind, transaction, connection
  std::string tail;  // statement, transactions waited for
};
std::mutex latest_mutex;
bool have_latest = false;
Noted latest;

const char* kind_name(tidesdb::TransactionFailure::Kind kind) {
  switch (kind) {
    case tidesdb::TransactionFailure::Kind::kConflict:
      return "write conflict";
    case tidesdb::TransactionFailure::Kind::kLockTimeout:
      return "lock wait timeout";
    case tidesdb::TransactionFailure::Kind::kDeadlock:
      return "deadlock";
    case tidesdb::TransactionFailure::Kind::kNone:
      break;
  }
  return "failure";
}

std::string now_text() {
  time_t now = time(nullptr);
  struct tm tm;
  localtime_r(&now, &tm);
  char buffer[32];
  strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &tm);
  return buffer;
}

std::string statement_or_idle(const std::string& statement) {
  return statement.empty() ? "(none: between statements)" : statement;
}

std::string describe_key(THD* thd, const tidesdb::TransactionFailure& f) {
  if (f.key.empty() && !f.is_range) return "not known (the commits it conflicted with are no longer tracked)";
  ColumnFamilyOwner owner = column_family_owner(thd, f.cf_id);
  std::string where = owner.table.empty()
                          ? owner.cf_name
                          : owner.table_label() + " index " + owner.index + " (" + owner.cf_name + ")";
  if (f.is_range) {
    return "range " + (f.key.empty() ? std::string("(start)") : hex_bytes(f.key)) + " .. " +
           (f.range_limit.empty() ? std::string("(end)") : hex_bytes(f.range_limit)) + " of " + where;
  }
  return where + ", key bytes " + hex_bytes(f.key);
}

std::string render(THD* thd, const Noted& n) {
  return n.head + "  reason: " + n.failure.message + "\n  key: " + describe_key(thd, n.failure) + "\n" +
         n.tail;
}

}  // namespace

void note_transaction_failure(THD* thd, const tidesdb::Transaction& txn, const tidesdb::Status& status) {
  Noted n;
  n.failure = txn.last_failure();
  const tidesdb::TransactionFailure& f = n.failure;
  if (f.kind == tidesdb::TransactionFailure::Kind::kNone) return;
  // A Commit or Prepare that failed otherwise (I/O) after an earlier lock timeout of the
  // same transaction: not this failure.
  if (!status.ok() && !status.IsBusy() && !status.IsTimedOut() && !status.IsDeadlock()) return;
  n.head = std::string(kind_name(f.kind)) + ": transaction " + std::to_string(txn.id()) + " (connection " +
           std::to_string(thd_get_thread_id(thd)) + ")" +
           (f.kind == tidesdb::TransactionFailure::Kind::kLockTimeout
                ? " waited too long; its statement was rolled back\n"
                : " was rolled back\n");
  char query[1024];
  size_t length = thd_query_safe(thd, query, sizeof(query));
  n.tail = "  statement: " + statement_or_idle(std::string(query, length)) + "\n";
  for (uint64_t blocker : f.blockers) {
    unsigned long long connection = 0;
    std::string statement;
    if (transaction_owner(blocker, &connection, &statement)) {
      n.tail += "  waited for: transaction " + std::to_string(blocker) + " (connection " +
                std::to_string(connection) + "), statement: " + statement_or_idle(statement) + "\n";
    } else {
      n.tail += "  waited for: transaction " + std::to_string(blocker) + " (prepared, or no longer open)\n";
    }
  }
  if (f.blockers.empty() && f.kind == tidesdb::TransactionFailure::Kind::kConflict) {
    n.tail += "  against: a transaction that committed first (after this one's snapshot or read)\n";
  }
  if (sysvars.print_all_conflicts) {
    std::string logged = render(thd, n);
    while (!logged.empty() && logged.back() == '\n') logged.pop_back();
    sql_print_information("TidesDB: %s", logged.c_str());
  }
  n.head = now_text() + " " + n.head;
  std::lock_guard<std::mutex> g(latest_mutex);
  latest = std::move(n);
  have_latest = true;
}

std::string latest_conflict(THD* thd) {
  Noted n;
  {
    std::lock_guard<std::mutex> g(latest_mutex);
    if (!have_latest) return "";
    n = latest;
  }
  return render(thd, n);
}

}  // namespace tidesql
