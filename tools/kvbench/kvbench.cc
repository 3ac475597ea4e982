// kvbench: runs the same key-value workloads against libtidesdb and RocksDB, one engine
// after the other on the same generated data, and reports both side by side.
//
//   kvbench [--flag=value ...]        (kvbench --help lists the flags)
//
// Output: a table with one row per phase of every (workload, engine) run, then one summary
// line per workload, exactly "<workload> <tidesdb ops/s> <rocksdb ops/s> <ratio>" with
// ratio = tidesdb / rocksdb to two decimals ("-" where a side did not run or failed).
// When transaction workloads ran, a block of "conflict-rate <workload> <tidesdb> <rocksdb>"
// lines (aborted attempts / all attempts, in percent) comes just before the summary.
// The exit status is 1 if any run failed (engine error, wrong data read back, crash,
// timeout), 2 on bad flags.
//
// Every run is a forked child (process.h), so the parent never opens a database.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "engine.h"
#include "keys.h"
#include "process.h"
#include "workload.h"

namespace kvbench {
namespace {

struct Flags {
  BenchConfig bench;
  std::vector<std::string> workloads;
  std::vector<std::string> engines = {"tidesdb", "rocksdb"};
  std::string dir;
  bool keep_dirs = false;
  double timeout = 1800;
  std::string suffix;
};

const char* const kUsage = R"(usage: kvbench [--flag=value ...]

Data and operations
  --num=N               keys loaded by preloads; key space of random ops   [1000000]
  --writes=N            ops of fillseq, fillrandom, overwrite             [num]
  --reads=N             gets of the read workloads                        [num]
  --seeks=N             seeks of seekrandom                               [num/10]
  --seek_nexts=N        Next calls after each Seek                        [100]
  --value_size=BYTES    value size (keys are always 16 bytes)             [100]
  --threads=N           threads of the random workloads                   [1]
  --duration=SECONDS    cap on each measured phase, 0 = none              [0]
  --batch_size=N        keys per Write call in the write workloads        [1]
  --seed=N              data and random streams derive from it            [301]
  --verify=0|1          check every value read back                       [1]
  --preload_flush=0|1   flush after the preload; 0 leaves the preloaded keys in
                        the memtable (raise --write_buffer_mb to hold them), so
                        readrandom/seekrandom measure memtable reads      [1]
  --workloads=a,b,...   fillseq,fillrandom,overwrite,readrandom,readrandom_cold,
                        seekrandom,readwhilewriting,deleteheavy       [all of these]
                        txn_rmw_opt,txn_rmw_pess,txn_rmw_hot_opt,txn_rmw_hot_pess
                        (transactions; run only when named)
  --engines=a,b         tidesdb,rocksdb                                   [both]

Transactions (txn_* workloads: transfers between two random accounts)
  --txns=N              committed transactions (all threads)              [num]
  --txn_hot_keys=N      accounts of the txn_rmw_hot_* workloads           [100]
  --txn_isolation=rc|si read committed + GetForUpdate, or snapshot        [rc]
  --lock_timeout_ms=MS  lock wait bound, both engines                     [1000]

Engine configuration (both engines; docs/BENCHMARKS.md has the exact mapping)
  --sync=none|full      fsync on commit                                   [none]
  --compression=none|lz4|zstd|snappy                                      [lz4]
  --cache_mb=MB         block cache                                       [64]
  --cold_cache_mb=MB    block cache of readrandom_cold                    [8]
  --write_buffer_mb=MB  memtable / write buffer                           [64]
  --level_base_mb=MB    target size of level 1                            [256]
  --block_size=BYTES    SSTable data block                                [16384]
  --block_restart_interval=N  keys between a data block's restart points  [16]
  --bloom_bits=N        bloom filter bits per key, 0 = none               [10]
  --bg_threads=N        TidesDB flush + compaction threads; RocksDB jobs 2N [2]
  --unified_memtable=0|1  TidesDB only                                    [1]
  --value_threshold=BYTES TidesDB value-log threshold (and RocksDB blob size) [1024]
  --vlog_gc_threshold=F  TidesDB value_log_gc_threshold: garbage ratio that gets a value
                         log collected; 0 or 1 = no relocation                [0.5]
  --rocksdb_blob_files=0|1 RocksDB integrated BlobDB for values >= threshold [0]

Harness
  --dir=PATH            where databases go ($TMPDIR or /tmp)/kvbench-PID; removed
  --keep_dirs=0|1       keep each run's database directory                [0]
  --timeout=SECONDS     kill a run that takes longer                      [1800]
  --suffix=STR          appended to workload names in the output (e.g. _4k)
)";

bool ParseUnsigned(const std::string& v, uint64_t* out) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::strtoull(v.c_str(), nullptr, 10);
  return true;
}

