// Bank transfers under many threads, both concurrency modes and several isolation
// levels, with random aborts and retried conflicts: the total balance is checked by
// concurrent snapshot readers, after every round, and after a SIGKILL + recovery.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "txn/txn_test_util.h"

namespace tidesdb {
namespace {

using namespace txntest;

constexpr int kAccounts = 6;
constexpr int kInitial = 1000;

std::string Account(int i) { return "acct" + std::to_string(100 + i); }

uint32_t Seed() {
  uint32_t seed = std::random_device()();
  if (const char* e = std::getenv("TIDESDB_TEST_SEED")) seed = static_cast<uint32_t>(std::stoul(e));
  std::printf("seed %u (TIDESDB_TEST_SEED)\n", seed);
  return seed;
}

// Sum of all balances in one consistent read (a snapshot transaction's iterator over the
// accounts; the SIGKILL test keeps its transfer log beside them).
long Total(TransactionDB* db, int* accounts = nullptr) {
  TransactionOptions o;
  o.isolation = IsolationLevel::kSnapshot;
  auto t = db->BeginTransaction(o);
  auto it = t->NewIterator(ReadOptions(), db->db()->DefaultColumnFamily());
  long sum = 0;
  int n = 0;
  for (it->Seek("acct"); it->Valid() && it->key().starts_with("acct"); it->Next(), ++n)
    sum += std::stol(std::string(it->value()));
  EXPECT_TRUE(it->status().ok());
  if (accounts) *accounts = n;
  return sum;
}

// One transfer as one transaction; retried on retryable failures. Randomly aborts
// instead of committing.
// With log_key, the transaction also writes log_key = "from to amount" (the SIGKILL test
// checks each acknowledged transfer by it), never aborts on purpose, and sets *committed.
void Transfer(TransactionDB* db, std::mt19937& rng, int variant, std::atomic<long>* commits,
              std::atomic<long>* retries, const std::string* log_key = nullptr, bool* committed = nullptr) {
  static const TransactionOptions kVariants[] = {
      {IsolationLevel::kSnapshot, ConcurrencyMode::kOptimistic},
      {IsolationLevel::kRepeatableRead, ConcurrencyMode::kPessimistic},
      {IsolationLevel::kSerializable, ConcurrencyMode::kOptimistic},
      {IsolationLevel::kSerializable, ConcurrencyMode::kPessimistic},
      {IsolationLevel::kReadCommitted, ConcurrencyMode::kPessimistic},
  };
  ColumnFamilyHandle* cf = db->db()->DefaultColumnFamily();
  const int from = rng() % kAccounts;
  const int to = (from + 1 + rng() % (kAccounts - 1)) % kAccounts;
  const int amount = 1 + rng() % 50;
  const bool abort = rng() % 10 == 0;
  TransactionOptions o = kVariants[variant % 5];
  o.lock_timeout_micros = 2'000'000;
  while (true) {
    auto t = db->BeginTransaction(o);
    std::string a, b;
    // Read committed needs GetForUpdate for a safe read-modify-write; the others get it
    // from first-committer-wins, so they use plain reads half of the time.
    const bool for_update = o.isolation == IsolationLevel::kReadCommitted || rng() % 2 == 0;
    Status s = for_update ? t->GetForUpdate(cf, Account(from), &a) : t->Get(cf, Account(from), &a);
    if (s.ok()) s = for_update ? t->GetForUpdate(cf, Account(to), &b) : t->Get(cf, Account(to), &b);
    if (s.ok()) s = t->Put(cf, Account(from), std::to_string(std::stol(a) - amount));
    if (s.ok()) s = t->Put(cf, Account(to), std::to_string(std::stol(b) + amount));
    if (s.ok() && log_key != nullptr) {
      s = t->Put(cf, *log_key,
                 std::to_string(from) + " " + std::to_string(to) + " " + std::to_string(amount));
    }
    if (s.ok()) {
      if (abort && log_key == nullptr) {
        s = t->Rollback();
        ASSERT_TRUE(s.ok());
        return;
      }
      s = t->Commit();
    }
    if (s.ok()) {
      (*commits)++;
      if (committed != nullptr) *committed = true;
      return;
    }
    ASSERT_TRUE(s.IsBusy() || s.IsTimedOut() || s.IsDeadlock()) << s.ToString();
    (*retries)++;
    if (t->state() == Transaction::State::kActive) t->Rollback();
  }
}

class TxnStressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchDir("txn_stress");
    DestroyDB(dir_, Options());
    options_.sync_mode = SyncMode::kNone;
    options_.flush_threads = 1;
    options_.unified_memtable_write_buffer_size = 256 << 10;  // flushes during the run
  }
  void TearDown() override {
    db_.reset();
    DestroyDB(dir_, Options());
  }
  void Open() {
    db_.reset();
    ASSERT_TRUE(TransactionDB::Open(options_, dir_, &db_).ok());
  }
  void Populate() {
    WriteBatch b;
    for (int i = 0; i < kAccounts; ++i)
      b.Put(db_->db()->DefaultColumnFamily(), Account(i), std::to_string(kInitial));
    ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
  }

