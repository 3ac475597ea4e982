// Recovery: WAL replay checks that sequence numbers run on without a hole (a record lost
// from the middle of the WAL, or a whole WAL file lost, is Corruption naming the file and
// the expected and found sequences), and accepts every case where records legitimately
// start later or are missing: WALs already flushed and deleted, column families dropped,
// empty WALs, writes that skipped the WAL.
//
// The damaged cases append hand-made records (valid checksums, wrong sequences) to the
// WAL a database left behind, or add a WAL file after it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "testutil/test_util.h"
#include "tidesdb/db.h"
#include "util/coding.h"
#include "wal/log_writer.h"

namespace tidesdb {
namespace {

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<test::ScratchDir>(
        std::string("recovery_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.sync_mode = SyncMode::kNone;
    options_.log_level = LogLevel::kError;
  }

  void Open() {
    db_.reset();
    Status s = DB::Open(options_, dir_->path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  Status Reopen() {
    db_.reset();
    return DB::Open(options_, dir_->path(), &db_);
  }
  void Put(ColumnFamilyHandle* cf, int i, const WriteOptions& wo = WriteOptions()) {
    Status s = db_->Put(wo, cf, Key(i), "v" + std::to_string(i));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static std::string Key(int i) { return "key" + std::to_string(i); }
  // True if key i holds its value; false if it is missing.
  bool Has(ColumnFamilyHandle* cf, int i) {
    std::string v;
    Status s = db_->Get(ReadOptions(), cf, Key(i), &v);
    EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
    if (s.ok()) {
      EXPECT_EQ(v, "v" + std::to_string(i));
    }
    return s.ok();
  }

  // Puts keys 0..n-1 in the default column family and closes; returns the last sequence
  // and (in *wal) the WAL holding them.
  SequenceNumber PutAndClose(int n, uint64_t* wal) {
    Open();
    for (int i = 0; i < n; ++i) Put(db_->DefaultColumnFamily(), i);
    const SequenceNumber last = db_->LatestSequence();
    db_.reset();
    *wal = NewestWalNumber();
    return last;
  }
  // The payload of a write-batch WAL record putting `count` keys from `first_seq` on.
  static std::string BatchRecord(SequenceNumber first_seq, int count) {
    WriteBatch batch;
    for (int i = 0; i < count; ++i) batch.Put(uint32_t{0}, "crafted" + std::to_string(i), "x");
    std::string payload;
    PutFixed64(&payload, first_seq);
    payload.append(batch.Data());
    return payload;
  }
  uint64_t NewestWalNumber() {
    std::vector<std::string> wals = test::FilesWithSuffix(dir_->path(), ".wal");
    EXPECT_FALSE(wals.empty());
    uint64_t number = 0;
    FileType type;
    if (!wals.empty()) {
      EXPECT_TRUE(ParseFileName(wals.back(), &number, &type));
    }
    return number;
  }
  // Appends records to WAL `number`, creating it (with its header) if it does not exist.
  void AppendToWal(uint64_t number, const std::vector<std::string>& payloads) {
    Env* env = Env::Default();
    const std::string fname = WalFileName(dir_->path(), number);
    const bool exists = env->FileExists(fname);
    std::unique_ptr<WritableFile> file;
    Status s = exists ? env->NewAppendableFile(fname, EnvOptions(), &file)
                      : env->NewWritableFile(fname, EnvOptions(), &file);
    ASSERT_TRUE(s.ok()) << s.ToString();
    LogWriter writer(std::move(file), LogKind::kWal, number, /*write_header=*/!exists);
    for (const std::string& p : payloads) ASSERT_TRUE(writer.AddRecord(kWalWriteBatch, p).ok());
    ASSERT_TRUE(writer.Close().ok());
  }
  void ExpectGap(const Status& s, uint64_t wal, SequenceNumber expected, SequenceNumber found) {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find(WalFileName(dir_->path(), wal)), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("expected sequence " + std::to_string(expected) + ", found " +
                               std::to_string(found)),
              std::string::npos)
        << s.ToString();
  }

  std::unique_ptr<test::ScratchDir> dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(RecoveryTest, GapInsideAWalIsCorruption) {
  uint64_t wal = 0;
  const SequenceNumber last = PutAndClose(10, &wal);
  AppendToWal(wal, {BatchRecord(last + 1, 2), BatchRecord(last + 4, 1)});  // last + 3 is missing
  ExpectGap(Reopen(), wal, last + 3, last + 4);
}

TEST_F(RecoveryTest, MissingWalBetweenTwoOthersIsCorruption) {
  uint64_t wal = 0;
  const SequenceNumber last = PutAndClose(10, &wal);
  AppendToWal(wal + 2, {BatchRecord(last + 4, 1)});  // WAL wal + 1, holding last + 1 .. last + 3, is gone
  ExpectGap(Reopen(), wal + 2, last + 1, last + 4);
  // The same records with the middle WAL in place are accepted.
  AppendToWal(wal + 1, {BatchRecord(last + 1, 3)});
  Open();
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "crafted0", &v).ok());
  EXPECT_EQ(db_->LatestSequence(), last + 4);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(Has(db_->DefaultColumnFamily(), i)) << i;
}

// The manifest says which sequences are in SSTables; the oldest WAL it needs must go on
// from there.
TEST_F(RecoveryTest, WalStartingAfterTheManifestsLastSequenceIsCorruption) {
  Open();
  for (int i = 0; i < 10; ++i) Put(db_->DefaultColumnFamily(), i);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
  uint64_t wal = 0;
  const SequenceNumber last = PutAndClose(0, &wal);  // replays nothing; leaves an empty WAL
  AppendToWal(wal, {BatchRecord(last + 3, 1)});
  ExpectGap(Reopen(), wal, last + 1, last + 3);
}

// WALs flushed and deleted, and a WAL whose first records are already in SSTables (another
// column family's memtable kept it alive): replay starts where the manifest says.
TEST_F(RecoveryTest, FlushedWalsAndPartlyFlushedWalsReplay) {
  options_.unified_memtable = false;
  Open();
  ColumnFamilyHandle *a = nullptr, *b = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "a", &a).ok());
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "b", &b).ok());
  for (int i = 0; i < 20; ++i) Put(i % 2 ? a : b, i);
  ASSERT_TRUE(db_->Flush(FlushOptions(), b).ok());  // a's memtable keeps the first WAL
  for (int i = 20; i < 30; ++i) Put(i % 2 ? a : b, i);
  ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());  // every WAL so far can go
  for (int i = 30; i < 40; ++i) Put(i % 2 ? a : b, i);
  ASSERT_TRUE(db_->Flush(FlushOptions(), a).ok());
  for (int i = 40; i < 50; ++i) Put(i % 2 ? a : b, i);
  const SequenceNumber last = db_->LatestSequence();
  for (int round = 0; round < 2; ++round) {
    Open();
    a = db_->GetColumnFamily("a");
    b = db_->GetColumnFamily("b");
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(Has(i % 2 ? a : b, i)) << i;
    EXPECT_EQ(db_->LatestSequence(), last);
  }
}

