// How a stored entry's bytes become a user value: expiry, value-log pointers, tombstones.
// Shared by point reads and iterators so both apply exactly the same rules.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "db/dbformat.h"
#include "tidesdb/status.h"

namespace tidesdb {

// Reads the value a ValuePointer names (from the CF's value logs). If `pinned` is not null
// the fetcher may instead set *pinned to a shared copy it already holds (a cached value),
// leaving *value untouched: the caller then reads **pinned, with no copy.
using ValueFetcher = std::function<Status(const ValuePointer& ptr, std::string* value,
                                          std::shared_ptr<const std::string>* pinned)>;

enum class EntryState { kLive, kDeleted };

// Classifies an entry of `type` with stored bytes `raw` at wall-clock `now_seconds`:
// kDeleted for tombstones and expired entries. For a live entry, *value receives the user
// value (fetched from the value log for pointer types), or, when `pinned` is given, a
// fetched value may be handed over pinned instead (see ValueFetcher); *pinned is reset
// otherwise. A malformed entry is Corruption.
Status DecodeEntry(ValueType type, Slice raw, uint64_t now_seconds, const ValueFetcher& fetch,
                   EntryState* state, std::string* value,
                   std::shared_ptr<const std::string>* pinned = nullptr);

// True if the entry is live and holds its value itself (not in a value log): *value is
// then that value, in place within `raw`. False for everything else (tombstones, expired
// or malformed entries, value pointers), which DecodeEntry classifies.
bool LiveInlineValue(ValueType type, Slice raw, uint64_t now_seconds, Slice* value);

// The same without fetching: true if the entry is a tombstone or has expired.
bool EntryIsDeleted(ValueType type, Slice raw, uint64_t now_seconds);

}  // namespace tidesdb
