// Crash tests: acknowledged commits survive, and nothing is ever half applied.
//
//   SigkillTest      a child process writes multi-CF batches from two threads and is killed
//                    with SIGKILL at a random moment, round after round, on the same
//                    database. kill -9 is not a power loss: in every sync mode each batch
//                    acknowledged before the kill must be there after the restart.
//   PowerLossTest    in-process, through FaultInjectionEnv: the filesystem "dies" while
//                    writers run, then unsynced data is dropped, torn, or lost page by page
//                    (a later page kept after a lost one). FULL keeps every acknowledged
//                    batch; NONE and INTERVAL keep a prefix of the commit order.
//   CrashPointTest   a scripted workload (open, create CFs, write, flush, reopen, write) is
//                    cut by a power loss right after its Nth file-system operation, for a
//                    seeded sample of N; recovery must always succeed and lose nothing
//                    acknowledged (FULL) or only a suffix (NONE).
//   GcCrashPointTest the same, with the power loss inside a compaction that relocates
//                    live values out of mostly dead value logs and deletes dead ones.
//
// SigkillTest also runs with value-log GC made eager (GcOptions), and checks that the child
// really collected value logs (relocated values or deleted dead logs) between kills.
//
// The workload and its checker are in testutil/batch_workload.h. Randomized parts print a
// seed; rerun with TIDESDB_CRASH_SEED=<seed>. TIDESDB_CRASH_ROUNDS=<n> sets the rounds of
// the kill and power-loss tests (longer soaks), TIDESDB_CRASH_POINTS the crash points.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "env/fault_injection_env.h"
#include "testutil/batch_workload.h"
#include "testutil/injecting_env.h"
#include "testutil/test_util.h"
#include "tidesdb/db.h"

