// LockManager: row locks for pessimistic transactions.
//
// A lock names (column family id, key) where the key is any byte string. The manager knows
// nothing about data: a key need not exist in the database, which is how a transaction
// locks the row it is about to insert.
//
// Modes: shared (S) and exclusive (X). S is compatible with S only.
//   * Re-acquiring a held lock is a no-op, and so is asking S while holding X.
//   * Asking X while holding S is an upgrade: it waits until every other S holder has left.
//     An upgrade waits ahead of ordinary waiters (they would otherwise wait for the
//     upgrader's S lock while the upgrader waits for them).
//
// Fairness: each key has a FIFO queue of waiters. A new request is granted at once only if
// it is compatible with the holders and nobody is queued; the queue is granted front to
// back, stopping at the first request that is still blocked. So a stream of S requests
// cannot starve a queued X request.
//
// Deadlocks: before a request starts to wait, the manager searches the wait-for graph
// (waiter -> the holders and queued requests it waits for) depth-first from the requester.
// If the search gets back to the requester, waiting would close a cycle and the request
// fails with Status::Deadlock: the victim is always the requester that would close the
// cycle; transactions already waiting keep waiting and proceed once the victim releases
// its locks. A search path longer than Options::max_deadlock_depth is reported as a
// deadlock too: a false victim costs a retry, a missed deadlock would cost a hang.
// Lock() does not release the victim's other locks; the caller rolls the transaction back
// (UnlockAll).
//
// Timeouts: timeout_micros > 0 waits at most that long, then Status::TimedOut; 0 is a
// try-lock (TimedOut at once if the lock cannot be granted now; no deadlock search, since
// nothing waits); negative (or over 100 years) waits with no limit, still deadlock-checked.
// A wait can also be interrupted by the caller's predicate (Status::Aborted).
//
// Threading: all methods are thread-safe. Calls for one txn_id must not run concurrently
// (a transaction is used by one thread at a time); in particular UnlockAll(t) must not
// race with a Lock(t, ...) that is waiting.
//
// Internal locking order (no thread ever takes these in another order):
//   stripe mutex  ->  wait-graph mutex
// A thread holds at most one stripe mutex at a time. The per-transaction tracking mutexes
// are leaves: nothing else is taken while one is held. The wait-graph mutex is taken only
// when a request must wait, or when a key that has waiters changes state.
//
// Cost: a key's holders are a small vector and its waiters' graph edges are recomputed
// whenever that key changes while it has waiters, O(waiters * (holders + waiters)); cheap
// for row locks, where a key rarely has more than a handful of either.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "tidesdb/transaction.h"

namespace tidesdb {

enum class LockMode : uint8_t { kShared, kExclusive };

// One lock a transaction holds (LocksHeldBy).
struct HeldLock {
  uint32_t cf_id = 0;
  std::string key;
  LockMode mode = LockMode::kShared;

  bool operator==(const HeldLock&) const = default;
};

class LockManager {
 public:
  struct Options {
    // Number of lock-table stripes, each with its own mutex; rounded up to a power of two.
    size_t num_stripes = 64;
    // Timeout used by the Lock() overload without one (InnoDB's innodb_lock_wait_timeout).
    int64_t default_timeout_micros = 50'000'000;
    // Longest wait-for path the deadlock search follows before declaring a deadlock.
    int max_deadlock_depth = 64;
  };

  LockManager() : LockManager(Options()) {}
  explicit LockManager(const Options& options);
  ~LockManager();  // requires: no thread is inside Lock()

  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  // Acquires (cf_id, key) in `mode` for txn_id, waiting as described above.
  // OK: granted (or already held in a sufficient mode). TimedOut: not granted within the
  // timeout; the transaction's other locks are untouched. Deadlock: waiting would close a
  // cycle; nothing changed.
  // `interrupted` (may be null or empty) is polled every kInterruptPollMicros while the
  // request waits; true withdraws it with Status::Aborted. `waiting_for` (may be null or
  // empty) is called, with no lock held, once for each transaction the request waits for
  // (a holder of the key, or a request queued ahead of it): when it starts to wait, and,
  // for blockers that arrive later, within kInterruptPollMicros.
  Status Lock(uint64_t txn_id, uint32_t cf_id, Slice key, LockMode mode, int64_t timeout_micros,
              const std::function<bool()>* interrupted = nullptr,
              const std::function<void(uint64_t holder)>* waiting_for = nullptr);
  static constexpr int64_t kInterruptPollMicros = 50'000;
  Status Lock(uint64_t txn_id, uint32_t cf_id, Slice key, LockMode mode) {
    return Lock(txn_id, cf_id, key, mode, default_timeout_micros());
  }

