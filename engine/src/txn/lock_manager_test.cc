#include "txn/lock_manager.h"

#include <gtest/gtest.h>
#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__)
// libasan's allocator statistics (sanitizer/allocator_interface.h, not shipped with gcc).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace tidesdb {
namespace {

using namespace std::chrono_literals;

constexpr LockMode S = LockMode::kShared;
constexpr LockMode X = LockMode::kExclusive;
constexpr uint32_t kCf = 7;
constexpr int64_t kForever = -1;

// Polls pred until it holds or 10 s pass (a generous bound: the conditions waited for
// are reached within microseconds on a healthy run).
bool Eventually(const std::function<bool()>& pred) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(100us);
  }
  return pred();
}

// Runs lm.Lock(...) on its own thread; Join() returns its status.
class AsyncLock {
 public:
  AsyncLock(LockManager* lm, uint64_t txn, Slice key, LockMode mode, int64_t timeout)
      : thread_([this, lm, txn, k = std::string(key), mode, timeout] {
          status_ = lm->Lock(txn, kCf, k, mode, timeout);
          done_.store(true);
        }) {}
  ~AsyncLock() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_.load(); }
  Status Join() {
    thread_.join();
    return status_;
  }

 private:
  Status status_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

void ExpectClean(const LockManager& lm) {
  EXPECT_EQ(lm.NumLocks(), 0u);
  EXPECT_EQ(lm.NumWaiters(), 0u);
  EXPECT_EQ(lm.NumTrackedTxns(), 0u);
}

TEST(LockManager, SharedLocksAreCompatible) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(3, kCf, "a", S, 0).ok());
  EXPECT_EQ(lm.NumLocks(), 3u);
  EXPECT_EQ(lm.LocksHeldBy(2), (std::vector<HeldLock>{{kCf, "a", S}}));
  for (uint64_t t : {1, 2, 3}) lm.UnlockAll(t);
  ExpectClean(lm);
}

TEST(LockManager, ExclusiveConflictsWithEverything) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  EXPECT_TRUE(lm.Lock(2, kCf, "a", S, 0).IsTimedOut());
  EXPECT_TRUE(lm.Lock(2, kCf, "a", X, 0).IsTimedOut());

  ASSERT_TRUE(lm.Lock(1, kCf, "b", S, 0).ok());
  EXPECT_TRUE(lm.Lock(2, kCf, "b", X, 0).IsTimedOut());
  EXPECT_TRUE(lm.Lock(2, kCf, "b", S, 0).ok());

  // The failed requests left nothing behind.
  EXPECT_EQ(lm.NumWaiters(), 0u);
  EXPECT_EQ(lm.LocksHeldBy(2), (std::vector<HeldLock>{{kCf, "b", S}}));
  lm.UnlockAll(1);
  lm.UnlockAll(2);
  ExpectClean(lm);
}

TEST(LockManager, ReacquiringIsANoOp) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  EXPECT_EQ(lm.NumLocks(), 1u);
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());  // sole holder: immediate upgrade
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());  // X covers S
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  EXPECT_EQ(lm.NumLocks(), 1u);
  EXPECT_EQ(lm.LocksHeldBy(1), (std::vector<HeldLock>{{kCf, "a", X}}));
  EXPECT_TRUE(lm.Lock(2, kCf, "a", S, 0).IsTimedOut());
  lm.UnlockAll(1);
  ExpectClean(lm);
}

