#include "workload.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "histogram.h"
#include "keys.h"
#include "process.h"

namespace kvbench {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t NanosSince(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

// Random-stream ids, so that each phase draws its own independent, reproducible stream.
enum Stream : uint64_t {
  kStreamFillRandom = 1,
  kStreamOverwrite = 2,
  kStreamRead = 3,
  kStreamSeek = 4,
  kStreamBackgroundWriter = 5,
  kStreamDeleteChoice = 6,
  kStreamDeleteOrder = 7,
  kStreamTxn = 8,
};

// The transaction workloads: txn_rmw[_hot]_{opt,pess}.
struct TxnWorkload {
  const char* name;
  TxnMode mode;
  bool hot;  // BenchConfig::txn_hot_keys accounts instead of num
};
constexpr TxnWorkload kTxnWorkloads[] = {
    {"txn_rmw_opt", TxnMode::kOptimistic, false},
    {"txn_rmw_pess", TxnMode::kPessimistic, false},
    {"txn_rmw_hot_opt", TxnMode::kOptimistic, true},
    {"txn_rmw_hot_pess", TxnMode::kPessimistic, true},
};

const TxnWorkload* FindTxnWorkload(const std::string& name) {
  for (const TxnWorkload& t : kTxnWorkloads) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

// Account values: the balance as a little-endian 64-bit two's-complement integer, then
// value_size - 8 bytes of the key's usual value (so the data compresses as in the other
// workloads, and the filler can be verified).
constexpr size_t kBalanceSize = 8;
constexpr int64_t kInitialBalance = 1000000;
constexpr int64_t kMaxTransfer = 100;
// A transaction that still fails after this many attempts in a row is reported as an
// error (livelock) rather than retried for ever.
constexpr int kMaxTxnAttempts = 100000;

void EncodeBalance(int64_t balance, char* out) {
  const uint64_t u = static_cast<uint64_t>(balance);
  for (size_t i = 0; i < kBalanceSize; ++i) out[i] = static_cast<char>(u >> (8 * i));
}

int64_t DecodeBalance(std::string_view value) {
  uint64_t u = 0;
  for (size_t i = 0; i < kBalanceSize; ++i) u |= uint64_t{static_cast<unsigned char>(value[i])} << (8 * i);
  return static_cast<int64_t>(u);
}

bool KeyIs(std::string_view key, uint64_t index) {
  char expected[kKeySize];
  EncodeKey(index, expected);
  return key == std::string_view(expected, kKeySize);
}

// Per-thread state of a measured phase.
struct Worker {
  Worker(int id, uint64_t seed, uint64_t stream) : id(id), rng(seed, stream) {}
  int id;  // 0 .. threads - 1
  Random64 rng;
  char key[kKeySize];
  std::string value;
  LatencyHistogram hist;
  uint64_t ops = 0, found = 0, not_found = 0, mismatches = 0, user_bytes = 0;
  uint64_t busy = 0, timed_out = 0, deadlocks = 0;  // retryable transaction outcomes
  std::string error;
};

// Shared by the threads of one phase.
struct PhaseControl {
  std::atomic<bool> stop{false};
  Clock::time_point deadline = Clock::time_point::max();

  bool ShouldStop() const { return stop.load(std::memory_order_relaxed) || Clock::now() >= deadline; }
};

class Runner {
 public:
  Runner(KvEngine* engine, const BenchConfig& config)
      : engine_(engine), config_(config), values_(config.value_size, config.seed) {}

  RunResult& result() { return result_; }
  bool Fail(const std::string& what) {
    if (result_.error.empty()) result_.error = what;
    return false;
  }

  // Runs op(worker, i) for i in [0, ops) split over `threads` threads, timing each call;
  // capped phases also end after config.duration seconds. op returns false to end the
  // phase (an error recorded in worker.error).
  template <typename Op>
  PhaseResult RunPhase(const std::string& name, int threads, uint64_t ops, uint64_t stream, bool capped,
                       Op op) {
    PhaseControl control;
    std::vector<std::unique_ptr<Worker>> workers;
    for (int t = 0; t < threads; ++t) {
      workers.push_back(std::make_unique<Worker>(t, config_.seed, stream * 1000 + static_cast<uint64_t>(t)));
    }
    const auto start = Clock::now();
    if (capped && config_.duration > 0) {
      control.deadline = start + std::chrono::microseconds(static_cast<int64_t>(config_.duration * 1e6));
    }
    auto body = [&](int t) {
      Worker& w = *workers[t];
      const uint64_t begin = ops * static_cast<uint64_t>(t) / static_cast<uint64_t>(threads);
      const uint64_t end = ops * static_cast<uint64_t>(t + 1) / static_cast<uint64_t>(threads);
      for (uint64_t i = begin; i < end; ++i) {
        if ((i & 63) == 0 && control.ShouldStop()) break;
        const auto t0 = Clock::now();
        const bool ok = op(w, i);
        w.hist.Add(NanosSince(t0));
        if (!ok) {
          control.stop = true;
          break;
        }
        ++w.ops;
      }
    };
    if (threads == 1) {
      body(0);
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) pool.emplace_back(body, t);
      for (auto& th : pool) th.join();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return Collect(name, workers, seconds);
  }

  PhaseResult Collect(const std::string& name, const std::vector<std::unique_ptr<Worker>>& workers,
                      double seconds) {
    PhaseResult p;
    p.name = name;
    p.seconds = seconds;
    LatencyHistogram all;
    for (const auto& w : workers) {
      all.Merge(w->hist);
      p.ops += w->ops;
      p.found += w->found;
      p.not_found += w->not_found;
      p.mismatches += w->mismatches;
      p.busy += w->busy;
      p.timed_out += w->timed_out;
      p.deadlocks += w->deadlocks;
      result_.user_bytes_written += w->user_bytes;
      if (!w->error.empty()) Fail(name + ": " + w->error);
    }
    p.p50_us = all.Percentile(0.50) / 1000.0;
    p.p99_us = all.Percentile(0.99) / 1000.0;
    p.max_us = static_cast<double>(all.max()) / 1000.0;
    if (p.mismatches > 0) {
      Fail(name + ": " + std::to_string(p.mismatches) +
           " reads returned a wrong value or a wrong found/not-found");
    }
    return p;
  }

  // --- Operations, each on one key index. False (with w.error set) on an engine error.

  bool PutIndex(Worker& w, uint64_t index) {
    EncodeKey(index, w.key);
    const std::string_view value = values_.ValueFor(index);
    OpStatus s = engine_->Put(std::string_view(w.key, kKeySize), value);
    if (!s.ok()) {
      w.error = "Put: " + s.message;
      return false;
    }
    w.user_bytes += kKeySize + value.size();
    return true;
  }

  bool DeleteIndex(Worker& w, uint64_t index) {
    EncodeKey(index, w.key);
    OpStatus s = engine_->Delete(std::string_view(w.key, kKeySize));
    if (!s.ok()) {
      w.error = "Delete: " + s.message;
      return false;
    }
    w.user_bytes += kKeySize;
    return true;
  }

  // Writes batch_size keys, index_of(j) for j in [first, first + batch_size), in one batch.
  template <typename IndexOf>
  bool PutBatch(Worker& w, KvBatch* batch, uint64_t first, IndexOf index_of, bool no_sync) {
    batch->Clear();
    for (int j = 0; j < config_.batch_size; ++j) {
      const uint64_t index = index_of(first + static_cast<uint64_t>(j));
      EncodeKey(index, w.key);
      const std::string_view value = values_.ValueFor(index);
      batch->Put(std::string_view(w.key, kKeySize), value);
      w.user_bytes += kKeySize + value.size();
    }
    OpStatus s = engine_->Write(batch, no_sync);
    if (!s.ok()) {
      w.error = "Write: " + s.message;
      return false;
    }
    return true;
  }

  // expect_found: whether the key must exist (deleteheavy knows which keys it deleted).
  bool GetIndex(Worker& w, uint64_t index, bool expect_found) {
    EncodeKey(index, w.key);
    OpStatus s = engine_->Get(std::string_view(w.key, kKeySize), &w.value);
    if (s.ok()) {
      ++w.found;
      if (config_.verify && (!expect_found || w.value != values_.ValueFor(index))) ++w.mismatches;
      return true;
    }
    if (s.not_found()) {
      ++w.not_found;
      if (config_.verify && expect_found) ++w.mismatches;
      return true;
    }
    w.error = "Get: " + s.message;
    return false;
  }

  // Seek to a key that exists, then up to seek_nexts Next calls; checks that the keys come
  // back in order and consecutive (every key of [0, num) exists after a preload).
  bool SeekIndex(Worker& w, uint64_t index) {
    EncodeKey(index, w.key);
    std::unique_ptr<KvIterator> it = engine_->NewIterator(true);
    it->Seek(std::string_view(w.key, kKeySize));
    uint64_t expect = index;
    for (int n = 0; it->Valid() && n <= config_.seek_nexts; ++n) {
      if (config_.verify && (!KeyIs(it->key(), expect) || it->value() != values_.ValueFor(expect))) {
        ++w.mismatches;
        break;
      }
      ++expect;
      if (n < config_.seek_nexts) it->Next();
    }
    OpStatus s = it->status();
    if (!s.ok()) {
      w.error = "Iterator: " + s.message;
      return false;
    }
    const uint64_t want_end = std::min<uint64_t>(config_.num, index + config_.seek_nexts + 1);
    if (config_.verify && expect != want_end && w.mismatches == 0) ++w.mismatches;
    ++w.found;
    return true;
  }

  // --- Building blocks of the workloads.

  // Sequential keys [0, num) in batches of 1000 without fsync, then a flush (unless
  // --preload_flush=0); the state a read workload starts from. Reported as phase "load",
  // not part of any summary.
  bool Preload() {
    std::unique_ptr<KvBatch> batch = engine_->NewBatch();
    const uint64_t batches = (config_.num + 999) / 1000;
    const uint64_t num = config_.num;
    PhaseResult p = RunPhase("load", 1, batches, 0, false, [&](Worker& w, uint64_t b) {
      const uint64_t first = b * 1000;
      batch->Clear();
      for (uint64_t index = first; index < std::min(num, first + 1000); ++index) {
        EncodeKey(index, w.key);
        const std::string_view value = values_.ValueFor(index);
        batch->Put(std::string_view(w.key, kKeySize), value);
        w.user_bytes += kKeySize + value.size();
      }
      OpStatus s = engine_->Write(batch.get(), true);
      if (!s.ok()) w.error = "Write: " + s.message;
      return s.ok();
    });
    p.ops = std::min<uint64_t>(num, p.ops * 1000);  // report keys, not batches
    const auto t0 = Clock::now();
    if (result_.error.empty() && config_.preload_flush) FlushAndSettle();
    p.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    result_.phases.push_back(p);
    return result_.error.empty();
  }

  bool FlushAndSettle() {
    OpStatus s = engine_->Flush();
    if (!s.ok()) return Fail("Flush: " + s.message);
    s = engine_->WaitForBackgroundWork();
    if (!s.ok()) return Fail("WaitForBackgroundWork: " + s.message);
    return true;
  }

  // A full scan, timed as a whole. expected: entries the scan must return (-1: unknown).
  PhaseResult Scan(const std::string& name, bool fill_cache, int64_t expected) {
    PhaseResult p;
    p.name = name;
    p.timed_ops = false;
    const auto t0 = Clock::now();
    std::unique_ptr<KvIterator> it = engine_->NewIterator(fill_cache);
    uint64_t prev = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const uint64_t index = DecodeKeyIndex(it->key());
      if (config_.verify && ((p.ops > 0 && index <= prev) || !KeyIs(it->key(), index) ||
                             it->value() != values_.ValueFor(index))) {
        ++p.mismatches;
      }
      prev = index;
      ++p.ops;
    }
    p.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    p.found = p.ops;
    OpStatus s = it->status();
    if (!s.ok()) Fail(name + ": iterator: " + s.message);
    if (config_.verify && expected >= 0 && p.ops != static_cast<uint64_t>(expected)) {
      Fail(name + ": scan returned " + std::to_string(p.ops) + " entries, expected " +
           std::to_string(expected));
    }
    if (p.mismatches > 0) Fail(name + ": " + std::to_string(p.mismatches) + " entries out of order or wrong");
    return p;
  }

  PhaseResult ReadRandom(const std::string& name, std::function<bool(uint64_t)> expect_found) {
    const uint64_t num = config_.num;
    return RunPhase(name, config_.threads, config_.Reads(), kStreamRead, true, [&](Worker& w, uint64_t) {
      const uint64_t index = w.rng.Uniform(num);
      return GetIndex(w, index, expect_found(index));
    });
  }

  // Random puts over [0, key_space), one key per op or batch_size keys per Write.
  PhaseResult WriteRandom(const std::string& name, int threads, uint64_t ops, uint64_t key_space,
                          uint64_t stream) {
    if (config_.batch_size <= 1) {
      return RunPhase(name, threads, ops, stream, true,
                      [&](Worker& w, uint64_t) { return PutIndex(w, w.rng.Uniform(key_space)); });
    }
    std::vector<std::unique_ptr<KvBatch>> batches;  // one per worker
    for (int t = 0; t < threads; ++t) batches.push_back(engine_->NewBatch());
    const uint64_t calls = (ops + config_.batch_size - 1) / config_.batch_size;
    PhaseResult p = RunPhase(name, threads, calls, stream, true, [&](Worker& w, uint64_t) {
      return PutBatch(
          w, batches[w.id].get(), 0, [&](uint64_t) { return w.rng.Uniform(key_space); }, false);
    });
    p.ops *= static_cast<uint64_t>(config_.batch_size);
    return p;
  }

  // --- The workloads.

  void FillSeq() {
    const uint64_t n = config_.Writes();
    PhaseResult p;
    if (config_.batch_size <= 1) {
      p = RunPhase("fill", 1, n, 0, true, [&](Worker& w, uint64_t i) { return PutIndex(w, i); });
    } else {
      std::unique_ptr<KvBatch> batch = engine_->NewBatch();
      const uint64_t calls = (n + config_.batch_size - 1) / config_.batch_size;
      p = RunPhase("fill", 1, calls, 0, true, [&](Worker& w, uint64_t c) {
        return PutBatch(
            w, batch.get(), c * config_.batch_size, [](uint64_t i) { return i; }, false);
      });
      p.ops *= static_cast<uint64_t>(config_.batch_size);
    }
    p.summary = true;
    result_.phases.push_back(p);
  }

  void FillRandom() {
    PhaseResult p = WriteRandom("fill", config_.threads, config_.Writes(), config_.num, kStreamFillRandom);
    p.summary = true;
    result_.phases.push_back(p);
  }

  void Overwrite() {
    if (!Preload()) return;
    PhaseResult p =
        WriteRandom("overwrite", config_.threads, config_.Writes(), config_.num, kStreamOverwrite);
    p.summary = true;
    result_.phases.push_back(p);
  }

  void ReadRandomWorkload(bool warm) {
    if (!Preload()) return;
    if (warm) {
      PhaseResult warmup = Scan("warmup-scan", true, static_cast<int64_t>(config_.num));
      result_.phases.push_back(warmup);
      if (!result_.error.empty()) return;
    }
    PhaseResult p = ReadRandom("read", [](uint64_t) { return true; });
    p.summary = true;
    result_.phases.push_back(p);
  }

  void SeekRandom() {
    if (!Preload()) return;
    result_.phases.push_back(Scan("warmup-scan", true, static_cast<int64_t>(config_.num)));
    if (!result_.error.empty()) return;
    const uint64_t num = config_.num;
    PhaseResult p =
        RunPhase("seek+next" + std::to_string(config_.seek_nexts), config_.threads, config_.Seeks(),
                 kStreamSeek, true, [&](Worker& w, uint64_t) { return SeekIndex(w, w.rng.Uniform(num)); });
    p.summary = true;
    result_.phases.push_back(p);
  }

  // config.threads readers are measured while one writer overwrites random keys as fast as
  // it can; the writer stops when the readers are done. Values never change (a key's
  // value is a function of the key), so readers can still verify every byte.
  void ReadWhileWriting() {
    if (!Preload()) return;
    result_.phases.push_back(Scan("warmup-scan", true, static_cast<int64_t>(config_.num)));
    if (!result_.error.empty()) return;
    std::atomic<bool> readers_done{false};
    auto writer_owner = std::make_unique<Worker>(0, config_.seed, kStreamBackgroundWriter);
    Worker& writer = *writer_owner;
    const auto writer_start = Clock::now();
    double writer_seconds = 0;
    const uint64_t num = config_.num;
    std::thread writer_thread([&] {
      while (!readers_done.load(std::memory_order_relaxed)) {
        const auto t0 = Clock::now();
        if (!PutIndex(writer, writer.rng.Uniform(num))) break;
        writer.hist.Add(NanosSince(t0));
        ++writer.ops;
      }
      writer_seconds = std::chrono::duration<double>(Clock::now() - writer_start).count();
    });
    PhaseResult p = ReadRandom("read", [](uint64_t) { return true; });
    readers_done = true;
    writer_thread.join();
    p.summary = true;
    result_.phases.push_back(p);
    std::vector<std::unique_ptr<Worker>> one;
    one.push_back(std::move(writer_owner));
    result_.phases.push_back(Collect("write(bg)", one, writer_seconds));
  }

  // Loads num keys, deletes a random half of them (in random order), flushes so the
  // tombstones sit in files, then random reads (half of them hit tombstones) and a full
  // scan that must step over num / 2 tombstones.
  void DeleteHeavy() {
    if (!Preload()) return;
    std::vector<uint64_t> victims;
    std::vector<bool> deleted(config_.num, false);
    for (uint64_t i = 0; i < config_.num; ++i) {
      if (Mix64(i ^ Mix64(config_.seed + kStreamDeleteChoice)) & 1) {
        victims.push_back(i);
        deleted[i] = true;
      }
    }
    Random64 order(config_.seed, kStreamDeleteOrder);
    for (size_t i = victims.size(); i > 1; --i) std::swap(victims[i - 1], victims[order.Uniform(i)]);
    // Not capped by --duration: the read and scan checks need every delete applied.
    PhaseResult del = RunPhase("delete", config_.threads, victims.size(), kStreamDeleteOrder, false,
                               [&](Worker& w, uint64_t i) { return DeleteIndex(w, victims[i]); });
    result_.phases.push_back(del);
    if (!result_.error.empty()) return;
    const auto t0 = Clock::now();
    if (!FlushAndSettle()) return;
    PhaseResult flush;
    flush.name = "flush";
    flush.timed_ops = false;
    flush.ops = 1;
    flush.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    result_.phases.push_back(flush);
    PhaseResult read = ReadRandom("read", [&](uint64_t index) { return !deleted[index]; });
    read.summary = true;
    result_.phases.push_back(read);
    if (!result_.error.empty()) return;
    result_.phases.push_back(Scan("scan", false, static_cast<int64_t>(config_.num - victims.size())));
  }

  // --- Transactions: transfers between accounts.

  // The value of account `index` holding `balance`.
  std::string AccountValue(uint64_t index, int64_t balance) const {
    std::string v(values_.ValueFor(index));
    EncodeBalance(balance, v.data());
    return v;
  }

  // Whether `value` is a well-formed value of account `index` (size and filler).
  bool AccountValueValid(uint64_t index, std::string_view value) const {
    if (value.size() != config_.value_size) return false;
    return !config_.verify || value.substr(kBalanceSize) == values_.ValueFor(index).substr(kBalanceSize);
  }

  // Accounts [0, accounts) with kInitialBalance each, in batches of 1000 without fsync,
  // then a flush: the "load" row.
  bool LoadAccounts(uint64_t accounts) {
    std::unique_ptr<KvBatch> batch = engine_->NewBatch();
    const uint64_t batches = (accounts + 999) / 1000;
    PhaseResult p = RunPhase("load", 1, batches, 0, false, [&](Worker& w, uint64_t b) {
      const uint64_t first = b * 1000;
      batch->Clear();
      for (uint64_t index = first; index < std::min(accounts, first + 1000); ++index) {
        EncodeKey(index, w.key);
        const std::string value = AccountValue(index, kInitialBalance);
        batch->Put(std::string_view(w.key, kKeySize), value);
        w.user_bytes += kKeySize + value.size();
      }
      OpStatus s = engine_->Write(batch.get(), true);
      if (!s.ok()) w.error = "Write: " + s.message;
      return s.ok();
    });
    p.ops = std::min<uint64_t>(accounts, p.ops * 1000);
    const auto t0 = Clock::now();
    if (result_.error.empty()) FlushAndSettle();
    p.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    result_.phases.push_back(p);
    return result_.error.empty();
  }

  // Counts a retryable outcome in w; false for any other status.
  static bool CountRetryable(Worker& w, const OpStatus& s) {
    switch (s.code) {
      case OpStatus::Code::kBusy:
        ++w.busy;
        return true;
      case OpStatus::Code::kTimedOut:
        ++w.timed_out;
        return true;
      case OpStatus::Code::kDeadlock:
        ++w.deadlocks;
        return true;
      default:
        return false;
    }
  }

  // One transfer of `amount` from account `from` to account `to`, run until it commits:
  // GetForUpdate both (in that order), Put both, Commit; a retryable status rolls back and
  // runs it again. On commit the transfer is added to deltas (the expected final balances).
  bool Transfer(Worker& w, KvTransaction* txn, uint64_t from, uint64_t to, int64_t amount,
                std::vector<int64_t>* deltas) {
    char from_key[kKeySize], to_key[kKeySize];
    EncodeKey(from, from_key);
    EncodeKey(to, to_key);
    const std::string_view fk(from_key, kKeySize), tk(to_key, kKeySize);
    std::string from_value, to_value;
    for (int attempt = 0; attempt < kMaxTxnAttempts; ++attempt) {
      txn->Begin();
      // Each step either continues, retries (rolled back), or fails the phase.
      auto step = [&](const OpStatus& s, const char* what) {
        if (s.ok()) return 1;
        if (CountRetryable(w, s)) return 0;
        w.error = std::string(what) + ": " + s.message;
        return -1;
      };
      int r = step(txn->GetForUpdate(fk, &from_value), "GetForUpdate");
      if (r == 1) r = step(txn->GetForUpdate(tk, &to_value), "GetForUpdate");
      if (r == 1) {
        if (!AccountValueValid(from, from_value) || !AccountValueValid(to, to_value)) {
          ++w.mismatches;
          txn->Rollback();
          w.error = "an account value read back is malformed";
          return false;
        }
        std::string new_from = from_value, new_to = to_value;
        EncodeBalance(DecodeBalance(from_value) - amount, new_from.data());
        EncodeBalance(DecodeBalance(to_value) + amount, new_to.data());
        r = step(txn->Put(fk, new_from), "Put");
        if (r == 1) r = step(txn->Put(tk, new_to), "Put");
        if (r == 1) {
          // A failed Commit has already rolled the transaction back.
          r = step(txn->Commit(), "Commit");
          if (r == 1) {
            (*deltas)[from] -= amount;
            (*deltas)[to] += amount;
            w.user_bytes += 2 * (kKeySize + config_.value_size);
            return true;
          }
          if (r == -1) return false;
          continue;
        }
      }
      txn->Rollback();
      if (r == -1) return false;
    }
    w.error = "a transfer failed " + std::to_string(kMaxTxnAttempts) + " times in a row";
    return false;
  }

  // Reads every account back (a full scan, after the workers are done) and checks that
  // each balance is the initial one plus the committed transfers that touched it, and that
  // the balances still sum to accounts * kInitialBalance. Any violation fails the run.
  void VerifyAccounts(uint64_t accounts, const std::vector<std::vector<int64_t>>& deltas) {
    PhaseResult p;
    p.name = "verify";
    p.timed_ops = false;
    const auto t0 = Clock::now();
    std::unique_ptr<KvIterator> it = engine_->NewIterator(false);
    int64_t sum = 0;
    uint64_t wrong_balance = 0, first_wrong = 0;
    int64_t first_got = 0, first_want = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const uint64_t index = p.ops;
      if (index >= accounts || !KeyIs(it->key(), index) || !AccountValueValid(index, it->value())) {
        ++p.mismatches;
        break;
      }
      const int64_t balance = DecodeBalance(it->value());
      int64_t want = kInitialBalance;
      for (const auto& d : deltas) want += d[index];
      if (balance != want && wrong_balance++ == 0) {
        first_wrong = index;
        first_got = balance;
        first_want = want;
      }
      sum += balance;
      ++p.ops;
    }
    p.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    p.found = p.ops;
    result_.phases.push_back(p);
    OpStatus s = it->status();
    if (!s.ok()) {
      Fail("verify: iterator: " + s.message);
      return;
    }
    if (p.mismatches > 0 || p.ops != accounts) {
      Fail("INVARIANT VIOLATED: the accounts read back are not exactly keys [0, " + std::to_string(accounts) +
           ") with well-formed values (" + std::to_string(p.ops) + " read before the first bad one)");
      return;
    }
    const int64_t want_sum = static_cast<int64_t>(accounts) * kInitialBalance;
    if (sum != want_sum) {
      Fail("INVARIANT VIOLATED: the balances sum to " + std::to_string(sum) + ", expected " +
           std::to_string(want_sum));
      return;
    }
    if (wrong_balance > 0) {
      Fail("INVARIANT VIOLATED: " + std::to_string(wrong_balance) +
           " accounts do not hold the initial balance plus their committed transfers (first: account " +
           std::to_string(first_wrong) + " holds " + std::to_string(first_got) + ", expected " +
           std::to_string(first_want) + ")");
    }
  }

  // Loads the accounts, then config.threads threads run Txns() transfers between two
  // distinct random accounts (of a random amount), each until it commits; then the
  // balances are verified.
  void TxnReadModifyWrite(const TxnWorkload& spec) {
    const uint64_t accounts = spec.hot ? config_.txn_hot_keys : config_.num;
    if (accounts < 2) {
      Fail("transaction workloads need at least 2 accounts");
      return;
    }
    if (config_.value_size < kBalanceSize) {
      Fail("transaction workloads need --value_size >= " + std::to_string(kBalanceSize));
      return;
    }
    if (!LoadAccounts(accounts)) return;
    const int threads = config_.threads;
    std::vector<std::unique_ptr<KvTransaction>> txns(threads);
    for (auto& txn : txns) {
      OpStatus s = engine_->NewTransaction(spec.mode, &txn);
      if (!s.ok()) {
        Fail("NewTransaction: " + s.message);
        return;
      }
    }
    std::vector<std::vector<int64_t>> deltas(threads, std::vector<int64_t>(accounts, 0));
    const double cpu_before = ProcessCpuSeconds();
    PhaseResult p = RunPhase("txn", threads, config_.Txns(), kStreamTxn, true, [&](Worker& w, uint64_t) {
      const uint64_t from = w.rng.Uniform(accounts);
      uint64_t to = w.rng.Uniform(accounts - 1);
      if (to >= from) ++to;
      const int64_t amount = 1 + static_cast<int64_t>(w.rng.Uniform(kMaxTransfer));
      return Transfer(w, txns[w.id].get(), from, to, amount, &deltas[w.id]);
    });
    p.cpu_seconds = ProcessCpuSeconds() - cpu_before;
    p.summary = true;
    p.txn = true;
    result_.phases.push_back(p);
    txns.clear();  // every transaction ends before the verification and the close
    // Verified even after a failure: an engine error must not hide a broken invariant.
    VerifyAccounts(accounts, deltas);
  }

  void Run(const std::string& workload) {
    if (const TxnWorkload* txn = FindTxnWorkload(workload)) {
      TxnReadModifyWrite(*txn);
    } else if (workload == "fillseq") {
      FillSeq();
    } else if (workload == "fillrandom") {
      FillRandom();
    } else if (workload == "overwrite") {
      Overwrite();
    } else if (workload == "readrandom") {
      ReadRandomWorkload(true);
    } else if (workload == "readrandom_cold") {
      ReadRandomWorkload(false);
    } else if (workload == "seekrandom") {
      SeekRandom();
    } else if (workload == "readwhilewriting") {
      ReadWhileWriting();
    } else if (workload == "deleteheavy") {
      DeleteHeavy();
    } else {
      Fail("unknown workload " + workload);
    }
  }

 private:
  KvEngine* const engine_;
  BenchConfig config_;
  ValuePool values_;
  RunResult result_;
};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

}  // namespace

