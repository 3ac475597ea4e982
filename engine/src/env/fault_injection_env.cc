#include "env/fault_injection_env.h"

#include <algorithm>

namespace tidesdb {

namespace {

constexpr size_t kWrapperBufferSize = 64 * 1024;

// splitmix64: a small seeded generator whose sequence is the same on every platform, so
// a failing seed reproduces anywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n].
  uint64_t UpTo(uint64_t n) { return n == ~uint64_t{0} ? Next() : Next() % (n + 1); }

 private:
  uint64_t state_;
};

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string StripTrailingSlashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

Status ReadRange(Env* env, const std::string& fname, uint64_t offset, size_t n, std::string* out) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = env->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  out->assign(n, '\0');
  Slice got;
  s = file->Read(offset, n, &got, out->data());
  if (!s.ok()) return s;
  if (got.size() != n) return Status::IOError(fname, "short read while simulating power loss");
  if (got.data() != out->data()) std::copy(got.begin(), got.end(), out->begin());
  return Status::OK();
}

}  // namespace

// Wraps a base file opened unbuffered; buffers itself when asked to, so that nothing
// reaches the base file without passing the fault checks.
class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string fname,
                    std::shared_ptr<FaultInjectionEnv::FileState> state, std::unique_ptr<WritableFile> base,
                    bool buffered)
      : env_(env),
        fname_(std::move(fname)),
        state_(std::move(state)),
        base_(std::move(base)),
        buffered_(buffered),
        size_(base_->Size()) {}

  ~FaultWritableFile() override {
    if (!closed_) Close();  // a dead filesystem drops the buffer, as a killed process would
  }

  Status Append(Slice data) override {
    if (closed_) return Status::IOError(fname_, "append after close");
    Status s = env_->CheckActive(fname_);
    if (!s.ok()) return s;
    if (env_->fail_append_.load()) return Status::IOError(fname_, "injected append failure");
    const uint64_t allowed = env_->ReserveAppend(data.size());
    const Slice part = data.substr(0, static_cast<size_t>(allowed));
    if (buffered_) {
      if (buf_.size() + part.size() > kWrapperBufferSize) s = FlushBuffer();
      if (s.ok()) buf_.append(part);
    } else if (!part.empty()) {
      s = base_->Append(part);
      if (s.ok()) NoteWritten(part.size());
    }
    if (!s.ok()) {
      env_->UnreserveAppend(allowed);
      return s;
    }
    size_ += part.size();
    if (part.size() < data.size()) return Status::NoSpace(fname_, "injected: no space left on device");
    return Status::OK();
  }

  Status Flush() override {
    if (closed_) return Status::IOError(fname_, "flush after close");
    Status s = env_->CheckActive(fname_);
    if (!s.ok()) return s;
    return FlushBuffer();
  }

  Status Sync() override {
    if (closed_) return Status::IOError(fname_, "sync after close");
    Status s = env_->CheckActive(fname_);
    if (!s.ok()) return s;
    s = FlushBuffer();
    if (s.ok() && env_->SyncFails(fname_)) return Status::IOError(fname_, "injected sync failure");
    // Only what was appended (and reserved) before the sync began counts as synced:
    // another thread may append while it runs (the WAL syncs outside its write queue).
    const uint64_t synced = size_.load();
    uint64_t reserved = 0, cuts = 0;
    {
      std::lock_guard<std::mutex> l(env_->mu_);
      reserved = state_->reserved_size;
      cuts = state_->cuts;
    }
    if (s.ok()) s = base_->Sync();
    if (s.ok()) env_->RecordSync(state_.get(), synced, reserved, cuts);
    return s;
  }

  Status Preallocate(uint64_t end) override {
    if (closed_) return Status::IOError(fname_, "preallocate after close");
    Status s = env_->CheckActive(fname_);
    if (!s.ok()) return s;
    s = base_->Preallocate(end);
    if (s.ok()) {
      std::lock_guard<std::mutex> l(env_->mu_);
      state_->reserved_size = std::max(state_->reserved_size, end);
    }
    return s;
  }

  Status TruncateToSize() override {
    if (closed_) return Status::IOError(fname_, "truncate after close");
    Status s = env_->CheckActive(fname_);
    if (s.ok()) s = FlushBuffer();
    if (s.ok()) s = base_->TruncateToSize();
    if (s.ok()) {
      std::lock_guard<std::mutex> l(env_->mu_);
      state_->reserved_size = 0;  // still synced_reserved_size until the next Sync
      state_->cuts++;
    }
    return s;
  }

  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    Status s = env_->CheckActive(fname_);
    if (s.ok()) {
      s = FlushBuffer();
    } else {
      buf_.clear();
    }
    Status cs = base_->Close();  // only releases the descriptor: the base is unbuffered
    return s.ok() ? cs : s;
  }

  uint64_t Size() const override { return size_; }

 private:
  Status FlushBuffer() {
    if (buf_.empty()) return Status::OK();
    Status s = base_->Append(buf_);
    if (s.ok()) NoteWritten(buf_.size());
    buf_.clear();
    return s;
  }

  void NoteWritten(uint64_t n) {
    std::lock_guard<std::mutex> l(env_->mu_);
    state_->data_size += n;
  }

  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::shared_ptr<FaultInjectionEnv::FileState> state_;
  const std::unique_ptr<WritableFile> base_;
  const bool buffered_;
  std::atomic<uint64_t> size_;  // read by Sync while another thread may Append
  bool closed_ = false;
  std::string buf_;
};

