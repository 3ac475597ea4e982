// SkipList: the concurrent ordered index of a memtable.
//
// Entries are opaque byte strings ordered by a Comparator, a copyable function object
// that compares entries against a search key decoded once per search:
//
//   using DecodedKey = ...;                     // what a search compares entries against
//   DecodedKey Decode(const char* entry) const; // the key of an entry
//   int operator()(const char* entry, const DecodedKey& key) const;  // entry vs key: <0, 0, >0
//
// operator() must find everything it needs about the entry (lengths included) inside the
// entry itself. A search compares one key against a few dozen entries (about two per
// level): taking it decoded leaves only the entry's side to parse in each comparison, and
// lets a caller search for a key it never wrote out in entry form. A DecodedKey may point
// into memory it does not own; it need only outlive the call that takes it.
// The list never deletes: a memtable only grows, and its memory goes away with its arena.
//
// Concurrency contract:
//   * Insert may run in many threads at once, and concurrently with every reader.
//   * Readers (Contains, Iterator) take no lock: every link is read with an acquire load,
//     and a node is published by a release CAS only after its entry and its own links are
//     written, so a reader that reaches a node sees it whole.
//   * An entry, once visible to a reader, stays visible (nothing is ever unlinked).
//   * The Arena and the list must outlive every iterator.
//
// Insertion is lock-free: a thread finds the predecessor/successor pair ("splice") at
// every level, then links the node level by level from the bottom up, each level with one
// CAS on the predecessor's link. A failed CAS means another node landed in the same gap;
// the thread searches again from the same predecessor, at that level only. Level 0 is the
// list proper; the upper levels are only shortcuts, so a node is "in" the list as soon as
// its level-0 CAS succeeds.
//
// Node layout (one arena allocation, no separate key allocation):
//
//   [link height-1] ... [link 1] [link 0] [entry bytes ...]
//                                ^ Node*  ^ entry pointer (Node* + 8)
//
// Links above level 0 lie *before* the node address, so the entry starts right after the
// level-0 link at a fixed offset whatever the node's height, and the comparisons of a
// search touch one cache line per node instead of chasing a key pointer.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>

#include "memtable/arena.h"

namespace tidesdb {

// A node height in [1, max_height]: height h+1 follows h with probability 1 / branching.
// Per-thread generator (skiplist.cc): concurrent inserters share no state here.
int SkipListRandomHeight(int max_height, int branching);

template <typename Comparator>
class SkipList {
 public:
  using DecodedKey = typename Comparator::DecodedKey;
  static constexpr int kMaxHeight = 12;
  static constexpr int kBranching = 4;  // a node reaches level h+1 with probability 1/4

  // The arena is borrowed and must outlive the list.
  SkipList(Comparator compare, Arena* arena);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // Returns room for an entry of `size` bytes (aligned to 8) inside a new, unlinked node.
  // The caller writes the entry there, then passes the same pointer to Insert, once.
  // Thread-safe.
  char* AllocateEntry(size_t size);

  // Links the entry returned by AllocateEntry. Returns false, linking nothing, if an equal
  // entry (comparator == 0) is already in the list; the node's memory is then simply
  // unused. Thread-safe with other Inserts and with readers.
  bool Insert(const char* entry);

  // True if an entry equal to `key` is in the list.
  bool Contains(const DecodedKey& key) const;

  // Approximate number of entries in [start, limit) (limit nullptr: to the end), and the
  // sum of entry_size(entry) over them, without walking them all. A node reaches level L
  // with probability kBranching^-L, independently of its entry, so counting the range's
  // nodes on level L and scaling by kBranching^L is unbiased, with a relative error of
  // about 1/sqrt(count). This counts on the lowest level that holds at most max_walk of
  // them: exact when the range has at most max_walk entries, within a few percent when
  // max_walk is in the hundreds or more. The max_walk nodes of the level below that are
  // walked before giving up on it count too (for the part of the range they cover). Visits O(max_walk + log
  // n) nodes whatever the range's size; a reader like Iterator (entries being inserted may or may not count).
  struct RangeSize {
    uint64_t entries = 0;
    uint64_t bytes = 0;
  };
  template <typename EntrySize>
  RangeSize ApproximateRangeSize(const DecodedKey& start, const DecodedKey* limit, uint64_t max_walk,
                                 EntrySize entry_size) const;
  // The same for n ranges at once, sizes[i] for ranges[i]: the ranges' walks take turns,
  // so that their cache misses overlap.
  struct RangeBounds {
    const DecodedKey* start;
    const DecodedKey* limit;  // nullptr: to the end
  };
  template <typename EntrySize>
  void ApproximateRangeSizes(const RangeBounds* ranges, size_t n, uint64_t max_walk, EntrySize entry_size,
                             RangeSize* sizes) const;

