// Backups: the online checkpoint behind SET GLOBAL tidesdb_checkpoint_dir, and the refusal
// of FLUSH TABLES ... FOR EXPORT. docs/SQL-ENGINE.md ("Backups") has the procedures.
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <mysql/plugin.h>

class THD;

namespace tidesql {

// The check function of tidesdb_checkpoint_dir, where the work happens (the server holds
// no mutex here; the update that follows only stores the value): validates the path (an
// absolute path that does not exist yet, whose parent does, outside the live database
// directory) and writes a checkpoint of the whole TidesDB database into it
// (tidesdb::DB::Checkpoint). 0 when it is written (the variable then shows the path);
// otherwise 1 with the error reported to the client.
int check_checkpoint_dir(THD* thd, st_mysql_sys_var* var, void* save, st_mysql_value* value);

// True (with the error reported) when the statement is FLUSH TABLES ... FOR EXPORT: a
// TidesDB table has no files of its own to copy. Called from external_lock.
bool refuse_export(THD* thd);

}  // namespace tidesql
