// The ogx subcommands implemented in this directory: each declares its flags on a CLI11 app and returns its runner
// (common/command_line.h). main.cpp's table lists every command.
#pragma once
#include "common/command_line.h"

namespace ogx::cli {
Runner define_generate(Flags& flags);
Runner define_bench(Flags& flags);
Runner define_check(Flags& flags);
Runner define_chat(Flags& flags);
Runner define_serve(Flags& flags);  // cmd_serve.cpp
}  // namespace ogx::cli
