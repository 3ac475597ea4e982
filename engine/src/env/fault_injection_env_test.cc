// FaultInjectionEnv: power-loss simulation and injected failures.
#include "env/fault_injection_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "testutil/injecting_env.h"

namespace tidesdb {
namespace {

class FaultInjectionEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string tmpl = std::string(tmp != nullptr ? tmp : "/tmp") + "/tidesdb_fault_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<WritableFile> Open(const std::string& name, bool buffered = false) {
    std::unique_ptr<WritableFile> file;
    EnvOptions options;
    options.buffered_writes = buffered;
    Status s = env_.NewWritableFile(dir_ + "/" + name, options, &file);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return file;
  }

  // Read through a fresh Env, as a restarted process would.
  std::string Read(const std::string& name) {
    std::string data;
    Status s = ReadFileToString(Env::Default(), dir_ + "/" + name, &data);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return data;
  }
  bool Exists(const std::string& name) { return Env::Default()->FileExists(dir_ + "/" + name); }

  static std::string Pattern(size_t n, char base) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(base + i % 23);
    return s;
  }

  FaultInjectionEnv env_;
  std::string dir_;
};

TEST_F(FaultInjectionEnvTest, PowerLossTruncatesToSyncedSize) {
  auto file = Open("a");
  ASSERT_TRUE(env_.SyncDir(dir_).ok());
  const std::string synced = Pattern(100, 'a');
  ASSERT_TRUE(file->Append(synced).ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Append(Pattern(50, 'k')).ok());
  EXPECT_EQ(Read("a").size(), 150u);  // unsynced bytes are on disk until the power goes
  file.reset();
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("a"), synced);

  // Tracking restarts: a second power loss keeps what the first left.
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 2).ok());
  EXPECT_EQ(Read("a"), synced);
}

// Preallocated space: the length reserved before the last Sync survives a power loss as
// zeros past what survives of the appended bytes; a reserve not yet synced is dropped, and
// zeros cut off since the last Sync come back. Every mode, since the zeros are not
// unsynced bytes to tear or lose.
TEST_F(FaultInjectionEnvTest, PowerLossKeepsTheSyncedPreallocationAsZeros) {
  for (PowerLossMode mode :
       {PowerLossMode::kDropUnsynced, PowerLossMode::kTornUnsynced, PowerLossMode::kLoseUnsyncedPages}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto file = Open("p");
    ASSERT_TRUE(env_.SyncDir(dir_).ok());
    const std::string synced = Pattern(100, 'a');
    ASSERT_TRUE(file->Append(synced).ok());
    Status s = file->Preallocate(32 * 1024);
    if (s.IsNotSupported()) GTEST_SKIP() << s.ToString();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(file->Sync().ok());
    ASSERT_TRUE(file->Append(Pattern(5000, 'k')).ok());  // unsynced, inside the reserve
    ASSERT_TRUE(file->Preallocate(64 * 1024).ok());      // not synced: dropped
    file.reset();
    ASSERT_TRUE(env_.SimulatePowerLoss(mode, 7).ok());
    std::string data = Read("p");
    ASSERT_EQ(data.size(), 32u * 1024);
    EXPECT_EQ(data.substr(0, 100), synced);
    // Past the synced bytes: some prefix of the unsynced ones (torn or lost as the mode
    // says), then zeros; never anything past the appended 5100 bytes.
    EXPECT_TRUE(std::all_of(data.begin() + 5100, data.end(), [](char c) { return c == 0; }));

    // Cut off and not synced since: the zeros come back.
    std::unique_ptr<WritableFile> again;
    EnvOptions options;
    options.buffered_writes = false;
    ASSERT_TRUE(env_.NewWritableFile(dir_ + "/q", options, &again).ok());
    ASSERT_TRUE(env_.SyncDir(dir_).ok());
    ASSERT_TRUE(again->Append(synced).ok());
    ASSERT_TRUE(again->Preallocate(16 * 1024).ok());
    ASSERT_TRUE(again->Sync().ok());
    ASSERT_TRUE(again->TruncateToSize().ok());
    EXPECT_EQ(Read("q"), synced);
    again.reset();
    ASSERT_TRUE(env_.SimulatePowerLoss(mode, 8).ok());
    data = Read("q");
    ASSERT_EQ(data.size(), 16u * 1024);
    EXPECT_EQ(data.substr(0, 100), synced);

    // Cut off and synced: gone for good.
    ASSERT_TRUE(env_.NewWritableFile(dir_ + "/r", options, &again).ok());
    ASSERT_TRUE(env_.SyncDir(dir_).ok());
    ASSERT_TRUE(again->Append(synced).ok());
    ASSERT_TRUE(again->Preallocate(16 * 1024).ok());
    ASSERT_TRUE(again->Sync().ok());
    ASSERT_TRUE(again->TruncateToSize().ok());
    ASSERT_TRUE(again->Sync().ok());
    again.reset();
    ASSERT_TRUE(env_.SimulatePowerLoss(mode, 9).ok());
    EXPECT_EQ(Read("r"), synced);

    // TruncateFile by path, then a Sync through a new handle (as recovery cuts a WAL's
    // tail): gone for good too; without that Sync the zeros come back.
    for (bool sync_after : {false, true}) {
      ASSERT_TRUE(env_.NewWritableFile(dir_ + "/t", options, &again).ok());
      ASSERT_TRUE(env_.SyncDir(dir_).ok());
      ASSERT_TRUE(again->Append(synced).ok());
      ASSERT_TRUE(again->Preallocate(16 * 1024).ok());
      ASSERT_TRUE(again->Sync().ok());
      again.reset();
      ASSERT_TRUE(env_.TruncateFile(dir_ + "/t", 100).ok());
      if (sync_after) {
        ASSERT_TRUE(env_.NewAppendableFile(dir_ + "/t", options, &again).ok());
        ASSERT_TRUE(again->Sync().ok());
        again.reset();
      }
      ASSERT_TRUE(env_.SimulatePowerLoss(mode, 10).ok());
      EXPECT_EQ(Read("t").size(), sync_after ? 100u : 16u * 1024) << sync_after;
    }
    for (const char* name : {"p", "q", "r", "t"}) ASSERT_TRUE(env_.RemoveFile(dir_ + "/" + name).ok());
  }
}