  std::string dir_;
  Options options_;
  std::unique_ptr<TransactionDB> db_;
};

TEST_F(TxnStressTest, BankTransferInvariantEveryRoundAndAfterReopen) {
  const uint32_t seed = Seed();
  Open();
  Populate();
  std::atomic<long> commits{0}, retries{0};
  constexpr int kThreads = 4, kRounds = 5, kPerRound = 60;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<bool> stop{false};
    std::atomic<long> bad_totals{0};
    std::thread checker([&] {  // snapshot reads while transfers run
      while (!stop.load()) {
        if (Total(db_.get()) != long{kAccounts} * kInitial) bad_totals++;
      }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(seed + round * 131 + t);
        for (int i = 0; i < kPerRound; ++i) Transfer(db_.get(), rng, t + round, &commits, &retries);
      });
    }
    for (auto& th : threads) th.join();
    stop = true;
    checker.join();
    EXPECT_EQ(bad_totals.load(), 0) << "round " << round;
    int n = 0;
    EXPECT_EQ(Total(db_.get(), &n), long{kAccounts} * kInitial) << "round " << round;
    EXPECT_EQ(n, kAccounts);
  }
  std::printf("commits %ld retries %ld\n", commits.load(), retries.load());
  EXPECT_GT(commits.load(), kThreads * kRounds * kPerRound / 2);
  Open();
  EXPECT_EQ(Total(db_.get()), long{kAccounts} * kInitial);
}

// A child process transfers with durable commits (sync FULL) and reports each
// acknowledged transfer's id through a pipe; once 300 are acknowledged (no fixed sleep) it
// is SIGKILLed. After recovery every acknowledged transfer is present (its log key), the
// balances are exactly the initial ones moved by the transfers present (none half
// applied), and the total is conserved.
TEST_F(TxnStressTest, BankTransferInvariantAfterSigkill) {
  const uint32_t seed = Seed();
  options_.sync_mode = SyncMode::kFull;
  Open();
  Populate();
  db_.reset();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    std::unique_ptr<TransactionDB> db;
    if (!TransactionDB::Open(options_, dir_, &db).ok()) _exit(2);
    std::atomic<long> commits{0}, retries{0};
    std::mutex pipe_mu;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(seed + t);
        for (uint32_t n = 0;; ++n) {
          const uint32_t id = (static_cast<uint32_t>(t) << 24) | n;
          char key[32];
          std::snprintf(key, sizeof(key), "xfer%08x", id);
          const std::string log_key = key;
          bool committed = false;
          Transfer(db.get(), rng, t, &commits, &retries, &log_key, &committed);
          if (!committed) _exit(4);  // an unexpected error (Transfer asserts)
          std::lock_guard<std::mutex> g(pipe_mu);
          if (write(fds[1], &id, sizeof(id)) != sizeof(id)) _exit(3);
        }
      });
    }
    for (auto& th : threads) th.join();
    _exit(0);
  }
  close(fds[1]);
  std::set<uint32_t> acked;
  uint32_t id;
  while (acked.size() < 300 && read(fds[0], &id, sizeof(id)) == sizeof(id)) acked.insert(id);
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << WEXITSTATUS(status);
  while (read(fds[0], &id, sizeof(id)) == sizeof(id)) acked.insert(id);  // written before the kill
  close(fds[0]);
  ASSERT_GE(acked.size(), 300u);

  Open();
  std::vector<long> expected(kAccounts, kInitial);
  std::set<uint32_t> present;
  auto it = db_->db()->NewIterator(ReadOptions(), db_->db()->DefaultColumnFamily());
  for (it->Seek("xfer"); it->Valid() && it->key().starts_with("xfer"); it->Next()) {
    present.insert(static_cast<uint32_t>(std::stoul(std::string(it->key()).substr(4), nullptr, 16)));
    int from, to, amount;
    ASSERT_EQ(std::sscanf(std::string(it->value()).c_str(), "%d %d %d", &from, &to, &amount), 3);
    expected[from] -= amount;
    expected[to] += amount;
  }
  ASSERT_TRUE(it->status().ok());
  for (uint32_t a : acked) EXPECT_TRUE(present.count(a)) << "acknowledged transfer " << a << " is missing";
  for (int i = 0; i < kAccounts; ++i) {
    std::string v;
    ASSERT_TRUE(db_->db()->Get(ReadOptions(), db_->db()->DefaultColumnFamily(), Account(i), &v).ok());
    EXPECT_EQ(std::stol(v), expected[i]) << Account(i);
  }
  int n = 0;
  EXPECT_EQ(Total(db_.get(), &n), long{kAccounts} * kInitial);
  EXPECT_EQ(n, kAccounts);
  std::printf("%zu transfers acknowledged, %zu present after recovery\n", acked.size(), present.size());
}

}  // namespace
}  // namespace tidesdb
