#include "db/entry_value.h"

namespace tidesdb {

bool EntryIsDeleted(ValueType type, Slice raw, uint64_t now_seconds) {
  switch (type) {
    case ValueType::kDeletion:
      return true;
    case ValueType::kValueWithExpiry:
    case ValueType::kValuePointerWithExpiry: {
      if (raw.size() < 8) return false;  // DecodeEntry reports the corruption
      uint64_t expire_at = DecodeFixed64(raw.data());
      return expire_at != 0 && expire_at <= now_seconds;
    }
    default:
      return false;
  }
}

bool LiveInlineValue(ValueType type, Slice raw, uint64_t now_seconds, Slice* value) {
  if (type == ValueType::kValue) {
    *value = raw;
    return true;
  }
  if (type != ValueType::kValueWithExpiry || raw.size() < 8 || EntryIsDeleted(type, raw, now_seconds))
    return false;
  *value = Slice(raw.data() + 8, raw.size() - 8);
  return true;
}

Status DecodeEntry(ValueType type, Slice raw, uint64_t now_seconds, const ValueFetcher& fetch,
                   EntryState* state, std::string* value, std::shared_ptr<const std::string>* pinned) {
  if (pinned != nullptr) pinned->reset();
  if (EntryIsDeleted(type, raw, now_seconds)) {
    *state = EntryState::kDeleted;
    return Status::OK();
  }
  *state = EntryState::kLive;
  switch (type) {
    case ValueType::kValue:
      value->assign(raw.data(), raw.size());
      return Status::OK();
    case ValueType::kValueWithExpiry:
      if (raw.size() < 8) return Status::Corruption("entry with expiry is too short");
      value->assign(raw.data() + 8, raw.size() - 8);
      return Status::OK();
    case ValueType::kValuePointer:
    case ValueType::kValuePointerWithExpiry: {
      Slice in = raw;
      if (type == ValueType::kValuePointerWithExpiry) {
        if (in.size() < 8) return Status::Corruption("value pointer with expiry is too short");
        in.remove_prefix(8);
      }
      ValuePointer ptr;
      if (!ptr.DecodeFrom(&in)) return Status::Corruption("malformed value pointer");
      if (!fetch) return Status::Corruption("value pointer outside an SSTable");
      return fetch(ptr, value, pinned);
    }
    case ValueType::kDeletion:
      break;
  }
  return Status::Corruption("unexpected entry type");
}

}  // namespace tidesdb
