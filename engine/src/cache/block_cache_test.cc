#include "cache/block_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace tidesdb {
namespace {

constexpr uint64_t kSeed = 77031;

// A stand-in for a decoded block: remembers its key and declared size, so a lookup can
// check it got the value inserted under that key.
struct FakeBlock {
  uint64_t file_number;
  uint64_t offset;
  size_t charge;
  uint64_t version;
};

std::shared_ptr<const FakeBlock> MakeBlock(uint64_t file, uint64_t offset, size_t charge,
                                           uint64_t version = 0) {
  return std::make_shared<const FakeBlock>(FakeBlock{file, offset, charge, version});
}

bool InsertBlock(BlockCache* cache, uint64_t file, uint64_t offset, size_t charge, uint64_t version = 0) {
  return cache->Insert(file, offset, MakeBlock(file, offset, charge, version), charge);
}

TEST(BlockCache, ShardCountFollowsCapacity) {
  EXPECT_EQ(BlockCache(64 << 20, 4).num_shards(), 16);
  EXPECT_EQ(BlockCache(1 << 20, 4).num_shards(), 2);  // each shard keeps >= 512 KiB
  EXPECT_EQ(BlockCache(1000, 4).num_shards(), 1);
  EXPECT_EQ(BlockCache(64 << 20, 0).num_shards(), 1);
  EXPECT_EQ(BlockCache(size_t{1} << 40, 99).num_shards(), 1 << BlockCache::kMaxShardBits);
}

TEST(BlockCache, InsertLookupEraseAndStats) {
  BlockCache cache(1 << 20, 0);
  EXPECT_EQ(cache.Lookup<FakeBlock>(1, 0), nullptr);
  ASSERT_TRUE(InsertBlock(&cache, 1, 0, 100));
  ASSERT_TRUE(InsertBlock(&cache, 1, 4096, 200));
  auto b = cache.Lookup<FakeBlock>(1, 4096);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->offset, 4096u);
  EXPECT_EQ(cache.usage(), 300u);
  EXPECT_EQ(cache.entries(), 2u);

  // Replacing a key swaps the value and its charge.
  ASSERT_TRUE(InsertBlock(&cache, 1, 4096, 50, /*version=*/2));
  EXPECT_EQ(cache.Lookup<FakeBlock>(1, 4096)->version, 2u);
  EXPECT_EQ(cache.usage(), 150u);

  EXPECT_TRUE(cache.Erase(1, 0));
  EXPECT_FALSE(cache.Erase(1, 0));
  EXPECT_EQ(cache.Lookup<FakeBlock>(1, 0), nullptr);
  EXPECT_EQ(cache.usage(), 50u);
  EXPECT_EQ(cache.entries(), 1u);

  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.inserts(), 3u);
  EXPECT_EQ(cache.evictions(), 0u);
  EXPECT_EQ(cache.capacity(), 1u << 20);
}

TEST(BlockCache, EntryLargerThanAShardIsNotCached) {
  BlockCache cache(4 << 20, 2);  // 4 shards of 1 MiB
  ASSERT_EQ(cache.num_shards(), 4);
  EXPECT_TRUE(InsertBlock(&cache, 1, 0, 1 << 20));
  EXPECT_FALSE(InsertBlock(&cache, 1, 1, (1 << 20) + 1));
  EXPECT_EQ(cache.Lookup<FakeBlock>(1, 1), nullptr);
  // A too-large replacement drops the old entry of the key.
  ASSERT_TRUE(InsertBlock(&cache, 2, 0, 10));
  EXPECT_FALSE(InsertBlock(&cache, 2, 0, 2 << 20));
  EXPECT_EQ(cache.Lookup<FakeBlock>(2, 0), nullptr);
  EXPECT_EQ(cache.usage(), size_t{1} << 20);
  EXPECT_FALSE(cache.Insert(3, 0, nullptr, 10));

  BlockCache empty(0);
  EXPECT_FALSE(InsertBlock(&empty, 1, 0, 1));
  EXPECT_EQ(empty.usage(), 0u);
}