TEST(LockManager, TimeoutWaitsAboutTheTimeout) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  auto start = std::chrono::steady_clock::now();
  Status s = lm.Lock(2, kCf, "a", X, 20'000);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(s.IsTimedOut()) << s.ToString();
  EXPECT_NE(s.message().find("lock wait timeout"), std::string::npos);
  EXPECT_GE(elapsed, 20ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_EQ(lm.NumWaiters(), 0u);
  EXPECT_EQ(lm.NumTrackedTxns(), 1u);  // txn 2 got nothing and left no state
  lm.UnlockAll(2);
  lm.UnlockAll(1);
  ExpectClean(lm);
}

TEST(LockManager, DefaultTimeoutApplies) {
  LockManager lm;
  lm.SetDefaultTimeout(3'000);
  EXPECT_EQ(lm.default_timeout_micros(), 3'000);
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X).ok());
  EXPECT_TRUE(lm.Lock(2, kCf, "a", S).IsTimedOut());
  lm.UnlockAll(1);
  ExpectClean(lm);
}

TEST(LockManager, WaiterIsGrantedWhenHolderReleases) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  AsyncLock waiter(&lm, 2, "a", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  EXPECT_FALSE(waiter.done());
  lm.UnlockAll(1);
  ASSERT_TRUE(waiter.Join().ok());
  EXPECT_EQ(lm.LocksHeldBy(2), (std::vector<HeldLock>{{kCf, "a", X}}));
  EXPECT_EQ(lm.NumWaiters(), 0u);
  lm.UnlockAll(2);
  ExpectClean(lm);
}

TEST(LockManager, UnlockAllWakesEveryCompatibleWaiter) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  std::vector<std::unique_ptr<AsyncLock>> waiters;
  for (uint64_t t = 2; t <= 5; ++t) waiters.push_back(std::make_unique<AsyncLock>(&lm, t, "a", S, kForever));
  ASSERT_TRUE(Eventually([&] { return lm.NumWaiters() == 4; }));
  lm.UnlockAll(1);
  for (auto& w : waiters) EXPECT_TRUE(w->Join().ok());
  EXPECT_EQ(lm.NumLocks(), 4u);
  for (uint64_t t = 2; t <= 5; ++t) lm.UnlockAll(t);
  ExpectClean(lm);
}

TEST(LockManager, UpgradeWaitsForOtherSharedHoldersAndJumpsTheQueue) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "a", S, 0).ok());
  AsyncLock queued_x(&lm, 3, "a", X, kForever);  // waits for 1 and 2
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(3); }));
  AsyncLock upgrade(&lm, 1, "a", X, kForever);  // waits for 2 only, ahead of 3
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(1); }));
  lm.UnlockAll(2);
  ASSERT_TRUE(upgrade.Join().ok());
  EXPECT_EQ(lm.LocksHeldBy(1), (std::vector<HeldLock>{{kCf, "a", X}}));
  EXPECT_EQ(lm.NumLocks(), 1u);
  EXPECT_FALSE(queued_x.done());
  lm.UnlockAll(1);
  ASSERT_TRUE(queued_x.Join().ok());
  lm.UnlockAll(3);
  ExpectClean(lm);
}

TEST(LockManager, UpgradeTimeoutKeepsTheSharedLock) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "a", S, 0).ok());
  EXPECT_TRUE(lm.Lock(1, kCf, "a", X, 0).IsTimedOut());
  EXPECT_TRUE(lm.Lock(1, kCf, "a", X, 5'000).IsTimedOut());
  EXPECT_EQ(lm.LocksHeldBy(1), (std::vector<HeldLock>{{kCf, "a", S}}));
  EXPECT_EQ(lm.NumWaiters(), 0u);
  lm.UnlockAll(2);
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  lm.UnlockAll(1);
  ExpectClean(lm);
}

TEST(LockManager, TwoUpgradersDeadlock) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "a", S, 0).ok());
  AsyncLock first(&lm, 1, "a", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(1); }));
  Status s = lm.Lock(2, kCf, "a", X, kForever);
  EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
  EXPECT_TRUE(lm.IsWaiting(1));
  lm.UnlockAll(2);  // the victim rolls back
  ASSERT_TRUE(first.Join().ok());
  EXPECT_EQ(lm.LocksHeldBy(1), (std::vector<HeldLock>{{kCf, "a", X}}));
  lm.UnlockAll(1);
  ExpectClean(lm);
}

TEST(LockManager, QueuedExclusiveIsNotStarvedBySharedRequests) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  AsyncLock writer(&lm, 2, "a", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  // S is compatible with the holder, but queues behind the waiting writer.
  EXPECT_TRUE(lm.Lock(3, kCf, "a", S, 0).IsTimedOut());
  AsyncLock reader(&lm, 3, "a", S, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(3); }));
  lm.UnlockAll(1);
  ASSERT_TRUE(writer.Join().ok());
  EXPECT_FALSE(reader.done());
  EXPECT_TRUE(lm.IsWaiting(3));
  lm.UnlockAll(2);
  ASSERT_TRUE(reader.Join().ok());
  lm.UnlockAll(3);
  ExpectClean(lm);
}

