#include "db/compaction_picker.h"

#include <gtest/gtest.h>

#include "sst/value_log.h"

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

std::shared_ptr<const FileMetaData> FileWithRefs(uint64_t number, const std::string& smallest,
                                                 const std::string& largest,
                                                 std::vector<FileMetaData::ValueLogRef> refs) {
  auto f = std::make_shared<FileMetaData>(*File(number, smallest, largest, 100));
  f->value_log_refs = std::move(refs);
  return f;
}

std::shared_ptr<const ValueLogMeta> Vlog(uint64_t number, uint64_t record_bytes) {
  return std::make_shared<ValueLogMeta>(ValueLogMeta{number, kValueLogHeaderSize + record_bytes});
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

TEST(CompactionPicker, L0SizeRatioMergesAnL0SmallBesideTheL1ItOverlaps) {
  ColumnFamilyOptions o = Opts();
  o.l0_compaction_size_ratio = 10;
  Version v;
  v.levels.resize(4);
  v.levels[0] = {File(9, "c", "d", 10)};
  // L1 stays under its target (1000), so only the ratio can pick.
  v.levels[1] = {File(1, "a", "b", 100), File(2, "c", "e", 100), File(3, "f", "z", 100)};
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "l0-size-ratio");
  EXPECT_EQ(c->level, 0);
  EXPECT_EQ(c->output_level, 1);
  ASSERT_EQ(c->upper.size(), 1u);
  ASSERT_EQ(c->lower.size(), 1u);
  EXPECT_EQ(c->lower[0]->file_number, 2u);  // only the overlapped bytes count
  EXPECT_FALSE(c->move);

  // The overlapped L1 bytes are more than ten times L0's: wait for the file count.
  v.levels[1][1] = File(2, "c", "e", 101);
  EXPECT_FALSE(PickCompaction(v, o, &cursors));
  // Exactly ten times: merged.
  v.levels[1][1] = File(2, "c", "e", 100);
  EXPECT_TRUE(PickCompaction(v, o, &cursors));
  // Off (0, the default): only the file count.
  o.l0_compaction_size_ratio = 0;
  EXPECT_FALSE(PickCompaction(v, o, &cursors));

  // An L0 over no L1 file goes down at once (here merged: too small to move).
  o.l0_compaction_size_ratio = 10;
  v.levels[0] = {File(9, "c1", "c2", 10)};
  v.levels[1] = {File(1, "a", "b", 100), File(3, "f", "z", 100)};
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "l0-size-ratio");
  EXPECT_TRUE(c->lower.empty());
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

namespace tidesdb {
namespace {

// Value logs 50 (1000 record bytes) and 60 (1000) and 70 (500, unreferenced).
Version GcVersion() {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {FileWithRefs(1, "a", "f", {{50, 300}, {60, 100}}), FileWithRefs(2, "g", "m", {{50, 100}})};
  v.levels[2] = {FileWithRefs(3, "a", "z", {{50, 200}, {60, 850}})};
  v.value_logs = {Vlog(50, 1000), Vlog(60, 1000), Vlog(70, 500)};
  return v;
}

TEST(ValueLogGcPicker, UsageSumsTheReferencesOfEveryFile) {
  std::vector<ValueLogUsage> u;
  ASSERT_TRUE(ValueLogUsages(GcVersion(), &u));
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].live_bytes, 600u);
  EXPECT_DOUBLE_EQ(u[0].GarbageRatio(), 0.4);
  EXPECT_EQ(u[1].live_bytes, 950u);
  EXPECT_EQ(u[2].live_bytes, 0u);
  EXPECT_DOUBLE_EQ(u[2].GarbageRatio(), 1.0);
  EXPECT_EQ(DeadValueLogs(GcVersion()), (std::vector<uint64_t>{70}));
}

