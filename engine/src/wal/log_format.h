// Log file format: the record framing shared by the write-ahead log (WAL) and the manifest.
// What a record's payload means is the caller's business; this layer only frames,
// checksums and classifies damage.
//
// Format version 2 for WALs, 1 for manifests. All integers little-endian.
//
//   File header, once at offset 0 (kFileHeaderSize = 24 bytes):
//     magic        8 bytes   "TIDESWAL" (WAL) or "TIDESMAN" (manifest)
//     version      fixed32   LogFormatVersion(kind): 2 (WAL) or 1 (manifest)
//     log number   fixed64   the file's number, so a renamed file is still recognised
//     header crc   fixed32   masked crc32c of the 20 bytes above
//
//   Records, back to back until end of file (kRecordHeaderSize = 9 bytes + payload):
//     crc          fixed32   masked crc32c of type byte + payload
//     length       fixed32   payload length, at most kMaxRecordPayload
//     type         u8        caller-defined, never 0 (0 marks zero-filled space) nor
//                            kSyncMarkType
//     payload      length bytes
//
// Records are never fragmented: a record of many MB is one frame, written by one Append.
//
//   Sync marks (version 2 only): a record of type kSyncMarkType (255, reserved: callers
//   never use it) whose payload is fixed64 S, at most the mark's own offset: before the
//   mark was written, an fsync had made bytes [0, S) of this file durable. The writer puts
//   one in front of the next records once a sync has moved S forward, and LogWriter::Seal
//   ends a log with one that claims every record. The reader consumes marks; callers never
//   see them. Version 1 files have none and are read as before.
//
// Damage classification (see LogReader):
//   * A bad record (checksum mismatch, length over kMaxRecordPayload or past end of file,
//     type 0, fewer than 9 bytes left) with no valid record anywhere after it is a torn
//     tail: the last write did not complete before a crash. The reader reports end of log
//     and the offset where the last good record ends; recovery truncates there. A
//     zero-filled tail is a torn tail; it is also how a WAL's preallocated space reads
//     (LogWriter keeps a WAL's file up to kWalPreallocateBytes longer than its records,
//     zeros past them; a closed or sealed WAL has none, a crash leaves them). The format
//     is unchanged by it: zeros were always the end of the log.
//   * A bad record followed by a valid one is corruption, reported with the file path and
//     the bad record's byte offset. Nothing is skipped silently.
//   * Except, when the reader is told that unsynced writes may have been lost (the newest
//     WAL after a power loss, LogReader::AllowLostUnsyncedWrites) and the file is version
//     2: a bad record at offset B followed by valid records is a lost unsynced write, read
//     as a torn tail at B (the later records are dropped with it), unless some valid sync
//     mark in the file claims S > B. Bytes below S were durable, so damage there is
//     corruption. Why this is safe: a power loss can take only bytes past the last
//     completed sync, every commit acknowledged as durable ends at or before it, and syncs
//     end on record boundaries, so the first bad record of a power loss starts at or past
//     the last sync and cutting there keeps every durable record. What it cannot catch:
//     damage to synced bytes that no surviving mark covers (the last synced records
//     before a power loss); with the strict rule those were lost as a torn tail too.
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

// The newest version this build reads (and writes for WALs).
constexpr uint32_t kLogFormatVersion = 2;
// The first version with sync marks.
constexpr uint32_t kLogSyncMarkVersion = 2;

constexpr uint8_t kSyncMarkType = 255;
constexpr size_t kSyncMarkPayloadSize = 8;

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
// Manifests are synced after every edit, so they carry no sync marks and stay version 1.
inline uint32_t LogFormatVersion(LogKind kind) { return kind == LogKind::kWal ? kLogFormatVersion : 1; }

}  // namespace tidesdb
