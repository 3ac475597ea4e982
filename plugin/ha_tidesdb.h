// ha_tidesdb: the handler, one instance per TABLE the server opens (and a few with no table
// at all: the server builds one with a null share to drop tables or ask for flags).
//
// This build registers the engine but has no table support: CREATE TABLE ... ENGINE=TidesDB
// and opening a table that names the engine fail with ER_NOT_SUPPORTED_YET and a message
// that says so. Table operations arrive with the SQL engine.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

namespace tidesql {

// Handler-private error code: the handler has already reported the error to the client
// (my_printf_error), so the server's print_error() must add nothing. Engine codes start
// above HA_ERR_LAST.
constexpr int HA_ERR_TIDESDB_REPORTED = HA_ERR_LAST + 1;

// Message of every refused table operation.
extern const char kTablesUnsupportedMessage[];

class ha_tidesdb final : public handler {
 public:
  ha_tidesdb(handlerton* hton, TABLE_SHARE* share);  // share may be null

  Table_flags table_flags() const override;
  ulong index_flags(uint index, uint part, bool all_parts) const override;
  // Limits large enough that every CREATE TABLE the server accepts reaches create(), which
  // gives the one clear answer, instead of failing earlier on a limit this build never set.
  uint max_supported_keys() const override { return MAX_KEY; }
  uint max_supported_key_part_length() const override { return MAX_DATA_LENGTH_FOR_KEY; }

  int create(const char* name, TABLE* form, HA_CREATE_INFO* create_info) override;
  int open(const char* name, int mode, uint test_if_locked) override;
  int close() override;

  int rnd_init(bool scan) override;
  int rnd_next(uchar* buf) override;
  int rnd_pos(uchar* buf, uchar* pos) override;
  void position(const uchar* record) override;
  int info(uint flag) override;

  // No THR_LOCK: concurrency control is the engine's own (row locks, MVCC), as in InnoDB.
  uint lock_count() const override { return 0; }
  THR_LOCK_DATA** store_lock(THD* thd, THR_LOCK_DATA** to, enum thr_lock_type lock_type) override;

  bool get_error_message(int error, String* buf) override;
};

// handlerton::create. Called with a null share too (hton->drop_table, flag queries).
handler* create_handler(handlerton* hton, TABLE_SHARE* share, MEM_ROOT* mem_root);

}  // namespace tidesql