TEST(ValueLogGcPicker, ThresholdSelectsLogsToCollect) {
  ColumnFamilyOptions o = Opts();
  o.value_log_gc_threshold = 0.5;
  EXPECT_TRUE(ValueLogsToCollect(GcVersion(), o).empty()) << "40% garbage is below 50%";
  o.value_log_gc_threshold = 0.4;
  EXPECT_EQ(ValueLogsToCollect(GcVersion(), o), (std::vector<uint64_t>{50}));
  o.value_log_gc_threshold = 0.01;
  EXPECT_EQ(ValueLogsToCollect(GcVersion(), o), (std::vector<uint64_t>{50, 60})) << "70 is dead, not moved";
  EXPECT_EQ(ValueLogsToCollect(GcVersion(), o, {50}), (std::vector<uint64_t>{60}));
  for (double off : {0.0, -1.0, 1.0, 2.0}) {
    o.value_log_gc_threshold = off;
    EXPECT_TRUE(ValueLogsToCollect(GcVersion(), o).empty()) << off;
  }
}

TEST(ValueLogGcPicker, RewritesTheFileHoldingMostOfTheWorstLogInPlace) {
  ColumnFamilyOptions o = Opts();
  o.level_size_base = 1 << 20;  // no level is over its target
  o.value_log_gc_threshold = 0.01;
  std::vector<std::string> cursors;
  auto c = PickCompaction(GcVersion(), o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "value-log-gc");
  // Log 50 (40% garbage) is worse than 60 (5%); file 1 holds most of it (300 bytes).
  EXPECT_EQ(c->level, 1);
  EXPECT_EQ(c->output_level, 1);
  ASSERT_EQ(c->upper.size(), 1u);
  EXPECT_EQ(c->upper[0]->file_number, 1u);
  EXPECT_TRUE(c->lower.empty());
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{50, 60}));
  // A damaged log is skipped: 60 is next, held mostly by file 3.
  c = PickCompaction(GcVersion(), o, &cursors, {50});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->upper[0]->file_number, 3u);
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{60}));
  o.value_log_gc_threshold = 0.5;
  EXPECT_FALSE(PickCompaction(GcVersion(), o, &cursors));
}

TEST(ValueLogGcPicker, CleanupAfterAManualCompactionRewritesTheSpanHoldingLogsWithGarbage) {
  // As CompactRange leaves a CF: all of it in one level. Log 50 is 40 % garbage, 60 none,
  // 80 10 %, all below the 0.5 threshold.
  Version v;
  v.levels.resize(4);
  v.levels[2] = {FileWithRefs(1, "a", "c", {{60, 500}}), FileWithRefs(2, "d", "f", {{50, 300}}),
                 FileWithRefs(3, "g", "i", {{60, 500}}), FileWithRefs(4, "j", "m", {{50, 300}, {80, 900}}),
                 FileWithRefs(5, "n", "p", {})};
  v.value_logs = {Vlog(50, 1000), Vlog(60, 1000), Vlog(80, 1000)};
  ColumnFamilyOptions o = Opts();
  o.value_log_gc_threshold = 0.5;
  auto c = PickValueLogCleanup(v, o, "", "");
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "manual value-log cleanup");
  EXPECT_EQ(c->level, 2);
  EXPECT_EQ(c->output_level, 2);
  EXPECT_TRUE(c->lower.empty());
  ASSERT_EQ(c->upper.size(), 3u) << "from the first file referencing 50 or 80 to the last";
  EXPECT_EQ(c->upper.front()->file_number, 2u);
  EXPECT_EQ(c->upper.back()->file_number, 4u);
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{50, 80}));
  // A range that leaves out file 4 leaves a reference to both logs outside: nothing to do.
  EXPECT_FALSE(PickValueLogCleanup(v, o, "", "h"));
  EXPECT_FALSE(PickValueLogCleanup(v, o, "", "", {50, 80})) << "damaged logs are skipped";
  // A reference from another level keeps that log where it is.
  v.levels[1] = {FileWithRefs(6, "k", "l", {{80, 10}})};
  v.value_logs[2] = Vlog(80, 1010);
  c = PickValueLogCleanup(v, o, "", "");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{50}));
  for (double off : {0.0, 1.0}) {
    o.value_log_gc_threshold = off;
    EXPECT_FALSE(PickValueLogCleanup(v, o, "", "")) << "relocation off at " << off;
  }
}