// A sync that began before TruncateToSize (another thread's, as the WAL syncs outside
// its write queue) and ends after the cut and a later sync does not make the cut-off
// zeros durable again.
TEST_F(FaultInjectionEnvTest, ASyncThatBeganBeforeACutDoesNotUndoIt) {
  test::InjectingEnv base(Env::Default());
  std::atomic<int> syncs{0};
  std::atomic<bool> release{false};
  base.SetBefore([&](test::EnvOp op, const std::string&) {
    if (op == test::EnvOp::kSync && syncs.fetch_add(1) == 1) {
      while (!release.load()) std::this_thread::yield();  // the second sync stalls
    }
    return Status::OK();
  });
  FaultInjectionEnv env(&base);
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env.NewWritableFile(dir_ + "/c", options, &file).ok());
  ASSERT_TRUE(env.SyncDir(dir_).ok());
  ASSERT_TRUE(file->Append(Pattern(100, 'a')).ok());
  Status s = file->Preallocate(16 * 1024);
  if (s.IsNotSupported()) GTEST_SKIP() << s.ToString();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(file->Sync().ok());                             // the reserve is durable
  std::thread slow([&] { EXPECT_TRUE(file->Sync().ok()); });  // begins, then stalls
  while (syncs.load() < 2) std::this_thread::yield();
  ASSERT_TRUE(file->TruncateToSize().ok());
  ASSERT_TRUE(file->Sync().ok());  // the cut is durable
  release = true;
  slow.join();
  file.reset();
  ASSERT_TRUE(env.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("c"), Pattern(100, 'a'));
}

TEST_F(FaultInjectionEnvTest, UnsyncedNewFilesDisappearWithoutSyncDir) {
  auto a = Open("a");
  ASSERT_TRUE(a->Append("data").ok());
  ASSERT_TRUE(a->Sync().ok());  // data durable, but the name is not
  auto b = Open("b");
  ASSERT_TRUE(b->Append("data").ok());
  ASSERT_TRUE(b->Sync().ok());
  ASSERT_TRUE(env_.SyncDir(dir_ + "/").ok());  // trailing slash is fine
  auto c = Open("c");
  ASSERT_TRUE(c->Append("late").ok());
  ASSERT_TRUE(c->Sync().ok());
  a.reset();
  b.reset();
  c.reset();
  // a and b were linked by the SyncDir; only c is new since then.
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_TRUE(Exists("a"));
  EXPECT_TRUE(Exists("b"));
  EXPECT_FALSE(Exists("c"));
  EXPECT_EQ(Read("b"), "data");
}

