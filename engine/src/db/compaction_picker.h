// Leveled compaction picking: which files of a column family to merge next. Pure functions
// of a Version and the CF's options, so they are tested on their own.
//
// Levels: L0 holds flushed files, newest first, possibly overlapping. Levels >= 1 are sorted
// and disjoint by user key. A compaction merges files of level L with the files of L+1 they
// overlap and writes level L+1.
//
// Dynamic level targets: the deepest non-empty level's target is its actual size (at least
// level_size_base); each level above it targets 1/level_size_multiplier of the one below,
// but never less than level_size_base. So most data ends in the last level and space
// amplification stays near 1 + 1/multiplier whatever the data size.
//
// Priority: (1) L0 file count >= l1_file_count_trigger, or (1b) with l0_compaction_size_ratio
// N > 0, L0 bytes >= 1/N of the bytes of the L1 files L0 overlaps (all of L0 and those
// files either way; a small CF then keeps a single run below its memtables); (2) the level with the highest
// size/target score >= 1; (3) value-log garbage collection (below); (4) a file whose
// tombstone density >= tombstone_density_trigger (with at least
// tombstone_density_min_entries entries), so deletes do not leave readers walking tombstones.
//
// Parallel compactions. A CF runs a second compaction (a third, ...) when its L0 holds
// L0SlowdownFiles files, the point where writes start to be slowed down: below it, work that
// waits is done in larger batches, which costs fewer bytes (measured: a random load whose
// compactions ran beside each other whenever they could wrote 7 % more, with no gain in
// throughput on two cores; docs/BENCHMARKS.md); from it, a stall costs more. PickCompaction
// takes the CF's running compactions and returns the first pick, in the order above, that
// they admit (RunningCompactions::Admits in column_family.h: no shared input, no
// overlapping output range in one level, one L0 compaction at a time); an oversized level
// offers its files round-robin from the cursor, skipping the ones that may not run now, and
// a level's files being compacted do not count towards its size.
//
// Value-log GC. Every file records the bytes it references in each value log
// (FileMetaData::value_log_refs), so a value log's live bytes are the sum over the files of
// the version and its garbage ratio is 1 - live / record bytes. A value log whose ratio
// reaches value_log_gc_threshold is "to collect": every compaction that meets a pointer into
// it copies the value into a new value log and rewrites the pointer (CompactionInputs::
// relocate), and when nothing else is due, (3) picks the file holding the most of the
// worst such log's live bytes and rewrites it in place (or, in L0, compacts L0 into L1).
// A value log no file references is dead and is deleted by the edit that removed its last
// reference. A manual compaction also collects logs below the threshold
// (PickValueLogCleanup). Nothing is collected or deleted in a CF while any of its files has unknown
// references (logged before references existed).
//
// Trivial move. A size-driven compaction ((1), (1b) and (2)) whose files may reach the output
// level unchanged is done by a manifest edit alone (CompactionInputs::move): sequential
// inserts then cost one flush and no rewrite. It is allowed when the move keeps every
// invariant and skips no work a rewrite is due to do (CanMoveWithoutRewrite): nothing in the
// output level overlaps the files (levels >= 1 stay disjoint) and, from L0, the files are
// disjoint from one another (all of L0 is an input, so no older L0 file stays above them) and
// hold at least half of write_buffer_size together (smaller ones, from a CF with a small
// share of a unified memtable, are merged into one file as before, not moved one by one);
// every file records its value-log references (they move with it, so value-log accounting
// is unchanged) and points into no log being collected; and a file holding tombstones does
// not land where no deeper level overlaps it (there a rewrite would drop them), nor does any
// file of a CF with a default TTL (a rewrite there drops expired entries). Versions kept for a
// snapshot since released and entries past a per-write expiry stay in a moved file until it
// is next rewritten; readers skip them as they do before any compaction. Value-log GC,
// tombstone-density and manual compactions (PickRangeCompaction, CompactRange, which
// OPTIMIZE TABLE relies on to purge deleted data) always rewrite.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/column_family.h"
#include "tidesdb/options.h"

