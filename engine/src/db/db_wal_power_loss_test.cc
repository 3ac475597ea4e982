// The newest WAL after a power loss (log_format.h, "lost unsynced write"): the kernel may
// have written back a later unsynced page of the WAL and not an earlier one. Recovery cuts
// the WAL at the first damaged record, keeping every commit that was synced, and warns;
// damage that a sync mark says was durable stays Corruption naming the WAL, and so does
// any damage in a WAL that is not the newest.
//
//   LostEarlierPageKeptLaterPage         NONE with SyncWAL: the synced commits and a prefix
//                                        of the rest survive, with a warning
//   FullKeepsEveryAcknowledgedCommit     FULL: a lost page of an unacknowledged commit
//   DamageInsideTheSyncedRegion          a byte flipped below a claimed sync: Corruption
//   SealedWalDamageIsCorruption          after a clean close the whole WAL is claimed
//   OlderWalKeepsTheStrictRule           the same lost page in a WAL with a newer one after
//   PreallocatedZerosAreTheEndOfTheLog   FULL in a preallocated WAL: the zeros after a
//                                        power loss are the end of the log, no warning
//   RotatedWalsEndAtTheirLastRecord      rotation cuts the zeros off before the next WAL
//   RecoveryCutsTheTailDurably           a power loss while a failed recovery's new WAL
//                                        follows the cut one
//   RandomPageLossKeepsASyncedPrefix     many seeded power losses against an oracle
//
// Randomized: TIDESDB_CRASH_SEED=<seed>, TIDESDB_CRASH_ROUNDS=<n> rounds (default 40).
#include <gtest/gtest.h>

#include <filesystem>

