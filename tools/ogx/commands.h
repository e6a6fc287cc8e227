// The ogx subcommands implemented in this directory: each declares its flags on a CLI11 app and returns its runner
// (common/command_line.h). main.cpp's table lists every command.
#pragma once
#include "common/command_line.h"

namespace ogx::cli {
Runner define_generate(CLI::App& app);
Runner define_bench(CLI::App& app);
Runner define_check(CLI::App& app);
Runner define_chat(CLI::App& app);
}  // namespace ogx::cli