TEST(ValueLogGcPicker, LogHeldInL0CompactsAllOfL0AndOtherCompactionsRelocateToo) {
  ColumnFamilyOptions o = Opts();
  o.level_size_base = 1 << 20;
  o.value_log_gc_threshold = 0.3;
  Version v;
  v.levels.resize(4);
  v.levels[0] = {FileWithRefs(9, "b", "c", {{80, 100}}), FileWithRefs(8, "x", "y", {{50, 400}})};
  v.levels[1] = {FileWithRefs(1, "a", "f", {{50, 200}}), File(2, "g", "m", 100)};
  v.value_logs = {Vlog(50, 1000), Vlog(80, 100)};  // 50: 40% garbage
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->level, 0);
  EXPECT_EQ(c->output_level, 1);
  EXPECT_EQ(c->upper.size(), 2u);
  EXPECT_EQ(c->lower.size(), 2u);  // L0 spans b..y
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{50}));
  // The L0 trigger picks first and still carries the relocation set.
  o.l1_file_count_trigger = 2;
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "l0-file-count");
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{50}));
}

TEST(ValueLogGcPicker, UnknownReferencesBlockCollection) {
  Version v = GcVersion();
  auto legacy = std::make_shared<FileMetaData>(*File(4, "n", "p", 100));
  legacy->value_log_refs_known = false;
  v.levels[1].push_back(legacy);
  std::vector<ValueLogUsage> u;
  EXPECT_FALSE(ValueLogUsages(v, &u));
  EXPECT_TRUE(DeadValueLogs(v).empty());
  ColumnFamilyOptions o = Opts();
  o.value_log_gc_threshold = 0.01;
  EXPECT_TRUE(ValueLogsToCollect(v, o).empty());
}

}  // namespace
}  // namespace tidesdb

namespace tidesdb {
namespace {

// Trivial moves: which size-driven picks move files by a manifest edit alone.

// c was picked for `reason`, overlaps nothing in its output level, and moves or not.
void ExpectPickOverNothing(const std::optional<CompactionInputs>& c, const char* reason, bool move) {
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, reason);
  EXPECT_TRUE(c->lower.empty());
  EXPECT_EQ(c->move, move);
}

TEST(TrivialMovePicker, DisjointL0OverNothingInL1Moves) {
  Version v;
  v.levels.resize(4);
  // Sequential inserts: flushed files follow one another and L1 holds only older keys.
  v.levels[0] = {File(9, "m", "n", 10), File(8, "k", "l", 10), File(7, "g", "h", 10), File(6, "e", "f", 10)};
  v.levels[1] = {File(1, "a", "b", 100), File(2, "c", "d", 100)};
  ColumnFamilyOptions o = Opts();
  o.write_buffer_size = 80;  // L0 holds 40 bytes: half a write buffer
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  ExpectPickOverNothing(c, "l0-file-count", true);
  EXPECT_EQ(c->upper.size(), 4u);
  // Less than half a write buffer in L0: merged into one file instead.
  o.write_buffer_size = 100;
  ExpectPickOverNothing(PickCompaction(v, o, &cursors), "l0-file-count", false);
}

TEST(TrivialMovePicker, OverlapInL0OrL1IsRewritten) {
  Version v;
  v.levels.resize(4);
  // Two L0 files share the user key "h": they may not share L1.
  v.levels[0] = {File(9, "m", "n", 10), File(8, "h", "l", 10), File(7, "g", "h", 10), File(6, "e", "f", 10)};
  ColumnFamilyOptions o = Opts();
  o.write_buffer_size = 2;  // any L0 is large enough to move
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->move);
  // Disjoint L0, but one file overlaps L1.
  v.levels[0][1] = File(8, "i", "l", 10);
  v.levels[1] = {File(1, "a", "e", 100)};
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->lower.size(), 1u);
  EXPECT_FALSE(c->move);
}

TEST(TrivialMovePicker, OversizedLevelMovesAFileOverAGap) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 3000), File(2, "c", "d", 3000)};
  v.levels[2] = {File(4, "a", "a5", 5000)};
  v.levels[3] = {File(5, "a", "z", 50000)};
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, Opts(), &cursors);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->upper[0]->file_number, 1u);
  EXPECT_FALSE(c->move);  // overlaps file 4
  c = PickCompaction(v, Opts(), &cursors);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->upper[0]->file_number, 2u);
  EXPECT_TRUE(c->move);
  EXPECT_EQ(c->output_level, 2);
}