TEST(BlockCache, CapacityNeverExceededUnderRandomInserts) {
  std::mt19937_64 rng(kSeed);
  for (size_t capacity : {size_t{3} << 20, size_t{1} << 20, size_t{100000}}) {
    SCOPED_TRACE(capacity);
    BlockCache cache(capacity, 4);
    std::map<std::pair<uint64_t, uint64_t>, size_t> charges;  // last charge inserted per key
    for (int i = 0; i < 20000; ++i) {
      const uint64_t file = rng() % 8, offset = rng() % 512;
      // Mostly block-sized, sometimes tiny, sometimes larger than a shard.
      size_t charge;
      switch (rng() % 10) {
        case 0:
          charge = rng() % 64;
          break;
        case 1:
          charge = rng() % (capacity + 1);
          break;
        default:
          charge = 1 + rng() % 32768;
          break;
      }
      if (InsertBlock(&cache, file, offset, charge)) {
        charges[{file, offset}] = std::max<size_t>(charge, 1);
      } else {
        charges.erase({file, offset});
      }
      ASSERT_LE(cache.usage(), capacity) << "after insert " << i;
      if (rng() % 4 == 0) cache.Lookup<FakeBlock>(rng() % 8, rng() % 512);
    }
    // usage() is exactly the charge of what is resident, and every resident value is the
    // one inserted last under its key.
    size_t resident = 0, count = 0;
    for (const auto& [key, charge] : charges) {
      auto b = cache.Lookup<FakeBlock>(key.first, key.second);
      if (b == nullptr) continue;
      EXPECT_EQ(b->file_number, key.first);
      EXPECT_EQ(b->offset, key.second);
      EXPECT_EQ(std::max<size_t>(b->charge, 1), charge);
      resident += charge;
      ++count;
    }
    EXPECT_EQ(resident, cache.usage());
    EXPECT_EQ(count, cache.entries());
    EXPECT_GT(cache.evictions(), 0u);
  }
}

TEST(BlockCache, HeldValueOutlivesEvictionButStopsCounting) {
  BlockCache cache(1000, 0);
  ASSERT_TRUE(InsertBlock(&cache, 1, 0, 600));
  std::shared_ptr<const FakeBlock> held = cache.Lookup<FakeBlock>(1, 0);
  std::weak_ptr<const FakeBlock> unheld;
  {
    auto b = MakeBlock(1, 1, 300);
    unheld = b;
    ASSERT_TRUE(cache.Insert(1, 1, b, 300));
  }
  // Both entries must go to fit 900 more bytes (the held one after losing its bit).
  ASSERT_TRUE(InsertBlock(&cache, 2, 0, 900));
  EXPECT_EQ(cache.Lookup<FakeBlock>(1, 0), nullptr);
  EXPECT_EQ(cache.usage(), 900u);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->offset, 0u);    // still alive for the reader
  EXPECT_TRUE(unheld.expired());  // freed as soon as the cache let go
}

TEST(BlockCache, ReferencedEntrySurvivesUnreferencedOne) {
  BlockCache cache(300, 0);
  ASSERT_TRUE(InsertBlock(&cache, 1, 0, 100));  // A
  ASSERT_TRUE(InsertBlock(&cache, 1, 1, 100));  // B
  ASSERT_TRUE(InsertBlock(&cache, 1, 2, 100));  // C
  ASSERT_NE(cache.Lookup<FakeBlock>(1, 0), nullptr);
  ASSERT_NE(cache.Lookup<FakeBlock>(1, 2), nullptr);
  ASSERT_TRUE(InsertBlock(&cache, 1, 3, 100));  // evicts B: the only clear bit
  EXPECT_EQ(cache.Lookup<FakeBlock>(1, 1), nullptr);
  EXPECT_NE(cache.Lookup<FakeBlock>(1, 0), nullptr);
  EXPECT_NE(cache.Lookup<FakeBlock>(1, 2), nullptr);
  EXPECT_NE(cache.Lookup<FakeBlock>(1, 3), nullptr);
  EXPECT_EQ(cache.evictions(), 1u);
}

