// Helpers shared by the transaction tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "tidesdb/transaction.h"
#include "txn/transaction_db_impl.h"

namespace tidesdb {
namespace txntest {

inline std::string ScratchDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  return std::string(base != nullptr ? base : "/tmp") + "/tidesdb_" + name + "_" + std::to_string(getpid());
}

// Reads key through txn: the value, "<none>" if absent, or "<Status>" on error.
inline std::string Read(Transaction* txn, ColumnFamilyHandle* cf, Slice key, bool for_update = false) {
  std::string v;
  Status s = for_update ? txn->GetForUpdate(cf, key, &v) : txn->Get(cf, key, &v);
  if (s.IsNotFound()) return "<none>";
  if (!s.ok()) return "<" + s.ToString() + ">";
  return v;
}

inline std::string ReadDb(TransactionDB* db, Slice key) {
  std::string v;
  Status s = db->db()->Get(ReadOptions(), db->db()->DefaultColumnFamily(), key, &v);
  if (s.IsNotFound()) return "<none>";
  if (!s.ok()) return "<" + s.ToString() + ">";
  return v;
}

inline std::future<Status> Async(std::function<Status()> fn) {
  return std::async(std::launch::async, std::move(fn));
}

// Waits (up to 20 s) until at least n lock requests wait.
inline bool WaitForWaiters(TransactionDB* db, size_t n) {
  auto* impl = static_cast<TransactionDBImpl*>(db);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (impl->NumLockWaiters() >= n) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

inline bool Ready(std::future<Status>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace txntest
}  // namespace tidesdb
