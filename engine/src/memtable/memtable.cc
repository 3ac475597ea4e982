#include "memtable/memtable.h"

#include <cassert>
#include <cstring>
#include <new>
#include <optional>

#include <xxhash.h>

#include "util/coding.h"

namespace tidesdb {

namespace {

constexpr size_t kCfIdSize = 4;
constexpr size_t kTrailerSize = 8;
// Sorts before every real trailer (which carry a sequence <= kMaxSequence and a valid
// type), so (cf, "", kFirstTrailer) is below every entry of cf.
constexpr uint64_t kFirstTrailer = UINT64_MAX;

// Copies s to dst and returns the byte after it. An empty Slice may have a null data()
// that memcpy must not see, even for zero bytes.
inline char* CopyBytes(char* dst, Slice s) {
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  return dst + s.size();
}

// Entries are written by Add only, so they are well formed; the one-byte case is the
// common one for key lengths and worth keeping out of the general decoder.
inline const char* DecodeLength(const char* p, uint32_t* length) {
  auto first = static_cast<unsigned char>(*p);
  if (first < 0x80) {
    *length = first;
    return p + 1;
  }
  return GetVarint32Ptr(p, p + 5, length);
}

// The cf key (cf id + internal key) of an entry or of a lookup key.
inline Slice CfKeyOf(const char* entry, const char** after = nullptr) {
  uint32_t length;
  const char* p = DecodeLength(entry, &length);
  if (after != nullptr) *after = p + length;
  return Slice(p, length);
}

struct DecodedEntry {
  uint32_t cf_id;
  Slice internal_key;
  Slice value;
};

inline DecodedEntry DecodeEntry(const char* entry) {
  const char* p;
  Slice cf_key = CfKeyOf(entry, &p);
  uint32_t value_length;
  p = DecodeLength(p, &value_length);
  return DecodedEntry{DecodeBigEndian32(cf_key.data()), cf_key.substr(kCfIdSize), Slice(p, value_length)};
}

// A length-prefixed cf key to search for: the entry format without the value, which the
// comparator never reads. Short keys stay on the stack.
class LookupKey {
 public:
  LookupKey(uint32_t cf_id, Slice user_key, uint64_t trailer) {
    char* p = Start(user_key.size() + kTrailerSize, cf_id);
    EncodeFixed64(CopyBytes(p, user_key), trailer);
  }
  LookupKey(uint32_t cf_id, Slice internal_key) {
    char* p = Start(internal_key.size(), cf_id);
    CopyBytes(p, internal_key);
  }
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;

  const char* entry() const { return buf_; }

 private:
  // Writes the length and the cf id; returns where the internal key goes.
  char* Start(size_t internal_key_size, uint32_t cf_id) {
    size_t cf_key_size = kCfIdSize + internal_key_size;
    size_t needed = 5 + cf_key_size;
    if (needed > sizeof(space_)) {
      heap_ = std::make_unique<char[]>(needed);
      buf_ = heap_.get();
    }
    char* p = EncodeVarint32(buf_, static_cast<uint32_t>(cf_key_size));
    EncodeBigEndian32(p, cf_id);
    return p + kCfIdSize;
  }

  char space_[200];
  std::unique_ptr<char[]> heap_;
  char* buf_ = space_;
};

}  // namespace

int MemTable::EntryComparator::operator()(const char* a, const char* b) const {
  Slice ka = CfKeyOf(a);
  Slice kb = CfKeyOf(b);
  int r = std::memcmp(ka.data(), kb.data(), kCfIdSize);
  if (r != 0) return r;
  return CompareInternalKey(ka.substr(kCfIdSize), kb.substr(kCfIdSize));
}

int MemTable::CfStatsComparator::operator()(const char* a, const char* b) const {
  uint32_t ca;
  uint32_t cb;
  std::memcpy(&ca, a, sizeof(ca));
  std::memcpy(&cb, b, sizeof(cb));
  return ca < cb ? -1 : (ca > cb ? 1 : 0);
}

// Wraps a skip-list iterator and keeps it inside one CF: every move ends with Settle(),
// which turns "positioned on another CF's entry" into "invalid".
class MemTable::Iterator final : public InternalIterator {
 public:
  Iterator(const Table* table, uint32_t cf_id) : iter_(table), cf_id_(cf_id) {}

