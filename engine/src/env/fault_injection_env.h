// FaultInjectionEnv: an Env for crash and fault tests. It wraps a base Env (writes still
// reach the real disk), remembers what a power loss could take away, and can make I/O
// fail on demand.
//
// Durability model. For every file written through this Env it tracks the bytes appended
// and the bytes made durable by WritableFile::Sync. A file created through it is "not
// durably linked" until SyncDir of its directory. SimulatePowerLoss then rewrites the real
// files to what a machine could show after losing power:
//   kDropUnsynced  every tracked file is cut back to its last synced size; files not
//                  durably linked are deleted.
//   kTornUnsynced  as above, but each file keeps a random prefix of its unsynced bytes, and
//                  a random-length suffix of that kept part is overwritten with random
//                  bytes: the last write torn mid-way. The garbage is always a suffix, so a
//                  checksummed log sees a torn tail, never intact data after a bad byte.
//   kLoseUnsyncedPages  the unsynced bytes are cut into pages (kPowerLossPageSize, at
//                  page-aligned file offsets), and each page independently survives or
//                  is lost (reads as zeros), as when the kernel wrote back some dirty pages
//                  and not others: a later page may survive an earlier one. A file ends
//                  where its last surviving page ends. SimulatePageLoss chooses the pages.
// Afterwards the tracking state restarts: what remains counts as synced and linked.
//
// Preallocation (WritableFile::Preallocate) is passed to the base file, so the real file
// carries zeros past its appended bytes, as on a real disk. The reserved length is durable
// from the file's next Sync: a power loss keeps the file at least as long as the length
// reserved at its last Sync (zeros past what survives of the appended bytes), drops space
// reserved since, and brings back, as zeros, space cut off by TruncateToSize or
// TruncateFile since that Sync.
//
// Limitations:
//   * Renames and removes are not undone, even without SyncDir: after a power loss the
//     directory shows its latest names. The tracked state follows a renamed file; a file
//     renamed over a durably linked name counts as linked, one renamed to a new name keeps
//     its own linked state.
//   * Truncation through TruncateFile counts as durable for the appended bytes it keeps
//     (preallocated zeros it cuts come back until a Sync: see above).
//   * LinkFile is passed through untracked (checkpoints link finished, synced files).
//   * Files that existed before and were not opened for writing through this Env are
//     never touched. A file reopened with NewAppendableFile counts its existing bytes as
//     synced.
//   * Paths are compared as strings; use one spelling per file ("db/x", not "db//x"), and
//     pass SyncDir the directory part of those paths.
//
// Buffered files (EnvOptions::buffered_writes) buffer in this Env's wrapper, not in the
// base Env, so bytes still in a buffer never reach the disk once the filesystem is set
// inactive: the state of a killed process.
//
// Thread-safe; the switches may be flipped while other threads do I/O.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tidesdb/env.h"

namespace tidesdb {

enum class PowerLossMode {
  kDropUnsynced,
  kTornUnsynced,
  kLoseUnsyncedPages,
};

constexpr uint64_t kPowerLossPageSize = 4096;

class FaultInjectionEnv : public Env {
 public:
  explicit FaultInjectionEnv(Env* base = Env::Default());
  ~FaultInjectionEnv() override;

  FaultInjectionEnv(const FaultInjectionEnv&) = delete;
  FaultInjectionEnv& operator=(const FaultInjectionEnv&) = delete;

  Env* base() const { return base_; }

  // See the durability model above. Works on the base Env, so it works while the
  // filesystem is inactive. Files still open must not be written afterwards (their file
  // offsets are stale): drop them, then reopen what is needed.
  Status SimulatePowerLoss(PowerLossMode mode, uint64_t seed);
  // kLoseUnsyncedPages with the pages chosen: an unsynced page of path starting at file
  // offset page_offset (a multiple of kPowerLossPageSize) is lost if lose(path,
  // page_offset) is true. The synced bytes at the start of a page are never lost.
  using PageLossFn = std::function<bool(const std::string& path, uint64_t page_offset)>;
  Status SimulatePageLoss(const PageLossFn& lose);