FaultInjectionEnv::FaultInjectionEnv(Env* base) : base_(base) {}

FaultInjectionEnv::~FaultInjectionEnv() = default;

Status FaultInjectionEnv::CheckActive(const std::string& fname) const {
  if (!active_.load()) return Status::IOError(fname, "filesystem inactive");
  return Status::OK();
}

uint64_t FaultInjectionEnv::ReserveAppend(uint64_t n) {
  uint64_t cur = bytes_appended_.load();
  while (true) {
    const uint64_t limit = no_space_limit_.load();
    uint64_t allowed = n;
    if (limit != kNoLimit) allowed = cur >= limit ? 0 : std::min(n, limit - cur);
    if (bytes_appended_.compare_exchange_weak(cur, cur + allowed)) return allowed;
  }
}

void FaultInjectionEnv::SetFailSyncOf(const std::string& path_part) {
  std::lock_guard<std::mutex> l(mu_);
  fail_sync_of_ = path_part;
}

bool FaultInjectionEnv::SyncFails(const std::string& fname) {
  if (fail_sync_.load()) return true;
  std::lock_guard<std::mutex> l(mu_);
  return !fail_sync_of_.empty() && fname.find(fail_sync_of_) != std::string::npos;
}

void FaultInjectionEnv::RecordSync(FileState* state, uint64_t size, uint64_t reserved, uint64_t cuts) {
  sync_count_.fetch_add(1);
  std::lock_guard<std::mutex> l(mu_);
  state->synced_size = size;
  if (state->cuts == cuts) state->synced_reserved_size = reserved;
}

Status FaultInjectionEnv::OpenForWrite(const std::string& fname, const EnvOptions& options, bool append,
                                       std::unique_ptr<WritableFile>* result) {
  Status s = CheckActive(fname);
  if (!s.ok()) return s;
  const bool existed = base_->FileExists(fname);
  EnvOptions base_options = options;
  base_options.buffered_writes = false;
  std::unique_ptr<WritableFile> base_file;
  s = append ? base_->NewAppendableFile(fname, base_options, &base_file)
             : base_->NewWritableFile(fname, base_options, &base_file);
  if (!s.ok()) return s;
  std::shared_ptr<FileState> state;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    const bool was_unlinked = it != files_.end() && it->second->unlinked;
    if (append && it != files_.end()) {
      state = it->second;
    } else {
      state = std::make_shared<FileState>();
      // Bytes already in a file reopened for append count as durable; a truncating open
      // leaves nothing durable.
      state->synced_size = append ? base_file->Size() : 0;
      state->data_size = state->synced_size;
      state->unlinked = !existed || was_unlinked;
      files_[fname] = state;
    }
  }
  *result = std::make_unique<FaultWritableFile>(this, fname, std::move(state), std::move(base_file),
                                                options.buffered_writes);
  return Status::OK();
}

Status FaultInjectionEnv::NewSequentialFile(const std::string& fname,
                                            std::unique_ptr<SequentialFile>* result) {
  return base_->NewSequentialFile(fname, result);
}

Status FaultInjectionEnv::NewRandomAccessFile(const std::string& fname,
                                              std::unique_ptr<RandomAccessFile>* result) {
  return base_->NewRandomAccessFile(fname, result);
}