  bool Valid() const override { return valid_; }

  void SeekToFirst() override {
    LookupKey first(cf_id_, Slice(), kFirstTrailer);
    iter_.Seek(first.entry());
    Settle();
  }

  void SeekToLast() override {
    // The last entry of this CF is the one just before the first entry of any later CF;
    // for the largest id it is the last entry of the list.
    if (cf_id_ == UINT32_MAX) {
      iter_.SeekToLast();
    } else {
      LookupKey next_cf(cf_id_ + 1, Slice(), kFirstTrailer);
      iter_.Seek(next_cf.entry());
      if (iter_.Valid()) {
        iter_.Prev();
      } else {
        iter_.SeekToLast();
      }
    }
    Settle();
  }

  void Seek(Slice target) override {
    if (target.size() < kTrailerSize) {
      LookupKey k(cf_id_, target, kFirstTrailer);
      iter_.Seek(k.entry());
    } else {
      LookupKey k(cf_id_, target);
      iter_.Seek(k.entry());
    }
    Settle();
  }

  void SeekForPrev(Slice target) override {
    if (target.size() < kTrailerSize) {
      LookupKey k(cf_id_, target, 0);
      iter_.SeekForPrev(k.entry());
    } else {
      LookupKey k(cf_id_, target);
      iter_.SeekForPrev(k.entry());
    }
    Settle();
  }

  void Next() override {
    assert(valid_);
    iter_.Next();
    Settle();
  }

  void Prev() override {
    assert(valid_);
    iter_.Prev();
    Settle();
  }

  Slice key() const override {
    assert(valid_);
    return key_;
  }
  Slice value() const override {
    assert(valid_);
    return value_;
  }
  Status status() const override { return Status::OK(); }

 private:
  void Settle() {
    valid_ = false;
    if (!iter_.Valid()) return;
    DecodedEntry e = DecodeEntry(iter_.key());
    if (e.cf_id != cf_id_) return;
    valid_ = true;
    key_ = e.internal_key;
    value_ = e.value;
  }