TEST_F(FaultInjectionEnvTest, SyncDirCoversOnlyItsDirectory) {
  ASSERT_TRUE(env_.CreateDir(dir_ + "/sub").ok());
  auto top = Open("top");
  auto sub = Open("sub/inner");
  ASSERT_TRUE(env_.SyncDir(dir_ + "/sub").ok());
  top.reset();
  sub.reset();
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_FALSE(Exists("top"));
  EXPECT_TRUE(Exists("sub/inner"));
}

TEST_F(FaultInjectionEnvTest, ReopenedFilesCountExistingBytesAsSynced) {
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "old-", dir_ + "/f", true).ok());
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env_.NewAppendableFile(dir_ + "/f", options, &file).ok());
  EXPECT_EQ(file->Size(), 4u);
  ASSERT_TRUE(file->Append("new").ok());
  file.reset();
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("f"), "old-");

  // A truncating open leaves nothing durable.
  auto again = Open("f");
  ASSERT_TRUE(again->Append("x").ok());
  again.reset();
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("f"), "");
}

TEST_F(FaultInjectionEnvTest, TornModeKeepsPrefixWithGarbledSuffix) {
  const std::string synced = Pattern(1000, 'A');
  const std::string unsynced = Pattern(5000, 'a');
  int kept_some = 0, garbled_some = 0, dropped_all = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    auto file = Open("t");
    ASSERT_TRUE(env_.SyncDir(dir_).ok());
    ASSERT_TRUE(file->Append(synced).ok());
    ASSERT_TRUE(file->Sync().ok());
    ASSERT_TRUE(file->Append(unsynced).ok());
    file.reset();
    ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kTornUnsynced, seed).ok());
    const std::string after = Read("t");
    ASSERT_GE(after.size(), synced.size()) << "seed " << seed;
    ASSERT_LE(after.size(), synced.size() + unsynced.size()) << "seed " << seed;
    ASSERT_EQ(after.substr(0, synced.size()), synced) << "seed " << seed;
    const std::string tail = after.substr(synced.size());
    // What survives is intact bytes followed by a garbled suffix.
    size_t intact = 0;
    while (intact < tail.size() && tail[intact] == unsynced[intact]) ++intact;
    kept_some += intact > 0 ? 1 : 0;
    garbled_some += intact < tail.size() ? 1 : 0;
    dropped_all += tail.empty() ? 1 : 0;

    // The same seed tears the same way.
    auto redo = Open("t");
    ASSERT_TRUE(env_.SyncDir(dir_).ok());
    ASSERT_TRUE(redo->Append(synced).ok());
    ASSERT_TRUE(redo->Sync().ok());
    ASSERT_TRUE(redo->Append(unsynced).ok());
    redo.reset();
    ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kTornUnsynced, seed).ok());
    ASSERT_EQ(Read("t"), after) << "seed " << seed;
  }
  EXPECT_GT(kept_some, 0);
  EXPECT_GT(garbled_some, 0);
  EXPECT_LT(dropped_all, 30);
}

