#include "db/version_edit.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "testutil/test_util.h"
#include "util/coding.h"

namespace tidesdb {

namespace {

using namespace std::string_literals;

std::string IKey(Slice user_key, SequenceNumber seq, ValueType type = ValueType::kValue) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, type);
  return k;
}

// Every field differs from its default, so a field that is not persisted shows.
ColumnFamilyOptions NonDefaultOptions() {
  ColumnFamilyOptions o;
  o.write_buffer_size = 3 << 20;
  o.block_size = 4096;
  o.block_restart_interval = -7;  // invalid as a setting, but must round-trip bit-exactly
  o.bloom_fpr = 0.1 + 0.2;
  o.value_threshold = 0;
  o.compression = CompressionType::kZstd;
  o.use_btree = true;
  o.l1_file_count_trigger = 9;
  o.l0_queue_stall_threshold = 99;
  o.level_size_base = UINT64_MAX;
  o.level_size_multiplier = 3;
  o.max_levels = 12;
  o.tombstone_density_trigger = 0.75;
  o.tombstone_density_min_entries = 12345678901ull;
  o.default_ttl_seconds = 86400;
  o.filter_prefix_length = 13;
  o.l0_compaction_size_ratio = 7;
  return o;
}

void ExpectSameOptions(const ColumnFamilyOptions& a, const ColumnFamilyOptions& b) {
  EXPECT_EQ(a.write_buffer_size, b.write_buffer_size);
  EXPECT_EQ(a.block_size, b.block_size);
  EXPECT_EQ(a.block_restart_interval, b.block_restart_interval);
  EXPECT_EQ(std::bit_cast<uint64_t>(a.bloom_fpr), std::bit_cast<uint64_t>(b.bloom_fpr));
  EXPECT_EQ(a.value_threshold, b.value_threshold);
  EXPECT_EQ(a.compression, b.compression);
  EXPECT_EQ(a.use_btree, b.use_btree);
  EXPECT_EQ(a.l1_file_count_trigger, b.l1_file_count_trigger);
  EXPECT_EQ(a.l0_queue_stall_threshold, b.l0_queue_stall_threshold);
  EXPECT_EQ(a.level_size_base, b.level_size_base);
  EXPECT_EQ(a.level_size_multiplier, b.level_size_multiplier);
  EXPECT_EQ(a.max_levels, b.max_levels);
  EXPECT_EQ(std::bit_cast<uint64_t>(a.tombstone_density_trigger),
            std::bit_cast<uint64_t>(b.tombstone_density_trigger));
  EXPECT_EQ(a.tombstone_density_min_entries, b.tombstone_density_min_entries);
  EXPECT_EQ(a.default_ttl_seconds, b.default_ttl_seconds);
  EXPECT_EQ(a.filter_prefix_length, b.filter_prefix_length);
  EXPECT_EQ(a.l0_compaction_size_ratio, b.l0_compaction_size_ratio);
}

void ExpectSameEdit(const VersionEdit& a, const VersionEdit& b) {
  EXPECT_EQ(a.next_file_number(), b.next_file_number());
  EXPECT_EQ(a.last_sequence(), b.last_sequence());
  EXPECT_EQ(a.wal_number(), b.wal_number());
  EXPECT_EQ(a.max_column_family(), b.max_column_family());
  ASSERT_EQ(a.added_column_families().size(), b.added_column_families().size());
  for (size_t i = 0; i < a.added_column_families().size(); ++i) {
    EXPECT_EQ(a.added_column_families()[i].cf_id, b.added_column_families()[i].cf_id);
    EXPECT_EQ(a.added_column_families()[i].name, b.added_column_families()[i].name);
    ExpectSameOptions(a.added_column_families()[i].options, b.added_column_families()[i].options);
  }
  EXPECT_EQ(a.dropped_column_families(), b.dropped_column_families());
  EXPECT_EQ(a.flushed_sequences(), b.flushed_sequences());
  EXPECT_EQ(a.new_files(), b.new_files());
  EXPECT_EQ(a.deleted_files(), b.deleted_files());
  EXPECT_EQ(a.new_value_logs(), b.new_value_logs());
  EXPECT_EQ(a.deleted_value_logs(), b.deleted_value_logs());
}