  Table::Iterator iter_;
  const uint32_t cf_id_;
  bool valid_ = false;
  Slice key_;
  Slice value_;
};

MemTable::MemTable(size_t arena_block_size, size_t bloom_bytes)
    : bloom_lines_((bloom_bytes + kBloomLineBytes - 1) / kBloomLineBytes),
      bloom_(bloom_lines_ != 0 ? std::make_unique<std::atomic<uint64_t>[]>(bloom_lines_ * kBloomLineWords)
                               : nullptr),
      arena_(arena_block_size),
      table_(EntryComparator(), &arena_),
      cf_stats_(CfStatsComparator(), &arena_) {}

uint64_t MemTable::BloomHash(uint32_t cf_id, Slice user_key) {
  return XXH3_64bits_withSeed(user_key.data(), user_key.size(), cf_id);
}

// The high 32 bits pick one 64-bit word; four 6-bit fields of the low bits pick a bit each
// in it. One word, not a cache line, so that an insert is one atomic OR (skipped when its
// bits are set already) and a lookup one load: four ORs into a 64-byte line cost 5 % of a
// sequential load's CPU. False positives at 10 bits a key: about 1.8 % (1.3 % with lines).
uint64_t MemTable::BloomMask(uint64_t h) {
  uint64_t mask = 0;
  for (int i = 0; i < 4; ++i) mask |= uint64_t{1} << ((h >> (6 * i)) & 63);
  return mask;
}

void MemTable::BloomPrefetch(uint64_t h) const {
  if (bloom_lines_ != 0) __builtin_prefetch(&bloom_[(h >> 32) * (bloom_lines_ * kBloomLineWords) >> 32], 1);
}

void MemTable::BloomAdd(uint64_t h) {
  if (bloom_lines_ == 0) return;
  std::atomic<uint64_t>& word = bloom_[(h >> 32) * (bloom_lines_ * kBloomLineWords) >> 32];
  const uint64_t mask = BloomMask(h);
  // A set bit is never cleared, so bits seen set here stay visible to every later reader.
  if ((word.load(std::memory_order_relaxed) & mask) != mask) word.fetch_or(mask, std::memory_order_relaxed);
}

bool MemTable::BloomMayContain(uint64_t h) const {
  if (bloom_lines_ == 0) return true;
  const std::atomic<uint64_t>& word = bloom_[(h >> 32) * (bloom_lines_ * kBloomLineWords) >> 32];
  const uint64_t mask = BloomMask(h);
  return (word.load(std::memory_order_relaxed) & mask) == mask;
}

void MemTable::Add(uint32_t cf_id, SequenceNumber seq, ValueType type, Slice user_key, Slice value) {
  assert(seq <= kMaxSequence);
  assert(user_key.size() < UINT32_MAX - 16 && value.size() < UINT32_MAX - 16);
  // The filter's word is a cache miss more often than not: start fetching it now, so that it
  // arrives while the entry is encoded.
  const uint64_t bloom_hash = BloomHash(cf_id, user_key);
  BloomPrefetch(bloom_hash);
  CfStats* stats = FindOrAddCfStats(cf_id);

  const size_t cf_key_size = kCfIdSize + user_key.size() + kTrailerSize;
  const size_t entry_size =
      VarintLength(cf_key_size) + cf_key_size + VarintLength(value.size()) + value.size();
  char* entry = table_.AllocateEntry(entry_size);
  char* p = EncodeVarint32(entry, static_cast<uint32_t>(cf_key_size));
  EncodeBigEndian32(p, cf_id);
  p += kCfIdSize;
  p = CopyBytes(p, user_key);
  EncodeFixed64(p, PackSequenceAndType(seq, type));
  p += kTrailerSize;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  p = CopyBytes(p, value);
  assert(static_cast<size_t>(p - entry) == entry_size);

  BloomAdd(bloom_hash);
  if (!table_.Insert(entry)) return;

  // Counters follow the insert, so a CF never shows up in ColumnFamilies() before one of
  // its entries is visible.
  stats->entries.fetch_add(1, std::memory_order_relaxed);
  if (type == ValueType::kDeletion) stats->deletions.fetch_add(1, std::memory_order_relaxed);
  num_entries_.fetch_add(1, std::memory_order_relaxed);
  SequenceNumber smallest = smallest_sequence_.load(std::memory_order_relaxed);
  while (seq < smallest &&
         !smallest_sequence_.compare_exchange_weak(smallest, seq, std::memory_order_relaxed)) {
  }
  SequenceNumber largest = largest_sequence_.load(std::memory_order_relaxed);
  while (seq > largest && !largest_sequence_.compare_exchange_weak(largest, seq, std::memory_order_relaxed)) {
  }
}

bool MemTable::Get(uint32_t cf_id, Slice user_key, SequenceNumber snapshot, ValueType* type, Slice* value,
                   SequenceNumber* seq) const {
  if (snapshot > kMaxSequence) snapshot = kMaxSequence;
  if (!BloomMayContain(BloomHash(cf_id, user_key))) return false;
  // (user_key, snapshot, kValueTypeForSeek) sorts just before every version of user_key
  // with sequence <= snapshot, newest first.
  LookupKey lookup(cf_id, user_key, PackSequenceAndType(snapshot, kValueTypeForSeek));
  Table::Iterator iter(&table_);
  iter.Seek(lookup.entry());
  if (!iter.Valid()) return false;
  DecodedEntry e = DecodeEntry(iter.key());
  if (e.cf_id != cf_id || ExtractUserKey(e.internal_key) != user_key) return false;
  uint64_t trailer = DecodeFixed64(e.internal_key.data() + e.internal_key.size() - kTrailerSize);
  *type = static_cast<ValueType>(trailer & 0xff);
  *value = e.value;
  if (seq != nullptr) *seq = trailer >> 8;
  return true;
}

std::unique_ptr<InternalIterator> MemTable::NewIterator(uint32_t cf_id) const {
  return std::make_unique<Iterator>(&table_, cf_id);
}

MemTable::RangeSize MemTable::ApproximateRangeSize(uint32_t cf_id, Slice start, Slice limit) const {
  // (cf, key, kFirstTrailer) sorts before every version of key, so the bounds take in all
  // versions of start and none of limit. No limit: up to the first entry of the next CF.
  LookupKey lower(cf_id, start, kFirstTrailer);
  std::optional<LookupKey> upper;
  if (!limit.empty()) {
    upper.emplace(cf_id, limit, kFirstTrailer);
  } else if (cf_id != UINT32_MAX) {
    upper.emplace(cf_id + 1, Slice(), kFirstTrailer);
  }
  auto entry_size = [](const char* entry) {
    DecodedEntry e = DecodeEntry(entry);
    return e.internal_key.size() + e.value.size();
  };
  Table::RangeSize r = table_.ApproximateRangeSize(lower.entry(), upper ? upper->entry() : nullptr,
                                                   kExactRangeEntries, entry_size);
  return RangeSize{r.entries, r.bytes};
}

MemTable::CfStats* MemTable::FindCfStats(uint32_t cf_id) const {
  CfStatsList::Iterator iter(&cf_stats_);
  // The comparator reads only the leading cf_id, so the id alone is a lookup key.
  iter.Seek(reinterpret_cast<const char*>(&cf_id));
  if (!iter.Valid()) return nullptr;
  // Stats live in arena memory that the list hands out as const only to readers.
  auto* stats = reinterpret_cast<CfStats*>(const_cast<char*>(iter.key()));
  return stats->cf_id == cf_id ? stats : nullptr;
}

MemTable::CfStats* MemTable::FindOrAddCfStats(uint32_t cf_id) {
  if (CfStats* stats = FindCfStats(cf_id)) return stats;
  static_assert(alignof(CfStats) <= Arena::kMinAlignment);
  char* mem = cf_stats_.AllocateEntry(sizeof(CfStats));
  auto* stats = new (mem) CfStats;
  stats->cf_id = cf_id;
  if (cf_stats_.Insert(mem)) return stats;
  // Another writer added this CF first; use its counters.
  stats = FindCfStats(cf_id);
  assert(stats != nullptr);
  return stats;
}

std::vector<uint32_t> MemTable::ColumnFamilies() const {
  std::vector<uint32_t> ids;
  CfStatsList::Iterator iter(&cf_stats_);
  for (iter.SeekToFirst(); iter.Valid(); iter.Next()) {
    const auto* stats = reinterpret_cast<const CfStats*>(iter.key());
    if (stats->entries.load(std::memory_order_relaxed) > 0) ids.push_back(stats->cf_id);
  }
  return ids;
}

uint64_t MemTable::NumEntries(uint32_t cf_id) const {
  const CfStats* stats = FindCfStats(cf_id);
  return stats == nullptr ? 0 : stats->entries.load(std::memory_order_relaxed);
}

uint64_t MemTable::NumDeletions(uint32_t cf_id) const {
  const CfStats* stats = FindCfStats(cf_id);
  return stats == nullptr ? 0 : stats->deletions.load(std::memory_order_relaxed);
}

SequenceNumber MemTable::smallest_sequence() const {
  SequenceNumber s = smallest_sequence_.load(std::memory_order_relaxed);
  return s == UINT64_MAX ? 0 : s;
}

}  // namespace tidesdb