// An earlier unsynced page can be lost while a later one survives; synced bytes, also
// those at the start of a page, never are.
TEST_F(FaultInjectionEnvTest, PageLossDropsAnEarlierUnsyncedPageAndKeepsALaterOne) {
  const uint64_t page = kPowerLossPageSize;
  const std::string synced = Pattern(page + 100, 'A');  // ends 100 bytes into page 1
  const std::string unsynced = Pattern(3 * page, 'a');  // to 100 bytes into page 4
  auto file = Open("p");
  ASSERT_TRUE(env_.SyncDir(dir_).ok());
  ASSERT_TRUE(file->Append(synced).ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Append(unsynced).ok());
  file.reset();
  std::vector<uint64_t> asked;
  ASSERT_TRUE(env_.SimulatePageLoss([&](const std::string& path, uint64_t offset) {
                    EXPECT_EQ(path, dir_ + "/p");
                    asked.push_back(offset);
                    return offset == page || offset == 3 * page;  // page 1 (partly synced) and 3
                  })
                  .ok());
  EXPECT_EQ(asked, (std::vector<uint64_t>{page, 2 * page, 3 * page, 4 * page}));
  std::string want = synced + unsynced;
  std::fill(want.begin() + static_cast<ptrdiff_t>(synced.size()), want.begin() + 2 * page, '\0');
  std::fill(want.begin() + 3 * page, want.begin() + 4 * page, '\0');
  EXPECT_EQ(Read("p"), want);

  // Losing the last pages ends the file after the last surviving one; the state left
  // counts as synced, so the next power loss keeps it.
  auto again = Open("q");
  ASSERT_TRUE(env_.SyncDir(dir_).ok());
  ASSERT_TRUE(again->Append(unsynced).ok());
  again.reset();
  ASSERT_TRUE(env_.SimulatePageLoss([](const std::string& path, uint64_t offset) {
                    return path.find("/q") == std::string::npos || offset >= page;
                  })
                  .ok());
  EXPECT_EQ(Read("q"), unsynced.substr(0, page));
  EXPECT_EQ(Read("p"), want);
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("q"), unsynced.substr(0, page));
}

// The random mode loses some pages and keeps others, the same way for the same seed.
TEST_F(FaultInjectionEnvTest, RandomPageLossIsSeededAndMixesLostAndKeptPages) {
  const std::string unsynced = Pattern(16 * kPowerLossPageSize, 'a');
  int lost_before_kept = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::string first;
    for (int pass = 0; pass < 2; ++pass) {
      auto file = Open("r");
      ASSERT_TRUE(env_.SyncDir(dir_).ok());
      ASSERT_TRUE(file->Append(unsynced).ok());
      file.reset();
      ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kLoseUnsyncedPages, seed).ok());
      const std::string after = Read("r");
      if (pass == 1) {
        ASSERT_EQ(after, first) << "seed " << seed;
        continue;
      }
      first = after;
      bool lost_one = false;
      for (size_t p = 0; p * kPowerLossPageSize < after.size(); ++p) {
        const std::string got = after.substr(p * kPowerLossPageSize, kPowerLossPageSize);
        const bool lost = got == std::string(got.size(), '\0');
        ASSERT_TRUE(lost || got == unsynced.substr(p * kPowerLossPageSize, got.size())) << "seed " << seed;
        if (!lost && lost_one) ++lost_before_kept;
        lost_one |= lost;
      }
    }
  }
  EXPECT_GT(lost_before_kept, 0);
}

TEST_F(FaultInjectionEnvTest, NoSpacePartialWriteAndClear) {
  auto file = Open("f");
  ASSERT_TRUE(file->Append("0123456789").ok());
  EXPECT_EQ(env_.bytes_appended(), 10u);
  env_.SetNoSpaceAfterBytes(env_.bytes_appended() + 5);
  Status s = file->Append("abcdefgh");
  ASSERT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_EQ(Read("f"), "0123456789abcde");  // the bytes that fit were written
  EXPECT_EQ(file->Size(), 15u);
  EXPECT_TRUE(file->Append("x").IsNoSpace());
  EXPECT_EQ(Read("f"), "0123456789abcde");
  EXPECT_EQ(env_.bytes_appended(), 15u);
  env_.ClearNoSpace();
  ASSERT_TRUE(file->Append("Z").ok());
  EXPECT_EQ(Read("f"), "0123456789abcdeZ");
}

