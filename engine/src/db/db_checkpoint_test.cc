// Online checkpoints: taken while a writer runs, they open as a database holding a
// consistent prefix of the commits, at least every commit acknowledged before the call.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tidesdb/db.h"

namespace tidesdb {
namespace {

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = "/tmp/tidesdb_checkpoint_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(base_);
    std::filesystem::create_directories(base_);
    options_.sync_mode = SyncMode::kNone;
    options_.unified_memtable_write_buffer_size = 96 << 10;  // flushes during the run
    options_.default_cf_options.l1_file_count_trigger = 3;
    options_.default_cf_options.target_file_size = 64 << 10;
  }
  void TearDown() override {
    if (!std::getenv("KEEP")) std::filesystem::remove_all(base_);
  }
  static std::string Key(int i) {
    char k[16];
    std::snprintf(k, sizeof(k), "k%08d", i);
    return k;
  }

  std::string base_;
  Options options_;
};

TEST_F(CheckpointTest, ConcurrentWritesGiveAConsistentPrefix) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options_, base_ + "/db", &db).ok());
  ColumnFamilyHandle* other;
  ASSERT_TRUE(db->CreateColumnFamily(options_.default_cf_options, "other", &other).ok());
  std::atomic<int> acked{0};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      WriteBatch b;
      std::string v = std::to_string(i) + std::string(i % 7 == 0 ? 1500 : 80, 'v');  // some in the value log
      b.Put(db->DefaultColumnFamily(), Key(i), v);
      b.Put(other, Key(i), v);
      ASSERT_TRUE(db->Write(WriteOptions(), &b).ok());
      acked = i + 1;
    }
  });
  while (acked < 3000) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  int acked_before = acked;
  ASSERT_TRUE(db->Checkpoint(base_ + "/cp").ok());
  EXPECT_TRUE(db->Checkpoint(base_ + "/cp").IsInvalidArgument());  // exists
  while (acked < acked_before + 1000) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  writer.join();
  db.reset();

  std::unique_ptr<DB> cp;
  Status s = DB::Open(options_, base_ + "/cp", &cp);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ColumnFamilyHandle* cp_other = cp->GetColumnFamily("other");
  ASSERT_NE(cp_other, nullptr);
  for (ColumnFamilyHandle* h : {cp->DefaultColumnFamily(), cp_other}) {
    int n = 0;
    auto it = cp->NewIterator(ReadOptions(), h);
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
      ASSERT_EQ(it->key(), Key(n)) << "not a prefix";
      ASSERT_TRUE(it->value().starts_with(std::to_string(n)));
    }
    ASSERT_TRUE(it->status().ok());
    EXPECT_GE(n, acked_before);
    EXPECT_LT(n, acked_before + 1000);
  }
  // The source is unaffected and the checkpoint is writable on its own.
  ASSERT_TRUE(cp->Put(WriteOptions(), cp->DefaultColumnFamily(), "new", "x").ok());
  cp.reset();
  ASSERT_TRUE(DB::Open(options_, base_ + "/db", &db).ok());
  std::string v;
  EXPECT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), "new", &v).IsNotFound());
}

}  // namespace
}  // namespace tidesdb