#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "db/filename.h"
#include "env/fault_injection_env.h"
#include "testutil/injecting_env.h"
#include "testutil/test_util.h"
#include "tidesdb/db.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace tidesdb {
namespace {

// Durability is simulated by the FaultInjectionEnv; real fsyncs below it only cost time.
struct SimulatedDisk {
  test::NoSyncEnv nosync;
  FaultInjectionEnv fault{&nosync};
};

// What a key holds: deterministic, and long enough (up to 3 KB) that records cross pages.
std::string ValueFor(const std::string& key) {
  std::mt19937_64 rng(std::hash<std::string>()(key));
  std::string v(200 + rng() % 2800, '\0');
  for (char& c : v) c = static_cast<char>('a' + rng() % 26);
  return v;
}

std::string Key(int round, int i) { return "r" + std::to_string(round) + "-" + std::to_string(100000 + i); }

class WalPowerLossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<test::ScratchDir>(
        std::string("wal_power_loss_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.env = &disk_.fault;
    options_.sync_mode = SyncMode::kNone;
    options_.log_level = LogLevel::kWarn;
    options_.logger = [this](LogLevel level, std::string_view message) {
      std::lock_guard<std::mutex> l(log_mu_);
      if (level >= LogLevel::kWarn) warnings_.emplace_back(message);
    };
  }
  void TearDown() override {
    db_.reset();
    dir_.reset();
  }

  Status Open() {
    db_.reset();
    return DB::Open(options_, dir_->path(), &db_);
  }
  void Put(const std::string& key, const WriteOptions& wo = WriteOptions()) {
    Status s = db_->Put(wo, db_->DefaultColumnFamily(), key, ValueFor(key));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // True if key holds its value, false if it is missing (anything else fails the test).
  bool Has(const std::string& key) {
    std::string v;
    Status s = db_->Get(ReadOptions(), db_->DefaultColumnFamily(), key, &v);
    EXPECT_TRUE(s.ok() || s.IsNotFound()) << key << ": " << s.ToString();
    if (s.ok()) {
      EXPECT_TRUE(v == ValueFor(key)) << "wrong value for " << key;
    }
    return s.ok();
  }
  std::string NewestWal() {
    std::vector<std::string> wals = test::FilesWithSuffix(dir_->path(), ".wal");
    EXPECT_FALSE(wals.empty());
    return wals.empty() ? "" : dir_->Sub(wals.back());
  }
  uint64_t SizeOf(const std::string& path) { return test::FileSizeOrZero(path); }
  // Where the WAL's records end: the file runs on into preallocated zeros while it is live.
  uint64_t RecordsEnd(const std::string& wal, bool* zero_tail = nullptr) {
    std::unique_ptr<LogReader> reader;
    EXPECT_TRUE(LogReader::Open(Env::Default(), wal, &reader).ok());
    if (!reader) return 0;
    uint64_t number = 0;
    EXPECT_TRUE(reader->ReadHeader(LogKind::kWal, &number).ok());
    for (;;) {
      uint8_t type = 0;
      std::string payload;
      bool eof = false;
      Status s = reader->ReadRecord(&type, &payload, &eof);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok() || eof) break;
    }
    if (zero_tail != nullptr) *zero_tail = reader->zero_tail();
    return reader->valid_end_offset();
  }
  // The power fails: nothing reaches the disk any more, the database is dropped, and the
  // unsynced pages of `wal` for which lose(page) is true are lost; other files keep all.
  void PowerLoss(const std::string& wal, const std::function<bool(uint64_t page)>& lose) {
    disk_.fault.SetFilesystemActive(false);
    db_.reset();
    ASSERT_TRUE(disk_.fault
                    .SimulatePageLoss(
                        [&](const std::string& path, uint64_t page) { return path == wal && lose(page); })
                    .ok());
    disk_.fault.SetFilesystemActive(true);
  }
  // Writes keys 0-19 of round 0, SyncWAL, keys 20-59 (over four pages), then a power loss
  // that loses the second unsynced page of the WAL and keeps every page after it. Returns
  // the WAL's path.
  std::string LoseAPageAfterTheSync() {
    EXPECT_TRUE(Open().ok());
    for (int i = 0; i < 20; ++i) Put(Key(0, i));
    EXPECT_TRUE(db_->SyncWAL().ok());
    const std::string wal = NewestWal();
    const uint64_t synced = RecordsEnd(wal);
    for (int i = 20; i < 60; ++i) Put(Key(0, i));
    EXPECT_GT(RecordsEnd(wal), synced + 4 * kPowerLossPageSize);
    const uint64_t lost = (synced / kPowerLossPageSize + 1) * kPowerLossPageSize;
    PowerLoss(wal, [&](uint64_t page) { return page == lost; });
    return wal;
  }
  // Warnings so far that contain text.
  int WarningsWith(const std::string& text) {
    std::lock_guard<std::mutex> l(log_mu_);
    int n = 0;
    for (const auto& w : warnings_) n += w.find(text) != std::string::npos;
    return n;
  }
  // The keys of round 0 from 0 on that are present must be 0..k-1; returns k.
  int CheckPrefix(int written) {
    int k = 0;
    while (k < written && Has(Key(0, k))) ++k;
    for (int i = k; i < written; ++i) EXPECT_FALSE(Has(Key(0, i))) << Key(0, i) << " survived after a hole";
    return k;
  }

  SimulatedDisk disk_;
  Options options_;
  std::unique_ptr<test::ScratchDir> dir_;
  std::unique_ptr<DB> db_;
  std::mutex log_mu_;
  std::vector<std::string> warnings_;
};

// NONE sync: commits up to a SyncWAL are durable; of the later ones, a power loss loses
// an earlier page and keeps a later one. Recovery cuts at the lost page with a warning.
TEST_F(WalPowerLossTest, LostEarlierPageKeptLaterPage) {
  const std::string wal = LoseAPageAfterTheSync();

  Status s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int k = CheckPrefix(60);
  EXPECT_GE(k, 20) << "a synced commit was lost";
  EXPECT_LT(k, 60) << "the records after the lost page must go";
  EXPECT_EQ(WarningsWith("never synced"), 1);
  EXPECT_EQ(WarningsWith(wal + ": offset "), 1);
  // The cut is for good: the records past it never come back, new commits follow on.
  Put(Key(1, 0));
  db_.reset();
  ASSERT_TRUE(Open().ok());
  EXPECT_EQ(CheckPrefix(60), k);
  EXPECT_TRUE(Has(Key(1, 0)));
}

// FULL: every acknowledged commit was synced before it returned. Commits that asked for
// no sync follow (a large one, then small ones); the power loss loses the first page
// after the last sync and keeps the later ones: only the unsynced commits go.
TEST_F(WalPowerLossTest, FullKeepsEveryAcknowledgedCommit) {
  options_.sync_mode = SyncMode::kFull;
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 30; ++i) Put(Key(0, i));
  const std::string wal = NewestWal();
  const uint64_t synced = RecordsEnd(wal);
  WriteOptions nosync;
  nosync.sync_mode = SyncMode::kNone;
  WriteBatch big;
  for (int i = 0; i < 8; ++i) big.Put(db_->DefaultColumnFamily(), Key(2, i), ValueFor(Key(2, i)));
  ASSERT_TRUE(db_->Write(nosync, &big).ok());
  for (int i = 0; i < 3; ++i) Put(Key(3, i), nosync);
  ASSERT_GT(RecordsEnd(wal), synced + 3 * kPowerLossPageSize);
  const uint64_t first_unsynced_page = synced - synced % kPowerLossPageSize;
  PowerLoss(wal, [&](uint64_t page) { return page == first_unsynced_page; });

