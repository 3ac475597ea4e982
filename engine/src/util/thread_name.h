// Names for the library's background threads, so that `top -H`, `ps -L`, perf and gdb tell
// a flush from a compaction from a server connection (all of them otherwise carry the
// host process's name, e.g. "mariadbd").
#pragma once

#include <string>

namespace tidesdb {

// Names the calling thread. Linux keeps at most 15 bytes: a longer name is cut there.
// Best effort: does nothing where the platform has no thread names.
void SetCurrentThreadName(const char* name);

// The calling thread's name, or "" where the platform has none.
std::string CurrentThreadName();

}  // namespace tidesdb