namespace tidesdb {
namespace {

using test::AckLog;
using test::BatchState;
using test::BatchWorkload;
using test::SyncModeName;

// Small buffers, so that memtable switches, WAL rotation and flushes happen all the time.
Options CrashOptions(SyncMode mode, bool unified) {
  Options o;
  o.sync_mode = mode;
  o.sync_interval_micros = 2000;
  o.unified_memtable = unified;
  o.unified_memtable_write_buffer_size = 128 << 10;
  o.default_cf_options.write_buffer_size = 64 << 10;
  o.default_cf_options.block_size = 4 << 10;
  o.block_cache_size = 1 << 20;
  o.flush_threads = 1;
  o.compaction_threads = 1;
  o.log_level = LogLevel::kWarn;
  return o;
}

// Value-log GC as eager as it gets: any garbage at all makes a log collectable, and small
// level targets keep compactions (which relocate) running.
// Tiny memtables: a batch's delete (8 batches later) then often lands in a later memtable
// than its put, so flushed value logs do hold garbage (a flush drops a put whose delete is
// in the same memtable).
Options GcOptions(Options o) {
  o.unified_memtable_write_buffer_size = 24 << 10;
  o.default_cf_options.write_buffer_size = 16 << 10;
  o.default_cf_options.l1_file_count_trigger = 2;
  o.default_cf_options.value_log_gc_threshold = 0.05;
  o.default_cf_options.level_size_base = 256 << 10;
  o.default_cf_options.target_file_size = 64 << 10;
  return o;
}

uint64_t StatFromProperty(DB* db, const std::string& name) {
  std::string v;
  if (!db->GetProperty(nullptr, "tidesdb.stats", &v)) return 0;
  size_t pos = v.find(" " + name + "=");
  return pos == std::string::npos ? 0 : std::strtoull(v.c_str() + pos + name.size() + 2, nullptr, 10);
}

std::string SetDifference(const std::set<uint64_t>& a, const std::set<uint64_t>& b) {
  size_t n = 0;
  std::string list;
  for (uint64_t id : a) {
    if (b.count(id) != 0) continue;
    if (n++ < 5) list += " " + BatchWorkload::Key(id).substr(1);
  }
  return n == 0 ? "" : std::to_string(n) + " batch(es):" + list;
}

// ------------------------------------------------------------------------------ SIGKILL

struct KillParam {
  SyncMode mode;
  bool unified;
  bool gc = false;  // GcOptions
};

class SigkillTest : public ::testing::TestWithParam<KillParam> {};

// Never returns. Reports each batch id on fd after Write returned OK; on any error prints it
// and exits non-zero, which the parent reports.
// If progress_file is not empty, the child keeps its value-log GC work so far (bytes
// relocated plus value logs deleted) in its first 8 bytes (one pwrite, so a kill never
// leaves it torn).
[[noreturn]] void ChildWriter(const Options& options, const std::string& dir, uint64_t round, int fd,
                              uint64_t max_per_writer, const std::string& progress_file) {
  auto die = [](const std::string& what) {
    std::fprintf(stderr, "crash-test child: %s\n", what.c_str());
    std::fflush(stderr);
    _exit(3);
  };
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir, &db);
  if (!s.ok()) die("open: " + s.ToString());
  std::vector<ColumnFamilyHandle*> cfs;
  s = BatchWorkload::OpenColumnFamilies(db.get(), &cfs);
  if (!s.ok()) die("create column families: " + s.ToString());
  std::mutex pipe_mu;
  std::vector<std::thread> writers;
  if (!progress_file.empty()) {
    std::thread([&db, progress_file] {
      int pf = ::open(progress_file.c_str(), O_WRONLY | O_CREAT, 0644);
      while (pf >= 0) {
        uint64_t relocated = StatFromProperty(db.get(), "vlog_relocated_bytes") +
                             StatFromProperty(db.get(), "vlog_files_deleted");
        if (::pwrite(pf, &relocated, sizeof(relocated), 0) != static_cast<ssize_t>(sizeof(relocated)))
          _exit(5);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }).detach();
  }
  for (uint64_t w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      WriteBatch batch;
      for (uint64_t n = 0; n < max_per_writer; ++n) {
        const uint64_t id = BatchWorkload::MakeId(round, w, n);
        BatchWorkload::Build(id, cfs, &batch);
        Status ws = db->Write(WriteOptions(), &batch);
        if (!ws.ok()) die("write: " + ws.ToString());
        std::lock_guard<std::mutex> l(pipe_mu);
        if (::write(fd, &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(4);  // parent gone
      }
    });
  }
  for (auto& t : writers) t.join();
  // Done early: wait for the kill, as a busy server would.
  while (true) ::pause();
}

// Reads 8-byte ids from fd into *acked until the deadline (or EOF when deadline is null).
void ReadAcks(int fd, std::string* carry, std::set<uint64_t>* acked,
              const std::chrono::steady_clock::time_point* deadline) {
  char buf[4096];
  while (true) {
    int timeout_ms = -1;
    if (deadline != nullptr) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      timeout_ms = static_cast<int>(left.count());
    }
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EOF: the child is gone
    carry->append(buf, static_cast<size_t>(n));
    size_t whole = carry->size() / 8 * 8;
    for (size_t i = 0; i < whole; i += 8) {
      uint64_t id;
      std::memcpy(&id, carry->data() + i, 8);
      acked->insert(id);
    }
    carry->erase(0, whole);
  }
}

TEST_P(SigkillTest, AcknowledgedBatchesSurviveKillNine) {
  const KillParam param = GetParam();
  const Options base = CrashOptions(param.mode, param.unified);
  const Options options = param.gc ? GcOptions(base) : base;
  const uint64_t seed = test::SeedFromEnv("TIDESDB_CRASH_SEED");
  // Unified memtables are the default configuration: they get the most rounds.
  const int rounds = test::IntFromEnv("TIDESDB_CRASH_ROUNDS", param.unified && !param.gc ? 10 : 5);
  std::mt19937_64 rng(seed);
  test::ScratchDir dir(std::string("crash_kill_") + SyncModeName(param.mode) + (param.unified ? "_u" : "_p") +
                       (param.gc ? "_gc" : ""));
  const std::string progress_file = param.gc ? dir.path() + ".gc-progress" : "";
  uint64_t relocated_total = 0;

  std::set<uint64_t> all_acked, prev_applied;
  size_t total_acked = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round));
    // Kills land anywhere: inside recovery (short delays) or amid writes and flushes.
    // With GC, rounds run longer, so that flushes and compactions (which collect) happen.
    const int delay_ms = static_cast<int>(
        rng() % 8 == 0 ? rng() % 40 : (param.gc ? 150 : 40) + rng() % (param.gc ? 450 : 260));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::fflush(nullptr);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ChildWriter(options, dir.path(), static_cast<uint64_t>(round) + 1, fds[1],
                  param.mode == SyncMode::kFull ? 3000 : 6000, progress_file);
    }
    ::close(fds[1]);
    std::set<uint64_t> acked;
    std::string carry;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms);
    ReadAcks(fds[0], &carry, &acked, &deadline);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ReadAcks(fds[0], &carry, &acked, nullptr);  // what the child reported before it died
    ::close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the child stopped on its own (exit code " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
        << "); its error is printed above";
    total_acked += acked.size();
    all_acked.insert(acked.begin(), acked.end());
    if (param.gc) {
      uint64_t relocated = 0;
      int pf = ::open(progress_file.c_str(), O_RDONLY);
      if (pf >= 0) {
        if (::pread(pf, &relocated, sizeof(relocated), 0) != static_cast<ssize_t>(sizeof(relocated)))
          relocated = 0;
        ::close(pf);
        ::unlink(progress_file.c_str());
      }
      relocated_total += relocated;
    }

    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "recovery after kill -9 failed: " << s.ToString();
    std::vector<ColumnFamilyHandle*> cfs;
    s = BatchWorkload::OpenColumnFamilies(db.get(), &cfs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    BatchState st = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(st.ok()) << st.ErrorText();
    std::string lost = SetDifference(all_acked, st.applied);
    ASSERT_EQ(lost, "") << "acknowledged before kill -9 but missing";
    std::string vanished = SetDifference(prev_applied, st.applied);
    ASSERT_EQ(vanished, "") << "seen after an earlier recovery but gone now";
    prev_applied = std::move(st.applied);
    std::printf("round %d: killed after %d ms, %zu batches acknowledged, %zu applied in total\n", round,
                delay_ms, acked.size(), prev_applied.size());
  }
  std::printf("%d rounds, %zu acknowledged batches, all present\n", rounds, total_acked);
  if (param.gc) {
    std::printf("value-log GC work of the children (bytes relocated + logs deleted): %llu\n",
                static_cast<unsigned long long>(relocated_total));
    EXPECT_GT(relocated_total, 0u) << "the kills never landed while value-log GC was running";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, SigkillTest,
                         ::testing::Values(KillParam{SyncMode::kFull, true}, KillParam{SyncMode::kNone, true},
                                           KillParam{SyncMode::kFull, false},
                                           KillParam{SyncMode::kNone, false},
                                           KillParam{SyncMode::kFull, true, true},
                                           KillParam{SyncMode::kNone, true, true}),
                         [](const auto& info) {
                           return std::string(SyncModeName(info.param.mode)) +
                                  (info.param.unified ? "Unified" : "PerCf") + (info.param.gc ? "Gc" : "");
                         });

// --------------------------------------------------------------------------- power loss

struct PowerParam {
  SyncMode mode;
  PowerLossMode loss;
};

const char* PowerLossName(PowerLossMode loss) {
  switch (loss) {
    case PowerLossMode::kDropUnsynced:
      return "Drop";
    case PowerLossMode::kTornUnsynced:
      return "Torn";
    case PowerLossMode::kLoseUnsyncedPages:
      return "Pages";
  }
  return "?";
}

// Durability is simulated by the FaultInjectionEnv; real fsyncs below it only cost time.
struct SimulatedDisk {
  test::NoSyncEnv nosync;
  FaultInjectionEnv fault{&nosync};
};

class PowerLossTest : public ::testing::TestWithParam<PowerParam> {};

TEST_P(PowerLossTest, SurvivorsArePrefixAndFullModeKeepsEveryAck) {
  const PowerParam param = GetParam();
  SimulatedDisk disk;
  Options options = CrashOptions(param.mode, true);
  options.env = &disk.fault;
  const uint64_t seed = test::SeedFromEnv("TIDESDB_CRASH_SEED");
  const int rounds = test::IntFromEnv("TIDESDB_CRASH_ROUNDS", 5);
  std::mt19937_64 rng(seed);
  test::ScratchDir dir(std::string("crash_power_") + SyncModeName(param.mode) + "_" +
                       PowerLossName(param.loss));

  std::set<uint64_t> prev_applied;
  size_t total_acked = 0, total_lost = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round));
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "recovery failed: " << s.ToString();
    std::vector<ColumnFamilyHandle*> cfs;
    s = BatchWorkload::OpenColumnFamilies(db.get(), &cfs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (round > 0) {
      BatchState st = test::CheckBatches(db.get(), cfs);
      ASSERT_TRUE(st.ok()) << st.ErrorText();
      ASSERT_EQ(SetDifference(prev_applied, st.applied), "") << "seen after an earlier recovery but gone now";
      prev_applied = std::move(st.applied);
    }

    AckLog log;
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (uint64_t w = 0; w < 2; ++w) {
      writers.emplace_back([&, w] {
        WriteBatch batch;
        for (uint64_t n = 0; n < 3000 && !stop.load(); ++n) {
          const uint64_t id = BatchWorkload::MakeId(static_cast<uint64_t>(round) + 1, w, n);
          BatchWorkload::Build(id, cfs, &batch);
          log.Submitted(id);
          if (!db->Write(WriteOptions(), &batch).ok()) return;  // the filesystem died
          log.Acked(id);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 150));
    // Power fails: from now on nothing reaches the disk, not even the close below.
    disk.fault.SetFilesystemActive(false);
    stop = true;
    for (auto& t : writers) t.join();
    db.reset();
    ASSERT_TRUE(disk.fault.SimulatePowerLoss(param.loss, rng()).ok());
    disk.fault.SetFilesystemActive(true);
    s = DB::Open(options, dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "recovery after power loss failed: " << s.ToString();
    s = BatchWorkload::OpenColumnFamilies(db.get(), &cfs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    BatchState st = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(st.ok()) << st.ErrorText();
    ASSERT_EQ(log.CheckPrefix(st.applied), "") << "survivors are not a prefix of the commit order";
    ASSERT_EQ(SetDifference(prev_applied, st.applied), "") << "seen after an earlier recovery but gone now";
    const std::vector<uint64_t> acked = log.acked();
    size_t lost = 0;
    for (uint64_t id : acked) lost += st.applied.count(id) == 0;
    if (param.mode == SyncMode::kFull) {
      ASSERT_EQ(log.MissingAcked(st.applied), "") << "FULL lost acknowledged batches in a power loss";
    }
    total_acked += acked.size();
    total_lost += lost;
    prev_applied = std::move(st.applied);
    db.reset();
  }
  std::printf("%d power losses: %zu batches acknowledged, %zu of them lost (allowed only without FULL)\n",
              rounds, total_acked, total_lost);
}

INSTANTIATE_TEST_SUITE_P(Modes, PowerLossTest,
                         ::testing::Values(PowerParam{SyncMode::kFull, PowerLossMode::kDropUnsynced},
                                           PowerParam{SyncMode::kFull, PowerLossMode::kTornUnsynced},
                                           PowerParam{SyncMode::kNone, PowerLossMode::kDropUnsynced},
                                           PowerParam{SyncMode::kNone, PowerLossMode::kTornUnsynced},
                                           PowerParam{SyncMode::kInterval, PowerLossMode::kDropUnsynced},
                                           PowerParam{SyncMode::kInterval, PowerLossMode::kTornUnsynced},
                                           PowerParam{SyncMode::kFull, PowerLossMode::kLoseUnsyncedPages},
                                           PowerParam{SyncMode::kNone, PowerLossMode::kLoseUnsyncedPages},
                                           PowerParam{SyncMode::kInterval,
                                                      PowerLossMode::kLoseUnsyncedPages}),
                         [](const auto& info) {
                           return std::string(SyncModeName(info.param.mode)) + PowerLossName(info.param.loss);
                         });

// A power loss right after a new WAL became durable, during a memtable switch in NONE
// mode: the older WAL must not be left with a torn tail behind a newer WAL (recovery calls
// that corruption), so the switch syncs the older WAL before creating the new one.
TEST(WalRotationTest, PowerLossDuringRotationLeavesNoTornOlderWal) {
  test::ScratchDir root("crash_rotation");
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("power-loss seed " + std::to_string(seed));
    SimulatedDisk disk;
    test::InjectingEnv env(&disk.fault);
    Options options = CrashOptions(SyncMode::kNone, true);
    options.env = &env;
    const std::string dir = root.Sub(std::to_string(seed));
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir, &db).ok());
    std::vector<ColumnFamilyHandle*> cfs;
    ASSERT_TRUE(BatchWorkload::OpenColumnFamilies(db.get(), &cfs).ok());
    AckLog log;
    WriteBatch batch;
    for (uint64_t n = 0; n < 30; ++n) {
      const uint64_t id = BatchWorkload::MakeId(1, 0, n);
      BatchWorkload::Build(id, cfs, &batch);
      log.Submitted(id);
      ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
      log.Acked(id);
    }
    // Power fails right after the new WAL's directory entry is durable.
    std::atomic<bool> wal_created{false};
    env.SetAfter([&](test::EnvOp op, const std::string& fname, const Status&) {
      if (op == test::EnvOp::kCreateFile && test::EndsWith(fname, ".wal")) wal_created = true;
      if (op == test::EnvOp::kSyncDir && wal_created.load()) disk.fault.SetFilesystemActive(false);
    });
    db->Flush(FlushOptions(), nullptr);  // switches the memtable and the WAL; fails midway
    ASSERT_TRUE(wal_created.load());
    db.reset();
    env.SetAfter(nullptr);
    ASSERT_TRUE(disk.fault.SimulatePowerLoss(PowerLossMode::kTornUnsynced, seed).ok());
    disk.fault.SetFilesystemActive(true);
    Status s = DB::Open(options, dir, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(BatchWorkload::OpenColumnFamilies(db.get(), &cfs).ok());
    BatchState st = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(st.ok()) << st.ErrorText();
    ASSERT_EQ(log.CheckPrefix(st.applied), "");
    // Synced before the new WAL existed: nothing written before the switch is lost.
    ASSERT_EQ(log.MissingAcked(st.applied), "");
  }
}

// ------------------------------------------------------------------------- crash points

class CrashPointTest : public ::testing::TestWithParam<SyncMode> {
 protected:
  // Open, create the CFs, write, flush, write, close, reopen (recovery replays and flushes
  // the WAL), write, close. Stops at the first error; records what was acknowledged.
  static void Script(const Options& options, const std::string& dir, AckLog* log) {
    uint64_t n = 0;
    for (int phase = 0; phase < 2; ++phase) {
      std::unique_ptr<DB> db;
      if (!DB::Open(options, dir, &db).ok()) return;
      std::vector<ColumnFamilyHandle*> cfs;
      if (!BatchWorkload::OpenColumnFamilies(db.get(), &cfs).ok()) return;
      WriteBatch batch;
      const int batches = phase == 0 ? 60 : 12;
      for (int i = 0; i < batches; ++i, ++n) {
        const uint64_t id = BatchWorkload::MakeId(1, 0, n);
        BatchWorkload::Build(id, cfs, &batch);
        log->Submitted(id);
        if (!db->Write(WriteOptions(), &batch).ok()) return;
        log->Acked(id);
        if (phase == 0 && i == batches / 2 && !db->Flush(FlushOptions(), nullptr).ok()) return;
      }
    }
  }
};

TEST_P(CrashPointTest, RecoveryAfterPowerLossAtAnyOperation) {
  const SyncMode mode = GetParam();
  const uint64_t seed = test::SeedFromEnv("TIDESDB_CRASH_SEED");
  std::mt19937_64 rng(seed);
  test::ScratchDir root(std::string("crash_points_") + SyncModeName(mode));

  // A dry run lists the operations (background flushes make the list vary a little from
  // run to run, so a point names roughly, not exactly, the same operation each time).
  std::vector<test::EnvOp> dry_ops;
  {
    SimulatedDisk disk;
    test::InjectingEnv env(&disk.fault);
    std::mutex mu;
    env.SetAfter([&](test::EnvOp op, const std::string&, const Status&) {
      std::lock_guard<std::mutex> l(mu);
      dry_ops.push_back(op);
    });
    Options options = CrashOptions(mode, true);
    options.env = &env;
    AckLog log;
    Script(options, root.Sub("dry"), &log);
    env.SetAfter(nullptr);
    ASSERT_EQ(log.acked().size(), 72u) << "the script must run cleanly without faults";
  }
  // Crash windows sit mostly around structural operations (create, sync, rename, remove,
  // directory sync): take all of those, then a sample of appends.
  const size_t max_points = static_cast<size_t>(test::IntFromEnv("TIDESDB_CRASH_POINTS", 90));
  std::vector<uint64_t> structural, appends;
  for (size_t i = 0; i < dry_ops.size(); ++i) {
    const bool data = dry_ops[i] == test::EnvOp::kAppend || dry_ops[i] == test::EnvOp::kFlush;
    (data ? appends : structural).push_back(i + 1);
  }
  std::shuffle(structural.begin(), structural.end(), rng);
  std::shuffle(appends.begin(), appends.end(), rng);
  std::set<uint64_t> points;
  for (uint64_t p : structural) {
    if (points.size() < max_points) points.insert(p);
  }
  for (uint64_t p : appends) {
    if (points.size() < max_points) points.insert(p);
  }
  std::printf("%zu file-system operations (%zu structural); crashing after %zu of them\n", dry_ops.size(),
              structural.size(), points.size());

  for (uint64_t point : points) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", power lost after operation " + std::to_string(point));
    SimulatedDisk disk;
    test::InjectingEnv env(&disk.fault);
    std::atomic<uint64_t> ops{0};
    std::string last_op;
    std::mutex last_mu;
    env.SetAfter([&](test::EnvOp op, const std::string& fname, const Status&) {
      if (++ops == point) {
        disk.fault.SetFilesystemActive(false);
        std::lock_guard<std::mutex> l(last_mu);
        last_op = std::string(test::EnvOpName(op)) + " " + fname.substr(fname.rfind('/') + 1);
      }
    });
    Options options = CrashOptions(mode, true);
    options.env = &env;
    const std::string dir = root.Sub("p" + std::to_string(point));
    AckLog log;
    Script(options, dir, &log);
    env.SetAfter(nullptr);
    const PowerLossMode loss = rng() % 2 == 0 ? PowerLossMode::kTornUnsynced : PowerLossMode::kDropUnsynced;
    ASSERT_TRUE(disk.fault.SimulatePowerLoss(loss, rng()).ok());
    disk.fault.SetFilesystemActive(true);
    SCOPED_TRACE("last operation: " + last_op);

    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir, &db);
    ASSERT_TRUE(s.ok()) << "recovery failed: " << s.ToString();
    std::vector<ColumnFamilyHandle*> cfs;
    s = BatchWorkload::OpenColumnFamilies(db.get(), &cfs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    BatchState st = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(st.ok()) << st.ErrorText();
    ASSERT_EQ(log.CheckPrefix(st.applied), "");
    if (mode == SyncMode::kFull) {
      ASSERT_EQ(log.MissingAcked(st.applied), "");
    }
    // The recovered database must be fully usable: write more, reopen, find everything.
    WriteBatch batch;
    for (uint64_t n = 0; n < 20; ++n) {
      const uint64_t id = BatchWorkload::MakeId(2, 0, n);
      BatchWorkload::Build(id, cfs, &batch);
      ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
      st.applied.insert(id);
    }
    ASSERT_TRUE(db->Flush(FlushOptions(), nullptr).ok());
    db.reset();
    s = DB::Open(options, dir, &db);
    ASSERT_TRUE(s.ok()) << "second recovery failed: " << s.ToString();
    s = BatchWorkload::OpenColumnFamilies(db.get(), &cfs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    BatchState again = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(again.ok()) << again.ErrorText();
    ASSERT_EQ(SetDifference(st.applied, again.applied), "");
    db.reset();
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CrashPointTest, ::testing::Values(SyncMode::kFull, SyncMode::kNone),
                         [](const auto& info) { return std::string(SyncModeName(info.param)); });

// ------------------------------------------------------------------- crash points in GC

class GcCrashPointTest : public ::testing::TestWithParam<SyncMode> {
 protected:
  // Writes batches (flushing every 20 or so, so several value logs fill, and later batches
  // delete the keys of earlier ones), then compacts everything: the compaction drops the deleted
  // values, relocates the survivors out of mostly dead logs and deletes dead logs.
  // *compact_started is set just before the compaction. Stops at the first error.
  static void Script(const Options& options, const std::string& dir, AckLog* log,
                     std::atomic<bool>* compact_started, uint64_t* relocated) {
    std::unique_ptr<DB> db;
    if (!DB::Open(options, dir, &db).ok()) return;
    std::vector<ColumnFamilyHandle*> cfs;
    if (!BatchWorkload::OpenColumnFamilies(db.get(), &cfs).ok()) return;
    WriteBatch batch;
    for (uint64_t n = 0; n < 96; ++n) {
      const uint64_t id = BatchWorkload::MakeId(1, 0, n);
      BatchWorkload::Build(id, cfs, &batch);
      log->Submitted(id);
      if (!db->Write(WriteOptions(), &batch).ok()) return;
      log->Acked(id);
      // Batches 88..95 survive (the others are deleted 8 later). The log flushed at 91 holds
      // large values of batches 82, 86 (deleted) and 90 (live): it is mostly garbage, and 90
      // must be moved to reclaim it.
      if ((n % 20 == 19 || n == 91) && !db->Flush(FlushOptions(), nullptr).ok()) return;
    }
    *compact_started = true;
    if (!db->CompactRange(nullptr, nullptr).ok()) return;
    if (relocated != nullptr) *relocated = StatFromProperty(db.get(), "vlog_relocated_bytes");
  }

  static Options GcScriptOptions(SyncMode mode, Env* env) {
    Options o = GcOptions(CrashOptions(mode, true));
    o.default_cf_options.l1_file_count_trigger = 100;  // only the scripted compaction
    o.env = env;
    return o;
  }
};

TEST_P(GcCrashPointTest, PowerLossDuringValueLogGcLosesNothing) {
  const SyncMode mode = GetParam();
  const uint64_t seed = test::SeedFromEnv("TIDESDB_CRASH_SEED");
  std::mt19937_64 rng(seed);
  test::ScratchDir root(std::string("crash_gc_points_") + SyncModeName(mode));

  // The dry run finds where the compaction's operations start and checks that it relocates.
  size_t total_ops = 0, compact_first = 0;
  {
    SimulatedDisk disk;
    test::InjectingEnv env(&disk.fault);
    std::atomic<bool> started{false};
    std::atomic<size_t> ops{0}, first{0};
    env.SetAfter([&](test::EnvOp, const std::string&, const Status&) {
      size_t n = ++ops;
      if (started.load() && first.load() == 0) first = n;
    });
    AckLog log;
    uint64_t relocated = 0;
    Script(GcScriptOptions(mode, &env), root.Sub("dry"), &log, &started, &relocated);
    env.SetAfter(nullptr);
    ASSERT_EQ(log.acked().size(), 96u) << "the script must run cleanly without faults";
    ASSERT_GT(relocated, 0u) << "the compaction must relocate values for this test to mean anything";
    total_ops = ops;
    compact_first = first;
  }
  ASSERT_GT(compact_first, 0u);
  std::vector<uint64_t> candidates;
  for (uint64_t p = compact_first; p <= total_ops; ++p) candidates.push_back(p);
  std::shuffle(candidates.begin(), candidates.end(), rng);
  const size_t max_points = static_cast<size_t>(test::IntFromEnv("TIDESDB_CRASH_POINTS", 40));
  if (candidates.size() > max_points) candidates.resize(max_points);
  std::printf("compaction spans file-system operations %zu..%zu; crashing after %zu of them\n", compact_first,
              total_ops, candidates.size());

  for (uint64_t point : candidates) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", power lost after operation " + std::to_string(point));
    SimulatedDisk disk;
    test::InjectingEnv env(&disk.fault);
    std::atomic<uint64_t> ops{0};
    env.SetAfter([&](test::EnvOp, const std::string&, const Status&) {
      if (++ops == point) disk.fault.SetFilesystemActive(false);
    });
    const Options options = GcScriptOptions(mode, &env);
    const std::string dir = root.Sub("p" + std::to_string(point));
    AckLog log;
    std::atomic<bool> started{false};
    Script(options, dir, &log, &started, nullptr);
    env.SetAfter(nullptr);
    const PowerLossMode loss = rng() % 2 == 0 ? PowerLossMode::kTornUnsynced : PowerLossMode::kDropUnsynced;
    ASSERT_TRUE(disk.fault.SimulatePowerLoss(loss, rng()).ok());
    disk.fault.SetFilesystemActive(true);

    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir, &db);
    ASSERT_TRUE(s.ok()) << "recovery failed: " << s.ToString();
    std::vector<ColumnFamilyHandle*> cfs;
    ASSERT_TRUE(BatchWorkload::OpenColumnFamilies(db.get(), &cfs).ok());
    BatchState st = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(st.ok()) << st.ErrorText();
    ASSERT_EQ(log.CheckPrefix(st.applied), "");
    if (mode == SyncMode::kFull) {
      ASSERT_EQ(log.MissingAcked(st.applied), "");
    }
    // GC completes after recovery, and afterwards only live value logs remain on disk.
    s = db->CompactRange(nullptr, nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
    BatchState after = test::CheckBatches(db.get(), cfs);
    ASSERT_TRUE(after.ok()) << after.ErrorText();
    ASSERT_EQ(SetDifference(st.applied, after.applied), "");
    uint64_t live_logs = 0;
    for (ColumnFamilyHandle* cf : cfs) {
      std::string v;
      ASSERT_TRUE(db->GetProperty(cf, "tidesdb.value-logs", &v));
      live_logs += std::strtoull(v.c_str() + v.rfind("total files=") + 12, nullptr, 10);
    }
    db.reset();
    std::vector<std::string> children;
    ASSERT_TRUE(disk.nosync.GetChildren(dir, &children).ok());
    uint64_t on_disk = 0;
    for (const auto& name : children) on_disk += test::EndsWith(name, ".vlog") ? 1 : 0;
    std::string listing;
    for (const auto& name : children) listing += name + " ";
    EXPECT_EQ(on_disk, live_logs) << "value logs on disk that no version lists: " << listing;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GcCrashPointTest, ::testing::Values(SyncMode::kFull, SyncMode::kNone),
                         [](const auto& info) { return std::string(SyncModeName(info.param)); });

}  // namespace
}  // namespace tidesdb
