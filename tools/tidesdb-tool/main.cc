// tidesdb-tool entry point; the commands live in cmd_*.cc (see tool.h).
#include <iostream>
#include <string>
#include <vector>

#include "tool.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const int code = tidesdb::tool::RunTool(args, std::cout, std::cerr);
  std::cout.flush();
  return code;
}
