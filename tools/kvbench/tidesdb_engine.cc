// KvEngine over tidesdb::DB: one column family ("default"). For the transaction
// workloads the database is opened through tidesdb::TransactionDB, which serves both
// concurrency modes (chosen per transaction); every other call then goes through it too
// (writes by TransactionDB::Write, so they take part in conflict detection).
#include <cmath>
#include <memory>
#include <string>

#include "engine.h"
#include "tidesdb/db.h"
#include "tidesdb/iterator.h"
#include "tidesdb/options.h"
#include "tidesdb/transaction.h"
#include "tidesdb/write_batch.h"

namespace kvbench {
namespace {

OpStatus FromStatus(const tidesdb::Status& s) {
  if (s.ok()) return OpStatus::Ok();
  if (s.IsNotFound()) return OpStatus::NotFound();
  if (s.IsBusy()) return {OpStatus::Code::kBusy, s.ToString()};
  if (s.IsTimedOut()) return {OpStatus::Code::kTimedOut, s.ToString()};
  if (s.IsDeadlock()) return {OpStatus::Code::kDeadlock, s.ToString()};
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

// A new tidesdb::Transaction per Begin (the library has no reuse of transaction objects).
class TidesdbTransaction final : public KvTransaction {
 public:
  TidesdbTransaction(tidesdb::TransactionDB* db, tidesdb::ColumnFamilyHandle* cf,
                     const tidesdb::TransactionOptions& options)
      : db_(db), cf_(cf), options_(options) {}

  void Begin() override { txn_ = db_->BeginTransaction(options_); }
  OpStatus GetForUpdate(std::string_view key, std::string* value) override {
    return FromStatus(txn_->GetForUpdate(cf_, key, value));
  }
  OpStatus Put(std::string_view key, std::string_view value) override {
    return FromStatus(txn_->Put(cf_, key, value));
  }
  OpStatus Commit() override { return FromStatus(txn_->Commit()); }
  OpStatus Rollback() override { return FromStatus(txn_->Rollback()); }

 private:
  tidesdb::TransactionDB* const db_;
  tidesdb::ColumnFamilyHandle* const cf_;
  const tidesdb::TransactionOptions options_;
  std::unique_ptr<tidesdb::Transaction> txn_;
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
    cf.level_size_base = config.level_base_bytes;
    cf.block_size = config.block_size;
    cf.block_restart_interval = config.block_restart_interval;
    // RocksDB's 10 bits per key is ~1% false positives; each bit more or less scales the
    // rate by ~0.6185 (a bloom filter with the optimal number of probes).
    cf.bloom_fpr =
        config.bloom_bits_per_key > 0 ? 0.01 * std::pow(0.6185, config.bloom_bits_per_key - 10) : 0.0;
    cf.value_threshold = config.value_threshold;
    cf.value_log_gc_threshold = config.vlog_gc_threshold;
    cf.compression = ToTidesdb(config.compression);
    write_options_.sync_mode = options.sync_mode;
    tidesdb::Status s;
    if (config.txn_mode != TxnMode::kNone) {
      tidesdb::TransactionDBOptions txn_options;
      txn_options.lock_timeout_micros = config.lock_timeout_ms * 1000;
      s = tidesdb::TransactionDB::Open(options, txn_options, dir, &txn_db_);
      if (!s.ok()) return FromStatus(s);
      db_ = txn_db_->db();
      isolation_ = config.txn_isolation == TxnIsolation::kSnapshot ? tidesdb::IsolationLevel::kSnapshot
                                                                   : tidesdb::IsolationLevel::kReadCommitted;
    } else {
      s = tidesdb::DB::Open(options, dir, &own_db_);
      if (!s.ok()) return FromStatus(s);
      db_ = own_db_.get();
    }
    cf_ = db_->DefaultColumnFamily();
    return OpStatus::Ok();
  }

  OpStatus Close() override {
    txn_db_.reset();
    own_db_.reset();
    db_ = nullptr;
    cf_ = nullptr;
    return OpStatus::Ok();
  }

  OpStatus Put(std::string_view key, std::string_view value) override {
    if (txn_db_) {
      tidesdb::WriteBatch batch;
      batch.Put(cf_, key, value);
      return FromStatus(txn_db_->Write(write_options_, &batch));
    }
    return FromStatus(db_->Put(write_options_, cf_, key, value));
  }

  OpStatus Delete(std::string_view key) override {
    if (txn_db_) {
      tidesdb::WriteBatch batch;
      batch.Delete(cf_, key);
      return FromStatus(txn_db_->Write(write_options_, &batch));
    }
    return FromStatus(db_->Delete(write_options_, cf_, key));
  }

  std::unique_ptr<KvBatch> NewBatch() override { return std::make_unique<TidesdbBatch>(cf_); }

  OpStatus Write(KvBatch* batch, bool no_sync) override {
    tidesdb::WriteOptions wo = write_options_;
    if (no_sync) wo.sync_mode = tidesdb::SyncMode::kNone;
    tidesdb::WriteBatch* rep = static_cast<TidesdbBatch*>(batch)->rep();
    return FromStatus(txn_db_ ? txn_db_->Write(wo, rep) : db_->Write(wo, rep));
  }

  OpStatus Get(std::string_view key, std::string* value) override {
    return FromStatus(db_->Get(tidesdb::ReadOptions(), cf_, key, value));
  }

  std::unique_ptr<KvIterator> NewIterator(bool fill_cache) override {
    tidesdb::ReadOptions ro;
    ro.fill_cache = fill_cache;
    return std::make_unique<TidesdbIterator>(db_->NewIterator(ro, cf_));
  }

  OpStatus NewTransaction(TxnMode mode, std::unique_ptr<KvTransaction>* txn) override {
    if (!txn_db_ || mode == TxnMode::kNone) return OpStatus::Error("not opened for transactions");
    tidesdb::TransactionOptions options;
    options.isolation = isolation_;
    options.mode = mode == TxnMode::kPessimistic ? tidesdb::ConcurrencyMode::kPessimistic
                                                 : tidesdb::ConcurrencyMode::kOptimistic;
    *txn = std::make_unique<TidesdbTransaction>(txn_db_.get(), cf_, options);
    return OpStatus::Ok();
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
    std::string txn_stats;
    if (txn_db_ && txn_db_->GetProperty("tidesdb.txn.stats", &txn_stats)) {
      while (!txn_stats.empty() && txn_stats.back() == '\n') txn_stats.pop_back();
      for (char& c : txn_stats) {
        if (c == '\n') c = ' ';
      }
      line += " | " + txn_stats;
    }
    return line;
  }

 private:
  // Exactly one of own_db_ / txn_db_ is open; db_ points at the DB either way.
  std::unique_ptr<tidesdb::DB> own_db_;
  std::unique_ptr<tidesdb::TransactionDB> txn_db_;
  tidesdb::DB* db_ = nullptr;
  tidesdb::ColumnFamilyHandle* cf_ = nullptr;
  tidesdb::WriteOptions write_options_;
  tidesdb::IsolationLevel isolation_ = tidesdb::IsolationLevel::kReadCommitted;
};

}  // namespace

std::unique_ptr<KvEngine> NewTidesdbEngine() { return std::make_unique<TidesdbEngine>(); }

}  // namespace kvbench
