// Multi-threaded model test: writers (plain batches, optimistic and pessimistic
// transactions), readers with and without snapshots, entries with a TTL, and flushes and
// compactions racing them, all checked exactly against an in-memory oracle; then the
// database is reopened, cleanly and after a simulated crash, and must hold every
// acknowledged commit.
//
// Why the check is exact despite concurrency:
//   * Every writer owns a key range that only it writes, and logs each commit in its
//     history before the commit starts (`started`) and marks it acknowledged after it
//     returns (`acked`). What any reader sees of a range is therefore the state after
//     some prefix j of that writer's commits, with acked-before-the-read <= j <=
//     started-after-the-read; a batch is atomic, so one j must explain all of the range.
//   * Transactions report their commit sequence: a snapshot at sequence S shows exactly
//     the commits with sequence <= S. So a transaction writer's j is known exactly, and so
//     are the shared counters that transactions increment (read-modify-write under
//     GetForUpdate): a counter at S is the number of increments committed at or below S.
//     A lost update, or a snapshot that is not a consistent cut, shows up there.
//   * TTL: the database's clock is the test's (an Env whose NowMicros the test sets),
//     advanced by a ticker thread. A read between clock values t1 and t2 may treat an
//     entry as expired at any time in [t1, t2]; the oracle accepts exactly that.
//
// Seeded: every thread's operations derive from the seed (TIDESDB_MODEL_SEED=<seed> to
// rerun one; the interleaving is the scheduler's). Every failure message carries it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "env/fault_injection_env.h"
#include "testutil/injecting_env.h"
#include "testutil/test_util.h"
#include "tidesdb/transaction.h"
#include "tidesdb/write_batch.h"

namespace tidesdb {
namespace {

// The database's clock: NowMicros returns what the test sets (TTL expiry is compared with
// it, in seconds).
class ManualClockEnv : public test::EnvWrapper {
 public:
  explicit ManualClockEnv(Env* target) : EnvWrapper(target) {}
  uint64_t NowMicros() override { return micros_.load(); }
  uint64_t NowSeconds() const { return micros_.load() / 1000000; }
  void AdvanceSeconds(uint64_t s) { micros_.fetch_add(s * 1000000); }

 private:
  std::atomic<uint64_t> micros_{uint64_t{1'800'000'000} * 1000000};
};

enum class WriterKind { kPlain, kOptimistic, kPessimistic };
const char* KindName(WriterKind k) {
  return k == WriterKind::kPlain ? "plain" : k == WriterKind::kOptimistic ? "optimistic" : "pessimistic";
}

struct Op {
  std::string key;
  bool del = false;
  std::string value;
  uint64_t expire_at = 0;  // unix seconds, 0 = never
};

struct Commit {
  std::vector<Op> ops;                // on the writer's own keys
  std::vector<std::string> counters;  // shared counters incremented (transactions)
  uint64_t seq = 0;                   // commit sequence (transactions), once acknowledged
};

// What a key holds after a prefix of a writer's commits: nothing, or a value with expiry.
struct KeyState {
  bool present = false;
  std::string value;
  uint64_t expire_at = 0;
};

constexpr int kKeysPerWriter = 40;
constexpr int kCounters = 4;

std::string WriterKey(int w, int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "w%02d-k%03d", w, i);
  return buf;
}
std::string CounterKey(int c) { return "ctr-" + std::to_string(c); }

// One writer's key range and commit history.
class WriterLog {
 public:
  // Commits [0, started) have begun; [0, acked) were acknowledged. started <= acked + 1.
  std::atomic<size_t> started{0}, acked{0};

