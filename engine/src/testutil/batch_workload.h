// A multi-column-family batch workload and its checker, for crash and fault tests.
// Header-only: it uses the public DB API, which tidesdb_testutil does not link.
//
// Batch `id` (MakeId: round, writer, n = the writer's n-th batch) writes atomically:
//   CF "default":  put MarkerKey(id) = ""       never deleted: the batch is applied
//   CFs a, b, c:   put Key(id) = Value(id)      same value in all three
//   CFs a, b, c:   delete Key(id of the same writer's batch n - kDeleteDistance)
// A writer issues its batches one after another, so a delete is submitted only after the
// put it removes was acknowledged. Every fourth value or so is >= 1 KiB (value log).
//
// CheckBatches reads the whole database and reports any batch that is not all-or-nothing:
// a key without its marker, a marker whose keys disagree across CFs, a key that should
// have been deleted (or should not), or a wrong value.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tidesdb/db.h"
#include "tidesdb/write_batch.h"

namespace tidesdb::test {

class BatchWorkload {
 public:
  static constexpr uint64_t kDeleteDistance = 8;
  static constexpr const char* kDataCfs[3] = {"a", "b", "c"};

  static uint64_t MakeId(uint64_t round, uint64_t writer, uint64_t n) {
    return (round << 36) | (n << 4) | writer;
  }
  static uint64_t WriterOf(uint64_t id) { return id & 15; }
  static uint64_t NOf(uint64_t id) { return (id >> 4) & ((uint64_t{1} << 32) - 1); }
  // The batch that deletes id's key.
  static uint64_t DeleterOf(uint64_t id) { return id + (kDeleteDistance << 4); }

