#include "sst/compression.h"

#include <lz4.h>
#include <snappy.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <memory>

#include "util/coding.h"

namespace tidesdb {

namespace {

// Upper bounds on what one compressed byte can expand to, so that a stored length beyond
// them is rejected before anything is allocated. Snappy's densest element is a 3-byte copy
// of 64 bytes (~21x); LZ4's is a match extended by 255 bytes per extra length byte.
constexpr size_t kSnappyMaxRatio = 32;
constexpr size_t kLZ4MaxRatio = 256;
// Zstd can expand a few bytes to a whole 128 KiB block, so it has no useful ratio bound.
// Up to this size (or kZstdTrustedRatio times the input) the output is allocated in full
// and decoded in one call; beyond it the output grows only as decoded data arrives.
constexpr size_t kZstdOneShotSize = size_t{1} << 20;
constexpr size_t kZstdTrustedRatio = 64;

Status DecompressionFailed(CompressionType type, Slice detail) {
  return Status::Corruption("decompression failed (" + CompressionTypeName(type) + ")", detail);
}

// Parses the varint32 uncompressed-length prefix (LZ4, Zstd) and checks it against the
// global limit; *payload is what follows it.
Status ParseLengthPrefix(CompressionType type, Slice input, size_t* length, Slice* payload) {
  uint32_t n = 0;
  const char* p = GetVarint32Ptr(input.data(), input.data() + input.size(), &n);
  if (p == nullptr) return DecompressionFailed(type, "bad uncompressed length");
  if (n > kMaxUncompressedBlockSize) return DecompressionFailed(type, "uncompressed length too large");
  *length = n;
  *payload = Slice(p, input.data() + input.size() - p);
  return Status::OK();
}

void AppendLengthPrefix(std::string* output, size_t n) {
  output->clear();
  PutVarint32(output, static_cast<uint32_t>(n));
}

struct ZstdCCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// One context per thread: creating one costs allocations that would dominate the cost of
// compressing a 16 KiB block.
ZSTD_CCtx* ThreadZstdCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree> ctx;
  if (!ctx) {
    ctx.reset(ZSTD_createCCtx());
    if (ctx) {
      ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, kZstdLevel);
      // The varint prefix already records the length.
      ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_contentSizeFlag, 0);
      ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, 0);
    }
  }
  return ctx.get();
}

ZSTD_DCtx* ThreadZstdDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> ctx;
  if (!ctx) ctx.reset(ZSTD_createDCtx());
  return ctx.get();
}

Status CompressSnappy(Slice input, std::string* output) {
  output->clear();
  snappy::Compress(input.data(), input.size(), output);
  return Status::OK();
}

Status UncompressSnappy(Slice input, std::string* output) {
  constexpr CompressionType kType = CompressionType::kSnappy;
  size_t n = 0;
  if (!snappy::GetUncompressedLength(input.data(), input.size(), &n)) {
    return DecompressionFailed(kType, "bad uncompressed length");
  }
  if (n > kMaxUncompressedBlockSize) return DecompressionFailed(kType, "uncompressed length too large");
  if (n > input.size() * kSnappyMaxRatio) {
    return DecompressionFailed(kType, "uncompressed length inconsistent with compressed size");
  }
  output->resize(n);
  // RawUncompress validates every element against the buffer and fails unless it fills
  // exactly n bytes.
  if (!snappy::RawUncompress(input.data(), input.size(), output->data())) {
    return DecompressionFailed(kType, "malformed input");
  }
  return Status::OK();
}

Status CompressLZ4(Slice input, std::string* output) {
  AppendLengthPrefix(output, input.size());
  const size_t prefix = output->size();
  const int bound = LZ4_compressBound(static_cast<int>(input.size()));
  output->resize(prefix + static_cast<size_t>(bound));
  const int n =
      LZ4_compress_default(input.data(), output->data() + prefix, static_cast<int>(input.size()), bound);
  if (n <= 0) return Status::Aborted("compression failed (lz4)");
  output->resize(prefix + static_cast<size_t>(n));
  return Status::OK();
}

Status UncompressLZ4(Slice input, std::string* output) {
  constexpr CompressionType kType = CompressionType::kLZ4;
  size_t n = 0;
  Slice payload;
  Status s = ParseLengthPrefix(kType, input, &n, &payload);
  if (!s.ok()) return s;
  if (payload.empty() || payload.size() > INT_MAX) return DecompressionFailed(kType, "bad payload size");
  if (n > payload.size() * kLZ4MaxRatio) {
    return DecompressionFailed(kType, "uncompressed length inconsistent with compressed size");
  }
  output->resize(n);
  const int got = LZ4_decompress_safe(payload.data(), output->data(), static_cast<int>(payload.size()),
                                      static_cast<int>(n));
  if (got < 0) return DecompressionFailed(kType, "malformed input");
  if (static_cast<size_t>(got) != n) return DecompressionFailed(kType, "length mismatch");
  return Status::OK();
}