TEST(TrivialMovePicker, TombstonesAndTtlMoveOnlyAboveDeeperData) {
  ColumnFamilyOptions o = Opts();
  o.tombstone_density_trigger = 0;  // only the size pick
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "c", "d", 3000, 100, 10)};
  v.levels[2] = {File(6, "x", "y", 100)};
  std::vector<std::string> cursors;
  // Nothing below L2 holds c..d: a rewrite into L2 drops the tombstones.
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->move);
  // L3 holds keys there: the tombstones must stay anyway.
  v.levels[3] = {File(5, "a", "z", 50000)};
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->move);
  // Without tombstones, a CF with a TTL still rewrites where nothing lies deeper.
  v.levels[1] = {File(1, "c", "d", 3000)};
  v.levels[3].clear();
  o.default_ttl_seconds = 3600;
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->move);
  o.default_ttl_seconds = 0;
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->move);
}

TEST(TrivialMovePicker, ValueLogWorkIsRewritten) {
  ColumnFamilyOptions o = Opts();
  o.value_log_gc_threshold = 0.3;
  Version v;
  v.levels.resize(4);
  auto f = std::make_shared<FileMetaData>(*File(1, "a", "b", 3000));
  f->value_log_refs = {{50, 500}};
  v.levels[1] = {f};
  v.levels[2] = {File(6, "x", "y", 100)};
  v.value_logs = {Vlog(50, 1000)};  // 50% garbage: to collect
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "level-size");
  EXPECT_EQ(c->relocate, (std::vector<uint64_t>{50}));
  EXPECT_FALSE(c->move);  // its pointers into log 50 must be relocated
  o.value_log_gc_threshold = 0.9;
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->move);
  // A file logged before references were recorded is rewritten so they get recorded.
  f->value_log_refs_known = false;
  c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->move);
}

TEST(TrivialMovePicker, ManualAndTombstoneCompactionsAlwaysRewrite) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 10, 100, 90)};
  v.levels[3] = {File(5, "a", "z", 50000)};
  ExpectPickOverNothing(PickRangeCompaction(v, Opts(), 1, "", ""), "manual", false);
  std::vector<std::string> cursors;
  ExpectPickOverNothing(PickCompaction(v, Opts(), &cursors), "tombstone-density", false);
}

// Parallel compactions in one CF: a second compaction only while L0 is at the point where
// writes slow down, and a pick is one the running compactions admit.

// Options under which 4 L0 files slow writes down (L0SlowdownFiles).
ColumnFamilyOptions ParallelOpts() {
  ColumnFamilyOptions o = Opts();
  o.l1_file_count_trigger = 3;
  o.l0_queue_stall_threshold = 4;
  return o;
}

// Adds n L0 files over [smallest, largest], numbered from `first` (newest first).
void AddL0(Version* v, int n, const std::string& smallest, const std::string& largest, uint64_t first) {
  for (int i = 0; i < n; ++i)
    v->levels[0].insert(v->levels[0].begin(), File(first + i, smallest, largest, 10));
}

TEST(ParallelCompactionPicker, NoSecondCompactionWhileL0IsBelowTheSlowdown) {
  ColumnFamilyOptions o = ParallelOpts();
  ASSERT_EQ(L0SlowdownFiles(o), 4);
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 3000), File(2, "c", "d", 3000), File(3, "e", "f", 3000)};
  v.levels[2] = {File(4, "x", "z", 5000)};
  std::vector<std::string> cursors;
  auto c1 = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c1);
  RunningCompactions running;
  running.Add(*c1);
  AddL0(&v, 3, "x", "y", 100);
  EXPECT_FALSE(PickCompaction(v, o, &cursors, {}, &running));  // file 2 could go: it waits
  AddL0(&v, 1, "x", "y", 200);
  auto c2 = PickCompaction(v, o, &cursors, {}, &running);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->level, 0);  // now L0 goes beside it
}

