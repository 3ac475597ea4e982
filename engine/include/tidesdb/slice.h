// A Slice is a non-owning view of bytes. Keys and values are arbitrary byte strings,
// ordered bytewise (memcmp order, shorter prefix first).
#pragma once

#include <string_view>

namespace tidesdb {

using Slice = std::string_view;

}  // namespace tidesdb