TEST(LockManager, TimedOutHeadOfQueueUnblocksThoseBehindIt) {
  // The reader must queue behind the writer before the writer's timeout expires; on a
  // loaded machine that may take a while, so the scenario is retried with longer timeouts.
  bool exercised = false;
  for (int64_t timeout = 50'000; !exercised && timeout <= 3'200'000; timeout *= 2) {
    LockManager lm;
    ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
    AsyncLock writer(&lm, 2, "a", X, timeout);
    ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2) || writer.done(); }));
    AsyncLock reader(&lm, 3, "a", S, kForever);
    // With only S holders, the reader waits only if the writer is queued ahead of it.
    ASSERT_TRUE(Eventually([&] { return (exercised = lm.IsWaiting(3)) || reader.done(); }));
    EXPECT_TRUE(writer.Join().IsTimedOut());
    ASSERT_TRUE(reader.Join().ok());  // granted alongside holder 1
    EXPECT_EQ(lm.NumLocks(), 2u);
    lm.UnlockAll(1);
    lm.UnlockAll(2);
    lm.UnlockAll(3);
    ExpectClean(lm);
  }
  EXPECT_TRUE(exercised);
}

TEST(LockManager, AnyByteStringIsALockableKey) {
  LockManager lm;
  const std::string keys[] = {"", std::string("\0", 1), std::string("\xff\x00z", 3), std::string(10000, 'k')};
  for (const std::string& k : keys) ASSERT_TRUE(lm.Lock(1, kCf, k, X, 0).ok());
  for (const std::string& k : keys) EXPECT_TRUE(lm.Lock(2, kCf, k, S, 0).IsTimedOut());
  // "\0" and "" are different keys, and the same key in another column family is a
  // different lock.
  EXPECT_EQ(lm.NumLocks(), 4u);
  for (const std::string& k : keys) ASSERT_TRUE(lm.Lock(2, kCf + 1, k, X, 0).ok());
  auto held = lm.LocksHeldBy(1);
  ASSERT_EQ(held.size(), 4u);
  EXPECT_EQ(held[0].key, "");
  EXPECT_EQ(held[1].key, std::string("\0", 1));
  lm.UnlockAll(1);
  lm.UnlockAll(2);
  ExpectClean(lm);
}

TEST(LockManager, UnlockReleasesOneKey) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  ASSERT_TRUE(lm.Lock(1, kCf, "b", X, 0).ok());
  AsyncLock waiter(&lm, 2, "a", S, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  lm.Unlock(1, kCf, "a");
  ASSERT_TRUE(waiter.Join().ok());
  EXPECT_EQ(lm.LocksHeldBy(1), (std::vector<HeldLock>{{kCf, "b", X}}));
  lm.Unlock(1, kCf, "nothing");  // not held: no-op
  lm.Unlock(3, kCf, "b");        // not the holder: no-op
  EXPECT_EQ(lm.NumLocks(), 2u);
  lm.Unlock(1, kCf, "b");
  lm.Unlock(2, kCf, "a");
  ExpectClean(lm);
}

TEST(LockManager, UnlockAllOfUnknownTransactionIsHarmless) {
  LockManager lm;
  lm.UnlockAll(42);
  EXPECT_TRUE(lm.LocksHeldBy(42).empty());
  ExpectClean(lm);
}

TEST(LockManager, TwoTransactionDeadlockHasOneVictim) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "b", X, 0).ok());
  AsyncLock t1(&lm, 1, "b", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(1); }));
  Status s = lm.Lock(2, kCf, "a", S, kForever);
  EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
  EXPECT_TRUE(lm.IsWaiting(1));
  EXPECT_FALSE(lm.IsWaiting(2));
  lm.UnlockAll(2);
  ASSERT_TRUE(t1.Join().ok());
  lm.UnlockAll(1);
  ExpectClean(lm);
}

TEST(LockManager, ThreeTransactionDeadlockHasOneVictim) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "b", X, 0).ok());
  ASSERT_TRUE(lm.Lock(3, kCf, "c", X, 0).ok());
  AsyncLock t1(&lm, 1, "b", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(1); }));
  AsyncLock t2(&lm, 2, "c", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  Status s = lm.Lock(3, kCf, "a", X, kForever);
  EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
  EXPECT_TRUE(lm.IsWaiting(1));
  EXPECT_TRUE(lm.IsWaiting(2));
  lm.UnlockAll(3);
  ASSERT_TRUE(t2.Join().ok());
  EXPECT_FALSE(t1.done());
  lm.UnlockAll(2);
  ASSERT_TRUE(t1.Join().ok());
  lm.UnlockAll(1);
  ExpectClean(lm);
}