FileMetaData SampleFile(uint64_t number) {
  FileMetaData f;
  f.file_number = number;
  f.file_size = 4 << 20;
  f.smallest = IKey("apple\x00\xff"s, 17, ValueType::kDeletion);
  f.largest = IKey("zebra", 3, ValueType::kValuePointer);
  f.smallest_seq = 3;
  f.largest_seq = kMaxSequence;
  f.num_entries = 1000;
  f.num_deletions = 10;
  f.value_log_refs = {{2, 1}, {12, 1 << 30}, {UINT64_MAX, UINT64_MAX}};
  return f;
}

// An edit that uses every field, some more than once, with extreme values.
VersionEdit FullEdit() {
  VersionEdit e;
  e.SetNextFileNumber(UINT64_MAX);
  e.SetLastSequence(kMaxSequence);
  e.SetWalNumber(42);
  e.SetMaxColumnFamily(UINT32_MAX);
  e.AddColumnFamily(7, "orders", NonDefaultOptions());
  e.AddColumnFamily(UINT32_MAX, "bin\x00name"s, ColumnFamilyOptions());
  e.DropColumnFamily(3);
  e.DropColumnFamily(0);
  e.SetFlushedSequence(7, 1234);
  e.SetFlushedSequence(8, 0);
  e.AddFile(7, 0, SampleFile(11));
  e.AddFile(7, VersionEdit::kMaxLevelLimit - 1, SampleFile(UINT64_MAX));
  FileMetaData legacy = SampleFile(13);
  legacy.value_log_refs.clear();
  legacy.value_log_refs_known = false;
  e.AddFile(7, 2, legacy);
  FileMetaData no_refs = SampleFile(14);
  no_refs.value_log_refs.clear();
  e.AddFile(7, 2, no_refs);
  e.DeleteFile(7, 1, 5);
  e.DeleteFile(2, 6, 6);
  e.AddValueLog(7, 12, 1 << 30);
  e.DeleteValueLog(7, 4);
  e.DeleteValueLog(9, UINT64_MAX);
  return e;
}

std::string Encode(const VersionEdit& e) {
  std::string s;
  e.EncodeTo(&s);
  return s;
}

}  // namespace

TEST(VersionEdit, EmptyEdit) {
  VersionEdit e;
  std::string s = Encode(e);
  EXPECT_EQ(s, "\x00"s);
  VersionEdit d;
  d.SetWalNumber(5);  // DecodeFrom replaces, not merges
  ASSERT_TRUE(d.DecodeFrom(s).ok());
  ExpectSameEdit(e, d);
  EXPECT_FALSE(d.wal_number().has_value());
  EXPECT_EQ(e.DebugString(), "VersionEdit {\n}\n");
}

TEST(VersionEdit, RoundTripEveryField) {
  const VersionEdit e = FullEdit();
  const std::string s = Encode(e);
  VersionEdit d;
  Status st = d.DecodeFrom(s);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectSameEdit(e, d);
  EXPECT_EQ(Encode(d), s);
  EXPECT_EQ(d.DebugString(), e.DebugString());
}

TEST(VersionEdit, RoundTripEachFieldAlone) {
  std::vector<VersionEdit> edits(11);
  edits[0].SetNextFileNumber(1);
  edits[1].SetLastSequence(0);
  edits[2].SetWalNumber(0);
  edits[3].AddColumnFamily(1, "", NonDefaultOptions());
  edits[4].DropColumnFamily(1);
  edits[5].SetFlushedSequence(1, kMaxSequence);
  edits[6].AddFile(1, 2, SampleFile(3));
  edits[7].DeleteFile(1, 2, 3);
  edits[8].AddValueLog(1, 2, 3);
  edits[9].DeleteValueLog(1, 2);
  edits[10].SetMaxColumnFamily(0);
  for (const VersionEdit& e : edits) {
    VersionEdit d;
    ASSERT_TRUE(d.DecodeFrom(Encode(e)).ok()) << e.DebugString();
    ExpectSameEdit(e, d);
  }
}

TEST(VersionEdit, ClearResetsEverything) {
  VersionEdit e = FullEdit();
  e.Clear();
  EXPECT_EQ(Encode(e), "\x00"s);
}

