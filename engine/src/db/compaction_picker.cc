#include "db/compaction_picker.h"

#include <algorithm>
#include <map>

#include "sst/value_log.h"

namespace tidesdb {

uint64_t LevelBytes(const std::vector<std::shared_ptr<const FileMetaData>>& files) {
  uint64_t n = 0;
  for (const auto& f : files) n += f->file_size;
  return n;
}

int L0StallFiles(const ColumnFamilyOptions& options) { return std::max(options.l0_queue_stall_threshold, 2); }

int L0SlowdownFiles(const ColumnFamilyOptions& options) {
  return std::max(L0StallFiles(options) * 3 / 4, std::max(options.l1_file_count_trigger, 1) + 1);
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

double ValueLogUsage::GarbageRatio() const {
  if (file_size <= kValueLogHeaderSize) return 1.0;
  const uint64_t records = file_size - kValueLogHeaderSize;
  return 1.0 - static_cast<double>(std::min(live_bytes, records)) / static_cast<double>(records);
}

bool ValueLogUsages(const Version& v, std::vector<ValueLogUsage>* out) {
  out->clear();
  std::map<uint64_t, uint64_t> live;
  for (const auto& level : v.levels) {
    for (const auto& f : level) {
      if (!f->value_log_refs_known) return false;
      for (const auto& ref : f->value_log_refs) live[ref.file_number] += ref.bytes;
    }
  }
  for (const auto& vl : v.value_logs) {
    auto it = live.find(vl->file_number);
    out->push_back(ValueLogUsage{vl->file_number, vl->file_size, it == live.end() ? 0 : it->second});
  }
  return true;
}

namespace {
// Value logs with live bytes left, not in skip, whose garbage ratio reaches the threshold
// (any_garbage: is above 0), ascending. Empty when the threshold turns relocation off.
std::vector<uint64_t> LogsToRelocate(const Version& v, const ColumnFamilyOptions& options,
                                     const std::set<uint64_t>& skip, bool any_garbage) {
  std::vector<uint64_t> out;
  const double threshold = options.value_log_gc_threshold;
  std::vector<ValueLogUsage> usages;
  if (!(threshold > 0 && threshold < 1) || !ValueLogUsages(v, &usages)) return out;
  for (const auto& u : usages) {
    const double ratio = u.GarbageRatio();
    if (u.live_bytes > 0 && (any_garbage ? ratio > 0 : ratio >= threshold) && skip.count(u.file_number) == 0)
      out.push_back(u.file_number);
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

std::vector<uint64_t> ValueLogsToCollect(const Version& v, const ColumnFamilyOptions& options,
                                         const std::set<uint64_t>& skip) {
  return LogsToRelocate(v, options, skip, false);
}

std::vector<uint64_t> DeadValueLogs(const Version& v) {
  std::vector<uint64_t> out;
  std::vector<ValueLogUsage> usages;
  if (!ValueLogUsages(v, &usages)) return out;
  for (const auto& u : usages) {
    if (u.live_bytes == 0) out.push_back(u.file_number);
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
                                std::vector<std::shared_ptr<const FileMetaData>> upper, const char* reason,
                                const std::vector<uint64_t>& relocate) {
  CompactionInputs c;
  c.level = level;
  c.output_level = std::min(level + 1, std::max(options.max_levels, 2) - 1);
  c.reason = reason;
  c.relocate = relocate;
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

// The value log to collect first (the highest garbage ratio) and the file holding the most
// of its live bytes, with that file's level; nothing if no value log is due.
std::optional<CompactionInputs> PickValueLogGc(const Version& v, const ColumnFamilyOptions& options,
                                               const std::vector<uint64_t>& relocate) {
  if (relocate.empty()) return std::nullopt;
  std::vector<ValueLogUsage> usages;
  ValueLogUsages(v, &usages);
  uint64_t worst = 0;
  double worst_ratio = -1;
  for (const auto& u : usages) {
    if (std::binary_search(relocate.begin(), relocate.end(), u.file_number) &&
        u.GarbageRatio() > worst_ratio) {
      worst_ratio = u.GarbageRatio();
      worst = u.file_number;
    }
  }
  int best_level = -1;
  std::shared_ptr<const FileMetaData> best;
  uint64_t best_bytes = 0;
  for (int l = 0; l < static_cast<int>(v.levels.size()); ++l) {
    for (const auto& f : v.levels[l]) {
      for (const auto& ref : f->value_log_refs) {
        if (ref.file_number == worst && ref.bytes > best_bytes) {
          best_bytes = ref.bytes;
          best = f;
          best_level = l;
        }
      }
    }
  }
  if (best == nullptr) return std::nullopt;
  CompactionInputs c;
  if (best_level == 0) {
    // L0 files move together (see PickCompaction).
    c = WithLowerLevel(v, options, 0, v.levels[0], "value-log-gc", relocate);
  } else {
    // Rewrite the one file in place: its level stays sorted and disjoint.
    c.level = best_level;
    c.output_level = best_level;
    c.upper = {best};
    c.reason = "value-log-gc";
    c.relocate = relocate;
  }
  return c;
}

// A size-driven pick, done as a trivial move when it may be.
CompactionInputs SizeCompaction(const Version& v, const ColumnFamilyOptions& options, int level,
                                std::vector<std::shared_ptr<const FileMetaData>> upper, const char* reason,
                                const std::vector<uint64_t>& relocate) {
  CompactionInputs c = WithLowerLevel(v, options, level, std::move(upper), reason, relocate);
  c.move = CanMoveWithoutRewrite(v, options, c);
  return c;
}

// Every input file of c, both levels.
std::vector<std::shared_ptr<const FileMetaData>> AllInputs(const CompactionInputs& c) {
  std::vector<std::shared_ptr<const FileMetaData>> inputs = c.upper;
  inputs.insert(inputs.end(), c.lower.begin(), c.lower.end());
  return inputs;
}

bool RangesOverlap(const std::string& a_smallest, const std::string& a_largest, const std::string& b_smallest,
                   const std::string& b_largest) {
  return !(Slice(a_largest) < Slice(b_smallest) || Slice(b_largest) < Slice(a_smallest));
}

}  // namespace

bool RunningCompactions::Admits(const CompactionInputs& c) const {
  if (jobs_.empty()) return true;
  const std::vector<std::shared_ptr<const FileMetaData>> inputs = AllInputs(c);
  std::string smallest, largest, upper_smallest, upper_largest;
  KeyRange(inputs, &smallest, &largest);
  KeyRange(c.upper, &upper_smallest, &upper_largest);
  for (const Job& j : jobs_) {
    if (c.level == 0 && j.level == 0) return false;
    for (const auto& f : inputs) {
      if (j.files.count(f->file_number) != 0) return false;
    }
    // Two compactions writing overlapping ranges of one level would leave it overlapping.
    if (j.output_level == c.output_level && RangesOverlap(smallest, largest, j.smallest, j.largest))
      return false;
    // Nor may one read a range of a level that another one is writing. (Implied by the
    // file check while the picker takes every overlapping file of the lower level; kept
    // so that the rule does not rest on that.)
    if (j.output_level == c.level && RangesOverlap(upper_smallest, upper_largest, j.smallest, j.largest))
      return false;
  }
  return true;
}

bool RunningCompactions::IsInput(uint64_t number) const {
  for (const Job& j : jobs_) {
    if (j.files.count(number) != 0) return true;
  }
  return false;
}

uint64_t RunningCompactions::Add(const CompactionInputs& c) {
  Job j;
  j.id = next_id_++;
  j.level = c.level;
  j.output_level = c.output_level;
  const std::vector<std::shared_ptr<const FileMetaData>> inputs = AllInputs(c);
  for (const auto& f : inputs) j.files.insert(f->file_number);
  KeyRange(inputs, &j.smallest, &j.largest);
  jobs_.push_back(std::move(j));
  return jobs_.back().id;
}

void RunningCompactions::Remove(uint64_t id) {
  std::erase_if(jobs_, [id](const Job& j) { return j.id == id; });
}

bool CanMoveWithoutRewrite(const Version& v, const ColumnFamilyOptions& options, const CompactionInputs& c) {
  if (c.output_level == c.level || !c.lower.empty() || c.upper.empty()) return false;
  // Small L0 files (a CF that gets a small share of a unified memtable) are merged as before
  // rather than each becoming a level-1 file.
  if (c.level == 0 && LevelBytes(c.upper) < options.write_buffer_size / 2) return false;
  std::vector<std::shared_ptr<const FileMetaData>> files = c.upper;
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return CompareInternalKey(a->smallest, b->smallest) < 0; });
  for (size_t i = 0; i < files.size(); ++i) {
    const FileMetaData& f = *files[i];
    // Disjoint by user key: two files holding versions of one key may not share a level >= 1.
    if (i > 0 && !(ExtractUserKey(files[i - 1]->largest) < ExtractUserKey(f.smallest))) return false;
    if (!f.value_log_refs_known) return false;  // a rewrite records them
    for (const auto& ref : f.value_log_refs) {
      if (std::binary_search(c.relocate.begin(), c.relocate.end(), ref.file_number)) return false;
    }
    if (f.num_deletions > 0 || options.default_ttl_seconds > 0) {
      bool deeper = false;
      for (int l = c.output_level + 1; l < static_cast<int>(v.levels.size()) && !deeper; ++l) {
        deeper = !OverlappingFiles(v, l, ExtractUserKey(f.smallest), ExtractUserKey(f.largest)).empty();
      }
      if (!deeper) return false;  // at the bottom, a rewrite drops tombstones and expired entries
    }
  }
  return true;
}

std::optional<CompactionInputs> PickCompaction(const Version& v, const ColumnFamilyOptions& options,
                                               std::vector<std::string>* cursors,
                                               const std::set<uint64_t>& gc_skip,
                                               const RunningCompactions* running) {
  const int max_levels = std::max(options.max_levels, 2);
  const std::vector<uint64_t> relocate = ValueLogsToCollect(v, options, gc_skip);
  if (cursors->size() < static_cast<size_t>(max_levels)) cursors->resize(max_levels);
  auto admitted = [running](const CompactionInputs& c) { return running == nullptr || running->Admits(c); };
  // A second compaction of the CF only once its L0 would slow writes down (header comment,
  // "Parallel compactions").
  const int l0_files = v.levels.empty() ? 0 : static_cast<int>(v.levels[0].size());
  if (running != nullptr && !running->empty() && l0_files < L0SlowdownFiles(options)) return std::nullopt;
  // (1) L0 has too many files: all of them (older L0 files must move together with newer
  // ones that overlap them) into L1.
  if (l0_files >= std::max(options.l1_file_count_trigger, 1)) {
    CompactionInputs c = SizeCompaction(v, options, 0, v.levels[0], "l0-file-count", relocate);
    if (admitted(c)) return c;
  }
  // (1b) L0 small beside the L1 files it overlaps (l0_compaction_size_ratio): merged at
  // once, while the rewrite costs at most that ratio times the L0 bytes.
  if (l0_files > 0 && options.l0_compaction_size_ratio > 0) {
    CompactionInputs c = SizeCompaction(v, options, 0, v.levels[0], "l0-size-ratio", relocate);
    const uint64_t ratio = static_cast<uint64_t>(options.l0_compaction_size_ratio);
    if (LevelBytes(c.upper) * ratio >= LevelBytes(c.lower) && admitted(c)) return c;
  }
  // (2) The levels over their targets, the one most over first (the deeper one of equals).
  // Files that running compactions are taking out of a level do not count towards its size:
  // a second compaction of a level is picked only if the level stays over its target
  // without them (not for a surplus the first one is already removing).
  std::vector<uint64_t> targets = LevelTargets(v, options);
  std::vector<std::pair<double, int>> over;  // (score, level)
  for (int l = 1; l < static_cast<int>(v.levels.size()) && l < max_levels - 1; ++l) {
    uint64_t bytes = 0;
    for (const auto& f : v.levels[l]) {
      if (running == nullptr || !running->IsInput(f->file_number)) bytes += f->file_size;
    }
    double score = static_cast<double>(bytes) / static_cast<double>(targets[l]);
    if (score >= 1.0) over.emplace_back(score, l);
  }
  std::sort(over.begin(), over.end(), [](const auto& a, const auto& b) { return a > b; });
  for (const auto& [score, level] : over) {
    // Round robin: the first file after the key compacted last time at this level, else
    // the next one that may run beside the running compactions.
    const auto& files = v.levels[level];
    const std::string& cursor = (*cursors)[level];
    size_t first = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      if (cursor.empty() || ExtractUserKey(files[i]->smallest) > Slice(cursor)) {
        first = i;
        break;
      }
    }
    for (size_t n = 0; n < files.size(); ++n) {
      const auto& f = files[(first + n) % files.size()];
      CompactionInputs c = SizeCompaction(v, options, level, {f}, "level-size", relocate);
      if (!admitted(c)) continue;
      Slice largest = ExtractUserKey(f->largest);
      (*cursors)[level].assign(largest.data(), largest.size());
      return c;
    }
  }
  // (3) Value-log garbage.
  if (auto gc = PickValueLogGc(v, options, relocate); gc && admitted(*gc)) return gc;
  // (4) Tombstone density.
  if (options.tombstone_density_trigger > 0) {
    for (int l = 0; l < static_cast<int>(v.levels.size()) && l < max_levels; ++l) {
      for (const auto& f : v.levels[l]) {
        if (f->num_entries < std::max<uint64_t>(options.tombstone_density_min_entries, 1)) continue;
        double density = static_cast<double>(f->num_deletions) / static_cast<double>(f->num_entries);
        if (density < options.tombstone_density_trigger) continue;
        CompactionInputs c = l == 0
                                 ? WithLowerLevel(v, options, 0, v.levels[0], "tombstone-density", relocate)
                                 : WithLowerLevel(v, options, l, {f}, "tombstone-density", relocate);
        if (admitted(c)) return c;
        if (l == 0) break;  // the same pick for every file of L0
      }
    }
  }
  return std::nullopt;
}

std::optional<CompactionInputs> PickRangeCompaction(const Version& v, const ColumnFamilyOptions& options,
                                                    int level, Slice start, Slice limit,
                                                    const std::set<uint64_t>& gc_skip) {
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
  return WithLowerLevel(v, options, level, std::move(upper), "manual",
                        ValueLogsToCollect(v, options, gc_skip));
}

std::optional<CompactionInputs> PickValueLogCleanup(const Version& v, const ColumnFamilyOptions& options,
                                                    Slice start, Slice limit,
                                                    const std::set<uint64_t>& gc_skip) {
  const std::vector<uint64_t> with_garbage = LogsToRelocate(v, options, gc_skip, true);
  if (with_garbage.empty()) return std::nullopt;
  int deepest = -1;
  for (int l = 0; l < static_cast<int>(v.levels.size()); ++l) {
    if (!v.levels[l].empty()) deepest = l;
  }
  if (deepest < 1) return std::nullopt;  // L0 files overlap: they are not rewritten in place
  auto in_range = [&](const FileMetaData& f) {
    return !(ExtractUserKey(f.largest) < start) && (limit.empty() || ExtractUserKey(f.smallest) < limit);
  };
  std::set<uint64_t> logs(with_garbage.begin(), with_garbage.end());
  // A log still referenced from outside the span would keep its file: relocating its values
  // would only copy them.
  for (int l = 0; l < static_cast<int>(v.levels.size()); ++l) {
    for (const auto& f : v.levels[l]) {
      if (l == deepest && in_range(*f)) continue;
      for (const auto& ref : f->value_log_refs) logs.erase(ref.file_number);
    }
  }
  if (logs.empty()) return std::nullopt;
  const auto& files = v.levels[deepest];
  size_t first = files.size(), last = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!in_range(*files[i])) continue;
    for (const auto& ref : files[i]->value_log_refs) {
      if (logs.count(ref.file_number) == 0) continue;
      first = std::min(first, i);
      last = i;
      break;
    }
  }
  if (first == files.size()) return std::nullopt;
  CompactionInputs c;
  c.level = deepest;
  c.output_level = deepest;  // in place: the span's key range stays the span's
  c.upper.assign(files.begin() + static_cast<std::ptrdiff_t>(first),
                 files.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  c.reason = "manual value-log cleanup";
  c.relocate.assign(logs.begin(), logs.end());  // ascending
  return c;
}

}  // namespace tidesdb
