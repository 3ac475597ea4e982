#include "tidesdb/write_batch.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "testutil/test_util.h"
#include "tidesdb/db.h"
#include "util/coding.h"

namespace tidesdb {

namespace {

class FakeColumnFamily final : public ColumnFamilyHandle {
 public:
  FakeColumnFamily(std::string name, uint32_t id) : name_(std::move(name)), id_(id) {}
  const std::string& name() const override { return name_; }
  uint32_t id() const override { return id_; }

 private:
  std::string name_;
  uint32_t id_;
};

struct Entry {
  bool is_delete = false;
  uint32_t cf_id = 0;
  std::string key;
  std::string value;
  uint64_t expire_at = 0;

  bool operator==(const Entry&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Entry& e) {
  return os << (e.is_delete ? "Delete(" : "Put(") << e.cf_id << ", " << e.key << ", " << e.value << ", "
            << e.expire_at << ")";
}

// Records every entry; optionally fails at entry number fail_at.
class Recorder final : public WriteBatch::Handler {
 public:
  Status Put(uint32_t cf_id, Slice key, Slice value, uint64_t expire_at) override {
    if (entries.size() == fail_at) return Status::Aborted("recorder stop");
    entries.push_back(Entry{false, cf_id, std::string(key), std::string(value), expire_at});
    return Status::OK();
  }
  Status Delete(uint32_t cf_id, Slice key) override {
    if (entries.size() == fail_at) return Status::Aborted("recorder stop");
    entries.push_back(Entry{true, cf_id, std::string(key), "", 0});
    return Status::OK();
  }

