// CommitTable: the recent commits that optimistic transactions validate against.
//
// For each (column family id, key) written by a committed transaction the table remembers
// the highest commit sequence. A transaction that read at snapshot S and wants to write
// key K conflicts if some other transaction committed K with a sequence > S (first
// committer wins).
//
// Memory is bounded: the table holds at most about Options::capacity_bytes of entries.
// When it must forget an entry (eviction, or Prune) it raises a low-water mark to the
// highest sequence it has forgotten; a validation whose snapshot is below that mark may
// have lost the conflicting entry and conservatively fails. So a conflict is never missed;
// at worst a transaction with a very old snapshot retries. The table is sharded by key and
// each shard keeps its own mark, so eviction in one shard does not fail validations of
// keys in other shards.
//
// A key is held as a 64-bit hash of its column family and bytes, not as its bytes: two
// keys with one hash would share an entry, which can only cause a spurious conflict (the
// transaction retries), never hide one. Each entry is still charged its key's size, so the
// capacity means what it did.
//
// Atomicity contract: validating a transaction's keys and recording its commit must be
// one step with respect to other committers, or two transactions writing the same key
// could both pass validation. Either call ValidateAndRecord (which serializes its callers
// internally), or serialize calls to Validate+RecordCommit externally (e.g. under the
// database's commit mutex). Individual calls are thread-safe in any case.
//
// Recording a commit before it is durable is safe: if the commit then fails, the entry
// can only cause a spurious conflict, never hide a real one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "db/dbformat.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

class CommitTable {
 public:
  struct Options {
    // Memory budget for entries, split evenly among the shards. Each entry is charged its
    // key size plus a fixed per-entry overhead (kEntryOverheadBytes).
    size_t capacity_bytes = 64 << 20;
    // Number of shards, each with its own mutex; rounded up to a power of two.
    size_t num_shards = 16;
  };

  // Approximate bookkeeping cost of one entry besides its key bytes (its record, its
  // index slot at half load, the index's growth).
  static constexpr size_t kEntryOverheadBytes = 80;

  // A key written by a committing transaction.
  struct KeyRef {
    uint32_t cf_id = 0;
    Slice key;
  };

  CommitTable() : CommitTable(Options()) {}
  explicit CommitTable(const Options& options);
  ~CommitTable();

  CommitTable(const CommitTable&) = delete;
  CommitTable& operator=(const CommitTable&) = delete;

  // Remembers that (cf_id, key) was committed at commit_seq. Recording an older sequence
  // than the one remembered keeps the newer one. May evict other entries of the shard.
  void RecordCommit(uint32_t cf_id, Slice key, SequenceNumber commit_seq);

  // What the table knows of commits of (cf_id, key) after snapshot_seq: none, one, or
  // that it has forgotten commits newer than snapshot_seq in this key's shard (then only
  // the database itself can tell).
  enum class Check { kClean, kConflict, kForgotten };
  Check CheckKey(uint32_t cf_id, Slice key, SequenceNumber snapshot_seq) const;

  // OK for kClean; Busy("write conflict ...") for kConflict and, conservatively, for
  // kForgotten.
  static Status StatusOf(Check check);
  Status Validate(uint32_t cf_id, Slice key, SequenceNumber snapshot_seq) const {
    return StatusOf(CheckKey(cf_id, key, snapshot_seq));
  }

  // Validates every key against snapshot_seq; if all pass, calls allocate_commit_seq()
  // once, records every key at the sequence it returns, stores it in *commit_seq and
  // returns OK. On a conflict returns Busy and neither allocates nor records. Calls are
  // serialized with each other, so concurrent committers using only this method need no
  // external lock. allocate_commit_seq runs under that internal lock: it must be short
  // and must not call back into this table.
  Status ValidateAndRecord(std::span<const KeyRef> keys, SequenceNumber snapshot_seq,
                           const std::function<SequenceNumber()>& allocate_commit_seq,
                           SequenceNumber* commit_seq);

  // Forgets entries committed at or before oldest_active_snapshot: no active transaction
  // can conflict with them (its snapshot already sees them). The low-water mark rises to
  // at most oldest_active_snapshot, so validations from active transactions are not made
  // more conservative. Commits are expected to be recorded in roughly increasing sequence
  // order (the commit path assigns sequences in order); Prune walks each shard from its
  // oldest entry and stops at the first newer one, so it costs only what it frees.
  void Prune(SequenceNumber oldest_active_snapshot);

  // Number of entries held.
  size_t NumEntries() const;
  // Bytes charged for the entries held.
  size_t ApproximateMemoryUsage() const;
  // The highest low-water mark of any shard (0 while nothing was forgotten): no lock, so
  // it may lag a concurrent eviction by a moment. A validation from at or above it is
  // answered by the table alone (unless the mark has just risen).
  SequenceNumber MaxLowWaterMark() const;

 private:
  struct Shard;

  Shard& ShardFor(uint64_t hash) const;
  void RaiseMaxLowWaterMark(SequenceNumber mark);

  const size_t shard_mask_;
  std::unique_ptr<Shard[]> shards_;
  std::mutex commit_mu_;  // serializes ValidateAndRecord
  std::atomic<SequenceNumber> max_low_water_mark_{0};
};

}  // namespace tidesdb