Status FaultInjectionEnv::NewWritableFile(const std::string& fname, const EnvOptions& options,
                                          std::unique_ptr<WritableFile>* result) {
  return OpenForWrite(fname, options, /*append=*/false, result);
}

Status FaultInjectionEnv::NewAppendableFile(const std::string& fname, const EnvOptions& options,
                                            std::unique_ptr<WritableFile>* result) {
  return OpenForWrite(fname, options, /*append=*/true, result);
}

bool FaultInjectionEnv::FileExists(const std::string& fname) { return base_->FileExists(fname); }

Status FaultInjectionEnv::GetChildren(const std::string& dir, std::vector<std::string>* result) {
  return base_->GetChildren(dir, result);
}

Status FaultInjectionEnv::RemoveFile(const std::string& fname) {
  Status s = CheckActive(fname);
  if (!s.ok()) return s;
  s = base_->RemoveFile(fname);
  if (s.ok() || s.IsNotFound()) {
    std::lock_guard<std::mutex> l(mu_);
    files_.erase(fname);
  }
  return s;
}

Status FaultInjectionEnv::CreateDir(const std::string& dirname) {
  Status s = CheckActive(dirname);
  if (!s.ok()) return s;
  return base_->CreateDir(dirname);
}

Status FaultInjectionEnv::RemoveDir(const std::string& dirname) {
  Status s = CheckActive(dirname);
  if (!s.ok()) return s;
  return base_->RemoveDir(dirname);
}

Status FaultInjectionEnv::GetFileSize(const std::string& fname, uint64_t* size) {
  return base_->GetFileSize(fname, size);
}

Status FaultInjectionEnv::RenameFile(const std::string& src, const std::string& target) {
  Status s = CheckActive(src);
  if (!s.ok()) return s;
  const bool target_existed = base_->FileExists(target);
  s = base_->RenameFile(src, target);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(src);
  if (it == files_.end()) {
    files_.erase(target);  // replaced by a file this Env does not track
  } else {
    std::shared_ptr<FileState> state = std::move(it->second);
    files_.erase(it);
    // Renames are not undone, and a name that was already durable stays so: the file
    // survives a power loss with its synced bytes instead of vanishing.
    auto old = files_.find(target);
    const bool target_linked = old != files_.end() ? !old->second->unlinked : target_existed;
    if (target_linked) state->unlinked = false;
    files_[target] = std::move(state);
  }
  return s;
}

Status FaultInjectionEnv::LinkFile(const std::string& src, const std::string& target) {
  Status s = CheckActive(target);
  if (!s.ok()) return s;
  return base_->LinkFile(src, target);
}

Status FaultInjectionEnv::TruncateFile(const std::string& fname, uint64_t size) {
  Status s = CheckActive(fname);
  if (!s.ok()) return s;
  s = base_->TruncateFile(fname, size);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(fname);
  if (it != files_.end()) {
    FileState* state = it->second.get();
    state->synced_size = std::min(state->synced_size, size);
    state->data_size = std::min(state->data_size, size);
    // The zeros cut off come back at a power loss until the next Sync.
    state->reserved_size = size > state->data_size ? std::min(state->reserved_size, size) : 0;
    state->cuts++;
  }
  return s;
}

Status FaultInjectionEnv::SyncDir(const std::string& dirname) {
  Status s = CheckActive(dirname);
  if (!s.ok()) return s;
  if (fail_sync_.load()) return Status::IOError(dirname, "injected sync failure");
  s = base_->SyncDir(dirname);
  if (!s.ok()) return s;
  const std::string dir = StripTrailingSlashes(dirname);
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [path, state] : files_) {
    if (DirName(path) == dir) state->unlinked = false;
  }
  return s;
}

Status FaultInjectionEnv::LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) {
  Status s = CheckActive(fname);
  if (!s.ok()) return s;
  return base_->LockFile(fname, lock);
}

uint64_t FaultInjectionEnv::NowMicros() { return base_->NowMicros(); }

void FaultInjectionEnv::SleepForMicros(uint64_t micros) { base_->SleepForMicros(micros); }