  // Sync (of files) and SyncDir return IOError while set. A failing Sync first writes out
  // the file's buffered bytes, as a real fsync failing after write(2) leaves them: in the
  // file (a clean close keeps them) but not durable (a power loss drops them).
  void SetFailSync(bool fail) { fail_sync_.store(fail); }
  // Sync of every file whose path contains path_part fails as above; SyncDir and other
  // files are not affected. An empty path_part (the default) fails none.
  void SetFailSyncOf(const std::string& path_part);
  // Append returns IOError, writing nothing, while set.
  void SetFailAppend(bool fail) { fail_append_.store(fail); }
  // bytes_appended() may grow to at most n: an Append that would pass n writes the bytes
  // that fit (a partial write) and returns NoSpace. n is absolute; to allow k more bytes,
  // pass bytes_appended() + k.
  void SetNoSpaceAfterBytes(uint64_t n) { no_space_limit_.store(n); }
  void ClearNoSpace() { no_space_limit_.store(kNoLimit); }
  // While false, every write, sync, create, rename, link, truncate, remove and lock returns
  // IOError "filesystem inactive", as if the process had died; reads still work.
  void SetFilesystemActive(bool active) { active_.store(active); }
  bool filesystem_active() const { return active_.load(); }

  // Successful WritableFile::Sync calls through this Env.
  uint64_t sync_count() const { return sync_count_.load(); }
  // Bytes accepted by Append (including partial writes) through this Env.
  uint64_t bytes_appended() const { return bytes_appended_.load(); }

  // Env interface.
  Status NewSequentialFile(const std::string& fname, std::unique_ptr<SequentialFile>* result) override;
  Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result) override;
  Status NewWritableFile(const std::string& fname, const EnvOptions& options,
                         std::unique_ptr<WritableFile>* result) override;
  Status NewAppendableFile(const std::string& fname, const EnvOptions& options,
                           std::unique_ptr<WritableFile>* result) override;
  bool FileExists(const std::string& fname) override;
  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override;
  Status RemoveFile(const std::string& fname) override;
  Status CreateDir(const std::string& dirname) override;
  Status RemoveDir(const std::string& dirname) override;
  Status GetFileSize(const std::string& fname, uint64_t* size) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status LinkFile(const std::string& src, const std::string& target) override;
  Status TruncateFile(const std::string& fname, uint64_t size) override;
  Status SyncDir(const std::string& dirname) override;
  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override;
  uint64_t NowMicros() override;
  void SleepForMicros(uint64_t micros) override;

 private:
  friend class FaultWritableFile;

  // Shared by the tracking map and the open file objects, so a rename keeps them linked.
  struct FileState {
    uint64_t synced_size = 0;  // bytes durable by Sync
    bool unlinked = false;     // created since the last SyncDir of its directory
    // Appended bytes that reached the base file; past them the file holds only
    // preallocated zeros.
    uint64_t data_size = 0;
    uint64_t reserved_size = 0;         // length Preallocate asked for (0: none, or cut since)
    uint64_t synced_reserved_size = 0;  // the file's length at least, after a power loss
    uint64_t cuts = 0;                  // TruncateToSize / TruncateFile calls so far
  };

  static constexpr uint64_t kNoLimit = ~uint64_t{0};

  Status CheckActive(const std::string& fname) const;
  // The two halves of a power loss: what each file keeps, chosen by keep_unsynced (given a
  // file's path, synced size and real size, it sets the bytes kept after the synced ones).
  using KeepFn =
      std::function<Status(const std::string& path, uint64_t synced, uint64_t real_size, std::string* kept)>;
  Status LosePower(const KeepFn& keep_unsynced);
  Status OpenForWrite(const std::string& fname, const EnvOptions& options, bool append,
                      std::unique_ptr<WritableFile>* result);
  // Counts the bytes of an n-byte append that fit under the no-space limit and returns
  // how many that is (n when unlimited). UnreserveAppend gives back bytes not written.
  uint64_t ReserveAppend(uint64_t n);
  void UnreserveAppend(uint64_t n) { bytes_appended_.fetch_sub(n); }
  // size and reserved as read when the sync began, with cuts then: a sync that began
  // before a cut does not make the length before it durable again.
  void RecordSync(FileState* state, uint64_t size, uint64_t reserved, uint64_t cuts);
  bool SyncFails(const std::string& fname);

  Env* const base_;
  std::atomic<bool> fail_sync_{false};
  std::atomic<bool> fail_append_{false};
  std::atomic<bool> active_{true};
  std::atomic<uint64_t> no_space_limit_{kNoLimit};
  std::atomic<uint64_t> sync_count_{0};
  std::atomic<uint64_t> bytes_appended_{0};

  std::mutex mu_;  // guards files_, every FileState's fields and fail_sync_of_
  std::string fail_sync_of_;
  std::map<std::string, std::shared_ptr<FileState>> files_;
};

}  // namespace tidesdb
