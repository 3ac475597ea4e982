#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "db/dbformat.h"
#include "sst/block.h"
#include "sst/block_builder.h"
#include "util/coding.h"

namespace tidesdb {
namespace {

std::string IKey(const std::string& user_key, SequenceNumber seq, ValueType type = ValueType::kValue) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, type);
  return k;
}

std::string UserKey(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

// Entries in CompareInternalKey order: every even index key has two versions.
std::vector<std::pair<std::string, std::string>> MakeEntries(int n) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < n; ++i) {
    const std::string uk = UserKey(i * 2);
    if (i % 2 == 0) entries.emplace_back(IKey(uk, 1000 + i), "new" + std::to_string(i));
    entries.emplace_back(IKey(uk, 100 + i, i % 3 == 0 ? ValueType::kDeletion : ValueType::kValue),
                         i % 3 == 0 ? "" : "value" + std::to_string(i));
  }
  return entries;
}

Block BuildBlock(const std::vector<std::pair<std::string, std::string>>& entries, int restart_interval) {
  BlockBuilder builder(restart_interval);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  const size_t estimate = builder.CurrentSizeEstimate();
  const Slice contents = builder.Finish();
  EXPECT_EQ(estimate, contents.size());
  return Block(std::string(contents));
}

class BlockTest : public ::testing::TestWithParam<int> {};

TEST_P(BlockTest, RoundTripForwardAndBackward) {
  const auto entries = MakeEntries(500);
  Block block = BuildBlock(entries, GetParam());
  ASSERT_TRUE(block.ok());
  auto it = block.NewIterator();
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, entries.size());
    EXPECT_EQ(entries[i].first, it->key());
    EXPECT_EQ(entries[i].second, it->value());
  }
  EXPECT_EQ(entries.size(), i);
  EXPECT_TRUE(it->status().ok());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    --i;
    EXPECT_EQ(entries[i].first, it->key());
    EXPECT_EQ(entries[i].second, it->value());
  }
  EXPECT_EQ(0u, i);
  EXPECT_TRUE(it->status().ok());
}

TEST_P(BlockTest, SeekAtAndBetweenKeys) {
  const auto entries = MakeEntries(300);
  Block block = BuildBlock(entries, GetParam());
  auto it = block.NewIterator();
  for (size_t i = 0; i < entries.size(); ++i) {
    it->Seek(entries[i].first);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(entries[i].first, it->key());
    it->SeekForPrev(entries[i].first);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(entries[i].first, it->key());
  }
  // Between user keys: odd numbers are absent.
  for (int i = 0; i < 300; ++i) {
    const std::string target = IKey(UserKey(i * 2 + 1), kMaxSequence, kValueTypeForSeek);
    it->Seek(target);
    if (i == 299) {
      EXPECT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(UserKey(i * 2 + 2), ExtractUserKey(it->key()));
    }
    it->SeekForPrev(target);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(UserKey(i * 2), ExtractUserKey(it->key()));
    // The oldest version of key i*2 is the last entry <= target.
    ParsedInternalKey parsed;
    ASSERT_TRUE(ParseInternalKey(it->key(), &parsed));
    EXPECT_EQ(static_cast<SequenceNumber>(100 + i), parsed.sequence);
  }
  // A snapshot between the two versions of key 0 sees the older one.
  it->Seek(IKey(UserKey(0), 500, kValueTypeForSeek));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(IKey(UserKey(0), 100, ValueType::kDeletion), it->key());
  // Before the first and after the last key.
  it->Seek(IKey("", kMaxSequence, kValueTypeForSeek));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(entries.front().first, it->key());
  it->SeekForPrev(IKey("", kMaxSequence, kValueTypeForSeek));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("zzz", 0, ValueType::kDeletion));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(entries.back().first, it->key());
  it->Seek(IKey("zzz", 0, ValueType::kDeletion));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