Status FaultInjectionEnv::SimulatePowerLoss(PowerLossMode mode, uint64_t seed) {
  Rng rng(seed);
  switch (mode) {
    case PowerLossMode::kDropUnsynced:
      return LosePower([](const std::string&, uint64_t, uint64_t, std::string* kept) {
        kept->clear();
        return Status::OK();
      });
    case PowerLossMode::kTornUnsynced:
      return LosePower(
          [this, &rng](const std::string& path, uint64_t synced, uint64_t real_size, std::string* kept) {
            const uint64_t keep = rng.UpTo(real_size - synced);
            const uint64_t garbled = rng.UpTo(keep);
            Status s = ReadRange(base_, path, synced, static_cast<size_t>(keep), kept);
            for (uint64_t i = keep - garbled; s.ok() && i < keep; ++i) {
              (*kept)[static_cast<size_t>(i)] = static_cast<char>(rng.Next());
            }
            return s;
          });
    case PowerLossMode::kLoseUnsyncedPages:
      return SimulatePageLoss([&rng](const std::string&, uint64_t) { return rng.Next() % 2 == 0; });
  }
  return Status::InvalidArgument("unknown power loss mode");
}

Status FaultInjectionEnv::SimulatePageLoss(const PageLossFn& lose) {
  return LosePower([this, &lose](const std::string& path, uint64_t synced, uint64_t real_size,
                                 std::string* kept) {
    Status s = ReadRange(base_, path, synced, static_cast<size_t>(real_size - synced), kept);
    if (!s.ok()) return s;
    uint64_t end = synced;  // where the last surviving page ends
    for (uint64_t page = synced - synced % kPowerLossPageSize; page < real_size; page += kPowerLossPageSize) {
      const uint64_t from = std::max(page, synced);
      const uint64_t to = std::min(page + kPowerLossPageSize, real_size);
      if (lose(path, page)) {
        std::fill(kept->begin() + static_cast<ptrdiff_t>(from - synced),
                  kept->begin() + static_cast<ptrdiff_t>(to - synced), '\0');
      } else {
        end = to;
      }
    }
    kept->resize(static_cast<size_t>(end - synced));
    return Status::OK();
  });
}

Status FaultInjectionEnv::LosePower(const KeepFn& keep_unsynced) {
  Status result;
  auto note = [&result](const Status& s) {
    if (result.ok() && !s.ok()) result = s;
  };
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = files_.begin(); it != files_.end();) {
    const std::string& path = it->first;
    FileState* state = it->second.get();
    if (state->unlinked) {
      Status s = base_->RemoveFile(path);
      if (!s.IsNotFound()) note(s);
      it = files_.erase(it);
      continue;
    }
    uint64_t real_size = 0;
    Status s = base_->GetFileSize(path, &real_size);
    if (s.IsNotFound()) {
      it = files_.erase(it);
      continue;
    }
    // Past data_size a preallocated file holds zeros nobody wrote: they are not unsynced
    // bytes, and what length survives follows the reserve synced last.
    const bool preallocated = state->reserved_size > 0 || state->synced_reserved_size > 0;
    const uint64_t data_end = preallocated ? std::min(real_size, state->data_size) : real_size;
    if (s.ok() && (data_end > state->synced_size || preallocated)) {
      const uint64_t synced = std::min(state->synced_size, data_end);
      std::string kept;
      if (data_end > synced) s = keep_unsynced(path, synced, data_end, &kept);
      if (s.ok()) s = base_->TruncateFile(path, synced);
      if (s.ok() && !kept.empty()) {
        // Rewrite the unsynced bytes that survived.
        std::unique_ptr<WritableFile> file;
        EnvOptions options;
        options.buffered_writes = false;
        s = base_->NewAppendableFile(path, options, &file);
        if (s.ok()) s = file->Append(kept);
        if (s.ok()) s = file->Sync();
        if (s.ok()) s = file->Close();
      }
      uint64_t end = synced + kept.size();
      if (s.ok() && state->synced_reserved_size > end) {
        s = base_->TruncateFile(path, state->synced_reserved_size);  // extends with zeros
        end = state->synced_reserved_size;
      }
      if (s.ok()) {
        state->synced_size = synced + kept.size();
        state->data_size = state->synced_size;
        state->reserved_size = state->synced_reserved_size = end > state->synced_size ? end : 0;
      }
    } else if (s.ok()) {
      state->synced_size = state->data_size = real_size;
    }
    note(s);
    ++it;
  }
  return result;
}

}  // namespace tidesdb
