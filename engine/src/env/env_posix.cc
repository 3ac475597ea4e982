// The POSIX Env: every file the library touches in production goes through here.
//
// Contracts beyond env.h:
//  * Unbuffered WritableFile::Append issues write(2) (looping on short writes and EINTR)
//    before it returns, so a killed process loses nothing that was appended. A single
//    Append of n bytes is one write(2) call unless the kernel returns a short count.
//  * Buffered files keep up to kWritableBufferSize bytes in user space until Flush, Sync,
//    Close or a full buffer.
//  * A file opened by NewAppendableFile reports Size() = its size at open + bytes appended,
//    so that writers reopened after recovery see real file offsets.
//  * Preallocate is fallocate(2) with mode 0 (the file size grows, the new space reads as
//    zeros; no data is written). Never emulated by writing zeros: NotSupported instead.
//  * NowMicros is wall-clock time (CLOCK_REALTIME), because callers compare it with TTL
//    expiry times that are stored on disk and must survive a restart. It can jump when the
//    system clock is set; do not use it where a monotonic interval is essential.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "tidesdb/env.h"

namespace tidesdb {

namespace {

constexpr size_t kWritableBufferSize = 64 * 1024;

Status PosixError(const std::string& context, int err) {
  switch (err) {
    case ENOENT:
      return Status::NotFound(context, std::strerror(err));
    case ENOSPC:
    case EDQUOT:
      return Status::NoSpace(context, std::strerror(err));
    default:
      return Status::IOError(context, std::strerror(err));
  }
}

// Paths locked by this process. fcntl locks are per process (a second F_SETLK from the
// same process succeeds, and closing any descriptor of the file drops the lock), so they
// alone cannot stop a second open of the same database inside one process.
std::mutex& LockedPathsMutex() {
  static std::mutex* mu = new std::mutex;  // never deleted: usable during static destruction
  return *mu;
}
std::set<std::string>& LockedPaths() {
  static auto* paths = new std::set<std::string>;
  return *paths;
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, Slice* result, char* scratch) override {
    while (true) {
      ssize_t r = ::read(fd_, scratch, n);
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = Slice();
        return PosixError(fname_, errno);
      }
      *result = Slice(scratch, static_cast<size_t>(r));
      return Status::OK();
    }
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) == static_cast<off_t>(-1)) {
      return PosixError(fname_, errno);
    }
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  // pread does not move a shared file offset, so concurrent reads are safe.
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = Slice();
        return PosixError(fname_, errno);
      }
      if (r == 0) break;  // end of file
      done += static_cast<size_t>(r);
    }
    *result = Slice(scratch, done);
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string fname, int fd, bool buffered, uint64_t initial_size, bool append_mode)
      : fname_(std::move(fname)),
        fd_(fd),
        buffered_(buffered),
        append_mode_(append_mode),
        size_(initial_size) {
    if (buffered_) buf_.reserve(kWritableBufferSize);
  }

  ~PosixWritableFile() override {
    if (fd_ >= 0) Close();  // errors are lost here; callers that care call Close()
  }

  Status Append(Slice data) override {
    if (fd_ < 0) return Status::IOError(fname_, "append after close");
    if (!buffered_) {
      Status s = WriteRaw(data);
      if (s.ok()) size_ += data.size();
      return s;
    }
    if (buf_.size() + data.size() <= kWritableBufferSize) {
      buf_.append(data);
      size_ += data.size();
      return Status::OK();
    }
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (data.size() >= kWritableBufferSize) {
      s = WriteRaw(data);  // large appends bypass the buffer
      if (s.ok()) size_ += data.size();
      return s;
    }
    buf_.append(data);
    size_ += data.size();
    return Status::OK();
  }

  Status Flush() override {
    if (fd_ < 0) return Status::IOError(fname_, "flush after close");
    return FlushBuffer();
  }

  Status Sync() override {
    if (fd_ < 0) return Status::IOError(fname_, "sync after close");
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (::fdatasync(fd_) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = FlushBuffer();
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

  Status StartWriteback(uint64_t offset, uint64_t nbytes) override {
    if (fd_ < 0) return Status::IOError(fname_, "writeback after close");
    // Advisory: an error here (e.g. a filesystem without support) changes nothing.
    (void)::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(nbytes),
                            SYNC_FILE_RANGE_WRITE);
    return Status::OK();
  }
  Status Preallocate(uint64_t end) override {
    if (fd_ < 0) return Status::IOError(fname_, "preallocate after close");
    // With O_APPEND every write goes to the end of the file, past the zeros.
    if (append_mode_) return Status::NotSupported(fname_, "preallocation of a file opened for append");
    if (end <= size_) return Status::OK();
    preallocated_ = true;  // even a failed fallocate may have extended the file
    while (::fallocate(fd_, 0, static_cast<off_t>(size_), static_cast<off_t>(end - size_)) != 0) {
      if (errno == EINTR) continue;
      if (errno == EOPNOTSUPP || errno == ENOSYS) {
        preallocated_ = false;
        return Status::NotSupported(fname_, std::strerror(errno));
      }
      return PosixError(fname_, errno);
    }
    return Status::OK();
  }

  Status TruncateToSize() override {
    if (fd_ < 0) return Status::IOError(fname_, "truncate after close");
    if (!preallocated_) return Status::OK();
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    while (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      if (errno != EINTR) return PosixError(fname_, errno);
    }
    preallocated_ = false;
    return Status::OK();
  }

  uint64_t Size() const override { return size_; }

 private:
  Status WriteRaw(Slice data) {
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      ssize_t w = ::write(fd_, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        return PosixError(fname_, errno);
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
    return Status::OK();
  }

  Status FlushBuffer() {
    if (buf_.empty()) return Status::OK();
    Status s = WriteRaw(buf_);
    // On failure the buffer is dropped as well: what part of it reached the file is
    // unknown, and retrying could duplicate bytes. The caller must treat the file as bad.
    buf_.clear();
    return s;
  }

  const std::string fname_;
  int fd_;
  const bool buffered_;
  const bool append_mode_;     // O_APPEND
  bool preallocated_ = false;  // the file may be longer than size_ (zeros past it)
  uint64_t size_;
  std::string buf_;
};

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixFileLock() override {
    struct flock fl;
    std::memset(&fl, 0, sizeof(fl));
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    ::fcntl(fd_, F_SETLK, &fl);
    ::close(fd_);
    std::lock_guard<std::mutex> l(LockedPathsMutex());
    LockedPaths().erase(fname_);
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname, std::unique_ptr<SequentialFile>* result) override {
    int fd = OpenRetry(fname, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixSequentialFile>(fname, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result) override {
    int fd = OpenRetry(fname, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixRandomAccessFile>(fname, fd);
    return Status::OK();
  }

  Status NewWritableFile(const std::string& fname, const EnvOptions& options,
                         std::unique_ptr<WritableFile>* result) override {
    int fd = OpenRetry(fname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    *result =
        std::make_unique<PosixWritableFile>(fname, fd, options.buffered_writes, 0, /*append_mode=*/false);
    return Status::OK();
  }

  Status NewAppendableFile(const std::string& fname, const EnvOptions& options,
                           std::unique_ptr<WritableFile>* result) override {
    int fd = OpenRetry(fname, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = PosixError(fname, errno);
      ::close(fd);
      return s;
    }
    *result = std::make_unique<PosixWritableFile>(fname, fd, options.buffered_writes,
                                                  static_cast<uint64_t>(st.st_size), /*append_mode=*/true);
    return Status::OK();
  }

  bool FileExists(const std::string& fname) override { return ::access(fname.c_str(), F_OK) == 0; }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    while (true) {
      errno = 0;
      struct dirent* e = ::readdir(d);
      if (e == nullptr) {
        int err = errno;
        ::closedir(d);
        if (err != 0) return PosixError(dir, err);
        return Status::OK();
      }
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      result->emplace_back(e->d_name);
    }
  }

  Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError(fname, errno);
    return Status::OK();
  }

  Status CreateDir(const std::string& dirname) override {
    if (::mkdir(dirname.c_str(), 0755) != 0) {
      int err = errno;
      struct stat st;
      if (err == EEXIST && ::stat(dirname.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::OK();
      return PosixError(dirname, err);
    }
    return Status::OK();
  }

  Status RemoveDir(const std::string& dirname) override {
    if (::rmdir(dirname.c_str()) != 0) return PosixError(dirname, errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) {
      *size = 0;
      return PosixError(fname, errno);
    }
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) return PosixError(src + " -> " + target, errno);
    return Status::OK();
  }

  Status LinkFile(const std::string& src, const std::string& target) override {
    if (::link(src.c_str(), target.c_str()) != 0) {
      int err = errno;
      // EPERM: the file system does not do hard links (e.g. vfat); EXDEV: another mount.
      if (err == EPERM || err == EXDEV || err == EOPNOTSUPP) {
        return Status::NotSupported(src + " -> " + target, std::strerror(err));
      }
      return PosixError(src + " -> " + target, err);
    }
    return Status::OK();
  }

  Status TruncateFile(const std::string& fname, uint64_t size) override {
    while (::truncate(fname.c_str(), static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return PosixError(fname, errno);
    }
    return Status::OK();
  }

  Status SyncDir(const std::string& dirname) override {
    int fd = OpenRetry(dirname, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) return PosixError(dirname, errno);
    Status s;
    if (::fsync(fd) != 0) s = PosixError(dirname, errno);
    ::close(fd);
    return s;
  }

  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    lock->reset();
    {
      std::lock_guard<std::mutex> l(LockedPathsMutex());
      if (!LockedPaths().insert(fname).second) {
        return Status::IOError("lock held by this process: " + fname, "already open?");
      }
    }
    auto release_path = [&fname] {
      std::lock_guard<std::mutex> l(LockedPathsMutex());
      LockedPaths().erase(fname);
    };
    int fd = OpenRetry(fname, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      Status s = PosixError(fname, errno);
      release_path();
      return s;
    }
    struct flock fl;
    std::memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
    if (::fcntl(fd, F_SETLK, &fl) != 0) {
      int err = errno;
      ::close(fd);
      release_path();
      if (err == EACCES || err == EAGAIN) {
        return Status::IOError("lock held by another process: " + fname, "already open?");
      }
      return PosixError(fname, err);
    }
    *lock = std::make_unique<PosixFileLock>(fname, fd);
    return Status::OK();
  }

  uint64_t NowMicros() override {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  }

  void SleepForMicros(uint64_t micros) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }

 private:
  static int OpenRetry(const std::string& fname, int flags, mode_t mode) {
    while (true) {
      int fd = ::open(fname.c_str(), flags, mode);
      if (fd >= 0 || errno != EINTR) return fd;
    }
  }
};

std::string DirName(const std::string& fname) {
  size_t slash = fname.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return fname.substr(0, slash);
}

}  // namespace

Env* Env::Default() {
  static Env* env = new PosixEnv;  // never deleted: background threads may outlive main()
  return env;
}

// Writes to "<fname>.tmp" and renames over fname, so a reader sees the old or the new
// contents, never a prefix. With sync, the data and the rename are durable on return.
Status WriteStringToFile(Env* env, Slice data, const std::string& fname, bool sync) {
  const std::string tmp = fname + ".tmp";
  std::unique_ptr<WritableFile> file;
  EnvOptions options;
  options.buffered_writes = true;
  Status s = env->NewWritableFile(tmp, options, &file);
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) s = file->Close();
  file.reset();
  if (s.ok()) s = env->RenameFile(tmp, fname);
  if (s.ok() && sync) s = env->SyncDir(DirName(fname));
  if (!s.ok()) env->RemoveFile(tmp);  // best effort; the original error is what matters
  return s;
}

Status ReadFileToString(Env* env, const std::string& fname, std::string* data) {
  data->clear();
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  constexpr size_t kChunk = 64 * 1024;
  std::string scratch(kChunk, '\0');
  while (true) {
    Slice fragment;
    s = file->Read(kChunk, &fragment, scratch.data());
    if (!s.ok()) return s;
    if (fragment.empty()) return Status::OK();
    data->append(fragment);
  }
}

}  // namespace tidesdb
