// Env: the one seam between the library and the operating system. Every file the library
// touches goes through an Env, so tests can substitute one that injects faults, tears
// writes, fills the disk or forgets unsynced data (see src/env/fault_injection_env.h).
//
// Thread safety: an Env is safe for concurrent use. A file object is used by one thread at
// a time unless stated otherwise (RandomAccessFile::Read is safe concurrently).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

// A file read front to back (WAL and manifest replay).
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes into scratch; *result points at the bytes read (empty at EOF).
  virtual Status Read(size_t n, Slice* result, char* scratch) = 0;
  virtual Status Skip(uint64_t n) = 0;
};

// A file read at offsets (SSTables, value logs). Read is safe from many threads at once.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset into scratch; *result may point into scratch or into
  // memory owned by the file. A short read happens only at end of file.
  virtual Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const = 0;
};

// A file written by appending (WAL, manifest, SSTable and value-log builders).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends data. After Append returns OK, the bytes are in the operating system's hands
  // (written with write(2), not buffered in user space) unless the file was opened with
  // buffering allowed (see EnvOptions::buffered_writes), in which case Flush() does that.
  virtual Status Append(Slice data) = 0;
  // Hands buffered bytes to the operating system.
  virtual Status Flush() = 0;
  // Makes appended bytes durable (fdatasync). Implies Flush().
  virtual Status Sync() = 0;
  // Asks the operating system to start writing [offset, offset + nbytes) to the device
  // without waiting, so that a later Sync has less to do. No durability promise of its
  // own; the default does nothing.
  virtual Status StartWriteback(uint64_t offset, uint64_t nbytes) { return Status::OK(); }
  // Makes the file at least `end` bytes long on disk, the space past Size() allocated and
  // reading as zeros (fallocate), so that appends up to `end` write into space the file
  // already has: a Sync after such an append need not also make a new file size durable
  // (on ext4, one device write fewer per fsync). Size() does not change and the next
  // Append still writes at Size(); the zeros stay part of the file until TruncateToSize.
  // The new length is durable after the next Sync. NotSupported where the file system
  // cannot (nothing changed) or for a file from NewAppendableFile; other errors may leave
  // the file longer than before, zeros past Size() either way.
  virtual Status Preallocate(uint64_t end) { return Status::NotSupported("preallocation"); }
  // Cuts the file back to Size(), dropping space Preallocate reserved; durable after the
  // next Sync. OK with nothing to do.
  virtual Status TruncateToSize() { return Status::OK(); }
  virtual Status Close() = 0;
  // Bytes appended so far; for a file from NewAppendableFile, its size at open plus the
  // bytes appended since (so Size() is the file offset the next Append writes at).
  virtual uint64_t Size() const = 0;
};

// Held while a database is open, so a second process cannot open it.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

struct EnvOptions {
  // If true, Append may buffer in user space until Flush/Sync/Close (SSTable builders).
  // If false, every Append reaches the operating system before it returns (WAL).
  bool buffered_writes = true;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX environment. Never deleted.
  static Env* Default();

  virtual Status NewSequentialFile(const std::string& fname, std::unique_ptr<SequentialFile>* result) = 0;
  virtual Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result) = 0;
  // Creates or truncates fname.
  virtual Status NewWritableFile(const std::string& fname, const EnvOptions& options,
                                 std::unique_ptr<WritableFile>* result) = 0;
  // Opens fname for appending, creating it if missing.
  virtual Status NewAppendableFile(const std::string& fname, const EnvOptions& options,
                                   std::unique_ptr<WritableFile>* result) = 0;

  virtual bool FileExists(const std::string& fname) = 0;
  // Names (not paths) of the entries in dir, without "." and "..".
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* result) = 0;
  virtual Status RemoveFile(const std::string& fname) = 0;
  virtual Status CreateDir(const std::string& dirname) = 0;  // OK if it exists
  virtual Status RemoveDir(const std::string& dirname) = 0;  // must be empty
  virtual Status GetFileSize(const std::string& fname, uint64_t* size) = 0;
  // Atomically replaces target with src (rename(2)).
  virtual Status RenameFile(const std::string& src, const std::string& target) = 0;
  // Hard link (checkpoints); NotSupported where the file system cannot.
  virtual Status LinkFile(const std::string& src, const std::string& target) = 0;
  virtual Status TruncateFile(const std::string& fname, uint64_t size) = 0;
  // fsync of a directory, so that creates, renames and removes in it are durable.
  virtual Status SyncDir(const std::string& dirname) = 0;

  virtual Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) = 0;

  // Wall-clock microseconds since the Unix epoch (CLOCK_REALTIME), so values compare with
  // TTL expiry times stored on disk. Can jump when the system clock is set.
  virtual uint64_t NowMicros() = 0;
  virtual void SleepForMicros(uint64_t micros) = 0;
};

// Helpers over any Env.
Status WriteStringToFile(Env* env, Slice data, const std::string& fname, bool sync);
Status ReadFileToString(Env* env, const std::string& fname, std::string* data);

}  // namespace tidesdb