TEST(VersionEdit, EncodeToAppends) {
  std::string s = "prefix";
  FullEdit().EncodeTo(&s);
  EXPECT_EQ(s, "prefix" + Encode(FullEdit()));
}

TEST(VersionEdit, DebugString) {
  VersionEdit e;
  e.SetNextFileNumber(12);
  e.SetLastSequence(100);
  e.SetWalNumber(5);
  e.SetMaxColumnFamily(3);
  e.AddColumnFamily(3, "it's", NonDefaultOptions());
  e.DropColumnFamily(2);
  e.SetFlushedSequence(3, 99);
  FileMetaData f;
  f.file_number = 9;
  f.file_size = 2048;
  f.smallest = IKey("a\x01"s, 7, ValueType::kValue);
  f.largest = IKey("b", 5, ValueType::kDeletion);
  f.smallest_seq = 5;
  f.largest_seq = 7;
  f.num_entries = 2;
  f.num_deletions = 1;
  e.AddFile(3, 1, f);
  f.file_number = 11;
  f.value_log_refs = {{4, 100}, {10, 2000}};
  e.AddFile(3, 1, f);
  f.file_number = 12;
  f.value_log_refs.clear();
  f.value_log_refs_known = false;
  e.AddFile(3, 1, f);
  e.DeleteFile(3, 0, 8);
  e.AddValueLog(3, 10, 4096);
  e.DeleteValueLog(3, 4);
  EXPECT_EQ(e.DebugString(),
            "VersionEdit {\n"
            "  next_file_number: 12\n"
            "  last_sequence: 100\n"
            "  wal_number: 5\n"
            "  max_column_family: 3\n"
            "  add_column_family: cf 3 name 'it\\x27s' options {write_buffer_size=3145728, block_size=4096, "
            "block_restart_interval=-7, bloom_fpr=0.30000000000000004, value_threshold=0, compression=zstd, "
            "use_btree=true, l1_file_count_trigger=9, l0_queue_stall_threshold=99, "
            "level_size_base=18446744073709551615, level_size_multiplier=3, max_levels=12, "
            "tombstone_density_trigger=0.75, tombstone_density_min_entries=12345678901, "
            "default_ttl_seconds=86400, target_file_size=67108864, value_log_gc_threshold=0.5, "
            "filter_prefix_length=13, l0_compaction_size_ratio=7}\n"
            "  drop_column_family: cf 2\n"
            "  flushed_sequence: cf 3 seq 99\n"
            "  new_file: cf 3 level 1 #9 size 2048 keys ['a\\x01' @ 7 : 1 .. 'b' @ 5 : 0] seqs [5 .. 7] "
            "entries 2 deletions 1\n"
            "  new_file: cf 3 level 1 #11 size 2048 keys ['a\\x01' @ 7 : 1 .. 'b' @ 5 : 0] seqs [5 .. 7] "
            "entries 2 deletions 1 vlog-refs #4:100 #10:2000\n"
            "  new_file: cf 3 level 1 #12 size 2048 keys ['a\\x01' @ 7 : 1 .. 'b' @ 5 : 0] seqs [5 .. 7] "
            "entries 2 deletions 1 vlog-refs unknown\n"
            "  deleted_file: cf 3 level 0 #8\n"
            "  new_value_log: cf 3 #10 size 4096\n"
            "  deleted_value_log: cf 3 #4\n"
            "}\n");
}

TEST(VersionEdit, EveryTruncationIsCorruption) {
  const std::string s = Encode(FullEdit());
  for (size_t len = 0; len < s.size(); ++len) {
    // An exact-size copy, so a read past the end is an ASan error.
    const std::string truncated = s.substr(0, len);
    VersionEdit d;
    d.SetNextFileNumber(1);
    Status st = d.DecodeFrom(truncated);
    ASSERT_TRUE(st.IsCorruption()) << "length " << len << ": " << st.ToString();
    EXPECT_EQ(st.message().rfind("version edit: ", 0), 0u) << st.message();
    EXPECT_EQ(Encode(d), "\x00"s) << "a failed decode leaves the edit cleared";
  }
}

