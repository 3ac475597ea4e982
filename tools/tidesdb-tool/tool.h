// tidesdb-tool: read-only inspection of a TideSQL data directory and its files.
//
// Each command is a function that writes its report to `out` and returns the process exit
// code, so tests run them in-process. Commands open files directly (never DB::Open), never
// write, and keep going past damage where the format allows, so a damaged database can
// still be inspected. Usage and output: docs/TOOLS.md.
//
// Exit codes: 0 = done and nothing damaged, 1 = damage found (or a file could not be read),
// 2 = usage error (unknown command or option, missing argument, no such file/directory).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "printable.h"

namespace tidesdb::tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDamaged = 1;
inline constexpr int kExitUsage = 2;

struct ToolOptions {
  ByteFormat bytes;  // --hex
};

// Column families, their files per level and value logs (from replaying the manifest that
// CURRENT names), the WAL files and the other files of the directory.
int LsCommand(const std::string& dir, const ToolOptions& options, std::ostream& out);
// Every record of a WAL and every entry of each write batch; reports a torn tail.
int DumpWalCommand(const std::string& file, const ToolOptions& options, std::ostream& out);
// Footer, properties, index and every entry of a key log, block by block.
int DumpSstCommand(const std::string& file, const ToolOptions& options, std::ostream& out);
// Header and every record of a value log.
int DumpVlogCommand(const std::string& file, const ToolOptions& options, std::ostream& out);
// Every record of a manifest as VersionEdit::DebugString.
int DumpManifestCommand(const std::string& file, const ToolOptions& options, std::ostream& out);
// Checks every checksum of every file of a directory (or of one file, by its name) and
// the manifest's file list against the directory. One line per problem, then a summary.
int VerifyCommand(const std::string& path, const ToolOptions& options, std::ostream& out);

// Parses args (without the program name), runs the command; usage errors go to err.
int RunTool(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
void PrintUsage(std::ostream& out);

}  // namespace tidesdb::tool
