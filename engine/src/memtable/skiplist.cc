#include "memtable/skiplist.h"

namespace tidesdb {

int SkipListRandomHeight(int max_height, int branching) {
  // xorshift64, one state per thread, seeded by splitmix64 from the state's own address
  // (distinct per thread). Heights need to be well spread, not unpredictable.
  thread_local uint64_t state = 0;
  if (state == 0) {
    uint64_t z = reinterpret_cast<uintptr_t>(&state) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    state = (z ^ (z >> 31)) | 1;
  }
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  uint64_t bits = state;
  int height = 1;
  while (height < max_height && bits % branching == 0) {
    ++height;
    bits /= branching;
  }
  return height;
}

}  // namespace tidesdb
