#include "backup.h"

#include <limits.h>
#include <mysqld.h>
#include <mysqld_error.h>
#include <sql_class.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <string>

#include "engine.h"
#include "tidesdb/db.h"

namespace tidesql {
namespace {

// Reports why `path` cannot receive a checkpoint; returns false.
bool refuse_path(const char* path, const char* why) {
  my_printf_error(ER_WRONG_VALUE_FOR_VAR, "TidesDB: tidesdb_checkpoint_dir '%s': %s", MYF(0), path, why);
  return false;
}

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : std::string();
}

// False (with the error reported) unless `dir` may receive a checkpoint; sets *target to
// the path to create (trailing slashes removed).
bool valid_checkpoint_target(const char* dir, std::string* target) {
  if (dir == nullptr || *dir == '\0')
    return refuse_path("", "give the absolute path of a directory to create");
  if (dir[0] != '/')
    return refuse_path(dir, "a relative path; give an absolute one (the directory must not exist yet)");
  std::string path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  if (lstat(path.c_str(), &st) == 0)
    return refuse_path(dir, "already exists; a checkpoint is written into a new directory");
  std::string parent = path.substr(0, path.rfind('/'));
  if (parent.empty()) parent = "/";
  std::string real_parent = real_path(parent);
  if (real_parent.empty() || stat(real_parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return refuse_path(dir, "its parent directory does not exist");
  // Inside the live database directory the checkpoint's files would sit among the
  // database's own.
  std::string live = real_path(std::string(mysql_real_data_home) + "/" + kDatabaseDirectory);
  std::string would_be = real_parent + "/" + path.substr(path.rfind('/') + 1);
  if (!live.empty() && (would_be == live || would_be.compare(0, live.size() + 1, live + "/") == 0))
    return refuse_path(dir, "inside the live TidesDB directory");
  *target = path;
  return true;
}

}  // namespace

int check_checkpoint_dir(THD* thd, st_mysql_sys_var*, void* save, st_mysql_value* value) {
  char buffer[FN_REFLEN];
  int length = sizeof(buffer);
  const char* dir = value->val_str(value, buffer, &length);
  std::string target;
  if (!valid_checkpoint_target(dir, &target)) return 1;
  if (base_db() == nullptr) {
    my_printf_error(ER_WRONG_VALUE_FOR_VAR, "TidesDB: the engine is not running", MYF(0));
    return 1;
  }
  auto started = std::chrono::steady_clock::now();
  tidesdb::Status s = base_db()->Checkpoint(target);
  if (!s.ok()) {
    std::string message = s.ToString();
    sql_print_error("TidesDB: the checkpoint into %s failed: %s", target.c_str(), message.c_str());
    my_printf_error(s.IsNoSpace() ? ER_DISK_FULL : ER_GET_ERRMSG,
                    "TidesDB: the checkpoint into '%s' failed: %s. What it wrote there is incomplete: "
                    "remove it",
                    MYF(0), target.c_str(), message.c_str());
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  sql_print_information("TidesDB: checkpoint written to %s in %.3f s", target.c_str(), seconds);
  // The server copies the value into the variable (PLUGIN_VAR_MEMALLOC).
  *static_cast<const char**>(save) = thd_strmake(thd, target.c_str(), target.size());
  return 0;
}

bool refuse_export(THD* thd) {
  if (thd_sql_command(thd) != SQLCOM_FLUSH || !(thd->lex->type & REFRESH_FOR_EXPORT)) return false;
  my_printf_error(ER_ILLEGAL_HA,
                  "TidesDB tables cannot be exported: a table is part of the engine's one database "
                  "(%s in the data directory: one write-ahead log, manifest and data dictionary for "
                  "every table) and has no files of its own to copy. Copy all TidesDB data with SET "
                  "GLOBAL tidesdb_checkpoint_dir (docs/SQL-ENGINE.md, Backups)",
                  MYF(0), kDatabaseDirectory);
  return true;
}

}  // namespace tidesql