  static std::string Key(uint64_t id) { return Hex('k', id); }
  static std::string MarkerKey(uint64_t id) { return Hex('m', id); }
  static bool ParseKey(const std::string& key, char prefix, uint64_t* id) {
    if (key.size() != 17 || key[0] != prefix) return false;
    uint64_t v = 0;
    for (size_t i = 1; i < 17; ++i) {
      char c = key[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = (v << 4) | static_cast<uint64_t>(d);
    }
    *id = v;
    return true;
  }

  // Deterministic and incompressible; about one in four is 1200..1799 bytes.
  static std::string Value(uint64_t id) {
    uint64_t state = id * 0x9e3779b97f4a7c15ull + 1;
    const uint64_t h = Mix(&state);
    const size_t len = (h & 3) == 0 ? 1200 + (h >> 8) % 600 : 40 + (h >> 8) % 160;
    std::string v;
    v.reserve(len + 8);
    while (v.size() < len) {
      uint64_t r = Mix(&state);
      v.append(reinterpret_cast<const char*>(&r), 8);
    }
    v.resize(len);
    return v;
  }

  // cfs: {default, a, b, c} (OpenColumnFamilies).
  static void Build(uint64_t id, const std::vector<ColumnFamilyHandle*>& cfs, WriteBatch* batch) {
    batch->Clear();
    batch->Put(cfs[0], MarkerKey(id), "");
    const std::string key = Key(id), value = Value(id);
    for (int i = 1; i <= 3; ++i) batch->Put(cfs[i], key, value);
    if (NOf(id) >= kDeleteDistance) {
      const std::string old = Key(id - (kDeleteDistance << 4));
      for (int i = 1; i <= 3; ++i) batch->Delete(cfs[i], old);
    }
  }

  // Fills *cfs with {default, a, b, c}, creating the data CFs that do not exist.
  static Status OpenColumnFamilies(DB* db, std::vector<ColumnFamilyHandle*>* cfs) {
    cfs->assign(1, db->DefaultColumnFamily());
    for (const char* name : kDataCfs) {
      ColumnFamilyHandle* h = db->GetColumnFamily(name);
      if (h == nullptr) {
        Status s = db->CreateColumnFamily(ColumnFamilyOptions(), name, &h);
        if (!s.ok()) return s;
      }
      cfs->push_back(h);
    }
    return Status::OK();
  }

 private:
  static std::string Hex(char prefix, uint64_t id) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%c%016llx", prefix, static_cast<unsigned long long>(id));
    return buf;
  }
  static uint64_t Mix(uint64_t* state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

struct BatchState {
  std::set<uint64_t> applied;       // batches whose marker is present
  std::vector<std::string> errors;  // violations (the first few)
  size_t error_count = 0;
  bool ok() const { return error_count == 0; }
  std::string ErrorText() const {
    std::string out = std::to_string(error_count) + " violation(s):";
    for (const auto& e : errors) out += "\n  " + e;
    return out;
  }
  void Error(std::string e) {
    if (errors.size() < 10) errors.push_back(std::move(e));
    ++error_count;
  }
};

// Reads every CF in full (iterators, then point reads of what the iterators did not show)
// and checks the batch invariants above. Read errors are violations too.
inline BatchState CheckBatches(DB* db, const std::vector<ColumnFamilyHandle*>& cfs) {
  BatchState st;
  const Snapshot* snap = db->GetSnapshot();
  ReadOptions ro;
  ro.snapshot = snap;
  {
    auto it = db->NewIterator(ro, cfs[0]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      uint64_t id;
      if (!BatchWorkload::ParseKey(std::string(it->key()), 'm', &id)) {
        st.Error("unexpected key in default CF");
        continue;
      }
      st.applied.insert(id);
    }
    if (!it->status().ok()) st.Error("scan of default CF: " + it->status().ToString());
  }
  std::vector<std::unordered_map<uint64_t, bool>> present(4);  // id -> value is right
  for (int c = 1; c <= 3; ++c) {
    auto it = db->NewIterator(ro, cfs[c]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      uint64_t id;
      if (!BatchWorkload::ParseKey(std::string(it->key()), 'k', &id)) {
        st.Error("unexpected key in CF " + std::to_string(c));
        continue;
      }
      present[c][id] = it->value() == Slice(BatchWorkload::Value(id));
    }
    if (!it->status().ok()) st.Error("scan of CF " + std::to_string(c) + ": " + it->status().ToString());
  }
  auto hex = [](uint64_t id) { return BatchWorkload::Key(id).substr(1); };
  for (int c = 1; c <= 3; ++c) {
    for (const auto& [id, right] : present[c]) {
      if (st.applied.count(id) == 0) st.Error("batch " + hex(id) + ": key visible without its marker");
      if (!right) st.Error("batch " + hex(id) + ": wrong value in CF " + std::to_string(c));
    }
  }
  for (uint64_t id : st.applied) {
    const bool expect = st.applied.count(BatchWorkload::DeleterOf(id)) == 0;
    for (int c = 1; c <= 3; ++c) {
      const bool is = present[c].count(id) != 0;
      if (is != expect) {
        st.Error("batch " + hex(id) + ": key in CF " + std::to_string(c) + (is ? " present" : " absent") +
                 " but the batch that deletes it is " + (expect ? "absent" : "present"));
      }
      // Point reads must agree with the scan.
      std::string v;
      Status s = db->Get(ro, cfs[c], BatchWorkload::Key(id), &v);
      if (!(s.ok() == is && (s.ok() || s.IsNotFound()))) {
        st.Error("batch " + hex(id) + ": Get in CF " + std::to_string(c) + " says " + s.ToString() +
                 " but the scan says " + (is ? "present" : "absent"));
      }
    }
  }
  db->ReleaseSnapshot(snap);
  return st;
}

// Records acknowledgements in order, and for each submitted batch how many batches had
// been acknowledged when it was submitted. Those all precede it in commit order, so after
// any crash the applied set, a prefix of the commit order, must hold them whenever it
// holds the later batch.
class AckLog {
 public:
  void Submitted(uint64_t id) {
    std::lock_guard<std::mutex> l(mu_);
    watermark_[id] = acked_.size();
  }
  void Acked(uint64_t id) {
    std::lock_guard<std::mutex> l(mu_);
    acked_.push_back(id);
  }
  std::vector<uint64_t> acked() const {
    std::lock_guard<std::mutex> l(mu_);
    return acked_;
  }
  // "" if the applied set is consistent with a prefix of the commit order, else the first
  // counterexample.
  std::string CheckPrefix(const std::set<uint64_t>& applied) const {
    std::lock_guard<std::mutex> l(mu_);
    size_t first_missing = acked_.size();
    for (size_t i = 0; i < acked_.size(); ++i) {
      if (applied.count(acked_[i]) == 0) {
        first_missing = i;
        break;
      }
    }
    for (const auto& [id, mark] : watermark_) {
      if (mark > first_missing && applied.count(id) != 0) {
        return "batch " + BatchWorkload::Key(id).substr(1) + " survived but batch " +
               BatchWorkload::Key(acked_[first_missing]).substr(1) +
               ", acknowledged before it was submitted, did not";
      }
    }
    return "";
  }
  // Acknowledged batches missing from applied (at most max_list listed).
  std::string MissingAcked(const std::set<uint64_t>& applied, size_t max_list = 5) const {
    std::lock_guard<std::mutex> l(mu_);
    size_t missing = 0;
    std::string list;
    for (uint64_t id : acked_) {
      if (applied.count(id) != 0) continue;
      if (missing++ < max_list) list += " " + BatchWorkload::Key(id).substr(1);
    }
    return missing == 0 ? "" : std::to_string(missing) + " acknowledged batch(es) missing:" + list;
  }

 private:
  mutable std::mutex mu_;
  std::vector<uint64_t> acked_;
  std::map<uint64_t, size_t> watermark_;
};

}  // namespace tidesdb::test