TEST(VersionEdit, UnknownTagIsCorruption) {
  for (uint32_t tag : {13u, 14u, 127u, 128u, 100000u, UINT32_MAX}) {
    std::string s = Encode(FullEdit());
    s.pop_back();  // the end tag
    PutVarint32(&s, tag);
    PutVarint64(&s, 1);
    PutVarint32(&s, 0);
    VersionEdit d;
    Status st = d.DecodeFrom(s);
    ASSERT_TRUE(st.IsCorruption()) << tag;
    EXPECT_NE(st.message().find("unknown tag " + std::to_string(tag)), std::string::npos) << st.message();
  }
}

TEST(VersionEdit, MalformedRecordsAreCorruption) {
  auto expect_corrupt = [](const std::string& s, const char* what) {
    VersionEdit d;
    Status st = d.DecodeFrom(s);
    EXPECT_TRUE(st.IsCorruption()) << what << ": " << st.ToString();
  };
  std::string after_end = Encode(FullEdit()) + "\x01\x05"s;
  expect_corrupt(after_end, "bytes after the end tag");

  std::string repeated;
  PutVarint32(&repeated, 1);
  PutVarint64(&repeated, 5);
  PutVarint32(&repeated, 1);
  PutVarint64(&repeated, 6);
  repeated.push_back('\0');
  expect_corrupt(repeated, "repeated next_file_number");

  std::string wide_cf;
  PutVarint32(&wide_cf, 11);
  PutVarint64(&wide_cf, uint64_t{UINT32_MAX} + 1);
  wide_cf.push_back('\0');
  expect_corrupt(wide_cf, "max_column_family wider than 32 bits");

  auto new_file_record = [](int level, const FileMetaData& f) {
    VersionEdit e;
    e.AddFile(1, level, f);
    return Encode(e);
  };
  expect_corrupt(new_file_record(VersionEdit::kMaxLevelLimit, SampleFile(1)), "level too large");
  expect_corrupt(new_file_record(-1, SampleFile(1)), "negative level");
  FileMetaData f = SampleFile(1);
  f.smallest = "short";
  expect_corrupt(new_file_record(0, f), "smallest not an internal key");
  f = SampleFile(1);
  f.largest = IKey("zebra", 1);
  f.largest[f.largest.size() - 8] = '\x09';  // the type is the trailer's low (first) byte
  expect_corrupt(new_file_record(0, f), "largest with unknown value type");
  f = SampleFile(1);
  std::swap(f.smallest, f.largest);
  expect_corrupt(new_file_record(0, f), "inverted key range");
  f = SampleFile(1);
  f.smallest_seq = f.largest_seq + 1;
  f.largest_seq = 0;
  expect_corrupt(new_file_record(0, f), "inverted sequence range");
  f = SampleFile(1);
  f.num_deletions = f.num_entries + 1;
  expect_corrupt(new_file_record(0, f), "more deletions than entries");
  f = SampleFile(1);
  f.value_log_refs = {{5, 10}, {5, 10}};
  expect_corrupt(new_file_record(0, f), "value-log references not ascending");
  f.value_log_refs = {{5, 10}, {4, 10}};
  expect_corrupt(new_file_record(0, f), "value-log references descending");
  f.value_log_refs = {{5, 0}};
  expect_corrupt(new_file_record(0, f), "value-log reference of zero bytes");
  f.value_log_refs = {{5, 10}};
  std::string huge_count = new_file_record(0, f);
  // The count is the byte before the pair (5, 10) and the end tag: claim 2^28 pairs.
  huge_count.replace(huge_count.size() - 4, 1, "\x80\x80\x80\x80\x01"s);
  expect_corrupt(huge_count, "value-log reference count beyond the record");

  VersionEdit del;
  del.DeleteFile(1, VersionEdit::kMaxLevelLimit, 3);
  expect_corrupt(Encode(del), "deleted file level too large");

  // A column family whose options blob is malformed.
  auto cf_record = [](const std::string& options_blob) {
    std::string s;
    PutVarint32(&s, 4);
    PutVarint32(&s, 1);
    PutLengthPrefixedSlice(&s, "cf");
    PutLengthPrefixedSlice(&s, options_blob);
    s.push_back('\0');
    return s;
  };
  expect_corrupt(cf_record("\x40\x01"s), "unknown option tag 64");
  expect_corrupt(cf_record("\x07\x02"s), "bool option 2");
  expect_corrupt(cf_record("\x06\x04"s), "unknown compression type");
  expect_corrupt(cf_record("\x04\x00\x00"s), "truncated double");
  expect_corrupt(cf_record("\x01\x80"s), "truncated varint");
  expect_corrupt(cf_record("\x03\xff\xff\xff\xff\x1f"s), "int option wider than 32 bits");
  VersionEdit ok;
  EXPECT_TRUE(ok.DecodeFrom(cf_record("")).ok()) << "an empty options blob means all defaults";
}

