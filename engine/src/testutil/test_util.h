// Small helpers shared by tests: scratch directories, seeds and knobs from environment
// variables, and byte-level file surgery for corruption tests.
//
// Everything here depends only on the Env seam (tidesdb_util), so any module's tests may
// use it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tidesdb/env.h"
#include "tidesdb/options.h"
#include "tidesdb/status.h"

namespace tidesdb::test {

// A fresh, empty directory under $TEST_TMPDIR (or /tmp) whose name holds tag and the pid;
// removed with everything in it by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name (not created).
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The seed in environment variable var if set, else a fresh one; prints it with the line
// that reruns the test with the same seed.
uint64_t SeedFromEnv(const char* var);
// "None", "Interval" or "Full" (test names).
const char* SyncModeName(SyncMode mode);

// The integer in environment variable var, or fallback when unset or not a number.
int IntFromEnv(const char* var, int fallback);

// Names (not paths) of the files in dir whose names end with suffix, sorted.
std::vector<std::string> FilesWithSuffix(const std::string& dir, const std::string& suffix);
uint64_t FileSizeOrZero(const std::string& path);

// XORs the byte at offset of path with mask (nonzero), in place.
Status XorByte(const std::string& path, uint64_t offset, uint8_t mask);
// Reads the byte at offset; -1 if it cannot.
int ReadByte(const std::string& path, uint64_t offset);
// Copies every regular file of src (not recursive) into dst, which is created if missing
// and emptied first.
Status CopyDirFiles(const std::string& src, const std::string& dst);

}  // namespace tidesdb::test
