#include "util/coding.h"

#include <gtest/gtest.h>

#include "util/crc32c.h"

namespace tidesdb {

TEST(Coding, FixedRoundTrip) {
  std::string s;
  PutFixed32(&s, 0xdeadbeef);
  PutFixed64(&s, 0x0123456789abcdefull);
  Slice in(s);
  uint32_t a;
  uint64_t b;
  ASSERT_TRUE(GetFixed32(&in, &a));
  ASSERT_TRUE(GetFixed64(&in, &b));
  EXPECT_EQ(a, 0xdeadbeefu);
  EXPECT_EQ(b, 0x0123456789abcdefull);
  EXPECT_TRUE(in.empty());
}

TEST(Coding, VarintRoundTripAndLength) {
  std::string s;
  std::vector<uint64_t> values;
  for (int shift = 0; shift < 64; ++shift) {
    values.push_back(uint64_t{1} << shift);
    values.push_back((uint64_t{1} << shift) - 1);
  }
  values.push_back(UINT64_MAX);
  for (uint64_t v : values) PutVarint64(&s, v);
  Slice in(s);
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(VarintLength(0), 1);
  EXPECT_EQ(VarintLength(127), 1);
  EXPECT_EQ(VarintLength(128), 2);
  EXPECT_EQ(VarintLength(UINT64_MAX), 10);
}

TEST(Coding, TruncatedVarintIsRejected) {
  std::string s;
  PutVarint64(&s, uint64_t{1} << 40);
  for (size_t len = 0; len < s.size(); ++len) {
    Slice in(s.data(), len);
    uint64_t v;
    EXPECT_FALSE(GetVarint64(&in, &v)) << len;
  }
  std::string overflow(11, '\xff');
  Slice in(overflow);
  uint64_t v;
  EXPECT_FALSE(GetVarint64(&in, &v));
}

TEST(Coding, Varint32RejectsLargeValues) {
  std::string s;
  PutVarint64(&s, uint64_t{1} << 33);
  Slice in(s);
  uint32_t v;
  EXPECT_FALSE(GetVarint32(&in, &v));
}

TEST(Coding, LengthPrefixedSlice) {
  std::string s;
  PutLengthPrefixedSlice(&s, "hello");
  PutLengthPrefixedSlice(&s, "");
  Slice in(s), out;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &out));
  std::string bad;
  PutVarint32(&bad, 10);
  bad += "abc";
  Slice b(bad);
  EXPECT_FALSE(GetLengthPrefixedSlice(&b, &out));
}

TEST(Coding, BigEndianOrderMatchesNumericOrder) {
  char a[4], b[4];
  EncodeBigEndian32(a, 255);
  EncodeBigEndian32(b, 256);
  EXPECT_LT(Slice(a, 4).compare(Slice(b, 4)), 0);
  EXPECT_EQ(DecodeBigEndian32(b), 256u);
  // The first byte is the most significant, so comparing decoded values is memcmp order.
  const char bytes[8] = {'\x01', '\x02', '\x03', '\x04', '\x05', '\x06', '\x07', '\xff'};
  EXPECT_EQ(DecodeBigEndian64(bytes), 0x01020304050607ffu);
}

TEST(Crc32c, KnownValues) {
  // Standard test vectors for CRC32C (RFC 3720, B.4).
  char zeros[32] = {0};
  EXPECT_EQ(crc32c::Value(zeros, sizeof(zeros)), 0x8a9136aau);
  char ones[32];
  std::memset(ones, 0xff, sizeof(ones));
  EXPECT_EQ(crc32c::Value(ones, sizeof(ones)), 0x62a8ab43u);
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xe3069283u);
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "hello world, this is a checksum test of some length";
  uint32_t whole = crc32c::Value(s.data(), s.size());
  for (size_t split = 0; split <= s.size(); ++split) {
    uint32_t part = crc32c::Extend(crc32c::Value(s.data(), split), s.data() + split, s.size() - split);
    EXPECT_EQ(part, whole);
  }
}

TEST(Crc32c, MaskRoundTrip) {
  uint32_t crc = crc32c::Value("foo", 3);
  EXPECT_NE(crc32c::Mask(crc), crc);
  EXPECT_EQ(crc32c::Unmask(crc32c::Mask(crc)), crc);
}

}  // namespace tidesdb
