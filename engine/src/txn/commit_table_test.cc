#include "txn/commit_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tidesdb {
namespace {

constexpr uint32_t kCf = 3;

uint64_t TestSeed() {
  uint64_t seed = std::random_device()();
  if (const char* env = std::getenv("TIDESDB_TEST_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("seed = %llu (set TIDESDB_TEST_SEED to repeat)\n", static_cast<unsigned long long>(seed));
  return seed;
}

// Room for about n entries with keys of key_size bytes, in a single shard.
CommitTable::Options OneShardFor(size_t n, size_t key_size) {
  CommitTable::Options options;
  options.num_shards = 1;
  options.capacity_bytes = n * (CommitTable::kEntryOverheadBytes + 4 + key_size);
  return options;
}

TEST(CommitTable, ConflictIsACommitAfterTheSnapshot) {
  CommitTable table;
  EXPECT_TRUE(table.Validate(kCf, "k", 0).ok());
  table.RecordCommit(kCf, "k", 10);
  Status s = table.Validate(kCf, "k", 9);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find("write conflict"), std::string::npos);
  EXPECT_TRUE(table.Validate(kCf, "k", 10).ok());  // the snapshot sees that commit
  EXPECT_TRUE(table.Validate(kCf, "k", 11).ok());
  EXPECT_TRUE(table.Validate(kCf, "other", 0).ok());
  EXPECT_TRUE(table.Validate(kCf + 1, "k", 0).ok());  // same key, other column family
  EXPECT_TRUE(table.Validate(kCf, std::string("k\0", 2), 0).ok());
  EXPECT_EQ(table.NumEntries(), 1u);
  EXPECT_EQ(table.MaxLowWaterMark(), 0u);
}

TEST(CommitTable, KeepsTheNewestSequenceOfAKey) {
  CommitTable table;
  table.RecordCommit(kCf, "k", 20);
  table.RecordCommit(kCf, "k", 15);  // recorded late; must not hide the commit at 20
  EXPECT_TRUE(table.Validate(kCf, "k", 18).IsBusy());
  table.RecordCommit(kCf, "k", 30);
  EXPECT_TRUE(table.Validate(kCf, "k", 25).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "k", 30).ok());
  EXPECT_EQ(table.NumEntries(), 1u);
}

TEST(CommitTable, EvictionIsConservative) {
  CommitTable table(OneShardFor(4, 2));
  for (int i = 0; i < 10; ++i) table.RecordCommit(kCf, "k" + std::to_string(i), i + 1);
  EXPECT_EQ(table.NumEntries(), 4u);
  EXPECT_LE(table.ApproximateMemoryUsage(), OneShardFor(4, 2).capacity_bytes);
  EXPECT_EQ(table.MaxLowWaterMark(), 6u);  // k0..k5 (sequences 1..6) were forgotten
  // k0 was committed at 1: a snapshot at 0 conflicts, and still gets Busy.
  EXPECT_TRUE(table.Validate(kCf, "k0", 0).IsBusy());
  // A snapshot at 5 would not conflict with k0, but the table can no longer tell.
  EXPECT_TRUE(table.Validate(kCf, "k0", 5).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "never-written", 5).IsBusy());
  // From the mark up, forgotten commits are all visible to the snapshot.
  EXPECT_TRUE(table.Validate(kCf, "k0", 6).ok());
  EXPECT_TRUE(table.Validate(kCf, "k9", 6).IsBusy());  // still tracked (committed at 10)
  EXPECT_TRUE(table.Validate(kCf, "k9", 10).ok());
}

TEST(CommitTable, RecommittedKeyIsEvictedLast) {
  CommitTable table(OneShardFor(3, 1));
  table.RecordCommit(kCf, "a", 1);
  table.RecordCommit(kCf, "b", 2);
  table.RecordCommit(kCf, "c", 3);
  table.RecordCommit(kCf, "a", 4);  // a is now the newest
  table.RecordCommit(kCf, "d", 5);  // evicts b, the oldest
  EXPECT_EQ(table.MaxLowWaterMark(), 2u);
  EXPECT_TRUE(table.Validate(kCf, "a", 3).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "c", 2).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "b", 2).ok());
}

TEST(CommitTable, EntryLargerThanTheCapacityIsForgottenAtOnce) {
  CommitTable table(OneShardFor(1, 1));
  table.RecordCommit(kCf, std::string(1000, 'x'), 7);
  EXPECT_EQ(table.NumEntries(), 0u);
  EXPECT_EQ(table.ApproximateMemoryUsage(), 0u);
  EXPECT_EQ(table.MaxLowWaterMark(), 7u);
  EXPECT_TRUE(table.Validate(kCf, std::string(1000, 'x'), 6).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, std::string(1000, 'x'), 7).ok());
}

