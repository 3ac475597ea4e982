#include "db/compaction_picker.h"

#include <algorithm>

namespace tidesdb {

uint64_t LevelBytes(const std::vector<std::shared_ptr<const FileMetaData>>& files) {
  uint64_t n = 0;
  for (const auto& f : files) n += f->file_size;
  return n;
}

std::vector<uint64_t> LevelTargets(const Version& v, const ColumnFamilyOptions& options) {
  const int max_levels = std::max(options.max_levels, 2);
  const uint64_t base = std::max<uint64_t>(options.level_size_base, 1);
  const uint64_t mult = static_cast<uint64_t>(std::max(options.level_size_multiplier, 2));
  std::vector<uint64_t> targets(max_levels, base);
  int last = 0;
  for (int l = 1; l < static_cast<int>(v.levels.size()) && l < max_levels; ++l) {
    if (!v.levels[l].empty()) last = l;
  }
  if (last == 0) return targets;
  targets[last] = std::max(base, LevelBytes(v.levels[last]));
  for (int l = last - 1; l >= 1; --l) targets[l] = std::max(base, targets[l + 1] / mult);
  for (int l = last + 1; l < max_levels; ++l) targets[l] = targets[l - 1] * mult;
  return targets;
}

std::vector<std::shared_ptr<const FileMetaData>> OverlappingFiles(const Version& v, int level, Slice smallest,
                                                                  Slice largest) {
  std::vector<std::shared_ptr<const FileMetaData>> out;
  if (level >= static_cast<int>(v.levels.size())) return out;
  for (const auto& f : v.levels[level]) {
    if (ExtractUserKey(f->largest) < smallest || ExtractUserKey(f->smallest) > largest) continue;
    out.push_back(f);
  }
  return out;
}

namespace {

// The user-key range covered by files.
void KeyRange(const std::vector<std::shared_ptr<const FileMetaData>>& files, std::string* smallest,
              std::string* largest) {
  bool first = true;
  for (const auto& f : files) {
    Slice s = ExtractUserKey(f->smallest), l = ExtractUserKey(f->largest);
    if (first || s < Slice(*smallest)) smallest->assign(s.data(), s.size());
    if (first || l > Slice(*largest)) largest->assign(l.data(), l.size());
    first = false;
  }
}

CompactionInputs WithLowerLevel(const Version& v, const ColumnFamilyOptions& options, int level,
                                std::vector<std::shared_ptr<const FileMetaData>> upper, const char* reason) {
  CompactionInputs c;
  c.level = level;
  c.output_level = std::min(level + 1, std::max(options.max_levels, 2) - 1);
  c.reason = reason;
  std::string smallest, largest;
  KeyRange(upper, &smallest, &largest);
  if (c.output_level == level) {
    c.upper = std::move(upper);  // bottom level: rewrite in place
    return c;
  }
  c.upper = std::move(upper);
  c.lower = OverlappingFiles(v, c.output_level, smallest, largest);
  return c;
}

}  // namespace

std::optional<CompactionInputs> PickCompaction(const Version& v, const ColumnFamilyOptions& options,
                                               std::vector<std::string>* cursors) {
  const int max_levels = std::max(options.max_levels, 2);
  if (cursors->size() < static_cast<size_t>(max_levels)) cursors->resize(max_levels);
  // (1) L0 has too many files: all of them (older L0 files must move together with newer
  // ones that overlap them) into L1.
  if (!v.levels.empty() &&
      static_cast<int>(v.levels[0].size()) >= std::max(options.l1_file_count_trigger, 1)) {
    return WithLowerLevel(v, options, 0, v.levels[0], "l0-file-count");
  }
  // (2) The level most over its target.
  std::vector<uint64_t> targets = LevelTargets(v, options);
  int best = -1;
  double best_score = 1.0;
  for (int l = 1; l < static_cast<int>(v.levels.size()) && l < max_levels - 1; ++l) {
    double score = static_cast<double>(LevelBytes(v.levels[l])) / static_cast<double>(targets[l]);
    if (score >= best_score) {
      best_score = score;
      best = l;
    }
  }
  if (best >= 1) {
    // Round robin: the first file after the key compacted last time at this level.
    const auto& files = v.levels[best];
    const std::string& cursor = (*cursors)[best];
    size_t pick = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      if (cursor.empty() || ExtractUserKey(files[i]->smallest) > Slice(cursor)) {
        pick = i;
        break;
      }
    }
    Slice largest = ExtractUserKey(files[pick]->largest);
    (*cursors)[best].assign(largest.data(), largest.size());
    return WithLowerLevel(v, options, best, {files[pick]}, "level-size");
  }
  // (3) Tombstone density.
  if (options.tombstone_density_trigger > 0) {
    for (int l = 0; l < static_cast<int>(v.levels.size()) && l < max_levels; ++l) {
      for (const auto& f : v.levels[l]) {
        if (f->num_entries < std::max<uint64_t>(options.tombstone_density_min_entries, 1)) continue;
        double density = static_cast<double>(f->num_deletions) / static_cast<double>(f->num_entries);
        if (density < options.tombstone_density_trigger) continue;
        if (l == 0) return WithLowerLevel(v, options, 0, v.levels[0], "tombstone-density");
        return WithLowerLevel(v, options, l, {f}, "tombstone-density");
      }
    }
  }
  return std::nullopt;
}

std::optional<CompactionInputs> PickRangeCompaction(const Version& v, const ColumnFamilyOptions& options,
                                                    int level, Slice start, Slice limit) {
  if (level >= static_cast<int>(v.levels.size())) return std::nullopt;
  std::vector<std::shared_ptr<const FileMetaData>> upper;
  if (level == 0) {
    // All of L0 moves together (see PickCompaction), if any of it is in the range.
    bool any = false;
    for (const auto& f : v.levels[0]) {
      any |=
          !(ExtractUserKey(f->largest) < start || (!limit.empty() && ExtractUserKey(f->smallest) >= limit));
    }
    if (!any) return std::nullopt;
    upper = v.levels[0];
  } else {
    for (const auto& f : v.levels[level]) {
      if (ExtractUserKey(f->largest) < start) continue;
      if (!limit.empty() && ExtractUserKey(f->smallest) >= limit) continue;
      upper.push_back(f);
    }
    if (upper.empty()) return std::nullopt;
  }
  return WithLowerLevel(v, options, level, std::move(upper), "manual");
}

}  // namespace tidesdb