// Block::SeekEntry (point lookups, no iterator) finds what an iterator's Seek finds, for
// targets at every entry, between user keys, between versions and past both ends.
TEST_P(BlockTest, SeekEntryFindsWhatSeekFinds) {
  const auto entries = MakeEntries(300);
  Block block = BuildBlock(entries, GetParam());
  auto it = block.NewIterator();
  std::vector<std::string> targets;
  for (const auto& e : entries) targets.push_back(e.first);
  for (int i = -1; i <= 600; ++i) {
    const std::string uk = i < 0 ? std::string() : UserKey(i);
    targets.push_back(IKey(uk, kMaxSequence, kValueTypeForSeek));
    targets.push_back(IKey(uk, 500, kValueTypeForSeek));
    targets.push_back(IKey(uk, 0, ValueType::kDeletion));
  }
  targets.push_back(IKey("zzz", kMaxSequence, kValueTypeForSeek));
  std::string key = "leftover from an earlier call";
  size_t found_count = 0;
  for (const std::string& target : targets) {
    it->Seek(target);
    ASSERT_TRUE(it->status().ok());
    Slice value;
    bool found = true;
    ASSERT_TRUE(block.SeekEntry(target, &key, &value, &found).ok());
    ASSERT_EQ(it->Valid(), found) << target;
    if (!found) continue;
    ++found_count;
    EXPECT_EQ(it->key(), Slice(key));
    EXPECT_EQ(it->value(), value);
  }
  EXPECT_GT(found_count, entries.size());
}