// What an uncontended lock costs: a pessimistic transaction holds one per key it writes
// (and an optimistic commit takes one per key), so a 300k-row statement holds 300k. Heap
// bytes per held lock, keys of 24 bytes (4-byte cf id + 20), measured with mallinfo2 (in
// an ASAN build, the sanitizer allocator's count of bytes requested); it was ~970 bytes
// when every entry default-constructed a std::deque waiter queue and the per-transaction
// tracking copied every key.
size_t HeapInUse() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

TEST(LockManager, AnUncontendedLockIsCheap) {
  LockManager lm;
  constexpr int kKeys = 100000;
  std::vector<std::string> keys;
  keys.reserve(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    char k[32];
    std::snprintf(k, sizeof(k), "user-key-%011d", i);
    keys.emplace_back(k);
  }
  const size_t before = HeapInUse();
  for (const std::string& k : keys) ASSERT_TRUE(lm.Lock(1, kCf, k, X, kForever).ok());
  const size_t after = HeapInUse();
  const double per_lock = static_cast<double>(after - before) / kKeys;
  std::printf("heap bytes per held lock: %.0f\n", per_lock);
  EXPECT_EQ(lm.NumLocks(), static_cast<size_t>(kKeys));
  EXPECT_LT(per_lock, 300);
  lm.UnlockAll(1);
  EXPECT_EQ(lm.NumLocks(), 0u);
  EXPECT_EQ(lm.NumTrackedTxns(), 0u);
}

// A request that has to wait names the holders it waits for, once, before it waits; one
// granted at once names nobody.
TEST(LockManager, AWaitNamesTheHoldersItWaitsFor) {
  LockManager lm;
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> reported;  // (waiter, holder)
  auto reporter = [&](uint64_t waiter) {
    return std::function<void(uint64_t)>([&, waiter](uint64_t holder) {
      std::lock_guard<std::mutex> g(mu);
      reported.emplace_back(waiter, holder);
    });
  };
  auto from4 = reporter(4), from5 = reporter(5);
  ASSERT_TRUE(lm.Lock(1, kCf, "k", S, kForever).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "k", S, kForever).ok());
  ASSERT_TRUE(lm.Lock(3, kCf, "other", X, kForever, nullptr, &from4).ok());
  EXPECT_TRUE(reported.empty());
  auto count = [&] {
    std::lock_guard<std::mutex> g(mu);
    return reported.size();
  };
  auto waiter =
      std::async(std::launch::async, [&] { return lm.Lock(4, kCf, "k", X, kForever, nullptr, &from4); });
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(4); }));
  // The report follows the enqueueing, outside the stripe's mutex.
  ASSERT_TRUE(Eventually([&] { return count() == 2; }));
  {
    std::lock_guard<std::mutex> g(mu);
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(reported, (std::vector<std::pair<uint64_t, uint64_t>>{{4, 1}, {4, 2}}));
  }
  lm.UnlockAll(1);
  lm.UnlockAll(2);
  ASSERT_TRUE(waiter.get().ok());
  // A try-lock never waits, so it names nobody.
  EXPECT_TRUE(lm.Lock(5, kCf, "k", X, 0, nullptr, &from5).IsTimedOut());
  {
    std::lock_guard<std::mutex> g(mu);
    EXPECT_EQ(reported.size(), 2u);
    reported.clear();
  }
  // A request queued behind another names that one too (it is granted first), and only
  // once although it keeps waiting.
  auto from6 = reporter(6);
  auto first =
      std::async(std::launch::async, [&] { return lm.Lock(5, kCf, "k", X, kForever, nullptr, &from5); });
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(5); }));
  auto second =
      std::async(std::launch::async, [&] { return lm.Lock(6, kCf, "k", X, kForever, nullptr, &from6); });
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(6); }));
  ASSERT_TRUE(Eventually([&] { return count() == 3; }));
  // Waiting on does not name them again.
  std::this_thread::sleep_for(std::chrono::microseconds(3 * LockManager::kInterruptPollMicros));
  {
    std::lock_guard<std::mutex> g(mu);
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(reported, (std::vector<std::pair<uint64_t, uint64_t>>{{5, 4}, {6, 4}, {6, 5}}));
  }
  lm.UnlockAll(4);
  ASSERT_TRUE(first.get().ok());
  lm.UnlockAll(5);
  ASSERT_TRUE(second.get().ok());
  lm.UnlockAll(6);
  lm.UnlockAll(3);
}

