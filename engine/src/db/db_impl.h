// DBImpl: the database — column families, the group-committed WAL, memtables, flushes,
// recovery and reads. Split by concern:
//   db_impl.cc        open, recovery, close, column families, file lifetime
//   db_impl_write.cc  write path: group commit, WAL, memtable switching, back-pressure
//   db_impl_read.cc   point reads, iterators, snapshots, estimates, properties
//   db_impl_flush.cc  background flush of immutable memtables to SSTables
//
// Locks, always taken in this order:
//   write_mu_  the queue of writers; its front is the leader of the next commit group
//   mutex_     all other state (CFs, versions, memtable slots, file numbers, manifest)
//   wal_mu_    the pointer to the live WAL writer (for the interval syncer)
//   sync_mu_   syncs of the WAL outside the write queue (SyncWalThrough); never held
//              during the fsync itself
//   snapshot_mu_  the registered snapshots; a leaf, held for a set insert or erase or copy
//   publish_mu_   commit groups and the queue's front waiting for earlier groups to
//                 publish (publish_cv_); a leaf, taken with mutex_ held by a memtable switch
//
// Reads (Get, NewIterator, EstimateRanges) take none of these: they find the CF from its
// handle and load its published ReadView (column_family.h): one shared_ptr copy under the
// CF's own small lock, which nothing holds across I/O.
// mutex_ is still held across some fsyncs (WAL rotation, manifest edits); what waits for
// it is the commit leader and background work, never a read or a snapshot.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "db/column_family.h"
#include "db/dbformat.h"
#include "db/entry_value.h"
#include "db/filename.h"
#include "db/version_edit.h"
#include "tidesdb/db.h"
#include "tidesdb/env.h"
#include "tidesdb/options.h"
#include "util/histogram.h"
#include "util/striped.h"

