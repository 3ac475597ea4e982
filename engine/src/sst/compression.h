// Block compression: the one place that calls the codecs (Snappy, LZ4, Zstd). Key-log
// data blocks and value-log records store the output of CompressBlock; the caller records
// the CompressionType beside it and checksums the compressed bytes.
//
// Compressed forms (compression format version 1):
//
//   kNone    the input bytes unchanged
//   kSnappy  Snappy's raw format, which already begins with the uncompressed length as a
//            varint32
//   kLZ4     varint32 uncompressed length, then one LZ4 block (LZ4_compress_default)
//   kZstd    varint32 uncompressed length, then one Zstd frame at level kZstdLevel,
//            written without the frame's own content-size field and without a checksum
//            (readers accept concatenated frames whose output totals the stored length)
//
// The decompressor never trusts the stored length: it rejects lengths above
// kMaxUncompressedBlockSize, lengths a codec could not have produced from that many
// compressed bytes, and output that is not exactly the stored length. Before decoding it
// allocates at most the codec's maximum expansion of the input (Snappy ~21x, LZ4 ~255x) or,
// for Zstd (which has no useful maximum), max(1 MiB, 64x the input); a Zstd block claiming
// more grows its output only as decoded data actually arrives. So a corrupt length field
// never causes an allocation out of proportion to the bytes read. Every failure is
// Status::Corruption("decompression failed ...").
//
// Thread safety: both functions are safe to call from many threads at once (Zstd contexts
// are per thread).
#pragma once

#include <cstddef>
#include <string>

#include "tidesdb/options.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb {

inline constexpr int kCompressionFormatVersion = 1;

// Largest input CompressBlock accepts and largest output UncompressBlock produces.
inline constexpr size_t kMaxUncompressedBlockSize = size_t{256} << 20;

// Zstd level. Level 1 was measured against level 3 on 16 KiB blocks of sysbench-like rows:
// level 1 compressed slightly better (ratio 2.32 vs 2.27) and ran ~1.3x faster to compress
// and ~1.6x faster to decompress, so the extra effort of level 3 buys nothing on blocks
// this small.
inline constexpr int kZstdLevel = 1;

// Replaces *output with the compressed form of input. InvalidArgument if input is larger
// than kMaxUncompressedBlockSize; NotSupported for an unknown type. Callers decide with
// CompressionWorthIt whether to store the result or the raw bytes.
Status CompressBlock(CompressionType type, Slice input, std::string* output);

// Replaces *output with the decompressed form of input (which came from CompressBlock with
// the same type). Corruption("decompression failed ...") on any malformed input or an
// unknown type; *output is then unspecified.
Status UncompressBlock(CompressionType type, Slice input, std::string* output);

// True if storing `compressed` bytes instead of `raw` bytes saves at least 1/8 of raw
// (exactly: 8 * (raw - compressed) >= raw, and something is saved at all).
inline bool CompressionWorthIt(size_t raw, size_t compressed) {
  return compressed < raw && (raw - compressed) >= raw / 8 + (raw % 8 != 0 ? 1 : 0);
}

// "none", "snappy", "lz4", "zstd" or "unknown(<n>)".
std::string CompressionTypeName(CompressionType type);

}  // namespace tidesdb