// KILL QUERY: a waiting request whose predicate turns true is withdrawn with Aborted
// within a poll interval, its transaction's other locks kept, and the queue behind it
// moves on; a predicate that stays false changes nothing (the wait still times out).
TEST(LockManager, AnInterruptedWaitIsWithdrawn) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "k", X, kForever).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "mine", X, kForever).ok());
  std::atomic<bool> killed{false};
  std::function<bool()> interrupted = [&] { return killed.load(); };
  auto waiter =
      std::async(std::launch::async, [&] { return lm.Lock(2, kCf, "k", X, kForever, &interrupted); });
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  killed = true;
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  Status s = waiter.get();
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_FALSE(lm.IsWaiting(2));
  EXPECT_EQ(lm.LocksHeldBy(2), (std::vector<HeldLock>{{kCf, "mine", X}}));

  std::function<bool()> never = [] { return false; };
  s = lm.Lock(3, kCf, "k", X, 120'000, &never);  // longer than two poll intervals
  EXPECT_TRUE(s.IsTimedOut()) << s.ToString();
  lm.UnlockAll(1);
  EXPECT_TRUE(lm.Lock(3, kCf, "k", X, 0, &never).ok());
}

// Three transactions close a cycle at the same moment, many times over: exactly one of
// them is the victim each time, and the other two finish once it has rolled back.
TEST(LockManager, ConcurrentCycleHasExactlyOneVictim) {
  for (int round = 0; round < 20; ++round) {
    LockManager lm;
    const std::string keys[] = {"a", "b", "c"};
    for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(lm.Lock(i + 1, kCf, keys[i], X, 0).ok());
    std::atomic<int> ready{0};
    std::atomic<int> victims{0};
    std::vector<std::thread> threads;
    for (uint64_t i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < 3) std::this_thread::yield();
        Status s = lm.Lock(i + 1, kCf, keys[(i + 1) % 3], X, kForever);
        if (s.IsDeadlock()) {
          victims.fetch_add(1);
        } else {
          EXPECT_TRUE(s.ok()) << s.ToString();
        }
        lm.UnlockAll(i + 1);
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(victims.load(), 1) << "round " << round;
    ExpectClean(lm);
  }
}

// T3 asks S on a key whose holder (T1, S) is compatible, but it queues behind T2's X
// request, and T2 waits for T1, which waits for T3: a cycle only through queue order.
TEST(LockManager, DeadlockThroughQueueOrderIsDetected) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", S, 0).ok());
  ASSERT_TRUE(lm.Lock(3, kCf, "b", X, 0).ok());
  AsyncLock t2(&lm, 2, "a", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  AsyncLock t1(&lm, 1, "b", X, kForever);
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(1); }));
  Status s = lm.Lock(3, kCf, "a", S, kForever);
  EXPECT_TRUE(s.IsDeadlock()) << s.ToString();
  lm.UnlockAll(3);
  ASSERT_TRUE(t1.Join().ok());
  lm.UnlockAll(1);
  ASSERT_TRUE(t2.Join().ok());
  lm.UnlockAll(2);
  ExpectClean(lm);
}

TEST(LockManager, WaitChainWithoutCycleIsNotADeadlock) {
  LockManager lm;
  ASSERT_TRUE(lm.Lock(1, kCf, "a", X, 0).ok());
  ASSERT_TRUE(lm.Lock(2, kCf, "b", X, 0).ok());
  AsyncLock t2(&lm, 2, "a", X, kForever);  // 2 -> 1
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(2); }));
  AsyncLock t3(&lm, 3, "b", X, kForever);  // 3 -> 2 -> 1
  ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(3); }));
  lm.UnlockAll(1);
  ASSERT_TRUE(t2.Join().ok());
  lm.UnlockAll(2);
  ASSERT_TRUE(t3.Join().ok());
  lm.UnlockAll(3);
  ExpectClean(lm);
}

