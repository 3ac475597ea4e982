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

// A TransactionDB in a fresh scratch directory (named after `name`), removed after the
// test. A test sets options_ (its Env, sync mode, ...) and then calls Open(), which may
// also reopen; a test whose Env lives on its stack resets db_ before the Env goes.
class ScratchTxnDbTest : public ::testing::Test {
 protected:
  explicit ScratchTxnDbTest(const std::string& name) : dir_(ScratchDir(name)) {}
  void SetUp() override { DestroyDB(dir_, Options()); }
  void TearDown() override {
    db_.reset();
    DestroyDB(dir_, Options());
  }
  void Open() {
    db_.reset();
    TransactionDBOptions to;
    to.lock_timeout_micros = 10'000'000;
    ASSERT_TRUE(TransactionDB::Open(options_, to, dir_, &db_).ok());
    cf_ = db_->db()->DefaultColumnFamily();
  }

  std::string dir_;
  Options options_;
  std::unique_ptr<TransactionDB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

}  // namespace txntest
}  // namespace tidesdb
