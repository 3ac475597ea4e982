#include "wal_record.h"

#include "util/coding.h"

namespace tidesdb::tool {

const char* WalRecordTypeName(uint8_t type) {
  switch (type) {
    case kWalWriteBatchRecord:
      return "write batch";
    case kWalPrepareRecord:
      return "prepare";
    case kWalCommitPreparedRecord:
      return "commit prepared";
    case kWalRollbackPreparedRecord:
      return "rollback prepared";
    case kWalUnloggedSequencesRecord:
      return "unlogged sequences";
    default:
      return "unknown";
  }
}

Status DecodeWalRecord(uint8_t type, Slice payload, WalRecord* record) {
  *record = WalRecord();
  record->type = type;
  Slice in = payload;
  switch (type) {
    case kWalPrepareRecord:
    case kWalCommitPreparedRecord:
    case kWalRollbackPreparedRecord: {
      Slice xid;
      if (!GetLengthPrefixedSlice(&in, &xid)) return Status::Corruption("short xid");
      record->has_xid = true;
      record->xid.assign(xid);
      if (type == kWalRollbackPreparedRecord) return Status::OK();
      break;
    }
    case kWalWriteBatchRecord:
      break;
    case kWalUnloggedSequencesRecord:
      if (!GetFixed64(&in, &record->unlogged_first) || !GetFixed64(&in, &record->unlogged_last) ||
          record->unlogged_last < record->unlogged_first) {
        return Status::Corruption("bad unlogged-sequences record");
      }
      record->has_unlogged = true;
      return Status::OK();
    default:
      return Status::Corruption("unknown WAL record type " + std::to_string(type));
  }
  if (type != kWalPrepareRecord) {
    if (!GetFixed64(&in, &record->first_sequence)) return Status::Corruption("short WAL record");
    record->has_sequence = true;
  }
  Status s = WriteBatch::FromData(in, &record->batch);
  if (!s.ok()) return s;
  record->has_batch = true;
  return Status::OK();
}

}  // namespace tidesdb::tool
