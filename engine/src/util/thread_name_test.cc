#include "util/thread_name.h"

#include <thread>

#include <gtest/gtest.h>

namespace tidesdb {
namespace {

TEST(ThreadNameTest, NamesTheCallingThreadOnly) {
  const std::string before = CurrentThreadName();
  std::string inside;
  std::thread t([&] {
    SetCurrentThreadName("tdb-test");
    inside = CurrentThreadName();
  });
  t.join();
#if defined(__linux__)
  EXPECT_EQ(inside, "tdb-test");
#endif
  EXPECT_EQ(CurrentThreadName(), before);
}

TEST(ThreadNameTest, CutsNamesLongerThanTheKernelKeeps) {
  std::string inside;
  std::thread t([&] {
    SetCurrentThreadName("tdb-a-name-longer-than-fifteen-bytes");
    inside = CurrentThreadName();
  });
  t.join();
#if defined(__linux__)
  EXPECT_EQ(inside, "tdb-a-name-long");
#endif
}

}  // namespace
}  // namespace tidesdb