// A hot set read once every few inserts stays resident through a long scan of cold
// blocks that are each read never. One shard, so the hand's path is deterministic: a hot
// entry's bit is cleared when the hand passes, and it is read again long before the hand
// comes around (a revolution takes ~90 inserts; hot keys are read every 10).
TEST(BlockCache, ClockKeepsHotSetThroughColdScan) {
  const size_t kCharge = 1000;
  BlockCache cache(100 * kCharge, 0);
  const int kHot = 10;
  for (int h = 0; h < kHot; ++h) ASSERT_TRUE(InsertBlock(&cache, 1, h, kCharge));
  int hot_misses = 0;
  for (int i = 0; i < 10000; ++i) {
    if (i % 10 == 0) {
      for (int h = 0; h < kHot; ++h) {
        if (cache.Lookup<FakeBlock>(1, h) == nullptr) {
          ++hot_misses;
          InsertBlock(&cache, 1, h, kCharge);
        }
      }
    }
    ASSERT_TRUE(InsertBlock(&cache, 2, i, kCharge));
    ASSERT_LE(cache.usage(), cache.capacity());
  }
  EXPECT_EQ(hot_misses, 0);
  EXPECT_GE(cache.evictions(), 10000u - 90u);
  // Without the reads, the same scan flushes the hot set.
  for (int i = 10000; i < 10300; ++i) ASSERT_TRUE(InsertBlock(&cache, 2, i, kCharge));
  for (int h = 0; h < kHot; ++h) EXPECT_EQ(cache.Lookup<FakeBlock>(1, h), nullptr);
}

// The same property, loosely, across 16 shards with a hashed key distribution.
TEST(BlockCache, ClockKeepsHotSetShardedLoose) {
  const size_t kCharge = 4096;
  BlockCache cache(8 << 20, 4);  // 16 shards x 128 blocks
  ASSERT_EQ(cache.num_shards(), 16);
  const int kHot = 64;
  for (int h = 0; h < kHot; ++h) ASSERT_TRUE(InsertBlock(&cache, 1, h * kCharge, kCharge));
  int hot_lookups = 0, hot_hits = 0;
  for (int i = 0; i < 40000; ++i) {
    if (i % 32 == 0) {
      for (int h = 0; h < kHot; ++h) {
        ++hot_lookups;
        if (cache.Lookup<FakeBlock>(1, h * kCharge) != nullptr) {
          ++hot_hits;
        } else {
          InsertBlock(&cache, 1, h * kCharge, kCharge);
        }
      }
    }
    ASSERT_TRUE(InsertBlock(&cache, 100 + i / 1000, (i % 1000) * kCharge, kCharge));
  }
  EXPECT_GE(hot_hits, hot_lookups * 99 / 100) << hot_hits << " of " << hot_lookups;
  EXPECT_LE(cache.usage(), cache.capacity());
}

TEST(BlockCache, EraseFile) {
  BlockCache cache(8 << 20, 4);
  for (uint64_t f = 1; f <= 5; ++f) {
    for (uint64_t b = 0; b < 20; ++b) ASSERT_TRUE(InsertBlock(&cache, f, b * 4096, 1000 * f));
  }
  EXPECT_EQ(cache.usage(), 20u * 1000 * (1 + 2 + 3 + 4 + 5));
  EXPECT_EQ(cache.EraseFile(3), 20u);
  EXPECT_EQ(cache.EraseFile(3), 0u);
  EXPECT_EQ(cache.EraseFile(99), 0u);
  EXPECT_EQ(cache.usage(), 20u * 1000 * (1 + 2 + 4 + 5));
  for (uint64_t f = 1; f <= 5; ++f) {
    for (uint64_t b = 0; b < 20; ++b) {
      EXPECT_EQ(cache.Lookup<FakeBlock>(f, b * 4096) == nullptr, f == 3) << f << " " << b;
    }
  }
  // Erase from the middle, head and tail of a file's chain, then the rest.
  EXPECT_TRUE(cache.Erase(2, 10 * 4096));
  EXPECT_TRUE(cache.Erase(2, 0));
  EXPECT_TRUE(cache.Erase(2, 19 * 4096));
  EXPECT_EQ(cache.EraseFile(2), 17u);
  EXPECT_EQ(cache.entries(), 60u);
}

