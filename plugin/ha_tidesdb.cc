#include "ha_tidesdb.h"

#include <mysqld_error.h>

namespace tidesql {

const char kTablesUnsupportedMessage[] = "TidesDB: tables are not supported yet by this build";

namespace {

// Reports the refusal to the client and returns the code that keeps print_error() quiet.
int refuse_table_operation() {
  my_printf_error(ER_NOT_SUPPORTED_YET, "%s", MYF(0), kTablesUnsupportedMessage);
  return HA_ERR_TIDESDB_REPORTED;
}

}  // namespace

ha_tidesdb::ha_tidesdb(handlerton* hton, TABLE_SHARE* share) : handler(hton, share) {}

handler::Table_flags ha_tidesdb::table_flags() const {
  // What the server validates in CREATE TABLE before create() is called: nullable and BLOB
  // key parts are allowed, so such tables get create()'s answer too.
  return HA_BINLOG_ROW_CAPABLE | HA_NULL_IN_KEY | HA_CAN_INDEX_BLOBS | HA_REC_NOT_IN_SEQ;
}

ulong ha_tidesdb::index_flags(uint index, uint part, bool all_parts) const {
  return 0;  // no index can be read: no table can be opened
}

int ha_tidesdb::create(const char* name, TABLE* form, HA_CREATE_INFO* create_info) {
  return refuse_table_operation();
}

int ha_tidesdb::open(const char* name, int mode, uint test_if_locked) {
  // Reached only through a .frm that names the engine but was made elsewhere.
  return refuse_table_operation();
}

int ha_tidesdb::close() { return 0; }

int ha_tidesdb::rnd_init(bool scan) { return HA_ERR_WRONG_COMMAND; }

int ha_tidesdb::rnd_next(uchar* buf) { return HA_ERR_WRONG_COMMAND; }

int ha_tidesdb::rnd_pos(uchar* buf, uchar* pos) { return HA_ERR_WRONG_COMMAND; }

void ha_tidesdb::position(const uchar* record) {}

int ha_tidesdb::info(uint flag) { return 0; }

THR_LOCK_DATA** ha_tidesdb::store_lock(THD* thd, THR_LOCK_DATA** to, enum thr_lock_type lock_type) {
  return to;
}

bool ha_tidesdb::get_error_message(int error, String* buf) {
  // handler::print_error() (sql/handler.cc) adds no message for a code it does not know when
  // the message is empty and flagged temporary: right for HA_ERR_TIDESDB_REPORTED.
  return error == HA_ERR_TIDESDB_REPORTED;
}

handler* create_handler(handlerton* hton, TABLE_SHARE* share, MEM_ROOT* mem_root) {
  return new (mem_root) ha_tidesdb(hton, share);
}

}  // namespace tidesql