TEST_F(FaultInjectionEnvTest, NoSpaceLimitIsExactUnderConcurrency) {
  constexpr uint64_t kLimit = 100000;
  env_.SetNoSpaceAfterBytes(kLimit);
  std::vector<std::thread> threads;
  std::atomic<int> no_space{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto file = Open("f" + std::to_string(t));
      for (int i = 0; i < 1000; ++i) {
        Status s = file->Append(Pattern(97, 'a'));
        if (s.IsNoSpace()) ++no_space;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(env_.bytes_appended(), kLimit);
  uint64_t total = 0;
  for (int t = 0; t < 4; ++t) total += Read("f" + std::to_string(t)).size();
  EXPECT_EQ(total, kLimit);
  EXPECT_GT(no_space.load(), 0);
}

TEST_F(FaultInjectionEnvTest, BufferedFilesHonourTheLimitToo) {
  auto file = Open("buf", /*buffered=*/true);
  env_.SetNoSpaceAfterBytes(4);
  EXPECT_TRUE(file->Append("abcdef").IsNoSpace());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(Read("buf"), "abcd");
}

TEST_F(FaultInjectionEnvTest, FailSync) {
  auto file = Open("f");
  ASSERT_TRUE(env_.SyncDir(dir_).ok());
  ASSERT_TRUE(file->Append("durable").ok());
  ASSERT_TRUE(file->Sync().ok());
  EXPECT_EQ(env_.sync_count(), 1u);
  ASSERT_TRUE(file->Append("-lost").ok());
  env_.SetFailSync(true);
  EXPECT_TRUE(file->Sync().IsIOError());
  EXPECT_TRUE(env_.SyncDir(dir_).IsIOError());
  EXPECT_EQ(env_.sync_count(), 1u);
  env_.SetFailSync(false);
  file.reset();
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("f"), "durable");
}

// A failed fsync comes after write(2): the buffered bytes are in the file (readable, kept
// by a clean close) but not durable. SetFailSyncOf fails only the files it names.
TEST_F(FaultInjectionEnvTest, FailedSyncOfChosenFilesWritesTheBytesButLeavesThemUnsynced) {
  auto manifest = Open("MANIFEST-000007", /*buffered=*/true);
  auto other = Open("other", /*buffered=*/true);
  ASSERT_TRUE(env_.SyncDir(dir_).ok());
  ASSERT_TRUE(manifest->Append("durable").ok());
  ASSERT_TRUE(manifest->Sync().ok());
  ASSERT_TRUE(manifest->Append("-written").ok());
  EXPECT_EQ(Read("MANIFEST-000007"), "durable");  // still in the wrapper's buffer
  env_.SetFailSyncOf("MANIFEST-");
  EXPECT_TRUE(manifest->Sync().IsIOError());
  EXPECT_EQ(Read("MANIFEST-000007"), "durable-written");
  ASSERT_TRUE(other->Append("other").ok());
  EXPECT_TRUE(other->Sync().ok());
  EXPECT_TRUE(env_.SyncDir(dir_).ok());
  env_.SetFailSyncOf("");
  manifest.reset();
  other.reset();
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("MANIFEST-000007"), "durable");
  EXPECT_EQ(Read("other"), "other");
}

TEST_F(FaultInjectionEnvTest, FailAppendWritesNothing) {
  auto file = Open("f");
  ASSERT_TRUE(file->Append("ok").ok());
  env_.SetFailAppend(true);
  EXPECT_TRUE(file->Append("no").IsIOError());
  EXPECT_EQ(file->Size(), 2u);
  env_.SetFailAppend(false);
  ASSERT_TRUE(file->Append("!").ok());
  EXPECT_EQ(Read("f"), "ok!");
  EXPECT_EQ(env_.bytes_appended(), 3u);
}

TEST_F(FaultInjectionEnvTest, InactiveFilesystemRefusesEveryChange) {
  auto file = Open("f");
  auto buffered = Open("b", /*buffered=*/true);
  ASSERT_TRUE(file->Append("before").ok());
  ASSERT_TRUE(buffered->Append("in-buffer").ok());
  env_.SetFilesystemActive(false);
  EXPECT_FALSE(env_.filesystem_active());

  auto inactive = [](const Status& s) {
    return s.IsIOError() && s.message().find("filesystem inactive") != std::string::npos;
  };
  EXPECT_TRUE(inactive(file->Append("after")));
  EXPECT_TRUE(inactive(file->Sync()));
  EXPECT_TRUE(inactive(buffered->Flush()));
  std::unique_ptr<WritableFile> created;
  EXPECT_TRUE(inactive(env_.NewWritableFile(dir_ + "/new", EnvOptions{}, &created)));
  EXPECT_TRUE(inactive(env_.NewAppendableFile(dir_ + "/new", EnvOptions{}, &created)));
  EXPECT_TRUE(inactive(env_.RenameFile(dir_ + "/f", dir_ + "/g")));
  EXPECT_TRUE(inactive(env_.RemoveFile(dir_ + "/f")));
  EXPECT_TRUE(inactive(env_.TruncateFile(dir_ + "/f", 0)));
  EXPECT_TRUE(inactive(env_.LinkFile(dir_ + "/f", dir_ + "/h")));
  EXPECT_TRUE(inactive(env_.CreateDir(dir_ + "/d")));
  EXPECT_TRUE(inactive(env_.SyncDir(dir_)));
  std::unique_ptr<FileLock> lock;
  EXPECT_TRUE(inactive(env_.LockFile(dir_ + "/LOCK", &lock)));
  EXPECT_FALSE(env_.FileExists(dir_ + "/new"));

  // Reads still work.
  std::string data;
  ASSERT_TRUE(ReadFileToString(&env_, dir_ + "/f", &data).ok());
  EXPECT_EQ(data, "before");

  // A buffered file dropped while the filesystem is dead loses its buffer, as a killed
  // process would.
  buffered.reset();
  file.reset();
  EXPECT_EQ(Read("b"), "");

  env_.SetFilesystemActive(true);
  ASSERT_TRUE(env_.RenameFile(dir_ + "/f", dir_ + "/g").ok());
}

