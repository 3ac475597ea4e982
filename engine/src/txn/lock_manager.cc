#include "txn/lock_manager.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <unordered_set>
#include <utility>

#include "util/coding.h"

namespace tidesdb {

namespace {

constexpr size_t kNumTxnShards = 16;

// Timeouts beyond this are treated as "wait forever", so that now + timeout cannot
// overflow the clock's representation.
constexpr int64_t kMaxFiniteTimeoutMicros = int64_t{100} * 365 * 24 * 3600 * 1'000'000;

bool Compatible(LockMode a, LockMode b) { return a == LockMode::kShared && b == LockMode::kShared; }

// True if holding `held` already satisfies a request for `wanted`.
bool Covers(LockMode held, LockMode wanted) {
  return held == LockMode::kExclusive || wanted == LockMode::kShared;
}

size_t RoundUpToPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

// A request waiting in a key's queue. Lives on the waiting thread's stack; the queue holds
// a pointer to it until the request is granted or withdrawn, both under the stripe mutex.
struct LockManager::Waiter {
  Waiter(uint64_t txn, LockMode m, bool up) : txn_id(txn), mode(m), upgrade(up) {}

  uint64_t txn_id;
  LockMode mode;  // kExclusive for an upgrade
  bool upgrade;   // txn_id already holds the key in S
  bool granted = false;
  std::condition_variable cv;  // waits on the stripe mutex
};

struct LockManager::LockEntry {
  struct Holder {
    uint64_t txn_id;
    LockMode mode;
  };
  std::vector<Holder> holders;
  // Upgrades first (contiguously), then ordinary requests in arrival order. Invariant when
  // the stripe mutex is free: if the queue is not empty, its front is blocked by a holder.
  // A vector: it allocates nothing until someone waits (a default std::deque allocates
  // ~576 bytes at once), and queues are a handful of requests long.
  std::vector<Waiter*> queue;

