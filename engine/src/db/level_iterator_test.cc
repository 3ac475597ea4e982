// LevelIterator against the sorted concatenation of its files: random moves in both
// directions, one file opened per seek, errors stop the iterator.
#include "db/level_iterator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "db/vector_iterator.h"
#include "testutil/test_util.h"

namespace tidesdb {
namespace {

using Entries = std::vector<VectorIterator::Entry>;

std::string IKey(const std::string& user_key, SequenceNumber seq) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, ValueType::kValue);
  return k;
}

std::string UserKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05d", i);
  return buf;
}

struct Level {
  std::vector<Entries> files;  // each sorted; files disjoint and in order
  Entries all;                 // their concatenation
  int opens = 0;

  std::unique_ptr<InternalIterator> Iterator(int failing_file = -1) {
    std::vector<LevelFile> bounds;
    for (const Entries& f : files) bounds.push_back(LevelFile{f.front().first, f.back().first});
    return NewLevelIterator(std::move(bounds), [this, failing_file](size_t i, std::shared_ptr<void>* keep) {
      ++opens;
      *keep = std::make_shared<int>(static_cast<int>(i));
      auto it = std::make_unique<VectorIterator>(files[i]);
      if (static_cast<int>(i) == failing_file)
        it->FailAfterMoves(1, Status::Corruption("file " + std::to_string(i)));
      return std::unique_ptr<InternalIterator>(std::move(it));
    });
  }
};

// Files of 1-6 entries over increasing user keys, some keys with two versions (a version
// pair never straddles two files, as in a real level).
Level RandomLevel(std::mt19937_64& rng) {
  Level level;
  int user = 0;
  const int files = 1 + static_cast<int>(rng() % 6);
  for (int f = 0; f < files; ++f) {
    Entries e;
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int j = 0; j < n; ++j) {
      user += 1 + static_cast<int>(rng() % 3);
      const std::string u = UserKey(user);
      if (rng() % 3 == 0) e.emplace_back(IKey(u, 9), "v9-" + u);
      e.emplace_back(IKey(u, 5), "v5-" + u);
    }
    level.files.push_back(e);
    level.all.insert(level.all.end(), e.begin(), e.end());
  }
  return level;
}

TEST(LevelIterator, RandomMovesMatchTheConcatenation) {
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  for (int round = 0; round < 200; ++round) {
    Level level = RandomLevel(rng);
    auto it = level.Iterator();
    const Entries& all = level.all;
    size_t pos = all.size();  // the oracle's position; all.size() = invalid
    const int last_user = 3 * 6 * 6 + 2;
    std::string trace = "round " + std::to_string(round) + ":";
    for (int step = 0; step < 200; ++step) {
      const unsigned op = rng() % 8;
      const std::string target = IKey(UserKey(static_cast<int>(rng() % last_user)), rng() % 12);
      if (op == 0) {
        it->SeekToFirst();
        pos = 0;
        trace += " First";
      } else if (op == 1) {
        it->SeekToLast();
        pos = all.size() - 1;
        trace += " Last";
      } else if (op == 2) {
        const int opens = level.opens;
        it->Seek(target);
        pos = 0;
        while (pos < all.size() && CompareInternalKey(all[pos].first, target) < 0) ++pos;
        trace += " Seek";
        // The file holding the target, and no other unless the target is past its entries.
        EXPECT_LE(level.opens - opens, 1) << trace;
      } else if (op == 3) {
        it->SeekForPrev(target);
        size_t i = all.size();
        while (i > 0 && CompareInternalKey(all[i - 1].first, target) > 0) --i;
        pos = i == 0 ? all.size() : i - 1;
        trace += " SeekForPrev";
      } else if (pos < all.size() && op < 6) {
        it->Next();
        ++pos;
        trace += " Next";
      } else if (pos < all.size()) {
        it->Prev();
        pos = pos == 0 ? all.size() : pos - 1;
        trace += " Prev";
      } else {
        continue;
      }
      ASSERT_TRUE(it->status().ok()) << trace;
      ASSERT_EQ(it->Valid(), pos < all.size()) << trace;
      if (pos < all.size()) {
        ASSERT_EQ(it->key(), Slice(all[pos].first)) << trace;
        ASSERT_EQ(it->value(), Slice(all[pos].second)) << trace;
      }
    }
  }
}

TEST(LevelIterator, AnUnreadableFileStopsTheScanWithItsError) {
  Level level;
  for (int f = 0; f < 3; ++f)
    level.files.push_back({{IKey(UserKey(2 * f), 1), "a"}, {IKey(UserKey(2 * f + 1), 1), "b"}});
  auto it = level.Iterator(/*failing_file=*/1);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Next();
  ASSERT_TRUE(it->Valid());
  it->Next();  // into file 1, whose first move fails
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  // A new seek starts over: file 2 is readable.
  it->Seek(IKey(UserKey(4), 1));
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(it->key(), Slice(IKey(UserKey(4), 1)));
}

TEST(LevelIterator, SeeksWithinTheOpenFileDoNotReopenIt) {
  Level level;
  for (int f = 0; f < 4; ++f)
    level.files.push_back({{IKey(UserKey(10 * f), 1), "a"}, {IKey(UserKey(10 * f + 5), 1), "b"}});
  auto it = level.Iterator();
  it->Seek(IKey(UserKey(21), 1));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Slice(IKey(UserKey(25), 1)));
  it->Seek(IKey(UserKey(20), 1));
  it->Seek(IKey(UserKey(22), 1));
  EXPECT_EQ(level.opens, 1);
  it->Seek(IKey(UserKey(26), 1));  // past file 2's entries: file 3's first
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Slice(IKey(UserKey(30), 1)));
  EXPECT_EQ(level.opens, 2);
}

}  // namespace
}  // namespace tidesdb
