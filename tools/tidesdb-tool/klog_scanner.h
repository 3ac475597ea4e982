// KlogScanner: walks an SSTable key log (sst/format.h) block by block, from the footer and
// the index, so the tool can show the file's structure and keep going past a damaged data
// block (TableReader, the engine's reader, stops at the first one). Every block read is
// checksum-verified with the library's ReadBlock and decoded with its Block.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sst/format.h"
#include "tidesdb/env.h"
#include "tidesdb/slice.h"
#include "tidesdb/status.h"

namespace tidesdb::tool {

struct KlogBlock {
  BlockHandle handle;
  std::string index_key;  // the index entry's key: last key of the block <= it < next block's first
};

class KlogScanner {
 public:
  // Reads and checks the footer, the properties block and the index block. Fails only if
  // the footer or the index is unusable (then no data block can be found); a bad
  // properties block is kept in properties_status().
  static Status Open(const std::string& path, std::unique_ptr<KlogScanner>* out);

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return file_size_; }
  const Footer& footer() const { return footer_; }
  const TableProperties& properties() const { return props_; }
  const Status& properties_status() const { return props_status_; }
  // The data blocks the index lists, in file order.
  const std::vector<KlogBlock>& blocks() const { return blocks_; }
  // Where the data blocks end (the first meta block).
  uint64_t data_end() const { return data_end_; }

  using EntryFn = std::function<void(Slice internal_key, Slice value)>;
  // Reads data block i and calls fn for each of its entries in order. *compression gets
  // the trailer's compression type byte. Corruption "<path>: offset <block>: <what>" if the
  // block lies outside the data area, fails its checksum or does not decode; entries
  // decoded before the damage have been delivered.
  Status ScanBlock(size_t i, const EntryFn& fn, uint8_t* compression) const;

 private:
  KlogScanner() = default;

  std::string path_;
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t file_size_ = 0;
  Footer footer_;
  TableProperties props_;
  Status props_status_;
  std::vector<KlogBlock> blocks_;
  uint64_t data_end_ = 0;
};

}  // namespace tidesdb::tool
