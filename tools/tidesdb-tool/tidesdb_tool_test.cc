// tidesdb-tool commands run in-process against a database built through the public API:
// several column families, flushed SSTables, large values in value logs and a WAL tail.
// Damage is simulated by flipping single bytes; the tool must name the file and offset,
// exit 1, and never change a file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "db/filename.h"
#include "klog_scanner.h"
#include "log_scan.h"
#include "manifest_state.h"
#include "sst/format.h"
#include "sst/value_log.h"
#include "tidesdb/db.h"
#include "tidesdb/write_batch.h"
#include "tool.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_writer.h"
#include "wal_record.h"

namespace tidesdb::tool {
namespace {

struct ToolRun {
  int code = -1;
  std::string out;
  std::string err;
};

ToolRun RunArgs(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  ToolRun r;
  r.code = RunTool(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Flips every bit of the byte at offset.
void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  ASSERT_TRUE(f.good()) << path << " offset " << offset;
  c = static_cast<char>(~c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
  ASSERT_TRUE(f.good());
}

// 2000 + i bytes starting with "large<i>:", the rest incompressible (so the value-log
// record is as long as the value and a flipped byte lands inside it).
std::string LargeValue(int i) {
  std::string v = "large" + std::to_string(i) + ":";
  uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
  while (v.size() < static_cast<size_t>(2000 + i)) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back(static_cast<char>(x >> 56));
  }
  return v;
}

class ToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/tidesdb_tool_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    BuildDatabase();
  }
  void TearDown() override {
    if (std::getenv("TIDESDB_TOOL_TEST_KEEP_DB") != nullptr) {
      std::cout << "database kept in " << dir_ << "\n";
      return;
    }
    std::filesystem::remove_all(dir_);
  }

  // default: 300 small entries in small blocks (several data blocks) and a tombstone;
  // users: large values (value log) and small ones; orders: a CF with deletions only in
  // the WAL tail. Then a WAL tail that is never flushed.
  void BuildDatabase() {
    Options options;
    options.sync_mode = SyncMode::kNone;  // the tool reads files; durability is not under test
    options.default_cf_options.block_size = 1024;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir_, &db).ok());
    ColumnFamilyOptions users_options;
    users_options.value_threshold = 512;
    ColumnFamilyHandle* users = nullptr;
    ColumnFamilyHandle* orders = nullptr;
    ASSERT_TRUE(db->CreateColumnFamily(users_options, "users", &users).ok());
    ASSERT_TRUE(db->CreateColumnFamily(ColumnFamilyOptions(), "orders", &orders).ok());
    ColumnFamilyHandle* def = db->DefaultColumnFamily();
    WriteOptions wo;
    for (int i = 0; i < 300; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%05d", i);
      ASSERT_TRUE(db->Put(wo, def, key, "value-" + std::to_string(i) + std::string(40, 'v')).ok());
    }
    ASSERT_TRUE(db->Delete(wo, def, "key00007").ok());
    for (int i = 0; i < 6; ++i) {
      ASSERT_TRUE(db->Put(wo, users, "user" + std::to_string(i), LargeValue(i)).ok());
      ASSERT_TRUE(db->Put(wo, users, "small" + std::to_string(i), "tiny").ok());
    }
    ASSERT_TRUE(db->Put(wo, orders, "order1", "pending").ok());
    ASSERT_TRUE(db->Flush(FlushOptions(), nullptr).ok());

