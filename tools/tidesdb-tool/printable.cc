#include "printable.h"

#include <cstdio>
#include <ctime>

#include "sst/compression.h"

namespace tidesdb::tool {

std::string FormatBytes(Slice bytes, ByteFormat format) {
  std::string out;
  char buf[5];
  if (format.hex) {
    out.reserve(2 + 2 * bytes.size());
    out += "0x";
    for (char c : bytes) {
      std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned char>(c));
      out += buf;
    }
    return out;
  }
  out.reserve(bytes.size() + 2);
  out.push_back('\'');
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\'' && c != '\\') {
      out.push_back(c);
    } else {
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  out.push_back('\'');
  return out;
}

std::string FormatPrefix(Slice bytes, ByteFormat format, size_t max_bytes) {
  if (bytes.size() <= max_bytes) return FormatBytes(bytes, format);
  return FormatBytes(bytes.substr(0, max_bytes), format) + "...";
}

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kDeletion:
      return "del";
    case ValueType::kValue:
      return "put";
    case ValueType::kValueWithExpiry:
      return "put-with-expiry";
    case ValueType::kValuePointer:
      return "put-vptr";
    case ValueType::kValuePointerWithExpiry:
      return "put-vptr-with-expiry";
  }
  return "type(?)";
}

std::string FormatInternalKey(Slice internal_key, ByteFormat format) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed))
    return "(bad internal key) " + FormatBytes(internal_key, format);
  return FormatBytes(parsed.user_key, format) + " @" + std::to_string(parsed.sequence) + " " +
         ValueTypeName(parsed.type);
}

std::string FormatUnixSeconds(uint64_t seconds) {
  std::string out = std::to_string(seconds);
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  char buf[32];
  if (seconds <= uint64_t{253402300799} && gmtime_r(&t, &tm) != nullptr &&
      std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0) {
    out += " (";
    out += buf;
    out += ")";
  }
  return out;
}

namespace {

std::string FormatInline(Slice value, ByteFormat format) {
  return "value " + std::to_string(value.size()) + " bytes " + FormatPrefix(value, format);
}

std::string FormatPointer(Slice raw) {
  ValuePointer ptr;
  Slice in = raw;
  if (!ptr.DecodeFrom(&in) || !in.empty())
    return "(bad value pointer, " + std::to_string(raw.size()) + " bytes)";
  return "-> vlog #" + std::to_string(ptr.file_number) + " offset " + std::to_string(ptr.offset) + " size " +
         std::to_string(ptr.size);
}

}  // namespace

std::string FormatStoredValue(ValueType type, Slice raw, ByteFormat format) {
  switch (type) {
    case ValueType::kDeletion:
      return raw.empty() ? std::string() : "(tombstone carries " + std::to_string(raw.size()) + " bytes)";
    case ValueType::kValue:
      return FormatInline(raw, format);
    case ValueType::kValuePointer:
      return FormatPointer(raw);
    case ValueType::kValueWithExpiry:
    case ValueType::kValuePointerWithExpiry: {
      if (raw.size() < 8) return "(expiry field truncated: " + std::to_string(raw.size()) + " bytes)";
      const std::string expiry = "expire_at " + FormatUnixSeconds(DecodeFixed64(raw.data())) + " ";
      raw.remove_prefix(8);
      return expiry + (type == ValueType::kValueWithExpiry ? FormatInline(raw, format) : FormatPointer(raw));
    }
  }
  return "(unknown entry type)";
}

std::string FormatKeyOptions(const ColumnFamilyOptions& o) {
  char bloom[32];
  std::snprintf(bloom, sizeof(bloom), "%g", o.bloom_fpr);
  return "compression=" + CompressionTypeName(o.compression) +
         " value_threshold=" + std::to_string(o.value_threshold) +
         " block_size=" + std::to_string(o.block_size) + " bloom_fpr=" + bloom +
         " write_buffer_size=" + std::to_string(o.write_buffer_size) +
         " max_levels=" + std::to_string(o.max_levels) +
         " default_ttl_seconds=" + std::to_string(o.default_ttl_seconds);
}

}  // namespace tidesdb::tool
