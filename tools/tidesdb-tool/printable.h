// How the tool prints bytes: keys, values, internal keys and stored entry values.
//
// Printable form: the bytes between single quotes; bytes outside printable ASCII, the quote
// and the backslash are written as \xNN, so a key is unambiguous and one line long.
// Hex form (--hex): 0x followed by lowercase hex digits ("0x" alone for no bytes).
#pragma once

#include <cstdint>
#include <string>

#include "db/dbformat.h"
#include "tidesdb/options.h"
#include "tidesdb/slice.h"

namespace tidesdb::tool {

// How bytes are shown (the --hex flag).
struct ByteFormat {
  bool hex = false;
};

// The whole of `bytes` in the printable or hex form.
std::string FormatBytes(Slice bytes, ByteFormat format);
// At most max_bytes of `bytes`, followed by "..." when something was left out.
std::string FormatPrefix(Slice bytes, ByteFormat format, size_t max_bytes = 32);

// "'user key' @<seq> <type>", or "(bad internal key) <bytes>" when it does not parse.
std::string FormatInternalKey(Slice internal_key, ByteFormat format);

// del, put, put-with-expiry, put-vptr, put-vptr-with-expiry, or type(<n>).
const char* ValueTypeName(ValueType type);

// The stored bytes of an entry of `type` (as in an SSTable), decoded: an inline value as
// "value <n> bytes <prefix>", an expiry as "expire_at <seconds> (<UTC time>)", a value
// pointer as "-> vlog #<file> offset <o> size <s>". Malformed bytes are shown as such.
std::string FormatStoredValue(ValueType type, Slice raw, ByteFormat format);

// "<seconds> (YYYY-MM-DDTHH:MM:SSZ)".
std::string FormatUnixSeconds(uint64_t seconds);

// Key options of a column family on one line (ls).
std::string FormatKeyOptions(const ColumnFamilyOptions& options);

}  // namespace tidesdb::tool