    // The WAL tail: several records, a batch across CFs with every entry kind.
    ASSERT_TRUE(db->Put(wo, def, "tail-key-1", "tail-value-1").ok());
    WriteBatch batch;
    batch.Put(users, "tail-user", "alice");
    batch.Delete(orders, "order1");
    batch.PutWithExpiry(def, "tail-ttl", "short-lived", 4102444800);  // 2100-01-01
    batch.Put(def, std::string("bin\x00\x01\xff", 6), "binary key");
    ASSERT_TRUE(db->Write(wo, &batch).ok());
    ASSERT_TRUE(db->Put(wo, def, "tail-key-2", "tail-value-2").ok());
    ASSERT_TRUE(db->Put(wo, def, "tail-key-3", "tail-value-3").ok());
    db.reset();
  }

  ToolRun Cmd(const std::string& command, const std::string& path, bool hex = false) {
    std::vector<std::string> args;
    if (hex) args.push_back("--hex");
    args.push_back(command);
    args.push_back(path);
    return RunArgs(args);
  }

  // The live files, from the manifest.
  ManifestState State() {
    std::string manifest;
    EXPECT_TRUE(ReadCurrent(dir_, &manifest).ok());
    std::ostringstream sink_out;
    ProblemSink sink(&sink_out);
    ManifestState state;
    EXPECT_TRUE(ReplayManifest(JoinPath(dir_, manifest), &state, &sink));
    EXPECT_EQ(sink.errors(), 0u) << sink_out.str();
    return state;
  }
  const ColumnFamilyState& Cf(const ManifestState& state, const std::string& name) {
    for (const auto& [id, cf] : state.cfs) {
      if (cf.name == name) return cf;
    }
    ADD_FAILURE() << "no column family " << name;
    return state.cfs.begin()->second;
  }
  std::string FirstKeyLog(const std::string& cf_name) {
    const ManifestState state = State();
    const ColumnFamilyState& cf = Cf(state, cf_name);
    for (const auto& level : cf.levels) {
      if (!level.empty()) return KeyLogFileName(dir_, level.front().file_number);
    }
    ADD_FAILURE() << "no key log in " << cf_name;
    return "";
  }
  std::string NewestWal() {
    uint64_t newest = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      uint64_t number;
      FileType type;
      if (ParseFileName(e.path().filename().string(), &number, &type) && type == FileType::kWal)
        newest = std::max(newest, number);
    }
    EXPECT_NE(newest, 0u);
    return WalFileName(dir_, newest);
  }
  std::map<std::string, std::string> FileContents() {
    std::map<std::string, std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      files[e.path().filename().string()] = ReadAll(e.path().string());
    return files;
  }

  std::string dir_;
};

