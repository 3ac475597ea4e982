// Small byte-encoding helpers of the plugin's on-disk records (dictionary, rows, keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tidesql {

inline void put_varint(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

// Reads a varint from the front of *src and advances it; false if it is malformed.
inline bool get_varint(std::string_view* src, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !src->empty(); shift += 7) {
    uint64_t byte = static_cast<unsigned char>(src->front());
    src->remove_prefix(1);
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

inline void put_big_endian64(std::string* dst, uint64_t v) {
  char buf[8];
  for (int i = 7; i >= 0; i--) {
    buf[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  dst->append(buf, 8);
}

inline uint64_t get_big_endian64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
  return v;
}

}  // namespace tidesql