namespace tidesdb {

class BlockCache;
class LogWriter;
class TableCache;

// WAL record types (payload layouts in docs/FORMATS.md; two-phase commit in
// docs/TRANSACTIONS.md). xid = varint32 length + bytes.
enum WalRecordType : uint8_t {
  kWalWriteBatch = 1,        // fixed64 first sequence + WriteBatch serialized form
  kWalPrepare = 2,           // xid + WriteBatch: durable, not applied until committed
  kWalCommitPrepared = 3,    // xid + fixed64 first sequence + WriteBatch (the batch again)
  kWalRollbackPrepared = 4,  // xid
  // fixed64 first + fixed64 last: sequences taken by writes that skipped the WAL
  // (WriteOptions::disable_wal), logged before the next record so that replay sees no gap.
  kWalUnloggedSequences = 5,
};

// Files whose last reference (a Version) went away; deleted by the DB between operations.
struct ObsoleteFiles {
  std::mutex mu;
  bool db_closing = false;  // at close every file is still live: delete nothing
  std::vector<std::pair<uint64_t, FileType>> files;
  std::atomic<uint64_t> live{0};  // key-log and value-log files tracked and not yet released
};

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string dbname);
  ~DBImpl() override;

  Status Recover();  // called once by DB::Open

  ColumnFamilyHandle* DefaultColumnFamily() const override;
  Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                            ColumnFamilyHandle** handle) override;
  Status DropColumnFamily(ColumnFamilyHandle* handle) override;
  ColumnFamilyHandle* GetColumnFamily(const std::string& name) const override;
  std::vector<std::string> ListColumnFamilies() const override;

  Status Put(const WriteOptions& options, ColumnFamilyHandle* cf, Slice key, Slice value) override;
  Status Delete(const WriteOptions& options, ColumnFamilyHandle* cf, Slice key) override;
  Status Write(const WriteOptions& options, WriteBatch* batch) override;

  Status Get(const ReadOptions& options, ColumnFamilyHandle* cf, Slice key, std::string* value) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, ColumnFamilyHandle* cf) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;

  Status Flush(const FlushOptions& options, ColumnFamilyHandle* cf) override;
  Status SyncWAL() override;
  Status CompactRange(ColumnFamilyHandle* cf, const Range* range) override;
  Status WaitForBackgroundWork() override;
  Status Checkpoint(const std::string& dir) override;

  void EstimateRanges(ColumnFamilyHandle* cf, const Range* ranges, size_t n,
                      RangeEstimate* estimates) override;
  bool GetProperty(ColumnFamilyHandle* cf, Slice name, std::string* value) override;
  uint64_t LatestSequence() const override { return visible_sequence_.load(std::memory_order_acquire); }

  // For the transaction layer, when its table of recent commits has forgotten the commits
  // a validation needs: the sequence of the newest version of (cf_id, key) that is visible
  // now, a deletion included, or 0 if there is none; *visible is the sequence read at. A
  // version can be missing only if compaction dropped it, which it does only to versions
  // no registered snapshot needs, so the answer is exact for every snapshot still held.
  Status NewestSequence(uint32_t cf_id, Slice key, SequenceNumber* seq, SequenceNumber* visible);

  // For tests and tools.
  const std::string& dbname() const { return dbname_; }
  SequenceNumber OldestSnapshotSequence() const;
  // A group member whose batch has at least this many entries inserts it itself, beside
  // the leader; the leader inserts smaller ones (a hand-off costs more than inserting a
  // few entries: docs/BENCHMARKS.md, "Members insert their own batches").
  static constexpr uint32_t kMinEntriesForOwnInsert = 8;
  // Tests: called with every batch just before it goes to the memtables, on the thread
  // that inserts it (its own writer's, or its group leader's). Set while no write runs.
  void SetBeforeMemtableInsertForTest(std::function<void(const WriteBatch&)> hook) {
    before_memtable_insert_ = std::move(hook);
  }
  // Tests: writers in the write queue (the group being logged included; a group that is
  // inserting has left it).
  size_t WriteQueueLengthForTest();
  // Tests: runs op as an exclusive operation, holding the front of the write queue (after
  // every earlier group is published), so that the writers arriving meanwhile queue.
  Status RunExclusiveForTest(const std::function<Status()>& op) {
    return WriteImpl(WriteOptions(), nullptr, op);
  }
  // Tests: the registered snapshots' sequences, ascending (what flush and compaction copy).
  std::vector<SequenceNumber> SnapshotListForTest() const { return SnapshotList(); }
  // Tests: the files of the live column families' current versions whose readers reads
  // have pinned (FindTable).
  size_t PinnedTableReadersForTest();
  // Tests: a manifest longer than this is rewritten as a snapshot at the next edit (64 MiB
  // otherwise). Set before the DB has work to do.
  void SetMaxManifestBytesForTest(uint64_t bytes) { max_manifest_bytes_ = bytes; }
  // Tests: called (without mutex_) by every compaction, trivial moves included, as it
  // starts, with its CF, level and output level. Set before the DB has work to compact.
  void SetCompactionStartForTest(std::function<void(uint32_t, int, int)> hook) {
    compaction_start_ = std::move(hook);
  }

  // --- Transaction support (txn/).
  // A write carried through the commit group with extras. kWalWriteBatch and
  // kWalCommitPrepared consume sequences and reach the memtables; kWalPrepare and
  // kWalRollbackPrepared are only logged (the batch of a rollback is empty).
  struct TxnWrite {
    WalRecordType type = kWalWriteBatch;
    std::string xid;  // prepare / commit-prepared / rollback-prepared
    // Called by the commit leader, in queue order and one call at a time (never two
    // leaders at once), after this write's sequences [first, last] are assigned (for a
    // write that consumes none: first = the next free sequence, last = first - 1) and
    // before the WAL write. Not OK rejects this write alone, with that status; it then
    // consumes no sequence. Runs on the leader's thread with no DB lock held; must not
    // call into the DB.
    std::function<Status(SequenceNumber first, SequenceNumber last)> validate;
    SequenceNumber last_sequence = 0;  // out: the write's last sequence once committed
    // out: where the record went, for SyncWalThrough: the WAL's number and its size after
    // the group's records (0 if nothing was logged).
    uint64_t wal_number = 0, wal_end = 0;
  };
  Status WriteTxn(const WriteOptions& options, WriteBatch* batch, TxnWrite* txn);
  // Makes WAL wal_number durable through byte wal_end (TxnWrite's outputs), outside the
  // write queue: commit groups go on appending while the fsync runs, and callers waiting
  // at the same time share one fsync (the first leads; the others wait for it and are
  // done if it covered them). A WAL already rotated away is durable (rotation syncs it).
  // A failed fsync is sticky: it and every later call fail, and writes are refused, until
  // the database is reopened (the kernel may have dropped the dirty pages).
  Status SyncWalThrough(uint64_t wal_number, uint64_t wal_end);
  // The sync mode a write with these options gets (its own, else Options::sync_mode).
  SyncMode EffectiveSyncMode(const WriteOptions& options) const;
  // Prepared transactions that recovery found unresolved (xid -> WriteBatch data). They
  // were logged again into the WAL opened by recovery; they stay pinned until a
  // kWalCommitPrepared / kWalRollbackPrepared write names their xid.
  std::map<std::string, std::string> RecoveredPrepared() const;

 private:
  struct Writer;
  struct WriteGroup;
  struct LeaderScratch;
  // Marks w ready and notifies it (write_mu_ held).
  static void Wake(Writer* w);
  // Makes [.., last] visible once every sequence up to `after` is: groups publish in
  // sequence order.
  void PublishInOrder(SequenceNumber after, SequenceNumber last);
  // Returns once every sequence up to seq is visible: yields briefly, then sleeps on
  // publish_cv_.
  void WaitVisible(SequenceNumber seq);
  // The front of the write queue: waits until every group that left it is published, so
  // that last_sequence_ is visible and no batch is still going into a memtable.
  void DrainWriteGroups();

  // Reports a message at `level` (Options::logger, else the LOG file). printf-style.
  void Log(LogLevel level, const char* format, ...) __attribute__((format(printf, 3, 4)));
  class SnapshotImpl;

  // --- db_impl.cc
  Status NewDB();
  Status ReplayManifest(uint64_t* manifest_number);
  Status ApplyRecoveredEdit(const VersionEdit& edit);
  // Replays the WALs among `children` (the directory's names) from min_wal_number on.
  Status ReplayWals(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& children,
                    uint64_t min_wal_number);
  // Replay's check that no record is missing: sequences run on from record to record and
  // from WAL to WAL. The first record may start at or before the sequence after the
  // manifest's last (its first entries may be in SSTables), never after it.
  struct SequenceCursor {
    SequenceNumber next = 0;  // the sequence the next record must start at (or, before the
    bool started = false;     // first record, the latest it may start at)
  };
  Status ReplayWal(std::unique_lock<std::mutex>& lock, uint64_t number, bool is_last, SequenceCursor* cursor);
  // Manifest edits are made one at a time: a thread owns the manifest (ManifestOwner) from
  // reading the state its edit is built from, through logging the edit, to installing it in
  // memory. mutex_ is released for the manifest's write and fsync, so neither the commit
  // leader nor readers nor other background work wait for that I/O; meanwhile others may
  // change what no edit records (memtables, WALs, the next file number) but not what edits
  // record (versions, column families): that needs ownership.
  class ManifestOwner;
  // A new manifest holding the whole state, then CURRENT. Owner; mutex_ held through l,
  // released during the I/O.
  Status WriteSnapshotManifest(std::unique_lock<std::mutex>& l);
  void BuildSnapshotEditLocked(VersionEdit* edit) const;
  Status WriteManifestFile(const std::string& dir, uint64_t number, const VersionEdit& edit,
                           std::unique_ptr<LogWriter>* out);
  // Appends edit to the manifest and syncs it. Owner; mutex_ held through l, released
  // during the I/O. When the append or the sync fails, the edit may still take effect at
  // the next open (its bytes may be in the file CURRENT names): *outcome_unknown is then
  // set, manifest_error_ refuses writes, and the caller must keep every file the edit adds
  // (in unresolved_files_), never delete it.
  Status LogAndApply(std::unique_lock<std::mutex>& l, VersionEdit* edit, bool* outcome_unknown = nullptr);
  // Writes refuse while an edit's outcome is unknown; this tries to settle it by writing a
  // snapshot manifest (the in-memory state, which never applied the edit). mutex_ held
  // through l; takes ownership of the manifest if there is something to settle.
  Status ResolveManifestErrorLocked(std::unique_lock<std::mutex>& l);
  Status NewWal();  // opens a new WAL file; write_mu_ leader or open
  // After a failed append: cuts the live WAL back to `size` (its last whole record) and
  // syncs it through a new handle; sets wal_cut_. wal_mu_ held.
  Status CutFailedWalLocked(uint64_t size);
  // Cuts WAL file `fname` back to `size` and makes the cut durable through a new handle.
  Status CutWalDurably(const std::string& fname, uint64_t size);
  Status RelogRecoveredPreparedLocked();  // recovery: prepare records into the new WAL
  ColumnFamilyData* CreateCfdLocked(uint32_t id, const std::string& name, const ColumnFamilyOptions& options);
  ColumnFamilyData* LiveCfd(ColumnFamilyHandle* handle) const;  // nullptr if dropped / unknown
  std::shared_ptr<const FileMetaData> TrackFile(const FileMetaData& meta);
  // The reader of live file f: its pinned one, else the table cache's, which it pins while
  // the DB's live files all fit in the table cache (so pinning opens no file the cache
  // would not keep open anyway). *held keeps an unpinned reader alive; a pinned one lives
  // as long as f.
  Status FindTable(const FileMetaData& f, std::shared_ptr<TableReader>* held, TableReader** table);
  std::shared_ptr<const ValueLogMeta> TrackValueLog(uint64_t number, uint64_t size);
  void DeleteObsoleteFiles();
  Status DeleteOrphanFiles();  // at open: files no CF references
  // At open, after the manifest: every file it names is there (and not truncated), and so
  // is the oldest WAL it still needs; otherwise edits were lost or files deleted, and
  // opening would silently drop data.
  Status CheckRecoveredFilesLocked();
  // Marks cfd damaged with status (the first damage is kept), logged as an error.
  void MarkDamagedLocked(ColumnFamilyData* cfd, const Status& status);
  uint64_t MinLiveWalNumberLocked() const;
  std::shared_ptr<MemTableSlot> NewSlot(size_t write_buffer_size);
  // Arena blocks are sized to the write buffer, so that a small buffer is not "full" after
  // its first block.
  // The point-lookup filter: about 10 bits per entry at 100 bytes an entry.
  static std::shared_ptr<MemTable> NewMemTable(size_t write_buffer_size) {
    return std::make_shared<MemTable>(std::clamp<size_t>(write_buffer_size / 16, 4 << 10, 1 << 20),
                                      write_buffer_size / 80);
  }

  // --- db_impl_write.cc
  // Runs `batch` (or, if batch is null, `exclusive` alone) as part of a commit group.
  Status WriteImpl(const WriteOptions& options, WriteBatch* batch, const std::function<Status()>& exclusive,
                   TxnWrite* txn = nullptr);
  Status ValidateBatch(const WriteBatch& batch) const;  // mutex_ held
  Status ApplyBatchToMemtables(const WriteBatch& batch, SequenceNumber first_seq);
  // A logged group's member inserts its own batch, then leaves the group: finishes it if
  // it was the last to insert, else waits for that. Returns w's status.
  Status InsertAsGroupMember(Writer* w);
  Status LeaveWriteGroup(Writer* w);
  Status WaitForWriteGroup(Writer* w);  // until another member finished w's group
  // Publishes the group's sequences (all its inserts are done) after every earlier
  // group's, and wakes its other members. self: the calling member, not woken.
  void FinishWriteGroup(WriteGroup* group, Writer* self);
  // slots: scratch for the memtable slots the group writes to (emptied first).
  Status MakeRoomForWrite(std::unique_lock<std::mutex>& state_lock, const std::vector<WriteBatch*>& group,
                          std::vector<MemTableSlot*>* slots);
  Status SwitchMemtableLocked(MemTableSlot* slot);  // freezes slot->active, rotates the WAL
  // Freezes the slots' active memtables (the empty ones stay) behind one WAL rotation.
  Status SwitchMemtablesLocked(const std::vector<MemTableSlot*>& slots);
  // Options::max_total_wal_size: freezes the memtables that hold the oldest WAL when the
  // closed WALs exceed it (per-CF memtables only).
  Status CapTotalWalSizeLocked();
  // Bookkeeping of wal_files_.
  void AddWalFileLocked(uint64_t number, uint64_t bytes);
  void RemoveWalFileLocked(std::map<uint64_t, uint64_t>::iterator it);
  void IntervalSyncLoop();

  // --- db_impl_flush.cc
  void FlushLoop();
  Status FlushOneLocked(std::unique_lock<std::mutex>& lock, MemTableSlot* slot);
  // Writes mem's entries of cfd as one SSTable (and value log), leaving out versions
  // no registered snapshot can see (ShadowedVersionFilter; snapshots ascending).
  Status BuildTable(ColumnFamilyData* cfd, MemTable* mem, const std::vector<SequenceNumber>& snapshots,
                    FileMetaData* meta, uint64_t* vlog_number, uint64_t* vlog_size);
  void MaybeScheduleFlushLocked();
  Status FlushSlotAndWait(std::shared_ptr<MemTableSlot> slot);

  // --- db_impl_compaction.cc
  struct CompactionOutput;
  struct CompactionRecord;
  void CompactionLoop();
  // Runs c (of a CF whose RunningCompactions holds it) and installs its outcome; sets
  // record's output counts.
  Status RunCompactionLocked(std::unique_lock<std::mutex>& lock, ColumnFamilyData* cfd,
                             const struct CompactionInputs& c, CompactionRecord* record);
  // RunCompactionLocked, recorded for GetProperty("tidesdb.compactions"): listed as running
  // while it runs, then kept among the kRecentCompactions most recent with its outcome.
  Status RunTrackedCompactionLocked(std::unique_lock<std::mutex>& lock, ColumnFamilyData* cfd,
                                    const struct CompactionInputs& c, bool manual);
  // A trivial move (c.move): one manifest edit moves c.upper to c.output_level unchanged.
  Status MoveFilesLocked(std::unique_lock<std::mutex>& lock, ColumnFamilyData* cfd,
                         const struct CompactionInputs& c, CompactionRecord* record);
  Status RunSubcompaction(ColumnFamilyData* cfd, const struct CompactionInputs& c, const Version& version,
                          const std::vector<SequenceNumber>& snapshots, const std::string* start,
                          const std::string* end, std::vector<CompactionOutput>* outputs,
                          std::vector<ValueLogMeta>* relocated, std::set<uint64_t>* unreadable);
  void UpdateL0StatsLocked();
  // Write back-pressure from L0 and memory; may sleep or wait (mutex_ held via lock).
  Status ThrottleForCompactionLocked(std::unique_lock<std::mutex>& lock);

  // --- db_impl_read.cc
  // The CF behind handle for a read, without mutex_: nullptr if the handle is not this
  // DB's or its CF was dropped (a read racing a drop may still see the CF as it was).
  ColumnFamilyData* ReadableCfd(ColumnFamilyHandle* handle) const;
  static std::shared_ptr<const ReadView> GetReadView(const ColumnFamilyData* cfd) {
    return cfd->read_view.Load();
  }
  // Publish a new ReadView: of cfd (after its version changed), or of every CF that uses
  // slot (after its memtables changed; the CFs' versions as they are now, so a flush sets
  // its versions first and then publishes the slot, one pair per CF). mutex_ held.
  void PublishReadViewLocked(ColumnFamilyData* cfd);
  void PublishSlotLocked(MemTableSlot* slot);
  ValueFetcher MakeValueFetcher(bool fill_cache);
  // now_seconds: the clock for expiring entries (Get passes its start time: one clock
  // read fewer per read).
  Status GetImpl(const ReadOptions& options, ColumnFamilyHandle* cf, Slice key, std::string* value,
                 int* source, uint64_t now_seconds);
  // The newest version of (cf_id, key) at snap in view: decoded into *value, or, if
  // found_seq is given, only its sequence there (a deletion included: OK, not NotFound).
  Status FindInView(const ReadView& view, uint32_t cf_id, Slice key, SequenceNumber snap,
                    uint64_t now_seconds, bool fill_cache, std::string* value, int* source,
                    SequenceNumber* found_seq);

  const Options options_;
  Env* const env_;
  // The LOG file when Options::logger is empty; opened at the first message.
  std::mutex log_mu_;
  std::unique_ptr<WritableFile> log_file_;
  bool log_unavailable_ = false;
  const std::string dbname_;
  std::unique_ptr<FileLock> db_lock_;
  std::unique_ptr<BlockCache> block_cache_;
  std::unique_ptr<TableCache> table_cache_;
  std::shared_ptr<ObsoleteFiles> obsolete_ = std::make_shared<ObsoleteFiles>();

  // Guarded by mutex_.
  mutable std::mutex mutex_;
  std::condition_variable bg_cv_;  // flush progress, shutdown
  std::map<uint32_t, std::unique_ptr<ColumnFamilyData>> cfs_;
  std::unordered_map<std::string, ColumnFamilyData*> cf_by_name_;
  std::vector<std::unique_ptr<ColumnFamilyData>> dropped_cfs_;  // keeps dropped handles valid
  uint32_t max_cf_id_ = 0;
  std::shared_ptr<MemTableSlot> unified_slot_;
  std::vector<std::shared_ptr<MemTableSlot>> slots_;  // every slot (one if unified)
  uint64_t next_file_number_ = 2;
  // The manifest in force: touched only by its owner (and the destructor, once every
  // thread is gone). manifest_owned_: some thread owns it; manifest_cv_: it was released.
  uint64_t manifest_number_ = 0;
  std::unique_ptr<LogWriter> manifest_;
  uint64_t manifest_size_ = 0;
  uint64_t max_manifest_bytes_ = 64ull << 20;  // then the next edit writes a snapshot manifest
  bool manifest_owned_ = false;
  std::condition_variable manifest_cv_;
  // Registered snapshots, guarded by snapshot_mu_ (not mutex_: taking and releasing a
  // snapshot never waits for I/O). GetSnapshot reads visible_sequence_ and links the new
  // snapshot under it, and flush and compaction copy the list under it, so a snapshot
  // either is in the copy or reads at a sequence at least as new as every entry the copy's
  // user rewrites. The list is in the order snapshots were taken, which is their sequences'
  // order (visible_sequence_ never decreases), so taking and releasing one are O(1) and
  // allocate nothing but the snapshot itself (a std::multiset's node and rebalancing were
  // 0.2 % of the server's CPU in cached point selects, which take one snapshot each).
  mutable std::mutex snapshot_mu_;
  SnapshotImpl* oldest_snapshot_ = nullptr;  // the list's ends
  SnapshotImpl* newest_snapshot_ = nullptr;
  std::vector<SequenceNumber> SnapshotList() const;  // ascending
  // Set under mutex_; atomic because compaction also polls it without the mutex.
  std::atomic<bool> shutting_down_{false};
  Status bg_error_;   // last flush failure; cleared by a successful flush
  Status wal_error_;  // a failed WAL sync: writes refuse until reopen (data state unknown)
  // A manifest edit failed to append or sync, so whether it is in force at the next open
  // is unknown. Cleared by the next durable snapshot manifest, which also releases
  // unresolved_files_ (the outputs of such edits; kept so that a reopen honouring the
  // edit finds them).
  Status manifest_error_;
  std::vector<std::shared_ptr<const Version>> unresolved_files_;
  bool wal_rotate_pending_ = false;  // a WAL append failed: the next commit starts a new WAL
  // The oldest WAL the manifest on disk still needs. WALs are deleted only below it (and
  // below MinLiveWalNumberLocked()), so the WAL it names always exists.
  uint64_t logged_wal_number_ = 0;
  // A checkpoint copying WALs without mutex_: WALs from this number on stay on disk.
  static constexpr uint64_t kNoWalPin = ~uint64_t{0};
  uint64_t checkpoint_wal_pin_ = kNoWalPin;
  int flushes_running_ = 0;
  uint64_t flush_attempts_ = 0;  // background flush attempts finished (ok or not)
  // Two-phase commit: the WAL holding each unresolved prepare record (pins that WAL), and
  // the batches of the ones recovery found.
  std::map<std::string, uint64_t> prepared_wal_;
  std::map<std::string, std::string> recovered_prepared_;

  // Sequences: last_sequence_ is assigned by the leader while its group holds the front
  // of the write queue, after the group's WAL write; readers use visible_sequence_,
  // published by the group member that finished inserting last, once all of the group is
  // in the memtables and every earlier group is published (groups insert after leaving
  // the queue, so several may insert at once; they publish in sequence order). Atomic because a snapshot
  // manifest (built by whichever thread owns the manifest) records it without the write queue: any value it
  // reads is logged already.
  std::atomic<SequenceNumber> last_sequence_{0};
  // Sequences taken by disable_wal groups since the last WAL write ([first, last]; first = 0:
  // none). The next logged group notes them (kWalUnloggedSequences). Leader only.
  SequenceNumber unlogged_first_ = 0, unlogged_last_ = 0;
  SequenceNumber replayed_sequence_ = 0;  // recovery: the last sequence replayed from the WAL
  std::atomic<SequenceNumber> visible_sequence_{0};

  // Write queue.
  std::mutex write_mu_;
  std::deque<Writer*> writers_;
  // Groups that left the queue and wait for an earlier one to publish, and the queue's
  // front waiting for every group to publish (DrainWriteGroups), sleep on publish_cv_.
  // publish_mu_ is a leaf: nothing else is taken while it is held.
  std::mutex publish_mu_;
  std::condition_variable publish_cv_;
  std::atomic<int> publish_waiters_{0};  // threads asleep (or going to sleep) on publish_cv_
  std::function<void(const WriteBatch&)> before_memtable_insert_;  // tests only
  std::function<void(uint32_t, int, int)> compaction_start_;       // tests only

  // The live WAL. Replaced by the leader (with mutex_ held); read by the syncer.
  std::mutex wal_mu_;
  std::shared_ptr<LogWriter> wal_;
  uint64_t wal_number_ = 0;
  // WAL files on disk: number -> bytes (the current one's 0 until it is closed), and the
  // sum of the closed ones' bytes (guarded by mutex_).
  std::map<uint64_t, uint64_t> wal_files_;
  uint64_t closed_wal_bytes_ = 0;
  // A WAL was closed since CapTotalWalSizeLocked last looked: only then can the closed
  // bytes have grown past the cap (so a write does not walk every slot for nothing).
  bool wal_cap_check_due_ = true;
  std::atomic<bool> wal_dirty_{false};  // appended since the last sync
  // Guarded by wal_mu_: the live writer failed an append and its file was cut back and
  // synced; nothing more to sync in it (its sticky error is not a failed fsync).
  bool wal_cut_ = false;
  // SyncWalThrough's state (sync_mu_): a sync is running (NewWal waits for it before it
  // closes the WAL that sync may be using), what is known durable, and the first failure.
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  bool sync_running_ = false;
  // Out-of-queue fsyncs finished (changed under sync_mu_, read without it by waiters that
  // spin before they sleep on sync_cv_).
  std::atomic<uint64_t> syncs_finished_{0};
  uint64_t synced_wal_ = 0, synced_end_ = 0;
  Status sync_error_;
  // Records that WAL `number` is durable through `end`, or that an fsync of the WAL failed
  // (the first failure is kept). The Locked ones with sync_mu_ held.
  void NoteSynced(uint64_t number, uint64_t end);
  void NoteSyncFailed(const Status& s);
  void NoteSyncedLocked(uint64_t number, uint64_t end);
  void NoteSyncFailedLocked(const Status& s);

  std::vector<std::thread> flush_threads_;
  std::vector<std::thread> compaction_threads_;
  int compactions_running_ = 0;
  Status compaction_error_;           // last compaction failure; cleared by a successful one
  int max_l0_files_ = 0;              // the largest L0 file count of any CF (write back-pressure)
  uint64_t compaction_progress_ = 0;  // completed compactions (a stalled writer watches it)
  // Compactions for GetProperty("tidesdb.compactions"), guarded by mutex_.
  struct CompactionRecord {
    uint64_t id = 0;  // counts from 1 for the life of the DB object
    uint32_t cf_id = 0;
    const char* reason = "";
    bool manual = false;  // CompactRange
    bool move = false;    // a trivial move
    int level = 0, output_level = 0;
    uint64_t input_files = 0, input_bytes = 0, output_files = 0, output_bytes = 0;
    uint64_t start_micros = 0, end_micros = 0;  // Env::NowMicros; end 0 while running
    std::string status;                         // "OK" or the error, once finished
  };
  static constexpr size_t kRecentCompactions = 32;
  uint64_t next_compaction_id_ = 1;
  std::vector<CompactionRecord> compactions_now_;    // running
  std::deque<CompactionRecord> compactions_recent_;  // finished, oldest first
  // The kInterval syncer sleeps on its own condition variable, woken only by shutdown (so
  // not by every flush and compaction, and never holding mutex_).
  std::thread sync_thread_;
  std::mutex syncer_mu_;
  std::condition_variable syncer_cv_;

  // Counters for GetProperty("tidesdb.stats").
  std::atomic<uint64_t> stat_wal_bytes_{0}, stat_wal_syncs_{0}, stat_commit_groups_{0}, stat_commits_{0},
      stat_flushes_{0}, stat_flush_bytes_{0}, stat_stall_micros_{0}, stat_slowdown_micros_{0},
      stat_compactions_{0}, stat_compaction_bytes_read_{0}, stat_compaction_bytes_written_{0},
      stat_compaction_entries_dropped_{0}, stat_vlog_relocated_bytes_{0}, stat_vlog_files_deleted_{0},
      stat_vlog_bytes_deleted_{0}, stat_vlog_relocation_errors_{0}, stat_flush_entries_dropped_{0},
      stat_trivial_moves_{0}, stat_trivial_move_bytes_{0}, stat_wal_size_flushes_{0},
      stat_member_inserts_{0};  // batches a group member other than the leader inserted
  // Point reads answered per source: [0] memtables, [1 + L] level L; [kMaxReadLevels] not found.
  static constexpr int kMaxReadLevels = 9;
  std::array<StripedCounter, kMaxReadLevels + 1> stat_reads_{};
  Histogram get_micros_, write_micros_;
};

// Ownership of the manifest (see DBImpl::LogAndApply) for a scope. Constructed with mutex_
// held through l: waits (releasing it) until no other thread owns the manifest. Released at
// the end of the scope, whether l holds mutex_ then or not.
class DBImpl::ManifestOwner {
 public:
  ManifestOwner(DBImpl* db, std::unique_lock<std::mutex>& l);
  ~ManifestOwner();
  ManifestOwner(const ManifestOwner&) = delete;
  ManifestOwner& operator=(const ManifestOwner&) = delete;

 private:
  DBImpl* const db_;
  std::unique_lock<std::mutex>& l_;
};

}  // namespace tidesdb