  // A position in the list. Cheap to create; not itself thread-safe (one per thread), but
  // it may be used while other threads insert: it then sees some of their entries.
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list) {}

    bool Valid() const { return node_ != nullptr; }
    // The entry at the current position. Requires Valid(). Valid as long as the arena.
    const char* key() const {
      assert(Valid());
      return node_->Entry();
    }
    // Requires Valid().
    void Next() {
      assert(Valid());
      node_ = node_->Next(0);
    }
    // Requires Valid(). There are no back links: this is a search for the last entry
    // smaller than the current one, O(log n).
    void Prev() {
      assert(Valid());
      node_ = list_->FindLessThan(list_->compare_.Decode(node_->Entry()));
    }
    // First entry >= target.
    void Seek(const DecodedKey& target) { node_ = list_->FindGreaterOrEqual(target); }
    // Last entry <= target.
    void SeekForPrev(const DecodedKey& target) { node_ = list_->FindLessOrEqual(target); }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() { node_ = list_->FindLast(); }

   private:
    const SkipList* list_;
    typename SkipList::Node* node_ = nullptr;
  };

 private:
  struct Node;
  class RangeWalk;

  static Node* NodeOfEntry(const char* entry);

  // The pair (prev, next) at `level` with prev < key <= next (next == nullptr: end of that
  // level), searching forward from `start`, which must be the head or a node < key.
  // `bound` is a node already known to be >= key (or nullptr) that lies after `start` at
  // this level; reaching it ends the search without comparing it again.
  void FindSpliceForLevel(const DecodedKey& key, Node* start, Node* bound, int level, Node** prev,
                          Node** next) const;

  // Each returns nullptr where the answer would be the head or "past the end".
  Node* FindGreaterOrEqual(const DecodedKey& key) const;
  Node* FindLessThan(const DecodedKey& key) const;
  Node* FindLessOrEqual(const DecodedKey& key) const;
  Node* FindLast() const;

  // True if node's entry is < key (false for nullptr, which stands for +infinity).
  bool KeyIsAfterNode(const DecodedKey& key, const Node* node) const {
    return node != nullptr && compare_(node->Entry(), key) < 0;
  }

  const Comparator compare_;
  Arena* const arena_;
  // Highest level any node has, or is about to have; only grows. Relaxed: a reader that
  // sees a new height before the links at that level just finds null links there.
  std::atomic<int> max_height_{1};
  // The head node's links, highest level first, so that the last one is the head's
  // level-0 link and the head has exactly the node layout (with no entry).
  std::atomic<Node*> head_links_[kMaxHeight];
  Node* const head_;
};

// A node *is* its level-0 link; links of higher levels are the words before it. All
// access goes through LinkAt(), which does the arithmetic on the bytes of the one arena
// allocation (or the head_links_ array) that holds them.
template <typename Comparator>
struct SkipList<Comparator>::Node {
  std::atomic<Node*> link0;

  std::atomic<Node*>* LinkAt(int level) {
    char* self = reinterpret_cast<char*>(this);
    return reinterpret_cast<std::atomic<Node*>*>(self - level * sizeof(std::atomic<Node*>));
  }
  const std::atomic<Node*>* LinkAt(int level) const { return const_cast<Node*>(this)->LinkAt(level); }