  void Begin(Commit c) {
    std::lock_guard<std::mutex> l(mu_);
    commits_.push_back(std::move(c));
    started.store(commits_.size());
  }
  void Abort() {
    std::lock_guard<std::mutex> l(mu_);
    commits_.pop_back();
    started.store(commits_.size());
  }
  void Ack(uint64_t seq) {
    std::lock_guard<std::mutex> l(mu_);
    commits_.back().seq = seq;
    acked.store(commits_.size());
  }
  // The state of every key of the range after commits [0, j).
  std::map<std::string, KeyState> StateAfter(size_t j) const {
    std::lock_guard<std::mutex> l(mu_);
    std::map<std::string, KeyState> state;
    for (size_t c = 0; c < j && c < commits_.size(); ++c) {
      for (const Op& op : commits_[c].ops) {
        KeyState& k = state[op.key];
        k.present = !op.del;
        k.value = op.value;
        k.expire_at = op.expire_at;
      }
    }
    return state;
  }
  // Commits with a sequence at or below seq (transactions; all acknowledged by then).
  size_t CountAtOrBelow(uint64_t seq) const {
    std::lock_guard<std::mutex> l(mu_);
    size_t n = 0;
    while (n < commits_.size() && commits_[n].seq != 0 && commits_[n].seq <= seq) ++n;
    return n;
  }
  std::vector<Commit> Commits() const {
    std::lock_guard<std::mutex> l(mu_);
    return commits_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Commit> commits_;
};

// Whether a read of a key that returned `got` (nullopt: not found) is explained by state
// k, read at some time in [t1, t2].
bool Explains(const KeyState* k, const std::optional<std::string>& got, uint64_t t1, uint64_t t2) {
  const bool live_at_t1 = k != nullptr && k->present && (k->expire_at == 0 || k->expire_at > t1);
  const bool live_at_t2 = k != nullptr && k->present && (k->expire_at == 0 || k->expire_at > t2);
  if (got.has_value()) return live_at_t1 && *got == k->value;
  return !live_at_t2;
}

// Whether the range of a writer, as read (key -> value; absent keys not found), is the
// state after some j in [lo, hi] read between t1 and t2.
bool RangeExplained(const WriterLog& log, int w, const std::map<std::string, std::string>& seen, size_t lo,
                    size_t hi, uint64_t t1, uint64_t t2) {
  for (size_t j = lo; j <= hi; ++j) {
    const std::map<std::string, KeyState> state = log.StateAfter(j);
    bool all = true;
    for (int i = 0; i < kKeysPerWriter && all; ++i) {
      const std::string key = WriterKey(w, i);
      auto s = state.find(key);
      auto g = seen.find(key);
      all = Explains(s == state.end() ? nullptr : &s->second,
                     g == seen.end() ? std::nullopt : std::optional<std::string>(g->second), t1, t2);
    }
    if (all) return true;
  }
  return false;
}

// One snapshot's full scan, checked once every writer is done.
struct SnapshotRead {
  uint64_t seq = 0;
  std::vector<size_t> lo, hi;  // per writer: acked before, started after the snapshot
  uint64_t t1 = 0, t2 = 0;     // the clock before and after the scan
  std::map<std::string, std::string> seen;
};

class ConcurrentModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = test::SeedFromEnv("TIDESDB_MODEL_SEED");
    dir_ = std::make_unique<test::ScratchDir>("txn_concurrent_model");
    options_.env = &fault_;
    options_.sync_mode = SyncMode::kNone;
    options_.unified_memtable_write_buffer_size = 32 << 10;  // memtables switch and flush often
    options_.default_cf_options.write_buffer_size = 32 << 10;
    options_.default_cf_options.block_size = 1024;
    options_.default_cf_options.value_threshold = 256;  // some values go to value logs
    options_.default_cf_options.l1_file_count_trigger = 2;
    options_.default_cf_options.target_file_size = 16 << 10;
    options_.default_cf_options.level_size_base = 32 << 10;
    options_.default_cf_options.level_size_multiplier = 2;
    options_.default_cf_options.max_levels = 4;
    options_.default_cf_options.value_log_gc_threshold = 0.2;
    options_.flush_threads = 1;
    options_.compaction_threads = 1;
    options_.log_level = LogLevel::kWarn;
  }
  void TearDown() override {
    db_.reset();
    dir_.reset();
  }

  void Open() {
    db_.reset();
    TransactionDBOptions to;
    to.lock_timeout_micros = 50'000;
    Status s = TransactionDB::Open(options_, to, dir_->path(), &db_);
    ASSERT_TRUE(s.ok()) << "seed " << seed_ << ": " << s.ToString();
    cf_ = db_->db()->DefaultColumnFamily();
  }

