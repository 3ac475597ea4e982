#include "util/thread_name.h"

#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace tidesdb {
namespace {

// Names a new thread `name` and returns the name that thread then reads back.
std::string NameReadBackInAThreadNamed(const char* name) {
  std::string inside;
  std::thread t([&] {
    SetCurrentThreadName(name);
    inside = CurrentThreadName();
  });
  t.join();
  return inside;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnly) {
  const std::string before = CurrentThreadName();
  const std::string inside = NameReadBackInAThreadNamed("tdb-test");
#if defined(__linux__)
  EXPECT_EQ(inside, "tdb-test");
#endif
  EXPECT_EQ(CurrentThreadName(), before);
}

TEST(ThreadNameTest, CutsNamesLongerThanTheKernelKeeps) {
  const std::string inside = NameReadBackInAThreadNamed("tdb-a-name-longer-than-fifteen-bytes");
#if defined(__linux__)
  EXPECT_EQ(inside, "tdb-a-name-long");
#endif
}

}  // namespace
}  // namespace tidesdb
