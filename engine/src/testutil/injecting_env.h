// Env wrappers for fault and crash tests.
//
//   EnvWrapper    forwards every call to a target Env; subclasses override what they change.
//   NoSyncEnv     Sync and SyncDir succeed without fsync. Put it under a FaultInjectionEnv,
//                 which simulates durability itself, so power-loss tests do not pay for
//                 real fsyncs on a loaded machine.
//   InjectingEnv  every mutating operation first asks a hook, which may fail it (the
//                 operation then does nothing), and reports to a second hook afterwards.
//                 Tests use it to fail only some files (a full disk that hits SSTables but
//                 not the WAL) or to cut power after the Nth operation.
//
// Thread-safe as far as the target is; hooks may be called from many threads at once.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tidesdb/env.h"

namespace tidesdb::test {

class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Status NewSequentialFile(const std::string& f, std::unique_ptr<SequentialFile>* r) override {
    return target_->NewSequentialFile(f, r);
  }
  Status NewRandomAccessFile(const std::string& f, std::unique_ptr<RandomAccessFile>* r) override {
    return target_->NewRandomAccessFile(f, r);
  }
  Status NewWritableFile(const std::string& f, const EnvOptions& o,
                         std::unique_ptr<WritableFile>* r) override {
    return target_->NewWritableFile(f, o, r);
  }
  Status NewAppendableFile(const std::string& f, const EnvOptions& o,
                           std::unique_ptr<WritableFile>* r) override {
    return target_->NewAppendableFile(f, o, r);
  }
  bool FileExists(const std::string& f) override { return target_->FileExists(f); }
  Status GetChildren(const std::string& d, std::vector<std::string>* r) override {
    return target_->GetChildren(d, r);
  }
  Status RemoveFile(const std::string& f) override { return target_->RemoveFile(f); }
  Status CreateDir(const std::string& d) override { return target_->CreateDir(d); }
  Status RemoveDir(const std::string& d) override { return target_->RemoveDir(d); }
  Status GetFileSize(const std::string& f, uint64_t* s) override { return target_->GetFileSize(f, s); }
  Status RenameFile(const std::string& s, const std::string& t) override { return target_->RenameFile(s, t); }
  Status LinkFile(const std::string& s, const std::string& t) override { return target_->LinkFile(s, t); }
  Status TruncateFile(const std::string& f, uint64_t n) override { return target_->TruncateFile(f, n); }
  Status SyncDir(const std::string& d) override { return target_->SyncDir(d); }
  Status LockFile(const std::string& f, std::unique_ptr<FileLock>* l) override {
    return target_->LockFile(f, l);
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }
  void SleepForMicros(uint64_t m) override { target_->SleepForMicros(m); }

 private:
  Env* const target_;
};

class NoSyncEnv : public EnvWrapper {
 public:
  explicit NoSyncEnv(Env* target = Env::Default()) : EnvWrapper(target) {}
  Status NewWritableFile(const std::string& f, const EnvOptions& o,
                         std::unique_ptr<WritableFile>* r) override;
  Status NewAppendableFile(const std::string& f, const EnvOptions& o,
                           std::unique_ptr<WritableFile>* r) override;
  Status SyncDir(const std::string& d) override { return Status::OK(); }
};

enum class EnvOp {
  kCreateFile,  // NewWritableFile / NewAppendableFile
  kAppend,
  kFlush,
  kSync,
  kClose,
  kRemove,
  kRename,  // fname is the source
  kLink,
  kTruncate,
  kSyncDir,
  kCreateDir,
  kRemoveDir,
};
const char* EnvOpName(EnvOp op);

class InjectingEnv : public EnvWrapper {
 public:
  // Returns non-OK to fail the operation before it reaches the target.
  using BeforeHook = std::function<Status(EnvOp op, const std::string& fname)>;
  // Sees every operation that reached the target, with its result.
  using AfterHook = std::function<void(EnvOp op, const std::string& fname, const Status& result)>;

  explicit InjectingEnv(Env* target) : EnvWrapper(target) {}

  // Replace the hooks (empty function = none). Safe while I/O runs.
  void SetBefore(BeforeHook hook);
  void SetAfter(AfterHook hook);

  Status NewWritableFile(const std::string& f, const EnvOptions& o,
                         std::unique_ptr<WritableFile>* r) override;
  Status NewAppendableFile(const std::string& f, const EnvOptions& o,
                           std::unique_ptr<WritableFile>* r) override;
  Status RemoveFile(const std::string& f) override;
  Status CreateDir(const std::string& d) override;
  Status RemoveDir(const std::string& d) override;
  Status RenameFile(const std::string& s, const std::string& t) override;
  Status LinkFile(const std::string& s, const std::string& t) override;
  Status TruncateFile(const std::string& f, uint64_t n) override;
  Status SyncDir(const std::string& d) override;

  // Runs op through the hooks: Before, then (if it allowed it) fn, then After.
  Status Run(EnvOp op, const std::string& fname, const std::function<Status()>& fn);

 private:
  std::shared_ptr<const BeforeHook> before() const;
  std::shared_ptr<const AfterHook> after() const;

  mutable std::mutex mu_;
  std::shared_ptr<const BeforeHook> before_;
  std::shared_ptr<const AfterHook> after_;
};

// True if fname ends with suffix (".klog", ".wal", ...).
bool EndsWith(const std::string& fname, const std::string& suffix);

}  // namespace tidesdb::test