  Status s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(CheckPrefix(30), 30);
  for (int i = 0; i < 8; ++i) EXPECT_FALSE(Has(Key(2, i)));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(Has(Key(3, i)));
  EXPECT_EQ(WarningsWith("never synced"), 1);
}

// A byte changed in a record below an offset that a later record's sync mark claims
// durable is not a power loss: Corruption naming the WAL and the record's offset.
TEST_F(WalPowerLossTest, DamageInsideTheSyncedRegion) {
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 20; ++i) Put(Key(0, i));
  const std::string wal = NewestWal();
  const uint64_t middle = RecordsEnd(wal) / 2;
  ASSERT_TRUE(db_->SyncWAL().ok());
  for (int i = 20; i < 30; ++i) Put(Key(0, i));  // the first of them carries the sync mark
  PowerLoss(wal, [](uint64_t) { return false; });
  ASSERT_TRUE(test::XorByte(wal, middle, 0x40).ok());

  Status s = Open();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal + ": offset "), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("durable through offset"), std::string::npos) << s.ToString();
  // Nothing was repaired by dropping data: the next attempt fails the same way.
  EXPECT_TRUE(Open().IsCorruption());
  EXPECT_EQ(WarningsWith("never synced"), 0);
}

// A clean close syncs the WAL and seals it with a mark claiming every record: damage in
// any record, even the last, is Corruption.
TEST_F(WalPowerLossTest, SealedWalDamageIsCorruption) {
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 10; ++i) Put(Key(0, i));
  const std::string wal = NewestWal();
  const uint64_t last_record_middle = RecordsEnd(wal) - 100;
  db_.reset();
  ASSERT_TRUE(test::XorByte(wal, last_record_middle, 0x08).ok());
  Status s = Open();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal), std::string::npos) << s.ToString();
}

// The lost page of LostEarlierPageKeptLaterPage, in a WAL that has a newer one after it:
// every older WAL was synced whole before its successor existed, so damage there is
// Corruption, as before.
TEST_F(WalPowerLossTest, OlderWalKeepsTheStrictRule) {
  const std::string wal = LoseAPageAfterTheSync();
  // A newer, empty WAL (header only) after it.
  uint64_t number = 0;
  FileType type;
  ASSERT_TRUE(ParseFileName(wal.substr(wal.rfind('/') + 1), &number, &type));
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(
      Env::Default()->NewWritableFile(WalFileName(dir_->path(), number + 1000), EnvOptions(), &file).ok());
  LogWriter newer(std::move(file), LogKind::kWal, number + 1000);
  ASSERT_TRUE(newer.Close().ok());

  Status s = Open();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal + ": offset "), std::string::npos) << s.ToString();
  EXPECT_EQ(WarningsWith("never synced"), 0);
}

