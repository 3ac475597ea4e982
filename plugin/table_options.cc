#include "table_options.h"

#include <create_options.h>
#include <mysqld_error.h>

#include <cstring>

#include "key_codec.h"
#include "sysvars.h"

namespace tidesql {
namespace {

// The option names, as written in CREATE TABLE (the server compares them without case).
constexpr char kCompression[] = "COMPRESSION";
constexpr char kBloomFpr[] = "BLOOM_FPR";
constexpr char kUseBtree[] = "USE_BTREE";
constexpr char kBlockSize[] = "BLOCK_SIZE";
constexpr char kValueThreshold[] = "VALUE_THRESHOLD";
constexpr char kWriteBufferSize[] = "WRITE_BUFFER_SIZE";
constexpr char kL0QueueStallThreshold[] = "L0_QUEUE_STALL_THRESHOLD";
constexpr char kL1FileCountTrigger[] = "L1_FILE_COUNT_TRIGGER";
constexpr char kL0CompactionSizeRatio[] = "L0_COMPACTION_SIZE_RATIO";
constexpr char kTombstoneDensityTrigger[] = "TOMBSTONE_DENSITY_TRIGGER";

// Ratios are in parts per 10,000, as the tidesdb_default_* variables.
constexpr double kPartsPer = 10000;
constexpr ulonglong kKiB = 1ULL << 10, kMiB = 1ULL << 20, kGiB = 1ULL << 30;

}  // namespace

// Ranges are those of the matching tidesdb_default_* variables where one exists; a value
// outside its range is ER_BAD_OPTION_VALUE (the server checks). The server fills an option
// that is not given with the rule's default, which is never used (table_option_given
// decides), so the defaults here are the library's only for a reader's benefit.
ha_create_table_option table_option_rules[] = {
    HA_TOPTION_ENUM(kCompression, compression, "NONE,SNAPPY,LZ4,ZSTD", kCompressionLz4),
    HA_TOPTION_NUMBER(kBloomFpr, bloom_fpr, 100, 0, 5000, 1),
    HA_TOPTION_BOOL(kUseBtree, use_btree, false),
    HA_TOPTION_NUMBER(kBlockSize, block_size, 16 * kKiB, 1 * kKiB, 64 * kMiB, 1),
    HA_TOPTION_NUMBER(kValueThreshold, value_threshold, 1 * kKiB, 1, 4 * kGiB, 1),
    HA_TOPTION_NUMBER(kWriteBufferSize, write_buffer_size, 64 * kMiB, 1 * kMiB, 4 * kGiB, 1),
    HA_TOPTION_NUMBER(kL0QueueStallThreshold, l0_queue_stall_threshold, 20, 1, 1024, 1),
    HA_TOPTION_NUMBER(kL1FileCountTrigger, l1_file_count_trigger, 4, 1, 1024, 1),
    HA_TOPTION_NUMBER(kL0CompactionSizeRatio, l0_compaction_size_ratio, kDefaultL0CompactionSizeRatio, 0,
                      1024, 1),
    HA_TOPTION_NUMBER(kTombstoneDensityTrigger, tombstone_density_trigger, 5000, 0, 10000, 1),
    HA_TOPTION_END,
};

namespace {

// The entry that decides option `name`: the last one of that name (an ALTER's merged list
// appends its changes, and DEFAULT is an entry without a value); null if none.
const engine_option_value* deciding_entry(const engine_option_value* list, const char* name) {
  const engine_option_value* found = nullptr;
  const size_t length = strlen(name);
  for (const engine_option_value* v = list; v != nullptr; v = v->next)
    if (v->name.length == length && strncasecmp(v->name.str, name, length) == 0) found = v;
  return found;
}

}  // namespace

bool table_option_given(const engine_option_value* list, const char* name) {
  const engine_option_value* v = deciding_entry(list, name);
  return v != nullptr && v->value.str != nullptr;
}

tidesdb::ColumnFamilyOptions table_column_family_options(const engine_option_value* list,
                                                         const ha_table_option_struct* values) {
  tidesdb::ColumnFamilyOptions cf = column_family_options();
  if (values == nullptr) return cf;
  auto given = [list](const char* name) { return table_option_given(list, name); };
  if (given(kCompression)) cf.compression = static_cast<tidesdb::CompressionType>(values->compression);
  if (given(kBloomFpr)) cf.bloom_fpr = static_cast<double>(values->bloom_fpr) / kPartsPer;
  if (given(kUseBtree)) cf.use_btree = values->use_btree;
  if (given(kBlockSize)) cf.block_size = values->block_size;
  if (given(kValueThreshold)) cf.value_threshold = values->value_threshold;
  if (given(kWriteBufferSize)) cf.write_buffer_size = values->write_buffer_size;
  if (given(kL0QueueStallThreshold))
    cf.l0_queue_stall_threshold = static_cast<int>(values->l0_queue_stall_threshold);
  if (given(kL1FileCountTrigger)) cf.l1_file_count_trigger = static_cast<int>(values->l1_file_count_trigger);
  if (given(kL0CompactionSizeRatio))
    cf.l0_compaction_size_ratio = static_cast<int>(values->l0_compaction_size_ratio);
  if (given(kTombstoneDensityTrigger))
    cf.tombstone_density_trigger = static_cast<double>(values->tombstone_density_trigger) / kPartsPer;
  return cf;
}

bool check_table_options(const engine_option_value* list) {
  for (const ha_create_table_option* rule = table_option_rules; rule->name != nullptr; rule++) {
    if (rule->type != HA_OPTION_TYPE_ULL) continue;
    const engine_option_value* v = deciding_entry(list, rule->name);
    if (v == nullptr || v->value.str == nullptr) continue;
    bool digits = v->value.length > 0;
    for (size_t i = 0; i < v->value.length; i++)
      digits = digits && v->value.str[i] >= '0' && v->value.str[i] <= '9';
    if (!digits) {
      my_error(ER_BAD_OPTION_VALUE, MYF(0), v->value.str, rule->name);
      return false;
    }
  }
  return true;
}

bool table_options_differ(const TABLE_SHARE* share, const HA_CREATE_INFO* create_info) {
  for (const ha_create_table_option* rule = table_option_rules; rule->name != nullptr; rule++) {
    const bool before = table_option_given(share->option_list, rule->name);
    const bool after = table_option_given(create_info->option_list, rule->name);
    if (before != after) return true;
    if (!before) continue;
    const char* old_value = reinterpret_cast<const char*>(share->option_struct) + rule->offset;
    const char* new_value = reinterpret_cast<const char*>(create_info->option_struct) + rule->offset;
    size_t size = rule->type == HA_OPTION_TYPE_ULL    ? sizeof(ulonglong)
                  : rule->type == HA_OPTION_TYPE_ENUM ? sizeof(uint)
                                                      : sizeof(bool);
    if (memcmp(old_value, new_value, size) != 0) return true;
  }
  return false;
}

std::vector<size_t> index_filter_prefixes(TABLE* table) {
  std::vector<size_t> prefixes(table->s->keys, 0);
  if (!sysvars.index_filter_prefixes) return prefixes;
  for (uint k = 0; k < table->s->keys; k++) {
    if (k == table->s->primary_key) continue;
    KeyCodec codec;
    codec.init(table, k);
    prefixes[k] = codec.fixed_prefix_length();
  }
  return prefixes;
}

}  // namespace tidesql
