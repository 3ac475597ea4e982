// Internal keys: how a user key, a sequence number and an entry type are combined in the
// memtable, in SSTables and in iterators.
//
//   internal key = user_key + trailer
//   trailer      = fixed64 little-endian of (sequence << 8 | type)
//
// Order: user key ascending (bytewise), then sequence descending, then type descending, so
// the newest version of a key comes first and a seek to (key, snapshot_seq) lands on the
// newest version visible at that snapshot.
//
// Sequences are 56-bit; kMaxSequence is reserved as "see everything".
#pragma once

#include <algorithm>
#include <vector>

#include <cstdint>
#include <string>

#include "tidesdb/slice.h"
#include "util/coding.h"

namespace tidesdb {

using SequenceNumber = uint64_t;
inline constexpr SequenceNumber kMaxSequence = (uint64_t{1} << 56) - 1;

enum class ValueType : uint8_t {
  kDeletion = 0,
  kValue = 1,                   // value stored inline
  kValueWithExpiry = 2,         // value = fixed64 expire_at_unix_seconds + user value
  kValuePointer = 3,            // SSTable only: value = encoded ValuePointer into a value log
  kValuePointerWithExpiry = 4,  // SSTable only: fixed64 expire_at + encoded ValuePointer
};
// The type used when seeking: the largest, so (key, seq, kValueTypeForSeek) sorts before
// every entry of key with sequence <= seq.
inline constexpr ValueType kValueTypeForSeek = ValueType::kValuePointerWithExpiry;

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  return (seq << 8) | static_cast<uint8_t>(t);
}

struct ParsedInternalKey {
  Slice user_key;
  SequenceNumber sequence = 0;
  ValueType type = ValueType::kValue;
};

inline size_t InternalKeyEncodingLength(const ParsedInternalKey& k) { return k.user_key.size() + 8; }

inline void AppendInternalKey(std::string* dst, Slice user_key, SequenceNumber seq, ValueType t) {
  dst->append(user_key.data(), user_key.size());
  PutFixed64(dst, PackSequenceAndType(seq, t));
}

inline Slice ExtractUserKey(Slice internal_key) {
  return Slice(internal_key.data(), internal_key.size() - 8);
}

inline bool IsValidValueType(uint8_t t) {
  return t <= static_cast<uint8_t>(ValueType::kValuePointerWithExpiry);
}

// False if the key is too short or the type byte unknown.
inline bool ParseInternalKey(Slice internal_key, ParsedInternalKey* result) {
  if (internal_key.size() < 8) return false;
  uint64_t num = DecodeFixed64(internal_key.data() + internal_key.size() - 8);
  uint8_t t = static_cast<uint8_t>(num & 0xff);
  if (!IsValidValueType(t)) return false;
  result->user_key = ExtractUserKey(internal_key);
  result->sequence = num >> 8;
  result->type = static_cast<ValueType>(t);
  return true;
}

// Three-way comparison of internal keys in the order described above.
inline int CompareInternalKey(Slice a, Slice b) {
  int r = ExtractUserKey(a).compare(ExtractUserKey(b));
  if (r != 0) return r < 0 ? -1 : 1;
  uint64_t an = DecodeFixed64(a.data() + a.size() - 8);
  uint64_t bn = DecodeFixed64(b.data() + b.size() - 8);
  if (an > bn) return -1;
  if (an < bn) return 1;
  return 0;
}

struct InternalKeyComparator {
  bool operator()(Slice a, Slice b) const { return CompareInternalKey(a, b) < 0; }
};

// Where a large value lives: value-log file number, offset of its record, and the
// length of the record. Encoded as three varint64s.
struct ValuePointer {
  uint64_t file_number = 0;
  uint64_t offset = 0;
  uint64_t size = 0;

  void EncodeTo(std::string* dst) const {
    PutVarint64(dst, file_number);
    PutVarint64(dst, offset);
    PutVarint64(dst, size);
  }
  bool DecodeFrom(Slice* input) {
    return GetVarint64(input, &file_number) && GetVarint64(input, &offset) && GetVarint64(input, &size);
  }
};

// Fed entries in internal-key order (user key ascending, sequence descending), says which
// versions no reader can see. A version with sequence s under a newer version of the same
// key with sequence n is visible only to a snapshot x with s <= x < n; readers that are not
// registered snapshots read at the newest sequence (or from the memtables and files they
// hold, which dropping a version from a new file does not touch). `snapshots` holds the
// registered snapshot sequences, ascending. Used by flush and compaction.
class ShadowedVersionFilter {
 public:
  explicit ShadowedVersionFilter(std::vector<SequenceNumber> snapshots) : snapshots_(std::move(snapshots)) {}
  bool Shadowed(const ParsedInternalKey& k) {
    if (!has_key_ || k.user_key != Slice(key_)) {
      key_.assign(k.user_key.data(), k.user_key.size());
      has_key_ = true;
      newer_seq_ = kMaxSequence + 1;
    }
    bool shadowed = false;
    if (newer_seq_ <= kMaxSequence) {
      auto it = std::lower_bound(snapshots_.begin(), snapshots_.end(), k.sequence);
      shadowed = it == snapshots_.end() || *it >= newer_seq_;
    }
    newer_seq_ = k.sequence;
    return shadowed;
  }

 private:
  const std::vector<SequenceNumber> snapshots_;
  std::string key_;
  bool has_key_ = false;
  SequenceNumber newer_seq_ = kMaxSequence + 1;
};

}  // namespace tidesdb
