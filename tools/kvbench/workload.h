// Workloads: what each benchmark row does to an opened engine, and what it measures.
//
// RunWorkload runs one (engine, workload) pair start to finish in the calling process: a
// fresh directory, open, optional preload, the measured phases, flush, close, disk usage.
// kvbench.cc calls it in a forked child per pair (see process.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine.h"

namespace kvbench {

struct BenchConfig {
  uint64_t num = 1000000;             // keys loaded by preloads; key space of random workloads
  int64_t writes = -1;                // ops of fillseq / fillrandom / overwrite (-1: num)
  int64_t reads = -1;                 // Gets of the read workloads (-1: num)
  int64_t seeks = -1;                 // Seeks of seekrandom (-1: num / 10)
  int seek_nexts = 100;               // Next calls after each Seek
  size_t value_size = 100;            // bytes
  int threads = 1;                    // workers of the random workloads (readers in readwhilewriting)
  double duration = 0;                // seconds; caps each measured phase (0: none)
  int batch_size = 1;                 // keys per Write call in fill / overwrite workloads
  uint64_t seed = 301;                // the data and the random streams are functions of this
  bool verify = true;                 // check every value read against the value written
  bool preload_flush = true;          // flush after a preload (false: reads hit the memtable)
  size_t cold_cache_bytes = 8 << 20;  // block cache of readrandom_cold
  int64_t txns = -1;                  // committed transactions of the txn_* workloads (-1: num)
  uint64_t txn_hot_keys = 100;        // accounts of the txn_rmw_hot_* workloads
  EngineConfig engine;

  uint64_t Writes() const { return writes < 0 ? num : static_cast<uint64_t>(writes); }
  uint64_t Reads() const { return reads < 0 ? num : static_cast<uint64_t>(reads); }
  uint64_t Seeks() const { return seeks < 0 ? (num >= 10 ? num / 10 : 1) : static_cast<uint64_t>(seeks); }
  uint64_t Txns() const { return txns < 0 ? num : static_cast<uint64_t>(txns); }
};

struct WorkloadInfo {
  const char* name;
  const char* description;
  bool writes;  // report write amplification
  bool txn;     // a transaction workload (conflict rates are reported)
};

// Every workload kvbench knows, in the order of the default suite.
const std::vector<WorkloadInfo>& AllWorkloads();
const WorkloadInfo* FindWorkload(const std::string& name);

struct PhaseResult {
  std::string name;       // "fill", "load", "read", "scan", ...
  bool summary = false;   // the phase whose ops/s is the workload's summary number
  bool timed_ops = true;  // false: one timing for the whole phase (scans); no percentiles
  uint64_t ops = 0;
  double seconds = 0;
  double p50_us = 0, p99_us = 0, max_us = 0;
  uint64_t found = 0, not_found = 0;
  uint64_t mismatches = 0;  // reads that returned wrong bytes or a wrong found/not-found
  // Transaction phases: ops = committed transactions; attempts that ended in a retryable
  // status (rolled back and run again), by status.
  bool txn = false;
  uint64_t busy = 0, timed_out = 0, deadlocks = 0;
  double cpu_seconds = 0;  // process CPU time during the phase (txn phases; 0: not measured)

  double ops_per_sec() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0.0; }
  uint64_t aborts() const { return busy + timed_out + deadlocks; }
  double cpu_us_per_op() const { return ops > 0 ? cpu_seconds * 1e6 / static_cast<double>(ops) : 0.0; }
  // Aborted attempts / all attempts (committed + aborted).
  double conflict_rate() const {
    const uint64_t attempts = ops + aborts();
    return attempts > 0 ? static_cast<double>(aborts()) / static_cast<double>(attempts) : 0.0;
  }
};

struct RunResult {
  bool ok = false;
  std::string error;  // first failure (engine error or failed verification)
  std::vector<PhaseResult> phases;
  uint64_t disk_bytes = 0;          // allocated bytes under the DB directory after close
  uint64_t io_write_bytes = 0;      // /proc/self/io write_bytes over the whole run
  uint64_t user_bytes_written = 0;  // key + value bytes of every put, key bytes of every delete
  std::string stats;                // KvEngine::StatsLine() before close

  // Parent side (not serialized by the child).
  uint64_t peak_rss_kb = 0;
  double wall_seconds = 0;

  const PhaseResult* SummaryPhase() const;
  std::string Serialize() const;
  static bool Parse(const std::string& text, RunResult* out);
};

// Runs `workload` against `engine` in directory `dir` (created; removed by the caller).
RunResult RunWorkload(KvEngine* engine, const std::string& workload, const std::string& dir,
                      const BenchConfig& config);

}  // namespace kvbench
