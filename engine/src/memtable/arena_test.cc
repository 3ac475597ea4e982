#include "memtable/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace tidesdb {

namespace {
bool IsAligned(const void* p, size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }
}  // namespace

TEST(Arena, EmptyUsesNoMemory) {
  Arena arena;
  EXPECT_EQ(arena.MemoryUsage(), 0u);
}

TEST(Arena, SmallAllocationsShareOneBlock) {
  Arena arena(4096);
  std::vector<char*> ptrs;
  for (int i = 1; i <= 50; ++i) {
    char* p = arena.Allocate(i);
    ASSERT_TRUE(IsAligned(p, Arena::kMinAlignment));
    std::memset(p, i, i);
    ptrs.push_back(p);
  }
  // 50 requests of 1..50 bytes (rounded to 8) fit in 4 KiB.
  size_t first_usage = arena.MemoryUsage();
  EXPECT_GE(first_usage, 4096u);
  EXPECT_LT(first_usage, 2 * 4096u);
  for (int i = 1; i <= 50; ++i) {
    for (int j = 0; j < i; ++j) ASSERT_EQ(ptrs[i - 1][j], static_cast<char>(i));
  }
  // Zero-byte requests still get distinct pointers.
  EXPECT_NE(arena.Allocate(0), arena.Allocate(0));
}

TEST(Arena, NewBlockWhenFull) {
  Arena arena(4096);
  arena.Allocate(1000);
  size_t one_block = arena.MemoryUsage();
  for (int i = 0; i < 4; ++i) arena.Allocate(1000);  // 5000 bytes: needs a second block
  EXPECT_GE(arena.MemoryUsage(), 2 * 4096u);
  EXPECT_EQ(arena.MemoryUsage(), 2 * one_block);
}

TEST(Arena, LargeBlocksAreWholeAlignedHugePages) {
  // A memtable's arena (1 MiB blocks): each shared block is one aligned 2 MiB mapping, and
  // its capacity fills it, so 1.5 MiB of small requests still fit in the first block.
  Arena arena(Arena::kHugePageSize / 2);
  char* first = arena.Allocate(64);
  EXPECT_EQ(arena.MemoryUsage(), Arena::kHugePageSize);
  const auto block_start = reinterpret_cast<uintptr_t>(first) & ~(Arena::kHugePageSize - 1);
  EXPECT_LT(reinterpret_cast<uintptr_t>(first) - block_start, 64u);  // just past the header
  char* last = nullptr;
  for (int i = 0; i < 3 * 1024; ++i) last = arena.Allocate(512);
  EXPECT_EQ(arena.MemoryUsage(), Arena::kHugePageSize);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(last) & ~(Arena::kHugePageSize - 1), block_start);
  std::memset(first, 0x5a, 64);
  std::memset(last, 0xa5, 512);
  // The next block is another whole huge page; a dedicated block is not rounded up.
  while (arena.MemoryUsage() == Arena::kHugePageSize) arena.Allocate(4096);
  EXPECT_EQ(arena.MemoryUsage(), 2 * Arena::kHugePageSize);
  char* big = arena.Allocate(Arena::kHugePageSize / 2);
  EXPECT_LT(arena.MemoryUsage(), 2 * Arena::kHugePageSize + Arena::kHugePageSize / 2 + 4096);
  std::memset(big, 0x11, Arena::kHugePageSize / 2);
  EXPECT_EQ(static_cast<unsigned char>(first[63]), 0x5a);
  EXPECT_EQ(static_cast<unsigned char>(last[511]), 0xa5);
}

TEST(Arena, SmallBlocksAreNotRoundedToHugePages) {
  Arena arena(64 << 10);
  arena.Allocate(64);
  EXPECT_GE(arena.MemoryUsage(), size_t{64} << 10);
  EXPECT_LT(arena.MemoryUsage(), (size_t{64} << 10) + 4096);
}

TEST(Arena, LargeAllocationGetsItsOwnBlock) {
  Arena arena(4096);
  char* small = arena.Allocate(16);
  size_t before = arena.MemoryUsage();
  char* big = arena.Allocate(4096 / 4 + 8);  // over a quarter block
  size_t big_usage = arena.MemoryUsage() - before;
  EXPECT_GE(big_usage, 4096u / 4 + 8);
  EXPECT_LT(big_usage, 4096u);  // exactly its size plus a header, not a whole block
  // The shared block is still current: the next small allocation follows the first one.
  char* small2 = arena.Allocate(16);
  EXPECT_EQ(small2, small + 16);
  EXPECT_EQ(arena.MemoryUsage(), before + big_usage);

  // Larger than a whole block works too.
  char* huge = arena.Allocate(3 * 4096);
  std::memset(huge, 0xab, 3 * 4096);
  std::memset(big, 0xcd, 4096 / 4 + 8);
  EXPECT_EQ(static_cast<unsigned char>(huge[3 * 4096 - 1]), 0xab);
}

TEST(Arena, AlignedAllocation) {
  Arena arena(4096);
  for (size_t alignment : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    for (size_t bytes : {1, 3, 8, 17, 100}) {
      arena.Allocate(1);  // disturb the offset
      char* p = arena.AllocateAligned(bytes, alignment);
      EXPECT_TRUE(IsAligned(p, alignment)) << "alignment " << alignment << " bytes " << bytes;
      std::memset(p, 0x5a, bytes);
    }
  }
  // A dedicated block honours alignment as well.
  EXPECT_TRUE(IsAligned(arena.AllocateAligned(3000, 256), 256));
}

TEST(Arena, MinimumBlockSize) {
  Arena arena(10);  // raised to 4 KiB
  EXPECT_EQ(arena.block_size(), 4096u);
  char* p = arena.Allocate(1000);  // would be "large" for a 10-byte block
  std::memset(p, 1, 1000);
  EXPECT_GE(arena.MemoryUsage(), 4096u);
}

// Four threads allocate concurrently (with a small block so that block switches race
// too) and fill each allocation with a pattern naming the thread and the allocation.
// Afterwards every pattern must be intact: no two allocations overlapped.
TEST(Arena, ConcurrentAllocationsDoNotOverlap) {
  Arena arena(4096);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  struct Allocation {
    char* p;
    size_t size;
    char fill;
  };
  std::vector<std::vector<Allocation>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      auto& mine = results[t];
      mine.reserve(kPerThread);
      for (int i = 0; i < kPerThread; ++i) {
        // Mostly small, sometimes over a quarter block (dedicated), sometimes aligned.
        size_t size = (i % 97 == 0) ? 1500 : 1 + rng() % 120;
        char* p = (i % 5 == 0) ? arena.AllocateAligned(size, 64) : arena.Allocate(size);
        if (i % 5 == 0) {
          EXPECT_TRUE(IsAligned(p, 64));
        }
        char fill = static_cast<char>(t * 31 + i);
        std::memset(p, fill, size);
        mine.push_back({p, size, fill});
      }
    });
  }
  for (auto& th : threads) th.join();
  size_t total = 0;
  for (const auto& mine : results) {
    for (const Allocation& a : mine) {
      total += a.size;
      for (size_t j = 0; j < a.size; ++j) ASSERT_EQ(a.p[j], a.fill);
    }
  }
  EXPECT_GE(arena.MemoryUsage(), total);
  // Waste is bounded: rounding, alignment padding and unused block tails.
  EXPECT_LT(arena.MemoryUsage(), 3 * total);
}

}  // namespace tidesdb
