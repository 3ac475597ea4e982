#include "db/merging_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>
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

std::string IKey(Slice user_key, SequenceNumber seq, ValueType type = ValueType::kValue) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, type);
  return k;
}

std::unique_ptr<InternalIterator> Merge(const std::vector<Entries>& children) {
  std::vector<std::unique_ptr<InternalIterator>> its;
  for (const Entries& e : children) its.push_back(std::make_unique<VectorIterator>(e));
  return NewMergingIterator(std::move(its));
}

// The merged sequence a merging iterator must present: every entry of every child, by
// internal key, then child index, then position inside the child.
class Oracle {
 public:
  explicit Oracle(const std::vector<Entries>& children) {
    for (size_t c = 0; c < children.size(); ++c) {
      Entries sorted = children[c];
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const auto& a, const auto& b) { return CompareInternalKey(a.first, b.first) < 0; });
      for (auto& e : sorted) entries_.push_back({e.first, e.second, c});
    }
    std::stable_sort(entries_.begin(), entries_.end(), [](const Item& a, const Item& b) {
      int r = CompareInternalKey(a.key, b.key);
      return r != 0 ? r < 0 : a.child < b.child;
    });
    pos_ = entries_.size();
  }

  bool Valid() const { return pos_ < entries_.size(); }
  const std::string& key() const { return entries_[pos_].key; }
  const std::string& value() const { return entries_[pos_].value; }
  size_t size() const { return entries_.size(); }
  const std::string& KeyAt(size_t i) const { return entries_[i].key; }

  void SeekToFirst() { pos_ = 0; }
  void SeekToLast() { pos_ = entries_.empty() ? 0 : entries_.size() - 1; }
  void Seek(Slice t) {
    pos_ = 0;
    while (pos_ < entries_.size() && CompareInternalKey(entries_[pos_].key, t) < 0) ++pos_;
  }
  void SeekForPrev(Slice t) {
    size_t i = entries_.size();
    while (i > 0 && CompareInternalKey(entries_[i - 1].key, t) > 0) --i;
    pos_ = i == 0 ? entries_.size() : i - 1;
  }
  void Next() { ++pos_; }
  void Prev() { pos_ = pos_ == 0 ? entries_.size() : pos_ - 1; }

 private:
  struct Item {
    std::string key;
    std::string value;
    size_t child;
  };
  std::vector<Item> entries_;
  size_t pos_;
};

// Expects the merging iterator to sit where the oracle does.
void ExpectSamePosition(const InternalIterator& it, const Oracle& o, const std::string& trace) {
  ASSERT_TRUE(it.status().ok()) << it.status().ToString() << trace;
  ASSERT_EQ(it.Valid(), o.Valid()) << trace;
  if (o.Valid()) {
    ASSERT_EQ(it.key(), Slice(o.key())) << trace;
    ASSERT_EQ(it.value(), Slice(o.value())) << trace;
  }
}

// Scans forward then backward over the whole merged sequence.
void ExpectFullScans(InternalIterator* it, const Oracle& o) {
  Oracle cursor = o;
  it->SeekToFirst();
  cursor.SeekToFirst();
  for (size_t i = 0; i <= o.size(); ++i) {
    ExpectSamePosition(*it, cursor, " forward scan step " + std::to_string(i));
    if (!cursor.Valid()) break;
    it->Next();
    cursor.Next();
  }
  it->SeekToLast();
  cursor.SeekToLast();
  for (size_t i = 0; i <= o.size(); ++i) {
    ExpectSamePosition(*it, cursor, " backward scan step " + std::to_string(i));
    if (!cursor.Valid()) break;
    it->Prev();
    cursor.Prev();
  }
}

// Random children over a small key space so that children overlap heavily: shared user
// keys at different sequences, equal internal keys in several children (ties), now and
// then equal keys inside one child, and empty children.
std::vector<Entries> RandomChildren(std::mt19937_64& rng) {
  const size_t num_children = 2 + rng() % 11;
  std::vector<Entries> children(num_children);
  std::vector<std::string> used;
  int serial = 0;
  for (size_t c = 0; c < num_children; ++c) {
    if (rng() % 6 == 0) continue;  // empty child
    const size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      std::string key;
      if (!used.empty() && rng() % 8 == 0) {
        key = used[rng() % used.size()];  // a tie with an entry of this or another child
      } else {
        key = IKey("k" + std::to_string(rng() % 30), rng() % 12,
                   rng() % 3 == 0 ? ValueType::kDeletion : ValueType::kValue);
      }
      used.push_back(key);
      children[c].push_back({key, "c" + std::to_string(c) + "#" + std::to_string(serial++)});
    }
  }
  return children;
}