  Holder* FindHolder(uint64_t txn_id) {
    for (Holder& h : holders) {
      if (h.txn_id == txn_id) return &h;
    }
    return nullptr;
  }
  const Holder* FindHolder(uint64_t txn_id) const { return const_cast<LockEntry*>(this)->FindHolder(txn_id); }
};

struct alignas(64) LockManager::Stripe {
  std::mutex mu;
  std::unordered_map<std::string, LockEntry> entries;  // lock key -> state; erased when unused
};

// Which locks each transaction holds, so UnlockAll need not scan the lock table: each
// one as a pointer to the lock key inside its stripe's map node, which stays put (node
// addresses survive rehashing) as long as the transaction holds the lock, so no key is
// copied twice. A key appears once per transaction: it is tracked when the transaction
// first becomes a holder, not on re-acquires or upgrades.
struct alignas(64) LockManager::TxnShard {
  mutable std::mutex mu;
  std::unordered_map<uint64_t, std::vector<const std::string*>> txns;
};

LockManager::LockManager(const Options& options)
    : stripe_mask_(RoundUpToPowerOfTwo(std::max<size_t>(options.num_stripes, 1)) - 1),
      max_deadlock_depth_(std::max(options.max_deadlock_depth, 1)),
      default_timeout_micros_(options.default_timeout_micros),
      stripes_(new Stripe[stripe_mask_ + 1]),
      txn_shards_(new TxnShard[kNumTxnShards]) {}

LockManager::~LockManager() = default;

std::string LockManager::MakeLockKey(uint32_t cf_id, Slice key) {
  std::string k(4 + key.size(), '\0');
  EncodeFixed32(k.data(), cf_id);
  std::memcpy(k.data() + 4, key.data(), key.size());
  return k;
}

LockManager::Stripe& LockManager::StripeFor(const std::string& lock_key) const {
  return stripes_[std::hash<std::string>()(lock_key) & stripe_mask_];
}

LockManager::TxnShard& LockManager::TxnShardFor(uint64_t txn_id) const {
  return txn_shards_[std::hash<uint64_t>()(txn_id) % kNumTxnShards];
}

void LockManager::Track(uint64_t txn_id, const std::string* lock_key) {
  TxnShard& shard = TxnShardFor(txn_id);
  std::lock_guard<std::mutex> g(shard.mu);
  shard.txns[txn_id].push_back(lock_key);
}

bool LockManager::CompatibleWithHolders(const LockEntry& entry, uint64_t txn_id, LockMode mode) {
  for (const LockEntry::Holder& h : entry.holders) {
    if (h.txn_id != txn_id && !Compatible(h.mode, mode)) return false;
  }
  return true;
}

void LockManager::BlockersOf(const LockEntry& entry, uint64_t txn_id, LockMode mode, size_t queue_pos,
                             std::vector<uint64_t>* out) {
  out->clear();
  for (const LockEntry::Holder& h : entry.holders) {
    if (h.txn_id != txn_id && !Compatible(h.mode, mode)) out->push_back(h.txn_id);
  }
  // A request also waits for every incompatible request queued ahead of it: FIFO order
  // grants those first. (A compatible one ahead is granted no later than this one.)
  for (size_t i = 0; i < queue_pos && i < entry.queue.size(); ++i) {
    const Waiter* w = entry.queue[i];
    if (w->txn_id != txn_id && !Compatible(w->mode, mode)) out->push_back(w->txn_id);
  }
}

void LockManager::GrantWaiters(LockEntry* entry, std::vector<uint64_t>* departed) {
  while (!entry->queue.empty()) {
    Waiter* w = entry->queue.front();
    if (!CompatibleWithHolders(*entry, w->txn_id, w->mode)) break;  // strict FIFO
    if (w->upgrade) {
      entry->FindHolder(w->txn_id)->mode = LockMode::kExclusive;
    } else {
      entry->holders.push_back({w->txn_id, w->mode});
      num_locks_.fetch_add(1, std::memory_order_relaxed);
    }
    entry->queue.erase(entry->queue.begin());
    w->granted = true;
    // Notified under the stripe mutex: the waiter cannot leave (and destroy w) before it
    // reacquires that mutex.
    w->cv.notify_one();
    departed->push_back(w->txn_id);
  }
}

void LockManager::RecomputeEdgesLocked(const LockEntry& entry) {
  for (size_t i = 0; i < entry.queue.size(); ++i) {
    const Waiter* w = entry.queue[i];
    BlockersOf(entry, w->txn_id, w->mode, i, &waits_for_[w->txn_id]);
  }
}

void LockManager::RefreshWaitGraph(const LockEntry& entry, const std::vector<uint64_t>& departed) {
  if (departed.empty() && entry.queue.empty()) return;
  std::lock_guard<std::mutex> g(graph_mu_);
  for (uint64_t t : departed) waits_for_.erase(t);
  RecomputeEdgesLocked(entry);
}

bool LockManager::ReachesItself(uint64_t txn_id) const {
  auto start = waits_for_.find(txn_id);
  if (start == waits_for_.end()) return false;
  // Iterative DFS; depth = number of edges from txn_id. A visited node has been explored
  // completely (or the search already returned), so it never needs a second visit.
  std::vector<std::pair<uint64_t, int>> stack;
  std::unordered_set<uint64_t> visited;
  for (uint64_t next : start->second) stack.emplace_back(next, 1);
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (node == txn_id) return true;
    if (depth > max_deadlock_depth_) return true;  // too deep to tell: assume a cycle
    if (!visited.insert(node).second) continue;
    auto it = waits_for_.find(node);
    if (it == waits_for_.end()) continue;  // not waiting: the path ends here
    for (uint64_t next : it->second) stack.emplace_back(next, depth + 1);
  }
  return false;
}

Status LockManager::Lock(uint64_t txn_id, uint32_t cf_id, Slice key, LockMode mode, int64_t timeout_micros,
                         const std::function<bool()>* interrupted,
                         const std::function<void(uint64_t holder)>* waiting_for) {
  const std::string lock_key = MakeLockKey(cf_id, key);
  Stripe& stripe = StripeFor(lock_key);
  std::unique_lock<std::mutex> l(stripe.mu);
  auto [slot, inserted] = stripe.entries.try_emplace(lock_key);
  const std::string* const stored_key = &slot->first;
  LockEntry& entry = slot->second;
  LockEntry::Holder* own = entry.FindHolder(txn_id);
  if (own != nullptr && Covers(own->mode, mode)) return Status::OK();
  const bool upgrade = own != nullptr;

  // Grant at once: an upgrade needs only compatibility (it would go to the front of the
  // queue anyway); an ordinary request also needs an empty queue, for fairness.
  if (CompatibleWithHolders(entry, txn_id, mode) && (upgrade || entry.queue.empty())) {
    if (upgrade) {
      own->mode = LockMode::kExclusive;
      // Queued requests now wait for this exclusive holder.
      RefreshWaitGraph(entry, {});
      return Status::OK();  // already tracked
    }
    entry.holders.push_back({txn_id, mode});
    num_locks_.fetch_add(1, std::memory_order_relaxed);
    l.unlock();
    Track(txn_id, stored_key);
    return Status::OK();
  }
  // Not grantable now, so the entry has holders (it is not a fresh, empty one).

  if (timeout_micros == 0) return Status::TimedOut("lock wait timeout exceeded (try-lock)");

  Waiter w(txn_id, mode, upgrade);
  size_t pos = entry.queue.size();
  if (upgrade) {
    pos = 0;
    while (pos < entry.queue.size() && entry.queue[pos]->upgrade) ++pos;
  }
  entry.queue.insert(entry.queue.begin() + static_cast<std::ptrdiff_t>(pos), &w);
  {
    // Publishing this request's edges and searching for a cycle happen in one critical
    // section, so of several requests that close a cycle together exactly one (the last
    // to get here) sees it.
    std::lock_guard<std::mutex> g(graph_mu_);
    RecomputeEdgesLocked(entry);
    if (ReachesItself(txn_id)) {
      entry.queue.erase(entry.queue.begin() + static_cast<std::ptrdiff_t>(pos));
      waits_for_.erase(txn_id);
      RecomputeEdgesLocked(entry);
      return Status::Deadlock("deadlock detected; this transaction was chosen as the victim");
    }
  }

  // Whom the request waits for: the holders and the requests queued ahead of it (granted
  // first). Each is told to waiting_for once, when it first blocks the request, outside
  // the stripe's mutex (the callback may take the caller's own locks; a SQL server
  // resolves commit-order deadlocks of parallel replication with it). A grant meanwhile is
  // seen by the loop below.
  const bool reports = waiting_for != nullptr && *waiting_for;
  std::vector<uint64_t> reported;
  auto report_new_blockers = [&] {
    std::vector<uint64_t> fresh;
    auto note = [&](uint64_t id) {
      if (id != txn_id && std::find(reported.begin(), reported.end(), id) == reported.end() &&
          std::find(fresh.begin(), fresh.end(), id) == fresh.end()) {
        fresh.push_back(id);
      }
    };
    for (const LockEntry::Holder& h : entry.holders) note(h.txn_id);
    for (const Waiter* q : entry.queue) {
      if (q == &w) break;
      note(q->txn_id);
    }
    if (fresh.empty()) return;
    reported.insert(reported.end(), fresh.begin(), fresh.end());
    l.unlock();
    for (uint64_t id : fresh) (*waiting_for)(id);
    l.lock();
  };
  if (reports) report_new_blockers();

  const bool forever = timeout_micros < 0 || timeout_micros > kMaxFiniteTimeoutMicros;
  // Polled: to ask `interrupted`, and to report blockers that arrive while it waits.
  const bool pollable = (interrupted != nullptr && *interrupted) || reports;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(forever ? 0 : timeout_micros);
  bool was_interrupted = false;
  while (!w.granted) {
    if (pollable) {
      // Wake up now and then to ask whether the caller gave up (e.g. KILL QUERY).
      auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kInterruptPollMicros);
      if (!forever && deadline < until) until = deadline;
      w.cv.wait_until(l, until);
      if (w.granted) break;
      if (!forever && std::chrono::steady_clock::now() >= deadline) break;
      if (reports) {
        report_new_blockers();
        if (w.granted) break;
      }
      if (interrupted != nullptr && *interrupted) {
        l.unlock();
        was_interrupted = (*interrupted)();
        l.lock();
        if (was_interrupted && !w.granted) break;
      }
    } else if (forever) {
      w.cv.wait(l);
    } else if (w.cv.wait_until(l, deadline) == std::cv_status::timeout) {
      break;
    }
  }