namespace tidesdb {

struct CompactionInputs {
  int level = 0;         // the upper input level
  int output_level = 1;  // where the output goes (level + 1, or level itself at the bottom)
  std::vector<std::shared_ptr<const FileMetaData>> upper;  // files of `level`
  std::vector<std::shared_ptr<const FileMetaData>> lower;  // files of `output_level`
  const char* reason = "";
  // Value logs whose live values this compaction moves to a new value log (ascending).
  std::vector<uint64_t> relocate;
  // True: `upper` moves to output_level unchanged by a manifest edit (a trivial move; `lower`
  // is empty). Set only by PickCompaction, when CanMoveWithoutRewrite holds.
  bool move = false;
};

struct ValueLogUsage {
  uint64_t file_number = 0;
  uint64_t file_size = 0;   // header included
  uint64_t live_bytes = 0;  // record bytes some file of the version references
  // Dead record bytes / record bytes; 1 for a log with no records.
  double GarbageRatio() const;
};

// The usage of every value log of v, in v.value_logs order. False (and *out empty) if some
// file of v has unknown references: then no value log of the CF may be collected or deleted.
bool ValueLogUsages(const Version& v, std::vector<ValueLogUsage>* out);
// Value logs to relocate: garbage ratio >= value_log_gc_threshold and some live bytes left,
// except those in `skip` (logs where relocation met a damaged record). Empty when the
// threshold is outside (0, 1), which turns relocation off.
std::vector<uint64_t> ValueLogsToCollect(const Version& v, const ColumnFamilyOptions& options,
                                         const std::set<uint64_t>& skip = {});
// Value logs of v that no file references.
std::vector<uint64_t> DeadValueLogs(const Version& v);

uint64_t LevelBytes(const std::vector<std::shared_ptr<const FileMetaData>>& files);
// Write back-pressure from L0 (DBImpl::ThrottleForCompactionLocked): at L0StallFiles files
// writes wait for compaction; from L0SlowdownFiles each write group sleeps a little.
int L0StallFiles(const ColumnFamilyOptions& options);
int L0SlowdownFiles(const ColumnFamilyOptions& options);
// Target size per level (index = level; L0's entry is unused).
std::vector<uint64_t> LevelTargets(const Version& v, const ColumnFamilyOptions& options);

// The next compaction for this version, or nothing. `cursors[level]` is the largest key
// compacted last time at that level (round-robin through the key space); updated.
// `gc_skip`: value logs never to relocate (see ValueLogsToCollect). `running`: the CF's
// compactions running now; the pick is one they admit (RunningCompactions::Admits in
// column_family.h), the first such in the order of the priorities above.
std::optional<CompactionInputs> PickCompaction(const Version& v, const ColumnFamilyOptions& options,
                                               std::vector<std::string>* cursors,
                                               const std::set<uint64_t>& gc_skip = {},
                                               const RunningCompactions* running = nullptr);

// True if c's upper files may move to c.output_level without being rewritten (the rules in
// the header comment, "Trivial move"). c.lower must be what the picker chose for c.upper.
bool CanMoveWithoutRewrite(const Version& v, const ColumnFamilyOptions& options, const CompactionInputs& c);

// Every file of `level` overlapping [start, limit) (empty limit = to the end) plus what it
// overlaps in the next level; nothing if `level` has no such file.
std::optional<CompactionInputs> PickRangeCompaction(const Version& v, const ColumnFamilyOptions& options,
                                                    int level, Slice start, Slice limit,
                                                    const std::set<uint64_t>& gc_skip = {});

// CompactRange's last step. Its passes drop overwritten and deleted versions, which leaves
// their values as garbage in value logs that may stay below value_log_gc_threshold, so
// background GC would keep them; a manual compaction collects them all. The value logs
// with any garbage and some live bytes (not in gc_skip) whose every referencing file is a
// file of the deepest non-empty level inside [start, limit) (empty limit = to the end): one
// in-place rewrite of that level's files from the first to the last referencing one,
// relocating those logs' live values, after which the logs are dead. Nothing when
// relocation is off (value_log_gc_threshold outside (0, 1)), a file has unknown
// references, or no log qualifies.
std::optional<CompactionInputs> PickValueLogCleanup(const Version& v, const ColumnFamilyOptions& options,
                                                    Slice start, Slice limit,
                                                    const std::set<uint64_t>& gc_skip = {});

// Files of `level` whose user-key range intersects [smallest, largest] (inclusive).
std::vector<std::shared_ptr<const FileMetaData>> OverlappingFiles(const Version& v, int level, Slice smallest,
                                                                  Slice largest);

}  // namespace tidesdb
