// The POSIX Env: file kinds, buffering contract, error mapping, locking, concurrent pread.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tidesdb/env.h"

namespace tidesdb {
namespace {

class EnvPosixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string tmpl = std::string(tmp != nullptr ? tmp : "/tmp") + "/tidesdb_env_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  uint64_t FileSize(const std::string& path) {
    uint64_t size = 0;
    EXPECT_TRUE(env_->GetFileSize(path, &size).ok());
    return size;
  }

  Env* env_ = Env::Default();
  std::string dir_;
};

TEST_F(EnvPosixTest, DefaultIsASingleton) { EXPECT_EQ(Env::Default(), Env::Default()); }

TEST_F(EnvPosixTest, WriteStringAndReadBack) {
  const std::string path = dir_ + "/CURRENT";
  std::string big(200000, 'q');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  for (bool sync : {false, true}) {
    ASSERT_TRUE(WriteStringToFile(env_, big, path, sync).ok());
    std::string back;
    ASSERT_TRUE(ReadFileToString(env_, path, &back).ok());
    EXPECT_EQ(back, big);
    EXPECT_FALSE(env_->FileExists(path + ".tmp"));
  }
  ASSERT_TRUE(WriteStringToFile(env_, "", path, true).ok());
  std::string back = "junk";
  ASSERT_TRUE(ReadFileToString(env_, path, &back).ok());
  EXPECT_TRUE(back.empty());
  EXPECT_TRUE(ReadFileToString(env_, dir_ + "/missing", &back).IsNotFound());
  // A directory that does not exist.
  EXPECT_FALSE(WriteStringToFile(env_, "x", dir_ + "/no/such/file", false).ok());
}

TEST_F(EnvPosixTest, UnbufferedAppendReachesTheFileBeforeReturning) {
  const std::string path = dir_ + "/wal";
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env_->NewWritableFile(path, options, &file).ok());
  ASSERT_TRUE(file->Append("hello").ok());
  EXPECT_EQ(FileSize(path), 5u);  // no Flush needed
  ASSERT_TRUE(file->Append(std::string(1 << 20, 'z')).ok());
  EXPECT_EQ(FileSize(path), 5u + (1 << 20));
  EXPECT_EQ(file->Size(), 5u + (1 << 20));
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());
  ASSERT_TRUE(file->Close().ok());  // idempotent
  EXPECT_TRUE(file->Append("x").IsIOError());
}

// Preallocate: the file on disk is as long as asked, zeros past the appended bytes, while
// Size() and the next append's offset stay at the appended bytes; TruncateToSize cuts the
// zeros off. Skipped where the file system cannot preallocate (tmpfs can, ext4 and xfs
// can).
TEST_F(EnvPosixTest, PreallocatedSpaceIsZerosPastSizeUntilTruncateToSize) {
  const std::string path = dir_ + "/wal";
  for (bool buffered : {false, true}) {
    std::unique_ptr<WritableFile> file;
    EnvOptions options;
    options.buffered_writes = buffered;
    ASSERT_TRUE(env_->NewWritableFile(path, options, &file).ok());
    ASSERT_TRUE(file->Append("head").ok());
    Status s = file->Preallocate(64 * 1024);
    if (s.IsNotSupported()) GTEST_SKIP() << s.ToString();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(FileSize(path), 64u * 1024);
    EXPECT_EQ(file->Size(), 4u);
    ASSERT_TRUE(file->Append("tail").ok());
    ASSERT_TRUE(file->Sync().ok());
    EXPECT_EQ(file->Size(), 8u);
    std::string data;
    ASSERT_TRUE(ReadFileToString(env_, path, &data).ok());
    ASSERT_EQ(data.size(), 64u * 1024);
    EXPECT_EQ(data.substr(0, 8), "headtail");
    EXPECT_TRUE(std::all_of(data.begin() + 8, data.end(), [](char c) { return c == 0; }));
    EXPECT_TRUE(file->Preallocate(6).ok());  // below Size(): nothing to do
    EXPECT_EQ(FileSize(path), 64u * 1024);

    ASSERT_TRUE(file->Append("more").ok());
    ASSERT_TRUE(file->TruncateToSize().ok());
    EXPECT_EQ(FileSize(path), 12u);
    ASSERT_TRUE(file->TruncateToSize().ok());  // nothing left to cut
    ASSERT_TRUE(file->Close().ok());
    ASSERT_TRUE(ReadFileToString(env_, path, &data).ok());
    EXPECT_EQ(data, "headtailmore");
  }
}

