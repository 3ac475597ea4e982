// Online checkpoint: a consistent copy of the database that opens as a database.
//
// Under the write queue (no commit in flight) and mutex_, it captures the live versions of
// every CF and writes a manifest describing exactly them into the new directory, and copies
// the WAL files still needed up to their current size. Then, with the captured versions
// keeping the files alive, it hard-links every SSTable and value log (copying where links
// are not possible). Recovery in the copy replays the WAL tail as after a crash.
#include <algorithm>

#include "db/db_impl.h"
#include "wal/log_writer.h"

namespace tidesdb {

namespace {
Status CopyFilePrefix(Env* env, const std::string& src, const std::string& dst, uint64_t size) {
  std::unique_ptr<SequentialFile> in;
  Status s = env->NewSequentialFile(src, &in);
  if (!s.ok()) return s;
  std::unique_ptr<WritableFile> out;
  s = env->NewWritableFile(dst, EnvOptions{}, &out);
  if (!s.ok()) return s;
  std::string scratch(1 << 16, '\0');
  while (size > 0 && s.ok()) {
    Slice chunk;
    s = in->Read(std::min<uint64_t>(size, scratch.size()), &chunk, scratch.data());
    if (!s.ok()) break;
    if (chunk.empty()) break;  // shorter than expected: the rest was never written
    s = out->Append(chunk);
    size -= chunk.size();
  }
  if (s.ok()) s = out->Sync();
  Status c = out->Close();
  return s.ok() ? c : s;
}
}  // namespace

Status DBImpl::Checkpoint(const std::string& dir) {
  if (env_->FileExists(dir)) return Status::InvalidArgument(dir, "already exists");
  Status s = env_->CreateDir(dir);
  if (!s.ok()) return s;

  std::vector<std::shared_ptr<const Version>> pinned;
  s = WriteImpl(WriteOptions(), nullptr, [&]() -> Status {
    std::unique_lock<std::mutex> l(mutex_);
    for (const auto& [id, cfd] : cfs_) pinned.push_back(cfd->version);
    const uint64_t manifest_number = next_file_number_++;
    VersionEdit edit;
    BuildSnapshotEditLocked(&edit);
    const uint64_t min_wal = MinLiveWalNumberLocked();
    std::vector<uint64_t> wals;
    for (auto it = wal_files_.lower_bound(min_wal); it != wal_files_.end(); ++it) wals.push_back(it->first);
    // The copies and their fsyncs run without mutex_ (background work and the state they
    // change are not needed here), the WALs they read pinned against deletion. As the
    // leader, we keep every commit, and so every append and WAL rotation, out meanwhile:
    // the WALs copied are up to what has been written.
    checkpoint_wal_pin_ = min_wal;
    // The live WAL's file runs on past its records into preallocated zeros: copy only the
    // records.
    uint64_t live_wal = 0, live_size = 0;
    {
      std::lock_guard<std::mutex> g(wal_mu_);
      if (wal_) {
        live_wal = wal_number_;
        live_size = wal_->size();
      }
    }
    l.unlock();
    Status st;
    for (uint64_t number : wals) {
      uint64_t size = 0;
      st = env_->GetFileSize(WalFileName(dbname_, number), &size);
      if (number == live_wal) size = std::min(size, live_size);
      if (st.ok()) st = CopyFilePrefix(env_, WalFileName(dbname_, number), WalFileName(dir, number), size);
      if (!st.ok()) break;
    }
    std::unique_ptr<LogWriter> writer;
    if (st.ok()) st = WriteManifestFile(dir, manifest_number, edit, &writer);
    if (st.ok()) st = writer->Close();
    l.lock();
    checkpoint_wal_pin_ = kNoWalPin;
    return st;
  });
  if (!s.ok()) return s;

  for (const auto& v : pinned) {
    std::vector<std::pair<std::string, std::string>> links;
    for (const auto& level : v->levels) {
      for (const auto& f : level) {
        links.emplace_back(KeyLogFileName(dbname_, f->file_number), KeyLogFileName(dir, f->file_number));
      }
    }
    for (const auto& vl : v->value_logs) {
      links.emplace_back(ValueLogFileName(dbname_, vl->file_number), ValueLogFileName(dir, vl->file_number));
    }
    for (const auto& [src, dst] : links) {
      s = env_->LinkFile(src, dst);
      if (s.IsNotSupported()) {
        uint64_t size = 0;
        s = env_->GetFileSize(src, &size);
        if (s.ok()) s = CopyFilePrefix(env_, src, dst, size);
      }
      if (!s.ok()) return s;
    }
  }
  return env_->SyncDir(dir);
}

}  // namespace tidesdb
