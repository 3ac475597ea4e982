#include "db/compaction_picker.h"

#include <gtest/gtest.h>

namespace tidesdb {
namespace {

std::shared_ptr<const FileMetaData> File(uint64_t number, const std::string& smallest,
                                         const std::string& largest, uint64_t size, uint64_t entries = 100,
                                         uint64_t deletions = 0) {
  auto f = std::make_shared<FileMetaData>();
  f->file_number = number;
  AppendInternalKey(&f->smallest, smallest, 10, ValueType::kValue);
  AppendInternalKey(&f->largest, largest, 10, ValueType::kValue);
  f->file_size = size;
  f->num_entries = entries;
  f->num_deletions = deletions;
  return f;
}

ColumnFamilyOptions Opts() {
  ColumnFamilyOptions o;
  o.l1_file_count_trigger = 4;
  o.level_size_base = 1000;
  o.level_size_multiplier = 10;
  o.max_levels = 4;
  o.tombstone_density_trigger = 0.5;
  o.tombstone_density_min_entries = 50;
  return o;
}

TEST(CompactionPicker, NothingToDoOnASmallTree) {
  Version v;
  v.levels.resize(4);
  v.levels[0] = {File(1, "a", "z", 100)};
  std::vector<std::string> cursors;
  EXPECT_FALSE(PickCompaction(v, Opts(), &cursors));
}

TEST(CompactionPicker, L0FileCountMovesAllOfL0WithOverlappingL1) {
  Version v;
  v.levels.resize(4);
  v.levels[0] = {File(9, "c", "d", 10), File(8, "a", "b", 10), File(7, "m", "n", 10), File(6, "b", "c", 10)};
  v.levels[1] = {File(1, "a", "a5", 100), File(2, "b5", "e", 100), File(3, "f", "g", 100),
                 File(4, "m", "z", 100)};
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, Opts(), &cursors);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->level, 0);
  EXPECT_EQ(c->output_level, 1);
  EXPECT_EQ(c->upper.size(), 4u);
  std::vector<uint64_t> lower;
  for (auto& f : c->lower) lower.push_back(f->file_number);
  EXPECT_EQ(lower, (std::vector<uint64_t>{1, 2, 3, 4}));  // L0 spans a..n
}

TEST(CompactionPicker, DynamicTargetsFollowTheLastLevel) {
  Version v;
  v.levels.resize(4);
  v.levels[3] = {File(1, "a", "z", 1000000)};
  auto t = LevelTargets(v, Opts());
  EXPECT_EQ(t[3], 1000000u);
  EXPECT_EQ(t[2], 100000u);
  EXPECT_EQ(t[1], 10000u);
}

TEST(CompactionPicker, OversizedLevelPicksRoundRobin) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 3000), File(2, "c", "d", 3000), File(3, "e", "f", 3000)};
  v.levels[2] = {File(4, "a", "c5", 5000)};
  std::vector<std::string> cursors;
  auto c1 = PickCompaction(v, Opts(), &cursors);
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->level, 1);
  EXPECT_EQ(c1->upper[0]->file_number, 1u);
  ASSERT_EQ(c1->lower.size(), 1u);
  auto c2 = PickCompaction(v, Opts(), &cursors);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->upper[0]->file_number, 2u);  // the cursor moved on
  auto c3 = PickCompaction(v, Opts(), &cursors);
  EXPECT_EQ(c3->upper[0]->file_number, 3u);
  EXPECT_TRUE(c3->lower.empty());
}

TEST(CompactionPicker, TombstoneDensityTriggersARewrite) {
  Version v;
  v.levels.resize(4);
  v.levels[3] = {File(1, "a", "m", 100, 1000, 100), File(2, "n", "z", 100, 1000, 900)};
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, Opts(), &cursors);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "tombstone-density");
  EXPECT_EQ(c->upper[0]->file_number, 2u);
  EXPECT_EQ(c->output_level, 3);  // bottom level: rewritten in place
  // Below the minimum entry count nothing is picked.
  v.levels[3] = {File(2, "n", "z", 100, 10, 9)};
  EXPECT_FALSE(PickCompaction(v, Opts(), &cursors));
}

TEST(CompactionPicker, RangeCompactionSelectsOverlaps) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 10), File(2, "c", "d", 10), File(3, "e", "f", 10)};
  v.levels[2] = {File(4, "a", "z", 10)};
  auto c = PickRangeCompaction(v, Opts(), 1, "c", "e");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->upper.size(), 1u);  // c..d; e..f starts at the (exclusive) limit
  EXPECT_EQ(c->upper[0]->file_number, 2u);
  EXPECT_EQ(c->lower.size(), 1u);
  EXPECT_FALSE(PickRangeCompaction(v, Opts(), 1, "x", "y"));
}

}  // namespace
}  // namespace tidesdb