TEST(LockManager, OverlongWaitChainIsTreatedAsDeadlock) {
  LockManager::Options options;
  options.max_deadlock_depth = 2;
  LockManager lm(options);
  // Txn i holds key i and waits for key i-1: the chain 4 -> 3 -> 2 -> 1.
  for (uint64_t t = 1; t <= 4; ++t) ASSERT_TRUE(lm.Lock(t, kCf, std::to_string(t), X, 0).ok());
  std::vector<std::unique_ptr<AsyncLock>> chain;
  for (uint64_t t = 2; t <= 3; ++t) {
    chain.push_back(std::make_unique<AsyncLock>(&lm, t, std::to_string(t - 1), X, kForever));
    ASSERT_TRUE(Eventually([&] { return lm.IsWaiting(t); }));
  }
  // 4 -> 3 -> 2 -> 1 is three edges, more than the depth allows.
  EXPECT_TRUE(lm.Lock(4, kCf, "3", X, kForever).IsDeadlock());
  // 5 waits for 1 and for 2 (queued ahead of it), and 2 -> 1: at most two edges, an
  // ordinary wait.
  EXPECT_TRUE(lm.Lock(5, kCf, "1", X, 2'000).IsTimedOut());
  for (uint64_t t = 1; t <= 4; ++t) {
    lm.UnlockAll(t);  // lets t + 1 finish its wait
    if (t <= chain.size()) {
      EXPECT_TRUE(chain[t - 1]->Join().ok());
    }
  }
  ExpectClean(lm);
}

// Eight threads run short transactions over a few keys with random modes, orders and
// timeouts (some infinite, so a missed deadlock would hang the test: a watchdog turns
// that into a failure). Per-key counters check mutual exclusion while locks are held.
TEST(LockManager, StressKeepsExclusionAndNeverHangs) {
  constexpr int kThreads = 8;
  constexpr int kTxnsPerThread = 1000;
  constexpr int kKeys = 6;
  uint64_t seed = std::random_device()();
  if (const char* env = std::getenv("TIDESDB_TEST_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("seed = %llu (set TIDESDB_TEST_SEED to repeat)\n", static_cast<unsigned long long>(seed));

  LockManager lm(LockManager::Options{.num_stripes = 4});
  struct KeyState {
    std::atomic<int> readers{0};
    std::atomic<int> writers{0};
  };
  KeyState state[kKeys];
  std::atomic<uint64_t> next_txn{1};
  std::atomic<int> violations{0}, deadlocks{0}, timeouts{0}, commits{0}, finished{0};

  auto worker = [&](int thread_index) {
    std::mt19937_64 rng(seed + static_cast<uint64_t>(thread_index));
    const int64_t timeouts_micros[] = {0, 500, 3'000, kForever};
    for (int n = 0; n < kTxnsPerThread; ++n) {
      const uint64_t txn = next_txn.fetch_add(1);
      std::map<int, LockMode> held;
      bool aborted = false;
      const int ops = 1 + static_cast<int>(rng() % 4);
      for (int op = 0; op < ops && !aborted; ++op) {
        const int k = static_cast<int>(rng() % kKeys);
        const LockMode mode = rng() % 5 < 2 ? X : S;
        const int64_t timeout = timeouts_micros[rng() % 4];
        Status s = lm.Lock(txn, kCf, "key" + std::to_string(k), mode, timeout);
        if (!s.ok()) {
          if (s.IsDeadlock()) {
            deadlocks.fetch_add(1);
          } else if (s.IsTimedOut()) {
            timeouts.fetch_add(1);
          } else {
            violations.fetch_add(1);
          }
          aborted = true;
          break;
        }
        auto it = held.find(k);
        if (it == held.end()) {
          held[k] = mode;
          if (mode == X) {
            if (state[k].writers.fetch_add(1) != 0 || state[k].readers.load() != 0) violations.fetch_add(1);
          } else {
            state[k].readers.fetch_add(1);
            if (state[k].writers.load() != 0) violations.fetch_add(1);
          }
        } else if (it->second == S && mode == X) {
          it->second = X;
          state[k].readers.fetch_sub(1);
          if (state[k].writers.fetch_add(1) != 0 || state[k].readers.load() != 0) violations.fetch_add(1);
        }
        if (rng() % 4 == 0) std::this_thread::yield();
      }
      for (const auto& [k, mode] : held) {
        if (mode == X) {
          state[k].writers.fetch_sub(1);
        } else {
          state[k].readers.fetch_sub(1);
        }
      }
      lm.UnlockAll(txn);
      if (!aborted) commits.fetch_add(1);
    }
    finished.fetch_add(1);
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (finished.load() < kThreads) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "stress test hung (seed %llu): %zu waiters\n",
                   static_cast<unsigned long long>(seed), lm.NumWaiters());
      std::abort();  // the hung threads cannot be joined
    }
    std::this_thread::sleep_for(1ms);
  }
  for (auto& t : threads) t.join();
  std::printf("commits %d, deadlocks %d, timeouts %d\n", commits.load(), deadlocks.load(), timeouts.load());
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(commits.load() + deadlocks.load() + timeouts.load(), kThreads * kTxnsPerThread);
  EXPECT_GT(commits.load(), 0);
  ExpectClean(lm);
}

}  // namespace
}  // namespace tidesdb
