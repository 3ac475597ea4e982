// File access for the tool: every file is opened read-only through Env::Default(), never
// through DB::Open, so a damaged database can be inspected and nothing is ever written.
// Also the report sink that verify and ls print their problems to.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "db/filename.h"
#include "tidesdb/env.h"
#include "tidesdb/status.h"

namespace tidesdb::tool {

// The process's POSIX Env (read calls only are made through it).
Env* ToolEnv();

bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);
// The part of path after the last '/'.
std::string BaseName(const std::string& path);
// dir + "/" + name.
std::string JoinPath(const std::string& dir, const std::string& name);

// Opens path for positioned reads and takes its size.
Status OpenForReading(const std::string& path, std::unique_ptr<RandomAccessFile>* file, uint64_t* size);

// One entry of a database directory.
struct DirEntry {
  std::string name;
  FileType type = FileType::kUnknown;  // kUnknown for names the database does not produce
  uint64_t number = 0;                 // for numbered files
  uint64_t size = 0;
  bool is_directory = false;
};

// The entries of dir sorted by type (CURRENT, manifests, WALs, key logs, value logs, the
// rest) and number.
Status ListDbDir(const std::string& dir, std::vector<DirEntry>* entries);

// Problems found in files, printed as they are found, one line each:
//   error: <file>: offset <n>: <what>      damage; makes verify exit 1
//   warning: <file>: <what>                 worth knowing, not damage (e.g. a torn WAL tail)
//   unsupported: <file>: <what>             a format version newer than this build reads
//                                           (written by a newer TideSQL): not checked, not
//                                           damage; makes verify exit 1
class ProblemSink {
 public:
  explicit ProblemSink(std::ostream* out) : out_(out) {}
  void Error(const std::string& message);
  void Warning(const std::string& message);
  void Unsupported(const std::string& message);
  // A problem from a Status; its message already names the file and offset where the
  // library's readers produced it. NotSupported (a newer format version) is reported as
  // unsupported, everything else as an error.
  void Error(const Status& s);
  uint64_t errors() const { return errors_; }
  uint64_t warnings() const { return warnings_; }
  uint64_t unsupported() const { return unsupported_; }

 private:
  std::ostream* out_;
  uint64_t errors_ = 0;
  uint64_t warnings_ = 0;
  uint64_t unsupported_ = 0;
};

}  // namespace tidesdb::tool