// A file opened for append writes at the end of the file whatever its offset: zeros in
// front of the appends would be holes in the data, so it refuses to preallocate.
TEST_F(EnvPosixTest, AppendableFileDoesNotPreallocate) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(WriteStringToFile(env_, "abc", path, false).ok());
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env_->NewAppendableFile(path, options, &file).ok());
  EXPECT_TRUE(file->Preallocate(4096).IsNotSupported());
  EXPECT_EQ(FileSize(path), 3u);
  ASSERT_TRUE(file->TruncateToSize().ok());
  ASSERT_TRUE(file->Close().ok());
}

TEST_F(EnvPosixTest, BufferedAppendWaitsForFlush) {
  const std::string path = dir_ + "/sst";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(env_->NewWritableFile(path, EnvOptions{}, &file).ok());
  ASSERT_TRUE(file->Append("abc").ok());
  EXPECT_EQ(FileSize(path), 0u);
  EXPECT_EQ(file->Size(), 3u);
  ASSERT_TRUE(file->Flush().ok());
  EXPECT_EQ(FileSize(path), 3u);

  // Filling the 64 KiB buffer writes it out.
  std::string expect = "abc";
  for (int i = 0; i < 100; ++i) {
    std::string piece(1000, static_cast<char>('a' + i % 26));
    expect += piece;
    ASSERT_TRUE(file->Append(piece).ok());
  }
  EXPECT_GE(FileSize(path), 64u * 1024 - 1000);
  EXPECT_LT(FileSize(path), expect.size());
  // A large append goes straight through.
  std::string large(300000, 'L');
  expect += large;
  ASSERT_TRUE(file->Append(large).ok());
  EXPECT_EQ(FileSize(path), expect.size());
  ASSERT_TRUE(file->Append("tail").ok());
  expect += "tail";
  ASSERT_TRUE(file->Sync().ok());  // implies Flush
  EXPECT_EQ(FileSize(path), expect.size());
  ASSERT_TRUE(file->Append("more").ok());
  expect += "more";
  ASSERT_TRUE(file->Close().ok());  // flushes
  std::string back;
  ASSERT_TRUE(ReadFileToString(env_, path, &back).ok());
  EXPECT_EQ(back, expect);

  // The destructor flushes too.
  ASSERT_TRUE(env_->NewWritableFile(path, EnvOptions{}, &file).ok());
  ASSERT_TRUE(file->Append("dtor").ok());
  file.reset();
  ASSERT_TRUE(ReadFileToString(env_, path, &back).ok());
  EXPECT_EQ(back, "dtor");
}

TEST_F(EnvPosixTest, AppendableFileContinuesAndCountsExistingBytes) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(WriteStringToFile(env_, "12345", path, false).ok());
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env_->NewAppendableFile(path, options, &file).ok());
  EXPECT_EQ(file->Size(), 5u);
  ASSERT_TRUE(file->Append("678").ok());
  EXPECT_EQ(file->Size(), 8u);
  ASSERT_TRUE(file->Close().ok());
  std::string back;
  ASSERT_TRUE(ReadFileToString(env_, path, &back).ok());
  EXPECT_EQ(back, "12345678");

  // Creates a missing file.
  ASSERT_TRUE(env_->NewAppendableFile(dir_ + "/new", options, &file).ok());
  EXPECT_EQ(file->Size(), 0u);
  EXPECT_TRUE(env_->FileExists(dir_ + "/new"));

  // NewWritableFile truncates.
  ASSERT_TRUE(env_->NewWritableFile(path, options, &file).ok());
  EXPECT_EQ(FileSize(path), 0u);
}