Status CompressZstd(Slice input, std::string* output) {
  ZSTD_CCtx* ctx = ThreadZstdCCtx();
  if (ctx == nullptr) return Status::Aborted("compression failed (zstd): out of memory");
  AppendLengthPrefix(output, input.size());
  const size_t prefix = output->size();
  const size_t bound = ZSTD_compressBound(input.size());
  output->resize(prefix + bound);
  const size_t n = ZSTD_compress2(ctx, output->data() + prefix, bound, input.data(), input.size());
  if (ZSTD_isError(n)) return Status::Aborted("compression failed (zstd)", ZSTD_getErrorName(n));
  output->resize(prefix + n);
  return Status::OK();
}

// Decodes into a buffer that grows with the decoded data, up to n + 1 bytes: the spare
// byte is how output longer than the stored length is detected.
Status UncompressZstdStreaming(ZSTD_DCtx* ctx, Slice payload, size_t n, std::string* output) {
  constexpr CompressionType kType = CompressionType::kZstd;
  const size_t limit = n + 1;
  size_t cap = std::min(limit, std::max(kZstdOneShotSize, payload.size() * kZstdTrustedRatio));
  output->resize(cap);
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  ZSTD_outBuffer out{output->data(), cap, 0};
  for (;;) {
    const size_t in_before = in.pos;
    const size_t out_before = out.pos;
    const size_t r = ZSTD_decompressStream(ctx, &out, &in);
    if (ZSTD_isError(r)) return DecompressionFailed(kType, ZSTD_getErrorName(r));
    if (r == 0 && in.pos == in.size) break;  // last frame complete and flushed
    if (out.pos == out.size) {
      if (cap == limit) return DecompressionFailed(kType, "output longer than stored length");
      cap = std::min(limit, cap * 2);
      output->resize(cap);
      out.dst = output->data();
      out.size = cap;
      continue;
    }
    if (in.pos == in_before && out.pos == out_before) return DecompressionFailed(kType, "no progress");
    // r == 0 with input left: another frame follows, as ZSTD_decompressDCtx would accept.
    if (r != 0 && in.pos == in.size) return DecompressionFailed(kType, "truncated input");
  }
  if (out.pos != n) return DecompressionFailed(kType, "length mismatch");
  output->resize(n);
  return Status::OK();
}

Status UncompressZstd(Slice input, std::string* output) {
  constexpr CompressionType kType = CompressionType::kZstd;
  size_t n = 0;
  Slice payload;
  Status s = ParseLengthPrefix(kType, input, &n, &payload);
  if (!s.ok()) return s;
  if (payload.empty()) return DecompressionFailed(kType, "bad payload size");
  ZSTD_DCtx* ctx = ThreadZstdDCtx();
  if (ctx == nullptr) return Status::Aborted("decompression failed (zstd): out of memory");
  ZSTD_DCtx_reset(ctx, ZSTD_reset_session_only);
  if (n > kZstdOneShotSize && n / kZstdTrustedRatio > payload.size()) {
    return UncompressZstdStreaming(ctx, payload, n, output);
  }
  output->resize(n);
  // Fails with "destination too small" if the data is longer than n.
  const size_t got = ZSTD_decompressDCtx(ctx, output->data(), n, payload.data(), payload.size());
  if (ZSTD_isError(got)) return DecompressionFailed(kType, ZSTD_getErrorName(got));
  if (got != n) return DecompressionFailed(kType, "length mismatch");
  return Status::OK();
}

}  // namespace

std::string CompressionTypeName(CompressionType type) {
  switch (type) {
    case CompressionType::kNone:
      return "none";
    case CompressionType::kSnappy:
      return "snappy";
    case CompressionType::kLZ4:
      return "lz4";
    case CompressionType::kZstd:
      return "zstd";
  }
  return "unknown(" + std::to_string(static_cast<unsigned>(type)) + ")";
}

Status CompressBlock(CompressionType type, Slice input, std::string* output) {
  if (input.size() > kMaxUncompressedBlockSize) {
    return Status::InvalidArgument("block too large to compress", std::to_string(input.size()));
  }
  switch (type) {
    case CompressionType::kNone:
      output->assign(input.data(), input.size());
      return Status::OK();
    case CompressionType::kSnappy:
      return CompressSnappy(input, output);
    case CompressionType::kLZ4:
      return CompressLZ4(input, output);
    case CompressionType::kZstd:
      return CompressZstd(input, output);
  }
  return Status::NotSupported("unknown compression type", CompressionTypeName(type));
}

Status UncompressBlock(CompressionType type, Slice input, std::string* output) {
  switch (type) {
    case CompressionType::kNone:
      if (input.size() > kMaxUncompressedBlockSize) {
        return DecompressionFailed(type, "block too large");
      }
      output->assign(input.data(), input.size());
      return Status::OK();
    case CompressionType::kSnappy:
      return UncompressSnappy(input, output);
    case CompressionType::kLZ4:
      return UncompressLZ4(input, output);
    case CompressionType::kZstd:
      return UncompressZstd(input, output);
  }
  return DecompressionFailed(type, "unknown compression type");
}

}  // namespace tidesdb
