// Status: the outcome of a library call. Errors are values; nothing throws across the API.
//
// A Status is cheap to copy when OK (no allocation). Error statuses carry a code and a
// human-readable message; corruption messages name the file and byte offset.
#pragma once

#include <memory>
#include <string>

#include "tidesdb/slice.h"

namespace tidesdb {

class Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,
    kCorruption,  // a checksum or format check failed; message names file and offset
    kNotSupported,
    kInvalidArgument,  // caller error (bad option, dropped column family, ...)
    kIOError,          // the operating system refused (message includes errno text)
    kNoSpace,          // disk full; nothing already acknowledged is lost
    kBusy,             // write-write conflict (optimistic validation); retry the transaction
    kTimedOut,         // lock wait timed out; retry the statement or transaction
    kDeadlock,         // chosen as a deadlock victim; retry the transaction
    kAborted,          // operation cancelled (shutdown, background error)
    kTryAgain,         // transient; the same call may succeed later
  };

  Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(Slice msg = {}, Slice msg2 = {}) { return Status(Code::kNotFound, msg, msg2); }
  static Status Corruption(Slice msg, Slice msg2 = {}) { return Status(Code::kCorruption, msg, msg2); }
  static Status NotSupported(Slice msg, Slice msg2 = {}) { return Status(Code::kNotSupported, msg, msg2); }
  static Status InvalidArgument(Slice msg, Slice msg2 = {}) {
    return Status(Code::kInvalidArgument, msg, msg2);
  }
  static Status IOError(Slice msg, Slice msg2 = {}) { return Status(Code::kIOError, msg, msg2); }
  static Status NoSpace(Slice msg, Slice msg2 = {}) { return Status(Code::kNoSpace, msg, msg2); }
  static Status Busy(Slice msg, Slice msg2 = {}) { return Status(Code::kBusy, msg, msg2); }
  static Status TimedOut(Slice msg, Slice msg2 = {}) { return Status(Code::kTimedOut, msg, msg2); }
  static Status Deadlock(Slice msg, Slice msg2 = {}) { return Status(Code::kDeadlock, msg, msg2); }
  static Status Aborted(Slice msg, Slice msg2 = {}) { return Status(Code::kAborted, msg, msg2); }
  static Status TryAgain(Slice msg, Slice msg2 = {}) { return Status(Code::kTryAgain, msg, msg2); }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsTimedOut() const { return code_ == Code::kTimedOut; }
  bool IsDeadlock() const { return code_ == Code::kDeadlock; }
  bool IsAborted() const { return code_ == Code::kAborted; }
  bool IsTryAgain() const { return code_ == Code::kTryAgain; }

  Code code() const { return code_; }
  // The message without the code name ("" when OK).
  const std::string& message() const;
  // "OK", or "<Code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, Slice msg, Slice msg2);

  Code code_ = Code::kOk;
  std::shared_ptr<const std::string> msg_;  // null when OK; shared so copies are cheap
};

}  // namespace tidesdb