// Entries of a dropped column family still take their sequences in the WAL.
TEST_F(RecoveryTest, DroppedColumnFamilysEntriesKeepTheSequenceRunning) {
  Open();
  ColumnFamilyHandle* x = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(), "x", &x).ok());
  for (int i = 0; i < 10; ++i) Put(i % 3 ? x : db_->DefaultColumnFamily(), i);
  ASSERT_TRUE(db_->DropColumnFamily(x).ok());
  for (int i = 10; i < 20; ++i) Put(db_->DefaultColumnFamily(), i);
  const SequenceNumber last = db_->LatestSequence();
  Open();
  EXPECT_EQ(db_->GetColumnFamily("x"), nullptr);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Has(db_->DefaultColumnFamily(), i), i >= 10 || i % 3 == 0) << i;
  EXPECT_EQ(db_->LatestSequence(), last);
}

// Opens that write nothing leave empty WALs, and an empty WAL may sit between two others.
TEST_F(RecoveryTest, EmptyWalsReplay) {
  for (int round = 0; round < 3; ++round) Open();
  uint64_t wal = 0;
  const SequenceNumber last = PutAndClose(5, &wal);
  AppendToWal(wal + 1, {});
  AppendToWal(wal + 2, {BatchRecord(last + 1, 2)});
  Open();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(Has(db_->DefaultColumnFamily(), i)) << i;
  EXPECT_EQ(db_->LatestSequence(), last + 2);
}

// Writes that skip the WAL take sequences no WAL record carries; the WAL notes them, so
// the logged writes after them are no gap. The unlogged writes are lost unless flushed.
TEST_F(RecoveryTest, WritesThatSkippedTheWalAreNoGap) {
  WriteOptions unlogged;
  unlogged.disable_wal = true;
  for (bool flush : {false, true}) {
    SCOPED_TRACE(flush ? "unlogged writes flushed" : "unlogged writes lost");
    options_.create_if_missing = true;
    ASSERT_TRUE(DestroyDB(dir_->path(), options_).ok());
    Open();
    for (int i = 0; i < 5; ++i) Put(db_->DefaultColumnFamily(), i);
    for (int i = 5; i < 10; ++i) Put(db_->DefaultColumnFamily(), i, unlogged);
    if (flush) {
      ASSERT_TRUE(db_->Flush(FlushOptions(), nullptr).ok());
    }
    for (int i = 10; i < 15; ++i) Put(db_->DefaultColumnFamily(), i);
    const SequenceNumber last = db_->LatestSequence();
    Open();
    for (int i = 0; i < 15; ++i)
      EXPECT_EQ(Has(db_->DefaultColumnFamily(), i), flush || i < 5 || i >= 10) << i;
    EXPECT_EQ(db_->LatestSequence(), last);
    db_.reset();
  }
}

}  // namespace
}  // namespace tidesdb
