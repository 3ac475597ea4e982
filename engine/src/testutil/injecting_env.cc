#include "testutil/injecting_env.h"

namespace tidesdb::test {

namespace {

class NoSyncFile final : public WritableFile {
 public:
  explicit NoSyncFile(std::unique_ptr<WritableFile> base) : base_(std::move(base)) {}
  Status Append(Slice data) override { return base_->Append(data); }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override { return base_->Flush(); }
  Status Preallocate(uint64_t end) override { return base_->Preallocate(end); }
  Status TruncateToSize() override { return base_->TruncateToSize(); }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

 private:
  const std::unique_ptr<WritableFile> base_;
};

class InjectingFile final : public WritableFile {
 public:
  InjectingFile(InjectingEnv* env, std::string fname, std::unique_ptr<WritableFile> base)
      : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}
  ~InjectingFile() override {
    // Close through the hooks, so a crash point or failure can hit the implicit close too.
    if (!closed_) Close();
  }
  Status Append(Slice data) override {
    return env_->Run(EnvOp::kAppend, fname_, [&] { return base_->Append(data); });
  }
  Status Flush() override {
    return env_->Run(EnvOp::kFlush, fname_, [&] { return base_->Flush(); });
  }
  Status Sync() override {
    return env_->Run(EnvOp::kSync, fname_, [&] { return base_->Sync(); });
  }
  // Not hooked: space reserved or given back changes no record.
  Status Preallocate(uint64_t end) override { return base_->Preallocate(end); }
  Status TruncateToSize() override { return base_->TruncateToSize(); }
  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    // A refused close still releases the descriptor (as a failing close(2) does).
    Status s = env_->Run(EnvOp::kClose, fname_, [&] { return base_->Close(); });
    if (!s.ok()) base_->Close();
    return s;
  }
  uint64_t Size() const override { return base_->Size(); }

 private:
  InjectingEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<WritableFile> base_;
  bool closed_ = false;
};

}  // namespace

Status NoSyncEnv::NewWritableFile(const std::string& f, const EnvOptions& o,
                                  std::unique_ptr<WritableFile>* r) {
  std::unique_ptr<WritableFile> base;
  Status s = target()->NewWritableFile(f, o, &base);
  if (s.ok()) *r = std::make_unique<NoSyncFile>(std::move(base));
  return s;
}

Status NoSyncEnv::NewAppendableFile(const std::string& f, const EnvOptions& o,
                                    std::unique_ptr<WritableFile>* r) {
  std::unique_ptr<WritableFile> base;
  Status s = target()->NewAppendableFile(f, o, &base);
  if (s.ok()) *r = std::make_unique<NoSyncFile>(std::move(base));
  return s;
}

const char* EnvOpName(EnvOp op) {
  switch (op) {
    case EnvOp::kCreateFile:
      return "create";
    case EnvOp::kAppend:
      return "append";
    case EnvOp::kFlush:
      return "flush";
    case EnvOp::kSync:
      return "sync";
    case EnvOp::kClose:
      return "close";
    case EnvOp::kRemove:
      return "remove";
    case EnvOp::kRename:
      return "rename";
    case EnvOp::kLink:
      return "link";
    case EnvOp::kTruncate:
      return "truncate";
    case EnvOp::kSyncDir:
      return "syncdir";
    case EnvOp::kCreateDir:
      return "createdir";
    case EnvOp::kRemoveDir:
      return "removedir";
  }
  return "?";
}

bool EndsWith(const std::string& fname, const std::string& suffix) {
  return fname.size() >= suffix.size() &&
         fname.compare(fname.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void InjectingEnv::SetBefore(BeforeHook hook) {
  auto p = hook ? std::make_shared<const BeforeHook>(std::move(hook)) : nullptr;
  std::lock_guard<std::mutex> l(mu_);
  before_ = std::move(p);
}

void InjectingEnv::SetAfter(AfterHook hook) {
  auto p = hook ? std::make_shared<const AfterHook>(std::move(hook)) : nullptr;
  std::lock_guard<std::mutex> l(mu_);
  after_ = std::move(p);
}

std::shared_ptr<const InjectingEnv::BeforeHook> InjectingEnv::before() const {
  std::lock_guard<std::mutex> l(mu_);
  return before_;
}

std::shared_ptr<const InjectingEnv::AfterHook> InjectingEnv::after() const {
  std::lock_guard<std::mutex> l(mu_);
  return after_;
}

Status InjectingEnv::Run(EnvOp op, const std::string& fname, const std::function<Status()>& fn) {
  if (auto b = before()) {
    Status s = (*b)(op, fname);
    if (!s.ok()) return s;
  }
  Status s = fn();
  if (auto a = after()) (*a)(op, fname, s);
  return s;
}

Status InjectingEnv::NewWritableFile(const std::string& f, const EnvOptions& o,
                                     std::unique_ptr<WritableFile>* r) {
  std::unique_ptr<WritableFile> base;
  Status s = Run(EnvOp::kCreateFile, f, [&] { return target()->NewWritableFile(f, o, &base); });
  if (s.ok()) *r = std::make_unique<InjectingFile>(this, f, std::move(base));
  return s;
}

Status InjectingEnv::NewAppendableFile(const std::string& f, const EnvOptions& o,
                                       std::unique_ptr<WritableFile>* r) {
  std::unique_ptr<WritableFile> base;
  Status s = Run(EnvOp::kCreateFile, f, [&] { return target()->NewAppendableFile(f, o, &base); });
  if (s.ok()) *r = std::make_unique<InjectingFile>(this, f, std::move(base));
  return s;
}

Status InjectingEnv::RemoveFile(const std::string& f) {
  return Run(EnvOp::kRemove, f, [&] { return target()->RemoveFile(f); });
}

Status InjectingEnv::CreateDir(const std::string& d) {
  return Run(EnvOp::kCreateDir, d, [&] { return target()->CreateDir(d); });
}

Status InjectingEnv::RemoveDir(const std::string& d) {
  return Run(EnvOp::kRemoveDir, d, [&] { return target()->RemoveDir(d); });
}

Status InjectingEnv::RenameFile(const std::string& s, const std::string& t) {
  return Run(EnvOp::kRename, s, [&] { return target()->RenameFile(s, t); });
}

Status InjectingEnv::LinkFile(const std::string& s, const std::string& t) {
  return Run(EnvOp::kLink, s, [&] { return target()->LinkFile(s, t); });
}

Status InjectingEnv::TruncateFile(const std::string& f, uint64_t n) {
  return Run(EnvOp::kTruncate, f, [&] { return target()->TruncateFile(f, n); });
}

Status InjectingEnv::SyncDir(const std::string& d) {
  return Run(EnvOp::kSyncDir, d, [&] { return target()->SyncDir(d); });
}

}  // namespace tidesdb::test