// Random operations against a model of what may be resident: the cache may drop anything
// at any time, but must never return a stale or foreign value, nor keep a block of an
// erased file, and its usage must equal the charges of what it holds.
TEST(BlockCache, RandomOperationsAgainstModel) {
  std::mt19937_64 rng(kSeed + 1);
  BlockCache cache(2 << 20, 2);
  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, size_t>> model;  // key -> (version, charge)
  uint64_t version = 0;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t file = rng() % 16, offset = (rng() % 64) * 4096;
    const int op = static_cast<int>(rng() % 100);
    if (op < 45) {
      const size_t charge = 1 + rng() % 40000;
      ++version;
      if (InsertBlock(&cache, file, offset, charge, version)) {
        model[{file, offset}] = {version, charge};
      } else {
        model.erase({file, offset});
      }
    } else if (op < 90) {
      auto b = cache.Lookup<FakeBlock>(file, offset);
      auto it = model.find({file, offset});
      if (b != nullptr) {
        ASSERT_NE(it, model.end()) << "returned a block that was erased or never inserted";
        EXPECT_EQ(b->version, it->second.first);
      }
    } else if (op < 97) {
      cache.Erase(file, offset);
      model.erase({file, offset});
    } else {
      cache.EraseFile(file);
      for (auto it = model.lower_bound({file, 0}); it != model.end() && it->first.first == file;) {
        it = model.erase(it);
      }
    }
    ASSERT_LE(cache.usage(), cache.capacity());
  }
  size_t resident = 0;
  for (const auto& [key, vc] : model) {
    auto b = cache.Lookup<FakeBlock>(key.first, key.second);
    if (b != nullptr) resident += vc.second;
  }
  EXPECT_EQ(resident, cache.usage());
}

// Tens of thousands of tiny entries and no eviction: every entry the model holds must be
// found, which exercises the index's growth, probe runs wrapping around its table and the
// back-shifting of entries on erase.
TEST(BlockCache, ManyEntriesAreAllFoundAfterRandomInsertsAndErases) {
  std::mt19937_64 rng(kSeed + 2);
  BlockCache cache(64 << 20, 2);
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> model;  // key -> version
  uint64_t version = 0;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t file = rng() % 64, offset = (rng() % 2048) * 512;
    const int op = static_cast<int>(rng() % 100);
    if (op < 60) {
      ASSERT_TRUE(InsertBlock(&cache, file, offset, 1, ++version));
      model[{file, offset}] = version;
    } else if (op < 95) {
      cache.Erase(file, offset);
      model.erase({file, offset});
    } else {
      auto b = cache.Lookup<FakeBlock>(file, offset);
      auto it = model.find({file, offset});
      ASSERT_EQ(b != nullptr, it != model.end()) << i;
      if (b != nullptr) {
        ASSERT_EQ(b->version, it->second);
      }
    }
  }
  EXPECT_EQ(cache.entries(), model.size());
  EXPECT_EQ(cache.evictions(), 0u);
  for (const auto& [key, v] : model) {
    auto b = cache.Lookup<FakeBlock>(key.first, key.second);
    ASSERT_NE(b, nullptr) << key.first << "/" << key.second;
    ASSERT_EQ(b->version, v);
  }
  cache.EraseFile(7);
  for (const auto& [key, v] : model) {
    EXPECT_EQ(cache.Lookup<FakeBlock>(key.first, key.second) != nullptr, key.first != 7);
  }
}

TEST(BlockCache, ConcurrentInsertLookupErase) {
  const size_t kCapacity = 4 << 20;
  BlockCache cache(kCapacity, 4);
  std::atomic<int> wrong_values{0}, over_capacity{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(kSeed + 100 + t);
      for (int i = 0; i < 50000; ++i) {
        const uint64_t file = rng() % 32, offset = (rng() % 256) * 4096;
        const int op = static_cast<int>(rng() % 100);
        if (op < 40) {
          InsertBlock(&cache, file, offset, 1 + rng() % 65536);
        } else if (op < 97) {
          auto b = cache.Lookup<FakeBlock>(file, offset);
          if (b != nullptr && (b->file_number != file || b->offset != offset)) ++wrong_values;
        } else if (op < 99) {
          cache.Erase(file, offset);
        } else {
          cache.EraseFile(file);
        }
        // Each shard's usage is bounded at every instant, so any sum of them is too.
        if (cache.usage() > kCapacity) ++over_capacity;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong_values.load(), 0);
  EXPECT_EQ(over_capacity.load(), 0);
  EXPECT_LE(cache.usage(), kCapacity);
  EXPECT_GT(cache.hits(), 0u);
  EXPECT_GT(cache.evictions(), 0u);
}

}  // namespace
}  // namespace tidesdb