  Node* Next(int level) const { return LinkAt(level)->load(std::memory_order_acquire); }
  void SetNextUnpublished(int level, Node* next) { LinkAt(level)->store(next, std::memory_order_relaxed); }
  // Publishes this->next (already linked to `expected`) in place of `expected`.
  bool CasNext(int level, Node* expected, Node* desired) {
    return LinkAt(level)->compare_exchange_strong(expected, desired, std::memory_order_release,
                                                  std::memory_order_relaxed);
  }

  const char* Entry() const { return reinterpret_cast<const char*>(this) + sizeof(std::atomic<Node*>); }
};

template <typename Comparator>
SkipList<Comparator>::SkipList(Comparator compare, Arena* arena)
    : compare_(compare), arena_(arena), head_(reinterpret_cast<Node*>(&head_links_[kMaxHeight - 1])) {
  static_assert(sizeof(Node) == sizeof(std::atomic<Node*>) && alignof(Node) <= Arena::kMinAlignment);
  for (auto& link : head_links_) link.store(nullptr, std::memory_order_relaxed);
}

template <typename Comparator>
typename SkipList<Comparator>::Node* SkipList<Comparator>::NodeOfEntry(const char* entry) {
  return reinterpret_cast<Node*>(const_cast<char*>(entry) - sizeof(std::atomic<Node*>));
}

template <typename Comparator>
char* SkipList<Comparator>::AllocateEntry(size_t size) {
  const int height = SkipListRandomHeight(kMaxHeight, kBranching);
  const size_t link_bytes = height * sizeof(std::atomic<Node*>);
  char* mem = arena_->AllocateAligned(link_bytes + size, alignof(std::atomic<Node*>));
  for (int i = 0; i + 1 < height; ++i) new (mem + i * sizeof(std::atomic<Node*>)) std::atomic<Node*>(nullptr);
  Node* node = new (mem + link_bytes - sizeof(std::atomic<Node*>)) Node;
  // Until Insert, the level-0 link carries the node's height (no reader can see it yet),
  // which saves a height field in every node.
  node->SetNextUnpublished(0, reinterpret_cast<Node*>(static_cast<uintptr_t>(height)));
  return const_cast<char*>(node->Entry());
}

template <typename Comparator>
void SkipList<Comparator>::FindSpliceForLevel(const DecodedKey& key, Node* start, Node* bound, int level,
                                              Node** prev, Node** next) const {
  Node* before = start;
  for (;;) {
    Node* after = before->Next(level);
    if (after == bound || !KeyIsAfterNode(key, after)) {
      *prev = before;
      *next = after;
      return;
    }
    before = after;
  }
}

template <typename Comparator>
bool SkipList<Comparator>::Insert(const char* entry) {
  Node* node = NodeOfEntry(entry);
  const int height =
      static_cast<int>(reinterpret_cast<uintptr_t>(node->LinkAt(0)->load(std::memory_order_relaxed)));
  assert(height >= 1 && height <= kMaxHeight);

  int max_height = max_height_.load(std::memory_order_relaxed);
  while (height > max_height) {
    if (max_height_.compare_exchange_weak(max_height, height, std::memory_order_relaxed)) {
      max_height = height;
      break;
    }
  }

  const DecodedKey key = compare_.Decode(entry);
  Node* prev[kMaxHeight];
  Node* next[kMaxHeight];
  // The successor found at one level is also on every lower level, after that level's
  // start: it bounds the search below.
  Node* start = head_;
  Node* bound = nullptr;
  for (int level = max_height - 1; level >= 0; --level) {
    FindSpliceForLevel(key, start, bound, level, &prev[level], &next[level]);
    start = prev[level];
    bound = next[level];
  }

  for (int level = 0; level < height; ++level) {
    for (;;) {
      // Only level 0 can hold a duplicate: once an entry is linked at level 0, any other
      // inserter of an equal entry finds it there before linking anything.
      if (level == 0 && next[0] != nullptr && compare_(next[0]->Entry(), key) == 0) return false;
      node->SetNextUnpublished(level, next[level]);
      if (prev[level]->CasNext(level, next[level], node)) break;
      // Another node went into this gap. prev[level] is still < entry and the old successor
      // still >= entry (nothing is unlinked): search again between the two.
      FindSpliceForLevel(key, prev[level], next[level], level, &prev[level], &next[level]);
    }
  }
  return true;
}