// FULL commits in a preallocated WAL (log_writer.h), then a power loss in each mode: the
// WAL keeps the length synced with its first commit, zeros past the records; recovery
// reads them as the end of the log (no warning: nothing was torn), keeps every commit and
// cuts the zeros off.
TEST_F(WalPowerLossTest, PreallocatedZerosAreTheEndOfTheLog) {
  options_.sync_mode = SyncMode::kFull;
  int round = 0;
  for (PowerLossMode mode :
       {PowerLossMode::kDropUnsynced, PowerLossMode::kTornUnsynced, PowerLossMode::kLoseUnsyncedPages}) {
    SCOPED_TRACE(static_cast<int>(mode));
    ASSERT_TRUE(Open().ok());
    for (int i = 0; i < 40; ++i) Put(Key(round, i));
    const std::string wal = NewestWal();
    const uint64_t end = RecordsEnd(wal);
    if (SizeOf(wal) == end) GTEST_SKIP() << "no fallocate here";
    EXPECT_EQ(SizeOf(wal), kWalPreallocateBytes);
    disk_.fault.SetFilesystemActive(false);
    db_.reset();
    ASSERT_TRUE(disk_.fault.SimulatePowerLoss(mode, 100 + round).ok());
    disk_.fault.SetFilesystemActive(true);
    EXPECT_EQ(SizeOf(wal), kWalPreallocateBytes);
    bool zero_tail = false;
    EXPECT_EQ(RecordsEnd(wal, &zero_tail), end);
    EXPECT_TRUE(zero_tail);

    Status s = Open();
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int r = 0; r <= round; ++r) {
      for (int i = 0; i < 40; ++i) EXPECT_TRUE(Has(Key(r, i))) << Key(r, i);
    }
    EXPECT_TRUE(SizeOf(wal) == 0 || SizeOf(wal) == end);  // cut at recovery (or deleted after its flush)
    EXPECT_EQ(WarningsWith("torn"), 0);
    EXPECT_EQ(WarningsWith("never synced"), 0);
    db_.reset();
    ++round;
  }
}

// Rotation cuts the old WAL's zeros off durably before the next WAL exists: after many
// rotations and a power loss, no older WAL ends in zeros (which recovery would call a
// damaged tail in a WAL that is not the newest), and every FULL commit is there.
TEST_F(WalPowerLossTest, RotatedWalsEndAtTheirLastRecord) {
  options_.sync_mode = SyncMode::kFull;
  options_.unified_memtable_write_buffer_size = 64 << 10;
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 150; ++i) Put(Key(0, i));  // ~250 KB through 64 KB memtables
  const std::vector<std::string> wals = test::FilesWithSuffix(dir_->path(), ".wal");
  for (size_t i = 0; i + 1 < wals.size(); ++i) {
    // A background flush may delete an old WAL after the listing: nothing to check then.
    if (!std::filesystem::exists(dir_->Sub(wals[i]))) continue;
    bool zero_tail = true;
    EXPECT_EQ(RecordsEnd(dir_->Sub(wals[i]), &zero_tail), SizeOf(dir_->Sub(wals[i]))) << wals[i];
    EXPECT_FALSE(zero_tail) << wals[i];
  }
  disk_.fault.SetFilesystemActive(false);
  db_.reset();
  ASSERT_TRUE(disk_.fault.SimulatePowerLoss(PowerLossMode::kLoseUnsyncedPages, 5).ok());
  disk_.fault.SetFilesystemActive(true);
  Status s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(CheckPrefix(150), 150);
}

