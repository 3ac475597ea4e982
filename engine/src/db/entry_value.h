// How a stored entry's bytes become a user value: expiry, value-log pointers, tombstones.
// Shared by point reads and iterators so both apply exactly the same rules.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "db/dbformat.h"
#include "tidesdb/status.h"

namespace tidesdb {

// Reads the value a ValuePointer names (from the CF's value logs).
using ValueFetcher = std::function<Status(const ValuePointer& ptr, std::string* value)>;

enum class EntryState { kLive, kDeleted };

// Classifies an entry of `type` with stored bytes `raw` at wall-clock `now_seconds`:
// kDeleted for tombstones and expired entries. For a live entry, *value receives the user
// value (fetched from the value log for pointer types). A malformed entry is Corruption.
Status DecodeEntry(ValueType type, Slice raw, uint64_t now_seconds, const ValueFetcher& fetch,
                   EntryState* state, std::string* value);

// The same without fetching: true if the entry is a tombstone or has expired.
bool EntryIsDeleted(ValueType type, Slice raw, uint64_t now_seconds);

}  // namespace tidesdb