const std::vector<WorkloadInfo>& AllWorkloads() {
  static const std::vector<WorkloadInfo> kAll = {
      {"fillseq", "sequential puts into an empty DB", true, false},
      {"fillrandom", "random puts (with repeats) into an empty DB", true, false},
      {"overwrite", "random puts over a loaded key set", true, false},
      {"readrandom", "random gets, block cache holds the data (warmed by a scan)", false, false},
      {"readrandom_cold", "random gets, data several times the block cache (--cold_cache_mb)", false, false},
      {"seekrandom", "random Seek + --seek_nexts Next", false, false},
      {"readwhilewriting", "random gets (measured) while one thread overwrites", true, false},
      {"deleteheavy", "delete a random half, flush, random gets (measured), full scan", true, false},
      {"txn_rmw_opt", "optimistic transfers between 2 of num accounts (GetForUpdate x2, Put x2)", true, true},
      {"txn_rmw_pess", "pessimistic transfers between 2 of num accounts", true, true},
      {"txn_rmw_hot_opt", "optimistic transfers between 2 of --txn_hot_keys accounts", true, true},
      {"txn_rmw_hot_pess", "pessimistic transfers between 2 of --txn_hot_keys accounts", true, true},
  };
  return kAll;
}

const WorkloadInfo* FindWorkload(const std::string& name) {
  for (const WorkloadInfo& w : AllWorkloads()) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

const PhaseResult* RunResult::SummaryPhase() const {
  for (const PhaseResult& p : phases) {
    if (p.summary) return &p;
  }
  return nullptr;
}

std::string RunResult::Serialize() const {
  std::ostringstream out;
  out.precision(17);
  out << "ok " << (ok ? 1 : 0) << "\n";
  out << "error " << Escape(error) << "\n";
  out << "disk " << disk_bytes << "\n";
  out << "iowrite " << io_write_bytes << "\n";
  out << "userbytes " << user_bytes_written << "\n";
  out << "stats " << Escape(stats) << "\n";
  for (const PhaseResult& p : phases) {
    out << "phase " << p.name << " " << p.summary << " " << p.timed_ops << " " << p.ops << " " << p.seconds
        << " " << p.p50_us << " " << p.p99_us << " " << p.max_us << " " << p.found << " " << p.not_found
        << " " << p.mismatches << " " << p.txn << " " << p.busy << " " << p.timed_out << " " << p.deadlocks
        << " " << p.cpu_seconds << "\n";
  }
  out << "end\n";
  return out.str();
}

bool RunResult::Parse(const std::string& text, RunResult* out) {
  std::istringstream in(text);
  std::string line;
  bool complete = false;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    const std::string tag = line.substr(0, sp);
    const std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    std::istringstream fields(rest);
    if (tag == "ok") {
      int v = 0;
      fields >> v;
      out->ok = v != 0;
    } else if (tag == "error") {
      out->error = rest;
    } else if (tag == "disk") {
      fields >> out->disk_bytes;
    } else if (tag == "iowrite") {
      fields >> out->io_write_bytes;
    } else if (tag == "userbytes") {
      fields >> out->user_bytes_written;
    } else if (tag == "stats") {
      out->stats = rest;
    } else if (tag == "phase") {
      PhaseResult p;
      fields >> p.name >> p.summary >> p.timed_ops >> p.ops >> p.seconds >> p.p50_us >> p.p99_us >>
          p.max_us >> p.found >> p.not_found >> p.mismatches >> p.txn >> p.busy >> p.timed_out >>
          p.deadlocks >> p.cpu_seconds;
      if (!fields) return false;
      out->phases.push_back(p);
    } else if (tag == "end") {
      complete = true;
    }
  }
  return complete;
}

