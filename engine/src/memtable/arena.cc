#include "memtable/arena.h"

#include <sys/mman.h>

#include <cassert>
#include <cstdint>
#include <new>

namespace tidesdb {

// A block is this header followed by `capacity` bytes. `used` may run past capacity: a
// thread whose fetch_add overshoots simply moves on to a new block, and the overshoot is
// bounded by one request per thread.
struct Arena::Block {
  std::atomic<size_t> used{0};
  size_t capacity = 0;
  size_t mapped = 0;  // bytes mapped for a huge-page block (header included); 0: from operator new

  char* data() { return reinterpret_cast<char*>(this + 1); }
};

static_assert(alignof(std::atomic<void*>) <= Arena::kMinAlignment);

namespace {
constexpr size_t RoundUp(size_t n, size_t to) { return (n + to - 1) & ~(to - 1); }
}  // namespace

Arena::Arena(size_t block_size)
    : block_size_(RoundUp(block_size < 4096 ? 4096 : block_size, kMinAlignment)) {}

Arena::~Arena() {
  for (Block* b : blocks_) {
    const size_t mapped = b->mapped;
    b->~Block();
    if (mapped != 0) {
      munmap(b, mapped);
    } else {
      ::operator delete(b);
    }
  }
}

char* Arena::Allocate(size_t bytes) {
  size_t reserve = RoundUp(bytes == 0 ? 1 : bytes, kMinAlignment);
  if (reserve > block_size_ / 4) return AllocateDedicated(reserve);
  return AllocateShared(reserve);
}

char* Arena::AllocateAligned(size_t bytes, size_t alignment) {
  assert(alignment != 0 && (alignment & (alignment - 1)) == 0);
  if (alignment <= kMinAlignment) return Allocate(bytes);
  // Every block offset is a multiple of kMinAlignment, so at most alignment - kMinAlignment
  // bytes of padding put the start on the boundary.
  size_t reserve = RoundUp(bytes == 0 ? 1 : bytes, kMinAlignment) + alignment - kMinAlignment;
  char* p = reserve > block_size_ / 4 ? AllocateDedicated(reserve) : AllocateShared(reserve);
  auto addr = reinterpret_cast<uintptr_t>(p);
  return p + (RoundUp(addr, alignment) - addr);
}

char* Arena::AllocateShared(size_t reserve) {
  for (;;) {
    Block* b = current_.load(std::memory_order_acquire);
    if (b != nullptr) {
      size_t offset = b->used.fetch_add(reserve, std::memory_order_relaxed);
      if (offset + reserve <= b->capacity) return b->data() + offset;
    }
    ReplaceCurrentBlock(b);
  }
}

char* Arena::AllocateDedicated(size_t reserve) {
  std::lock_guard<std::mutex> lock(mu_);
  Block* b = NewBlock(reserve, /*shared=*/false);
  b->used.store(reserve, std::memory_order_relaxed);
  return b->data();
}

void Arena::ReplaceCurrentBlock(Block* full) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_.load(std::memory_order_relaxed) != full) return;  // someone else did it
  current_.store(NewBlock(block_size_, /*shared=*/true), std::memory_order_release);
}

// `bytes` (a multiple of kHugePageSize) of anonymous memory aligned to kHugePageSize and
// advised to the kernel as huge pages; nullptr if the kernel refuses the mapping. A memtable's
// searches visit nodes all over its arena: on 4 KiB pages most visits also miss the TLB.
void* Arena::MapHugePages(size_t bytes) {
  // Map one huge page more than needed and trim the unaligned ends.
  const size_t span = bytes + kHugePageSize;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start, kHugePageSize);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + span;
  if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  void* memory = reinterpret_cast<void*>(aligned);
  // Advice only: without transparent huge pages the block is ordinary memory.
  madvise(memory, bytes, MADV_HUGEPAGE);
  return memory;
}

Arena::Block* Arena::NewBlock(size_t capacity, bool shared) {
  // ::operator new returns memory aligned for max_align_t; the header is a multiple of
  // kMinAlignment, so data() is too.
  static_assert(sizeof(Block) % kMinAlignment == 0);
  size_t total = sizeof(Block) + capacity;
  // Grow the list first so that push_back cannot throw once the block exists.
  if (blocks_.size() == blocks_.capacity()) blocks_.reserve(blocks_.empty() ? 16 : 2 * blocks_.size());
  const bool huge = shared && block_size_ >= kHugePageSize / 2;
  void* memory = nullptr;
  if (huge) {
    total = RoundUp(total, kHugePageSize);
    memory = MapHugePages(total);
  }
  auto* b = new (memory != nullptr ? memory : ::operator new(total)) Block;
  b->capacity = total - sizeof(Block);
  if (memory != nullptr) b->mapped = total;
  blocks_.push_back(b);
  memory_usage_.fetch_add(total, std::memory_order_relaxed);
  return b;
}

}  // namespace tidesdb