  if (!w.granted) {
    // Timed out or interrupted: withdraw. Requests behind this one may have been blocked
    // only by it.
    entry.queue.erase(std::find(entry.queue.begin(), entry.queue.end(), &w));
    std::vector<uint64_t> departed{txn_id};
    GrantWaiters(&entry, &departed);
    RefreshWaitGraph(entry, departed);
    if (entry.holders.empty() && entry.queue.empty()) stripe.entries.erase(lock_key);
    if (was_interrupted) return Status::Aborted("lock wait interrupted");
    return Status::TimedOut("lock wait timeout exceeded");
  }
  // The granter has already updated the holders, the lock count and the wait graph.
  l.unlock();
  if (!upgrade) Track(txn_id, stored_key);
  return Status::OK();
}

bool LockManager::ReleaseLocked(Stripe* stripe, uint64_t txn_id, const std::string& lock_key) {
  auto it = stripe->entries.find(lock_key);
  if (it == stripe->entries.end()) return false;
  LockEntry& entry = it->second;
  auto h = std::find_if(entry.holders.begin(), entry.holders.end(),
                        [txn_id](const LockEntry::Holder& x) { return x.txn_id == txn_id; });
  if (h == entry.holders.end()) return false;
  entry.holders.erase(h);
  num_locks_.fetch_sub(1, std::memory_order_relaxed);
  std::vector<uint64_t> departed;
  GrantWaiters(&entry, &departed);
  RefreshWaitGraph(entry, departed);
  if (entry.holders.empty() && entry.queue.empty()) stripe->entries.erase(it);
  return true;
}