TEST(ColumnFamilyOptionsEncoding, RoundTripAndDefaults) {
  std::string s;
  EncodeColumnFamilyOptions(NonDefaultOptions(), &s);
  ColumnFamilyOptions o;
  ASSERT_TRUE(DecodeColumnFamilyOptions(s, &o).ok());
  ExpectSameOptions(o, NonDefaultOptions());

  // Missing fields keep the defaults: an options blob written before a field existed.
  ColumnFamilyOptions partial = NonDefaultOptions();
  ASSERT_TRUE(DecodeColumnFamilyOptions("\x0c\x05"s, &partial).ok());  // only max_levels = 5
  ColumnFamilyOptions want;
  want.max_levels = 5;
  ExpectSameOptions(partial, want);

  // A repeated option tag: the later value wins.
  ColumnFamilyOptions repeated;
  ASSERT_TRUE(DecodeColumnFamilyOptions("\x0c\x05\x0c\x06"s, &repeated).ok());
  EXPECT_EQ(repeated.max_levels, 6);

  // Special doubles survive bit-exactly.
  ColumnFamilyOptions o2;
  o2.bloom_fpr = -0.0;
  o2.tombstone_density_trigger = std::nan("");
  std::string s2;
  EncodeColumnFamilyOptions(o2, &s2);
  ColumnFamilyOptions d2;
  ASSERT_TRUE(DecodeColumnFamilyOptions(s2, &d2).ok());
  ExpectSameOptions(o2, d2);
  for (auto c :
       {CompressionType::kNone, CompressionType::kSnappy, CompressionType::kLZ4, CompressionType::kZstd}) {
    ColumnFamilyOptions oc;
    oc.compression = c;
    std::string sc;
    EncodeColumnFamilyOptions(oc, &sc);
    ColumnFamilyOptions dc;
    ASSERT_TRUE(DecodeColumnFamilyOptions(sc, &dc).ok());
    EXPECT_EQ(dc.compression, c);
  }

  // Every truncation of an options blob is rejected, except at a field boundary (then the
  // record's own length prefix and end tag catch the cut).
  ColumnFamilyOptions untouched = NonDefaultOptions();
  for (size_t len = 0; len < s.size(); ++len) {
    const std::string t = s.substr(0, len);
    ColumnFamilyOptions d = NonDefaultOptions();
    Status st = DecodeColumnFamilyOptions(t, &d);
    if (!st.ok()) {
      EXPECT_TRUE(st.IsCorruption());
      ExpectSameOptions(d, untouched);  // unchanged on error
    }
  }
}

TEST(VersionEdit, RandomGarbageNeverCrashes) {
  std::mt19937_64 rng(test::SeedFromEnv("TIDESDB_TEST_SEED"));
  const std::string valid = Encode(FullEdit());
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    if (iter % 2 == 0) {
      s.resize(rng() % 48);
      for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? rng() % 12 : rng());
    } else {
      s = valid;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < flips; ++i) s[rng() % s.size()] = static_cast<char>(rng());
    }
    VersionEdit d;
    Status st = d.DecodeFrom(s);
    if (st.ok()) {
      ++accepted;
      // Whatever was accepted re-encodes to a record that decodes to the same edit.
      VersionEdit again;
      ASSERT_TRUE(again.DecodeFrom(Encode(d)).ok());
      EXPECT_EQ(again.DebugString(), d.DebugString());
    } else {
      ASSERT_TRUE(st.IsCorruption()) << st.ToString();
    }
  }
  std::printf("accepted %d of 20000 mutated records\n", accepted);
}

}  // namespace tidesdb