  void Fail(const std::string& what) {
    std::lock_guard<std::mutex> l(fail_mu_);
    if (failures_.size() < 20) failures_.push_back(what);
    failed_.store(true);
  }

  // A value that names its writer and commit, long enough now and then for a value log.
  static std::string ValueFor(int w, size_t commit, size_t op, std::mt19937_64* rng) {
    std::string v = "v" + std::to_string(w) + "." + std::to_string(commit) + "." + std::to_string(op) + ".";
    v.append((*rng)() % 8 == 0 ? 300 + (*rng)() % 200 : (*rng)() % 40,
             static_cast<char>('a' + (*rng)() % 26));
    return v;
  }

  void RunWriter(int w, WriterKind kind, int commits) {
    std::mt19937_64 rng(seed_ * 1000 + static_cast<uint64_t>(w));
    WriterLog& log = logs_[w];
    for (int n = 0; n < commits && !failed_.load(); ++n) {
      Commit c;
      const size_t index = log.started.load();
      const int nops = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < nops; ++i) {
        Op op;
        op.key = WriterKey(w, static_cast<int>(rng() % kKeysPerWriter));
        op.del = rng() % 5 == 0;
        if (!op.del) op.value = ValueFor(w, index, static_cast<size_t>(i), &rng);
        // Plain batches put entries that expire 1-6 clock seconds from now.
        if (!op.del && kind == WriterKind::kPlain && rng() % 3 == 0) {
          op.expire_at = clock_.NowSeconds() + 1 + rng() % 6;
        }
        c.ops.push_back(std::move(op));
      }
      if (kind != WriterKind::kPlain) {
        const int nctr = static_cast<int>(rng() % 3);  // 0-2 counters, in random order
        for (int i = 0; i < nctr; ++i) {
          std::string ctr = CounterKey(static_cast<int>(rng() % kCounters));
          if (std::find(c.counters.begin(), c.counters.end(), ctr) == c.counters.end())
            c.counters.push_back(ctr);
        }
      }
      if (kind == WriterKind::kPlain) {
        WriteBatch batch;
        for (const Op& op : c.ops) {
          if (op.del) {
            batch.Delete(cf_, op.key);
          } else if (op.expire_at != 0) {
            batch.PutWithExpiry(cf_, op.key, op.value, op.expire_at);
          } else {
            batch.Put(cf_, op.key, op.value);
          }
        }
        log.Begin(c);
        // Through the TransactionDB (takes part in conflict detection; it takes no expiring
        // entries) or around it.
        const bool expiring =
            std::any_of(c.ops.begin(), c.ops.end(), [](const Op& op) { return op.expire_at != 0; });
        Status s = !expiring && rng() % 2 == 0 ? db_->Write(WriteOptions(), &batch)
                                               : db_->db()->Write(WriteOptions(), &batch);
        if (!s.ok()) {
          Fail("seed " + std::to_string(seed_) + ": writer " + std::to_string(w) + " batch: " + s.ToString());
          log.Abort();
          return;
        }
        log.Ack(0);
        continue;
      }
      // A transaction, retried after a conflict, lock timeout or deadlock.
      for (int attempt = 0;; ++attempt) {
        TransactionOptions to;
        to.mode =
            kind == WriterKind::kOptimistic ? ConcurrencyMode::kOptimistic : ConcurrencyMode::kPessimistic;
        std::unique_ptr<Transaction> txn = db_->BeginTransaction(to);
        Status s;
        for (const std::string& ctr : c.counters) {
          std::string v;
          s = txn->GetForUpdate(cf_, ctr, &v);
          if (s.IsNotFound()) {
            v = "0";
            s = Status::OK();
          }
          if (!s.ok()) break;
          s = txn->Put(cf_, ctr, std::to_string(std::stoull(v) + 1));
          if (!s.ok()) break;
        }
        for (const Op& op : c.ops) {
          if (!s.ok()) break;
          s = op.del ? txn->Delete(cf_, op.key) : txn->Put(cf_, op.key, op.value);
        }
        if (s.ok()) {
          log.Begin(c);
          s = txn->Commit();
          if (s.ok()) {
            log.Ack(txn->commit_sequence());
            retries_.fetch_add(static_cast<uint64_t>(attempt));
            break;
          }
          log.Abort();
        } else {
          txn->Rollback();
        }
        if (!(s.IsBusy() || s.IsTimedOut() || s.IsDeadlock()) || attempt > 1000) {
          Fail("seed " + std::to_string(seed_) + ": writer " + std::to_string(w) + " (" + KindName(kind) +
               ") commit: " + s.ToString());
          return;
        }
      }
    }
  }