TEST(CommitTable, PruneForgetsWhatNoActiveSnapshotCanConflictWith) {
  CommitTable table;
  table.RecordCommit(kCf, "a", 5);
  table.RecordCommit(kCf, "b", 10);
  table.RecordCommit(kCf, "c", 15);
  const size_t before = table.ApproximateMemoryUsage();
  table.Prune(10);
  EXPECT_EQ(table.NumEntries(), 1u);
  EXPECT_LT(table.ApproximateMemoryUsage(), before);
  EXPECT_LE(table.MaxLowWaterMark(), 10u);
  // Active snapshots are >= 10: they are not made more conservative.
  EXPECT_TRUE(table.Validate(kCf, "a", 10).ok());
  EXPECT_TRUE(table.Validate(kCf, "b", 10).ok());
  EXPECT_TRUE(table.Validate(kCf, "c", 10).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "c", 15).ok());
  // A snapshot older than the pruning point (a caller bug) still cannot miss b's commit.
  EXPECT_TRUE(table.Validate(kCf, "b", 9).IsBusy());
  table.Prune(100);
  EXPECT_EQ(table.NumEntries(), 0u);
  EXPECT_EQ(table.ApproximateMemoryUsage(), 0u);
}

TEST(CommitTable, ValidateAndRecordIsAllOrNothing) {
  CommitTable table;
  table.RecordCommit(kCf, "b", 10);
  int allocations = 0;
  auto allocate = [&] {
    ++allocations;
    return SequenceNumber{20};
  };
  const CommitTable::KeyRef conflicting[] = {{kCf, "a"}, {kCf, "b"}};
  SequenceNumber seq = 0;
  EXPECT_TRUE(table.ValidateAndRecord(conflicting, 5, allocate, &seq).IsBusy());
  EXPECT_EQ(allocations, 0);
  EXPECT_TRUE(table.Validate(kCf, "a", 5).ok());  // a was not recorded

  EXPECT_TRUE(table.ValidateAndRecord(conflicting, 10, allocate, &seq).ok());
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(seq, 20u);
  EXPECT_TRUE(table.Validate(kCf, "a", 19).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "b", 19).IsBusy());
  EXPECT_TRUE(table.Validate(kCf, "b", 20).ok());
}

// Random commits and validations against an oracle that never forgets: the table may
// answer Busy where the oracle sees no conflict only below a low-water mark, and must
// answer Busy wherever the oracle sees one.
TEST(CommitTable, NeverMissesAConflictAgainstAnOracle) {
  std::mt19937_64 rng(TestSeed());
  CommitTable::Options options;
  options.num_shards = 4;
  options.capacity_bytes = 4 * 6 * (CommitTable::kEntryOverheadBytes + 8);
  CommitTable table(options);
  std::map<std::string, SequenceNumber> oracle;  // key -> newest commit
  SequenceNumber last_seq = 0;
  int conservative = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string key = "key" + std::to_string(rng() % 64);
    if (rng() % 2 == 0) {
      // Mostly increasing, sometimes a little out of order.
      SequenceNumber seq = ++last_seq;
      if (seq > 3 && rng() % 8 == 0) seq -= rng() % 3;
      table.RecordCommit(kCf, key, seq);
      SequenceNumber& newest = oracle[key];
      newest = std::max(newest, seq);
    } else {
      const SequenceNumber snapshot = last_seq - std::min<SequenceNumber>(last_seq, rng() % 40);
      auto it = oracle.find(key);
      const bool conflict = it != oracle.end() && it->second > snapshot;
      Status s = table.Validate(kCf, key, snapshot);
      if (conflict) {
        ASSERT_TRUE(s.IsBusy()) << "missed conflict on " << key << " at snapshot " << snapshot;
      } else if (!s.ok()) {
        ASSERT_TRUE(s.IsBusy());
        ASSERT_LT(snapshot, table.MaxLowWaterMark());
        ++conservative;
      }
    }
    if (i % 5000 == 4999) table.Prune(last_seq - 20);
  }
  EXPECT_GT(table.MaxLowWaterMark(), 0u);  // eviction did happen
  std::printf("conservative rejections: %d\n", conservative);
}

// Thousands of keys recorded, recorded again and pruned, so that each shard's index grows,
// shrinks and shifts its probe runs back on every removal: above the prune point, with no
// eviction, the table answers exactly as an oracle, and holds exactly its live keys.
TEST(CommitTable, ExactAboveThePrunePointAsItsIndexGrowsAndShrinks) {
  std::mt19937_64 rng(TestSeed());
  CommitTable::Options options;
  options.num_shards = 2;
  CommitTable table(options);
  std::map<std::string, SequenceNumber> oracle;  // key -> newest commit
  SequenceNumber last_seq = 0, pruned = 0;
  for (int round = 0; round < 6; ++round) {
    // Even rounds record many keys, odd rounds few, so the indexes grow and then shrink.
    const int keys = round % 2 == 0 ? 20000 : 50;
    for (int i = 0; i < 30000; ++i) {
      const std::string key = "k" + std::to_string(rng() % keys);
      table.RecordCommit(kCf, key, ++last_seq);
      oracle[key] = last_seq;
      if (i % 97 == 0) {
        const std::string probe = "k" + std::to_string(rng() % 20000);
        const SequenceNumber snapshot = pruned + rng() % (last_seq - pruned + 1);
        auto it = oracle.find(probe);
        const bool conflict = it != oracle.end() && it->second > snapshot;
        ASSERT_EQ(table.Validate(kCf, probe, snapshot).IsBusy(), conflict) << probe << " at " << snapshot;
      }
    }
    pruned = last_seq - 1000;
    table.Prune(pruned);
    for (auto it = oracle.begin(); it != oracle.end();)
      it = it->second <= pruned ? oracle.erase(it) : std::next(it);
    ASSERT_EQ(table.NumEntries(), oracle.size());
    for (const auto& [key, seq] : oracle) {
      ASSERT_TRUE(table.Validate(kCf, key, seq - 1).IsBusy()) << key;
      ASSERT_TRUE(table.Validate(kCf, key, seq).ok()) << key;
    }
  }
  EXPECT_LE(table.MaxLowWaterMark(), pruned);  // the default capacity evicted nothing
  table.Prune(last_seq);
  EXPECT_EQ(table.NumEntries(), 0u);
  EXPECT_EQ(table.ApproximateMemoryUsage(), 0u);
}

