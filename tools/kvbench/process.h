// Process-level measurements (/proc, du) and the fork-per-run harness.
//
// Each (engine, workload) run happens in a forked child: the child's peak resident set
// (wait4's ru_maxrss) is then that engine's peak memory alone, a crash or hang in one engine
// does not take the other's results with it, and nothing one run leaves behind (threads,
// caches, allocator state) affects the next.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace kvbench {

// write_bytes of /proc/self/io: bytes this process caused to be sent to the block layer
// (page-cache pages it dirtied), the closest cheap measure of device writes. 0 if the
// kernel does not account I/O per task.
uint64_t ProcessWriteBytes();

// Resident set size of this process now, KiB (VmRSS).
uint64_t CurrentRssKb();

// CPU time (user + system) of every thread of this process so far, seconds. Unlike wall
// time it barely depends on what else the machine runs, so CPU time per operation is the
// steadier number on a shared machine.
double ProcessCpuSeconds();

// Bytes allocated on disk (st_blocks * 512) for every file under dir, as du counts them.
uint64_t DiskUsageBytes(const std::string& dir);

struct ChildOutcome {
  bool timed_out = false;
  bool exited = false;  // exited normally (exit_code valid); otherwise killed by term_signal
  int exit_code = 0;
  int term_signal = 0;
  std::string output;  // what the body returned
  uint64_t peak_rss_kb = 0;
  double wall_seconds = 0;

  bool ok() const { return !timed_out && exited && exit_code == 0; }
  std::string Describe() const;  // "exit 3", "killed by signal 11 (Segmentation fault)", ...
};

// Forks; the child runs body and hands its return value back through a pipe, then exits
// without running the parent's exit handlers. After timeout_seconds (> 0) the child is
// killed. The calling process must be single-threaded.
ChildOutcome RunInChild(const std::function<std::string()>& body, double timeout_seconds);

}  // namespace kvbench