  std::vector<Entry> entries;
  size_t fail_at = SIZE_MAX;
};

std::string RandomBytes(std::mt19937_64& rng, size_t max_len) {
  std::string s(rng() % (max_len + 1), '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A batch of every entry kind across several CFs, and the entries it should replay.
void BuildMixedBatch(std::mt19937_64& rng, int n, WriteBatch* batch, std::vector<Entry>* expected) {
  for (int i = 0; i < n; ++i) {
    Entry e;
    e.cf_id = static_cast<uint32_t>(rng() % 4 == 0 ? rng() : rng() % 8);
    e.key = RandomBytes(rng, 20);
    switch (rng() % 3) {
      case 0:
        e.is_delete = true;
        batch->Delete(e.cf_id, e.key);
        break;
      case 1:
        e.value = RandomBytes(rng, rng() % 8 == 0 ? 300 : 20);
        batch->Put(e.cf_id, e.key, e.value);
        break;
      default:
        e.value = RandomBytes(rng, 20);
        e.expire_at = rng() | 1;  // nonzero: 0 means "no expiry" to the handler
        batch->PutWithExpiry(e.cf_id, e.key, e.value, e.expire_at);
        break;
    }
    expected->push_back(std::move(e));
  }
}

// A fresh seed each run, printed so a failure can be replayed with TIDESDB_TEST_SEED=<seed>.

}  // namespace

TEST(WriteBatch, EmptyBatch) {
  WriteBatch b;
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(b.ApproximateSize(), 4u);
  EXPECT_EQ(b.Data(), std::string(4, '\0'));
  Recorder r;
  ASSERT_TRUE(b.Iterate(&r).ok());
  EXPECT_TRUE(r.entries.empty());
}

TEST(WriteBatch, ExactSerializedForm) {
  WriteBatch b;
  b.Put(3, "k", "vv");
  b.Delete(300, "d");
  b.PutWithExpiry(0u, "", "x", 0x0102030405060708ull);
  using namespace std::string_literals;  // "\0" inside literals must count as a byte
  std::string want;
  PutFixed32(&want, 3);
  want += "\x01\x03\x01k\x02vv"s;   // put, cf 3, key "k", value "vv"
  want += "\x00\xac\x02\x01\x64"s;  // delete, cf 300 (varint), key "d"
  want += "\x02\x00\x00\x01x"s;     // put with expiry, cf 0, key "", value "x"
  PutFixed64(&want, 0x0102030405060708ull);
  EXPECT_EQ(b.Data(), want);
  EXPECT_EQ(b.Count(), 3u);
  EXPECT_EQ(b.ApproximateSize(), want.size());
}

TEST(WriteBatch, HandleOverloadsUseCfId) {
  FakeColumnFamily a("a", 7);
  FakeColumnFamily c("c", 1u << 30);
  WriteBatch b;
  b.Put(&a, "k1", "v1");
  b.Delete(&c, "k2");
  b.PutWithExpiry(&a, "k3", "v3", 99);
  Recorder r;
  ASSERT_TRUE(b.Iterate(&r).ok());
  std::vector<Entry> want = {
      {false, 7, "k1", "v1", 0},
      {true, 1u << 30, "k2", "", 0},
      {false, 7, "k3", "v3", 99},
  };
  EXPECT_EQ(r.entries, want);
}

TEST(WriteBatch, RoundTripManyEntriesAcrossColumnFamilies) {
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  WriteBatch b;
  std::vector<Entry> expected;
  BuildMixedBatch(rng, 5000, &b, &expected);
  EXPECT_EQ(b.Count(), 5000u);

  Recorder r;
  ASSERT_TRUE(b.Iterate(&r).ok());
  ASSERT_EQ(r.entries, expected);

  WriteBatch copy;
  copy.Put(1, "stale", "replaced by FromData");
  ASSERT_TRUE(WriteBatch::FromData(b.Data(), &copy).ok());
  EXPECT_EQ(copy.Data(), b.Data());
  EXPECT_EQ(copy.Count(), 5000u);
  Recorder r2;
  ASSERT_TRUE(copy.Iterate(&r2).ok());
  EXPECT_EQ(r2.entries, expected);

  // A batch rebuilt from data keeps accepting entries.
  copy.Delete(2, "tail");
  EXPECT_EQ(copy.Count(), 5001u);
  Recorder r3;
  ASSERT_TRUE(copy.Iterate(&r3).ok());
  ASSERT_EQ(r3.entries.size(), 5001u);
  EXPECT_EQ(r3.entries.back(), (Entry{true, 2, "tail", "", 0}));
}

TEST(WriteBatch, ClearEmptiesTheBatch) {
  WriteBatch b;
  b.Put(1, "a", "b");
  b.Delete(1, "a");
  b.Clear();
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(b.ApproximateSize(), 4u);
  b.Put(2, "x", "y");
  Recorder r;
  ASSERT_TRUE(b.Iterate(&r).ok());
  EXPECT_EQ(r.entries, (std::vector<Entry>{{false, 2, "x", "y", 0}}));
}

TEST(WriteBatch, HandlerErrorStopsIteration) {
  WriteBatch b;
  for (int i = 0; i < 10; ++i) b.Put(0u, std::to_string(i), "v");
  Recorder r;
  r.fail_at = 4;
  Status s = b.Iterate(&r);
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_EQ(r.entries.size(), 4u);
}

TEST(WriteBatch, EveryTruncationIsRejected) {
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  WriteBatch b;
  std::vector<Entry> expected;
  BuildMixedBatch(rng, 200, &b, &expected);
  const std::string& data = b.Data();
  for (size_t len = 0; len < data.size(); ++len) {
    // A copy of exactly len bytes, so reading past it is an ASan error.
    std::string truncated = data.substr(0, len);
    WriteBatch out;
    out.Put(5, "keep", "me");
    const std::string before = out.Data();
    Status s = WriteBatch::FromData(truncated, &out);
    ASSERT_TRUE(s.IsCorruption()) << "length " << len << ": " << s.ToString();
    EXPECT_EQ(s.message().rfind("write batch: ", 0), 0u) << s.message();
    EXPECT_EQ(out.Data(), before) << "a rejected batch must leave the target unchanged";
  }
}

TEST(WriteBatch, MalformedBatchesAreRejected) {
  auto expect_corrupt = [](const std::string& data, const char* what) {
    WriteBatch out;
    Status s = WriteBatch::FromData(data, &out);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  };
  WriteBatch good;
  good.Put(1, "k", "v");
  good.Delete(2, "d");

  std::string more = good.Data();
  EncodeFixed32(more.data(), 3);
  expect_corrupt(more, "count larger than entries");

  std::string fewer = good.Data();
  EncodeFixed32(fewer.data(), 1);
  expect_corrupt(fewer, "count smaller than entries");

  std::string zero_count = good.Data();
  EncodeFixed32(zero_count.data(), 0);
  expect_corrupt(zero_count, "zero count with entries");

  std::string bad_type = good.Data();
  bad_type[4] = '\x03';
  expect_corrupt(bad_type, "unknown type");
  bad_type[4] = '\xff';
  expect_corrupt(bad_type, "unknown type 0xff");

  std::string trailing = good.Data();
  trailing.push_back('\x00');
  expect_corrupt(trailing, "trailing byte");

  std::string huge_key;
  PutFixed32(&huge_key, 1);
  huge_key += '\x00';
  PutVarint32(&huge_key, 0);
  PutVarint32(&huge_key, 0xffffffffu);
  huge_key += "abc";
  expect_corrupt(huge_key, "key length past the end");

  std::string overlong_cf;
  PutFixed32(&overlong_cf, 1);
  overlong_cf += '\x00';
  overlong_cf += std::string(5, '\xff');
  overlong_cf += '\x0f';  // a varint over 32 bits
  PutVarint32(&overlong_cf, 0);
  expect_corrupt(overlong_cf, "cf id wider than 32 bits");
}

TEST(WriteBatch, RandomGarbageNeverCrashes) {
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  WriteBatch valid;
  std::vector<Entry> expected;
  BuildMixedBatch(rng, 50, &valid, &expected);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string data;
    if (iter % 2 == 0) {
      // Pure garbage, sometimes with a small plausible count.
      data = RandomBytes(rng, 64);
      if (data.size() >= 4 && rng() % 2 == 0) EncodeFixed32(data.data(), static_cast<uint32_t>(rng() % 4));
    } else {
      // A valid batch with a few bytes flipped.
      data = valid.Data();
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) data[rng() % data.size()] = static_cast<char>(rng());
    }
    WriteBatch out;
    Status s = WriteBatch::FromData(data, &out);
    if (s.ok()) {
      ++accepted;
      EXPECT_EQ(out.Data(), data);
      Recorder r;
      ASSERT_TRUE(out.Iterate(&r).ok());
      EXPECT_EQ(r.entries.size(), out.Count());
    } else {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
  std::printf("accepted %d of 20000 mutated inputs\n", accepted);
}

}  // namespace tidesdb
