// The properties that show a database's shape: "tidesdb.sst-files" (every SSTable of a
// column family: level, sizes, counts, key range) and "tidesdb.compactions" (running and
// recent compactions with their outcome).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tidesdb/db.h"

namespace tidesdb {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Field(const std::string& line, const std::string& name) {
  const std::string key = " " + name + "=";
  size_t at = (" " + line).find(key);
  if (at == std::string::npos) return "<missing>";
  at += key.size() - 1;
  size_t end = line.find(' ', at);
  return line.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class IntrospectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/tidesdb_introspection_test_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    Options options;
    options.sync_mode = SyncMode::kNone;
    options.default_cf_options.compression = CompressionType::kNone;
    options.default_cf_options.l1_file_count_trigger = 100;  // compactions only when asked
    ASSERT_TRUE(DB::Open(options, dir_, &db_).ok());
    ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "t", &cf_).ok());
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Property(ColumnFamilyHandle* cf, const char* name) {
    std::string value;
    EXPECT_TRUE(db_->GetProperty(cf, name, &value)) << name;
    return value;
  }

  std::string dir_;
  std::unique_ptr<DB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

TEST_F(IntrospectionTest, SstFilesListsEveryFileWithItsCountsAndKeyRange) {
  EXPECT_EQ(Property(cf_, "tidesdb.sst-files"), "");
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, std::string("\x01\xab", 2), "v1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "b", "v2").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "c").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "d", "v3").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), cf_).ok());

  std::vector<std::string> files = Lines(Property(cf_, "tidesdb.sst-files"));
  ASSERT_EQ(files.size(), 2u);
  uint64_t entries = 0, tombstones = 0;
  bool first_seen = false;
  for (const std::string& f : files) {
    EXPECT_EQ(Field(f, "level"), "0") << f;
    EXPECT_GT(std::stoull(Field(f, "size")), 0u) << f;
    entries += std::stoull(Field(f, "entries"));
    tombstones += std::stoull(Field(f, "tombstones"));
    if (Field(f, "smallest") == "01AB") {
      first_seen = true;
      EXPECT_EQ(Field(f, "largest"), "63") << f;  // "c", the tombstone
    }
  }
  EXPECT_TRUE(first_seen) << files[0] << "\n" << files[1];
  EXPECT_EQ(entries, 4u);
  EXPECT_EQ(tombstones, 1u);
  // Other column families are not listed.
  EXPECT_EQ(Property(db_->DefaultColumnFamily(), "tidesdb.sst-files"), "");
}

TEST_F(IntrospectionTest, CompactionsListsRecentCompactionsNewestFirst) {
  EXPECT_EQ(Property(nullptr, "tidesdb.compactions"), "");
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "k" + std::to_string(i), std::string(100, 'x')).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions(), cf_).ok());
  }
  ASSERT_TRUE(db_->CompactRange(cf_, nullptr).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  std::vector<std::string> lines = Lines(Property(nullptr, "tidesdb.compactions"));
  ASSERT_FALSE(lines.empty());
  const std::string& newest = lines[0];
  EXPECT_EQ(Field(newest, "cf"), std::to_string(cf_->id())) << newest;
  EXPECT_EQ(Field(newest, "state"), "done") << newest;
  EXPECT_EQ(Field(newest, "manual"), "1") << newest;
  EXPECT_EQ(Field(newest, "status"), "OK") << newest;
  EXPECT_GE(std::stoull(Field(newest, "input_files")), 1u) << newest;
  EXPECT_GE(std::stoull(Field(newest, "output_files")), 1u) << newest;
  EXPECT_GT(std::stoull(Field(newest, "output_bytes")), 0u) << newest;
  EXPECT_GE(std::stoull(Field(newest, "end_micros")), std::stoull(Field(newest, "start_micros")));
  // Ids grow: the newest has the largest.
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_LT(std::stoull(Field(lines[i], "id")), std::stoull(Field(newest, "id")));
  }
  // The compacted file shows at a deeper level.
  std::vector<std::string> files = Lines(Property(cf_, "tidesdb.sst-files"));
  ASSERT_FALSE(files.empty());
  for (const std::string& f : files) EXPECT_NE(Field(f, "level"), "0") << f;
}

}  // namespace
}  // namespace tidesdb
