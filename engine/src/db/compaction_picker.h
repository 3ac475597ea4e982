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
// Priority: (1) L0 file count >= l1_file_count_trigger; (2) the level with the highest
// size/target score >= 1; (3) a file whose tombstone density >= tombstone_density_trigger
// (with at least tombstone_density_min_entries entries), so deletes do not leave readers
// walking tombstones.
#pragma once

#include <memory>
#include <optional>
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
};

uint64_t LevelBytes(const std::vector<std::shared_ptr<const FileMetaData>>& files);
// Target size per level (index = level; L0's entry is unused).
std::vector<uint64_t> LevelTargets(const Version& v, const ColumnFamilyOptions& options);

// The next compaction for this version, or nothing. `cursors[level]` is the largest key
// compacted last time at that level (round-robin through the key space); updated.
std::optional<CompactionInputs> PickCompaction(const Version& v, const ColumnFamilyOptions& options,
                                               std::vector<std::string>* cursors);

// Every file of `level` overlapping [start, limit) (empty limit = to the end) plus what it
// overlaps in the next level; nothing if `level` has no such file.
std::optional<CompactionInputs> PickRangeCompaction(const Version& v, const ColumnFamilyOptions& options,
                                                    int level, Slice start, Slice limit);

// Files of `level` whose user-key range intersects [smallest, largest] (inclusive).
std::vector<std::shared_ptr<const FileMetaData>> OverlappingFiles(const Version& v, int level, Slice smallest,
                                                                  Slice largest);

}  // namespace tidesdb