  // Latest-state point reads, each checked at once against the window of its writer.
  void RunPointReader(int r) {
    std::mt19937_64 rng(seed_ * 1000 + 500 + static_cast<uint64_t>(r));
    while (!writers_done_.load() && !failed_.load()) {
      const int w = static_cast<int>(rng() % logs_.size());
      const std::string key = WriterKey(w, static_cast<int>(rng() % kKeysPerWriter));
      const size_t lo = logs_[w].acked.load();
      const uint64_t t1 = clock_.NowSeconds();
      std::string v;
      Status s = db_->db()->Get(ReadOptions(), cf_, key, &v);
      const uint64_t t2 = clock_.NowSeconds();
      const size_t hi = logs_[w].started.load();
      if (!s.ok() && !s.IsNotFound()) {
        Fail("seed " + std::to_string(seed_) + ": Get " + key + ": " + s.ToString());
        return;
      }
      const std::optional<std::string> got = s.ok() ? std::optional<std::string>(v) : std::nullopt;
      bool explained = false;
      for (size_t j = lo; j <= hi && !explained; ++j) {
        const auto state = logs_[w].StateAfter(j);
        auto k = state.find(key);
        explained = Explains(k == state.end() ? nullptr : &k->second, got, t1, t2);
      }
      if (!explained) {
        Fail("seed " + std::to_string(seed_) + ": Get " + key + " = " + (got ? *got : "<not found>") +
             ", which no commit in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] explains");
      }
      point_reads_.fetch_add(1);
    }
  }

  // Snapshots, each scanned whole (and probed by Get) and kept for the final check.
  void RunSnapshotReader(int r) {
    std::mt19937_64 rng(seed_ * 1000 + 700 + static_cast<uint64_t>(r));
    while (!writers_done_.load() && !failed_.load()) {
      SnapshotRead read;
      for (const WriterLog& log : logs_) read.lo.push_back(log.acked.load());
      const Snapshot* snap = db_->db()->GetSnapshot();
      for (const WriterLog& log : logs_) read.hi.push_back(log.started.load());
      read.seq = snap->sequence();
      read.t1 = clock_.NowSeconds();
      ReadOptions ro;
      ro.snapshot = snap;
      {
        std::unique_ptr<Iterator> it = db_->db()->NewIterator(ro, cf_);
        for (it->SeekToFirst(); it->Valid(); it->Next())
          read.seen[std::string(it->key())] = std::string(it->value());
        if (!it->status().ok()) Fail("seed " + std::to_string(seed_) + ": scan: " + it->status().ToString());
      }
      // A point read at the same snapshot agrees with the scan (expiry aside).
      const std::string probe =
          WriterKey(static_cast<int>(rng() % logs_.size()), static_cast<int>(rng() % kKeysPerWriter));
      std::string v;
      Status s = db_->db()->Get(ro, cf_, probe, &v);
      read.t2 = clock_.NowSeconds();
      if (read.t1 == read.t2) {
        auto seen = read.seen.find(probe);
        const bool in_scan = seen != read.seen.end();
        if (s.ok() != in_scan || (in_scan && v != seen->second)) {
          Fail("seed " + std::to_string(seed_) + ": snapshot " + std::to_string(read.seq) + ": Get " + probe +
               " disagrees with the scan");
        }
      }
      db_->db()->ReleaseSnapshot(snap);
      std::lock_guard<std::mutex> l(snapshots_mu_);
      if (snapshots_.size() < 400) snapshots_.push_back(std::move(read));
    }
  }

