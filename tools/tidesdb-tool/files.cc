#include "files.h"

#include <sys/stat.h>

#include <algorithm>
#include <tuple>

namespace tidesdb::tool {

Env* ToolEnv() { return Env::Default(); }

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Status OpenForReading(const std::string& path, std::unique_ptr<RandomAccessFile>* file, uint64_t* size) {
  Status s = ToolEnv()->GetFileSize(path, size);
  if (s.ok()) s = ToolEnv()->NewRandomAccessFile(path, file);
  return s;
}

Status ListDbDir(const std::string& dir, std::vector<DirEntry>* entries) {
  entries->clear();
  std::vector<std::string> names;
  Status s = ToolEnv()->GetChildren(dir, &names);
  if (!s.ok()) return s;
  for (const std::string& name : names) {
    DirEntry e;
    e.name = name;
    if (!ParseFileName(name, &e.number, &e.type)) e.type = FileType::kUnknown;
    const std::string path = JoinPath(dir, name);
    e.is_directory = IsDirectory(path);
    if (!e.is_directory && !ToolEnv()->GetFileSize(path, &e.size).ok()) e.size = 0;
    entries->push_back(std::move(e));
  }
  auto rank = [](FileType t) {
    switch (t) {
      case FileType::kCurrent:
        return 0;
      case FileType::kManifest:
        return 1;
      case FileType::kWal:
        return 2;
      case FileType::kKeyLog:
        return 3;
      case FileType::kValueLog:
        return 4;
      default:
        return 5;
    }
  };
  std::sort(entries->begin(), entries->end(), [&](const DirEntry& a, const DirEntry& b) {
    return std::make_tuple(rank(a.type), a.number, a.name) < std::make_tuple(rank(b.type), b.number, b.name);
  });
  return Status::OK();
}

void ProblemSink::Error(const std::string& message) {
  ++errors_;
  *out_ << "error: " << message << "\n";
}

void ProblemSink::Warning(const std::string& message) {
  ++warnings_;
  *out_ << "warning: " << message << "\n";
}

void ProblemSink::Unsupported(const std::string& message) {
  ++unsupported_;
  *out_ << "unsupported: " << message << "\n";
}

void ProblemSink::Error(const Status& s) {
  const std::string message = s.message().empty() ? s.ToString() : s.message();
  s.IsNotSupported() ? Unsupported(message) : Error(message);
}

}  // namespace tidesdb::tool