// Many threads run read-modify-write transactions on a few counters, committing through
// ValidateAndRecord, with a small table and periodic pruning. If validation ever let two
// conflicting transactions both commit, an increment would be lost.
TEST(CommitTable, ConcurrentTransactionsLoseNoUpdate) {
  constexpr int kThreads = 8;
  constexpr int kTxnsPerThread = 400;
  constexpr int kKeys = 12;
  const uint64_t seed = TestSeed();
  CommitTable::Options options;
  options.num_shards = 4;
  options.capacity_bytes = 4 * 2 * (CommitTable::kEntryOverheadBytes + 8);
  CommitTable table(options);

  std::mutex db_mu;  // the "database": counters, the last sequence, active snapshots
  SequenceNumber last_seq = 0;
  int values[kKeys] = {};
  std::multiset<SequenceNumber> active;
  std::atomic<int> increments[kKeys] = {};
  std::atomic<int> conflicts{0};

  auto worker = [&](int thread_index) {
    std::mt19937_64 rng(seed + static_cast<uint64_t>(thread_index));
    for (int n = 0; n < kTxnsPerThread; ++n) {
      const int k1 = static_cast<int>(rng() % kKeys);
      const int k2 = static_cast<int>(rng() % kKeys);
      const std::string key1 = "c" + std::to_string(k1), key2 = "c" + std::to_string(k2);
      for (;;) {
        SequenceNumber snapshot;
        int v1, v2;
        std::multiset<SequenceNumber>::iterator registered;
        {
          std::lock_guard<std::mutex> g(db_mu);
          snapshot = last_seq;
          registered = active.insert(snapshot);
          v1 = values[k1];
          v2 = values[k2];
        }
        if (rng() % 2 == 0) std::this_thread::yield();
        const CommitTable::KeyRef keys[] = {{kCf, key1}, {kCf, key2}};
        SequenceNumber commit_seq = 0;
        Status s = table.ValidateAndRecord(
            keys, snapshot,
            [&] {
              // Widens the window between validation and recording, where a missing
              // serialization of committers would show.
              if (rng() % 2 == 0) std::this_thread::yield();
              std::lock_guard<std::mutex> g(db_mu);
              values[k1] = v1 + 1;
              values[k2] = (k1 == k2 ? v1 + 1 : v2 + 1);
              return ++last_seq;
            },
            &commit_seq);
        SequenceNumber oldest;
        {
          std::lock_guard<std::mutex> g(db_mu);
          active.erase(registered);
          oldest = active.empty() ? last_seq : *active.begin();
        }
        if (rng() % 16 == 0) table.Prune(oldest);
        if (s.ok()) {
          increments[k1].fetch_add(1);
          if (k2 != k1) increments[k2].fetch_add(1);
          break;
        }
        ASSERT_TRUE(s.IsBusy()) << s.ToString();
        conflicts.fetch_add(1);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (auto& t : threads) t.join();
  for (int k = 0; k < kKeys; ++k) EXPECT_EQ(values[k], increments[k].load()) << "counter " << k;
  std::printf("conflicts (retried): %d\n", conflicts.load());
}

// Plain RecordCommit / Validate / Prune from many threads at once (for the thread
// sanitizer), with a final check that the newest commit of each key is still detected.
TEST(CommitTable, ConcurrentRecordAndValidate) {
  CommitTable table;
  constexpr int kThreads = 6;
  std::atomic<SequenceNumber> next_seq{1};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3000; ++i) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i % 50);
        const SequenceNumber seq = next_seq.fetch_add(1);
        table.RecordCommit(kCf, key, seq);
        EXPECT_TRUE(table.Validate(kCf, key, seq - 1).IsBusy());
        if (i % 1000 == 999) table.Prune(0);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(table.NumEntries(), static_cast<size_t>(kThreads * 50));
  EXPECT_EQ(table.MaxLowWaterMark(), 0u);
}

}  // namespace
}  // namespace tidesdb
