// The ogx commands' command lines, parsed by CLI11 (Debian's libcli11-dev). A command is a name, a one-line summary
// and a define function: it declares the command's flags on a CLI::App (bound to an options struct it owns) and
// returns the function that runs the command once they are parsed. run_command parses, answers --help, suggests
// the closest flag for an unknown one, and turns errors into one line on stderr and an exit code.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ogx::cli {

using Runner = std::function<int()>;  // runs a parsed command; returns the exit code

struct Command {
  const char* name;                // "generate"
  const char* summary;             // one line for `ogx --help`
  Runner (*define)(CLI::App& app);  // declares the flags, returns the runner
};

// A usage error found after parsing (flags that exclude each other, a missing one of two): exit code 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& msg) : std::runtime_error(msg) {}
};

// Exit codes: 0 success or --help; 1 the command failed (its error, one line naming the problem); 2 a usage error
// (unknown flag, missing or malformed value). `args` are the words after the command's name.
int run_command(const Command& command, const std::vector<std::string>& args);

// The candidate closest to `word` by edit distance, or "" when none is within max(2, a third of its length).
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ogx::cli