TEST_F(EnvPosixTest, MissingFilesAreNotFound) {
  const std::string missing = dir_ + "/missing";
  std::unique_ptr<SequentialFile> seq;
  std::unique_ptr<RandomAccessFile> ra;
  uint64_t size = 0;
  EXPECT_TRUE(env_->NewSequentialFile(missing, &seq).IsNotFound());
  EXPECT_TRUE(env_->NewRandomAccessFile(missing, &ra).IsNotFound());
  Status s = env_->GetFileSize(missing, &size);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_NE(s.message().find(missing), std::string::npos) << s.ToString();
  EXPECT_TRUE(env_->RemoveFile(missing).IsNotFound());
  EXPECT_FALSE(env_->FileExists(missing));
  std::vector<std::string> children;
  EXPECT_TRUE(env_->GetChildren(missing, &children).IsNotFound());
}

TEST_F(EnvPosixTest, DirectoryAndFileOperations) {
  const std::string sub = dir_ + "/sub";
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  ASSERT_TRUE(env_->CreateDir(sub).ok());  // exists: fine
  ASSERT_TRUE(WriteStringToFile(env_, "x", dir_ + "/plain", false).ok());
  EXPECT_FALSE(env_->CreateDir(dir_ + "/plain").ok());  // a file is in the way
  ASSERT_TRUE(WriteStringToFile(env_, "aaaa", sub + "/a", false).ok());
  ASSERT_TRUE(WriteStringToFile(env_, "bb", sub + "/b", false).ok());
  ASSERT_TRUE(env_->SyncDir(sub).ok());
  EXPECT_FALSE(env_->SyncDir(dir_ + "/none").ok());

  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren(sub, &children).ok());
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<std::string>{"a", "b"}));

  ASSERT_TRUE(env_->RenameFile(sub + "/a", sub + "/b").ok());  // replaces b
  EXPECT_FALSE(env_->FileExists(sub + "/a"));
  EXPECT_EQ(FileSize(sub + "/b"), 4u);
  EXPECT_TRUE(env_->RenameFile(sub + "/a", sub + "/c").IsNotFound());

  ASSERT_TRUE(env_->LinkFile(sub + "/b", sub + "/link").ok());
  EXPECT_EQ(FileSize(sub + "/link"), 4u);
  EXPECT_FALSE(env_->LinkFile(sub + "/b", sub + "/link").ok());  // target exists

  ASSERT_TRUE(env_->TruncateFile(sub + "/b", 1).ok());
  EXPECT_EQ(FileSize(sub + "/link"), 1u);  // same inode
  EXPECT_TRUE(env_->TruncateFile(sub + "/nope", 0).IsNotFound());

  EXPECT_FALSE(env_->RemoveDir(sub).ok());  // not empty
  ASSERT_TRUE(env_->RemoveFile(sub + "/b").ok());
  ASSERT_TRUE(env_->RemoveFile(sub + "/link").ok());
  ASSERT_TRUE(env_->RemoveDir(sub).ok());
  EXPECT_FALSE(env_->FileExists(sub));
}