void LockManager::Unlock(uint64_t txn_id, uint32_t cf_id, Slice key) {
  const std::string lock_key = MakeLockKey(cf_id, key);
  {
    TxnShard& shard = TxnShardFor(txn_id);
    std::lock_guard<std::mutex> g(shard.mu);
    auto it = shard.txns.find(txn_id);
    if (it == shard.txns.end()) return;
    auto held = std::find_if(it->second.begin(), it->second.end(),
                             [&](const std::string* k) { return *k == lock_key; });
    if (held == it->second.end()) return;
    it->second.erase(held);
    if (it->second.empty()) shard.txns.erase(it);
  }
  Stripe& stripe = StripeFor(lock_key);
  std::lock_guard<std::mutex> g(stripe.mu);
  ReleaseLocked(&stripe, txn_id, lock_key);
}

void LockManager::UnlockAll(uint64_t txn_id) {
  std::vector<const std::string*> held;
  {
    TxnShard& shard = TxnShardFor(txn_id);
    std::lock_guard<std::mutex> g(shard.mu);
    auto it = shard.txns.find(txn_id);
    if (it == shard.txns.end()) return;
    held = std::move(it->second);
    shard.txns.erase(it);
  }
  // Group the keys by stripe so each stripe mutex is taken once. Reading a key outside its
  // stripe mutex is safe: its entry stays until this transaction releases it.
  std::vector<std::pair<Stripe*, const std::string*>> keys;
  keys.reserve(held.size());
  for (const std::string* lock_key : held) keys.emplace_back(&StripeFor(*lock_key), lock_key);
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < keys.size();) {
    Stripe* stripe = keys[i].first;
    std::lock_guard<std::mutex> g(stripe->mu);
    // ReleaseLocked may erase the entry, and with it the key it was given: nothing reads
    // that key afterwards.
    for (; i < keys.size() && keys[i].first == stripe; ++i) ReleaseLocked(stripe, txn_id, *keys[i].second);
  }
}