template <typename Comparator>
bool SkipList<Comparator>::Contains(const DecodedKey& key) const {
  Node* node = FindGreaterOrEqual(key);
  return node != nullptr && compare_(node->Entry(), key) == 0;
}

// ApproximateRangeSize's algorithm as a walk that can stop after any node and resume, so
// that several walks can take turns (ApproximateRangeSizes). Each Step reads at most one
// node not read before (upcoming()), with its link.
template <typename Comparator>
class SkipList<Comparator>::RangeWalk {
 public:
  RangeWalk(const SkipList* list, const DecodedKey* start, const DecodedKey* limit)
      : list_(list), start_(start), limit_(limit) {
    top_ = list->max_height_.load(std::memory_order_relaxed) - 1;
    level_ = top_;
    for (int level = 0; level < top_; ++level) weight_ *= kBranching;
    x_ = list->head_;
    next_ = x_->Next(level_);
  }

  // The node the next Step reads first (nullptr: none), and on which level.
  const Node* upcoming() const { return counting_ ? walk_ : next_; }
  int level() const { return level_; }
  const RangeSize& result() const { return result_; }

  // Advances by one node; false once the walk is done (then result() is its answer).
  template <typename EntrySize>
  bool Step(uint64_t max_walk, EntrySize& entry_size) {
    if (!counting_) {
      // Descending: the last node < start on this level.
      if (next_ != bound_ && list_->KeyIsAfterNode(*start_, next_)) {
        x_ = next_;
        next_ = x_->Next(level_);
        return true;
      }
      bound_ = next_;
      // Count this level's nodes in the range. The top level is always counted in full: it
      // is the sparsest there is. Below it, a walk stops after max_walk nodes; the part of
      // the range it covered is then counted at this level and the rest by the level
      // above's nodes past it (each level-L+1 node is also one of the level-L nodes
      // walked, recognised by address), so the partial walk sharpens the estimate instead
      // of being thrown away.
      counting_ = true;
      walk_ = next_;
      count_ = bytes_ = above_seen_ = above_seen_bytes_ = 0;
      above_next_ = above_first_;
    }
    if (walk_ != nullptr && (limit_ == nullptr || list_->compare_(walk_->Entry(), *limit_) < 0)) {
      if (level_ < top_ && count_ == max_walk) {
        // Nodes linked on the level above since it was counted may have been seen here.
        const uint64_t rest = above_count_ - std::min(above_seen_, above_count_);
        const uint64_t rest_bytes = above_bytes_ - std::min(above_seen_bytes_, above_bytes_);
        result_ =
            RangeSize{(count_ + rest * kBranching) * weight_, (bytes_ + rest_bytes * kBranching) * weight_};
        return false;
      }
      const uint64_t size = entry_size(walk_->Entry());
      ++count_;
      bytes_ += size;
      if (walk_ == above_next_) {
        ++above_seen_;
        above_seen_bytes_ += size;
        above_next_ = walk_->Next(level_ + 1);
      }
      walk_ = walk_->Next(level_);
      return true;
    }
    above_first_ = next_;
    above_count_ = count_;
    above_bytes_ = bytes_;
    if (level_ == 0) {
      result_ = RangeSize{above_count_, above_bytes_};
      return false;
    }
    --level_;
    weight_ /= kBranching;
    counting_ = false;
    next_ = x_->Next(level_);
    return true;
  }

