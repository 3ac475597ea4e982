// CRC32C (Castagnoli), the checksum of every on-disk record and block. Uses the SSE4.2
// instruction when the CPU has it, a table otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidesdb::crc32c {

// CRC32C of data[0,n) continuing from a previous crc (init_crc = 0 to start).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// Stored CRCs are masked so that a CRC over data that embeds CRCs stays well distributed.
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace tidesdb::crc32c