TEST(ParallelCompactionPicker, RunningL0CompactionHoldsBackTheNextL0Pick) {
  Version v;
  v.levels.resize(4);
  v.levels[0] = {File(9, "c", "d", 10), File(8, "a", "b", 10), File(7, "m", "n", 10), File(6, "x", "y", 10)};
  ColumnFamilyOptions o = Opts();
  o.l0_queue_stall_threshold = 4;  // L0SlowdownFiles: 5
  std::vector<std::string> cursors;
  auto first = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->level, 0);
  RunningCompactions running;
  const uint64_t id = running.Add(*first);
  // New L0 files arrived (a flush), enough to slow writes, but L0 files are compacted in
  // age order: nothing now.
  v.levels[0].insert(v.levels[0].begin(), File(10, "p", "q", 10));
  EXPECT_FALSE(PickCompaction(v, o, &cursors, {}, &running));
  running.Remove(id);
  EXPECT_TRUE(running.empty());
  auto next = PickCompaction(v, o, &cursors, {}, &running);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->level, 0);
}

TEST(ParallelCompactionPicker, OversizedLevelSkipsFilesThatAreBusy) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 3000), File(2, "c", "d", 3000), File(3, "e", "f", 3000)};
  v.levels[2] = {File(4, "a", "c5", 5000)};
  const ColumnFamilyOptions o = ParallelOpts();
  std::vector<std::string> cursors;
  auto c1 = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c1);
  ASSERT_EQ(c1->upper[0]->file_number, 1u);  // with file 4 of L2 below it
  RunningCompactions running;
  running.Add(*c1);
  AddL0(&v, 4, "a", "b", 100);     // writes would slow; L0 needs file 1, so it cannot go
  std::vector<std::string> fresh;  // a cursor that points at file 1 again
  auto c2 = PickCompaction(v, o, &fresh, {}, &running);
  ASSERT_TRUE(c2);
  // File 2 overlaps file 4 of L2, which is busy: file 3 is the one that may run.
  EXPECT_EQ(c2->upper[0]->file_number, 3u);
  EXPECT_EQ(fresh[1], "f");  // the cursor follows the file picked
  running.Add(*c2);
  EXPECT_FALSE(PickCompaction(v, o, &fresh, {}, &running));
}

TEST(ParallelCompactionPicker, FilesBeingCompactedDoNotCountTowardsALevelsSize) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "a", "b", 600), File(2, "c", "d", 600)};  // target 1000
  v.levels[3] = {File(4, "a", "z", 5000)};
  const ColumnFamilyOptions o = ParallelOpts();
  std::vector<std::string> cursors;
  auto c1 = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->level, 1);
  RunningCompactions running;
  running.Add(*c1);
  AddL0(&v, 4, "a", "b", 100);  // writes would slow; L0 needs file 1, so it cannot go
  // Without file 1 the level holds 600 bytes, under its target: no second compaction.
  EXPECT_FALSE(PickCompaction(v, o, &cursors, {}, &running));
  v.levels[1].push_back(File(3, "e", "f", 600));  // 1200 without file 1: over again
  auto c2 = PickCompaction(v, o, &cursors, {}, &running);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->level, 1);
  EXPECT_NE(c2->upper[0]->file_number, 1u);
}

TEST(ParallelCompactionPicker, L0PickWaitsForABusyL1File) {
  Version v;
  v.levels.resize(4);
  v.levels[0] = {File(9, "c", "d", 10), File(8, "a", "b", 10), File(7, "m", "n", 10), File(6, "b", "c", 10)};
  v.levels[1] = {File(1, "a", "a5", 100), File(4, "m", "z", 100)};
  ColumnFamilyOptions o = Opts();
  o.l1_file_count_trigger = 3;
  o.l0_queue_stall_threshold = 4;  // L0SlowdownFiles: 4, so L0 may go beside others
  RunningCompactions running;
  CompactionInputs l1;  // file 4 of L1 on its way to L2
  l1.level = 1;
  l1.output_level = 2;
  l1.upper = {v.levels[1][1]};
  running.Add(l1);
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors, {}, &running);
  EXPECT_FALSE(c && c->level == 0);  // L0 spans a..n, so it needs file 4
  // Without L0's file in m..n, file 4 is not needed: L0 may go beside the L1 compaction.
  v.levels[0].erase(v.levels[0].begin() + 2);
  v.levels[0].push_back(File(5, "d", "e", 10));
  c = PickCompaction(v, o, &cursors, {}, &running);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->level, 0);
  ASSERT_EQ(c->lower.size(), 1u);
  EXPECT_EQ(c->lower[0]->file_number, 1u);
}

