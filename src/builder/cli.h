// `ogx build` subcommand.
#pragma once
#include <string>
#include <vector>

#include "common/command_line.h"

namespace ogx::builder {

// Declares `ogx build`'s flags on app and returns its runner (the entry in ogx's command table).
cli::Runner define_build(cli::Flags& flags);
inline constexpr cli::Command kBuildCommand = {
    "build", "convert a Hugging Face checkpoint to a model folder: -i HF_DIR -o OUT -p P -e E", define_build};

// args exclude the program and subcommand names. Returns the process exit code (2: a usage error).
int cmd_build(const std::vector<std::string>& args);

}  // namespace ogx::builder
