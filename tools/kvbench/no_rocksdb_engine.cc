// Linked instead of rocksdb_engine.cc when kvbench is built without RocksDB
// (-DWITH_ROCKSDB_BENCH=OFF, or librocksdb-dev not found): kvbench then runs TidesDB alone
// and says so in its output.
#include "engine.h"

namespace kvbench {

std::unique_ptr<KvEngine> NewRocksdbEngine() { return nullptr; }
bool RocksdbAvailable() { return false; }
std::string RocksdbVersion() { return ""; }

}  // namespace kvbench