TEST_F(EnvPosixTest, SequentialFileReadAndSkip) {
  const std::string path = dir_ + "/seq";
  ASSERT_TRUE(WriteStringToFile(env_, "0123456789", path, false).ok());
  std::unique_ptr<SequentialFile> file;
  ASSERT_TRUE(env_->NewSequentialFile(path, &file).ok());
  char scratch[16];
  Slice got;
  ASSERT_TRUE(file->Read(3, &got, scratch).ok());
  EXPECT_EQ(got, "012");
  ASSERT_TRUE(file->Skip(4).ok());
  ASSERT_TRUE(file->Read(16, &got, scratch).ok());
  EXPECT_EQ(got, "789");
  ASSERT_TRUE(file->Read(16, &got, scratch).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(EnvPosixTest, ConcurrentPread) {
  const std::string path = dir_ + "/data";
  constexpr size_t kSize = 1 << 20;
  std::string data(kSize, '\0');
  for (size_t i = 0; i < kSize; ++i) data[i] = static_cast<char>((i * 2654435761u) >> 13);
  ASSERT_TRUE(WriteStringToFile(env_, data, path, false).ok());
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &file).ok());

  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      uint64_t x = 0x1234567 + t;
      std::vector<char> scratch(5000);
      for (int i = 0; i < 3000; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t offset = (x >> 20) % kSize;
        const size_t n = 1 + (x >> 50) % 4096;
        Slice got;
        if (!file->Read(offset, n, &got, scratch.data()).ok()) {
          ++mismatches[t];
          continue;
        }
        const size_t expect_n = std::min<uint64_t>(n, kSize - offset);  // short only at EOF
        if (got != Slice(data).substr(offset, expect_n)) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;

  Slice got;
  char scratch[8];
  ASSERT_TRUE(file->Read(kSize + 100, 8, &got, scratch).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(EnvPosixTest, LockTwiceInOneProcessFails) {
  const std::string path = dir_ + "/LOCK";
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env_->LockFile(path, &lock).ok());
  ASSERT_NE(lock, nullptr);
  std::unique_ptr<FileLock> second;
  Status s = env_->LockFile(path, &second);
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("already open?"), std::string::npos) << s.ToString();
  EXPECT_EQ(second, nullptr);
  lock.reset();  // unlocks
  ASSERT_TRUE(env_->LockFile(path, &second).ok());
}

TEST_F(EnvPosixTest, LockIsHeldAgainstOtherProcesses) {
  const std::string path = dir_ + "/LOCK";
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env_->LockFile(path, &lock).ok());
  // The child asks the kernel directly: the process-wide set was copied by fork, so
  // Env::LockFile in the child would fail without consulting fcntl.
  auto child_can_lock = [&path]() -> int {
    pid_t pid = fork();
    if (pid == 0) {
      int fd = ::open(path.c_str(), O_RDWR);
      struct flock fl;
      std::memset(&fl, 0, sizeof(fl));
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      _exit(fd >= 0 && ::fcntl(fd, F_SETLK, &fl) == 0 ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(child_can_lock(), 0);
  lock.reset();
  EXPECT_EQ(child_can_lock(), 1);
}

TEST_F(EnvPosixTest, NoSpaceIsMappedFromEnospc) {
  // /dev/full fails every write with ENOSPC.
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = false;
  ASSERT_TRUE(env_->NewAppendableFile("/dev/full", options, &file).ok());
  Status s = file->Append("data");
  ASSERT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_NE(s.message().find("/dev/full"), std::string::npos);

  options.buffered_writes = true;
  ASSERT_TRUE(env_->NewAppendableFile("/dev/full", options, &file).ok());
  ASSERT_TRUE(file->Append("data").ok());  // buffered
  EXPECT_TRUE(file->Flush().IsNoSpace());
}

TEST_F(EnvPosixTest, OtherErrorsAreIOError) {
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(dir_, EnvOptions{}, &file);  // a directory
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
}

TEST_F(EnvPosixTest, NowMicrosIsWallClock) {
  const uint64_t now = env_->NowMicros();
  const uint64_t wall = static_cast<uint64_t>(::time(nullptr)) * 1000000u;
  EXPECT_LT(now > wall ? now - wall : wall - now, 5u * 1000000u);
  const uint64_t before = env_->NowMicros();
  env_->SleepForMicros(2000);
  EXPECT_GE(env_->NowMicros() - before, 1500u);
}

}  // namespace
}  // namespace tidesdb