RunResult RunWorkload(KvEngine* engine, const std::string& workload, const std::string& dir,
                      const BenchConfig& config) {
  BenchConfig effective = config;
  if (workload == "readrandom_cold") effective.engine.block_cache_bytes = config.cold_cache_bytes;
  if (const TxnWorkload* txn = FindTxnWorkload(workload)) effective.engine.txn_mode = txn->mode;
  Runner runner(engine, effective);
  RunResult& result = runner.result();

  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    result.error = "cannot create " + dir + ": " + ec.message();
    return result;
  }

  const uint64_t io_before = ProcessWriteBytes();
  OpStatus s = engine->Open(dir, effective.engine);
  if (!s.ok()) {
    result.error = "Open: " + s.message;
    return result;
  }
  runner.Run(workload);
  // Leave the directory in a comparable state for du: memtables in files, compactions the
  // engine chose to run finished, WAL closed.
  if (result.error.empty()) runner.FlushAndSettle();
  result.stats = engine->StatsLine();
  s = engine->Close();
  if (!s.ok() && result.error.empty()) result.error = "Close: " + s.message;
  result.io_write_bytes = ProcessWriteBytes() - io_before;
  result.disk_bytes = DiskUsageBytes(dir);
  result.ok = result.error.empty();
  return result;
}

}  // namespace kvbench
