// slow-fsync-bench: point-read latency under a write load on a device whose fsync is slow.
//
// Every WritableFile::Sync and Env::SyncDir sleeps --fsync_ms (the real fsync is skipped,
// so the delay is the same on every machine). One writer overwrites random keys with
// SyncMode::kNone and a small write buffer, so it rotates the WAL (an fsync of the old WAL,
// the new header and the directory), flushes (SSTable, manifest) and compacts all the
// time; --readers threads Get random keys and time each Get. Prints the Get latency
// percentiles, the writer's Put latency percentiles (each rotation stalls the writer for its
// own fsyncs, one rotation per flush; a Put that also waits for background work's fsyncs,
// such as a flush's manifest edit, shows as more slow Puts than flushes), and how many
// flushes and compactions happened meanwhile.
//
//   slow-fsync-bench [--fsync_ms=20] [--seconds=10] [--readers=1] [--keys=50000]
//                    [--value_size=100] [--write_buffer=262144] [--dir=/tmp/slow-fsync-bench]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "testutil/injecting_env.h"
#include "tidesdb/db.h"
#include "tidesdb/options.h"

namespace {

struct Flags {
  int fsync_ms = 20;
  int seconds = 10;
  int readers = 1;
  int keys = 50000;
  int value_size = 100;
  size_t write_buffer = 256 << 10;
  std::string dir = "/tmp/slow-fsync-bench";
};

bool ParseFlag(const char* arg, const char* name, std::string* out) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *out = arg + n + 1;
  return true;
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%012d", i);
  return buf;
}

double Percentile(const std::vector<uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[i]);
}

uint64_t StatField(const std::string& stats, const char* name) {
  const size_t pos = stats.find(std::string(name) + "=");
  return pos == std::string::npos ? 0
                                  : std::strtoull(stats.c_str() + pos + std::strlen(name) + 1, nullptr, 10);
}

// One line: percentiles of `us` (sorted here), and how many of them took slow_us or more
// and how long those took together, out of `seconds` of `who`'s time.
void PrintLatencies(const char* what, std::vector<uint64_t>* us, uint64_t slow_us, int seconds,
                    const char* who) {
  std::sort(us->begin(), us->end());
  uint64_t slow = 0, slow_total_us = 0;
  for (uint64_t t : *us) {
    if (t < slow_us) continue;
    slow++;
    slow_total_us += t;
  }
  std::printf("%s_us p50=%.0f p99=%.0f p99.9=%.0f max=%.0f; %ss over %" PRIu64 " us: %" PRIu64
              " taking %.2f s of %d %s-seconds\n",
              what, Percentile(*us, 0.50), Percentile(*us, 0.99), Percentile(*us, 0.999),
              us->empty() ? 0.0 : static_cast<double>(us->back()), what, slow_us, slow,
              static_cast<double>(slow_total_us) / 1e6, seconds, who);
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (ParseFlag(argv[i], "--fsync_ms", &v)) {
      f.fsync_ms = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--seconds", &v)) {
      f.seconds = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--readers", &v)) {
      f.readers = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--keys", &v)) {
      f.keys = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--value_size", &v)) {
      f.value_size = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--write_buffer", &v)) {
      f.write_buffer = std::strtoull(v.c_str(), nullptr, 10);
    } else if (ParseFlag(argv[i], "--dir", &v)) {
      f.dir = v;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }

  tidesdb::test::NoSyncEnv no_sync;
  tidesdb::test::InjectingEnv env(&no_sync);
  const uint64_t delay = static_cast<uint64_t>(f.fsync_ms) * 1000;
  std::atomic<uint64_t> fsyncs{0};
  env.SetBefore([&](tidesdb::test::EnvOp op, const std::string&) {
    if (op == tidesdb::test::EnvOp::kSync || op == tidesdb::test::EnvOp::kSyncDir) {
      fsyncs++;
      std::this_thread::sleep_for(std::chrono::microseconds(delay));
    }
    return tidesdb::Status::OK();
  });

  std::system(("rm -rf '" + f.dir + "'").c_str());
  tidesdb::Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.sync_mode = tidesdb::SyncMode::kNone;
  options.log_level = tidesdb::LogLevel::kWarn;
  options.unified_memtable_write_buffer_size = f.write_buffer;
  options.default_cf_options.write_buffer_size = f.write_buffer;
  std::unique_ptr<tidesdb::DB> db;
  tidesdb::Status s = tidesdb::DB::Open(options, f.dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }
  tidesdb::ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  const std::string value(static_cast<size_t>(f.value_size), 'v');
  tidesdb::WriteOptions wo;
  for (int i = 0; i < f.keys; i += 1000) {
    tidesdb::WriteBatch batch;
    for (int k = i; k < std::min(f.keys, i + 1000); ++k) batch.Put(cf, Key(k), value);
    s = db->Write(wo, &batch);
    if (!s.ok()) {
      std::fprintf(stderr, "preload: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  db->Flush(tidesdb::FlushOptions(), cf);
  db->WaitForBackgroundWork();
  std::string before;
  db->GetProperty(nullptr, "tidesdb.stats", &before);
  const uint64_t fsyncs_before = fsyncs.load();

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> writes{0};
  std::vector<uint64_t> put_latencies;
  std::thread writer([&] {
    std::mt19937 rng(1);
    while (!stop.load(std::memory_order_relaxed)) {
      const std::string key = Key(static_cast<int>(rng() % f.keys));
      const auto t0 = std::chrono::steady_clock::now();
      const bool ok = db->Put(wo, cf, key, value).ok();
      const auto t1 = std::chrono::steady_clock::now();
      if (ok) writes++;
      put_latencies.push_back(
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
    }
  });
  std::vector<std::vector<uint64_t>> latencies(static_cast<size_t>(f.readers));
  std::atomic<uint64_t> misses{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < f.readers; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(100 + r);
      std::string got;
      auto& out = latencies[static_cast<size_t>(r)];
      while (!stop.load(std::memory_order_relaxed)) {
        const std::string key = Key(static_cast<int>(rng() % f.keys));
        const auto t0 = std::chrono::steady_clock::now();
        tidesdb::Status g = db->Get(tidesdb::ReadOptions(), cf, key, &got);
        const auto t1 = std::chrono::steady_clock::now();
        if (!g.ok()) misses++;
        out.push_back(
            static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(f.seconds));
  stop = true;
  writer.join();
  for (auto& t : readers) t.join();

  std::vector<uint64_t> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::string after;
  db->GetProperty(nullptr, "tidesdb.stats", &after);
  auto delta = [&](const char* name) { return StatField(after, name) - StatField(before, name); };
  std::printf("fsync_ms=%d seconds=%d readers=%d keys=%d write_buffer=%zu\n", f.fsync_ms, f.seconds,
              f.readers, f.keys, f.write_buffer);
  std::printf("gets=%zu misses=%" PRIu64 " writes=%" PRIu64 " fsyncs=%" PRIu64 " flushes=%" PRIu64
              " compactions=%" PRIu64 "\n",
              all.size(), misses.load(), writes.load(), fsyncs.load() - fsyncs_before, delta("flushes"),
              delta("compactions"));
  // A reader stalled behind an fsync is one slow Get, however long the stall: the count of
  // Gets over half an fsync, and the time spent in them, show what percentiles hide.
  const uint64_t slow_us = delay / 2;
  PrintLatencies("get", &all, slow_us, f.seconds * f.readers, "reader");
  PrintLatencies("put", &put_latencies, slow_us, f.seconds, "writer");
  db.reset();
  std::system(("rm -rf '" + f.dir + "'").c_str());
  return 0;
}
