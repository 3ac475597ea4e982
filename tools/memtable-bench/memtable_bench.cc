// memtable-bench: what one memtable Add and Get cost on a memtable shaped like the plugin's
// under sysbench: user keys of a 4-byte index id and a 4-byte row id, ~200-byte rows, 8
// tables' column families in one (unified) memtable, random order. The searches' cache
// misses grow with the entries already there, so each benchmark runs at a few sizes.
//
//   memtable-bench [--benchmark_filter=...] [--benchmark_repetitions=N]
//
// Add: every iteration fills a fresh memtable with `entries` entries; the rate is entries
// per second. Get: one memtable of `entries` entries, random present keys.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "db/dbformat.h"
#include "memtable/memtable.h"
#include "util/coding.h"

namespace tidesdb {
namespace {

constexpr uint32_t kColumnFamilies = 8;
constexpr size_t kValueBytes = 200;

struct Key {
  uint32_t cf_id;
  std::string user_key;
};

// `n` distinct keys in random order: index id 1 then a big-endian row id, spread over the
// column families the way sysbench's tables spread them.
std::vector<Key> RandomKeys(size_t n, uint64_t seed) {
  std::vector<Key> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string k;
    PutFixed32(&k, 1);
    char row[4];
    EncodeBigEndian32(row, static_cast<uint32_t>(i / kColumnFamilies));
    k.append(row, sizeof(row));
    keys.push_back(Key{static_cast<uint32_t>(1 + i % kColumnFamilies), std::move(k)});
  }
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(seed));
  return keys;
}

std::unique_ptr<MemTable> Fill(const std::vector<Key>& keys, const std::string& value) {
  auto mem = std::make_unique<MemTable>(Arena::kDefaultBlockSize, 1 << 20);
  SequenceNumber seq = 1;
  for (const Key& k : keys) mem->Add(k.cf_id, seq++, ValueType::kValue, k.user_key, value, 4);
  return mem;
}

void BM_Add(benchmark::State& state) {
  const auto keys = RandomKeys(static_cast<size_t>(state.range(0)), 301);
  const std::string value(kValueBytes, 'v');
  for (auto _ : state) {
    auto mem = Fill(keys, value);
    benchmark::DoNotOptimize(mem.get());
    state.PauseTiming();
    mem.reset();  // freeing the arena is not an Add
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}

void BM_Get(benchmark::State& state) {
  const auto keys = RandomKeys(static_cast<size_t>(state.range(0)), 301);
  const auto mem = Fill(keys, std::string(kValueBytes, 'v'));
  std::mt19937_64 rnd(7);
  std::uniform_int_distribution<size_t> pick(0, keys.size() - 1);
  for (auto _ : state) {
    const Key& k = keys[pick(rnd)];
    ValueType type;
    Slice value;
    benchmark::DoNotOptimize(mem->Get(k.cf_id, k.user_key, kMaxSequence, &type, &value));
  }
  state.SetItemsProcessed(state.iterations());
}

// 64 MiB (the plugin's unified memtable) holds about 250k of these entries, 16 MiB 64k:
// the sizes step by 4 from 4 MiB to 256 MiB worth.
BENCHMARK(BM_Add)->RangeMultiplier(4)->Range(16 << 10, 1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Get)->RangeMultiplier(4)->Range(16 << 10, 1 << 20);

}  // namespace
}  // namespace tidesdb

BENCHMARK_MAIN();
