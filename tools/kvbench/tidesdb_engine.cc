// KvEngine over tidesdb::DB: one column family ("default").
#include <cmath>
#include <memory>
#include <string>

#include "engine.h"
#include "tidesdb/db.h"
#include "tidesdb/iterator.h"
#include "tidesdb/options.h"
#include "tidesdb/write_batch.h"

namespace kvbench {
namespace {

OpStatus FromStatus(const tidesdb::Status& s) {
  if (s.ok()) return OpStatus::Ok();
  if (s.IsNotFound()) return OpStatus::NotFound();
  return OpStatus::Error(s.ToString());
}

tidesdb::CompressionType ToTidesdb(Compression c) {
  switch (c) {
    case Compression::kNone:
      return tidesdb::CompressionType::kNone;
    case Compression::kLZ4:
      return tidesdb::CompressionType::kLZ4;
    case Compression::kZstd:
      return tidesdb::CompressionType::kZstd;
    case Compression::kSnappy:
      return tidesdb::CompressionType::kSnappy;
  }
  return tidesdb::CompressionType::kNone;
}

class TidesdbBatch final : public KvBatch {
 public:
  explicit TidesdbBatch(tidesdb::ColumnFamilyHandle* cf) : cf_(cf) {}
  void Put(std::string_view key, std::string_view value) override { batch_.Put(cf_, key, value); }
  void Delete(std::string_view key) override { batch_.Delete(cf_, key); }
  void Clear() override { batch_.Clear(); }
  tidesdb::WriteBatch* rep() { return &batch_; }

 private:
  tidesdb::ColumnFamilyHandle* const cf_;
  tidesdb::WriteBatch batch_;
};

class TidesdbIterator final : public KvIterator {
 public:
  explicit TidesdbIterator(std::unique_ptr<tidesdb::Iterator> it) : it_(std::move(it)) {}
  void SeekToFirst() override { it_->SeekToFirst(); }
  void Seek(std::string_view target) override { it_->Seek(target); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override { return it_->key(); }
  std::string_view value() const override { return it_->value(); }
  OpStatus status() const override { return FromStatus(it_->status()); }

 private:
  std::unique_ptr<tidesdb::Iterator> it_;
};

class TidesdbEngine final : public KvEngine {
 public:
  ~TidesdbEngine() override { Close(); }

  const char* name() const override { return "tidesdb"; }

  OpStatus Open(const std::string& dir, const EngineConfig& config) override {
    tidesdb::Options options;
    options.create_if_missing = true;
    options.unified_memtable = config.unified_memtable;
    options.unified_memtable_write_buffer_size = config.write_buffer_bytes;
    options.sync_mode = config.sync == Sync::kFull ? tidesdb::SyncMode::kFull : tidesdb::SyncMode::kNone;
    options.block_cache_size = config.block_cache_bytes;
    options.flush_threads = config.background_threads;
    options.compaction_threads = config.background_threads;
    options.log_level = tidesdb::LogLevel::kWarn;
    tidesdb::ColumnFamilyOptions& cf = options.default_cf_options;
    cf.write_buffer_size = config.write_buffer_bytes;
    cf.block_size = config.block_size;
    // RocksDB's 10 bits per key is ~1% false positives; each bit more or less scales the
    // rate by ~0.6185 (a bloom filter with the optimal number of probes).
    cf.bloom_fpr =
        config.bloom_bits_per_key > 0 ? 0.01 * std::pow(0.6185, config.bloom_bits_per_key - 10) : 0.0;
    cf.value_threshold = config.value_threshold;
    cf.compression = ToTidesdb(config.compression);
    write_options_.sync_mode = options.sync_mode;
    tidesdb::Status s = tidesdb::DB::Open(options, dir, &db_);
    if (!s.ok()) return FromStatus(s);
    cf_ = db_->DefaultColumnFamily();
    return OpStatus::Ok();
  }

  OpStatus Close() override {
    db_.reset();
    cf_ = nullptr;
    return OpStatus::Ok();
  }

  OpStatus Put(std::string_view key, std::string_view value) override {
    return FromStatus(db_->Put(write_options_, cf_, key, value));
  }

  OpStatus Delete(std::string_view key) override { return FromStatus(db_->Delete(write_options_, cf_, key)); }

  std::unique_ptr<KvBatch> NewBatch() override { return std::make_unique<TidesdbBatch>(cf_); }

  OpStatus Write(KvBatch* batch, bool no_sync) override {
    tidesdb::WriteOptions wo = write_options_;
    if (no_sync) wo.sync_mode = tidesdb::SyncMode::kNone;
    return FromStatus(db_->Write(wo, static_cast<TidesdbBatch*>(batch)->rep()));
  }

  OpStatus Get(std::string_view key, std::string* value) override {
    return FromStatus(db_->Get(tidesdb::ReadOptions(), cf_, key, value));
  }

  std::unique_ptr<KvIterator> NewIterator(bool fill_cache) override {
    tidesdb::ReadOptions ro;
    ro.fill_cache = fill_cache;
    return std::make_unique<TidesdbIterator>(db_->NewIterator(ro, cf_));
  }

  OpStatus Flush() override { return FromStatus(db_->Flush(tidesdb::FlushOptions(), nullptr)); }

  OpStatus WaitForBackgroundWork() override { return FromStatus(db_->WaitForBackgroundWork()); }

  std::string StatsLine() override {
    std::string line = "files/level:";
    for (int level = 0; level < 7; ++level) {
      // Built by append: GCC 12 warns falsely (-Wrestrict) on some std::string operators.
      std::string property = "tidesdb.num-files-at-level";
      property.append(std::to_string(level));
      std::string v;
      line.append(level == 0 ? " " : "/");
      if (db_->GetProperty(cf_, property, &v)) {
        line.append(v);
      } else {
        line.push_back('?');
      }
    }
    std::string stats;
    if (db_->GetProperty(cf_, "tidesdb.stats", &stats)) {
      while (!stats.empty() && stats.back() == '\n') stats.pop_back();
      line += " | " + stats;
    }
    return line;
  }

 private:
  std::unique_ptr<tidesdb::DB> db_;
  tidesdb::ColumnFamilyHandle* cf_ = nullptr;
  tidesdb::WriteOptions write_options_;
};

}  // namespace

std::unique_ptr<KvEngine> NewTidesdbEngine() { return std::make_unique<TidesdbEngine>(); }

}  // namespace kvbench
