// `ogx build` subcommand.
#pragma once
#include <string>
#include <vector>

namespace ogx::builder {

// args exclude the program and subcommand names. Returns the process exit code.
int cmd_build(const std::vector<std::string>& args);

}  // namespace ogx::builder