TEST_F(FaultInjectionEnvTest, TrackingFollowsRenameAndTruncate) {
  auto tmp = Open("CURRENT.tmp");
  ASSERT_TRUE(tmp->Append("MANIFEST-000001\n").ok());
  ASSERT_TRUE(tmp->Sync().ok());
  tmp.reset();
  ASSERT_TRUE(env_.RenameFile(dir_ + "/CURRENT.tmp", dir_ + "/CURRENT").ok());
  ASSERT_TRUE(env_.SyncDir(dir_).ok());

  auto log = Open("log");
  ASSERT_TRUE(env_.SyncDir(dir_).ok());
  ASSERT_TRUE(log->Append("0123456789").ok());
  ASSERT_TRUE(log->Sync().ok());
  log.reset();
  ASSERT_TRUE(env_.TruncateFile(dir_ + "/log", 4).ok());

  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("CURRENT"), "MANIFEST-000001\n");
  EXPECT_FALSE(Exists("CURRENT.tmp"));
  EXPECT_EQ(Read("log"), "0123");
}

TEST_F(FaultInjectionEnvTest, RenameOverADurableNameKeepsTheName) {
  ASSERT_TRUE(WriteStringToFile(&env_, "old", dir_ + "/CURRENT", true).ok());
  auto tmp = Open("CURRENT.tmp");
  ASSERT_TRUE(tmp->Append("new").ok());
  ASSERT_TRUE(tmp->Sync().ok());
  tmp.reset();
  auto fresh = Open("fresh.tmp");
  ASSERT_TRUE(fresh->Append("x").ok());
  ASSERT_TRUE(fresh->Sync().ok());
  fresh.reset();
  ASSERT_TRUE(env_.RenameFile(dir_ + "/CURRENT.tmp", dir_ + "/CURRENT").ok());  // no SyncDir
  ASSERT_TRUE(env_.RenameFile(dir_ + "/fresh.tmp", dir_ + "/fresh").ok());
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("CURRENT"), "new");
  EXPECT_FALSE(Exists("fresh"));  // a new name that was never made durable
}

TEST_F(FaultInjectionEnvTest, WriteStringToFileWithSyncSurvivesPowerLoss) {
  ASSERT_TRUE(WriteStringToFile(&env_, "synced", dir_ + "/s", true).ok());
  ASSERT_TRUE(WriteStringToFile(&env_, "unsynced", dir_ + "/u", false).ok());
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kDropUnsynced, 1).ok());
  EXPECT_EQ(Read("s"), "synced");
  EXPECT_FALSE(Exists("u"));
}

TEST_F(FaultInjectionEnvTest, RemovedFilesAreForgotten) {
  auto file = Open("gone");
  ASSERT_TRUE(file->Append("x").ok());
  file.reset();
  ASSERT_TRUE(env_.RemoveFile(dir_ + "/gone").ok());
  ASSERT_TRUE(env_.SimulatePowerLoss(PowerLossMode::kTornUnsynced, 1).ok());
  EXPECT_FALSE(Exists("gone"));
}

}  // namespace
}  // namespace tidesdb