  void CheckSnapshot(const SnapshotRead& read) {
    const std::string where = "seed " + std::to_string(seed_) + ": snapshot at " + std::to_string(read.seq);
    for (size_t w = 0; w < logs_.size(); ++w) {
      std::map<std::string, std::string> range;
      const std::string prefix = WriterKey(static_cast<int>(w), 0).substr(0, 4);
      for (const auto& [k, v] : read.seen) {
        if (k.compare(0, prefix.size(), prefix) == 0) range[k] = v;
      }
      size_t lo = read.lo[w], hi = read.hi[w];
      if (kinds_[w] != WriterKind::kPlain) {
        // Known exactly from the commit sequences, and inside the window.
        const size_t exact = logs_[w].CountAtOrBelow(read.seq);
        if (exact < lo || exact > hi) {
          Fail(where + ": writer " + std::to_string(w) + ": " + std::to_string(exact) +
               " commits at or below it, outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        }
        lo = hi = exact;
      }
      if (!RangeExplained(logs_[w], static_cast<int>(w), range, lo, hi, read.t1, read.t2)) {
        Fail(where + ": writer " + std::to_string(w) + " (" + KindName(kinds_[w]) +
             "): no prefix of its commits in [" + std::to_string(lo) + ", " + std::to_string(hi) +
             "] explains what the snapshot shows");
      }
    }
    for (int c = 0; c < kCounters; ++c) {
      uint64_t expected = 0;
      for (size_t w = 0; w < logs_.size(); ++w) {
        for (const Commit& commit : logs_[w].Commits()) {
          if (commit.seq != 0 && commit.seq <= read.seq) {
            expected += static_cast<uint64_t>(
                std::count(commit.counters.begin(), commit.counters.end(), CounterKey(c)));
          }
        }
      }
      auto it = read.seen.find(CounterKey(c));
      const uint64_t got = it == read.seen.end() ? 0 : std::stoull(it->second);
      if (got != expected) {
        Fail(where + ": " + CounterKey(c) + " = " + std::to_string(got) +
             ", increments committed at or below it: " + std::to_string(expected));
      }
    }
  }

  // With nothing in flight: the database holds exactly the final state of every range and
  // every counter, at the current clock.
  void CheckFinalState(const std::string& when) {
    const uint64_t now = clock_.NowSeconds();
    std::map<std::string, std::string> expected;
    std::map<std::string, uint64_t> counters;
    for (size_t w = 0; w < logs_.size(); ++w) {
      for (const auto& [k, state] : logs_[w].StateAfter(logs_[w].acked.load())) {
        if (state.present && (state.expire_at == 0 || state.expire_at > now)) expected[k] = state.value;
      }
      for (const Commit& c : logs_[w].Commits()) {
        for (const std::string& ctr : c.counters) counters[ctr]++;
      }
    }
    for (const auto& [ctr, n] : counters) expected[ctr] = std::to_string(n);
    std::map<std::string, std::string> got;
    std::unique_ptr<Iterator> it = db_->db()->NewIterator(ReadOptions(), cf_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) got[std::string(it->key())] = std::string(it->value());
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    it.reset();
    for (const auto& [k, v] : expected) {
      auto g = got.find(k);
      EXPECT_TRUE(g != got.end() && g->second == v)
          << "seed " << seed_ << ", " << when << ": " << k << " should be " << v << ", is "
          << (g == got.end() ? "<not found>" : g->second);
      std::string point;
      Status s = db_->db()->Get(ReadOptions(), cf_, k, &point);
      EXPECT_TRUE(s.ok() && point == v)
          << "seed " << seed_ << ", " << when << ": Get " << k << ": " << s.ToString();
    }
    for (const auto& [k, v] : got) {
      EXPECT_TRUE(expected.count(k)) << "seed " << seed_ << ", " << when << ": unexpected " << k << " = "
                                     << v;
    }
  }

  uint64_t seed_ = 0;
  ManualClockEnv clock_{Env::Default()};
  FaultInjectionEnv fault_{&clock_};
  Options options_;
  std::unique_ptr<test::ScratchDir> dir_;
  std::unique_ptr<TransactionDB> db_;
  ColumnFamilyHandle* cf_ = nullptr;

  std::vector<WriterLog> logs_;
  std::vector<WriterKind> kinds_;
  std::atomic<bool> writers_done_{false};
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> point_reads_{0}, retries_{0};
  std::mutex fail_mu_;
  std::vector<std::string> failures_;
  std::mutex snapshots_mu_;
  std::vector<SnapshotRead> snapshots_;
};

TEST_F(ConcurrentModelTest, WritersReadersTtlFlushAndCompactionAgainstTheOracle) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (rerun with TIDESDB_MODEL_SEED=" + std::to_string(seed_) +
               ")");
  const int commits = test::IntFromEnv("TIDESDB_MODEL_COMMITS", 250);
  kinds_ = {WriterKind::kPlain,      WriterKind::kPlain,       WriterKind::kOptimistic,
            WriterKind::kOptimistic, WriterKind::kPessimistic, WriterKind::kPessimistic};
  logs_ = std::vector<WriterLog>(kinds_.size());
  Open();

  std::vector<std::thread> threads;
  std::vector<std::thread> writers;
  for (size_t w = 0; w < kinds_.size(); ++w) {
    writers.emplace_back([this, w, commits] { RunWriter(static_cast<int>(w), kinds_[w], commits); });
  }
  for (int r = 0; r < 2; ++r) threads.emplace_back([this, r] { RunPointReader(r); });
  threads.emplace_back([this] { RunSnapshotReader(0); });
  // The clock: one second every 2 ms, so entries written with a TTL expire while the
  // writers are still at work.
  threads.emplace_back([this] {
    while (!writers_done_.load()) {
      clock_.AdvanceSeconds(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  // Flushes and compactions of the whole key range, on top of the background ones.
  uint64_t flushes = 0, compactions = 0;
  threads.emplace_back([&] {
    std::mt19937_64 rng(seed_ * 1000 + 900);
    while (!writers_done_.load() && !failed_.load()) {
      const bool flush = rng() % 2 == 0;
      Status s = flush ? db_->db()->Flush(FlushOptions(), cf_) : db_->db()->CompactRange(cf_, nullptr);
      if (!s.ok()) Fail("seed " + std::to_string(seed_) + ": flush/compaction: " + s.ToString());
      (flush ? flushes : compactions)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });
  for (auto& t : writers) t.join();
  writers_done_.store(true);
  for (auto& t : threads) t.join();
  for (const std::string& f : failures_) ADD_FAILURE() << f;
  ASSERT_FALSE(failed_.load());

  for (const SnapshotRead& read : snapshots_) CheckSnapshot(read);
  for (const std::string& f : failures_) ADD_FAILURE() << f;
  ASSERT_FALSE(failed_.load());
  std::printf(
      "seed %llu: %zu writers x %d commits (%llu retries), %llu point reads, %zu snapshots checked, %llu "
      "flushes and %llu compactions asked for\n",
      static_cast<unsigned long long>(seed_), kinds_.size(), commits,
      static_cast<unsigned long long>(retries_.load()), static_cast<unsigned long long>(point_reads_.load()),
      snapshots_.size(), static_cast<unsigned long long>(flushes),
      static_cast<unsigned long long>(compactions));

  std::string stats;
  ASSERT_TRUE(db_->db()->GetProperty(nullptr, "tidesdb.stats", &stats));
  auto stat = [&](const std::string& name) {
    const size_t pos = stats.find(" " + name + "=");
    return pos == std::string::npos
               ? std::string("?")
               : stats.substr(pos + name.size() + 2, stats.find(' ', pos + 1) - pos - name.size() - 2);
  };
  std::printf("while they ran: %s flushes, %s compactions, %s trivial moves\n", stat("flushes").c_str(),
              stat("compactions").c_str(), stat("compaction_trivial_moves").c_str());
  CheckFinalState("before reopening");
  ASSERT_TRUE(db_->db()->WaitForBackgroundWork().ok());
  CheckFinalState("after background work");
  Open();  // a clean close and reopen
  CheckFinalState("after reopening");
  // A crash (the process dies; what it wrote reached the OS): everything acknowledged is
  // still there.
  fault_.SetFilesystemActive(false);
  db_.reset();
  fault_.SetFilesystemActive(true);
  Open();
  CheckFinalState("after a crash");
  // And with the clock moved past every TTL: the entries that expire are gone.
  clock_.AdvanceSeconds(100);
  CheckFinalState("after every TTL passed");
}

}  // namespace
}  // namespace tidesdb