// A seek target: an existing key, or an arbitrary internal key in (or just outside) the
// key space.
std::string RandomTarget(std::mt19937_64& rng, const Oracle& o) {
  if (o.size() > 0 && rng() % 3 == 0) return o.KeyAt(rng() % o.size());
  static const char* const kEdges[] = {"", "a", "k", "k29", "k3", "z"};
  std::string user = rng() % 5 == 0 ? kEdges[rng() % 6] : "k" + std::to_string(rng() % 32);
  return IKey(user, rng() % 14, static_cast<ValueType>(rng() % 5));
}

// A child whose failure can be switched on and off, to check that a re-seek recovers.
class SwitchableFailureIterator final : public InternalIterator {
 public:
  explicit SwitchableFailureIterator(Entries entries, const bool* failing)
      : inner_(std::move(entries)), failing_(failing) {}
  bool Valid() const override { return !failed_ && inner_.Valid(); }
  void SeekToFirst() override {
    Move([&] { inner_.SeekToFirst(); });
  }
  void SeekToLast() override {
    Move([&] { inner_.SeekToLast(); });
  }
  void Seek(Slice t) override {
    Move([&] { inner_.Seek(t); });
  }
  void SeekForPrev(Slice t) override {
    Move([&] { inner_.SeekForPrev(t); });
  }
  void Next() override {
    Move([&] { inner_.Next(); });
  }
  void Prev() override {
    Move([&] { inner_.Prev(); });
  }
  Slice key() const override { return inner_.key(); }
  Slice value() const override { return inner_.value(); }
  Status status() const override { return failed_ ? Status::IOError("switchable failure") : Status::OK(); }

 private:
  template <typename F>
  void Move(F f) {
    failed_ = *failing_;
    if (!failed_) f();
  }
  VectorIterator inner_;
  const bool* failing_;
  bool failed_ = false;
};

}  // namespace

TEST(MergingIterator, NoChildren) {
  auto it = NewMergingIterator({});
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

TEST(MergingIterator, AllChildrenEmpty) {
  auto it = Merge({{}, {}, {}, {}});
  for (int round = 0; round < 2; ++round) {
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    it->Seek(IKey("m", 3));
    EXPECT_FALSE(it->Valid());
    it->SeekForPrev(IKey("m", 3));
    EXPECT_FALSE(it->Valid());
  }
  EXPECT_TRUE(it->status().ok());
}

TEST(MergingIterator, SingleChild) {
  std::vector<Entries> children = {{{IKey("a", 2), "1"}, {IKey("b", 1), "2"}}};
  auto it = Merge(children);
  ExpectFullScans(it.get(), Oracle(children));
}

TEST(MergingIterator, VersionsOfOneKeyAcrossChildren) {
  // Newer versions sort first within a user key, whichever child holds them.
  std::vector<Entries> children = {
      {{IKey("a", 3), "a3"}, {IKey("c", 1), "c1"}},
      {{IKey("a", 5), "a5"}, {IKey("b", 2, ValueType::kDeletion), "b2del"}},
      {{IKey("a", 4), "a4"}, {IKey("c", 9), "c9"}},
  };
  auto it = Merge(children);
  std::vector<std::string> seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen.emplace_back(it->value());
  EXPECT_EQ(seen, (std::vector<std::string>{"a5", "a4", "a3", "b2del", "c9", "c1"}));
  seen.clear();
  for (it->SeekToLast(); it->Valid(); it->Prev()) seen.emplace_back(it->value());
  EXPECT_EQ(seen, (std::vector<std::string>{"c1", "c9", "b2del", "a3", "a4", "a5"}));
  // Seek to (b, snapshot 10) lands on the newest visible version of b.
  it->Seek(IKey("b", 10, kValueTypeForSeek));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "b2del");
  it->SeekForPrev(IKey("b", 0, ValueType::kDeletion));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "b2del");
}

TEST(MergingIterator, EqualKeysOrderedByChildIndexBothWays) {
  const std::string k = IKey("k", 7);
  std::vector<Entries> children = {
      {{IKey("a", 1), "a0"}, {k, "k0"}},
      {{k, "k1"}},
      {{k, "k2"}, {IKey("z", 1), "z2"}},
  };
  auto it = Merge(children);
  std::vector<std::string> seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen.emplace_back(it->value());
  EXPECT_EQ(seen, (std::vector<std::string>{"a0", "k0", "k1", "k2", "z2"}));
  seen.clear();
  for (it->SeekToLast(); it->Valid(); it->Prev()) seen.emplace_back(it->value());
  EXPECT_EQ(seen, (std::vector<std::string>{"z2", "k2", "k1", "k0", "a0"}));
  it->Seek(k);
  EXPECT_EQ(it->value(), "k0");
  it->SeekForPrev(k);
  EXPECT_EQ(it->value(), "k2");
  // Turning around in the middle of the tie.
  it->Seek(k);
  it->Next();
  EXPECT_EQ(it->value(), "k1");
  it->Prev();
  EXPECT_EQ(it->value(), "k0");
  it->Next();
  EXPECT_EQ(it->value(), "k1");
  it->Next();
  EXPECT_EQ(it->value(), "k2");
  it->Prev();
  EXPECT_EQ(it->value(), "k1");
  it->Prev();
  it->Prev();
  EXPECT_EQ(it->value(), "a0");
  it->Next();
  EXPECT_EQ(it->value(), "k0");
}