bool ParseDouble(const std::string& v, double* out) {
  char* end = nullptr;
  *out = std::strtod(v.c_str(), &end);
  return !v.empty() && end != nullptr && *end == '\0' && *out >= 0;
}

std::vector<std::string> SplitList(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    if (comma > start) out.push_back(v.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// Returns an error message, or "" on success.
std::string ParseFlags(int argc, char** argv, Flags* flags) {
  BenchConfig& b = flags->bench;
  EngineConfig& e = b.engine;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.compare(0, 2, "--") != 0 || arg.find('=') == std::string::npos) return "bad argument " + arg;
    const std::string name = arg.substr(2, arg.find('=') - 2);
    const std::string v = arg.substr(arg.find('=') + 1);
    uint64_t u = 0;
    double d = 0;
    auto unsigned_flag = [&](auto* field) {
      if (!ParseUnsigned(v, &u)) return false;
      *field = static_cast<std::remove_reference_t<decltype(*field)>>(u);
      return true;
    };
    auto megabytes = [&](size_t* field) {
      if (!ParseDouble(v, &d)) return false;
      *field = static_cast<size_t>(d * (1 << 20));
      return true;
    };
    auto boolean = [&](bool* field) {
      if (v != "0" && v != "1") return false;
      *field = v == "1";
      return true;
    };
    bool ok = true;
    if (name == "num") {
      ok = unsigned_flag(&b.num) && b.num > 0;
    } else if (name == "writes") {
      ok = unsigned_flag(&b.writes);
    } else if (name == "reads") {
      ok = unsigned_flag(&b.reads);
    } else if (name == "seeks") {
      ok = unsigned_flag(&b.seeks);
    } else if (name == "seek_nexts") {
      ok = unsigned_flag(&b.seek_nexts);
    } else if (name == "value_size") {
      ok = unsigned_flag(&b.value_size);
    } else if (name == "threads") {
      ok = unsigned_flag(&b.threads) && b.threads > 0;
    } else if (name == "duration") {
      ok = ParseDouble(v, &b.duration);
    } else if (name == "batch_size") {
      ok = unsigned_flag(&b.batch_size) && b.batch_size > 0;
    } else if (name == "seed") {
      ok = unsigned_flag(&b.seed);
    } else if (name == "verify") {
      ok = boolean(&b.verify);
    } else if (name == "preload_flush") {
      ok = boolean(&b.preload_flush);
    } else if (name == "txns") {
      ok = unsigned_flag(&b.txns);
    } else if (name == "txn_hot_keys") {
      ok = unsigned_flag(&b.txn_hot_keys);
    } else if (name == "txn_isolation") {
      ok = v == "rc" || v == "si";
      e.txn_isolation = v == "si" ? TxnIsolation::kSnapshot : TxnIsolation::kReadCommitted;
    } else if (name == "lock_timeout_ms") {
      ok = unsigned_flag(&e.lock_timeout_ms);
    } else if (name == "workloads") {
      flags->workloads = SplitList(v);
      for (const std::string& w : flags->workloads) {
        if (FindWorkload(w) == nullptr) return "unknown workload " + w;
      }
    } else if (name == "engines") {
      flags->engines = SplitList(v);
      for (const std::string& en : flags->engines) {
        if (en != "tidesdb" && en != "rocksdb") return "unknown engine " + en;
      }
    } else if (name == "sync") {
      ok = v == "none" || v == "full";
      e.sync = v == "full" ? Sync::kFull : Sync::kNone;
    } else if (name == "compression") {
      static const std::map<std::string, Compression> kNames = {{"none", Compression::kNone},
                                                                {"lz4", Compression::kLZ4},
                                                                {"zstd", Compression::kZstd},
                                                                {"snappy", Compression::kSnappy}};
      auto it = kNames.find(v);
      ok = it != kNames.end();
      if (ok) e.compression = it->second;
    } else if (name == "cache_mb") {
      ok = megabytes(&e.block_cache_bytes);
    } else if (name == "cold_cache_mb") {
      ok = megabytes(&b.cold_cache_bytes);
    } else if (name == "write_buffer_mb") {
      ok = megabytes(&e.write_buffer_bytes) && e.write_buffer_bytes > 0;
    } else if (name == "level_base_mb") {
      ok = megabytes(&e.level_base_bytes) && e.level_base_bytes > 0;
    } else if (name == "block_size") {
      ok = unsigned_flag(&e.block_size) && e.block_size >= 512;
    } else if (name == "block_restart_interval") {
      ok = unsigned_flag(&e.block_restart_interval) && e.block_restart_interval > 0;
    } else if (name == "bloom_bits") {
      ok = unsigned_flag(&e.bloom_bits_per_key);
    } else if (name == "bg_threads") {
      ok = unsigned_flag(&e.background_threads) && e.background_threads > 0;
    } else if (name == "unified_memtable") {
      ok = boolean(&e.unified_memtable);
    } else if (name == "value_threshold") {
      ok = unsigned_flag(&e.value_threshold);
    } else if (name == "vlog_gc_threshold") {
      ok = ParseDouble(v, &e.vlog_gc_threshold) && e.vlog_gc_threshold >= 0 && e.vlog_gc_threshold <= 1;
    } else if (name == "rocksdb_blob_files") {
      ok = boolean(&e.rocksdb_blob_files);
    } else if (name == "dir") {
      flags->dir = v;
      ok = !v.empty();
    } else if (name == "keep_dirs") {
      ok = boolean(&flags->keep_dirs);
    } else if (name == "timeout") {
      ok = ParseDouble(v, &flags->timeout);
    } else if (name == "suffix") {
      flags->suffix = v;
    } else {
      return "unknown flag --" + name + " (--help lists them)";
    }
    if (!ok) return "bad value for --" + name + ": " + v;
  }
  if (flags->workloads.empty()) {
    for (const WorkloadInfo& w : AllWorkloads()) {
      if (!w.txn) flags->workloads.push_back(w.name);
    }
  }
  return "";
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kLZ4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
    case Compression::kSnappy:
      return "snappy";
  }
  return "?";
}

