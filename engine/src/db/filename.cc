#include "db/filename.h"

#include <cstdio>

namespace tidesdb {

namespace {
std::string Numbered(const std::string& dbname, uint64_t number, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/%06llu.%s", static_cast<unsigned long long>(number), suffix);
  return dbname + buf;
}

bool ParseNumber(Slice* in, uint64_t* number) {
  uint64_t v = 0;
  size_t digits = 0;
  while (digits < in->size() && (*in)[digits] >= '0' && (*in)[digits] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>((*in)[digits] - '0');
    ++digits;
  }
  if (digits == 0) return false;
  in->remove_prefix(digits);
  *number = v;
  return true;
}
}  // namespace

std::string WalFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "wal");
}
std::string KeyLogFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "klog");
}
std::string ValueLogFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "vlog");
}
std::string TempFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "tmp");
}
std::string ManifestFileName(const std::string& dbname, uint64_t number) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/MANIFEST-%06llu", static_cast<unsigned long long>(number));
  return dbname + buf;
}
std::string CurrentFileName(const std::string& dbname) { return dbname + "/CURRENT"; }
std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }
std::string InfoLogFileName(const std::string& dbname) { return dbname + "/LOG"; }

bool ParseFileName(Slice name, uint64_t* number, FileType* type) {
  if (name == "CURRENT") {
    *number = 0;
    *type = FileType::kCurrent;
    return true;
  }
  if (name == "LOCK") {
    *number = 0;
    *type = FileType::kLock;
    return true;
  }
  if (name == "LOG") {
    *number = 0;
    *type = FileType::kInfoLog;
    return true;
  }
  if (name.starts_with("MANIFEST-")) {
    Slice rest = name.substr(9);
    if (!ParseNumber(&rest, number) || !rest.empty()) return false;
    *type = FileType::kManifest;
    return true;
  }
  Slice rest = name;
  if (!ParseNumber(&rest, number)) return false;
  if (rest == ".wal") {
    *type = FileType::kWal;
  } else if (rest == ".klog") {
    *type = FileType::kKeyLog;
  } else if (rest == ".vlog") {
    *type = FileType::kValueLog;
  } else if (rest == ".tmp") {
    *type = FileType::kTemp;
  } else {
    return false;
  }
  return true;
}

}  // namespace tidesdb
