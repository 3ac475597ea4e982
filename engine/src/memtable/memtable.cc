#include "memtable/memtable.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <optional>

#include <xxhash.h>

#include "util/coding.h"
#include "util/filter_key.h"

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

// The prefix of a user key of `size` bytes whose first 8 bytes can be read at p (true of
// every user key inside a cf key: the 8-byte trailer follows it).
inline uint64_t PrefixAt(const char* p, size_t size) {
  const uint64_t bytes = DecodeBigEndian64(p);
  return size >= 8 ? bytes : (size == 0 ? 0 : bytes & ~(UINT64_MAX >> (8 * size)));
}

}  // namespace

MemTable::EntryComparator::DecodedKey MemTable::EntryComparator::MakeKey(uint32_t cf_id, Slice user_key,
                                                                         uint64_t trailer) {
  // user_key may end anywhere: copy at most 8 bytes, so the read stays inside it.
  char head[8] = {};
  if (!user_key.empty()) std::memcpy(head, user_key.data(), std::min<size_t>(user_key.size(), 8));
  return DecodedKey{cf_id, DecodeBigEndian64(head), user_key, trailer};
}

MemTable::EntryComparator::DecodedKey MemTable::EntryComparator::Decode(const char* entry) const {
  Slice cf_key = CfKeyOf(entry);
  const size_t user_key_size = cf_key.size() - kCfIdSize - kTrailerSize;
  const char* user_key = cf_key.data() + kCfIdSize;
  return DecodedKey{DecodeBigEndian32(cf_key.data()), PrefixAt(user_key, user_key_size),
                    Slice(user_key, user_key_size), DecodeFixed64(user_key + user_key_size)};
}

int MemTable::EntryComparator::Compare(const DecodedKey& a, const DecodedKey& b) {
  if (a.cf_id != b.cf_id) return a.cf_id < b.cf_id ? -1 : 1;
  if (a.prefix != b.prefix) return a.prefix < b.prefix ? -1 : 1;
  // Equal prefixes: the first 8 bytes are equal where both keys have them. If both are
  // longer, the rest decides first; otherwise (or on a tie) the shorter key is a prefix of
  // the other and sorts first.
  const size_t common = std::min(a.user_key.size(), b.user_key.size());
  if (common > 8) {
    const int r = std::memcmp(a.user_key.data() + 8, b.user_key.data() + 8, common - 8);
    if (r != 0) return r;
  }
  if (a.user_key.size() != b.user_key.size()) return a.user_key.size() < b.user_key.size() ? -1 : 1;
  if (a.trailer != b.trailer) return a.trailer > b.trailer ? -1 : 1;
  return 0;
}

// The hot loop of every Add and Get, kept small enough to be inlined into the skip list's
// searches: most calls return at the cf id or the prefix, read at fixed offsets when the
// cf key's length takes one byte (user keys up to 115 bytes). Anything else goes through
// the general Compare.
inline int MemTable::EntryComparator::operator()(const char* entry, const DecodedKey& key) const {
  const auto cf_key_size = static_cast<unsigned char>(entry[0]);
  if (cf_key_size >= 0x80) [[unlikely]]
    return Compare(Decode(entry), key);
  const uint32_t cf_id = DecodeBigEndian32(entry + 1);
  if (cf_id != key.cf_id) return cf_id < key.cf_id ? -1 : 1;
  const uint64_t prefix = PrefixAt(entry + 1 + kCfIdSize, cf_key_size - kCfIdSize - kTrailerSize);
  if (prefix != key.prefix) return prefix < key.prefix ? -1 : 1;
  return Compare(Decode(entry), key);
}

MemTable::CfStatsComparator::DecodedKey MemTable::CfStatsComparator::Decode(const char* entry) const {
  uint32_t cf_id;
  std::memcpy(&cf_id, entry, sizeof(cf_id));
  return cf_id;
}

int MemTable::CfStatsComparator::operator()(const char* entry, DecodedKey cf_id) const {
  const uint32_t entry_cf_id = Decode(entry);
  return entry_cf_id < cf_id ? -1 : (entry_cf_id > cf_id ? 1 : 0);
}

// Wraps a skip-list iterator and keeps it inside one CF: every move ends with Settle(),
// which turns "positioned on another CF's entry" into "invalid".
class MemTable::Iterator final : public InternalIterator {
 public:
  Iterator(const MemTable* mem, uint32_t cf_id) : mem_(mem), iter_(&mem->table_), cf_id_(cf_id) {}

  bool Valid() const override { return valid_; }

