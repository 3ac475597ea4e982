#include "process.h"

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace kvbench {
namespace {

uint64_t ReadProcField(const char* path, const std::string& field) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size(), field) == 0)
      return std::strtoull(line.c_str() + field.size(), nullptr, 10);
  }
  return 0;
}

// nftw passes no user pointer; the walk runs in one thread at a time.
uint64_t g_du_total = 0;

int AddBlocks(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F) g_du_total += static_cast<uint64_t>(st->st_blocks) * 512;
  return 0;
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

uint64_t ProcessWriteBytes() { return ReadProcField("/proc/self/io", "write_bytes:"); }

uint64_t CurrentRssKb() { return ReadProcField("/proc/self/status", "VmRSS:"); }

double ProcessCpuSeconds() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  auto seconds = [](const struct timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

uint64_t DiskUsageBytes(const std::string& dir) {
  g_du_total = 0;
  nftw(dir.c_str(), AddBlocks, 16, FTW_PHYS);
  return g_du_total;
}

std::string ChildOutcome::Describe() const {
  if (timed_out) return "timed out (killed)";
  if (exited) return "exit " + std::to_string(exit_code);
  return "killed by signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
}

ChildOutcome RunInChild(const std::function<std::string()>& body, double timeout_seconds) {
  ChildOutcome out;
  int fds[2];
  if (pipe(fds) != 0) {
    out.output = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    out.output = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    std::string result = body();
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(WriteAll(fds[1], result) ? 0 : 1);
  }
  close(fds[1]);

  bool timed_out = false;
  for (;;) {
    int wait_ms = -1;
    if (timeout_seconds > 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed >= timeout_seconds) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>((timeout_seconds - elapsed) * 1000) + 1;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // timeout: re-checked at the top
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or dead)
    out.output.append(buf, static_cast<size_t>(n));
  }
  if (timed_out) kill(pid, SIGKILL);
  close(fds[0]);

  int status = 0;
  struct rusage usage;
  std::memset(&usage, 0, sizeof(usage));
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.timed_out = timed_out;
  out.peak_rss_kb = static_cast<uint64_t>(usage.ru_maxrss);
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.term_signal = WTERMSIG(status);
  }
  return out;
}

}  // namespace kvbench