std::string Now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", std::localtime(&t));
  return buf;
}

double Mb(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

void PrintHeader(const Flags& f, bool rocksdb_requested) {
  const BenchConfig& b = f.bench;
  const EngineConfig& e = b.engine;
  std::printf("kvbench %s  host cores=%ld\n", Now().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  if (RocksdbAvailable()) {
    std::printf("engines: TidesDB (this tree) vs RocksDB %s (system librocksdb)\n", RocksdbVersion().c_str());
  } else if (rocksdb_requested) {
    std::printf(
        "engines: TidesDB only -- this kvbench was built without the RocksDB side "
        "(WITH_ROCKSDB_BENCH=OFF or librocksdb-dev not found)\n");
  } else {
    std::printf("engines: TidesDB only (--engines)\n");
  }
  std::printf(
      "data: num=%llu key=16B value=%zuB (~50%% compressible) writes=%llu reads=%llu seeks=%llu "
      "seek_nexts=%d "
      "threads=%d batch=%d duration=%gs seed=%llu verify=%d preload_flush=%d\n",
      static_cast<unsigned long long>(b.num), b.value_size, static_cast<unsigned long long>(b.Writes()),
      static_cast<unsigned long long>(b.Reads()), static_cast<unsigned long long>(b.Seeks()), b.seek_nexts,
      b.threads, b.batch_size, b.duration, static_cast<unsigned long long>(b.seed), b.verify ? 1 : 0,
      b.preload_flush ? 1 : 0);
  std::printf(
      "config: sync=%s compression=%s cache=%gMB cold_cache=%gMB write_buffer=%gMB level_base=%gMB "
      "block=%zuB restart_interval=%d bloom=%d "
      "bits/key bg_threads=%d unified_memtable=%d value_threshold=%zu vlog_gc_threshold=%g "
      "rocksdb_blob_files=%d\n",
      e.sync == Sync::kFull ? "full" : "none", CompressionName(e.compression), Mb(e.block_cache_bytes),
      Mb(b.cold_cache_bytes), Mb(e.write_buffer_bytes), Mb(e.level_base_bytes), e.block_size,
      e.block_restart_interval, e.bloom_bits_per_key, e.background_threads, e.unified_memtable ? 1 : 0,
      e.value_threshold, e.vlog_gc_threshold, e.rocksdb_blob_files ? 1 : 0);
  bool any_txn = false;
  for (const std::string& w : f.workloads) any_txn = any_txn || FindWorkload(w)->txn;
  if (any_txn) {
    std::printf(
        "txn: txns=%llu hot_keys=%llu isolation=%s lock_timeout=%lldms deadlock_detection=on; one op = one "
        "transfer "
        "(GetForUpdate x2, Put x2, Commit) retried until it commits; latency includes the retries; cpu = "
        "process CPU time (all threads) per committed transaction\n",
        static_cast<unsigned long long>(b.Txns()), static_cast<unsigned long long>(b.txn_hot_keys),
        e.txn_isolation == TxnIsolation::kSnapshot ? "snapshot" : "read-committed",
        static_cast<long long>(e.lock_timeout_ms));
  }
  std::printf("baseline RSS each forked run starts from: %.1f MB\n",
              static_cast<double>(CurrentRssKb()) / 1024);
  std::printf(
      "columns: ops/s of each phase (* = the workload's summary phase); latency percentiles per op in us; "
      "disk = du "
      "of the DB dir after flush+close; wamp = device bytes written (/proc/self/io write_bytes, whole run "
      "incl. "
      "preload and final flush) / user key+value bytes written, approximate; rss = peak RSS of the run's "
      "process\n\n");
  std::printf("%-18s %-8s %-14s %10s %8s %10s %8s %8s %9s %8s %6s %7s  %s\n", "workload", "engine", "phase",
              "ops", "secs", "ops/s", "p50us", "p99us", "maxus", "disk_MB", "wamp", "rss_MB", "notes");
}

void PrintRun(const std::string& workload, const std::string& engine, const RunResult& r, bool writes,
              const ChildOutcome& child) {
  bool first = true;
  for (const PhaseResult& p : r.phases) {
    std::string phase = p.name + (p.summary ? "*" : "");
    char lat[64] = "";
    if (p.timed_ops) {
      std::snprintf(lat, sizeof(lat), "%8.2f %8.2f %9.1f", p.p50_us, p.p99_us, p.max_us);
    } else {
      std::snprintf(lat, sizeof(lat), "%8s %8s %9s", "-", "-", "-");
    }
    std::string notes;
    if (p.not_found > 0) notes += "not_found=" + std::to_string(p.not_found) + " ";
    if (p.mismatches > 0) notes += "MISMATCHES=" + std::to_string(p.mismatches) + " ";
    if (p.txn) {
      char buf[200];
      std::snprintf(buf, sizeof(buf),
                    "cpu=%.1fus/op conflict=%.2f%% aborts=%llu (busy=%llu timeout=%llu deadlock=%llu) ",
                    p.cpu_us_per_op(), 100.0 * p.conflict_rate(), static_cast<unsigned long long>(p.aborts()),
                    static_cast<unsigned long long>(p.busy), static_cast<unsigned long long>(p.timed_out),
                    static_cast<unsigned long long>(p.deadlocks));
      notes += buf;
    }
    if (first) {
      char wamp[16] = "-";
      if (writes && r.user_bytes_written > 0 && r.io_write_bytes > 0) {
        std::snprintf(wamp, sizeof(wamp), "%.2f",
                      static_cast<double>(r.io_write_bytes) / static_cast<double>(r.user_bytes_written));
      }
      std::printf("%-18s %-8s %-14s %10llu %8.2f %10.0f %s %8.1f %6s %7.1f  %s\n", workload.c_str(),
                  engine.c_str(), phase.c_str(), static_cast<unsigned long long>(p.ops), p.seconds,
                  p.ops_per_sec(), lat, Mb(r.disk_bytes), wamp, static_cast<double>(child.peak_rss_kb) / 1024,
                  notes.c_str());
    } else {
      std::printf("%-18s %-8s %-14s %10llu %8.2f %10.0f %s %8s %6s %7s  %s\n", "", "", phase.c_str(),
                  static_cast<unsigned long long>(p.ops), p.seconds, p.ops_per_sec(), lat, "", "", "",
                  notes.c_str());
    }
    first = false;
  }
  if (r.phases.empty()) {
    std::printf("%-18s %-8s %-14s %10s %8s %10s %8s %8s %9s %8s %6s %7.1f\n", workload.c_str(),
                engine.c_str(), "-", "-", "-", "-", "-", "-", "-", "-", "-",
                static_cast<double>(child.peak_rss_kb) / 1024);
  }
  if (!r.stats.empty()) std::printf("%-18s %-8s   %s\n", "", "", r.stats.c_str());
  if (!child.ok()) {
    std::printf("%-18s %-8s   FAILED: run process %s%s%s\n", "", "", child.Describe().c_str(),
                r.error.empty() ? "" : "; ", r.error.c_str());
  } else if (!r.ok) {
    std::printf("%-18s %-8s   FAILED: %s\n", "", "", r.error.c_str());
  }
  std::fflush(stdout);
}

std::string FormatOps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

int Main(int argc, char** argv) {
  Flags flags;
  std::string err = ParseFlags(argc, argv, &flags);
  if (!err.empty()) {
    std::fprintf(stderr, "kvbench: %s\n", err.c_str());
    return 2;
  }
  bool rocksdb_requested = false;
  std::vector<std::string> engines;
  for (const std::string& e : flags.engines) {
    if (e == "rocksdb") {
      rocksdb_requested = true;
      if (!RocksdbAvailable()) continue;
    }
    engines.push_back(e);
  }

  bool own_dir = false;
  if (flags.dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    flags.dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kvbench-" + std::to_string(getpid());
    own_dir = true;
  }
  std::error_code ec;
  std::filesystem::create_directories(flags.dir, ec);
  if (ec) {
    std::fprintf(stderr, "kvbench: cannot create %s: %s\n", flags.dir.c_str(), ec.message().c_str());
    return 2;
  }

  PrintHeader(flags, rocksdb_requested);

  // ops/s of each workload's summary phase, by engine; absent if the run failed.
  std::map<std::string, std::map<std::string, double>> summary;
  // Conflict rate of each transaction workload's summary phase, by engine.
  std::map<std::string, std::map<std::string, double>> conflicts;
  bool any_failed = false;
  for (const std::string& workload : flags.workloads) {
    const WorkloadInfo* info = FindWorkload(workload);
    for (const std::string& engine_name : engines) {
      const std::string run_dir = flags.dir + "/" + engine_name + "-" + workload;
      std::fprintf(stderr, "kvbench: %s %s ...\n", engine_name.c_str(), workload.c_str());
      ChildOutcome child = RunInChild(
          [&]() {
            std::unique_ptr<KvEngine> engine =
                engine_name == "tidesdb" ? NewTidesdbEngine() : NewRocksdbEngine();
            return RunWorkload(engine.get(), workload, run_dir, flags.bench).Serialize();
          },
          flags.timeout);
      RunResult result;
      if (!RunResult::Parse(child.output, &result)) {
        result = RunResult();
        result.ok = false;
      }
      result.peak_rss_kb = child.peak_rss_kb;
      result.wall_seconds = child.wall_seconds;
      if (!flags.keep_dirs) std::filesystem::remove_all(run_dir, ec);
      PrintRun(workload + flags.suffix, engine_name, result, info->writes, child);
      const PhaseResult* p = result.SummaryPhase();
      if (child.ok() && result.ok && p != nullptr) {
        summary[workload][engine_name] = p->ops_per_sec();
        if (p->txn) conflicts[workload][engine_name] = p->conflict_rate();
      } else {
        any_failed = true;
      }
    }
  }
  if (own_dir && !flags.keep_dirs) std::filesystem::remove_all(flags.dir, ec);

  bool any_txn = false;
  for (const std::string& workload : flags.workloads) any_txn = any_txn || FindWorkload(workload)->txn;
  if (any_txn) {
    std::printf(
        "\n# conflict rates: conflict-rate <workload> <tidesdb aborts/attempts> <rocksdb aborts/attempts>\n");
    for (const std::string& workload : flags.workloads) {
      if (!FindWorkload(workload)->txn) continue;
      const auto& by_engine = conflicts[workload];
      auto rate = [&](const char* engine) {
        auto it = by_engine.find(engine);
        if (it == by_engine.end()) return std::string("-");
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.2f%%", 100.0 * it->second);
        return std::string(buf);
      };
      std::printf("conflict-rate %s %s %s\n", (workload + flags.suffix).c_str(), rate("tidesdb").c_str(),
                  rate("rocksdb").c_str());
    }
  }

  std::printf("\n# summary: <workload> <tidesdb ops/s> <rocksdb ops/s> <ratio tidesdb/rocksdb>\n");
  for (const std::string& workload : flags.workloads) {
    const auto& by_engine = summary[workload];
    auto t = by_engine.find("tidesdb");
    auto r = by_engine.find("rocksdb");
    std::string ratio = "-";
    if (t != by_engine.end() && r != by_engine.end() && r->second > 0) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f", t->second / r->second);
      ratio = buf;
    }
    std::printf("%s %s %s %s\n", (workload + flags.suffix).c_str(),
                t != by_engine.end() ? FormatOps(t->second).c_str() : "-",
                r != by_engine.end() ? FormatOps(r->second).c_str() : "-", ratio.c_str());
  }
  return any_failed ? 1 : 0;
}

}  // namespace
}  // namespace kvbench

int main(int argc, char** argv) { return kvbench::Main(argc, argv); }
