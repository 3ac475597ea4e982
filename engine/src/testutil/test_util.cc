#include "testutil/test_util.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace tidesdb::test {

namespace fs = std::filesystem;

ScratchDir::ScratchDir(const std::string& tag) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string clean = tag;
  for (char& c : clean) {
    if (c == '/' || c == ' ') c = '_';
  }
  path_ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tidesdb_" + clean + "_" +
          std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(path_, ec);
  fs::create_directories(path_, ec);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

uint64_t SeedFromEnv(const char* var) {
  uint64_t seed;
  const char* v = std::getenv(var);
  if (v != nullptr && *v != '\0') {
    seed = std::strtoull(v, nullptr, 10);
  } else {
    std::random_device rd;
    seed = (uint64_t{rd()} << 32) ^ rd() ^
           static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    seed %= 1000000000000ull;  // short enough to type
  }
  std::printf("seed %llu (rerun with %s=%llu)\n", static_cast<unsigned long long>(seed), var,
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

int IntFromEnv(const char* var, int fallback) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0') return fallback;
  return static_cast<int>(n);
}

std::vector<std::string> FilesWithSuffix(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t FileSizeOrZero(const std::string& path) {
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

Status XorByte(const std::string& path, uint64_t offset, uint8_t mask) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!f) return Status::IOError(path, "cannot open for corruption");
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  if (!f.get(c)) return Status::IOError(path, "offset past end: " + std::to_string(offset));
  c = static_cast<char>(static_cast<uint8_t>(c) ^ mask);
  f.seekp(static_cast<std::streamoff>(offset));
  if (!f.put(c) || !f.flush()) return Status::IOError(path, "cannot write corrupted byte");
  return Status::OK();
}

int ReadByte(const std::string& path, uint64_t offset) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return -1;
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  if (!f.get(c)) return -1;
  return static_cast<uint8_t>(c);
}

Status CopyDirFiles(const std::string& src, const std::string& dst) {
  std::error_code ec;
  fs::remove_all(dst, ec);
  fs::create_directories(dst, ec);
  if (ec) return Status::IOError(dst, ec.message());
  for (const auto& entry : fs::directory_iterator(src, ec)) {
    if (!entry.is_regular_file()) continue;
    fs::copy_file(entry.path(), fs::path(dst) / entry.path().filename(), fs::copy_options::overwrite_existing,
                  ec);
    if (ec) return Status::IOError(entry.path().string(), ec.message());
  }
  if (ec) return Status::IOError(src, ec.message());
  return Status::OK();
}

const char* SyncModeName(SyncMode mode) {
  switch (mode) {
    case SyncMode::kNone:
      return "None";
    case SyncMode::kInterval:
      return "Interval";
    case SyncMode::kFull:
      return "Full";
  }
  return "?";
}

}  // namespace tidesdb::test
