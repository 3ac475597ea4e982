#include "util/coding.h"

namespace tidesdb {

void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}

void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

char* EncodeVarint64(char* dst, uint64_t v) {
  auto* p = reinterpret_cast<unsigned char*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(p);
}

char* EncodeVarint32(char* dst, uint32_t v) { return EncodeVarint64(dst, v); }

void PutVarint32(std::string* dst, uint32_t v) {
  char buf[5];
  dst->append(buf, EncodeVarint32(buf, v) - buf);
}

void PutVarint64(std::string* dst, uint64_t v) {
  char buf[10];
  dst->append(buf, EncodeVarint64(buf, v) - buf);
}

void PutLengthPrefixedSlice(std::string* dst, Slice value) {
  PutVarint32(dst, static_cast<uint32_t>(value.size()));
  dst->append(value.data(), value.size());
}

int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++len;
  }
  return len;
}

const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && p < limit; shift += 7) {
    uint64_t byte = static_cast<unsigned char>(*p++);
    if (shift == 63 && byte > 1) return nullptr;  // overflows 64 bits
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

const char* GetVarint32PtrLong(const char* p, const char* limit, uint32_t* value) {
  uint64_t v = 0;
  const char* q = GetVarint64Ptr(p, limit, &v);
  if (q == nullptr || v > UINT32_MAX) return nullptr;
  *value = static_cast<uint32_t>(v);
  return q;
}

bool GetFixed32(Slice* input, uint32_t* value) {
  if (input->size() < 4) return false;
  *value = DecodeFixed32(input->data());
  input->remove_prefix(4);
  return true;
}

bool GetFixed64(Slice* input, uint64_t* value) {
  if (input->size() < 8) return false;
  *value = DecodeFixed64(input->data());
  input->remove_prefix(8);
  return true;
}

bool GetVarint32(Slice* input, uint32_t* value) {
  const char* limit = input->data() + input->size();
  const char* q = GetVarint32Ptr(input->data(), limit, value);
  if (q == nullptr) return false;
  input->remove_prefix(q - input->data());
  return true;
}

bool GetVarint64(Slice* input, uint64_t* value) {
  const char* limit = input->data() + input->size();
  const char* q = GetVarint64Ptr(input->data(), limit, value);
  if (q == nullptr) return false;
  input->remove_prefix(q - input->data());
  return true;
}

bool GetLengthPrefixedSlice(Slice* input, Slice* result) {
  uint32_t len;
  Slice in = *input;
  if (!GetVarint32(&in, &len) || in.size() < len) return false;
  *result = Slice(in.data(), len);
  in.remove_prefix(len);
  *input = in;
  return true;
}

}  // namespace tidesdb