 private:
  const SkipList* list_;
  const DecodedKey* start_;
  const DecodedKey* limit_;  // nullptr: to the end
  int top_ = 0;
  int level_ = 0;
  uint64_t weight_ = 1;    // kBranching^level_
  Node* x_ = nullptr;      // the last node < start found so far (or the head)
  Node* next_ = nullptr;   // x_'s successor on level_
  Node* bound_ = nullptr;  // known >= start: the first such node on the level above
  bool counting_ = false;
  Node* walk_ = nullptr;  // counting: the next node of the range on level_
  uint64_t count_ = 0, bytes_ = 0;
  uint64_t above_seen_ = 0, above_seen_bytes_ = 0;  // the level above's nodes walked here
  Node* above_next_ = nullptr;
  // The level above, counted in full: its first node in the range, count and bytes.
  Node* above_first_ = nullptr;
  uint64_t above_count_ = 0, above_bytes_ = 0;
  RangeSize result_;
};

template <typename Comparator>
template <typename EntrySize>
typename SkipList<Comparator>::RangeSize SkipList<Comparator>::ApproximateRangeSize(
    const DecodedKey& start, const DecodedKey* limit, uint64_t max_walk, EntrySize entry_size) const {
  RangeWalk walk(this, &start, limit);
  while (walk.Step(max_walk, entry_size)) {
  }
  return walk.result();
}

template <typename Comparator>
template <typename EntrySize>
void SkipList<Comparator>::ApproximateRangeSizes(const RangeBounds* ranges, size_t n, uint64_t max_walk,
                                                 EntrySize entry_size, RangeSize* sizes) const {
  // A walk's next node is a cache miss more often than not in a big memtable, and it is
  // known only once the current one is read; walks of other ranges do not wait for it.
  // Taking turns, each walk's next node loads while the others step.
  constexpr size_t kInFlight = 16;
  for (size_t first = 0; first < n; first += kInFlight) {
    const size_t count = std::min(kInFlight, n - first);
    std::optional<RangeWalk> walks[kInFlight];
    for (size_t i = 0; i < count; ++i)
      walks[i].emplace(this, ranges[first + i].start, ranges[first + i].limit);
    for (size_t left = count; left > 0;) {
      for (size_t i = 0; i < count; ++i) {
        if (!walks[i]) continue;
        if (!walks[i]->Step(max_walk, entry_size)) {
          sizes[first + i] = walks[i]->result();
          walks[i].reset();
          --left;
        } else if (const Node* node = walks[i]->upcoming()) {
          __builtin_prefetch(node->LinkAt(walks[i]->level()));
          __builtin_prefetch(node->Entry());
        }
      }
    }
  }
}

template <typename Comparator>
typename SkipList<Comparator>::Node* SkipList<Comparator>::FindGreaterOrEqual(const DecodedKey& key) const {
  Node* x = head_;
  Node* bound = nullptr;  // known >= key: the node that ended the level above
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    Node* next = x->Next(level);
    if (next != bound && KeyIsAfterNode(key, next)) {
      x = next;
    } else if (level == 0) {
      return next;
    } else {
      bound = next;
      --level;
    }
  }
}

template <typename Comparator>
typename SkipList<Comparator>::Node* SkipList<Comparator>::FindLessThan(const DecodedKey& key) const {
  Node* x = head_;
  Node* bound = nullptr;  // known >= key: the node that ended the level above
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    Node* next = x->Next(level);
    if (next != bound && KeyIsAfterNode(key, next)) {
      x = next;
    } else if (level == 0) {
      return x == head_ ? nullptr : x;
    } else {
      bound = next;
      --level;
    }
  }
}

template <typename Comparator>
typename SkipList<Comparator>::Node* SkipList<Comparator>::FindLessOrEqual(const DecodedKey& key) const {
  Node* x = head_;
  Node* bound = nullptr;  // known > key: the node that ended the level above
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    Node* next = x->Next(level);
    if (next != bound && next != nullptr && compare_(next->Entry(), key) <= 0) {
      x = next;
    } else if (level == 0) {
      return x == head_ ? nullptr : x;
    } else {
      bound = next;
      --level;
    }
  }
}

template <typename Comparator>
typename SkipList<Comparator>::Node* SkipList<Comparator>::FindLast() const {
  Node* x = head_;
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    Node* next = x->Next(level);
    if (next != nullptr) {
      x = next;
    } else if (level == 0) {
      return x == head_ ? nullptr : x;
    } else {
      --level;
    }
  }
}

}  // namespace tidesdb
