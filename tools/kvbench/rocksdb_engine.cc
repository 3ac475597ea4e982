// KvEngine over rocksdb::DB (librocksdb as the system ships it): the default column
// family, block-based tables, leveled compaction as RocksDB does it by default. For the
// transaction workloads the database is opened as a TransactionDB (pessimistic mode) or an
// OptimisticTransactionDB (optimistic mode); both are a DB, so every other call is the same.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/optimistic_transaction_db.h>
#include <rocksdb/utilities/transaction.h>
#include <rocksdb/utilities/transaction_db.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "engine.h"

namespace kvbench {
namespace {

OpStatus FromStatus(const rocksdb::Status& s) {
  if (s.ok()) return OpStatus::Ok();
  if (s.IsNotFound()) return OpStatus::NotFound();
  // Deadlock first: RocksDB reports it as Busy with subcode kDeadlock.
  if (s.IsDeadlock()) return {OpStatus::Code::kDeadlock, s.ToString()};
  // TryAgain: optimistic validation could not tell (memtable history too short); the
  // transaction must be retried like after a conflict.
  if (s.IsBusy() || s.IsTryAgain()) return {OpStatus::Code::kBusy, s.ToString()};
  if (s.IsTimedOut()) return {OpStatus::Code::kTimedOut, s.ToString()};
  return OpStatus::Error(s.ToString());
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

rocksdb::CompressionType ToRocksdb(Compression c) {
  switch (c) {
    case Compression::kNone:
      return rocksdb::kNoCompression;
    case Compression::kLZ4:
      return rocksdb::kLZ4Compression;
    case Compression::kZstd:
      return rocksdb::kZSTD;
    case Compression::kSnappy:
      return rocksdb::kSnappyCompression;
  }
  return rocksdb::kNoCompression;
}

class RocksdbBatch final : public KvBatch {
 public:
  void Put(std::string_view key, std::string_view value) override {
    batch_.Put(ToSlice(key), ToSlice(value));
  }
  void Delete(std::string_view key) override { batch_.Delete(ToSlice(key)); }
  void Clear() override { batch_.Clear(); }
  rocksdb::WriteBatch* rep() { return &batch_; }

 private:
  rocksdb::WriteBatch batch_;
};

class RocksdbIterator final : public KvIterator {
 public:
  explicit RocksdbIterator(rocksdb::Iterator* it) : it_(it) {}
  void SeekToFirst() override { it_->SeekToFirst(); }
  void Seek(std::string_view target) override { it_->Seek(ToSlice(target)); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override { return ToView(it_->key()); }
  std::string_view value() const override { return ToView(it_->value()); }
  OpStatus status() const override { return FromStatus(it_->status()); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

// Reuses one rocksdb::Transaction object (BeginTransaction's old_txn), as RocksDB
// recommends for repeated transactions.
class RocksdbTransaction final : public KvTransaction {
 public:
  // Exactly one of pessimistic_db / optimistic_db is set.
  RocksdbTransaction(rocksdb::TransactionDB* pessimistic_db, rocksdb::OptimisticTransactionDB* optimistic_db,
                     const rocksdb::WriteOptions& write_options, int64_t lock_timeout_ms, bool snapshot)
      : pessimistic_db_(pessimistic_db),
        optimistic_db_(optimistic_db),
        write_options_(write_options),
        snapshot_(snapshot) {
    // The same lock wait bound as TidesDB's, and deadlock detection as TidesDB always has
    // (without it RocksDB resolves a deadlock only by the lock timeout).
    pessimistic_options_.lock_timeout = lock_timeout_ms;
    pessimistic_options_.deadlock_detect = true;
  }
  ~RocksdbTransaction() override {
    if (txn_ != nullptr && active_) txn_->Rollback();
  }

  void Begin() override {
    rocksdb::Transaction* t =
        pessimistic_db_ != nullptr
            ? pessimistic_db_->BeginTransaction(write_options_, pessimistic_options_, txn_.get())
            : optimistic_db_->BeginTransaction(write_options_, rocksdb::OptimisticTransactionOptions(),
                                               txn_.get());
    if (t != txn_.get()) txn_.reset(t);
    // Snapshot isolation: the snapshot is taken at the first operation, as TidesDB does.
    if (snapshot_) txn_->SetSnapshotOnNextOperation();
    active_ = true;
  }
  OpStatus GetForUpdate(std::string_view key, std::string* value) override {
    return FromStatus(txn_->GetForUpdate(rocksdb::ReadOptions(), ToSlice(key), value));
  }
  OpStatus Put(std::string_view key, std::string_view value) override {
    return FromStatus(txn_->Put(ToSlice(key), ToSlice(value)));
  }
  OpStatus Commit() override {
    rocksdb::Status s = txn_->Commit();
    // The KvTransaction contract: a failed Commit leaves the transaction rolled back.
    if (!s.ok()) txn_->Rollback();
    active_ = false;
    return FromStatus(s);
  }
  OpStatus Rollback() override {
    active_ = false;
    return FromStatus(txn_->Rollback());
  }

 private:
  rocksdb::TransactionDB* const pessimistic_db_;
  rocksdb::OptimisticTransactionDB* const optimistic_db_;
  const rocksdb::WriteOptions write_options_;
  const bool snapshot_;
  rocksdb::TransactionOptions pessimistic_options_;
  std::unique_ptr<rocksdb::Transaction> txn_;
  bool active_ = false;
};

class RocksdbEngine final : public KvEngine {
 public:
  ~RocksdbEngine() override { Close(); }

  const char* name() const override { return "rocksdb"; }

  OpStatus Open(const std::string& dir, const EngineConfig& config) override {
    const rocksdb::CompressionType compression = ToRocksdb(config.compression);
    const auto supported = rocksdb::GetSupportedCompressions();
    if (compression != rocksdb::kNoCompression &&
        std::find(supported.begin(), supported.end(), compression) == supported.end()) {
      return OpStatus::Error("this librocksdb was built without the requested compression");
    }

    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = config.write_buffer_bytes;
    options.compression = compression;
    options.max_background_jobs = 2 * config.background_threads;
    options.max_open_files = 512;  // TidesDB's max_open_sstables default
    // Leveled compaction with the numbers TidesDB's ColumnFamilyOptions use by default
    // (these are also RocksDB's defaults; written out so the mapping is visible); the
    // level-1 target comes from --level_base_mb for both engines.
    options.level0_file_num_compaction_trigger = 4;
    options.max_bytes_for_level_base = config.level_base_bytes;
    options.max_bytes_for_level_multiplier = 10;
    options.num_levels = 7;
    if (config.rocksdb_blob_files) {
      options.enable_blob_files = true;
      options.min_blob_size = config.value_threshold;
      options.blob_compression_type = compression;
    }

    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(config.block_cache_bytes);
    table.block_size = config.block_size;
    table.block_restart_interval = config.block_restart_interval;
    // Index and filter blocks stay in table-reader memory (RocksDB's default), as TidesDB
    // keeps them in memory outside its block cache.
    table.cache_index_and_filter_blocks = false;
    if (config.bloom_bits_per_key > 0) {
      table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(config.bloom_bits_per_key, false));
    }
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

    write_options_.sync = config.sync == Sync::kFull;
    write_options_.disableWAL = false;

    rocksdb::Status s;
    lock_timeout_ms_ = config.lock_timeout_ms;
    snapshot_ = config.txn_isolation == TxnIsolation::kSnapshot;
    if (config.txn_mode == TxnMode::kPessimistic) {
      rocksdb::TransactionDBOptions txn_options;
      txn_options.transaction_lock_timeout = config.lock_timeout_ms;
      // Non-transactional writes (the preload) wait for locks as long as transactions.
      txn_options.default_lock_timeout = config.lock_timeout_ms;
      rocksdb::TransactionDB* db = nullptr;
      s = rocksdb::TransactionDB::Open(options, txn_options, dir, &db);
      if (!s.ok()) return FromStatus(s);
      pessimistic_db_ = db;
      db_.reset(db);
    } else if (config.txn_mode == TxnMode::kOptimistic) {
      rocksdb::OptimisticTransactionDB* db = nullptr;
      s = rocksdb::OptimisticTransactionDB::Open(options, dir, &db);
      if (!s.ok()) return FromStatus(s);
      optimistic_db_ = db;
      db_.reset(db);
    } else {
      rocksdb::DB* db = nullptr;
      s = rocksdb::DB::Open(options, dir, &db);
      if (!s.ok()) return FromStatus(s);
      db_.reset(db);
    }
    return OpStatus::Ok();
  }

  OpStatus Close() override {
    if (!db_) return OpStatus::Ok();
    rocksdb::Status s = db_->Close();
    db_.reset();
    pessimistic_db_ = nullptr;
    optimistic_db_ = nullptr;
    return FromStatus(s);
  }

  OpStatus Put(std::string_view key, std::string_view value) override {
    return FromStatus(db_->Put(write_options_, ToSlice(key), ToSlice(value)));
  }

  OpStatus Delete(std::string_view key) override {
    return FromStatus(db_->Delete(write_options_, ToSlice(key)));
  }

  std::unique_ptr<KvBatch> NewBatch() override { return std::make_unique<RocksdbBatch>(); }

  OpStatus Write(KvBatch* batch, bool no_sync) override {
    rocksdb::WriteOptions wo = write_options_;
    if (no_sync) wo.sync = false;
    return FromStatus(db_->Write(wo, static_cast<RocksdbBatch*>(batch)->rep()));
  }

  OpStatus Get(std::string_view key, std::string* value) override {
    return FromStatus(db_->Get(rocksdb::ReadOptions(), ToSlice(key), value));
  }

  std::unique_ptr<KvIterator> NewIterator(bool fill_cache) override {
    rocksdb::ReadOptions ro;
    ro.fill_cache = fill_cache;
    return std::make_unique<RocksdbIterator>(db_->NewIterator(ro));
  }

  OpStatus NewTransaction(TxnMode mode, std::unique_ptr<KvTransaction>* txn) override {
    if (mode == TxnMode::kPessimistic && pessimistic_db_ != nullptr) {
      *txn = std::make_unique<RocksdbTransaction>(pessimistic_db_, nullptr, write_options_, lock_timeout_ms_,
                                                  snapshot_);
      return OpStatus::Ok();
    }
    if (mode == TxnMode::kOptimistic && optimistic_db_ != nullptr) {
      *txn = std::make_unique<RocksdbTransaction>(nullptr, optimistic_db_, write_options_, lock_timeout_ms_,
                                                  snapshot_);
      return OpStatus::Ok();
    }
    return OpStatus::Error("RocksDB was not opened for this transaction mode (EngineConfig::txn_mode)");
  }

  OpStatus Flush() override { return FromStatus(db_->Flush(rocksdb::FlushOptions())); }

  OpStatus WaitForBackgroundWork() override {
    static const char* const kBusy[] = {"rocksdb.num-running-compactions", "rocksdb.compaction-pending",
                                        "rocksdb.num-running-flushes", "rocksdb.mem-table-flush-pending"};
    for (;;) {
      bool busy = false;
      for (const char* property : kBusy) {
        uint64_t v = 0;
        if (db_->GetIntProperty(property, &v) && v != 0) busy = true;
      }
      if (!busy) return OpStatus::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string StatsLine() override {
    std::string line = "files/level:";
    for (int level = 0; level < 7; ++level) {
      // Built by append: GCC 12 warns falsely (-Wrestrict) on some std::string operators.
      std::string property = "rocksdb.num-files-at-level";
      property.append(std::to_string(level));
      std::string v;
      line.append(level == 0 ? " " : "/");
      if (db_->GetProperty(property, &v)) {
        line.append(v);
      } else {
        line.push_back('?');
      }
    }
    uint64_t compaction_bytes = 0;
    if (db_->GetIntProperty("rocksdb.estimate-pending-compaction-bytes", &compaction_bytes)) {
      line += " | pending_compaction_bytes=" + std::to_string(compaction_bytes);
    }
    return line;
  }

 private:
  // db_ owns the database; for the transaction workloads one of these points at it too.
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::TransactionDB* pessimistic_db_ = nullptr;
  rocksdb::OptimisticTransactionDB* optimistic_db_ = nullptr;
  rocksdb::WriteOptions write_options_;
  int64_t lock_timeout_ms_ = 1000;
  bool snapshot_ = false;
};

}  // namespace

std::unique_ptr<KvEngine> NewRocksdbEngine() { return std::make_unique<RocksdbEngine>(); }
bool RocksdbAvailable() { return true; }
std::string RocksdbVersion() {
  return std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR) + "." +
         std::to_string(ROCKSDB_PATCH);
}

}  // namespace kvbench
