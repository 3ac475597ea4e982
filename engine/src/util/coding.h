// Byte encodings used by every on-disk format: little-endian fixed-width integers and
// LEB128-style varints (7 bits a byte, high bit = more follows).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "tidesdb/slice.h"

namespace tidesdb {

inline void EncodeFixed32(char* dst, uint32_t v) { std::memcpy(dst, &v, 4); }  // x86/ARM LE
inline void EncodeFixed64(char* dst, uint64_t v) { std::memcpy(dst, &v, 8); }
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void PutFixed32(std::string* dst, uint32_t v);
void PutFixed64(std::string* dst, uint64_t v);
void PutVarint32(std::string* dst, uint32_t v);
void PutVarint64(std::string* dst, uint64_t v);
// varint32 length, then the bytes.
void PutLengthPrefixedSlice(std::string* dst, Slice value);

// Writes a varint to dst (room for 5 / 10 bytes); returns the byte after it.
char* EncodeVarint32(char* dst, uint32_t v);
char* EncodeVarint64(char* dst, uint64_t v);
int VarintLength(uint64_t v);

// Parsers consume from the front of *input; false (input unchanged or partly consumed) on
// malformed or truncated input.
bool GetFixed32(Slice* input, uint32_t* value);
bool GetFixed64(Slice* input, uint64_t* value);
bool GetVarint32(Slice* input, uint32_t* value);
bool GetVarint64(Slice* input, uint64_t* value);
bool GetLengthPrefixedSlice(Slice* input, Slice* result);

// Pointer-range parsers: return the byte after the varint, or nullptr if malformed.
// Varints of one and two bytes (lengths below 16 KiB: nearly every block entry's) are
// decoded inline; longer ones by GetVarint32PtrLong.
const char* GetVarint32PtrLong(const char* p, const char* limit, uint32_t* value);
inline const char* GetVarint32Ptr(const char* p, const char* limit, uint32_t* value) {
  if (limit - p >= 2) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    if (u[0] < 128) {
      *value = u[0];
      return p + 1;
    }
    if (u[1] < 128) {
      *value = (u[0] & 0x7fu) | (uint32_t{u[1]} << 7);
      return p + 2;
    }
  }
  return GetVarint32PtrLong(p, limit, value);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

// Big-endian fixed-width integers: byte order equals numeric order (used inside keys).
inline void EncodeBigEndian32(char* dst, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) dst[i] = static_cast<char>(v & 0xff);
}
inline uint32_t DecodeBigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}
inline uint64_t DecodeBigEndian64(const char* p) {
  return (uint64_t{DecodeBigEndian32(p)} << 32) | DecodeBigEndian32(p + 4);
}

}  // namespace tidesdb
