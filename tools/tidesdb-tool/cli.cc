// Command-line parsing and dispatch.
#include <functional>
#include <map>

#include "tool.h"

namespace tidesdb::tool {

void PrintUsage(std::ostream& out) {
  out << "usage: tidesdb-tool [--hex] COMMAND PATH\n"
         "\n"
         "Read-only inspection of a TideSQL data directory; nothing is ever written.\n"
         "\n"
         "commands:\n"
         "  ls DIR               column families, files per level, value logs, WALs, manifest\n"
         "  dump-wal FILE        every WAL record and write-batch entry\n"
         "  dump-sst FILE        properties, index and every entry of a key log (.klog)\n"
         "  dump-vlog FILE       every record of a value log (.vlog)\n"
         "  dump-manifest FILE   every edit of a manifest\n"
         "  verify DIR|FILE      check every checksum; exit 0 clean, 1 damaged\n"
         "\n"
         "options:\n"
         "  --hex                print keys and values as hex instead of escaped text\n"
         "\n"
         "exit codes: 0 ok, 1 damage found, 2 usage error\n";
}

int RunTool(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  using Command = std::function<int(const std::string&, const ToolOptions&, std::ostream&)>;
  static const std::map<std::string, Command> kCommands = {
      {"ls", LsCommand},
      {"dump-wal", DumpWalCommand},
      {"dump-sst", DumpSstCommand},
      {"dump-vlog", DumpVlogCommand},
      {"dump-manifest", DumpManifestCommand},
      {"verify", VerifyCommand},
  };
  ToolOptions options;
  std::vector<std::string> positional;
  for (const std::string& a : args) {
    if (a == "--hex") {
      options.bytes.hex = true;
    } else if (a == "-h" || a == "--help" || a == "help") {
      PrintUsage(out);
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      err << "tidesdb-tool: unknown option " << a << "\n";
      PrintUsage(err);
      return kExitUsage;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.empty()) {
    PrintUsage(err);
    return kExitUsage;
  }
  auto it = kCommands.find(positional[0]);
  if (it == kCommands.end()) {
    err << "tidesdb-tool: unknown command " << positional[0] << "\n";
    PrintUsage(err);
    return kExitUsage;
  }
  if (positional.size() != 2) {
    err << "tidesdb-tool: " << positional[0] << " takes exactly one path\n";
    PrintUsage(err);
    return kExitUsage;
  }
  return it->second(positional[1], options, out);
}

}  // namespace tidesdb::tool
