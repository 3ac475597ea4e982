// LevelIterator: one sorted InternalIterator over the files of a level past L0 (sorted by
// key, disjoint), with one file open at a time. A Seek reads one file's index and block
// instead of every file's, and the merge above it has one child per level rather than
// one per file.
//
// Errors: a file that cannot be opened, or whose iterator reports an error, leaves the
// iterator invalid with that status until the next Seek*; the files after it are not
// read in its place.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "util/internal_iterator.h"

namespace tidesdb {

// A file of the level: its smallest and largest internal keys (the caller keeps them alive
// as long as the iterator).
struct LevelFile {
  Slice smallest;
  Slice largest;
};

// Opens the i-th file's iterator; *keepalive holds what it reads from (released after the
// iterator is destroyed). May return an iterator that only reports an error.
using LevelFileOpener =
    std::function<std::unique_ptr<InternalIterator>(size_t i, std::shared_ptr<void>* keepalive)>;

// `files` must be in key order and disjoint.
std::unique_ptr<InternalIterator> NewLevelIterator(std::vector<LevelFile> files, LevelFileOpener open);

}  // namespace tidesdb
