#include "tidesdb/status.h"

namespace tidesdb {

namespace {
const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kNotFound:
      return "NotFound";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kNotSupported:
      return "NotSupported";
    case Status::Code::kInvalidArgument:
      return "InvalidArgument";
    case Status::Code::kIOError:
      return "IOError";
    case Status::Code::kNoSpace:
      return "NoSpace";
    case Status::Code::kBusy:
      return "Busy";
    case Status::Code::kTimedOut:
      return "TimedOut";
    case Status::Code::kDeadlock:
      return "Deadlock";
    case Status::Code::kAborted:
      return "Aborted";
    case Status::Code::kTryAgain:
      return "TryAgain";
  }
  return "Unknown";
}
}  // namespace

Status::Status(Code code, Slice msg, Slice msg2) : code_(code) {
  std::string m(msg);
  if (!msg2.empty()) {
    m.append(": ");
    m.append(msg2);
  }
  msg_ = std::make_shared<const std::string>(std::move(m));
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return msg_ ? *msg_ : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = CodeName(code_);
  if (msg_ && !msg_->empty()) {
    s.append(": ");
    s.append(*msg_);
  }
  return s;
}

}  // namespace tidesdb