// Recovery cuts the newest WAL's tail (here the zeros a crash left) durably: until its
// last manifest edit is durable the manifest still names that WAL, now behind the new one
// recovery started, and zeros coming back there would be a damaged tail in an older WAL.
// A crash; then a recovery that fails its last manifest sync (after the new WAL exists);
// then the power goes. The next open succeeds with every synced commit.
TEST_F(WalPowerLossTest, RecoveryCutsTheTailDurably) {
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 30; ++i) Put(Key(0, i));
  ASSERT_TRUE(db_->SyncWAL().ok());
  const std::string wal = NewestWal();
  if (SizeOf(wal) == RecordsEnd(wal)) GTEST_SKIP() << "no fallocate here";
  disk_.fault.SetFilesystemActive(false);  // a crash: the zeros stay
  db_.reset();
  disk_.fault.SetFilesystemActive(true);

  test::InjectingEnv injecting(&disk_.fault);
  std::atomic<bool> new_wal{false};
  injecting.SetBefore([&](test::EnvOp op, const std::string& fname) {
    if (op == test::EnvOp::kCreateFile && fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".wal") == 0)
      new_wal = true;
    if (new_wal && op == test::EnvOp::kSync && fname.find("MANIFEST") != std::string::npos)
      return Status::IOError(fname, "injected: manifest sync fails");
    return Status::OK();
  });
  options_.env = &injecting;
  ASSERT_FALSE(Open().ok());
  ASSERT_TRUE(new_wal.load());
  options_.env = &disk_.fault;
  ASSERT_TRUE(disk_.fault.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());

  Status s = Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(CheckPrefix(30), 30);
}

// Seeded rounds on one database: commits in NONE mode with SyncWAL and FULL commits mixed
// in at random, then a power loss that loses each unsynced page with probability 1/2.
// Oracle: every commit acknowledged before the last sync survives, and what survives of a
// round is a prefix of its commits (nothing after a lost commit reappears); earlier
// rounds stay whole (recovery flushed them).
TEST_F(WalPowerLossTest, RandomPageLossKeepsASyncedPrefix) {
  const uint64_t seed = test::SeedFromEnv("TIDESDB_CRASH_SEED");
  const int rounds = test::IntFromEnv("TIDESDB_CRASH_ROUNDS", 40);
  std::mt19937_64 rng(seed);
  std::vector<int> kept;  // per round: commits that survived
  int cut_rounds = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round));
    Status s = Open();
    ASSERT_TRUE(s.ok()) << "recovery failed: " << s.ToString();
    for (int r = 0; r < round; ++r) {
      for (int i = 0; i < kept[r]; ++i) ASSERT_TRUE(Has(Key(r, i))) << Key(r, i) << " gone";
      ASSERT_FALSE(Has(Key(r, kept[r]))) << Key(r, kept[r]) << " came back";
    }
    const int commits = 20 + static_cast<int>(rng() % 60);
    int durable = 0;  // commits [0, durable) were synced before they were acknowledged
    for (int i = 0; i < commits; ++i) {
      WriteOptions wo;
      if (rng() % 10 == 0) wo.sync_mode = SyncMode::kFull;
      Put(Key(round, i), wo);
      if (wo.sync_mode) durable = i + 1;
      if (rng() % 12 == 0) {
        ASSERT_TRUE(db_->SyncWAL().ok());
        durable = i + 1;
      }
    }
    const int before = WarningsWith("never synced");
    disk_.fault.SetFilesystemActive(false);
    db_.reset();
    ASSERT_TRUE(disk_.fault.SimulatePowerLoss(PowerLossMode::kLoseUnsyncedPages, rng()).ok());
    disk_.fault.SetFilesystemActive(true);

    s = Open();
    ASSERT_TRUE(s.ok()) << "recovery after power loss failed: " << s.ToString();
    int k = 0;
    while (k < commits && Has(Key(round, k))) ++k;
    for (int i = k; i < commits; ++i) ASSERT_FALSE(Has(Key(round, i))) << Key(round, i) << " after a hole";
    ASSERT_GE(k, durable) << "lost a commit that was synced";
    kept.push_back(k);
    cut_rounds += WarningsWith("never synced") > before;
    db_.reset();
  }
  std::printf("%d power losses: %d cut a WAL at a lost page with later pages kept\n", rounds, cut_rounds);
  EXPECT_GT(cut_rounds, 0) << "the rounds never produced a lost page followed by a kept one";
}

}  // namespace
}  // namespace tidesdb
