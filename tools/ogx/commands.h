// The ogx subcommands implemented in this directory.
#pragma once
#include <string>
#include <vector>

namespace ogx::cli {
int cmd_generate(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_check(const std::vector<std::string>& args);
int cmd_serve(const std::vector<std::string>& args);  // cmd_serve.cpp
}  // namespace ogx::cli