TEST(MergingIterator, DirectionSwitchRepositionsEveryChild) {
  // The classic bug: after moving backward, a child that is not the current one must be
  // advanced past the current key before Next, including children that ran off the front.
  std::vector<Entries> children = {
      {{IKey("b", 1), "b"}, {IKey("e", 1), "e"}},
      {{IKey("a", 1), "a"}, {IKey("d", 1), "d"}},
      {{IKey("c", 1), "c"}, {IKey("f", 1), "f"}},
      {},
  };
  auto it = Merge(children);
  it->SeekToLast();
  EXPECT_EQ(it->value(), "f");
  it->Prev();  // e
  it->Prev();  // d
  EXPECT_EQ(it->value(), "d");
  it->Next();
  EXPECT_EQ(it->value(), "e");
  it->Next();
  EXPECT_EQ(it->value(), "f");
  it->Next();
  EXPECT_FALSE(it->Valid());

  it->SeekForPrev(IKey("a", 0));
  EXPECT_EQ(it->value(), "a");
  it->Prev();
  EXPECT_FALSE(it->Valid());

  it->Seek(IKey("a", 1));
  EXPECT_EQ(it->value(), "a");
  it->Next();  // b
  it->Prev();
  EXPECT_EQ(it->value(), "a");
  it->Next();
  EXPECT_EQ(it->value(), "b");
  it->Next();
  EXPECT_EQ(it->value(), "c");
  it->Prev();
  EXPECT_EQ(it->value(), "b");
  it->Prev();
  EXPECT_EQ(it->value(), "a");
  it->Prev();
  EXPECT_FALSE(it->Valid());
}

TEST(MergingIterator, RandomizedAgainstOracle) {
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  int ops_total = 0;
  for (int round = 0; round < 150; ++round) {
    const std::vector<Entries> children = RandomChildren(rng);
    Oracle o(children);
    auto it = Merge(children);
    ExpectFullScans(it.get(), o);
    if (HasFatalFailure()) return;

    std::string trace = " round " + std::to_string(round) + " ops:";
    const int ops = 300 + static_cast<int>(rng() % 300);
    for (int i = 0; i < ops; ++i) {
      const unsigned op = rng() % 16;
      if (op == 0) {
        it->SeekToFirst();
        o.SeekToFirst();
        trace += " First";
      } else if (op == 1) {
        it->SeekToLast();
        o.SeekToLast();
        trace += " Last";
      } else if (op <= 3) {
        const std::string t = RandomTarget(rng, o);
        it->Seek(t);
        o.Seek(t);
        trace += " Seek";
      } else if (op <= 5) {
        const std::string t = RandomTarget(rng, o);
        it->SeekForPrev(t);
        o.SeekForPrev(t);
        trace += " SeekForPrev";
      } else if (o.Valid()) {
        // Mostly single steps with frequent turns; sometimes a run in one direction.
        const bool forward = rng() % 2 == 0;
        const int steps = rng() % 5 == 0 ? 1 + static_cast<int>(rng() % 8) : 1;
        for (int s = 0; s < steps && o.Valid(); ++s) {
          if (forward) {
            it->Next();
            o.Next();
          } else {
            it->Prev();
            o.Prev();
          }
          trace += forward ? " Next" : " Prev";
        }
      }
      ++ops_total;
      ExpectSamePosition(*it, o, trace);
      if (HasFatalFailure()) return;
      if (trace.size() > 4000) trace.erase(0, trace.size() - 2000);  // keep the recent tail
    }
  }
  std::printf("%d random operations checked\n", ops_total);
}

TEST(MergingIterator, ChildErrorAtStartInvalidates) {
  std::vector<std::unique_ptr<InternalIterator>> its;
  its.push_back(std::make_unique<VectorIterator>(Entries{{IKey("a", 1), "a"}}));
  its.push_back(std::unique_ptr<InternalIterator>(NewEmptyInternalIterator(Status::IOError("disk on fire"))));
  its.push_back(std::make_unique<VectorIterator>(Entries{{IKey("b", 1), "b"}}));
  auto it = NewMergingIterator(std::move(its));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsIOError()) << it->status().ToString();
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek(IKey("a", 1));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("z", 1));
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().message(), "disk on fire");
}

