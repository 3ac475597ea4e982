#include "sst/compression.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "util/coding.h"

namespace tidesdb {
namespace {

constexpr CompressionType kAllTypes[] = {CompressionType::kNone, CompressionType::kSnappy,
                                         CompressionType::kLZ4, CompressionType::kZstd};
constexpr CompressionType kCodecs[] = {CompressionType::kSnappy, CompressionType::kLZ4,
                                       CompressionType::kZstd};

constexpr uint64_t kSeed = 20240611;

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// Rows of digits and repeated words: compresses well, like real key-log blocks.
std::string CompressibleBytes(std::mt19937_64& rng, size_t n) {
  static const char* kWords[] = {"tidesdb", "value", "block", "column", "family", "-", "0042"};
  std::string s;
  while (s.size() < n) {
    s += kWords[rng() % 7];
    s += std::to_string(rng() % 1000);
  }
  s.resize(n);
  return s;
}

void ExpectRoundTrip(CompressionType type, const std::string& input) {
  SCOPED_TRACE(CompressionTypeName(type) + " size " + std::to_string(input.size()));
  std::string compressed;
  ASSERT_TRUE(CompressBlock(type, input, &compressed).ok());
  std::string output = "stale contents";
  Status s = UncompressBlock(type, compressed, &output);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(output == input);
}

TEST(Compression, RoundTripAllCodecs) {
  std::mt19937_64 rng(kSeed);
  std::vector<std::string> inputs = {"", "a", "ab", std::string(7, 'x'), std::string(100000, '\0')};
  for (size_t n : {1u, 17u, 4096u, 16384u, 65536u, 1u << 20}) {
    inputs.push_back(RandomBytes(rng, n));
    inputs.push_back(CompressibleBytes(rng, n));
  }
  for (CompressionType type : kAllTypes) {
    for (const std::string& input : inputs) ExpectRoundTrip(type, input);
  }
}

TEST(Compression, CompressibleInputShrinksIncompressibleDoesNotPay) {
  std::mt19937_64 rng(kSeed);
  const std::string text = CompressibleBytes(rng, 16384);
  const std::string noise = RandomBytes(rng, 16384);
  for (CompressionType type : kCodecs) {
    std::string c;
    ASSERT_TRUE(CompressBlock(type, text, &c).ok());
    EXPECT_TRUE(CompressionWorthIt(text.size(), c.size())) << CompressionTypeName(type) << " " << c.size();
    ASSERT_TRUE(CompressBlock(type, noise, &c).ok());
    EXPECT_FALSE(CompressionWorthIt(noise.size(), c.size())) << CompressionTypeName(type);
  }
}

TEST(Compression, WorthItIsOneEighth) {
  EXPECT_FALSE(CompressionWorthIt(0, 0));
  EXPECT_TRUE(CompressionWorthIt(800, 700));
  EXPECT_FALSE(CompressionWorthIt(800, 701));
  EXPECT_TRUE(CompressionWorthIt(7, 6));   // 1/7 saved
  EXPECT_FALSE(CompressionWorthIt(9, 8));  // 1/9 saved
  EXPECT_FALSE(CompressionWorthIt(100, 100));
  EXPECT_FALSE(CompressionWorthIt(100, 120));
}

// Highly compressible large input: exercises Zstd's growing-buffer decode path.
TEST(Compression, LargeHighlyCompressibleRoundTrip) {
  const std::string zeros(8u << 20, '\0');
  for (CompressionType type : kCodecs) ExpectRoundTrip(type, zeros);
  // Every prefix of the (tiny) Zstd form fails cleanly on that path too.
  std::string c;
  ASSERT_TRUE(CompressBlock(CompressionType::kZstd, zeros, &c).ok());
  ASSERT_LT(c.size(), zeros.size() / 64);  // so decoding takes the growing-buffer path
  for (size_t len = 0; len < c.size(); ++len) {
    std::string out;
    EXPECT_TRUE(UncompressBlock(CompressionType::kZstd, Slice(c.data(), len), &out).IsCorruption()) << len;
  }
}

TEST(Compression, UnknownTypeIsRejected) {
  std::string out;
  EXPECT_TRUE(CompressBlock(static_cast<CompressionType>(9), "abc", &out).IsNotSupported());
  Status s = UncompressBlock(static_cast<CompressionType>(9), "abc", &out);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("decompression failed"), std::string::npos) << s.ToString();
}

// Every prefix of a valid compressed block must fail cleanly (or, for codecs without an
// end marker, decode to something only if the length matched). Never a crash.
TEST(Compression, TruncatedInputIsCorruption) {
  std::mt19937_64 rng(kSeed);
  const std::string input = CompressibleBytes(rng, 4096) + RandomBytes(rng, 512);
  for (CompressionType type : kCodecs) {
    std::string c;
    ASSERT_TRUE(CompressBlock(type, input, &c).ok());
    for (size_t len = 0; len < c.size(); ++len) {
      std::string out;
      Status s = UncompressBlock(type, Slice(c.data(), len), &out);
      EXPECT_TRUE(s.IsCorruption()) << CompressionTypeName(type) << " len " << len << " " << s.ToString();
      EXPECT_NE(s.message().find("decompression failed"), std::string::npos);
    }
  }
}

// Flipped bytes may still decode (the codecs carry no checksum; blocks and records do),
// but must never crash, overrun or produce a length other than the stored one.
TEST(Compression, CorruptedInputNeverCrashes) {
  std::mt19937_64 rng(kSeed);
  const std::string input = CompressibleBytes(rng, 16384);
  int corruptions = 0;
  for (CompressionType type : kCodecs) {
    std::string c;
    ASSERT_TRUE(CompressBlock(type, input, &c).ok());
    for (int trial = 0; trial < 2000; ++trial) {
      std::string bad = c;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      std::string out;
      Status s = UncompressBlock(type, bad, &out);
      if (s.ok()) {
        EXPECT_EQ(out.size(), input.size()) << CompressionTypeName(type);
      } else {
        EXPECT_TRUE(s.IsCorruption()) << s.ToString();
        ++corruptions;
      }
    }
  }
  EXPECT_GT(corruptions, 0);
}

TEST(Compression, GarbageIsCorruption) {
  std::mt19937_64 rng(kSeed);
  for (CompressionType type : kCodecs) {
    for (int trial = 0; trial < 500; ++trial) {
      std::string garbage = RandomBytes(rng, 1 + rng() % 300);
      std::string out;
      Status s = UncompressBlock(type, garbage, &out);
      EXPECT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
    }
    std::string out;
    EXPECT_TRUE(UncompressBlock(type, "", &out).IsCorruption()) << CompressionTypeName(type);
  }
}

// A length prefix that disagrees with the data, or is absurd, is rejected without
// allocating what it claims.
TEST(Compression, InconsistentOrHugeLengthIsCorruption) {
  std::mt19937_64 rng(kSeed);
  const std::string input = CompressibleBytes(rng, 16384);
  for (CompressionType type : kCodecs) {
    SCOPED_TRACE(CompressionTypeName(type));
    std::string c;
    ASSERT_TRUE(CompressBlock(type, input, &c).ok());
    Slice rest(c);
    uint32_t stored = 0;
    ASSERT_TRUE(GetVarint32(&rest, &stored));  // Snappy's preamble is a varint32 too
    ASSERT_EQ(stored, input.size());
    for (uint64_t claimed : {uint64_t{0}, uint64_t{stored} - 1, uint64_t{stored} + 1, uint64_t{stored} * 2,
                             uint64_t{200} << 20, (uint64_t{256} << 20) + 1, uint64_t{UINT32_MAX}}) {
      std::string bad;
      PutVarint32(&bad, static_cast<uint32_t>(claimed));
      bad.append(rest.data(), rest.size());
      std::string out;
      Status s = UncompressBlock(type, bad, &out);
      EXPECT_TRUE(s.IsCorruption()) << "claimed " << claimed << ": " << s.ToString();
      EXPECT_LT(out.capacity(), size_t{64} << 20) << "claimed " << claimed;
    }
    // A varint that never ends.
    std::string out;
    EXPECT_TRUE(UncompressBlock(type, std::string(6, '\xff'), &out).IsCorruption());
  }
}

// Zstd: a valid frame followed by bytes that are not a frame is corrupt; concatenated
// frames are accepted when their output totals the stored length, in both decode paths.
TEST(Compression, ZstdTrailingBytesAndConcatenatedFrames) {
  std::mt19937_64 rng(kSeed);
  for (size_t size : {size_t{3000}, size_t{4} << 20}) {
    SCOPED_TRACE(size);
    const std::string input = size < 10000 ? CompressibleBytes(rng, size) : std::string(size, 'z');
    std::string c;
    ASSERT_TRUE(CompressBlock(CompressionType::kZstd, input, &c).ok());
    std::string out;
    EXPECT_TRUE(UncompressBlock(CompressionType::kZstd, c + "xyz", &out).IsCorruption());
    EXPECT_TRUE(UncompressBlock(CompressionType::kZstd, c + std::string(64, 'q'), &out).IsCorruption());
    Slice rest(c);
    uint32_t stored = 0;
    ASSERT_TRUE(GetVarint32(&rest, &stored));
    std::string doubled;
    PutVarint32(&doubled, stored * 2);
    doubled.append(rest.data(), rest.size());
    doubled.append(rest.data(), rest.size());
    Status s = UncompressBlock(CompressionType::kZstd, doubled, &out);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(out == input + input);
    // The same two frames under the single-frame length: output too long.
    std::string wrong;
    PutVarint32(&wrong, stored);
    wrong.append(doubled.data() + (doubled.size() - 2 * rest.size()), 2 * rest.size());
    EXPECT_TRUE(UncompressBlock(CompressionType::kZstd, wrong, &out).IsCorruption());
  }
}

}  // namespace
}  // namespace tidesdb