  void SeekToFirst() override {
    iter_.Seek(EntryComparator::MakeKey(cf_id_, Slice(), kFirstTrailer));
    Settle();
  }

  void SeekToLast() override {
    // The last entry of this CF is the one just before the first entry of any later CF;
    // for the largest id it is the last entry of the list.
    if (cf_id_ == UINT32_MAX) {
      iter_.SeekToLast();
    } else {
      iter_.Seek(EntryComparator::MakeKey(cf_id_ + 1, Slice(), kFirstTrailer));
      if (iter_.Valid()) {
        iter_.Prev();
      } else {
        iter_.SeekToLast();
      }
    }
    Settle();
  }

  void Seek(Slice target) override {
    iter_.Seek(KeyOf(target, kFirstTrailer));
    Settle();
  }

  void SeekBounded(Slice target, Slice limit) override {
    const Slice user_key = target.size() < kTrailerSize ? target : ExtractUserKey(target);
    if (!mem_->RangeMayMatch(cf_id_, user_key, limit)) {
      valid_ = false;  // nothing of the range here: exhausted
      return;
    }
    Seek(target);
  }

  void SeekForPrev(Slice target) override {
    iter_.SeekForPrev(KeyOf(target, 0));
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
  // The search key of an internal key of this CF; a target shorter than a trailer is a
  // bare user key, with `bare_trailer`.
  EntryComparator::DecodedKey KeyOf(Slice target, uint64_t bare_trailer) const {
    if (target.size() < kTrailerSize) return EntryComparator::MakeKey(cf_id_, target, bare_trailer);
    return EntryComparator::MakeKey(cf_id_, ExtractUserKey(target),
                                    DecodeFixed64(target.data() + target.size() - kTrailerSize));
  }

  void Settle() {
    valid_ = false;
    if (!iter_.Valid()) return;
    DecodedEntry e = DecodeEntry(iter_.key());
    if (e.cf_id != cf_id_) return;
    valid_ = true;
    key_ = e.internal_key;
    value_ = e.value;
  }

  const MemTable* const mem_;
  Table::Iterator iter_;
  const uint32_t cf_id_;
  bool valid_ = false;
  Slice key_;
  Slice value_;
};

MemTable::MemTable(size_t arena_block_size, size_t bloom_bytes)
    : bloom_words_((bloom_bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t)),
      bloom_(bloom_words_ != 0 ? std::make_unique<std::atomic<uint64_t>[]>(bloom_words_) : nullptr),
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

std::atomic<uint64_t>* MemTable::BloomWord(uint64_t h) const {
  return bloom_words_ == 0 ? nullptr : &bloom_[(h >> 32) * bloom_words_ >> 32];
}

void MemTable::BloomPrefetch(uint64_t h, bool for_write) const {
  std::atomic<uint64_t>* word = BloomWord(h);
  if (word == nullptr) return;
  if (for_write) {
    __builtin_prefetch(word, 1);
  } else {
    __builtin_prefetch(word, 0);
  }
}

void MemTable::BloomAdd(uint64_t h) {
  std::atomic<uint64_t>* word = BloomWord(h);
  if (word == nullptr) return;
  const uint64_t mask = BloomMask(h);
  // A set bit is never cleared, so bits seen set here stay visible to every later reader.
  if ((word->load(std::memory_order_relaxed) & mask) != mask) word->fetch_or(mask, std::memory_order_relaxed);
}

bool MemTable::BloomMayContain(uint64_t h) const {
  const std::atomic<uint64_t>* word = BloomWord(h);
  if (word == nullptr) return true;
  const uint64_t mask = BloomMask(h);
  return (word->load(std::memory_order_relaxed) & mask) == mask;
}

uint64_t MemTable::PrefixBloomHash(uint32_t cf_id, Slice prefix) {
  return XXH3_64bits_withSeed(prefix.data(), prefix.size(), (uint64_t{1} << 32) | cf_id);
}

void MemTable::NotePrefixLength(CfStats* stats, size_t filter_prefix_length) {
  const uint32_t want =
      filter_prefix_length < kPrefixMixed ? static_cast<uint32_t>(filter_prefix_length) : kPrefixMixed;
  uint32_t seen = stats->filter_prefix.load(std::memory_order_relaxed);
  while (seen != want && seen != kPrefixMixed) {
    const uint32_t next = seen == kPrefixUnset ? want : kPrefixMixed;
    if (stats->filter_prefix.compare_exchange_weak(seen, next, std::memory_order_relaxed)) break;
  }
}

bool MemTable::RangeMayMatch(uint32_t cf_id, Slice start, Slice limit) const {
  if (bloom_words_ == 0) return true;
  const CfStats* stats = FindCfStats(cf_id);
  if (stats == nullptr) return true;
  const uint32_t length = stats->filter_prefix.load(std::memory_order_relaxed);
  if (length == kPrefixUnset || length == kPrefixMixed) return true;
  // Probed one after another, a range's words cost sysbench select_random_ranges (cached,
  // after writes) 5.6-6.4 % of the server's CPU, mostly in the optimizer's estimates; with
  // their loads overlapping, 2.6-2.7 % (bench/results/2026-12-07-s28/filter-prefetch).
  return RangeMayMatchFilterPrefetched(
      start, limit, length, [cf_id](Slice key) { return PrefixBloomHash(cf_id, key); },
      [this](uint64_t h) { BloomPrefetch(h, /*for_write=*/false); },
      [this](uint64_t h) { return BloomMayContain(h); });
}

void MemTable::Add(uint32_t cf_id, SequenceNumber seq, ValueType type, Slice user_key, Slice value,
                   size_t filter_prefix_length) {
  assert(seq <= kMaxSequence);
  assert(user_key.size() < UINT32_MAX - 16 && value.size() < UINT32_MAX - 16);
  // The filter's word is a cache miss more often than not: start fetching it now, so that it
  // arrives while the entry is encoded.
  const uint64_t bloom_hash = BloomHash(cf_id, user_key);
  BloomPrefetch(bloom_hash, /*for_write=*/true);
  const uint64_t prefix_hash =
      filter_prefix_length != 0 ? PrefixBloomHash(cf_id, FilterKey(user_key, filter_prefix_length)) : 0;
  if (filter_prefix_length != 0) BloomPrefetch(prefix_hash, /*for_write=*/true);
  CfStats* stats = FindOrAddCfStats(cf_id);
  // Before the entry can be seen, like the filter's bits: a reader that sees the entry
  // sees the prefix length it was added under.
  NotePrefixLength(stats, filter_prefix_length);

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
  if (filter_prefix_length != 0) BloomAdd(prefix_hash);
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
  Table::Iterator iter(&table_);
  iter.Seek(EntryComparator::MakeKey(cf_id, user_key, PackSequenceAndType(snapshot, kValueTypeForSeek)));
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
  return std::make_unique<Iterator>(this, cf_id);
}

MemTable::RangeSize MemTable::ApproximateRangeSize(uint32_t cf_id, Slice start, Slice limit) const {
  const KeyRange range{start, limit};
  RangeSize size;
  ApproximateRangeSizes(cf_id, &range, 1, &size);
  return size;
}

void MemTable::ApproximateRangeSizes(uint32_t cf_id, const KeyRange* ranges, size_t n,
                                     RangeSize* sizes) const {
  auto entry_size = [](const char* entry) {
    DecodedEntry e = DecodeEntry(entry);
    return e.internal_key.size() + e.value.size();
  };
  assert(n <= kMaxRangesAtOnce);
  EntryComparator::DecodedKey lower[kMaxRangesAtOnce], upper[kMaxRangesAtOnce];
  Table::RangeBounds bounds[kMaxRangesAtOnce];
  for (size_t i = 0; i < n; ++i) {
    // (cf, key, kFirstTrailer) sorts before every version of key, so the bounds take in all
    // versions of start and none of limit. No limit: up to the first entry of the next CF.
    lower[i] = EntryComparator::MakeKey(cf_id, ranges[i].start, kFirstTrailer);
    const EntryComparator::DecodedKey* limit = nullptr;
    if (!ranges[i].limit.empty()) {
      upper[i] = EntryComparator::MakeKey(cf_id, ranges[i].limit, kFirstTrailer);
      limit = &upper[i];
    } else if (cf_id != UINT32_MAX) {
      upper[i] = EntryComparator::MakeKey(cf_id + 1, Slice(), kFirstTrailer);
      limit = &upper[i];
    }
    bounds[i] = Table::RangeBounds{&lower[i], limit};
  }
  Table::RangeSize table_sizes[kMaxRangesAtOnce];
  table_.ApproximateRangeSizes(bounds, n, kExactRangeEntries, entry_size, table_sizes);
  for (size_t i = 0; i < n; ++i) sizes[i] = RangeSize{table_sizes[i].entries, table_sizes[i].bytes};
}

MemTable::CfStats* MemTable::FindCfStats(uint32_t cf_id) const {
  CfStatsList::Iterator iter(&cf_stats_);
  iter.Seek(cf_id);
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