TEST(MergingIterator, FirstErrorByChildIndexOnSeek) {
  std::vector<std::unique_ptr<InternalIterator>> its;
  its.push_back(std::make_unique<VectorIterator>(Entries{{IKey("a", 1), "a"}}));
  its.push_back(std::unique_ptr<InternalIterator>(NewEmptyInternalIterator(Status::Corruption("first"))));
  its.push_back(std::unique_ptr<InternalIterator>(NewEmptyInternalIterator(Status::IOError("second"))));
  auto it = NewMergingIterator(std::move(its));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_EQ(it->status().message(), "first");
}

TEST(MergingIterator, ChildErrorWhileMoving) {
  // Child 1 fails on its k-th move, wherever that falls: during Next, Prev or a direction
  // switch. Up to the failure the output matches the oracle; after it, the iterator is
  // invalid and reports the child's error.
  Entries c0, c1, c2;
  for (int i = 0; i < 20; ++i) {
    (i % 3 == 0   ? c0
     : i % 3 == 1 ? c1
                  : c2)
        .push_back({IKey("k" + std::to_string(10 + i), 1), std::to_string(i)});
  }
  const std::vector<Entries> children = {c0, c1, c2};
  int triggered = 0;
  for (int fail_at = 1; fail_at <= 30; ++fail_at) {
    for (int pattern = 0; pattern < 3; ++pattern) {
      const std::string where = "fail_at " + std::to_string(fail_at) + " pattern " + std::to_string(pattern);
      std::vector<std::unique_ptr<InternalIterator>> its;
      its.push_back(std::make_unique<VectorIterator>(c0));
      auto failing = std::make_unique<VectorIterator>(c1);
      const VectorIterator* failing_child = failing.get();
      failing->FailAfterMoves(fail_at, Status::IOError("injected"));
      its.push_back(std::move(failing));
      its.push_back(std::make_unique<VectorIterator>(c2));
      auto it = NewMergingIterator(std::move(its));
      Oracle o(children);
      // pattern 0: forward scan; 1: backward scan; 2: zig-zag (two forward, one back).
      if (pattern == 1) {
        it->SeekToLast();
        o.SeekToLast();
      } else {
        it->SeekToFirst();
        o.SeekToFirst();
      }
      for (int step = 0; step < 80; ++step) {
        if (!failing_child->status().ok()) {
          ++triggered;
          EXPECT_FALSE(it->Valid()) << where;
          EXPECT_TRUE(it->status().IsIOError()) << where << ": " << it->status().ToString();
          // Further moves keep it invalid and keep the error.
          it->Next();
          it->Prev();
          EXPECT_FALSE(it->Valid()) << where;
          EXPECT_TRUE(it->status().IsIOError()) << where;
          break;
        }
        ExpectSamePosition(*it, o, where + " step " + std::to_string(step));
        if (HasFatalFailure() || !o.Valid()) break;
        if (pattern == 0 || (pattern == 2 && step % 3 != 2)) {
          it->Next();
          o.Next();
        } else {
          it->Prev();
          o.Prev();
        }
      }
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(triggered, 30);  // most cases hit the failure somewhere
}

TEST(MergingIterator, ReseekClearsRecoveredError) {
  bool failing = false;
  std::vector<std::unique_ptr<InternalIterator>> its;
  its.push_back(std::make_unique<VectorIterator>(Entries{{IKey("a", 1), "a"}, {IKey("c", 1), "c"}}));
  its.push_back(std::make_unique<SwitchableFailureIterator>(Entries{{IKey("b", 1), "b"}}, &failing));
  auto it = NewMergingIterator(std::move(its));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  failing = true;
  it->Seek(IKey("b", 1));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsIOError());
  failing = false;
  it->Seek(IKey("b", 1));
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(it->value(), "b");
}

TEST(VectorIterator, SortsAndSeeks) {
  VectorIterator it({{IKey("b", 1), "b1"}, {IKey("a", 1), "a1"}, {IKey("b", 5), "b5"}});
  EXPECT_FALSE(it.Valid());
  it.SeekToFirst();
  EXPECT_EQ(it.value(), "a1");
  it.Next();
  EXPECT_EQ(it.value(), "b5");
  it.Next();
  EXPECT_EQ(it.value(), "b1");
  it.Next();
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(IKey("b", 3));
  EXPECT_EQ(it.value(), "b5");
  it.SeekForPrev(IKey("a", 2));
  EXPECT_FALSE(it.Valid());
  it.Seek(IKey("b", 3));
  EXPECT_EQ(it.value(), "b1");
  it.Prev();
  EXPECT_EQ(it.value(), "b5");
  it.SeekToLast();
  EXPECT_EQ(it.value(), "b1");
  it.FailAfterMoves(2, Status::Aborted("x"));
  it.Prev();
  EXPECT_TRUE(it.Valid());
  it.Prev();
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsAborted());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
}

}  // namespace tidesdb