TEST_F(ToolTest, LsShowsColumnFamiliesFilesAndWal) {
  ToolRun r = Cmd("ls", dir_);
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_NE(r.out.find("CURRENT names MANIFEST-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("column family 0 'default'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'users'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'orders'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("value_threshold=512"), std::string::npos) << r.out;
  const ManifestState state = State();
  const ColumnFamilyState& def = Cf(state, "default");
  ASSERT_FALSE(def.levels.empty());
  ASSERT_FALSE(def.levels[0].empty());
  const FileMetaData& f = def.levels[0][0];
  // Each key log with its size, key range, sequence range, entries and tombstones.
  const std::string klog = BaseName(KeyLogFileName(dir_, f.file_number));
  EXPECT_NE(r.out.find(klog + " " + std::to_string(f.file_size) + " bytes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("keys 'key00000' @"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("entries 300, tombstones 1"), std::string::npos) << r.out;
  const ColumnFamilyState& users = Cf(state, "users");
  ASSERT_EQ(users.value_logs.size(), 1u);
  EXPECT_NE(r.out.find(BaseName(ValueLogFileName(dir_, users.value_logs[0].number)) + " " +
                       std::to_string(users.value_logs[0].size) + " bytes"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(BaseName(NewestWal()) + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(live: replayed at open)"), std::string::npos) << r.out;
}

TEST_F(ToolTest, VerifyCleanDatabase) {
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_EQ(r.out.find("error:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 0 errors, 0 warnings: clean"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok " + FirstKeyLog("users")), std::string::npos) << r.out;
  // Single files verify on their own too.
  EXPECT_EQ(Cmd("verify", FirstKeyLog("default")).code, kExitOk);
  EXPECT_EQ(Cmd("verify", NewestWal()).code, kExitOk);
}

TEST_F(ToolTest, DumpWalShowsEveryEntry) {
  ToolRun r = Cmd("dump-wal", NewestWal());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_NE(r.out.find("put cf 0 key 'tail-key-1' value 12 bytes 'tail-value-1'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("put cf 1 key 'tail-user' value 5 bytes 'alice'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("del cf 2 key 'order1'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("put-with-expiry cf 0 key 'tail-ttl' expire_at 4102444800 (2100-01-01T00:00:00Z)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("key 'bin\\x00\\x01\\xff'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first seq"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 4 records, 7 entries"), std::string::npos) << r.out;

  ToolRun hex = Cmd("dump-wal", NewestWal(), /*hex=*/true);
  EXPECT_EQ(hex.code, kExitOk);
  EXPECT_NE(hex.out.find("key 0x62696e0001ff"), std::string::npos) << hex.out;
}

// Two-phase commit records (prepare, commit prepared, rollback prepared), written with the
// engine's LogWriter in the layouts recovery reads.
TEST_F(ToolTest, DumpWalShowsTwoPhaseCommitRecords) {
  const std::string wal = WalFileName(dir_, 900);
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(Env::Default()->NewWritableFile(wal, EnvOptions(), &file).ok());
    LogWriter writer(std::move(file), LogKind::kWal, 900);
    WriteBatch batch;
    batch.Put(1, "prepared-key", "v");
    batch.Delete(2, "gone");
    std::string xid;
    PutLengthPrefixedSlice(&xid, "xid-1");
    std::string prepare = xid + batch.Data();
    std::string commit = xid;
    PutFixed64(&commit, 500);
    commit += batch.Data();
    std::string rollback;
    PutLengthPrefixedSlice(&rollback, "xid-2");
    ASSERT_TRUE(writer.AddRecord(kWalPrepareRecord, prepare).ok());
    ASSERT_TRUE(writer.AddRecord(kWalCommitPreparedRecord, commit).ok());
    ASSERT_TRUE(writer.AddRecord(kWalRollbackPreparedRecord, rollback).ok());
    ASSERT_TRUE(writer.Close().ok());
  }
  ToolRun r = Cmd("dump-wal", wal);
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_NE(r.out.find("type 2 (prepare), 34 bytes, xid 'xid-1', 2 entries\n"
                       "  put cf 1 key 'prepared-key' value 1 bytes 'v'\n"
                       "  del cf 2 key 'gone'\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("type 3 (commit prepared), 42 bytes, xid 'xid-1', first seq 500, 2 entries\n"
                       "  seq 500 put cf 1 key 'prepared-key'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("type 4 (rollback prepared), 6 bytes, xid 'xid-2'\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 3 records, 4 entries, sequences 500..501"), std::string::npos) << r.out;
  ToolRun v = Cmd("verify", wal);
  EXPECT_EQ(v.code, kExitOk) << v.out;
}

// Writes with disable_wal leave a record naming the sequences they took.
TEST_F(ToolTest, DumpWalShowsUnloggedSequences) {
  SequenceNumber seq = 0;
  {
    std::unique_ptr<DB> db;
    Options options;
    options.sync_mode = SyncMode::kNone;
    ASSERT_TRUE(DB::Open(options, dir_, &db).ok());
    seq = db->LatestSequence();
    WriteOptions unlogged;
    unlogged.disable_wal = true;
    ASSERT_TRUE(db->Put(unlogged, db->DefaultColumnFamily(), "unlogged-1", "v").ok());
    ASSERT_TRUE(db->Put(unlogged, db->DefaultColumnFamily(), "unlogged-2", "v").ok());
    ASSERT_TRUE(db->Put(WriteOptions(), db->DefaultColumnFamily(), "logged", "v").ok());
  }
  ToolRun r = Cmd("dump-wal", NewestWal());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_NE(r.out.find("type 5 (unlogged sequences), 16 bytes, sequences " + std::to_string(seq + 1) + ".." +
                       std::to_string(seq + 2) + " not logged\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("first seq " + std::to_string(seq + 3) + ", 1 entries"), std::string::npos) << r.out;
  ToolRun v = Cmd("verify", dir_);
  EXPECT_EQ(v.code, kExitOk) << v.out;
}

TEST_F(ToolTest, DumpSstShowsPropertiesIndexAndEntries) {
  ToolRun r = Cmd("dump-sst", FirstKeyLog("default"));
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_NE(r.out.find("properties:\n  cf_id 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("entries 300, tombstones 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("index: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  block 1: offset "), std::string::npos) << r.out;  // several blocks
  EXPECT_NE(r.out.find("'key00007' @"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" del\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'key00299' @"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 300 entries"), std::string::npos) << r.out;

  ToolRun users = Cmd("dump-sst", FirstKeyLog("users"));
  EXPECT_EQ(users.code, kExitOk) << users.out;
  EXPECT_NE(users.out.find("'user0' @"), std::string::npos) << users.out;
  EXPECT_NE(users.out.find("put-vptr -> vlog #"), std::string::npos) << users.out;
  EXPECT_NE(users.out.find("put value 4 bytes 'tiny'"), std::string::npos) << users.out;
}

TEST_F(ToolTest, DumpVlogAndManifest) {
  const ManifestState state = State();
  const ColumnFamilyState& users = Cf(state, "users");
  ASSERT_EQ(users.value_logs.size(), 1u);
  ToolRun v = Cmd("dump-vlog", ValueLogFileName(dir_, users.value_logs[0].number));
  EXPECT_EQ(v.code, kExitOk) << v.out;
  EXPECT_NE(v.out.find("value 2003 bytes 'large3:"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("summary: 6 records"), std::string::npos) << v.out;

  ToolRun m = Cmd("dump-manifest", state.manifest_path);
  EXPECT_EQ(m.code, kExitOk) << m.out;
  EXPECT_NE(m.out.find("VersionEdit {"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("add_column_family: cf 1 name 'users'"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("new_value_log: cf 1"), std::string::npos) << m.out;
}

TEST_F(ToolTest, FlippedSstBlockByteIsReportedWithFileAndOffset) {
  const std::string klog = FirstKeyLog("default");
  std::unique_ptr<KlogScanner> scanner;
  ASSERT_TRUE(KlogScanner::Open(klog, &scanner).ok());
  ASSERT_GE(scanner->blocks().size(), 4u);
  const uint64_t block3 = scanner->blocks()[3].handle.offset();
  scanner.reset();
  FlipByte(klog, 10);  // inside data block 0, which starts at offset 0
  FlipByte(klog, block3 + 7);
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;
  // Every damaged block is reported, not just the first.
  EXPECT_NE(r.out.find("error: " + klog + ": offset 0: block checksum mismatch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error: " + klog + ": offset " + std::to_string(block3) + ": block checksum mismatch"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("DAMAGED"), std::string::npos) << r.out;
  // The dump reports the bad block and still shows the entries of the others.
  ToolRun d = Cmd("dump-sst", klog);
  EXPECT_EQ(d.code, kExitDamaged) << d.out;
  EXPECT_NE(d.out.find("error: " + klog + ": offset 0"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("'key00299' @"), std::string::npos) << d.out;
}

TEST_F(ToolTest, FlippedValueLogByteIsReportedWithFileAndOffset) {
  const ManifestState state = State();
  const ColumnFamilyState& users = Cf(state, "users");
  ASSERT_EQ(users.value_logs.size(), 1u);
  const std::string vlog = ValueLogFileName(dir_, users.value_logs[0].number);
  const uint64_t first_record = 24;  // after the value-log header
  FlipByte(vlog, first_record + 100);
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;
  EXPECT_NE(r.out.find("error: " + vlog + ": offset 24: value record checksum mismatch"), std::string::npos)
      << r.out;
  EXPECT_EQ(Cmd("dump-vlog", vlog).code, kExitDamaged);
}

// Rewrites the fixed32 format version at `version_at` and the masked CRC32C at `crc_at` of
// the `covered` bytes from `from`, as a newer writer would have.
void RewriteVersion(const std::string& path, uint64_t version_at, uint32_t version, uint64_t from,
                    uint64_t covered, uint64_t crc_at) {
  std::string data = ReadAll(path);
  ASSERT_GE(data.size(), crc_at + 4);
  EncodeFixed32(data.data() + version_at, version);
  EncodeFixed32(data.data() + crc_at, crc32c::Mask(crc32c::Value(data.data() + from, covered)));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  ASSERT_TRUE(out.good());
}

// A key log and a value log of a newer format version are not damage: verify says which
// files it could not check and why, and does not call the database damaged.
TEST_F(ToolTest, FilesOfANewerFormatAreUnsupportedNotDamaged) {
  const std::string klog = FirstKeyLog("default");
  const uint64_t footer = std::filesystem::file_size(klog) - kFooterSize;
  RewriteVersion(klog, footer + Footer::kHandlesSize, kFormatVersion + 1, footer, Footer::kHandlesSize + 4,
                 footer + Footer::kHandlesSize + 4);
  const ManifestState state = State();
  const std::string vlog = ValueLogFileName(dir_, Cf(state, "users").value_logs.at(0).number);
  RewriteVersion(vlog, 8, kValueLogFormatVersion + 1, 0, 20, 20);
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;  // not verified: "could not be read"
  EXPECT_EQ(r.out.find("error:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unsupported: " + klog + ": key log format version 2 was written by a newer TideSQL"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("unsupported: " + vlog + ": value log format version 2 was written by a newer TideSQL"),
      std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(", 0 errors, 0 warnings, 2 of a newer format not checked: NOT VERIFIED (newer TideSQL)"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("DAMAGED"), std::string::npos) << r.out;
}

TEST_F(ToolTest, DamagedMiddleWalRecordIsAnErrorTornTailAWarning) {
  const std::string wal = NewestWal();
  std::vector<uint64_t> offsets;
  LogScanResult scan = ScanLog(
      wal, LogKind::kWal, [&](uint64_t offset, uint8_t, const std::string&) { offsets.push_back(offset); });
  ASSERT_TRUE(scan.status.ok());
  ASSERT_EQ(offsets.size(), 4u);

  // Damage to a record with valid ones after it (the WAL of a clean close is sealed: a
  // sync mark at its end claims every record): an error naming the record's offset.
  FlipByte(wal, offsets[1] + 20);
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;
  EXPECT_NE(r.out.find("error: " + wal + ": offset " + std::to_string(offsets[1])), std::string::npos)
      << r.out;
  ToolRun d = Cmd("dump-wal", wal);
  EXPECT_EQ(d.code, kExitDamaged) << d.out;
  EXPECT_NE(d.out.find("'tail-key-1'"), std::string::npos) << d.out;  // the records before it
  FlipByte(wal, offsets[1] + 20);                                     // repaired

  // A torn tail: the last record cut short. Recoverable, so a warning and exit 0.
  std::filesystem::resize_file(wal, offsets[3] + kRecordHeaderSize + 2);
  ToolRun torn = Cmd("verify", dir_);
  EXPECT_EQ(torn.code, kExitOk) << torn.out;
  EXPECT_NE(torn.out.find("warning: " + wal + ": offset " + std::to_string(offsets[3]) + ": torn tail"),
            std::string::npos)
      << torn.out;
  ToolRun dump = Cmd("dump-wal", wal);
  EXPECT_EQ(dump.code, kExitOk) << dump.out;
  EXPECT_NE(dump.out.find("torn tail"), std::string::npos) << dump.out;
  EXPECT_EQ(dump.out.find("'tail-key-3'"), std::string::npos) << dump.out;

  // Now unsealed and with no sync claimed past the header (sync NONE): damage followed by
  // valid records is what a power loss leaves (a later page written back, an earlier one
  // not), so recovery would cut it and verify warns.
  FlipByte(wal, offsets[1] + 20);
  ToolRun lost = Cmd("verify", dir_);
  EXPECT_EQ(lost.code, kExitOk) << lost.out;
  EXPECT_NE(
      lost.out.find("warning: " + wal + ": offset " + std::to_string(offsets[1]) + ": lost unsynced write"),
      std::string::npos)
      << lost.out;
}

// Recovery truncates the torn tail of the newest WAL only; in an older live WAL the same
// damage fails recovery, so verify reports it as an error. A WAL whose header names
// another log is an error as well.
TEST_F(ToolTest, TornTailOfAnOlderLiveWalIsAnError) {
  const std::string old_wal = NewestWal();
  uint64_t old_number = 0;
  FileType type;
  ASSERT_TRUE(ParseFileName(BaseName(old_wal), &old_number, &type));
  const std::string new_wal = WalFileName(dir_, old_number + 100);
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(Env::Default()->NewWritableFile(new_wal, EnvOptions(), &file).ok());
    LogWriter writer(std::move(file), LogKind::kWal, old_number + 100);
    WriteBatch batch;
    batch.Put(uint32_t{0}, "later", "x");
    std::string payload;
    PutFixed64(&payload, 1000);
    payload += batch.Data();
    ASSERT_TRUE(writer.AddRecord(kWalWriteBatchRecord, payload).ok());
    ASSERT_TRUE(writer.Close().ok());
  }
  EXPECT_EQ(Cmd("verify", dir_).code, kExitOk);
  std::filesystem::resize_file(old_wal, std::filesystem::file_size(old_wal) - 3);
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;
  EXPECT_NE(r.out.find("error: " + old_wal + ": offset "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a WAL that is not the newest"), std::string::npos) << r.out;

  std::filesystem::rename(new_wal, WalFileName(dir_, old_number + 200));
  ToolRun renamed = Cmd("verify", WalFileName(dir_, old_number + 200));
  EXPECT_EQ(renamed.code, kExitDamaged) << renamed.out;
  EXPECT_NE(renamed.out.find(": offset 0: header names log " + std::to_string(old_number + 100)),
            std::string::npos)
      << renamed.out;
}

TEST_F(ToolTest, MissingAndResizedFilesAreReported) {
  const ManifestState state = State();
  const ColumnFamilyState& users = Cf(state, "users");
  ASSERT_EQ(users.value_logs.size(), 1u);
  const std::string vlog = ValueLogFileName(dir_, users.value_logs[0].number);
  std::filesystem::remove(vlog);
  const std::string klog = FirstKeyLog("orders");
  {
    std::ofstream append(klog, std::ios::app | std::ios::binary);
    append << "x";
  }
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;
  EXPECT_NE(r.out.find("error: " + vlog + ": listed in the manifest but missing"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("error: " + klog + ": " + std::to_string(std::filesystem::file_size(klog)) +
                       " bytes on disk, the manifest records"),
            std::string::npos)
      << r.out;
}

TEST_F(ToolTest, CurrentNamingAMissingManifestIsAnError) {
  const ManifestState state = State();
  std::filesystem::remove(state.manifest_path);
  ToolRun r = Cmd("verify", dir_);
  EXPECT_EQ(r.code, kExitDamaged) << r.out;
  EXPECT_NE(r.out.find("error: " + CurrentFileName(dir_) + ": names " + BaseName(state.manifest_path) +
                       ", which does not exist"),
            std::string::npos)
      << r.out;
  // Without a manifest the key logs, value logs and WALs are still checked one by one.
  EXPECT_NE(r.out.find("ok " + NewestWal()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".klog: 300 entries"), std::string::npos) << r.out;
}

TEST_F(ToolTest, CommandsNeverModifyFiles) {
  std::filesystem::resize_file(NewestWal(), std::filesystem::file_size(NewestWal()) - 3);  // a torn tail
  FlipByte(FirstKeyLog("default"), 10);
  const auto before = FileContents();
  for (const char* command : {"ls", "verify"}) Cmd(command, dir_);
  Cmd("dump-wal", NewestWal());
  Cmd("dump-sst", FirstKeyLog("default"));
  Cmd("dump-manifest", State().manifest_path);
  EXPECT_TRUE(before == FileContents());
}

// Random single-byte damage anywhere: no command crashes or reports a usage error, and
// damage to a key log or value log (every byte of which is checksummed) always fails
// verify. Seed: TIDESDB_TOOL_TEST_SEED, printed on every run.
TEST_F(ToolTest, RandomDamageIsReportedAndNeverCrashes) {
  const char* env_seed = std::getenv("TIDESDB_TOOL_TEST_SEED");
  const uint64_t seed = env_seed != nullptr ? std::strtoull(env_seed, nullptr, 10) : std::random_device()();
  std::cout << "TIDESDB_TOOL_TEST_SEED=" << seed << "\n";
  std::mt19937_64 rng(seed);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    if (std::filesystem::file_size(e.path()) > 0) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for (int iteration = 0; iteration < 60; ++iteration) {
    const std::string& path = files[rng() % files.size()];
    const std::string original = ReadAll(path);
    const uint64_t offset = rng() % original.size();
    FlipByte(path, offset);
    SCOPED_TRACE(path + " offset " + std::to_string(offset) + " seed " + std::to_string(seed));
    uint64_t number = 0;
    FileType type = FileType::kUnknown;
    ParseFileName(BaseName(path), &number, &type);
    ToolRun v = Cmd("verify", dir_);
    EXPECT_TRUE(v.code == kExitOk || v.code == kExitDamaged) << v.out;
    if (type == FileType::kKeyLog || type == FileType::kValueLog) {
      EXPECT_EQ(v.code, kExitDamaged) << v.out;
      EXPECT_NE(v.out.find("error: " + path), std::string::npos) << v.out;
    }
    const char* dump = type == FileType::kWal        ? "dump-wal"
                       : type == FileType::kKeyLog   ? "dump-sst"
                       : type == FileType::kValueLog ? "dump-vlog"
                       : type == FileType::kManifest ? "dump-manifest"
                                                     : "ls";
    ToolRun d = Cmd(dump, std::string(dump) == "ls" ? dir_ : path);
    EXPECT_TRUE(d.code == kExitOk || d.code == kExitDamaged) << d.out;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << original;
  }
  EXPECT_EQ(Cmd("verify", dir_).code, kExitOk);
}

TEST_F(ToolTest, UsageErrors) {
  EXPECT_EQ(RunArgs({}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"frobnicate", dir_}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"verify"}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"--bogus", "verify", dir_}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"verify", dir_ + "/no-such-dir"}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"ls", NewestWal()}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"dump-sst", dir_ + "/000999.klog"}).code, kExitUsage);
  EXPECT_EQ(RunArgs({"verify", CurrentFileName(dir_)}).code, kExitUsage);
  ToolRun help = RunArgs({"--help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_NE(help.out.find("usage: tidesdb-tool"), std::string::npos);
}

}  // namespace
}  // namespace tidesdb::tool
