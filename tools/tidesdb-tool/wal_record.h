// WAL record payloads, decoded the way recovery (DBImpl::ReplayWal) decodes them. The
// record types and layouts are owned by db/db_impl.h (WalRecordType); xid = varint32
// length + bytes.
//
//   1 write batch          fixed64 first sequence + WriteBatch
//   2 prepare              xid + WriteBatch (durable, applied only when committed)
//   3 commit prepared      xid + fixed64 first sequence + WriteBatch (the batch again)
//   4 rollback prepared    xid
//   5 unlogged sequences   fixed64 first + fixed64 last: taken by writes that skipped the WAL
#pragma once

#include <cstdint>
#include <string>

#include "tidesdb/slice.h"
#include "tidesdb/status.h"
#include "tidesdb/write_batch.h"

namespace tidesdb::tool {

inline constexpr uint8_t kWalWriteBatchRecord = 1;
inline constexpr uint8_t kWalPrepareRecord = 2;
inline constexpr uint8_t kWalCommitPreparedRecord = 3;
inline constexpr uint8_t kWalRollbackPreparedRecord = 4;
inline constexpr uint8_t kWalUnloggedSequencesRecord = 5;

struct WalRecord {
  uint8_t type = 0;
  bool has_xid = false;
  std::string xid;
  bool has_sequence = false;  // the batch's entries take sequences from first_sequence on
  uint64_t first_sequence = 0;
  bool has_batch = false;
  WriteBatch batch;
  bool has_unlogged = false;  // sequences [unlogged_first, unlogged_last] have no record
  uint64_t unlogged_first = 0, unlogged_last = 0;
};

// "write batch", "prepare", "commit prepared", "rollback prepared", "unlogged sequences"
// or "unknown".
const char* WalRecordTypeName(uint8_t type);

// Decodes a payload of the given type. Corruption ("unknown WAL record type", "short xid",
// "short WAL record", or the WriteBatch's own message) when recovery would reject it.
Status DecodeWalRecord(uint8_t type, Slice payload, WalRecord* record);

}  // namespace tidesdb::tool
