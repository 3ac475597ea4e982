#include "util/filter_key.h"

#include <gtest/gtest.h>

#include <string>

namespace tidesdb {
namespace {

TEST(FilterKey, RangeFilterKeyOnlyForRangesInsideOnePrefix) {
  Slice key;
  // Inside one 3-byte prefix: the limit starts with it, or is its successor.
  EXPECT_TRUE(RangeFilterKey("abc", "abd", 3, &key));
  EXPECT_EQ("abc", key);
  EXPECT_TRUE(RangeFilterKey("abc12", "abc9", 3, &key));
  EXPECT_EQ("abc", key);
  // The key views start, so start must outlive it.
  const std::string all_ones_tail("a\xff\xff", 3);
  EXPECT_TRUE(RangeFilterKey(all_ones_tail, "b", 3, &key));
  EXPECT_EQ(all_ones_tail, key);
  const std::string carry("a\x01\xffz", 4);
  EXPECT_TRUE(RangeFilterKey(carry, std::string("a\x02", 2), 3, &key));
  EXPECT_EQ(std::string("a\x01\xff", 3), key);
  // Not inside one: limits past the successor, a start shorter than the prefix, no limit,
  // a prefix without a successor (all 0xff), no prefix configured.
  EXPECT_FALSE(RangeFilterKey("abc", "abe", 3, &key));
  EXPECT_FALSE(RangeFilterKey("abc", std::string("abd\0", 4), 3, &key));
  EXPECT_FALSE(RangeFilterKey("ab", "ac", 3, &key));
  EXPECT_FALSE(RangeFilterKey("abc", "", 3, &key));
  EXPECT_FALSE(RangeFilterKey(std::string("\xff\xff\xff", 3), std::string("\xff\xff", 2), 3, &key));
  EXPECT_FALSE(RangeFilterKey("abc", "abd", 0, &key));
  EXPECT_FALSE(RangeFilterKey("abc", "b", 3, &key));
}

TEST(FilterKey, FilterKeyIsThePrefixOfLongEnoughKeys) {
  EXPECT_EQ("abc", FilterKey("abcdef", 3));
  EXPECT_EQ("abc", FilterKey("abc", 3));
  EXPECT_EQ("ab", FilterKey("ab", 3));
  EXPECT_EQ("abcdef", FilterKey("abcdef", 0));
}

}  // namespace
}  // namespace tidesdb