  // Releases one lock (any mode) of txn_id; a no-op if it holds none on that key.
  void Unlock(uint64_t txn_id, uint32_t cf_id, Slice key);
  // Releases every lock of txn_id and forgets the transaction; waiters that can now be
  // granted are woken. A no-op for a transaction that holds nothing.
  void UnlockAll(uint64_t txn_id);

  void SetDefaultTimeout(int64_t timeout_micros) {
    default_timeout_micros_.store(timeout_micros, std::memory_order_relaxed);
  }
  int64_t default_timeout_micros() const { return default_timeout_micros_.load(std::memory_order_relaxed); }

  // Number of granted (transaction, key) pairs.
  size_t NumLocks() const { return num_locks_.load(std::memory_order_relaxed); }
  // Number of requests currently waiting.
  size_t NumWaiters() const;
  // Number of transactions the manager keeps state for (those holding at least one lock).
  size_t NumTrackedTxns() const;
  // The locks txn_id holds, sorted by (cf_id, key). For tests and diagnostics.
  std::vector<HeldLock> LocksHeldBy(uint64_t txn_id) const;
  // True while txn_id has a request waiting. For tests and diagnostics.
  bool IsWaiting(uint64_t txn_id) const;
  // Every granted lock and waiting request, sorted by (cf_id, key), holders first, then
  // the queue in order. Each stripe is read under its mutex (a moment per stripe).
  std::vector<LockStatus> AllLocks() const;
  // The transactions other than txn_id that hold (cf_id, key) or wait for it (diagnostics:
  // who a failed request was up against).
  std::vector<uint64_t> OthersOn(uint64_t txn_id, uint32_t cf_id, Slice key) const;

 private:
  struct Waiter;
  struct LockEntry;
  struct Stripe;
  struct TxnShard;

  // Lock-table key: fixed32 cf_id followed by the user key.
  static std::string MakeLockKey(uint32_t cf_id, Slice key);
  Stripe& StripeFor(const std::string& lock_key) const;
  TxnShard& TxnShardFor(uint64_t txn_id) const;

  // Records in the per-transaction tracking that txn_id has become a holder of the lock
  // whose key (inside its stripe's map) is *lock_key.
  void Track(uint64_t txn_id, const std::string* lock_key);

  // The transactions a request of (txn_id, mode) waits for if it is (or would be) at
  // position queue_pos of entry's queue.
  static void BlockersOf(const LockEntry& entry, uint64_t txn_id, LockMode mode, size_t queue_pos,
                         std::vector<uint64_t>* out);
  // True if a request of (txn_id, mode) is compatible with every other holder of entry.
  static bool CompatibleWithHolders(const LockEntry& entry, uint64_t txn_id, LockMode mode);
  // Grants queued requests front to back while possible, waking them. Appends the granted
  // transactions to *departed. Requires the stripe mutex.
  void GrantWaiters(LockEntry* entry, std::vector<uint64_t>* departed);
  // Makes the wait graph exact again for entry after its holders or queue changed: forgets
  // the `departed` transactions (no longer waiting), recomputes the edges of every request
  // still queued. Requires the stripe mutex; takes the graph mutex.
  void RefreshWaitGraph(const LockEntry& entry, const std::vector<uint64_t>& departed);
  // Sets the graph edges of every request queued on entry. Requires both mutexes.
  void RecomputeEdgesLocked(const LockEntry& entry);
  // Releases txn_id's lock on lock_key; erases the entry once unused. Requires the stripe
  // mutex. False if txn_id held no lock there.
  bool ReleaseLocked(Stripe* stripe, uint64_t txn_id, const std::string& lock_key);
  // True if txn_id, whose edges are already in the graph, can reach itself (or the search
  // exceeds max_deadlock_depth_). Requires the graph mutex.
  bool ReachesItself(uint64_t txn_id) const;

  const size_t stripe_mask_;
  const int max_deadlock_depth_;
  std::atomic<int64_t> default_timeout_micros_;
  std::atomic<size_t> num_locks_{0};
  std::unique_ptr<Stripe[]> stripes_;
  std::unique_ptr<TxnShard[]> txn_shards_;

  // The wait-for graph: waiting transaction -> the transactions it waits for. Only
  // transactions with a queued request appear as keys.
  mutable std::mutex graph_mu_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> waits_for_;
};

}  // namespace tidesdb
