// Log file format: the record framing shared by the write-ahead log (WAL) and the manifest.
// What a record's payload means is the caller's business; this layer only frames,
// checksums and classifies damage.
//
// Format version 1. All integers little-endian.
//
//   File header, once at offset 0 (kFileHeaderSize = 24 bytes):
//     magic        8 bytes   "TIDESWAL" (WAL) or "TIDESMAN" (manifest)
//     version      fixed32   kLogFormatVersion (= 1)
//     log number   fixed64   the file's number, so a renamed file is still recognised
//     header crc   fixed32   masked crc32c of the 20 bytes above
//
//   Records, back to back until end of file (kRecordHeaderSize = 9 bytes + payload):
//     crc          fixed32   masked crc32c of type byte + payload
//     length       fixed32   payload length, at most kMaxRecordPayload
//     type         u8        caller-defined, never 0 (0 marks zero-filled space)
//     payload      length bytes
//
// Records are never fragmented: a record of many MB is one frame, written by one Append.
//
// Damage classification (see LogReader):
//   * A bad record (checksum mismatch, length over kMaxRecordPayload or past end of file,
//     type 0, fewer than 9 bytes left) with no valid record anywhere after it is a torn
//     tail: the last write did not complete before a crash. The reader reports end of log
//     and the offset where the last good record ends; recovery truncates there. A
//     zero-filled tail is a torn tail.
//   * A bad record followed by a valid one is corruption, reported with the file path and
//     the bad record's byte offset. Nothing is skipped silently.
//   * A bad file header is corruption, except that a file that is empty or entirely zero
//     is an empty log with a torn tail (the crash came before the header reached disk).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidesdb {

enum class LogKind : uint8_t {
  kWal = 1,
  kManifest = 2,
};

constexpr uint32_t kLogFormatVersion = 1;

constexpr size_t kLogMagicSize = 8;
constexpr char kWalMagic[kLogMagicSize + 1] = "TIDESWAL";
constexpr char kManifestMagic[kLogMagicSize + 1] = "TIDESMAN";

constexpr size_t kFileHeaderSize = kLogMagicSize + 4 + 8 + 4;
constexpr size_t kRecordHeaderSize = 4 + 4 + 1;

// Larger lengths are rejected by the writer and treated as damage by the reader. Bounds
// what a corrupt length field can make the reader allocate.
constexpr uint32_t kMaxRecordPayload = 1u << 30;

inline const char* LogMagic(LogKind kind) { return kind == LogKind::kWal ? kWalMagic : kManifestMagic; }
inline const char* LogKindName(LogKind kind) { return kind == LogKind::kWal ? "WAL" : "MANIFEST"; }

}  // namespace tidesdb
