#include "memtable/arena.h"

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
    b->~Block();
    ::operator delete(b);
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
  Block* b = NewBlock(reserve);
  b->used.store(reserve, std::memory_order_relaxed);
  return b->data();
}

void Arena::ReplaceCurrentBlock(Block* full) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_.load(std::memory_order_relaxed) != full) return;  // someone else did it
  current_.store(NewBlock(block_size_), std::memory_order_release);
}

Arena::Block* Arena::NewBlock(size_t capacity) {
  // ::operator new returns memory aligned for max_align_t; the header is a multiple of
  // kMinAlignment, so data() is too.
  static_assert(sizeof(Block) % kMinAlignment == 0);
  size_t total = sizeof(Block) + capacity;
  // Grow the list first so that push_back cannot throw once the block exists.
  if (blocks_.size() == blocks_.capacity()) blocks_.reserve(blocks_.empty() ? 16 : 2 * blocks_.size());
  auto* b = new (::operator new(total)) Block;
  b->capacity = capacity;
  blocks_.push_back(b);
  memory_usage_.fetch_add(total, std::memory_order_relaxed);
  return b;
}

}  // namespace tidesdb
