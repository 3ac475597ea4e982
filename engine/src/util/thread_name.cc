#include "util/thread_name.h"

#include <cstring>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace tidesdb {

namespace {
constexpr size_t kMaxNameBytes = 15;  // Linux: 16 bytes including the terminating NUL
}  // namespace

void SetCurrentThreadName(const char* name) {
#if defined(__linux__)
  char cut[kMaxNameBytes + 1] = {};
  std::strncpy(cut, name, kMaxNameBytes);
  pthread_setname_np(pthread_self(), cut);
#else
  (void)name;
#endif
}

std::string CurrentThreadName() {
#if defined(__linux__)
  char name[kMaxNameBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) == 0) return name;
#endif
  return "";
}

}  // namespace tidesdb