size_t LockManager::NumWaiters() const {
  std::lock_guard<std::mutex> g(graph_mu_);
  return waits_for_.size();
}

bool LockManager::IsWaiting(uint64_t txn_id) const {
  std::lock_guard<std::mutex> g(graph_mu_);
  return waits_for_.count(txn_id) != 0;
}

size_t LockManager::NumTrackedTxns() const {
  size_t n = 0;
  for (size_t i = 0; i < kNumTxnShards; ++i) {
    std::lock_guard<std::mutex> g(txn_shards_[i].mu);
    n += txn_shards_[i].txns.size();
  }
  return n;
}

std::vector<LockStatus> LockManager::AllLocks() const {
  std::vector<LockStatus> result;
  for (size_t i = 0; i <= stripe_mask_; ++i) {
    Stripe& stripe = stripes_[i];
    std::lock_guard<std::mutex> g(stripe.mu);
    for (const auto& [lock_key, entry] : stripe.entries) {
      const uint32_t cf_id = DecodeFixed32(lock_key.data());
      for (const LockEntry::Holder& h : entry.holders) {
        result.push_back({h.txn_id, cf_id, lock_key.substr(4), h.mode == LockMode::kExclusive, true});
      }
      for (const Waiter* w : entry.queue) {
        result.push_back({w->txn_id, cf_id, lock_key.substr(4), w->mode == LockMode::kExclusive, false});
      }
    }
  }
  // Stable: holders stay before waiters, and the queue in its order.
  std::stable_sort(result.begin(), result.end(), [](const LockStatus& a, const LockStatus& b) {
    return a.cf_id != b.cf_id ? a.cf_id < b.cf_id : a.key < b.key;
  });
  return result;
}

std::vector<uint64_t> LockManager::OthersOn(uint64_t txn_id, uint32_t cf_id, Slice key) const {
  const std::string lock_key = MakeLockKey(cf_id, key);
  Stripe& stripe = StripeFor(lock_key);
  std::lock_guard<std::mutex> g(stripe.mu);
  std::vector<uint64_t> result;
  auto it = stripe.entries.find(lock_key);
  if (it == stripe.entries.end()) return result;
  for (const LockEntry::Holder& h : it->second.holders) {
    if (h.txn_id != txn_id) result.push_back(h.txn_id);
  }
  for (const Waiter* w : it->second.queue) {
    if (w->txn_id != txn_id) result.push_back(w->txn_id);
  }
  return result;
}

std::vector<HeldLock> LockManager::LocksHeldBy(uint64_t txn_id) const {
  std::vector<std::string> keys;
  {
    TxnShard& shard = TxnShardFor(txn_id);
    std::lock_guard<std::mutex> g(shard.mu);
    auto it = shard.txns.find(txn_id);
    if (it == shard.txns.end()) return {};
    for (const std::string* lock_key : it->second) keys.push_back(*lock_key);
  }
  std::vector<HeldLock> result;
  for (const std::string& lock_key : keys) {
    Stripe& stripe = StripeFor(lock_key);
    std::lock_guard<std::mutex> g(stripe.mu);
    auto it = stripe.entries.find(lock_key);
    if (it == stripe.entries.end()) continue;
    if (const LockEntry::Holder* h = it->second.FindHolder(txn_id)) {
      result.push_back({DecodeFixed32(lock_key.data()), lock_key.substr(4), h->mode});
    }
  }
  std::sort(result.begin(), result.end(), [](const HeldLock& a, const HeldLock& b) {
    return a.cf_id != b.cf_id ? a.cf_id < b.cf_id : a.key < b.key;
  });
  return result;
}

}  // namespace tidesdb