TEST(ParallelCompactionPicker, L0WaitsBesideARunningCompactionUntilWritesWouldSlow) {
  Version v;
  v.levels.resize(4);
  v.levels[1] = {File(1, "x", "z", 100)};
  for (uint64_t i = 0; i < 4; ++i) v.levels[0].push_back(File(100 - i, "a", "b", 10));
  RunningCompactions running;
  CompactionInputs l1;  // file 1 of L1 on its way to L2, beside nothing L0 needs
  l1.level = 1;
  l1.output_level = 2;
  l1.upper = {v.levels[1][0]};
  running.Add(l1);
  std::vector<std::string> cursors;
  EXPECT_FALSE(PickCompaction(v, Opts(), &cursors, {}, &running));  // 4 of 15
  EXPECT_TRUE(PickCompaction(v, Opts(), &cursors));                 // alone it would go
  ASSERT_EQ(L0SlowdownFiles(Opts()), 15);
  while (v.levels[0].size() < 15) v.levels[0].push_back(File(50 + v.levels[0].size(), "a", "b", 10));
  auto c = PickCompaction(v, Opts(), &cursors, {}, &running);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->level, 0);
}

TEST(ParallelCompactionPicker, AdmitsOnlyDisjointWorkPerLevel) {
  auto job = [](int level, int output_level, std::vector<std::shared_ptr<const FileMetaData>> upper,
                std::vector<std::shared_ptr<const FileMetaData>> lower = {}) {
    CompactionInputs c;
    c.level = level;
    c.output_level = output_level;
    c.upper = std::move(upper);
    c.lower = std::move(lower);
    return c;
  };
  RunningCompactions running;
  EXPECT_TRUE(running.Admits(job(0, 1, {File(1, "a", "z", 10)})));
  const uint64_t a = running.Add(job(1, 2, {File(10, "m", "p", 10)}, {File(20, "k", "n", 10)}));
  // Writes k..p of L2: another writer of L2 there is refused, one beside it is admitted.
  EXPECT_FALSE(running.Admits(job(1, 2, {File(11, "p", "r", 10)})));
  EXPECT_FALSE(running.Admits(job(1, 2, {File(12, "a", "c", 10)}, {File(21, "b", "k", 10)})));
  EXPECT_TRUE(running.Admits(job(1, 2, {File(13, "q", "s", 10)})));
  // Its inputs are busy, wherever they are met.
  EXPECT_FALSE(running.Admits(job(2, 3, {File(20, "k", "n", 10)})));
  // Reading a range of L2 that it is writing is refused; a bottom rewrite elsewhere is not.
  EXPECT_FALSE(running.Admits(job(2, 2, {File(22, "o", "o", 10)})));
  EXPECT_TRUE(running.Admits(job(2, 2, {File(23, "t", "u", 10)})));
  // An L0 compaction beside it, and a second L0 compaction refused.
  const uint64_t b = running.Add(job(0, 1, {File(2, "a", "c", 10)}));
  EXPECT_FALSE(running.Admits(job(0, 1, {File(3, "x", "y", 10)})));
  EXPECT_EQ(running.size(), 2u);
  running.Remove(a);
  running.Remove(b);
  EXPECT_TRUE(running.empty());
  EXPECT_TRUE(running.Admits(job(1, 2, {File(11, "p", "r", 10)})));
}

TEST(ParallelCompactionPicker, TombstoneDensitySkipsABusyFile) {
  Version v;
  v.levels.resize(4);
  v.levels[3] = {File(1, "a", "m", 100, 1000, 800), File(2, "n", "z", 100, 1000, 900)};
  const ColumnFamilyOptions o = ParallelOpts();
  std::vector<std::string> cursors;
  auto c = PickCompaction(v, o, &cursors);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->upper[0]->file_number, 1u);
  RunningCompactions running;
  running.Add(*c);
  // L0 is being compacted, and more has arrived since: writes would slow, L0 cannot go.
  AddL0(&v, 4, "a", "b", 100);
  running.Add(*PickCompaction(v, o, &cursors));
  AddL0(&v, 4, "c", "d", 200);
  c = PickCompaction(v, o, &cursors, {}, &running);
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->reason, "tombstone-density");
  EXPECT_EQ(c->upper[0]->file_number, 2u);
}

}  // namespace
}  // namespace tidesdb