TEST_P(BlockTest, SeekThenMoveBothWays) {
  const auto entries = MakeEntries(200);
  Block block = BuildBlock(entries, GetParam());
  auto it = block.NewIterator();
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    size_t pos = rng() % entries.size();
    it->Seek(entries[pos].first);
    for (int step = 0; step < 20; ++step) {
      if (rng() % 2 == 0) {
        it->Next();
        ++pos;
      } else {
        it->Prev();
        if (pos == 0) {
          EXPECT_FALSE(it->Valid());
          break;
        }
        --pos;
      }
      if (pos == entries.size()) {
        EXPECT_FALSE(it->Valid());
        break;
      }
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(entries[pos].first, it->key());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RestartInterval, BlockTest, ::testing::Values(1, 16));

TEST(BlockTest, EmptyBlock) {
  BlockBuilder builder(16);
  EXPECT_TRUE(builder.empty());
  Block block{std::string(builder.Finish())};
  ASSERT_TRUE(block.ok());
  auto it = block.NewIterator();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek(IKey("a", 1));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("a", 1));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

// Index blocks (restart interval 1) are searched in place: LowerBoundRestart lands where an
// iterator's Seek does, and RestartEntry reads the entry there.
TEST(BlockTest, InPlaceSearchOfAnEveryEntryRestartBlockMatchesSeek) {
  const auto entries = MakeEntries(300);
  Block block = BuildBlock(entries, 1);
  ASSERT_TRUE(block.ok());
  ASSERT_EQ(entries.size(), block.num_restarts());
  for (uint32_t i = 0; i < block.num_restarts(); ++i) {
    Slice key, value;
    ASSERT_TRUE(block.RestartEntry(i, &key, &value));
    EXPECT_EQ(entries[i].first, key);
    EXPECT_EQ(entries[i].second, value);
  }
  Slice key, value;
  EXPECT_FALSE(block.RestartEntry(block.num_restarts(), &key, &value));
  auto it = block.NewIterator();
  for (int k = -1; k <= 600; ++k) {
    for (SequenceNumber seq : {SequenceNumber{0}, SequenceNumber{500}, kMaxSequence}) {
      const std::string target = IKey(k < 0 ? "" : UserKey(k), seq, kValueTypeForSeek);
      it->Seek(target);
      const uint32_t found = block.LowerBoundRestart(target);
      if (!it->Valid()) {
        EXPECT_EQ(block.num_restarts(), found) << k << "@" << seq;
        continue;
      }
      ASSERT_LT(found, block.num_restarts()) << k << "@" << seq;
      ASSERT_TRUE(block.RestartEntry(found, &key, &value));
      EXPECT_EQ(it->key(), key) << k << "@" << seq;
    }
  }
}

// With prefix compression only the restart points stand alone.
TEST(BlockTest, RestartEntryReadsOnlyRestartPoints) {
  const auto entries = MakeEntries(100);
  Block block = BuildBlock(entries, 16);
  ASSERT_TRUE(block.ok());
  ASSERT_EQ((entries.size() + 15) / 16, block.num_restarts());
  for (uint32_t i = 0; i < block.num_restarts(); ++i) {
    Slice key, value;
    ASSERT_TRUE(block.RestartEntry(i, &key, &value));
    EXPECT_EQ(entries[i * 16].first, key);
  }
}

TEST(BlockTest, PrefixCompressionShrinksBlock) {
  std::vector<std::pair<std::string, std::string>> entries;
  const std::string prefix(40, 'p');
  for (int i = 0; i < 1000; ++i) entries.emplace_back(IKey(prefix + UserKey(i), 7), "v");
  size_t raw = 0;
  for (const auto& [k, v] : entries) raw += k.size() + v.size();
  const size_t no_sharing = BuildBlock(entries, 1).size();
  const size_t shared = BuildBlock(entries, 16).size();
  EXPECT_GT(no_sharing, raw);  // headers and restart array only
  // Each key shares ~47 of its 59 bytes with its predecessor.
  EXPECT_LT(shared, raw / 3);
}

TEST(BlockTest, MalformedRestartArrays) {
  EXPECT_FALSE(Block(std::string()).ok());
  EXPECT_FALSE(Block(std::string("\x01\x00", 2)).ok());
  std::string zero_restarts;
  PutFixed32(&zero_restarts, 0);
  EXPECT_FALSE(Block(zero_restarts).ok());
  std::string too_many;
  PutFixed32(&too_many, 0);
  PutFixed32(&too_many, 5);
  EXPECT_FALSE(Block(too_many).ok());

  const auto entries = MakeEntries(40);
  BlockBuilder builder(4);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  const std::string good(builder.Finish());
  // A restart offset pointing past the entries.
  std::string bad = good;
  EncodeFixed32(bad.data() + bad.size() - 8, static_cast<uint32_t>(bad.size()));
  Block block(bad);
  EXPECT_FALSE(block.ok());
  auto it = block.NewIterator();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

// Every single-byte change to a block either decodes to entries (possibly different ones:
// blocks are protected by the checksum in their trailer, not here) or reports Corruption;
// it never reads out of bounds (run under ASan) or loops forever.
TEST(BlockTest, CorruptBytesNeverCrash) {
  const auto entries = MakeEntries(60);
  BlockBuilder builder(4);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  const std::string good(builder.Finish());
  const uint8_t patterns[] = {0x01, 0x80, 0xff};
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (uint8_t pattern : patterns) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ pattern);
      Block block(bad);
      auto it = block.NewIterator();
      size_t n = 0;
      for (it->SeekToFirst(); it->Valid() && n < 10 * entries.size(); it->Next()) ++n;
      for (it->SeekToLast(); it->Valid() && n < 20 * entries.size(); it->Prev()) ++n;
      EXPECT_LT(n, 20 * entries.size()) << "position " << pos;
      auto it2 = block.NewIterator();
      std::string key;
      for (size_t i = 0; i < entries.size(); i += 7) {
        it2->Seek(entries[i].first);
        it2->SeekForPrev(entries[i].first);
        if (it2->Valid()) it2->Prev();
        // Runs under ASAN too: an entry read past the block would be caught there.
        Slice value;
        bool found = false;
        if (block.SeekEntry(entries[i].first, &key, &value, &found).ok() && found) {
          EXPECT_LE(value.size(), bad.size());
        }
      }
    }
  }
}

}  // namespace
}  // namespace tidesdb
